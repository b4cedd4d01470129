/* test_mma_avx512bf16.c -- the avx512bf16 preset against VDPBF16PS on this
   CPU: directed lanes (NaN priority, signed zeros, Inf, overflow, FTZ),
   10^5 random instructions of 16 lanes, and chained dot products */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/softfloat/test_mma_dpbf16.h"
#include "tests/support/suite.h"

#define N_RANDOM 100000ul
#define MAX_LANES 4096

#if DP_HW

/* Compares N lanes (any N) with the model; returns the mismatches. */
static unsigned long
compare_lanes(const uint32_t *c, const uint32_t *a, const uint32_t *b,
              size_t n, unsigned *printed)
{
    const sf_mma_model *m = sf_mma_preset_by_name("avx512bf16");
    unsigned long bad = 0;

    for (size_t k = 0; k < n; k += 16) {
        uint32_t cc[16] = {0}, aa[16] = {0}, bb[16] = {0}, hw[16];
        size_t len = n - k < 16 ? n - k : 16;
        memcpy(cc, c + k, len * sizeof *cc);
        memcpy(aa, a + k, len * sizeof *aa);
        memcpy(bb, b + k, len * sizeof *bb);
        dp_hw16(cc, aa, bb, hw);
        for (size_t i = 0; i < len; i++) {
            uint32_t z = dp_model(m, cc[i], aa[i], bb[i]);
            if (z != hw[i]) {
                bad++;
                if (*printed < TST_MAX_PRINT) {
                    (*printed)++;
                    dp_print(cc[i], aa[i], bb[i], hw[i], z);
                }
            }
        }
    }
    return bad;
}

/* True, after saying why, when this CPU or compiler cannot run the
   instruction. */
static bool
skipped(void)
{
    const char *why = dp_hw_missing();

    if (why != NULL)
        printf("test_mma_avx512bf16: skipped: %s\n", why);
    return why != NULL;
}

/* Directed lanes: every subset of {a0, b0, a1, b1, c} as NaNs (signalling
   and quiet, distinct payloads and signs), every sign pattern of zeros,
   Inf combinations, overflow and the FTZ threshold. */
START_TEST(test_directed)
{
    static uint32_t c[MAX_LANES], a[MAX_LANES], b[MAX_LANES];
    static const uint16_t vals[] = {0x3F80, 0xBF80, 0x0000, 0x8000, 0x7F80,
                                    0xFF80, 0x0001, 0x807F, 0x7F7F, 0xFF7F,
                                    0x2000, 0xA000, 0x1F80, 0x3400};
    static const uint32_t cvals[] = {
        0x3F800000, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001,
        0x807FFFFF, 0x7F7FFFFF, 0x00800000, 0x80800000, 0x33800000};
    const size_t nv = sizeof vals / sizeof vals[0];
    const size_t nc = sizeof cvals / sizeof cvals[0];
    size_t n = 0;
    unsigned printed = 0;
    unsigned long bad;

    if (skipped())
        return;
    for (unsigned mask = 1; mask < 32; mask++) {
        for (unsigned quiet = 0; quiet < 2; quiet++) {
            uint16_t q = quiet ? 0x0040 : 0;
            uint16_t a0 = (mask & 2) ? (uint16_t)(0x7F81 | q) : 0x3F80;
            uint16_t b0 = (mask & 4) ? (uint16_t)(0xFF82 | q) : 0x3F80;
            uint16_t a1 = (mask & 8) ? (uint16_t)(0x7F83 | q) : 0x3F80;
            uint16_t b1 = (mask & 16) ? (uint16_t)(0xFF84 | q) : 0x3F80;
            c[n] =
                (mask & 1) ? (quiet ? 0xFFC00005u : 0x7F800005u) : 0x3F800000u;
            a[n] = (uint32_t)a1 << 16 | a0;
            b[n] = (uint32_t)b1 << 16 | b0;
            n++;
        }
    }
    /* the 14^4 * 11 products of the special values would be 420k lanes;
       take every a pair with a few b pairs and every C */
    for (size_t i0 = 0; i0 < nv; i0++)
        for (size_t i1 = 0; i1 < nv; i1++)
            for (size_t j = 0; j < nv && n + nc + 16 <= MAX_LANES; j += 3)
                for (size_t k = 0; k < nc && n + 16 < MAX_LANES; k += 2) {
                    a[n] = (uint32_t)vals[i1] << 16 | vals[i0];
                    b[n] = (uint32_t)vals[(j + i0) % nv] << 16 | vals[j];
                    c[n] = cvals[(k + i1) % nc];
                    n++;
                }
    {
        /* FTZ threshold: C = +-2^-126 plus a product of -+2^-160 rounds
           back to +-2^-126 (kept: tininess after rounding) */
        static const uint32_t ftz[][3] = {
            {0x00800000, 0x00009780, 0x00001780},
            {0x80800000, 0x00001780, 0x00001780},
            {0x00800000, 0x17809780, 0x17801780},
            {0x00800001, 0x00009780, 0x00001780},
            {0x00800000, 0x00008080, 0x00003F00},
            {0x00800000, 0x00009F80, 0x00001F80},
            {0x00000000, 0x00000080, 0x00003F00}};
        for (size_t i = 0; i < sizeof ftz / sizeof ftz[0]; i++) {
            c[n] = ftz[i][0];
            a[n] = ftz[i][1];
            b[n] = ftz[i][2];
            n++;
        }
    }
    bad = compare_lanes(c, a, b, n, &printed);
    printf("avx512bf16 directed: %zu lanes, %lu mismatches\n", n, bad);
    ck_assert_msg(bad == 0, "%lu of %zu directed lanes differ", bad, n);
}
END_TEST

