/* sf_convert_array -- sf_convert over an array: FP32 to BF16, FP16, E4M3
   and E5M2 and BF16 and FP16 to FP32 by the fields (portable, AVX2 and
   AVX-512 paths; FP32 to BF16 for every value in the vector lanes), every
   other pair element by element */
#define S_LANES_CONVERT 1
#include "s_array.h"
#include "s_lanes_all.h"

/* The largest |hi| the vector steps take in mode RM. */
static inline __attribute__((unused)) int
hi_bound(sf_round rm)
{
    return rm == SF_RTZ || rm == SF_ROD ? 0x7F7F : 0x7F7E;
}

#if S_ARRAY_VEC
/*----------------------------------------------------------------------------
 * FP32 to BF16 in 16-bit lanes (the exponent field stays, so the rounding
 * is on the top half by the bottom half).
 *--------------------------------------------------------------------------*/
#define TGT __attribute__((target("avx512f,avx512bw")))
#define TGT2 __attribute__((target("avx2")))
/* the targets of s_lanes_all.h's copies (sf_isa_supported checks them all
   before either path runs) */
#define TGT_ALL                                                               \
    __attribute__((target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512cd,"    \
                          "avx512vl,avx512dq")))
#define TGT2_ALL __attribute__((target("avx2,fma,f16c,bmi2")))

/*----------------------------------------------------------------------------
 * FP32 to BF16, 32 elements per step: the top and bottom 16-bit halves of
 * two registers of FP32 bits are gathered into one register each (hi,
 * lo), and hi is rounded by lo in 16-bit lanes.  That is the whole
 * conversion for the values of the fast subset of s_fast_narrow: normal,
 * and with |hi| below a bound per mode that keeps the rounded value
 * finite (conservative: |hi| = 0x7F7F is left to sf_convert in every
 * mode that can round up).  There the exponent and a carry out of the
 * fraction carry over as in s_fast_narrow, the sign is untouched, and
 * inexact is raised when a lo is not zero.
 *--------------------------------------------------------------------------*/

/* The top (*HI) and bottom (*LO) halves of CNT (1 to 32) FP32 elements
   from IN + I, in 16-bit lanes; the missing lanes read 1.0 (in the fast
   subset, exact). */
TGT static inline __attribute__((always_inline)) void
split32(const uint32_t *in, size_t i, size_t cnt, __m512i *hi, __m512i *lo)
{
    /* odd and even 16-bit words of two registers */
    const __m512i pick_hi = _mm512_set_epi16(
        63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29,
        27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i pick_lo = _mm512_set_epi16(
        62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28,
        26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512i x0, x1;

    if (cnt == 32) {
        x0 = _mm512_loadu_si512((const void *)(in + i));
        x1 = _mm512_loadu_si512((const void *)(in + i + 16));
    } else {
        const __m512i fill = _mm512_set1_epi32(0x3F800000);
        __mmask16 m0 = (__mmask16)(cnt >= 16 ? 0xFFFFu : (1u << cnt) - 1);
        __mmask16 m1 = (__mmask16)(cnt > 16 ? (1u << (cnt - 16)) - 1 : 0u);
        x0 = _mm512_mask_loadu_epi32(fill, m0, (const void *)(in + i));
        x1 = _mm512_mask_loadu_epi32(fill, m1, (const void *)(in + i + 16));
    }
    *hi = _mm512_permutex2var_epi16(x0, pick_hi, x1);
    *lo = _mm512_permutex2var_epi16(x0, pick_lo, x1);
}

TGT static inline __attribute__((always_inline)) void
store32(uint16_t *out, size_t i, size_t cnt, __m512i r)
{
    if (cnt == 32)
        _mm512_storeu_si512((void *)(out + i), r);
    else
        _mm512_mask_storeu_epi16((void *)(out + i),
                                 (__mmask32)((UINT64_C(1) << cnt) - 1), r);
}

/* One step of CNT (1 to 32) elements from IN + I to OUT + I in mode RM
   (a constant where this is inlined); returns false, writing nothing,
   when an element is outside the fast subset.  *INEXACT collects the
   lanes whose lo is not zero (a general register: no store and reload of
   a vector accumulator in the loop). */
TGT static inline __attribute__((always_inline)) bool
step32(const uint32_t *in, uint16_t *out, size_t i, size_t cnt, sf_round rm,
       uint32_t *inexact)
{
    const __m512i one = _mm512_set1_epi16(1);
    __m512i hi, lo, mag;
    __mmask32 inc, out_of;

    split32(in, i, cnt, &hi, &lo);
    /* normal (|hi| >= 0x0080) and within the bound, unsigned, or (tested
       only when that fails) +-0: hi + 0 in every mode */
    mag = _mm512_and_si512(hi, _mm512_set1_epi16(0x7FFF));
    out_of = _mm512_cmpgt_epu16_mask(
        _mm512_sub_epi16(mag, _mm512_set1_epi16(0x0080)),
        _mm512_set1_epi16((short)(hi_bound(rm) - 0x0080)));
    if (out_of != 0
        && (out_of & _mm512_test_epi16_mask(_mm512_or_si512(mag, lo),
                                            _mm512_or_si512(mag, lo)))
               != 0)
        return false;
    *inexact |= (uint32_t)_mm512_test_epi16_mask(lo, lo);
    switch (rm) {
    case SF_RNE: /* up when lo > 0x8000, or lo = 0x8000 and hi is odd */
        inc = _mm512_cmpgt_epu16_mask(
            lo, _mm512_sub_epi16(_mm512_set1_epi16((short)0x8000),
                                 _mm512_and_si512(hi, one)));
        break;
    case SF_RNA:
        inc = _mm512_cmpge_epu16_mask(lo, _mm512_set1_epi16((short)0x8000));
        break;
    case SF_RUP: /* up in magnitude for the positive lanes */
        inc = _mm512_test_epi16_mask(lo, lo)
              & _mm512_testn_epi16_mask(hi, _mm512_set1_epi16((short)0x8000));
        break;
    case SF_RDN: /* up in magnitude for the negative lanes */
        inc = _mm512_test_epi16_mask(lo, lo)
              & _mm512_test_epi16_mask(hi, _mm512_set1_epi16((short)0x8000));
        break;
    case SF_ROD: /* the last bit set (an even hi plus one) when anything
                    is discarded */
        inc =
            _mm512_test_epi16_mask(lo, lo) & _mm512_testn_epi16_mask(hi, one);
        break;
    default: /* SF_RTZ */
        inc = 0;
        break;
    }
    hi = _mm512_mask_add_epi16(hi, inc, hi, one);
    store32(out, i, cnt, hi);
    return true;
}

/* The same step for any elements (subnormals, Inf, NaN, overflow:
   narrow_bf16_all), the flags ORed into *FLAGS, for the steps step32
   refuses. */
TGT_ALL static inline __attribute__((always_inline)) void
step32_all(const uint32_t *in, uint16_t *out, size_t i, size_t cnt,
           sf_round rm, const s_cv_env *ce, unsigned *flags)
{
    __m512i hi, lo;

    split32(in, i, cnt, &hi, &lo);
    store32(out, i, cnt,
            (__m512i)narrow_bf16_all_avx512((vw_avx512)hi, (vw_avx512)lo, rm,
                                            ce, flags));
}

/* Full steps from I while their elements are in the subset: returns the
   index of the first step refused, or of the last n - I < 32 elements.
   No call in the loop, so its constants stay in registers. */
TGT static inline __attribute__((always_inline)) size_t
run32(const uint32_t *in, uint16_t *out, size_t i, size_t n, sf_round rm,
      uint32_t *inexact)
{
    uint32_t nz = 0;

    for (; n - i >= 32; i += 32)
        if (!step32(in, out, i, 32, rm, &nz))
            break;
    *inexact |= nz;
    return i;
}

/* The whole array in mode RM (a constant where this is inlined); a step
   that step32 refuses goes through step32_all. */
TGT_ALL static inline __attribute__((always_inline)) void
narrow_all(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
           sf_env *env)
{
    uint32_t inexact = 0;
    unsigned flags = 0;
    size_t i = 0;
    s_cv_env ce;

    s_cv_env_of(&sf_format_bf16, env, &ce);
    while ((i = run32(in, out, i, n, rm, &inexact)) < n) {
        size_t cnt = n - i < 32 ? n - i : 32;
        if (cnt == 32 || !step32(in, out, i, cnt, rm, &inexact))
            step32_all(in, out, i, cnt, rm, &ce, &flags);
        i += cnt;
    }
    if (inexact)
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
}

TGT_ALL static void
f32_to_bf16_avx512(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
                   sf_env *env)
{
    switch (rm) {
    case SF_RNE:
        narrow_all(in, out, n, SF_RNE, env);
        break;
    case SF_RNA:
        narrow_all(in, out, n, SF_RNA, env);
        break;
    case SF_RUP:
        narrow_all(in, out, n, SF_RUP, env);
        break;
    case SF_RDN:
        narrow_all(in, out, n, SF_RDN, env);
        break;
    case SF_ROD:
        narrow_all(in, out, n, SF_ROD, env);
        break;
    default:
        narrow_all(in, out, n, SF_RTZ, env);
        break;
    }
}

/*----------------------------------------------------------------------------
 * The same on AVX2, 16 elements per step: the halves of two registers of
 * FP32 bits packed into one register of hi and one of lo (16-bit lanes),
 * the unsigned comparisons by saturating subtraction.
 *--------------------------------------------------------------------------*/
/* The top (*HI) and bottom (*LO) halves of the 16 FP32 elements at IN,
   in 16-bit lanes. */
TGT2 static inline __attribute__((always_inline)) void
split16(const uint32_t *in, __m256i *hi, __m256i *lo)
{
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)in);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(in + 8));

    /* packus works within 128-bit halves: 0xD8 puts the quarters back in
       order */
    *hi = _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_srli_epi32(x0, 16),
                            _mm256_srli_epi32(x1, 16)),
        0xD8);
    *lo = _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_and_si256(x0, low),
                            _mm256_and_si256(x1, low)),
        0xD8);
}

