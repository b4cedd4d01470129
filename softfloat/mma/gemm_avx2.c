/* gemm_avx2 -- the AVX2 kernels of the tiled GEMM for truncating fused
   models (sm70..sm100 style): eight output columns per vector,
   bit-identical to the scalar path (flags included) */
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

#if HAVE_VEC

#define TGT __attribute__((target("avx2,fma,f16c,bmi2")))

/* Eight elements of B decoded (s_mma_decode). */
TGT __attribute__((always_inline)) static inline bool
decode8(const s_mma_dec *d, const uint16_t *x, int32_t *sig, int32_t *e)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i v = _mm256_cvtepu16_epi32(
        _mm_loadu_si128((const __m128i *)(const void *)x));
    __m256i ef =
        _mm256_and_si256(_mm256_srlv_epi32(v, _mm256_set1_epi32((int)d->fb)),
                         _mm256_set1_epi32((int)d->emask));
    __m256i fr = _mm256_and_si256(v, _mm256_set1_epi32((int)d->fmask));
    __m256i sub = _mm256_cmpeq_epi32(ef, zero);
    __m256i sp = _mm256_cmpeq_epi32(ef, _mm256_set1_epi32((int)d->emask));
    __m256i s = _mm256_or_si256(
        fr, _mm256_andnot_si256(sub, _mm256_set1_epi32((int)d->hidden)));
    __m256i neg, m, el;

    s = _mm256_andnot_si256(
        _mm256_or_si256(sp,
                        _mm256_and_si256(sub, _mm256_set1_epi32((int)d->daz))),
        s);
    neg = _mm256_cmpeq_epi32(
        _mm256_and_si256(v, _mm256_set1_epi32((int)d->smask)),
        _mm256_set1_epi32((int)d->smask));
    m = _mm256_sub_epi32(
        _mm256_xor_si256(_mm256_sllv_epi32(s, _mm256_set1_epi32(d->shift)),
                         neg),
        neg);
    el = _mm256_sub_epi32(
        _mm256_or_si256(ef, _mm256_and_si256(sub, _mm256_set1_epi32(1))),
        _mm256_set1_epi32(d->ebias));
    el = _mm256_blendv_epi8(el, _mm256_set1_epi32(S_MMA_ZERO_E),
                            _mm256_cmpeq_epi32(s, zero));
    _mm256_storeu_si256((__m256i *)(void *)sig, m);
    _mm256_storeu_si256((__m256i *)(void *)e, el);
    return !_mm256_testz_si256(sp, sp);
}

/* Flags of the lanes, as the scalar path raises them (any set bit). */
typedef struct
{
    __m256i inexact, underflow, overflow;
} s_vflags;

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

/* One block for eight lanes; NARROW: the products and their sum in
   32-bit lanes (pl->narrow, pl->lp == 0), else in 64-bit lanes. */
