/* test_convert -- conversions between formats, to and from integers, and
   sf_round_to_int, against the MPFR oracle in all six modes */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/opsuite.h"
#include "tests/support/suite.h"

#define CONV(to, from, rm, a, z, fl)                                          \
    {                                                                         \
        to, from, OPC_CONVERT, 0, SF_##rm, {a, 0, 0}, z, fl, false, false     \
    }
#define CONV_SAT(to, from, rm, a, z, fl)                                      \
    {                                                                         \
        to, from, OPC_CONVERT, 0, SF_##rm, {a, 0, 0}, z, fl, false, true      \
    }
#define CONV_BEFORE(to, from, rm, a, z, fl)                                   \
    {                                                                         \
        to, from, OPC_CONVERT, 0, SF_##rm, {a, 0, 0}, z, fl, true, false      \
    }
/* in[0] = the integer, in[1] = its width */
#define FROM_INT(to, w, rm, v, z, fl)                                         \
    {                                                                         \
        to, NULL, OPC_FROM_INT, 0, SF_##rm, {(uint64_t)(v), w, 0}, z, fl,     \
            false, false                                                      \
    }
#define TO_INT(from, w, rm, a, v, fl)                                         \
    {                                                                         \
        from, NULL, OPC_TO_INT, 0, SF_##rm, {a, w, 0}, (uint64_t)(v), fl,     \
            false, false                                                      \
    }
#define RINT(f, ex, rm, a, z, fl)                                             \
    {                                                                         \
        f, NULL, OPC_ROUND_INT, 0, SF_##rm, {a, ex, 0}, z, fl, false, false   \
    }

/* Hand-written: ties and overflow at the narrowing boundaries, NaN
   payloads and quieting, FP8 specials with and without saturation,
   integer edges. */
