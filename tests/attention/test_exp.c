/* test_exp -- the exp models of the reference attention against MPFR: the
   correctly rounded exp and exp2 on hand-derived cases, every BF16 input
   and over 10^7 binary32 inputs; the table model's rule; the model
   dispatch */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "tests/attention/exp_ref.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define N_SHOW 10

static const char *
fn_name(bool base2)
{
    return base2 ? "exp2" : "exp";
}

static uint32_t
cr(bool base2, uint32_t x)
{
    return base2 ? fa_exp2f_cr(x) : fa_expf_cr(x);
}

/* A run of comparisons: counts them and the mismatches, prints the first
   N_SHOW mismatches as hex. */
typedef struct
{
    const char *what;
    unsigned long n, bad;
} tally;

static void
compare(tally *t, const char *fn, uint32_t x, uint32_t want, uint32_t got)
{
    t->n++;
    if (want == got)
        return;
    if (t->bad++ < N_SHOW)
        printf("test_exp: %s: %s x=0x%08x want 0x%08x got 0x%08x\n", t->what,
               fn, (unsigned)x, (unsigned)want, (unsigned)got);
}

static void
finish(const tally *t)
{
    ck_assert_msg(t->bad == 0, "%s: %lu of %lu mismatch", t->what, t->bad,
                  t->n);
}

/* The correctly rounded function against MPFR on X, and its second
   evaluation alone (which must be right on its own); neither may stay
   undecided (level 3). */
static void
check_cr(tally *t, expref *ref, bool base2, uint32_t x)
{
    uint32_t want = expref_exp(ref, base2, x);

    compare(t, fn_name(base2), x, want, cr(base2, x));
    compare(t, base2 ? "exp2 second evaluation" : "exp second evaluation", x,
            want, fa_exp_cr_second(base2, x));
    if (fa_exp_cr_level(base2, x) == 3)
        compare(t, "level 3 (undecided)", x, 0, 3);
}

/*----------------------------------------------------------------------------
 * Hand-derived cases (doc/exp-models.md, "special values"): each expected
 * result follows from a short argument written beside it.
 *--------------------------------------------------------------------------*/
typedef struct
{
    bool base2;
    uint32_t x, want;
} hand_case;

static const hand_case hand[] = {
    /* NaN: the same NaN, quiet bit set, sign and payload kept */
    {false, 0x7FC00000, 0x7FC00000},
    {false, 0x7F800001, 0x7FC00001},
    {false, 0xFF812345, 0xFFC12345},
    {true, 0xFFFFFFFF, 0xFFFFFFFF},
    {true, 0x7FA00000, 0x7FE00000},
    /* infinities and zeros */
    {false, 0x7F800000, 0x7F800000},
    {false, 0xFF800000, 0x00000000},
    {false, 0x00000000, 0x3F800000},
    {false, 0x80000000, 0x3F800000},
    {true, 0x7F800000, 0x7F800000},
    {true, 0xFF800000, 0x00000000},
    {true, 0x00000000, 0x3F800000},
    {true, 0x80000000, 0x3F800000},
    /* exact powers of two */
    {true, 0x3F800000, 0x40000000}, /* 2^1 */
    {true, 0xBF800000, 0x3F000000}, /* 2^-1 */
    {true, 0x42FE0000, 0x7F000000}, /* 2^127 */
    {true, 0xC2FC0000, 0x00800000}, /* 2^-126, the smallest normal */
    {true, 0xC2FE0000, 0x00400000}, /* 2^-127 */
    {true, 0xC3150000, 0x00000001}, /* 2^-149 */
    {true, 0xC3160000, 0x00000000}, /* 2^-150: tie, to the even +0 */
    {true, 0xC315FFFF, 0x00000001}, /* just above 2^-150 */
    {true, 0xC3160001, 0x00000000}, /* just below 2^-150 */
    {true, 0xC3158000, 0x00000001}, /* 2^-149.5 = 0.707 2^-149 */
    {true, 0x43000000, 0x7F800000}, /* 2^128 overflows */
    /* 2^(+-1/2) = sqrt(2)^(+-1): 0x3FB504F3 is sqrt(2) rounded */
    {true, 0x3F000000, 0x3FB504F3},
    {true, 0xBF000000, 0x3F3504F3},
    /* near 0 (doc: e^t in (1 + t, 1 + t + t^2) for small t) */
    {false, 0x33000000, 0x3F800000}, /* e^(2^-25): below 1 + 2^-24 */
    {false, 0x337FFFFF, 0x3F800000}, /* 1 + 2^-24 - 2^-48 + 2^-49 .. */
    {false, 0x33800000, 0x3F800001}, /* 1 + 2^-24 + 2^-49: above the
                                        midpoint 1 + 2^-24 */
    {false, 0xB3000000, 0x3F800000}, /* 1 - 2^-25 + 2^-51: above the
                                        midpoint 1 - 2^-25 */
    {false, 0xB3000001, 0x3F7FFFFF}, /* 1 - 2^-25 - 2^-48 + ..: below */
    {false, 0x00000001, 0x3F800000},
    {false, 0x80000001, 0x3F800000},
    {true, 0x80000001, 0x3F800000},
    /* e and 1/e rounded */
    {false, 0x3F800000, 0x402DF854},
    {false, 0xBF800000, 0x3EBC5AB2},
    /* e^89 > 2^128; e^-104 < 2^-150 */
    {false, 0x42B20000, 0x7F800000},
    {false, 0xC2D00000, 0x00000000},
};

