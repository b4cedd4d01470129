/* dump_inputs.c -- a GPU dump's inputs, stored or regenerated from the
   manifest's inputs_gen */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dump_inputs.h"
#include "analysis/dump_local.h"
#include "analysis/fixgen.h"
#include "analysis/tensor_internal.h"

#define MAX_HEADS 4096
#define GEN_MAX_ELEMS ((uint64_t)1 << 31)

static const char *const inputs[] = {"q", "k", "v", "do"};

/* Whether KEY names one of the inputs. */
static bool
is_input(const char *key)
{
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        if (key != NULL && strcmp(key, inputs[i]) == 0)
            return true;
    return false;
}

/* The manifest of PATH, parsed (NULL when the file has none, or on a
   listing error, which is then in ERR with *RC set). */
static json_t *
load_manifest(const char *path, int *rc, bool *stored, const char *key,
              tensor_error *err)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    json_t *man = NULL;

    *stored = false;
    *rc = safetensors_list(path, &l, err);
    if (*rc != TENSOR_OK)
        return NULL;
    for (size_t i = 0; key != NULL && i < l.n_tensors; i++)
        if (strcmp(l.tensors[i].name, key) == 0)
            *stored = true;
    *rc = dump_manifest_json(path, &l, &man, err);
    tensor_listing_free(&l);
    return man;
}

int
dump_inputs_described(const char *path, bool described[4], tensor_error *err)
{
    int rc;
    bool stored;
    json_t *man = load_manifest(path, &rc, &stored, NULL, err);
    json_t *g = man != NULL ? json_object_get(man, "inputs_gen") : NULL;
    json_t *ts = g != NULL ? json_object_get(g, "tensors") : NULL;

    for (size_t i = 0; i < 4; i++)
        described[i] = false;
    if (rc == TENSOR_OK && g != NULL && !json_is_object(g))
        rc = tio_fail(err, TENSOR_E_FORMAT, path, "manifest: inputs_gen",
                      "expected an object");
    else if (rc == TENSOR_OK && g != NULL && !json_is_object(ts))
        rc = tio_fail(err, TENSOR_E_FORMAT, path,
                      "manifest: inputs_gen.tensors",
                      "expected an object with q, k, v (and do)");
    for (size_t i = 0; rc == TENSOR_OK && ts != NULL && i < 4; i++)
        described[i] = json_object_get(ts, inputs[i]) != NULL;
    json_decref(man);
    return rc;
}

int
dump_read_all(const char *path, tensor_dtype want, tensor_file *f,
              tensor_error *err)
{
    bool described[4];
    int rc = safetensors_read_all(path, want, f, err);

    if (rc == TENSOR_OK)
        rc = dump_inputs_described(path, described, err);
    for (size_t j = 0; j < 4 && rc == TENSOR_OK; j++) {
        tensor t = TENSOR_INIT;
        tensor_named *grown;
        bool stored = false;
        for (size_t i = 0; i < f->n_tensors; i++)
            stored = stored || strcmp(f->tensors[i].name, inputs[j]) == 0;
        if (!described[j] || stored)
            continue;
        rc = dump_input_read(path, inputs[j], want, &t, err);
        if (rc != TENSOR_OK)
            break;
        grown = realloc(f->tensors, (f->n_tensors + 1) * sizeof *grown);
        if (grown == NULL) {
            tensor_free(&t);
            rc = tio_fail(err, TENSOR_E_NOMEM, path, NULL, "out of memory");
            break;
        }
        f->tensors = grown;
        f->tensors[f->n_tensors].name = inputs[j];
        f->tensors[f->n_tensors++].tensor = t;
    }
    if (rc != TENSOR_OK)
        tensor_file_free(f);
    return rc;
}

bool
dump_inputs_generated(const char *path)
{
    bool d[4];
    return dump_inputs_described(path, d, NULL) == TENSOR_OK
           && (d[0] || d[1] || d[2] || d[3]);
}

