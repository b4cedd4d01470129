/* gemm_avx512 -- the AVX-512 kernels of the tiled GEMM for truncating
   fused models (sm70..sm100 style): sixteen output columns per vector,
   bit-identical to the scalar path (flags included) */
#include <string.h>

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
/* C of a block (CEF: its biased exponents): its significand CSIG (the
   hidden bit set where normal; 0 for a subnormal under DAZ), the exponent
   CELOW of its lowest bit, and, returned, its part of emax (the exponent
   of its top bit; the model's value for a zero C). */
TGT __attribute__((always_inline)) static inline __m512i
c_decode16(const sf_mma_model *m, __m512i c, __m512i cef, __m512i *csig,
           __m512i *celow)
{
    const __m512i zero = _mm512_setzero_si512();
    __mmask16 csub = _mm512_cmpeq_epi32_mask(cef, zero);
    __m512i sig = _mm512_and_si512(c, _mm512_set1_epi32(0x7FFFFF));

    sig = _mm512_mask_or_epi32(sig, (__mmask16)~csub, sig,
                               _mm512_set1_epi32(0x800000));
    if (m->daz)
        sig = _mm512_mask_mov_epi32(sig, csub, zero);
    *csig = sig;
    *celow = _mm512_sub_epi32(_mm512_max_epi32(cef, _mm512_set1_epi32(1)),
                              _mm512_set1_epi32(150));
    return _mm512_mask_mov_epi32(
        _mm512_set1_epi32(m->zero_c_in_max ? m->acc->emin : INT32_MIN),
        _mm512_test_epi32_mask(sig, sig),
        _mm512_add_epi32(*celow, _mm512_set1_epi32(23)));
}

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
    __mmask16 cneg;
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
    cneg = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)0x80000000u));
    cc = c_decode16(m, c, cef, &csig, &celow);
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
row_narrow(const s_mma_plan *pl, const s_mma_dec *db, const uint16_t *a,
           const int32_t *as, const int32_t *ae, const uint16_t *b, size_t ld,
           size_t len, uint32_t *acc, unsigned *flags)
{
    (void)a;
    return row16(pl, db, as, ae, b, ld, len, acc, flags, true);
}

TGT static bool
row_wide(const s_mma_plan *pl, const s_mma_dec *db, const uint16_t *a,
         const int32_t *as, const int32_t *ae, const uint16_t *b, size_t ld,
         size_t len, uint32_t *acc, unsigned *flags)
{
    (void)a;
    return row16(pl, db, as, ae, b, ld, len, acc, flags, false);
}

/*----------------------------------------------------------------------------
 * BF16 times BF16 on the host's binary32 unit, one row of A (why it gives
 * the block's bits: mma_local.h).  C, the normalisation and the flags of
 * the result are the integer kernel's (c_term8, finish8).
 *--------------------------------------------------------------------------*/
#define TGTBW                                                                 \
    __attribute__((target("avx512f,avx512cd,avx512bw,avx512dq,avx512vl")))

#ifdef __clang__
#define FP_UNROLL _Pragma("unroll")
#else
#define FP_UNROLL _Pragma("GCC unroll 16")
#endif

static bool
fp_available(void)
{
    return sf_mma_gemm_avx512_available() && __builtin_cpu_supports("avx512bw")
           && __builtin_cpu_supports("avx512dq")
           && __builtin_cpu_supports("avx512vl");
}

/* Whether model M with inputs FA, FB and plan PL takes the binary32
   path. */
static bool
fp_covers(const s_mma_plan *pl, const sf_format *fa, const sf_format *fb)
{
    return fa == &sf_format_bf16 && fb == &sf_format_bf16 && pl->narrow
           && pl->m->n <= 16 && fp_available();
}

/* The range check of 32 BF16 inputs V, folded into MN (the least |x| - 1,
   wrapping a zero to the top) and MX (the largest |x|). */
TGTBW static inline void
fp_range(__m512i v, __m512i *mn, __m512i *mx)
{
    __m512i ab = _mm512_and_si512(v, _mm512_set1_epi16(0x7FFF));

    *mn = _mm512_min_epu16(*mn, _mm512_sub_epi16(ab, _mm512_set1_epi16(1)));
    *mx = _mm512_max_epu16(*mx, ab);
}

TGTBW static inline bool
fp_range_ok(__m512i mn, __m512i mx)
{
    return _mm512_cmplt_epu16_mask(mn, _mm512_set1_epi16(S_MMA_FP_ABS_MIN - 1))
               == 0
           && _mm512_cmpgt_epu16_mask(mx, _mm512_set1_epi16(S_MMA_FP_ABS_MAX))
                  == 0;
}

