/* test_sr.c -- stochastic rounding (SF_SR): the generator, reproducibility,
   the draw counter, the documented up-iff-U<F rule, unbiasedness and
   "only the two neighbours" */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

/*----------------------------------------------------------------------------
 * Independent helpers.
 *--------------------------------------------------------------------------*/
/* The documented generator, written out: z = seed + (i + 1) * gamma, then
   the SplitMix64 finaliser (xor-shift 30, multiply, xor-shift 27,
   multiply, xor-shift 31). */
static uint64_t
ref_sr_random(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * UINT64_C(0x9E3779B97F4A7C15);

    z ^= z >> 30;
    z *= UINT64_C(0xBF58476D1CE4E5B9);
    z ^= z >> 27;
    z *= UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return z;
}

/* Value of a finite encoding with E exponent bits and M fraction bits
   (bias 2^(E-1) - 1), decoded here with integer code and ldexp. */
static double
decode(unsigned e_bits, unsigned m_bits, uint64_t bits)
{
    uint64_t frac = bits & ((UINT64_C(1) << m_bits) - 1);
    uint64_t bexp = (bits >> m_bits) & ((UINT64_C(1) << e_bits) - 1);
    int bias = (1 << (e_bits - 1)) - 1;
    bool neg = (bits >> (m_bits + e_bits)) & 1;
    double v;

    if (bexp == 0)
        v = ldexp((double)frac, 1 - bias - (int)m_bits);
    else
        v = ldexp((double)(frac | (UINT64_C(1) << m_bits)),
                  (int)bexp - bias - (int)m_bits);
    return neg ? -v : v;
}

static double
dec_bf16(uint64_t b)
{
    return decode(8, 7, b);
}

static double
dec_f32(uint64_t b)
{
    return decode(8, 23, b);
}

/* An event sink that keeps the last event and counts them. */
typedef struct
{
    unsigned long n;
    sf_event last;
} capture;

static void
capture_fn(void *user, const sf_event *ev)
{
    capture *c = user;
    c->n++;
    c->last = *ev;
}

static sf_env
sr_env(uint64_t seed)
{
    sf_env env = SF_ENV_IEEE;
    env.sr_seed = seed;
    env.sr_counter = 0;
    return env;
}

/*----------------------------------------------------------------------------
 * The generator.
 *--------------------------------------------------------------------------*/
START_TEST(test_generator)
{
    static const uint64_t seeds[] = {0, 1, 42, UINT64_C(0xFFFFFFFFFFFFFFFF),
                                     UINT64_C(0x9E3779B97F4A7C15)};
    unsigned long bad = 0, n = 0;
    tst_rng r;

    tst_rng_init(&r, 0x5A00u);
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (uint64_t i = 0; i < 1000; i++) {
            n++;
            bad += sf_sr_random(seeds[s], i) != ref_sr_random(seeds[s], i);
        }
    for (int k = 0; k < 100000; k++) {
        uint64_t seed = tst_rand64(&r), i = tst_rand64(&r);
        n++;
        bad += sf_sr_random(seed, i) != ref_sr_random(seed, i);
    }
    /* a known value: seed 0, counter 0 is SplitMix64's first output for
       state 0 */
    n++;
    bad += sf_sr_random(0, 0) != UINT64_C(0xE220A8397B1DCDAF);
    ck_assert_msg(bad == 0,
                  "sf_sr_random differs from the documented SplitMix64 "
                  "finaliser in %lu of %lu cases",
                  bad, n);
}
END_TEST

/*----------------------------------------------------------------------------
 * Reproducibility and the counter.
 *--------------------------------------------------------------------------*/
/* One step of a mixed SR workload; every case has a finite non-zero
   result, so each draws exactly once. */
static uint64_t
workload_step(tst_rng *r, sf_env *env, unsigned k)
{
    uint32_t u = (uint32_t)tst_rand64(r) & 0x3FFFFFFFu; /* finite, > 0 */
    uint32_t v = (uint32_t)tst_rand64(r) & 0x3FFFFFFFu;
    sf_f32 a = {u | 0x00800000u}, b = {v | 0x00800000u};
    sf_bf16 x = {(uint16_t)((u >> 16) | 0x0080u)};
    sf_bf16 y = {(uint16_t)((v >> 16) | 0x0080u)};

    switch (k % 6) {
    case 0:
        return sf_f32_to_bf16(a, SF_SR, env).bits;
    case 1:
        return sf_bf16_add(x, y, SF_SR, env).bits;
    case 2:
        return sf_bf16_mul(x, y, SF_SR, env).bits;
    case 3:
        return sf_f32_div(a, b, SF_SR, env).bits;
    case 4:
        return sf_f32_sqrt(a, SF_SR, env).bits;
    default:
        return sf_f32_fma(a, b, a, SF_SR, env).bits;
    }
}

