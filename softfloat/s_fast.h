/* s_fast.h -- short paths for the common case: normal operands, a normal
   finite result, no event sink, a mode other than SF_SR */
#ifndef BF16EMU_SOFTFLOAT_S_FAST_H
#define BF16EMU_SOFTFLOAT_S_FAST_H

#include "internal.h"

/*----------------------------------------------------------------------------
 * Each function here computes what the generic operation computes, for a
 * subset of the inputs, with 64-bit integer arithmetic only, and returns
 * S_FAST_NONE (touching nothing) for every input outside the subset; the
 * caller then runs the generic operation.  The subset: every operand
 * normal (exponent field neither 0 nor all ones), no event sink, a mode
 * other than SF_SR, and an exact result that is not zero and rounds to a
 * normal finite value (no overflow, no tininess in either tininess rule).
 * On that subset FTZ, DAZ, saturation, the tininess rule and the NaN rule
 * change nothing, and the only flag an operation can raise is inexact,
 * which the fast path raises exactly when bits are discarded.  The
 * formats: IEEE specials, no padding bits and F <= 23 fraction bits
 * (BF16, FP16, FP32), so that a product has at most 48 bits.
 * tests/softfloat/test_fast.c compares these paths with the generic
 * operations bit for bit, flags included.
 *--------------------------------------------------------------------------*/
#define S_FAST_NONE (~(uint64_t)0)

/* Whether the fast paths may run under ENV at all (SF_SR is refused by
   s_fast_round, which is where the mode is first looked at). */
static inline bool
s_fast_ok(const sf_env *env)
{
    (void)env; /* unused when built without the event hook */
    return !S_EVENTS_ON(env);
}

/* Whether the exponent field E (EB bits wide) is that of a normal. */
static inline bool
s_fast_normal(uint64_t e, unsigned eb)
{
    return e - 1 < ((uint64_t)1 << eb) - 2;
}

/* Rounds (-1)^SIGN * Z * 2^k (0 < Z < 2^(W + 1), W <= 62) to the format
   with FB fraction bits and EB exponent bits in mode RM, where E0 is the
   biased exponent of 2^(W + k) (the result's, if Z's top bit were bit W).
   Returns the bits, or S_FAST_NONE when the result is not a normal finite
   value (tiny before rounding, or overflowing); raises inexact in ENV
   when bits are discarded.  Z is first shifted left to put its top at
   bit W, so that the rounding shifts are constants. */
static inline uint64_t
s_fast_round(unsigned fb, unsigned eb, unsigned w, bool sign, uint64_t z,
             int e0, sf_round rm, sf_env *env)
{
    const unsigned sh = w - fb; /* bits below the last kept one */
    const uint64_t half = (uint64_t)1 << (sh - 1);
    const uint64_t emask = ((uint64_t)1 << eb) - 1;
    int n = s_clz64(z) - (63 - (int)w);
    int er = e0 - n; /* the biased exponent before rounding */
    uint64_t kept, rem, bits;

    if ((uint64_t)(int64_t)(er - 1) >= emask - 1)
        return S_FAST_NONE;
    z <<= n;
    rem = z & ((half << 1) - 1);
    if (SF_LIKELY(rm == SF_RNE)) {
        /* up when rem > half, or rem = half and the kept part is odd */
        kept = (z + (half - 1) + ((z >> sh) & 1)) >> sh;
    } else {
        bool inc;
        kept = z >> sh;
        switch (rm) {
        case SF_RNA:
            inc = rem >= half;
            break;
        case SF_RUP:
            inc = rem != 0 && !sign;
            break;
        case SF_RDN:
            inc = rem != 0 && sign;
            break;
        case SF_ROD:
            inc = rem != 0 && (kept & 1) == 0;
            break;
        case SF_RTZ:
            inc = false;
            break;
        default: /* SF_SR: the generic path draws the random bits */
            return S_FAST_NONE;
        }
        kept += inc;
    }
    /* kept in [2^fb, 2^(fb+1)]: adding it to the exponent field minus one
       puts the hidden bit (and a carry out) into the exponent */
    bits = ((uint64_t)(er - 1) << fb) + kept;
    if (bits >= emask << fb) /* overflow after rounding */
        return S_FAST_NONE;
    if (rem != 0)
        env->flags |= SF_FLAG_INEXACT;
    return bits | ((uint64_t)sign << (fb + eb));
}

