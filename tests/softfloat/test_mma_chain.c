/* test_mma_chain.c -- sf_mma_gemm with the fma-chain model: the paths on
   the host's FMA unit (the vector kernels of every ISA the CPU runs, and
   the C library's fmaf under the scalar cap; env->isa forcing each)
   against a chain of sf_f32_fma per element written here and against
   the portable path, bits and flags, on random FP32, BF16 and FP16 data
   with subnormals, zeros, exact cancellations, overflow, underflow,
   infinities and NaNs, under host floating environments other than the
   default (MXCSR states; rounding modes and raised flags set through
   <fenv.h>), which the call must put back unchanged */
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
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_MXCSR 1
#else
#define HAVE_MXCSR 0
#endif

#define MAX_M 9
#define MAX_N 41
#define MAX_K 70

enum
{
    D_NORMAL,   /* exponents near 0 */
    D_WIDE,     /* any exponent */
    D_SMALLINT, /* small integers: exact cancellations to zero */
    D_OVERFLOW, /* products near FP32's top */
    D_TINY,     /* products and sums in the subnormal range */
    D_SPECIAL,  /* with infinities and NaNs */
    N_DATA
};

static const char *const data_names[N_DATA] = {
    "normal", "wide", "smallint", "overflow", "tiny", "special"};

/* An FP32 value of data kind KIND (SUBS: with zeros and subnormal
   operands, whose products underflow and send most blocks to the
   recomputation). */
static uint32_t
gen32(tst_rng *r, int kind, bool subs)
{
    uint64_t x = tst_rand64(r);
    uint32_t sign = (uint32_t)(x >> 63) << 31, frac = (uint32_t)x & 0x7FFFFFu;
    unsigned cls = (unsigned)((x >> 24) % 100);
    int e;

    if (cls < 6 && subs)
        return sign; /* zero */
    if (cls < 12 && subs)
        return sign | (frac != 0 ? frac : 1u); /* subnormal */
    switch (kind) {
    case D_WIDE:
        e = 1 + (int)((x >> 32) % 254);
        break;
    case D_SMALLINT:
        return sign | ((uint32_t)(127 + (x >> 32) % 3) << 23)
               | (((uint32_t)x & 3u) << 21);
    case D_OVERFLOW:
        e = 127 + 60 + (int)((x >> 32) % 8);
        break;
    case D_TINY:
        e = 127 - 66 + (int)((x >> 32) % 8);
        break;
    case D_SPECIAL:
        if (cls < 15)
            return sign | 0x7F800000u;
        if (cls < 18)
            return sign | 0x7F800000u | (frac != 0 ? frac : 1u);
        e = 127 - 4 + (int)((x >> 32) % 9);
        break;
    default:
        e = 127 - 4 + (int)((x >> 32) % 9);
        break;
    }
    return sign | ((uint32_t)e << 23) | frac;
}

/* Element I of a matrix of format F from FP32 bits X: kept for FP32,
   else X converted (RNE) to BF16 or FP16; returns the FP32 value of the
   stored element (exact widening). */
static uint32_t
store(const sf_format *f, void *p, size_t i, uint32_t x)
{
    sf_env e = SF_ENV_IEEE;

    if (f == &sf_format_f32) {
        memcpy((char *)p + 4 * i, &x, 4);
        return x;
    }
    if (f == &sf_format_bf16) {
        uint16_t h = sf_f32_to_bf16((sf_f32){x}, SF_RNE, &e).bits;
        memcpy((char *)p + 2 * i, &h, 2);
        return (uint32_t)h << 16;
    }
    {
        uint16_t h = sf_f32_to_f16((sf_f32){x}, SF_RNE, &e).bits;
        memcpy((char *)p + 2 * i, &h, 2);
        return sf_f16_to_f32((sf_f16){h}, SF_RNE, &e).bits;
    }
}

static const sf_format *const fmts[3] = {&sf_format_f32, &sf_format_bf16,
                                         &sf_format_f16};

