/* s_array.h -- the array calls (sf_convert_array, sf_<fmt>_<op>_array):
   the portable path, element by element through the fast subset of
   s_fast.h with the generic operation behind it, and the vector paths of
   s_lanes.h with their drivers */
#ifndef BF16EMU_SOFTFLOAT_S_ARRAY_H
#define BF16EMU_SOFTFLOAT_S_ARRAY_H

#include <string.h>

#include "s_fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define S_ARRAY_VEC 1
#include <immintrin.h>
#else
#define S_ARRAY_VEC 0
#endif

/* The operations and formats of the array kernels. */
enum
{
    S_ARR_ADD,
    S_ARR_SUB,
    S_ARR_MUL,
    S_ARR_FMA
};
enum
{
    S_ARR_BF16,
    S_ARR_F16,
    S_ARR_F32
};
/* The conversions with kernels (others go element by element). */
enum
{
    S_CV_NONE,
    S_CV_F32_BF16,
    S_CV_F32_F16,
    S_CV_F32_E4M3,
    S_CV_F32_E5M2,
    S_CV_BF16_F32,
    S_CV_F16_F32
};

#define S_AI static inline __attribute__((always_inline))

/*----------------------------------------------------------------------------
 * Element access.
 *--------------------------------------------------------------------------*/
S_AI uint64_t
s_arr_load(const void *p, size_t i, unsigned bytes)
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

S_AI void
s_arr_store(void *p, size_t i, unsigned bytes, uint64_t v)
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

/*----------------------------------------------------------------------------
 * The portable arithmetic: one element through the fast subset, else the
 * generic operation (which handles events, SR and every special case).
 *--------------------------------------------------------------------------*/
S_AI const sf_format *
s_arr_format(int fmt)
{
    return fmt == S_ARR_BF16  ? &sf_format_bf16
           : fmt == S_ARR_F16 ? &sf_format_f16
                              : &sf_format_f32;
}

S_AI uint64_t
s_arr_op1(int op, int fmt, uint64_t a, uint64_t b, uint64_t c, sf_round rm,
          sf_env *env)
{
    const sf_format *f = s_arr_format(fmt);
    uint64_t z;

    switch (op) {
    case S_ARR_ADD:
    case S_ARR_SUB:
        z = fmt == S_ARR_BF16 ? s_fast_add_bf16(a, b, op == S_ARR_SUB, rm, env)
            : fmt == S_ARR_F16
                ? s_fast_add_f16(a, b, op == S_ARR_SUB, rm, env)
                : s_fast_add_f32(a, b, op == S_ARR_SUB, rm, env);
        return z != S_FAST_NONE ? z
                                : s_add_sub(f, a, b, op == S_ARR_SUB, rm, env);
    case S_ARR_MUL:
        z = fmt == S_ARR_BF16  ? s_fast_mul_bf16(a, b, rm, env)
            : fmt == S_ARR_F16 ? s_fast_mul_f16(a, b, rm, env)
                               : s_fast_mul_f32(a, b, rm, env);
        return z != S_FAST_NONE ? z : s_mul(f, a, b, rm, env);
    default:
        z = fmt == S_ARR_BF16  ? s_fast_fma_bf16(a, b, c, rm, env)
            : fmt == S_ARR_F16 ? s_fast_fma_f16(a, b, c, rm, env)
                               : s_fast_fma_f32(a, b, c, rm, env);
        return z != S_FAST_NONE ? z : s_fma(f, a, b, c, rm, env);
    }
}

/* Elements [I0, I1) in ascending order (so SR draws and events come as
   from n scalar calls). */
S_AI void
s_arr_portable(int op, int fmt, const void *a, const void *b, const void *c,
               void *out, size_t i0, size_t i1, sf_round rm, sf_env *env)
{
    unsigned bytes = fmt == S_ARR_F32 ? 4 : 2;

    for (size_t i = i0; i < i1; i++)
        s_arr_store(out, i, bytes,
                    s_arr_op1(op, fmt, s_arr_load(a, i, bytes),
                              s_arr_load(b, i, bytes),
                              op == S_ARR_FMA ? s_arr_load(c, i, bytes) : 0,
                              rm, env));
}

