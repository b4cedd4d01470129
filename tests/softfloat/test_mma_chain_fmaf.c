/* test_mma_chain_fmaf.c -- the host path of sf_mma_gemm's fma-chain
   under the scalar ISA cap (gemm_chain_fmaf.c: RN_binary32(a b + c)
   through binary64, TwoSum and round to odd), called directly and
   compared with a chain of sf_f32_fma calls (an independent
   implementation) computed here: bits and flags, in each rounding mode a
   caller may have set.

   Directed cases are those a binary64 implementation can get wrong:
   binary32 midpoints pushed off by a term far below binary64's precision
   (both signs, both parities), exact zeros and their signs, subnormal and
   overflowing results and the overflow threshold, cancellation, |c| much
   larger than |a b| and the reverse.  Each runs in 35 columns (the
   kernel's vector columns and its scalar tail).  The path must run (it
   returns false when its self-check refuses the kernel): a test that
   only compared results would pass on the software fallback. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <fenv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/mma/mma_local.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define MAX_M 7
#define MAX_N 40
#define MAX_K 40

/* The rounding modes a caller may have set. */
static int
modes(int *out)
{
    int n = 0;

    out[n++] = FE_TONEAREST;
#ifdef FE_TOWARDZERO
    out[n++] = FE_TOWARDZERO;
#endif
#ifdef FE_UPWARD
    out[n++] = FE_UPWARD;
#endif
#ifdef FE_DOWNWARD
    out[n++] = FE_DOWNWARD;
#endif
    return n;
}

/* D = A B + C (C NULL: +0) through s_mma_chain_fmaf under rounding mode
   MODE, against the sf_f32_fma chain; WHAT names the case. */
static void
run_case(const char *what, size_t rows, size_t cols, size_t k,
         const uint32_t *a, const uint32_t *b, const uint32_t *c, int mode)
{
    const sf_mma_model *m = sf_mma_preset_by_name("fma-chain");
    uint32_t want[MAX_M * MAX_N], got[MAX_M * MAX_N], tmp[4 * MAX_N];
    sf_env ref = SF_ENV_IEEE, env = SF_ENV_IEEE;
    bool ran;

    ck_assert_ptr_nonnull(m);
    if (!s_mma_chain_fmaf_ok(m, &env)) {
        printf("no <fenv.h> default environment: the host path is off\n");
        return;
    }
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            sf_f32 acc = {c != NULL ? c[i * cols + j] : 0};
            for (size_t t = 0; t < k; t++)
                acc = sf_f32_fma((sf_f32){a[i * k + t]},
                                 (sf_f32){b[t * cols + j]}, acc, SF_RNE,
                                 &ref);
            want[i * cols + j] = acc.bits;
        }
    memset(got, 0xA5, sizeof got);
    ck_assert_int_eq(fesetround(mode), 0);
    feclearexcept(FE_ALL_EXCEPT);
    ran = s_mma_chain_fmaf(rows, cols, k, a, b, c, got, tmp, &env);
    ck_assert_int_eq(fegetround(), mode);
    ck_assert_int_eq(fetestexcept(FE_ALL_EXCEPT), 0);
    fesetenv(FE_DFL_ENV);
    if (!ran)
        ck_abort_msg("%s (%zux%zux%zu, rounding %x): the path refused its "
                     "kernel (self-check)",
                     what, rows, cols, k, (unsigned)mode);
    for (size_t i = 0; i < rows * cols; i++)
        if (got[i] != want[i])
            ck_abort_msg("%s (%zux%zux%zu, rounding %x): element %zu: a %08x "
                         "b %08x c %08x: %08x, want %08x",
                         what, rows, cols, k, (unsigned)mode, i,
                         a[(i / cols) * k], b[i % cols],
                         c != NULL ? c[i] : 0u, got[i], want[i]);
    if (env.flags != ref.flags)
        ck_abort_msg("%s (%zux%zux%zu, rounding %x): flags %02x, want %02x",
                     what, rows, cols, k, (unsigned)mode, env.flags,
                     ref.flags);
}

