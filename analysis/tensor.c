/* tensor.c -- dtypes, owned tensors, error messages, file helpers and the
   reader that dispatches on the file type */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/tensor_internal.h"
#include "softfloat/softfloat.h"

/*----------------------------------------------------------------------------
 * Dtypes.
 *--------------------------------------------------------------------------*/
static const struct
{
    const char *name;
    size_t size;
} dtypes[TENSOR_N_DTYPES] = {
    [TENSOR_ANY] = {"ANY", 0},         [TENSOR_BF16] = {"BF16", 2},
    [TENSOR_F16] = {"F16", 2},         [TENSOR_F32] = {"F32", 4},
    [TENSOR_F64] = {"F64", 8},         [TENSOR_I32] = {"I32", 4},
    [TENSOR_U16] = {"U16", 2},         [TENSOR_U32] = {"U32", 4},
    [TENSOR_F8_E4M3] = {"F8_E4M3", 1}, [TENSOR_F8_E5M2] = {"F8_E5M2", 1},
    [TENSOR_U8] = {"U8", 1},           [TENSOR_I8] = {"I8", 1},
    [TENSOR_I16] = {"I16", 2},         [TENSOR_I64] = {"I64", 8},
    [TENSOR_U64] = {"U64", 8},         [TENSOR_BOOL] = {"BOOL", 1},
};

static bool
dtype_valid(tensor_dtype dt)
{
    return (int)dt >= 0 && (int)dt < TENSOR_N_DTYPES;
}

size_t
tensor_dtype_size(tensor_dtype dt)
{
    return dtype_valid(dt) ? dtypes[dt].size : 0;
}

const char *
tensor_dtype_name(tensor_dtype dt)
{
    return dtype_valid(dt) ? dtypes[dt].name : NULL;
}

tensor_dtype
tio_dtype_by_st_name(const char *name)
{
    for (int i = 1; i < TENSOR_N_DTYPES; i++)
        if (strcmp(name, dtypes[i].name) == 0)
            return (tensor_dtype)i;
    return TENSOR_ANY;
}

bool
tensor_dtype_parse(const char *name, tensor_dtype *out)
{
    static const struct
    {
        const char *name;
        tensor_dtype dt;
    } aliases[] = {
        {"fp16", TENSOR_F16},     {"fp32", TENSOR_F32},
        {"fp64", TENSOR_F64},     {"e4m3", TENSOR_F8_E4M3},
        {"e5m2", TENSOR_F8_E5M2},
    };
    if (name == NULL)
        return false;
    for (int i = 0; i < TENSOR_N_DTYPES; i++)
        if (strcasecmp(name, dtypes[i].name) == 0) {
            *out = (tensor_dtype)i;
            return true;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].name) == 0) {
            *out = aliases[i].dt;
            return true;
        }
    return false;
}

const struct sf_format *
tensor_dtype_format(tensor_dtype dt)
{
    switch (dt) {
    case TENSOR_BF16:
        return &sf_format_bf16;
    case TENSOR_F16:
        return &sf_format_f16;
    case TENSOR_F32:
        return &sf_format_f32;
    case TENSOR_F64:
        return &sf_format_f64;
    case TENSOR_F8_E4M3:
        return &sf_format_e4m3;
    case TENSOR_F8_E5M2:
        return &sf_format_e5m2;
    default:
        return NULL;
    }
}

tensor_dtype
tensor_dtype_from_format(const struct sf_format *fmt)
{
    if (fmt == &sf_format_bf16)
        return TENSOR_BF16;
    if (fmt == &sf_format_f16)
        return TENSOR_F16;
    if (fmt == &sf_format_f32 || fmt == &sf_format_tf32)
        return TENSOR_F32;
    if (fmt == &sf_format_f64)
        return TENSOR_F64;
    if (fmt == &sf_format_e4m3)
        return TENSOR_F8_E4M3;
    if (fmt == &sf_format_e5m2)
        return TENSOR_F8_E5M2;
    return TENSOR_ANY;
}