static const opc_row rows[] = {
    /* f32 -> bf16: 1 + 2^-8 is a tie */
    CONV("bf16", "f32", RNE, 0x3f808000, 0x3f80, FX),
    CONV("bf16", "f32", RNA, 0x3f808000, 0x3f81, FX),
    CONV("bf16", "f32", ROD, 0x3f808000, 0x3f81, FX),
    CONV("bf16", "f32", RTZ, 0x3f808000, 0x3f80, FX),
    CONV("bf16", "f32", RNE, 0x3f818000, 0x3f82, FX),
    CONV("bf16", "f32", ROD, 0x3f818000, 0x3f81, FX),
    CONV("bf16", "f32", RNE, 0x3f808001, 0x3f81, FX),
    CONV("bf16", "f32", RDN, 0xbf808001, 0xbf81, FX),
    CONV("bf16", "f32", RUP, 0xbf80ffff, 0xbf80, FX),
    /* the largest binary32 value */
    CONV("bf16", "f32", RNE, 0x7f7fffff, 0x7f80, FO | FX),
    CONV("bf16", "f32", RNA, 0x7f7fffff, 0x7f80, FO | FX),
    CONV("bf16", "f32", RUP, 0x7f7fffff, 0x7f80, FO | FX),
    CONV("bf16", "f32", RTZ, 0x7f7fffff, 0x7f7f, FX),
    CONV("bf16", "f32", ROD, 0x7f7fffff, 0x7f7f, FX),
    CONV("bf16", "f32", RDN, 0xff7fffff, 0xff80, FO | FX),
    CONV("bf16", "f32", RNE, 0x7f7f7fff, 0x7f7f, FX),
    /* NaNs: quieted, payload from the top, sign kept */
    CONV("bf16", "f32", RNE, 0x7fa00000, 0x7fe0, FV),
    CONV("bf16", "f32", RNE, 0x7f800001, 0x7fc0, FV),
    CONV("bf16", "f32", RNE, 0xffc00001, 0xffc0, 0),
    CONV("bf16", "f32", RNE, 0xff812345, 0xffc1, FV),
    CONV("bf16", "f32", RNE, 0xff800000, 0xff80, 0),
    CONV("bf16", "f32", RNE, 0x80000000, 0x8000, 0),
    /* subnormals */
    CONV("bf16", "f32", RNE, 0x00000001, 0x0000, FU | FX),
    CONV("bf16", "f32", RUP, 0x00000001, 0x0001, FU | FX),
    CONV("bf16", "f32", ROD, 0x80000001, 0x8001, FU | FX),
    CONV("bf16", "f32", RNE, 0x00400000, 0x0040, 0),
    CONV("bf16", "f32", RNE, 0x007fffff, 0x0080, FX),
    CONV_BEFORE("bf16", "f32", RNE, 0x007fffff, 0x0080, FU | FX),
    CONV("bf16", "f32", RTZ, 0x007fffff, 0x007f, FU | FX),
    /* widening is exact */
    CONV("f32", "bf16", RNE, 0x0001, 0x00010000, 0),
    CONV("f32", "bf16", RNE, 0x7fa0, 0x7fe00000, FV),
    CONV("f32", "bf16", RNE, 0xffc1, 0xffc10000, 0),
    CONV("f32", "f16", RNE, 0x0001, 0x33800000, 0),
    CONV("f32", "f16", RNE, 0x7d01, 0x7fe02000, FV),
    CONV("f32", "e4m3", RNE, 0x7f, 0x7ff00000, 0),
    CONV("f32", "e4m3", RNE, 0xff, 0xfff00000, 0),
    CONV("f32", "e5m2", RNE, 0x7d, 0x7fe00000, FV),
    /* f32 -> f16 */
    CONV("f16", "f32", RNE, 0x477fe000, 0x7bff, 0),
    CONV("f16", "f32", RNE, 0x477ff000, 0x7c00, FO | FX),
    CONV("f16", "f32", RTZ, 0x477ff000, 0x7bff, FX),
    CONV("f16", "f32", RNE, 0x33800000, 0x0001, 0),
    CONV("f16", "f32", RNE, 0x33000000, 0x0000, FU | FX),
    CONV("f16", "f32", RNA, 0x33000000, 0x0001, FU | FX),
    CONV("f16", "f32", RNE, 0x7fc00000, 0x7e00, 0),
    CONV("f16", "bf16", RNE, 0x4780, 0x7c00, FO | FX),
    CONV("bf16", "f16", RNE, 0x3c01, 0x3f80, FX),
    /* TF32 keeps 10 fraction bits */
    CONV("tf32", "f32", RNE, 0x3f801000, 0x3f800000, FX),
    CONV("tf32", "f32", RNA, 0x3f801000, 0x3f802000, FX),
    CONV("tf32", "f32", RNE, 0x7fc01234, 0x7fc00000, 0),
    CONV("tf32", "f32", RNE, 0x00000001, 0x00000000, FU | FX),
    CONV("tf32", "f32", RUP, 0x00000001, 0x00002000, FU | FX),
    /* E4M3: 448 largest, no Inf; 464 is a tie with the missing 480 */
    CONV("e4m3", "f32", RNE, 0x43e00000, 0x7e, 0),
    CONV("e4m3", "f32", RNE, 0x43e80000, 0x7e, FX),
    CONV("e4m3", "f32", RNA, 0x43e80000, 0x7f, FO | FX),
    CONV_SAT("e4m3", "f32", RNA, 0x43e80000, 0x7e, FO | FX),
    CONV("e4m3", "f32", RNE, 0x43e80001, 0x7f, FO | FX),
    CONV("e4m3", "f32", RTZ, 0x47000000, 0x7e, FO | FX),
    CONV("e4m3", "f32", RNE, 0x7f800000, 0x7f, 0),
    CONV("e4m3", "f32", RNE, 0xff800000, 0xff, 0),
    CONV_SAT("e4m3", "f32", RNE, 0x7f800000, 0x7e, 0),
    CONV_SAT("e4m3", "f32", RNE, 0xff800000, 0xfe, 0),
    CONV("e4m3", "f32", RNE, 0x7fa00000, 0x7f, FV),
    CONV("e4m3", "f32", RNE, 0xffc00000, 0xff, 0),
    CONV_SAT("e4m3", "f32", RNE, 0x7fc00000, 0x7f, 0),
    CONV("e4m3", "f32", RNE, 0x3b000000, 0x01, 0),
    CONV("e4m3", "f32", RNE, 0x3a800000, 0x00, FU | FX),
    CONV("e4m3", "e5m2", RNE, 0x7c, 0x7f, 0),
    CONV_SAT("e4m3", "e5m2", RNE, 0xfc, 0xfe, 0),
    /* E5M2 */
    CONV("e5m2", "f32", RNE, 0x47600000, 0x7b, 0),
    CONV("e5m2", "f32", RNE, 0x47700000, 0x7c, FO | FX),
    CONV_SAT("e5m2", "f32", RNE, 0x47700000, 0x7b, FO | FX),
    /* saturating: an infinity becomes the largest finite value (H200) */
    CONV_SAT("e5m2", "f32", RNE, 0x7f800000, 0x7b, 0),
    CONV("e5m2", "f32", RNE, 0x7f800001, 0x7e, FV),
    CONV("e5m2", "f32", RNE, 0x7fe00000, 0x7f, 0),
    CONV("e5m2", "e4m3", RNE, 0x7e, 0x5f, 0),
    CONV("e5m2", "e4m3", RNE, 0x7d, 0x5e, FX),
    CONV("e5m2", "e4m3", RNA, 0x7d, 0x5f, FX),
    CONV("e5m2", "e4m3", RTZ, 0x7d, 0x5e, FX),
    /* from integers */
    FROM_INT("f32", 32, RNE, 16777217, 0x4b800000, FX),
    FROM_INT("f32", 32, RNA, 16777217, 0x4b800001, FX),
    FROM_INT("f32", 32, ROD, 16777217, 0x4b800001, FX),
    FROM_INT("f32", 32, RNE, INT32_MIN, 0xcf000000, 0),
    FROM_INT("f32", 32, RNE, INT32_MAX, 0x4f000000, FX),
    FROM_INT("f32", 32, RTZ, INT32_MAX, 0x4effffff, FX),
    FROM_INT("f32", 64, RNE, INT64_MIN, 0xdf000000, 0),
    FROM_INT("f32", 64, RDN, INT64_MAX, 0x5effffff, FX),
    FROM_INT("f32", 32, RNE, 0, 0x00000000, 0),
    FROM_INT("bf16", 32, RNE, 257, 0x4380, FX),
    FROM_INT("bf16", 32, RNA, 257, 0x4381, FX),
    FROM_INT("bf16", 32, RNE, -259, 0xc382, FX),
    FROM_INT("f16", 32, RNE, 65504, 0x7bff, 0),
    FROM_INT("f16", 32, RNE, 65520, 0x7c00, FO | FX),
    FROM_INT("f16", 32, RTZ, 65520, 0x7bff, FX),
    FROM_INT("f16", 32, RNE, -65536, 0xfc00, FO | FX),
    FROM_INT("f16", 64, RUP, -65536, 0xfbff, FO | FX),
    FROM_INT("e4m3", 32, RNE, 448, 0x7e, 0),
    FROM_INT("e4m3", 32, RNE, 464, 0x7e, FX),
    FROM_INT("e4m3", 32, RNE, 465, 0x7f, FO | FX),
    FROM_INT("e5m2", 32, RNE, 57344, 0x7b, 0),
    FROM_INT("e5m2", 64, RNE, INT64_MIN, 0xfc, FO | FX),
    /* to integers: NaN, Inf and out of range give the minimum integer */
    TO_INT("f32", 32, RNE, 0x4f000000, INT32_MIN, FV),
    TO_INT("f32", 32, RNE, 0xcf000000, INT32_MIN, 0),
    TO_INT("f32", 32, RNE, 0x4effffff, 2147483520, 0),
    TO_INT("f32", 32, RNE, 0x7fc00000, INT32_MIN, FV),
    TO_INT("f32", 32, RNE, 0xff800000, INT32_MIN, FV),
    TO_INT("f32", 64, RNE, 0x5f000000, INT64_MIN, FV),
    TO_INT("f32", 64, RNE, 0xdf000000, INT64_MIN, 0),
    TO_INT("f32", 64, RNE, 0x5e800000, 4611686018427387904, 0),
    TO_INT("f32", 64, RNE, 0xdeffffff, -9223371487098961920, 0),
    TO_INT("f32", 32, RNE, 0x3fc00000, 2, FX),
    TO_INT("f32", 32, RNA, 0x3fc00000, 2, FX),
    TO_INT("f32", 32, RTZ, 0x3fc00000, 1, FX),
    TO_INT("f32", 32, ROD, 0x3fc00000, 1, FX),
    TO_INT("f32", 32, RNE, 0x40200000, 2, FX),
    TO_INT("f32", 32, RNA, 0x40200000, 3, FX),
    TO_INT("f32", 32, ROD, 0x40200000, 3, FX),
    TO_INT("f32", 32, RDN, 0xbf000000, -1, FX),
    TO_INT("f32", 32, RNE, 0xbf000000, 0, FX),
    TO_INT("f32", 32, ROD, 0xbf000000, -1, FX),
    TO_INT("f32", 32, RUP, 0xbf000000, 0, FX),
    TO_INT("f32", 32, RNE, 0x80000000, 0, 0),
    TO_INT("bf16", 32, RNE, 0x7fc0, INT32_MIN, FV),
    TO_INT("bf16", 32, RNE, 0x4f00, INT32_MIN, FV),
    TO_INT("bf16", 32, RNE, 0xcf00, INT32_MIN, 0),
    TO_INT("bf16", 64, RNE, 0x4f00, 2147483648, 0),
    TO_INT("e4m3", 32, RNE, 0x7f, INT32_MIN, FV),
    TO_INT("e4m3", 32, RNE, 0xfe, -448, 0),
    /* roundToIntegral(Exact) */
    RINT("bf16", 1, RNE, 0x3fc0, 0x4000, FX),
    RINT("bf16", 0, RNE, 0x3fc0, 0x4000, 0),
    RINT("bf16", 1, RNE, 0xbf00, 0x8000, FX),
    RINT("bf16", 1, RUP, 0xbf00, 0x8000, FX),
    RINT("bf16", 1, RDN, 0x3f00, 0x0000, FX),
    RINT("bf16", 1, ROD, 0xbf00, 0xbf80, FX),
    RINT("bf16", 1, ROD, 0x3f00, 0x3f80, FX),
    RINT("bf16", 1, ROD, 0x4060, 0x4040, FX),
    RINT("bf16", 1, RNA, 0x4020, 0x4040, FX),
    RINT("bf16", 1, RNE, 0x4020, 0x4000, FX),
    RINT("bf16", 1, RNE, 0x7fa0, 0x7fe0, FV),
    RINT("bf16", 0, RNE, 0x7fa0, 0x7fe0, FV),
    RINT("bf16", 1, RNE, 0xff80, 0xff80, 0),
    RINT("bf16", 1, RNE, 0x4b00, 0x4b00, 0),
    RINT("f32", 1, RNE, 0x4b000001, 0x4b000001, 0),
    RINT("f32", 1, RNE, 0x4afffffd, 0x4afffffc, FX),
    RINT("e5m2", 1, RNE, 0x3e, 0x40, FX),
    RINT("e4m3", 1, RNE, 0x7f, 0x7f, 0),
};

