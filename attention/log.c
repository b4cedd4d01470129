/* log -- the FP32 natural logarithm for the LSE of the reference
   attention: correctly rounded, or the H200's lg2.approx as a table model
   (lg2-sm90) with CUDA's __logf on top */
#include <config.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "attention/fa_local.h"

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

/* Whether every real within MARGIN of Y rounds (to FP32, nearest even) to
   the same float as Y: the float F nearest Y is at least MARGIN away from
   the midpoints to its two neighbours.  F is finite and normal here
   (0.0 < |log x| < 104); the midpoints of floats have 25 significant bits
   and are exact in double and long double. */
static int
decided(long double y, long double margin, float *out)
{
    float f = (float)y;
    uint32_t b = sf_host_float_bits(f);
    /* neighbours in magnitude order: b - 1 and b + 1 (same sign) */
    long double lo = ((long double)f + (long double)sf_host_float(b - 1)) / 2;
    long double hi = ((long double)f + (long double)sf_host_float(b + 1)) / 2;
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
    float xf = sf_host_float(x), f;
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
        *res = sf_host_float_bits(f);
        return 1;
    }
    /* The same with the long double log (x87: 64 bits, about 1 ulp), a
       margin of 2^-61 |y|. */
    yl = logl((long double)xf);
    if (decided(yl, ldexpl(fabsl(yl), LDBL_MANT_DIG > 53 ? -61 : -51), &f)) {
        *res = sf_host_float_bits(f);
        return 2;
    }
    *res = sf_host_float_bits((float)yl);
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

/*----------------------------------------------------------------------------
 * lg2.approx as a table model (attention.h).
 *--------------------------------------------------------------------------*/
#define LG2_NAN 0x7FFFFFFFu

/* The set bits of X. */
static inline unsigned
popcount64(uint64_t x)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333))
        + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
    return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

/* Entry W of the corrections' index, from the corrections from *K on
   (ascending): which of 64 W .. 64 W + 63 are corrected, *K advanced
   past them (*K on entry is the count below 64 W). */
static uint64_t
index_bits(const fa_lg2_table *t, size_t w, size_t *k)
{
    uint64_t bits = 0;

    while (*k < t->ncorr && (t->corr_i[*k] >> 6) == w)
        bits |= (uint64_t)1 << (t->corr_i[(*k)++] & 63u);
    return bits;
}

