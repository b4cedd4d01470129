/* test_tensor_io.c -- tensors and tensor files: dtypes, element access,
   .safetensors and .npy read from hand-assembled bytes and written to
   exact bytes, round trips, atomic and refusing output, the committed
   fixtures, the tensor-core vector text, and every file of the malformed
   corpus tests/data/bad with its expected status and message */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/tensor.h"
#include "softfloat/softfloat.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

#define BAD_DIR SRCDIR "/tests/data/bad"
#define FIXTURE_DIR SRCDIR "/tests/data/tensors"

/*----------------------------------------------------------------------------
 * Helpers: a fresh temporary folder per test, whole-file I/O.
 *--------------------------------------------------------------------------*/
static char tmp_dir[512];
static char path_buf[4][1024];
static unsigned path_next;

static void
tmp_setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/test_tensor_io.XXXXXX",
             t != NULL && t[0] != '\0' ? t : "/tmp");
    ck_assert_msg(mkdtemp(tmp_dir) != NULL, "mkdtemp: %s", strerror(errno));
}

static void
tmp_teardown(void)
{
    DIR *d = opendir(tmp_dir);
    struct dirent *e;
    char p[1100];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", tmp_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmp_dir);
}

/* TMP_DIR/NAME, in one of four rotating buffers. */
static const char *
tpath(const char *name)
{
    char *b = path_buf[path_next++ % 4];
    snprintf(b, sizeof path_buf[0], "%s/%s", tmp_dir, name);
    return b;
}

static void
write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static unsigned char *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    size_t cap = 0, len = 0, r;
    ck_assert_msg(f != NULL, "cannot open %s", path);
    do {
        if (len == cap) {
            cap = cap * 2 + 4096;
            b = realloc(b, cap);
            ck_assert_ptr_nonnull(b);
        }
        r = fread(b + len, 1, cap - len, f);
        len += r;
    } while (r > 0);
    fclose(f);
    *n = len;
    return b;
}

static void
assert_file_bytes(const char *path, const void *want, size_t n)
{
    size_t got_n;
    unsigned char *got = slurp(path, &got_n);
    ck_assert_msg(got_n == n, "%s: %zu bytes, expected %zu", path, got_n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == ((const unsigned char *)want)[i],
                      "%s: byte %zu is %02x, expected %02x", path, i, got[i],
                      ((const unsigned char *)want)[i]);
    free(got);
}

/* Entries of TMP_DIR. */
static unsigned
tmp_count(void)
{
    DIR *d = opendir(tmp_dir);
    struct dirent *e;
    unsigned n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static bool
exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void
assert_error(int rc, const tensor_error *err, int code, const char *path,
             const char *sub)
{
    ck_assert_msg(rc == code, "status %s (%s), expected %s",
                  tensor_status_name(rc), err->message,
                  tensor_status_name(code));
    ck_assert_int_eq(err->code, code);
    if (path != NULL)
        ck_assert_msg(
            strncmp(err->message, path, strlen(path)) == 0
                && strncmp(err->message + strlen(path), ": ", 2) == 0,
            "message \"%s\" does not begin with \"%s: \"", err->message, path);
    ck_assert_msg(strstr(err->message, sub) != NULL,
                  "message \"%s\" lacks \"%s\"", err->message, sub);
}

static void
assert_empty(const tensor *t)
{
    ck_assert_ptr_null(t->data);
    ck_assert_uint_eq(t->n_elems, 0);
    ck_assert_uint_eq(t->n_bytes, 0);
    ck_assert_uint_eq(t->ndim, 0);
}

static void
assert_shape(const tensor *t, tensor_dtype dt, unsigned ndim,
             const uint64_t *shape)
{
    uint64_t n = 1;
    ck_assert_int_eq(t->dtype, dt);
    ck_assert_uint_eq(t->ndim, ndim);
    for (unsigned i = 0; i < ndim; i++) {
        ck_assert_uint_eq(t->shape[i], shape[i]);
        n *= shape[i];
    }
    ck_assert_uint_eq(t->n_elems, n);
    ck_assert_uint_eq(t->n_bytes, n * tensor_dtype_size(dt));
}

static void
assert_bits(const tensor *t, const uint64_t *bits, size_t n)
{
    ck_assert_uint_eq(t->n_elems, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(tensor_get_bits(t, i) == bits[i],
                      "element %zu is %#llx, expected %#llx", i,
                      (unsigned long long)tensor_get_bits(t, i),
                      (unsigned long long)bits[i]);
}

/* A tensor of DT and SHAPE holding BITS. */
static tensor
make(tensor_dtype dt, unsigned ndim, const uint64_t *shape,
     const uint64_t *bits)
{
    tensor t = TENSOR_INIT;
    tensor_error err;
    ck_assert_int_eq(tensor_alloc(&t, dt, ndim, shape, &err), TENSOR_OK);
    for (uint64_t i = 0; i < t.n_elems; i++)
        tensor_set_bits(&t, i, bits[i]);
    return t;
}

/*----------------------------------------------------------------------------
 * dtypes
 *--------------------------------------------------------------------------*/
START_TEST(test_dtype_table)
{
    static const struct
    {
        tensor_dtype dt;
        const char *name;
        size_t size;
        const sf_format *fmt;
    } rows[] = {
        {TENSOR_BF16, "BF16", 2, &sf_format_bf16},
        {TENSOR_F16, "F16", 2, &sf_format_f16},
        {TENSOR_F32, "F32", 4, &sf_format_f32},
        {TENSOR_F64, "F64", 8, &sf_format_f64},
        {TENSOR_I32, "I32", 4, NULL},
        {TENSOR_U16, "U16", 2, NULL},
        {TENSOR_U32, "U32", 4, NULL},
        {TENSOR_F8_E4M3, "F8_E4M3", 1, &sf_format_e4m3},
        {TENSOR_F8_E5M2, "F8_E5M2", 1, &sf_format_e5m2},
        {TENSOR_U8, "U8", 1, NULL},
        {TENSOR_I8, "I8", 1, NULL},
        {TENSOR_I16, "I16", 2, NULL},
        {TENSOR_I64, "I64", 8, NULL},
        {TENSOR_U64, "U64", 8, NULL},
        {TENSOR_BOOL, "BOOL", 1, NULL},
    };
    tensor_dtype dt;

    ck_assert_uint_eq(sizeof rows / sizeof rows[0], TENSOR_N_DTYPES - 1);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ck_assert_str_eq(tensor_dtype_name(rows[i].dt), rows[i].name);
        ck_assert_uint_eq(tensor_dtype_size(rows[i].dt), rows[i].size);
        ck_assert_ptr_eq(tensor_dtype_format(rows[i].dt), rows[i].fmt);
        if (rows[i].fmt != NULL)
            ck_assert_int_eq(tensor_dtype_from_format(rows[i].fmt),
                             rows[i].dt);
        dt = TENSOR_ANY;
        ck_assert(tensor_dtype_parse(rows[i].name, &dt));
        ck_assert_int_eq(dt, rows[i].dt);
    }
    ck_assert_str_eq(tensor_dtype_name(TENSOR_ANY), "ANY");
    ck_assert_uint_eq(tensor_dtype_size(TENSOR_ANY), 0);
    ck_assert_ptr_null(tensor_dtype_name((tensor_dtype)TENSOR_N_DTYPES));
    ck_assert_ptr_null(tensor_dtype_name((tensor_dtype)-1));
    ck_assert_uint_eq(tensor_dtype_size((tensor_dtype)99), 0);
    ck_assert_int_eq(tensor_dtype_from_format(&sf_format_tf32), TENSOR_F32);
    ck_assert_int_eq(tensor_dtype_from_format(NULL), TENSOR_ANY);
    ck_assert_ptr_null(tensor_dtype_format(TENSOR_ANY));
}
END_TEST

START_TEST(test_dtype_parse)
{
    static const struct
    {
        const char *s;
        tensor_dtype dt;
    } ok[] = {
        {"bf16", TENSOR_BF16},    {"Bf16", TENSOR_BF16},
        {"fp16", TENSOR_F16},     {"f32", TENSOR_F32},
        {"FP32", TENSOR_F32},     {"fp64", TENSOR_F64},
        {"e4m3", TENSOR_F8_E4M3}, {"f8_e5m2", TENSOR_F8_E5M2},
        {"E5M2", TENSOR_F8_E5M2}, {"any", TENSOR_ANY},
        {"u16", TENSOR_U16},      {"bool", TENSOR_BOOL},
    };
    static const char *const bad[] = {"",   "bf",   "bf16 ",
                                      "f8", "tf32", "float32"};
    tensor_dtype dt;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        dt = (tensor_dtype)99;
        ck_assert_msg(tensor_dtype_parse(ok[i].s, &dt), "%s", ok[i].s);
        ck_assert_int_eq(dt, ok[i].dt);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt = TENSOR_U8;
        ck_assert_msg(!tensor_dtype_parse(bad[i], &dt), "%s", bad[i]);
        ck_assert_int_eq(dt, TENSOR_U8);
    }
    ck_assert(!tensor_dtype_parse(NULL, &dt));
}
END_TEST