START_TEST(test_random)
{
    unsigned long count = N_RANDOM * tst_multiplier(), bad = 0;
    unsigned printed = 0;
    tst_rng r;

    if (skipped())
        return;
    tst_rng_init(&r, 0xD9B16u);
    for (unsigned long v = 0; v < count; v++) {
        uint32_t c[16], a[16], b[16];
        dp_gen16(&r, c, a, b);
        bad += compare_lanes(c, a, b, 16, &printed);
    }
    printf("avx512bf16 random: %lu instructions (%lu lanes), %lu "
           "mismatches\n",
           count, count * 16, bad);
    ck_assert_msg(bad == 0, "%lu of %lu random lanes differ", bad, count * 16);
}
END_TEST

/* Dot products of K = 2..64 elements: K/2 instructions chained through the
   accumulator against sf_mma_dot (blocks of two, ascending). */
START_TEST(test_chain)
{
    const sf_mma_model *m = sf_mma_preset_by_name("avx512bf16");
    unsigned long bad = 0, n = 0;
    unsigned printed = 0;
    tst_rng r;

    if (skipped())
        return;
    tst_rng_init(&r, 0xC4A1u);
    for (unsigned rep = 0; rep < 200; rep++) {
        unsigned pairs = 1 + (unsigned)(tst_rand64(&r) % 32);
        uint16_t a[16][64], b[16][64];
        uint32_t acc[16], c0[16];
        for (unsigned i = 0; i < 16; i++) {
            int base = (int)(tst_rand64(&r) % 21) - 10;
            c0[i] = acc[i] = dp_gen_f32(&r, base);
            for (unsigned t = 0; t < 2 * pairs; t++) {
                a[i][t] = dp_gen_bf16(&r, base);
                b[i][t] = dp_gen_bf16(&r, base);
            }
        }
        for (unsigned p = 0; p < pairs; p++) {
            uint32_t pa[16], pb[16];
            for (unsigned i = 0; i < 16; i++) {
                pa[i] = (uint32_t)a[i][2 * p + 1] << 16 | a[i][2 * p];
                pb[i] = (uint32_t)b[i][2 * p + 1] << 16 | b[i][2 * p];
            }
            dp_hw16(acc, pa, pb, acc);
        }
        for (unsigned i = 0; i < 16; i++) {
            sf_env env = SF_ENV_AVX512BF16;
            uint32_t z = (uint32_t)sf_mma_dot(m, &sf_format_bf16, a[i], 1,
                                              &sf_format_bf16, b[i], 1,
                                              2 * pairs, c0[i], &env);
            n++;
            if (z != acc[i]) {
                bad++;
                if (printed++ < TST_MAX_PRINT)
                    printf("chain K=%u lane %u: c=%08x hw=%08x model=%08x\n",
                           2 * pairs, i, (unsigned)c0[i], (unsigned)acc[i],
                           (unsigned)z);
            }
        }
    }
    printf("avx512bf16 chains: %lu dot products, %lu mismatches\n", n, bad);
    ck_assert_msg(bad == 0, "%lu of %lu chained dot products differ", bad, n);
}
END_TEST

#else /* !DP_HW */

START_TEST(test_directed)
{
    printf("test_mma_avx512bf16: skipped: %s\n", dp_hw_missing());
}
END_TEST

START_TEST(test_random)
{}
END_TEST

START_TEST(test_chain)
{}
END_TEST

#endif /* DP_HW */

static Suite *
dp_suite(void)
{
    Suite *s = suite_create("mma_avx512bf16");
    TCase *tc = tst_add_tcase(s, "vdpbf16ps", 300);

    tcase_add_test(tc, test_directed);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_chain);
    return s;
}

int
main(void)
{
    return tst_run_suite(dp_suite());
}
