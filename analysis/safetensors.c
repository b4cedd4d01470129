/* safetensors.c -- read and write .safetensors files: checked header,
   exact data coverage, metadata, atomic output */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/tensor_internal.h"

/* The reference implementation refuses headers longer than this. */
#define ST_MAX_HEADER 100000000u

#define ST_FIELD_SIZE (TIO_QUOTE_SIZE + 32)

/* One tensor of the header, checked. */
typedef struct
{
    const char *name; /* the JSON key, alive while the header is */
    tensor_dtype dtype;
    unsigned ndim;
    uint64_t shape[TENSOR_MAX_DIMS];
    uint64_t n_elems, n_bytes;
    uint64_t begin, end; /* relative to the data region */
} st_entry;

typedef struct
{
    const char *path;
    int fd;
    json_t *root;
    json_t *meta;        /* the "__metadata__" object, or NULL */
    uint64_t data_start; /* 8 + header length */
    uint64_t data_size;
    size_t n;
    st_entry *entries; /* sorted by (begin, end, name) */
} st_header;

static void
header_free(st_header *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
    json_decref(h->root);
    h->root = NULL;
    h->meta = NULL;
    free(h->entries);
    h->entries = NULL;
    h->n = 0;
}

static uint64_t
load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void
store_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

/* "tensor "NAME" WHAT" into BUF. */
static const char *
tensor_field(char *buf, size_t size, const char *name, const char *what)
{
    char q[TIO_QUOTE_SIZE];
    tio_quote(q, sizeof q, name, strlen(name));
    if (what != NULL)
        snprintf(buf, size, "tensor %s %s", q, what);
    else
        snprintf(buf, size, "tensor %s", q);
    return buf;
}

/* A JSON value described for a message: "-3", "a string", ... */
static const char *
describe(char *buf, size_t size, const json_t *v)
{
    static const char *const words[] = {
        [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
        [JSON_STRING] = "a string",  [JSON_TRUE] = "true",
        [JSON_FALSE] = "false",      [JSON_NULL] = "null",
    };

    if (json_is_integer(v))
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, size, "the real number %.17g", json_real_value(v));
    else
        snprintf(buf, size, "%s", words[json_typeof(v)]);
    return buf;
}

