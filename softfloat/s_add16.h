/* s_add16.h -- sf_bf16_add_array and sf_bf16_sub_array on AVX2 (16
   elements per step) and AArch64 NEON (8), through the FP32 adder on
   exact sums; included by array_add.c and array_sub.c after s_array.h.

   A BF16 value is an FP32 value whose bottom 16 bits are zero, so the
   step widens both operands (a shift), adds them as FP32 and rounds the
   sum to BF16 by its top and bottom halves in 16-bit lanes, as the FP32
   to BF16 step of sf_convert_array does.  That is the scalar operation's
   result, bit for bit, in every mode and whatever the host's MXCSR holds,
   because every FP32 sum the step keeps is exact, normal and finite:

   - the step takes operands whose exponent fields lie in [16, 253]
     (other lanes: the step is refused);
   - with exponent fields ex >= ey and d = ex - ey <= 15, both
     significands (8 bits) fit one 24-bit window: the sum is exact, so
     the host's rounding mode cannot enter;
   - for d >= 16, the smaller operand y is replaced by y' = +-2^(ex - 16
     - bias) with y's sign.  Both |y| and |y'| lie in (0, 2^(ex - bias -
     9)), below a quarter of x's ulp: every rounding boundary and
     midpoint of the result (the ulp of x, or half of it when x is a
     power of two and the sum falls a binade) is outside the open
     interval between x and x +- 2^(ex - bias - 9), so x + y and x + y'
     round alike in every mode and both are inexact.  x + y' spans 17
     bits: exact;
   - the smallest nonzero sum is 2^(16 - bias - 7) = 2^-118 > 2^-126
     and the largest below 2^127: never tiny (FTZ and the underflow trap
     cannot act) and never overflowing; operands are normal (DAZ cannot
     act); no exception is raised (a step with any other operand is
     refused before the adder sees it, so the host's sticky flags stay
     untouched).
   An operand that is +-0 takes the other's exponent field in the range
   test (x + 0 is x: exact, with x's sign), and the sum of two zeros is
   chosen by the scalar sign rule.
   The sum is then rounded as by the conversion step: a result that is
   zero (exact cancellation, whose sign rule is the scalar path's), or
   whose rounded magnitude could be subnormal or overflow, refuses the
   step; a refused step goes through the file's s_lanes.h kernel (its
   lanes outside that kernel's subset through the portable path), and the
   last n mod 16 elements through the portable path.  The includer
   defines S_LANES_ARITH as S_ARR_ADD or S_ARR_SUB, as SUB is false or
   true. */
#ifndef BF16EMU_SOFTFLOAT_S_ADD16_H
#define BF16EMU_SOFTFLOAT_S_ADD16_H

#if S_ARRAY_VEC

#define S_ADD16_TGT __attribute__((target("avx2")))
#define S_ADD16_AI S_ADD16_TGT static inline __attribute__((always_inline))

/* One step of 16 elements at I in mode RM (constants where inlined);
   false, writing nothing, when an element is outside the subset. */
