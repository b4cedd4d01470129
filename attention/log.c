/* log -- correctly rounded FP32 natural logarithm for the LSE of the
   reference attention */
#include <config.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "attention/attention.h"

/* The bounds below assume double and long double operations rounded
   once to their own format, to nearest (the default environment). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "log.c needs double expressions evaluated in double (FLT_EVAL_METHOD 0)"
#endif

#define F32_INF 0x7F800000u
#define F32_NEG_INF 0xFF800000u
#define F32_SIGN 0x80000000u
#define F32_MAG 0x7FFFFFFFu
#define F32_QUIET 0x00400000u
#define F32_DEFAULT_NAN 0x7FC00000u

static float
f32_of_bits(uint32_t x)
{
    float f;

    memcpy(&f, &x, sizeof f);
    return f;
}

static uint32_t
bits_of_f32(float f)
{
    uint32_t x;

    memcpy(&x, &f, sizeof x);
    return x;
}

/* Whether every real within MARGIN of Y rounds (to FP32, nearest even) to
   the same float as Y: the float F nearest Y is at least MARGIN away from
   the midpoints to its two neighbours.  F is finite and normal here
   (0.0 < |log x| < 104); the midpoints of floats have 25 significant bits
   and are exact in double and long double. */
static int
decided(long double y, long double margin, float *out)
{
    float f = (float)y;
    uint32_t b = bits_of_f32(f);
    /* neighbours in magnitude order: b - 1 and b + 1 (same sign) */
    long double lo = ((long double)f + (long double)f32_of_bits(b - 1)) / 2;
    long double hi = ((long double)f + (long double)f32_of_bits(b + 1)) / 2;
    long double dlo = y - lo, dhi = hi - y;

    if (dlo < 0)
        dlo = -dlo;
    if (dhi < 0)
        dhi = -dhi;
    *out = f;
    return dlo > margin && dhi > margin;
}

/* 1: decided from the double log, 2: from the long double log, 3: by
   neither (the long double value is rounded then), 0: a special input. */
static int
log_eval(uint32_t x, uint32_t *res)
{
    float xf = f32_of_bits(x), f;
    double y;
    long double yl;

    if ((x & F32_MAG) > F32_INF) { /* NaN: quieted */
        *res = x | F32_QUIET;
        return 0;
    }
    if ((x & F32_MAG) == 0) { /* log(+-0) = -Inf */
        *res = F32_NEG_INF;
        return 0;
    }
    if (x & F32_SIGN) { /* x < 0, -Inf */
        *res = F32_DEFAULT_NAN;
        return 0;
    }
    if (x == F32_INF || x == 0x3F800000u) { /* log(+Inf), log(1) = +0 */
        *res = x == F32_INF ? F32_INF : 0;
        return 0;
    }
    /* glibc's log is within 0.52 ulp of double; a margin of 2 ulps (of
       the binade of y, 2^-51 |y| or more) covers it. */
    y = log((double)xf);
    if (decided((long double)y, ldexpl(fabsl((long double)y), -51), &f)) {
        *res = bits_of_f32(f);
        return 1;
    }
    /* The same with the long double log (x87: 64 bits, about 1 ulp), a
       margin of 2^-61 |y|. */
    yl = logl((long double)xf);
    if (decided(yl, ldexpl(fabsl(yl), LDBL_MANT_DIG > 53 ? -61 : -51), &f)) {
        *res = bits_of_f32(f);
        return 2;
    }
    *res = bits_of_f32((float)yl);
    return 3;
}

uint32_t
fa_logf_cr(uint32_t x)
{
    uint32_t r;

    (void)log_eval(x, &r);
    return r;
}

int
fa_logf_cr_level(uint32_t x)
{
    uint32_t r;

    return log_eval(x, &r);
}
