/* sf_convert_array -- sf_convert over an array, with an AVX-512 path for
   FP32 to BF16 */
#include <string.h>

#include "s_fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_VEC 1
#include <immintrin.h>
#else
#define HAVE_VEC 0
#endif

static uint64_t
load_elem(const void *p, size_t i, unsigned bytes)
{
    const unsigned char *c = (const unsigned char *)p + i * bytes;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;

    switch (bytes) {
    case 1:
        memcpy(&u8, c, 1);
        return u8;
    case 2:
        memcpy(&u16, c, 2);
        return u16;
    default:
        memcpy(&u32, c, 4);
        return u32;
    }
}

static void
store_elem(void *p, size_t i, unsigned bytes, uint64_t v)
{
    unsigned char *c = (unsigned char *)p + i * bytes;
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;

    switch (bytes) {
    case 1:
        memcpy(c, &u8, 1);
        break;
    case 2:
        memcpy(c, &u16, 2);
        break;
    default:
        memcpy(c, &u32, 4);
        break;
    }
}

/* Elements [I0, I1) one by one. */
static void
convert_scalar(const sf_format *to, const sf_format *from, const void *in,
               void *out, size_t i0, size_t i1, sf_round rm, sf_env *env)
{
    unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;

    for (size_t i = i0; i < i1; i++)
        store_elem(out, i, bo,
                   sf_convert(to, from, load_elem(in, i, bi), rm, env));
}

#if HAVE_VEC

#define TGT __attribute__((target("avx512f,avx512bw")))

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
/* The largest |hi| the vector step takes in mode RM. */
static inline int
hi_bound(sf_round rm)
{
    return rm == SF_RTZ || rm == SF_ROD ? 0x7F7F : 0x7F7E;
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
    /* odd and even 16-bit words of two registers */
    const __m512i pick_hi = _mm512_set_epi16(
        63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29,
        27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i pick_lo = _mm512_set_epi16(
        62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28,
        26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i one = _mm512_set1_epi16(1);
    __m512i x0, x1, hi, lo, mag;
    __mmask32 inc;

    if (cnt == 32) {
        x0 = _mm512_loadu_si512((const void *)(in + i));
        x1 = _mm512_loadu_si512((const void *)(in + i + 16));
    } else {
        /* the missing lanes read 1.0: in the subset, exact */
        const __m512i fill = _mm512_set1_epi32(0x3F800000);
        __mmask16 m0 = (__mmask16)(cnt >= 16 ? 0xFFFFu : (1u << cnt) - 1);
        __mmask16 m1 = (__mmask16)(cnt > 16 ? (1u << (cnt - 16)) - 1 : 0u);
        x0 = _mm512_mask_loadu_epi32(fill, m0, (const void *)(in + i));
        x1 = _mm512_mask_loadu_epi32(fill, m1, (const void *)(in + i + 16));
    }
    hi = _mm512_permutex2var_epi16(x0, pick_hi, x1);
    lo = _mm512_permutex2var_epi16(x0, pick_lo, x1);
    /* normal (|hi| >= 0x0080) and within the bound, unsigned */
    mag = _mm512_and_si512(hi, _mm512_set1_epi16(0x7FFF));
    if (_mm512_cmpgt_epu16_mask(
            _mm512_sub_epi16(mag, _mm512_set1_epi16(0x0080)),
            _mm512_set1_epi16((short)(hi_bound(rm) - 0x0080))))
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
    if (cnt == 32)
        _mm512_storeu_si512((void *)(out + i), hi);
    else
        _mm512_mask_storeu_epi16((void *)(out + i),
                                 (__mmask32)((UINT64_C(1) << cnt) - 1), hi);
    return true;
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
   that refuses its elements sends them through sf_convert one by one (so
   those results and flags are sf_convert's). */
TGT static inline __attribute__((always_inline)) void
narrow_all(const uint32_t *in, uint16_t *out, size_t n, sf_round rm,
           sf_env *env)
{
    uint32_t inexact = 0;
    size_t i = 0;

    while ((i = run32(in, out, i, n, rm, &inexact)) < n) {
        size_t cnt = n - i < 32 ? n - i : 32;
        if (cnt == 32 || !step32(in, out, i, cnt, rm, &inexact))
            for (size_t j = i; j < i + cnt; j++)
                out[j] = (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32,
                                              in[j], rm, env);
        i += cnt;
    }
    if (inexact)
        env->flags |= SF_FLAG_INEXACT;
}

TGT static void
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

#endif /* HAVE_VEC */

void
sf_convert_array(const sf_format *to, const sf_format *from, const void *in,
                 void *out, size_t n, sf_round rm, sf_env *env)
{
#if HAVE_VEC
    /* the CPU's features as the compiler's run-time library read them
       once (see sf_mma_gemm_avx512_available) */
    __builtin_cpu_init();
    if (to == &sf_format_bf16 && from == &sf_format_f32 && rm != SF_SR
        && s_fast_ok(env) && __builtin_cpu_supports("avx512f")
        && __builtin_cpu_supports("avx512bw")) {
        f32_to_bf16_avx512((const uint32_t *)in, (uint16_t *)out, n, rm, env);
        return;
    }
#endif
    convert_scalar(to, from, in, out, 0, n, rm, env);
}