S_ADD16_AI bool
s_add16_step(const uint16_t *a, const uint16_t *b, uint16_t *out, size_t i,
             bool sub, sf_round rm, __m256i *inexact)
{
    const __m256i zero = _mm256_setzero_si256();
    const __m256i kmag = _mm256_set1_epi16(0x7FFF);
    const __m256i ksign = _mm256_set1_epi16((short)0x8000);
    __m256i va = _mm256_loadu_si256((const __m256i *)(const void *)(a + i));
    __m256i vb = _mm256_loadu_si256((const __m256i *)(const void *)(b + i));
    __m256i ma, mb, ea, eb, elo, ehi, bad, far, asmall, yp, s0, s1, hi, lo,
        mag, za, zb, both, zsum;
    const int bound = rm == SF_RTZ || rm == SF_ROD ? 0x7F7F : 0x7F7E;

    if (sub)
        vb = _mm256_xor_si256(vb, ksign);
    ma = _mm256_and_si256(va, kmag);
    mb = _mm256_and_si256(vb, kmag);
    ea = _mm256_srli_epi16(ma, 7);
    eb = _mm256_srli_epi16(mb, 7);
    /* a +-0 operand takes the other's field (x + 0 is x, exact), and
       two take 127 (their sum: zsum below) */
    za = _mm256_cmpeq_epi16(ma, zero);
    zb = _mm256_cmpeq_epi16(mb, zero);
    both = _mm256_and_si256(za, zb);
    {
        __m256i ea0 = ea;
        ea = _mm256_blendv_epi8(ea, eb, za);
        eb = _mm256_blendv_epi8(eb, ea0, zb);
        ea = _mm256_blendv_epi8(ea, _mm256_set1_epi16(127), both);
        eb = _mm256_blendv_epi8(eb, _mm256_set1_epi16(127), both);
    }
    elo = _mm256_min_epu16(ea, eb);
    ehi = _mm256_max_epu16(ea, eb);
    /* nonzero where the smaller field is below 16 or the larger above
       253 (saturating differences) */
    bad = _mm256_or_si256(_mm256_subs_epu16(_mm256_set1_epi16(16), elo),
                          _mm256_subs_epu16(ehi, _mm256_set1_epi16(253)));
    /* refused before the adder sees a NaN, an infinity, a subnormal or a
       sum that could be tiny or overflow (which would raise the host's
       exception flags) */
    if (!_mm256_testz_si256(bad, bad))
        return false;
    /* d >= 16: the smaller operand becomes +-2^(ex - 16 - bias) */
    far =
        _mm256_cmpgt_epi16(_mm256_sub_epi16(ehi, elo), _mm256_set1_epi16(15));
    asmall = _mm256_cmpgt_epi16(mb, ma); /* both below 2^15 */
    yp = _mm256_or_si256(
        _mm256_and_si256(_mm256_blendv_epi8(vb, va, asmall), ksign),
        _mm256_slli_epi16(_mm256_sub_epi16(ehi, _mm256_set1_epi16(16)), 7));
    va = _mm256_blendv_epi8(va, yp, _mm256_and_si256(far, asmall));
    vb = _mm256_blendv_epi8(vb, yp, _mm256_andnot_si256(asmall, far));
    /* widened (the word into the top half of each 32-bit lane; unpack and
       pack both work within 128-bit halves, so the order comes back) and
       added */
    s0 = _mm256_castps_si256(
        _mm256_add_ps(_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, va)),
                      _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, vb))));
    s1 = _mm256_castps_si256(
        _mm256_add_ps(_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, va)),
                      _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, vb))));
    hi = _mm256_packus_epi32(_mm256_srli_epi32(s0, 16),
                             _mm256_srli_epi32(s1, 16));
    lo = _mm256_packus_epi32(_mm256_blend_epi16(s0, zero, 0xAA),
                             _mm256_blend_epi16(s1, zero, 0xAA));
    /* the sum: normal (|hi| >= 0x0080: not zero) and within the mode's
       bound, or of two zeros: +0, or -0 when both are -0 or, rounding
       toward negative, either is (the scalar rule) */
    zsum = rm == SF_RDN ? _mm256_or_si256(va, vb) : _mm256_and_si256(va, vb);
    hi = _mm256_blendv_epi8(hi, _mm256_and_si256(zsum, ksign), both);
    mag = _mm256_and_si256(hi, kmag);
    bad = _mm256_andnot_si256(
        both,
        _mm256_subs_epu16(_mm256_sub_epi16(mag, _mm256_set1_epi16(0x0080)),
                          _mm256_set1_epi16((short)(bound - 0x0080))));
    if (!_mm256_testz_si256(bad, bad))
        return false;
    *inexact = _mm256_or_si256(*inexact, lo);
    hi = s_arr_bf16_round16(hi, lo, rm);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), hi);
    return true;
}