static bool
json_u64(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static int
parse_entry(st_header *h, const char *name, json_t *v, st_entry *e,
            tensor_error *err)
{
    const char *path = h->path;
    char field[ST_FIELD_SIZE], d[64], q[TIO_QUOTE_SIZE], sbuf[TIO_SHAPE_SIZE];
    json_t *dt, *shape, *offs, *x;
    const char *k;
    uint64_t b = 0, en = 0;
    size_t i, esize;

    memset(e, 0, sizeof *e);
    e->name = name;
    if (!json_is_object(v))
        return tio_fail(err, TENSOR_E_FORMAT, path,
                        tensor_field(field, sizeof field, name, NULL),
                        "expected an object with dtype, shape and "
                        "data_offsets, got %s",
                        describe(d, sizeof d, v));
    for (void *it = json_object_iter(v); it != NULL;
         it = json_object_iter_next(v, it)) {
        k = json_object_iter_key(it);
        if (strcmp(k, "dtype") != 0 && strcmp(k, "shape") != 0
            && strcmp(k, "data_offsets") != 0)
            return tio_fail(err, TENSOR_E_FORMAT, path,
                            tensor_field(field, sizeof field, name, NULL),
                            "unexpected field %s (expected dtype, shape and "
                            "data_offsets only)",
                            tio_quote(q, sizeof q, k, strlen(k)));
    }
    dt = json_object_get(v, "dtype");
    shape = json_object_get(v, "shape");
    offs = json_object_get(v, "data_offsets");
    if (dt == NULL || shape == NULL || offs == NULL)
        return tio_fail(err, TENSOR_E_FORMAT, path,
                        tensor_field(field, sizeof field, name, NULL),
                        "missing field %s",
                        dt == NULL      ? "\"dtype\""
                        : shape == NULL ? "\"shape\""
                                        : "\"data_offsets\"");

    /* dtype */
    tensor_field(field, sizeof field, name, "dtype");
    if (!json_is_string(dt))
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "expected a string such as \"BF16\", got %s",
                        describe(d, sizeof d, dt));
    e->dtype = tio_dtype_by_st_name(json_string_value(dt));
    if (e->dtype == TENSOR_ANY)
        return tio_fail(
            err, TENSOR_E_FORMAT, path, field,
            "unknown dtype %s (expected BF16, F16, F32, F64, I32, U16, U32, "
            "F8_E4M3, F8_E5M2, U8, I8, I16, I64, U64 or BOOL)",
            tio_quote(q, sizeof q, json_string_value(dt),
                      json_string_length(dt)));
    esize = tensor_dtype_size(e->dtype);

    /* shape */
    tensor_field(field, sizeof field, name, "shape");
    if (!json_is_array(shape))
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "expected an array of non-negative integers, got %s",
                        describe(d, sizeof d, shape));
    if (json_array_size(shape) > TENSOR_MAX_DIMS)
        return tio_fail(err, TENSOR_E_UNSUPPORTED, path, field,
                        "%zu dimensions, at most %d are supported",
                        json_array_size(shape), TENSOR_MAX_DIMS);
    for (i = 0; i < json_array_size(shape); i++) {
        x = json_array_get(shape, i);
        if (!json_u64(x, &e->shape[i])) {
            char f2[ST_FIELD_SIZE + 24];
            snprintf(f2, sizeof f2, "%s[%zu]", field, i);
            return tio_fail(err, TENSOR_E_FORMAT, path, f2,
                            "expected a non-negative integer, got %s",
                            describe(d, sizeof d, x));
        }
    }
    e->ndim = (unsigned)json_array_size(shape);
    if (!tio_shape_bytes(e->ndim, e->shape, esize, &e->n_elems, &e->n_bytes))
        return tio_fail(
            err, TENSOR_E_LIMIT, path, field,
            "%s of %s needs more than 2^40 bytes",
            tio_shape_str(sbuf, sizeof sbuf, e->ndim, e->shape, false),
            tensor_dtype_name(e->dtype));

    /* data_offsets */
    tensor_field(field, sizeof field, name, "data_offsets");
    if (!json_is_array(offs) || json_array_size(offs) != 2)
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "expected [begin, end], got %s",
                        describe(d, sizeof d, offs));
    for (i = 0; i < 2; i++) {
        x = json_array_get(offs, i);
        if (!json_u64(x, i == 0 ? &b : &en))
            return tio_fail(err, TENSOR_E_FORMAT, path, field,
                            "%s: expected a non-negative integer, got %s",
                            i == 0 ? "begin" : "end",
                            describe(d, sizeof d, x));
    }
    if (b > en)
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "begin %" PRIu64 " is after end %" PRIu64, b, en);
    if (en > h->data_size)
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "end %" PRIu64 " is past the end of the data (%" PRIu64
                        " bytes)",
                        en, h->data_size);
    if (en - b != e->n_bytes)
        return tio_fail(
            err, TENSOR_E_FORMAT, path, field,
            "[%" PRIu64 ", %" PRIu64 "] holds %" PRIu64
            " bytes, but %s %s needs %" PRIu64,
            b, en, en - b, tensor_dtype_name(e->dtype),
            tio_shape_str(sbuf, sizeof sbuf, e->ndim, e->shape, false),
            e->n_bytes);
    e->begin = b;
    e->end = en;
    return TENSOR_OK;
}