/* The portable path with the mode a constant in each loop. */
#define S_ARR_BY_MODE(call_with_rm, rm)                                       \
    do {                                                                      \
        switch (rm) {                                                         \
        case SF_RNE:                                                          \
            call_with_rm(SF_RNE);                                             \
            break;                                                            \
        case SF_RTZ:                                                          \
            call_with_rm(SF_RTZ);                                             \
            break;                                                            \
        case SF_RDN:                                                          \
            call_with_rm(SF_RDN);                                             \
            break;                                                            \
        case SF_RUP:                                                          \
            call_with_rm(SF_RUP);                                             \
            break;                                                            \
        case SF_RNA:                                                          \
            call_with_rm(SF_RNA);                                             \
            break;                                                            \
        case SF_ROD:                                                          \
            call_with_rm(SF_ROD);                                             \
            break;                                                            \
        default:                                                              \
            call_with_rm(rm);                                                 \
            break;                                                            \
        }                                                                     \
    } while (0)

/*----------------------------------------------------------------------------
 * The portable conversions: the fast subset by the fields (as s_lanes.h's
 * narrow and widen), else sf_convert.
 *--------------------------------------------------------------------------*/
/* FP32 bits X to a format (FB, EB, largest finite magnitude MAXB), or
   S_FAST_NONE; *INX gets whether bits were discarded. */
S_AI uint64_t
s_arr_narrow1(unsigned fb, unsigned eb, uint32_t maxb, uint32_t x, sf_round rm,
              unsigned *inx)
{
    const unsigned sh = 23 - fb;
    const uint32_t rebias = 127 - ((1u << (eb - 1)) - 1);
    const uint32_t half = 1u << (sh - 1);
    uint32_t mag = x & 0x7FFFFFFF, sign = x >> 31;
    uint32_t er = (mag >> 23) - rebias;
    uint32_t kept = (mag >> sh) - (rebias << fb),
             rem = mag & ((half << 1) - 1);
    bool inc;

    if (er - 1 >= (maxb >> fb))
        return S_FAST_NONE;
    switch (rm) {
    case SF_RNE:
        inc = rem + (kept & 1) > half;
        break;
    case SF_RNA:
        inc = rem >= half;
        break;
    case SF_RUP:
        inc = rem != 0 && !sign;
        break;
    case SF_RDN:
        inc = rem != 0 && sign;
        break;
    case SF_ROD:
        inc = rem != 0 && (kept & 1) == 0;
        break;
    case SF_RTZ:
        inc = false;
        break;
    default:
        return S_FAST_NONE;
    }
    kept += inc;
    if (kept > maxb)
        return S_FAST_NONE;
    *inx |= rem != 0;
    return kept | (sign << (fb + eb));
}

/* The settings of an environment that a conversion kernel reads for the
   values outside the fast subset, resolved once per call. */
typedef struct
{
    bool daz, ftz, after, saturate, dnan;
    uint32_t dnan_bits; /* the default NaN of the target (for DNAN) */
    /* the target's encodings, positive: s_pack_inf (the NaN of a format
       without Inf), s_pack_max, and the NaN of a quieted FP32 NaN as
       s_convert_nan builds it (the exponent field and the quiet bit, or
       the one NaN of a format without Inf) */
    uint32_t inf_bits, max_bits, nan_bits;
} s_cv_env;

S_AI void
s_cv_env_of(const sf_format *to, const sf_env *env, s_cv_env *ce)
{
    ce->daz = env->daz;
    ce->ftz = env->ftz;
    ce->after = env->tininess_after;
    ce->saturate = env->saturate;
    ce->dnan = env->nan_rule == SF_NAN_DEFAULT;
    ce->dnan_bits = (uint32_t)sf_default_nan_bits(to, env);
    ce->inf_bits = (uint32_t)s_pack_inf(to, false);
    ce->max_bits = (uint32_t)s_pack_max(to, false);
    ce->nan_bits = (uint32_t)(to->specials == SF_SPECIALS_FN
                                  ? to->exp_mask | to->frac_mask
                                  : to->exp_mask | to->quiet_mask);
}

/* The target's fields for a narrowing kind. */
S_AI void
s_cv_params(int kind, unsigned *fb, unsigned *eb, uint32_t *maxb)
{
    switch (kind) {
    case S_CV_F32_BF16:
        *fb = 7, *eb = 8, *maxb = 0x7F7F;
        break;
    case S_CV_F32_F16:
        *fb = 10, *eb = 5, *maxb = 0x7BFF;
        break;
    case S_CV_F32_E4M3:
        *fb = 3, *eb = 4, *maxb = 0x7E;
        break;
    default: /* S_CV_F32_E5M2 */
        *fb = 2, *eb = 5, *maxb = 0x7B;
        break;
    }
}