/* Whether one of the sixteen accumulators C is Inf or NaN. */
TGTBW static inline bool
fp_c_special(__m512i c)
{
    __m512i e = _mm512_and_si512(c, _mm512_set1_epi32(0x7F800000));

    return _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(0x7F800000)) != 0;
}

/* One block: LEN products of A's AW[t] with the sixteen lanes of X[t],
   chained from the accumulators C (finite); returns the sixteen
   results. */
TGTBW __attribute__((always_inline)) static inline __m512i
fp_block(const s_mma_plan *pl, const __m512 *x, const uint32_t *aw,
         const uint32_t *ap, size_t len, __m512i c, s_vflags *fl,
         __mmask8 *lost)
{
    const sf_mma_model *m = pl->m;
    const __m512i zero = _mm512_setzero_si512();
    __m512i mx = zero, sum = zero, cef, csig, celow, cc, emax, q, ep;
    __m512 nq;
    __mmask16 cneg;

    /* pass 1: the largest 2^E_a 2^E_b of a product */
    FP_UNROLL
    for (size_t t = 0; t < len; t++) {
        __m512 e = _mm512_castsi512_ps(_mm512_and_si512(
            _mm512_castps_si512(x[t]), _mm512_set1_epi32(0x7F800000)));
        __m512 pe = _mm512_mul_ps(
            e, _mm512_castsi512_ps(_mm512_set1_epi32((int)ap[t])));
        mx = _mm512_max_epi32(mx, _mm512_castps_si512(pe));
    }
    /* emax over the non-zero products (the integer kernel's value when
       there is none) and C, as kernel16 */
    ep = _mm512_mask_mov_epi32(
        _mm512_set1_epi32(2 * S_MMA_ZERO_E + pl->qadd),
        _mm512_test_epi32_mask(mx, mx),
        _mm512_sub_epi32(_mm512_srli_epi32(mx, 23), _mm512_set1_epi32(127)));
    cef = _mm512_and_si512(_mm512_srli_epi32(c, 23), _mm512_set1_epi32(0xFF));
    cneg = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)0x80000000u));
    cc = c_decode16(m, c, cef, &csig, &celow);
    emax = _mm512_max_epi32(ep, cc);
    if (m->emax_floor != SF_MMA_NO_FLOOR)
        emax = _mm512_max_epi32(emax, _mm512_set1_epi32(m->emax_floor));
    q = _mm512_sub_epi32(emax, _mm512_set1_epi32(pl->f));
    nq = _mm512_cvtepi32_ps(_mm512_sub_epi32(zero, q));

    /* pass 2: each product (exact) times 2^-q, truncated */
    FP_UNROLL
    for (size_t t = 0; t < len; t++) {
        __m512 p = _mm512_mul_ps(
            x[t], _mm512_castsi512_ps(_mm512_set1_epi32((int)aw[t])));
        sum = _mm512_add_epi32(sum,
                               _mm512_cvttps_epi32(_mm512_scalef_ps(p, nq)));
    }

    /* plus C, then one rounding */
    {
        __m512i q0 = lo64(q), q1 = hi64(q), s0 = lo64(sum), s1 = hi64(sum);
        __m512i r0, r1;
        s0 = _mm512_add_epi64(
            s0, c_term8(lo64(csig), lo64(celow), (__mmask8)cneg, q0, lost));
        s1 = _mm512_add_epi64(s1, c_term8(hi64(csig), hi64(celow),
                                          (__mmask8)(cneg >> 8), q1, lost));
        r0 = finish8(s0, q0, pl->ovf_bits, fl);
        r1 = finish8(s1, q1, pl->ovf_bits, fl);
        return _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm512_cvtepi64_epi32(r0)),
            _mm512_cvtepi64_epi32(r1), 1);
    }
}

/* The flags of a block's result, as kernel16 raises them (the inexact
   flag of the products comes from the host's). */
static unsigned
fp_flags(const s_vflags *fl, __mmask8 lost)
{
    unsigned f = 0;

    if (lost | fl->inexact)
        f |= SF_FLAG_INEXACT;
    if (fl->underflow)
        f |= SF_FLAG_UNDERFLOW;
    if (fl->overflow)
        f |= SF_FLAG_OVERFLOW;
    return f;
}

