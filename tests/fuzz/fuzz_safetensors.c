/* fuzz_safetensors -- fuzz target: the .safetensors reader on arbitrary
   bytes */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <string.h>

#include "tests/fuzz/fuzz_common.h"

/*
 * Each input is a whole file.  Read with safetensors_read_all, it must give
 * either an error (a well-formed report, nothing returned, and the same
 * report from the one-tensor reader, which checks the same header) or a
 * file whose tensors are well formed, have distinct names, and whose bytes
 * laid end to end in the order returned are exactly the file's data region
 * (the reader promises exact coverage and offset order).  Then each tensor
 * (the first MAX_KEYED) is read again alone by name, through
 * safetensors_read and tensor_file_read, with the same result; without a
 * name, a file of one tensor gives it and other files give E_KEY.  Read
 * again as BF16, the file succeeds exactly when every tensor is BF16 or
 * U16, with the same bytes.
 */

/* Tensors read again one at a time (each read parses the whole header). */
#define MAX_KEYED 8
/* Names compared pairwise for distinctness. */
#define MAX_NAMES 64

static void
check_file(const tensor_file *f, const uint8_t *data, size_t size)
{
    uint64_t hlen, start, pos;

    FUZZ_CHECK(size >= 8);
    hlen = fuzz_load_le(data, 8);
    FUZZ_CHECK(hlen <= size - 8);
    start = 8 + hlen;
    pos = start;
    FUZZ_CHECK(f->strings != NULL);
    FUZZ_CHECK(f->n_tensors == 0 || f->tensors != NULL);
    FUZZ_CHECK(f->n_meta == 0 || f->meta != NULL);
    for (size_t i = 0; i < f->n_tensors; i++) {
        const tensor_named *tn = &f->tensors[i];
        FUZZ_CHECK(tn->name != NULL);
        FUZZ_CHECK(strcmp(tn->name, "__metadata__") != 0);
        fuzz_check_tensor(&tn->tensor);
        FUZZ_CHECK(tn->tensor.n_bytes <= size - pos);
        FUZZ_CHECK(tn->tensor.n_bytes == 0
                   || memcmp(tn->tensor.data, data + pos, tn->tensor.n_bytes)
                          == 0);
        pos += tn->tensor.n_bytes;
        for (size_t j = 0; j < i && i < MAX_NAMES; j++)
            FUZZ_CHECK(strcmp(f->tensors[j].name, tn->name) != 0);
    }
    FUZZ_CHECK(pos == size);
    for (size_t i = 0; i < f->n_meta; i++) {
        FUZZ_CHECK(f->meta[i].key != NULL);
        FUZZ_CHECK(f->meta[i].value != NULL);
        for (size_t j = 0; j < i && i < MAX_NAMES; j++)
            FUZZ_CHECK(strcmp(f->meta[j].key, f->meta[i].key) != 0);
    }
}

/* The file read again tensor by tensor. */
static void
check_keyed(const char *path, const tensor_file *f)
{
    tensor t = TENSOR_INIT;
    tensor_error err;
    int rc;

    for (size_t i = 0; i < f->n_tensors && i < MAX_KEYED; i++) {
        const tensor_named *tn = &f->tensors[i];
        rc = safetensors_read(path, tn->name, TENSOR_ANY, &t, &err);
        FUZZ_CHECK(rc == TENSOR_OK);
        FUZZ_CHECK(err.code == TENSOR_OK && err.message[0] == '\0');
        FUZZ_CHECK(fuzz_same_tensor(&t, &tn->tensor));
        tensor_free(&t);
        rc = tensor_file_read(path, tn->name, TENSOR_ANY, &t, &err);
        FUZZ_CHECK(rc == TENSOR_OK);
        FUZZ_CHECK(fuzz_same_tensor(&t, &tn->tensor));
        tensor_free(&t);
    }
    rc = safetensors_read(path, NULL, TENSOR_ANY, &t, &err);
    if (f->n_tensors == 1) {
        FUZZ_CHECK(rc == TENSOR_OK);
        FUZZ_CHECK(fuzz_same_tensor(&t, &f->tensors[0].tensor));
        tensor_free(&t);
    } else {
        FUZZ_CHECK(rc == TENSOR_E_KEY);
        fuzz_check_error(rc, &err, path);
        fuzz_check_empty(&t);
    }
    /* a name that no tensor has (names are JSON strings: no NUL, so a
       name of 300 bytes of 0x01 is possible but not with this prefix) */
    rc =
        safetensors_read(path, "\x01no such tensor\x01", TENSOR_ANY, &t, &err);
    if (rc == TENSOR_OK) {
        bool found = false;
        for (size_t i = 0; i < f->n_tensors; i++)
            found =
                found
                || strcmp(f->tensors[i].name, "\x01no such tensor\x01") == 0;
        FUZZ_CHECK(found);
        tensor_free(&t);
    } else {
        FUZZ_CHECK(rc == TENSOR_E_KEY);
        fuzz_check_error(rc, &err, path);
        fuzz_check_empty(&t);
    }
}

