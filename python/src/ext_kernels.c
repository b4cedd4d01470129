/* ext_kernels.c -- the kernel descriptions of the extension: kernels(),
   describe(name), a description given as a dict (kj_parse), the
   measured tables a description's exp, log and reciprocal models need
   (loaded once into the module's state) and a mask bound to a launch
   (am_bind_file) */
#include "ext.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/attn_mask.h"
#include "analysis/ex2_table.h"
#include "analysis/kernel_json.h"
#include "analysis/launch.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"
#include "attention/attention.h"

PyObject *
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
PyObject *
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
const fa_exp_model *
px_exp_model_for(ext_state *st, const fa_kernel *k)
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
bool
px_log_models_for(ext_state *st, const fa_kernel *k, fa_config *c)
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

/* MASK (an array of TYPE_NAME: "bool" over uint8, "f32" over uint32,
   "bf16" or "f16" over uint16) bound to the [B, H, Nq, Nk] of launch L
   as bf16emu attn --mask binds a file's (am_bind_file), into OUT; false
   with an exception carrying am_bind's message. */
bool
px_bind_mask(PyObject *mask_o, const char *type_name, const ax_launch *l,
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
    if ((a = px_take_array(mask_o, types[i].npy, "mask",
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
    if (am_bind_file(&t, l->batch, l->heads, l->nq, l->nk, l->batch, l->heads,
                     NULL, false, NULL, out, msg, sizeof msg)
        != 0) {
        PyErr_SetString(PyExc_ValueError, msg);
        return false;
    }
    return true;
}

/* The description in JSON TEXT (a dict given as kernel=, as
   json.dumps writes it) into K; false with an exception carrying
   kj_parse's message. */
bool
px_parse_kernel(const char *text, fa_kernel *k)
{
    char msg[1024];

    if (kj_parse(text, "kernel", "dict", k, msg, sizeof msg) != 0) {
        PyErr_SetString(PyExc_ValueError, msg);
        return false;
    }
    return true;
}