START_TEST(test_hand)
{
    tally t = {"hand-derived", 0, 0};
    expref ref;
    size_t i;

    expref_init(&ref);
    for (i = 0; i < sizeof hand / sizeof hand[0]; i++) {
        const hand_case *h = &hand[i];
        compare(&t, fn_name(h->base2), h->x, h->want, cr(h->base2, h->x));
        /* and the reference agrees with the hand */
        compare(&t, "reference", h->x, h->want,
                expref_exp(&ref, h->base2, h->x));
    }
    expref_clear(&ref);
    finish(&t);
}
END_TEST

/*----------------------------------------------------------------------------
 * Every BF16 input, widened to binary32.
 *--------------------------------------------------------------------------*/
START_TEST(test_all_bf16)
{
    tally t = {"all bf16", 0, 0};
    expref ref;
    uint32_t b;

    expref_init(&ref);
    for (b = 0; b < 0x10000u; b++) {
        check_cr(&t, &ref, false, b << 16);
        check_cr(&t, &ref, true, b << 16);
    }
    expref_clear(&ref);
    printf("test_exp: all bf16: %lu comparisons\n", t.n);
    finish(&t);
}
END_TEST

/*----------------------------------------------------------------------------
 * Binary32: random bit patterns, random values in the range where the
 * result is neither 1, 0 nor +Inf, and dense sweeps of consecutive bit
 * patterns around each boundary.
 *--------------------------------------------------------------------------*/

/* The inputs that need the second evaluation, as exh_exp lists them
   (exp: the first two; exp2: the others), each checked with both
   functions. */
static const uint32_t hard_inputs[] = {
    0xBBF0EDF1, 0xC16912CD, 0x3A07857C, 0x3B429D37, 0x3C02A9AD,
    0xB52D1F9A, 0xB8D3D026, 0xBAEC2B40, 0xBCF3A937, 0xBE1F29DE,
};

typedef struct
{
    const char *what;
    uint32_t center; /* a bit pattern; the sweep is center +- half */
    uint32_t half;
} sweep;

/* Centres: the overflow thresholds (exp: 88.7228 = 0x42B17218; exp2: just
   below 128), the underflow thresholds (exp: -103.972 = 0xC2CFF1B5;
   exp2: -150 = 0xC3160000), the subnormal boundaries (exp: -87.3365 =
   0xC2AEAC50; exp2: -126 = 0xC2FC0000), 2^-149 (exp2: -149), the
   midpoints around 1 (+-2^-24, +-2^-25), and 0 itself. */
