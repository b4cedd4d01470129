/* test_avx512bf16.c -- sf_f32_to_bf16 under SF_ENV_AVX512BF16 against
   VCVTNEPS2BF16 on 2^24 inputs, bit for bit */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "ref/avx512bf16.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

/*----------------------------------------------------------------------------
 * The sample: every high half, each with 256 low halves: the fixed patterns
 * below (zero, one, tie, tie +- 1, all ones, ...) and random ones.  High
 * halves run through every sign, exponent (zero and subnormal: DAZ gives a
 * signed zero; 0xFF: Inf and NaNs with every upper payload) and upper
 * fraction; the low halves decide ties, sticky bits and low NaN payloads.
 *--------------------------------------------------------------------------*/
static const uint16_t fixed_lows[] = {
    0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x7FFE, 0xFFFE,
    0x4000, 0xC000, 0x3FFF, 0xBFFF, 0x0100, 0x8100, 0x00FF, 0x2000};
#define N_FIXED (sizeof fixed_lows / sizeof fixed_lows[0])
#define N_LOWS 256u

START_TEST(test_sample)
{
    const char *why = ref_avx512bf16_missing();
    unsigned long n = 0, bad = 0;
    unsigned printed = 0;
    tst_rng r;

    if (why != NULL) {
        printf("test_avx512bf16: skipped: %s\n", why);
        return;
    }
    tst_rng_init(&r, 0xBF16u);
    for (uint32_t hi = 0; hi < 0x10000u; hi++) {
        uint32_t in[N_LOWS];
        uint16_t hw[N_LOWS];

        for (unsigned k = 0; k < N_LOWS; k++) {
            uint32_t lo =
                k < N_FIXED ? fixed_lows[k] : (uint32_t)(tst_rand64(&r) >> 48);
            in[k] = hi << 16 | lo;
        }
        for (unsigned k = 0; k < N_LOWS; k += 16)
            ref_avx512bf16_cvt16(in + k, hw + k);
        for (unsigned k = 0; k < N_LOWS; k++) {
            sf_env env = SF_ENV_AVX512BF16;
            sf_f32 x = {in[k]};
            uint16_t got = sf_f32_to_bf16(x, SF_RNE, &env).bits;

            n++;
            if (got != hw[k]) {
                bad++;
                if (printed < TST_MAX_PRINT) {
                    uint64_t op = in[k];
                    printed++;
                    printf("(env SF_ENV_AVX512BF16; flags not compared)\n");
                    tst_print_case("to_bf16", &sf_format_f32, SF_RNE, &op, 1,
                                   hw[k], 0, got, 0);
                }
            }
        }
    }
    printf("avx512bf16: %lu conversions, %lu mismatches\n", n, bad);
    ck_assert_msg(bad == 0,
                  "sf_f32_to_bf16 differs from VCVTNEPS2BF16 in %lu of %lu "
                  "cases",
                  bad, n);
}
END_TEST

static Suite *
avx512bf16_suite(void)
{
    Suite *s = suite_create("avx512bf16");

    tcase_add_test(tst_add_tcase(s, "sample", 300), test_sample);
    return s;
}

int
main(void)
{
    return tst_run_suite(avx512bf16_suite());
}