START_TEST(test_readable_as)
{
    ck_assert(tensor_dtype_readable_as(TENSOR_F32, TENSOR_ANY));
    ck_assert(tensor_dtype_readable_as(TENSOR_F32, TENSOR_F32));
    ck_assert(!tensor_dtype_readable_as(TENSOR_F32, TENSOR_F64));
    ck_assert(!tensor_dtype_readable_as(TENSOR_F32, TENSOR_U32));
    ck_assert(tensor_dtype_readable_as(TENSOR_U16, TENSOR_BF16));
    ck_assert(tensor_dtype_readable_as(TENSOR_U16, TENSOR_F16));
    ck_assert(!tensor_dtype_readable_as(TENSOR_U16, TENSOR_I16));
    ck_assert(!tensor_dtype_readable_as(TENSOR_BF16, TENSOR_U16));
    ck_assert(!tensor_dtype_readable_as(TENSOR_F16, TENSOR_BF16));
    ck_assert(tensor_dtype_readable_as(TENSOR_U8, TENSOR_F8_E4M3));
    ck_assert(tensor_dtype_readable_as(TENSOR_U8, TENSOR_F8_E5M2));
    ck_assert(!tensor_dtype_readable_as(TENSOR_U8, TENSOR_BOOL));
    ck_assert(!tensor_dtype_readable_as(TENSOR_ANY, TENSOR_ANY));
    ck_assert(!tensor_dtype_readable_as(TENSOR_F32, (tensor_dtype)77));
}
END_TEST

START_TEST(test_status_names)
{
    static const char *const names[] = {
        "ok",    "io",     "format", "unsupported", "limit",
        "nomem", "exists", "key",    "dtype",       "arg",
    };
    for (int i = 0; i < TENSOR_N_STATUS; i++)
        ck_assert_str_eq(tensor_status_name(i), names[i]);
    ck_assert_int_eq(TENSOR_E_ARG, TENSOR_N_STATUS - 1);
    ck_assert_ptr_null(tensor_status_name(-1));
    ck_assert_ptr_null(tensor_status_name(TENSOR_N_STATUS));
}
END_TEST

/*----------------------------------------------------------------------------
 * tensors
 *--------------------------------------------------------------------------*/
START_TEST(test_tensor_alloc_access)
{
    static const uint64_t shape[2] = {2, 3};
    static const uint64_t idx[2] = {1, 2}, bad_idx[2] = {2, 0};
    tensor t = TENSOR_INIT;
    tensor_error err;
    uint64_t flat = 99;

    ck_assert_int_eq(tensor_alloc(&t, TENSOR_F32, 2, shape, &err), TENSOR_OK);
    ck_assert_int_eq(err.code, TENSOR_OK);
    ck_assert_str_eq(err.message, "");
    assert_shape(&t, TENSOR_F32, 2, shape);
    ck_assert_uint_eq(t.shape[2], 0);
    for (size_t i = 0; i < t.n_bytes; i++)
        ck_assert_uint_eq(t.data[i], 0);
    /* little-endian storage whatever the host */
    tensor_set_bits(&t, 1, 0x3fc00001u);
    ck_assert_uint_eq(t.data[4], 0x01);
    ck_assert_uint_eq(t.data[5], 0x00);
    ck_assert_uint_eq(t.data[6], 0xc0);
    ck_assert_uint_eq(t.data[7], 0x3f);
    ck_assert_uint_eq(tensor_get_bits(&t, 1), 0x3fc00001u);
    /* the high bits of a wider value are dropped */
    tensor_set_bits(&t, 5, 0xffffffff80000000u);
    ck_assert_uint_eq(tensor_get_bits(&t, 5), 0x80000000u);
    /* out of range: 0, and no write */
    ck_assert_uint_eq(tensor_get_bits(&t, 6), 0);
    tensor_set_bits(&t, 6, 1);
    ck_assert(tensor_flat_index(&t, idx, &flat));
    ck_assert_uint_eq(flat, 5);
    ck_assert(!tensor_flat_index(&t, bad_idx, &flat));
    ck_assert_uint_eq(flat, 5);
    tensor_free(&t);
    assert_empty(&t);
    tensor_free(&t);
    tensor_free(NULL);
}
END_TEST

START_TEST(test_tensor_scalar_and_empty)
{
    static const uint64_t zero[2] = {0, 5};
    tensor t = TENSOR_INIT;
    uint64_t flat = 7;

    ck_assert_int_eq(tensor_alloc(&t, TENSOR_I64, 0, NULL, NULL), TENSOR_OK);
    ck_assert_uint_eq(t.n_elems, 1);
    ck_assert_uint_eq(t.n_bytes, 8);
    tensor_set_bits(&t, 0, 0x8000000000000001u);
    ck_assert_uint_eq(tensor_get_bits(&t, 0), 0x8000000000000001u);
    ck_assert(tensor_flat_index(&t, NULL, &flat));
    ck_assert_uint_eq(flat, 0);
    tensor_free(&t);

    ck_assert_int_eq(tensor_alloc(&t, TENSOR_F16, 2, zero, NULL), TENSOR_OK);
    ck_assert_uint_eq(t.n_elems, 0);
    ck_assert_uint_eq(t.n_bytes, 0);
    ck_assert_ptr_null(t.data);
    ck_assert_uint_eq(t.shape[1], 5);
    ck_assert_uint_eq(tensor_get_bits(&t, 0), 0);
    tensor_free(&t);
}
END_TEST

START_TEST(test_tensor_alloc_errors)
{
    static const uint64_t big[3] = {1u << 20, 1u << 20, 1u << 10};
    static const uint64_t edge[1] = {(uint64_t)1 << 38};
    static const uint64_t wrap[3] = {(uint64_t)1 << 32, (uint64_t)1 << 32,
                                     (uint64_t)1 << 32};
    static const uint64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    tensor t = TENSOR_INIT;
    tensor_error err;

    /* 2^40 elements of 4 bytes */
    assert_error(tensor_alloc(&t, TENSOR_F32, 3, big, &err), &err,
                 TENSOR_E_LIMIT, NULL,
                 "shape: [1048576, 1048576, 1024] of F32 needs more than "
                 "2^40 bytes");
    assert_empty(&t);
    /* 2^38 elements of 8 bytes: 2^41 bytes, refused before any malloc */
    assert_error(tensor_alloc(&t, TENSOR_F64, 1, edge, &err), &err,
                 TENSOR_E_LIMIT, NULL, "more than 2^40 bytes");
    /* a product that wraps to 0 in 64 bits */
    assert_error(tensor_alloc(&t, TENSOR_U8, 3, wrap, &err), &err,
                 TENSOR_E_LIMIT, NULL, "needs more than 2^40 bytes");
    assert_error(tensor_alloc(&t, TENSOR_U8, 9, nine, &err), &err,
                 TENSOR_E_UNSUPPORTED, NULL,
                 "shape: 9 dimensions, at most 8 are supported");
    assert_error(tensor_alloc(&t, TENSOR_ANY, 0, NULL, &err), &err,
                 TENSOR_E_ARG, NULL, "dtype: invalid dtype 0");
    assert_error(tensor_alloc(&t, TENSOR_U8, 1, NULL, &err), &err,
                 TENSOR_E_ARG, NULL, "shape: NULL shape");
    assert_empty(&t);
}
END_TEST

/*----------------------------------------------------------------------------
 * .safetensors
 *--------------------------------------------------------------------------*/

/* Written by hand: a header of 140 bytes (metadata, then tensor "b" before
   "a" in the header although "a" comes first in the data), a = BF16 [2]
   {1, -2}, b = F32 [2] {1.5, -0}. */
static const unsigned char st_hand[] =
    "\x8c\x00\x00\x00\x00\x00\x00\x00"
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]},"
    "\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}"
    "\x80\x3f\x00\xc0"
    "\x00\x00\xc0\x3f\x00\x00\x00\x80";

