/* s_fast.h -- short paths for the common case: normal operands, a normal
   finite result, no event sink, a mode other than SF_SR */
#ifndef BF16EMU_SOFTFLOAT_S_FAST_H
#define BF16EMU_SOFTFLOAT_S_FAST_H

#include "internal.h"

/*----------------------------------------------------------------------------
 * Each function here computes what the generic operation computes, for a
 * subset of the inputs, with 64-bit integer arithmetic only, and returns
 * S_FAST_NONE (touching nothing) for every input outside the subset; the
 * caller then runs the generic operation.  The subset: every operand
 * normal (exponent field neither 0 nor all ones), no event sink, a mode
 * other than SF_SR, and an exact result that is not zero and rounds to a
 * normal finite value (no overflow, no tininess in either tininess rule).
 * On that subset FTZ, DAZ, saturation, the tininess rule and the NaN rule
 * change nothing, and the only flag an operation can raise is inexact,
 * which the fast path raises exactly when bits are discarded.  The
 * formats: IEEE specials, no padding bits and F <= 23 fraction bits
 * (BF16, FP16, FP32), so that a product has at most 48 bits.
 * tests/softfloat/test_fast.c compares these paths with the generic
 * operations bit for bit, flags included.
 *--------------------------------------------------------------------------*/
#define S_FAST_NONE SF_FAST_NONE

/* The primitives are the public inline ones of softfloat_inline.h (the
   same code, so that a caller of the typed operations inlines them); the
   comments above each of them there describe the subset and why each
   path computes what the generic operation computes. */
#define s_fast_ok sf_fast_ok
#define s_fast_normal sf_fast_normal
#define s_fast_round sf_fast_round
#define s_fast_sig sf_fast_sig
#define s_fast_add sf_fast_add
#define s_fast_mul sf_fast_mul
#define s_fast_fma sf_fast_fma
#define s_fast_narrow sf_fast_narrow

/*----------------------------------------------------------------------------
 * The fast paths by format: s_fast_<op>_<fmt> for the typed wrappers
 * (S_FAST_NONE at once for a format without them) and s_fast_<op>_any
 * for the generic operations, which dispatch on the descriptor.
 *--------------------------------------------------------------------------*/
#define S_FAST_DEFINE(fmt, FB, EB, W)                                         \
    static inline uint64_t s_fast_add_##fmt(uint64_t a, uint64_t b, bool sub, \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        return SF_FAST_ADD_##fmt(a, b, sub, rm, env);                         \
    }                                                                         \
    static inline uint64_t s_fast_mul_##fmt(uint64_t a, uint64_t b,           \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        return s_fast_mul(FB, EB, W, a, b, rm, env);                          \
    }                                                                         \
    static inline uint64_t s_fast_fma_##fmt(                                  \
        uint64_t a, uint64_t b, uint64_t c, sf_round rm, sf_env *env)         \
    {                                                                         \
        return s_fast_fma(FB, EB, a, b, c, rm, env);                          \
    }

#define S_FAST_DEFINE_NONE(fmt)                                               \
    static inline uint64_t s_fast_add_##fmt(uint64_t a, uint64_t b, bool sub, \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        (void)a, (void)b, (void)sub, (void)rm, (void)env;                     \
        return S_FAST_NONE;                                                   \
    }                                                                         \
    static inline uint64_t s_fast_mul_##fmt(uint64_t a, uint64_t b,           \
                                            sf_round rm, sf_env *env)         \
    {                                                                         \
        (void)a, (void)b, (void)rm, (void)env;                                \
        return S_FAST_NONE;                                                   \
    }                                                                         \
    static inline uint64_t s_fast_fma_##fmt(                                  \
        uint64_t a, uint64_t b, uint64_t c, sf_round rm, sf_env *env)         \
    {                                                                         \
        (void)a, (void)b, (void)c, (void)rm, (void)env;                       \
        return S_FAST_NONE;                                                   \
    }

/* W, the window of the addition and the product: 30 where 2 FB + 3 <= 30
   (constants that fit an instruction's 32-bit immediate), else 62.  The
   addition of each format is SF_FAST_ADD_<fmt> of softfloat_inline.h
   (BF16 through the binary32 adder, the others sf_fast_add with these
   constants). */
S_FAST_DEFINE(bf16, S_BF16_FRAC_BITS, S_BF16_EXP_BITS, 30)
S_FAST_DEFINE(f16, S_F16_FRAC_BITS, S_F16_EXP_BITS, 30)
S_FAST_DEFINE(f32, S_F32_FRAC_BITS, S_F32_EXP_BITS, 62)
S_FAST_DEFINE_NONE(tf32)
S_FAST_DEFINE_NONE(e4m3)
S_FAST_DEFINE_NONE(e5m2)

static inline uint64_t
s_fast_add_any(const sf_format *f, uint64_t a, uint64_t b, bool sub,
               sf_round rm, sf_env *env)
{
    if (f == &sf_format_bf16)
        return s_fast_add_bf16(a, b, sub, rm, env);
    if (f == &sf_format_f32)
        return s_fast_add_f32(a, b, sub, rm, env);
    if (f == &sf_format_f16)
        return s_fast_add_f16(a, b, sub, rm, env);
    return S_FAST_NONE;
}

static inline uint64_t
s_fast_mul_any(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
               sf_env *env)
{
    if (f == &sf_format_bf16)
        return s_fast_mul_bf16(a, b, rm, env);
    if (f == &sf_format_f32)
        return s_fast_mul_f32(a, b, rm, env);
    if (f == &sf_format_f16)
        return s_fast_mul_f16(a, b, rm, env);
    return S_FAST_NONE;
}

static inline uint64_t
s_fast_fma_any(const sf_format *f, uint64_t a, uint64_t b, uint64_t c,
               sf_round rm, sf_env *env)
{
    if (f == &sf_format_bf16)
        return s_fast_fma_bf16(a, b, c, rm, env);
    if (f == &sf_format_f32)
        return s_fast_fma_f32(a, b, c, rm, env);
    if (f == &sf_format_f16)
        return s_fast_fma_f16(a, b, c, rm, env);
    return S_FAST_NONE;
}

/* sf_convert's fast path: FP32 to BF16 only. */
static inline uint64_t
s_fast_convert_any(const sf_format *to, const sf_format *from, uint64_t a,
                   sf_round rm, sf_env *env)
{
    if (to == &sf_format_bf16 && from == &sf_format_f32)
        return s_fast_narrow(S_F32_FRAC_BITS, S_BF16_FRAC_BITS, S_F32_EXP_BITS,
                             a, rm, env);
    return S_FAST_NONE;
}

#endif