TGT __attribute__((always_inline)) static inline bool
kernel8(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
        const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
        unsigned *flags, bool narrow)
{
    const sf_mma_model *m = pl->m;
    const __m256i zero = _mm256_setzero_si256();
    __m256i mx = _mm256_set1_epi32(2 * S_MMA_ZERO_E);
    __m256i c, cef, cfr, csub, csig, celow, cc, emax, q, cm;
    __m256i lost = zero, s0 = zero, s1 = zero, r0, r1, res;
    s_vflags fl = {zero, zero, zero};
    unsigned f = 0;

    /* pass 1: the largest exponent of a non-zero product */
    for (size_t t = 0; t < len; t++)
        mx = _mm256_max_epi32(
            mx,
            _mm256_add_epi32(_mm256_set1_epi32(ae[t]),
                             _mm256_loadu_si256((
                                 const __m256i *)(const void *)(be + t * 8))));

    /* C: a term of the block, and part of emax */
    c = _mm256_loadu_si256((const __m256i *)(const void *)acc);
    cef = _mm256_and_si256(_mm256_srli_epi32(c, 23), _mm256_set1_epi32(0xFF));
    if (!_mm256_testz_si256(_mm256_cmpeq_epi32(cef, _mm256_set1_epi32(0xFF)),
                            _mm256_set1_epi32(-1)))
        return false;
    cfr = _mm256_and_si256(c, _mm256_set1_epi32(0x7FFFFF));
    csub = _mm256_cmpeq_epi32(cef, zero);
    csig = _mm256_or_si256(
        cfr, _mm256_andnot_si256(csub, _mm256_set1_epi32(0x800000)));
    if (m->daz)
        csig = _mm256_andnot_si256(csub, csig);
    celow = _mm256_sub_epi32(_mm256_max_epi32(cef, _mm256_set1_epi32(1)),
                             _mm256_set1_epi32(150));
    cc = _mm256_blendv_epi8(
        _mm256_add_epi32(celow, _mm256_set1_epi32(23)),
        _mm256_set1_epi32(m->zero_c_in_max ? m->acc->emin : INT32_MIN),
        _mm256_cmpeq_epi32(csig, zero));
    emax = _mm256_max_epi32(_mm256_add_epi32(mx, _mm256_set1_epi32(pl->qadd)),
                            cc);
    if (m->emax_floor != SF_MMA_NO_FLOOR)
        emax = _mm256_max_epi32(emax, _mm256_set1_epi32(m->emax_floor));
    q = _mm256_sub_epi32(emax, _mm256_set1_epi32(pl->f));

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
    cm = _mm256_srai_epi32(c, 31);
    s0 = _mm256_add_epi64(
        s0, c_term4(lo64(csig), lo64(celow), lo64(cm), lo64(q), &lost));
    s1 = _mm256_add_epi64(
        s1, c_term4(hi64(csig), hi64(celow), hi64(cm), hi64(q), &lost));
    r0 = finish4(s0, lo64(q), pl->ovf_bits, &fl);
    r1 = finish4(s1, hi64(q), pl->ovf_bits, &fl);
    {
        const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        res = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(r0, even),
                                        _mm256_permutevar8x32_epi32(r1, even),
                                        0x20);
    }
    _mm256_storeu_si256((__m256i *)(void *)acc, res);
    if (!_mm256_testz_si256(_mm256_or_si256(lost, fl.inexact),
                            _mm256_or_si256(lost, fl.inexact)))
        f |= SF_FLAG_INEXACT;
    if (!_mm256_testz_si256(fl.underflow, fl.underflow))
        f |= SF_FLAG_UNDERFLOW;
    if (!_mm256_testz_si256(fl.overflow, fl.overflow))
        f |= SF_FLAG_OVERFLOW;
    *flags |= f;
    return true;
}

TGT static bool
kernel_narrow(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
              const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
              unsigned *flags)
{
    return kernel8(pl, as, ae, bs, be, len, acc, flags, true);
}

TGT static bool
kernel_wide(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
            const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
            unsigned *flags)
{
    return kernel8(pl, as, ae, bs, be, len, acc, flags, false);
}

/* One row against LEN rows of B as stored (s_mma_rowkernel): B decoded
   here, with the format's fields in registers for the whole block. */
TGT __attribute__((always_inline)) static inline bool
row8(const s_mma_plan *pl, const s_mma_dec *db, const int32_t *as,
     const int32_t *ae, const uint16_t *b, size_t ld, size_t len,
     uint32_t *acc, unsigned *flags, bool narrow)
{
    const s_mma_dec dl = *db;
    int32_t bs[S_MMA_TILE_N * 8], be[S_MMA_TILE_N * 8];
    bool spec = false;

    for (size_t t = 0; t < len; t++)
        spec |= decode8(&dl, b + t * ld, bs + t * 8, be + t * 8);
    if (spec)
        return false;
    return kernel8(pl, as, ae, bs, be, len, acc, flags, narrow);
}

TGT static bool
row_narrow(const s_mma_plan *pl, const s_mma_dec *db, const uint16_t *a,
           const int32_t *as, const int32_t *ae, const uint16_t *b, size_t ld,
           size_t len, uint32_t *acc, unsigned *flags)
{
    (void)a;
    return row8(pl, db, as, ae, b, ld, len, acc, flags, true);
}

TGT static bool
row_wide(const s_mma_plan *pl, const s_mma_dec *db, const uint16_t *a,
         const int32_t *as, const int32_t *ae, const uint16_t *b, size_t ld,
         size_t len, uint32_t *acc, unsigned *flags)
{
    (void)a;
    return row8(pl, db, as, ae, b, ld, len, acc, flags, false);
}

#endif /* HAVE_VEC */

bool
s_mma_gemm_avx2(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                const sf_format *fa, const void *a, const sf_format *fb,
                const void *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
#if HAVE_VEC
    s_mma_plan pl;

    if (!sf_mma_gemm_avx2_available())
        return false;
    s_mma_plan_init(&pl, m, fa, fb, 8, true);
    pl.decode = decode8;
    pl.row = pl.narrow ? row_narrow : row_wide;
    s_mma_gemm_tiled(&pl, pl.narrow ? kernel_narrow : kernel_wide, rows, cols,
                     k, a, b, c, d, env);
    return true;
#else
    (void)m;
    (void)rows;
    (void)cols;
    (void)k;
    (void)fa;
    (void)a;
    (void)fb;
    (void)b;
    (void)c;
    (void)d;
    (void)env;
    return false;
#endif
}