static const sf_format *const all_formats[] = {
    &sf_format_bf16, &sf_format_f16,  &sf_format_f32,
    &sf_format_tf32, &sf_format_e4m3, &sf_format_e5m2};
#define N_FORMATS 6

/*----------------------------------------------------------------------------
 * Generators.
 *--------------------------------------------------------------------------*/
typedef struct
{
    opc_kind kind;
    const sf_format *f;    /* result format (OPC_TO_INT: source) */
    const sf_format *from; /* OPC_CONVERT */
    unsigned width;
    bool exact;
    const uint64_t *vals;
    uint64_t n_vals;
} gen_ctx;

static void
base_case(const gen_ctx *g, opc_case *c)
{
    c->kind = g->kind;
    c->f = g->f;
    c->from = g->from;
    c->width = g->width;
    c->exact = g->exact;
}

/* Every encoding of the source format (2^8 or 2^16 of them). */
static void
gen_every(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    (void)rng;
    base_case(ctx, c);
    c->in[0] = idx;
}

static void
gen_list(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;

    (void)rng;
    base_case(g, c);
    c->in[0] = g->vals[idx];
}

/* Binary32 values aimed at a narrower format T: exponents spanning T's
   subnormals to beyond its overflow threshold, T's kept bits random and
   the discarded bits exactly half, just off half, zero or random. */
