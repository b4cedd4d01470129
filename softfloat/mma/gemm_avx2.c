/* gemm_avx2 -- the AVX2 kernels of the tiled GEMM for truncating fused
   models (sm70..sm100 style): eight output columns per vector,
   bit-identical to the scalar path (flags included).  What the two
   instruction sets share around their kernels (the entry points, the row
   kernel, the flag-checked chunks) is s_gemm_lanes.h, included at the
   end. */
#include <string.h>

#include "softfloat/mma/mma_local.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_VEC 1
#include <immintrin.h>
#else
#define HAVE_VEC 0
#endif

bool
sf_mma_gemm_avx2_available(void)
{
#if HAVE_VEC
    return sf_isa_supported(SF_ISA_AVX2);
#else
    return false;
#endif
}

#define GL_N 8

#if HAVE_VEC

#define TGT __attribute__((target("avx2,fma,f16c,bmi2")))

#define GL_TGT TGT
#include "softfloat/mma/s_gemm_block.h"

/* Four results: the sum TOT (C and the block's terms on the grid 2^Q,
   Q in 64-bit lanes) normalised once and truncated (RZ) to FP32, as
   the low 32 bits of each lane. */
TGT static inline __m256i
finish4(__m256i tot, __m256i q, uint32_t ovf_bits, s_vflags *fl)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i neg = _mm256_cmpgt_epi64(zero, tot);
    __m256i mag = _mm256_sub_epi64(_mm256_xor_si256(tot, neg), neg);
    __m256i zs = _mm256_cmpeq_epi64(mag, zero);
    /* the top bit's position from a double: 2^52 + mag is exact for
       mag < 2^52, and subtracting 2^52 leaves mag, normalised */
    __m256i dbits = _mm256_castpd_si256(
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(
                          mag, _mm256_set1_epi64x(0x4330000000000000LL))),
                      _mm256_set1_pd(0x1p52)));
    __m256i t = _mm256_sub_epi64(_mm256_srli_epi64(dbits, 52),
                                 _mm256_set1_epi64x(1023));
    __m256i ex = _mm256_add_epi64(q, t);
    __m256i sa = _mm256_sub_epi64(t, _mm256_set1_epi64x(23));
    __m256i sb = _mm256_sub_epi64(_mm256_set1_epi64x(-149), q);
    __m256i sh = _mm256_blendv_epi8(sa, sb, _mm256_cmpgt_epi64(sb, sa));
    /* a shift count outside 0..63 gives 0, so one of the two is 0 */
    __m256i mm =
        _mm256_or_si256(_mm256_srlv_epi64(mag, sh),
                        _mm256_sllv_epi64(mag, _mm256_sub_epi64(zero, sh)));
    __m256i inexf =
        _mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_sllv_epi64(mm, sh), mag),
                            _mm256_cmpgt_epi64(sh, zero));
    __m256i normal = _mm256_cmpgt_epi64(ex, _mm256_set1_epi64x(-127));
    __m256i ovf = _mm256_cmpgt_epi64(ex, _mm256_set1_epi64x(127));
    __m256i field = _mm256_and_si256(
        normal, _mm256_add_epi64(ex, _mm256_set1_epi64x(126)));
    __m256i bits = _mm256_add_epi64(_mm256_slli_epi64(field, 23), mm);
    __m256i ssel;

    bits = _mm256_blendv_epi8(bits, _mm256_set1_epi64x(ovf_bits), ovf);
    /* a result that truncates to zero is +0 (SF_MMA_ZERO_POS) */
    ssel =
        _mm256_or_si256(_mm256_andnot_si256(_mm256_cmpeq_epi64(mm, zero), neg),
                        _mm256_and_si256(neg, ovf));
    bits = _mm256_or_si256(
        bits, _mm256_and_si256(ssel, _mm256_set1_epi64x(0x80000000LL)));
    bits = _mm256_andnot_si256(zs, bits);
    inexf = _mm256_andnot_si256(zs, inexf);
    ovf = _mm256_andnot_si256(zs, ovf);
    fl->inexact = _mm256_or_si256(fl->inexact, _mm256_or_si256(inexf, ovf));
    fl->underflow =
        _mm256_or_si256(fl->underflow, _mm256_andnot_si256(normal, inexf));
    fl->overflow = _mm256_or_si256(fl->overflow, ovf);
    return bits;
}

/* The accumulator's term on the grid 2^Q for four lanes (64-bit):
   CSIG, CELOW, CNEG in 64-bit lanes. */
TGT static inline __m256i
c_term4(__m256i csig, __m256i celow, __m256i cneg, __m256i q, __m256i *lost)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i shc = _mm256_sub_epi64(q, celow);
    __m256i r = _mm256_srlv_epi64(csig, shc);
    __m256i kc = _mm256_or_si256(
        r, _mm256_sllv_epi64(csig, _mm256_sub_epi64(zero, shc)));

    *lost = _mm256_or_si256(
        *lost,
        _mm256_and_si256(_mm256_cmpgt_epi64(shc, zero),
                         _mm256_xor_si256(csig, _mm256_sllv_epi64(r, shc))));
    return _mm256_sub_epi64(_mm256_xor_si256(kc, cneg), cneg);
}

