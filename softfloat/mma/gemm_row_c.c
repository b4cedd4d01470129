/* gemm_row_c -- the one-row BF16 GEMMs of the truncating fused models in
   portable C on the host's binary32 unit: every product computed exactly
   as a float, no host flag read, the range of each operand checked in
   integers first (the argument: mma_local.h); the B^T form's whole
   blocks in GCC's generic 128-bit vectors where the compiler has them */
#include <string.h>

#include "softfloat/mma/mma_local.h"

/* Columns of B as stored taken at once (the vectorised dimension). */
#define W 16

#if defined(__GNUC__)
#define ROW_INLINE __attribute__((always_inline)) static inline
#else
#define ROW_INLINE static inline
#endif

/* Pass 1 works on 16-bit lanes, on the magnitude Y (x & 0x7FFF) of a
   BF16 element x of B.  The biased exponent sum of its product with A's
   element, from A's biased exponent field AE (NO_A for a zero): x's
   field plus AE, plus NO_X when x is zero.  A real sum (of two fields
   64 .. 190) is at least 128; the sums of zeros are negative (only the
   sign of a sum without a product matters). */
#define NO_A (-0x2000)
#define NO_X (-0x4000)

static inline int16_t
esum16(int16_t y, int16_t ae)
{
    int16_t ex = (int16_t)(y >> 7);

    return (int16_t)(ex + ae + (ex == 0 ? NO_X : 0));
}

/* The range check, over any set of elements: the largest magnitude YMAX
   (from 0) and the smallest magnitude less one YMIN (from YMIN_NONE; a
   zero's wraps to 0x7FFF, above every limit, so that zeros never count),
   each a signed maximum or minimum, which vectorises.  An element is out
   of range when it is not zero and not a normal number of exponent
   -63 .. 63 (subnormals, Inf and NaN included). */
#define YMIN_NONE 0x7FFF

static inline int16_t
ymin16(int16_t y)
{
    return (int16_t)((y - 1) & 0x7FFF);
}

static inline bool
out_of_range(int16_t ymax, int16_t ymin)
{
    return ymax > (int16_t)S_MMA_FP_ABS_MAX
           || ymin < (int16_t)(S_MMA_FP_ABS_MIN - 1);
}

/* A block's grid 2^Q as the two powers the second pass multiplies by:
   *SCALE = 2^-q, *TWOQ = 2^q (q clamped into -126 .. 126 when the block
   has no product, whose terms are then all zero); false when a block
   with products has a q outside that range. */
static inline bool
grid_powers(int32_t q, bool has, float *scale, float *twoq)
{
    int32_t qc = q < -126 ? -126 : q > 126 ? 126 : q;

    if (has && qc != q)
        return false;
    *scale = sf_host_float((uint32_t)(127 - qc) << 23);
    *twoq = sf_host_float((uint32_t)(127 + qc) << 23);
    return true;
}

/* The largest exponent sum of a block's non-zero products, as
   s_mma_c_grid takes it, from the largest biased sum MX (negative:
   none). */
static inline int32_t
block_ep(const s_mma_plan *pl, int16_t mx)
{
    return mx > 0 ? (int32_t)mx - 254 : 2 * S_MMA_ZERO_E + pl->qadd;
}

/* One block of LEN products of one output element: A's part as binary32
   values AW and powers AP, B's LEN elements at X (consecutive), the
   accumulator *ACC (C, then each block's result) updated; false,
   changing nothing, when an element of X is out of range, *ACC is Inf or
   NaN or the grid leaves the scaling's range. */