static uint64_t
f32_near(const sf_format *t, tst_rng *rng)
{
    const sf_format *f = &sf_format_f32;
    int t_bias = (1 << (t->exp_bits - 1)) - 1;
    int lo = 1 - t_bias - (int)t->frac_bits - 2;
    int hi = (1 << t->exp_bits) - 1 - t_bias + 1;
    int e = lo + (int)tst_rand_below(rng, (uint64_t)(hi - lo + 1));
    unsigned drop = f->frac_bits - t->frac_bits;
    uint64_t half = (uint64_t)1 << (drop - 1), low;
    uint64_t frac;
    bool s = tst_rand_below(rng, 2) != 0;
    int be;

    if (tst_rand_below(rng, 4) == 0)
        return opc_random_value(f, rng);
    switch (tst_rand_below(rng, 6)) {
    case 0:
        low = half;
        break;
    case 1:
        low = half - 1;
        break;
    case 2:
        low = half + 1;
        break;
    case 3:
        low = 0;
        break;
    default:
        low = tst_rand64(rng) & ((half << 1) - 1);
        break;
    }
    frac = (opc_random_sig(rng, t->frac_bits) << drop) | low;
    be = e + 127;
    if (be < 1)
        be = 1 + (int)tst_rand_below(rng, 2) - 1;
    if (be > 254)
        be = 254;
    return opc_pack(f, s, (uint64_t)be, frac);
}