static const sweep sweeps[] = {
    {"exp overflow", 0x42B17218, 120000},
    {"exp2 overflow", 0x42FFFFFF, 120000},
    {"exp underflow", 0xC2CFF1B5, 120000},
    {"exp2 underflow", 0xC3160000, 120000},
    {"exp subnormal", 0xC2AEAC50, 120000},
    {"exp2 subnormal", 0xC2FC0000, 120000},
    {"exp2 2^-149", 0xC3150000, 60000},
    {"+2^-24", 0x33800000, 60000},
    {"-2^-24", 0xB3800000, 60000},
    {"+2^-25", 0x33000000, 60000},
    {"-2^-25", 0xB3000000, 60000},
    {"+0", 0x00000000, 0},
    {"-0", 0x80000000, 0},
    {"+1", 0x3F800000, 30000},
    {"-1", 0xBF800000, 30000},
};

START_TEST(test_binary32)
{
    tally t = {"binary32", 0, 0};
    expref ref;
    tst_rng rng;
    unsigned long mult = tst_multiplier(), i, n_random, n_range;
    size_t s;
    unsigned long inputs = 0;

    expref_init(&ref);
    tst_rng_init(&rng, 0xE4F00001u);

    /* sweeps: 2.4 million inputs */
    for (s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++) {
        uint32_t c = sweeps[s].center, h = sweeps[s].half;
        uint64_t lo = c >= h ? c - h : 0;
        uint64_t hi = (uint64_t)c + h, x;
        /* a sweep through 0 covers both signs' tiniest values */
        if (h == 0) {
            lo = c;
            hi = (uint64_t)c + 100000;
        }
        for (x = lo; x <= hi; x++) {
            check_cr(&t, &ref, false, (uint32_t)x);
            check_cr(&t, &ref, true, (uint32_t)x);
            inputs++;
        }
    }
    /* the hard cases */
    for (s = 0; s < sizeof hard_inputs / sizeof hard_inputs[0]; s++) {
        check_cr(&t, &ref, false, hard_inputs[s]);
        check_cr(&t, &ref, true, hard_inputs[s]);
        inputs++;
    }
    /* random bit patterns (most give +Inf, +0 or 1): 4.6 million */
    n_random = 4600000ul * mult;
    for (i = 0; i < n_random; i++) {
        uint32_t x = (uint32_t)tst_rand64(&rng);
        check_cr(&t, &ref, false, x);
        check_cr(&t, &ref, true, x);
        inputs++;
    }
    /* random in 2^-26 <= |x| < 256, both signs (exponent fields 101 ..
       134): 3.2 million */
    n_range = 3200000ul * mult;
    for (i = 0; i < n_range; i++) {
        uint64_t r = tst_rand64(&rng);
        uint32_t e = 101 + (uint32_t)((r >> 32) % 34);
        uint32_t x = ((uint32_t)(r >> 63) << 31) | (e << 23)
                     | ((uint32_t)r & 0x7FFFFFu);
        check_cr(&t, &ref, false, x);
        check_cr(&t, &ref, true, x);
        inputs++;
    }
    expref_clear(&ref);
    printf("test_exp: binary32: %lu inputs, %lu comparisons\n", inputs, t.n);
    ck_assert_uint_ge(inputs, 10000000ul);
    finish(&t);
}
END_TEST

/*----------------------------------------------------------------------------
 * The table model.
 *--------------------------------------------------------------------------*/
static uint32_t *
table_from_cr(unsigned frac_bits)
{
    uint32_t *v = malloc(sizeof *v << frac_bits);

    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(fa_exp2_table_fill(v, frac_bits, fa_exp2f_cr), 0);
    return v;
}

/* Random inputs for the table rule: a quarter anywhere, the rest with
   exponent fields 100 .. 134 (|x| from 2^-27 to 256) and either sign. */
static uint32_t
table_input(tst_rng *rng)
{
    uint64_t r = tst_rand64(rng);
    uint32_t e;

    if ((r & 3) == 0)
        return (uint32_t)(r >> 32);
    e = 100 + (uint32_t)((r >> 2) % 35);
    return ((uint32_t)(r >> 63) << 31) | (e << 23)
           | ((uint32_t)(r >> 8) & 0x7FFFFFu);
}

