/* gemm_avx512 -- the AVX-512 kernels of the tiled GEMM for truncating
   fused models (sm70..sm100 style): sixteen output columns per vector,
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

#define GL_N 16

#if HAVE_VEC

#define TGT __attribute__((target("avx512f,avx512cd")))

#define GL_TGT TGT
#include "softfloat/mma/s_gemm_block.h"

/* The accumulator's term on the grid 2^Q for eight lanes (64-bit). */
TGT static inline __m512i
c_term8(__m512i csig, __m512i celow, __mmask8 cneg, __m512i q, __mmask16 *lost)
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

/* The sixteen results of a block in 64-bit lanes: S0 and S1 (the sums of
   the products on the grid 2^Q of lanes 0..7 and 8..15) plus C (decoded
   into CSIG, CELOW, CNEG), each rounded once. */
TGT __attribute__((always_inline)) static inline __m512i
result8x2(const s_mma_plan *pl, __m512i s0, __m512i s1, __m512i csig,
          __m512i celow, __mmask16 cneg, __m512i q, s_vflags *fl,
          __mmask16 *lost)
{
    __m512i q0 = lo64(q), q1 = hi64(q), r0, r1;

    s0 = _mm512_add_epi64(
        s0, c_term8(lo64(csig), lo64(celow), (__mmask8)cneg, q0, lost));
    s1 = _mm512_add_epi64(
        s1, c_term8(hi64(csig), hi64(celow), (__mmask8)(cneg >> 8), q1, lost));
    r0 = finish8(s0, q0, pl->ovf_bits, fl);
    r1 = finish8(s1, q1, pl->ovf_bits, fl);
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm512_cvtepi64_epi32(r0)),
        _mm512_cvtepi64_epi32(r1), 1);
}

/* The flags of a block's results: FL and LOST, as the scalar path raises
   them. */
static unsigned
fp_flags(const s_vflags *fl, __mmask16 lost)
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

/* One block for sixteen lanes; NARROW: the products and their sum in
   32-bit lanes (pl->narrow, pl->lp == 0), else in 64-bit lanes. */
TGT __attribute__((always_inline)) static inline bool
kernel16(const s_mma_plan *pl, const int32_t *as, const int32_t *ae,
         const int32_t *bs, const int32_t *be, size_t len, uint32_t *acc,
         unsigned *flags, bool narrow)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i c = _mm512_loadu_si512((const void *)acc);
    __m512i csig, celow, q, lostv = zero, s0 = zero, s1 = zero;
    __mmask16 cneg, lost = 0;
    s_vflags fl = {0, 0, 0};

    /* pass 1: the largest exponent of a non-zero product, and C */
    if (!kernel_grid(pl, ae, be, len, c, &q, &csig, &celow))
        return false;
    cneg = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)0x80000000u));

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
    _mm512_storeu_si512(
        (void *)acc, result8x2(pl, s0, s1, csig, celow, cneg, q, &fl, &lost));
    *flags |= fp_flags(&fl, lost);
    if (_mm512_test_epi32_mask(lostv, lostv) != 0)
        *flags |= SF_FLAG_INEXACT;
    return true;
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

/* Whether the binary32 path runs on this CPU: the integer kernels' set
   and AVX512BW, DQ and VL. */
static bool
fp_available(void)
{
    return sf_mma_gemm_avx512_available() && __builtin_cpu_supports("avx512bw")
           && __builtin_cpu_supports("avx512dq")
           && __builtin_cpu_supports("avx512vl");
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

/* The grid of a block on the binary32 path: Q = emax - F from MX (the
   largest |x| 2^E_a of the block's products, binary32 bits: fp_ep) and
   the accumulators C (finite), and C decoded (CSIG, CELOW, CNEG), as
   kernel16. */
TGTBW __attribute__((always_inline)) static inline __m512i
fast_grid(const s_mma_plan *pl, __m512i mx, __m512i c, __m512i *csig,
          __m512i *celow, __mmask16 *cneg)
{
    *cneg = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)0x80000000u));
    return block_grid(pl, fp_ep(pl, mx), c, csig, celow);
}

/* One block: LEN products of A's AW[t] with the sixteen lanes of X[t],
   chained from the accumulators C (finite); returns the sixteen
   results. */