static void
gen_f32_near(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;

    (void)idx;
    base_case(g, c);
    c->in[0] = f32_near(g->f, rng);
}

/* Random source values of format FROM (mixed distribution). */
static void
gen_random_from(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;

    (void)idx;
    base_case(g, c);
    c->in[0] = opc_random_value(g->kind == OPC_CONVERT ? g->from : g->f, rng);
}

/* Random integers: random bit length, random sign, runs of ones. */
static void
gen_int(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;
    unsigned len = (unsigned)tst_rand_below(rng, g->width + 1);
    uint64_t v = len == 0 ? 0 : opc_random_sig(rng, len > 63 ? 63 : len);

    (void)idx;
    base_case(g, c);
    if (len > 0)
        v |= (uint64_t)1 << (len - 1);
    if (len >= 64)
        v = tst_rand64(rng);
    if (g->width == 32)
        c->iv = tst_rand_below(rng, 2) ? -(int64_t)(uint32_t)v
                                       : (int64_t)(uint32_t)v;
    else
        c->iv = tst_rand_below(rng, 2) ? (int64_t)(0 - v) : (int64_t)v;
    if (g->width == 32)
        c->iv = (int32_t)(uint32_t)(uint64_t)c->iv;
}

/* Values aimed at the integer boundaries: |x| near 2^(w-1), halves,
   small values with fractions. */