#if HAVE_MXCSR
/* Host states the call must not depend on: default; FTZ and DAZ; round
   toward zero; round up with FTZ, DAZ and sticky flags set. */
static const unsigned mxcsr_states[4] = {0x1F80u, 0x9FC0u, 0x7F80u,
                                         0xDFFFu};
#define N_MXCSR 4
#else
#define N_MXCSR 1
#endif

/* Through <fenv.h>: round down with every flag raised; round up; round
   toward zero (each mode where the host has it). */
static const int fenv_modes[3] = {
#ifdef FE_DOWNWARD
    FE_DOWNWARD,
#else
    -1,
#endif
#ifdef FE_UPWARD
    FE_UPWARD,
#else
    -1,
#endif
#ifdef FE_TOWARDZERO
    FE_TOWARDZERO,
#else
    -1,
#endif
};
#define N_STATES (N_MXCSR + 3)

/* Installs host state S (0 .. N_STATES - 1); false when the host lacks
   it.  *ROUND and *RAISED: the rounding mode and the flags set. */
static bool
set_state(int s, int *round, int *raised)
{
    fesetenv(FE_DFL_ENV);
    if (s < N_MXCSR) {
#if HAVE_MXCSR
        _mm_setcsr(mxcsr_states[s]);
#endif
    } else {
        int mode = fenv_modes[s - N_MXCSR];
        if (mode < 0 || fesetround(mode) != 0)
            return false;
        if (s == N_MXCSR)
            feraiseexcept(FE_ALL_EXCEPT);
    }
    *round = fegetround();
    *raised = fetestexcept(FE_ALL_EXCEPT);
    return true;
}

/* Checks that state S is as set_state left it, then puts back the
   default environment. */
static void
check_state(int s, int round, int raised, const char *what, int it,
            int isa)
{
    int r2 = fegetround(), f2 = fetestexcept(FE_ALL_EXCEPT);
#if HAVE_MXCSR
    unsigned host = _mm_getcsr();
    if (s < N_MXCSR && host != mxcsr_states[s])
        ck_abort_msg("%s %d isa %s: MXCSR %08x after the call, %08x before",
                     what, it, sf_isa_name((sf_isa)isa), host,
                     mxcsr_states[s]);
#endif
    fesetenv(FE_DFL_ENV);
    if (r2 != round || f2 != raised)
        ck_abort_msg("%s %d isa %s state %d: rounding %x flags %x after the "
                     "call, %x %x before",
                     what, it, sf_isa_name((sf_isa)isa), s, (unsigned)r2,
                     (unsigned)f2, (unsigned)round, (unsigned)raised);
}