TGTBW __attribute__((always_inline)) static inline __m512i
fp_block(const s_mma_plan *pl, const __m512 *x, const uint32_t *aw,
         const uint32_t *ap, size_t len, __m512i c, s_vflags *fl,
         __mmask16 *lost)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i mx = zero, sum = zero, csig, celow, q;
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
    /* emax over the non-zero products and C */
    q = fast_grid(pl, mx, c, &csig, &celow, &cneg);
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
    return result8x2(pl, lo64(sum), hi64(sum), csig, celow, cneg, q, fl, lost);
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
            __mmask16 lost = 0;

            if (c_special(acc)) {
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
            const uint16_t *b, size_t ldb, const uint32_t *c, uint32_t *d,
            sf_env *env, unsigned *flags)
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
            s_mma_prefetch_rows(b + (k0 + step) * ldb, ldb, step, cols * 2);
        for (size_t j0 = 0; j0 < cols; j0 += 16) {
            size_t nl = cols - j0 < 16 ? cols - j0 : 16;
            __mmask16 lanes = (__mmask16)((1u << nl) - 1);
            const uint16_t *src = b + k0 * ldb + j0;
            __m512i acc = _mm512_maskz_loadu_epi32(lanes, d + j0);
            __m512i mn = _mm512_set1_epi16(-1), mx = _mm512_setzero_si512();
            __m512 x[16];
            s_vflags fl = {0, 0, 0};
            __mmask16 lost = 0;

            if (!c_special(acc)) {
                for (size_t t = 0; t < len; t += 2) {
                    size_t t1 = t + 1 < len ? t + 1 : t;
                    fp_range(
                        _mm512_inserti64x4(
                            _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(
                                lanes, src + t * ldb)),
                            _mm256_maskz_loadu_epi16(lanes, src + t1 * ldb),
                            1),
                        &mn, &mx);
                }
            }
            if (c_special(acc) || !fp_range_ok(mn, mx)) {
                acc = fp_block_scalar(pl, a + k0, src, 1, (ptrdiff_t)ldb, len,
                                      k0, nl, acc, env);
            } else {
                for (size_t t = 0; t < len; t++)
                    x[t] = _mm512_castsi512_ps(_mm512_slli_epi32(
                        _mm512_cvtepu16_epi32(
                            _mm256_maskz_loadu_epi16(lanes, src + t * ldb)),
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

/*----------------------------------------------------------------------------
 * One row of BF16 on the host's binary32 unit, checked by the host's
 * flags (the argument: mma_local.h).  Chunks of up to S_MMA_FP_CHUNK
 * columns are computed into a buffer without a range check; a chunk whose
 * computation raised a host flag other than inexact (or met an Inf or
 * NaN accumulator) is thrown away and computed again by gemm_nt_fp or
 * gemm_row_fp.
 *--------------------------------------------------------------------------*/

/* The block's result: SUM (its products' kept parts on the grid 2^Q) plus
   C, normalised and truncated; in 32-bit lanes unless a total leaves
   them. */
TGTBW __attribute__((always_inline)) static inline __m512i
fast_result(const s_mma_plan *pl, __m512i sum, __m512i q, __m512i csig,
            __m512i celow, __mmask16 cneg, s_vflags *fl, __mmask16 *lost)
{
    __m512i kc = c_term32(csig, celow, cneg, q, lost);
    __m512i tot = _mm512_add_epi32(sum, kc);
    /* signed overflow: SUM and KC of one sign, TOT of the other */
    __mmask16 wide = _mm512_movepi32_mask(
        _mm512_ternarylogic_epi32(sum, kc, tot, 0x42 /* (a^c)&(b^c) */));

    if (wide != 0) {
        /* rare: the 64-bit lanes of kernel16, their flags apart */
        s_vflags f8 = {0, 0, 0};
        __mmask16 l8 = 0;
        __m512i r = result8x2(pl, lo64(sum), hi64(sum), csig, celow, cneg, q,
                              &f8, &l8);
        *lost |= l8;
        fl->inexact |= f8.inexact;
        fl->underflow |= f8.underflow;
        fl->overflow |= f8.overflow;
        return r;
    }
    return finish32(tot, q, pl->ovf_bits, fl);
}

/* Pass 1 of one product for sixteen lanes X against A's element with
   bits AW and power of two AP (2^E_a, 0 for a zero): MX keeps the largest
   |x| 2^E_a (exact when no flag is raised: its exponent is E_a + E_b), P
   gets the product x a. */
TGTBW __attribute__((always_inline)) static inline void
fast_pass1(__m512 x, uint32_t aw, uint32_t ap, __m512 *mx, __m512 *p)
{
    *mx = _mm512_range_ps(
        *mx, _mm512_mul_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)ap))),
        0x0B /* the larger magnitude, sign cleared */);
    *p = _mm512_mul_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32((int)aw)));
}