ROW_INLINE bool
nt_block(const s_mma_plan *pl, const float *aw, const int16_t *ae,
         const uint16_t *x, size_t len, bool need, uint32_t *acc,
         unsigned *fl, uint64_t *lost)
{
    uint32_t lb = 0;
    int16_t mx = NO_X, ymax = 0, ymin = YMIN_NONE;
    int32_t sum = 0, q;
    int64_t csum;
    float scale, twoq;

    /* pass 1: the range, and the largest exponent sum */
    for (size_t t = 0; t < len; t++) {
        int16_t y = (int16_t)(x[t] & 0x7FFF), e = esum16(y, ae[t]);
        int16_t y1 = ymin16(y);
        mx = e > mx ? e : mx;
        ymax = y > ymax ? y : ymax;
        ymin = y1 < ymin ? y1 : ymin;
    }
    if (out_of_range(ymax, ymin) || (*acc & 0x7F800000u) == 0x7F800000u)
        return false;
    csum = s_mma_c_grid(pl, *acc, block_ep(pl, mx), &q, lost);
    if (!grid_powers(q, mx > 0, &scale, &twoq))
        return false;
    /* pass 2: each exact product on the grid, truncated; a kept part
       times 2^q differs from its product exactly when bits were lost
       (looked at while NEED: no inexact result so far) */
    for (size_t t = 0; t < len; t++) {
        float p = sf_host_float((uint32_t)x[t] << 16) * aw[t];
        int32_t kept = (int32_t)(p * scale);
        sum += kept;
        if (need)
            lb |= (uint32_t)((float)kept * twoq != p);
    }
    *lost |= lb;
    *acc = s_mma_finish64(pl, csum + sum, q, fl);
    return true;
}

/* The grid of a block for W outputs side by side, in loops the compiler
   vectorises: from the largest biased exponent sums MX and the
   accumulators ACC (finite), each lane's q (Q), the powers 2^-q and 2^q
   of pass 2 (SCALE, TWOQ, q clamped as grid_powers does) and C's part on
   the grid (KC), as s_mma_c_grid computes them when C is zero or a
   normal number and q lies in -126 .. 126: C times 2^-q is then exact
   unless below 2^-126 (a kept part of 0 either way) and truncated by the
   C conversion, and it lost bits exactly when the kept part times 2^q
   differs from it (ORed into *LOST).  Any other lane is marked in SLOW
   (its KC is 0, nothing lost): lanes_finish takes it through
   s_mma_c_grid.  False when a lane with products has q outside that
   range (grid_powers' case). */
ROW_INLINE bool
lanes_grid(const s_mma_plan *pl, const int16_t *mx, const uint32_t *acc,
           int32_t *q, float *scale, float *twoq, int32_t *kc, uint32_t *slow,
           uint64_t *lost)
{
    const sf_mma_model *m = pl->m;
    const int32_t none = 2 * S_MMA_ZERO_E + pl->qadd, f = pl->f;
    const int32_t zmin = m->zero_c_in_max ? m->acc->emin : none;
    const int32_t floor = m->emax_floor;
    const bool has_floor = m->emax_floor != SF_MMA_NO_FLOOR;
    uint32_t fail = 0, lc = 0;
    uint32_t cbits[W];

    for (size_t l = 0; l < W; l++) {
        uint32_t a = acc[l], mag = a & 0x7FFFFFFFu;
        int32_t cef = (int32_t)((a >> 23) & 0xFF);
        int32_t ep = mx[l] > 0 ? (int32_t)mx[l] - 254 : none;
        int32_t cm = cef - 127; /* C's exponent (normal C) */
        int32_t emax = mag != 0 && cm > ep ? cm : ep;
        int32_t qq, qc;
        uint32_t bad;
        emax = mag == 0 && zmin > emax ? zmin : emax;
        emax = has_floor && emax < floor ? floor : emax;
        qq = emax - f;
        qc = qq < -126 ? -126 : qq > 126 ? 126 : qq;
        bad = (uint32_t)(qc != qq);
        fail |= (uint32_t)(mx[l] > 0) & bad;
        slow[l] = (uint32_t)(mag != 0) & (bad | (uint32_t)(cef == 0));
        q[l] = qq;
        scale[l] = sf_host_float((uint32_t)(127 - qc) << 23);
        twoq[l] = sf_host_float((uint32_t)(127 + qc) << 23);
        cbits[l] = slow[l] != 0 ? 0 : a;
    }
    if (fail != 0)
        return false;
    for (size_t l = 0; l < W; l++) {
        float cf = sf_host_float(cbits[l]);
        int32_t k = (int32_t)(cf * scale[l]);
        kc[l] = k;
        lc |= (uint32_t)((float)k * twoq[l] != cf);
    }
    *lost |= lc;
    return true;
}

/* Each lane's total KC + SUM on the grid 2^Q normalised and truncated
   to FP32 into ACC, as s_mma_finish64 does, flags into *FL, in 32-bit
   lanes for a total of magnitude below 2^30 and a normal result: the
   leading bit from exact conversions of the total's top and low bits to
   binary32, the bits below the 24 kept ones cleared (2^sh, sh = 0 .. 6,
   built as a binary32 power and converted), the kept part converted
   exactly and its exponent moved by q.  s_mma_c_grid and
   s_mma_finish64 for the SLOW lanes and any other (from MX and the
   accumulators as they were before the block). */