START_TEST(test_st_read_hand)
{
    static const uint64_t s2[1] = {2};
    static const uint64_t a_bits[2] = {0x3f80, 0xc000};
    static const uint64_t b_bits[2] = {0x3fc00000, 0x80000000};
    const char *p = tpath("hand.safetensors");
    tensor_file f = TENSOR_FILE_INIT;
    tensor t = TENSOR_INIT;
    tensor_error err;

    write_bytes(p, st_hand, sizeof st_hand - 1);
    ck_assert_int_eq(safetensors_read_all(p, TENSOR_ANY, &f, &err), TENSOR_OK);
    ck_assert_int_eq(err.code, TENSOR_OK);
    ck_assert_uint_eq(f.n_tensors, 2);
    ck_assert_str_eq(f.tensors[0].name, "a");
    ck_assert_str_eq(f.tensors[1].name, "b");
    assert_shape(&f.tensors[0].tensor, TENSOR_BF16, 1, s2);
    assert_bits(&f.tensors[0].tensor, a_bits, 2);
    assert_shape(&f.tensors[1].tensor, TENSOR_F32, 1, s2);
    assert_bits(&f.tensors[1].tensor, b_bits, 2);
    ck_assert_uint_eq(f.n_meta, 1);
    ck_assert_str_eq(f.meta[0].key, "format");
    ck_assert_str_eq(f.meta[0].value, "pt");
    tensor_file_free(&f);
    ck_assert_uint_eq(f.n_tensors, 0);
    ck_assert_ptr_null(f.tensors);
    tensor_file_free(NULL);

    ck_assert_int_eq(safetensors_read(p, "b", TENSOR_ANY, &t, &err),
                     TENSOR_OK);
    assert_bits(&t, b_bits, 2);
    tensor_free(&t);
    ck_assert_int_eq(tensor_file_read(p, "a", TENSOR_BF16, &t, &err),
                     TENSOR_OK);
    assert_bits(&t, a_bits, 2);
    tensor_free(&t);

    assert_error(safetensors_read(p, NULL, TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_KEY, p, "the file holds 2 tensors (a, b); name one");
    assert_empty(&t);
    assert_error(safetensors_read(p, "c", TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_KEY, p,
                 "no tensor \"c\" in the file; it holds a, b");
    assert_error(safetensors_read(p, "B", TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_KEY, p,
                 "no tensor \"B\" in the file; it holds a, b (names are "
                 "case-sensitive: \"b\")");
    assert_error(tensor_file_read(p, "b", TENSOR_BF16, &t, &err), &err,
                 TENSOR_E_DTYPE, p,
                 "tensor \"b\" dtype: the file holds F32, expected BF16");
    assert_empty(&t);
    assert_error(safetensors_read_all(p, TENSOR_F32, &f, &err), &err,
                 TENSOR_E_DTYPE, p,
                 "tensor \"a\" dtype: the file holds BF16, expected F32");
    ck_assert_uint_eq(f.n_tensors, 0);
}
END_TEST

/* What safetensors_write must produce for write_list below: the header
   (132 bytes of JSON and 4 spaces: 136 = 0x88), then w and x. */
static const unsigned char st_expected[] =
    "\x88\x00\x00\x00\x00\x00\x00\x00"
    "{\"__metadata__\":{\"k\":\"v\"},"
    "\"w\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
    "\"x\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[4,8]}}"
    "    "
    "\x80\x3f\x00\xc0"
    "\x00\x00\xc0\x3f";

START_TEST(test_st_write_exact)
{
    static const uint64_t s2[1] = {2};
    static const uint64_t w_bits[2] = {0x3f80, 0xc000};
    static const uint64_t x_bits[1] = {0x3fc00000};
    const char *p = tpath("out.safetensors");
    tensor_named list[2];
    tensor_meta meta[1] = {{"k", "v"}};
    tensor_error err;

    list[0].name = "w";
    list[0].tensor = make(TENSOR_BF16, 1, s2, w_bits);
    list[1].name = "x";
    list[1].tensor = make(TENSOR_F32, 0, NULL, x_bits);
    ck_assert_int_eq(safetensors_write(p, list, 2, meta, 1, false, &err),
                     TENSOR_OK);
    ck_assert_int_eq(err.code, TENSOR_OK);
    assert_file_bytes(p, st_expected, sizeof st_expected - 1);
    ck_assert_uint_eq(tmp_count(), 1);
    tensor_free(&list[0].tensor);
    tensor_free(&list[1].tensor);
}
END_TEST

START_TEST(test_st_write_no_tensors)
{
    /* "{}" and 6 spaces: the data region is empty */
    static const unsigned char want[] = "\x08\0\0\0\0\0\0\0{}      ";
    const char *p = tpath("none.safetensors");
    tensor_file f = TENSOR_FILE_INIT;
    tensor t = TENSOR_INIT;
    tensor_error err;

    ck_assert_int_eq(safetensors_write(p, NULL, 0, NULL, 0, false, &err),
                     TENSOR_OK);
    assert_file_bytes(p, want, sizeof want - 1);
    ck_assert_int_eq(safetensors_read_all(p, TENSOR_ANY, &f, &err), TENSOR_OK);
    ck_assert_uint_eq(f.n_tensors, 0);
    ck_assert_uint_eq(f.n_meta, 0);
    tensor_file_free(&f);
    assert_error(safetensors_read(p, NULL, TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_KEY, p, "the file holds no tensors");
}
END_TEST

/* Every dtype, several shapes, one file; read back bit for bit. */
START_TEST(test_st_round_trip)
{
    static const uint64_t shapes[4][3] = {
        {3, 2, 0}, {5, 0, 0}, {0, 3, 0}, {1, 2, 3}};
    static const unsigned ndims[4] = {2, 1, 2, 3};
    const char *p = tpath("all.safetensors");
    tensor_named list[TENSOR_N_DTYPES - 1];
    char names[TENSOR_N_DTYPES][16];
    tensor_meta meta[3] = {{"z", "last key first"},
                           {"a", "caf\xc3\xa9 \xe2\x82\xac"},
                           {"empty", ""}};
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;
    uint64_t x = 0x0123456789abcdefu;
    size_t n = 0;

    for (int d = 1; d < TENSOR_N_DTYPES; d++, n++) {
        uint64_t bits[6];
        unsigned s = (unsigned)d % 4;
        for (int i = 0; i < 6; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            bits[i] = x;
        }
        snprintf(names[d], sizeof names[d], "t%02d_%s", 20 - d,
                 tensor_dtype_name((tensor_dtype)d));
        list[n].name = names[d];
        list[n].tensor = make((tensor_dtype)d, ndims[s], shapes[s], bits);
    }
    /* a name that JSON must escape */
    list[2].name = "w\"e/i\\rd\t\xc3\xa9 __metadata__";
    ck_assert_int_eq(safetensors_write(p, list, n, meta, 3, false, &err),
                     TENSOR_OK);
    ck_assert_int_eq(safetensors_read_all(p, TENSOR_ANY, &f, &err), TENSOR_OK);
    ck_assert_uint_eq(f.n_tensors, n);
    /* data order is list order; zero-byte tensors sort by name among
       tensors at the same offset */
    for (size_t i = 0; i < n; i++) {
        const tensor *a = NULL, *b = NULL;
        for (size_t j = 0; j < n; j++)
            if (strcmp(f.tensors[j].name, list[i].name) == 0)
                b = &f.tensors[j].tensor;
        a = &list[i].tensor;
        ck_assert_msg(b != NULL, "%s missing", list[i].name);
        assert_shape(b, a->dtype, a->ndim, a->shape);
        if (a->n_bytes > 0)
            ck_assert_mem_eq(a->data, b->data, a->n_bytes);
        else
            ck_assert_ptr_null(b->data);
    }
    ck_assert_uint_eq(f.n_meta, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_str_eq(f.meta[i].key, meta[i].key);
        ck_assert_str_eq(f.meta[i].value, meta[i].value);
    }
    tensor_file_free(&f);
    for (size_t i = 0; i < n; i++)
        tensor_free(&list[i].tensor);
}
END_TEST

START_TEST(test_st_exists_and_force)
{
    static const uint64_t s1[1] = {1};
    static const uint64_t one[1] = {0x3f800000}, two[1] = {0x40000000};
    const char *p = tpath("w.safetensors");
    tensor_named list[1];
    tensor_error err;
    tensor t = TENSOR_INIT;
    unsigned char *before, *after;
    size_t nb, na;

    list[0].name = "w";
    list[0].tensor = make(TENSOR_F32, 1, s1, one);
    ck_assert_int_eq(safetensors_write(p, list, 1, NULL, 0, false, &err),
                     TENSOR_OK);
    before = slurp(p, &nb);
    tensor_set_bits(&list[0].tensor, 0, two[0]);
    assert_error(safetensors_write(p, list, 1, NULL, 0, false, &err), &err,
                 TENSOR_E_EXISTS, p,
                 "the file exists (give force to replace it)");
    after = slurp(p, &na);
    ck_assert_uint_eq(na, nb);
    ck_assert_mem_eq(after, before, nb);
    free(after);
    ck_assert_uint_eq(tmp_count(), 1);
    ck_assert_int_eq(safetensors_write(p, list, 1, NULL, 0, true, &err),
                     TENSOR_OK);
    ck_assert_uint_eq(tmp_count(), 1);
    ck_assert_int_eq(safetensors_read(p, "w", TENSOR_F32, &t, &err),
                     TENSOR_OK);
    assert_bits(&t, two, 1);
    tensor_free(&t);
    free(before);
    tensor_free(&list[0].tensor);
}
END_TEST

/* Refused lists leave nothing behind. */
START_TEST(test_st_write_errors)
{
    static const uint64_t s1[1] = {1};
    static const uint64_t one[1] = {1};
    const char *p = tpath("bad.safetensors");
    tensor_named list[2];
    tensor_meta meta[2] = {{"k", "v"}, {"k", "w"}};
    tensor_error err;

    list[0].name = "w";
    list[0].tensor = make(TENSOR_U8, 1, s1, one);
    list[1] = list[0];
    assert_error(safetensors_write(p, list, 2, NULL, 0, false, &err), &err,
                 TENSOR_E_ARG, p, "tensor \"w\": duplicate name");
    list[1].name = "__metadata__";
    assert_error(safetensors_write(p, list, 2, NULL, 0, false, &err), &err,
                 TENSOR_E_ARG, p,
                 "tensor 1 is named \"__metadata__\", which is reserved");
    list[1].name = "";
    assert_error(safetensors_write(p, list, 2, NULL, 0, false, &err), &err,
                 TENSOR_E_ARG, p, "tensor 1 has no name");
    list[1].name = "bad\xff";
    assert_error(safetensors_write(p, list, 2, NULL, 0, false, &err), &err,
                 TENSOR_E_ARG, p,
                 "tensor \"bad\\xff\": the name is not valid UTF-8");
    assert_error(safetensors_write(p, list, 1, meta, 2, false, &err), &err,
                 TENSOR_E_ARG, p, "__metadata__ \"k\": duplicate key");
    meta[1].key = "v";
    meta[1].value = "\xc3";
    assert_error(safetensors_write(p, list, 1, meta, 2, false, &err), &err,
                 TENSOR_E_ARG, p,
                 "__metadata__ \"v\": the value is not valid UTF-8");
    list[0].tensor.n_bytes = 2;
    assert_error(safetensors_write(p, list, 1, NULL, 0, false, &err), &err,
                 TENSOR_E_ARG, p,
                 "tensor \"w\": inconsistent tensor: shape [1] of U8");
    list[0].tensor.n_bytes = 1;
    ck_assert_uint_eq(tmp_count(), 0);
    assert_error(safetensors_write(tpath("no/such/dir.safetensors"), list, 1,
                                   NULL, 0, false, &err),
                 &err, TENSOR_E_IO, NULL, "cannot create a temporary file");
    ck_assert_uint_eq(tmp_count(), 0);
    tensor_free(&list[0].tensor);
}
END_TEST

/* A header length over 100000000 bytes is refused before it is read (the
   file is sparse). */
START_TEST(test_st_header_limit)
{
    const char *p = tpath("huge.safetensors");
    unsigned char len8[8] = {0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0};
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, len8, 8), 8);
    ck_assert_int_eq(ftruncate(fd, 100000100), 0);
    close(fd);
    assert_error(safetensors_read_all(p, TENSOR_ANY, &f, &err), &err,
                 TENSOR_E_LIMIT, p,
                 "header length: 100000001 bytes, more than the 100000000 "
                 "allowed");
}
END_TEST

/* A missing key in a file of many tensors: the message lists the first
   names and the count, and stays short. */
START_TEST(test_st_key_list_cut)
{
    const char *p = tpath("many.safetensors");
    static char names[200][8];
    tensor_named list[200];
    const char *msg, *tail = ", ... (200 in all)";
    tensor t = TENSOR_INIT;
    tensor_error err;
    uint64_t zero = 0;
    size_t len;

    for (int i = 0; i < 200; i++) {
        snprintf(names[i], sizeof names[i], "t%03d", i);
        list[i].name = names[i];
        ck_assert_int_eq(
            tensor_alloc(&list[i].tensor, TENSOR_F32, 1, &zero, NULL),
            TENSOR_OK);
    }
    ck_assert_int_eq(safetensors_write(p, list, 200, NULL, 0, false, &err),
                     TENSOR_OK);
    assert_error(safetensors_read(p, "x", TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_KEY, p,
                 "no tensor \"x\" in the file; it holds t000, t001, t002, ");
    msg = err.message;
    len = strlen(msg);
    ck_assert_msg(len < strlen(p) + 400, "message of %zu bytes: %s", len, msg);
    ck_assert_msg(len > strlen(tail)
                      && strcmp(msg + len - strlen(tail), tail) == 0,
                  "message does not end in '%s': %s", tail, msg);
    assert_error(safetensors_read(p, NULL, TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_KEY, p, "the file holds 200 tensors (t000, t001, ");
    ck_assert_msg(strstr(err.message, "... (200 in all)); name one") != NULL,
                  "%s", err.message);
}
END_TEST

START_TEST(test_read_dispatch)
{
    static const unsigned char npy_u8[] =
        "\x93NUMPY\x01\x00\x3a\x00"
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }\n"
        "\x38\xb8";
    static const uint64_t u8_bits[2] = {0x38, 0xb8};
    static const uint64_t a_bits[2] = {0x3f80, 0xc000};
    tensor t = TENSOR_INIT;
    tensor_error err;

    /* by content, whatever the name */
    write_bytes(tpath("st.bin"), st_hand, sizeof st_hand - 1);
    write_bytes(tpath("np.bin"), npy_u8, sizeof npy_u8 - 1);
    write_bytes(tpath("x.npy"), npy_u8, sizeof npy_u8 - 1);
    ck_assert_int_eq(
        tensor_file_read(tpath("st.bin"), "a", TENSOR_ANY, &t, &err),
        TENSOR_OK);
    assert_bits(&t, a_bits, 2);
    tensor_free(&t);
    ck_assert_int_eq(
        tensor_file_read(tpath("np.bin"), NULL, TENSOR_F8_E4M3, &t, &err),
        TENSOR_OK);
    ck_assert_int_eq(t.dtype, TENSOR_F8_E4M3);
    assert_bits(&t, u8_bits, 2);
    tensor_free(&t);
    ck_assert_int_eq(
        tensor_file_read(tpath("x.npy"), NULL, TENSOR_ANY, &t, &err),
        TENSOR_OK);
    ck_assert_int_eq(t.dtype, TENSOR_U8);
    tensor_free(&t);
    assert_error(tensor_file_read(tpath("x.npy"), "w", TENSOR_ANY, &t, &err),
                 &err, TENSOR_E_KEY, tpath("x.npy"),
                 "key \"w\" given, but a .npy file holds one unnamed array");
    /* the extension wins over the content */
    write_bytes(tpath("np.safetensors"), npy_u8, sizeof npy_u8 - 1);
    assert_error(
        tensor_file_read(tpath("np.safetensors"), NULL, TENSOR_ANY, &t, &err),
        &err, TENSOR_E_FORMAT, tpath("np.safetensors"),
        "not a .safetensors file (it looks like a .npy file;");
    /* and a safetensors file named .npy is not a .npy file */
    write_bytes(tpath("st.npy"), st_hand, sizeof st_hand - 1);
    assert_error(tensor_file_read(tpath("st.npy"), NULL, TENSOR_ANY, &t, &err),
                 &err, TENSOR_E_FORMAT, tpath("st.npy"),
                 "magic: expected \"\\x93NUMPY\" (not a .npy file; it looks "
                 "like a .safetensors file)");
    assert_error(
        tensor_file_read(tpath("missing.npy"), NULL, TENSOR_ANY, &t, &err),
        &err, TENSOR_E_IO, tpath("missing.npy"),
        "cannot open: No such file or directory");
    assert_error(tensor_file_read(tmp_dir, NULL, TENSOR_ANY, &t, &err), &err,
                 TENSOR_E_IO, tmp_dir, "not a regular file");
    assert_empty(&t);
}
END_TEST

/* A file written by another program: the GPU probe's committed dump.
   Its first tensor's bytes are compared with the raw file, located here
   from the 8-byte header length.  Absent, the test passes unchecked. */
START_TEST(test_st_foreign)
{
    const char *p = SRCDIR "/tests/data/gpu/mma_h200.safetensors";
    static const uint64_t s[2] = {36, 16};
    tensor_file f = TENSOR_FILE_INIT;
    tensor t = TENSOR_INIT;
    tensor_error err;
    unsigned char *raw;
    uint64_t hlen = 0;
    size_t n;
    bool gpu = false;

    if (!exists(p)) {
        fprintf(stderr, "test_st_foreign: %s not found, skipped\n", p);
        return;
    }
    ck_assert_msg(safetensors_read_all(p, TENSOR_ANY, &f, &err) == TENSOR_OK,
                  "%s", err.message);
    ck_assert_uint_ge(f.n_tensors, 7);
    for (size_t i = 0; i < f.n_meta; i++)
        gpu |= strcmp(f.meta[i].key, "gpu") == 0;
    ck_assert(gpu);
    tensor_file_free(&f);

    ck_assert_int_eq(
        safetensors_read(p, "bf16.selfcheck16.a", TENSOR_BF16, &t, &err),
        TENSOR_OK);
    assert_shape(&t, TENSOR_BF16, 2, s);
    raw = slurp(p, &n);
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | raw[i];
    ck_assert_uint_ge(n, 8 + hlen + t.n_bytes);
    ck_assert_mem_eq(t.data, raw + 8 + hlen, t.n_bytes);
    free(raw);
    tensor_free(&t);
}
END_TEST

/*----------------------------------------------------------------------------
 * .npy
 *--------------------------------------------------------------------------*/

/* What npy_write must produce for F32 [2, 3] = {0, 1, 2, 3, 4, 5}: 10 bytes
   of prefix, 59 of dict, 58 spaces and a newline (118 = 0x76), so the data
   starts at 128. */
static const unsigned char npy_expected[] =
    "\x93NUMPY\x01\x00\x76\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    "                                                          \n"
    "\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40"
    "\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40";
static const uint64_t f32_0to5[6] = {0,          0x3f800000, 0x40000000,
                                     0x40400000, 0x40800000, 0x40a00000};

START_TEST(test_npy_write_exact)
{
    static const uint64_t s23[2] = {2, 3};
    const char *p = tpath("a.npy");
    tensor t = make(TENSOR_F32, 2, s23, f32_0to5);
    tensor u = TENSOR_INIT;
    tensor_error err;

    ck_assert_uint_eq(sizeof npy_expected - 1, 128 + 24);
    ck_assert_int_eq(npy_write(p, &t, false, &err), TENSOR_OK);
    assert_file_bytes(p, npy_expected, sizeof npy_expected - 1);
    ck_assert_int_eq(npy_read(p, TENSOR_ANY, &u, &err), TENSOR_OK);
    assert_shape(&u, TENSOR_F32, 2, s23);
    assert_bits(&u, f32_0to5, 6);
    tensor_free(&u);
    tensor_free(&t);
}
END_TEST

typedef struct
{
    const char *what;
    const void *bytes;
    size_t len;
    tensor_dtype want;
    tensor_dtype dtype;
    unsigned ndim;
    uint64_t shape[3];
    uint64_t bits[6];
} npy_case;

#define NPY_BYTES(s) s, sizeof(s) - 1

/* Written by hand, none of them by npy_write. */
static const npy_case npy_cases[] = {
    {"1.0 <f4 (2, 3)",
     NPY_BYTES(npy_expected),
     TENSOR_ANY,
     TENSOR_F32,
     2,
     {2, 3},
     {0, 0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000}},
    {"2.0 >f4, big-endian",
     NPY_BYTES("\x93NUMPY\x02\x00\x3a\x00\x00\x00"
               "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n"
               "\x3f\xc0\x00\x00\x80\x00\x00\x00"),
     TENSOR_ANY,
     TENSOR_F32,
     1,
     {2},
     {0x3fc00000, 0x80000000}},
    {"3.0 <u2 as BF16",
     NPY_BYTES("\x93NUMPY\x03\x00\x3a\x00\x00\x00"
               "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }\n"
               "\x80\x3f\x49\x40\x80\xff"),
     TENSOR_BF16,
     TENSOR_BF16,
     1,
     {3},
     {0x3f80, 0x4049, 0xff80}},
    {"3.0 <u2 as U16",
     NPY_BYTES("\x93NUMPY\x03\x00\x3a\x00\x00\x00"
               "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }\n"
               "\x80\x3f\x49\x40\x80\xff"),
     TENSOR_ANY,
     TENSOR_U16,
     1,
     {3},
     {0x3f80, 0x4049, 0xff80}},
    {">u2 as BF16, swapped",
     NPY_BYTES("\x93NUMPY\x01\x00\x3a\x00"
               "{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }\n"
               "\x3f\x80\xc0\x00"),
     TENSOR_BF16,
     TENSOR_BF16,
     1,
     {2},
     {0x3f80, 0xc000}},
    {">f8 scalar",
     NPY_BYTES("\x93NUMPY\x01\x00\x38\x00"
               "{'descr': '>f8', 'fortran_order': False, 'shape': (), }\n"
               "\xc0\x09\x21\xfb\x54\x44\x2d\x18"),
     TENSOR_ANY,
     TENSOR_F64,
     0,
     {0},
     {0xc00921fb54442d18u}},
    {"|u1 as F8_E5M2",
     NPY_BYTES("\x93NUMPY\x01\x00\x3a\x00"
               "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }\n"
               "\x3c\x7c"),
     TENSOR_F8_E5M2,
     TENSOR_F8_E5M2,
     1,
     {2},
     {0x3c, 0x7c}},
    {"Python 2: double quotes, 3L, no trailing comma, tabs",
     NPY_BYTES("\x93NUMPY\x01\x00\x39\x00"
               "{\"descr\": \"<i4\",\t\"fortran_order\": False, "
               "\"shape\": (3L,)}\n"
               "\xff\xff\xff\xff\x00\x00\x00\x80\x01\x00\x00\x00"),
     TENSOR_ANY,
     TENSOR_I32,
     1,
     {3},
     {0xffffffff, 0x80000000, 1}},
    {"|V2 raw bytes as BF16",
     NPY_BYTES("\x93NUMPY\x01\x00\x3a\x00"
               "{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }\n"
               "\xc0\x7f"),
     TENSOR_BF16,
     TENSOR_BF16,
     1,
     {1},
     {0x7fc0}},
    {"<f8 (0, 3), trailing comma",
     NPY_BYTES("\x93NUMPY\x01\x00\x3d\x00"
               "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3,), "
               "}\n"),
     TENSOR_ANY,
     TENSOR_F64,
     2,
     {0, 3},
     {0}},
    {"keys in another order, |b1 (1, 1)",
     NPY_BYTES("\x93NUMPY\x01\x00\x3a\x00"
               "{'shape': (1, 1), 'fortran_order': False, 'descr': '|b1'}\n"
               "\x01"),
     TENSOR_ANY,
     TENSOR_BOOL,
     2,
     {1, 1},
     {1}},
    {">i2 as I16",
     NPY_BYTES("\x93NUMPY\x01\x00\x3a\x00"
               "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }\n"
               "\x80\x00\xff\xfe"),
     TENSOR_I16,
     TENSOR_I16,
     1,
     {2},
     {0x8000, 0xfffe}},
};

START_TEST(test_npy_read_hand)
{
    const npy_case *c = &npy_cases[_i];
    const char *p = tpath("hand.npy");
    tensor t = TENSOR_INIT;
    tensor_error err;

    write_bytes(p, c->bytes, c->len);
    ck_assert_msg(npy_read(p, c->want, &t, &err) == TENSOR_OK, "%s: %s",
                  c->what, err.message);
    assert_shape(&t, c->dtype, c->ndim, c->shape);
    assert_bits(&t, c->bits, t.n_elems);
    if (t.n_elems == 0)
        ck_assert_ptr_null(t.data);
    tensor_free(&t);
}
END_TEST

START_TEST(test_npy_dtype_errors)
{
    const char *p = tpath("d.npy");
    tensor t = TENSOR_INIT;
    tensor_error err;

    write_bytes(p, npy_cases[3].bytes, npy_cases[3].len);
    assert_error(npy_read(p, TENSOR_F32, &t, &err), &err, TENSOR_E_DTYPE, p,
                 "header 'descr': the file holds '<u2' (U16), expected F32");
    assert_error(npy_read(p, TENSOR_I16, &t, &err), &err, TENSOR_E_DTYPE, p,
                 "expected I16");
    assert_empty(&t);
    write_bytes(p, npy_cases[8].bytes, npy_cases[8].len);
    assert_error(npy_read(p, TENSOR_ANY, &t, &err), &err, TENSOR_E_DTYPE, p,
                 "header 'descr': raw 2-byte elements '|V2' need a dtype: "
                 "BF16, F16 or U16");
    assert_error(npy_read(p, TENSOR_F8_E4M3, &t, &err), &err, TENSOR_E_DTYPE,
                 p, "need a dtype");
    assert_error(npy_read(p, (tensor_dtype)40, &t, &err), &err, TENSOR_E_ARG,
                 p, "invalid dtype 40 asked for");
    assert_empty(&t);
}
END_TEST

/* Every dtype through npy_write and npy_read; BF16 and the FP8 types come
   back through WANT. */
START_TEST(test_npy_round_trip)
{
    static const uint64_t s[3] = {2, 1, 3};
    static const char *const descr[TENSOR_N_DTYPES] = {
        NULL,  "<u2", "<f2", "<f4", "<f8", "<i4", "<u2", "<u4",
        "|u1", "|u1", "|u1", "|i1", "<i2", "<i8", "<u8", "|b1",
    };
    uint64_t x = 0xfedcba9876543210u;

    for (int d = 1; d < TENSOR_N_DTYPES; d++) {
        const char *p = tpath("rt.npy");
        tensor t, u = TENSOR_INIT;
        tensor_error err;
        uint64_t bits[6];
        unsigned char *b;
        size_t n;
        for (int i = 0; i < 6; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            bits[i] = x >> 7;
        }
        t = make((tensor_dtype)d, 3, s, bits);
        ck_assert_int_eq(npy_write(p, &t, true, &err), TENSOR_OK);
        b = slurp(p, &n);
        ck_assert_uint_eq(n, 128 + t.n_bytes);
        ck_assert_mem_eq(b + 10, "{'descr': '", 11);
        ck_assert_mem_eq(b + 21, descr[d], 3);
        ck_assert_uint_eq(b[127], '\n');
        free(b);
        ck_assert_int_eq(npy_read(p, (tensor_dtype)d, &u, &err), TENSOR_OK);
        assert_shape(&u, (tensor_dtype)d, 3, s);
        ck_assert_mem_eq(u.data, t.data, t.n_bytes);
        tensor_free(&u);
        tensor_free(&t);
    }
}
END_TEST

START_TEST(test_npy_exists_and_errors)
{
    static const uint64_t s1[1] = {1};
    static const uint64_t one[1] = {7};
    const char *p = tpath("e.npy");
    tensor t = make(TENSOR_U8, 1, s1, one);
    tensor bad = TENSOR_INIT;
    tensor_error err;

    ck_assert_int_eq(npy_write(p, &t, false, &err), TENSOR_OK);
    assert_error(npy_write(p, &t, false, &err), &err, TENSOR_E_EXISTS, p,
                 "the file exists (give force to replace it)");
    ck_assert_int_eq(npy_write(p, &t, true, &err), TENSOR_OK);
    ck_assert_uint_eq(tmp_count(), 1);
    assert_error(npy_write(tpath("f.npy"), &bad, false, &err), &err,
                 TENSOR_E_ARG, tpath("f.npy"), "invalid dtype 0");
    t.n_elems = 2;
    assert_error(npy_write(tpath("f.npy"), &t, false, &err), &err,
                 TENSOR_E_ARG, tpath("f.npy"), "inconsistent tensor");
    t.n_elems = 1;
    ck_assert(!exists(tpath("f.npy")));
    ck_assert_uint_eq(tmp_count(), 1);
    tensor_free(&t);
}
END_TEST

/* A 2.0 header length over 1 MiB is refused before it is read. */
START_TEST(test_npy_header_limit)
{
    const char *p = tpath("big.npy");
    static const unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P',  'Y',
                                          2,    0,   0,   0,   0x18, 0};
    tensor t = TENSOR_INIT;
    tensor_error err;
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, pre, 12), 12);
    ck_assert_int_eq(ftruncate(fd, 2 << 20), 0);
    close(fd);
    assert_error(npy_read(p, TENSOR_ANY, &t, &err), &err, TENSOR_E_LIMIT, p,
                 "header length: 1572864 bytes, more than the 1048576 "
                 "allowed");
}
END_TEST