/* The block of sixteen lanes with products P[0 .. LEN-1] and maxima MX[4],
   chained from ACC. */
TGTBW __attribute__((always_inline)) static inline __m512i
fast_tail(const s_mma_plan *pl, const __m512 *p, const __m512 *mx, size_t len,
          __m512i acc, s_vflags *fl, __mmask16 *lost)
{
    __m512i csig, celow, q, sum0 = _mm512_setzero_si512(), sum1 = sum0;
    __mmask16 cneg;
    __m512 nq, m = _mm512_max_ps(_mm512_max_ps(mx[0], mx[1]),
                                 _mm512_max_ps(mx[2], mx[3]));

    q = fast_grid(pl, _mm512_castps_si512(m), acc, &csig, &celow, &cneg);
    nq = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_setzero_si512(), q));
    FP_UNROLL
    for (size_t t = 0; t < len; t++) {
        __m512i kept = _mm512_cvttps_epi32(_mm512_scalef_ps(p[t], nq));
        if (t & 1)
            sum1 = _mm512_add_epi32(sum1, kept);
        else
            sum0 = _mm512_add_epi32(sum0, kept);
    }
    return fast_result(pl, _mm512_add_epi32(sum0, sum1), q, csig, celow, cneg,
                       fl, lost);
}

/* Dword permutations of the 16 x 8 transposition in fast_transpose. */
static const uint32_t fast_perm1[2][16] = {
    {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27},
    {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31}};
static const uint32_t fast_perm2[2][16] = {
    {0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29},
    {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31}};
static const uint32_t fast_perm3[2][16] = {
    {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30},
    {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}};

/* Z[u] holds keys 2u (dwords 0..7) and 2u+1 (dwords 8..15), sixteen BF16
   elements each, two to a dword; W[i] gets dword i of the sixteen keys
   (lane l: key l): three rounds of two-source dword permutations, four
   keys by four dwords, eight by two, sixteen by one. */
TGTBW __attribute__((always_inline)) static inline void
fast_transpose(const __m512i *z, __m512i *w)
{
    __m512i r[4][2], s[2][2][2];

    FP_UNROLL
    for (size_t g = 0; g < 4; g++)
        for (size_t h = 0; h < 2; h++)
            r[g][h] = _mm512_permutex2var_epi32(
                z[2 * g], FP_IDX(fast_perm1[h]), z[2 * g + 1]);
    FP_UNROLL
    for (size_t g = 0; g < 2; g++)
        for (size_t h = 0; h < 2; h++)
            for (size_t pp = 0; pp < 2; pp++)
                s[g][h][pp] = _mm512_permutex2var_epi32(
                    r[2 * g][h], FP_IDX(fast_perm2[pp]), r[2 * g + 1][h]);
    FP_UNROLL
    for (size_t h = 0; h < 2; h++)
        for (size_t pp = 0; pp < 2; pp++)
            for (size_t j = 0; j < 2; j++)
                w[4 * h + 2 * pp + j] = _mm512_permutex2var_epi32(
                    s[0][h][pp], FP_IDX(fast_perm3[j]), s[1][h][pp]);
}

/* The high and the low BF16 of each dword of W as binary32. */
TGTBW static inline __m512
fast_hi(__m512i w)
{
    return _mm512_castsi512_ps(
        _mm512_and_si512(w, _mm512_set1_epi32((int)0xFFFF0000u)));
}

TGTBW static inline __m512
fast_lo(__m512i w)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* D[0 .. NL-1] = A B^T + C for the NL <= 16 rows of BT at BT (K elements,
   LD apart) into OUT (sixteen words); false when an accumulator met Inf
   or NaN.  PF: the 16 rows after them exist (they are asked into the
   cache, a few with each block: with one row of A, BT streams from
   memory once). */