/* Word permutations of the 16 x 16 transposition in fp_transpose. */
static const uint16_t fp_perm1[2][32] = {
    {0, 16, 32, 48, 1, 17, 33, 49, 2, 18, 34, 50, 3, 19, 35, 51,
     4, 20, 36, 52, 5, 21, 37, 53, 6, 22, 38, 54, 7, 23, 39, 55},
    {8,  24, 40, 56, 9,  25, 41, 57, 10, 26, 42, 58, 11, 27, 43, 59,
     12, 28, 44, 60, 13, 29, 45, 61, 14, 30, 46, 62, 15, 31, 47, 63}};
static const uint16_t fp_perm2[2][32] = {
    {0, 1, 2,  3,  32, 33, 34, 35, 4,  5,  6,  7,  36, 37, 38, 39,
     8, 9, 10, 11, 40, 41, 42, 43, 12, 13, 14, 15, 44, 45, 46, 47},
    {16, 17, 18, 19, 48, 49, 50, 51, 20, 21, 22, 23, 52, 53, 54, 55,
     24, 25, 26, 27, 56, 57, 58, 59, 28, 29, 30, 31, 60, 61, 62, 63}};
static const uint16_t fp_perm3[4][32] = {
    {0, 0,  0, 1,  0, 2,  0, 3,  0, 4,  0, 5,  0, 6,  0, 7,
     0, 32, 0, 33, 0, 34, 0, 35, 0, 36, 0, 37, 0, 38, 0, 39},
    {0, 8,  0, 9,  0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15,
     0, 40, 0, 41, 0, 42, 0, 43, 0, 44, 0, 45, 0, 46, 0, 47},
    {0, 16, 0, 17, 0, 18, 0, 19, 0, 20, 0, 21, 0, 22, 0, 23,
     0, 48, 0, 49, 0, 50, 0, 51, 0, 52, 0, 53, 0, 54, 0, 55},
    {0, 24, 0, 25, 0, 26, 0, 27, 0, 28, 0, 29, 0, 30, 0, 31,
     0, 56, 0, 57, 0, 58, 0, 59, 0, 60, 0, 61, 0, 62, 0, 63}};

#define FP_IDX(t) _mm512_loadu_si512((const void *)(t))

/* Z[u] holds keys 2u (words 0..15) and 2u+1 (words 16..31), sixteen
   elements each; X[t] gets element t of the sixteen keys as binary32
   (lane l: key l).  Three rounds of two-source word permutations: four
   keys by eight elements, eight keys by four, then each element's
   sixteen keys into the high halves of 32-bit lanes. */
TGTBW static inline void
fp_transpose(const __m512i *z, __m512 *x)
{
    __m512i y[4][2], w[2][2][2];

    for (size_t v = 0; v < 4; v++)
        for (size_t h = 0; h < 2; h++)
            y[v][h] = _mm512_permutex2var_epi16(z[2 * v], FP_IDX(fp_perm1[h]),
                                                z[2 * v + 1]);
    for (size_t g = 0; g < 2; g++)
        for (size_t h = 0; h < 2; h++)
            for (size_t s = 0; s < 2; s++)
                w[g][h][s] = _mm512_permutex2var_epi16(
                    y[2 * g][h], FP_IDX(fp_perm2[s]), y[2 * g + 1][h]);
    for (size_t h = 0; h < 2; h++)
        for (size_t s = 0; s < 2; s++)
            for (size_t dl = 0; dl < 4; dl++)
                x[8 * h + 4 * s + dl] =
                    _mm512_castsi512_ps(_mm512_maskz_permutex2var_epi16(
                        (__mmask32)0xAAAAAAAAu, w[0][h][s],
                        FP_IDX(fp_perm3[dl]), w[1][h][s]));
}

/* D = A B^T + C for one row of A (K elements) and the COLS x K matrix BT
   (row-major), under an entered ENV and S_MMA_MXCSR_DEFAULT: sixteen columns
   at a time, chained block by block in registers; a block outside the
   path's range (or with a non-finite accumulator) goes to the scalar
   block, lane by lane. */

/* The scalar block for the lanes L < NL of ACC: B's column j0 + l at
   B + l * SL, elements SK apart (B as stored: SL = 1, SK = its row
   length; BT: SL = K, SK = 1). */
TGTBW static __m512i
fp_block_scalar(const s_mma_plan *pl, const uint16_t *a, const uint16_t *b,
                ptrdiff_t sl, ptrdiff_t sk, size_t len, size_t k0, size_t nl,
                __m512i acc, sf_env *env)
{
    uint32_t t[16];
    s_mma_vec va = {a, 1, 2};

    _mm512_storeu_si512((void *)t, acc);
    for (size_t l = 0; l < nl; l++) {
        s_mma_vec vb = {b + (ptrdiff_t)l * sl, sk, 2};
        t[l] = (uint32_t)s_mma_block(pl->m, pl->fa, &va, pl->fb, &vb, len, k0,
                                     t[l], env);
    }
    return _mm512_loadu_si512((const void *)t);
}