ROW_INLINE void
lanes_finish(const s_mma_plan *pl, const int16_t *mx, const int32_t *kc,
             const int32_t *sum, const int32_t *q, uint32_t *slow,
             uint32_t *acc, unsigned *fl, uint64_t *lost)
{
    uint32_t res[W], inex = 0, any = 0;

    /* masks, not branches: the conversions stay unconditional */
    for (size_t l = 0; l < W; l++) {
        int32_t s = sum[l], c = kc[l];
        int32_t t = (int32_t)((uint32_t)s + (uint32_t)c);
        uint32_t neg = (uint32_t)(t >> 31);
        uint32_t mag = ((uint32_t)t ^ neg) - neg;
        uint32_t big = (uint32_t)(mag >= 0x40000000u)
                       | (uint32_t)(((t ^ s) & (t ^ c)) < 0);
        int32_t m = (int32_t)(mag & (big - 1u));
        int32_t e1 =
            (int32_t)(sf_host_float_bits((float)(m >> 7)) >> 23) - 120;
        int32_t e0 =
            (int32_t)(sf_host_float_bits((float)(m & 0x7F)) >> 23) - 127;
        int32_t hi = -(int32_t)(m >= 0x80);
        int32_t lead = (e1 & hi) | (e0 & ~hi), sh = lead - 23;
        int32_t mask, ex;
        uint32_t fb, nz = 0u - (uint32_t)(m != 0);
        sh &= -(int32_t)(sh > 0);
        mask = (int32_t)sf_host_float((uint32_t)(sh + 127) << 23) - 1;
        fb = sf_host_float_bits((float)(m & ~mask));
        ex = lead + q[l];
        /* a wide total, or a subnormal or overflowing result */
        slow[l] |= big
                   | (nz & ((uint32_t)(ex < -126) | (uint32_t)(ex > 127)));
        res[l] = (((uint32_t)t & 0x80000000u) | (fb + ((uint32_t)q[l] << 23)))
                 & nz;
        inex |= (uint32_t)((m & mask) != 0);
        any |= slow[l];
    }
    if (inex != 0)
        *fl |= SF_FLAG_INEXACT;
    for (size_t l = 0; any != 0 && l < W; l++)
        if (slow[l] != 0) {
            int32_t qq;
            int64_t csum = s_mma_c_grid(pl, acc[l], block_ep(pl, mx[l]), &qq,
                                        lost);
            res[l] = s_mma_finish64(pl, csum + sum[l], qq, fl);
        }
    memcpy(acc, res, sizeof res);
}

/* The same for W output elements side by side: B's LEN rows of W
   elements at B, LD apart; ACC: W accumulators. */
ROW_INLINE bool
row_block(const s_mma_plan *pl, const float *aw, const int16_t *ae,
          const uint16_t *b, size_t ld, size_t len, bool need, uint32_t *acc,
          unsigned *fl, uint64_t *lost)
{
    uint32_t lb[W] = {0}, spec = 0, slow[W];
    int16_t mx[W], ymax[W], ymin[W];
    int32_t sum[W] = {0}, q[W], kc[W];
    float scale[W], twoq[W];

    for (size_t l = 0; l < W; l++) {
        mx[l] = NO_X;
        ymax[l] = 0;
        ymin[l] = YMIN_NONE;
    }
    for (size_t t = 0; t < len; t++)
        for (size_t l = 0; l < W; l++) {
            int16_t y = (int16_t)(b[t * ld + l] & 0x7FFF);
            int16_t e = esum16(y, ae[t]), y1 = ymin16(y);
            mx[l] = e > mx[l] ? e : mx[l];
            ymax[l] = y > ymax[l] ? y : ymax[l];
            ymin[l] = y1 < ymin[l] ? y1 : ymin[l];
        }
    for (size_t l = 0; l < W; l++) {
        spec |= (uint32_t)((acc[l] & 0x7F800000u) == 0x7F800000u);
        spec |= (uint32_t)out_of_range(ymax[l], ymin[l]);
    }
    if (spec != 0)
        return false;
    if (!lanes_grid(pl, mx, acc, q, scale, twoq, kc, slow, lost))
        return false;
    for (size_t t = 0; t < len; t++)
        for (size_t l = 0; l < W; l++) {
            float p = sf_host_float((uint32_t)b[t * ld + l] << 16) * aw[t];
            int32_t kept = (int32_t)(p * scale[l]);
            sum[l] += kept;
            if (need)
                lb[l] |= (uint32_t)((float)kept * twoq[l] != p);
        }
    for (size_t l = 0; l < W; l++)
        *lost |= lb[l];
    lanes_finish(pl, mx, kc, sum, q, slow, acc, fl, lost);
    return true;
}