bool
tensor_dtype_readable_as(tensor_dtype file_dt, tensor_dtype want)
{
    if (!dtype_valid(file_dt) || !dtype_valid(want) || file_dt == TENSOR_ANY)
        return false;
    if (want == TENSOR_ANY || want == file_dt)
        return true;
    if (file_dt == TENSOR_U16)
        return want == TENSOR_BF16 || want == TENSOR_F16;
    if (file_dt == TENSOR_U8)
        return want == TENSOR_F8_E4M3 || want == TENSOR_F8_E5M2;
    return false;
}

/*----------------------------------------------------------------------------
 * Errors.
 *--------------------------------------------------------------------------*/
const char *
tensor_status_name(int code)
{
    static const char *const names[TENSOR_N_STATUS] = {
        "ok",    "io",     "format", "unsupported", "limit",
        "nomem", "exists", "key",    "dtype",       "arg",
    };
    return code >= 0 && code < TENSOR_N_STATUS ? names[code] : NULL;
}

int
tio_ok(tensor_error *err)
{
    if (err != NULL) {
        err->code = TENSOR_OK;
        err->message[0] = '\0';
    }
    return TENSOR_OK;
}

int
tio_fail(tensor_error *err, int code, const char *path, const char *field,
         const char *fmt, ...)
{
    va_list ap;
    int n;

    if (err == NULL)
        return code;
    err->code = code;
    if (path != NULL && field != NULL)
        n = snprintf(err->message, sizeof err->message, "%s: %s: ", path,
                     field);
    else if (path != NULL || field != NULL)
        n = snprintf(err->message, sizeof err->message,
                     "%s: ", path != NULL ? path : field);
    else
        n = 0;
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof err->message) {
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return code;
}

int
tio_fail_errno(tensor_error *err, const char *path, const char *what,
               int errnum)
{
    return tio_fail(err, TENSOR_E_IO, path, NULL, "%s: %s", what,
                    strerror(errnum));
}

/* S[0..LEN) escaped into BUF from offset O: '"', '\\' and bytes outside
   printable ASCII as \xNN; at most MAX bytes of S, and while RESERVE more
   bytes stay free after an escape; "..." marks a cut.  Returns the new
   offset (BUF is not terminated). */
static size_t
escape_into(char *buf, size_t size, size_t o, const char *s, size_t len,
            size_t max, size_t reserve)
{
    static const char hex[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        /* room for an escape (4), the cut mark (3) and RESERVE */
        if (o + 4 + 3 + reserve > size || i >= max) {
            memcpy(buf + o, "...", 3);
            return o + 3;
        }
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        } else {
            buf[o++] = (char)c;
        }
    }
    return o;
}

