/* ext_values.c -- round, to_float and convert, and the element-wise
   arithmetic (add, sub, mul, div, fma, sqrt) over arrays of bit
   patterns */
#include "ext.h"

/*----------------------------------------------------------------------------
 * round, to_float, convert.
 *--------------------------------------------------------------------------*/
static char *round_kw[] = {"x",   "fmt",      "mode", "env",   "ftz",
                           "daz", "saturate", "seed", "flags", NULL};

PyObject *
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
                                     &fmt, &mode, &env_name, &ftz, &daz, &sat,
                                     &seed, &want_flags))
        return NULL;
    if ((to = px_parse_format(fmt, "fmt")) == NULL || !px_parse_mode(mode, &rm)
        || !px_make_env(env_name, ftz, daz, sat, seed, &env))
        return NULL;
    if (PyArray_Check(xo) && PyArray_TYPE((PyArrayObject *)xo) == NPY_FLOAT64)
        x = px_take_array(xo, NPY_FLOAT64, "x", "values to round");
    else
        x = px_take_array(xo, NPY_FLOAT32, "x",
                          "values to round; float64 is "
                          "taken too");
    if (x == NULL || (out = px_new_like(x, px_bits_type(to))) == NULL)
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
    return px_with_flags(out, env.flags, want_flags);
}

static char *to_float_kw[] = {"bits", "fmt", NULL};

PyObject *
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
    if ((from = px_parse_format(fmt, "fmt")) == NULL
        || (b = px_take_array(bo, px_bits_type(from), "bits",
                              "bit patterns of "
                              "fmt"))
               == NULL
        || (out = px_new_like(b, NPY_FLOAT32)) == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    /* every value of every format is an FP32 value: exact */
    sf_convert_array(&sf_format_f32, from, PyArray_DATA(b), PyArray_DATA(out),
                     (size_t)PyArray_SIZE(b), SF_RNE, &env);
    Py_END_ALLOW_THREADS
    return (PyObject *)out;
}

static char *convert_kw[] = {"bits", "to",       "fmt",  "mode",  "env", "ftz",
                             "daz",  "saturate", "seed", "flags", NULL};

PyObject *
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
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Os|sssiiiKp", convert_kw, &bo,
                                     &to_name, &fmt, &mode, &env_name, &ftz,
                                     &daz, &sat, &seed, &want_flags))
        return NULL;
    if ((to = px_parse_format(to_name, "to")) == NULL
        || (from = px_parse_format(fmt, "fmt")) == NULL
        || !px_parse_mode(mode, &rm)
        || !px_make_env(env_name, ftz, daz, sat, seed, &env)
        || (b = px_take_array(bo, px_bits_type(from), "bits",
                              "bit patterns of fmt"))
               == NULL
        || (out = px_new_like(b, px_bits_type(to))) == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    sf_convert_array(to, from, PyArray_DATA(b), PyArray_DATA(out),
                     (size_t)PyArray_SIZE(b), rm, &env);
    Py_END_ALLOW_THREADS
    return px_with_flags(out, env.flags, want_flags);
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

/* The library's array operations where it has them (add, sub, mul, fma
   of BF16, FP16, FP32), else the scalar operation element by element:
   the same bits, flags and SR draws either way. */
static void
run_op(int op, const sf_format *f, const void *a, const void *b, const void *c,
       void *out, size_t n, sf_round rm, sf_env *env)
{
#define ARRAY_OPS(fmt, T)                                                     \
    if (f == &sf_format_##fmt) {                                              \
        switch (op) {                                                         \
        case OP_ADD:                                                          \
            sf_##fmt##_add_array(a, b, out, n, rm, env);                      \
            return;                                                           \
        case OP_SUB:                                                          \
            sf_##fmt##_sub_array(a, b, out, n, rm, env);                      \
            return;                                                           \
        case OP_MUL:                                                          \
            sf_##fmt##_mul_array(a, b, out, n, rm, env);                      \
            return;                                                           \
        case OP_FMA:                                                          \
            sf_##fmt##_fma_array(a, b, c, out, n, rm, env);                   \
            return;                                                           \
        default:                                                              \
            break;                                                            \
        }                                                                     \
    }
    ARRAY_OPS(bf16, sf_bf16)
    ARRAY_OPS(f16, sf_f16)
    ARRAY_OPS(f32, sf_f32)
#undef ARRAY_OPS
    unsigned w = f->storage_bits;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = px_load_bits(a, i, w), r;
        switch (op) {
        case OP_ADD:
            r = sf_add(f, x, px_load_bits(b, i, w), rm, env);
            break;
        case OP_SUB:
            r = sf_sub(f, x, px_load_bits(b, i, w), rm, env);
            break;
        case OP_MUL:
            r = sf_mul(f, x, px_load_bits(b, i, w), rm, env);
            break;
        case OP_DIV:
            r = sf_div(f, x, px_load_bits(b, i, w), rm, env);
            break;
        case OP_FMA:
            r = sf_fma(f, x, px_load_bits(b, i, w), px_load_bits(c, i, w), rm,
                       env);
            break;
        default:
            r = sf_sqrt(f, x, rm, env);
            break;
        }
        px_store_bits(out, i, w, r);
    }
}

static PyObject *
arith(int op, unsigned n_in, PyObject *args, PyObject *kw)
{
    static char *kw1[] = {"a",   "fmt",  "mode",  "env", "ftz",
                          "daz", "seed", "flags", NULL};
    static char *kw2[] = {"a",   "b",   "fmt",  "mode",  "env",
                          "ftz", "daz", "seed", "flags", NULL};
    static char *kw3[] = {"a",   "b",   "c",    "fmt",   "mode", "env",
                          "ftz", "daz", "seed", "flags", NULL};
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
    if (!ok || (f = px_parse_format(fmt, "fmt")) == NULL
        || !px_parse_mode(mode, &rm)
        || !px_make_env(env_name, ftz, daz, -1, seed, &env))
        return NULL;
    for (unsigned i = 0; i < n_in; i++) {
        in[i] = px_take_array(o[i], px_bits_type(f), names[i],
                              "bit patterns of fmt");
        if (in[i] == NULL
            || (i > 0 && !px_same_shape(in[0], in[i], names[0], names[i])))
            return NULL;
    }
    if ((out = px_new_like(in[0], px_bits_type(f))) == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    run_op(op, f, PyArray_DATA(in[0]),
           in[1] != NULL ? PyArray_DATA(in[1]) : NULL,
           in[2] != NULL ? PyArray_DATA(in[2]) : NULL, PyArray_DATA(out),
           (size_t)PyArray_SIZE(in[0]), rm, &env);
    Py_END_ALLOW_THREADS
    return px_with_flags(out, env.flags, want_flags);
}

PyObject *
ext_add(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_ADD, 2, args, kw);
}

PyObject *
ext_sub(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_SUB, 2, args, kw);
}

PyObject *
ext_mul(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_MUL, 2, args, kw);
}

PyObject *
ext_div(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_DIV, 2, args, kw);
}

PyObject *
ext_fma(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_FMA, 3, args, kw);
}

PyObject *
ext_sqrt(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return arith(OP_SQRT, 1, args, kw);
}