START_TEST(test_chain_host)
{
    const sf_mma_model *m = sf_mma_preset_by_name("fma-chain");
    static uint32_t a[MAX_M * MAX_K], b[MAX_K * MAX_N], c[MAX_M * MAX_N],
        aw[MAX_M * MAX_K], bw[MAX_K * MAX_N], want[MAX_M * MAX_N],
        ref[MAX_M * MAX_N], got[MAX_M * MAX_N];
    static const int isas[] = {SF_ISA_AUTO, SF_ISA_SCALAR, SF_ISA_AVX2,
                               SF_ISA_AVX512};
    tst_rng r;
    long cases = 0;

    ck_assert_ptr_nonnull(m);
    tst_rng_init(&r, 0x6D617468u);
    for (int it = 0; it < 720; it++) {
        int kind = it % N_DATA;
        const sf_format *fa = fmts[(it / N_DATA) % 3];
        const sf_format *fb = fmts[(it / N_DATA / 3) % 3];
        size_t rows = 1 + tst_rand_below(&r, MAX_M);
        size_t cols = 1 + tst_rand_below(&r, MAX_N);
        size_t k = 1 + tst_rand_below(&r, MAX_K);
        bool use_c = tst_rand_below(&r, 4) != 0, finite = true;
        bool subs = (it / 54) % 2 != 0;
        unsigned want_flags = 0, ref_flags;
        sf_env env = SF_ENV_IEEE;

        for (size_t i = 0; i < rows * k; i++)
            aw[i] = store(fa, a, i, gen32(&r, kind, subs));
        for (size_t i = 0; i < k * cols; i++)
            bw[i] = store(fb, b, i, gen32(&r, kind, subs));
        for (size_t i = 0; i < rows * cols; i++)
            c[i] = gen32(&r, kind == D_SMALLINT ? D_NORMAL : kind, subs);
        for (size_t i = 0; i < rows * k; i++)
            finite = finite && (aw[i] & 0x7F800000u) != 0x7F800000u;
        for (size_t i = 0; i < k * cols; i++)
            finite = finite && (bw[i] & 0x7F800000u) != 0x7F800000u;
        for (size_t i = 0; use_c && i < rows * cols; i++)
            finite = finite && (c[i] & 0x7F800000u) != 0x7F800000u;
        /* the chain by hand: one sf_f32_fma per product, from C or +0 */
        for (size_t i = 0; finite && i < rows; i++)
            for (size_t j = 0; j < cols; j++) {
                sf_f32 acc = {use_c ? c[i * cols + j] : 0};
                for (size_t t = 0; t < k; t++)
                    acc = sf_f32_fma((sf_f32){aw[i * k + t]},
                                     (sf_f32){bw[t * cols + j]}, acc, SF_RNE,
                                     &env);
                want[i * cols + j] = acc.bits;
            }
        want_flags = env.flags;
        /* the portable path */
        env = (sf_env)SF_ENV_IEEE;
        ck_assert_int_eq(sf_mma_gemm(m, rows, cols, k, fa, a, fb, b,
                                     use_c ? c : NULL, ref,
                                     SF_MMA_PATH_SCALAR, &env),
                         SF_MMA_PATH_SCALAR);
        ref_flags = env.flags;
        for (size_t i = 0; finite && i < rows * cols; i++)
            if (ref[i] != want[i])
                ck_abort_msg("portable chain: case %d element %zu: %08x, "
                             "want %08x",
                             it, i, ref[i], want[i]);
        if (finite)
            ck_assert_uint_eq(ref_flags, want_flags);
        for (size_t u = 0; u < sizeof isas / sizeof isas[0]; u++) {
            if (!sf_isa_supported((sf_isa)isas[u]))
                continue;
            for (int s = 0; s < N_STATES; s++) {
                int round, raised;
                if (!set_state(s, &round, &raised))
                    continue;
                env = (sf_env)SF_ENV_IEEE;
                env.isa = isas[u];
                memset(got, 0xA5, sizeof got);
                (void)sf_mma_gemm(m, rows, cols, k, fa, a, fb, b,
                                  use_c ? c : NULL, got, SF_MMA_PATH_AUTO,
                                  &env);
                check_state(s, round, raised, "case", it, isas[u]);
                for (size_t i = 0; i < rows * cols; i++)
                    if (got[i] != ref[i])
                        ck_abort_msg(
                            "case %d (%s, %s x %s, %zux%zux%zu, c %d) isa %s "
                            "state %d element %zu: %08x, want %08x",
                            it, data_names[kind], fa->name, fb->name, rows,
                            cols, k, use_c, sf_isa_name((sf_isa)isas[u]), s,
                            i, got[i], ref[i]);
                if (env.flags != ref_flags)
                    ck_abort_msg("case %d (%s, subnormals %d) isa %s state %d: "
                                 "flags %02x, want %02x",
                                 it, data_names[kind], subs,
                                 sf_isa_name((sf_isa)isas[u]), s, env.flags,
                                 ref_flags);
                cases++;
            }
        }
    }
    ck_assert_int_gt(cases, 0);
}
END_TEST