char *
tio_quote(char *buf, size_t size, const char *s, size_t len)
{
    size_t o;

    if (size < 8) {
        if (size > 0)
            buf[0] = '\0';
        return buf;
    }
    buf[0] = '"';
    /* the closing '"' and NUL */
    o = escape_into(buf, size, 1, s, len, 60, 2);
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

char *
tio_escape(char *buf, size_t size, const char *s)
{
    size_t o;

    if (size < 8) {
        if (size > 0)
            buf[0] = '\0';
        return buf;
    }
    o = escape_into(buf, size, 0, s, strlen(s), SIZE_MAX, 1);
    buf[o] = '\0';
    return buf;
}

/*----------------------------------------------------------------------------
 * Files of the wrong type.
 *--------------------------------------------------------------------------*/
static bool
starts_with(const unsigned char *head, size_t n, const char *magic,
            size_t len)
{
    return n >= len && memcmp(head, magic, len) == 0;
}

const char *
tio_sniff(const unsigned char *head, size_t n, uint64_t size)
{
    size_t i, text = 0;

    if (starts_with(head, n, "\x93NUMPY", 6))
        return "a .npy file";
    /* a plausible header length, then '{' (before the magic numbers
       below, which could be the low bytes of a length) */
    if (n >= 9 && head[8] == '{') {
        uint64_t hlen = 0;
        for (int k = 7; k >= 0; k--)
            hlen = hlen << 8 | head[k];
        if (hlen >= 2 && hlen <= size - 8)
            return "a .safetensors file";
    }
    if (starts_with(head, n, "PK\x03\x04", 4)
        || starts_with(head, n, "PK\x05\x06", 4))
        return "a zip archive, such as a PyTorch .pt file or a NumPy .npz "
               "file";
    if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return "a Python pickle, such as an old PyTorch file";
    if (starts_with(head, n, "\x1f\x8b", 2))
        return "a gzip file";
    if (starts_with(head, n, "\x89HDF\r\n\x1a\n", 8))
        return "an HDF5 file";
    if (starts_with(head, n, "GGUF", 4))
        return "a GGUF file";
    /* text: printable ASCII, blanks and UTF-8 bytes only */
    for (i = 0; i < n; i++) {
        unsigned char c = head[i];
        if (c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c != 0x7f))
            text++;
    }
    if (n > 0 && text == n) {
        for (i = 0; i < n && (head[i] == ' ' || head[i] == '\t'
                              || head[i] == '\n' || head[i] == '\r');
             i++)
            ;
        if (i < n && (head[i] == '{' || head[i] == '['))
            return "a JSON text";
        return "a text file";
    }
    return NULL;
}

char *
tensor_name_list(char *buf, size_t size, const char *const *names, size_t n)
{
    size_t o = 0, budget = size < 300 ? size : 300;

    if (size == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char one[TIO_QUOTE_SIZE], tail[48];
        size_t len = strlen(names[i]);
        int t;
        /* the name, escaped, at most 40 characters */
        one[escape_into(one, sizeof one, 0, names[i], len, 40, 1)] = '\0';
        t = snprintf(tail, sizeof tail, ", ... (%zu in all)", n);
        if (o + strlen(one) + 2 + (i + 1 < n ? (size_t)t : 0) >= budget) {
            snprintf(buf + o, size - o, "%s... (%zu in all)",
                     i > 0 ? ", " : "", n);
            return buf;
        }
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i > 0 ? ", " : "",
                              one);
    }
    return buf;
}

char *
tio_shape_str(char *buf, size_t size, unsigned ndim, const uint64_t *shape,
              bool py)
{
    size_t o = 0;
    int n;

    n = snprintf(buf, size, "%s", py ? "(" : "[");
    o = n > 0 ? (size_t)n : 0;
    for (unsigned i = 0; i < ndim && o < size; i++) {
        if (py)
            n = snprintf(buf + o, size - o, "%" PRIu64 ",%s", shape[i],
                         i + 1 < ndim ? " " : "");
        else
            n = snprintf(buf + o, size - o, "%s%" PRIu64, i ? ", " : "",
                         shape[i]);
        o += n > 0 ? (size_t)n : 0;
    }
    /* Python writes (3,) for one dimension but (2, 3) for two */
    if (py && ndim > 1 && o < size && buf[o - 1] == ',')
        o--;
    if (o < size)
        snprintf(buf + o, size - o, "%s", py ? ")" : "]");
    return buf;
}

bool
tio_shape_bytes(unsigned ndim, const uint64_t *shape, size_t esize,
                uint64_t *n_elems, uint64_t *n_bytes)
{
    uint64_t n = 1;
    bool zero = false;

    /* With a zero dimension the product is 0 whatever the others are, but
       the others must still be sane: each alone times the element size
       must stay under the limit (so [0, 2^63] is refused too). */
    for (unsigned i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            zero = true;
            continue;
        }
        if (shape[i] > TENSOR_MAX_BYTES / esize)
            return false;
        if (n > UINT64_MAX / shape[i])
            return false;
        n *= shape[i];
        if (n > TENSOR_MAX_BYTES / esize)
            return false;
    }
    if (zero)
        n = 0;
    *n_elems = n;
    *n_bytes = n * esize;
    return true;
}