/* BF16 or FP16 bits to FP32 bits, or S_FAST_NONE (NaN, Inf, which
   saturation turns into the largest finite value, and subnormals). */
S_AI uint64_t
s_arr_widen1(int kind, uint32_t x)
{
    if (kind == S_CV_BF16_F32) {
        uint32_t e = x & 0x7F80, f = x & 0x7F;
        if (e == 0x7F80 || (f != 0 && e == 0))
            return S_FAST_NONE;
        return (uint64_t)x << 16;
    } else {
        uint32_t mag = x & 0x7FFF, e = mag >> 10, f = mag & 0x3FF, r;
        if (e == 31 || (f != 0 && e == 0))
            return S_FAST_NONE;
        r = e == 0 ? 0 : (mag << 13) + (112u << 23);
        return r | ((x & 0x8000u) << 16);
    }
}

S_AI const sf_format *
s_cv_to(int kind)
{
    switch (kind) {
    case S_CV_F32_BF16:
        return &sf_format_bf16;
    case S_CV_F32_F16:
        return &sf_format_f16;
    case S_CV_F32_E4M3:
        return &sf_format_e4m3;
    case S_CV_F32_E5M2:
        return &sf_format_e5m2;
    default:
        return &sf_format_f32;
    }
}

S_AI const sf_format *
s_cv_from(int kind)
{
    return kind == S_CV_BF16_F32  ? &sf_format_bf16
           : kind == S_CV_F16_F32 ? &sf_format_f16
                                  : &sf_format_f32;
}

/* Elements [I0, I1) of conversion KIND in ascending order. */
S_AI void
s_cv_portable(int kind, const void *in, void *out, size_t i0, size_t i1,
              sf_round rm, sf_env *env)
{
    const sf_format *to = s_cv_to(kind), *from = s_cv_from(kind);
    unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;
    unsigned inx = 0;

    if (kind == S_CV_BF16_F32 || kind == S_CV_F16_F32) {
        for (size_t i = i0; i < i1; i++) {
            uint32_t x = (uint32_t)s_arr_load(in, i, bi);
            uint64_t r = s_fast_ok(env) && rm != SF_SR ? s_arr_widen1(kind, x)
                                                       : S_FAST_NONE;
            if (r == S_FAST_NONE)
                r = sf_convert(to, from, x, rm, env);
            s_arr_store(out, i, bo, r);
        }
        return;
    }
    {
        unsigned fb, eb;
        uint32_t maxb;
        bool fast = s_fast_ok(env);
        s_cv_params(kind, &fb, &eb, &maxb);
        for (size_t i = i0; i < i1; i++) {
            uint32_t x = (uint32_t)s_arr_load(in, i, bi);
            uint64_t r =
                fast ? s_arr_narrow1(fb, eb, maxb, x, rm, &inx) : S_FAST_NONE;
            if (r == S_FAST_NONE)
                r = sf_convert(to, from, x, rm, env);
            s_arr_store(out, i, bo, r);
        }
    }
    if (inx)
        env->flags |= SF_FLAG_INEXACT;
}

/* Element I0 + j of conversion KIND through sf_convert for each bit j of
   LANES, in ascending j (not inlined: the lanes outside a kernel's reach
   are rare). */
__attribute__((noinline, unused)) static void
s_cv_lanes(int kind, const void *in, void *out, size_t i0, uint64_t lanes,
           sf_round rm, sf_env *env)
{
    const sf_format *to = s_cv_to(kind), *from = s_cv_from(kind);
    unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;

    for (; lanes != 0; lanes &= lanes - 1) {
        size_t i = i0 + (size_t)__builtin_ctzll(lanes);
        s_arr_store(out, i, bo,
                    sf_convert(to, from, s_arr_load(in, i, bi), rm, env));
    }
}

/* The portable path of a conversion with kernels: blocks of 16 elements
   computed without branches (a compiler may vectorise the inner loops for
   whatever the target has).  A narrowing gives +-0 for +-0 (no flag in
   any mode or setting) in the block; an element outside the fast subset
   and not a zero goes through sf_convert alone, after the block's
   results are stored. */