TGT2 static inline __attribute__((always_inline)) bool
step16(const uint32_t *in, uint16_t *out, size_t i, sf_round rm,
       __m256i *inexact)
{
    __m256i hi, lo, mag;

    split16(in + i, &hi, &lo);
    mag = _mm256_and_si256(hi, _mm256_set1_epi16(0x7FFF));
    /* mag - 0x0080 > bound - 0x0080 (unsigned): a saturating difference
       that is not zero, in a lane that is not +-0 (hi + 0 in every
       mode) */
    __m256i over = _mm256_andnot_si256(
        _mm256_cmpeq_epi16(_mm256_or_si256(mag, lo), _mm256_setzero_si256()),
        _mm256_subs_epu16(_mm256_sub_epi16(mag, _mm256_set1_epi16(0x0080)),
                          _mm256_set1_epi16((short)(hi_bound(rm) - 0x0080))));

    if (!_mm256_testz_si256(over, over))
        return false;
    *inexact = _mm256_or_si256(*inexact, lo);
    hi = s_arr_bf16_round16(hi, lo, rm);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), hi);
    return true;
}

/* CNT (1 to 16) elements for any values (narrow_bf16_all), the flags
   ORed into *FLAGS; out of line, for the steps step16 refuses and the
   last n mod 16 elements (through a buffer whose missing lanes read 1.0:
   exact). */