TGTBW static inline bool
fast_nt16(const s_mma_plan *pl, size_t k, const uint32_t *aw,
          const uint32_t *ap, const uint16_t *bt, size_t ld, size_t nl,
          bool pf, const uint32_t *c, uint32_t *out, s_vflags *fl,
          __mmask16 *lost)
{
    __mmask16 lanes = (__mmask16)((1u << nl) - 1);
    __m512i acc = c != NULL ? _mm512_maskz_loadu_epi32(lanes, c)
                            : _mm512_setzero_si512();

    for (size_t k0 = 0; k0 < k; k0 += 16) {
        size_t len = k - k0 < 16 ? k - k0 : 16;
        const uint16_t *src = bt + k0;
        __m512i z[8], w[8];
        __m512 p[16], mx[4];

        if (c_special(acc))
            return false;
        if (pf) {
            /* the next 16 rows, a few with each block */
            size_t per = (16 + (k + 15) / 16 - 1) / ((k + 15) / 16);
            size_t r0 = k0 / 16 * per;
            if (r0 < 16)
                s_mma_prefetch_rows(bt + (16 + r0) * ld, ld,
                                    16 - r0 < per ? 16 - r0 : per, k * 2);
        }
        if (nl == 16 && len == 16) {
            FP_UNROLL
            for (size_t u = 0; u < 8; u++)
                z[u] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256(
                        (const __m256i *)(const void *)(src + 2 * u * ld))),
                    _mm256_loadu_si256(
                        (const __m256i *)(const void *)(src
                                                        + (2 * u + 1) * ld)),
                    1);
        } else {
            /* a partial tile: zeros around it */
            __mmask16 em = (__mmask16)((1u << len) - 1);
            for (size_t u = 0; u < 8; u++)
                z[u] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(
                        2 * u < nl ? em : 0, src + 2 * u * ld)),
                    _mm256_maskz_loadu_epi16(2 * u + 1 < nl ? em : 0,
                                             src + (2 * u + 1) * ld),
                    1);
        }
        fast_transpose(z, w);
        for (size_t i = 0; i < 4; i++)
            mx[i] = _mm512_setzero_ps();
        FP_UNROLL
        for (size_t i = 0; i < 8; i++) {
            size_t t = k0 + 2 * i;
            fast_pass1(fast_lo(w[i]), aw[t], ap[t], &mx[(2 * i) & 3],
                       &p[2 * i]);
            fast_pass1(fast_hi(w[i]), aw[t + 1], ap[t + 1],
                       &mx[(2 * i + 1) & 3], &p[2 * i + 1]);
        }
        acc = fast_tail(pl, p, mx, 16, acc, fl, lost);
    }
    _mm512_storeu_si512((void *)out, acc);
    return true;
}

/* D = A B^T + C for one row of A and the N <= S_MMA_FP_CHUNK rows of BT
   at BT (K elements each; AVAIL rows from BT on exist) into OUT
   (S_MMA_FP_CHUNK words), its flags into FLAGS; false when an
   accumulator met Inf or NaN.  Not inlined, so that none of its
   floating-point operations moves across the caller's MXCSR access. */
TGTBW __attribute__((noinline)) static bool
fast_nt_chunk(const s_mma_plan *pl, size_t n, size_t k, const uint32_t *aw,
              const uint32_t *ap, const uint16_t *bt, size_t avail,
              const uint32_t *c, uint32_t *out, unsigned *flags)
{
    s_vflags fl = {0, 0, 0};
    __mmask16 lost = 0;

    for (size_t g = 0; g < n; g += 16) {
        size_t nl = n - g < 16 ? n - g : 16;
        if (!fast_nt16(pl, k, aw, ap, bt + g * k, k, nl, g + 32 <= avail,
                       c != NULL ? c + g : NULL, out + g, &fl, &lost))
            return false;
    }
    *flags |= fp_flags(&fl, lost);
    return true;
}

/* The even (lanes 0..15) and odd (16..31) columns of a row of 32. */
static const uint32_t fast_deal[2][16] = {
    {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30},
    {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}};
/* Their inverse: columns 0..15 and 16..31 from the even and odd lanes. */
static const uint32_t fast_merge[2][16] = {
    {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23},
    {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31}};

/* One block of 16 rows of B (row t at B + t LD; LEN of them, NL <= 32
   columns; FULL: 16 rows of 32 columns) for the even (HI false) or odd
   (HI true) columns, chained from ACC. */
TGTBW __attribute__((always_inline)) static inline __m512i
fast_row_block(const s_mma_plan *pl, const uint32_t *aw, const uint32_t *ap,
               const uint16_t *b, size_t ld, size_t len, __mmask32 lanes,
               bool full, bool hi, __m512i acc, s_vflags *fl, __mmask16 *lost)
{
    __m512 p[16], mx[4];

    for (size_t i = 0; i < 4; i++)
        mx[i] = _mm512_setzero_ps();
    FP_UNROLL
    for (size_t t = 0; t < 16; t++) {
        __m512i v = full      ? _mm512_loadu_si512((const void *)(b + t * ld))
                    : t < len ? _mm512_maskz_loadu_epi16(lanes, b + t * ld)
                              : _mm512_setzero_si512();
        fast_pass1(hi ? fast_hi(v) : fast_lo(v), aw[t], ap[t], &mx[t & 3],
                   &p[t]);
    }
    return fast_tail(pl, p, mx, 16, acc, fl, lost);
}

