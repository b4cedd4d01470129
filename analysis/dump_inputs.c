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

/* One input's inputs_gen entry, checked: the plain fill (stream, mean, std,
   format), the shape, the recorded hash, and the u or mirror transform. */
typedef struct {
    uint64_t seed, stream, shape[4], nel, want_hash, u_stream;
    fixgen_dyadic mean, std, u_std, scale;
    fixgen_format fmt;
    tensor_dtype dt;
    const json_t *uo, *sc, *rows, *mo; /* NULL when absent */
    fixgen_mirror mir;
    fixgen_mirror_role role;
} gen_spec;

/* The NEL = B H N d elements of the tensor KEY described by S into FULL:
   stream S->stream, or with the u transform (S->uo not NULL: u of stream
   S->u_stream and std S->u_std, then S->scale or S->rows;
   analysis/fixgen.h). */
static int
fill(const char *path, const char *key, const gen_spec *s, uint16_t *full,
     tensor_error *err)
{
    const fixgen_dyadic zero = {0, 0};
    uint64_t bh = s->shape[0] * s->shape[1], n = s->shape[2], d = s->shape[3];
    uint32_t stream = (uint32_t)s->stream;
    uint16_t *u;
    int rc = TENSOR_OK;

    if (s->uo == NULL) {
        fixgen_fill(s->seed, stream, s->mean, s->std, s->fmt, 0,
                    (size_t)(bh * n * d), full);
        return TENSOR_OK;
    }
    u = malloc((size_t)(bh * d) * sizeof *u);
    if (u == NULL)
        return tio_fail(err, TENSOR_E_NOMEM, path, key,
                        "out of memory for u (%" PRIu64 " elements)", bh * d);
    fixgen_fill(s->seed, (uint32_t)s->u_stream, zero, s->u_std, s->fmt, 0,
                (size_t)(bh * d), u);
    if (s->sc != NULL) {
        if (!fixgen_fill_u_scaled(s->seed, stream, s->std, s->fmt, u,
                                  s->scale, bh, n, d, full))
            rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                          "manifest: inputs_gen.tensors.%s.u.scale: scale u "
                          "needs more than 24 significant bits",
                          key);
    } else {
        fixgen_fill(s->seed, stream, s->mean, s->std, s->fmt, 0,
                    (size_t)(bh * n * d), full);
        for (uint64_t p = 0; p < bh; p++)
            for (size_t i = 0; i < json_array_size(s->rows); i++) {
                uint64_t r = (uint64_t)json_integer_value(
                    json_array_get(s->rows, i));
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

/* The stream under "stream" of the object O (input KEY's field
   PREFIX "stream") into *OUT: an integer from 0 to 2^32 - 1. */
static int
get_stream(const char *path, const char *key, const char *prefix,
           const json_t *o, uint64_t *out, tensor_error *err)
{
    if (get_uint(json_object_get(o, "stream"), UINT32_MAX, out))
        return TENSOR_OK;
    return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                    "manifest: inputs_gen.tensors.%s.%sstream: expected an "
                    "integer from 0 to 2^32 - 1",
                    key, prefix);
}

/* The number under NAME of the object O (input KEY's field PREFIX NAME)
   into *OUT: at most 24 significant bits. */
static int
get_dyadic24(const char *path, const char *key, const char *prefix,
             const json_t *o, const char *name, fixgen_dyadic *out,
             tensor_error *err)
{
    if (get_dyadic(json_object_get(o, name), out))
        return TENSOR_OK;
    return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                    "manifest: inputs_gen.tensors.%s.%s%s: expected a number "
                    "with at most 24 significant bits",
                    key, prefix, name);
}

/* The entry T of input KEY into S: stream, dtype, shape, mean, std and
   the recorded hash. */
