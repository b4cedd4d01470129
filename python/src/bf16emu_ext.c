/* bf16emu_ext.c -- the Python extension bf16emu._ext: the library's
   conversions, array arithmetic, matrix-unit models and attention engine
   over NumPy arrays of bit patterns

   Every function takes NumPy arrays as they are: an array of the expected
   dtype that is C-contiguous, aligned and in native byte order is read in
   place (no copy); any other array is refused with an exception that says
   what was expected.  The computation runs with the GIL released.  Errors
   of the library (a refused configuration, a table that cannot be read)
   are raised as exceptions carrying the library's message.

   The measured GPU tables that the fa2 and cudnn descriptions need are
   read once per interpreter, on the first call that needs them, into the
   module's state (never freed before the module is). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/attn_mask.h"
#include "analysis/compare.h"
#include "analysis/ex2_table.h"
#include "analysis/kernel_json.h"
#include "analysis/launch.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"
#include "analysis/sdpa_dispatch_pt211_h200.h"
#include "attention/attention.h"
#include "softfloat/mma.h"
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

static ext_state *
state_of(PyObject *module)
{
    return (ext_state *)PyModule_GetState(module);
}

/*----------------------------------------------------------------------------
 * Names.
 *--------------------------------------------------------------------------*/
static const sf_format *
parse_format(const char *name, const char *arg)
{
    const sf_format *f = sf_format_by_name(name);

    if (f == NULL || f == &sf_format_f64)
        PyErr_Format(PyExc_ValueError,
                     "%s='%s': unknown format (expected bf16, f16 (fp16), "
                     "f32 (fp32), tf32, e4m3 or e5m2)",
                     arg, name);
    return f == &sf_format_f64 ? NULL : f;
}

static bool
parse_mode(const char *name, sf_round *rm)
{
    int m = sf_round_by_name(name);

    if (m < 0) {
        PyErr_Format(PyExc_ValueError,
                     "mode='%s': unknown rounding mode (expected rne, rtz, "
                     "rdn, rup, rna, rod or sr)",
                     name);
        return false;
    }
    *rm = (sf_round)m;
    return true;
}

/* The environment presets of bf16emu trace --env. */
static bool
parse_env(const char *name, sf_env *env)
{
    static const sf_env ieee = SF_ENV_IEEE, x86 = SF_ENV_X86,
                        avx = SF_ENV_AVX512BF16, nv = SF_ENV_NVIDIA,
                        arm = SF_ENV_ARM_BFDOT;

    if (strcmp(name, "ieee") == 0)
        *env = ieee;
    else if (strcmp(name, "x86") == 0)
        *env = x86;
    else if (strcmp(name, "avx512bf16") == 0)
        *env = avx;
    else if (strcmp(name, "nvidia") == 0)
        *env = nv;
    else if (strcmp(name, "arm-bfdot") == 0)
        *env = arm;
    else {
        PyErr_Format(PyExc_ValueError,
                     "env='%s': unknown environment (expected ieee, x86, "
                     "avx512bf16, nvidia or arm-bfdot)",
                     name);
        return false;
    }
    return true;
}

/* The environment of an operation: preset ENV_NAME, then the overrides
   (a negative int leaves the preset's value). */
static bool
make_env(const char *env_name, int ftz, int daz, int saturate,
         unsigned long long seed, sf_env *env)
{
    if (!parse_env(env_name, env))
        return false;
    if (ftz >= 0)
        env->ftz = ftz != 0;
    if (daz >= 0)
        env->daz = daz != 0;
    if (saturate >= 0)
        env->saturate = saturate != 0;
    env->sr_seed = (uint64_t)seed;
    return true;
}

/*----------------------------------------------------------------------------
 * Arrays.
 *--------------------------------------------------------------------------*/
static int
bits_type(const sf_format *f)
{
    return f->storage_bits == 8    ? NPY_UINT8
           : f->storage_bits == 16 ? NPY_UINT16
                                   : NPY_UINT32;
}

static const char *
type_label(int type)
{
    switch (type) {
    case NPY_UINT8:
        return "uint8";
    case NPY_UINT16:
        return "uint16";
    case NPY_UINT32:
        return "uint32";
    case NPY_FLOAT32:
        return "float32";
    case NPY_FLOAT64:
        return "float64";
    default:
        return "?";
    }
}

/* OBJ as an array of TYPE that the library can read in place, or NULL
   with an exception naming ARG and WHAT the array holds.  Borrowed. */
static PyArrayObject *
take_array(PyObject *obj, int type, const char *arg, const char *what)
{
    PyArrayObject *a;

    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected a numpy.ndarray of %s (%s), got %s", arg,
                     type_label(type), what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    a = (PyArrayObject *)obj;
    if (PyArray_TYPE(a) != type) {
        PyObject *d = PyObject_Str((PyObject *)PyArray_DESCR(a));
        PyErr_Format(PyExc_TypeError,
                     "%s: expected dtype %s (%s), got dtype %s", arg,
                     type_label(type), what,
                     d != NULL ? PyUnicode_AsUTF8(d) : "?");
        Py_XDECREF(d);
        return NULL;
    }
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)
        || !PyArray_ISNOTSWAPPED(a)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the array must be C-contiguous, aligned and in "
                     "native byte order (pass numpy.ascontiguousarray(%s))",
                     arg, arg);
        return NULL;
    }
    return a;
}

static bool
same_shape(PyArrayObject *a, PyArrayObject *b, const char *an,
           const char *bn)
{
    if (PyArray_NDIM(a) == PyArray_NDIM(b)
        && PyArray_CompareLists(PyArray_DIMS(a), PyArray_DIMS(b),
                                PyArray_NDIM(a)))
        return true;
    PyErr_Format(PyExc_ValueError,
                 "%s and %s: expected the same shape (no broadcasting)", an,
                 bn);
    return false;
}

static PyArrayObject *
new_like(PyArrayObject *a, int type)
{
    return (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(a),
                                              PyArray_DIMS(a), type);
}

/* (RESULT, FLAGS) when WANT_FLAGS, else RESULT; steals RESULT. */
static PyObject *
with_flags(PyArrayObject *result, unsigned flags, int want_flags)
{
    if (result == NULL || !want_flags)
        return (PyObject *)result;
    return Py_BuildValue("(Nk)", (PyObject *)result, (unsigned long)flags);
}

/*----------------------------------------------------------------------------
 * round, to_float, convert.
 *--------------------------------------------------------------------------*/
static char *round_kw[] = {"x",   "fmt",      "mode", "env",   "ftz", "daz",
                           "saturate", "seed", "flags", NULL};

static PyObject *
ext_round(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *xo;
    const char *fmt = "bf16", *mode = "rne", *env_name = "ieee";
    int ftz = -1, daz = -1, sat = -1, want_flags = 0;
    unsigned long long seed = 0;
    const sf_format *to;
    sf_round rm;
    sf_env env;
    PyArrayObject *x, *out;
    size_t n;

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|sssiiiKp", round_kw, &xo,
                                     &fmt, &mode, &env_name, &ftz, &daz,
                                     &sat, &seed, &want_flags))
        return NULL;
    if ((to = parse_format(fmt, "fmt")) == NULL || !parse_mode(mode, &rm)
        || !make_env(env_name, ftz, daz, sat, seed, &env))
        return NULL;
    if (PyArray_Check(xo) && PyArray_TYPE((PyArrayObject *)xo) == NPY_FLOAT64)
        x = take_array(xo, NPY_FLOAT64, "x", "values to round");
    else
        x = take_array(xo, NPY_FLOAT32, "x", "values to round; float64 is "
                                             "taken too");
    if (x == NULL || (out = new_like(x, bits_type(to))) == NULL)
        return NULL;
    n = (size_t)PyArray_SIZE(x);
    Py_BEGIN_ALLOW_THREADS
    if (PyArray_TYPE(x) == NPY_FLOAT32) {
        sf_convert_array(to, &sf_format_f32, PyArray_DATA(x),
                         PyArray_DATA(out), n, rm, &env);
    } else {
        const uint64_t *in = PyArray_DATA(x);
        void *o = PyArray_DATA(out);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = sf_convert(to, &sf_format_f64, in[i], rm, &env);
            if (to->storage_bits == 8)
                ((uint8_t *)o)[i] = (uint8_t)r;
            else if (to->storage_bits == 16)
                ((uint16_t *)o)[i] = (uint16_t)r;
            else
                ((uint32_t *)o)[i] = (uint32_t)r;
        }
    }
    Py_END_ALLOW_THREADS
    return with_flags(out, env.flags, want_flags);
}

