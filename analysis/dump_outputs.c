/* dump_outputs.c -- a GPU dump's outputs, whole or some rows of them with
   the hash of the whole (the manifest's outputs_kept) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dump_local.h"
#include "analysis/dump_outputs.h"
#include "analysis/fixgen.h"
#include "analysis/tensor_internal.h"

void
dump_kept_free(dump_kept *k)
{
    if (k == NULL)
        return;
    free(k->ranges);
    *k = (dump_kept)DUMP_KEPT_INIT;
}

int
dump_manifest_json(const char *path, const tensor_listing *l, json_t **man,
                   tensor_error *err)
{
    *man = NULL;
    for (size_t i = 0; i < l->n_meta; i++)
        if (strcmp(l->meta[i].key, "manifest") == 0) {
            json_error_t je;
            *man = json_loads(l->meta[i].value, 0, &je);
            if (*man == NULL)
                return tio_fail(err, TENSOR_E_FORMAT, path, "manifest",
                                "not JSON (%s)", je.text);
        }
    return TENSOR_OK;
}

bool
dump_json_uint(const json_t *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    json_int_t i;
    if (!json_is_integer(v))
        return false;
    i = json_integer_value(v);
    if (i < 0 || (uint64_t)i < lo || (uint64_t)i > hi)
        return false;
    *out = (uint64_t)i;
    return true;
}

#define FAIL(field, ...)                                                      \
    do {                                                                      \
        snprintf(fld, sizeof fld, "manifest: outputs_kept.%s%s", key, field); \
        rc = tio_fail(err, TENSOR_E_FORMAT, path, fld, __VA_ARGS__);          \
        goto done;                                                            \
    } while (0)

/* Parses outputs_kept.KEY (E) of PATH into *K and checks it against the
   stored tensor's dtype and shape (T, NULL: its listing entry LT). */
static int
parse_entry(const char *path, const char *key, const json_t *e,
            const tensor_entry *lt, dump_kept *k, tensor_error *err)
{
    char fld[256];
    int rc = TENSOR_OK;
    const json_t *sh, *rows;
    uint64_t prev_end = 0, stored_n;

    *k = (dump_kept)DUMP_KEPT_INIT;
    if (!json_is_object(e))
        FAIL("", "expected an object with shape, rows and hash");
    {
        const char *f;
        json_t *v;
        json_object_foreach((json_t *)e, f, v)
        {
            if (strcmp(f, "shape") != 0 && strcmp(f, "rows") != 0
                && strcmp(f, "hash") != 0)
                FAIL("", "unknown field \"%s\" (expected shape, rows, hash)",
                     f);
        }
    }
    sh = json_object_get(e, "shape");
    if (!json_is_array(sh)
        || (json_array_size(sh) != 3 && json_array_size(sh) != 4))
        FAIL(".shape", "expected [B, H, N, d] or [B, H, N]");
    k->ndim = (unsigned)json_array_size(sh);
    for (unsigned j = 0; j < k->ndim; j++)
        if (!dump_json_uint(json_array_get(sh, j), 1, (uint64_t)1 << 40,
                            &k->shape[j]))
            FAIL(".shape", "dimension %u: expected an integer >= 1", j);
    rows = json_object_get(e, "rows");
    if (!json_is_array(rows) || json_array_size(rows) == 0
        || json_array_size(rows) > DUMP_KEPT_MAX_RANGES)
        FAIL(".rows", "expected a list of 1 to %d ranges [a, b]",
             DUMP_KEPT_MAX_RANGES);
    k->n_ranges = json_array_size(rows);
    k->ranges = malloc(k->n_ranges * sizeof k->ranges[0]);
    if (k->ranges == NULL) {
        rc = tio_fail(err, TENSOR_E_NOMEM, path, NULL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < k->n_ranges; i++) {
        const json_t *r = json_array_get(rows, i);
        uint64_t a, b;
        if (!json_is_array(r) || json_array_size(r) != 2
            || !dump_json_uint(json_array_get(r, 0), 0, k->shape[2], &a)
            || !dump_json_uint(json_array_get(r, 1), 0, k->shape[2], &b)
            || a >= b)
            FAIL(".rows",
                 "entry %zu: expected [a, b] with 0 <= a < b <= N "
                 "(%" PRIu64 ")",
                 i, k->shape[2]);
        if (i > 0 && a <= prev_end)
            FAIL(".rows",
                 "entry %zu: [%" PRIu64 ", %" PRIu64 "] starts at "
                 "or before the end of the one before (%" PRIu64
                 "; expected increasing ranges with gaps)",
                 i, a, b, prev_end);
        k->ranges[i][0] = a;
        k->ranges[i][1] = b;
        k->n_rows += b - a;
        prev_end = b;
    }
    if (!fixgen_hash_parse(json_string_value(json_object_get(e, "hash")),
                           &k->hash))
        FAIL(".hash", "expected \"0x\" and 16 hex digits");
    if (lt == NULL)
        FAIL("", "the file stores no tensor %s", key);
    stored_n = lt->ndim == k->ndim ? lt->shape[2] : 0;
    for (unsigned j = 0; j < k->ndim && stored_n != 0; j++)
        if (j != 2 && lt->shape[j] != k->shape[j])
            stored_n = 0;
    if (stored_n != k->n_rows) {
        char ss[TIO_SHAPE_SIZE];
        tio_shape_str(ss, sizeof ss, lt->ndim, lt->shape, false);
        FAIL(".rows",
             "%" PRIu64 " rows kept, but the file stores %s %s "
             "(expected shape with %" PRIu64 " at axis 2)",
             k->n_rows, key, ss, k->n_rows);
    }
    if (lt->dtype != TENSOR_BF16 && lt->dtype != TENSOR_F16
        && lt->dtype != TENSOR_F32)
        FAIL("", "stored as %s (expected BF16, F16 or F32)",
             tensor_dtype_name(lt->dtype));
    k->kept = true;
done:
    if (rc != TENSOR_OK)
        dump_kept_free(k);
    return rc;
}

#undef FAIL

/* Finds KEY in L (NULL: not there). */
static const tensor_entry *
find_entry(const tensor_listing *l, const char *key)
{
    for (size_t i = 0; i < l->n_tensors; i++)
        if (strcmp(l->tensors[i].name, key) == 0)
            return &l->tensors[i];
    return NULL;
}

/* The outputs_kept object of PATH (NULL when none) with its listing
   (a .npy file has no manifest). */
static int
kept_object(const char *path, json_t **man, const json_t **ok,
            tensor_listing *l, tensor_error *err)
{
    int rc = tensor_file_list(path, l, err);

    *ok = NULL;
    *man = NULL;
    if (rc == TENSOR_OK)
        rc = dump_manifest_json(path, l, man, err);
    if (rc != TENSOR_OK)
        return rc;
    *ok = *man != NULL ? json_object_get(*man, "outputs_kept") : NULL;
    if (*ok != NULL && !json_is_object(*ok))
        return tio_fail(err, TENSOR_E_FORMAT, path, "manifest: outputs_kept",
                        "expected an object of tensor names");
    return TENSOR_OK;
}

int
dump_output_kept(const char *path, const char *key, dump_kept *kept,
                 tensor_error *err)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    json_t *man = NULL;
    const json_t *ok = NULL, *e;
    int rc;

    *kept = (dump_kept)DUMP_KEPT_INIT;
    rc = kept_object(path, &man, &ok, &l, err);
    e = ok != NULL && key != NULL ? json_object_get(ok, key) : NULL;
    if (rc == TENSOR_OK && e != NULL)
        rc = parse_entry(path, key, e, find_entry(&l, key), kept, err);
    tensor_listing_free(&l);
    json_decref(man);
    return rc;
}