START_TEST(test_same_seed)
{
    const unsigned long n = 200000;
    sf_env e1 = sr_env(12345), e2 = sr_env(12345);
    tst_rng r1, r2;
    unsigned long diff = 0;

    tst_rng_init(&r1, 0x5A01u);
    tst_rng_init(&r2, 0x5A01u);
    for (unsigned long i = 0; i < n; i++)
        diff += workload_step(&r1, &e1, (unsigned)i)
                != workload_step(&r2, &e2, (unsigned)i);
    ck_assert_msg(diff == 0 && e1.sr_counter == n && e2.sr_counter == n
                      && e1.flags == e2.flags,
                  "same seed: %lu of %lu results differ; counters %llu and "
                  "%llu, expected %lu",
                  diff, n, (unsigned long long)e1.sr_counter,
                  (unsigned long long)e2.sr_counter, n);
}
END_TEST

START_TEST(test_different_seed)
{
    /* f32 -> bf16 of values with discarded fraction 1/2: with independent
       draws two seeds disagree in half the cases. 10^5 cases: expect
       50000, standard deviation 158; require more than 40000. */
    const unsigned long n = 100000;
    sf_env e1 = sr_env(1), e2 = sr_env(2);
    tst_rng r;
    unsigned long diff = 0;

    tst_rng_init(&r, 0x5A02u);
    for (unsigned long i = 0; i < n; i++) {
        sf_f32 a = {((uint32_t)tst_rand64(&r) & 0x7EFF0000u) | 0x8000u};
        diff += sf_f32_to_bf16(a, SF_SR, &e1).bits
                != sf_f32_to_bf16(a, SF_SR, &e2).bits;
    }
    ck_assert_msg(diff > 40000,
                  "seeds 1 and 2 differ in only %lu of %lu roundings", diff,
                  n);
}
END_TEST

/* The counter: one draw per SR operation with a finite non-zero result
   before rounding (exact or not); none for NaN, Inf or exactly-zero
   results, none in other modes.  The i-th draw is sf_sr_random(seed, i),
   starting from the env's counter. */