static char *to_float_kw[] = {"bits", "fmt", NULL};

static PyObject *
ext_to_float(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *bo;
    const char *fmt = "bf16";
    const sf_format *from;
    sf_env env = SF_ENV_IEEE;
    PyArrayObject *b, *out;

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s", to_float_kw, &bo, &fmt))
        return NULL;
    if ((from = parse_format(fmt, "fmt")) == NULL
        || (b = take_array(bo, bits_type(from), "bits", "bit patterns of "
                                                        "fmt")) == NULL
        || (out = new_like(b, NPY_FLOAT32)) == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    /* every value of every format is an FP32 value: exact */
    sf_convert_array(&sf_format_f32, from, PyArray_DATA(b), PyArray_DATA(out),
                     (size_t)PyArray_SIZE(b), SF_RNE, &env);
    Py_END_ALLOW_THREADS
    return (PyObject *)out;
}

static char *convert_kw[] = {"bits", "to", "fmt", "mode", "env", "ftz",
                             "daz", "saturate", "seed", "flags", NULL};

static PyObject *
ext_convert(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *bo;
    const char *to_name, *fmt = "bf16", *mode = "rne", *env_name = "ieee";
    int ftz = -1, daz = -1, sat = -1, want_flags = 0;
    unsigned long long seed = 0;
    const sf_format *from, *to;
    sf_round rm;
    sf_env env;
    PyArrayObject *b, *out;

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Os|sssiiiKp", convert_kw,
                                     &bo, &to_name, &fmt, &mode, &env_name,
                                     &ftz, &daz, &sat, &seed, &want_flags))
        return NULL;
    if ((to = parse_format(to_name, "to")) == NULL
        || (from = parse_format(fmt, "fmt")) == NULL
        || !parse_mode(mode, &rm)
        || !make_env(env_name, ftz, daz, sat, seed, &env)
        || (b = take_array(bo, bits_type(from), "bits",
                           "bit patterns of fmt")) == NULL
        || (out = new_like(b, bits_type(to))) == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    sf_convert_array(to, from, PyArray_DATA(b), PyArray_DATA(out),
                     (size_t)PyArray_SIZE(b), rm, &env);
    Py_END_ALLOW_THREADS
    return with_flags(out, env.flags, want_flags);
}

/*----------------------------------------------------------------------------
 * Arithmetic: OUT[i] = OP(A[i], B[i], C[i]) in one format.
 *--------------------------------------------------------------------------*/
enum
{
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_FMA,
    OP_SQRT
};

static uint64_t
load_bits(const void *p, size_t i, unsigned bits)
{
    return bits == 8    ? ((const uint8_t *)p)[i]
           : bits == 16 ? ((const uint16_t *)p)[i]
                        : ((const uint32_t *)p)[i];
}

static void
store_bits(void *p, size_t i, unsigned bits, uint64_t v)
{
    if (bits == 8)
        ((uint8_t *)p)[i] = (uint8_t)v;
    else if (bits == 16)
        ((uint16_t *)p)[i] = (uint16_t)v;
    else
        ((uint32_t *)p)[i] = (uint32_t)v;
}

/* The library's array operations where it has them (add, sub, mul, fma
   of BF16, FP16, FP32), else the scalar operation element by element:
   the same bits, flags and SR draws either way. */
static void
run_op(int op, const sf_format *f, const void *a, const void *b,
       const void *c, void *out, size_t n, sf_round rm, sf_env *env)
{
#define ARRAY_OPS(fmt, T)                                                   \
    if (f == &sf_format_##fmt) {                                            \
        switch (op) {                                                       \
        case OP_ADD:                                                        \
            sf_##fmt##_add_array(a, b, out, n, rm, env);                    \
            return;                                                         \
        case OP_SUB:                                                        \
            sf_##fmt##_sub_array(a, b, out, n, rm, env);                    \
            return;                                                         \
        case OP_MUL:                                                        \
            sf_##fmt##_mul_array(a, b, out, n, rm, env);                    \
            return;                                                         \
        case OP_FMA:                                                        \
            sf_##fmt##_fma_array(a, b, c, out, n, rm, env);                 \
            return;                                                         \
        default:                                                            \
            break;                                                          \
        }                                                                   \
    }
    ARRAY_OPS(bf16, sf_bf16)
    ARRAY_OPS(f16, sf_f16)
    ARRAY_OPS(f32, sf_f32)
#undef ARRAY_OPS
    unsigned w = f->storage_bits;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = load_bits(a, i, w), r;
        switch (op) {
        case OP_ADD:
            r = sf_add(f, x, load_bits(b, i, w), rm, env);
            break;
        case OP_SUB:
            r = sf_sub(f, x, load_bits(b, i, w), rm, env);
            break;
        case OP_MUL:
            r = sf_mul(f, x, load_bits(b, i, w), rm, env);
            break;
        case OP_DIV:
            r = sf_div(f, x, load_bits(b, i, w), rm, env);
            break;
        case OP_FMA:
            r = sf_fma(f, x, load_bits(b, i, w), load_bits(c, i, w), rm, env);
            break;
        default:
            r = sf_sqrt(f, x, rm, env);
            break;
        }
        store_bits(out, i, w, r);
    }
}

static PyObject *
arith(int op, unsigned n_in, PyObject *args, PyObject *kw)
{
    static char *kw1[] = {"a",   "fmt", "mode", "env", "ftz", "daz", "seed",
                          "flags", NULL};
    static char *kw2[] = {"a",   "b",   "fmt", "mode", "env", "ftz", "daz",
                          "seed", "flags", NULL};
    static char *kw3[] = {"a",   "b",   "c",   "fmt", "mode", "env", "ftz",
                          "daz", "seed", "flags", NULL};
    static const char *const names[3] = {"a", "b", "c"};
    PyObject *o[3] = {NULL, NULL, NULL};
    const char *fmt = "bf16", *mode = "rne", *env_name = "ieee";
    int ftz = -1, daz = -1, want_flags = 0, ok;
    unsigned long long seed = 0;
    const sf_format *f;
    sf_round rm;
    sf_env env;
    PyArrayObject *in[3] = {NULL, NULL, NULL}, *out;

    if (n_in == 1)
        ok = PyArg_ParseTupleAndKeywords(args, kw, "O|sssiiKp", kw1, &o[0],
                                         &fmt, &mode, &env_name, &ftz, &daz,
                                         &seed, &want_flags);
    else if (n_in == 2)
        ok = PyArg_ParseTupleAndKeywords(args, kw, "OO|sssiiKp", kw2, &o[0],
                                         &o[1], &fmt, &mode, &env_name, &ftz,
                                         &daz, &seed, &want_flags);
    else
        ok = PyArg_ParseTupleAndKeywords(args, kw, "OOO|sssiiKp", kw3, &o[0],
                                         &o[1], &o[2], &fmt, &mode, &env_name,
                                         &ftz, &daz, &seed, &want_flags);
    if (!ok || (f = parse_format(fmt, "fmt")) == NULL
        || !parse_mode(mode, &rm)
        || !make_env(env_name, ftz, daz, -1, seed, &env))
        return NULL;
    for (unsigned i = 0; i < n_in; i++) {
        in[i] = take_array(o[i], bits_type(f), names[i],
                           "bit patterns of fmt");
        if (in[i] == NULL
            || (i > 0 && !same_shape(in[0], in[i], names[0], names[i])))
            return NULL;
    }
    if ((out = new_like(in[0], bits_type(f))) == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    run_op(op, f, PyArray_DATA(in[0]),
           in[1] != NULL ? PyArray_DATA(in[1]) : NULL,
           in[2] != NULL ? PyArray_DATA(in[2]) : NULL, PyArray_DATA(out),
           (size_t)PyArray_SIZE(in[0]), rm, &env);
    Py_END_ALLOW_THREADS
    return with_flags(out, env.flags, want_flags);
}

static PyObject *
ext_add(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_ADD, 2, args, kw);
}