TGT static inline __m256i
lo64(__m256i x)
{
    return _mm256_cvtepi32_epi64(_mm256_castsi256_si128(x));
}

TGT static inline __m256i
hi64(__m256i x)
{
    return _mm256_cvtepi32_epi64(_mm256_extracti128_si256(x, 1));
}

/* The flags of a block's results: FL and LOST, as the scalar path
   raises them. */
TGT static inline unsigned
fp_flags(const s_vflags *fl, __m256i lost)
{
    unsigned f = 0;
    __m256i in = _mm256_or_si256(lost, fl->inexact);

    if (!_mm256_testz_si256(in, in))
        f |= SF_FLAG_INEXACT;
    if (!_mm256_testz_si256(fl->underflow, fl->underflow))
        f |= SF_FLAG_UNDERFLOW;
    if (!_mm256_testz_si256(fl->overflow, fl->overflow))
        f |= SF_FLAG_OVERFLOW;
    return f;
}

/* The eight results of a block in 64-bit lanes: S0 and S1 (the sums of
   the products on the grid 2^Q of lanes 0..3 and 4..7) plus C (decoded
   into CSIG, CELOW), each rounded once. */
TGT __attribute__((always_inline)) static inline __m256i
result4x2(const s_mma_plan *pl, __m256i s0, __m256i s1, __m256i c,
          __m256i csig, __m256i celow, __m256i q, s_vflags *fl, __m256i *lost)
{
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i cm = _mm256_srai_epi32(c, 31), r0, r1;

    s0 = _mm256_add_epi64(
        s0, c_term4(lo64(csig), lo64(celow), lo64(cm), lo64(q), lost));
    s1 = _mm256_add_epi64(
        s1, c_term4(hi64(csig), hi64(celow), hi64(cm), hi64(q), lost));
    r0 = finish4(s0, lo64(q), pl->ovf_bits, fl);
    r1 = finish4(s1, hi64(q), pl->ovf_bits, fl);
    return _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(r0, even),
                                     _mm256_permutevar8x32_epi32(r1, even),
                                     0x20);
}

/* One block for eight lanes; NARROW: the products and their sum in
   32-bit lanes (pl->narrow, pl->lp == 0), else in 64-bit lanes. */
TGT __attribute__((always_inline)) static inline bool
kernel8(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
        const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
        unsigned *flags, bool narrow)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)acc);
    __m256i csig, celow, q, lost = zero, s0 = zero, s1 = zero;
    s_vflags fl = {zero, zero, zero};

    /* pass 1: the largest exponent of a non-zero product, and C */
    if (!kernel_grid(pl, ae, be, len, c, &q, &csig, &celow))
        return false;

    /* pass 2: every product on the grid 2^q, truncated; the shift is
       never negative */
    if (narrow) {
        __m256i sum = zero;
        for (size_t t = 0; t < len; t++) {
            const int32_t *bst = bs + t * 8, *bet = be + t * 8;
            __m256i p = _mm256_mullo_epi32(
                _mm256_set1_epi32(as[t]),
                _mm256_loadu_si256((const __m256i *)(const void *)bst));
            __m256i sh = _mm256_sub_epi32(
                _mm256_sub_epi32(q, _mm256_set1_epi32(ae[t])),
                _mm256_loadu_si256((const __m256i *)(const void *)bet));
            __m256i ap = _mm256_abs_epi32(p);
            __m256i kept = _mm256_srlv_epi32(ap, sh);
            lost = _mm256_or_si256(
                lost, _mm256_xor_si256(ap, _mm256_sllv_epi32(kept, sh)));
            sum = _mm256_add_epi32(sum, _mm256_sign_epi32(kept, p));
        }
        s0 = lo64(sum);
        s1 = hi64(sum);
    } else {
        const __m256i lp = _mm256_set1_epi64x(pl->lp);
        for (size_t t = 0; t < len; t++) {
            const int32_t *bst = bs + t * 8, *bet = be + t * 8;
            __m256i p = _mm256_mullo_epi32(
                _mm256_set1_epi32(as[t]),
                _mm256_loadu_si256((const __m256i *)(const void *)bst));
            __m256i sh = _mm256_add_epi32(
                _mm256_sub_epi32(
                    _mm256_sub_epi32(q, _mm256_set1_epi32(ae[t])),
                    _mm256_loadu_si256((const __m256i *)(const void *)bet)),
                _mm256_set1_epi32(pl->lp));
            __m256i ap = _mm256_abs_epi32(p), sg = _mm256_srai_epi32(p, 31);
            __m256i a0 = _mm256_sllv_epi64(lo64(ap), lp),
                    a1 = _mm256_sllv_epi64(hi64(ap), lp);
            __m256i h0 = lo64(sh), h1 = hi64(sh), g0 = lo64(sg), g1 = hi64(sg);
            __m256i k0 = _mm256_srlv_epi64(a0, h0),
                    k1 = _mm256_srlv_epi64(a1, h1);
            lost = _mm256_or_si256(
                lost, _mm256_or_si256(
                          _mm256_xor_si256(a0, _mm256_sllv_epi64(k0, h0)),
                          _mm256_xor_si256(a1, _mm256_sllv_epi64(k1, h1))));
            s0 = _mm256_add_epi64(
                s0, _mm256_sub_epi64(_mm256_xor_si256(k0, g0), g0));
            s1 = _mm256_add_epi64(
                s1, _mm256_sub_epi64(_mm256_xor_si256(k1, g1), g1));
        }
    }

    /* plus C, then one rounding */
    _mm256_storeu_si256((__m256i *)(void *)acc,
                        result4x2(pl, s0, s1, c, csig, celow, q, &fl, &lost));
    *flags |= fp_flags(&fl, lost);
    return true;
}

