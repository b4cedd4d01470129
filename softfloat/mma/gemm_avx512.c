/* gemm_avx512 -- the AVX-512 kernels of the tiled GEMM for truncating
   fused models (sm70..sm100 style): sixteen output columns per vector,
   bit-identical to the scalar path (flags included) */
#include "softfloat/mma/mma_local.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_VEC 1
#include <immintrin.h>
#else
#define HAVE_VEC 0
#endif

bool
sf_mma_gemm_avx512_available(void)
{
#if HAVE_VEC
    /* The compiler's run-time library reads CPUID and XCR0 once (the
       AVX-512 features count only when the OS saves the zmm and opmask
       state); executing CPUID on every call costs a trap to the
       hypervisor in a virtual machine.  __builtin_cpu_init returns at
       once when that is done (it is, unless this runs from a
       constructor). */
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f")
           && __builtin_cpu_supports("avx512cd");
#else
    return false;
#endif
}

#if HAVE_VEC

#define TGT __attribute__((target("avx512f,avx512cd")))

/* Sixteen elements of B decoded (s_mma_decode). */
TGT __attribute__((always_inline)) static inline bool
decode16(const s_mma_dec *d, const uint16_t *x, int32_t *sig, int32_t *e)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i v = _mm512_cvtepu16_epi32(
        _mm256_loadu_si256((const __m256i *)(const void *)x));
    __m512i ef =
        _mm512_and_si512(_mm512_srlv_epi32(v, _mm512_set1_epi32((int)d->fb)),
                         _mm512_set1_epi32((int)d->emask));
    __m512i fr = _mm512_and_si512(v, _mm512_set1_epi32((int)d->fmask));
    __mmask16 sub = _mm512_cmpeq_epi32_mask(ef, zero);
    __mmask16 sp =
        _mm512_cmpeq_epi32_mask(ef, _mm512_set1_epi32((int)d->emask));
    __mmask16 neg =
        _mm512_test_epi32_mask(v, _mm512_set1_epi32((int)d->smask));
    __mmask16 kill = sp | (d->daz ? sub : 0), nz;
    __m512i s = _mm512_mask_or_epi32(fr, (__mmask16)~sub, fr,
                                     _mm512_set1_epi32((int)d->hidden));
    __m512i el;

    s = _mm512_mask_mov_epi32(s, kill, zero);
    nz = _mm512_test_epi32_mask(s, s);
    s = _mm512_sllv_epi32(s, _mm512_set1_epi32(d->shift));
    s = _mm512_mask_sub_epi32(s, neg, zero, s);
    el = _mm512_sub_epi32(_mm512_mask_mov_epi32(ef, sub, _mm512_set1_epi32(1)),
                          _mm512_set1_epi32(d->ebias));
    el = _mm512_mask_mov_epi32(_mm512_set1_epi32(S_MMA_ZERO_E), nz, el);
    _mm512_storeu_si512((void *)sig, s);
    _mm512_storeu_si512((void *)e, el);
    return sp != 0;
}

/* Flags of the lanes, as the scalar path raises them. */
typedef struct
{
    __mmask8 inexact, underflow, overflow;
} s_vflags;

/* The accumulator's term on the grid 2^Q for eight lanes (64-bit). */
TGT static inline __m512i
c_term8(__m512i csig, __m512i celow, __mmask8 cneg, __m512i q, __mmask8 *lost)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i shc = _mm512_sub_epi64(q, celow);
    __m512i r = _mm512_srlv_epi64(csig, shc);
    __m512i kc = _mm512_or_si512(
        r, _mm512_sllv_epi64(csig, _mm512_sub_epi64(zero, shc)));

    *lost |= _mm512_mask_cmpneq_epi64_mask(_mm512_cmpgt_epi64_mask(shc, zero),
                                           _mm512_sllv_epi64(r, shc), csig);
    return _mm512_mask_sub_epi64(kc, cneg, zero, kc);
}

