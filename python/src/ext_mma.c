/* ext_mma.c -- mma(a, b, c, model, fmt): D = A B + C through a
   matrix-unit preset, and mma_models() */
#include "ext.h"

#include "softfloat/mma.h"

/*----------------------------------------------------------------------------
 * mma: D = A B + C through a preset.
 *--------------------------------------------------------------------------*/
PyObject *
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

PyObject *
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
    if ((f = px_parse_format(fmt, "fmt")) == NULL)
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
    if ((a = px_take_array(ao, px_bits_type(f), "a", "bit patterns of fmt"))
            == NULL
        || (b = px_take_array(bo, px_bits_type(f), "b", "bit patterns of fmt"))
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
        if ((c = px_take_array(co, NPY_UINT32, "c",
                               "accumulator bit patterns"))
            == NULL)
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
    path =
        sf_mma_gemm(m, rows, cols, k, f, PyArray_DATA(a), f, PyArray_DATA(b),
                    c != NULL ? (const uint32_t *)PyArray_DATA(c) : NULL,
                    PyArray_DATA(d), SF_MMA_PATH_AUTO, &env);
    Py_END_ALLOW_THREADS
    if (path < 0) {
        Py_DECREF(d);
        PyErr_SetString(PyExc_RuntimeError, "sf_mma_gemm refused the call");
        return NULL;
    }
    return px_with_flags(d, env.flags, want_flags);
}