#define S_CV_BLOCK 16
S_AI void
s_cv_blocked(int kind, const void *in, void *out, size_t n, sf_round rm,
             sf_env *env)
{
    const sf_format *to = s_cv_to(kind), *from = s_cv_from(kind);
    unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;
    size_t i = 0;
    uint32_t inx = 0;

    if (rm == SF_SR || !s_fast_ok(env)) {
        s_cv_portable(kind, in, out, 0, n, rm, env);
        return;
    }
    for (; n - i >= S_CV_BLOCK; i += S_CV_BLOCK) {
        uint32_t x[S_CV_BLOCK], r[S_CV_BLOCK], away[S_CV_BLOCK] = {0};
        uint32_t bad = 0, bx = 0, outside = 0;
        for (int j = 0; j < S_CV_BLOCK; j++)
            x[j] = (uint32_t)s_arr_load(in, i + (size_t)j, bi);
        if (kind == S_CV_BF16_F32) {
            for (int j = 0; j < S_CV_BLOCK; j++) {
                uint32_t e = x[j] & 0x7F80, f = x[j] & 0x7F;
                bad |= (e == 0x7F80) | ((f != 0) & (e == 0));
                r[j] = x[j] << 16;
            }
        } else if (kind == S_CV_F16_F32) {
            for (int j = 0; j < S_CV_BLOCK; j++) {
                uint32_t mag = x[j] & 0x7FFF, e = mag >> 10, f = mag & 0x3FF;
                uint32_t z = (uint32_t)0 - (e == 0),
                         o = (uint32_t)0 - (e == 31);
                bad |= (e == 31) | ((f != 0) & (e == 0));
                r[j] = (((mag << 13) + (112u << 23)) & ~z & ~o)
                       | (0x7F800000 & o) | ((x[j] & 0x8000u) << 16);
            }
        } else {
            unsigned fb, eb;
            uint32_t maxb, rebias, half;
            unsigned sh;
            s_cv_params(kind, &fb, &eb, &maxb);
            sh = 23 - fb;
            rebias = 127 - ((1u << (eb - 1)) - 1);
            half = 1u << (sh - 1);
            for (int j = 0; j < S_CV_BLOCK; j++) {
                uint32_t mag = x[j] & 0x7FFFFFFF, sign = x[j] >> 31;
                uint32_t er = (mag >> 23) - rebias;
                uint32_t kept = (mag >> sh) - (rebias << fb);
                uint32_t rem = mag & ((half << 1) - 1), inc, out_of_subset;
                uint32_t zero = (uint32_t)0 - (mag == 0);
                switch (rm) {
                case SF_RNE:
                    inc = rem + (kept & 1) > half;
                    break;
                case SF_RNA:
                    inc = rem >= half;
                    break;
                case SF_RUP:
                    inc = (rem != 0) & (sign ^ 1);
                    break;
                case SF_RDN:
                    inc = (rem != 0) & sign;
                    break;
                case SF_ROD:
                    inc = (rem != 0) & ~kept & 1;
                    break;
                default:
                    inc = 0;
                    break;
                }
                kept += inc;
                out_of_subset =
                    ((er - 1 >= (maxb >> fb)) | (kept > maxb)) & ~zero & 1;
                away[j] = out_of_subset;
                outside |= out_of_subset;
                bx |= rem & (out_of_subset - 1);
                r[j] = (kept & ~zero) | (sign << (fb + eb));
            }
        }
        if (SF_UNLIKELY(bad)) {
            s_cv_portable(kind, in, out, i, i + S_CV_BLOCK, rm, env);
            continue;
        }
        inx |= bx;
        if (SF_UNLIKELY(outside != 0)) {
            uint64_t lanes = 0;
            for (int j = 0; j < S_CV_BLOCK; j++) {
                s_arr_store(out, i + (size_t)j, bo, r[j]);
                lanes |= (uint64_t)away[j] << j;
            }
            s_cv_lanes(kind, in, out, i, lanes, rm, env);
            continue;
        }
        for (int j = 0; j < S_CV_BLOCK; j++)
            s_arr_store(out, i + (size_t)j, bo, r[j]);
    }
    if (i < n)
        s_cv_portable(kind, in, out, i, n, rm, env);
    if (inx != 0)
        env->flags |= SF_FLAG_INEXACT;
}

/* The portable steps the vector drivers hand a step to (not inlined:
   they are rare). */