/* The file read again as BF16. */
static void
check_bf16(const char *path, const tensor_file *f)
{
    tensor_file b = TENSOR_FILE_INIT;
    tensor_error err;
    bool all = true;
    int rc;

    for (size_t i = 0; i < f->n_tensors; i++)
        all = all
              && tensor_dtype_readable_as(f->tensors[i].tensor.dtype,
                                          TENSOR_BF16);
    rc = safetensors_read_all(path, TENSOR_BF16, &b, &err);
    if (!all) {
        FUZZ_CHECK(rc == TENSOR_E_DTYPE);
        fuzz_check_error(rc, &err, path);
        FUZZ_CHECK(b.n_tensors == 0 && b.tensors == NULL);
        return;
    }
    FUZZ_CHECK(rc == TENSOR_OK);
    FUZZ_CHECK(b.n_tensors == f->n_tensors && b.n_meta == f->n_meta);
    for (size_t i = 0; i < b.n_tensors; i++) {
        tensor x = f->tensors[i].tensor;
        FUZZ_CHECK(strcmp(b.tensors[i].name, f->tensors[i].name) == 0);
        FUZZ_CHECK(b.tensors[i].tensor.dtype == TENSOR_BF16);
        x.dtype = TENSOR_BF16;
        FUZZ_CHECK(fuzz_same_tensor(&b.tensors[i].tensor, &x));
    }
    tensor_file_free(&b);
}

/* The listing of the file: the same header checks (a file that reads
   lists with the same tensors, in the same order; one that does not read
   fails the listing with the same message), and nothing read but the
   header. */
static void
check_list(const char *path, int rc_read, const tensor_error *err_read,
           const tensor_file *f, size_t size)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    tensor_error err;
    int rc = safetensors_list(path, &l, &err);

    FUZZ_CHECK(rc == rc_read);
    if (rc != TENSOR_OK) {
        FUZZ_CHECK(strcmp(err.message, err_read->message) == 0);
        FUZZ_CHECK(l.n_tensors == 0 && l.tensors == NULL && l.strings == NULL);
        return;
    }
    FUZZ_CHECK(l.kind == TENSOR_KIND_SAFETENSORS);
    FUZZ_CHECK(l.file_size == size);
    FUZZ_CHECK(l.n_tensors == f->n_tensors && l.n_meta == f->n_meta);
    for (size_t i = 0; i < l.n_tensors; i++) {
        const tensor_entry *e = &l.tensors[i];
        const tensor *t = &f->tensors[i].tensor;
        FUZZ_CHECK(strcmp(e->name, f->tensors[i].name) == 0);
        FUZZ_CHECK(e->dtype == t->dtype && e->ndim == t->ndim);
        FUZZ_CHECK(memcmp(e->shape, t->shape, sizeof e->shape) == 0);
        FUZZ_CHECK(e->n_elems == t->n_elems && e->n_bytes == t->n_bytes);
        FUZZ_CHECK(e->offset >= l.data_offset
                   && e->offset + e->n_bytes <= size);
    }
    for (size_t i = 0; i < l.n_meta; i++) {
        FUZZ_CHECK(strcmp(l.meta[i].key, f->meta[i].key) == 0);
        FUZZ_CHECK(strcmp(l.meta[i].value, f->meta[i].value) == 0);
    }
    tensor_listing_free(&l);
    FUZZ_CHECK(l.n_tensors == 0 && l.tensors == NULL && l.strings == NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    tensor_file f = TENSOR_FILE_INIT;
    tensor t = TENSOR_INIT;
    tensor_error err, err1;
    int rc, rc1;

    rc = safetensors_read_all(path, TENSOR_ANY, &f, &err);
    check_list(path, rc, &err, &f, size);
    if (rc != TENSOR_OK) {
        fuzz_check_error(rc, &err, path);
        FUZZ_CHECK(f.n_tensors == 0 && f.tensors == NULL && f.n_meta == 0
                   && f.meta == NULL && f.strings == NULL);
        /* the header is checked before a tensor is chosen: the same
           report (except an allocation failure, which none of these
           small inputs can cause) */
        rc1 = safetensors_read(path, NULL, TENSOR_ANY, &t, &err1);
        fuzz_check_error(rc1, &err1, path);
        FUZZ_CHECK(rc1 == rc);
        FUZZ_CHECK(strcmp(err1.message, err.message) == 0);
        fuzz_check_empty(&t);
        return 0;
    }
    FUZZ_CHECK(err.code == TENSOR_OK && err.message[0] == '\0');
    check_file(&f, data, size);
    check_keyed(path, &f);
    check_bf16(path, &f);
    tensor_file_free(&f);
    FUZZ_CHECK(f.n_tensors == 0 && f.tensors == NULL && f.strings == NULL);
    return 0;
}
