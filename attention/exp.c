/* exp.c -- the exp models of the reference attention: correctly rounded
   FP32 exp and exp2, the C library's, a table model of exp2 and a
   caller's function (method and error bounds: doc/exp-models.md) */
#include <config.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "attention/fa_local.h"

/* The error bounds below assume that every double operation is rounded
   once to double, to nearest (the default floating-point environment). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "exp.c needs double expressions evaluated in double (FLT_EVAL_METHOD 0)"
#endif

#define F32_INF 0x7F800000u
#define F32_QUIET 0x00400000u
#define F32_DEFAULT_NAN 0x7FC00000u
#define F32_MAG 0x7FFFFFFFu
#define F32_SIGN 0x80000000u

/*----------------------------------------------------------------------------
 * Host values and bits.
 *--------------------------------------------------------------------------*/
/* 2^E as a double, -1022 <= E <= 1023. */
static double
pow2(int e)
{
    return sf_host_double((uint64_t)(e + 1023) << 52);
}

/*----------------------------------------------------------------------------
 * Double-double arithmetic (the second evaluation only).  A dd value is
 * hi + lo with |lo| <= ulp(hi)/2 after fast_two_sum.
 *--------------------------------------------------------------------------*/
typedef struct
{
    double hi, lo;
} dd;

/* a + b exactly, for any a and b (Knuth). */
static dd
two_sum(double a, double b)
{
    dd r;
    double bb;

    r.hi = a + b;
    bb = r.hi - a;
    r.lo = (a - (r.hi - bb)) + (b - bb);
    return r;
}

/* a + b exactly, for |a| >= |b| or a = 0 (Dekker). */
static dd
fast_two_sum(double a, double b)
{
    dd r;

    r.hi = a + b;
    r.lo = b - (r.hi - a);
    return r;
}

/* a * b exactly (fma rounds once). */
static dd
two_prod(double a, double b)
{
    dd r;

    r.hi = a * b;
    r.lo = fma(a, b, -r.hi);
    return r;
}

static dd
dd_add(dd a, dd b)
{
    dd s = two_sum(a.hi, b.hi);

    return fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}

