/* softfloat_inline.h -- inline fast paths of the typed BF16, FP16 and
   FP32 add, sub, mul and fma (and FP32 -> BF16), included by softfloat.h.

   For operands and results in the fast subset (every operand normal, no
   event sink, a mode other than SF_SR, an exact result that is not zero
   and rounds to a normal finite value) sf_bf16_add and its kin compute
   the result here, in the caller, with 64-bit integer arithmetic, and
   raise inexact exactly when bits are discarded; for every other input
   they call the library's function of the same name, which computes the
   same bits and flags for every input.  The exported functions stay (a
   function pointer or a parenthesised call, (sf_bf16_add)(...), reaches
   the library), so the ABI is that of softfloat.h alone.  Defining
   SF_NO_INLINE before including softfloat.h turns the macros off. */
#ifndef BF16EMU_SOFTFLOAT_INLINE_H
#define BF16EMU_SOFTFLOAT_INLINE_H

/* Included on its own, this file first includes softfloat.h (whose own
   include of this file then finds the guard above set). */
#include "softfloat.h"

#if defined(__GNUC__)
#define SF_FAST_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define SF_FAST_LIKELY(x) (x)
#endif

/* No result: the input is outside the fast subset. */
#define SF_FAST_NONE (~(uint64_t)0)

/* Leading zeros of A != 0. */
static inline int
sf_fast_clz64(uint64_t a)
{
#if defined(__GNUC__)
    return __builtin_clzll(a);
#else
    int n = 0;
    while (!(a & ((uint64_t)1 << 63))) {
        a <<= 1;
        n++;
    }
    return n;
#endif
}

/*----------------------------------------------------------------------------
 * The primitives.  The subset is described in softfloat/s_fast.h, which
 * gives these functions their internal names (s_fast_*); the comment
 * above each one says why it computes what the generic operation
 * computes.  tests/softfloat/test_fast.c compares them with the generic
 * operations bit for bit, flags included.
 *--------------------------------------------------------------------------*/
/* Whether the fast paths may run under ENV at all (SF_SR is refused by
   sf_fast_round, which is where the mode is first looked at). */
static inline bool
sf_fast_ok(const sf_env *env)
{
#ifdef SF_NO_EVENT_HOOK
    (void)env;
    return true;
#else
    return SF_FAST_LIKELY(env->events == NULL);
#endif
}

/* Whether the exponent field E (EB bits wide) is that of a normal. */
static inline bool
sf_fast_normal(uint64_t e, unsigned eb)
{
    return e - 1 < ((uint64_t)1 << eb) - 2;
}

/* Rounds (-1)^SIGN * Z * 2^k (0 < Z < 2^(W + 1), W <= 62) to the format
   with FB fraction bits and EB exponent bits in mode RM, where E0 is the
   biased exponent of 2^(W + k) (the result's, if Z's top bit were bit W).
   Returns the bits, or SF_FAST_NONE when the result is not a normal finite
   value (tiny before rounding, or overflowing); raises inexact in ENV
   when bits are discarded.  Z is first shifted left to put its top at
   bit W, so that the rounding shifts are constants. */
static inline uint64_t
sf_fast_round(unsigned fb, unsigned eb, unsigned w, bool sign, uint64_t z,
              int e0, sf_round rm, sf_env *env)
{
    const unsigned sh = w - fb; /* bits below the last kept one */
    const uint64_t half = (uint64_t)1 << (sh - 1);
    const uint64_t emask = ((uint64_t)1 << eb) - 1;
    int n = sf_fast_clz64(z) - (63 - (int)w);
    int er = e0 - n; /* the biased exponent before rounding */
    uint64_t kept, rem, bits;

    if ((uint64_t)(int64_t)(er - 1) >= emask - 1)
        return SF_FAST_NONE;
    z <<= n;
    rem = z & ((half << 1) - 1);
    if (SF_FAST_LIKELY(rm == SF_RNE)) {
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
            return SF_FAST_NONE;
        }
        kept += inc;
    }
    /* kept in [2^fb, 2^(fb+1)]: adding it to the exponent field minus one
       puts the hidden bit (and a carry out) into the exponent */
    bits = ((uint64_t)(er - 1) << fb) + kept;
    if (bits >= emask << fb) /* overflow after rounding */
        return SF_FAST_NONE;
    /* one branch, on the flag alone: once it is set the branch is
       predictable, where rem != 0 is close to a coin toss for sums of
       operands of one binade */
    if (!(env->flags & SF_FLAG_INEXACT))
        env->flags |= (unsigned)(rem != 0) * SF_FLAG_INEXACT;
    return bits | ((uint64_t)sign << (fb + eb));
}