/*----------------------------------------------------------------------------
 * BF16 times BF16 on the host's binary32 unit, one row of A (why it gives
 * the block's bits: mma_local.h).  AVX2 has no scalef: the scaling is a
 * product by 2^-q, a normal number for q in -126 .. 126; a block whose q
 * falls outside (all its products below 2^-101) goes to the integer
 * kernel.
 *--------------------------------------------------------------------------*/
#ifdef __clang__
#define FP_UNROLL _Pragma("unroll")
#else
#define FP_UNROLL _Pragma("GCC unroll 16")
#endif

/* Whether the binary32 path runs on this CPU: wherever the integer
   kernels do. */
static bool
fp_available(void)
{
    return sf_mma_gemm_avx2_available();
}

/* The grid *Q of a block on the binary32 path from MX (fp_ep) and the
   accumulators C (finite, decoded into CSIG, CELOW), and *SCALE, 2^-q;
   false where a lane with products has q outside -126 .. 126. */
TGT __attribute__((always_inline)) static inline bool
fp_grid8(const s_mma_plan *pl, __m256i mx, __m256i c, __m256i *q,
         __m256i *csig, __m256i *celow, __m256 *scale)
{
    __m256i has = _mm256_cmpgt_epi32(mx, _mm256_setzero_si256()), bad;

    *q = block_grid(pl, fp_ep(pl, mx), c, csig, celow);
    bad = _mm256_and_si256(
        has, _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-126), *q),
                             _mm256_cmpgt_epi32(*q, _mm256_set1_epi32(126))));
    if (!_mm256_testz_si256(bad, bad))
        return false;
    *scale = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_sub_epi32(
            _mm256_set1_epi32(127),
            _mm256_min_epi32(_mm256_max_epi32(*q, _mm256_set1_epi32(-126)),
                             _mm256_set1_epi32(126))),
        23));
    return true;
}

/* One block: LEN products of A's AW[t] with the eight lanes of X[t],
   chained from the accumulators C (finite) into *RES; false (nothing
   computed) when a lane's q is outside the scaling's range. */
TGT __attribute__((always_inline)) static inline bool
fp_block8(const s_mma_plan *pl, const __m256 *x, const uint32_t *aw,
          const uint32_t *ap, size_t len, __m256i c, __m256i *res,
          s_vflags *fl, __m256i *lost)
{
    __m256i mx = _mm256_setzero_si256(), sum = mx, csig, celow, q;
    __m256 scale;

    /* pass 1: the largest 2^E_a 2^E_b of a product */
    FP_UNROLL
    for (size_t t = 0; t < len; t++) {
        __m256 e = _mm256_castsi256_ps(_mm256_and_si256(
            _mm256_castps_si256(x[t]), _mm256_set1_epi32(0x7F800000)));
        __m256 pe = _mm256_mul_ps(
            e, _mm256_castsi256_ps(_mm256_set1_epi32((int)ap[t])));
        mx = _mm256_max_epi32(mx, _mm256_castps_si256(pe));
    }
    /* emax over the non-zero products and C, as kernel8; 2^-q for a lane
       with products: q in -126 .. 126 */
    if (!fp_grid8(pl, mx, c, &q, &csig, &celow, &scale))
        return false;

    /* pass 2: each product (exact) times 2^-q, truncated */
    FP_UNROLL
    for (size_t t = 0; t < len; t++) {
        __m256 p = _mm256_mul_ps(
            x[t], _mm256_castsi256_ps(_mm256_set1_epi32((int)aw[t])));
        sum = _mm256_add_epi32(sum,
                               _mm256_cvttps_epi32(_mm256_mul_ps(p, scale)));
    }

    /* plus C, then one rounding */
    *res = result4x2(pl, lo64(sum), hi64(sum), c, csig, celow, q, fl, lost);
    return true;
}