int
dump_output_read(const char *path, const char *key, tensor_dtype want,
                 tensor *out, dump_kept *kept, tensor_error *err)
{
    int rc = dump_output_kept(path, key, kept, err);

    if (rc == TENSOR_OK)
        rc = safetensors_read(path, key, want, out, err);
    if (rc != TENSOR_OK)
        dump_kept_free(kept);
    return rc;
}

int
dump_outputs_check(const char *path, tensor_error *err)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    json_t *man = NULL;
    const json_t *ok = NULL;
    int rc = kept_object(path, &man, &ok, &l, err);

    if (rc == TENSOR_OK && ok != NULL) {
        const char *key;
        json_t *e;
        json_object_foreach((json_t *)ok, key, e)
        {
            dump_kept k;
            rc = parse_entry(path, key, e, find_entry(&l, key), &k, err);
            dump_kept_free(&k);
            if (rc != TENSOR_OK)
                break;
        }
    }
    tensor_listing_free(&l);
    json_decref(man);
    return rc;
}

uint64_t
dump_kept_row(const dump_kept *k, uint64_t j)
{
    if (!k->kept)
        return j;
    for (size_t i = 0; i < k->n_ranges; i++) {
        uint64_t len = k->ranges[i][1] - k->ranges[i][0];
        if (j < len)
            return k->ranges[i][0] + j;
        j -= len;
    }
    return UINT64_MAX;
}

bool
dump_kept_has_row(const dump_kept *k, uint64_t r)
{
    if (!k->kept)
        return true;
    for (size_t i = 0; i < k->n_ranges; i++)
        if (r >= k->ranges[i][0] && r < k->ranges[i][1])
            return true;
    return false;
}

uint64_t
dump_kept_index(const dump_kept *k, const tensor *stored, uint64_t i)
{
    uint64_t inner = 1, rows, j, bh, rest;

    if (!k->kept)
        return i;
    for (unsigned d = 3; d < k->ndim; d++)
        inner *= k->shape[d];
    rows = stored->shape[2];
    rest = i % inner;
    j = i / inner % rows;
    bh = i / inner / rows;
    return (bh * k->shape[2] + dump_kept_row(k, j)) * inner + rest;
}

uint64_t
dump_hash16(const uint16_t *b, size_t n)
{
    return fixgen_hash_final(fixgen_hash_add(0, 0, b, n), n);
}

/* The hash of N elements of ES bytes (2 or 4) whose bits GET(SRC, i)
   gives: each as its 16-bit words, the low one first. */
static uint64_t
hash_words(const void *src, uint64_t n, size_t es,
           uint64_t (*get)(const void *, uint64_t))
{
    uint64_t acc = 0, words = n * (es / 2);
    uint16_t w[512];
    size_t m = 0;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t b = get(src, i);
        w[m++] = (uint16_t)(b & 0xFFFFu);
        if (es == 4)
            w[m++] = (uint16_t)(b >> 16);
        if (m == 512 || i + 1 == n) {
            acc = fixgen_hash_add(acc, (i + 1) * (es / 2) - m, w, m);
            m = 0;
        }
    }
    return fixgen_hash_final(acc, words);
}

static uint64_t
get32(const void *src, uint64_t i)
{
    return ((const uint32_t *)src)[i];
}

static uint64_t
get_tensor(const void *src, uint64_t i)
{
    return tensor_get_bits(src, i);
}

uint64_t
dump_hash32(const uint32_t *b, size_t n)
{
    return hash_words(b, n, 4, get32);
}

uint64_t
dump_hash_tensor(const tensor *t)
{
    size_t es = tensor_dtype_size(t->dtype);

    return es == 2 || es == 4 ? hash_words(t, t->n_elems, es, get_tensor) : 0;
}