/*----------------------------------------------------------------------------
 * Tensors.
 *--------------------------------------------------------------------------*/
int
tensor_alloc(tensor *t, tensor_dtype dtype, unsigned ndim,
             const uint64_t *shape, tensor_error *err)
{
    static const tensor empty = TENSOR_INIT;
    char sbuf[TIO_SHAPE_SIZE];
    uint64_t n_elems, n_bytes;
    size_t esize = tensor_dtype_size(dtype);

    if (t == NULL)
        return tio_fail(err, TENSOR_E_ARG, NULL, "tensor", "NULL tensor");
    *t = empty;
    if (esize == 0)
        return tio_fail(err, TENSOR_E_ARG, NULL, "dtype", "invalid dtype %d",
                        (int)dtype);
    if (ndim > TENSOR_MAX_DIMS)
        return tio_fail(err, TENSOR_E_UNSUPPORTED, NULL, "shape",
                        "%u dimensions, at most %d are supported", ndim,
                        TENSOR_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        return tio_fail(err, TENSOR_E_ARG, NULL, "shape", "NULL shape");
    if (!tio_shape_bytes(ndim, shape, esize, &n_elems, &n_bytes))
        return tio_fail(err, TENSOR_E_LIMIT, NULL, "shape",
                        "%s of %s needs more than 2^40 bytes",
                        tio_shape_str(sbuf, sizeof sbuf, ndim, shape, false),
                        dtypes[dtype].name);
    if ((uint64_t)(size_t)n_bytes != n_bytes)
        return tio_fail(err, TENSOR_E_LIMIT, NULL, "shape",
                        "%" PRIu64 " bytes do not fit in memory", n_bytes);
    if (n_bytes > 0) {
        t->data = calloc(1, (size_t)n_bytes);
        if (t->data == NULL)
            return tio_fail(err, TENSOR_E_NOMEM, NULL, "data",
                            "cannot allocate %" PRIu64 " bytes", n_bytes);
    }
    t->dtype = dtype;
    t->ndim = ndim;
    for (unsigned i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->n_elems = n_elems;
    t->n_bytes = (size_t)n_bytes;
    return tio_ok(err);
}

void
tensor_free(tensor *t)
{
    static const tensor empty = TENSOR_INIT;
    if (t == NULL)
        return;
    free(t->data);
    *t = empty;
}

uint64_t
tensor_get_bits(const tensor *t, uint64_t i)
{
    size_t esize = tensor_dtype_size(t->dtype);
    const unsigned char *p;
    uint64_t v = 0;

    if (i >= t->n_elems || esize == 0 || t->data == NULL)
        return 0;
    p = t->data + (size_t)i * esize;
    for (size_t k = esize; k-- > 0;)
        v = v << 8 | p[k];
    return v;
}

void
tensor_set_bits(tensor *t, uint64_t i, uint64_t bits)
{
    size_t esize = tensor_dtype_size(t->dtype);
    unsigned char *p;

    if (i >= t->n_elems || esize == 0 || t->data == NULL)
        return;
    p = t->data + (size_t)i * esize;
    for (size_t k = 0; k < esize; k++) {
        p[k] = (unsigned char)(bits & 0xff);
        bits >>= 8;
    }
}

bool
tensor_flat_index(const tensor *t, const uint64_t *idx, uint64_t *flat)
{
    uint64_t f = 0;

    for (unsigned i = 0; i < t->ndim; i++) {
        if (idx[i] >= t->shape[i])
            return false;
        f = f * t->shape[i] + idx[i];
    }
    *flat = f;
    return true;
}

/*----------------------------------------------------------------------------
 * Files.
 *--------------------------------------------------------------------------*/
int
tio_open_read(const char *path, int *fd, uint64_t *size, tensor_error *err)
{
    struct stat st;
    int f;

    if (path == NULL)
        return tio_fail(err, TENSOR_E_ARG, NULL, NULL, "NULL path");
    f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return tio_fail_errno(err, path, "cannot open", errno);
    if (fstat(f, &st) != 0) {
        int e = errno;
        close(f);
        return tio_fail_errno(err, path, "cannot stat", e);
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return tio_fail(err, TENSOR_E_IO, path, NULL, "not a regular file");
    }
    *fd = f;
    *size = (uint64_t)st.st_size;
    return TENSOR_OK;
}

int
tio_pread(int fd, uint64_t offset, void *buf, size_t n, const char *path,
          const char *field, tensor_error *err)
{
    unsigned char *p = buf;
    size_t done = 0;

    while (done < n) {
        ssize_t r = pread(fd, p + done, n - done, (off_t)(offset + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return tio_fail_errno(err, path, "cannot read", errno);
        }
        if (r == 0)
            return tio_fail(err, TENSOR_E_FORMAT, path, field,
                            "truncated: the file ended after %" PRIu64
                            " bytes",
                            offset + done);
        done += (size_t)r;
    }
    return TENSOR_OK;
}

int
tio_read_all(const char *path, size_t max, char **buf, size_t *len,
             tensor_error *err)
{
    uint64_t size;
    int fd, rc;
    char *b;

    rc = tio_open_read(path, &fd, &size, err);
    if (rc != TENSOR_OK)
        return rc;
    if (size > max) {
        close(fd);
        return tio_fail(err, TENSOR_E_LIMIT, path, NULL,
                        "%" PRIu64 " bytes, more than the %zu supported", size,
                        max);
    }
    b = malloc((size_t)size + 1);
    if (b == NULL) {
        close(fd);
        return tio_fail(err, TENSOR_E_NOMEM, path, NULL,
                        "cannot allocate %" PRIu64 " bytes", size + 1);
    }
    rc = tio_pread(fd, 0, b, (size_t)size, path, NULL, err);
    close(fd);
    if (rc != TENSOR_OK) {
        free(b);
        return rc;
    }
    b[size] = '\0';
    *buf = b;
    *len = (size_t)size;
    return TENSOR_OK;
}

/* Flushes the directory that holds PATH, so that a rename is durable.
   Failure is ignored: some file systems cannot fsync a directory, and the
   file itself is already on disk. */
static void
sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    int fd;

    if (slash == NULL)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    if (dir == NULL)
        return;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int
tio_out_open(tio_out *o, const char *path, bool force, tensor_error *err)
{
    struct stat st;
    size_t len;

    o->path = path;
    o->tmp_path = NULL;
    o->fd = -1;
    o->force = force;
    if (path == NULL || path[0] == '\0')
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "empty output path");
    if (!force && lstat(path, &st) == 0)
        return tio_fail(err, TENSOR_E_EXISTS, path, NULL,
                        "the file exists (give force to replace it)");
    /* PATH.<pid>.<n>.tmp, created exclusively; open() applies the umask
       as for any new file */
    len = strlen(path) + 64;
    o->tmp_path = malloc(len);
    if (o->tmp_path == NULL)
        return tio_fail(err, TENSOR_E_NOMEM, path, NULL,
                        "cannot allocate a file name");
    for (unsigned n = 0; n < 1000; n++) {
        snprintf(o->tmp_path, len, "%s.%ld.%u.tmp", path, (long)getpid(), n);
        o->fd =
            open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd >= 0)
            return TENSOR_OK;
        if (errno != EEXIST)
            break;
    }
    {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return tio_fail_errno(err, path, "cannot create a temporary file", e);
    }
}

int
tio_out_write(tio_out *o, const void *buf, size_t n, tensor_error *err)
{
    const unsigned char *p = buf;

    while (n > 0) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return tio_fail_errno(err, o->path, "cannot write", errno);
        }
        p += w;
        n -= (size_t)w;
    }
    return TENSOR_OK;
}

