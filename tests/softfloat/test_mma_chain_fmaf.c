/* test_mma_chain_fmaf.c -- sf_mma_gemm's fma-chain on the C library's
   fmaf (the host path under the scalar ISA cap), with fmaf replaced by
   this program's own definition (the library's call binds to it):

   - a correct fmaf (sf_f32_fma in the host's current rounding mode, the
     host flags raised): the path must call it, in round to nearest
     whatever mode the caller set, and give the software chain's bits and
     flags;
   - broken ones (a multiply-add rounded through binary64, flags never
     raised, subnormal results flushed): the path's self-check must refuse
     them (no call past the probes) and the results stay the software
     chain's.

   Directed GEMMs reach the cases each broken fmaf gets wrong.  When the
   compiler expanded fmaf inline (a target with a fused multiply-add
   instruction and flags that allow it), there is no call to replace: the
   test says so and passes. */
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

enum
{
    F_RIGHT,   /* correctly rounded in the current mode, flags raised */
    F_DOUBLE,  /* (float)((double)a * b + c): two roundings */
    F_NOFLAGS, /* right bits, no flag */
    F_FLUSH,   /* right bits, subnormal results flushed to zero */
    N_FAKES
};

static const char *const fake_names[N_FAKES] = {"right", "double",
                                                "no-flags", "flush"};
static int fake = F_RIGHT;
static long calls;

float fmaf(float x, float y, float z);

float
fmaf(float x, float y, float z)
{
    uint32_t a, b, c, r;
    sf_env e = SF_ENV_IEEE;
    sf_round rm = SF_RNE;
    int raise = 0, mode = fegetround();
    float out;

    calls++;
    if (fake == F_DOUBLE)
        return (float)((double)x * (double)y + (double)z);
    memcpy(&a, &x, 4);
    memcpy(&b, &y, 4);
    memcpy(&c, &z, 4);
#ifdef FE_TOWARDZERO
    if (mode == FE_TOWARDZERO)
        rm = SF_RTZ;
#endif
#ifdef FE_UPWARD
    if (mode == FE_UPWARD)
        rm = SF_RUP;
#endif
#ifdef FE_DOWNWARD
    if (mode == FE_DOWNWARD)
        rm = SF_RDN;
#endif
    r = sf_f32_fma((sf_f32){a}, (sf_f32){b}, (sf_f32){c}, rm, &e).bits;
    if (fake == F_FLUSH && (r & 0x7F800000u) == 0)
        r &= 0x80000000u;
    if (e.flags & SF_FLAG_INEXACT)
        raise |= FE_INEXACT;
    if (e.flags & SF_FLAG_UNDERFLOW)
        raise |= FE_UNDERFLOW;
    if (e.flags & SF_FLAG_OVERFLOW)
        raise |= FE_OVERFLOW;
    if (e.flags & SF_FLAG_INVALID)
        raise |= FE_INVALID;
    if (fake != F_NOFLAGS && raise != 0)
        feraiseexcept(raise);
    memcpy(&out, &r, 4);
    return out;
}

/* The path's self-check calls fmaf at most this many times. */
#define MAX_PROBES 16

#define MAX_M 7
#define MAX_N 20
#define MAX_K 40

/* A finite FP32 value: exponents near 0, or (TINY) products that land in
   the subnormal range. */
static uint32_t
gen32(tst_rng *r, bool tiny)
{
    uint64_t x = tst_rand64(r);
    uint32_t sign = (uint32_t)(x >> 63) << 31, frac = (uint32_t)x & 0x7FFFFFu;
    int e = tiny ? 127 - 66 + (int)((x >> 32) % 8)
                 : 127 - 4 + (int)((x >> 32) % 9);

    return sign | ((uint32_t)e << 23) | frac;
}

/* D = A B + C through the host path (scalar cap) under rounding mode
   MODE, against the software chain (SF_MMA_PATH_SCALAR); returns the
   fmaf calls made. */
