/* ext_common.c -- what the files of the extension share: the module's
   state, the names of formats, modes and environments, and the arrays
   the library reads in place */
#include "ext.h"

#include <string.h>

ext_state *
px_state_of(PyObject *module)
{
    return (ext_state *)PyModule_GetState(module);
}

/*----------------------------------------------------------------------------
 * Names.
 *--------------------------------------------------------------------------*/
const sf_format *
px_parse_format(const char *name, const char *arg)
{
    const sf_format *f = sf_format_by_name(name);

    if (f == NULL || f == &sf_format_f64)
        PyErr_Format(PyExc_ValueError,
                     "%s='%s': unknown format (expected bf16, f16 (fp16), "
                     "f32 (fp32), tf32, e4m3 or e5m2)",
                     arg, name);
    return f == &sf_format_f64 ? NULL : f;
}

bool
px_parse_mode(const char *name, sf_round *rm)
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
bool
px_parse_env(const char *name, sf_env *env)
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
bool
px_make_env(const char *env_name, int ftz, int daz, int saturate,
            unsigned long long seed, sf_env *env)
{
    if (!px_parse_env(env_name, env))
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
int
px_bits_type(const sf_format *f)
{
    return f->storage_bits == 8    ? NPY_UINT8
           : f->storage_bits == 16 ? NPY_UINT16
                                   : NPY_UINT32;
}

const char *
px_type_label(int type)
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
PyArrayObject *
px_take_array(PyObject *obj, int type, const char *arg, const char *what)
{
    PyArrayObject *a;

    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected a numpy.ndarray of %s (%s), got %s", arg,
                     px_type_label(type), what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    a = (PyArrayObject *)obj;
    if (PyArray_TYPE(a) != type) {
        PyObject *d = PyObject_Str((PyObject *)PyArray_DESCR(a));
        PyErr_Format(
            PyExc_TypeError, "%s: expected dtype %s (%s), got dtype %s", arg,
            px_type_label(type), what, d != NULL ? PyUnicode_AsUTF8(d) : "?");
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

bool
px_same_shape(PyArrayObject *a, PyArrayObject *b, const char *an,
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

PyArrayObject *
px_new_like(PyArrayObject *a, int type)
{
    return (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a),
                                              type);
}

/* (RESULT, FLAGS) when WANT_FLAGS, else RESULT; steals RESULT. */
PyObject *
px_with_flags(PyArrayObject *result, unsigned flags, int want_flags)
{
    if (result == NULL || !want_flags)
        return (PyObject *)result;
    return Py_BuildValue("(Nk)", (PyObject *)result, (unsigned long)flags);
}

uint64_t
px_load_bits(const void *p, size_t i, unsigned bits)
{
    return bits == 8    ? ((const uint8_t *)p)[i]
           : bits == 16 ? ((const uint16_t *)p)[i]
                        : ((const uint32_t *)p)[i];
}

void
px_store_bits(void *p, size_t i, unsigned bits, uint64_t v)
{
    if (bits == 8)
        ((uint8_t *)p)[i] = (uint8_t)v;
    else if (bits == 16)
        ((uint16_t *)p)[i] = (uint16_t)v;
    else
        ((uint32_t *)p)[i] = (uint32_t)v;
}