__attribute__((noinline, unused)) static void
s_arr_step(int op, int fmt, const void *a, const void *b, const void *c,
           void *out, size_t i0, size_t i1, sf_round rm, sf_env *env)
{
    s_arr_portable(op, fmt, a, b, c, out, i0, i1, rm, env);
}

/* Z[j] = element I0 + j of operation OP for each bit j of LANES, in
   ascending j (not inlined: rare).  Nothing is stored: the caller blends
   Z into its vector before it stores it (OUT may be A, B or C). */
__attribute__((noinline, unused)) static void
s_arr_lanes(int op, int fmt, const void *a, const void *b, const void *c,
            size_t i0, uint64_t lanes, sf_round rm, sf_env *env, uint32_t *z)
{
    unsigned bytes = fmt == S_ARR_F32 ? 4 : 2;

    for (; lanes != 0; lanes &= lanes - 1) {
        unsigned j = (unsigned)__builtin_ctzll(lanes);
        size_t i = i0 + j;
        z[j] = (uint32_t)s_arr_op1(
            op, fmt, s_arr_load(a, i, bytes), s_arr_load(b, i, bytes),
            op == S_ARR_FMA ? s_arr_load(c, i, bytes) : 0, rm, env);
    }
}

__attribute__((noinline, unused)) static void
s_cv_step(int kind, const void *in, void *out, size_t i0, size_t i1,
          sf_round rm, sf_env *env)
{
    s_cv_portable(kind, in, out, i0, i1, rm, env);
}

/* The path an array call takes: a vector path only without an event
   sink and in a mode other than SF_SR. */
S_AI sf_isa
s_arr_isa(sf_round rm, const sf_env *env)
{
    if (rm == SF_SR || !s_fast_ok(env))
        return SF_ISA_SCALAR;
    return sf_isa_resolve(env->isa);
}

/* The portable path of operation OP, the format and the mode constants
   in each loop. */
S_AI void
s_arr_portable_all(int op, int fmt, const void *a, const void *b,
                   const void *c, void *out, size_t n, sf_round rm,
                   sf_env *env)
{
#define S_ARR_CALL(m)                                                         \
    do {                                                                      \
        if (fmt == S_ARR_BF16)                                                \
            s_arr_portable(op, S_ARR_BF16, a, b, c, out, 0, n, m, env);       \
        else if (fmt == S_ARR_F16)                                            \
            s_arr_portable(op, S_ARR_F16, a, b, c, out, 0, n, m, env);        \
        else                                                                  \
            s_arr_portable(op, S_ARR_F32, a, b, c, out, 0, n, m, env);        \
    } while (0)
    S_ARR_BY_MODE(S_ARR_CALL, rm);
#undef S_ARR_CALL
}

/* Defines s_arr_run for the file's operation S_LANES_ARITH: the path by
   s_arr_isa. */
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
/* The same on AArch64 Advanced SIMD, eight values. */
static inline __attribute__((always_inline)) uint16x8_t
s_arr_bf16_round8_neon(uint16x8_t hi, uint16x8_t lo, sf_round rm)
{
    const uint16x8_t one = vdupq_n_u16(1);
    uint16x8_t nz = vminq_u16(lo, one); /* 1 where lo != 0 */

    switch (rm) {
    case SF_RNE: /* up when lo > 0x8000 - (hi & 1): the mask is -1 */
        return vsubq_u16(hi, vcgtq_u16(lo, vsubq_u16(vdupq_n_u16(0x8000),
                                                     vandq_u16(hi, one))));
    case SF_RNA:
        return vaddq_u16(hi, vshrq_n_u16(lo, 15));
    case SF_RUP:
        return vaddq_u16(hi, vbicq_u16(nz, vshrq_n_u16(hi, 15)));
    case SF_RDN:
        return vaddq_u16(hi, vandq_u16(nz, vshrq_n_u16(hi, 15)));
    case SF_ROD:
        return vaddq_u16(hi, vbicq_u16(nz, hi));
    default: /* SF_RTZ */
        return hi;
    }
}
#endif

#if S_ARRAY_VEC
/* Sixteen binary32 values, split into their top halves HI and bottom
   halves LO, rounded to BF16 in mode RM (not SF_SR): HI plus the
   increment of each lane.  Overflow is the caller's to rule out. */
