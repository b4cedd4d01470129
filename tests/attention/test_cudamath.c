/* test_cudamath -- CUDA's accurate expf and logf models (fa_cuda_expf,
   fa_cuda_logf): the special values, and against MPFR within the error
   bounds CUDA documents (logf 1 ulp, expf 2 ulps), so a wrong constant
   or step of the instruction sequences shows.  That they are the GPU's
   functions bit for bit is checked on the H200's split-KV dumps
   (tests/experiments/test_kernel.sh). */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mpfr.h>

#include "attention/attention.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

/* MPFR's FN (mpfr_exp, mpfr_log, mpfr_log2, mpfr_tanh) of binary32 X
   rounded to binary32 (normal results only). */
static uint32_t
mpfr_f(int (*fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), uint32_t x)
{
    mpfr_t a;
    float f;
    uint32_t r;

    memcpy(&f, &x, sizeof f);
    mpfr_init2(a, 24);
    mpfr_set_flt(a, f, MPFR_RNDN);
    fn(a, a, MPFR_RNDN);
    f = mpfr_get_flt(a, MPFR_RNDN);
    mpfr_clear(a);
    memcpy(&r, &f, sizeof r);
    return r;
}

/* Distance in units in the last place between two finite binary32 values
   of one sign. */
static uint32_t
ulps(uint32_t a, uint32_t b)
{
    return a > b ? a - b : b - a;
}

START_TEST(test_special)
{
    /* logf */
    ck_assert_uint_eq(fa_cuda_logf(0x00000000u), 0xFF800000u);
    ck_assert_uint_eq(fa_cuda_logf(0x80000000u), 0xFF800000u);
    ck_assert_uint_eq(fa_cuda_logf(0x7F800000u), 0x7F800000u);
    ck_assert_uint_eq(fa_cuda_logf(0x3F800000u), 0x00000000u);
    ck_assert_uint_eq(fa_cuda_logf(0x40000000u), 0x3F317218u); /* ln 2 */
    ck_assert(((fa_cuda_logf(0xBF800000u) >> 22) & 0x1FFu) == 0x1FFu);
    ck_assert(((fa_cuda_logf(0x7FC00001u) >> 22) & 0x1FFu) == 0x1FFu);
    /* expf */
    ck_assert_uint_eq(fa_cuda_expf(NULL, 0xFF800000u), 0x00000000u);
    ck_assert_uint_eq(fa_cuda_expf(NULL, 0x7F800000u), 0x7F800000u);
    ck_assert_uint_eq(fa_cuda_expf(NULL, 0x00000000u), 0x3F800000u);
    ck_assert_uint_eq(fa_cuda_expf(NULL, 0x80000000u), 0x3F800000u);
    ck_assert_uint_eq(fa_cuda_expf(NULL, 0x42C80000u), 0x7F800000u); /* 100 */
    ck_assert_uint_eq(fa_cuda_expf(NULL, 0xC2C80000u), 0x0000001Bu); /* -100,
                                                                   subnormal */
    ck_assert(((fa_cuda_expf(NULL, 0x7FC00001u) >> 22) & 0x1FFu) == 0x1FFu);
}
END_TEST