/*----------------------------------------------------------------------------
 * The committed fixtures: made by the writers (set BF16EMU_WRITE_FIXTURES
 * to a folder to write them there).  The test reads each and checks its
 * values, and writes each again and compares the bytes, so a change of the
 * writers' output shows up here.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *name;
    tensor_dtype dtype;
    unsigned ndim;
    uint64_t shape[2];
    size_t n;
    uint64_t bits[6];
} fixture_tensor;

static const fixture_tensor mixed[] = {
    {"q",
     TENSOR_BF16,
     2,
     {2, 3},
     6,
     {0x3f80, 0xbf80, 0x4000, 0x0000, 0x8000, 0x7fc0}},
    {"scale", TENSOR_F32, 0, {0}, 1, {0x3e000000}},
    {"ids", TENSOR_I32, 1, {4}, 4, {1, 0xffffffff, 0x10000, 0x7fffffff}},
    {"fp8", TENSOR_F8_E4M3, 1, {3}, 3, {0x38, 0xb8, 0x7f}},
    {"empty", TENSOR_F16, 2, {0, 4}, 0, {0}},
    {"wide",
     TENSOR_F64,
     1,
     {2},
     2,
     {0x3ff0000000000000u, 0xc00921fb54442d18u}},
};
static const tensor_meta mixed_meta[2] = {{"format", "pt"},
                                          {"note", "bf16emu test fixture"}};

static const fixture_tensor npys[] = {
    {"f32_2x3.npy",
     TENSOR_F32,
     2,
     {2, 3},
     6,
     {0, 0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000}},
    {"bf16_4.npy", TENSOR_BF16, 1, {4}, 4, {0x3f80, 0x4049, 0xff80, 0x0001}},
    {"i64_scalar.npy", TENSOR_I64, 0, {0}, 1, {0x8000000000000000u}},
    {"e5m2_2x2.npy", TENSOR_F8_E5M2, 2, {2, 2}, 4, {0x3c, 0xbc, 0x7c, 0x01}},
};
#define N_MIXED (sizeof mixed / sizeof mixed[0])
#define N_NPYS (sizeof npys / sizeof npys[0])

static tensor
fixture_make(const fixture_tensor *f)
{
    return make(f->dtype, f->ndim, f->shape, f->bits);
}

static void
fixture_check(const tensor *t, const fixture_tensor *f)
{
    assert_shape(t, f->dtype, f->ndim, f->shape);
    assert_bits(t, f->bits, f->n);
}

/* Writes every fixture into DIR. */
static void
fixtures_write(const char *dir, bool force)
{
    tensor_named list[N_MIXED];
    tensor_error err;
    char p[1024];

    for (size_t i = 0; i < N_MIXED; i++) {
        list[i].name = mixed[i].name;
        list[i].tensor = fixture_make(&mixed[i]);
    }
    snprintf(p, sizeof p, "%s/mixed.safetensors", dir);
    ck_assert_msg(
        safetensors_write(p, list, N_MIXED, mixed_meta, 2, force, &err)
            == TENSOR_OK,
        "%s", err.message);
    for (size_t i = 0; i < N_MIXED; i++)
        tensor_free(&list[i].tensor);
    for (size_t i = 0; i < N_NPYS; i++) {
        tensor t = fixture_make(&npys[i]);
        snprintf(p, sizeof p, "%s/%s", dir, npys[i].name);
        ck_assert_msg(npy_write(p, &t, force, &err) == TENSOR_OK, "%s",
                      err.message);
        tensor_free(&t);
    }
}

