/* tcvec.c -- read the tensor-core validation vectors: a/b files of BF16
   words written as FP32 hex, c/d files of FP32 binary strings */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bits_internal.h"
#include "analysis/tensor_internal.h"

/* A set of 5000 vectors is under 1 MB per file; anything past this is not
   a vector file. */
#define TCVEC_MAX_FILE ((size_t)1 << 30)

typedef enum
{
    TCVEC_AB, /* 16 hex words per line */
    TCVEC_CD  /* one 32-digit binary string per line */
} tcvec_kind;

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Whether LINE[0..LEN) holds only blanks. */
static bool
blank_line(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!is_blank(line[i]))
            return false;
    return true;
}

static int
parse_ab_line(const char *path, unsigned line_no, const char *s, size_t len,
              tensor *t, uint64_t row, tensor_error *err)
{
    char field[64], q[TIO_QUOTE_SIZE];
    unsigned k = 0;
    size_t i = 0;

    for (;;) {
        size_t start;
        uint32_t v = 0;
        while (i < len && is_blank(s[i]))
            i++;
        if (i == len)
            break;
        start = i;
        while (i < len && !is_blank(s[i]))
            i++;
        snprintf(field, sizeof field, "line %u word %u", line_no, k + 1);
        if (k == TCVEC_K)
            return tio_fail(err, TENSOR_E_FORMAT, path, field,
                            "more than %d words on the line", TCVEC_K);
        if (i - start != 8)
            return tio_fail(err, TENSOR_E_FORMAT, path, field,
                            "expected 8 hex digits, found %s",
                            tio_quote(q, sizeof q, s + start, i - start));
        for (size_t j = start; j < i; j++) {
            int d = bits_hex_digit(s[j]);
            if (d < 0)
                return tio_fail(err, TENSOR_E_FORMAT, path, field,
                                "expected 8 hex digits, found %s",
                                tio_quote(q, sizeof q, s + start, 8));
            v = v << 4 | (uint32_t)d;
        }
        if ((v & 0xffffu) != 0)
            return tio_fail(err, TENSOR_E_FORMAT, path, field,
                            "%08" PRIx32 " is not a BF16 value (the low 16 "
                            "bits must be zero)",
                            v);
        tensor_set_bits(t, row * TCVEC_K + k, v >> 16);
        k++;
    }
    if (k != TCVEC_K) {
        snprintf(field, sizeof field, "line %u", line_no);
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "%u words, expected %d", k, TCVEC_K);
    }
    return TENSOR_OK;
}

static int
parse_cd_line(const char *path, unsigned line_no, const char *s, size_t len,
              tensor *t, uint64_t row, tensor_error *err)
{
    char field[64], q[TIO_QUOTE_SIZE];
    size_t a = 0, b = len;
    uint32_t v = 0;

    while (a < b && is_blank(s[a]))
        a++;
    while (b > a && is_blank(s[b - 1]))
        b--;
    snprintf(field, sizeof field, "line %u", line_no);
    if (b - a != 32)
        return tio_fail(err, TENSOR_E_FORMAT, path, field,
                        "expected 32 binary digits, found %s",
                        tio_quote(q, sizeof q, s + a, b - a));
    for (size_t i = a; i < b; i++) {
        if (s[i] != '0' && s[i] != '1')
            return tio_fail(err, TENSOR_E_FORMAT, path, field,
                            "expected 32 binary digits, found %s",
                            tio_quote(q, sizeof q, s + a, b - a));
        v = v << 1 | (uint32_t)(s[i] - '0');
    }
    tensor_set_bits(t, row, v);
    return TENSOR_OK;
}