static dd
dd_mul(dd a, dd b)
{
    dd p = two_prod(a.hi, b.hi);

    return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

static dd
dd_mul_d(dd a, double b)
{
    dd p = two_prod(a.hi, b);

    return fast_two_sum(p.hi, p.lo + a.lo * b);
}

/*----------------------------------------------------------------------------
 * Constants (computed with MPFR at 400 bits, each rounded to nearest).
 *--------------------------------------------------------------------------*/

/* T[j] = 2^(j/64) = hi + lo, |hi + lo - 2^(j/64)| <= 2^-106 2^(j/64);
   hi alone is 2^(j/64) rounded to double. */
static const dd exp2_table[64] = {
    {0x1p+0, 0x0p+0},
    {0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56},
    {0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55},
    {0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57},
    {0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54},
    {0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59},
    {0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54},
    {0x1.1429aaea92dep+0, -0x1.32fbf9af1369ep-54},
    {0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55},
    {0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55},
    {0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54},
    {0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55},
    {0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54},
    {0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55},
    {0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55},
    {0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54},
    {0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55},
    {0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54},
    {0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54},
    {0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56},
    {0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55},
    {0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58},
    {0x1.44e086061892dp+0, 0x1.89b7a04ef80dp-59},
    {0x1.486a2b5c13cdp+0, 0x1.3c1a3b69062fp-56},
    {0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56},
    {0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54},
    {0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55},
    {0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54},
    {0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54},
    {0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54},
    {0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54},
    {0x1.6623882552225p+0, -0x1.bb60987591c34p-54},
    {0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54},
    {0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57},
    {0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55},
    {0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54},
    {0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55},
    {0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56},
    {0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54},
    {0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54},
    {0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54},
    {0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55},
    {0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57},
    {0x1.97d829fde4e5p+0, -0x1.d185b7c1b85d1p-54},
    {0x1.9c49182a3f09p+0, 0x1.c7c46b071f2bep-56},
    {0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54},
    {0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54},
    {0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54},
    {0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54},
    {0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57},
    {0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56},
    {0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55},
    {0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55},
    {0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54},
    {0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56},
    {0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54},
    {0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55},
    {0x1.da9e603db3285p+0, 0x1.c2300696db532p-54},
    {0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54},
    {0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55},
    {0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54},
    {0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6bp-54},
    {0x1.f50765b6e454p+0, 0x1.9d3e12dd8a18bp-54},
    {0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55},
};

/* ln 2 rounded to double, and split as C1 + C2 + C3 with C1 and C2 of 29
   significant bits (so that r C1 and r C2 are exact for r of 24 bits);
   |C1 + C2 + C3 - ln 2| <= 2^-120. */
#define LN2 0x1.62e42fefa39efp-1
#define LN2_C1 0x1.62e42ffp-1
#define LN2_C2 -0x1.718432ap-35
#define LN2_C3 -0x1.b0e2633fe0685p-67

/* L = ln(2)/64 split as L1 + L2 + L3, L1 of 29 and L2 of 32 significant
   bits (k L1 and k L2 are exact for |k| < 2^14), |L1 + L2 + L3 - L| <=
   2^-128; L2D is L - L1 rounded to double; INV_L is 1/L rounded. */
#define INV_L 0x1.71547652b82fep+6
#define L_1 0x1.62e42ffp-7
#define L_2 -0x1.718432a2p-41
#define L_3 0x1.3c7673007e5edp-75
#define L_2D -0x1.718432a1b0e26p-41

/* 1/n! rounded to double (and the tails of 1/3!, 1/4!, 1/5!). */
#define INV3 0x1.5555555555555p-3
#define INV3_LO 0x1.5555555555555p-57
#define INV4 0x1.5555555555555p-5
#define INV4_LO 0x1.5555555555555p-59
#define INV5 0x1.1111111111111p-7
#define INV5_LO 0x1.1111111111111p-63
#define INV6 0x1.6c16c16c16c17p-10
#define INV7 0x1.a01a01a01a01ap-13
#define INV8 0x1.a01a01a01a01ap-16
#define INV9 0x1.71de3a556c734p-19
#define INV10 0x1.27e4fb7789f5cp-22
#define INV11 0x1.ae64567f544e4p-26

/* Adds 1.5 * 2^52 and subtracts it again: rounds |t| < 2^51 to the
   nearest integer. */
#define ROUND_SHIFT 0x1.8p52

/* The thresholds of the rounding tests of the two evaluations, above
   their relative error bounds (doc/exp-models.md derives 2.35 * 2^-53 and
   2^-101). */
#define EPS_FAST 0x1p-51
#define EPS_DD 0x1p-90

/*----------------------------------------------------------------------------
 * Rounding to binary32.
 *--------------------------------------------------------------------------*/

/* Rounds a positive value V, known as YH + YL with |V - (YH + YL)| <= EPS
   YH (YH a positive normal double, |YL| <= ulp(YH)), to binary32 with
   roundTiesToEven, subnormal results rounded once, overflow to +Inf.
   The rounding is that of YH + YL when no midpoint between binary32
   neighbours lies within EPS YH of it; a midpoint hit exactly with EPS = 0
   goes to the even neighbour.  *DECIDED is false when a midpoint lies
   that close with EPS > 0 (the result is then that of YH + YL). */
static uint32_t
round_to_f32(double yh, double yl, double eps, bool *decided)
{
    uint64_t b = sf_host_double_bits(yh);
    int e = (int)(b >> 52) - 1023; /* yh in [2^e, 2^(e + 1)) */
    uint64_t sig = (b & 0xFFFFFFFFFFFFFu) | ((uint64_t)1 << 52);
    int drop, ue;
    uint64_t kept;
    double mid, d, bound;
    bool up;

    *decided = true;
    /* V >= 2^128 (1 - EPS) lies above the overflow threshold
       2^128 (1 - 2^-25); V < 2^-151 (1 + EPS) below 2^-150, the midpoint
       between +0 and 2^-149. */
    if (e >= 128)
        return F32_INF;
    if (e < -152)
        return 0;
    /* The binary32 ulp is 2^ue: 2^(e - 23), or 2^-149 below 2^-126; drop
       is the number of bits of sig below it (29 .. 55). */
    drop = e >= -126 ? 29 : 29 + (-126 - e);
    ue = e - 52 + drop;
    kept = drop < 53 ? sig >> drop : 0;
    /* mid = (2 kept + 1) 2^(ue - 1), the midpoint above kept 2^ue, is a
       double; yh - mid is exact for e >= -151 (both are multiples of
       2^(e - 52) and differ by less than 2^(e + 1)), and has the right
       sign for e = -152. */
    mid = (double)(2 * kept + 1) * pow2(ue - 1);
    d = (yh - mid) + yl;
    bound = eps * yh;
    if (d > bound)
        up = true;
    else if (d < -bound)
        up = false;
    else if (eps == 0 && d == 0)
        up = (kept & 1) != 0;
    else {
        *decided = false;
        up = d >= 0;
    }
    kept += up;
    /* kept in [2^23, 2^24] above 2^-126 (a carry into the exponent field,
       up to +Inf, is the right encoding), in [0, 2^23] below. */
    if (e >= -126)
        return ((uint32_t)(e + 126) << 23) + (uint32_t)kept;
    return (uint32_t)kept;
}

/*----------------------------------------------------------------------------
 * Correctly rounded exp and exp2.
 *
 * exp2: x = m + j/64 + r with k = 64 m + j = round(64 x), |r| <= 1/128,
 * r exact (24 significant bits at most); exp: x = k L + r with
 * k = round(x / L), L = ln(2)/64, |r| <= L/2 (1 + 2^-38).  Then
 * result = 2^m T[j] e^z with z = r ln 2 or z = r.  The first evaluation
 * uses T[j].hi and a degree-5 Taylor polynomial in double; when it cannot
 * decide the rounding, the second evaluates the same product in
 * double-double with a degree-11 polynomial.
 *--------------------------------------------------------------------------*/

/* e^s by its Taylor polynomial of degree 11, in double-double, for
   |s| <= 2^-7.5. */
static dd
dd_exp_poly(dd s)
{
    const dd one = {1.0, 0.0}, half = {0.5, 0.0};
    const dd c3 = {INV3, INV3_LO}, c4 = {INV4, INV4_LO};
    const dd c5 = {INV5, INV5_LO};
    double t;
    dd a;

    /* The terms of degree 6 to 11 are below 2^-54 and need double only. */
    t = INV10 + s.hi * INV11;
    t = INV9 + s.hi * t;
    t = INV8 + s.hi * t;
    t = INV7 + s.hi * t;
    t = INV6 + s.hi * t;
    a = dd_add(c5, dd_mul_d(s, t));
    a = dd_add(c4, dd_mul(s, a));
    a = dd_add(c3, dd_mul(s, a));
    a = dd_add(half, dd_mul(s, a));
    a = dd_add(one, dd_mul(s, a));
    return dd_add(one, dd_mul(s, a));
}

/* The second evaluation, from the reduced argument of exp_cr: R (exp2:
   x - k/64, exact; exp: x - k L1, exact), KD = k = 64 M + J.  *OK as
   round_to_f32 sets it. */
static uint32_t
second_evaluation(bool base2, double r, double kd, int j, int m, bool *ok)
{
    dd s, v;
    double scale = pow2(m);

    if (base2) {
        /* s = r ln 2: r C1 and r C2 exact */
        dd s1 = two_sum(r * LN2_C1, r * LN2_C2);
        s = fast_two_sum(s1.hi, s1.lo + r * LN2_C3);
    } else {
        /* s = (x - k L1) - k L2 - k L3: the first two terms exact */
        dd s1 = two_sum(r, -kd * L_2);
        s = fast_two_sum(s1.hi, s1.lo - kd * L_3);
    }
    v = dd_mul(exp2_table[j], dd_exp_poly(s));
    return round_to_f32(v.hi * scale, v.lo * scale, EPS_DD, ok);
}

/* Levels returned through *LEVEL: see fa_exp_cr_level.  With SECOND_ONLY
   the first evaluation is skipped (fa_exp_cr_second).  Inline in the
   loop of fa_exp_eval_n, where the exps of a row overlap. */
#ifdef __GNUC__
__attribute__((always_inline))
#endif
static inline uint32_t
exp_cr(bool base2, uint32_t x, bool second_only, int *level)
{
    uint32_t mag = x & F32_MAG;
    bool neg = (x & F32_SIGN) != 0;
    double xd, t, kd, r, z;
    int k, m, j;
    uint32_t res;
    bool ok;

    *level = 0;
    if (mag > F32_INF)
        return x | F32_QUIET;
    if (mag == F32_INF)
        return neg ? 0 : F32_INF;
    /* Overflow and underflow bounds: 2^x >= 2^128 for x >= 128, and
       2^x <= 2^-150 (a tie between +0 and 2^-149, to +0) for x <= -150;
       e^89 > 2^128 and e^-104 < 2^-150. */
    if (base2) {
        if (!neg && mag >= 0x43000000u) /* 128 */
            return F32_INF;
        if (neg && mag >= 0x43160000u) /* 150 */
            return 0;
    } else {
        if (!neg && mag >= 0x42B20000u) /* 89 */
            return F32_INF;
        if (neg && mag >= 0x42D00000u) /* 104 */
            return 0;
    }

    xd = (double)sf_host_float(x);
    if (base2) {
        t = xd * 64.0; /* exact */
        kd = (t + ROUND_SHIFT) - ROUND_SHIFT;
        r = (t - kd) * 0x1p-6; /* exact: |r| <= 2^-7 */
        z = r * LN2;
    } else {
        t = xd * INV_L;
        kd = (t + ROUND_SHIFT) - ROUND_SHIFT;
        r = xd - kd * L_1; /* exact (see doc/exp-models.md) */
        z = r - kd * L_2D;
    }
    k = (int)kd; /* -9604 <= k <= 8218 */
    j = (int)((unsigned)k & 63u);
    m = (k - j) / 64; /* exact: k = 64 m + j */

    /* First evaluation: y = 2^m T[j].hi (1 + q),
       q = z + z^2/2 + ... + z^5/5! rounded; |y - v| < 2.35 * 2^-53 v. */
    if (!second_only) {
        double q = z * (1.0 + z * (0.5 + z * (INV3 + z * (INV4 + z * INV5))));
        double th = exp2_table[j].hi;
        double y = (th + th * q) * pow2(m);
        uint64_t b = sf_host_double_bits(y), low = b & 0x1FFFFFFFu;

        *level = 1;
        /* The common case with integer operations: a normal binary32
           result (exponent field of y in 897 .. 1150) whose 29 dropped
           bits are more than 8 units of y's last place from the midpoint
           2^28; then |y - M| > 2^(e - 49) > 4 * 2^-53 y, so round_to_f32
           would decide the same way. */
        if ((b >> 52) - 897 <= 253 && low + 8 - 0x10000000u > 16)
            return (uint32_t)((b >> 29) - ((uint64_t)896 << 23))
                   + (low > 0x10000000u);
        res = round_to_f32(y, 0.0, EPS_FAST, &ok);
        if (ok)
            return res;
    }

    /* Second evaluation, in double-double; relative error < 2^-101. */
    res = second_evaluation(base2, r, kd, j, m, &ok);
    *level = ok ? 2 : 3;
    return res;
}

uint32_t
fa_expf_cr(uint32_t x)
{
    int level;

    return exp_cr(false, x, false, &level);
}

uint32_t
fa_exp2f_cr(uint32_t x)
{
    int level;

    return exp_cr(true, x, false, &level);
}

int
fa_exp_cr_level(bool base2, uint32_t x)
{
    int level;

    (void)exp_cr(base2, x, false, &level);
    return level;
}

uint32_t
fa_exp_cr_second(bool base2, uint32_t x)
{
    int level;

    return exp_cr(base2, x, true, &level);
}

/*----------------------------------------------------------------------------
 * The table model of exp2.
 *--------------------------------------------------------------------------*/

/* V (binary32 bits) times 2^N, -400 <= N <= 400, rounded once to binary32
   (roundTiesToEven); with FTZ a result below 2^-126 in magnitude is a
   zero of V's sign.  NaN entries are quieted, zeros and infinities kept. */
static uint32_t
scale_f32(uint32_t v, int n, bool ftz)
{
    uint32_t mag = v & F32_MAG, sign = v & F32_SIGN;
    double y;
    bool ok;

    if (mag > F32_INF)
        return v | F32_QUIET;
    if (mag == F32_INF || mag == 0)
        return v;
    /* exact: |y| in [2^-549, 2^529), a normal double */
    y = (double)sf_host_float(mag) * pow2(n);
    if (ftz && y < 0x1p-126)
        return sign;
    return sign | round_to_f32(y, 0.0, 0.0, &ok);
}

/* exp2 of the binary32 X under table T (see attention.h):
   q = X cut toward zero to a multiple of 2^-fb, n = floor(q),
   f = q - n, result = values[f 2^fb] 2^(n + 1). */
static uint32_t table_exp2_rule(const fa_exp2_table *t, uint32_t x);

static uint32_t
table_exp2(const fa_exp2_table *t, uint32_t x)
{
    /* square_below: x < -126 (a normal x, so halving it is exact) gives
       the model at x/2 squared, the square (exact in double) rounded once
       to binary32 */
    if (t->square_below && !t->ftz && (x & F32_SIGN) &&
        (x & F32_MAG) > 0x42FC0000u && (x & F32_MAG) < F32_INF) {
        uint32_t h = table_exp2_rule(t, x - 0x00800000u);
        double y = (double)sf_host_float(h);
        bool ok;
        if ((h & F32_MAG) > F32_INF)
            return h | F32_QUIET;
        return round_to_f32(y * y, 0.0, 0.0, &ok);
    }
    return table_exp2_rule(t, x);
}

static uint32_t
table_exp2_rule(const fa_exp2_table *t, uint32_t x)
{
    unsigned fb = t->frac_bits;
    uint32_t mag = x & F32_MAG;
    bool neg = (x & F32_SIGN) != 0;
    uint64_t idx = 0;
    int64_t n;
    int biased = (int)(mag >> 23);

    if (mag > F32_INF)
        return x | F32_QUIET;
    if (mag == F32_INF)
        return neg ? 0 : F32_INF;
    if (biased >= 127 + 32) {
        /* |x| >= 2^32: an integer, and 2^(n + 1) scales every finite
           nonzero entry beyond the binary32 range (clamped below) */
        n = neg ? -100000 : 100000;
    } else {
        uint64_t sig = mag & 0x7FFFFFu;
        int sh;
        uint64_t a, ip, fp;

        if (biased != 0)
            sig |= 0x800000u;
        else
            biased = 1;
        /* |x| 2^fb = sig 2^sh; a = trunc(|x| 2^fb) < 2^57 */
        sh = biased - 150 + (int)fb;
        if (sh >= 0)
            a = sig << sh;
        else
            a = -sh < 64 ? sig >> -sh : 0;
        ip = a >> fb;
        fp = a & (((uint64_t)1 << fb) - 1);
        if (!neg) {
            n = (int64_t)ip;
            idx = fp;
            if (t->pos_values != NULL && a != 0)
                return scale_f32(t->pos_values[idx],
                                 ip > 400 ? 400 : (int)ip, t->ftz);
        } else if (fp == 0) {
            n = -(int64_t)ip;
        } else {
            n = -(int64_t)ip - 1;
            idx = ((uint64_t)1 << fb) - fp;
        }
    }
    /* Entries lie in [2^-149, 2^128): a scale beyond +-400 saturates. */
    n += 1;
    if (n > 400)
        n = 400;
    if (n < -400)
        n = -400;
    return scale_f32(t->values[idx], (int)n, t->ftz);
}

/* x log2(e) with log2(e) rounded to binary32 (0x3FB8AA3B): the product is
   exact in double and rounded once to binary32. */
static uint32_t
mul_log2e(uint32_t x)
{
    uint32_t mag = x & F32_MAG, sign = x & F32_SIGN;
    double p;
    bool ok;

    if (mag >= F32_INF || mag == 0)
        return x; /* NaN (quieted later), Inf and zeros are kept */
    p = (double)sf_host_float(mag) * (double)sf_host_float(0x3FB8AA3Bu);
    return sign | round_to_f32(p, 0.0, 0.0, &ok);
}

int
fa_exp2_table_fill(uint32_t *values, unsigned frac_bits,
                   uint32_t (*fn)(uint32_t x))
{
    uint64_t i, n;

    if (values == NULL || fn == NULL || frac_bits > FA_EXP2_TABLE_MAX_BITS)
        return -1;
    n = (uint64_t)1 << frac_bits;
    for (i = 0; i < n; i++) {
        /* -1 + i 2^-fb = -(2^fb - i) 2^-fb: at most 24 significant bits,
           so exact in binary32 */
        double g = -(double)(n - i) * pow2(-(int)frac_bits);
        values[i] = fn(sf_host_float_bits((float)g));
    }
    return 0;
}

/*----------------------------------------------------------------------------
 * Models.
 *--------------------------------------------------------------------------*/
static const fa_exp_model model_cr = {"cr", FA_EXP_CR, NULL, NULL, NULL};
static const fa_exp_model model_libm = {"libm", FA_EXP_LIBM, NULL, NULL, NULL};

const fa_exp_model *
fa_exp_model_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    if (strcmp(name, "cr") == 0)
        return &model_cr;
    if (strcmp(name, "libm") == 0)
        return &model_libm;
    return NULL;
}