/* Whether the result is already inexact: FLAGS has the flag, or LOST
   bits (then a block's lost bits change nothing and are not looked
   for). */
static inline bool
inexact(unsigned flags, uint64_t lost)
{
    return (flags & SF_FLAG_INEXACT) != 0 || lost != 0;
}

/* One block of W output elements of the B^T form side by side: keys
   (rows of B^T) X + l K, l < W, elements K0 .. K0+LEN-1 each; the
   products of one key are summed horizontally, the grid and the result
   of all W keys are computed together (lanes_grid, lanes_finish). */
ROW_INLINE bool
nt_lanes(const s_mma_plan *pl, const float *aw, const int16_t *ae,
         const uint16_t *x, size_t k, size_t len, bool need, uint32_t *acc,
         unsigned *fl, uint64_t *lost)
{
    uint32_t lb[W], spec = 0, slow[W];
    int16_t mx[W], ymax = 0, ymin = YMIN_NONE;
    int32_t sum[W], q[W], kc[W];
    float scale[W], twoq[W];

    for (size_t l = 0; l < W; l++) {
        const uint16_t *xl = x + l * k;
        int16_t m = NO_X;
        for (size_t t = 0; t < len; t++) {
            int16_t y = (int16_t)(xl[t] & 0x7FFF), e = esum16(y, ae[t]);
            int16_t y1 = ymin16(y);
            m = e > m ? e : m;
            ymax = y > ymax ? y : ymax;
            ymin = y1 < ymin ? y1 : ymin;
        }
        mx[l] = m;
        spec |= (uint32_t)((acc[l] & 0x7F800000u) == 0x7F800000u);
    }
    if (out_of_range(ymax, ymin) || spec != 0)
        return false;
    if (!lanes_grid(pl, mx, acc, q, scale, twoq, kc, slow, lost))
        return false;
    for (size_t l = 0; l < W; l++) {
        const uint16_t *xl = x + l * k;
        const float sc = scale[l], tq = twoq[l];
        int32_t s = 0;
        uint32_t b = 0;
        for (size_t t = 0; t < len; t++) {
            float p = sf_host_float((uint32_t)xl[t] << 16) * aw[t];
            int32_t kept = (int32_t)(p * sc);
            s += kept;
            if (need)
                b |= (uint32_t)((float)kept * tq != p);
        }
        sum[l] = s;
        lb[l] = b;
    }
    for (size_t l = 0; l < W; l++)
        *lost |= lb[l];
    lanes_finish(pl, mx, kc, sum, q, slow, acc, fl, lost);
    return true;
}

#if defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 12)
/* nt_lanes for a whole block (16 products per key) in GCC's generic
   128-bit vectors (SSE2 on x86-64, NEON on AArch64).  The products,
   their kept parts and the sums are those of nt_lanes, operation for
   operation; what changes is where the per-key reductions happen.  Each
   key's 16 exponent sums and 16 kept parts are first folded to one
   vector, then the vectors of several keys are folded together, a
   transposing tree of interleaves (8 keys' maxima, 4 keys' sums per
   vector), instead of one horizontal fold per key; the range check (the
   largest and the smallest magnitude) and the lost bits, which only
   matter for the whole group, are gathered across keys. */
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

typedef int16_t v8s __attribute__((vector_size(16)));
typedef uint16_t v8u __attribute__((vector_size(16)));
typedef int32_t v4s __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef int64_t v2q __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

static inline v8u
load8(const uint16_t *p)
{
    v8u v;

    memcpy(&v, p, sizeof v);
    return v;
}

/* the larger and the smaller of A and B, lane by lane */
static inline v8s
max8(v8s a, v8s b)
{
#if defined(__SSE2__)
    return (v8s)_mm_max_epi16((__m128i)a, (__m128i)b);
#elif defined(__ARM_NEON)
    return vmaxq_s16(a, b);
#else
    v8s gt = a > b;

    return (a & gt) | (b & ~gt);
#endif
}