static PyObject *
ext_sub(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_SUB, 2, args, kw);
}

static PyObject *
ext_mul(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_MUL, 2, args, kw);
}

static PyObject *
ext_div(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_DIV, 2, args, kw);
}

static PyObject *
ext_fma(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_FMA, 3, args, kw);
}

static PyObject *
ext_sqrt(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_SQRT, 1, args, kw);
}

/*----------------------------------------------------------------------------
 * mma: D = A B + C through a preset.
 *--------------------------------------------------------------------------*/
static PyObject *
ext_mma_models(PyObject *self, PyObject *unused)
{
    size_t n = sf_mma_preset_count();
    PyObject *list = PyList_New((Py_ssize_t)n);

    (void)self;
    (void)unused;
    for (size_t i = 0; list != NULL && i < n; i++) {
        PyObject *s = PyUnicode_FromString(sf_mma_preset(i)->name);
        if (s == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

static char *mma_kw[] = {"a", "b", "c", "model", "fmt", "flags", NULL};

static PyObject *
ext_mma(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *ao, *bo, *co = Py_None;
    const char *model = "sm90", *fmt = "bf16";
    int want_flags = 0, path;
    const sf_format *f;
    const sf_mma_model *m;
    const char *why;
    PyArrayObject *a, *b, *c = NULL, *d;
    npy_intp dims[2];
    size_t rows, cols, k;
    sf_env env = SF_ENV_IEEE;

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|Ossp", mma_kw, &ao, &bo,
                                     &co, &model, &fmt, &want_flags))
        return NULL;
    if ((f = parse_format(fmt, "fmt")) == NULL)
        return NULL;
    if (sf_mma_preset_by_name(model) == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "model='%s': unknown preset (bf16emu.mma_models() "
                     "lists them)",
                     model);
        return NULL;
    }
    m = sf_mma_preset_for(model, f);
    if (m == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "model='%s' does not take %s inputs (fmt='%s')", model,
                     f->name, fmt);
        return NULL;
    }
    if ((why = sf_mma_model_check(m)) != NULL) {
        PyErr_Format(PyExc_ValueError, "model='%s': %s", model, why);
        return NULL;
    }
    if ((a = take_array(ao, bits_type(f), "a", "bit patterns of fmt"))
            == NULL
        || (b = take_array(bo, bits_type(f), "b", "bit patterns of fmt"))
               == NULL)
        return NULL;
    if (PyArray_NDIM(a) != 2 || PyArray_NDIM(b) != 2
        || PyArray_DIM(a, 1) != PyArray_DIM(b, 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "a and b: expected matrices [M, K] and [K, N]");
        return NULL;
    }
    dims[0] = PyArray_DIM(a, 0);
    dims[1] = PyArray_DIM(b, 1);
    if (co != Py_None) {
        if ((c = take_array(co, NPY_UINT32, "c",
                            "accumulator bit patterns")) == NULL)
            return NULL;
        if (PyArray_NDIM(c) != 2 || PyArray_DIM(c, 0) != dims[0]
            || PyArray_DIM(c, 1) != dims[1]) {
            PyErr_SetString(PyExc_ValueError, "c: expected the shape [M, N]");
            return NULL;
        }
    }
    if ((d = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_UINT32)) == NULL)
        return NULL;
    rows = (size_t)dims[0];
    cols = (size_t)dims[1];
    k = (size_t)PyArray_DIM(a, 1);
    Py_BEGIN_ALLOW_THREADS
    path = sf_mma_gemm(m, rows, cols, k, f, PyArray_DATA(a), f,
                       PyArray_DATA(b),
                       c != NULL ? (const uint32_t *)PyArray_DATA(c) : NULL,
                       PyArray_DATA(d), SF_MMA_PATH_AUTO, &env);
    Py_END_ALLOW_THREADS
    if (path < 0) {
        Py_DECREF(d);
        PyErr_SetString(PyExc_RuntimeError, "sf_mma_gemm refused the call");
        return NULL;
    }
    return with_flags(d, env.flags, want_flags);
}

/*----------------------------------------------------------------------------
 * Attention.
 *--------------------------------------------------------------------------*/
static PyObject *
ext_kernels(PyObject *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);

    (void)self;
    (void)unused;
    for (size_t i = 0; list != NULL && fa_kernel_at(i) != NULL; i++) {
        PyObject *s = PyUnicode_FromString(fa_kernel_at(i)->name);
        if (s == NULL || PyList_Append(list, s) != 0) {
            Py_XDECREF(s);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(s);
    }
    return list;
}

/* describe(name) -> the built-in description NAME as JSON text, what
   bf16emu attn --policy NAME --describe writes. */
static PyObject *
ext_describe(PyObject *self, PyObject *args)
{
    const char *name;
    const fa_kernel *k;
    char *text;
    PyObject *r;

    (void)self;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    k = fa_kernel_by_name(strcmp(name, "flash") == 0 ? "fa2" : name);
    if (k == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "describe('%s'): unknown kernel (bf16emu.kernels() "
                     "lists them; flash is fa2)",
                     name);
        return NULL;
    }
    if ((text = kj_to_json(k)) == NULL)
        return PyErr_NoMemory();
    r = PyUnicode_FromString(text);
    free(text);
    return r;
}

/* The exp model of description K, as bf16emu attn takes it when --exp
   names none: its exp_model, loading the ex2-sm90 tables on first use
   (path: $BF16EMU_EX2_TABLE, else the library's default place). */
static const fa_exp_model *
exp_model_for(ext_state *st, const fa_kernel *k)
{
    char err[1024];

    switch (k->exp_model) {
    case FA_KEXP_CR:
        return fa_exp_model_by_name("cr");
    case FA_KEXP_LIBM:
        return fa_exp_model_by_name("libm");
    default:
        break;
    }
    if (!st->ex2_loaded) {
        if (ax_ex2_table_load(
                ax_ex2_table_default_path(getenv("BF16EMU_EX2_TABLE")),
                &st->ex2, err, sizeof err)
            != 0) {
            PyErr_Format(PyExc_OSError,
                         "kernel '%s': its exp model needs the ex2-sm90 "
                         "table ($BF16EMU_EX2_TABLE): %s",
                         k->name, err);
            return NULL;
        }
        ax_ex2_model(&st->ex2, false, &st->ex2_rule[0], &st->ex2_model[0]);
        ax_ex2_model(&st->ex2, true, &st->ex2_rule[1], &st->ex2_model[1]);
        st->ex2_loaded = true;
    }
    return &st->ex2_model[k->exp_model == FA_KEXP_EX2_SM90_FTZ];
}

/* The lg2 and reciprocal models K asks for, loaded on first use; false
   with an exception when a table cannot be read. */