/* The significand of a normal A (FB fraction bits), hidden bit set. */
static inline uint64_t
sf_fast_sig(uint64_t a, unsigned fb)
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
sf_fast_add(unsigned fb, unsigned eb, unsigned w, uint64_t a, uint64_t b,
            bool sub, sf_round rm, sf_env *env)
{
    const unsigned s = w - 1 - fb;
    const uint64_t sbit = (uint64_t)1 << (fb + eb);
    uint64_t ub = b ^ (sub ? sbit : 0);
    uint64_t ma = a & (sbit - 1), mb = ub & (sbit - 1);
    uint64_t swap, x, y, ex, d, sx, sy, flip, z;

    if (!sf_fast_ok(env) || !sf_fast_normal(ma >> fb, eb)
        || !sf_fast_normal(mb >> fb, eb))
        return SF_FAST_NONE;
    /* x the operand of larger magnitude, y the other, without a branch */
    swap = ((a ^ ub) & ((uint64_t)0 - (ma < mb)));
    x = a ^ swap;
    y = ub ^ swap;
    ex = (x & (sbit - 1)) >> fb;
    d = ex - ((y & (sbit - 1)) >> fb);
    sx = sf_fast_sig(x, fb) << s;
    sy = ((sf_fast_sig(y, fb) << s) >> (d < 63 ? d : 63)) | (d > s);
    /* y subtracted (two's complement) when the signs differ */
    flip = (uint64_t)0 - (((x ^ y) & sbit) != 0);
    z = sx + ((sy ^ flip) - flip);
    if (z == 0) /* exact zero: its sign rule is generic */
        return SF_FAST_NONE;
    return sf_fast_round(fb, eb, w, (x & sbit) != 0, z, (int)ex + 1, rm, env);
}

/* a + b (b negated when SUB) in BF16, A and B the bits, through the
   host's binary32 adder on a sum it computes exactly.  A BF16 value is
   the binary32 value with the same top 16 bits and a zero bottom half.
   The subset here: both exponent fields in [16, 253].  With ex >= ey the
   fields of the operand of larger magnitude, x, and the other, y, and
   d = ex - ey:
   - d <= 15: both 8-bit significands fit one 24-bit window, so the
     binary32 sum is exact;
   - d >= 16: y is replaced by y' = +-2^(ex - 16 - 127) (y's sign).  Both
     |y| and |y'| are below 2^(ex - 127 - 9), a quarter of x's ulp, so
     every rounding boundary and midpoint of the result (x's ulp, or half
     of it when x is a power of two and the sum falls a binade) lies
     outside the open interval between x and x +- 2^(ex - 127 - 9): x + y
     and x + y' round alike in every mode, and both are inexact; x + y'
     spans 17 bits and is exact.
   The nonzero sums lie in [2^-118, 2^127): no tininess, no overflow, no
   subnormal operand, no exception, so the host's rounding mode, FTZ and
   DAZ settings and trap masks never enter.  The exact sum (bits s) is
   then rounded to BF16 by its bottom half, as sf_fast_narrow would: a
   zero sum (whose sign rule is generic) or a result that may not be a
   normal finite BF16 is refused. */
static inline uint64_t
sf_fast_add_bf16(uint64_t a64, uint64_t b64, bool sub, sf_round rm,
                 sf_env *env)
{
    union
    {
        uint32_t u;
        float f;
    } x, y, z;
    uint32_t a = (uint32_t)(a64 & 0xFFFF);
    uint32_t ub = (uint32_t)(b64 & 0xFFFF) ^ (sub ? 0x8000u : 0u);
    uint32_t ma = a & 0x7FFF, mb = ub & 0x7FFF, s, m, h, l, inc;

    /* both fields in [16, 253] */
    if (!sf_fast_ok(env) || ma - 0x0800 > 0x7EFF - 0x0800
        || mb - 0x0800 > 0x7EFF - 0x0800)
        return SF_FAST_NONE;
    /* a field 16 or more above the other's: the smaller operand becomes
       +-2^(ex - 16 - 127) */
    if (ma >= (mb & 0x7F80) + 0x0800)
        ub = (ub & 0x8000) | ((ma & 0x7F80) - 0x0800);
    else if (mb >= (ma & 0x7F80) + 0x0800)
        a = (a & 0x8000) | ((mb & 0x7F80) - 0x0800);
    x.u = a << 16;
    y.u = ub << 16;
    z.f = x.f + y.f;
    s = z.u;
    /* a normal sum that cannot round past the largest finite BF16 (a zero
       sum is refused here too) */
    m = s & 0x7FFFFFFF;
    if (m - 0x00800000
        > (rm == SF_RTZ || rm == SF_ROD ? 0x7F7FFFFFu : 0x7F7EFFFFu)
              - 0x00800000)
        return SF_FAST_NONE;
    h = s >> 16;
    l = s & 0xFFFF;
    switch (rm) {
    case SF_RNE:
        inc = (l + (h & 1)) > 0x8000;
        break;
    case SF_RNA:
        inc = l >= 0x8000;
        break;
    case SF_RUP:
        inc = l != 0 && !(h & 0x8000);
        break;
    case SF_RDN:
        inc = l != 0 && (h & 0x8000);
        break;
    case SF_ROD:
        inc = l != 0 && !(h & 1);
        break;
    case SF_RTZ:
        inc = 0;
        break;
    default: /* SF_SR: the generic path draws the random bits */
        return SF_FAST_NONE;
    }
    if (!(env->flags & SF_FLAG_INEXACT))
        env->flags |= (unsigned)(l != 0) * SF_FLAG_INEXACT;
    return h + inc;
}