/* The range check of 16 BF16 inputs V, folded into MN (the least |x| - 1,
   wrapping a zero to the top) and MX (the largest |x|). */
TGT static inline void
fp_range(__m256i v, __m256i *mn, __m256i *mx)
{
    __m256i ab = _mm256_and_si256(v, _mm256_set1_epi16(0x7FFF));

    *mn = _mm256_min_epu16(*mn, _mm256_sub_epi16(ab, _mm256_set1_epi16(1)));
    *mx = _mm256_max_epu16(*mx, ab);
}

/* Whether every input folded into MN and MX is in the path's range:
   min(mn, limit) == limit and max(mx, limit) == limit. */
TGT static inline bool
fp_range_ok(__m256i mn, __m256i mx)
{
    const __m256i ones = _mm256_set1_epi32(-1);

    return _mm256_testc_si256(
               _mm256_cmpeq_epi16(
                   _mm256_max_epu16(mn,
                                    _mm256_set1_epi16(S_MMA_FP_ABS_MIN - 1)),
                   mn),
               ones)
           && _mm256_testc_si256(
               _mm256_cmpeq_epi16(
                   _mm256_min_epu16(mx, _mm256_set1_epi16(S_MMA_FP_ABS_MAX)),
                   mx),
               ones);
}

/* R[u] holds key u's sixteen elements (words 0..7: elements 0..7, words
   8..15: 8..15); X[t] gets element t of the eight keys as binary32 (lane
   l: key l).  The 8 x 8 word transposition in each 128-bit half, then
   each element's keys into the high halves of 32-bit lanes. */
#ifdef __clang__
#define FP_UNROLL8 _Pragma("unroll")
#else
#define FP_UNROLL8 _Pragma("GCC unroll 8")
#endif
TGT static inline void
fp_transpose8(const __m256i *r, __m256 *x)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i a[8], b[8];

    FP_UNROLL8
    for (size_t u = 0; u < 4; u++) {
        a[2 * u] = _mm256_unpacklo_epi16(r[2 * u], r[2 * u + 1]);
        a[2 * u + 1] = _mm256_unpackhi_epi16(r[2 * u], r[2 * u + 1]);
    }
    FP_UNROLL8
    for (size_t v = 0; v < 4; v++) {
        size_t u = v / 2, h = v % 2;
        b[4 * u + 2 * h] =
            _mm256_unpacklo_epi32(a[4 * u + h], a[4 * u + 2 + h]);
        b[4 * u + 2 * h + 1] =
            _mm256_unpackhi_epi32(a[4 * u + h], a[4 * u + 2 + h]);
    }
    FP_UNROLL8
    for (size_t c = 0; c < 4; c++) {
        /* elements 2c, 2c + 1 (and 8 more in the high half) */
        __m256i o[2] = {_mm256_unpacklo_epi64(b[c], b[4 + c]),
                        _mm256_unpackhi_epi64(b[c], b[4 + c])};
        FP_UNROLL8
        for (size_t g = 0; g < 2; g++) {
            __m256i lo = _mm256_unpacklo_epi16(zero, o[g]),
                    hi = _mm256_unpackhi_epi16(zero, o[g]);
            x[2 * c + g] =
                _mm256_castsi256_ps(_mm256_permute2x128_si256(lo, hi, 0x20));
            x[2 * c + g + 8] =
                _mm256_castsi256_ps(_mm256_permute2x128_si256(lo, hi, 0x31));
        }
    }
}

/* D = A B^T + C for one row of A (K elements, all in range) and the
   COLS x K matrix BT (row-major), under an entered ENV and
   S_MMA_MXCSR_DEFAULT: eight columns at a time, chained block by block
   in registers; a block of BT outside the path's range (or a non-finite
   accumulator, or q outside the scaling's range) goes to the scalar
   block, lane by lane. */
