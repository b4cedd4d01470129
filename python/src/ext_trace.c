/* ext_trace.c -- trace(...): the rounding events of an accumulation,
   from the library's event sink */
#include "ext.h"

#include <string.h>

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
    r = Py_BuildValue("(iilO)", d->sign ? 1 : 0, d->tail ? 1 : 0, (long)d->exp,
                      sig);
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
            e->round, e->sticky, (int)e->tie, e->dir, dyadic_tuple(&e->error),
            (int)e->error_infinite, e->flags, (int)e->tiny, (int)e->subnormal,
            (int)e->ftz, (int)e->daz, (int)e->overflow,
            (unsigned long long)e->sr_random);
        if (t == NULL || PyList_Append(evs, t) != 0) {
            Py_XDECREF(t);
            Py_DECREF(evs);
            return NULL;
        }
        Py_DECREF(t);
    }
    if (b != NULL)
        r = Py_BuildValue("(ssKNKNN)", kind, out->name, (unsigned long long)a,
                          value_of(in, a), (unsigned long long)*b,
                          value_of(in, *b), evs);
    else
        r = Py_BuildValue("(ssKNOON)", kind, out->name, (unsigned long long)a,
                          value_of(in, a), Py_None, Py_None, evs);
    return r;
}

static char *trace_kw[] = {"bits", "acc", "acc_mode", "out",  "mode",
                           "env",  "ftz", "daz",      "seed", NULL};

/* trace(bits, acc, acc_mode, out, mode, env, ftz, daz, seed) -> (result,
   result_value, flags, sr_draws, steps): BITS (at least one) of format
   ACC summed left to right in ACC with ACC_MODE, then rounded to OUT
   with MODE, as bf16emu trace does; steps as step_tuple. */
PyObject *
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
    if ((acc = px_parse_format(acc_name, "acc")) == NULL
        || !px_parse_mode(acc_mode, &arm))
        return NULL;
    out = strcmp(out_name, "f64") == 0 ? &sf_format_f64
                                       : px_parse_format(out_name, "out");
    if (out == NULL || !px_parse_mode(mode, &rm)
        || !px_make_env(env_name, ftz, daz, -1, seed, &env)
        || (b = px_take_array(bo, px_bits_type(acc), "values",
                              "bit patterns of acc"))
               == NULL)
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
    sum = px_load_bits(PyArray_DATA(b), 0, acc->storage_bits);
    for (size_t i = 1; i < n; i++) {
        uint64_t x = px_load_bits(PyArray_DATA(b), i, acc->storage_bits);
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
                         env.flags, (unsigned long long)env.sr_counter, steps);
}