static bool
log_models_for(ext_state *st, const fa_kernel *k, fa_config *c)
{
    char err[1024];

    if (k->normalize == FA_NORM_RCP_APPROX) {
        if (!st->rcp_loaded) {
            if (ax_rcp_table_load(
                    ax_rcp_table_default_path(getenv("BF16EMU_RCP_TABLE")),
                    &st->rcp, err, sizeof err)
                != 0) {
                PyErr_Format(PyExc_OSError,
                             "kernel '%s': its reciprocal-approx needs the "
                             "rcp-sm90 table ($BF16EMU_RCP_TABLE): %s",
                             k->name, err);
                return false;
            }
            ax_rcp_model(&st->rcp, &st->rcp_model);
            st->rcp_loaded = true;
        }
        c->rcp = &st->rcp_model;
    }
    if (k->log == FA_KLOG_LG2 || k->combine_log == FA_KLOG_LG2) {
        if (!st->lg2_loaded) {
            if (ax_lg2_table_load(
                    ax_lg2_table_default_path(getenv("BF16EMU_LG2_TABLE")),
                    &st->lg2, err, sizeof err)
                != 0) {
                PyErr_Format(PyExc_OSError,
                             "kernel '%s': its lg2 log needs the lg2-sm90 "
                             "table ($BF16EMU_LG2_TABLE): %s",
                             k->name, err);
                return false;
            }
            ax_lg2_model(&st->lg2, false, &st->lg2_rule, &st->lg2_model);
            st->lg2_loaded = true;
        }
        c->log = &st->lg2_model;
    }
    return true;
}

/* A [B, H, N, d] array of 16-bit patterns (BF16 or FP16). */
static PyArrayObject *
take_bhnd(PyObject *obj, const char *arg)
{
    PyArrayObject *a = take_array(obj, NPY_UINT16, arg,
                                  "BF16 or FP16 bit patterns, [B, H, N, d]");

    if (a != NULL && PyArray_NDIM(a) != 4) {
        PyErr_Format(PyExc_ValueError,
                     "%s: expected 4 dimensions [B, H, N, d], got %d", arg,
                     PyArray_NDIM(a));
        return NULL;
    }
    return a;
}

/* Where SDPA backend B aligns is_causal's mask when Nq != Nk: 1 top-left
   (memory-efficient, math; cuDNN for one query row), 0 bottom-right
   (flash), -1 not measured. */
static int
sdpa_causal_top_left(sdpa_backend b, size_t nq)
{
    return b == SDPA_BACKEND_FLASH                   ? 0
           : b == SDPA_BACKEND_EFFICIENT             ? 1
           : b == SDPA_BACKEND_MATH                  ? 1
           : b == SDPA_BACKEND_CUDNN && nq == 1      ? 1
                                                     : -1;
}

/* A new uint32 array of N dimensions DIMS, or NULL with an exception. */
static PyArrayObject *
new_u32(int n, const npy_intp *dims)
{
    return (PyArrayObject *)PyArray_SimpleNew(n, (npy_intp *)dims,
                                              NPY_UINT32);
}

/* MASK (an array of TYPE_NAME: "bool" over uint8, "f32" over uint32,
   "bf16" or "f16" over uint16) bound to the [B, H, Nq, Nk] of launch L
   as bf16emu attn --mask binds a file's (am_bind_file), into OUT; false
   with an exception carrying am_bind's message. */
static bool
bind_mask(PyObject *mask_o, const char *type_name, const ax_launch *l,
          am_mask *out)
{
    static const struct
    {
        const char *name;
        int npy;
        tensor_dtype dt;
    } types[] = {{"bool", NPY_UINT8, TENSOR_BOOL},
                 {"f32", NPY_UINT32, TENSOR_F32},
                 {"bf16", NPY_UINT16, TENSOR_BF16},
                 {"f16", NPY_UINT16, TENSOR_F16}};
    PyArrayObject *a;
    tensor t;
    char msg[512];
    size_t i;

    for (i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, type_name) == 0)
            break;
    if (i == sizeof types / sizeof types[0]) {
        PyErr_Format(PyExc_ValueError,
                     "mask_dtype='%s': expected bool, f32, bf16 or f16",
                     type_name);
        return false;
    }
    if ((a = take_array(mask_o, types[i].npy, "mask",
                        "a boolean or additive attention mask"))
        == NULL)
        return false;
    memset(&t, 0, sizeof t);
    t.dtype = types[i].dt;
    t.ndim = (unsigned)PyArray_NDIM(a);
    if (t.ndim > TENSOR_MAX_DIMS)
        t.ndim = 0; /* refused by am_bind as a count of dimensions */
    t.n_elems = (uint64_t)PyArray_SIZE(a);
    for (unsigned d = 0; d < t.ndim; d++)
        t.shape[d] = (uint64_t)PyArray_DIM(a, (int)d);
    t.n_bytes = (size_t)PyArray_NBYTES(a);
    t.data = PyArray_DATA(a);
    if (am_bind_file(&t, l->batch, l->heads, l->nq, l->nk, l->batch,
                     l->heads, NULL, false, NULL, out, msg, sizeof msg)
        != 0) {
        PyErr_SetString(PyExc_ValueError, msg);
        return false;
    }
    return true;
}

/* The description in JSON TEXT (a dict given as kernel=, as
   json.dumps writes it) into K; false with an exception carrying
   kj_parse's message. */
static bool
parse_kernel(const char *text, fa_kernel *k)
{
    char msg[1024];

    if (kj_parse(text, "kernel", "dict", k, msg, sizeof msg) != 0) {
        PyErr_SetString(PyExc_ValueError, msg);
        return false;
    }
    return true;
}

static char *attn_kw[] = {"q",        "k",      "v",        "kernel",
                          "causal",   "causal_align", "scale", "splits",
                          "launch",   "threads", "fmt",     "backward",
                          "do",       "sdpa_backends", "kernel_json",
                          "mask",     "mask_type", NULL};

/* attention(...) -> (O, LSE, delta, dQ, dK, dV, sdpa): the backward's
   arrays None without backward, sdpa None unless kernel is "sdpa" (then
   (backend, variant, reason, description, splits) of PyTorch 2.11's
   choice). */