static inline v8s
min8(v8s a, v8s b)
{
#if defined(__SSE2__)
    return (v8s)_mm_min_epi16((__m128i)a, (__m128i)b);
#elif defined(__ARM_NEON)
    return vminq_s16(a, b);
#else
    v8s lt = a < b;

    return (a & lt) | (b & ~lt);
#endif
}

/* esum16 on 8 lanes */
static inline v8s
esum8(v8s y, v8s ae)
{
    v8s ex = y >> 7;

    return ex + ae + ((ex == 0) & NO_X);
}

/* One level of the tree: the partial maxima A and B (of one key, or of
   keys side by side) folded into one vector, their halves interleaved at
   16, 32 or 64 bits. */
static inline v8s
fold16(v8s a, v8s b)
{
    return max8(__builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11),
                __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15));
}

static inline v8s
fold32(v8s a, v8s b)
{
    v4s x = (v4s)a, y = (v4s)b;

    return max8((v8s)__builtin_shufflevector(x, y, 0, 4, 1, 5),
                (v8s)__builtin_shufflevector(x, y, 2, 6, 3, 7));
}

static inline v8s
fold64(v8s a, v8s b)
{
    v2q x = (v2q)a, y = (v2q)b;

    return max8((v8s)__builtin_shufflevector(x, y, 0, 2),
                (v8s)__builtin_shufflevector(x, y, 1, 3));
}

/* Eight keys' partial maxima M[0..7] (8 lanes each) to the 8 maxima,
   key by key, in one vector. */
static inline v8s
max_of_8(const v8s *m)
{
    v8s a = fold16(m[0], m[1]), b = fold16(m[2], m[3]);
    v8s c = fold16(m[4], m[5]), d = fold16(m[6], m[7]);

    return fold64(fold32(a, b), fold32(c, d));
}

/* Four keys' partial sums S[0..3] (4 lanes each) to the 4 sums. */
static inline v4s
sum_of_4(const v4s *s)
{
    v4s a = __builtin_shufflevector(s[0], s[1], 0, 4, 1, 5)
            + __builtin_shufflevector(s[0], s[1], 2, 6, 3, 7);
    v4s b = __builtin_shufflevector(s[2], s[3], 0, 4, 1, 5)
            + __builtin_shufflevector(s[2], s[3], 2, 6, 3, 7);
    v2q x = (v2q)a, y = (v2q)b;

    return (v4s)__builtin_shufflevector(x, y, 0, 2)
           + (v4s)__builtin_shufflevector(x, y, 1, 3);
}

/* The kept parts of 4 products on the grid (X: BF16 bits in the top
   halves of 32-bit lanes), their sum into *S; lost bits into *LB while
   NEED. */
ROW_INLINE void
kept4(v4u x, v4f aw, v4f sc, v4f tq, bool need, v4s *s, v4s *lb)
{
    v4f p = (v4f)x * aw;
    v4s kept = __builtin_convertvector(p * sc, v4s);

    *s += kept;
    if (need)
        *lb |= __builtin_convertvector(kept, v4f) * tq != p;
}