START_TEST(test_fixtures_read)
{
    const char *p = FIXTURE_DIR "/mixed.safetensors";
    tensor_file f = TENSOR_FILE_INIT;
    tensor t = TENSOR_INIT;
    tensor_error err;
    char path[1024];

    ck_assert_msg(safetensors_read_all(p, TENSOR_ANY, &f, &err) == TENSOR_OK,
                  "%s", err.message);
    ck_assert_uint_eq(f.n_tensors, N_MIXED);
    for (size_t i = 0; i < N_MIXED; i++) {
        /* in data order, which is the writer's list order, except that
           the zero-byte "empty" sorts by name at its offset */
        const tensor *found = NULL;
        for (size_t j = 0; j < f.n_tensors; j++)
            if (strcmp(f.tensors[j].name, mixed[i].name) == 0)
                found = &f.tensors[j].tensor;
        ck_assert_msg(found != NULL, "%s missing", mixed[i].name);
        fixture_check(found, &mixed[i]);
    }
    ck_assert_str_eq(f.tensors[0].name, "q");
    ck_assert_str_eq(f.tensors[5].name, "wide");
    ck_assert_uint_eq(f.n_meta, 2);
    ck_assert_str_eq(f.meta[1].key, "note");
    ck_assert_str_eq(f.meta[1].value, "bf16emu test fixture");
    tensor_file_free(&f);

    ck_assert_int_eq(tensor_file_read(p, "fp8", TENSOR_ANY, &t, &err),
                     TENSOR_OK);
    fixture_check(&t, &mixed[3]);
    tensor_free(&t);

    for (size_t i = 0; i < N_NPYS; i++) {
        snprintf(path, sizeof path, "%s/%s", FIXTURE_DIR, npys[i].name);
        ck_assert_msg(tensor_file_read(path, NULL, npys[i].dtype, &t, &err)
                          == TENSOR_OK,
                      "%s", err.message);
        fixture_check(&t, &npys[i]);
        tensor_free(&t);
    }
    /* the .npy writer's exact bytes, as written by hand above */
    assert_file_bytes(FIXTURE_DIR "/f32_2x3.npy", npy_expected,
                      sizeof npy_expected - 1);
}
END_TEST