/* The directed cases (a, b, c), values exact in binary32. */
static const uint32_t directed[][3] = {
    /* (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24, a midpoint with an even value
       below; + 2^-80 must round up (binary64 rounds to the midpoint and
       then down), - 2^-80 down, + 0 to even; then 2^-149 for 2^-80 */
    {0x3F800800u, 0x3F800800u, 0x17800000u},
    {0x3F800800u, 0x3F800800u, 0x97800000u},
    {0x3F800800u, 0x3F800800u, 0x00000000u},
    {0x3F800800u, 0x3F800800u, 0x00000001u},
    {0x3F800800u, 0x3F800800u, 0x80000001u},
    /* the same negated */
    {0xBF800800u, 0x3F800800u, 0x97800000u},
    {0xBF800800u, 0x3F800800u, 0x17800000u},
    {0xBF800800u, 0x3F800800u, 0x80000001u},
    /* (1 + 2^-23) 1.5 = 1.5 + 2^-23 + 2^-24, a midpoint with an odd value
       below; - 2^-80 must round down, + 2^-80 up, + 0 to even */
    {0x3F800001u, 0x3FC00000u, 0x97800000u},
    {0x3F800001u, 0x3FC00000u, 0x17800000u},
    {0x3F800001u, 0x3FC00000u, 0x00000000u},
    {0xBF800001u, 0x3FC00000u, 0x17800000u},
    {0xBF800001u, 0x3FC00000u, 0x80000001u},
    /* at a binade's top: (1 - 2^-24) 2 = 2 - 2^-23; + 2^-25 rounds down,
       + 2^-24 is a tie that rounds up to 2 */
    {0x3F7FFFFFu, 0x40000000u, 0x33000000u},
    {0x3F7FFFFFu, 0x40000000u, 0x33800000u},
    /* exact zeros: 1 1 - 1 = +0; -0 1 + -0 = -0; 0 (-1) + 0 = +0;
       (-0)(-1) + (-0) = +0; 1 (-1) + 1 = +0; -1 1 + 1 = +0 */
    {0x3F800000u, 0x3F800000u, 0xBF800000u},
    {0x80000000u, 0x3F800000u, 0x80000000u},
    {0x00000000u, 0xBF800000u, 0x00000000u},
    {0x80000000u, 0xBF800000u, 0x80000000u},
    {0x3F800000u, 0xBF800000u, 0x3F800000u},
    {0x00000000u, 0x3F800000u, 0x80000000u},
    /* cancellation: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46; (1 + 2^-12)^2 -
       (1 + 2^-11) = 2^-24; RN(1/3) 3 - 1 = 2^-25 */
    {0x3F800001u, 0x3F800001u, 0xBF800002u},
    {0x3F800800u, 0x3F800800u, 0xBF801000u},
    {0x3EAAAAABu, 0x40400000u, 0xBF800000u},
    /* |c| >> |a b|: 1 + 2^-60; 1 + 2^-24 (a tie to even, down); (1 +
       2^-23) + 2^-24 (a tie, up); 1 + 2^-24 (1 + 2^-23)^2... as 2^-24
       (1 + 2^-23) + 1 (above the tie, up) */
    {0x21800000u, 0x3F800000u, 0x3F800000u},
    {0x33800000u, 0x3F800000u, 0x3F800000u},
    {0x33800000u, 0x3F800000u, 0x3F800001u},
    {0x33800001u, 0x3F800000u, 0x3F800000u},
    {0xB3800001u, 0x3F800000u, 0x3F800000u},
    /* |a b| >> |c|: 1.5 + 2^-149; 1.5 - 2^-149; 2^100 2^27 + 1 */
    {0x3FC00000u, 0x3F800000u, 0x00000001u},
    {0x3FC00000u, 0x3F800000u, 0x80000001u},
    {0x71800000u, 0x4D000000u, 0x3F800000u},
    /* subnormal results: 2^-100 2^-30 = 2^-130 exactly; 3 2^-149 / 2
       (tiny, inexact); 2^-126 (1 - 2^-24): tiny with an unbounded
       exponent, rounds to 2^-126; 2^-120 - (2^-120 - 2^-143) = 2^-143;
       a subnormal operand, 2^-149 2^100 = 2^-49 */
    {0x0D800000u, 0x30800000u, 0x00000000u},
    {0x00000003u, 0x3F000000u, 0x00000000u},
    {0x00800000u, 0x3F7FFFFFu, 0x00000000u},
    {0x03800000u, 0x3F800000u, 0x837FFFFFu},
    {0x00000001u, 0x71800000u, 0x00000000u},
    {0x00800000u, 0xBF7FFFFFu, 0x80000000u},
    /* the overflow threshold: FLT_MAX + 2^103 = 2^128 - 2^103 ties to
       +Inf; FLT_MAX + (2^103 - 2^79) rounds to FLT_MAX; 2^127 2 = +Inf;
       -FLT_MAX - 2^103 = -Inf */
    {0x7F7FFFFFu, 0x3F800000u, 0x73000000u},
    {0x7F7FFFFFu, 0x3F800000u, 0x72FFFFFFu},
    {0x7F000000u, 0x40000000u, 0x00000000u},
    {0xFF7FFFFFu, 0x3F800000u, 0xF3000000u},
};

