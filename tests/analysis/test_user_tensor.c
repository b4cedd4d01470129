/* test_user_tensor.c -- the shared reader of users' tensor files: types
   read as stored, refused without being asked for, converted exactly or
   refused at the first inexact element, bit patterns, the [B, N, H, d]
   transposition and the layout told by the shapes */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/user_tensor.h"

static char dir[256];
static char path[512];

static void
setup(void)
{
    snprintf(dir, sizeof dir, "%s/ut.XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes a .npy NAME of DTYPE, shape SHAPE[0..ND), element i = BITS(i). */
static const char *
write_npy(const char *name, tensor_dtype dt, unsigned nd,
          const uint64_t *shape, uint64_t (*bits)(uint64_t))
{
    tensor t = TENSOR_INIT;
    tensor_error err;

    ck_assert_int_eq(tensor_alloc(&t, dt, nd, shape, &err), TENSOR_OK);
    for (uint64_t i = 0; i < t.n_elems; i++)
        tensor_set_bits(&t, i, bits(i));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(npy_write(path, &t, true, &err), TENSOR_OK);
    tensor_free(&t);
    return path;
}

/* BF16 patterns spanning signs, zeros, subnormals, infinities. */
static uint64_t
bf16_at(uint64_t i)
{
    static const uint16_t v[] = {0x3F80, 0x8000, 0x0000, 0x0001,
                                 0x7F80, 0xFF7F, 0xC013, 0x3E00};
    return v[i % 8] ^ (uint16_t)(i / 8);
}
static uint64_t
f32_of_bf16(uint64_t i)
{
    return bf16_at(i) << 16;
}
static uint64_t
f32_bad(uint64_t i)
{
    return (bf16_at(i) << 16) | (i == 13 ? 0x8000u : 0u);
}

START_TEST(test_same_type)
{
    const uint64_t sh[2] = {3, 8};
    tensor t = TENSOR_INIT;
    tensor_error err;
    ut_info info;

    write_npy("a.npy", TENSOR_F32, 2, sh, f32_of_bf16);
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_F32, false, "--dtype", &t, &info, &err),
        TENSOR_OK);
    ck_assert_int_eq(t.dtype, TENSOR_F32);
    ck_assert_str_eq(info.how, "");
    tensor_free(&t);
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_ANY, false, NULL, &t, &info, &err),
        TENSOR_OK);
    ck_assert_int_eq(t.dtype, TENSOR_F32);
    tensor_free(&t);
}
END_TEST

START_TEST(test_f32_as_bf16)
{
    const uint64_t sh[3] = {2, 3, 4};
    tensor t = TENSOR_INIT;
    tensor_error err;
    ut_info info;

    write_npy("f.npy", TENSOR_F32, 3, sh, f32_of_bf16);
    /* not asked: refused, naming the option */
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_BF16, false, "--dtype", &t, &info, &err),
        TENSOR_E_DTYPE);
    ck_assert_ptr_null(t.data);
    ck_assert_ptr_nonnull(strstr(err.message, "dtype F32 (expected BF16; "
                                              "pass --dtype bf16"));
    /* asked: every element exact */
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_BF16, true, "--dtype", &t, &info, &err),
        TENSOR_OK);
    ck_assert_int_eq(t.dtype, TENSOR_BF16);
    ck_assert(info.converted);
    ck_assert_str_eq(info.how, "F32 values read as BF16 (every one exact)");
    for (uint64_t i = 0; i < t.n_elems; i++)
        if (tensor_get_bits(&t, i) != bf16_at(i))
            ck_abort_msg("element %llu: 0x%04llx, expected 0x%04llx",
                         (unsigned long long)i,
                         (unsigned long long)tensor_get_bits(&t, i),
                         (unsigned long long)bf16_at(i));
    tensor_free(&t);
    /* one element off the BF16 grid: named with index and bits */
    write_npy("g.npy", TENSOR_F32, 3, sh, f32_bad);
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_BF16, true, "--dtype", &t, &info, &err),
        TENSOR_E_DTYPE);
    ck_assert_ptr_null(t.data);
    {
        char want[128];
        snprintf(want, sizeof want,
                 "element 13 [1, 0, 1] is F32 0x%08llX, not a BF16 value",
                 (unsigned long long)f32_bad(13));
        ck_assert_msg(strstr(err.message, want) != NULL, "message '%s'",
                      err.message);
    }
}
END_TEST