static int
parse_plain(const char *path, const char *key, const json_t *t, gen_spec *s,
            tensor_error *err)
{
    const json_t *sh;
    const char *dts;
    int rc = get_stream(path, key, "", t, &s->stream, err);

    if (rc != TENSOR_OK)
        return rc;
    dts = json_string_value(json_object_get(t, "dtype"));
    if (dts != NULL && strcmp(dts, "bfloat16") == 0) {
        s->fmt = FIXGEN_BF16;
        s->dt = TENSOR_BF16;
    } else if (dts != NULL && strcmp(dts, "float16") == 0) {
        s->fmt = FIXGEN_F16;
        s->dt = TENSOR_F16;
    } else
        return BADT("dtype", "expected \"bfloat16\" or \"float16\"", key);
    sh = json_object_get(t, "shape");
    if (!json_is_array(sh) || json_array_size(sh) != 4)
        return BADT("shape", "expected [B, H, N, d]", key);
    s->nel = 1;
    for (size_t i = 0; i < 4; i++) {
        if (!get_uint(json_array_get(sh, i), GEN_MAX_ELEMS, &s->shape[i])
            || s->shape[i] == 0)
            return BADT("shape",
                        "expected [B, H, N, d] of positive "
                        "integers",
                        key);
        s->nel *= s->shape[i];
        if (s->nel > GEN_MAX_ELEMS)
            return BADT("shape", "more than 2^31 elements", key);
    }
    rc = get_dyadic24(path, key, "", t, "mean", &s->mean, err);
    if (rc == TENSOR_OK)
        rc = get_dyadic24(path, key, "", t, "std", &s->std, err);
    if (rc != TENSOR_OK)
        return rc;
    if (!fixgen_hash_parse(json_string_value(json_object_get(t, "hash")),
                           &s->want_hash))
        return BADT("hash", "expected \"0x\" and 16 hex digits", key);
    return TENSOR_OK;
}

/* The u transform S->uo of input KEY (when present) into S: stream, std,
   and either scale or rows. */
static int
parse_u(const char *path, const char *key, gen_spec *s, tensor_error *err)
{
    const json_t *uo = s->uo;
    int rc;

    if (uo == NULL)
        return TENSOR_OK;
    if (!json_is_object(uo))
        return BADT("u", "expected an object", key);
    rc = get_stream(path, key, "u.", uo, &s->u_stream, err);
    if (rc == TENSOR_OK)
        rc = get_dyadic24(path, key, "u.", uo, "std", &s->u_std, err);
    if (rc != TENSOR_OK)
        return rc;
    s->sc = json_object_get(uo, "scale");
    s->rows = json_object_get(uo, "rows");
    if ((s->sc == NULL) == (s->rows == NULL))
        return BADT("u", "expected either scale or rows", key);
    if (s->sc != NULL
        && (!get_dyadic(s->sc, &s->scale) || s->scale.m >= (1 << 12)
            || s->scale.m <= -(1 << 12)))
        return BADT("u.scale",
                    "expected a number with at most 12 significant "
                    "bits",
                    key);
    if (s->sc != NULL && s->mean.m != 0)
        return BADT("mean", "expected 0 beside u.scale", key);
    if (s->rows != NULL
        && (!json_is_array(s->rows) || json_array_size(s->rows) == 0))
        return BADT("u.rows", "expected a list of row indices", key);
    for (size_t i = 0; s->rows != NULL && i < json_array_size(s->rows); i++) {
        uint64_t r;
        if (!get_uint(json_array_get(s->rows, i), s->shape[2] - 1, &r))
            return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                            "manifest: inputs_gen.tensors.%s.u.rows[%zu]: "
                            "expected a row index below N = %" PRIu64,
                            key, i, s->shape[2]);
    }
    return TENSOR_OK;
}

/* The inputs_gen object G's entry for input KEY into S, checked against
   the requested dtype WANT and the layout of manifest MAN. */
static int
parse_spec(const char *path, const json_t *man, const json_t *g,
           const char *key, tensor_dtype want, gen_spec *s, tensor_error *err)
{
    const json_t *ts, *t;
    const char *gname;
    int rc;

    gname = json_string_value(json_object_get(g, "generator"));
    if (gname == NULL || strcmp(gname, FIXGEN_NAME) != 0)
        return BAD("generator", "expected \"%s\"", FIXGEN_NAME);
    if (!get_uint(json_object_get(g, "seed"), UINT64_C(1) << 53, &s->seed))
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
    rc = parse_plain(path, key, t, s, err);
    s->uo = json_object_get(t, "u");
    if (rc == TENSOR_OK)
        rc = parse_u(path, key, s, err);
    if (rc != TENSOR_OK)
        return rc;
    s->mo = json_object_get(t, "mirror");
    if (s->mo != NULL) {
        rc = get_mirror(path, key, s->mo, s->shape, &s->mir, &s->role, err);
        if (rc != TENSOR_OK)
            return rc;
        if (s->uo != NULL)
            return BADT("mirror", "expected either u or mirror", key);
    }
    if (want != TENSOR_ANY && !tensor_dtype_readable_as(s->dt, want))
        return tio_fail(err, TENSOR_E_DTYPE, path, NULL,
                        "%s.dtype: the manifest's inputs_gen gives %s, "
                        "expected %s",
                        key, tensor_dtype_name(s->dt),
                        tensor_dtype_name(want));
    if (json_is_string(json_object_get(man, "layout"))
        && strcmp(json_string_value(json_object_get(man, "layout")), "bhnd")
               != 0)
        return tio_fail(err, TENSOR_E_UNSUPPORTED, path, "manifest: layout",
                        "inputs_gen needs the layout bhnd");
    return TENSOR_OK;
}