const char *
fa_exp_model_check(const fa_exp_model *m)
{
    if (m == NULL)
        return NULL; /* the default, "cr" */
    switch (m->kind) {
    case FA_EXP_CR:
    case FA_EXP_LIBM:
        return NULL;
    case FA_EXP_TABLE:
        if (m->table == NULL)
            return "exp model: a table model needs a table";
        if (m->table->values == NULL)
            return "exp model: the table has no values";
        if (m->table->frac_bits > FA_EXP2_TABLE_MAX_BITS)
            return "exp model: table frac_bits above "
                   "FA_EXP2_TABLE_MAX_BITS";
        return NULL;
    case FA_EXP_FN:
        if (m->fn == NULL)
            return "exp model: a function model needs a function";
        return NULL;
    }
    return "exp model: unknown kind";
}

void
fa_exp_eval_n(const fa_exp_model *m, bool base2, uint32_t *x, size_t n)
{
    int level;

    if (m == NULL || m->kind == FA_EXP_CR) {
        /* the model dispatched once; two loops so that BASE2 is a
           constant in each inlined exp_cr */
        if (base2)
            for (size_t i = 0; i < n; i++)
                x[i] = exp_cr(true, x[i], false, &level);
        else
            for (size_t i = 0; i < n; i++)
                x[i] = exp_cr(false, x[i], false, &level);
        return;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = fa_exp_eval(m, base2, x[i]);
}

uint32_t
fa_exp_eval(const fa_exp_model *m, bool base2, uint32_t x)
{
    if (m == NULL)
        return base2 ? fa_exp2f_cr(x) : fa_expf_cr(x);
    if (fa_exp_model_check(m) != NULL)
        return F32_DEFAULT_NAN;
    switch (m->kind) {
    case FA_EXP_CR:
        return base2 ? fa_exp2f_cr(x) : fa_expf_cr(x);
    case FA_EXP_LIBM:
        return sf_host_float_bits(base2 ? exp2f(sf_host_float(x))
                                        : expf(sf_host_float(x)));
    case FA_EXP_TABLE:
        return table_exp2(m->table, base2 ? x : mul_log2e(x));
    case FA_EXP_FN:
        return m->fn(m->user, base2, x);
    }
    return F32_DEFAULT_NAN;
}
