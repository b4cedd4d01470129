/* fuzz_tcvec -- fuzz target: the tensor-core vector text reader on
   arbitrary bytes, against a second parser written from the format's
   description */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

/*
 * Each input is read as an a/b file (16 words of 8 hex digits per line,
 * the low 16 bits zero; the BF16 value is the high half) and as a c/d file
 * (32 binary digits per line), by the library and by ref_parse below,
 * which follows analysis/tensor.h's description of the format: lines end
 * in '\n'; blanks (space, tab, '\r') around words are ignored; empty (all
 * blank) lines are allowed only after the last vector; at least one
 * vector; no NUL byte.  Both must agree on success, and on success the
 * tensors must be [N, 16] BF16 and [N] F32 with the reference's values.
 */

static bool
blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* One line of an a/b file into OUT[0..16); false when malformed. */
static bool
ref_ab_line(const uint8_t *s, size_t len, uint32_t *out)
{
    size_t i = 0;
    unsigned k = 0;

    while (i < len) {
        size_t start;
        uint32_t v = 0;
        if (blank(s[i])) {
            i++;
            continue;
        }
        start = i;
        while (i < len && !blank(s[i]))
            i++;
        if (k == TCVEC_K || i - start != 8)
            return false;
        for (size_t j = start; j < i; j++) {
            int d = fuzz_hex_digit((unsigned char)s[j]);
            if (d < 0)
                return false;
            v = v * 16 + (uint32_t)d;
        }
        if (v % 65536 != 0)
            return false;
        out[k++] = v / 65536;
    }
    return k == TCVEC_K;
}

/* One line of a c/d file into *OUT; false when malformed. */
static bool
ref_cd_line(const uint8_t *s, size_t len, uint32_t *out)
{
    size_t a = 0, b = len;
    uint32_t v = 0;

    while (a < b && blank(s[a]))
        a++;
    while (b > a && blank(s[b - 1]))
        b--;
    if (b - a != 32)
        return false;
    for (size_t i = a; i < b; i++) {
        if (s[i] != '0' && s[i] != '1')
            return false;
        v = v * 2 + (uint32_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* Parses DATA as an a/b file (AB) or c/d file into *VALS (malloc'ed,
   16 or 1 per vector) and *N; false when the file is malformed. */
static bool
ref_parse(const uint8_t *data, size_t size, bool ab, uint32_t **vals,
          size_t *n)
{
    size_t lines = 0, last = 0, pos, per = ab ? TCVEC_K : 1;
    uint32_t *v;

    *vals = NULL;
    *n = 0;
    if (memchr(data, 0, size) != NULL)
        return false;
    /* count the lines and find the last one that is not blank */
    pos = 0;
    while (pos < size) {
        size_t end = pos;
        bool all_blank = true;
        while (end < size && data[end] != '\n') {
            all_blank = all_blank && blank(data[end]);
            end++;
        }
        lines++;
        if (!all_blank)
            last = lines;
        pos = end + 1;
    }
    if (last == 0)
        return false;
    v = calloc(last * per, sizeof *v);
    FUZZ_CHECK(v != NULL);
    pos = 0;
    for (size_t i = 0; i < last; i++) {
        size_t end = pos;
        while (end < size && data[end] != '\n')
            end++;
        if (!(ab ? ref_ab_line(data + pos, end - pos, v + i * per)
                 : ref_cd_line(data + pos, end - pos, v + i))) {
            free(v);
            return false;
        }
        pos = end + 1;
    }
    *vals = v;
    *n = last;
    return true;
}

static void
check_kind(const char *path, const uint8_t *data, size_t size, bool ab)
{
    tensor t = TENSOR_INIT;
    tensor_error err;
    uint32_t *vals;
    size_t n;
    bool ok = ref_parse(data, size, ab, &vals, &n);
    int rc =
        ab ? tcvec_read_ab(path, &t, &err) : tcvec_read_cd(path, &t, &err);

    if (!ok) {
        FUZZ_CHECK(rc == TENSOR_E_FORMAT);
        fuzz_check_error(rc, &err, path);
        fuzz_check_empty(&t);
        return;
    }
    FUZZ_CHECK(rc == TENSOR_OK);
    fuzz_check_tensor(&t);
    if (ab) {
        FUZZ_CHECK(t.dtype == TENSOR_BF16 && t.ndim == 2);
        FUZZ_CHECK(t.shape[0] == n && t.shape[1] == TCVEC_K);
    } else {
        FUZZ_CHECK(t.dtype == TENSOR_F32 && t.ndim == 1 && t.shape[0] == n);
    }
    for (size_t i = 0; i < t.n_elems; i++)
        FUZZ_CHECK(tensor_get_bits(&t, i) == vals[i]);
    free(vals);
    tensor_free(&t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);

    check_kind(path, data, size, true);
    check_kind(path, data, size, false);
    return 0;
}