__attribute__((target("avx2"))) static inline
    __attribute__((always_inline)) __m256i
    s_arr_bf16_round16(__m256i hi, __m256i lo, sf_round rm)
{
    const __m256i one = _mm256_set1_epi16(1);
    __m256i nz = _mm256_min_epu16(lo, one); /* 1 where lo != 0 */

    switch (rm) {
    case SF_RNE: { /* up when lo > 0x8000 - (hi & 1) */
        __m256i thr = _mm256_sub_epi16(_mm256_set1_epi16((short)0x8000),
                                       _mm256_and_si256(hi, one));
        __m256i keep = _mm256_cmpeq_epi16(_mm256_subs_epu16(lo, thr),
                                          _mm256_setzero_si256());
        return _mm256_add_epi16(hi, _mm256_add_epi16(one, keep));
    }
    case SF_RNA:
        return _mm256_add_epi16(hi, _mm256_srli_epi16(lo, 15));
    case SF_RUP:
        return _mm256_add_epi16(
            hi, _mm256_andnot_si256(_mm256_srli_epi16(hi, 15), nz));
    case SF_RDN:
        return _mm256_add_epi16(
            hi, _mm256_and_si256(_mm256_srli_epi16(hi, 15), nz));
    case SF_ROD:
        return _mm256_add_epi16(hi, _mm256_andnot_si256(hi, nz));
    default: /* SF_RTZ */
        return hi;
    }
}
#endif

#if S_ARRAY_VEC
#define S_ARR_DEFINE_RUN()                                                    \
    static void s_arr_run(int fmt, const void *a, const void *b,              \
                          const void *c, void *out, size_t n, sf_round rm,    \
                          sf_env *env)                                        \
    {                                                                         \
        switch (s_arr_isa(rm, env)) {                                         \
        case SF_ISA_AVX512:                                                   \
            if (fmt == S_ARR_F32)                                             \
                arith_entry_avx512q(fmt, a, b, c, out, n, rm, env);           \
            else                                                              \
                arith_entry_avx512(fmt, a, b, c, out, n, rm, env);            \
            return;                                                           \
        case SF_ISA_AVX2:                                                     \
            if (fmt == S_ARR_F32)                                             \
                arith_entry_avx2q(fmt, a, b, c, out, n, rm, env);             \
            else                                                              \
                arith_entry_avx2(fmt, a, b, c, out, n, rm, env);              \
            return;                                                           \
        default:                                                              \
            s_arr_portable_all(S_LANES_ARITH, fmt, a, b, c, out, n, rm, env); \
            return;                                                           \
        }                                                                     \
    }
#else
#define S_ARR_DEFINE_RUN()                                                    \
    static void s_arr_run(int fmt, const void *a, const void *b,              \
                          const void *c, void *out, size_t n, sf_round rm,    \
                          sf_env *env)                                        \
    {                                                                         \
        s_arr_portable_all(S_LANES_ARITH, fmt, a, b, c, out, n, rm, env);     \
    }
#endif

/* The three public entry points of one binary array operation OP
   (sf_bf16_OP_array, sf_f16_OP_array, sf_f32_OP_array), after
   S_ARR_DEFINE_RUN().  BF16_FAST is an expression over the entry's
   arguments that handles the whole BF16 call and returns true, or
   false to leave it to s_arr_run. */
#define S_ARR_DEFINE_BINARY(OP, BF16_FAST)                                    \
    void sf_bf16_##OP##_array(const sf_bf16 *a, const sf_bf16 *b,            \
                              sf_bf16 *out, size_t n, sf_round rm,            \
                              sf_env *env)                                    \
    {                                                                         \
        if (BF16_FAST)                                                        \
            return;                                                           \
        s_arr_run(S_ARR_BF16, a, b, NULL, out, n, rm, env);                   \
    }                                                                         \
    void sf_f16_##OP##_array(const sf_f16 *a, const sf_f16 *b, sf_f16 *out,   \
                             size_t n, sf_round rm, sf_env *env)              \
    {                                                                         \
        s_arr_run(S_ARR_F16, a, b, NULL, out, n, rm, env);                    \
    }                                                                         \
    void sf_f32_##OP##_array(const sf_f32 *a, const sf_f32 *b, sf_f32 *out,   \
                             size_t n, sf_round rm, sf_env *env)              \
    {                                                                         \
        s_arr_run(S_ARR_F32, a, b, NULL, out, n, rm, env);                    \
    }

#endif