ROW_INLINE bool
nt_lanes16(const s_mma_plan *pl, const float *aw, const int16_t *ae,
           const uint16_t *x, size_t k, bool need, uint32_t *acc,
           unsigned *fl, uint64_t *lost)
{
    v8s ae0, ae1, part[W];
    /* the range check (out_of_range) lane by lane */
    v8s ymax = {0}, ymin = (v8s){0} + YMIN_NONE;
    v4s sums[W], lbv = {0};
    v4f awv[4];
    uint32_t spec = 0, slow[W], lb;
    int16_t mx[W];
    int32_t sum[W], q[W], kc[W];
    float scale[W], twoq[W];

    memcpy(&ae0, ae, sizeof ae0);
    memcpy(&ae1, ae + 8, sizeof ae1);
    memcpy(awv, aw, sizeof awv);
    for (size_t l = 0; l < W; l++) {
        v8s y0 = (v8s)(load8(x + l * k) & 0x7FFF);
        v8s y1 = (v8s)(load8(x + l * k + 8) & 0x7FFF);
        part[l] = max8(esum8(y0, ae0), esum8(y1, ae1));
        ymax = max8(ymax, max8(y0, y1));
        ymin = min8(ymin, min8((y0 - 1) & 0x7FFF, (y1 - 1) & 0x7FFF));
        spec |= (uint32_t)((acc[l] & 0x7F800000u) == 0x7F800000u);
    }
    for (size_t i = 0; i < 8; i++)
        spec |= (uint32_t)out_of_range(ymax[i], ymin[i]);
    if (spec != 0)
        return false;
    for (size_t l = 0; l < W; l += 8) {
        v8s m8 = max_of_8(part + l);
        memcpy(mx + l, &m8, sizeof m8);
    }
    if (!lanes_grid(pl, mx, acc, q, scale, twoq, kc, slow, lost))
        return false;
    for (size_t l = 0; l < W; l++) {
        v8u x0 = load8(x + l * k), x1 = load8(x + l * k + 8), z = {0};
        v4f sc = (v4f){0} + scale[l], tq = (v4f){0} + twoq[l];
        v4s s = {0};
        kept4((v4u)__builtin_shufflevector(z, x0, 0, 8, 1, 9, 2, 10, 3, 11),
              awv[0], sc, tq, need, &s, &lbv);
        kept4((v4u)__builtin_shufflevector(z, x0, 4, 12, 5, 13, 6, 14, 7,
                                           15),
              awv[1], sc, tq, need, &s, &lbv);
        kept4((v4u)__builtin_shufflevector(z, x1, 0, 8, 1, 9, 2, 10, 3, 11),
              awv[2], sc, tq, need, &s, &lbv);
        kept4((v4u)__builtin_shufflevector(z, x1, 4, 12, 5, 13, 6, 14, 7,
                                           15),
              awv[3], sc, tq, need, &s, &lbv);
        sums[l] = s;
    }
    for (size_t l = 0; l < W; l += 4) {
        v4s s4 = sum_of_4(sums + l);
        memcpy(sum + l, &s4, sizeof s4);
    }
    lb = (uint32_t)(lbv[0] | lbv[1] | lbv[2] | lbv[3]);
    *lost |= lb != 0;
    lanes_finish(pl, mx, kc, sum, q, slow, acc, fl, lost);
    return true;
}
#else
/* without the generic vectors: nt_lanes on the whole block */
ROW_INLINE bool
nt_lanes16(const s_mma_plan *pl, const float *aw, const int16_t *ae,
           const uint16_t *x, size_t k, bool need, uint32_t *acc,
           unsigned *fl, uint64_t *lost)
{
    return nt_lanes(pl, aw, ae, x, k, 16, need, acc, fl, lost);
}
#endif

/* A's side: binary32 values AW and biased exponent fields AE (NO_A for
   a zero) of its K elements, zeros up to the next multiple of the block
   N; false when an element is out of range or K is above
   S_MMA_FP_ROW_MAX. */
static bool
side_a(const uint16_t *a, size_t k, size_t n, float *aw, int16_t *ae)
{
    uint32_t bad = 0;

    if (k > S_MMA_FP_ROW_MAX)
        return false;
    for (size_t t = 0; t < k; t++) {
        uint16_t y = (uint16_t)(a[t] & 0x7FFF);
        bad |= (uint32_t)(y != 0 && (y < S_MMA_FP_ABS_MIN || y > S_MMA_FP_ABS_MAX));
        aw[t] = sf_host_float((uint32_t)a[t] << 16);
        ae[t] = y != 0 ? (int16_t)(y >> 7) : (int16_t)NO_A;
    }
    for (size_t t = k; t % n != 0; t++) {
        aw[t] = 0;
        ae[t] = NO_A;
    }
    return bad == 0;
}

bool
s_mma_row_c_covers(const sf_mma_model *m, const sf_format *fa,
                   const sf_format *fb)
{
    s_mma_plan pl;

    if (fa != &sf_format_bf16 || fb != &sf_format_bf16 || m->n > 16)
        return false;
    s_mma_plan_init(&pl, m, fa, fb, 1, false);
    return pl.narrow;
}

/* Key J of the B^T form (row BT + J K), from C (or 0), block by block
   (nt_block); false when a block goes outside the path (*D, *F and *L
   are then not to be used). */