/* a * b in the format (FB, EB) (2 FB + 1 <= W <= 62): the exact product
   of the significands has 2 FB + 1 or 2 FB + 2 bits; with its top at bit
   2 FB its exponent is ea + eb - bias. */
static inline uint64_t
sf_fast_mul(unsigned fb, unsigned eb, unsigned w, uint64_t a, uint64_t b,
            sf_round rm, sf_env *env)
{
    const int bias = (1 << (eb - 1)) - 1;
    const uint64_t sbit = (uint64_t)1 << (fb + eb);
    uint64_t ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;

    if (!sf_fast_ok(env) || !sf_fast_normal(ea, eb)
        || !sf_fast_normal(eb_, eb))
        return SF_FAST_NONE;
    return sf_fast_round(fb, eb, w, ((a ^ b) & sbit) != 0,
                         sf_fast_sig(a, fb) * sf_fast_sig(b, fb),
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
sf_fast_fma(unsigned fb, unsigned eb, uint64_t a, uint64_t b, uint64_t c,
            sf_round rm, sf_env *env)
{
    const int bias = (1 << (eb - 1)) - 1;
    const uint64_t sbit = (uint64_t)1 << (fb + eb);
    uint64_t ea = (a & (sbit - 1)) >> fb, eb_ = (b & (sbit - 1)) >> fb;
    uint64_t ec = (c & (sbit - 1)) >> fb;
    uint64_t p, q, z;
    int tp, tq, top, sp, sq;
    bool sign;

    if ((c & (sbit - 1)) == 0)
        /* c = +-0 and a b nonzero: a b + c is a b exactly, one rounding of
           the same value (bits and flags), as a chain from 0 starts */
        return sf_fast_mul(fb, eb, 62, a, b, rm, env);
    if (!sf_fast_ok(env) || !sf_fast_normal(ea, eb) || !sf_fast_normal(eb_, eb)
        || !sf_fast_normal(ec, eb))
        return SF_FAST_NONE;
    p = sf_fast_sig(a, fb) * sf_fast_sig(b, fb);
    q = sf_fast_sig(c, fb);
    /* biased exponents of the two tops */
    tp = (int)(ea + eb_) - bias + (63 - sf_fast_clz64(p)) - 2 * (int)fb;
    tq = (int)ec;
    top = tp > tq ? tp : tq;
    /* left shifts putting each top at bit 61 - (top - its top) */
    sp = 61 - (top - tp) - (63 - sf_fast_clz64(p));
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
        return SF_FAST_NONE; /* exact zero: its sign rule is generic */
    }
    return sf_fast_round(fb, eb, 62, sign, z, top + 1, rm, env);
}

/* The conversion of a normal value A of a format (FB_FROM, EB) to one
   with fewer fraction bits FB_TO and the same exponent field, as FP32 to
   BF16 (FB_FROM <= 30): the exponent carries over, the fraction is
   rounded. */
static inline uint64_t
sf_fast_narrow(unsigned fb_from, unsigned fb_to, unsigned eb, uint64_t a,
               sf_round rm, sf_env *env)
{
    const uint64_t sbit = (uint64_t)1 << (fb_from + eb);
    uint64_t e = (a & (sbit - 1)) >> fb_from;

    if (!sf_fast_ok(env) || !sf_fast_normal(e, eb))
        return SF_FAST_NONE;
    return sf_fast_round(fb_to, eb, 30, (a & sbit) != 0,
                         sf_fast_sig(a, fb_from), (int)e + 30 - (int)fb_from,
                         rm, env);
}

/*----------------------------------------------------------------------------
 * The typed operations: the fast subset inline, the library otherwise.
 *--------------------------------------------------------------------------*/
#define SF_FAST_DEFINE_TYPED(fmt, T, W, FB, EB, WIN)                          \
    static inline T sf_inline_##fmt##_add(T a, T b, sf_round rm, sf_env *env) \
    {                                                                         \
        uint64_t z = SF_FAST_ADD_##fmt(a.bits, b.bits, false, rm, env);       \
        T r;                                                                  \
        if (z == SF_FAST_NONE)                                                \
            return (sf_##fmt##_add)(a, b, rm, env);                           \
        r.bits = (W)z;                                                        \
        return r;                                                             \
    }                                                                         \
    static inline T sf_inline_##fmt##_sub(T a, T b, sf_round rm, sf_env *env) \
    {                                                                         \
        uint64_t z = SF_FAST_ADD_##fmt(a.bits, b.bits, true, rm, env);        \
        T r;                                                                  \
        if (z == SF_FAST_NONE)                                                \
            return (sf_##fmt##_sub)(a, b, rm, env);                           \
        r.bits = (W)z;                                                        \
        return r;                                                             \
    }                                                                         \
    static inline T sf_inline_##fmt##_mul(T a, T b, sf_round rm, sf_env *env) \
    {                                                                         \
        uint64_t z = sf_fast_mul(FB, EB, WIN, a.bits, b.bits, rm, env);       \
        T r;                                                                  \
        if (z == SF_FAST_NONE)                                                \
            return (sf_##fmt##_mul)(a, b, rm, env);                           \
        r.bits = (W)z;                                                        \
        return r;                                                             \
    }                                                                         \
    static inline T sf_inline_##fmt##_fma(T a, T b, T c, sf_round rm,         \
                                          sf_env *env)                        \
    {                                                                         \
        uint64_t z = sf_fast_fma(FB, EB, a.bits, b.bits, c.bits, rm, env);    \
        T r;                                                                  \
        if (z == SF_FAST_NONE)                                                \
            return (sf_##fmt##_fma)(a, b, c, rm, env);                        \
        r.bits = (W)z;                                                        \
        return r;                                                             \
    }

/* The addition of each format (BF16: through the binary32 adder). */
#define SF_FAST_ADD_bf16(a, b, sub, rm, env)                                  \
    sf_fast_add_bf16(a, b, sub, rm, env)
#define SF_FAST_ADD_f16(a, b, sub, rm, env)                                   \
    sf_fast_add(10, 5, 30, a, b, sub, rm, env)
#define SF_FAST_ADD_f32(a, b, sub, rm, env)                                   \
    sf_fast_add(23, 8, 62, a, b, sub, rm, env)

/* W, the window of the addition and the product: 30 where 2 FB + 3 <= 30,
   else 62 (as s_fast.h). */
SF_FAST_DEFINE_TYPED(bf16, sf_bf16, uint16_t, 7, 8, 30)
SF_FAST_DEFINE_TYPED(f16, sf_f16, uint16_t, 10, 5, 30)
SF_FAST_DEFINE_TYPED(f32, sf_f32, uint32_t, 23, 8, 62)

static inline sf_bf16
sf_inline_f32_to_bf16(sf_f32 a, sf_round rm, sf_env *env)
{
    uint64_t z = sf_fast_narrow(23, 7, 8, a.bits, rm, env);
    sf_bf16 r;

    if (z == SF_FAST_NONE)
        return (sf_f32_to_bf16)(a, rm, env);
    r.bits = (uint16_t)z;
    return r;
}

#ifndef SF_NO_INLINE
#define sf_bf16_add(a, b, rm, env) sf_inline_bf16_add(a, b, rm, env)
#define sf_bf16_sub(a, b, rm, env) sf_inline_bf16_sub(a, b, rm, env)
#define sf_bf16_mul(a, b, rm, env) sf_inline_bf16_mul(a, b, rm, env)
#define sf_bf16_fma(a, b, c, rm, env) sf_inline_bf16_fma(a, b, c, rm, env)
#define sf_f16_add(a, b, rm, env) sf_inline_f16_add(a, b, rm, env)
#define sf_f16_sub(a, b, rm, env) sf_inline_f16_sub(a, b, rm, env)
#define sf_f16_mul(a, b, rm, env) sf_inline_f16_mul(a, b, rm, env)
#define sf_f16_fma(a, b, c, rm, env) sf_inline_f16_fma(a, b, c, rm, env)
#define sf_f32_add(a, b, rm, env) sf_inline_f32_add(a, b, rm, env)
#define sf_f32_sub(a, b, rm, env) sf_inline_f32_sub(a, b, rm, env)
#define sf_f32_mul(a, b, rm, env) sf_inline_f32_mul(a, b, rm, env)
#define sf_f32_fma(a, b, c, rm, env) sf_inline_f32_fma(a, b, c, rm, env)
#define sf_f32_to_bf16(a, rm, env) sf_inline_f32_to_bf16(a, rm, env)
#endif

#endif