START_TEST(test_counter)
{
    sf_env env = sr_env(777);
    capture cap = {0, {0}};
    sf_event_sink sink = {capture_fn, &cap};
    unsigned bad = 0;

#define EXPECT_DRAWS(expr, n_draws)                                           \
    do {                                                                      \
        uint64_t before_ = env.sr_counter;                                    \
        (void)(expr);                                                         \
        if (env.sr_counter != before_ + (n_draws)) {                          \
            bad++;                                                            \
            printf("counter: %s: %llu draws, expected %u\n", #expr,           \
                   (unsigned long long)(env.sr_counter - before_),            \
                   (unsigned)(n_draws));                                      \
        }                                                                     \
    } while (0)

    {
        sf_f32 inexact = {0x3F801234u}, exact = {0x3F810000u};
        sf_f32 qnan = {0x7FC00000u}, snan = {0x7F800001u};
        sf_f32 inf = {0x7F800000u}, zero = {0}, one = {0x3F800000u};
        sf_f32 mone = {0xBF800000u}, big = {0x7F7FFFFFu}, two = {0x40000000u};
        sf_f32 third = {0x3EAAAAABu}, four = {0x40800000u};
        sf_bf16 b1 = {0x3F80}, bm1 = {0xBF80}, bq = {0x7FC0}, bi = {0x7F80};

        EXPECT_DRAWS(sf_f32_to_bf16(inexact, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_f32_to_bf16(exact, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_f32_to_bf16(inexact, SF_RNE, &env), 0);
        EXPECT_DRAWS(sf_f32_to_bf16(exact, SF_RTZ, &env), 0);
        EXPECT_DRAWS(sf_f32_to_bf16(qnan, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_to_bf16(snan, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_to_bf16(inf, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_to_bf16(zero, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_add(one, mone, SF_SR, &env), 0); /* exact 0 */
        EXPECT_DRAWS(sf_f32_add(one, one, SF_SR, &env), 1);  /* exact 2 */
        EXPECT_DRAWS(sf_f32_add(one, third, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_f32_add(inf, one, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_mul(zero, one, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_mul(big, two, SF_SR, &env), 1); /* overflows */
        EXPECT_DRAWS(sf_f32_div(one, zero, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_div(one, third, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_f32_sqrt(four, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_f32_sqrt(mone, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_fma(one, one, mone, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_f32_fma(one, third, one, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_f32_fma(zero, one, one, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_bf16_add(b1, b1, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_bf16_sub(b1, b1, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_bf16_mul(b1, bm1, SF_SR, &env), 1);
        EXPECT_DRAWS(sf_bf16_add(bq, b1, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_bf16_mul(bi, b1, SF_SR, &env), 0);
        EXPECT_DRAWS(sf_bf16_to_f32(b1, SF_SR, &env), 1);
    }
#undef EXPECT_DRAWS

    /* The i-th draw, from a non-zero starting counter, seen through the
       events. */
    env = sr_env(99);
    env.sr_counter = 1000;
    env.events = &sink;
    for (uint64_t i = 0; i < 1000; i++) {
        sf_f32 a = {0x3F800000u | (uint32_t)(i * 7919u % 0x7FFFFFu)};
        cap.n = 0;
        (void)sf_f32_to_bf16(a, SF_SR, &env);
        if (cap.n != 1 || cap.last.sr_random != ref_sr_random(99, 1000 + i))
            bad++;
    }
    ck_assert_msg(bad == 0 && env.sr_counter == 2000,
                  "%u counter or draw-index violations (counter %llu, "
                  "expected 2000)",
                  bad, (unsigned long long)env.sr_counter);
}
END_TEST

/* The documented rule for conversions, where the discarded fraction is
   exactly representable: F = (low 16 bits) * 2^48 for f32 -> bf16, and the
   result rounds up in magnitude iff U < F, with U the i-th draw. */
START_TEST(test_rule)
{
    const unsigned long n = 1000000ul * tst_multiplier();
    sf_env env = sr_env(2024);
    unsigned long bad = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x5A03u);
    for (unsigned long i = 0; i < n; i++) {
        /* finite (the exponent field is even, never 0xFF); from 0x7F7F,
           rounding up gives 0x7F80, Inf, the contract's SR overflow */
        uint32_t u = (uint32_t)tst_rand64(&r) & 0xFF7FFFFFu;
        uint64_t draw = ref_sr_random(2024, i);
        uint64_t big_f = (uint64_t)(u & 0xFFFFu) << 48;
        uint16_t want = (uint16_t)((u >> 16) + (draw < big_f ? 1u : 0u));
        sf_f32 a = {u};
        unsigned want_flags = (u & 0xFFFFu) ? SF_FLAG_INEXACT : 0u;
        uint16_t got;

        env.flags = 0;
        got = sf_f32_to_bf16(a, SF_SR, &env).bits;
        /* tiny inexact results also raise underflow: not judged here */
        if (got != want || (env.flags & SF_FLAG_INEXACT) != want_flags) {
            bad++;
            if (printed++ < TST_MAX_PRINT) {
                uint64_t in = u;
                printf("draw %lu U = %016llx\n", i, (unsigned long long)draw);
                tst_print_case("to_bf16", &sf_format_f32, SF_SR, &in, 1, want,
                               want_flags, got, env.flags);
            }
        }
    }
    ck_assert_msg(bad == 0,
                  "f32_to_bf16 SR: %lu of %lu results break 'up iff U < F'",
                  bad, n);
}
END_TEST

/*----------------------------------------------------------------------------
 * Unbiasedness.  Each case rounds one exact value x, lying strictly between
 * the neighbours LO (toward zero) and HI (away from zero), one ulp apart, N =
 *10^6 times (times the test multiplier) with successive draws.  With p = the
 *fraction of results equal to HI and f = (x - LO) / ulp, the error result - x
 *in ulps is 1 - f (up) or -f (down), so its mean is p - f.  Requirements, both
 *at 5 standard errors (a false alarm has probability about 6e-7 per check):
 *   |mean error| <= 5 * s / sqrt(N), s the sample standard deviation of
 *   the error (computed from the sample);
 *   |p - f| <= 5 * sqrt(f (1 - f) / N), the binomial standard error.
 * With N = 10^6 and f = 1/2 the threshold is 0.0025 ulp.
 * Every result must be LO or HI (never anything else).
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *what;
    int kind;        /* how the rounding is done, see sr_once */
    uint64_t a, b;   /* operands */
    uint64_t lo, hi; /* the neighbours toward and away from zero */
    double exact;    /* x */
    double ulp;
    bool bf16_out; /* result format bf16 (else f32) */
} sr_case;

enum
{
    K_F32_TO_BF16,
    K_BF16_ADD,
    K_BF16_MUL,
    K_BF16_DIV,
    K_F32_MUL,
    K_F32_FMA
};

static const sr_case sr_cases[] = {
    /* f32 -> bf16: f = low half / 2^16 */
    {"f32_to_bf16 f=0x5555/2^16 (~1/3)", K_F32_TO_BF16, 0x3F805555u, 0, 0x3F80,
     0x3F81, 0, 0x1p-7, true},
    {"f32_to_bf16 f=1/2", K_F32_TO_BF16, 0x3F808000u, 0, 0x3F80, 0x3F81, 0,
     0x1p-7, true},
    {"f32_to_bf16 f=1/2 negative", K_F32_TO_BF16, 0xBF808000u, 0, 0xBF80,
     0xBF81, 0, 0x1p-7, true},
    {"f32_to_bf16 f=2^-7", K_F32_TO_BF16, 0x40490200u, 0, 0x4049, 0x404A, 0,
     0x1p-6, true},
    {"f32_to_bf16 f=0xE666/2^16 (~0.9) negative", K_F32_TO_BF16, 0xC2C8E666u,
     0, 0xC2C8, 0xC2C9, 0, 0x1p-1, true},
    {"f32_to_bf16 f=1/2^16", K_F32_TO_BF16, 0x3F800001u, 0, 0x3F80, 0x3F81, 0,
     0x1p-7, true},
    {"f32_to_bf16 subnormal f=0x2345/2^16", K_F32_TO_BF16, 0x00012345u, 0,
     0x0001, 0x0002, 0, 0x1p-133, true},
    /* bf16 arithmetic, exact sums and products between two bf16s */
    {"bf16_add 1 + 3*2^-10 (f=3/8)", K_BF16_ADD, 0x3F80, 0x3B40, 0x3F80,
     0x3F81, 0, 0x1p-7, true},
    {"bf16_add 1 - 3*2^-10 (f=1/4)", K_BF16_ADD, 0x3F80, 0xBB40, 0x3F7F,
     0x3F80, 0, 0x1p-8, true},
    {"bf16_mul 0x3FAB^2 (f=57/128)", K_BF16_MUL, 0x3FAB, 0x3FAB, 0x3FE4,
     0x3FE5, 0, 0x1p-7, true},
    {"bf16_div 1/3 (f=2/3, not dyadic)", K_BF16_DIV, 0x3F80, 0x4040, 0x3EAA,
     0x3EAB, 0, 0x1p-9, true},
    /* f32 */
    {"f32_mul 1.5 * (1 + 2^-23) (f=1/2)", K_F32_MUL, 0x3FC00000u, 0x3F800001u,
     0x3FC00001u, 0x3FC00002u, 0, 0x1p-23, false},
    {"f32_fma 1 * 1 + 2^-30 (f=2^-7)", K_F32_FMA, 0x3F800000u, 0x30800000u,
     0x3F800000u, 0x3F800001u, 0, 0x1p-23, false},
};
#define N_SR_CASES ((int)(sizeof sr_cases / sizeof sr_cases[0]))

/* The exact value of case C, from the operand bits (decoded here). */
static double
case_exact(const sr_case *c)
{
    switch (c->kind) {
    case K_F32_TO_BF16:
        return dec_f32(c->a);
    case K_BF16_ADD:
        return dec_bf16(c->a) + dec_bf16(c->b); /* exact in binary64 */
    case K_BF16_MUL:
        return dec_bf16(c->a) * dec_bf16(c->b); /* exact in binary64 */
    case K_BF16_DIV:
        return dec_bf16(c->a) / dec_bf16(c->b); /* 1/3 to 2^-53 */
    case K_F32_MUL:
        return dec_f32(c->a) * dec_f32(c->b); /* 48 bits: exact */
    case K_F32_FMA:
    default:
        return dec_f32(c->a) + dec_f32(c->b); /* a * 1 + b, exact */
    }
}

static uint64_t
sr_once(const sr_case *c, sf_env *env)
{
    switch (c->kind) {
    case K_F32_TO_BF16: {
        sf_f32 a = {(uint32_t)c->a};
        return sf_f32_to_bf16(a, SF_SR, env).bits;
    }
    case K_BF16_ADD: {
        sf_bf16 a = {(uint16_t)c->a}, b = {(uint16_t)c->b};
        return sf_bf16_add(a, b, SF_SR, env).bits;
    }
    case K_BF16_MUL: {
        sf_bf16 a = {(uint16_t)c->a}, b = {(uint16_t)c->b};
        return sf_bf16_mul(a, b, SF_SR, env).bits;
    }
    case K_BF16_DIV: {
        sf_bf16 a = {(uint16_t)c->a}, b = {(uint16_t)c->b};
        return sf_bf16_div(a, b, SF_SR, env).bits;
    }
    case K_F32_MUL: {
        sf_f32 a = {(uint32_t)c->a}, b = {(uint32_t)c->b};
        return sf_f32_mul(a, b, SF_SR, env).bits;
    }
    case K_F32_FMA:
    default: {
        /* a * 1 + b */
        sf_f32 a = {(uint32_t)c->a}, one = {0x3F800000u};
        sf_f32 b = {(uint32_t)c->b};
        return sf_f32_fma(a, one, b, SF_SR, env).bits;
    }
    }
}

START_TEST(test_unbiased)
{
    sr_case c = sr_cases[_i];
    const unsigned long n = 1000000ul * tst_multiplier();
    double (*dec)(uint64_t) = c.bf16_out ? dec_bf16 : dec_f32;
    double x, f, lo_v, hi_v, sum = 0, sum2 = 0, mean, sd, se, p, se_p;
    unsigned long n_up = 0, n_other = 0;
    sf_env env = sr_env(0xC0FFEEu + (uint64_t)_i);

    x = case_exact(&c);
    lo_v = dec(c.lo);
    hi_v = dec(c.hi);
    f = fabs(x - lo_v) / c.ulp;
    ck_assert_msg(fabs(hi_v - lo_v) == c.ulp && fabs(hi_v) > fabs(lo_v)
                      && f > 0 && f < 1,
                  "%s: bad case (f = %g)", c.what, f);
    for (unsigned long i = 0; i < n; i++) {
        uint64_t z = sr_once(&c, &env);
        double err;
        if (z == c.hi)
            n_up++;
        else if (z != c.lo) {
            n_other++;
            continue;
        }
        err = (dec(z) - x) / c.ulp;
        sum += err;
        sum2 += err * err;
    }
    mean = sum / (double)n;
    sd = sqrt((sum2 - (double)n * mean * mean) / (double)(n - 1));
    se = sd / sqrt((double)n);
    p = (double)n_up / (double)n;
    se_p = sqrt(f * (1 - f) / (double)n);
    printf("%-45s N=%lu f=%.6f p(up)=%.6f mean err=%+.2e ulp "
           "(5 se = %.2e)\n",
           c.what, n, f, p, mean, 5 * se);
    ck_assert_msg(n_other == 0 && fabs(mean) <= 5 * se
                      && fabs(p - f) <= 5 * se_p,
                  "%s: %lu results not a neighbour; mean error %g ulp (5 se "
                  "= %g); p(up) %g vs f %g (5 se = %g)",
                  c.what, n_other, mean, 5 * se, p, f, 5 * se_p);
}
END_TEST

/*----------------------------------------------------------------------------
 * Only the two neighbours: for random operands, the SR result is the
 * truncated result (RTZ) or the next value away from zero (RUP for a
 * positive result, RDN for a negative one); exact results stay exact.
 *--------------------------------------------------------------------------*/
static uint32_t
f32_op(int op, uint32_t a, uint32_t b, uint32_t c, sf_round rm, sf_env *env)
{
    sf_f32 x = {a}, y = {b}, z = {c};

    switch (op) {
    case 0:
        return sf_f32_add(x, y, rm, env).bits;
    case 1:
        return sf_f32_mul(x, y, rm, env).bits;
    case 2:
        return sf_f32_div(x, y, rm, env).bits;
    case 3:
        return sf_f32_sqrt(x, rm, env).bits;
    case 4:
        return sf_f32_fma(x, y, z, rm, env).bits;
    default:
        return sf_f32_to_bf16(x, rm, env).bits;
    }
}

static const char *const f32_op_names[] = {"add",  "mul", "div",
                                           "sqrt", "fma", "to_bf16"};

START_TEST(test_neighbours)
{
    const unsigned long n = 200000ul * tst_multiplier();
    int op = _i;
    sf_env env = sr_env(31337);
    unsigned long bad = 0, n_exact = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x5A10u + (unsigned)op);
    for (unsigned long i = 0; i < n; i++) {
        uint32_t a = (uint32_t)tst_rand64(&r), b = (uint32_t)tst_rand64(&r);
        uint32_t c = (uint32_t)tst_rand64(&r), z, z_rtz, z_away;
        sf_env e_rtz = SF_ENV_IEEE, e_away = SF_ENV_IEEE;
        bool ok;

        if (i % 4 == 1) { /* near exact: short significands */
            a &= 0xFFFF0000u;
            b &= 0xFFFF0000u;
            c &= 0xFFFFF000u;
        } else if (i % 4 == 2) { /* near 1 */
            a = (a & 0x807FFFFFu) | 0x3F800000u;
            b = (b & 0x807FFFFFu) | 0x3F000000u;
        }
        env.flags = 0;
        z = f32_op(op, a, b, c, SF_SR, &env);
        z_rtz = f32_op(op, a, b, c, SF_RTZ, &e_rtz);
        if (sf_is_nan(op == 5 ? &sf_format_bf16 : &sf_format_f32, z_rtz))
            continue;
        z_away =
            f32_op(op, a, b, c,
                   (z_rtz >> (op == 5 ? 15 : 31)) ? SF_RDN : SF_RUP, &e_away);
        n_exact += !(e_rtz.flags & SF_FLAG_INEXACT);
        ok = (z == z_rtz || z == z_away)
             && (env.flags & SF_FLAG_INEXACT)
                    == (e_rtz.flags & SF_FLAG_INEXACT);
        if (!(e_rtz.flags & SF_FLAG_INEXACT))
            ok = ok && z == z_rtz && env.flags == e_rtz.flags;
        if (!ok) {
            bad++;
            if (printed++ < TST_MAX_PRINT) {
                uint64_t in[3] = {a, b, c};
                printf("SR result is neither RTZ %08x nor away %08x:\n",
                       (unsigned)z_rtz, (unsigned)z_away);
                tst_print_case(f32_op_names[op], &sf_format_f32, SF_SR, in,
                               op == 4 ? 3u : (op >= 3 ? 1u : 2u), z_rtz,
                               e_rtz.flags, z, env.flags);
            }
        }
    }
    printf("sr neighbours f32_%s: %lu cases (%lu exact), %lu bad\n",
           f32_op_names[op], n, n_exact, bad);
    ck_assert_msg(bad == 0, "f32_%s SR: %lu of %lu results out of bounds",
                  f32_op_names[op], bad, n);
}
END_TEST

static Suite *
sr_suite(void)
{
    Suite *s = suite_create("sr");
    TCase *tc;

    tc = tst_add_tcase(s, "generator", 0);
    tcase_add_test(tc, test_generator);
    tc = tst_add_tcase(s, "reproducible", 60);
    tcase_add_test(tc, test_same_seed);
    tcase_add_test(tc, test_different_seed);
    tcase_add_test(tc, test_counter);
    tcase_add_test(tc, test_rule);
    tc = tst_add_tcase(s, "unbiased", 300);
    tcase_add_loop_test(tc, test_unbiased, 0, N_SR_CASES);
    tc = tst_add_tcase(s, "neighbours", 120);
    tcase_add_loop_test(tc, test_neighbours, 0, 6);
    return s;
}

int
main(void)
{
    return tst_run_suite(sr_suite());
}