START_TEST(test_table_grid)
{
    /* frac_bits 23: on every x in [-1, 0) with at most 23 fraction bits the
       model is exp2 of the grid point, the table entry itself */
    tally t = {"table grid", 0, 0};
    uint32_t *v = table_from_cr(23);
    fa_exp2_table tab = {23, v, false, NULL, false};
    fa_exp_model m = {"t23", FA_EXP_TABLE, &tab, NULL, NULL};
    uint32_t i;

    for (i = 0; i < (1u << 23); i++) {
        /* x = -(2^23 - i) 2^-23 */
        float xf = -(float)((1u << 23) - i) * 0x1p-23f;
        uint32_t x;
        memcpy(&x, &xf, sizeof x);
        compare(&t, "exp2", x, fa_exp2f_cr(x), fa_exp_eval(&m, true, x));
    }
    free(v);
    finish(&t);
}
END_TEST

/* The rule against expref_table_exp2 for tables of FRAC_BITS filled from
   fa_exp2f_cr, with and without ftz, exp2 and natural exp. */
static void
table_rule(unsigned frac_bits, unsigned long n)
{
    tally t = {"table rule", 0, 0};
    uint32_t *v = table_from_cr(frac_bits);
    expref ref;
    tst_rng rng;
    unsigned ftz;
    unsigned long i;
    char what[64];

    expref_init(&ref);
    tst_rng_init(&rng, 0xE4F10000u + frac_bits);
    snprintf(what, sizeof what, "table rule, frac_bits %u", frac_bits);
    t.what = what;
    for (ftz = 0; ftz < 2; ftz++) {
        fa_exp2_table tab = {frac_bits, v, ftz != 0, NULL, false};
        fa_exp_model m = {"t", FA_EXP_TABLE, &tab, NULL, NULL};
        for (i = 0; i < n; i++) {
            uint32_t x = table_input(&rng);
            compare(&t, ftz ? "exp2 ftz" : "exp2", x,
                    expref_table_exp2(&ref, frac_bits, ftz != 0, x),
                    fa_exp_eval(&m, true, x));
            compare(&t, ftz ? "exp ftz" : "exp", x,
                    expref_table_exp2(&ref, frac_bits, ftz != 0,
                                      expref_mul_log2e(&ref, x)),
                    fa_exp_eval(&m, false, x));
        }
        /* the underflow region, densely: x in [-152, -125] */
        for (i = 0; i < n / 4; i++) {
            uint64_t r = tst_rand64(&rng);
            float xf = -125.0f - (float)(r % 27000u) * 0.001f
                       - (float)((r >> 20) & 0xFFF) * 0x1p-23f;
            uint32_t x;
            memcpy(&x, &xf, sizeof x);
            compare(&t, ftz ? "exp2 ftz" : "exp2", x,
                    expref_table_exp2(&ref, frac_bits, ftz != 0, x),
                    fa_exp_eval(&m, true, x));
        }
    }
    expref_clear(&ref);
    free(v);
    finish(&t);
}

START_TEST(test_table_rule)
{
    static const unsigned bits[] = {0, 1, 5, 12, 23, 24};
    unsigned long mult = tst_multiplier();

    table_rule(bits[_i], 40000ul * mult);
}
END_TEST

/* A 4-entry table with distinct entries: the index and the scale by hand.
   values[i] stands for 2^(-1 + i/4). */
static const uint32_t tiny_values[4] = {0x3F000000, 0x3F100000, 0x3F200000,
                                        0x3F300000};