static PyObject *
ext_attention(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *qo, *ko, *vo, *scale_o = Py_None, *splits_o = Py_None,
                            *launch_o = Py_None, *do_o = Py_None,
                            *align_o = Py_None, *sdpa_info = NULL, *ret,
                            *mask_o = Py_None;
    const char *kname = "fa2", *fmt = "bf16", *align = NULL,
               *kjson = NULL, *mask_type = "bool";
    int causal = 0, threads = 0, failed = 0, backward = 0, backends = -1;
    ext_state *st = state_of(self);
    PyArrayObject *q, *k, *v, *dout = NULL, *o = NULL, *lse = NULL,
                  *delta = NULL, *dq = NULL, *dk = NULL, *dv = NULL;
    const fa_kernel *kern;
    fa_config cfg, hcfg;
    const char *why;
    size_t nb, nh, nhkv, nq, nk, d, heads, g;
    bool splits_auto = false, launch_given = false, f16, sdpa, top_left,
         splits_given;
    unsigned lean = 0;
    uint32_t *dk_parts = NULL, *dv_parts = NULL;
    ax_launch launch;
    sdpa_choice ch;
    fa_kernel user_kernel;
    am_mask amask;
    bool has_mask;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|spOOOOispOizOs",
                                     attn_kw, &qo, &ko, &vo, &kname, &causal,
                                     &align_o, &scale_o, &splits_o,
                                     &launch_o, &threads, &fmt, &backward,
                                     &do_o, &backends, &kjson, &mask_o,
                                     &mask_type))
        return NULL;
    has_mask = mask_o != Py_None;
    memset(&amask, 0, sizeof amask);
    if (align_o != Py_None) {
        if (!PyUnicode_Check(align_o)
            || (align = PyUnicode_AsUTF8(align_o)) == NULL
            || (strcmp(align, "bottom-right") != 0
                && strcmp(align, "top-left") != 0)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "causal_align: expected None, 'top-left' or "
                            "'bottom-right'");
            return NULL;
        }
    }
    if (strcmp(fmt, "bf16") != 0 && strcmp(fmt, "f16") != 0
        && strcmp(fmt, "fp16") != 0) {
        PyErr_Format(PyExc_ValueError,
                     "fmt='%s': attention inputs are bf16 or f16", fmt);
        return NULL;
    }
    f16 = fmt[0] == 'f';
    sdpa = kjson == NULL && strcmp(kname, "sdpa") == 0;
    if (kjson != NULL) {
        if (!parse_kernel(kjson, &user_kernel))
            return NULL;
        kern = &user_kernel;
    } else
        kern = sdpa ? NULL
                : fa_kernel_by_name(strcmp(kname, "flash") == 0 ? "fa2"
                                                                : kname);
    if (has_mask && causal) {
        PyErr_SetString(PyExc_ValueError,
                        "mask with causal=True: SDPA refuses an attn_mask "
                        "with is_causal; put the causal mask into the mask");
        return NULL;
    }
    if (!sdpa && kern == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "kernel='%s': unknown kernel (bf16emu.kernels() lists "
                     "them; flash is fa2; sdpa is PyTorch 2.11's choice)",
                     kname);
        return NULL;
    }
    if ((q = take_bhnd(qo, "q")) == NULL || (k = take_bhnd(ko, "k")) == NULL
        || (v = take_bhnd(vo, "v")) == NULL || !same_shape(k, v, "k", "v"))
        return NULL;
    if (backward) {
        if (do_o == Py_None) {
            PyErr_SetString(PyExc_ValueError,
                            "backward=True needs do, the gradient of O "
                            "([B, H, Nq, d], the inputs' format)");
            return NULL;
        }
        if ((dout = take_bhnd(do_o, "do")) == NULL
            || !same_shape(q, dout, "q", "do"))
            return NULL;
    } else if (do_o != Py_None) {
        PyErr_SetString(PyExc_ValueError, "do is taken with backward=True");
        return NULL;
    }
    nb = (size_t)PyArray_DIM(q, 0);
    nh = (size_t)PyArray_DIM(q, 1);
    nq = (size_t)PyArray_DIM(q, 2);
    d = (size_t)PyArray_DIM(q, 3);
    nhkv = (size_t)PyArray_DIM(k, 1);
    nk = (size_t)PyArray_DIM(k, 2);
    if ((size_t)PyArray_DIM(k, 0) != nb || (size_t)PyArray_DIM(k, 3) != d
        || nhkv == 0 || nh % nhkv != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "q [B, H, Nq, d], k and v [B, Hkv, Nk, d]: expected "
                        "the same B and d, and H a multiple of Hkv");
        return NULL;
    }
    g = nh / nhkv;
    memset(&launch, 0, sizeof launch);
    launch.batch = nb;
    launch.heads = nh;
    launch.kv_heads = nhkv;
    launch.nq = nq;
    launch.nk = nk;
    launch.d = d;
    launch.f16 = f16;
    launch.from = "the tensors' shape";
    if (launch_o != Py_None) {
        Py_ssize_t lb, lh;
        if (!PyArg_ParseTuple(launch_o, "nn;launch: expected (B, H)", &lb,
                              &lh))
            return NULL;
        if (lb <= 0 || lh <= 0 || (size_t)lh % g != 0) {
            PyErr_Format(PyExc_ValueError,
                         "launch: expected positive (B, H) with H a "
                         "multiple of the group size %zu",
                         g);
            return NULL;
        }
        launch.batch = (size_t)lb;
        launch.heads = (size_t)lh;
        launch.kv_heads = (size_t)lh / g;
        launch.from = "launch";
        launch_given = true;
    }
    top_left = causal != 0 && align != NULL && align[0] == 't';
    if (sdpa) {
        /* PyTorch 2.11's backend for this call on an H200, as bf16emu
           attn --policy sdpa */
        sdpa_case sc = sdpa_case_default();
        sdpa_backend b;
        int tl;
        sc.batch = (int64_t)launch.batch;
        sc.heads = (int64_t)launch.heads;
        sc.kv_heads = (int64_t)launch.kv_heads;
        sc.enable_gqa = nhkv != nh;
        sc.nq = (int64_t)nq;
        sc.nk = (int64_t)nk;
        sc.d = (int64_t)d;
        sc.dtype = f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
        sc.causal = causal != 0;
        if (has_mask)
            sc.mask = strcmp(mask_type, "bool") == 0 ? SDPA_MASK_BOOL
                                                     : SDPA_MASK_FLOAT;
        sc.requires_grad = backward != 0;
        if (backends >= 0)
            sc.enabled = (unsigned)backends & SDPA_EN_ALL;
        b = sdpa_choose_pt211_h200(&sc, &ch);
        if (b == SDPA_BACKEND_ERROR) {
            PyErr_Format(PyExc_ValueError,
                         "kernel='sdpa': PyTorch 2.11 on sm90 (H100, H200: "
                         "132 SMs) runs no backend for this call (%s)",
                         ch.reason);
            return NULL;
        }
        kern = fa_kernel_by_name(sdpa_backend_description(b));
        if (kern == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "kernel='sdpa': PyTorch 2.11 on sm90 runs the %s "
                         "backend here (%s; %s), and there is no "
                         "description of it",
                         sdpa_backend_name(b), ch.variant, ch.reason);
            return NULL;
        }
        if (b == SDPA_BACKEND_CUDNN && ch.splits > 1)
            lean = ch.splits; /* the decode engine's key splits */
        if (b == SDPA_BACKEND_FLASH && splits_o == Py_None)
            splits_auto = true;
        if (causal && nq != nk && align == NULL) {
            if ((tl = sdpa_causal_top_left(b, nq)) < 0) {
                PyErr_Format(PyExc_ValueError,
                             "kernel='sdpa': where %s aligns a causal mask "
                             "with Nq = %zu != Nk = %zu is not measured; "
                             "give causal_align='top-left' or "
                             "'bottom-right'",
                             sdpa_backend_name(b), nq, nk);
                return NULL;
            }
            top_left = tl == 1;
        }
    }
    if (has_mask && kern->bias_add == FA_BIAS_NONE) {
        PyErr_Format(PyExc_ValueError,
                     "mask: the description '%s' takes no attention mask "
                     "(bias_add \"none\"; PyTorch's flash backend refuses "
                     "masks): pass kernel='cudnn', 'efficient' or 'math'",
                     kern->name);
        return NULL;
    }
    if (backward && nhkv != nh && kern->gqa_dkv == FA_GQA_NONE) {
        PyErr_Format(PyExc_ValueError,
                     "backward: grouped-query heads (%zu query heads over "
                     "%zu key/value heads): the description '%s' has no "
                     "rule for the sum of dK and dV over a group (gqa_dkv "
                     "\"none\"); give K and V repeated to %zu heads for the "
                     "backward of PyTorch's expanded call",
                     nh, nhkv, kern->name, nh);
        return NULL;
    }
    cfg = fa_config_kernel_default(kern);
    cfg.shape.batch = nb;
    cfg.shape.heads = nh;
    cfg.shape.nq = nq;
    cfg.shape.nk = nk;
    cfg.shape.d = d;
    cfg.causal = causal != 0;
    cfg.causal_top_left = causal != 0 && top_left;
    cfg.input = f16 ? &sf_format_f16 : NULL;
    if (scale_o != Py_None) {
        double s = PyFloat_AsDouble(scale_o);
        sf_env env = SF_ENV_IEEE;
        uint32_t bits;
        float sf;
        if (s == -1.0 && PyErr_Occurred())
            return NULL;
        bits = (uint32_t)sf_from_double(&sf_format_f32, s, SF_RNE, &env);
        if ((bits & 0x80000000u) != 0 || (bits & 0x7FFFFFFFu) == 0
            || (bits & 0x7F800000u) == 0x7F800000u) {
            PyErr_SetString(PyExc_ValueError,
                            "scale: expected a finite positive number (the "
                            "softmax scale)");
            return NULL;
        }
        memcpy(&sf, &bits, sizeof sf);
        cfg.scale = sf;
    }
    splits_given = splits_o != Py_None;
    if (splits_given) {
        if (PyUnicode_Check(splits_o)
            && PyUnicode_CompareWithASCIIString(splits_o, "auto") == 0) {
            splits_auto = true;
        } else {
            long s = PyLong_AsLong(splits_o);
            if (s == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                PyErr_SetString(PyExc_TypeError,
                                "splits: expected None, 'auto' or 1 to 128");
                return NULL;
            }
            if (s < 1 || s > 128) {
                PyErr_SetString(PyExc_ValueError,
                                "splits: expected None, 'auto' or 1 to 128");
                return NULL;
            }
            cfg.splits = (size_t)s;
        }
    } else if (lean > 1 && !splits_auto) {
        cfg.splits = lean;
    }
    if (splits_auto || (launch_given && !splits_given && lean <= 1)) {
        const char *rule;
        cfg.splits = ax_launch_splits(kern, &launch, &rule);
    }
    if ((cfg.exp = exp_model_for(st, kern)) == NULL
        || !log_models_for(st, kern, &cfg))
        return NULL;
    why = fa_config_check(&cfg);
    if (why != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "the configuration is refused: %s", why);
        return NULL;
    }
    if (has_mask) {
        /* bound to the tensors' [B, H, Nq, Nk], as attn --mask */
        ax_launch ml = launch;
        ml.batch = nb;
        ml.heads = nh;
        if (!bind_mask(mask_o, mask_type, &ml, &amask))
            return NULL;
    }
    if (sdpa) {
        /* the split count the configuration resolves to */
        size_t splits_eff = 1;
        (void)fa_config_tiles(&cfg, NULL, NULL, NULL, &splits_eff);
        if ((sdpa_info = Py_BuildValue("(ssssn)", sdpa_backend_name(ch.backend),
                                       ch.variant, ch.reason, kern->name,
                                       (Py_ssize_t)splits_eff))
            == NULL)
            goto fail;
    }
    {
        npy_intp od[4] = {(npy_intp)nb, (npy_intp)nh, (npy_intp)nq,
                          (npy_intp)d};
        npy_intp kd[4] = {(npy_intp)nb, (npy_intp)nhkv, (npy_intp)nk,
                          (npy_intp)d};
        if ((o = new_u32(4, od)) == NULL || (lse = new_u32(3, od)) == NULL)
            goto fail;
        if (backward
            && ((delta = new_u32(3, od)) == NULL
                || (dq = new_u32(4, od)) == NULL
                || (dk = new_u32(4, kd)) == NULL
                || (dv = new_u32(4, kd)) == NULL))
            goto fail;
    }
    heads = nb * nh;
    if (backward && g > 1) {
        /* each query head's dK and dV, summed over its group below */
        size_t n = heads * nk * d;
        dk_parts = PyMem_RawMalloc((n != 0 ? n : 1) * sizeof *dk_parts);
        dv_parts = PyMem_RawMalloc((n != 0 ? n : 1) * sizeof *dv_parts);
        if (dk_parts == NULL || dv_parts == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    /* one head at a time, as bf16emu attn runs them */
    hcfg = cfg;
    hcfg.shape.batch = 1;
    hcfg.shape.heads = 1;
    hcfg.dq_splits = fa_config_dq_buffers(&cfg);
    /* the gemv kernels of a decode are the whole launch's, as attn's */
    hcfg.launch_bh = launch.batch * launch.heads;
    /* grouped heads summed in FP32 before their rounding */
    hcfg.dkv_fp32 = nhkv != nh && kern->gqa_dkv == FA_GQA_FP32_SUM;
    {
        const uint16_t *qd = PyArray_DATA(q), *kd = PyArray_DATA(k),
                       *vd = PyArray_DATA(v),
                       *dod = dout != NULL ? PyArray_DATA(dout) : NULL;
        uint32_t *od = PyArray_DATA(o), *ld = PyArray_DATA(lse),
                 *ded = backward ? PyArray_DATA(delta) : NULL,
                 *dqd = backward ? PyArray_DATA(dq) : NULL,
                 *dkd = dk_parts != NULL ? dk_parts
                        : backward       ? PyArray_DATA(dk)
                                         : NULL,
                 *dvd = dv_parts != NULL ? dv_parts
                        : backward       ? PyArray_DATA(dv)
                                         : NULL;
        Py_BEGIN_ALLOW_THREADS
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads > 0 ? threads : omp_get_max_threads()) reduction(| : failed)
#endif
        for (size_t hh = 0; hh < heads; hh++) {
            /* grouped-query heads: query head hh reads its group's K, V */
            size_t kh = hh / nh * nhkv + hh % nh / g;
            sf_env env = SF_ENV_IEEE;
            fa_attn_mask hm;
            fa_config hc = am_head_config(&hcfg, has_mask ? &amask : NULL,
                                          hh, &hm);
            if (fa_forward(&hc, qd + hh * nq * d, kd + kh * nk * d,
                           vd + kh * nk * d, od + hh * nq * d, ld + hh * nq,
                           NULL, &env)
                != 0) {
                failed |= 1;
                continue;
            }
            if (!backward)
                continue;
            env = (sf_env)SF_ENV_IEEE;
            /* dK and dV per query head (the KV head's when no groups) */
            if (fa_backward(&hc, qd + hh * nq * d, kd + kh * nk * d,
                            vd + kh * nk * d, od + hh * nq * d, ld + hh * nq,
                            dod + hh * nq * d, ded + hh * nq,
                            dqd + hh * nq * d, dkd + hh * nk * d,
                            dvd + hh * nk * d, NULL, &env)
                != 0)
                failed |= 1;
        }
        if (!failed && dk_parts != NULL) {
            /* the group's sum by the description's gqa_dkv rule, as
               bf16emu attn (fa_gqa_reduce) */
            size_t n = nk * d;
            uint32_t *rk = PyArray_DATA(dk), *rv = PyArray_DATA(dv);
            for (size_t gi = 0; gi < nb * nhkv && !failed; gi++)
                if (fa_gqa_reduce(&cfg, g, n, dk_parts + gi * g * n,
                                  rk + gi * n)
                        != 0
                    || fa_gqa_reduce(&cfg, g, n, dv_parts + gi * g * n,
                                     rv + gi * n)
                           != 0)
                    failed |= 2;
        }
        Py_END_ALLOW_THREADS
    }
    (void)threads;
    PyMem_RawFree(dk_parts);
    PyMem_RawFree(dv_parts);
    dk_parts = dv_parts = NULL;
    am_free(&amask);
    if (failed) {
        PyErr_SetString(failed & 1 ? PyExc_MemoryError : PyExc_ValueError,
                        failed & 1 ? "attention: the forward or backward ran "
                                     "out of memory"
                                   : "attention: fa_gqa_reduce refused the "
                                     "sum over a group");
        goto fail;
    }
    if (!backward)
        ret = Py_BuildValue("(NNOOOOO)", (PyObject *)o, (PyObject *)lse,
                            Py_None, Py_None, Py_None, Py_None,
                            sdpa_info != NULL ? sdpa_info : Py_None);
    else
        ret = Py_BuildValue("(NNNNNNO)", (PyObject *)o, (PyObject *)lse,
                            (PyObject *)delta, (PyObject *)dq,
                            (PyObject *)dk, (PyObject *)dv,
                            sdpa_info != NULL ? sdpa_info : Py_None);
    Py_XDECREF(sdpa_info);
    return ret;

fail:
    PyMem_RawFree(dk_parts);
    PyMem_RawFree(dv_parts);
    am_free(&amask);
    Py_XDECREF(o);
    Py_XDECREF(lse);
    Py_XDECREF(delta);
    Py_XDECREF(dq);
    Py_XDECREF(dk);
    Py_XDECREF(dv);
    Py_XDECREF(sdpa_info);
    return NULL;
}