/* The flags of every kind are reached (so the recomputed blocks and the
   mapped flag both run), and the results that a multiply-add rounded
   twice (through binary64) or flushed would get wrong, on every path. */
START_TEST(test_chain_flags_reached)
{
    const sf_mma_model *m = sf_mma_preset_by_name("fma-chain");
    /* 2^100 * 2^100 overflows; 2^-70 * 2^-70 (1 + 2^-23) underflows
       (2^-140 + 2^-163 rounds to 2^-140); 1 * 3 + 2^-30 is inexact;
       (1 + 2^-12)^2 + 2^-80 = 1 + 2^-11 + 2^-24 + 2^-80 rounds up (a tie
       to even, down, once rounded to binary64); (1 + 2^-23) 1.5 - 2^-80
       rounds down (a tie to even, up, through binary64); 2^-100 2^-30 is
       the subnormal 2^-130, exact (the values by exact rational
       arithmetic) */
    static const uint32_t a[6] = {0x71800000u, 0x1C800000u, 0x3F800000u,
                                  0x3F800800u, 0x3F800001u, 0x0D800000u};
    static const uint32_t b[6] = {0x71800000u, 0x1C800001u, 0x40400000u,
                                  0x3F800800u, 0x3FC00000u, 0x30800000u};
    static const uint32_t c[6] = {0, 0, 0x30800000u, 0x17800000u,
                                  0x97800000u, 0};
    static const unsigned want[6] = {SF_FLAG_OVERFLOW | SF_FLAG_INEXACT,
                                     SF_FLAG_UNDERFLOW | SF_FLAG_INEXACT,
                                     SF_FLAG_INEXACT, SF_FLAG_INEXACT,
                                     SF_FLAG_INEXACT, 0};
    static const uint32_t want_d[6] = {0x7F800000u, 0x00000200u,
                                       0x40400000u, 0x3F801001u,
                                       0x3FC00001u, 0x00080000u};
    static const int isas[2] = {SF_ISA_AUTO, SF_ISA_SCALAR};

    /* each case alone (1 x 1 x 1) and, so that the host paths take it
       (the fmaf path needs 64 products), as step 3 of eight columns'
       chains of eight steps whose other steps are 0 * 1 (exact, no flag:
       every column's result is the case's) */
    for (int u = 0; u < 2; u++)
        for (int i = 0; i < 6; i++)
            for (int big = 0; big < 2; big++) {
                uint32_t ab[8] = {0}, bb[64], cb[8], d[8];
                size_t n = big ? 8 : 1;
                sf_env env = SF_ENV_IEEE;
                env.isa = isas[u];
                ab[big ? 3 : 0] = a[i];
                for (size_t t = 0; t < 64; t++)
                    bb[t] = t / 8 == 3 || !big ? b[i] : 0x3F800000u;
                for (size_t j = 0; j < 8; j++)
                    cb[j] = c[i];
                memset(d, 0xA5, sizeof d);
                (void)sf_mma_gemm(m, 1, n, n, &sf_format_f32, ab,
                                  &sf_format_f32, bb, cb, d,
                                  SF_MMA_PATH_AUTO, &env);
                for (size_t j = 0; j < n; j++)
                    if (d[j] != want_d[i] || env.flags != want[i])
                        ck_abort_msg("isa %s, 1x%zux%zu: %08x * %08x + %08x: "
                                     "%08x flags %02x, want %08x flags %02x",
                                     sf_isa_name((sf_isa)isas[u]), n, n,
                                     a[i], b[i], c[i], d[j], env.flags,
                                     want_d[i], want[i]);
            }
}
END_TEST

static Suite *
chain_suite(void)
{
    Suite *s = suite_create("mma_chain");
    TCase *tc = tst_add_tcase(s, "host", 60);

    tcase_add_test(tc, test_chain_host);
    tcase_add_test(tc, test_chain_flags_reached);
    return s;
}

int
main(void)
{
    return tst_run_suite(chain_suite());
}