/* The significand of a normal A (FB fraction bits), hidden bit set. */
static inline uint64_t
s_fast_sig(uint64_t a, unsigned fb)
{
    return (a & (((uint64_t)1 << fb) - 1)) | ((uint64_t)1 << fb);
}

/* a + b (b negated when SUB) in the format (FB, EB) in a window of W + 1
   bits (2 FB + 3 <= W <= 62).  The operand of larger magnitude, x, is put
   with its top at bit W - 1 (shifted left by s = W - 1 - FB); the other,
   y, is shifted right from there by the exponent difference d.  For
   d <= s nothing is lost.  For d > s, y is below 2^FB, and bit 0 is set
   whether or not y lost bits.  Then d >= 2, so the result's top is at
   bit W - 2 or above and its rounding quantum 2^sh and midpoints are
   multiples of 2^(sh - 1) >= 2^(W - 3 - FB) >= 2^FB; x is a multiple of
   2^s, itself a multiple of 2^(sh - 1).  The exact sum and the window's
   both lie strictly between x and x +- 2^FB (y != 0), so neither is on a
   boundary or midpoint and both round alike and are inexact.  The sum is
   below 2^(W + 1); with its top at bit W its exponent is ex + 1. */
static inline uint64_t
s_fast_add(unsigned fb, unsigned eb, unsigned w, uint64_t a, uint64_t b,
           bool sub, sf_round rm, sf_env *env)
{
    const unsigned s = w - 1 - fb;
    const uint64_t sbit = (uint64_t)1 << (fb + eb);
    uint64_t ub = b ^ (sub ? sbit : 0);
    uint64_t ma = a & (sbit - 1), mb = ub & (sbit - 1);
    uint64_t swap, x, y, ex, d, sx, sy, flip, z;

    if (!s_fast_ok(env) || !s_fast_normal(ma >> fb, eb)
        || !s_fast_normal(mb >> fb, eb))
        return S_FAST_NONE;
    /* x the operand of larger magnitude, y the other, without a branch */
    swap = ((a ^ ub) & ((uint64_t)0 - (ma < mb)));
    x = a ^ swap;
    y = ub ^ swap;
    ex = (x & (sbit - 1)) >> fb;
    d = ex - ((y & (sbit - 1)) >> fb);
    sx = s_fast_sig(x, fb) << s;
    sy = ((s_fast_sig(y, fb) << s) >> (d < 63 ? d : 63)) | (d > s);
    /* y subtracted (two's complement) when the signs differ */
    flip = (uint64_t)0 - (((x ^ y) & sbit) != 0);
    z = sx + ((sy ^ flip) - flip);
    if (z == 0) /* exact zero: its sign rule is generic */
        return S_FAST_NONE;
    return s_fast_round(fb, eb, w, (x & sbit) != 0, z, (int)ex + 1, rm, env);
}

/* a * b in the format (FB, EB) (2 FB + 1 <= W <= 62): the exact product
   of the significands has 2 FB + 1 or 2 FB + 2 bits; with its top at bit
   2 FB its exponent is ea + eb - bias. */
static inline uint64_t
s_fast_mul(unsigned fb, unsigned eb, unsigned w, uint64_t a, uint64_t b,
           sf_round rm, sf_env *env)
{
    const int bias = (1 << (eb - 1)) - 1;
    const uint64_t sbit = (uint64_t)1 << (fb + eb);
    uint64_t ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;

    if (!s_fast_ok(env) || !s_fast_normal(ea, eb) || !s_fast_normal(eb_, eb))
        return S_FAST_NONE;
    return s_fast_round(fb, eb, w, ((a ^ b) & sbit) != 0,
                        s_fast_sig(a, fb) * s_fast_sig(b, fb),
                        (int)(ea + eb_) - bias + (int)w - 2 * (int)fb, rm,
                        env);
}