/* An integer JSON value in [0, MAX] into *OUT. */
static bool
get_uint(const json_t *v, uint64_t max, uint64_t *out)
{
    return dump_json_uint(v, 0, max, out);
}

/* A JSON number as a dyadic value (24 significant bits at most). */
static bool
get_dyadic(const json_t *v, fixgen_dyadic *out)
{
    double x;
    uint64_t bits;
    if (!json_is_number(v))
        return false;
    x = json_number_value(v);
    memcpy(&bits, &x, sizeof bits);
    return fixgen_dyadic_from_f64_bits(bits, out);
}

/* The launch's (batch, head) of each head the file holds, from
   heads_from / heads_kept and batch_from; *NP = 0 when the file holds
   the whole launch. */
static int
kept_heads(const char *path, const json_t *man, uint64_t nb, uint64_t nh,
           uint64_t *bs, uint64_t *hs, size_t *np, tensor_error *err)
{
    const json_t *hf = json_object_get(man, "heads_from");
    const json_t *bf = json_object_get(man, "batch_from");
    const char *hkey = "heads_from";
    uint64_t b_all = 0;

    if (hf == NULL) {
        hf = json_object_get(man, "heads_kept");
        hkey = "heads_kept";
    }
    *np = 0;
    if (bf != NULL && !json_is_array(bf) && !get_uint(bf, nb - 1, &b_all))
        return tio_fail(err, TENSOR_E_FORMAT, path, "manifest: batch_from",
                        "expected an integer below the launch's batch "
                        "%" PRIu64 " or a list of them",
                        nb);
    if (hf == NULL) {
        if (bf == NULL)
            return TENSOR_OK;
        if (json_is_array(bf))
            return tio_fail(err, TENSOR_E_FORMAT, path, "manifest: batch_from",
                            "a list needs heads_from beside it");
        for (uint64_t h = 0; h < nh && h < MAX_HEADS; h++) {
            bs[h] = b_all;
            hs[h] = h;
        }
        *np = (size_t)(nh < MAX_HEADS ? nh : MAX_HEADS);
        return TENSOR_OK;
    }
    if (!json_is_array(hf) || json_array_size(hf) == 0
        || json_array_size(hf) > MAX_HEADS)
        return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                        "manifest: %s: expected a list of 1 to %d head "
                        "indices",
                        hkey, MAX_HEADS);
    if (json_is_array(bf) && json_array_size(bf) != json_array_size(hf))
        return tio_fail(err, TENSOR_E_FORMAT, path, "manifest: batch_from",
                        "%zu entries (expected one per head of %s, %zu)",
                        json_array_size(bf), hkey, json_array_size(hf));
    for (size_t i = 0; i < json_array_size(hf); i++) {
        if (!get_uint(json_array_get(hf, i), nh - 1, &hs[i]))
            return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                            "manifest: %s[%zu]: expected a head index "
                            "below the launch's %" PRIu64 " heads",
                            hkey, i, nh);
        bs[i] = b_all;
        if (json_is_array(bf)
            && !get_uint(json_array_get(bf, i), nb - 1, &bs[i]))
            return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                            "manifest: batch_from[%zu]: expected a batch "
                            "index below the launch's %" PRIu64,
                            i, nb);
    }
    *np = json_array_size(hf);
    return TENSOR_OK;
}

/* Fails with "PATH: manifest: inputs_gen.FIELD: WHAT". */
#define BAD(field, ...)                                                       \
    tio_fail(err, TENSOR_E_FORMAT, path, "manifest: inputs_gen." field,       \
             __VA_ARGS__)

/* The NEL = B H N d elements of the tensor KEY of shape SHAPE into FULL:
   stream STREAM, or with the u transform (UO not NULL: u of stream
   U_STREAM and std U_STD, then SCALE or ROWS; analysis/fixgen.h). */