TGT static void
gemm_nt_fp(const s_mma_plan *pl, size_t cols, size_t k, const uint16_t *a,
           const uint16_t *bt, const uint32_t *c, uint32_t *d, sf_env *env,
           unsigned *flags)
{
    const size_t step = pl->m->n;
    uint32_t aw[S_MMA_FP_ROW_MAX], ap[S_MMA_FP_ROW_MAX];
    uint16_t pad[8 * 16];

    (void)s_mma_fp_side_a(a, k, aw, ap);
    for (size_t j0 = 0; j0 < cols; j0 += 8) {
        size_t nl = cols - j0 < 8 ? cols - j0 : 8;
        uint32_t t8[8] = {0};
        __m256i acc;

        if (c != NULL)
            memcpy(t8, c + j0, nl * sizeof *t8);
        if (j0 + 16 <= cols)
            /* the next 8 rows of BT */
            s_mma_prefetch_rows(bt + (j0 + 8) * k, k, 8, k * 2);
        acc = _mm256_loadu_si256((const __m256i *)(const void *)t8);
        for (size_t k0 = 0; k0 < k; k0 += step) {
            size_t len = k - k0 < step ? k - k0 : step;
            const uint16_t *src = bt + j0 * k + k0;
            size_t ld = k;
            __m256i r[8], mn = _mm256_set1_epi16(-1),
                          mx = _mm256_setzero_si256(), res;
            __m256 x[16];
            s_vflags fl = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                           _mm256_setzero_si256()};
            __m256i lost = _mm256_setzero_si256();
            bool done = false;

            if (!c_special(acc)) {
                if (nl < 8 || len < 16) {
                    /* a partial tile: zeros around it */
                    memset(pad, 0, sizeof pad);
                    for (size_t l = 0; l < nl; l++)
                        memcpy(pad + 16 * l, src + l * k, len * sizeof *pad);
                    src = pad;
                    ld = 16;
                }
                for (size_t u = 0; u < 8; u++) {
                    r[u] = _mm256_loadu_si256(
                        (const __m256i *)(const void *)(src + u * ld));
                    fp_range(r[u], &mn, &mx);
                }
                if (fp_range_ok(mn, mx)) {
                    fp_transpose8(r, x);
                    done = len == 16 ? fp_block8(pl, x, aw + k0, ap + k0, 16,
                                                 acc, &res, &fl, &lost)
                                     : fp_block8(pl, x, aw + k0, ap + k0, len,
                                                 acc, &res, &fl, &lost);
                }
            }
            if (done) {
                acc = res;
                *flags |= fp_flags(&fl, lost);
                continue;
            }
            /* the scalar block, lane by lane */
            {
                s_mma_vec va = {a + k0, 1, 2};
                _mm256_storeu_si256((__m256i *)(void *)t8, acc);
                for (size_t l = 0; l < nl; l++) {
                    s_mma_vec vb = {bt + (j0 + l) * k + k0, 1, 2};
                    t8[l] = (uint32_t)s_mma_block(pl->m, pl->fa, &va, pl->fb,
                                                  &vb, len, k0, t8[l], env);
                }
                acc = _mm256_loadu_si256((const __m256i *)(const void *)t8);
            }
        }
        _mm256_storeu_si256((__m256i *)(void *)t8, acc);
        memcpy(d + j0, t8, nl * sizeof *t8);
    }
}

/* D = A B + C for one row of A (K elements, all in range) and B as
   stored (K x COLS), under an entered ENV and S_MMA_MXCSR_DEFAULT: block
   by block of K, eight columns at a time (the last ones by the tiled
   path's kernels), the accumulators in D; a block of B outside the
   path's range goes to the integer kernel (then the scalar block). */