/* a * b + c in the format (FB, EB).  The product p (at most 48 bits) and
   c are placed in a 64-bit window with the larger top at bit 61, so the
   larger keeps all its bits (its bottom is at bit 14 or above) and the
   sum stays below 2^63.  The smaller is shifted right, its lost bits
   jammed into bit 0, only when its top is below bit 47; the result's top
   is then at bit 60 or above and its rounding quantum 2^(60 - FB) or
   coarser.  When bits were lost, the smaller operand's bit 0 is 1 and the
   larger's 0, so the window's sum is odd and the exact sum lies strictly
   between the window's sum minus one and plus one: no rounding boundary
   or midpoint (all even) lies in that interval, and both round alike. */
static inline uint64_t
s_fast_fma(unsigned fb, unsigned eb, uint64_t a, uint64_t b, uint64_t c,
           sf_round rm, sf_env *env)
{
    const int bias = (1 << (eb - 1)) - 1;
    const uint64_t sbit = (uint64_t)1 << (fb + eb);
    uint64_t ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;
    uint64_t ec = (c & (sbit - 1)) >> fb;
    uint64_t p, q, z;
    int tp, tq, top, sp, sq;
    bool sign;

    if (!s_fast_ok(env) || !s_fast_normal(ea, eb) || !s_fast_normal(eb_, eb)
        || !s_fast_normal(ec, eb))
        return S_FAST_NONE;
    p = s_fast_sig(a, fb) * s_fast_sig(b, fb);
    q = s_fast_sig(c, fb);
    /* biased exponents of the two tops */
    tp = (int)(ea + eb_) - bias + (63 - s_clz64(p)) - 2 * (int)fb;
    tq = (int)ec;
    top = tp > tq ? tp : tq;
    /* left shifts putting each top at bit 61 - (top - its top) */
    sp = 61 - (top - tp) - (63 - s_clz64(p));
    sq = 61 - (top - tq) - (int)fb;
    p = sp >= 0     ? p << sp
        : sp <= -64 ? 1
                    : (p >> -sp) | ((p & (((uint64_t)1 << -sp) - 1)) != 0);
    q = sq >= 0     ? q << sq
        : sq <= -64 ? 1
                    : (q >> -sq) | ((q & (((uint64_t)1 << -sq) - 1)) != 0);
    sign = ((a ^ b) & sbit) != 0;
    if (sign == ((c & sbit) != 0)) {
        z = p + q;
    } else if (p != q) {
        z = p > q ? p - q : q - p;
        sign = p > q ? sign : !sign;
    } else {
        return S_FAST_NONE; /* exact zero: its sign rule is generic */
    }
    return s_fast_round(fb, eb, 62, sign, z, top + 1, rm, env);
}

/* The conversion of a normal value A of a format (FB_FROM, EB) to one
   with fewer fraction bits FB_TO and the same exponent field, as FP32 to
   BF16 (FB_FROM <= 30): the exponent carries over, the fraction is
   rounded. */
static inline uint64_t
s_fast_narrow(unsigned fb_from, unsigned fb_to, unsigned eb, uint64_t a,
              sf_round rm, sf_env *env)
{
    const uint64_t sbit = (uint64_t)1 << (fb_from + eb);
    uint64_t e = (a & (sbit - 1)) >> fb_from;

    if (!s_fast_ok(env) || !s_fast_normal(e, eb))
        return S_FAST_NONE;
    return s_fast_round(fb_to, eb, 30, (a & sbit) != 0, s_fast_sig(a, fb_from),
                        (int)e + 30 - (int)fb_from, rm, env);
}

/*----------------------------------------------------------------------------
 * The fast paths by format: s_fast_<op>_<fmt> for the typed wrappers
 * (S_FAST_NONE at once for a format without them) and s_fast_<op>_any
 * for the generic operations, which dispatch on the descriptor.
 *--------------------------------------------------------------------------*/