void
tio_out_abort(tio_out *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp_path != NULL) {
        (void)unlink(o->tmp_path);
        free(o->tmp_path);
        o->tmp_path = NULL;
    }
}

int
tio_out_commit(tio_out *o, tensor_error *err)
{
    int rc = TENSOR_OK;

    if (fsync(o->fd) != 0) {
        rc = tio_fail_errno(err, o->path, "cannot flush to disk", errno);
        tio_out_abort(o);
        return rc;
    }
    if (close(o->fd) != 0) {
        o->fd = -1;
        rc = tio_fail_errno(err, o->path, "cannot close", errno);
        tio_out_abort(o);
        return rc;
    }
    o->fd = -1;
    if (o->force) {
        if (rename(o->tmp_path, o->path) != 0)
            rc = tio_fail_errno(err, o->path, "cannot rename into place",
                                errno);
    } else if (link(o->tmp_path, o->path) != 0) {
        /* link() fails if PATH exists, so a file that appeared since the
           check in tio_out_open is never replaced.  Where the file system
           has no hard links, fall back to a check and rename. */
        int e = errno;
        struct stat st;
        if (e == EEXIST)
            rc = tio_fail(err, TENSOR_E_EXISTS, o->path, NULL,
                          "the file exists (give force to replace it)");
        else if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP && e != ENOSYS
                 && e != EMLINK)
            rc = tio_fail_errno(err, o->path, "cannot link into place", e);
        else if (lstat(o->path, &st) == 0)
            rc = tio_fail(err, TENSOR_E_EXISTS, o->path, NULL,
                          "the file exists (give force to replace it)");
        else if (rename(o->tmp_path, o->path) != 0)
            rc = tio_fail_errno(err, o->path, "cannot rename into place",
                                errno);
    }
    /* after a rename the temporary name is gone; after a link it is a
       second name of PATH: either way unlinking it is right */
    tio_out_abort(o);
    if (rc == TENSOR_OK)
        sync_parent_dir(o->path);
    return rc;
}