TGT static void
gemm_row_fp(const s_mma_plan *pl, size_t cols, size_t k, const uint16_t *a,
            const uint16_t *b, size_t ldb, const uint32_t *c, uint32_t *d,
            sf_env *env, unsigned *flags)
{
    const size_t step = pl->m->n;
    const s_mma_dec da = s_mma_dec_init(pl->fa, pl->m->daz, 0),
                    db = s_mma_dec_init(pl->fb, pl->m->daz, pl->lb);
    uint32_t aw[S_MMA_FP_ROW_MAX], ap[S_MMA_FP_ROW_MAX];
    int32_t as[S_MMA_TILE_N], ae[S_MMA_TILE_N];

    (void)s_mma_fp_side_a(a, k, aw, ap);
    for (size_t j = 0; j < cols; j++)
        d[j] = c != NULL ? c[j] : 0;
    for (size_t k0 = 0; k0 < k; k0 += step) {
        size_t len = k - k0 < step ? k - k0 : step;
        if (k0 + 2 * step <= k)
            /* the next block's rows of B */
            s_mma_prefetch_rows(b + (k0 + step) * ldb, ldb, step, cols * 2);
        bool adec = false;
        for (size_t j0 = 0; j0 < cols; j0 += 8) {
            size_t nl = cols - j0 < 8 ? cols - j0 : 8;
            const uint16_t *src = b + k0 * ldb + j0;
            __m256i acc, mn = _mm256_set1_epi16(-1),
                         mx = _mm256_setzero_si256();
            __m256 x[16];
            s_vflags fl = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                           _mm256_setzero_si256()};
            __m256i lost = _mm256_setzero_si256(), res;
            bool done = false;

            if (nl == 8) {
                acc = _mm256_loadu_si256(
                    (const __m256i *)(const void *)(d + j0));
                for (size_t t = 0; t < len && !c_special(acc); t += 2) {
                    size_t t1 = t + 1 < len ? t + 1 : t;
                    fp_range(
                        _mm256_inserti128_si256(
                            _mm256_castsi128_si256(_mm_loadu_si128(
                                (const __m128i *)(const void *)(src
                                                                + t * ldb))),
                            _mm_loadu_si128(
                                (const __m128i *)(const void *)(src
                                                                + t1 * ldb)),
                            1),
                        &mn, &mx);
                }
                if (!c_special(acc) && fp_range_ok(mn, mx)) {
                    for (size_t t = 0; t < len; t++)
                        x[t] = _mm256_castsi256_ps(_mm256_slli_epi32(
                            _mm256_cvtepu16_epi32(_mm_loadu_si128(
                                (const __m128i *)(const void *)(src
                                                                + t * ldb))),
                            16));
                    done = len == 16 ? fp_block8(pl, x, aw + k0, ap + k0, 16,
                                                 acc, &res, &fl, &lost)
                                     : fp_block8(pl, x, aw + k0, ap + k0, len,
                                                 acc, &res, &fl, &lost);
                }
                if (done) {
                    _mm256_storeu_si256((__m256i *)(void *)(d + j0), res);
                    *flags |= fp_flags(&fl, lost);
                    continue;
                }
            }
            /* the integer kernel, or the scalar block */
            if (!adec)
                (void)s_mma_decode(&da, a + k0, len, as, ae);
            adec = true;
            {
                int32_t bs[S_MMA_TILE_N * 8] = {0}, be[S_MMA_TILE_N * 8];
                uint32_t tmp[8] = {0};
                bool spec = false;
                for (size_t t = 0; t < len; t++) {
                    spec |= s_mma_decode(&db, src + t * ldb, nl, bs + t * 8,
                                         be + t * 8);
                    for (size_t l = nl; l < 8; l++) {
                        bs[t * 8 + l] = 0;
                        be[t * 8 + l] = S_MMA_ZERO_E;
                    }
                }
                memcpy(tmp, d + j0, nl * sizeof *tmp);
                if (spec
                    || !kernel8(pl, as, ae, bs, be, len, tmp, flags, true)) {
                    s_mma_vec va = {a + k0, 1, 2};
                    for (size_t l = 0; l < nl; l++) {
                        s_mma_vec vb = {src + l, (ptrdiff_t)ldb, 2};
                        tmp[l] =
                            (uint32_t)s_mma_block(pl->m, pl->fa, &va, pl->fb,
                                                  &vb, len, k0, tmp[l], env);
                    }
                }
                memcpy(d + j0, tmp, nl * sizeof *tmp);
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * One row of BF16 on the host's binary32 unit, checked by the host's
 * flags (the argument: mma_local.h), as in gemm_avx512.c: chunks of up to
 * S_MMA_FP_CHUNK columns computed into a buffer without a range check, a
 * chunk that raised a host flag other than inexact (or met an Inf or NaN
 * accumulator, or a q outside the scaling's range) computed again by
 * gemm_nt_fp or gemm_row_fp.
 *--------------------------------------------------------------------------*/

/* Where a block's sixteen inputs X(t) come from: W[t / 2]'s low (t even)
   or high (t odd) halves (BT's rows transposed), or the low or high
   halves of row t of B (B's even or odd columns). */
enum
{
    FAST_W,
    FAST_LO,
    FAST_HI
};

TGT __attribute__((always_inline)) static inline __m256
fast_x(int kind, const __m256i *w, const uint16_t *b, size_t ld, size_t t)
{
    __m256i v =
        kind == FAST_W
            ? w[t / 2]
            : _mm256_loadu_si256((const __m256i *)(const void *)(b + t * ld));
    bool hi = kind == FAST_W ? (t & 1) != 0 : kind == FAST_HI;

    return _mm256_castsi256_ps(
        hi ? _mm256_and_si256(v, _mm256_set1_epi32((int)0xFFFF0000u))
           : _mm256_slli_epi32(v, 16));
}

/* One block of sixteen products for eight lanes, chained from C (finite)
   into *RES; false when a lane's q is outside the scaling's range.  Pass
   1: the largest 2^E_b 2^E_a (a float maximum, so that a subnormal one
   raises the denormal flag); pass 2 as fp_block8. */
TGT __attribute__((always_inline)) static inline bool
fast_block8(const s_mma_plan *pl, int kind, const __m256i *w,
            const uint16_t *b, size_t ld, const uint32_t *aw,
            const uint32_t *ap, __m256i c, __m256i *res, s_vflags *fl,
            __m256i *lost)
{
    const __m256i zero = _mm256_setzero_si256();
    const __m256 emask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7F800000));
    __m256 mx0 = _mm256_setzero_ps(), mx1 = mx0, scale;
    __m256i sum0 = zero, sum1 = zero, csig, celow, q, cm;

    FP_UNROLL
    for (size_t t = 0; t < 16; t++) {
        __m256 pe =
            _mm256_mul_ps(_mm256_and_ps(fast_x(kind, w, b, ld, t), emask),
                          _mm256_castsi256_ps(_mm256_set1_epi32((int)ap[t])));
        if (t & 1)
            mx1 = _mm256_max_ps(mx1, pe);
        else
            mx0 = _mm256_max_ps(mx0, pe);
    }
    if (!fp_grid8(pl, _mm256_castps_si256(_mm256_max_ps(mx0, mx1)), c, &q,
                  &csig, &celow, &scale))
        return false;
    FP_UNROLL
    for (size_t t = 0; t < 16; t++) {
        __m256i kept = _mm256_cvttps_epi32(_mm256_mul_ps(
            _mm256_mul_ps(fast_x(kind, w, b, ld, t),
                          _mm256_castsi256_ps(_mm256_set1_epi32((int)aw[t]))),
            scale));
        if (t & 1)
            sum1 = _mm256_add_epi32(sum1, kept);
        else
            sum0 = _mm256_add_epi32(sum0, kept);
    }
    sum0 = _mm256_add_epi32(sum0, sum1);
    /* plus C, then one rounding: in 32-bit lanes unless the total leaves
       them (a signed overflow) */
    cm = _mm256_srai_epi32(c, 31);
    {
        __m256i kc = c_term32(csig, celow, cm, q, lost);
        __m256i tot = _mm256_add_epi32(sum0, kc);
        __m256i wide = _mm256_and_si256(_mm256_xor_si256(sum0, tot),
                                        _mm256_xor_si256(kc, tot));
        if (_mm256_movemask_ps(_mm256_castsi256_ps(wide)) == 0) {
            *res = finish32(tot, q, pl->ovf_bits, fl);
            return true;
        }
    }
    *res = result4x2(pl, lo64(sum0), hi64(sum0), c, csig, celow, q, fl, lost);
    return true;
}

/* R[u] holds key u's sixteen elements (eight dwords); W[i] gets dword i
   of the eight keys (lane l: key l). */
TGT __attribute__((always_inline)) static inline void
fast_transpose8(const __m256i *r, __m256i *w)
{
    __m256i t[8], u[8];

    FP_UNROLL8
    for (size_t g = 0; g < 4; g++) {
        t[2 * g] = _mm256_unpacklo_epi32(r[2 * g], r[2 * g + 1]);
        t[2 * g + 1] = _mm256_unpackhi_epi32(r[2 * g], r[2 * g + 1]);
    }
    FP_UNROLL8
    for (size_t h = 0; h < 2; h++) {
        u[4 * h] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);
        u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);
        u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
    }
    FP_UNROLL8
    for (size_t i = 0; i < 4; i++) {
        w[i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x20);
        w[i + 4] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x31);
    }
}