static int
cmp_entry(const void *pa, const void *pb)
{
    const st_entry *a = pa, *b = pb;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int
check_metadata(st_header *h, json_t *m, tensor_error *err)
{
    char d[64], field[ST_FIELD_SIZE], q[TIO_QUOTE_SIZE];
    const char *k;
    json_t *v;

    if (json_is_null(m))
        return TENSOR_OK;
    if (!json_is_object(m))
        return tio_fail(err, TENSOR_E_FORMAT, h->path, "__metadata__",
                        "expected an object of strings, got %s",
                        describe(d, sizeof d, m));
    for (void *it = json_object_iter(m); it != NULL;
         it = json_object_iter_next(m, it)) {
        k = json_object_iter_key(it);
        v = json_object_iter_value(it);
        if (!json_is_string(v)) {
            snprintf(field, sizeof field, "__metadata__ %s",
                     tio_quote(q, sizeof q, k, strlen(k)));
            return tio_fail(err, TENSOR_E_FORMAT, h->path, field,
                            "expected a string, got %s",
                            describe(d, sizeof d, v));
        }
    }
    h->meta = m;
    return TENSOR_OK;
}

/* The data region must be covered exactly: sorted by offset, each tensor
   begins where the previous one ended. */
static int
check_coverage(st_header *h, tensor_error *err)
{
    char field[ST_FIELD_SIZE], q[TIO_QUOTE_SIZE];
    uint64_t pos = 0;

    for (size_t i = 0; i < h->n; i++) {
        const st_entry *e = &h->entries[i];
        tensor_field(field, sizeof field, e->name, "data_offsets");
        if (e->begin < pos) {
            const st_entry *p = &h->entries[i - 1];
            return tio_fail(err, TENSOR_E_FORMAT, h->path, field,
                            "[%" PRIu64 ", %" PRIu64
                            "] overlaps tensor %s [%" PRIu64 ", %" PRIu64 "]",
                            e->begin, e->end,
                            tio_quote(q, sizeof q, p->name, strlen(p->name)),
                            p->begin, p->end);
        }
        if (e->begin > pos)
            return tio_fail(
                err, TENSOR_E_FORMAT, h->path, field,
                "begins at %" PRIu64 ", but %s at %" PRIu64 ": bytes %" PRIu64
                "..%" PRIu64 " belong to no tensor",
                e->begin, i == 0 ? "the data begins" : "the previous ends",
                pos, pos, e->begin);
        pos = e->end;
    }
    if (pos != h->data_size)
        return tio_fail(err, TENSOR_E_FORMAT, h->path, "data",
                        "bytes %" PRIu64 "..%" PRIu64 " belong to no tensor "
                        "(the tensors must cover the data exactly)",
                        pos, h->data_size);
    return TENSOR_OK;
}

/* Reads the first bytes of the open file (SIZE bytes in all) and checks
   the 8-byte header length: another kind of file, a truncated file, a
   length past the end, over ST_MAX_HEADER, or zero are refused.  Sets
   *HLEN and H's data_start and data_size. */
static int
header_length(st_header *h, uint64_t size, uint64_t *hlen, tensor_error *err)
{
    unsigned char head[TIO_SNIFF_SIZE];
    const char *path = h->path;
    const char *kind;
    size_t head_n;
    int rc;

    head_n = size < sizeof head ? (size_t)size : sizeof head;
    memset(head, 0, sizeof head);
    rc = tio_pread(h->fd, 0, head, head_n, path, "header length", err);
    if (rc != TENSOR_OK)
        return rc;
    /* another kind of file: say so rather than read its first bytes as a
       length */
    kind = tio_sniff(head, head_n, size);
    if (kind != NULL && strcmp(kind, "a .safetensors file") != 0)
        return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                        "not a .safetensors file (it looks like %s; a "
                        ".safetensors file begins with an 8-byte header "
                        "length and a JSON header)",
                        kind);
    if (size < 8)
        return tio_fail(err, TENSOR_E_FORMAT, path, "header length",
                        "truncated: the file is %" PRIu64
                        " bytes, too short for the 8-byte header length",
                        size);
    *hlen = load_le64(head);
    if (*hlen > size - 8 && (size == 8 || head[8] != '{'))
        return tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                        "not a .safetensors file (its first 8 bytes, read as "
                        "the header length, give %" PRIu64
                        " bytes, but the file has %" PRIu64
                        ", and no JSON header follows them)",
                        *hlen, size);
    if (*hlen > size - 8)
        return tio_fail(err, TENSOR_E_FORMAT, path, "header length",
                        "%" PRIu64 " bytes, past the end of the file (%" PRIu64
                        " bytes follow the length)",
                        *hlen, size - 8);
    if (*hlen > ST_MAX_HEADER)
        return tio_fail(err, TENSOR_E_LIMIT, path, "header length",
                        "%" PRIu64 " bytes, more than the %u allowed", *hlen,
                        ST_MAX_HEADER);
    if (*hlen == 0)
        return tio_fail(err, TENSOR_E_FORMAT, path, "header",
                        "empty (expected a JSON object)");
    h->data_start = 8 + *hlen;
    h->data_size = size - h->data_start;
    return TENSOR_OK;
}