/* The whole launch's elements of input KEY from S into FULL: the fill,
   the mirror transform, then the check against the recorded hash. */
static int
fill_checked(const char *path, const char *key, const gen_spec *s,
             uint16_t *full, tensor_error *err)
{
    uint64_t hash;
    int rc = fill(path, key, s, full, err);

    if (rc == TENSOR_OK && s->mo != NULL
        && !fixgen_mirror_apply(full, s->fmt, s->role, &s->mir,
                                s->shape[0] * s->shape[1], s->shape[2],
                                s->shape[3]))
        rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                      "manifest: inputs_gen.tensors.%s.mirror: an element "
                      "to scale is not finite",
                      key);
    if (rc != TENSOR_OK)
        return rc;
    hash = fixgen_hash_final(fixgen_hash_add(0, 0, full, (size_t)s->nel),
                             s->nel);
    if (hash != s->want_hash)
        rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                      "manifest: inputs_gen.tensors.%s.hash: 0x%016" PRIx64
                      " recorded, the generator gives 0x%016" PRIx64,
                      key, s->want_hash, hash);
    return rc;
}

/* The heads the file holds (NP of them, the launch's (BS[i], HS[i]); all
   of FULL when NP = 0) into OUT. */
static int
keep_heads(const gen_spec *s, const uint16_t *full, const uint64_t *bs,
           const uint64_t *hs, size_t np, tensor *out, tensor_error *err)
{
    uint64_t hw = s->shape[2] * s->shape[3];
    uint64_t oshape[4] = {np != 0 ? 1 : s->shape[0],
                          np != 0 ? np : s->shape[1], s->shape[2],
                          s->shape[3]};
    int rc = tensor_alloc(out, s->dt, 4, oshape, err);

    if (rc == TENSOR_OK && np == 0)
        for (uint64_t j = 0; j < s->nel; j++)
            tensor_set_bits(out, j, full[j]);
    for (size_t i = 0; rc == TENSOR_OK && i < np; i++) {
        const uint16_t *src = full + (bs[i] * s->shape[1] + hs[i]) * hw;
        for (uint64_t j = 0; j < hw; j++)
            tensor_set_bits(out, i * hw + j, src[j]);
    }
    return rc;
}

/* Regenerates KEY from the inputs_gen object G of manifest MAN. */
static int
generate(const char *path, const json_t *man, const json_t *g, const char *key,
         tensor_dtype want, tensor *out, tensor_error *err)
{
    gen_spec s = {0};
    uint64_t *bs, *hs;
    size_t np;
    uint16_t *full;
    int rc;

    s.role = FIXGEN_MIRROR_Q;
    rc = parse_spec(path, man, g, key, want, &s, err);
    if (rc != TENSOR_OK)
        return rc;
    bs = malloc(2 * MAX_HEADS * sizeof *bs);
    full = malloc((size_t)s.nel * sizeof *full);
    if (bs == NULL || full == NULL) {
        free(bs);
        free(full);
        return tio_fail(err, TENSOR_E_NOMEM, path, key,
                        "out of memory for %" PRIu64 " generated elements",
                        s.nel);
    }
    hs = bs + MAX_HEADS;
    rc = kept_heads(path, man, s.shape[0], s.shape[1], bs, hs, &np, err);
    if (rc == TENSOR_OK)
        rc = fill_checked(path, key, &s, full, err);
    if (rc == TENSOR_OK)
        rc = keep_heads(&s, full, bs, hs, np, out, err);
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