static uint64_t
near_int_edge(const sf_format *f, unsigned width, tst_rng *rng)
{
    int bias = (1 << (f->exp_bits - 1)) - 1;
    int e;

    switch (tst_rand_below(rng, 3)) {
    case 0:
        e = (int)width - 1 + (int)tst_rand_below(rng, 3) - 1;
        break;
    case 1:
        e = (int)tst_rand_below(rng, (uint64_t)f->frac_bits + 3) - 2;
        break;
    default:
        return opc_random_value(f, rng);
    }
    if (e + bias >= (1 << f->exp_bits) - 1)
        e = (1 << f->exp_bits) - 2 - bias;
    return opc_pack(f, tst_rand_below(rng, 2) != 0, (uint64_t)(e + bias),
                    opc_random_sig(rng, f->frac_bits));
}

static void
gen_int_edge(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;

    (void)idx;
    base_case(g, c);
    c->in[0] = near_int_edge(g->f, g->width ? g->width : 24, rng);
}

static void
check(const char *label, opc_report *r)
{
    opc_report_print(r, label);
}

/*----------------------------------------------------------------------------
 * Conversions between formats.
 *--------------------------------------------------------------------------*/
/* Every 8- and 16-bit input to every other format, every mode; E4M3
   results also saturating. */
START_TEST(test_exhaustive_convert)
{
    sf_env env = SF_ENV_IEEE;
    opc_report r;
    unsigned i, j, sat;

    opc_report_init(&r);
    for (i = 0; i < N_FORMATS; i++) {
        const sf_format *from = all_formats[i];
        if (from->storage_bits > 16)
            continue;
        for (j = 0; j < N_FORMATS; j++) {
            gen_ctx g = {OPC_CONVERT, all_formats[j], from, 0, false, NULL, 0};
            for (sat = 0; sat < 2; sat++) {
                if (sat && all_formats[j]->specials != SF_SPECIALS_FN)
                    continue;
                env.saturate = sat != 0;
                opc_run_cases(gen_every, &g, (uint64_t)1 << from->storage_bits,
                              1000 + i * 16 + j * 2 + sat, &env, false, &r);
            }
        }
    }
    /* tininess before rounding on the narrowing 16-bit conversions */
    env.saturate = false;
    env.tininess_after = false;
    for (i = 0; i < 2; i++) {
        gen_ctx g = {OPC_CONVERT,
                     all_formats[1 - i],
                     all_formats[i],
                     0,
                     false,
                     NULL,
                     0};
        opc_run_cases(gen_every, &g, 65536, 1200 + i, &env, false, &r);
    }
    check("convert: every 8- and 16-bit input", &r);
    ck_assert_msg(r.n_bad == 0, "%lu of %lu conversions differ", r.n_bad,
                  r.n_checked);
}
END_TEST

/* Binary32 (and TF32) to every format: structured values, then values
   aimed at each target's rounding and range boundaries. */
START_TEST(test_structured_convert)
{
    enum
    {
        MAX_VALS = 4096
    };
    static uint64_t vals[MAX_VALS];
    sf_env env = SF_ENV_IEEE;
    opc_report r;
    unsigned i, j;

    opc_report_init(&r);
    for (i = 0; i < N_FORMATS; i++) {
        const sf_format *from = all_formats[i];
        size_t n = opc_structured_values(from, vals, MAX_VALS);
        for (j = 0; j < N_FORMATS; j++) {
            gen_ctx g = {OPC_CONVERT, all_formats[j], from, 0, false, vals, n};
            env.saturate = false;
            opc_run_cases(gen_list, &g, n, 2000 + i * 8 + j, &env, true, &r);
            if (all_formats[j]->specials == SF_SPECIALS_FN) {
                env.saturate = true;
                opc_run_cases(gen_list, &g, n, 2100 + i * 8 + j, &env, true,
                              &r);
            }
        }
    }
    check("convert: structured", &r);
    ck_assert_msg(r.n_bad == 0, "%lu of %lu conversions differ", r.n_bad,
                  r.n_checked);
}
END_TEST