static bool
nt_key(const s_mma_plan *pl, const float *aw, const int16_t *ae,
       const uint16_t *x, size_t k, size_t n, uint32_t c, unsigned flags,
       uint64_t lost, uint32_t *d, unsigned *f, uint64_t *l)
{
    uint32_t acc = c;
    bool ok = true;

    for (size_t k0 = 0; ok && k0 < k; k0 += n) {
        size_t len = k - k0 < n ? k - k0 : n;
        bool need = !inexact(flags | *f, lost | *l);
        if (len == 16 && need)
            ok = nt_block(pl, aw + k0, ae + k0, x + k0, 16, true, &acc, f, l);
        else if (len == 16)
            ok = nt_block(pl, aw + k0, ae + k0, x + k0, 16, false, &acc, f,
                          l);
        else
            ok = nt_block(pl, aw + k0, ae + k0, x + k0, len, true, &acc, f, l);
    }
    *d = acc;
    return ok;
}

/* Keys J0 .. J0+W-1 of the B^T form at once (nt_lanes); false when a
   block goes outside the path (nothing written). */
static bool
nt_group(const s_mma_plan *pl, const float *aw, const int16_t *ae,
         const uint16_t *x, size_t k, size_t n, const uint32_t *c,
         unsigned flags, uint64_t lost, const uint16_t *pf, uint32_t *d,
         unsigned *f, uint64_t *l)
{
    const size_t nb = (k + n - 1) / n;
    uint32_t acc[W];
    bool ok = true;

    if (c != NULL)
        memcpy(acc, c, sizeof acc);
    else
        memset(acc, 0, sizeof acc);
    for (size_t k0 = 0; ok && k0 < k; k0 += n) {
        size_t len = k - k0 < n ? k - k0 : n;
        bool need = !inexact(flags | *f, lost | *l);
        if (pf != NULL) {
            /* this block's share of PF's W keys */
            size_t b = k0 / n, r0 = b * W / nb, r1 = (b + 1) * W / nb;
            s_mma_prefetch_rows(pf + r0 * k, k, r1 - r0, k * 2);
        }
        if (len == 16 && need)
            ok = nt_lanes16(pl, aw + k0, ae + k0, x + k0, k, true, acc, f, l);
        else if (len == 16)
            ok = nt_lanes16(pl, aw + k0, ae + k0, x + k0, k, false, acc, f,
                            l);
        else
            ok = nt_lanes(pl, aw + k0, ae + k0, x + k0, k, len, true, acc, f,
                          l);
    }
    if (ok)
        memcpy(d, acc, sizeof acc);
    return ok;
}

bool
s_mma_gemm_nt_c(const sf_mma_model *m, size_t cols, size_t k,
                const uint16_t *a, const uint16_t *bt, const uint32_t *c,
                uint32_t *d, sf_env *env)
{
    float aw[S_MMA_FP_ROW_MAX + 16];
    int16_t ae[S_MMA_FP_ROW_MAX + 16];
    const size_t n = (size_t)m->n;
    s_mma_plan pl;
    unsigned flags = 0;
    uint64_t lost = 0;
    size_t j = 0;

    if (!side_a(a, k, n, aw, ae))
        return false;
    s_mma_plan_init(&pl, m, &sf_format_bf16, &sf_format_bf16, 1, false);
    /* W keys at a time, while every block stays on the path */
    for (; j + W <= cols; j += W) {
        unsigned f = 0;
        uint64_t lj = 0;
        /* the keys four groups ahead asked into the cache, a share with
           each block so that the requests do not queue behind each
           other: with one row of A, K streams from memory once (at
           d = 128 a group is one 4 KiB page) */
        const uint16_t *pf = j + 5 * W <= cols ? bt + (j + 4 * W) * k : NULL;
        if (!nt_group(&pl, aw, ae, bt + j * k, k, n,
                      c != NULL ? c + j : NULL, flags, lost, pf, d + j, &f,
                      &lj))
            break;
        flags |= f;
        lost |= lj;
    }
    /* the rest key by key */
    for (; j < cols; j++) {
        const uint16_t *x = bt + j * k;
        unsigned f = 0;
        uint64_t lj = 0;
        uint32_t r;
        if (nt_key(&pl, aw, ae, x, k, n, c != NULL ? c[j] : 0, flags, lost,
                   &r, &f, &lj)) {
            d[j] = r;
            flags |= f;
            lost |= lj;
        } else {
            /* a special or out-of-range operand: the column's dot */
            s_mma_vec va = {a, 1, 2}, vb = {x, 1, 2};
            d[j] = (uint32_t)s_mma_dot(m, &sf_format_bf16, &va,
                                       &sf_format_bf16, &vb, k,
                                       c != NULL ? c[j] : 0, env);
        }
    }
    if (lost != 0)
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
    return true;
}

