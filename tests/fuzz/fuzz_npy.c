/* fuzz_npy -- fuzz target: the .npy reader on arbitrary bytes */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <string.h>

#include "tests/fuzz/fuzz_common.h"

/*
 * Each input is a whole file.  npy_read must give either an error (a
 * well-formed report and an empty tensor) or a well-formed tensor whose
 * bytes are the file's last n_bytes bytes, after exactly the magic, the
 * version, the header length and the header that the prefix announces
 * (version 1: 10 bytes and a 2-byte length, versions 2 and 3: 12 bytes
 * and a 4-byte length), either as they are or with the bytes of every
 * element reversed (big-endian files).  tensor_file_read, which picks the
 * reader from the magic, gives the same result.  Read again as BF16 (and
 * as F8_E4M3): a file read as U16 (U8) succeeds with the same bytes, one
 * read as another type fails with E_DTYPE, and a file that failed with
 * another error still fails; a file that failed with E_DTYPE may succeed
 * (raw 'V2' and 'V1' elements need a dtype), and then holds the file's
 * bytes unchanged.
 */

/* The header length and the bytes before the header; false when the
   prefix is not complete. */
static bool
prefix_of(const uint8_t *data, size_t size, uint64_t *prefix, uint64_t *hlen)
{
    if (size < 10)
        return false;
    if (data[6] == 1) {
        *prefix = 10;
        *hlen = fuzz_load_le(data + 8, 2);
        return true;
    }
    if (size < 12)
        return false;
    *prefix = 12;
    *hlen = fuzz_load_le(data + 8, 4);
    return true;
}

/* T's bytes are DATA[OFF..OFF + n_bytes), each element as is when SWAP is
   false, reversed when true. */
static bool
bytes_match(const tensor *t, const uint8_t *data, bool swap)
{
    size_t es = tensor_dtype_size(t->dtype);

    for (size_t i = 0; i < t->n_bytes; i += es)
        for (size_t b = 0; b < es; b++)
            if (t->data[i + b] != data[i + (swap ? es - 1 - b : b)])
                return false;
    return true;
}

/* A second read asking for WANT, against the first result T (RC). */
static void
check_want(const char *path, tensor_dtype want, tensor_dtype raw, int rc,
           const tensor *t, const uint8_t *payload)
{
    tensor w = TENSOR_INIT;
    tensor_error err;
    int rcw = npy_read(path, want, &w, &err);

    if (rcw != TENSOR_OK) {
        fuzz_check_error(rcw, &err, path);
        fuzz_check_empty(&w);
        /* a readable file refused only for its dtype */
        if (rc == TENSOR_OK)
            FUZZ_CHECK(rcw == TENSOR_E_DTYPE
                       && !tensor_dtype_readable_as(t->dtype, want));
        return;
    }
    fuzz_check_tensor(&w);
    FUZZ_CHECK(w.dtype == want);
    if (rc == TENSOR_OK) {
        tensor x = *t;
        FUZZ_CHECK(tensor_dtype_readable_as(t->dtype, want));
        FUZZ_CHECK(t->dtype == raw);
        x.dtype = want;
        FUZZ_CHECK(fuzz_same_tensor(&w, &x));
    } else {
        /* raw bytes given a type: the file's bytes unchanged */
        FUZZ_CHECK(rc == TENSOR_E_DTYPE);
        FUZZ_CHECK(payload != NULL);
        FUZZ_CHECK(bytes_match(&w, payload, false));
    }
    tensor_free(&w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    tensor t = TENSOR_INIT, t2 = TENSOR_INIT;
    tensor_error err, err2;
    uint64_t prefix = 0, hlen = 0;
    const uint8_t *payload = NULL;
    int rc, rc2;

    rc = npy_read(path, TENSOR_ANY, &t, &err);
    if (rc != TENSOR_OK) {
        fuzz_check_error(rc, &err, path);
        fuzz_check_empty(&t);
    } else {
        size_t es;
        FUZZ_CHECK(err.code == TENSOR_OK && err.message[0] == '\0');
        fuzz_check_tensor(&t);
        FUZZ_CHECK(memcmp(data, "\x93NUMPY", 6) == 0);
        FUZZ_CHECK(data[6] >= 1 && data[6] <= 3 && data[7] == 0);
        FUZZ_CHECK(prefix_of(data, size, &prefix, &hlen));
        FUZZ_CHECK(prefix + hlen + t.n_bytes == size);
        payload = data + prefix + hlen;
        es = tensor_dtype_size(t.dtype);
        FUZZ_CHECK(bytes_match(&t, payload, false)
                   || (es > 1 && bytes_match(&t, payload, true)));
    }
    if (payload == NULL && prefix_of(data, size, &prefix, &hlen)
        && prefix + hlen <= size)
        payload = data + prefix + hlen;

    /* the listing: the same header checks but Fortran order and raw
       bytes, which it lists; for a file that reads, the same array */
    {
        tensor_listing l = TENSOR_LISTING_INIT;
        tensor_error errl;
        int rcl = npy_list(path, &l, &errl);
        if (rc == TENSOR_OK) {
            FUZZ_CHECK(rcl == TENSOR_OK);
            FUZZ_CHECK(l.kind == TENSOR_KIND_NPY && l.n_tensors == 1);
            FUZZ_CHECK(l.file_size == size && l.data_offset == prefix + hlen);
            FUZZ_CHECK(l.tensors[0].dtype == t.dtype);
            FUZZ_CHECK(l.tensors[0].ndim == t.ndim);
            FUZZ_CHECK(memcmp(l.tensors[0].shape, t.shape, sizeof t.shape)
                       == 0);
            FUZZ_CHECK(l.tensors[0].n_bytes == t.n_bytes);
        } else if (rcl == TENSOR_OK) {
            /* only what the listing lets pass */
            FUZZ_CHECK(rc == TENSOR_E_UNSUPPORTED || rc == TENSOR_E_DTYPE);
            FUZZ_CHECK(l.npy_fortran || l.tensors[0].dtype == TENSOR_ANY);
        } else {
            fuzz_check_error(rcl, &errl, path);
        }
        tensor_listing_free(&l);
    }

    /* the reader chosen from the magic */
    if (size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) {
        rc2 = tensor_file_read(path, NULL, TENSOR_ANY, &t2, &err2);
        FUZZ_CHECK(rc2 == rc);
        if (rc2 == TENSOR_OK)
            FUZZ_CHECK(fuzz_same_tensor(&t2, &t));
        else
            FUZZ_CHECK(strcmp(err2.message, err.message) == 0);
        tensor_free(&t2);
    }

    if (rc == TENSOR_OK || payload != NULL) {
        check_want(path, TENSOR_BF16, TENSOR_U16, rc, &t, payload);
        check_want(path, TENSOR_F8_E4M3, TENSOR_U8, rc, &t, payload);
    } else {
        FUZZ_CHECK(npy_read(path, TENSOR_BF16, &t2, &err2) != TENSOR_OK);
        fuzz_check_empty(&t2);
    }
    tensor_free(&t);
    return 0;
}