#define S_FAST_DEFINE(fmt, FB, EB, W)                                         \
    static inline uint64_t s_fast_add_##fmt(uint64_t a, uint64_t b, bool sub, \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        return s_fast_add(FB, EB, W, a, b, sub, rm, env);                     \
    }                                                                         \
    static inline uint64_t s_fast_mul_##fmt(uint64_t a, uint64_t b,           \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        return s_fast_mul(FB, EB, W, a, b, rm, env);                          \
    }                                                                         \
    static inline uint64_t s_fast_fma_##fmt(                                  \
        uint64_t a, uint64_t b, uint64_t c, sf_round rm, sf_env *env)         \
    {                                                                         \
        return s_fast_fma(FB, EB, a, b, c, rm, env);                          \
    }

#define S_FAST_DEFINE_NONE(fmt)                                               \
    static inline uint64_t s_fast_add_##fmt(uint64_t a, uint64_t b, bool sub, \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        (void)a, (void)b, (void)sub, (void)rm, (void)env;                     \
        return S_FAST_NONE;                                                   \
    }                                                                         \
    static inline uint64_t s_fast_mul_##fmt(uint64_t a, uint64_t b,           \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        (void)a, (void)b, (void)rm, (void)env;                                \
        return S_FAST_NONE;                                                   \
    }                                                                         \
    static inline uint64_t s_fast_fma_##fmt(                                  \
        uint64_t a, uint64_t b, uint64_t c, sf_round rm, sf_env *env)         \
    {                                                                         \
        (void)a, (void)b, (void)c, (void)rm, (void)env;                       \
        return S_FAST_NONE;                                                   \
    }

/* W, the window of the addition and the product: 30 where 2 FB + 3 <= 30
   (constants that fit an instruction's 32-bit immediate), else 62. */
S_FAST_DEFINE(bf16, S_BF16_FRAC_BITS, S_BF16_EXP_BITS, 30)
S_FAST_DEFINE(f16, S_F16_FRAC_BITS, S_F16_EXP_BITS, 30)
S_FAST_DEFINE(f32, S_F32_FRAC_BITS, S_F32_EXP_BITS, 62)
S_FAST_DEFINE_NONE(tf32)
S_FAST_DEFINE_NONE(e4m3)
S_FAST_DEFINE_NONE(e5m2)

static inline uint64_t
s_fast_add_any(const sf_format *f, uint64_t a, uint64_t b, bool sub,
               sf_round rm, sf_env *env)
{
    if (f == &sf_format_bf16)
        return s_fast_add_bf16(a, b, sub, rm, env);
    if (f == &sf_format_f32)
        return s_fast_add_f32(a, b, sub, rm, env);
    if (f == &sf_format_f16)
        return s_fast_add_f16(a, b, sub, rm, env);
    return S_FAST_NONE;
}

static inline uint64_t
s_fast_mul_any(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
               sf_env *env)
{
    if (f == &sf_format_bf16)
        return s_fast_mul_bf16(a, b, rm, env);
    if (f == &sf_format_f32)
        return s_fast_mul_f32(a, b, rm, env);
    if (f == &sf_format_f16)
        return s_fast_mul_f16(a, b, rm, env);
    return S_FAST_NONE;
}

static inline uint64_t
s_fast_fma_any(const sf_format *f, uint64_t a, uint64_t b, uint64_t c,
               sf_round rm, sf_env *env)
{
    if (f == &sf_format_bf16)
        return s_fast_fma_bf16(a, b, c, rm, env);
    if (f == &sf_format_f32)
        return s_fast_fma_f32(a, b, c, rm, env);
    if (f == &sf_format_f16)
        return s_fast_fma_f16(a, b, c, rm, env);
    return S_FAST_NONE;
}

/* sf_convert's fast path: FP32 to BF16 only. */
static inline uint64_t
s_fast_convert_any(const sf_format *to, const sf_format *from, uint64_t a,
                   sf_round rm, sf_env *env)
{
    if (to == &sf_format_bf16 && from == &sf_format_f32)
        return s_fast_narrow(S_F32_FRAC_BITS, S_BF16_FRAC_BITS, S_F32_EXP_BITS,
                             a, rm, env);
    return S_FAST_NONE;
}

#endif