TGT2_ALL static inline __attribute__((always_inline)) void
step16_all(const uint32_t *in, uint16_t *out, size_t i, size_t cnt,
           sf_round rm, const s_cv_env *ce, unsigned *flags)
{
    uint32_t x[16];
    uint16_t z[16];
    const uint32_t *src = in + i;
    __m256i hi, lo, r;

    if (cnt < 16) {
        for (size_t j = 0; j < 16; j++)
            x[j] = j < cnt ? src[j] : 0x3F800000;
        src = x;
    }
    split16(src, &hi, &lo);
    r = (__m256i)narrow_bf16_all_avx2((vw_avx2)hi, (vw_avx2)lo, rm, ce,
                                      flags);
    if (cnt == 16) {
        _mm256_storeu_si256((__m256i *)(void *)(out + i), r);
    } else {
        _mm256_storeu_si256((__m256i *)(void *)z, r);
        memcpy(out + i, z, cnt * sizeof *z);
    }
}

TGT2_ALL static inline __attribute__((always_inline)) void
narrow_all_avx2(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
                sf_env *env)
{
    __m256i inexact = _mm256_setzero_si256();
    unsigned flags = 0;
    size_t i = 0;
    s_cv_env ce;

    s_cv_env_of(&sf_format_bf16, env, &ce);
    for (; n - i >= 16; i += 16)
        if (SF_UNLIKELY(!step16(in, out, i, rm, &inexact)))
            step16_all(in, out, i, 16, rm, &ce, &flags);
    if (i < n)
        step16_all(in, out, i, n - i, rm, &ce, &flags);
    if (!_mm256_testz_si256(inexact, inexact))
        flags |= SF_FLAG_INEXACT;
    env->flags |= flags;
}