/* Reads the HLEN bytes of JSON after the length into H->root, which must
   be an object (duplicate keys are refused). */
static int
header_json(st_header *h, uint64_t hlen, tensor_error *err)
{
    const char *path = h->path;
    json_error_t jerr;
    char *text;
    int rc;

    text = malloc((size_t)hlen);
    if (text == NULL)
        return tio_fail(err, TENSOR_E_NOMEM, path, "header",
                        "cannot allocate %" PRIu64 " bytes", hlen);
    rc = tio_pread(h->fd, 8, text, (size_t)hlen, path, "header", err);
    if (rc == TENSOR_OK) {
        h->root =
            json_loadb(text, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
        if (h->root == NULL) {
            /* jansson's message quotes the header near the error: made
               one line of printable ASCII */
            char msg[4 * JSON_ERROR_TEXT_LENGTH + 8];
            rc = tio_fail(err, TENSOR_E_FORMAT, path, "header",
                          "not valid JSON: %s (line %d, column %d)",
                          tio_escape(msg, sizeof msg, jerr.text), jerr.line,
                          jerr.column);
        }
    }
    free(text);
    if (rc != TENSOR_OK)
        return rc;
    if (!json_is_object(h->root)) {
        char d[64];
        return tio_fail(err, TENSOR_E_FORMAT, path, "header",
                        "expected a JSON object, got %s",
                        describe(d, sizeof d, h->root));
    }
    return TENSOR_OK;
}

/* Checks the metadata and every tensor entry of H->root, then sorts the
   entries by offset and checks that they cover the data exactly. */
static int
header_entries(st_header *h, tensor_error *err)
{
    const char *k;
    json_t *v;
    size_t n;
    int rc;

    n = json_object_size(h->root);
    v = json_object_get(h->root, "__metadata__");
    if (v != NULL) {
        rc = check_metadata(h, v, err);
        if (rc != TENSOR_OK)
            return rc;
        n--;
    }
    h->entries = calloc(n > 0 ? n : 1, sizeof *h->entries);
    if (h->entries == NULL)
        return tio_fail(err, TENSOR_E_NOMEM, h->path, "header",
                        "cannot allocate %zu entries", n);
    for (void *it = json_object_iter(h->root); it != NULL;
         it = json_object_iter_next(h->root, it)) {
        k = json_object_iter_key(it);
        v = json_object_iter_value(it);
        if (strcmp(k, "__metadata__") == 0)
            continue;
        rc = parse_entry(h, k, v, &h->entries[h->n], err);
        if (rc != TENSOR_OK)
            return rc;
        h->n++;
    }
    qsort(h->entries, h->n, sizeof *h->entries, cmp_entry);
    return check_coverage(h, err);
}

/* Opens PATH and checks its whole header; on success H holds the open file
   and the sorted entries. */
static int
header_read(const char *path, st_header *h, tensor_error *err)
{
    uint64_t size, hlen = 0;
    int rc;

    memset(h, 0, sizeof *h);
    h->fd = -1;
    h->path = path;
    rc = tio_open_read(path, &h->fd, &size, err);
    if (rc != TENSOR_OK)
        return rc;
    rc = header_length(h, size, &hlen, err);
    if (rc == TENSOR_OK)
        rc = header_json(h, hlen, err);
    if (rc == TENSOR_OK)
        rc = header_entries(h, err);
    if (rc != TENSOR_OK)
        header_free(h);
    return rc;
}

static int
check_want(const st_header *h, const st_entry *e, tensor_dtype want,
           tensor_error *err)
{
    char field[ST_FIELD_SIZE];
    if (tensor_dtype_readable_as(e->dtype, want))
        return TENSOR_OK;
    if (tensor_dtype_size(want) == 0)
        return tio_fail(err, TENSOR_E_ARG, h->path, NULL,
                        "invalid dtype %d asked for", (int)want);
    return tio_fail(err, TENSOR_E_DTYPE, h->path,
                    tensor_field(field, sizeof field, e->name, "dtype"),
                    "the file holds %s, expected %s",
                    tensor_dtype_name(e->dtype), tensor_dtype_name(want));
}

/* Allocates *T for E and reads its bytes. */
static int
load_entry(const st_header *h, const st_entry *e, tensor_dtype want, tensor *t,
           tensor_error *err)
{
    char field[ST_FIELD_SIZE];
    int rc = tensor_alloc(t, want != TENSOR_ANY ? want : e->dtype, e->ndim,
                          e->shape, NULL);
    if (rc != TENSOR_OK)
        return tio_fail(err, rc, h->path,
                        tensor_field(field, sizeof field, e->name, NULL),
                        "cannot allocate %" PRIu64 " bytes", e->n_bytes);
    if (t->n_bytes > 0) {
        rc = tio_pread(
            h->fd, h->data_start + e->begin, t->data, t->n_bytes, h->path,
            tensor_field(field, sizeof field, e->name, "data"), err);
        if (rc != TENSOR_OK)
            tensor_free(t);
    }
    return rc;
}

/* The number of H's metadata entries; adds the bytes their keys and
   values take as strings (each with its '\0') to *STRINGS. */
static size_t
meta_size(const st_header *h, size_t *strings)
{
    size_t n = 0;

    for (void *it = h->meta != NULL ? json_object_iter(h->meta) : NULL;
         it != NULL; it = json_object_iter_next(h->meta, it)) {
        *strings += strlen(json_object_iter_key(it)) + 1
                    + json_string_length(json_object_iter_value(it)) + 1;
        n++;
    }
    return n;
}

/* Copies the first N of H's metadata entries into META, their strings
   into STRINGS from offset O; returns the offset after the last. */
static size_t
meta_copy(const st_header *h, tensor_meta *meta, size_t n, char *strings,
          size_t o)
{
    void *it = h->meta != NULL ? json_object_iter(h->meta) : NULL;

    for (size_t j = 0; j < n; j++) {
        const char *k = json_object_iter_key(it);
        json_t *v = json_object_iter_value(it);
        size_t len = strlen(k) + 1;
        memcpy(strings + o, k, len);
        meta[j].key = strings + o;
        o += len;
        len = json_string_length(v);
        memcpy(strings + o, json_string_value(v), len);
        strings[o + len] = '\0';
        meta[j].value = strings + o;
        o += len + 1;
        it = json_object_iter_next(h->meta, it);
    }
    return o;
}

int
safetensors_read_all(const char *path, tensor_dtype want, tensor_file *out,
                     tensor_error *err)
{
    static const tensor_file empty = TENSOR_FILE_INIT;
    st_header h;
    tensor_file f = TENSOR_FILE_INIT;
    size_t strings = 0, o = 0;
    int rc;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    *out = empty;
    rc = header_read(path, &h, err);
    if (rc != TENSOR_OK)
        return rc;
    for (size_t i = 0; i < h.n; i++) {
        rc = check_want(&h, &h.entries[i], want, err);
        if (rc != TENSOR_OK)
            goto done;
        strings += strlen(h.entries[i].name) + 1;
    }
    f.n_meta = meta_size(&h, &strings);
    f.strings = malloc(strings > 0 ? strings : 1);
    f.tensors = calloc(h.n > 0 ? h.n : 1, sizeof *f.tensors);
    f.meta = calloc(f.n_meta > 0 ? f.n_meta : 1, sizeof *f.meta);
    if (f.strings == NULL || f.tensors == NULL || f.meta == NULL) {
        rc = tio_fail(err, TENSOR_E_NOMEM, path, NULL,
                      "cannot allocate the tensor list");
        goto done;
    }
    for (size_t i = 0; i < h.n; i++) {
        size_t len = strlen(h.entries[i].name) + 1;
        memcpy(f.strings + o, h.entries[i].name, len);
        f.tensors[i].name = f.strings + o;
        o += len;
        rc = load_entry(&h, &h.entries[i], want, &f.tensors[i].tensor, err);
        if (rc != TENSOR_OK)
            goto done;
        f.n_tensors = i + 1;
    }
    meta_copy(&h, f.meta, f.n_meta, f.strings, o);
    *out = f;
    rc = tio_ok(err);
done:
    if (rc != TENSOR_OK)
        tensor_file_free(&f);
    header_free(&h);
    return rc;
}

/* The names of H's tensors, in the order of their data, as
   tensor_name_list writes them. */
static const char *
header_names(char *buf, size_t size, const st_header *h)
{
    const char **names = malloc((h->n > 0 ? h->n : 1) * sizeof *names);

    if (names == NULL) {
        snprintf(buf, size, "%zu tensors", h->n);
        return buf;
    }
    for (size_t i = 0; i < h->n; i++)
        names[i] = h->entries[i].name;
    tensor_name_list(buf, size, names, h->n);
    free(names);
    return buf;
}

int
safetensors_read(const char *path, const char *key, tensor_dtype want,
                 tensor *out, tensor_error *err)
{
    static const tensor empty = TENSOR_INIT;
    char q[TIO_QUOTE_SIZE], list[TENSOR_NAME_LIST_SIZE];
    const st_entry *e = NULL;
    st_header h;
    int rc;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    *out = empty;
    rc = header_read(path, &h, err);
    if (rc != TENSOR_OK)
        return rc;
    if (key == NULL) {
        if (h.n == 1)
            e = &h.entries[0];
        else if (h.n == 0)
            rc = tio_fail(err, TENSOR_E_KEY, path, NULL,
                          "the file holds no tensors");
        else
            rc = tio_fail(err, TENSOR_E_KEY, path, NULL,
                          "the file holds %zu tensors (%s); name one", h.n,
                          header_names(list, sizeof list, &h));
    } else {
        for (size_t i = 0; i < h.n && e == NULL; i++)
            if (strcmp(h.entries[i].name, key) == 0)
                e = &h.entries[i];
        if (e == NULL && h.n == 0)
            rc = tio_fail(err, TENSOR_E_KEY, path, NULL,
                          "no tensor %s in the file; it holds no tensors",
                          tio_quote(q, sizeof q, key, strlen(key)));
        else if (e == NULL) {
            const char *like = NULL;
            char q2[TIO_QUOTE_SIZE], hint[TIO_QUOTE_SIZE + 32] = "";
            for (size_t i = 0; i < h.n && like == NULL; i++)
                if (strcasecmp(h.entries[i].name, key) == 0)
                    like = h.entries[i].name;
            if (like != NULL)
                snprintf(hint, sizeof hint, " (names are case-sensitive: %s)",
                         tio_quote(q2, sizeof q2, like, strlen(like)));
            rc = tio_fail(err, TENSOR_E_KEY, path, NULL,
                          "no tensor %s in the file; it holds %s%s",
                          tio_quote(q, sizeof q, key, strlen(key)),
                          header_names(list, sizeof list, &h), hint);
        }
    }
    if (e != NULL)
        rc = check_want(&h, e, want, err);
    if (rc == TENSOR_OK)
        rc = load_entry(&h, e, want, out, err);
    if (rc == TENSOR_OK)
        tio_ok(err);
    header_free(&h);
    return rc;
}

int
safetensors_list(const char *path, tensor_listing *out, tensor_error *err)
{
    static const tensor_listing empty = TENSOR_LISTING_INIT;
    tensor_listing l = TENSOR_LISTING_INIT;
    size_t strings = 0, o = 0;
    st_header h;
    int rc;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    *out = empty;
    rc = header_read(path, &h, err);
    if (rc != TENSOR_OK)
        return rc;
    for (size_t i = 0; i < h.n; i++)
        strings += strlen(h.entries[i].name) + 1;
    l.n_meta = meta_size(&h, &strings);
    l.strings = malloc(strings > 0 ? strings : 1);
    l.tensors = calloc(h.n > 0 ? h.n : 1, sizeof *l.tensors);
    l.meta = calloc(l.n_meta > 0 ? l.n_meta : 1, sizeof *l.meta);
    if (l.strings == NULL || l.tensors == NULL || l.meta == NULL) {
        tensor_listing_free(&l);
        header_free(&h);
        return tio_fail(err, TENSOR_E_NOMEM, path, NULL,
                        "cannot allocate the tensor list");
    }
    l.kind = TENSOR_KIND_SAFETENSORS;
    l.data_offset = h.data_start;
    l.file_size = h.data_start + h.data_size;
    for (size_t i = 0; i < h.n; i++) {
        const st_entry *e = &h.entries[i];
        tensor_entry *t = &l.tensors[i];
        size_t len = strlen(e->name) + 1;
        memcpy(l.strings + o, e->name, len);
        t->name = l.strings + o;
        o += len;
        t->dtype = e->dtype;
        t->ndim = e->ndim;
        memcpy(t->shape, e->shape, sizeof t->shape);
        t->n_elems = e->n_elems;
        t->n_bytes = e->n_bytes;
        t->offset = h.data_start + e->begin;
    }
    l.n_tensors = h.n;
    meta_copy(&h, l.meta, l.n_meta, l.strings, o);
    header_free(&h);
    *out = l;
    return tio_ok(err);
}

void
tensor_listing_free(tensor_listing *l)
{
    static const tensor_listing empty = TENSOR_LISTING_INIT;
    if (l == NULL)
        return;
    free(l->tensors);
    free(l->meta);
    free(l->strings);
    *l = empty;
}

void
tensor_file_free(tensor_file *f)
{
    static const tensor_file empty = TENSOR_FILE_INIT;
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->n_tensors; i++)
        tensor_free(&f->tensors[i].tensor);
    free(f->tensors);
    free(f->meta);
    free(f->strings);
    *f = empty;
}

