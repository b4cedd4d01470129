/* ext.h -- shared by the files of the Python extension bf16emu._ext:
   the module's state, the helpers every function uses (names, arrays,
   flags) and the functions of the module's method table

   The files, by topic: bf16emu_ext.c (the module: its method table,
   state and initialisation), ext_common.c (the helpers below),
   ext_values.c (round, to_float, convert and the arithmetic), ext_mma.c,
   ext_kernels.c (kernels, describe, description dicts, the measured
   tables, masks), ext_attention.c, ext_diff.c and ext_trace.c.  One
   NumPy C-API table serves them all: bf16emu_ext.c imports it
   (EXT_IMPORT_ARRAY), the others see it through PY_ARRAY_UNIQUE_SYMBOL. */
#ifndef BF16EMU_PYTHON_EXT_H
#define BF16EMU_PYTHON_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL bf16emu_ext_ARRAY_API
#ifndef EXT_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <stdbool.h>
#include <stdint.h>

#include "analysis/attn_mask.h"
#include "analysis/ex2_table.h"
#include "analysis/launch.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"
#include "attention/attention.h"
#include "softfloat/softfloat.h"

/*----------------------------------------------------------------------------
 * Module state: the measured tables, loaded on first use.  The models
 * point into the tables, so the state never moves (the interpreter keeps
 * a module's state at one address).
 *--------------------------------------------------------------------------*/
typedef struct
{
    bool ex2_loaded;
    ax_ex2_table ex2;
    fa_exp2_table ex2_rule[2]; /* [ftz] */
    fa_exp_model ex2_model[2];
    bool lg2_loaded;
    ax_lg2_table lg2;
    fa_lg2_table lg2_rule;
    fa_log_model lg2_model;
    bool rcp_loaded;
    ax_rcp_table rcp;
    fa_rcp_model rcp_model;
} ext_state;

ext_state *px_state_of(PyObject *module);

/*----------------------------------------------------------------------------
 * Names (ext_common.c): false or NULL with a ValueError naming those
 * taken.
 *--------------------------------------------------------------------------*/
const sf_format *px_parse_format(const char *name, const char *arg);
bool px_parse_mode(const char *name, sf_round *rm);
bool px_parse_env(const char *name, sf_env *env);
/* The environment ENV_NAME with FTZ, DAZ, SATURATE overriding it (-1:
   the preset's) and SEED the stochastic-rounding seed. */
bool px_make_env(const char *env_name, int ftz, int daz, int saturate,
                 unsigned long long seed, sf_env *env);

/*----------------------------------------------------------------------------
 * Arrays (ext_common.c).
 *--------------------------------------------------------------------------*/
/* The NumPy type of F's bit patterns: NPY_UINT8, 16 or 32. */
int px_bits_type(const sf_format *f);
const char *px_type_label(int type);
/* OBJ as an array of TYPE that the library can read in place, or NULL
   with an exception naming ARG and WHAT the array holds.  Borrowed. */
PyArrayObject *px_take_array(PyObject *obj, int type, const char *arg,
                             const char *what);
/* Whether A and B have one shape; false with a ValueError naming AN and
   BN. */
bool px_same_shape(PyArrayObject *a, PyArrayObject *b, const char *an,
                   const char *bn);
/* A new array of A's shape and TYPE. */
PyArrayObject *px_new_like(PyArrayObject *a, int type);
/* RESULT, or (RESULT, FLAGS) with WANT_FLAGS; steals RESULT. */
PyObject *px_with_flags(PyArrayObject *result, unsigned flags, int want_flags);
/* Element I of an array of BITS-bit patterns. */
uint64_t px_load_bits(const void *p, size_t i, unsigned bits);
void px_store_bits(void *p, size_t i, unsigned bits, uint64_t v);

/*----------------------------------------------------------------------------
 * Descriptions, tables and masks (ext_kernels.c).
 *--------------------------------------------------------------------------*/
/* The exp model of description K (its tables loaded on first use), or
   NULL with an OSError. */
const fa_exp_model *px_exp_model_for(ext_state *st, const fa_kernel *k);
/* The lg2 and reciprocal models K asks for into C; false with an
   OSError when a table cannot be read. */
bool px_log_models_for(ext_state *st, const fa_kernel *k, fa_config *c);
/* The description in JSON TEXT into K; false with a ValueError carrying
   kj_parse's message. */
bool px_parse_kernel(const char *text, fa_kernel *k);
/* MASK of TYPE_NAME (bool, f32, bf16, f16) bound to launch L as
   am_bind_file binds attn --mask's; false with an exception. */
bool px_bind_mask(PyObject *mask_o, const char *type_name, const ax_launch *l,
                  am_mask *out);

/*----------------------------------------------------------------------------
 * The module's functions.
 *--------------------------------------------------------------------------*/
PyObject *ext_round(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_to_float(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_convert(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_add(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_sub(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_mul(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_div(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_fma(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_sqrt(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_mma_models(PyObject *self, PyObject *unused);
PyObject *ext_mma(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_kernels(PyObject *self, PyObject *unused);
PyObject *ext_describe(PyObject *self, PyObject *args);
PyObject *ext_attention(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_diff(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ext_trace(PyObject *self, PyObject *args, PyObject *kw);

#endif /* BF16EMU_PYTHON_EXT_H */
