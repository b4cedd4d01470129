/* bf16emu_ext.c -- the Python extension bf16emu._ext: the library's
   conversions, array arithmetic, matrix-unit models, attention engine and
   comparisons over NumPy arrays of bit patterns.  This file is the module
   (its method table, state and initialisation); the functions are in
   ext_*.c by topic (ext.h lists them).

   Every function takes NumPy arrays as they are: an array of the expected
   dtype that is C-contiguous, aligned and in native byte order is read in
   place (no copy); any other array is refused with an exception that says
   what was expected.  The computation runs with the GIL released.  Errors
   of the library (a refused configuration, a table that cannot be read)
   are raised as exceptions carrying the library's message.

   The measured GPU tables that the fa2 and cudnn descriptions need are
   read once per interpreter, on the first call that needs them, into the
   module's state (never freed before the module is). */
#define EXT_IMPORT_ARRAY /* this file calls import_array() */
#include "ext.h"

#include <string.h>

#include "analysis/ex2_table.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"

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
    ext_state *st = px_state_of((PyObject *)module);

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
    memset(px_state_of(m), 0, sizeof(ext_state));
    if (PyModule_AddIntConstant(m, "FLAG_INEXACT", SF_FLAG_INEXACT) != 0
        || PyModule_AddIntConstant(m, "FLAG_UNDERFLOW", SF_FLAG_UNDERFLOW) != 0
        || PyModule_AddIntConstant(m, "FLAG_OVERFLOW", SF_FLAG_OVERFLOW) != 0
        || PyModule_AddIntConstant(m, "FLAG_DIVZERO", SF_FLAG_DIVZERO) != 0
        || PyModule_AddIntConstant(m, "FLAG_INVALID", SF_FLAG_INVALID) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