static int
fill(const char *path, const char *key, uint64_t seed, uint32_t stream,
     fixgen_dyadic mean, fixgen_dyadic std, fixgen_format fmt,
     const uint64_t shape[4], const json_t *uo, uint32_t u_stream,
     fixgen_dyadic u_std, const fixgen_dyadic *scale, const json_t *rows,
     uint16_t *full, tensor_error *err)
{
    const fixgen_dyadic zero = {0, 0};
    uint64_t bh = shape[0] * shape[1], n = shape[2], d = shape[3];
    uint16_t *u;
    int rc = TENSOR_OK;

    if (uo == NULL) {
        fixgen_fill(seed, stream, mean, std, fmt, 0, (size_t)(bh * n * d),
                    full);
        return TENSOR_OK;
    }
    u = malloc((size_t)(bh * d) * sizeof *u);
    if (u == NULL)
        return tio_fail(err, TENSOR_E_NOMEM, path, key,
                        "out of memory for u (%" PRIu64 " elements)", bh * d);
    fixgen_fill(seed, u_stream, zero, u_std, fmt, 0, (size_t)(bh * d), u);
    if (scale != NULL) {
        if (!fixgen_fill_u_scaled(seed, stream, std, fmt, u, *scale, bh, n, d,
                                  full))
            rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                          "manifest: inputs_gen.tensors.%s.u.scale: scale u "
                          "needs more than 24 significant bits",
                          key);
    } else {
        fixgen_fill(seed, stream, mean, std, fmt, 0, (size_t)(bh * n * d),
                    full);
        for (uint64_t p = 0; p < bh; p++)
            for (size_t i = 0; i < json_array_size(rows); i++) {
                uint64_t r = (uint64_t)json_integer_value(
                    json_array_get(rows, i));
                memcpy(full + (p * n + r) * d, u + p * d,
                       (size_t)d * sizeof *u);
            }
    }
    free(u);
    return rc;
}

#define BADT(field, ...)                                                      \
    tio_fail(err, TENSOR_E_FORMAT, path, NULL,                                \
             "manifest: inputs_gen.tensors.%s." field ": " __VA_ARGS__)

/* The mirror transform MO of input KEY (shape SHAPE) into *M and *ROLE:
   q takes half; v block and stride; k all five fields. */
static int
get_mirror(const char *path, const char *key, const json_t *mo,
           const uint64_t shape[4], fixgen_mirror *m, fixgen_mirror_role *role,
           tensor_error *err)
{
    static const char *const fields[] = {"block", "stride", "half", "big",
                                         "small"};
    bool need[5];
    const char *k;
    const json_t *v;

    if (!json_is_object(mo))
        return BADT("mirror", "expected an object", key);
    if (strcmp(key, "q") == 0)
        *role = FIXGEN_MIRROR_Q;
    else if (strcmp(key, "k") == 0)
        *role = FIXGEN_MIRROR_K;
    else if (strcmp(key, "v") == 0)
        *role = FIXGEN_MIRROR_V;
    else
        return BADT("mirror", "only q, k and v take it", key);
    for (size_t i = 0; i < 5; i++)
        need[i] = *role == FIXGEN_MIRROR_K
                  || (*role == FIXGEN_MIRROR_Q ? i == 2 : i < 2);
    json_object_foreach((json_t *)mo, k, v)
    {
        size_t i = 0;
        while (i < 5 && strcmp(k, fields[i]) != 0)
            i++;
        if (i == 5 || !need[i])
            return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                            "manifest: inputs_gen.tensors.%s.mirror.%s: "
                            "unknown field for %s",
                            key, k, key);
    }
    for (size_t i = 0; i < 5; i++)
        if (need[i] && json_object_get(mo, fields[i]) == NULL)
            return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                            "manifest: inputs_gen.tensors.%s.mirror.%s: "
                            "missing",
                            key, fields[i]);
    m->block = m->stride = 1;
    m->half = 0;
    m->big.m = m->small.m = 1;
    m->big.e = m->small.e = 0;
    if (need[0]
        && (!get_uint(json_object_get(mo, "block"), shape[2], &m->block)
            || m->block == 0))
        return BADT("mirror.block",
                    "expected an integer from 1 to N = %" PRIu64, key,
                    shape[2]);
    if (need[1]
        && (!get_uint(json_object_get(mo, "stride"), shape[2], &m->stride)
            || m->stride == 0))
        return BADT("mirror.stride",
                    "expected an integer from 1 to N = %" PRIu64, key,
                    shape[2]);
    if (need[2] && !get_uint(json_object_get(mo, "half"), shape[3], &m->half))
        return BADT("mirror.half",
                    "expected an integer from 0 to d = %" PRIu64, key,
                    shape[3]);
    if (need[3]
        && (!get_dyadic(json_object_get(mo, "big"), &m->big)
            || m->big.m >= 1 << 12 || m->big.m <= -(1 << 12)))
        return BADT("mirror.big",
                    "expected a number with at most 12 significant bits", key);
    if (need[4]
        && (!get_dyadic(json_object_get(mo, "small"), &m->small)
            || m->small.m >= 1 << 12 || m->small.m <= -(1 << 12)))
        return BADT("mirror.small",
                    "expected a number with at most 12 significant bits", key);
    return TENSOR_OK;
}