/* The flags of FL and LOST (fp_flags). */
#define fast_flags fp_flags

/* D = A B^T + C for one row of A and the N <= S_MMA_FP_CHUNK rows of BT
   at BT (K elements each; AVAIL rows from BT on exist) into OUT
   (S_MMA_FP_CHUNK words), its flags into FLAGS; false when an
   accumulator met Inf or NaN or a q left the scaling's range.  Not
   inlined, so that none of its floating-point operations moves across
   the caller's MXCSR access. */
TGT __attribute__((noinline)) static bool
fast_nt_chunk(const s_mma_plan *pl, size_t n, size_t k, const uint32_t *aw,
              const uint32_t *ap, const uint16_t *bt, size_t avail,
              const uint32_t *c, uint32_t *out, unsigned *flags)
{
    s_vflags fl = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                   _mm256_setzero_si256()};
    __m256i lost = _mm256_setzero_si256();
    uint16_t pad[8 * 16];

    for (size_t g = 0; g < n; g += 8) {
        size_t nl = n - g < 8 ? n - g : 8;
        uint32_t t8[8] = {0};
        __m256i acc;
        if (c != NULL)
            memcpy(t8, c + g, nl * sizeof *t8);
        acc = _mm256_loadu_si256((const __m256i *)(const void *)t8);
        for (size_t k0 = 0; k0 < k; k0 += 16) {
            size_t len = k - k0 < 16 ? k - k0 : 16;
            const uint16_t *src = bt + g * k + k0;
            size_t ld = k;
            __m256i r[8], w[8];
            if (g + 16 <= avail && k0 / 16 < 8) {
                /* the next 8 rows, a few with each block */
                size_t per = (8 + (k + 15) / 16 - 1) / ((k + 15) / 16);
                size_t r0 = k0 / 16 * per;
                if (r0 < 8)
                    s_mma_prefetch_rows(bt + (g + 8 + r0) * k, k,
                                        8 - r0 < per ? 8 - r0 : per, k * 2);
            }
            if (c_special(acc))
                return false;
            if (nl < 8 || len < 16) {
                /* a partial tile: zeros around it */
                memset(pad, 0, sizeof pad);
                for (size_t l = 0; l < nl; l++)
                    memcpy(pad + 16 * l, src + l * k, len * sizeof *pad);
                src = pad;
                ld = 16;
            }
            FP_UNROLL8
            for (size_t u = 0; u < 8; u++)
                r[u] = _mm256_loadu_si256(
                    (const __m256i *)(const void *)(src + u * ld));
            fast_transpose8(r, w);
            if (!fast_block8(pl, FAST_W, w, NULL, 0, aw + k0, ap + k0, acc,
                             &acc, &fl, &lost))
                return false;
        }
        _mm256_storeu_si256((__m256i *)(void *)(out + g), acc);
    }
    *flags |= fast_flags(&fl, lost);
    return true;
}