START_TEST(test_f16_and_bits)
{
    const uint64_t sh[1] = {16};
    tensor t = TENSOR_INIT;
    tensor_error err;
    ut_info info;

    /* I16 patterns: refused unless asked, then kept bit for bit */
    write_npy("i.npy", TENSOR_I16, 1, sh, bf16_at);
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_BF16, false, "--dtype", &t, &info, &err),
        TENSOR_E_DTYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "dtype I16 holds bit patterns"));
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_F16, true, "--dtype", &t, &info, &err),
        TENSOR_OK);
    ck_assert_int_eq(t.dtype, TENSOR_F16);
    ck_assert(info.relabelled);
    for (uint64_t i = 0; i < 16; i++)
        ck_assert_uint_eq(tensor_get_bits(&t, i), bf16_at(i));
    tensor_free(&t);
    /* U16 the same */
    write_npy("u.npy", TENSOR_U16, 1, sh, bf16_at);
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_BF16, true, "--dtype", &t, &info, &err),
        TENSOR_OK);
    ck_assert_str_eq(info.how, "U16 bit patterns read as BF16");
    tensor_free(&t);
    /* F16 1.0 (0x3C00) and 2^-24 (0x0001, not a BF16 value? it is:
       2^-24 is a normal BF16) and 1 + 2^-10 (0x3C01, not BF16) */
    {
        tensor f = TENSOR_INIT;
        const uint64_t s2[1] = {3};
        ck_assert_int_eq(tensor_alloc(&f, TENSOR_F16, 1, s2, &err), TENSOR_OK);
        tensor_set_bits(&f, 0, 0x3C00);
        tensor_set_bits(&f, 1, 0x0001);
        tensor_set_bits(&f, 2, 0x3C01);
        ck_assert_int_eq(
            ut_as_dtype(&f, "x", TENSOR_BF16, true, NULL, NULL, &err),
            TENSOR_E_DTYPE);
        ck_assert_ptr_nonnull(
            strstr(err.message, "x: element 2 [2] is F16 0x3C01"));
        ck_assert_int_eq(f.dtype, TENSOR_F16);
        f.n_elems = 2; /* the first two only */
        f.shape[0] = 2;
        f.n_bytes = 4;
        ck_assert_int_eq(
            ut_as_dtype(&f, "x", TENSOR_BF16, true, NULL, NULL, &err),
            TENSOR_OK);
        ck_assert_uint_eq(tensor_get_bits(&f, 0), 0x3F80); /* 1.0 */
        ck_assert_uint_eq(tensor_get_bits(&f, 1), 0x3380); /* 2^-24 */
        tensor_free(&f);
    }
}
END_TEST

static uint64_t
index_value(uint64_t i)
{
    return i;
}