/* Eight results: the sum TOT on the grid 2^Q normalised once and
   truncated (RZ) to FP32, in the low 32 bits of each lane. */
TGT static inline __m512i
finish8(__m512i tot, __m512i q, uint32_t ovf_bits, s_vflags *fl)
{
    const __m512i zero = _mm512_setzero_si512();
    __mmask8 negs = _mm512_cmplt_epi64_mask(tot, zero);
    __m512i mag = _mm512_abs_epi64(tot);
    __mmask8 zs = _mm512_cmpeq_epi64_mask(mag, zero);
    __m512i t =
        _mm512_sub_epi64(_mm512_set1_epi64(63), _mm512_lzcnt_epi64(mag));
    __m512i ex = _mm512_add_epi64(q, t);
    __m512i sh =
        _mm512_max_epi64(_mm512_sub_epi64(t, _mm512_set1_epi64(23)),
                         _mm512_sub_epi64(_mm512_set1_epi64(-149), q));
    __mmask8 rpos = _mm512_cmpgt_epi64_mask(sh, zero);
    /* a shift count outside 0..63 gives 0, so one of the two is 0 */
    __m512i mm =
        _mm512_or_si512(_mm512_srlv_epi64(mag, sh),
                        _mm512_sllv_epi64(mag, _mm512_sub_epi64(zero, sh)));
    __mmask8 inexf =
        _mm512_mask_cmpneq_epi64_mask(rpos, _mm512_sllv_epi64(mm, sh), mag);
    __mmask8 normal = _mm512_cmpge_epi64_mask(ex, _mm512_set1_epi64(-126));
    __mmask8 ovf = _mm512_cmpgt_epi64_mask(ex, _mm512_set1_epi64(127));
    __m512i field = _mm512_maskz_add_epi64(normal, ex, _mm512_set1_epi64(126));
    __m512i bits = _mm512_add_epi64(_mm512_slli_epi64(field, 23), mm);

    bits = _mm512_mask_mov_epi64(bits, ovf, _mm512_set1_epi64(ovf_bits));
    /* a result that truncates to zero is +0 (SF_MMA_ZERO_POS) */
    bits = _mm512_mask_or_epi64(bits,
                                negs & (_mm512_test_epi64_mask(mm, mm) | ovf),
                                bits, _mm512_set1_epi64(0x80000000));
    bits = _mm512_mask_mov_epi64(bits, zs, zero);
    inexf &= (__mmask8)~zs;
    ovf &= (__mmask8)~zs;
    fl->inexact |= inexf | ovf;
    fl->underflow |= inexf & (__mmask8)~normal;
    fl->overflow |= ovf;
    return bits;
}

TGT static inline __m512i
lo64(__m512i x)
{
    return _mm512_cvtepi32_epi64(_mm512_castsi512_si256(x));
}

TGT static inline __m512i
hi64(__m512i x)
{
    return _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(x, 1));
}

/* One block for sixteen lanes; NARROW: the products and their sum in
   32-bit lanes (pl->narrow, pl->lp == 0), else in 64-bit lanes. */