/* Regenerates KEY from the inputs_gen object G of manifest MAN. */
static int
generate(const char *path, const json_t *man, const json_t *g, const char *key,
         tensor_dtype want, tensor *out, tensor_error *err)
{
    const json_t *ts, *t, *sh, *uo, *mo, *sc = NULL, *rows = NULL;
    fixgen_mirror mir;
    fixgen_mirror_role role = FIXGEN_MIRROR_Q;
    const char *gname, *dts;
    uint64_t seed, stream, shape[4], nel = 1, want_hash, hash, acc = 0;
    uint64_t u_stream = 0;
    fixgen_dyadic mean, std, u_std = {0, 0}, scale = {0, 0};
    fixgen_format fmt;
    tensor_dtype dt;
    uint64_t *bs, *hs;
    size_t np;
    uint16_t *full;
    int rc;

    gname = json_string_value(json_object_get(g, "generator"));
    if (gname == NULL || strcmp(gname, FIXGEN_NAME) != 0)
        return BAD("generator", "expected \"%s\"", FIXGEN_NAME);
    if (!get_uint(json_object_get(g, "seed"), UINT64_C(1) << 53, &seed))
        return BAD("seed", "expected an integer from 0 to 2^53");
    ts = json_object_get(g, "tensors");
    if (!json_is_object(ts))
        return BAD("tensors", "expected an object with q, k, v (and do)");
    t = json_object_get(ts, key);
    if (t == NULL)
        return tio_fail(err, TENSOR_E_KEY, path, key,
                        "not stored, and not in the manifest's "
                        "inputs_gen.tensors");
    if (!json_is_object(t))
        return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                        "manifest: inputs_gen.tensors.%s: expected an "
                        "object",
                        key);
    if (!get_uint(json_object_get(t, "stream"), UINT32_MAX, &stream))
        return BADT("stream", "expected an integer from 0 to 2^32 - 1", key);
    dts = json_string_value(json_object_get(t, "dtype"));
    if (dts != NULL && strcmp(dts, "bfloat16") == 0) {
        fmt = FIXGEN_BF16;
        dt = TENSOR_BF16;
    } else if (dts != NULL && strcmp(dts, "float16") == 0) {
        fmt = FIXGEN_F16;
        dt = TENSOR_F16;
    } else
        return BADT("dtype", "expected \"bfloat16\" or \"float16\"", key);
    sh = json_object_get(t, "shape");
    if (!json_is_array(sh) || json_array_size(sh) != 4)
        return BADT("shape", "expected [B, H, N, d]", key);
    for (size_t i = 0; i < 4; i++) {
        if (!get_uint(json_array_get(sh, i), GEN_MAX_ELEMS, &shape[i])
            || shape[i] == 0)
            return BADT("shape",
                        "expected [B, H, N, d] of positive "
                        "integers",
                        key);
        nel *= shape[i];
        if (nel > GEN_MAX_ELEMS)
            return BADT("shape", "more than 2^31 elements", key);
    }
    if (!get_dyadic(json_object_get(t, "mean"), &mean))
        return BADT("mean",
                    "expected a number with at most 24 significant "
                    "bits",
                    key);
    if (!get_dyadic(json_object_get(t, "std"), &std))
        return BADT("std",
                    "expected a number with at most 24 significant "
                    "bits",
                    key);
    if (!fixgen_hash_parse(json_string_value(json_object_get(t, "hash")),
                           &want_hash))
        return BADT("hash", "expected \"0x\" and 16 hex digits", key);
    uo = json_object_get(t, "u");
    if (uo != NULL) {
        if (!json_is_object(uo))
            return BADT("u", "expected an object", key);
        if (!get_uint(json_object_get(uo, "stream"), UINT32_MAX, &u_stream))
            return BADT("u.stream", "expected an integer from 0 to 2^32 - 1",
                        key);
        if (!get_dyadic(json_object_get(uo, "std"), &u_std))
            return BADT("u.std",
                        "expected a number with at most 24 significant "
                        "bits",
                        key);
        sc = json_object_get(uo, "scale");
        rows = json_object_get(uo, "rows");
        if ((sc == NULL) == (rows == NULL))
            return BADT("u", "expected either scale or rows", key);
        if (sc != NULL
            && (!get_dyadic(sc, &scale) || scale.m >= (1 << 12)
                || scale.m <= -(1 << 12)))
            return BADT("u.scale",
                        "expected a number with at most 12 significant "
                        "bits",
                        key);
        if (sc != NULL && mean.m != 0)
            return BADT("mean", "expected 0 beside u.scale", key);
        if (rows != NULL && (!json_is_array(rows) || json_array_size(rows) == 0))
            return BADT("u.rows", "expected a list of row indices", key);
        for (size_t i = 0; rows != NULL && i < json_array_size(rows); i++) {
            uint64_t r;
            if (!get_uint(json_array_get(rows, i), shape[2] - 1, &r))
                return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                                "manifest: inputs_gen.tensors.%s.u.rows[%zu]: "
                                "expected a row index below N = %" PRIu64,
                                key, i, shape[2]);
        }
    }
    mo = json_object_get(t, "mirror");
    if (mo != NULL) {
        rc = get_mirror(path, key, mo, shape, &mir, &role, err);
        if (rc != TENSOR_OK)
            return rc;
        if (uo != NULL)
            return BADT("mirror", "expected either u or mirror", key);
    }
    if (want != TENSOR_ANY && !tensor_dtype_readable_as(dt, want))
        return tio_fail(err, TENSOR_E_DTYPE, path, NULL,
                        "%s.dtype: the manifest's inputs_gen gives %s, "
                        "expected %s",
                        key, tensor_dtype_name(dt), tensor_dtype_name(want));
    if (json_is_string(json_object_get(man, "layout"))
        && strcmp(json_string_value(json_object_get(man, "layout")), "bhnd")
               != 0)
        return tio_fail(err, TENSOR_E_UNSUPPORTED, path, "manifest: layout",
                        "inputs_gen needs the layout bhnd");

    bs = malloc(2 * MAX_HEADS * sizeof *bs);
    full = malloc((size_t)nel * sizeof *full);
    if (bs == NULL || full == NULL) {
        free(bs);
        free(full);
        return tio_fail(err, TENSOR_E_NOMEM, path, key,
                        "out of memory for %" PRIu64 " generated elements",
                        nel);
    }
    hs = bs + MAX_HEADS;
    rc = kept_heads(path, man, shape[0], shape[1], bs, hs, &np, err);
    if (rc == TENSOR_OK)
        rc = fill(path, key, seed, (uint32_t)stream, mean, std, fmt, shape, uo,
                  (uint32_t)u_stream, u_std, sc != NULL ? &scale : NULL, rows,
                  full, err);
    if (rc == TENSOR_OK && mo != NULL
        && !fixgen_mirror_apply(full, fmt, role, &mir, shape[0] * shape[1],
                                shape[2], shape[3]))
        rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                      "manifest: inputs_gen.tensors.%s.mirror: an element "
                      "to scale is not finite",
                      key);
    if (rc == TENSOR_OK) {
        acc = fixgen_hash_add(0, 0, full, (size_t)nel);
        hash = fixgen_hash_final(acc, nel);
        if (hash != want_hash)
            rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                          "manifest: inputs_gen.tensors.%s.hash: 0x%016" PRIx64
                          " recorded, the generator gives 0x%016" PRIx64,
                          key, want_hash, hash);
    }
    if (rc == TENSOR_OK) {
        uint64_t hw = shape[2] * shape[3];
        uint64_t oshape[4] = {np != 0 ? 1 : shape[0], np != 0 ? np : shape[1],
                              shape[2], shape[3]};
        rc = tensor_alloc(out, dt, 4, oshape, err);
        if (rc == TENSOR_OK && np == 0)
            for (uint64_t j = 0; j < nel; j++)
                tensor_set_bits(out, j, full[j]);
        for (size_t i = 0; rc == TENSOR_OK && i < np; i++) {
            const uint16_t *src = full + (bs[i] * shape[1] + hs[i]) * hw;
            for (uint64_t j = 0; j < hw; j++)
                tensor_set_bits(out, i * hw + j, src[j]);
        }
    }
    free(bs);
    free(full);
    return rc;
}
#undef BADT