/*----------------------------------------------------------------------------
 * diff: two arrays of one format compared element by element.
 *--------------------------------------------------------------------------*/
static char *diff_kw[] = {"gpu", "emulated", "fmt", "worst", "tol", NULL};

/* diff(gpu, emulated, fmt, worst, tol) -> (elements, equal, differ,
   nan_vs_number, within, max_dist (None: a NaN against a number),
   [(bucket, min, max, count)], [(flat, gpu bits, emulated bits,
   distance (None: inf))]), compare.h's statistics. */
static PyObject *
ext_diff(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *go, *eo, *hist = NULL, *worst = NULL;
    const char *fmt = "bf16";
    const sf_format *f;
    PyArrayObject *ga, *ea;
    Py_ssize_t cap = 10;
    unsigned long long tol = 0;
    cmp_stats *st;
    char label[64];

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|snK", diff_kw, &go, &eo,
                                     &fmt, &cap, &tol))
        return NULL;
    if ((f = parse_format(fmt, "fmt")) == NULL)
        return NULL;
    if (f->storage_bits > 32) {
        PyErr_Format(PyExc_ValueError, "fmt='%s': diff compares formats of "
                                       "at most 32 bits", fmt);
        return NULL;
    }
    if (cap < 0 || cap > CMP_WORST_MAX) {
        PyErr_Format(PyExc_ValueError, "worst: expected 0 to %d",
                     CMP_WORST_MAX);
        return NULL;
    }
    if ((ga = take_array(go, bits_type(f), "gpu", "bit patterns of fmt"))
            == NULL
        || (ea = take_array(eo, bits_type(f), "emulated",
                            "bit patterns of fmt"))
               == NULL
        || !same_shape(ga, ea, "gpu", "emulated"))
        return NULL;
    if ((st = PyMem_RawMalloc(sizeof *st)) == NULL)
        return PyErr_NoMemory();
    cmp_init(st, (size_t)cap);
    {
        const void *gd = PyArray_DATA(ga), *ed = PyArray_DATA(ea);
        size_t n = (size_t)PyArray_SIZE(ga);
        unsigned bits = f->storage_bits;
        Py_BEGIN_ALLOW_THREADS
        for (size_t j = 0; j < n; j++) {
            uint64_t a = load_bits(gd, j, bits), b = load_bits(ed, j, bits);
            cmp_elem e = {j, 0, (uint32_t)a, (uint32_t)b};
            cmp_add(st, f, a, b, (uint64_t)tol, e);
        }
        Py_END_ALLOW_THREADS
    }
    if ((hist = PyList_New(0)) == NULL || (worst = PyList_New(0)) == NULL)
        goto fail;
    for (unsigned i = 0; i < CMP_DIST_BUCKETS; i++) {
        uint64_t lo, hi;
        PyObject *row;
        int rc;
        if (st->hist[i] == 0)
            continue;
        cmp_dist_bucket_bounds(i, &lo, &hi);
        row = i == CMP_DIST_BUCKET_INF
                  ? Py_BuildValue("(sOOK)", cmp_dist_bucket_label(
                                                label, sizeof label, i),
                                  Py_None, Py_None,
                                  (unsigned long long)st->hist[i])
                  : Py_BuildValue("(sKKK)",
                                  cmp_dist_bucket_label(label, sizeof label,
                                                        i),
                                  (unsigned long long)lo,
                                  (unsigned long long)hi,
                                  (unsigned long long)st->hist[i]);
        rc = row != NULL ? PyList_Append(hist, row) : -1;
        Py_XDECREF(row);
        if (rc != 0)
            goto fail;
    }
    for (size_t i = 0; i < st->n_worst; i++) {
        const cmp_elem *e = &st->worst[i];
        PyObject *row, *dist;
        int rc;
        dist = e->dist == CMP_DIST_INF
                   ? (Py_INCREF(Py_None), Py_None)
                   : PyLong_FromUnsignedLongLong(e->dist);
        row = dist != NULL ? Py_BuildValue("(KkkN)",
                                           (unsigned long long)e->flat,
                                           (unsigned long)e->x,
                                           (unsigned long)e->y, dist)
                           : NULL;
        rc = row != NULL ? PyList_Append(worst, row) : -1;
        Py_XDECREF(row);
        if (rc != 0)
            goto fail;
    }
    {
        PyObject *maxd = st->nan_vs_number > 0
                             ? (Py_INCREF(Py_None), Py_None)
                             : PyLong_FromUnsignedLongLong(st->max_dist);
        PyObject *r = maxd == NULL
                          ? NULL
                          : Py_BuildValue(
                                "(KKKKKNNN)",
                                (unsigned long long)st->elements,
                                (unsigned long long)st->equal,
                                (unsigned long long)st->differ,
                                (unsigned long long)st->nan_vs_number,
                                (unsigned long long)st->within, maxd, hist,
                                worst);
        PyMem_RawFree(st);
        return r;
    }