static int
read_vectors(const char *path, tcvec_kind kind, tensor *out, tensor_error *err)
{
    static const tensor empty = TENSOR_INIT;
    char *buf;
    size_t len, n_lines = 0, pos;
    const char *nul;
    int rc;

    if (path == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, path, NULL, "NULL argument");
    *out = empty;
    rc = tio_read_all(path, TCVEC_MAX_FILE, &buf, &len, err);
    if (rc != TENSOR_OK)
        return rc;
    nul = memchr(buf, '\0', len);
    if (nul != NULL) {
        const char *what =
            tio_sniff((const unsigned char *)buf,
                      len < TIO_SNIFF_SIZE ? len : TIO_SNIFF_SIZE, len);
        rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                      "a NUL byte at byte %zu (not a text file%s%s)",
                      (size_t)(nul - buf), what != NULL ? "; it looks like " : "",
                      what != NULL ? what : "");
        goto done;
    }
    /* the vectors are the lines up to the last one that is not blank */
    pos = 0;
    for (size_t line = 1; pos < len; line++) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl != NULL ? (size_t)(nl - buf) : len;
        if (!blank_line(buf + pos, end - pos))
            n_lines = line;
        pos = end + 1;
    }
    if (n_lines == 0) {
        rc = tio_fail(err, TENSOR_E_FORMAT, path, NULL,
                      "no vectors (expected at least one line)");
        goto done;
    }
    if (kind == TCVEC_AB) {
        uint64_t shape[2] = {n_lines, TCVEC_K};
        rc = tensor_alloc(out, TENSOR_BF16, 2, shape, err);
    } else {
        uint64_t shape[1] = {n_lines};
        rc = tensor_alloc(out, TENSOR_F32, 1, shape, err);
    }
    if (rc != TENSOR_OK) {
        rc = tio_fail(err, rc, path, NULL, "cannot allocate %zu vectors",
                      n_lines);
        goto done;
    }
    pos = 0;
    for (size_t i = 0; i < n_lines; i++) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl != NULL ? (size_t)(nl - buf) : len;
        if (blank_line(buf + pos, end - pos)) {
            char field[64];
            snprintf(field, sizeof field, "line %zu", i + 1);
            rc = tio_fail(err, TENSOR_E_FORMAT, path, field,
                          "empty line before the last vector");
        } else if (kind == TCVEC_AB)
            rc = parse_ab_line(path, (unsigned)(i + 1), buf + pos, end - pos,
                               out, i, err);
        else
            rc = parse_cd_line(path, (unsigned)(i + 1), buf + pos, end - pos,
                               out, i, err);
        if (rc != TENSOR_OK) {
            tensor_free(out);
            goto done;
        }
        pos = end + 1;
    }
    rc = tio_ok(err);
done:
    free(buf);
    return rc;
}

int
tcvec_read_ab(const char *path, tensor *out, tensor_error *err)
{
    return read_vectors(path, TCVEC_AB, out, err);
}

int
tcvec_read_cd(const char *path, tensor *out, tensor_error *err)
{
    return read_vectors(path, TCVEC_CD, out, err);
}

void
tcvec_set_free(tcvec_set *s)
{
    if (s == NULL)
        return;
    tensor_free(&s->a);
    tensor_free(&s->b);
    tensor_free(&s->c);
    tensor_free(&s->d);
}

int
tcvec_read_set(const char *dir, const char *name, tcvec_set *out,
               tensor_error *err)
{
    static const char *const patterns[4] = {
        "%s/a_%s_bf16.txt",
        "%s/b_%s_bf16.txt",
        "%s/c_%s_fp32.txt",
        "%s/d_%s_fp32.txt",
    };
    static const tcvec_set empty = TCVEC_SET_INIT;
    tensor *parts[4];
    char *paths[4] = {NULL, NULL, NULL, NULL};
    int rc = TENSOR_OK;

    if (dir == NULL || name == NULL || out == NULL)
        return tio_fail(err, TENSOR_E_ARG, dir, NULL, "NULL argument");
    *out = empty;
    parts[0] = &out->a;
    parts[1] = &out->b;
    parts[2] = &out->c;
    parts[3] = &out->d;
    for (int i = 0; i < 4 && rc == TENSOR_OK; i++) {
        size_t len = strlen(dir) + strlen(name) + 16;
        paths[i] = malloc(len);
        if (paths[i] == NULL) {
            rc = tio_fail(err, TENSOR_E_NOMEM, dir, NULL,
                          "cannot allocate a file name");
            break;
        }
        snprintf(paths[i], len, patterns[i], dir, name);
        rc = i < 2 ? tcvec_read_ab(paths[i], parts[i], err)
                   : tcvec_read_cd(paths[i], parts[i], err);
        if (rc == TENSOR_OK && i > 0 && parts[i]->shape[0] != out->a.shape[0])
            rc = tio_fail(err, TENSOR_E_FORMAT, paths[i], NULL,
                          "%" PRIu64 " vectors, but %s has %" PRIu64,
                          parts[i]->shape[0], paths[0], out->a.shape[0]);
    }
    for (int i = 0; i < 4; i++)
        free(paths[i]);
    if (rc != TENSOR_OK)
        tcvec_set_free(out);
    return rc;
}