S_ADD16_AI void
s_add16_all(const uint16_t *a, const uint16_t *b, uint16_t *out, size_t n,
            bool sub, sf_round rm, sf_env *env)
{
    __m256i inexact = _mm256_setzero_si256();
    size_t i = 0;

    for (; n - i >= 16; i += 16)
        if (SF_UNLIKELY(!s_add16_step(a, b, out, i, sub, rm, &inexact)))
            /* the file's operation in s_lanes.h's 32-bit lanes, which
               sends only the lanes outside its subset to the portable
               path */
            arith_entry_avx2(S_ARR_BF16, a + i, b + i, NULL, out + i, 16, rm,
                             env);
    if (i < n)
        s_arr_step(sub ? S_ARR_SUB : S_ARR_ADD, S_ARR_BF16, a, b, NULL, out, i,
                   n, rm, env);
    if (!_mm256_testz_si256(inexact, inexact))
        env->flags |= SF_FLAG_INEXACT;
}

/* The whole array, the mode made a constant; SUB: a - b. */
S_ADD16_TGT static void
s_add16_entry(const void *a, const void *b, void *out, size_t n, bool sub,
              sf_round rm, sf_env *env)
{
#define S_ADD16_CALL(m)                                                       \
    do {                                                                      \
        if (sub)                                                              \
            s_add16_all(a, b, out, n, true, m, env);                          \
        else                                                                  \
            s_add16_all(a, b, out, n, false, m, env);                         \
    } while (0)
    S_ARR_BY_MODE(S_ADD16_CALL, rm);
#undef S_ADD16_CALL
}

/* Runs the BF16 add or sub array here when the call's path is AVX2 or
   AVX-512 (both have AVX2); false: the caller runs its own path. */
static inline bool
s_add16_run(const void *a, const void *b, void *out, size_t n, bool sub,
            sf_round rm, sf_env *env)
{
    sf_isa isa = s_arr_isa(rm, env);

    if (isa != SF_ISA_AVX2 && isa != SF_ISA_AVX512)
        return false;
    s_add16_entry(a, b, out, n, sub, rm, env);
    return true;
}

#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

/* The same step on AArch64 Advanced SIMD, 8 elements: the exact binary32
   sums of the argument above (FPCR's rounding mode, FZ and AH cannot
   act on them either), rounded by their halves in 16-bit lanes as the
   NEON FP32 -> BF16 step of sf_convert_array does. */