START_TEST(test_table_by_hand)
{
    static const struct
    {
        uint32_t x, want;
        bool ftz;
    } cases[] = {
        /* x in [-1, 0) on the grid: the entry */
        {0xBF800000, 0x3F000000, false}, /* -1 -> [0] */
        {0xBF400000, 0x3F100000, false}, /* -0.75 -> [1] */
        {0xBE800000, 0x3F300000, false}, /* -0.25 -> [3] */
        /* cut toward zero: -0.3 -> -0.25; -0.99 -> -0.75 */
        {0xBE99999A, 0x3F300000, false},
        {0xBF7D70A4, 0x3F100000, false},
        /* zeros and subnormal x: 2 values[0] */
        {0x00000000, 0x3F800000, false},
        {0x80000000, 0x3F800000, false},
        {0x80000001, 0x3F800000, true},
        {0x007FFFFF, 0x3F800000, false},
        /* -1.3 -> -1.25: n = -2, f = 0.75 -> [3] / 2 */
        {0xBFA66666, 0x3EB00000, false},
        /* 0.3 -> 0.25: n = 0, f = 0.25 -> [1] * 2 */
        {0x3E99999A, 0x3F900000, false},
        /* 2.75: n = 2, f = 0.75 -> [3] * 8 */
        {0x40300000, 0x40B00000, false},
        /* -126: [0] 2^-125 = 2^-126, normal */
        {0xC2FC0000, 0x00800000, false},
        {0xC2FC0000, 0x00800000, true},
        /* -126.25 -> n = -127, f = 0.75: [3] 2^-126 = 1.375 2^-127,
           subnormal: 0x00580000 exactly; with ftz +0 */
        {0xC2FC8000, 0x00580000, false},
        {0xC2FC8000, 0x00000000, true},
        /* -149.75 -> n = -150, f = 0.25: [1] 2^-149 = 0.5625 2^-149,
           rounds to 2^-149 */
        {0xC315C000, 0x00000001, false},
        /* -150 -> [0] 2^-149 = 2^-150: a tie, to +0 */
        {0xC3160000, 0x00000000, false},
        /* -149 -> [0] 2^-148 = 2^-149 */
        {0xC3150000, 0x00000001, false},
        /* -149.25 -> n = -150, f = 0.75: [3] 2^-149 = 0.6875 2^-149 */
        {0xC3154000, 0x00000001, false},
        /* 127 -> [0] 2^128 = 2^127; 127.75 -> [3] 2^128 = 1.375 2^127;
           128 -> [0] 2^129 = 2^128: overflow */
        {0x42FE0000, 0x7F000000, false},
        {0x42FF8000, 0x7F300000, false},
        {0x43000000, 0x7F800000, false},
        /* specials */
        {0xFF800000, 0x00000000, false},
        {0x7F800000, 0x7F800000, false},
        {0x7F800001, 0x7FC00001, false},
        {0xFFC00123, 0xFFC00123, true},
        {0x4F800000, 0x7F800000, false}, /* 2^32 */
        {0xCF800000, 0x00000000, false}, /* -2^32 */
    };
    tally t = {"table by hand", 0, 0};
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fa_exp2_table tab = {2, tiny_values, cases[i].ftz, NULL, false};
        fa_exp_model m = {"tiny", FA_EXP_TABLE, &tab, NULL, NULL};
        compare(&t, cases[i].ftz ? "exp2 ftz" : "exp2", cases[i].x,
                cases[i].want, fa_exp_eval(&m, true, cases[i].x));
    }
    {
        /* frac_bits 0: one entry, x cut toward zero to an integer */
        static const uint32_t one[1] = {0x3F000000};
        fa_exp2_table tab = {0, one, false, NULL, false};
        fa_exp_model m = {"one", FA_EXP_TABLE, &tab, NULL, NULL};
        compare(&t, "exp2 fb0", 0xBFC00000, 0x3F000000,
                fa_exp_eval(&m, true, 0xBFC00000)); /* -1.5 -> -1 */
        compare(&t, "exp2 fb0", 0x3FC00000, 0x40000000,
                fa_exp_eval(&m, true, 0x3FC00000)); /* 1.5 -> 1 */
    }
    {
        /* a NaN entry is quieted; natural exp: x log2(e) = 0 for x = 0 */
        static const uint32_t nan_values[2] = {0x7F800001, 0x3F3504F3};
        fa_exp2_table tab = {1, nan_values, false, NULL, false};
        fa_exp_model m = {"nan", FA_EXP_TABLE, &tab, NULL, NULL};
        compare(&t, "exp2 nan entry", 0xBF800000, 0x7FC00001,
                fa_exp_eval(&m, true, 0xBF800000));
        compare(&t, "exp2 grid", 0xBF000000, 0x3F3504F3,
                fa_exp_eval(&m, true, 0xBF000000));
    }
    finish(&t);
}
END_TEST

/* fa_exp2_table_fill: the grid points handed to the function, the
   refusals. */
static uint32_t seen[8];
static unsigned n_seen;

static uint32_t
record(uint32_t x)
{
    if (n_seen < 8)
        seen[n_seen] = x;
    n_seen++;
    return x ^ 0x5A5A5A5Au;
}