fail:
    PyMem_RawFree(st);
    Py_XDECREF(hist);
    Py_XDECREF(worst);
    return NULL;
}

/*----------------------------------------------------------------------------
 * trace: the rounding events of an accumulation.
 *--------------------------------------------------------------------------*/
/* The events of one operation, as the library reports them. */
typedef struct
{
    unsigned count;
    sf_event ev[4];
} event_log;

static void
log_event(void *user, const sf_event *ev)
{
    event_log *l = user;

    if (l->count < sizeof l->ev / sizeof l->ev[0])
        l->ev[l->count] = *ev;
    l->count++;
}

/* The value of BITS of F as a Python float (exact: every value of every
   format is a double). */
static PyObject *
value_of(const sf_format *f, uint64_t bits)
{
    sf_env env = SF_ENV_IEEE;
    uint64_t x = f == &sf_format_f64
                     ? bits
                     : sf_convert(&sf_format_f64, f, bits, SF_RNE, &env);
    double d;

    memcpy(&d, &x, sizeof d);
    return PyFloat_FromDouble(d);
}

/* (sign, tail, exp, sig) of a dyadic: (-1)^sign sig 2^exp. */
static PyObject *
dyadic_tuple(const sf_dyadic *d)
{
    PyObject *hi = PyLong_FromUnsignedLongLong(d->hi), *lo = NULL,
             *shift = NULL, *top = NULL, *sig = NULL, *r = NULL;

    if (hi == NULL || (lo = PyLong_FromUnsignedLongLong(d->lo)) == NULL
        || (shift = PyLong_FromLong(64)) == NULL
        || (top = PyNumber_Lshift(hi, shift)) == NULL
        || (sig = PyNumber_Or(top, lo)) == NULL)
        goto out;
    r = Py_BuildValue("(iilO)", d->sign ? 1 : 0, d->tail ? 1 : 0,
                      (long)d->exp, sig);
out:
    Py_XDECREF(hi);
    Py_XDECREF(lo);
    Py_XDECREF(shift);
    Py_XDECREF(top);
    Py_XDECREF(sig);
    return r;
}

/* One step: (kind, format, a, a_value, b, b_value, events), kind "add"
   or "final"; b None for the final rounding; events a list of tuples
   (op, mode, result, result_value, exact, ulp_exp, lsb, guard, round,
   sticky, tie, dir, error, error_infinite, flags, tiny, subnormal, ftz,
   daz, overflow, sr_random), the dyadics as dyadic_tuple. */
static PyObject *
step_tuple(const char *kind, const sf_format *in, const sf_format *out,
           uint64_t a, const uint64_t *b, const event_log *l)
{
    PyObject *evs = PyList_New(0), *r = NULL;
    unsigned n = l->count < 4 ? l->count : 4;

    if (evs == NULL)
        return NULL;
    for (unsigned i = 0; i < n; i++) {
        const sf_event *e = &l->ev[i];
        PyObject *t = Py_BuildValue(
            "(isKNNiIIIIiiNiIiiiiiK)", e->op, sf_round_name(e->mode),
            (unsigned long long)e->result, value_of(out, e->result),
            dyadic_tuple(&e->exact), (int)e->ulp_exp, e->lsb, e->guard,
            e->round, e->sticky, (int)e->tie, e->dir,
            dyadic_tuple(&e->error), (int)e->error_infinite, e->flags,
            (int)e->tiny, (int)e->subnormal, (int)e->ftz, (int)e->daz,
            (int)e->overflow, (unsigned long long)e->sr_random);
        if (t == NULL || PyList_Append(evs, t) != 0) {
            Py_XDECREF(t);
            Py_DECREF(evs);
            return NULL;
        }
        Py_DECREF(t);
    }
    if (b != NULL)
        r = Py_BuildValue("(ssKNKNN)", kind, out->name,
                          (unsigned long long)a, value_of(in, a),
                          (unsigned long long)*b, value_of(in, *b), evs);
    else
        r = Py_BuildValue("(ssKNOON)", kind, out->name,
                          (unsigned long long)a, value_of(in, a), Py_None,
                          Py_None, evs);
    return r;
}