static long
run_case(const char *what, size_t rows, size_t cols, size_t k,
         const uint32_t *a, const uint32_t *b, const uint32_t *c, int mode)
{
    const sf_mma_model *m = sf_mma_preset_by_name("fma-chain");
    uint32_t want[MAX_M * MAX_N], got[MAX_M * MAX_N];
    sf_env ref = SF_ENV_IEEE, env = SF_ENV_IEEE;
    long before;

    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(sf_mma_gemm(m, rows, cols, k, &sf_format_f32, a,
                                 &sf_format_f32, b, c, want,
                                 SF_MMA_PATH_SCALAR, &ref),
                     SF_MMA_PATH_SCALAR);
    env.isa = SF_ISA_SCALAR;
    memset(got, 0xA5, sizeof got);
    ck_assert_int_eq(fesetround(mode), 0);
    before = calls;
    (void)sf_mma_gemm(m, rows, cols, k, &sf_format_f32, a, &sf_format_f32, b,
                      c, got, SF_MMA_PATH_AUTO, &env);
    before = calls - before;
    ck_assert_int_eq(fegetround(), mode);
    fesetenv(FE_DFL_ENV);
    for (size_t i = 0; i < rows * cols; i++)
        if (got[i] != want[i])
            ck_abort_msg("fmaf %s, %s (%zux%zux%zu, rounding %x): element "
                         "%zu: %08x, want %08x",
                         fake_names[fake], what, rows, cols, k,
                         (unsigned)mode, i, got[i], want[i]);
    if (env.flags != ref.flags)
        ck_abort_msg("fmaf %s, %s (%zux%zux%zu, rounding %x): flags %02x, "
                     "want %02x",
                     fake_names[fake], what, rows, cols, k, (unsigned)mode,
                     env.flags, ref.flags);
    return before;
}

/* The directed cases (a, b, c): (1 + 2^-12)^2 + 2^-80 and (1 + 2^-23)
   1.5 - 2^-80 (ties broken far below binary64's precision: rounded
   through binary64, each goes the wrong way); 2^-100 2^-30 + 0 = 2^-130
   (an exact subnormal result); 1 3 + 2^-30 (inexact). */
static const uint32_t directed[4][3] = {
    {0x3F800800u, 0x3F800800u, 0x17800000u},
    {0x3F800001u, 0x3FC00000u, 0x97800000u},
    {0x0D800000u, 0x30800000u, 0x00000000u},
    {0x3F800000u, 0x40400000u, 0x30800000u},
};

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

START_TEST(test_fake)
{
    static uint32_t a[MAX_M * MAX_K], b[MAX_K * MAX_N], c[MAX_M * MAX_N];
    int mv[4], nm = modes(mv);
    long used = 0, most = 0;
    tst_rng r;

    fake = _i;
    /* each directed case as step 3 of eight columns' chains of eight
       steps whose other steps are 0 * 1 (exact, no flag): 64 products,
       enough for the path */
    for (int mi = 0; mi < nm; mi++)
        for (int d = 0; d < 4; d++) {
            uint32_t a8[8] = {0}, b8[64], c8[8];
            long n;
            a8[3] = directed[d][0];
            for (size_t t = 0; t < 64; t++)
                b8[t] = t / 8 == 3 ? directed[d][1] : 0x3F800000u;
            for (size_t j = 0; j < 8; j++)
                c8[j] = directed[d][2];
            n = run_case("directed", 1, 8, 8, a8, b8, c8, mv[mi]);
            most = n > most ? n : most;
            used += n;
        }
    tst_rng_init(&r, 0x666D6166u);
    for (int it = 0; it < 40; it++) {
        size_t rows = 1 + tst_rand_below(&r, MAX_M);
        size_t cols = 1 + tst_rand_below(&r, MAX_N);
        size_t k = 1 + tst_rand_below(&r, MAX_K);
        bool tiny = it % 4 == 3, use_c = it % 3 != 0;
        long n;
        for (size_t i = 0; i < rows * k; i++)
            a[i] = gen32(&r, tiny);
        for (size_t i = 0; i < k * cols; i++)
            b[i] = gen32(&r, tiny);
        for (size_t i = 0; i < rows * cols; i++)
            c[i] = gen32(&r, tiny);
        n = run_case("random", rows, cols, k, a, b, use_c ? c : NULL,
                     mv[it % nm]);
        most = n > most ? n : most;
        used += n;
    }
    if (used == 0) {
        printf("fmaf %s: the library made no call to fmaf (expanded "
               "inline?): nothing to replace\n",
               fake_names[fake]);
        return;
    }
    if (fake == F_RIGHT)
        ck_assert_msg(most > MAX_PROBES,
                      "fmaf right: at most %ld calls per GEMM: the path "
                      "refused a correct fmaf",
                      most);
    else
        ck_assert_msg(most <= MAX_PROBES,
                      "fmaf %s: %ld calls in one GEMM: the self-check "
                      "let it run",
                      fake_names[fake], most);
    printf("fmaf %s: %ld calls, at most %ld per GEMM\n", fake_names[fake],
           used, most);
}
END_TEST

static Suite *
fmaf_suite(void)
{
    Suite *s = suite_create("mma_chain_fmaf");
    TCase *tc = tst_add_tcase(s, "fmaf", 60);

    tcase_add_loop_test(tc, test_fake, 0, N_FAKES);
    return s;
}

int
main(void)
{
    return tst_run_suite(fmaf_suite());
}