static inline __attribute__((always_inline)) bool
s_add16_step_neon(const uint16_t *a, const uint16_t *b, uint16_t *out,
                  size_t i, bool sub, sf_round rm, uint16x8_t *inexact)
{
    const uint16x8_t ksign = vdupq_n_u16(0x8000);
    const uint16x8_t kmag = vdupq_n_u16(0x7FFF);
    const uint16_t bound = rm == SF_RTZ || rm == SF_ROD ? 0x7F7F : 0x7F7E;
    uint16x8_t va = vld1q_u16(a + i), vb = vld1q_u16(b + i);
    uint16x8_t ma, mb, ea, eb, elo, ehi, bad, far, asmall, yp, hi, lo;
    uint32x4_t s0, s1;

    if (sub)
        vb = veorq_u16(vb, ksign);
    ma = vandq_u16(va, kmag);
    mb = vandq_u16(vb, kmag);
    ea = vshrq_n_u16(ma, 7);
    eb = vshrq_n_u16(mb, 7);
    elo = vminq_u16(ea, eb);
    ehi = vmaxq_u16(ea, eb);
    bad = vorrq_u16(vcltq_u16(elo, vdupq_n_u16(16)),
                    vcgtq_u16(ehi, vdupq_n_u16(253)));
    if (vmaxvq_u16(bad) != 0) /* before the adder: as above */
        return false;
    far = vcgtq_u16(vsubq_u16(ehi, elo), vdupq_n_u16(15));
    asmall = vcgtq_u16(mb, ma);
    yp = vorrq_u16(vandq_u16(vbslq_u16(asmall, va, vb), ksign),
                   vshlq_n_u16(vsubq_u16(ehi, vdupq_n_u16(16)), 7));
    va = vbslq_u16(vandq_u16(far, asmall), yp, va);
    vb = vbslq_u16(vbicq_u16(far, asmall), yp, vb);
    s0 = vreinterpretq_u32_f32(
        vaddq_f32(vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(va), 16)),
                  vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(vb), 16))));
    s1 = vreinterpretq_u32_f32(
        vaddq_f32(vreinterpretq_f32_u32(vshll_high_n_u16(va, 16)),
                  vreinterpretq_f32_u32(vshll_high_n_u16(vb, 16))));
    hi = vuzp2q_u16(vreinterpretq_u16_u32(s0), vreinterpretq_u16_u32(s1));
    lo = vuzp1q_u16(vreinterpretq_u16_u32(s0), vreinterpretq_u16_u32(s1));
    /* the sum: normal (not zero) and within the mode's bound */
    bad = vcgtq_u16(vsubq_u16(vandq_u16(hi, kmag), vdupq_n_u16(0x0080)),
                    vdupq_n_u16((uint16_t)(bound - 0x0080)));
    if (vmaxvq_u16(bad) != 0)
        return false;
    *inexact = vorrq_u16(*inexact, lo);
    hi = s_arr_bf16_round8_neon(hi, lo, rm);
    vst1q_u16(out + i, hi);
    return true;
}

static inline __attribute__((always_inline)) void
s_add16_all_neon(const uint16_t *a, const uint16_t *b, uint16_t *out, size_t n,
                 bool sub, sf_round rm, sf_env *env)
{
    uint16x8_t inexact = vdupq_n_u16(0);
    size_t i = 0;

    for (; n - i >= 8; i += 8)
        if (SF_UNLIKELY(!s_add16_step_neon(a, b, out, i, sub, rm, &inexact)))
            s_arr_step(sub ? S_ARR_SUB : S_ARR_ADD, S_ARR_BF16, a, b, NULL,
                       out, i, i + 8, rm, env);
    if (i < n)
        s_arr_step(sub ? S_ARR_SUB : S_ARR_ADD, S_ARR_BF16, a, b, NULL, out, i,
                   n, rm, env);
    if (vmaxvq_u16(inexact) != 0)
        env->flags |= SF_FLAG_INEXACT;
}

static void
s_add16_entry_neon(const void *a, const void *b, void *out, size_t n, bool sub,
                   sf_round rm, sf_env *env)
{
#define S_ADD16_CALL(m)                                                       \
    do {                                                                      \
        if (sub)                                                              \
            s_add16_all_neon(a, b, out, n, true, m, env);                     \
        else                                                                  \
            s_add16_all_neon(a, b, out, n, false, m, env);                    \
    } while (0)
    S_ARR_BY_MODE(S_ADD16_CALL, rm);
#undef S_ADD16_CALL
}

/* Runs the BF16 add or sub array here on the NEON path; false: the
   caller runs the portable path. */
static inline bool
s_add16_run(const void *a, const void *b, void *out, size_t n, bool sub,
            sf_round rm, sf_env *env)
{
    if (s_arr_isa(rm, env) != SF_ISA_NEON)
        return false;
    s_add16_entry_neon(a, b, out, n, sub, rm, env);
    return true;
}

#else
static inline bool
s_add16_run(const void *a, const void *b, void *out, size_t n, bool sub,
            sf_round rm, sf_env *env)
{
    (void)a, (void)b, (void)out, (void)n, (void)sub, (void)rm, (void)env;
    return false;
}
#endif

#endif
