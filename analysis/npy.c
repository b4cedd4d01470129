/* npy.c -- read .npy versions 1.0, 2.0 and 3.0 (C order, little- or
   big-endian) and write version 1.0 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/tensor_internal.h"

/* Headers longer than this are refused before they are read (NumPy itself
   refuses more than 10000 bytes unless told otherwise). */
#define NPY_MAX_HEADER (1u << 20)

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The array types: kind letter and size, as in '<f4'. */
static const struct
{
    char kind;
    unsigned size;
    tensor_dtype dtype;
} npy_types[] = {
    {'f', 2, TENSOR_F16}, {'f', 4, TENSOR_F32}, {'f', 8, TENSOR_F64},
    {'i', 1, TENSOR_I8},  {'i', 2, TENSOR_I16}, {'i', 4, TENSOR_I32},
    {'i', 8, TENSOR_I64}, {'u', 1, TENSOR_U8},  {'u', 2, TENSOR_U16},
    {'u', 4, TENSOR_U32}, {'u', 8, TENSOR_U64}, {'b', 1, TENSOR_BOOL},
};

#define NPY_DTYPES_TEXT                                                       \
    "'<u2', '<f2', '<f4', '<f8', '<i4', '<u4', '|u1', '|i1', '<i2', '<i8', "  \
    "'<u8', '|b1', their '>' forms, or '|V2' / '|V1' with a dtype asked for"

/*----------------------------------------------------------------------------
 * The header: a Python dict literal with the keys 'descr' (a string),
 * 'fortran_order' (True or False) and 'shape' (a tuple of integers).
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *path;
    const char *s; /* the header text, NUL-terminated */
    size_t pos;
    tensor_error *err;
    /* results */
    char descr[32];
    bool has_descr, has_fortran, has_shape;
    bool fortran;
    unsigned ndim;
    uint64_t shape[TENSOR_MAX_DIMS];
} py_header;

static void
skip_ws(py_header *p)
{
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n'
           || p->s[p->pos] == '\r')
        p->pos++;
}

/* A short quote of the text at the current position, for messages. */
static const char *
here(const py_header *p, char *buf, size_t size)
{
    const char *t = p->s + p->pos;
    size_t n = strcspn(t, "\n");
    if (*t == '\0')
        return "the end of the header";
    return tio_quote(buf, size, t, n < 24 ? n : 24);
}

static int
syntax(py_header *p, const char *field, const char *expected)
{
    char q[TIO_QUOTE_SIZE];
    return tio_fail(p->err, TENSOR_E_FORMAT, p->path, field,
                    "expected %s at byte %zu, found %s (the header must be "
                    "a Python dict literal)",
                    expected, p->pos, here(p, q, sizeof q));
}

/* A quoted string without escapes into BUF (at most SIZE - 1 bytes). */
static int
parse_string(py_header *p, const char *field, char *buf, size_t size,
             const char *expected)
{
    char quote = p->s[p->pos];
    size_t n = 0;

    if (quote != '\'' && quote != '"')
        return syntax(p, field, expected);
    p->pos++;
    while (p->s[p->pos] != quote) {
        char c = p->s[p->pos];
        if (c == '\0' || c == '\n')
            return syntax(p, field, "the end of the string");
        if (c == '\\')
            return syntax(p, field, "a string without escapes");
        if (n + 1 >= size)
            return tio_fail(p->err, TENSOR_E_FORMAT, p->path, field,
                            "the string at byte %zu is too long",
                            p->pos - n - 1);
        buf[n++] = c;
        p->pos++;
    }
    p->pos++;
    buf[n] = '\0';
    return TENSOR_OK;
}

