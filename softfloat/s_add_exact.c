/* s_add_exact -- exact sum of two signed dyadics, far bits kept as a tail */
#include "internal.h"

static int
bit_len(s_u128 a)
{
    return a == 0 ? 0 : 128 - s_clz128(a);
}

bool
s_add_exact(bool sx, s_u128 x, int32_t ex, bool sy, s_u128 y, int32_t ey,
            bool *sign, int32_t *exp, s_u128 *sig, bool *tail)
{
    int64_t tx, ty, base;
    bool lost = false;

    if (SF_LIKELY(((x | y) >> 53) == 0)) {
        /* operands of at most 53 bits less than 71 binades apart: align
           to the lower exponent, exactly, below 2^125 */
        int64_t d = (int64_t)ex - ey;
        if (d >= 0 && d <= 70) {
            x <<= d;
            ex = ey;
        } else if (d < 0 && d >= -70) {
            y <<= -d;
            ey = ex;
        }
        if (ex == ey) {
            *exp = ex;
            *tail = false;
            if (sx == sy) {
                *sign = sx;
                *sig = x + y;
                return true;
            }
            if (x == y)
                return false;
            *sign = x > y ? sx : sy;
            *sig = x > y ? x - y : y - x;
            return true;
        }
    }
    tx = (int64_t)ex + bit_len(x);
    ty = (int64_t)ey + bit_len(y);
    base = (tx > ty ? tx : ty) - 125;

    /* Align both to 2^base: the larger top lands at bit 124, so the sum
       stays below 2^126.  An operand whose low bits fall below 2^base has
       its top at least 61 bits below the other's (widths are <= 64), so
       it is the smaller one and what it loses becomes the tail. */
    if (ex < base) {
        int d = (int)(base - ex > 200 ? 200 : base - ex);
        lost = d >= 128 ? x != 0 : (x & (((s_u128)1 << d) - 1)) != 0;
        x = d >= 128 ? 0 : x >> d;
    } else {
        x <<= (ex - base);
    }
    if (ey < base) {
        int d = (int)(base - ey > 200 ? 200 : base - ey);
        lost = d >= 128 ? y != 0 : (y & (((s_u128)1 << d) - 1)) != 0;
        y = d >= 128 ? 0 : y >> d;
    } else {
        y <<= (ey - base);
    }
    *exp = (int32_t)base;
    *tail = lost;
    if (sx == sy) {
        *sign = sx;
        *sig = x + y;
        return true;
    }
    if (x == y && !lost)
        return false;
    /* |x| != |y|; the truncated operand (if any) is the smaller one */
    if (x > y) {
        *sign = sx;
        *sig = x - y - (lost ? 1 : 0); /* x - (y + t) = (x - y - 1) + (1-t) */
    } else {
        *sign = sy;
        *sig = y - x - (lost ? 1 : 0);
    }
    return true;
}

uint64_t
s_pack_exact(const sf_format *f, bool sign, int32_t exp, uint64_t sig)
{
    int32_t fb = (int32_t)f->frac_bits;
    int top = 63 - s_clz64(sig);
    int32_t e = exp + top; /* |x| in [2^e, 2^(e+1)) */

    if (e < f->emin) /* subnormal: frac = x / 2^(emin - fb), exp >= that */
        return s_pack(f, sign, 0, sig << (exp - (f->emin - fb)));
    if (top > fb)
        sig >>= top - fb;
    else
        sig <<= fb - top;
    return s_pack(f, sign, (uint64_t)(e + f->bias),
                  sig - ((uint64_t)1 << fb));
}