START_TEST(test_bounds)
{
    tst_rng rng;
    unsigned long n = 200000ul * tst_multiplier();
    unsigned bad = 0;

    tst_rng_init(&rng, 11);
    for (unsigned long i = 0; i < n; i++) {
        /* logf: every positive finite input, subnormals included */
        uint32_t x = (uint32_t)tst_rand_below(&rng, 0x7F800000u - 1) + 1;
        uint32_t got = fa_cuda_logf(x), want = mpfr_f(mpfr_log, x);
        if (x != 0x3F800000u && ulps(got, want) > 1 && bad++ < TST_MAX_PRINT)
            printf("f32_logf_cuda %08x %08x got %08x  seed %llu\n",
                   (unsigned)x, (unsigned)want, (unsigned)got,
                   (unsigned long long)tst_seed());
        /* expf on (-87, 88): normal results; the ex2 correctly rounded */
        x = (uint32_t)tst_rand_below(&rng, 0x42AE0000u); /* |x| < 87 */
        if (tst_rand64(&rng) & 1)
            x |= 0x80000000u;
        got = fa_cuda_expf(NULL, x);
        want = mpfr_f(mpfr_exp, x);
        if (ulps(got, want) > 2 && bad++ < TST_MAX_PRINT)
            printf("f32_expf_cuda %08x %08x got %08x  seed %llu\n",
                   (unsigned)x, (unsigned)want, (unsigned)got,
                   (unsigned long long)tst_seed());
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* libdevice's log2f and tanhf with flush-to-zero (FlexAttention's LSE
   and soft-capping): their special values, and within CUDA's stated
   bounds (1 and 2 ulps) of MPFR, with the correctly rounded EX2 and RCP
   in tanhf (the hardware's models move it by their own ulp) */
START_TEST(test_flex_math)
{
    tst_rng rng;
    unsigned long n = 100000ul * tst_multiplier();
    unsigned bad = 0;

    ck_assert_uint_eq(fa_cuda_log2f_ftz(0x3F800000u), 0x00000000u);
    ck_assert_uint_eq(fa_cuda_log2f_ftz(0x40000000u), 0x3F800000u);
    ck_assert_uint_eq(fa_cuda_log2f_ftz(0x4B000000u), 0x41B80000u); /* 23 */
    ck_assert_uint_eq(fa_cuda_log2f_ftz(0x00000001u), 0xFF800000u); /* FTZ */
    ck_assert_uint_eq(fa_cuda_log2f_ftz(0x00000000u), 0xFF800000u);
    ck_assert_uint_eq(fa_cuda_log2f_ftz(0x7F800000u), 0x7F800000u);
    ck_assert(((fa_cuda_log2f_ftz(0xBF800000u) >> 22) & 0x1FFu) == 0x1FFu);
    ck_assert_uint_eq(fa_cuda_tanhf_ftz(NULL, NULL, 0x00000000u), 0u);
    ck_assert_uint_eq(fa_cuda_tanhf_ftz(NULL, NULL, 0x41A00000u),
                      0x3F800000u); /* tanh(20) = 1 */
    ck_assert_uint_eq(fa_cuda_tanhf_ftz(NULL, NULL, 0xC1A00000u),
                      0xBF800000u);
    ck_assert(((fa_cuda_tanhf_ftz(NULL, NULL, 0x7FC00001u) >> 22) & 0x1FFu)
              == 0x1FFu);
    tst_rng_init(&rng, 12);
    for (unsigned long i = 0; i < n; i++) {
        /* log2f: every positive normal input */
        uint32_t x = 0x00800000u
                     + (uint32_t)tst_rand_below(&rng, 0x7F800000u - 0x00800000u);
        uint32_t got = fa_cuda_log2f_ftz(x), want = mpfr_f(mpfr_log2, x);
        if (ulps(got, want) > 1 && bad++ < TST_MAX_PRINT)
            printf("f32_log2f_cuda_ftz %08x %08x got %08x  seed %llu\n",
                   (unsigned)x, (unsigned)want, (unsigned)got,
                   (unsigned long long)tst_seed());
        /* tanhf on |x| in [2^-20, 16): both branches */
        x = 0x35800000u + (uint32_t)tst_rand_below(&rng, 0x41800000u
                                                           - 0x35800000u);
        if (tst_rand64(&rng) & 1)
            x |= 0x80000000u;
        got = fa_cuda_tanhf_ftz(NULL, NULL, x);
        want = mpfr_f(mpfr_tanh, x);
        if (ulps(got, want) > 2 && bad++ < TST_MAX_PRINT)
            printf("f32_tanhf_cuda_ftz %08x %08x got %08x  seed %llu\n",
                   (unsigned)x, (unsigned)want, (unsigned)got,
                   (unsigned long long)tst_seed());
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_cudamath");
    TCase *tc = tst_add_tcase(s, "cudamath", 60);

    tcase_add_test(tc, test_special);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_flex_math);
    return tst_run_suite(s);
}