/*----------------------------------------------------------------------------
 * Writing.
 *--------------------------------------------------------------------------*/

/* Checks one tensor of a list to write. */
static int
check_out_tensor(const char *path, const tensor_named *tn, size_t i,
                 tensor_error *err)
{
    char field[ST_FIELD_SIZE], sbuf[TIO_SHAPE_SIZE];
    const tensor *t = &tn->tensor;
    uint64_t n_elems, n_bytes;
    size_t esize;

    if (tn->name == NULL || tn->name[0] == '\0')
        return tio_fail(err, TENSOR_E_ARG, path, NULL,
                        "tensor %zu has no name", i);
    if (strcmp(tn->name, "__metadata__") == 0)
        return tio_fail(err, TENSOR_E_ARG, path, NULL,
                        "tensor %zu is named \"__metadata__\", which is "
                        "reserved",
                        i);
    tensor_field(field, sizeof field, tn->name, NULL);
    esize = tensor_dtype_size(t->dtype);
    if (esize == 0)
        return tio_fail(err, TENSOR_E_ARG, path, field, "invalid dtype %d",
                        (int)t->dtype);
    if (t->ndim > TENSOR_MAX_DIMS)
        return tio_fail(err, TENSOR_E_ARG, path, field,
                        "%u dimensions, at most %d are supported", t->ndim,
                        TENSOR_MAX_DIMS);
    if (!tio_shape_bytes(t->ndim, t->shape, esize, &n_elems, &n_bytes)
        || n_elems != t->n_elems || n_bytes != t->n_bytes
        || (n_bytes > 0 && t->data == NULL))
        return tio_fail(
            err, TENSOR_E_ARG, path, field,
            "inconsistent tensor: shape %s of %s, n_elems %" PRIu64
            ", n_bytes %zu, data %s",
            tio_shape_str(sbuf, sizeof sbuf, t->ndim, t->shape, false),
            tensor_dtype_name(t->dtype), t->n_elems, t->n_bytes,
            t->data != NULL ? "set" : "NULL");
    return TENSOR_OK;
}