TGT __attribute__((always_inline)) static inline bool
kernel16(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
         const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
         unsigned *flags, bool narrow)
{
    const sf_mma_model *m = pl->m;
    const __m512i zero = _mm512_setzero_si512();
    __m512i mx = _mm512_set1_epi32(2 * S_MMA_ZERO_E);
    __m512i c, cef, csig, celow, cc, emax, q, lostv = zero, s0 = zero,
                                              s1 = zero;
    __mmask16 csub, cneg;
    __mmask8 lost = 0;
    s_vflags fl = {0, 0, 0};
    unsigned f = 0;

    c = _mm512_loadu_si512((const void *)acc);
    cef = _mm512_and_si512(_mm512_srli_epi32(c, 23), _mm512_set1_epi32(0xFF));
    if (_mm512_cmpeq_epi32_mask(cef, _mm512_set1_epi32(0xFF)) != 0)
        return false;

    /* pass 1: the largest exponent of a non-zero product */
    for (size_t t = 0; t < len; t++)
        mx = _mm512_max_epi32(
            mx,
            _mm512_add_epi32(_mm512_set1_epi32(ae[t]),
                             _mm512_loadu_si512((const void *)(be + t * 16))));

    /* C: a term of the block, and part of emax */
    csub = _mm512_cmpeq_epi32_mask(cef, zero);
    cneg = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)0x80000000u));
    csig = _mm512_and_si512(c, _mm512_set1_epi32(0x7FFFFF));
    csig = _mm512_mask_or_epi32(csig, (__mmask16)~csub, csig,
                                _mm512_set1_epi32(0x800000));
    if (m->daz)
        csig = _mm512_mask_mov_epi32(csig, csub, zero);
    celow = _mm512_sub_epi32(_mm512_max_epi32(cef, _mm512_set1_epi32(1)),
                             _mm512_set1_epi32(150));
    cc = _mm512_mask_mov_epi32(
        _mm512_set1_epi32(m->zero_c_in_max ? m->acc->emin : INT32_MIN),
        _mm512_test_epi32_mask(csig, csig),
        _mm512_add_epi32(celow, _mm512_set1_epi32(23)));
    emax = _mm512_max_epi32(_mm512_add_epi32(mx, _mm512_set1_epi32(pl->qadd)),
                            cc);
    if (m->emax_floor != SF_MMA_NO_FLOOR)
        emax = _mm512_max_epi32(emax, _mm512_set1_epi32(m->emax_floor));
    q = _mm512_sub_epi32(emax, _mm512_set1_epi32(pl->f));

    /* pass 2: every product on the grid 2^q, truncated; the shift is
       never negative */
    if (narrow) {
        __m512i sum = zero;
        for (size_t t = 0; t < len; t++) {
            __m512i p = _mm512_mullo_epi32(
                _mm512_set1_epi32(as[t]),
                _mm512_loadu_si512((const void *)(bs + t * 16)));
            __m512i sh = _mm512_sub_epi32(
                _mm512_sub_epi32(q, _mm512_set1_epi32(ae[t])),
                _mm512_loadu_si512((const void *)(be + t * 16)));
            __m512i ap = _mm512_abs_epi32(p);
            __m512i kept = _mm512_srlv_epi32(ap, sh);
            __mmask16 ng = _mm512_cmplt_epi32_mask(p, zero);
            /* lostv | (ap ^ (kept << sh)) */
            lostv = _mm512_ternarylogic_epi32(
                lostv, ap, _mm512_sllv_epi32(kept, sh), 0xF6);
            sum = _mm512_mask_sub_epi32(_mm512_add_epi32(sum, kept), ng, sum,
                                        kept);
        }
        s0 = lo64(sum);
        s1 = hi64(sum);
    } else {
        const __m512i lp = _mm512_set1_epi64(pl->lp);
        for (size_t t = 0; t < len; t++) {
            __m512i p = _mm512_mullo_epi32(
                _mm512_set1_epi32(as[t]),
                _mm512_loadu_si512((const void *)(bs + t * 16)));
            __m512i sh = _mm512_add_epi32(
                _mm512_sub_epi32(
                    _mm512_sub_epi32(q, _mm512_set1_epi32(ae[t])),
                    _mm512_loadu_si512((const void *)(be + t * 16))),
                _mm512_set1_epi32(pl->lp));
            __m512i ap = _mm512_abs_epi32(p);
            __mmask16 ng = _mm512_cmplt_epi32_mask(p, zero);
            __m512i a0 = _mm512_sllv_epi64(lo64(ap), lp),
                    a1 = _mm512_sllv_epi64(hi64(ap), lp);
            __m512i h0 = lo64(sh), h1 = hi64(sh);
            __m512i k0 = _mm512_srlv_epi64(a0, h0),
                    k1 = _mm512_srlv_epi64(a1, h1);
            lostv = _mm512_ternarylogic_epi64(lostv, a0,
                                              _mm512_sllv_epi64(k0, h0), 0xF6);
            lostv = _mm512_ternarylogic_epi64(lostv, a1,
                                              _mm512_sllv_epi64(k1, h1), 0xF6);
            s0 = _mm512_mask_sub_epi64(_mm512_add_epi64(s0, k0), (__mmask8)ng,
                                       s0, k0);
            s1 = _mm512_mask_sub_epi64(_mm512_add_epi64(s1, k1),
                                       (__mmask8)(ng >> 8), s1, k1);
        }
    }

    /* plus C, then one rounding */
    {
        __m512i q0 = lo64(q), q1 = hi64(q), r0, r1;
        s0 = _mm512_add_epi64(
            s0, c_term8(lo64(csig), lo64(celow), (__mmask8)cneg, q0, &lost));
        s1 = _mm512_add_epi64(s1, c_term8(hi64(csig), hi64(celow),
                                          (__mmask8)(cneg >> 8), q1, &lost));
        r0 = finish8(s0, q0, pl->ovf_bits, &fl);
        r1 = finish8(s1, q1, pl->ovf_bits, &fl);
        _mm512_storeu_si512(
            (void *)acc, _mm512_inserti64x4(
                             _mm512_castsi256_si512(_mm512_cvtepi64_epi32(r0)),
                             _mm512_cvtepi64_epi32(r1), 1));
    }
    if (lost | fl.inexact || _mm512_test_epi32_mask(lostv, lostv) != 0)
        f |= SF_FLAG_INEXACT;
    if (fl.underflow)
        f |= SF_FLAG_UNDERFLOW;
    if (fl.overflow)
        f |= SF_FLAG_OVERFLOW;
    *flags |= f;
    return true;
}