START_TEST(test_fixtures_bytes)
{
    const char *out = getenv("BF16EMU_WRITE_FIXTURES");
    static const char *const names[] = {"mixed.safetensors", "f32_2x3.npy",
                                        "bf16_4.npy", "i64_scalar.npy",
                                        "e5m2_2x2.npy"};
    if (out != NULL && out[0] != '\0') {
        fixtures_write(out, true);
        fprintf(stderr, "test_tensor_io: fixtures written to %s\n", out);
    }
    fixtures_write(tmp_dir, false);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char committed[1024];
        size_t n;
        unsigned char *b;
        snprintf(committed, sizeof committed, "%s/%s", FIXTURE_DIR, names[i]);
        b = slurp(committed, &n);
        assert_file_bytes(tpath(names[i]), b, n);
        free(b);
    }
}
END_TEST

/*----------------------------------------------------------------------------
 * Tensor-core vector text.
 *--------------------------------------------------------------------------*/
START_TEST(test_tcvec_tiny)
{
    /* tests/data/tensors/tcvec: three vectors, sum_k a*b + c exact in
       FP32: 16 * 1 * 0.5 + 0 = 8; 16 * 2 * -0.25 + 1 = -7; the third has
       a = +-1 alternating (upper-case hex, CRLF line ends, blank lines at
       the end), b = 3, so 0 + 0.5 = 0.5 */
    static const uint64_t c[3] = {0x00000000, 0x3f800000, 0x3f000000};
    static const uint64_t d[3] = {0x41000000, 0xc0e00000, 0x3f000000};
    static const uint64_t sab[2] = {3, 16}, scd[1] = {3};
    tcvec_set s = TCVEC_SET_INIT;
    tensor_error err;

    ck_assert_msg(tcvec_read_set(FIXTURE_DIR "/tcvec", "tiny", &s, &err)
                      == TENSOR_OK,
                  "%s", err.message);
    assert_shape(&s.a, TENSOR_BF16, 2, sab);
    assert_shape(&s.b, TENSOR_BF16, 2, sab);
    assert_shape(&s.c, TENSOR_F32, 1, scd);
    assert_shape(&s.d, TENSOR_F32, 1, scd);
    for (unsigned k = 0; k < 16; k++) {
        ck_assert_uint_eq(tensor_get_bits(&s.a, k), 0x3f80);
        ck_assert_uint_eq(tensor_get_bits(&s.b, k), 0x3f00);
        ck_assert_uint_eq(tensor_get_bits(&s.a, 16 + k), 0x4000);
        ck_assert_uint_eq(tensor_get_bits(&s.b, 16 + k), 0xbe80);
        ck_assert_uint_eq(tensor_get_bits(&s.a, 32 + k),
                          k % 2 ? 0xbf80 : 0x3f80);
        ck_assert_uint_eq(tensor_get_bits(&s.b, 32 + k), 0x4040);
    }
    assert_bits(&s.c, c, 3);
    assert_bits(&s.d, d, 3);
    tcvec_set_free(&s);
    assert_empty(&s.a);
    tcvec_set_free(NULL);

    assert_error(tcvec_read_set(FIXTURE_DIR "/tcvec", "none", &s, &err), &err,
                 TENSOR_E_IO, FIXTURE_DIR "/tcvec/a_none_bf16.txt",
                 "cannot open: No such file or directory");
}
END_TEST