int
dump_input_read(const char *path, const char *key, tensor_dtype want,
                tensor *out, tensor_error *err)
{
    int rc;
    bool stored;
    json_t *man, *g;

    if (!is_input(key))
        return safetensors_read(path, key, want, out, err);
    man = load_manifest(path, &rc, &stored, key, err);
    if (rc != TENSOR_OK) {
        json_decref(man);
        return rc;
    }
    g = man != NULL ? json_object_get(man, "inputs_gen") : NULL;
    if (stored || g == NULL) {
        json_decref(man);
        return safetensors_read(path, key, want, out, err);
    }
    if (!json_is_object(g))
        rc = tio_fail(err, TENSOR_E_FORMAT, path, "manifest: inputs_gen",
                      "expected an object");
    else
        rc = generate(path, man, g, key, want, out, err);
    json_decref(man);
    return rc;
}

static const char *const unmodelled[][2] = {
    {"attn_mask", "an attention mask"},
    {"mask", "an attention mask"},
    {"attn_bias", "an attention bias"},
    {"bias", "an attention bias"},
    {"alibi_slopes", "an ALiBi bias"},
    {"dropout_p", "dropout"},
    {"window_size", "a sliding window"},
    {"sliding_window", "a sliding window"},
    {"softcap", "soft-capping"},
    {"score_mod", "a score modification"},
    {"block_mask", "a block mask"},
};

const char *
dump_unmodelled_key(size_t i)
{
    return i < sizeof unmodelled / sizeof unmodelled[0] ? unmodelled[i][0]
                                                         : NULL;
}

const char *
dump_unmodelled_what(const char *key)
{
    for (size_t i = 0; key != NULL && dump_unmodelled_key(i) != NULL; i++)
        if (strcmp(unmodelled[i][0], key) == 0)
            return unmodelled[i][1];
    return NULL;
}
