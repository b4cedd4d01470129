/* test_log.c -- fa_logf_cr, the correctly rounded FP32 log: special
   inputs, directed inputs (near 1, powers of two, the binade ends, the
   inputs that needed the long double fallback) and random inputs against
   MPFR */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mpfr.h>

#include "attention/attention.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

/* MPFR's log of positive finite binary32 X rounded to 24 bits (the result
   is never subnormal: |log x| > 2^-25 for x != 1, < 104). */
static uint32_t
mpfr_logf(uint32_t x)
{
    mpfr_t a;
    float f;
    uint32_t r;

    memcpy(&f, &x, sizeof f);
    mpfr_init2(a, 24);
    mpfr_set_flt(a, f, MPFR_RNDN); /* exact */
    mpfr_log(a, a, MPFR_RNDN);
    f = mpfr_get_flt(a, MPFR_RNDN); /* exact: a has 24 bits */
    mpfr_clear(a);
    memcpy(&r, &f, sizeof r);
    return r;
}

static unsigned n_bad;

static void
check1(uint32_t x, uint32_t want)
{
    uint32_t got = fa_logf_cr(x);

    if (got != want) {
        if (n_bad < TST_MAX_PRINT)
            printf("f32_log rne %08x %08x ..... got %08x .....  seed %llu\n",
                   (unsigned)x, (unsigned)want, (unsigned)got,
                   (unsigned long long)tst_seed());
        n_bad++;
    }
}

START_TEST(test_special)
{
    n_bad = 0;
    check1(0x00000000u, 0xFF800000u);
    check1(0x80000000u, 0xFF800000u);
    check1(0x7F800000u, 0x7F800000u);
    check1(0xFF800000u, 0x7FC00000u);
    check1(0xBF800000u, 0x7FC00000u);
    check1(0x80000001u, 0x7FC00000u);
    check1(0x3F800000u, 0x00000000u);
    check1(0x7FC00000u, 0x7FC00000u);
    check1(0x7F800001u, 0x7FC00001u); /* sNaN quieted, payload kept */
    check1(0xFFC01234u, 0xFFC01234u);
    ck_assert_int_eq(fa_logf_cr_level(0x7F800000u), 0);
    ck_assert_int_eq(fa_logf_cr_level(0x40000000u), 1);
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

/* The positive floats whose double log (glibc) falls within 2^-51 |y| of
   a rounding midpoint, so that fa_logf_cr decides them with the long
   double log (found by scanning every input with fa_logf_cr_level). */
static const uint32_t hard[] = {
    0x0DC8BBA4u, 0x111C87F8u, 0x1A8446CBu, 0x1F116AB8u, 0x28E3FA26u,
    0x29E6126Bu, 0x29FD22F8u, 0x2C4C24B7u, 0x2E492984u, 0x38DCBE38u,
    0x3BF86EF0u, 0x3C413D3Au, 0x41178FEBu, 0x464D5B2Bu, 0x4665A9A6u,
    0x4C5D65A5u, 0x4D604EBEu, 0x4E85F412u, 0x54AF989Du, 0x5EE8984Eu,
    0x62B467BAu, 0x65D890D3u, 0x66A8C860u, 0x66ABBD63u, 0x6F31A8ECu,
    0x79E7EC37u};

START_TEST(test_directed)
{
    n_bad = 0;
    for (size_t i = 0; i < sizeof hard / sizeof hard[0]; i++) {
        check1(hard[i], mpfr_logf(hard[i]));
        ck_assert_int_ne(fa_logf_cr_level(hard[i]), 3);
    }
    /* every power of two, and its neighbours */
    for (uint32_t e = 0; e < 255; e++)
        for (int dlt = -3; dlt <= 3; dlt++) {
            uint32_t x = (e << 23) + (uint32_t)dlt;
            if (x == 0 || x >= 0x7F800000u)
                continue;
            check1(x, mpfr_logf(x));
        }
    /* around 1: log x ~ x - 1 */
    for (uint32_t x = 0x3F800000u - 20000; x < 0x3F800000u + 20000; x++)
        if (x != 0x3F800000u)
            check1(x, mpfr_logf(x));
    /* the smallest subnormals and the largest finite values */
    for (uint32_t x = 1; x < 2000; x++)
        check1(x, mpfr_logf(x));
    for (uint32_t x = 0x7F7FFFFFu - 2000; x < 0x7F800000u; x++)
        check1(x, mpfr_logf(x));
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

START_TEST(test_random)
{
    tst_rng rng;
    unsigned long n = 300000ul * tst_multiplier(), level2 = 0;

    n_bad = 0;
    tst_rng_init(&rng, 7);
    for (unsigned long i = 0; i < n; i++) {
        uint32_t x = (uint32_t)tst_rand_below(&rng, 0x7F800000u - 1) + 1;
        if (x == 0x3F800000u)
            continue;
        check1(x, mpfr_logf(x));
        ck_assert_int_ne(fa_logf_cr_level(x), 3);
        level2 += fa_logf_cr_level(x) == 2;
    }
    ck_assert_uint_eq(n_bad, 0);
    /* the double evaluation decides almost every input */
    ck_assert_uint_lt(level2, n / 1000 + 1);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_log");
    TCase *tc = tst_add_tcase(s, "log", 60);

    tcase_add_test(tc, test_special);
    tcase_add_test(tc, test_directed);
    tcase_add_test(tc, test_random);
    return tst_run_suite(s);
}
