/* user_tensor.c -- a user's tensor file read as the engine takes it */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/user_tensor.h"
#include "analysis/dump_inputs.h"
#include "softfloat/softfloat.h"

const char *
ut_layout_name(ut_layout l)
{
    switch (l) {
    case UT_LAYOUT_BHND:
        return "bhnd";
    case UT_LAYOUT_BNHD:
        return "bnhd";
    default:
        return "unset";
    }
}

bool
ut_layout_parse(const char *s, ut_layout *out)
{
    if (s == NULL)
        return false;
    if (strcasecmp(s, "bhnd") == 0)
        *out = UT_LAYOUT_BHND;
    else if (strcasecmp(s, "bnhd") == 0)
        *out = UT_LAYOUT_BNHD;
    else
        return false;
    return true;
}

static int
fail(tensor_error *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

char *
ut_index_str(char *buf, size_t n, unsigned ndim, const uint64_t *shape,
             uint64_t i)
{
    uint64_t idx[TENSOR_MAX_DIMS];
    size_t used = 0;

    for (unsigned j = ndim; j-- > 0;) {
        idx[j] = shape[j] == 0 ? 0 : i % shape[j];
        i = shape[j] == 0 ? 0 : i / shape[j];
    }
    if (n == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, n, "[");
    for (unsigned j = 0; j < ndim && used < n; j++)
        used += (size_t)snprintf(buf + used, n - used, "%s%" PRIu64,
                                 j == 0 ? "" : ", ", idx[j]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
    return buf;
}

/* Lower-case type name for an option value: "bf16", "f16", ... */
static const char *
opt_name(tensor_dtype dt)
{
    switch (dt) {
    case TENSOR_BF16:
        return "bf16";
    case TENSOR_F16:
        return "f16";
    case TENSOR_F32:
        return "f32";
    case TENSOR_F8_E4M3:
        return "e4m3";
    case TENSOR_F8_E5M2:
        return "e5m2";
    default:
        return "?";
    }
}

/* Integers that may carry the bit patterns of a float type of their width. */
static bool
is_bits_of(tensor_dtype file, tensor_dtype want)
{
    size_t w = tensor_dtype_size(want);

    if (tensor_dtype_format(want) == NULL)
        return false;
    if (w == 2)
        return file == TENSOR_U16 || file == TENSOR_I16;
    if (w == 1)
        return file == TENSOR_U8 || file == TENSOR_I8;
    return false;
}

int
ut_as_dtype(tensor *t, const char *what, tensor_dtype want, bool asked,
            const char *dtype_opt, ut_info *info, tensor_error *err)
{
    const sf_format *from, *to;
    tensor out = TENSOR_INIT;
    char hint[96] = "";
    int rc;

    if (want == TENSOR_ANY || t->dtype == want)
        return TENSOR_OK;
    if (dtype_opt != NULL)
        snprintf(hint, sizeof hint, "; pass %s %s to read it as %s", dtype_opt,
                 opt_name(want), tensor_dtype_name(want));
    from = tensor_dtype_format(t->dtype);
    to = tensor_dtype_format(want);
    if (is_bits_of(t->dtype, want)) {
        if (!asked)
            return fail(err, TENSOR_E_DTYPE,
                        "%s: dtype %s holds bit patterns of no stated type "
                        "(expected %s%s)",
                        what, tensor_dtype_name(t->dtype),
                        tensor_dtype_name(want), hint);
        if (info != NULL) {
            info->relabelled = true;
            snprintf(info->how, sizeof info->how, "%s bit patterns read as %s",
                     tensor_dtype_name(t->dtype), tensor_dtype_name(want));
        }
        t->dtype = want;
        return TENSOR_OK;
    }
    if (from == NULL || to == NULL)
        return fail(err, TENSOR_E_DTYPE, "%s: dtype %s (expected %s)", what,
                    tensor_dtype_name(t->dtype), tensor_dtype_name(want));
    if (!asked)
        return fail(err, TENSOR_E_DTYPE,
                    "%s: dtype %s (expected %s%s, if its values are %s "
                    "values)",
                    what, tensor_dtype_name(t->dtype), tensor_dtype_name(want),
                    hint, tensor_dtype_name(want));
    rc = tensor_alloc(&out, want, t->ndim, t->shape, err);
    if (rc != TENSOR_OK)
        return rc;
    for (uint64_t i = 0; i < t->n_elems; i++) {
        sf_env env = SF_ENV_IEEE;
        uint64_t b = tensor_get_bits(t, i);
        uint64_t r;
        bool exact;
        if (t->dtype == TENSOR_F32 && want == TENSOR_BF16) {
            /* BF16 is F32's upper half: exact, NaN payloads included,
               when the lower half is zero */
            r = b >> 16;
            exact = (b & 0xFFFF) == 0;
        } else {
            /* a NaN becomes WANT's NaN; any other value must come back */
            r = sf_convert(to, from, b, SF_RNE, &env);
            exact = sf_is_nan(from, b)
                    || sf_convert(from, to, r, SF_RNE, &env) == b;
        }
        if (!exact) {
            char ix[TENSOR_MAX_DIMS * 24 + 4];
            tensor_free(&out);
            return fail(err, TENSOR_E_DTYPE,
                        "%s: element %" PRIu64 " %s is %s 0x%0*" PRIX64
                        ", not a %s value (every element must be one to be "
                        "read as %s)",
                        what, i,
                        ut_index_str(ix, sizeof ix, t->ndim, t->shape, i),
                        tensor_dtype_name(t->dtype),
                        (int)(2 * tensor_dtype_size(t->dtype)), b,
                        tensor_dtype_name(want), tensor_dtype_name(want));
        }
        tensor_set_bits(&out, i, r);
    }
    if (info != NULL) {
        info->converted = true;
        snprintf(info->how, sizeof info->how,
                 "%s values read as %s (every one exact)",
                 tensor_dtype_name(t->dtype), tensor_dtype_name(want));
    }
    tensor_free(t);
    *t = out;
    return TENSOR_OK;
}

int
ut_round_to(tensor *t, const char *what, tensor_dtype want, ut_info *info,
            uint64_t *changed, tensor_error *err)
{
    const sf_format *from = tensor_dtype_format(t->dtype);
    const sf_format *to = tensor_dtype_format(want);
    tensor out = TENSOR_INIT;
    uint64_t n_changed = 0;
    int rc;

    if (t->dtype == want) {
        if (changed != NULL)
            *changed = 0;
        return TENSOR_OK;
    }
    if ((t->dtype != TENSOR_F32 && t->dtype != TENSOR_F64) || to == NULL
        || (want != TENSOR_BF16 && want != TENSOR_F16))
        return fail(err, TENSOR_E_DTYPE,
                    "%s: dtype %s cannot be rounded to %s (expected F32 or "
                    "F64 values, rounded to BF16 or F16)",
                    what, tensor_dtype_name(t->dtype),
                    tensor_dtype_name(want));
    rc = tensor_alloc(&out, want, t->ndim, t->shape, err);
    if (rc != TENSOR_OK)
        return rc;
    for (uint64_t i = 0; i < t->n_elems; i++) {
        sf_env env = SF_ENV_IEEE;
        uint64_t b = tensor_get_bits(t, i);
        uint64_t r = sf_convert(to, from, b, SF_RNE, &env);
        n_changed += sf_convert(from, to, r, SF_RNE, &env) != b;
        tensor_set_bits(&out, i, r);
    }
    if (info != NULL) {
        info->rounded = true;
        info->changed = n_changed;
        snprintf(info->how, sizeof info->how,
                 "%s values rounded to %s (to nearest, ties to even): %" PRIu64
                 " of %" PRIu64 " changed",
                 tensor_dtype_name(t->dtype), tensor_dtype_name(want),
                 n_changed, t->n_elems);
    }
    if (changed != NULL)
        *changed = n_changed;
    tensor_free(t);
    *t = out;
    return TENSOR_OK;
}

int
ut_read(const char *path, const char *key, tensor_dtype want, bool asked,
        const char *dtype_opt, tensor *out, ut_info *info, tensor_error *err)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    tensor_dtype file_dt = TENSOR_ANY, read_as = TENSOR_ANY;
    bool found = false, safetensors = false;
    char what[TENSOR_ERROR_SIZE / 2];
    int rc;

    if (info != NULL)
        memset(info, 0, sizeof *info);
    if (key != NULL)
        snprintf(what, sizeof what, "%s: %s", path, key);
    else
        snprintf(what, sizeof what, "%s", path);
    /* The stored type from the header, so raw bytes can be named. */
    if (tensor_file_list(path, &l, NULL) == TENSOR_OK) {
        /* (a Fortran-order .npy is left to the reader, which refuses
           it) */
        for (size_t i = 0; !l.npy_fortran && i < l.n_tensors; i++)
            if ((key == NULL && l.n_tensors == 1)
                || (key != NULL && strcmp(l.tensors[i].name, key) == 0)) {
                file_dt = l.tensors[i].dtype;
                found = true;
            }
        safetensors = l.kind == TENSOR_KIND_SAFETENSORS;
        tensor_listing_free(&l);
    }
    if (!found && safetensors && key != NULL && dump_inputs_generated(path)) {
        /* an input the dump's manifest describes (inputs_gen) */
        rc = dump_input_read(path, key, TENSOR_ANY, out, err);
        if (rc != TENSOR_OK)
            return rc;
        if (info != NULL) {
            info->file_dtype = out->dtype;
            info->file_ndim = out->ndim;
            memcpy(info->file_shape, out->shape, sizeof info->file_shape);
        }
        rc = ut_as_dtype(out, what, want, asked, dtype_opt, info, err);
        if (rc != TENSOR_OK)
            tensor_free(out);
        return rc;
    }
    if (found && file_dt == TENSOR_ANY) {
        /* NumPy raw bytes ('V2'): only as a type the user names */
        if (!asked || tensor_dtype_format(want) == NULL)
            return fail(
                err, TENSOR_E_DTYPE,
                "%s: raw bytes of no stated type (expected %s%s%s%s)", what,
                want == TENSOR_ANY ? "a typed array" : tensor_dtype_name(want),
                dtype_opt != NULL ? "; pass " : "",
                dtype_opt != NULL ? dtype_opt : "",
                dtype_opt != NULL ? " with the type" : "");
        read_as = want;
    }
    if (found && !asked && file_dt != TENSOR_ANY) {
        /* a refusal needs the header only: no data is read */
        tensor probe = TENSOR_INIT;
        probe.dtype = file_dt;
        rc = ut_as_dtype(&probe, what, want, false, dtype_opt, NULL, err);
        if (rc != TENSOR_OK)
            return rc;
    }
    rc = tensor_file_read(path, key, read_as, out, err);
    if (rc != TENSOR_OK)
        return rc;
    if (info != NULL) {
        info->file_dtype = file_dt;
        info->file_ndim = out->ndim;
        memcpy(info->file_shape, out->shape, sizeof info->file_shape);
        if (read_as != TENSOR_ANY) {
            info->relabelled = true;
            snprintf(info->how, sizeof info->how, "raw bytes read as %s",
                     tensor_dtype_name(want));
        }
    }
    rc = ut_as_dtype(out, what, want, asked, dtype_opt, info, err);
    if (rc != TENSOR_OK)
        tensor_free(out);
    return rc;
}

bool
ut_layout_matters(const tensor *t)
{
    if (t->ndim < 3 || t->ndim > 4)
        return false;
    return t->shape[t->ndim - 3] > 1 && t->shape[t->ndim - 2] > 1;
}

/* Whether KV heads HKV serve query heads HQ (Hq a multiple of Hkv). */
static bool
heads_fit(uint64_t hq, uint64_t hkv)
{
    return hkv != 0 && hq % hkv == 0;
}

ut_layout
ut_layout_tell(const tensor *q, const tensor *k)
{
    unsigned r = q->ndim;
    bool bhnd, bnhd;

    if (r != k->ndim || r < 3 || r > 4)
        return UT_LAYOUT_UNSET;
    /* BHND: H at r - 3, N at r - 2; BNHD the other way round */
    bhnd = heads_fit(q->shape[r - 3], k->shape[r - 3]);
    bnhd = heads_fit(q->shape[r - 2], k->shape[r - 2]);
    if (bhnd && !bnhd)
        return UT_LAYOUT_BHND;
    if (bnhd && !bhnd)
        return UT_LAYOUT_BNHD;
    return UT_LAYOUT_UNSET;
}

ut_layout
ut_layout_launch(const tensor *q, uint64_t heads, uint64_t nq, bool *neither)
{
    unsigned r = q->ndim;
    bool bhnd, bnhd;

    if (r < 3)
        return UT_LAYOUT_UNSET;
    /* BHND: H at r - 3, N at r - 2; BNHD the other way round */
    bhnd = q->shape[r - 2] == nq && q->shape[r - 3] <= heads;
    bnhd = q->shape[r - 3] == nq && q->shape[r - 2] <= heads;
    if (neither != NULL)
        *neither = !bhnd && !bnhd;
    return bhnd == bnhd ? UT_LAYOUT_UNSET
           : bhnd       ? UT_LAYOUT_BHND
                        : UT_LAYOUT_BNHD;
}

int
ut_to_bhnd(tensor *t, ut_layout layout, ut_info *info, tensor_error *err)
{
    tensor out = TENSOR_INIT;
    uint64_t shape[TENSOR_MAX_DIMS];
    uint64_t b, n, h, d;
    size_t es;
    unsigned r = t->ndim;
    int rc;

    if (layout != UT_LAYOUT_BNHD || r < 3 || r > 4)
        return TENSOR_OK;
    b = r == 4 ? t->shape[0] : 1;
    n = t->shape[r - 3];
    h = t->shape[r - 2];
    d = t->shape[r - 1];
    memcpy(shape, t->shape, sizeof shape);
    shape[r - 3] = h;
    shape[r - 2] = n;
    rc = tensor_alloc(&out, t->dtype, r, shape, err);
    if (rc != TENSOR_OK)
        return rc;
    es = tensor_dtype_size(t->dtype);
    for (uint64_t ib = 0; ib < b; ib++)
        for (uint64_t in = 0; in < n; in++)
            for (uint64_t ih = 0; ih < h; ih++)
                memcpy(out.data + (size_t)(((ib * h + ih) * n + in) * d) * es,
                       t->data + (size_t)(((ib * n + in) * h + ih) * d) * es,
                       (size_t)d * es);
    tensor_free(t);
    *t = out;
    if (info != NULL)
        info->transposed = true;
    return TENSOR_OK;
}