/*----------------------------------------------------------------------------
 * Reading any tensor file.
 *--------------------------------------------------------------------------*/
static bool
has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Whether PATH is a .npy file: by its extension, else by its content
   (the .npy magic).  A file that cannot be opened is left to the
   safetensors reader, which reports it. */
static bool
is_npy(const char *path)
{
    unsigned char head[6];
    uint64_t size;
    bool npy;
    int fd;

    if (has_suffix(path, ".safetensors"))
        return false;
    if (has_suffix(path, ".npy"))
        return true;
    if (tio_open_read(path, &fd, &size, NULL) != TENSOR_OK)
        return false;
    npy = size >= 6 && tio_pread(fd, 0, head, 6, path, NULL, NULL) == TENSOR_OK
          && memcmp(head, "\x93NUMPY", 6) == 0;
    close(fd);
    return npy;
}

int
tensor_file_list(const char *path, tensor_listing *out, tensor_error *err)
{
    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    return is_npy(path) ? npy_list(path, out, err)
                        : safetensors_list(path, out, err);
}

int
tensor_file_read(const char *path, const char *key, tensor_dtype want,
                 tensor *out, tensor_error *err)
{
    unsigned char head[6];
    uint64_t size;
    int fd, rc;
    bool npy;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    if (has_suffix(path, ".safetensors"))
        return safetensors_read(path, key, want, out, err);
    if (has_suffix(path, ".npy"))
        npy = true;
    else {
        rc = tio_open_read(path, &fd, &size, err);
        if (rc != TENSOR_OK)
            return rc;
        npy = size >= 6
              && tio_pread(fd, 0, head, 6, path, NULL, NULL) == TENSOR_OK
              && memcmp(head, "\x93NUMPY", 6) == 0;
        close(fd);
    }
    if (!npy)
        return safetensors_read(path, key, want, out, err);
    if (key != NULL) {
        char q[TIO_QUOTE_SIZE];
        return tio_fail(err, TENSOR_E_KEY, path, NULL,
                        "key %s given, but a .npy file holds one unnamed "
                        "array",
                        tio_quote(q, sizeof q, key, strlen(key)));
    }
    return npy_read(path, want, out, err);
}