START_TEST(test_table_fill)
{
    /* -1, -0.875, ..., -0.125 */
    static const uint32_t grid[8] = {0xBF800000, 0xBF600000, 0xBF400000,
                                     0xBF200000, 0xBF000000, 0xBEC00000,
                                     0xBE800000, 0xBE000000};
    uint32_t v[8], one = 0;
    unsigned i;

    n_seen = 0;
    ck_assert_int_eq(fa_exp2_table_fill(v, 3, record), 0);
    ck_assert_uint_eq(n_seen, 8);
    for (i = 0; i < 8; i++) {
        ck_assert_msg(seen[i] == grid[i], "grid point %u: 0x%08x", i,
                      (unsigned)seen[i]);
        ck_assert_uint_eq(v[i], grid[i] ^ 0x5A5A5A5Au);
    }
    ck_assert_int_eq(fa_exp2_table_fill(&one, 0, record), 0);
    ck_assert_uint_eq(one, 0xBF800000u ^ 0x5A5A5A5Au);
    n_seen = 0;
    ck_assert_int_eq(fa_exp2_table_fill(v, FA_EXP2_TABLE_MAX_BITS + 1, record),
                     -1);
    ck_assert_int_eq(fa_exp2_table_fill(NULL, 3, record), -1);
    ck_assert_int_eq(fa_exp2_table_fill(v, 3, NULL), -1);
    ck_assert_uint_eq(n_seen, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Models and dispatch.
 *--------------------------------------------------------------------------*/
typedef struct
{
    unsigned calls;
    bool base2;
    uint32_t x;
} fn_user;

static uint32_t
user_fn(void *user, bool base2, uint32_t x)
{
    fn_user *u = user;
    u->calls++;
    u->base2 = base2;
    u->x = x;
    return x + 7;
}

START_TEST(test_models)
{
    const fa_exp_model *c = fa_exp_model_by_name("cr");
    const fa_exp_model *l = fa_exp_model_by_name("libm");
    fn_user u = {0, false, 0};
    fa_exp_model f = {"mine", FA_EXP_FN, NULL, user_fn, &u};
    fa_exp_model bad_fn = {"bad", FA_EXP_FN, NULL, NULL, NULL};
    fa_exp2_table big = {FA_EXP2_TABLE_MAX_BITS + 1, tiny_values, false, NULL,
                         false};
    fa_exp2_table empty = {2, NULL, false, NULL, false};
    fa_exp_model bad_table = {"bad", FA_EXP_TABLE, NULL, NULL, NULL};
    fa_exp_model bad_big = {"bad", FA_EXP_TABLE, &big, NULL, NULL};
    fa_exp_model bad_empty = {"bad", FA_EXP_TABLE, &empty, NULL, NULL};
    fa_exp_model bad_kind = {"bad", (fa_exp_kind)77, NULL, NULL, NULL};
    expref ref;
    tst_rng rng;
    unsigned i;

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(l);
    ck_assert_str_eq(c->name, "cr");
    ck_assert_str_eq(l->name, "libm");
    ck_assert_int_eq(c->kind, FA_EXP_CR);
    ck_assert_int_eq(l->kind, FA_EXP_LIBM);
    ck_assert_ptr_null(fa_exp_model_by_name("ex2-sm90"));
    ck_assert_ptr_null(fa_exp_model_by_name("CR"));
    ck_assert_ptr_null(fa_exp_model_by_name(""));
    ck_assert_ptr_null(fa_exp_model_by_name(NULL));

    ck_assert_ptr_null(fa_exp_model_check(NULL));
    ck_assert_ptr_null(fa_exp_model_check(c));
    ck_assert_ptr_null(fa_exp_model_check(l));
    ck_assert_ptr_null(fa_exp_model_check(&f));
    ck_assert_ptr_nonnull(fa_exp_model_check(&bad_fn));
    ck_assert_ptr_nonnull(fa_exp_model_check(&bad_table));
    ck_assert_ptr_nonnull(fa_exp_model_check(&bad_big));
    ck_assert_ptr_nonnull(fa_exp_model_check(&bad_empty));
    ck_assert_ptr_nonnull(fa_exp_model_check(&bad_kind));
    /* refused models give the default NaN and never call anything */
    ck_assert_uint_eq(fa_exp_eval(&bad_fn, true, 0), 0x7FC00000u);
    ck_assert_uint_eq(fa_exp_eval(&bad_table, true, 0), 0x7FC00000u);
    ck_assert_uint_eq(fa_exp_eval(&bad_big, false, 0), 0x7FC00000u);
    ck_assert_uint_eq(fa_exp_eval(&bad_empty, true, 0), 0x7FC00000u);
    ck_assert_uint_eq(fa_exp_eval(&bad_kind, true, 0), 0x7FC00000u);

    /* FA_EXP_FN: user data, base and argument passed through */
    ck_assert_uint_eq(fa_exp_eval(&f, true, 0x12345678), 0x1234567Fu);
    ck_assert_uint_eq(u.calls, 1);
    ck_assert(u.base2);
    ck_assert_uint_eq(u.x, 0x12345678u);
    ck_assert_uint_eq(fa_exp_eval(&f, false, 0xC0000000), 0xC0000007u);
    ck_assert_uint_eq(u.calls, 2);
    ck_assert(!u.base2);

    /* cr (and a NULL model) against MPFR; libm is the C library's */
    expref_init(&ref);
    tst_rng_init(&rng, 0xE4F20000u);
    for (i = 0; i < 20000; i++) {
        uint32_t x = table_input(&rng);
        float xf, e, e2;
        uint32_t be, be2;

        ck_assert_uint_eq(fa_exp_eval(c, false, x), expref_exp(&ref, 0, x));
        ck_assert_uint_eq(fa_exp_eval(c, true, x), expref_exp(&ref, 1, x));
        ck_assert_uint_eq(fa_exp_eval(NULL, false, x), expref_exp(&ref, 0, x));
        ck_assert_uint_eq(fa_exp_eval(NULL, true, x), expref_exp(&ref, 1, x));
        memcpy(&xf, &x, sizeof xf);
        e = expf(xf);
        e2 = exp2f(xf);
        memcpy(&be, &e, sizeof be);
        memcpy(&be2, &e2, sizeof be2);
        if (!isnan(xf)) {
            ck_assert_uint_eq(fa_exp_eval(l, false, x), be);
            ck_assert_uint_eq(fa_exp_eval(l, true, x), be2);
        }
    }
    expref_clear(&ref);
}
END_TEST

START_TEST(test_levels)
{
    /* nothing is evaluated for NaN, infinities and beyond the bounds */
    static const uint32_t none[] = {0x7FC00000, 0xFF800001, 0x7F800000,
                                    0xFF800000, 0x43000000, 0xC3160000,
                                    0x7F7FFFFF, 0xFF7FFFFF};
    unsigned i;

    for (i = 0; i < sizeof none / sizeof none[0]; i++)
        ck_assert_msg(fa_exp_cr_level(true, none[i]) == 0, "exp2 0x%08x",
                      (unsigned)none[i]);
    ck_assert_int_eq(fa_exp_cr_level(false, 0x42B20000), 0);
    ck_assert_int_eq(fa_exp_cr_level(false, 0xC2D00000), 0);
}
END_TEST

static Suite *
exp_suite(void)
{
    Suite *s = suite_create("exp");
    TCase *tc;

    tc = tst_add_tcase(s, "special", 30);
    tcase_add_test(tc, test_hand);
    tcase_add_test(tc, test_levels);
    tc = tst_add_tcase(s, "all bf16", 60);
    tcase_add_test(tc, test_all_bf16);
    tc = tst_add_tcase(s, "binary32", 300);
    tcase_add_test(tc, test_binary32);
    tc = tst_add_tcase(s, "table", 120);
    tcase_add_test(tc, test_table_by_hand);
    tcase_add_test(tc, test_table_fill);
    tcase_add_test(tc, test_table_grid);
    tcase_add_loop_test(tc, test_table_rule, 0, 6);
    tc = tst_add_tcase(s, "models", 60);
    tcase_add_test(tc, test_models);
    return s;
}

int
main(void)
{
    (void)tst_seed();
    return tst_run_suite(exp_suite());
}