TGT2_ALL static void
f32_to_bf16_avx2(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
                 sf_env *env)
{
#define CALL(m) narrow_all_avx2(in, out, n, m, env)
    S_ARR_BY_MODE(CALL, rm);
#undef CALL
}
#endif

#if defined(__aarch64__) && defined(__ARM_NEON)
#define S_ARRAY_NEON 1
#include <arm_neon.h>

/*----------------------------------------------------------------------------
 * AArch64 Advanced SIMD: FP32 to BF16 and BF16 to FP32, 8 elements per
 * step, by the same fields as the AVX2 and AVX-512 steps above (the top
 * halves of the FP32 bits rounded by their bottom halves in 16-bit lanes;
 * a BF16 value shifted into the top half).  Integer instructions only, so
 * FPCR (its rounding mode, FZ and AH bits) never enters.  A step with an
 * element outside the fast subset goes through s_cv_step.
 *--------------------------------------------------------------------------*/
/* One step of 8 elements from IN + I in mode RM (a constant where this
   is inlined); false, writing nothing, when an element is outside the
   subset.  *INEXACT collects the bottom halves. */
static inline __attribute__((always_inline)) bool
step8_neon(const uint32_t *in, uint16_t *out, size_t i, sf_round rm,
           uint16x8_t *inexact)
{
    uint16x8_t x0 = vreinterpretq_u16_u32(vld1q_u32(in + i));
    uint16x8_t x1 = vreinterpretq_u16_u32(vld1q_u32(in + i + 4));
    /* little-endian: the odd 16-bit words are the top halves */
    uint16x8_t hi = vuzp2q_u16(x0, x1), lo = vuzp1q_u16(x0, x1);
    uint16x8_t mag = vandq_u16(hi, vdupq_n_u16(0x7FFF));
    /* normal (|hi| >= 0x0080) and within the mode's bound, unsigned */
    uint16x8_t over =
        vcgtq_u16(vsubq_u16(mag, vdupq_n_u16(0x0080)),
                  vdupq_n_u16((uint16_t)(hi_bound(rm) - 0x0080)));

    if (vmaxvq_u16(over) != 0)
        return false;
    *inexact = vorrq_u16(*inexact, lo);
    hi = s_arr_bf16_round8_neon(hi, lo, rm);
    vst1q_u16(out + i, hi);
    return true;
}

static inline __attribute__((always_inline)) void
narrow_all_neon(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
                sf_env *env)
{
    uint16x8_t inexact = vdupq_n_u16(0);
    size_t i = 0;

    for (; n - i >= 8; i += 8)
        if (SF_UNLIKELY(!step8_neon(in, out, i, rm, &inexact)))
            s_cv_step(S_CV_F32_BF16, in, out, i, i + 8, rm, env);
    if (i < n)
        s_cv_step(S_CV_F32_BF16, in, out, i, n, rm, env);
    if (vmaxvq_u16(inexact) != 0)
        env->flags |= SF_FLAG_INEXACT;
}

static void
f32_to_bf16_neon(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
                 sf_env *env)
{
#define CALL(m) narrow_all_neon(in, out, n, m, env)
    S_ARR_BY_MODE(CALL, rm);
#undef CALL
}