START_TEST(test_random_convert)
{
    sf_env env = SF_ENV_IEEE;
    unsigned long m = tst_multiplier();
    opc_report r;
    unsigned j;

    opc_report_init(&r);
    for (j = 0; j < N_FORMATS; j++) {
        const sf_format *to = all_formats[j];
        gen_ctx g = {OPC_CONVERT, to, &sf_format_f32, 0, false, NULL, 0};
        bool main_target = to == &sf_format_bf16 || to == &sf_format_f16;
        if (to == &sf_format_f32)
            continue;
        env.saturate = false;
        env.tininess_after = true;
        opc_run_cases(gen_f32_near, &g, (main_target ? 1000000 : 300000) * m,
                      3000 + j, &env, false, &r);
        opc_run_cases(gen_random_from, &g, 100000 * m, 3010 + j, &env, false,
                      &r);
        env.tininess_after = false;
        opc_run_cases(gen_f32_near, &g, 100000 * m, 3020 + j, &env, false, &r);
        if (to->specials == SF_SPECIALS_FN) {
            env.tininess_after = true;
            env.saturate = true;
            opc_run_cases(gen_f32_near, &g, 300000 * m, 3030 + j, &env, false,
                          &r);
        }
    }
    /* TF32 sources */
    env.saturate = false;
    env.tininess_after = true;
    for (j = 0; j < N_FORMATS; j++) {
        gen_ctx g = {
            OPC_CONVERT, all_formats[j], &sf_format_tf32, 0, false, NULL, 0};
        opc_run_cases(gen_random_from, &g, 100000 * m, 3040 + j, &env, false,
                      &r);
    }
    check("convert: random", &r);
    ck_assert_msg(r.n_bad == 0, "%lu of %lu conversions differ", r.n_bad,
                  r.n_checked);
}
END_TEST

/*----------------------------------------------------------------------------
 * Integers.
 *--------------------------------------------------------------------------*/
static const int64_t int_edges[] = {0,
                                    1,
                                    -1,
                                    2,
                                    -2,
                                    3,
                                    7,
                                    255,
                                    256,
                                    257,
                                    259,
                                    448,
                                    464,
                                    465,
                                    480,
                                    2047,
                                    2048,
                                    2049,
                                    2051,
                                    57344,
                                    61440,
                                    65504,
                                    65519,
                                    65520,
                                    65536,
                                    16777215,
                                    16777216,
                                    16777217,
                                    16777219,
                                    0x7fffff80,
                                    0x7fffffc0,
                                    INT32_MAX,
                                    INT32_MIN,
                                    -INT32_MAX,
                                    (int64_t)1 << 53,
                                    ((int64_t)1 << 53) + 1,
                                    INT64_MAX,
                                    INT64_MIN,
                                    -INT64_MAX,
                                    INT64_MAX - 511,
                                    INT64_MAX - 512,
                                    (int64_t)0x7fffff8000000000,
                                    (int64_t)0x7fffff8000000001};

static void
gen_int_edges(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const gen_ctx *g = ctx;
    size_t n = sizeof int_edges / sizeof int_edges[0];
    int64_t v = int_edges[idx % n];

    (void)rng;
    base_case(g, c);
    if (idx / n == 1)
        v = (int64_t)(0 - (uint64_t)v);
    if (g->width == 32)
        v = (int32_t)(uint32_t)(uint64_t)v;
    c->iv = v;
}

START_TEST(test_from_int)
{
    sf_env env = SF_ENV_IEEE;
    unsigned long m = tst_multiplier();
    size_t n_edges = sizeof int_edges / sizeof int_edges[0];
    opc_report r;
    unsigned j, w;

    opc_report_init(&r);
    for (j = 0; j < N_FORMATS; j++)
        for (w = 32; w <= 64; w += 32) {
            gen_ctx g = {OPC_FROM_INT, all_formats[j], NULL, w,
                         false,        NULL,           0};
            env.saturate = false;
            opc_run_cases(gen_int_edges, &g, 2 * n_edges, 4000 + j * 2 + w,
                          &env, true, &r);
            opc_run_cases(gen_int, &g, 200000 * m, 4100 + j * 2 + w, &env,
                          false, &r);
            if (all_formats[j]->specials == SF_SPECIALS_FN) {
                env.saturate = true;
                opc_run_cases(gen_int, &g, 50000 * m, 4200 + j * 2 + w, &env,
                              false, &r);
            }
        }
    check("from_i32/from_i64", &r);
    ck_assert_msg(r.n_bad == 0, "%lu of %lu conversions differ", r.n_bad,
                  r.n_checked);
}
END_TEST