START_TEST(test_bnhd)
{
    /* [B 2, N 3, H 4, d 5]: element (b, n, h, j) holds its flat index */
    const uint64_t sh[4] = {2, 3, 4, 5};
    tensor t = TENSOR_INIT, k = TENSOR_INIT;
    tensor_error err;
    ut_info info;

    write_npy("t.npy", TENSOR_U16, 4, sh, index_value);
    ck_assert_int_eq(
        ut_read(path, NULL, TENSOR_BF16, true, NULL, &t, &info, &err),
        TENSOR_OK);
    ck_assert(ut_layout_matters(&t));
    ck_assert_int_eq(ut_to_bhnd(&t, UT_LAYOUT_BNHD, &info, &err), TENSOR_OK);
    ck_assert(info.transposed);
    ck_assert_uint_eq(t.shape[1], 4);
    ck_assert_uint_eq(t.shape[2], 3);
    for (uint64_t b = 0; b < 2; b++)
        for (uint64_t h = 0; h < 4; h++)
            for (uint64_t n = 0; n < 3; n++)
                for (uint64_t j = 0; j < 5; j++) {
                    uint64_t at = ((b * 4 + h) * 3 + n) * 5 + j;
                    uint64_t was = ((b * 3 + n) * 4 + h) * 5 + j;
                    ck_assert_uint_eq(tensor_get_bits(&t, at), was);
                }
    /* BHND and 2-D tensors are left alone */
    ck_assert_int_eq(ut_to_bhnd(&t, UT_LAYOUT_BHND, NULL, &err), TENSOR_OK);
    ck_assert_uint_eq(tensor_get_bits(&t, 5), 20);
    /* the layout from Q [2, 4, 3, 5] and K [2, 4, 7, 5]: BHND; from
       [2, 3, 4, 5] and [2, 7, 4, 5]: BNHD; equal shapes: unset */
    k = t;
    k.shape[2] = 7;
    ck_assert_int_eq(ut_layout_tell(&t, &k), UT_LAYOUT_BHND);
    k.shape[1] = 7;
    k.shape[2] = 3;
    ck_assert_int_eq(ut_layout_tell(&t, &k), UT_LAYOUT_BNHD);
    ck_assert_int_eq(ut_layout_tell(&t, &t), UT_LAYOUT_UNSET);
    {
        /* grouped-query heads: Q [2, 8, 3, 5], K [2, 2, 7, 5] can only be
           BHND (2 KV heads under 8; 7 does not divide 3); Q [2, 3, 8, 5],
           K [2, 7, 2, 5] only BNHD; Q [1, 8, 64, 5] with K [1, 2, 64, 5]
           either (8 query heads over 2, or 64 heads of 8 queries over 2
           keys): unset, never a guess */
        tensor a = t, b = t;
        a.shape[1] = 8, a.shape[2] = 3, b.shape[1] = 2, b.shape[2] = 7;
        ck_assert_int_eq(ut_layout_tell(&a, &b), UT_LAYOUT_BHND);
        a.shape[1] = 3, a.shape[2] = 8, b.shape[1] = 7, b.shape[2] = 2;
        ck_assert_int_eq(ut_layout_tell(&a, &b), UT_LAYOUT_BNHD);
        a.shape[0] = b.shape[0] = 1;
        a.shape[1] = 8, a.shape[2] = 64, b.shape[1] = 2, b.shape[2] = 64;
        ck_assert_int_eq(ut_layout_tell(&a, &b), UT_LAYOUT_UNSET);
    }
    {
        /* the layout a launch tells for Q [2, 4, 3, 5]: 4 heads of 3 rows
           read it as BHND, 8 heads of 4 rows as BNHD, 4 heads of 9 rows
           neither way; Q [2, 3, 3, 5] under 3 heads of 3 rows both ways
           (unset, never a guess); a 2-D Q has no layout */
        tensor a = t;
        bool neither = true;
        ck_assert_int_eq(ut_layout_launch(&t, 4, 3, &neither), UT_LAYOUT_BHND);
        ck_assert(!neither);
        ck_assert_int_eq(ut_layout_launch(&t, 8, 4, NULL), UT_LAYOUT_BNHD);
        ck_assert_int_eq(ut_layout_launch(&t, 4, 9, &neither), UT_LAYOUT_UNSET);
        ck_assert(neither);
        a.shape[1] = 3;
        ck_assert_int_eq(ut_layout_launch(&a, 3, 3, &neither), UT_LAYOUT_UNSET);
        ck_assert(!neither);
        a.ndim = 2;
        neither = true;
        ck_assert_int_eq(ut_layout_launch(&a, 3, 3, &neither), UT_LAYOUT_UNSET);
        ck_assert(neither);
    }
    t.shape[1] = 1;
    ck_assert(!ut_layout_matters(&t));
    t.shape[1] = 4;
    tensor_free(&t);
}
END_TEST

static Suite *
user_tensor_suite(void)
{
    Suite *s = suite_create("user_tensor");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_same_type);
    tcase_add_test(tc, test_f32_as_bf16);
    tcase_add_test(tc, test_f16_and_bits);
    tcase_add_test(tc, test_bnhd);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(user_tensor_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