/* Where I is among T's corrections: 1 and *K set, or 0. */
static int
lg2_find(const fa_lg2_table *t, uint32_t i, size_t *k)
{
    size_t lo = 0, hi = t->ncorr;

    if (t->index != NULL) {
        /* one entry; a malformed, unchecked index cannot read outside
           the corrections */
        const fa_lg2_index *x = &t->index[i >> 6];
        uint64_t bit = (uint64_t)1 << (i & 63u);
        if (!(x->bits & bit))
            return 0;
        *k = (size_t)x->below + popcount64(x->bits & (bit - 1));
        return *k < t->ncorr;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->corr_i[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    *k = lo;
    return lo < t->ncorr && t->corr_i[lo] == i;
}

/* G(I) in units of 2^-FA_LG2_GBITS, truncated toward zero; *STICKY set
   when bits were dropped (a base entry below 2^-30 in magnitude). */
static int64_t
lg2_g(const fa_lg2_table *t, uint32_t i, bool *sticky)
{
    uint32_t b, fe;
    uint64_t sig;
    int sh;
    int64_t g;
    size_t k;

    *sticky = false;
    if (lg2_find(t, i, &k)) {
        /* within (-1, 1) in a checked table (fa_lg2_table_check); kept
           there for one that was not, so that E + G cannot overflow */
        const int64_t lim = ((int64_t)1 << FA_LG2_GBITS) - 1;
        g = t->corr_g[k];
        return g > lim ? lim : g < -lim ? -lim : g;
    }
    b = t->base[i];
    fe = (b >> 23) & 0xFFu;
    if (fe == 0) /* zero (subnormal entries do not occur) */
        return 0;
    sig = (uint64_t)((b & 0x7FFFFFu) | 0x800000u);
    /* value = sig 2^(fe - 150); units of 2^-54: shift by fe - 96 */
    sh = (int)fe - 150 + FA_LG2_GBITS;
    if (sh >= 0) {
        g = (int64_t)(sig << sh); /* |b| < 2 keeps this below 2^55 */
    } else if (sh > -64) {
        *sticky = (sig & ((UINT64_C(1) << -sh) - 1)) != 0;
        g = (int64_t)(sig >> -sh);
    } else {
        *sticky = true;
        g = 0;
    }
    return (b & F32_SIGN) ? -g : g;
}

uint32_t
fa_lg2_table_core(const fa_lg2_table *t, int e, uint32_t i)
{
    bool sticky, neg;
    int64_t g, v;
    uint64_t mag;
    int p;

    if (e == 0)
        return t->base[i];
    g = lg2_g(t, i, &sticky);
    v = (int64_t)e * ((int64_t)1 << FA_LG2_GBITS) + g;
    neg = v < 0;
    mag = neg ? (uint64_t)(-v) : (uint64_t)v;
    /* a dropped positive remainder of |g| against the sign of v lowers
       |v| below the kept value; the result grid is far coarser than one
       unit, so one unit less truncates alike */
    if (sticky && ((g < 0) != neg))
        mag--;
    for (p = 63; p > 0 && !((mag >> p) & 1u); p--)
        ;
    if (p < 23) /* |v| < 2^-31: does not occur for e != 0 */
        return neg ? F32_SIGN : 0;
    return (neg ? F32_SIGN : 0) | (uint32_t)(p - FA_LG2_GBITS + 127) << 23
           | ((uint32_t)(mag >> (p - 23)) & 0x7FFFFFu);
}

uint32_t
fa_lg2_table_eval(const fa_lg2_table *t, uint32_t x)
{
    uint32_t fe = (x >> 23) & 0xFFu, i = x & 0x7FFFFFu;
    int e;

    if (t == NULL || t->base == NULL)
        return F32_DEFAULT_NAN;
    if ((x & F32_MAG) > F32_INF)
        return LG2_NAN;
    if (fe == 0 && (i == 0 || t->ftz)) /* +-0, or a flushed subnormal */
        return F32_NEG_INF;
    if (x & F32_SIGN)
        return LG2_NAN;
    if (x == F32_INF)
        return F32_INF;
    if (fe == 0) {
        /* x 2^24 is normal (exact); then subtract 24, rounded to nearest
           (finite: the scaled log lies in [-126, -102)) */
        uint32_t ys = fa_lg2_table_eval(
            t, sf_host_float_bits(sf_host_float(x) * 16777216.0f));
        return sf_host_float_bits(sf_host_float(ys) - 24.0f);
    }
    e = (int)fe - 127;
    if (i >= (1u << 22))
        e++;
    return fa_lg2_table_core(t, e, i);
}

const char *
fa_lg2_table_check(const fa_lg2_table *t)
{
    if (t == NULL || t->base == NULL)
        return "lg2 table: no base entries";
    if (t->ncorr > 0 && (t->corr_i == NULL || t->corr_g == NULL))
        return "lg2 table: corrections without indices or values";
    for (size_t k = 0; k < t->ncorr; k++) {
        if (t->corr_i[k] >= (1u << FA_LG2_MBITS)
            || (k > 0 && t->corr_i[k] <= t->corr_i[k - 1]))
            return "lg2 table: correction indices not ascending below 2^23";
        if (t->corr_g[k] <= -((int64_t)1 << FA_LG2_GBITS)
            || t->corr_g[k] >= ((int64_t)1 << FA_LG2_GBITS))
            return "lg2 table: a correction outside (-1, 1)";
    }
    if (t->index != NULL) {
        /* every entry as fa_lg2_table_index makes it */
        size_t k = 0;
        for (size_t w = 0; w < FA_LG2_INDEX_WORDS; w++) {
            uint64_t below = k, bits = index_bits(t, w, &k);
            if (t->index[w].bits != bits || t->index[w].below != below)
                return "lg2 table: the corrections' index does not match "
                       "the corrections";
        }
    }
    return NULL;
}

#if defined(__GNUC__)
#define LG2_PREFETCH(p) __builtin_prefetch(p)
#else
#define LG2_PREFETCH(p) ((void)(p))
#endif

void
fa_lg2_table_prefetch(const fa_lg2_table *t, uint32_t x, int stage)
{
    uint32_t i = x & 0x7FFFFFu, fe = (x >> 23) & 0xFFu;
    size_t k;

    /* the normal positive inputs, which read the tables directly */
    if (t == NULL || t->base == NULL || (x & F32_SIGN) || fe == 0
        || fe == 0xFFu)
        return;
    if (stage == 0) {
        LG2_PREFETCH(t->base + i);
        if (t->index != NULL)
            LG2_PREFETCH(t->index + (i >> 6));
        return;
    }
    if (t->index != NULL && lg2_find(t, i, &k))
        LG2_PREFETCH(t->corr_g + k);
}

void
fa_lg2_table_index(const fa_lg2_table *t, fa_lg2_index *index)
{
    size_t k = 0;

    for (size_t w = 0; w < FA_LG2_INDEX_WORDS; w++) {
        index[w].below = k;
        index[w].bits = index_bits(t, w, &k);
    }
}

uint32_t
fa_log_eval(const fa_log_model *m, uint32_t x)
{
    uint32_t y;

    if (m == NULL || m->kind == FA_LOG_CR)
        return fa_logf_cr(x);
    if (m->kind != FA_LOG_LG2 || m->table == NULL)
        return F32_DEFAULT_NAN;
    y = fa_lg2_table_eval(m->table, x);
    if ((y & F32_MAG) > F32_INF)
        return LG2_NAN;
    if ((y & F32_MAG) == F32_INF)
        return y;
    /* FMUL by RN(ln 2) = 0x3F317218, to nearest; finite, no overflow */
    return sf_host_float_bits(sf_host_float(y) * sf_host_float(0x3F317218u));
}