static char *trace_kw[] = {"bits", "acc", "acc_mode", "out", "mode",
                           "env",  "ftz", "daz",      "seed", NULL};

/* trace(bits, acc, acc_mode, out, mode, env, ftz, daz, seed) -> (result,
   result_value, flags, sr_draws, steps): BITS (at least one) of format
   ACC summed left to right in ACC with ACC_MODE, then rounded to OUT
   with MODE, as bf16emu trace does; steps as step_tuple. */
static PyObject *
ext_trace(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *bo, *steps = NULL, *st;
    const char *acc_name = "f32", *acc_mode = "rne", *out_name = "bf16",
               *mode = "rne", *env_name = "ieee";
    int ftz = -1, daz = -1;
    unsigned long long seed = 0;
    const sf_format *acc, *out;
    sf_round arm, rm;
    sf_env env;
    sf_event_sink sink;
    event_log log;
    PyArrayObject *b;
    size_t n;
    uint64_t sum, z;

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|sssssiiK", trace_kw, &bo,
                                     &acc_name, &acc_mode, &out_name, &mode,
                                     &env_name, &ftz, &daz, &seed))
        return NULL;
    if ((acc = parse_format(acc_name, "acc")) == NULL
        || !parse_mode(acc_mode, &arm))
        return NULL;
    out = strcmp(out_name, "f64") == 0 ? &sf_format_f64
                                       : parse_format(out_name, "out");
    if (out == NULL || !parse_mode(mode, &rm)
        || !make_env(env_name, ftz, daz, -1, seed, &env)
        || (b = take_array(bo, bits_type(acc), "values",
                           "bit patterns of acc")) == NULL)
        return NULL;
    n = (size_t)PyArray_SIZE(b);
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "values: expected at least one value");
        return NULL;
    }
    if ((steps = PyList_New(0)) == NULL)
        return NULL;
    sink.fn = log_event;
    sink.user = &log;
    env.events = &sink;
    env.sr_counter = 0;
    env.flags = 0;
    sum = load_bits(PyArray_DATA(b), 0, acc->storage_bits);
    for (size_t i = 1; i < n; i++) {
        uint64_t x = load_bits(PyArray_DATA(b), i, acc->storage_bits);
        log.count = 0;
        z = sf_add(acc, sum, x, arm, &env);
        if ((st = step_tuple("add", acc, acc, sum, &x, &log)) == NULL
            || PyList_Append(steps, st) != 0) {
            Py_XDECREF(st);
            Py_DECREF(steps);
            return NULL;
        }
        Py_DECREF(st);
        sum = z;
    }
    log.count = 0;
    z = sf_convert(out, acc, sum, rm, &env);
    if ((st = step_tuple("final", acc, out, sum, NULL, &log)) == NULL
        || PyList_Append(steps, st) != 0) {
        Py_XDECREF(st);
        Py_DECREF(steps);
        return NULL;
    }
    Py_DECREF(st);
    return Py_BuildValue("(KNIKN)", (unsigned long long)z, value_of(out, z),
                         env.flags, (unsigned long long)env.sr_counter,
                         steps);
}

/*----------------------------------------------------------------------------
 * The module.
 *--------------------------------------------------------------------------*/
#define KW (PyCFunction)(void (*)(void))
static PyMethodDef ext_methods[] = {
    {"round", KW ext_round, METH_VARARGS | METH_KEYWORDS,
     "round(x, fmt, mode, env, ftz, daz, saturate, seed, flags)"},
    {"to_float", KW ext_to_float, METH_VARARGS | METH_KEYWORDS,
     "to_float(bits, fmt)"},
    {"convert", KW ext_convert, METH_VARARGS | METH_KEYWORDS,
     "convert(bits, to, fmt, mode, env, ftz, daz, saturate, seed, flags)"},
    {"add", KW ext_add, METH_VARARGS | METH_KEYWORDS, "add(a, b, ...)"},
    {"sub", KW ext_sub, METH_VARARGS | METH_KEYWORDS, "sub(a, b, ...)"},
    {"mul", KW ext_mul, METH_VARARGS | METH_KEYWORDS, "mul(a, b, ...)"},
    {"div", KW ext_div, METH_VARARGS | METH_KEYWORDS, "div(a, b, ...)"},
    {"fma", KW ext_fma, METH_VARARGS | METH_KEYWORDS, "fma(a, b, c, ...)"},
    {"sqrt", KW ext_sqrt, METH_VARARGS | METH_KEYWORDS, "sqrt(a, ...)"},
    {"mma", KW ext_mma, METH_VARARGS | METH_KEYWORDS,
     "mma(a, b, c, model, fmt, flags)"},
    {"mma_models", ext_mma_models, METH_NOARGS, "mma_models()"},
    {"attention", KW ext_attention, METH_VARARGS | METH_KEYWORDS,
     "attention(q, k, v, kernel, causal, causal_align, scale, splits, "
     "launch, threads, fmt, backward, do, sdpa_backends, kernel_json, "
     "mask, mask_type)"},
    {"describe", ext_describe, METH_VARARGS,
     "describe(name) -> the description as JSON text"},
    {"diff", KW ext_diff, METH_VARARGS | METH_KEYWORDS,
     "diff(gpu, emulated, fmt, worst, tol) -> the comparison"},
    {"kernels", ext_kernels, METH_NOARGS, "kernels()"},
    {"trace", KW ext_trace, METH_VARARGS | METH_KEYWORDS,
     "trace(bits, acc, acc_mode, out, mode, env, ftz, daz, seed)"},
    {NULL, NULL, 0, NULL}};
#undef KW

static void
ext_free(void *module)
{
    ext_state *st = state_of((PyObject *)module);

    if (st == NULL)
        return;
    if (st->ex2_loaded)
        ax_ex2_table_free(&st->ex2);
    if (st->lg2_loaded)
        ax_lg2_table_free(&st->lg2);
    if (st->rcp_loaded)
        ax_rcp_table_free(&st->rcp);
    memset(st, 0, sizeof *st);
}

static struct PyModuleDef ext_module = {
    PyModuleDef_HEAD_INIT,
    "bf16emu._ext",
    "The C extension of bf16emu (use the bf16emu package).",
    sizeof(ext_state),
    ext_methods,
    NULL,
    NULL,
    NULL,
    ext_free};

PyMODINIT_FUNC
PyInit__ext(void)
{
    PyObject *m;

    import_array();
    m = PyModule_Create(&ext_module);
    if (m == NULL)
        return NULL;
    memset(state_of(m), 0, sizeof(ext_state));
    if (PyModule_AddIntConstant(m, "FLAG_INEXACT", SF_FLAG_INEXACT) != 0
        || PyModule_AddIntConstant(m, "FLAG_UNDERFLOW", SF_FLAG_UNDERFLOW)
               != 0
        || PyModule_AddIntConstant(m, "FLAG_OVERFLOW", SF_FLAG_OVERFLOW) != 0
        || PyModule_AddIntConstant(m, "FLAG_DIVZERO", SF_FLAG_DIVZERO) != 0
        || PyModule_AddIntConstant(m, "FLAG_INVALID", SF_FLAG_INVALID) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