/* The header JSON of LIST and META in *TEXT (malloc'ed). */
static int
build_header(const char *path, const tensor_named *list, size_t n,
             const tensor_meta *meta, size_t n_meta, char **text,
             tensor_error *err)
{
    char field[ST_FIELD_SIZE], q[TIO_QUOTE_SIZE];
    json_t *root = json_object(), *m = NULL;
    uint64_t off = 0;
    int rc;

    if (root == NULL)
        goto nomem;
    if (n_meta > 0) {
        m = json_object();
        if (m == NULL || json_object_set_new(root, "__metadata__", m) != 0)
            goto nomem;
        for (size_t i = 0; i < n_meta; i++) {
            json_t *s;
            if (meta[i].key == NULL || meta[i].value == NULL) {
                rc = tio_fail(err, TENSOR_E_ARG, path, "__metadata__",
                              "entry %zu has a NULL key or value", i);
                goto fail;
            }
            snprintf(field, sizeof field, "__metadata__ %s",
                     tio_quote(q, sizeof q, meta[i].key, strlen(meta[i].key)));
            if (json_object_get(m, meta[i].key) != NULL) {
                rc = tio_fail(err, TENSOR_E_ARG, path, field, "duplicate key");
                goto fail;
            }
            s = json_string(meta[i].value);
            if (s == NULL) {
                rc = tio_fail(err, TENSOR_E_ARG, path, field,
                              "the value is not valid UTF-8");
                goto fail;
            }
            if (json_object_set_new(m, meta[i].key, s) != 0) {
                rc = tio_fail(err, TENSOR_E_ARG, path, field,
                              "the key is not valid UTF-8");
                goto fail;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const tensor *t = &list[i].tensor;
        json_t *e = json_object(), *shape = json_array(), *offs = json_array();
        tensor_field(field, sizeof field, list[i].name, NULL);
        if (e == NULL || shape == NULL || offs == NULL) {
            json_decref(e);
            json_decref(shape);
            json_decref(offs);
            goto nomem;
        }
        for (unsigned d = 0; d < t->ndim; d++)
            json_array_append_new(shape,
                                  json_integer((json_int_t)t->shape[d]));
        json_array_append_new(offs, json_integer((json_int_t)off));
        json_array_append_new(offs,
                              json_integer((json_int_t)(off + t->n_bytes)));
        off += t->n_bytes;
        if (json_object_set_new(e, "dtype",
                                json_string(tensor_dtype_name(t->dtype)))
                != 0
            || json_object_set_new(e, "shape", shape) != 0
            || json_object_set_new(e, "data_offsets", offs) != 0) {
            json_decref(e);
            goto nomem;
        }
        if (json_object_get(root, list[i].name) != NULL) {
            json_decref(e);
            rc = tio_fail(err, TENSOR_E_ARG, path, field, "duplicate name");
            goto fail;
        }
        if (json_object_set_new(root, list[i].name, e) != 0) {
            rc = tio_fail(err, TENSOR_E_ARG, path, field,
                          "the name is not valid UTF-8");
            goto fail;
        }
    }
    *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (*text == NULL)
        goto nomem;
    json_decref(root);
    return TENSOR_OK;
nomem:
    rc = tio_fail(err, TENSOR_E_NOMEM, path, "header", "out of memory");
fail:
    json_decref(root);
    return rc;
}

int
safetensors_write(const char *path, const tensor_named *list, size_t n,
                  const tensor_meta *meta, size_t n_meta, bool force,
                  tensor_error *err)
{
    static const char spaces[] = "        ";
    unsigned char len8[8];
    uint64_t total = 0;
    size_t hlen, pad;
    char *text;
    tio_out o;
    int rc;

    if (path == NULL || (list == NULL && n > 0)
        || (meta == NULL && n_meta > 0))
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    for (size_t i = 0; i < n; i++) {
        rc = check_out_tensor(path, &list[i], i, err);
        if (rc != TENSOR_OK)
            return rc;
        if (list[i].tensor.n_bytes > (uint64_t)INT64_MAX - total)
            return tio_fail(err, TENSOR_E_LIMIT, path, NULL,
                            "the tensors hold more than 2^63 bytes");
        total += list[i].tensor.n_bytes;
    }
    rc = build_header(path, list, n, meta, n_meta, &text, err);
    if (rc != TENSOR_OK)
        return rc;
    hlen = strlen(text);
    pad = (8 - hlen % 8) % 8;
    store_le64(len8, (uint64_t)(hlen + pad));

    rc = tio_out_open(&o, path, force, err);
    if (rc == TENSOR_OK)
        rc = tio_out_write(&o, len8, 8, err);
    if (rc == TENSOR_OK)
        rc = tio_out_write(&o, text, hlen, err);
    if (rc == TENSOR_OK)
        rc = tio_out_write(&o, spaces, pad, err);
    for (size_t i = 0; i < n && rc == TENSOR_OK; i++)
        rc = tio_out_write(&o, list[i].tensor.data, list[i].tensor.n_bytes,
                           err);
    free(text);
    if (rc == TENSOR_OK)
        rc = tio_out_commit(&o, err);
    else
        tio_out_abort(&o);
    return rc == TENSOR_OK ? tio_ok(err) : rc;
}