START_TEST(test_tcvec_count_mismatch)
{
    char row[16 * 9 + 2];
    char two[2 * sizeof row];
    tcvec_set s = TCVEC_SET_INIT;
    tensor_error err;
    const char *one = "00111111100000000000000000000000\n";
    char both[80];

    row[0] = '\0';
    for (int k = 0; k < 16; k++)
        strcat(row, k ? " 3f800000" : "3f800000");
    strcat(row, "\n");
    snprintf(two, sizeof two, "%s%s", row, row);
    snprintf(both, sizeof both, "%s%s", one, one);
    write_bytes(tpath("a_x_bf16.txt"), two, strlen(two));
    write_bytes(tpath("b_x_bf16.txt"), two, strlen(two));
    write_bytes(tpath("c_x_fp32.txt"), both, strlen(both));
    write_bytes(tpath("d_x_fp32.txt"), one, strlen(one));
    assert_error(tcvec_read_set(tmp_dir, "x", &s, &err), &err, TENSOR_E_FORMAT,
                 tpath("d_x_fp32.txt"), "1 vectors, but ");
    ck_assert_ptr_nonnull(strstr(err.message, "a_x_bf16.txt has 2"));
    assert_empty(&s.a);
    assert_empty(&s.c);
    /* no final newline is fine */
    write_bytes(tpath("d_x_fp32.txt"), both, strlen(both) - 1);
    ck_assert_int_eq(tcvec_read_set(tmp_dir, "x", &s, &err), TENSOR_OK);
    ck_assert_uint_eq(tensor_get_bits(&s.d, 1), 0x3f800000);
    tcvec_set_free(&s);
}
END_TEST

/* First word of line LINE (1-based) of PATH, parsed here with strtoul: an
   independent reading of the published files. */
static uint32_t
first_word(const char *path, unsigned line, int base)
{
    FILE *f = fopen(path, "r");
    char buf[512];
    uint32_t v = 0;
    ck_assert_ptr_nonnull(f);
    for (unsigned i = 0; i < line; i++)
        ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    v = (uint32_t)strtoul(buf, NULL, base);
    fclose(f);
    return v;
}

/* The published H100/H200 vectors, when they are found: the environment's
   BF16EMU_TC_VALIDATION, else ../shared/tc-validation next to the source
   tree.  Absent, the test passes without checking. */