#define N_DIRECTED (sizeof directed / sizeof directed[0])

/* Each directed case alone (k = 1) in 35 columns, the odd ones with b
   and c negated (the same case mirrored), and as step 3 of chains of
   eight steps whose other steps add 0 * 1. */
START_TEST(test_directed)
{
    int mv[4], nm = modes(mv);
    char what[64];

    for (int mi = 0; mi < nm; mi++)
        for (size_t d = 0; d < N_DIRECTED; d++) {
            uint32_t a8[8] = {0}, b1[35], c1[35], b8[8 * 35];
            for (size_t j = 0; j < 35; j++) {
                uint32_t s = j % 2 != 0 ? 0x80000000u : 0u;
                b1[j] = directed[d][1] ^ s;
                c1[j] = directed[d][2] ^ s;
            }
            snprintf(what, sizeof what, "directed %zu", d);
            run_case(what, 1, 35, 1, &directed[d][0], b1, c1, mv[mi]);
            a8[3] = directed[d][0];
            for (size_t t = 0; t < 8; t++)
                for (size_t j = 0; j < 35; j++)
                    b8[t * 35 + j] = t == 3 ? b1[j] : 0x3F800000u;
            snprintf(what, sizeof what, "directed %zu in a chain", d);
            run_case(what, 1, 35, 8, a8, b8, c1, mv[mi]);
        }
}
END_TEST

/* A finite FP32 value: exponents near 0, or (TINY) products that land in
   the subnormal range, or (1 in 8) a directed case's operand. */
static uint32_t
gen32(tst_rng *r, bool tiny, int which)
{
    uint64_t x = tst_rand64(r);
    uint32_t sign = (uint32_t)(x >> 63) << 31, frac = (uint32_t)x & 0x7FFFFFu;
    int e = tiny ? 127 - 66 + (int)((x >> 32) % 8)
                 : 127 - 4 + (int)((x >> 32) % 9);

    if ((x >> 40) % 8 == 0)
        return directed[(x >> 44) % N_DIRECTED][which];
    return sign | ((uint32_t)e << 23) | frac;
}

/* Random GEMMs (chains of up to 40 steps, cancellation: some C the
   negated product of the first step). */
START_TEST(test_random)
{
    static uint32_t a[MAX_M * MAX_K], b[MAX_K * MAX_N], c[MAX_M * MAX_N];
    int mv[4], nm = modes(mv);
    tst_rng r;

    tst_rng_init(&r, 0x666D6166u);
    for (int it = 0; it < 60; it++) {
        size_t rows = 1 + tst_rand_below(&r, MAX_M);
        size_t cols = 1 + tst_rand_below(&r, MAX_N);
        size_t k = 1 + tst_rand_below(&r, MAX_K);
        bool tiny = it % 4 == 3, use_c = it % 3 != 0;
        for (size_t i = 0; i < rows * k; i++)
            a[i] = gen32(&r, tiny, 0);
        for (size_t i = 0; i < k * cols; i++)
            b[i] = gen32(&r, tiny, 1);
        for (size_t i = 0; i < rows * cols; i++) {
            c[i] = gen32(&r, tiny, 2);
            if (it % 5 == 1) {
                sf_env e = SF_ENV_IEEE;
                c[i] = sf_f32_mul((sf_f32){a[(i / cols) * k]},
                                  (sf_f32){b[i % cols]}, SF_RNE, &e)
                           .bits
                       ^ 0x80000000u;
                if ((c[i] & 0x7F800000u) == 0x7F800000u)
                    c[i] = 0;
            }
        }
        run_case("random", rows, cols, k, a, b, use_c ? c : NULL,
                 mv[it % nm]);
    }
}
END_TEST

static Suite *
fmaf_suite(void)
{
    Suite *s = suite_create("mma_chain_fmaf");
    TCase *tc = tst_add_tcase(s, "chain", 60);

    tcase_add_test(tc, test_directed);
    tcase_add_test(tc, test_random);
    return s;
}

int
main(void)
{
    return tst_run_suite(fmaf_suite());
}