/* D = A B^T + C for one row of A (K elements, all in range) and the
   COLS x K matrix BT (row-major), under an entered ENV and
   S_MMA_MXCSR_DEFAULT: sixteen columns at a time, chained block by block in
   registers; a block of BT outside the path's range (or with a
   non-finite accumulator) goes to the scalar block, lane by lane. */
TGTBW static void
gemm_nt_fp(const s_mma_plan *pl, size_t cols, size_t k, const uint16_t *a,
           const uint16_t *bt, const uint32_t *c, uint32_t *d, sf_env *env,
           unsigned *flags)
{
    const size_t step = pl->m->n;
    uint32_t aw[S_MMA_FP_ROW_MAX], ap[S_MMA_FP_ROW_MAX];
    uint16_t pad[16 * 16];

    (void)s_mma_fp_side_a(a, k, aw, ap);
    for (size_t j0 = 0; j0 < cols; j0 += 16) {
        size_t nl = cols - j0 < 16 ? cols - j0 : 16;
        __mmask16 lanes = (__mmask16)((1u << nl) - 1);
        __m512i acc = c != NULL ? _mm512_maskz_loadu_epi32(lanes, c + j0)
                                : _mm512_setzero_si512();
        if (j0 + 32 <= cols)
            /* the next 16 rows of BT */
            s_mma_prefetch_rows(bt + (j0 + 16) * k, k, 16, k * 2);
        for (size_t k0 = 0; k0 < k; k0 += step) {
            size_t len = k - k0 < step ? k - k0 : step;
            const uint16_t *src = bt + j0 * k + k0;
            size_t ld = k;
            __m512i z[8], mn = _mm512_set1_epi16(-1),
                          mx = _mm512_setzero_si512();
            __m512 x[16];
            s_vflags fl = {0, 0, 0};
            __mmask8 lost = 0;

            if (fp_c_special(acc)) {
                acc = fp_block_scalar(pl, a + k0, bt + j0 * k + k0,
                                      (ptrdiff_t)k, 1, len, k0, nl, acc, env);
                continue;
            }
            if (nl < 16 || len < 16) {
                /* a partial tile: zeros around it */
                memset(pad, 0, sizeof pad);
                for (size_t l = 0; l < nl; l++)
                    memcpy(pad + 16 * l, src + l * k, len * sizeof *pad);
                src = pad;
                ld = 16;
            }
            for (size_t u = 0; u < 8; u++) {
                z[u] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256(
                        (const __m256i *)(const void *)(src + 2 * u * ld))),
                    _mm256_loadu_si256(
                        (const __m256i *)(const void *)(src
                                                        + (2 * u + 1) * ld)),
                    1);
                fp_range(z[u], &mn, &mx);
            }
            if (!fp_range_ok(mn, mx)) {
                acc = fp_block_scalar(pl, a + k0, bt + j0 * k + k0,
                                      (ptrdiff_t)k, 1, len, k0, nl, acc, env);
                continue;
            }
            fp_transpose(z, x);
            /* a whole block: the loops unrolled, X and the products in
               registers */
            acc =
                len == 16
                    ? fp_block(pl, x, aw + k0, ap + k0, 16, acc, &fl, &lost)
                    : fp_block(pl, x, aw + k0, ap + k0, len, acc, &fl, &lost);
            *flags |= fp_flags(&fl, lost);
        }
        _mm512_mask_storeu_epi32(d + j0, lanes, acc);
    }
}

/* D = A B + C for one row of A (K elements, all in range) and B as
   stored (K x COLS), under an entered ENV and S_MMA_MXCSR_DEFAULT: block by
   block of K, sixteen columns at a time (the last ones masked), the
   accumulators in D; a block of B outside the path's range (or with a
   non-finite accumulator) goes to the scalar block. */