START_TEST(test_tcvec_published)
{
    static const char *const gpus[2] = {"H200", "H100"};
    const char *env = getenv("BF16EMU_TC_VALIDATION");
    char root[1024], dir[1100], p[1200];

    snprintf(root, sizeof root, "%s",
             env != NULL && env[0] != '\0' ? env
                                           : SRCDIR
                 "/../shared/tc-validation");
    for (int g = 0; g < 2; g++) {
        tcvec_set s = TCVEC_SET_INIT;
        tensor_error err;
        snprintf(dir, sizeof dir, "%s/%s-bf16", root, gpus[g]);
        snprintf(p, sizeof p, "%s/a_%s_bf16.txt", dir, gpus[g]);
        if (!exists(p)) {
            fprintf(stderr, "test_tcvec_published: %s not found, skipped\n",
                    dir);
            continue;
        }
        ck_assert_msg(tcvec_read_set(dir, gpus[g], &s, &err) == TENSOR_OK,
                      "%s", err.message);
        ck_assert_uint_eq(s.a.shape[0], 5000);
        ck_assert_uint_eq(s.d.shape[0], 5000);
        for (unsigned line = 1; line <= 5000; line += 4999) {
            uint64_t r = line - 1;
            snprintf(p, sizeof p, "%s/a_%s_bf16.txt", dir, gpus[g]);
            ck_assert_uint_eq(tensor_get_bits(&s.a, r * 16),
                              first_word(p, line, 16) >> 16);
            snprintf(p, sizeof p, "%s/b_%s_bf16.txt", dir, gpus[g]);
            ck_assert_uint_eq(tensor_get_bits(&s.b, r * 16),
                              first_word(p, line, 16) >> 16);
            snprintf(p, sizeof p, "%s/c_%s_fp32.txt", dir, gpus[g]);
            ck_assert_uint_eq(tensor_get_bits(&s.c, r),
                              first_word(p, line, 2));
            snprintf(p, sizeof p, "%s/d_%s_fp32.txt", dir, gpus[g]);
            ck_assert_uint_eq(tensor_get_bits(&s.d, r),
                              first_word(p, line, 2));
        }
        tcvec_set_free(&s);
    }
}
END_TEST

/*----------------------------------------------------------------------------
 * The malformed corpus: tests/data/bad/EXPECTED, read by main.
 *--------------------------------------------------------------------------*/
typedef struct
{
    char file[512];
    char status[512];
    char sub[512];
} bad_row;

static bad_row *bad_rows;
static int n_bad_rows;
static const char *bad_load_error;

static void
load_bad(void)
{
    FILE *fp = fopen(BAD_DIR "/EXPECTED", "r");
    char buf[512];
    int cap = 0;

    if (fp == NULL) {
        bad_load_error = "cannot open " BAD_DIR "/EXPECTED";
        return;
    }
    while (fgets(buf, sizeof buf, fp) != NULL) {
        char *f1, *f2, *f3, *nl;
        bad_row *r;
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        nl = strchr(buf, '\n');
        if (nl == NULL) {
            bad_load_error = "a line of EXPECTED is too long";
            break;
        }
        *nl = '\0';
        f1 = buf;
        f2 = strchr(f1, '\t');
        f3 = f2 != NULL ? strchr(f2 + 1, '\t') : NULL;
        if (f3 == NULL) {
            bad_load_error = "a line of EXPECTED lacks its three fields";
            break;
        }
        *f2++ = '\0';
        *f3++ = '\0';
        if (n_bad_rows == cap) {
            cap = cap * 2 + 64;
            bad_rows = realloc(bad_rows, (size_t)cap * sizeof *bad_rows);
            if (bad_rows == NULL)
                abort();
        }
        r = &bad_rows[n_bad_rows++];
        snprintf(r->file, sizeof r->file, "%s", f1);
        snprintf(r->status, sizeof r->status, "%s", f2);
        snprintf(r->sub, sizeof r->sub, "%s", f3);
    }
    fclose(fp);
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

START_TEST(test_bad_file)
{
    const bad_row *r = &bad_rows[_i];
    char p[sizeof BAD_DIR + sizeof r->file + 1];
    tensor t = TENSOR_INIT;
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;
    int code = -1, rc;

    for (int c = 0; c < TENSOR_N_STATUS; c++)
        if (strcmp(tensor_status_name(c), r->status) == 0)
            code = c;
    ck_assert_msg(code > 0, "%s: unknown status %s", r->file, r->status);
    snprintf(p, sizeof p, "%s/%s", BAD_DIR, r->file);
    if (ends_with(r->file, ".safetensors")) {
        rc = safetensors_read_all(p, TENSOR_ANY, &f, &err);
        ck_assert_uint_eq(f.n_tensors, 0);
        ck_assert_ptr_null(f.tensors);
        assert_error(rc, &err, code, p, r->sub);
        /* the one-tensor reader checks the same header first */
        rc = tensor_file_read(p, "w", TENSOR_ANY, &t, &err);
        assert_error(rc, &err, code, p, r->sub);
    } else if (ends_with(r->file, ".npy")) {
        rc = npy_read(p, TENSOR_ANY, &t, &err);
        assert_error(rc, &err, code, p, r->sub);
        rc = tensor_file_read(p, NULL, TENSOR_ANY, &t, &err);
        assert_error(rc, &err, code, p, r->sub);
    } else if (r->file[0] == 'a' || r->file[0] == 'b') {
        rc = tcvec_read_ab(p, &t, &err);
        assert_error(rc, &err, code, p, r->sub);
    } else {
        ck_assert_msg(r->file[0] == 'c' || r->file[0] == 'd', "%s: no reader",
                      r->file);
        rc = tcvec_read_cd(p, &t, &err);
        assert_error(rc, &err, code, p, r->sub);
    }
    assert_empty(&t);
    /* the message is one line */
    ck_assert_ptr_null(strchr(err.message, '\n'));
}
END_TEST

/* Every file of the corpus is in EXPECTED, and the other way round. */
START_TEST(test_bad_listed)
{
    DIR *d = opendir(BAD_DIR);
    struct dirent *e;
    int n_files = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        bool found = false;
        if (e->d_name[0] == '.' || strcmp(e->d_name, "EXPECTED") == 0)
            continue;
        n_files++;
        for (int i = 0; i < n_bad_rows && !found; i++)
            found = strcmp(bad_rows[i].file, e->d_name) == 0;
        ck_assert_msg(found, "%s is not in EXPECTED", e->d_name);
    }
    closedir(d);
    ck_assert_int_eq(n_files, n_bad_rows);
    ck_assert_int_ge(n_bad_rows, 80);
}
END_TEST

START_TEST(test_bad_loaded)
{
    ck_assert_msg(bad_load_error == NULL, "%s", bad_load_error);
}
END_TEST

/* Creates the tcase NAME in S, with a fresh temporary folder around each
   test when TMP is set. */
static TCase *
new_tcase(Suite *s, const char *name, bool tmp)
{
    TCase *tc = tcase_create(name);

    if (tmp)
        tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *
tensor_io_suite(void)
{
    Suite *s = suite_create("tensor_io");
    TCase *tc;

    tc = new_tcase(s, "dtype", false);
    tcase_add_test(tc, test_dtype_table);
    tcase_add_test(tc, test_dtype_parse);
    tcase_add_test(tc, test_readable_as);
    tcase_add_test(tc, test_status_names);

    tc = new_tcase(s, "tensor", false);
    tcase_add_test(tc, test_tensor_alloc_access);
    tcase_add_test(tc, test_tensor_scalar_and_empty);
    tcase_add_test(tc, test_tensor_alloc_errors);

    tc = new_tcase(s, "safetensors", true);
    tcase_add_test(tc, test_st_read_hand);
    tcase_add_test(tc, test_st_write_exact);
    tcase_add_test(tc, test_st_write_no_tensors);
    tcase_add_test(tc, test_st_round_trip);
    tcase_add_test(tc, test_st_exists_and_force);
    tcase_add_test(tc, test_st_write_errors);
    tcase_add_test(tc, test_st_header_limit);
    tcase_add_test(tc, test_st_key_list_cut);
    tcase_add_test(tc, test_read_dispatch);
    tcase_add_test(tc, test_st_foreign);

    tc = new_tcase(s, "npy", true);
    tcase_add_test(tc, test_npy_write_exact);
    tcase_add_loop_test(tc, test_npy_read_hand, 0,
                        (int)(sizeof npy_cases / sizeof npy_cases[0]));
    tcase_add_test(tc, test_npy_dtype_errors);
    tcase_add_test(tc, test_npy_round_trip);
    tcase_add_test(tc, test_npy_exists_and_errors);
    tcase_add_test(tc, test_npy_header_limit);

    tc = new_tcase(s, "fixtures", true);
    tcase_add_test(tc, test_fixtures_read);
    tcase_add_test(tc, test_fixtures_bytes);

    tc = new_tcase(s, "tcvec", true);
    tcase_add_test(tc, test_tcvec_tiny);
    tcase_add_test(tc, test_tcvec_count_mismatch);
    tcase_add_test(tc, test_tcvec_published);
    tcase_set_timeout(tc, 30);

    tc = new_tcase(s, "malformed", false);
    tcase_add_test(tc, test_bad_loaded);
    tcase_add_test(tc, test_bad_listed);
    tcase_add_loop_test(tc, test_bad_file, 0, n_bad_rows);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int failed;

    load_bad();
    sr = srunner_create(tensor_io_suite());
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(bad_rows);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