TGT static bool
kernel_narrow(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
              const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
              unsigned *flags)
{
    return kernel16(pl, as, ae, bs, be, len, acc, flags, true);
}

TGT static bool
kernel_wide(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
            const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
            unsigned *flags)
{
    return kernel16(pl, as, ae, bs, be, len, acc, flags, false);
}

/* One row against LEN rows of B as stored (s_mma_rowkernel): B decoded
   here, with the format's fields in registers for the whole block. */
TGT __attribute__((always_inline)) static inline bool
row16(const s_mma_plan *pl, const s_mma_dec *db, const int32_t *as,
      const int32_t *ae, const uint16_t *b, size_t ld, size_t len,
      uint32_t *acc, unsigned *flags, bool narrow)
{
    const s_mma_dec dl = *db;
    int32_t bs[S_MMA_TILE_N * 16], be[S_MMA_TILE_N * 16];
    bool spec = false;

    for (size_t t = 0; t < len; t++)
        spec |= decode16(&dl, b + t * ld, bs + t * 16, be + t * 16);
    if (spec)
        return false;
    return kernel16(pl, as, ae, bs, be, len, acc, flags, narrow);
}

TGT static bool
row_narrow(const s_mma_plan *pl, const s_mma_dec *db, const int32_t *as,
           const int32_t *ae, const uint16_t *b, size_t ld, size_t len,
           uint32_t *acc, unsigned *flags)
{
    return row16(pl, db, as, ae, b, ld, len, acc, flags, true);
}

TGT static bool
row_wide(const s_mma_plan *pl, const s_mma_dec *db, const int32_t *as,
         const int32_t *ae, const uint16_t *b, size_t ld, size_t len,
         uint32_t *acc, unsigned *flags)
{
    return row16(pl, db, as, ae, b, ld, len, acc, flags, false);
}

#endif /* HAVE_VEC */

bool
s_mma_gemm_avx512(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                  const sf_format *fa, const void *a, const sf_format *fb,
                  const void *b, const uint32_t *c, uint32_t *d, sf_env *env)
{
#if HAVE_VEC
    s_mma_plan pl;

    if (!sf_mma_gemm_avx512_available())
        return false;
    s_mma_plan_init(&pl, m, fa, fb, 16, true);
    pl.decode = decode16;
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