TGTBW static void
gemm_row_fp(const s_mma_plan *pl, size_t cols, size_t k, const uint16_t *a,
            const uint16_t *b, const uint32_t *c, uint32_t *d, sf_env *env,
            unsigned *flags)
{
    const size_t step = pl->m->n;
    uint32_t aw[S_MMA_FP_ROW_MAX], ap[S_MMA_FP_ROW_MAX];

    (void)s_mma_fp_side_a(a, k, aw, ap);
    for (size_t j = 0; j < cols; j++)
        d[j] = c != NULL ? c[j] : 0;
    for (size_t k0 = 0; k0 < k; k0 += step) {
        size_t len = k - k0 < step ? k - k0 : step;
        if (k0 + 2 * step <= k)
            /* the next block's rows of B */
            s_mma_prefetch_rows(b + (k0 + step) * cols, cols, step, cols * 2);
        for (size_t j0 = 0; j0 < cols; j0 += 16) {
            size_t nl = cols - j0 < 16 ? cols - j0 : 16;
            __mmask16 lanes = (__mmask16)((1u << nl) - 1);
            const uint16_t *src = b + k0 * cols + j0;
            __m512i acc = _mm512_maskz_loadu_epi32(lanes, d + j0);
            __m512i mn = _mm512_set1_epi16(-1), mx = _mm512_setzero_si512();
            __m512 x[16];
            s_vflags fl = {0, 0, 0};
            __mmask8 lost = 0;

            if (!fp_c_special(acc)) {
                for (size_t t = 0; t < len; t += 2) {
                    size_t t1 = t + 1 < len ? t + 1 : t;
                    fp_range(
                        _mm512_inserti64x4(
                            _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(
                                lanes, src + t * cols)),
                            _mm256_maskz_loadu_epi16(lanes, src + t1 * cols),
                            1),
                        &mn, &mx);
                }
            }
            if (fp_c_special(acc) || !fp_range_ok(mn, mx)) {
                acc = fp_block_scalar(pl, a + k0, src, 1, (ptrdiff_t)cols, len,
                                      k0, nl, acc, env);
            } else {
                for (size_t t = 0; t < len; t++)
                    x[t] = _mm512_castsi512_ps(_mm512_slli_epi32(
                        _mm512_cvtepu16_epi32(
                            _mm256_maskz_loadu_epi16(lanes, src + t * cols)),
                        16));
                acc = len == 16 ? fp_block(pl, x, aw + k0, ap + k0, 16, acc,
                                           &fl, &lost)
                                : fp_block(pl, x, aw + k0, ap + k0, len, acc,
                                           &fl, &lost);
                *flags |= fp_flags(&fl, lost);
            }
            _mm512_mask_storeu_epi32(d + j0, lanes, acc);
        }
    }
}

#endif /* HAVE_VEC */

bool
s_mma_gemm_nt_avx512_covers(const sf_mma_model *m, size_t rows,
                            const sf_format *fa, const sf_format *fb)
{
#if HAVE_VEC
    s_mma_plan pl;

    if (rows != 1)
        return false;
    s_mma_plan_init(&pl, m, fa, fb, 16, true);
    return fp_covers(&pl, fa, fb);
#else
    (void)m;
    (void)rows;
    (void)fa;
    (void)fb;
    return false;
#endif
}

bool
s_mma_gemm_nt_avx512(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                     const sf_format *fa, const void *a, const sf_format *fb,
                     const void *bt, const uint32_t *c, uint32_t *d,
                     sf_env *env)
{
#if HAVE_VEC
    s_mma_plan pl;
    unsigned flags = 0, saved;

    if (!s_mma_gemm_nt_avx512_covers(m, rows, fa, fb))
        return false;
    if (!s_mma_fp_row_ok(a, k))
        return false;
    s_mma_plan_init(&pl, m, fa, fb, 16, true);
    saved = _mm_getcsr();
    _mm_setcsr(S_MMA_MXCSR_DEFAULT);
    gemm_nt_fp(&pl, cols, k, a, bt, c, d, env, &flags);
    if (_mm_getcsr() & S_MMA_MXCSR_PE)
        flags |= SF_FLAG_INEXACT;
    _mm_setcsr(saved);
    env->flags |= flags;
    return true;
#else
    (void)m;
    (void)rows;
    (void)cols;
    (void)k;
    (void)fa;
    (void)a;
    (void)fb;
    (void)bt;
    (void)c;
    (void)d;
    (void)env;
    return false;
#endif
}

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
    if (rows == 1 && fp_covers(&pl, fa, fb) && s_mma_fp_row_ok(a, k)) {
        /* one row of BF16: the binary32 path, under the default MXCSR;
           its inexact flag is the products' lost bits */
        unsigned saved = _mm_getcsr(), flags = 0;
        _mm_setcsr(S_MMA_MXCSR_DEFAULT);
        gemm_row_fp(&pl, cols, k, a, b, c, d, env, &flags);
        if (_mm_getcsr() & S_MMA_MXCSR_PE)
            flags |= SF_FLAG_INEXACT;
        _mm_setcsr(saved);
        env->flags |= flags;
        return true;
    }
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