/* Every 8- and 16-bit input to int32/int64 and through round_to_int
   (exact and not). */
START_TEST(test_exhaustive_int)
{
    sf_env env = SF_ENV_IEEE;
    opc_report r;
    unsigned i, k;

    opc_report_init(&r);
    for (i = 0; i < N_FORMATS; i++) {
        const sf_format *f = all_formats[i];
        if (f->storage_bits > 16)
            continue;
        for (k = 0; k < 4; k++) {
            gen_ctx g = {k < 2 ? OPC_TO_INT : OPC_ROUND_INT,
                         f,
                         NULL,
                         k == 0   ? 32u
                         : k == 1 ? 64u
                                  : 0u,
                         k == 3,
                         NULL,
                         0};
            opc_run_cases(gen_every, &g, (uint64_t)1 << f->storage_bits,
                          5000 + i * 4 + k, &env, false, &r);
        }
    }
    check("to_int/round_to_int: every 8- and 16-bit input", &r);
    ck_assert_msg(r.n_bad == 0, "%lu of %lu cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

START_TEST(test_random_int)
{
    enum
    {
        MAX_VALS = 4096
    };
    static uint64_t vals[MAX_VALS];
    sf_env env = SF_ENV_IEEE;
    unsigned long m = tst_multiplier();
    opc_report r;
    unsigned i, k;

    opc_report_init(&r);
    for (i = 0; i < N_FORMATS; i++) {
        const sf_format *f = all_formats[i];
        size_t n = opc_structured_values(f, vals, MAX_VALS);
        uint64_t count = f == &sf_format_f32 ? 1000000 : 200000;
        for (k = 0; k < 4; k++) {
            gen_ctx g = {k < 2 ? OPC_TO_INT : OPC_ROUND_INT,
                         f,
                         NULL,
                         k == 0   ? 32u
                         : k == 1 ? 64u
                                  : 0u,
                         k == 3,
                         vals,
                         n};
            opc_run_cases(gen_list, &g, n, 6000 + i * 4 + k, &env, true, &r);
            if (f->storage_bits > 16) {
                opc_run_cases(gen_int_edge, &g, count * m, 6100 + i * 4 + k,
                              &env, false, &r);
                opc_run_cases(gen_random_from, &g, count / 4 * m,
                              6200 + i * 4 + k, &env, false, &r);
            }
        }
    }
    check("to_int/round_to_int: structured and random", &r);
    ck_assert_msg(r.n_bad == 0, "%lu of %lu cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

/* The rows through opc_suite (no parts of its own: the loops here cover
   several kinds of case each), then two tests per tcase. */
static const opc_suite_def def = {
    .name = "convert", .rows = rows, .n_rows = sizeof rows / sizeof rows[0]};

int
main(void)
{
    Suite *s = opc_suite(&def);
    TCase *tc;

    tc = tst_add_tcase(s, "structured", 600);
    tcase_add_test(tc, test_structured_convert);
    tcase_add_test(tc, test_from_int);
    tc = tst_add_tcase(s, "random", 600);
    tcase_add_test(tc, test_random_convert);
    tcase_add_test(tc, test_random_int);
    tc = tst_add_tcase(s, "exhaustive", 600);
    tcase_add_test(tc, test_exhaustive_convert);
    tcase_add_test(tc, test_exhaustive_int);
    return tst_run_suite(s);
}