/* D = A B + C for one row of A (K elements) and N <= S_MMA_FP_CHUNK
   columns of B (K rows at B, LD apart) into OUT (S_MMA_FP_CHUNK words),
   its flags into FLAGS; false when an accumulator met Inf or NaN.  Block
   by block of K, 32 columns at a time, each as its even and its odd
   columns (a dword's two BF16 elements).  Not inlined (fast_nt_chunk). */
TGTBW __attribute__((noinline)) static bool
fast_row_chunk(const s_mma_plan *pl, size_t n, size_t k, const uint32_t *aw,
               const uint32_t *ap, const uint16_t *b, size_t ld,
               const uint32_t *c, uint32_t *out, unsigned *flags)
{
    __m512i acc[S_MMA_FP_CHUNK / 16];
    s_vflags fl = {0, 0, 0};
    __mmask16 lost = 0;
    size_t ng = (n + 31) / 32, per = (16 + ng - 1) / ng;

    for (size_t g = 0; g < ng; g++) {
        size_t nl = n - 32 * g < 32 ? n - 32 * g : 32;
        __mmask32 lanes = (__mmask32)(nl == 32 ? ~0u : (1u << nl) - 1);
        __m512i c0 = _mm512_setzero_si512(), c1 = c0;
        if (c != NULL) {
            c0 = _mm512_maskz_loadu_epi32((__mmask16)lanes, c + 32 * g);
            c1 = _mm512_maskz_loadu_epi32((__mmask16)(lanes >> 16),
                                          c + 32 * g + 16);
        }
        acc[2 * g] = _mm512_permutex2var_epi32(c0, FP_IDX(fast_deal[0]), c1);
        acc[2 * g + 1] =
            _mm512_permutex2var_epi32(c0, FP_IDX(fast_deal[1]), c1);
    }
    for (size_t k0 = 0; k0 < k; k0 += 16) {
        size_t len = k - k0 < 16 ? k - k0 : 16;
        const uint16_t *src = b + k0 * ld;
        for (size_t g = 0; g < ng; g++) {
            size_t nl = n - 32 * g < 32 ? n - 32 * g : 32;
            __mmask32 lanes = (__mmask32)(nl == 32 ? ~0u : (1u << nl) - 1);
            bool full = len == 16 && nl == 32;
            if (c_special(acc[2 * g]) || c_special(acc[2 * g + 1]))
                return false;
            if (k0 + 32 <= k && g * per < 16)
                /* the next block's rows of B, a few with each group */
                s_mma_prefetch_rows(src + (16 + g * per) * ld, ld,
                                    16 - g * per < per ? 16 - g * per : per,
                                    n * 2);
            if (full) {
                acc[2 * g] =
                    fast_row_block(pl, aw + k0, ap + k0, src + 32 * g, ld, 16,
                                   lanes, true, false, acc[2 * g], &fl, &lost);
                acc[2 * g + 1] = fast_row_block(
                    pl, aw + k0, ap + k0, src + 32 * g, ld, 16, lanes, true,
                    true, acc[2 * g + 1], &fl, &lost);
            } else {
                acc[2 * g] = fast_row_block(pl, aw + k0, ap + k0, src + 32 * g,
                                            ld, len, lanes, false, false,
                                            acc[2 * g], &fl, &lost);
                acc[2 * g + 1] = fast_row_block(
                    pl, aw + k0, ap + k0, src + 32 * g, ld, len, lanes, false,
                    true, acc[2 * g + 1], &fl, &lost);
            }
        }
    }
    for (size_t g = 0; g < ng; g++) {
        _mm512_storeu_si512((void *)(out + 32 * g),
                            _mm512_permutex2var_epi32(acc[2 * g],
                                                      FP_IDX(fast_merge[0]),
                                                      acc[2 * g + 1]));
        _mm512_storeu_si512((void *)(out + 32 * g + 16),
                            _mm512_permutex2var_epi32(acc[2 * g],
                                                      FP_IDX(fast_merge[1]),
                                                      acc[2 * g + 1]));
    }
    *flags |= fp_flags(&fl, lost);
    return true;
}

#endif /* HAVE_VEC */

/* The tiled kernels by the plan's width, a row of B as stored, the
   flag-checked binary32 path and the entry points. */
#define GL_ISA avx512
#define GL_TGT_FP TGTBW
#define GL_KERNEL kernel16
#define GL_DECODE decode_lanes
#include "softfloat/mma/s_gemm_lanes.h"