/* BF16 to FP32: exact but for NaN (quieted), subnormals (DAZ) and Inf
   (saturation), which go through s_cv_step. */
static void
bf16_to_f32_neon(const uint16_t *in, uint32_t *out, size_t n, sf_round rm,
                 sf_env *env)
{
    size_t i = 0;

    for (; n - i >= 8; i += 8) {
        uint16x8_t x = vld1q_u16(in + i);
        uint16x8_t e = vandq_u16(x, vdupq_n_u16(0x7F80));
        uint16x8_t bad = vorrq_u16(vceqq_u16(e, vdupq_n_u16(0x7F80)),
                                   vandq_u16(vtstq_u16(x, vdupq_n_u16(0x7F)),
                                             vceqq_u16(e, vdupq_n_u16(0))));
        if (SF_UNLIKELY(vmaxvq_u16(bad) != 0)) {
            s_cv_step(S_CV_BF16_F32, in, out, i, i + 8, rm, env);
            continue;
        }
        vst1q_u32(out + i, vshll_n_u16(vget_low_u16(x), 16));
        vst1q_u32(out + i + 4, vshll_high_n_u16(x, 16));
    }
    if (i < n)
        s_cv_step(S_CV_BF16_F32, in, out, i, n, rm, env);
}
#else
#define S_ARRAY_NEON 0
#endif

static int
conversion_kind(const sf_format *to, const sf_format *from)
{
    if (from == &sf_format_f32) {
        if (to == &sf_format_bf16)
            return S_CV_F32_BF16;
        if (to == &sf_format_f16)
            return S_CV_F32_F16;
        if (to == &sf_format_e4m3)
            return S_CV_F32_E4M3;
        if (to == &sf_format_e5m2)
            return S_CV_F32_E5M2;
    } else if (to == &sf_format_f32) {
        if (from == &sf_format_bf16)
            return S_CV_BF16_F32;
        if (from == &sf_format_f16)
            return S_CV_F16_F32;
    }
    return S_CV_NONE;
}

/* The portable path, the mode a constant in each loop. */
static void
convert_portable(int kind, const void *in, void *out, size_t n, sf_round rm,
                 sf_env *env)
{
#define CALL(m) s_cv_blocked(kind, in, out, n, m, env)
    S_ARR_BY_MODE(CALL, rm);
#undef CALL
}

void
sf_convert_array(const sf_format *to, const sf_format *from, const void *in,
                 void *out, size_t n, sf_round rm, sf_env *env)
{
    int kind = conversion_kind(to, from);

    if (kind == S_CV_NONE) {
        unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;
        for (size_t i = 0; i < n; i++)
            s_arr_store(out, i, bo,
                        sf_convert(to, from, s_arr_load(in, i, bi), rm, env));
        return;
    }
    switch (s_arr_isa(rm, env)) {
#if S_ARRAY_VEC
    case SF_ISA_AVX512:
        if (kind == S_CV_F32_BF16) {
            f32_to_bf16_avx512((const uint32_t *)in, (uint16_t *)out, n, rm,
                               env);
            return;
        }
        cv_entry_avx512(kind, in, out, n, rm, env);
        return;
    case SF_ISA_AVX2:
        if (kind == S_CV_F32_BF16) {
            f32_to_bf16_avx2((const uint32_t *)in, (uint16_t *)out, n, rm,
                             env);
            return;
        }
        cv_entry_avx2(kind, in, out, n, rm, env);
        return;
#endif
#if S_ARRAY_NEON
    case SF_ISA_NEON:
        if (kind == S_CV_F32_BF16) {
            f32_to_bf16_neon((const uint32_t *)in, (uint16_t *)out, n, rm,
                             env);
            return;
        }
        if (kind == S_CV_BF16_F32) {
            bf16_to_f32_neon((const uint16_t *)in, (uint32_t *)out, n, rm,
                             env);
            return;
        }
        convert_portable(kind, in, out, n, rm, env);
        return;
#endif
    default:
        convert_portable(kind, in, out, n, rm, env);
        return;
    }
}