/* D = A B + C for one row of A (K elements) and N <= S_MMA_FP_CHUNK
   columns of B (K rows at B, LD apart) into OUT (S_MMA_FP_CHUNK words),
   its flags into FLAGS; false as fast_nt_chunk.  Block by block of K, 16
   columns at a time, as their even and their odd columns. */
TGT __attribute__((noinline)) static bool
fast_row_chunk(const s_mma_plan *pl, size_t n, size_t k, const uint32_t *aw,
               const uint32_t *ap, const uint16_t *b, size_t ld,
               const uint32_t *c, uint32_t *out, unsigned *flags)
{
    const __m256i deal = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i merge = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i acc[S_MMA_FP_CHUNK / 8];
    s_vflags fl = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                   _mm256_setzero_si256()};
    __m256i lost = _mm256_setzero_si256();
    size_t ng = (n + 15) / 16, per = (16 + ng - 1) / ng;
    uint16_t pad[16 * 16];

    for (size_t g = 0; g < ng; g++) {
        size_t nl = n - 16 * g < 16 ? n - 16 * g : 16;
        uint32_t t16[16] = {0};
        __m256i p0, p1;
        if (c != NULL)
            memcpy(t16, c + 16 * g, nl * sizeof *t16);
        p0 = _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256((const __m256i *)(const void *)t16), deal);
        p1 = _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256((const __m256i *)(const void *)(t16 + 8)),
            deal);
        acc[2 * g] = _mm256_permute2x128_si256(p0, p1, 0x20);
        acc[2 * g + 1] = _mm256_permute2x128_si256(p0, p1, 0x31);
    }
    for (size_t k0 = 0; k0 < k; k0 += 16) {
        size_t len = k - k0 < 16 ? k - k0 : 16;
        const uint16_t *blk = b + k0 * ld;
        for (size_t g = 0; g < ng; g++) {
            size_t nl = n - 16 * g < 16 ? n - 16 * g : 16;
            const uint16_t *src = blk + 16 * g;
            size_t lds = ld;
            if (k0 + 32 <= k && g * per < 16)
                /* the next block's rows of B, a few with each group */
                s_mma_prefetch_rows(blk + (16 + g * per) * ld, ld,
                                    16 - g * per < per ? 16 - g * per : per,
                                    n * 2);
            if (c_special(acc[2 * g]) || c_special(acc[2 * g + 1]))
                return false;
            if (nl < 16 || len < 16) {
                /* a partial tile: zeros around it */
                memset(pad, 0, sizeof pad);
                for (size_t t = 0; t < len; t++)
                    memcpy(pad + 16 * t, src + t * ld, nl * sizeof *pad);
                src = pad;
                lds = 16;
            }
            if (!fast_block8(pl, FAST_LO, NULL, src, lds, aw + k0, ap + k0,
                             acc[2 * g], &acc[2 * g], &fl, &lost)
                || !fast_block8(pl, FAST_HI, NULL, src, lds, aw + k0, ap + k0,
                                acc[2 * g + 1], &acc[2 * g + 1], &fl, &lost))
                return false;
        }
    }
    for (size_t g = 0; g < ng; g++) {
        uint32_t t16[16];
        _mm256_storeu_si256(
            (__m256i *)(void *)t16,
            _mm256_permutevar8x32_epi32(
                _mm256_permute2x128_si256(acc[2 * g], acc[2 * g + 1], 0x20),
                merge));
        _mm256_storeu_si256(
            (__m256i *)(void *)(t16 + 8),
            _mm256_permutevar8x32_epi32(
                _mm256_permute2x128_si256(acc[2 * g], acc[2 * g + 1], 0x31),
                merge));
        memcpy(out + 16 * g, t16, sizeof t16);
    }
    *flags |= fast_flags(&fl, lost);
    return true;
}

#endif /* HAVE_VEC */

/* The tiled kernels by the plan's width, a row of B as stored, the
   flag-checked binary32 path and the entry points. */
#define GL_ISA avx2
#define GL_TGT_FP TGT
#define GL_KERNEL kernel8
#define GL_DECODE decode_lanes
#include "softfloat/mma/s_gemm_lanes.h"