/* A non-negative integer, with Python 2's optional L suffix. */
static int
parse_dim(py_header *p, uint64_t *out)
{
    const char *field = "header 'shape'";
    uint64_t v = 0;
    size_t start = p->pos;

    if (p->s[p->pos] == '-')
        return tio_fail(p->err, TENSOR_E_FORMAT, p->path, field,
                        "expected a non-negative integer at byte %zu, found "
                        "a negative number",
                        p->pos);
    while (p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        unsigned d = (unsigned)(p->s[p->pos] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return tio_fail(p->err, TENSOR_E_LIMIT, p->path, field,
                            "the dimension at byte %zu does not fit in 64 "
                            "bits",
                            start);
        v = v * 10 + d;
        p->pos++;
    }
    if (p->pos == start)
        return syntax(p, field, "a non-negative integer");
    if (p->s[p->pos] == 'L' || p->s[p->pos] == 'l')
        p->pos++;
    *out = v;
    return TENSOR_OK;
}

/* A tuple: (), (3,), (2, 3) or (2, 3,).  (3) is an integer in Python, not
   a tuple, and is refused. */
static int
parse_shape(py_header *p)
{
    const char *field = "header 'shape'";
    bool comma = false;
    int rc;

    if (p->s[p->pos] != '(')
        return syntax(p, field, "a tuple such as (2, 3)");
    p->pos++;
    p->ndim = 0;
    for (;;) {
        uint64_t v = 0;
        skip_ws(p);
        if (p->s[p->pos] == ')') {
            if (p->ndim == 1 && !comma)
                return syntax(p, field, "',' (a one-element tuple is (n,))");
            p->pos++;
            return TENSOR_OK;
        }
        if (p->ndim > 0 && !comma)
            return syntax(p, field, "',' or ')'");
        if (p->ndim == TENSOR_MAX_DIMS)
            return tio_fail(p->err, TENSOR_E_UNSUPPORTED, p->path, field,
                            "more than %d dimensions are not supported",
                            TENSOR_MAX_DIMS);
        rc = parse_dim(p, &v);
        if (rc != TENSOR_OK)
            return rc;
        p->shape[p->ndim++] = v;
        skip_ws(p);
        comma = p->s[p->pos] == ',';
        if (comma)
            p->pos++;
    }
}

static int
parse_bool(py_header *p, bool *out)
{
    const char *field = "header 'fortran_order'";
    const char *t = p->s + p->pos;
    if (strncmp(t, "True", 4) == 0)
        *out = true;
    else if (strncmp(t, "False", 5) == 0)
        *out = false;
    else
        return syntax(p, field, "True or False");
    p->pos += *out ? 4 : 5;
    return TENSOR_OK;
}

static int
parse_header(py_header *p)
{
    char key[32], q[TIO_QUOTE_SIZE];
    int rc;

    skip_ws(p);
    if (p->s[p->pos] != '{')
        return syntax(p, "header", "'{'");
    p->pos++;
    for (;;) {
        bool *seen;
        skip_ws(p);
        if (p->s[p->pos] == '}')
            break;
        rc = parse_string(p, "header", key, sizeof key, "a quoted key");
        if (rc != TENSOR_OK)
            return rc;
        if (strcmp(key, "descr") == 0)
            seen = &p->has_descr;
        else if (strcmp(key, "fortran_order") == 0)
            seen = &p->has_fortran;
        else if (strcmp(key, "shape") == 0)
            seen = &p->has_shape;
        else
            return tio_fail(p->err, TENSOR_E_FORMAT, p->path, "header",
                            "unexpected key %s (expected 'descr', "
                            "'fortran_order' and 'shape' only)",
                            tio_quote(q, sizeof q, key, strlen(key)));
        if (*seen)
            return tio_fail(p->err, TENSOR_E_FORMAT, p->path, "header",
                            "duplicate key '%s'", key);
        *seen = true;
        skip_ws(p);
        if (p->s[p->pos] != ':')
            return syntax(p, "header", "':'");
        p->pos++;
        skip_ws(p);
        if (seen == &p->has_descr) {
            if (p->s[p->pos] == '[')
                return tio_fail(p->err, TENSOR_E_UNSUPPORTED, p->path,
                                "header 'descr'",
                                "structured (record) arrays are not "
                                "supported");
            rc = parse_string(p, "header 'descr'", p->descr, sizeof p->descr,
                              "a string such as '<f4'");
        } else if (seen == &p->has_fortran)
            rc = parse_bool(p, &p->fortran);
        else
            rc = parse_shape(p);
        if (rc != TENSOR_OK)
            return rc;
        skip_ws(p);
        if (p->s[p->pos] == ',')
            p->pos++;
        else if (p->s[p->pos] != '}')
            return syntax(p, "header", "',' or '}'");
    }
    p->pos++;
    skip_ws(p);
    if (p->s[p->pos] != '\0')
        return syntax(p, "header", "nothing after the closing '}'");
    if (!p->has_descr || !p->has_fortran || !p->has_shape)
        return tio_fail(p->err, TENSOR_E_FORMAT, p->path, "header",
                        "missing key '%s'",
                        !p->has_descr     ? "descr"
                        : !p->has_fortran ? "fortran_order"
                                          : "shape");
    return TENSOR_OK;
}

/* The dtype of DESCR (TENSOR_ANY for 'V1' and 'V2', whose size goes in
 *SIZE), whether it is big-endian; false when DESCR is not supported. */
static bool
descr_dtype(const char *descr, tensor_dtype *dt, size_t *size, bool *big)
{
    char order = descr[0], kind;
    unsigned n = 0;
    size_t i;

    if (order != '<' && order != '>' && order != '|')
        return false;
    kind = descr[1];
    if (kind == '\0')
        return false;
    for (i = 2; i < 4 && descr[i] >= '0' && descr[i] <= '9'; i++)
        n = n * 10 + (unsigned)(descr[i] - '0');
    if (i == 2 || descr[i] != '\0')
        return false;
    /* '|' (no byte order) only for single bytes and raw bytes */
    if (order == '|' && n != 1 && kind != 'V')
        return false;
    if (kind == 'V') {
        if (n != 1 && n != 2)
            return false;
        *dt = TENSOR_ANY;
        *size = n;
        *big = false;
        return true;
    }
    for (i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (npy_types[i].kind == kind && npy_types[i].size == n) {
            *dt = npy_types[i].dtype;
            *size = n;
            *big = order == '>' && n > 1;
            return true;
        }
    return false;
}

/* The dtype a tensor read from DESCR gets, or an error. */
static int
resolve_dtype(const char *path, const char *descr, tensor_dtype file_dt,
              size_t size, tensor_dtype want, tensor_dtype *out,
              tensor_error *err)
{
    const char *field = "header 'descr'";
    if (tensor_dtype_size(want) == 0 && want != TENSOR_ANY)
        return tio_fail(err, TENSOR_E_ARG, path, NULL,
                        "invalid dtype %d asked for", (int)want);
    if (file_dt == TENSOR_ANY) {
        /* raw bytes: the caller says what they are */
        if (size == 2
            && (want == TENSOR_BF16 || want == TENSOR_F16
                || want == TENSOR_U16)) {
            *out = want;
            return TENSOR_OK;
        }
        if (size == 1
            && (want == TENSOR_F8_E4M3 || want == TENSOR_F8_E5M2
                || want == TENSOR_U8)) {
            *out = want;
            return TENSOR_OK;
        }
        return tio_fail(
            err, TENSOR_E_DTYPE, path, field,
            "raw %zu-byte elements '%s' need a dtype: %s", size, descr,
            size == 2 ? "BF16, F16 or U16" : "F8_E4M3, F8_E5M2 or U8");
    }
    if (!tensor_dtype_readable_as(file_dt, want))
        return tio_fail(err, TENSOR_E_DTYPE, path, field,
                        "the file holds '%s' (%s), expected %s", descr,
                        tensor_dtype_name(file_dt), tensor_dtype_name(want));
    *out = want != TENSOR_ANY ? want : file_dt;
    return TENSOR_OK;
}

static void
swap_bytes(unsigned char *p, size_t n_bytes, size_t esize)
{
    for (size_t i = 0; i < n_bytes; i += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            unsigned char c = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = c;
        }
}

/* A checked .npy header, the file still open. */
typedef struct
{
    int fd;
    uint64_t size;        /* of the file */
    uint64_t data_offset; /* where the data begins */
    unsigned major;       /* the version: 1, 2 or 3 */
    py_header p;          /* descr, fortran order, shape */
    tensor_dtype file_dt; /* TENSOR_ANY for raw bytes 'V1' / 'V2' */
    tensor_dtype dt;      /* the dtype read as (WANT resolved) */
    size_t esize;
    bool big;
    uint64_t n_elems, n_bytes;
} npy_head;

/* The magic, the version and the header's length of the .npy file FD of
   SIZE bytes: PRE its first 12 bytes (10 for version 1), *PREFIX the
   header's offset and *HLEN its length, checked against the file. */
static int
read_prefix(int fd, uint64_t size, const char *path, unsigned char *pre,
            uint64_t *prefix, uint64_t *hlen, tensor_error *err)
{
    int rc;

    if (size < 10) {
        return tio_fail(err, TENSOR_E_FORMAT, path, "magic",
                        "truncated: the file is %" PRIu64
                        " bytes, too short for a .npy header",
                        size);
    }
    rc = tio_pread(fd, 0, pre, 10, path, "magic", err);
    if (rc != TENSOR_OK)
        return rc;
    if (memcmp(pre, npy_magic, 6) != 0) {
        unsigned char head[TIO_SNIFF_SIZE];
        size_t head_n = size < sizeof head ? (size_t)size : sizeof head;
        const char *kind = NULL;
        if (tio_pread(fd, 0, head, head_n, path, NULL, NULL) == TENSOR_OK)
            kind = tio_sniff(head, head_n, size);
        if (kind != NULL)
            return tio_fail(err, TENSOR_E_FORMAT, path, "magic",
                            "expected \"\\x93NUMPY\" (not a .npy file; it "
                            "looks like %s)",
                            kind);
        else
            return tio_fail(err, TENSOR_E_FORMAT, path, "magic",
                            "expected \"\\x93NUMPY\" (not a .npy file)");
    }
    if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0) {
        return tio_fail(err, TENSOR_E_UNSUPPORTED, path, "version",
                        "%u.%u is not supported (expected 1.0, 2.0 or 3.0)",
                        pre[6], pre[7]);
    }
    if (pre[6] == 1) {
        *prefix = 10;
        *hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    } else {
        if (size < 12) {
            return tio_fail(err, TENSOR_E_FORMAT, path, "header length",
                            "truncated: the file is %" PRIu64 " bytes", size);
        }
        rc = tio_pread(fd, 10, pre + 10, 2, path, "header length", err);
        if (rc != TENSOR_OK)
            return rc;
        *prefix = 12;
        *hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8
                | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    }
    if (*hlen > size - *prefix) {
        return tio_fail(err, TENSOR_E_FORMAT, path, "header length",
                        "%" PRIu64 " bytes, past the end of the file (%" PRIu64
                        " bytes follow the length)",
                        *hlen, size - *prefix);
    }
    if (*hlen > NPY_MAX_HEADER) {
        return tio_fail(err, TENSOR_E_LIMIT, path, "header length",
                        "%" PRIu64 " bytes, more than the %u allowed", *hlen,
                        NPY_MAX_HEADER);
    }
    return TENSOR_OK;
}

/* The header's text (HLEN bytes at PREFIX) into *TEXT, NUL-terminated
   (the caller frees it, also after an error). */
static int
read_header_text(int fd, uint64_t prefix, uint64_t hlen, const char *path,
                 char **text, tensor_error *err)
{
    int rc;

    *text = malloc((size_t)hlen + 1);
    if (*text == NULL) {
        return tio_fail(err, TENSOR_E_NOMEM, path, "header",
                        "cannot allocate %" PRIu64 " bytes", hlen + 1);
    }
    rc = tio_pread(fd, prefix, *text, (size_t)hlen, path, "header", err);
    if (rc != TENSOR_OK)
        return rc;
    (*text)[hlen] = '\0';
    if (strlen(*text) != hlen) {
        return tio_fail(err, TENSOR_E_FORMAT, path, "header",
                        "a NUL byte at byte %zu (the header must be a Python "
                        "dict literal)",
                        strlen(*text));
    }

    return TENSOR_OK;
}

/* The parsed header P against the data: its dtype known (and, unless
   LIST, readable as WANT: *DT), C order unless LIST, its shape's size
   within the limit and equal to the DATA_SIZE bytes that follow it. */
static int
check_header(const py_header *p, const char *path, tensor_dtype want,
             bool list, uint64_t data_size, tensor_dtype *file_dt,
             tensor_dtype *dt, size_t *esize, bool *big, uint64_t *n_elems,
             uint64_t *n_bytes, tensor_error *err)
{
    char sbuf[TIO_SHAPE_SIZE];
    int rc;

    if (!descr_dtype(p->descr, file_dt, esize, big)) {
        char q[TIO_QUOTE_SIZE];
        return tio_fail(
            err, TENSOR_E_FORMAT, path, "header 'descr'",
            "unsupported or invalid dtype %s (expected " NPY_DTYPES_TEXT ")",
            tio_quote(q, sizeof q, p->descr, strlen(p->descr)));
    }
    if (p->fortran && !list) {
        return tio_fail(err, TENSOR_E_UNSUPPORTED, path,
                        "header 'fortran_order'",
                        "non-contiguous (Fortran-order) arrays are not "
                        "supported");
    }
    if (!tio_shape_bytes(p->ndim, p->shape, *esize, n_elems, n_bytes)) {
        return tio_fail(
            err, TENSOR_E_LIMIT, path, "header 'shape'",
            "%s of '%s' needs more than 2^40 bytes",
            tio_shape_str(sbuf, sizeof sbuf, p->ndim, p->shape, true),
            p->descr);
    }
    if (!list) {
        rc = resolve_dtype(path, p->descr, *file_dt, *esize, want, dt, err);
        if (rc != TENSOR_OK)
            return rc;
    }
    if (data_size < *n_bytes) {
        return tio_fail(
            err, TENSOR_E_FORMAT, path, "data",
            "truncated: shape %s of '%s' needs %" PRIu64
            " bytes, the file has %" PRIu64,
            tio_shape_str(sbuf, sizeof sbuf, p->ndim, p->shape, true),
            p->descr, *n_bytes, data_size);
    }
    if (data_size > *n_bytes) {
        return tio_fail(
            err, TENSOR_E_FORMAT, path, "data",
            "%" PRIu64 " bytes, but shape %s of '%s' needs %" PRIu64
            " (shape and data size do not match)",
            data_size,
            tio_shape_str(sbuf, sizeof sbuf, p->ndim, p->shape, true),
            p->descr, *n_bytes);
    }
    return TENSOR_OK;
}

/* Opens PATH and checks its header and its size.  WANT is resolved into
   h->dt (E_DTYPE) unless LIST, which also lets Fortran order pass: a
   listing reports what the file holds.  On success the file stays open
   (h->fd); on error it is closed. */
static int
npy_head_read(const char *path, tensor_dtype want, bool list, npy_head *h,
              tensor_error *err)
{
    unsigned char pre[12];
    py_header p;
    uint64_t size, hlen = 0, prefix = 0, n_elems = 0, n_bytes = 0;
    tensor_dtype file_dt = TENSOR_ANY, dt = TENSOR_ANY;
    size_t esize = 0;
    char *text = NULL;
    bool big = false;
    int fd, rc;

    memset(h, 0, sizeof *h);
    h->fd = -1;
    rc = tio_open_read(path, &fd, &size, err);
    if (rc != TENSOR_OK)
        return rc;
    rc = read_prefix(fd, size, path, pre, &prefix, &hlen, err);
    if (rc == TENSOR_OK)
        rc = read_header_text(fd, prefix, hlen, path, &text, err);
    if (rc != TENSOR_OK)
        goto done;
    memset(&p, 0, sizeof p);
    p.path = path;
    p.s = text;
    p.err = err;
    rc = parse_header(&p);
    if (rc == TENSOR_OK)
        rc = check_header(&p, path, want, list, size - prefix - hlen, &file_dt,
                          &dt, &esize, &big, &n_elems, &n_bytes, err);
    if (rc != TENSOR_OK)
        goto done;
    h->fd = fd;
    h->size = size;
    h->data_offset = prefix + hlen;
    h->major = pre[6];
    h->p = p;
    h->p.s = NULL;
    h->p.err = NULL;
    h->file_dt = file_dt;
    h->dt = dt;
    h->esize = esize;
    h->big = big;
    h->n_elems = n_elems;
    h->n_bytes = n_bytes;
    free(text);
    return tio_ok(err);
done:
    free(text);
    close(fd);
    return rc;
}

int
npy_read(const char *path, tensor_dtype want, tensor *out, tensor_error *err)
{
    static const tensor empty = TENSOR_INIT;
    npy_head h;
    int rc;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    *out = empty;
    rc = npy_head_read(path, want, false, &h, err);
    if (rc != TENSOR_OK)
        return rc;
    rc = tensor_alloc(out, h.dt, h.p.ndim, h.p.shape, err);
    if (rc != TENSOR_OK) {
        rc = tio_fail(err, rc, path, "data",
                      "cannot allocate %" PRIu64 " bytes", h.n_bytes);
        goto done;
    }
    if (out->n_bytes > 0) {
        rc = tio_pread(h.fd, h.data_offset, out->data, out->n_bytes, path,
                       "data", err);
        if (rc != TENSOR_OK) {
            tensor_free(out);
            goto done;
        }
        if (h.big)
            swap_bytes(out->data, out->n_bytes, h.esize);
    }
    rc = tio_ok(err);
done:
    close(h.fd);
    return rc;
}

int
npy_list(const char *path, tensor_listing *out, tensor_error *err)
{
    static const tensor_listing empty = TENSOR_LISTING_INIT;
    npy_head h;
    int rc;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    *out = empty;
    rc = npy_head_read(path, TENSOR_ANY, true, &h, err);
    if (rc != TENSOR_OK)
        return rc;
    close(h.fd);
    out->tensors = calloc(1, sizeof *out->tensors);
    out->strings = malloc(1);
    if (out->tensors == NULL || out->strings == NULL) {
        tensor_listing_free(out);
        return tio_fail(err, TENSOR_E_NOMEM, path, NULL, "out of memory");
    }
    out->strings[0] = '\0';
    out->kind = TENSOR_KIND_NPY;
    out->file_size = h.size;
    out->data_offset = h.data_offset;
    out->npy_version = h.major;
    out->npy_fortran = h.p.fortran;
    snprintf(out->npy_descr, sizeof out->npy_descr, "%s", h.p.descr);
    out->n_tensors = 1;
    out->tensors[0].name = out->strings;
    out->tensors[0].dtype = h.file_dt;
    out->tensors[0].ndim = h.p.ndim;
    memcpy(out->tensors[0].shape, h.p.shape, sizeof h.p.shape);
    out->tensors[0].n_elems = h.n_elems;
    out->tensors[0].n_bytes = h.n_bytes;
    out->tensors[0].offset = h.data_offset;
    return tio_ok(err);
}

/*----------------------------------------------------------------------------
 * Writing.
 *--------------------------------------------------------------------------*/
static const char *
npy_descr(tensor_dtype dt)
{
    switch (dt) {
    case TENSOR_BF16:
    case TENSOR_U16:
        return "<u2";
    case TENSOR_F16:
        return "<f2";
    case TENSOR_F32:
        return "<f4";
    case TENSOR_F64:
        return "<f8";
    case TENSOR_I32:
        return "<i4";
    case TENSOR_U32:
        return "<u4";
    case TENSOR_F8_E4M3:
    case TENSOR_F8_E5M2:
    case TENSOR_U8:
        return "|u1";
    case TENSOR_I8:
        return "|i1";
    case TENSOR_I16:
        return "<i2";
    case TENSOR_I64:
        return "<i8";
    case TENSOR_U64:
        return "<u8";
    case TENSOR_BOOL:
        return "|b1";
    default:
        return NULL;
    }
}

/* The longest header: 8 dimensions of 20 digits each, plus the fixed text
   and 64 bytes of padding, fits in version 1.0's 16-bit length. */
#define NPY_HEADER_BUF (64 + TENSOR_MAX_DIMS * 22 + 64 + 64)
_Static_assert(NPY_HEADER_BUF < 65536, "the .npy header fits in 1.0");

int
npy_write(const char *path, const tensor *t, bool force, tensor_error *err)
{
    char head[NPY_HEADER_BUF], sbuf[TIO_SHAPE_SIZE];
    const char *descr;
    uint64_t n_elems, n_bytes;
    size_t n;
    tio_out o;
    int rc;

    if (path == NULL || t == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    descr = npy_descr(t->dtype);
    if (descr == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "invalid dtype %d",
                        (int)t->dtype);
    if (t->ndim > TENSOR_MAX_DIMS
        || !tio_shape_bytes(t->ndim, t->shape, tensor_dtype_size(t->dtype),
                            &n_elems, &n_bytes)
        || n_elems != t->n_elems || n_bytes != t->n_bytes
        || (n_bytes > 0 && t->data == NULL))
        return tio_fail(err, TENSOR_E_ARG, path, NULL,
                        "inconsistent tensor: %u dimensions, n_elems %" PRIu64
                        ", n_bytes %zu, data %s",
                        t->ndim, t->n_elems, t->n_bytes,
                        t->data != NULL ? "set" : "NULL");

    /* magic, version 1.0, 2-byte length, then the dict */
    memcpy(head, npy_magic, 6);
    head[6] = 1;
    head[7] = 0;
    n = 10;
    n += (size_t)snprintf(
        head + n, sizeof head - n,
        "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
        tio_shape_str(sbuf, sizeof sbuf, t->ndim, t->shape, true));
    /* spaces, then a newline that ends at a multiple of 64 */
    while ((n + 1) % 64 != 0 && n + 1 < sizeof head)
        head[n++] = ' ';
    head[n++] = '\n';
    head[8] = (char)((n - 10) & 0xff);
    head[9] = (char)((n - 10) >> 8);

    rc = tio_out_open(&o, path, force, err);
    if (rc == TENSOR_OK)
        rc = tio_out_write(&o, head, n, err);
    if (rc == TENSOR_OK)
        rc = tio_out_write(&o, t->data, t->n_bytes, err);
    if (rc == TENSOR_OK)
        rc = tio_out_commit(&o, err);
    else
        tio_out_abort(&o);
    return rc == TENSOR_OK ? tio_ok(err) : rc;
}