bool
s_mma_gemm_row_c(const sf_mma_model *m, size_t cols, size_t k,
                 const uint16_t *a, const uint16_t *b, const uint32_t *c,
                 uint32_t *d, sf_env *env)
{
    enum
    {
        NG = S_MMA_FP_CHUNK / W /* groups of W columns in a chunk */
    };
    float aw[S_MMA_FP_ROW_MAX + 16];
    int16_t ae[S_MMA_FP_ROW_MAX + 16];
    const size_t n = (size_t)m->n;
    uint16_t pad[16 * W];
    s_mma_plan pl;
    unsigned flags = 0;
    uint64_t lost = 0;

    if (!side_a(a, k, n, aw, ae))
        return false;
    s_mma_plan_init(&pl, m, &sf_format_bf16, &sf_format_bf16, W, false);
    for (size_t j0 = 0; j0 < cols; j0 += S_MMA_FP_CHUNK) {
        size_t nc = cols - j0 < S_MMA_FP_CHUNK ? cols - j0 : S_MMA_FP_CHUNK;
        size_t ng = (nc + W - 1) / W;
        uint32_t acc[S_MMA_FP_CHUNK] = {0};
        unsigned f[NG] = {0};
        uint64_t lj[NG] = {0};
        bool ok[NG];
        if (c != NULL)
            memcpy(acc, c + j0, nc * sizeof *acc);
        for (size_t g = 0; g < ng; g++)
            ok[g] = true;
        /* block by block of K, B's rows read in order */
        for (size_t k0 = 0; k0 < k; k0 += n) {
            size_t len = k - k0 < n ? k - k0 : n;
            size_t nn = k0 + n < k ? (k - k0 - n < n ? k - k0 - n : n) : 0;
            for (size_t g = 0; g < ng; g++) {
                size_t nl = nc - g * W < W ? nc - g * W : W;
                const uint16_t *src = b + k0 * cols + j0 + g * W;
                size_t ld = cols, r0 = g * nn / ng, r1 = (g + 1) * nn / ng;
                /* this group's share of the next block's rows asked into
                   the cache (B streams from memory once with one row of
                   A), spread so that the requests do not queue */
                if (r1 > r0)
                    s_mma_prefetch_rows(b + (k0 + n + r0) * cols + j0, cols,
                                        r1 - r0, nc * 2);
                if (!ok[g])
                    continue;
                if (nl < W) {
                    /* the last columns: zeros beside them */
                    memset(pad, 0, sizeof pad);
                    for (size_t t = 0; t < len; t++)
                        memcpy(pad + t * W, src + t * cols,
                               nl * sizeof *pad);
                    src = pad;
                    ld = W;
                }
                if (len == 16 && !inexact(flags | f[g], lost | lj[g]))
                    ok[g] = row_block(&pl, aw + k0, ae + k0, src, ld, 16, true,
                                      acc + g * W, &f[g], &lj[g]);
                else if (len == 16)
                    ok[g] = row_block(&pl, aw + k0, ae + k0, src, ld, 16,
                                      false, acc + g * W, &f[g], &lj[g]);
                else
                    ok[g] = row_block(&pl, aw + k0, ae + k0, src, ld, len,
                                      true, acc + g * W, &f[g], &lj[g]);
            }
        }
        for (size_t g = 0; g < ng; g++) {
            size_t c0 = j0 + g * W, nl = nc - g * W < W ? nc - g * W : W;
            if (ok[g]) {
                memcpy(d + c0, acc + g * W, nl * sizeof *acc);
                flags |= f[g];
                lost |= lj[g];
                continue;
            }
            /* a special or out-of-range operand: each column's dot */
            for (size_t l = 0; l < nl; l++) {
                s_mma_vec va = {a, 1, 2},
                          vb = {b + c0 + l, (ptrdiff_t)cols, 2};
                d[c0 + l] = (uint32_t)s_mma_dot(
                    m, &sf_format_bf16, &va, &sf_format_bf16, &vb, k,
                    c != NULL ? c[c0 + l] : 0, env);
            }
        }
    }
    if (lost != 0)
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
    return true;
}
