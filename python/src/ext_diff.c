/* ext_diff.c -- diff(gpu, emulated, fmt, worst, tol): two arrays of one
   format compared element by element (analysis/compare.h) */
#include "ext.h"

#include "analysis/compare.h"

/*----------------------------------------------------------------------------
 * diff: two arrays of one format compared element by element.
 *--------------------------------------------------------------------------*/
static char *diff_kw[] = {"gpu", "emulated", "fmt", "worst", "tol", NULL};

/* The non-empty buckets of S's histogram: [(label, min, max, count)],
   min and max None for "inf". */
static PyObject *
histogram(const cmp_stats *st)
{
    PyObject *hist = PyList_New(0);
    char label[64];

    for (unsigned i = 0; hist != NULL && i < CMP_DIST_BUCKETS; i++) {
        uint64_t lo, hi;
        PyObject *row;
        int rc;
        if (st->hist[i] == 0)
            continue;
        cmp_dist_bucket_bounds(i, &lo, &hi);
        cmp_dist_bucket_label(label, sizeof label, i);
        row = i == CMP_DIST_BUCKET_INF
                  ? Py_BuildValue("(sOOK)", label, Py_None, Py_None,
                                  (unsigned long long)st->hist[i])
                  : Py_BuildValue("(sKKK)", label, (unsigned long long)lo,
                                  (unsigned long long)hi,
                                  (unsigned long long)st->hist[i]);
        rc = row != NULL ? PyList_Append(hist, row) : -1;
        Py_XDECREF(row);
        if (rc != 0)
            Py_CLEAR(hist);
    }
    return hist;
}

/* S's worst elements: [(flat, gpu bits, emulated bits, distance (None:
   a NaN against a number))]. */
static PyObject *
worst_list(const cmp_stats *st)
{
    PyObject *worst = PyList_New(0);

    for (size_t i = 0; worst != NULL && i < st->n_worst; i++) {
        const cmp_elem *e = &st->worst[i];
        PyObject *row, *dist;
        int rc;
        if (e->dist == CMP_DIST_INF) {
            Py_INCREF(Py_None);
            dist = Py_None;
        } else {
            dist = PyLong_FromUnsignedLongLong(e->dist);
        }
        row =
            dist != NULL
                ? Py_BuildValue("(KkkN)", (unsigned long long)e->flat,
                                (unsigned long)e->x, (unsigned long)e->y, dist)
                : NULL;
        rc = row != NULL ? PyList_Append(worst, row) : -1;
        Py_XDECREF(row);
        if (rc != 0)
            Py_CLEAR(worst);
    }
    return worst;
}

/* diff(gpu, emulated, fmt, worst, tol) -> (elements, equal, differ,
   nan_vs_number, within, max_dist (None: a NaN against a number),
   [(bucket, min, max, count)], [(flat, gpu bits, emulated bits,
   distance (None: inf))]), compare.h's statistics. */
PyObject *
ext_diff(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *go, *eo, *hist = NULL, *worst = NULL;
    const char *fmt = "bf16";
    const sf_format *f;
    PyArrayObject *ga, *ea;
    Py_ssize_t cap = 10;
    unsigned long long tol = 0;
    cmp_stats *st;

    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|snK", diff_kw, &go, &eo,
                                     &fmt, &cap, &tol))
        return NULL;
    if ((f = px_parse_format(fmt, "fmt")) == NULL)
        return NULL;
    if (f->storage_bits > 32) {
        PyErr_Format(PyExc_ValueError,
                     "fmt='%s': diff compares formats of "
                     "at most 32 bits",
                     fmt);
        return NULL;
    }
    if (cap < 0 || cap > CMP_WORST_MAX) {
        PyErr_Format(PyExc_ValueError, "worst: expected 0 to %d",
                     CMP_WORST_MAX);
        return NULL;
    }
    if ((ga = px_take_array(go, px_bits_type(f), "gpu", "bit patterns of fmt"))
            == NULL
        || (ea = px_take_array(eo, px_bits_type(f), "emulated",
                               "bit patterns of fmt"))
               == NULL
        || !px_same_shape(ga, ea, "gpu", "emulated"))
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
            uint64_t a = px_load_bits(gd, j, bits),
                     b = px_load_bits(ed, j, bits);
            cmp_elem e = {j, 0, (uint32_t)a, (uint32_t)b};
            cmp_add(st, f, a, b, (uint64_t)tol, e);
        }
        Py_END_ALLOW_THREADS
    }
    if ((hist = histogram(st)) == NULL || (worst = worst_list(st)) == NULL)
        goto fail;
    {
        PyObject *maxd, *r;
        if (st->nan_vs_number > 0) {
            Py_INCREF(Py_None);
            maxd = Py_None;
        } else if ((maxd = PyLong_FromUnsignedLongLong(st->max_dist))
                   == NULL) {
            goto fail;
        }
        r = Py_BuildValue("(KKKKKNNN)", (unsigned long long)st->elements,
                          (unsigned long long)st->equal,
                          (unsigned long long)st->differ,
                          (unsigned long long)st->nan_vs_number,
                          (unsigned long long)st->within, maxd, hist, worst);
        PyMem_RawFree(st);
        return r;
    }

fail:
    PyMem_RawFree(st);
    Py_XDECREF(hist);
    Py_XDECREF(worst);
    return NULL;
}
