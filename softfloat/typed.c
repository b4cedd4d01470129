/* typed.c -- the sf_<fmt>_<op> wrappers over the generic operations, with
   the fast paths of softfloat/s_fast.h inlined */
#include "s_fast.h"

#define SF_DEFINE_TYPED_OPS(fmt, T, W)                                      \
    static inline T fmt##_wrap(uint64_t bits)                               \
    {                                                                       \
        T v;                                                                \
        v.bits = (W)bits;                                                   \
        return v;                                                           \
    }                                                                       \
    T sf_##fmt##_add(T a, T b, sf_round rm, sf_env *env)                    \
    {                                                                       \
        uint64_t z = s_fast_add_##fmt(a.bits, b.bits, false, rm, env);      \
        if (z == S_FAST_NONE)                                               \
            z = s_add_sub(&sf_format_##fmt, a.bits, b.bits, false, rm, env); \
        return fmt##_wrap(z);                                               \
    }                                                                       \
    T sf_##fmt##_sub(T a, T b, sf_round rm, sf_env *env)                    \
    {                                                                       \
        uint64_t z = s_fast_add_##fmt(a.bits, b.bits, true, rm, env);       \
        if (z == S_FAST_NONE)                                               \
            z = s_add_sub(&sf_format_##fmt, a.bits, b.bits, true, rm, env);  \
        return fmt##_wrap(z);                                               \
    }                                                                       \
    T sf_##fmt##_mul(T a, T b, sf_round rm, sf_env *env)                    \
    {                                                                       \
        uint64_t z = s_fast_mul_##fmt(a.bits, b.bits, rm, env);             \
        if (z == S_FAST_NONE)                                               \
            z = s_mul(&sf_format_##fmt, a.bits, b.bits, rm, env);           \
        return fmt##_wrap(z);                                               \
    }                                                                       \
    T sf_##fmt##_div(T a, T b, sf_round rm, sf_env *env)                    \
    {                                                                       \
        return fmt##_wrap(sf_div(&sf_format_##fmt, a.bits, b.bits, rm,      \
                                 env));                                     \
    }                                                                       \
    T sf_##fmt##_sqrt(T a, sf_round rm, sf_env *env)                        \
    {                                                                       \
        return fmt##_wrap(sf_sqrt(&sf_format_##fmt, a.bits, rm, env));      \
    }                                                                       \
    T sf_##fmt##_fma(T a, T b, T c, sf_round rm, sf_env *env)               \
    {                                                                       \
        uint64_t z = s_fast_fma_##fmt(a.bits, b.bits, c.bits, rm, env);     \
        if (z == S_FAST_NONE)                                               \
            z = s_fma(&sf_format_##fmt, a.bits, b.bits, c.bits, rm, env);    \
        return fmt##_wrap(z);                                               \
    }                                                                       \
    T sf_##fmt##_neg(T a)                                                   \
    {                                                                       \
        return fmt##_wrap(sf_neg(&sf_format_##fmt, a.bits));                \
    }                                                                       \
    T sf_##fmt##_abs(T a)                                                   \
    {                                                                       \
        return fmt##_wrap(sf_abs(&sf_format_##fmt, a.bits));                \
    }                                                                       \
    T sf_##fmt##_minimum(T a, T b, sf_env *env)                             \
    {                                                                       \
        return fmt##_wrap(sf_minimum(&sf_format_##fmt, a.bits, b.bits,      \
                                     env));                                 \
    }                                                                       \
    T sf_##fmt##_maximum(T a, T b, sf_env *env)                             \
    {                                                                       \
        return fmt##_wrap(sf_maximum(&sf_format_##fmt, a.bits, b.bits,      \
                                     env));                                 \
    }                                                                       \
    T sf_##fmt##_minimum_number(T a, T b, sf_env *env)                      \
    {                                                                       \
        return fmt##_wrap(sf_minimum_number(&sf_format_##fmt, a.bits,       \
                                            b.bits, env));                  \
    }                                                                       \
    T sf_##fmt##_maximum_number(T a, T b, sf_env *env)                      \
    {                                                                       \
        return fmt##_wrap(sf_maximum_number(&sf_format_##fmt, a.bits,       \
                                            b.bits, env));                  \
    }                                                                       \
    bool sf_##fmt##_eq(T a, T b, sf_env *env)                               \
    {                                                                       \
        return sf_eq(&sf_format_##fmt, a.bits, b.bits, env);                \
    }                                                                       \
    bool sf_##fmt##_lt(T a, T b, sf_env *env)                               \
    {                                                                       \
        return sf_lt(&sf_format_##fmt, a.bits, b.bits, env);                \
    }                                                                       \
    bool sf_##fmt##_le(T a, T b, sf_env *env)                               \
    {                                                                       \
        return sf_le(&sf_format_##fmt, a.bits, b.bits, env);                \
    }                                                                       \
    bool sf_##fmt##_eq_signaling(T a, T b, sf_env *env)                     \
    {                                                                       \
        return sf_eq_signaling(&sf_format_##fmt, a.bits, b.bits, env);      \
    }                                                                       \
    bool sf_##fmt##_lt_quiet(T a, T b, sf_env *env)                         \
    {                                                                       \
        return sf_lt_quiet(&sf_format_##fmt, a.bits, b.bits, env);          \
    }                                                                       \
    bool sf_##fmt##_le_quiet(T a, T b, sf_env *env)                         \
    {                                                                       \
        return sf_le_quiet(&sf_format_##fmt, a.bits, b.bits, env);          \
    }                                                                       \
    bool sf_##fmt##_unordered(T a, T b, sf_env *env)                        \
    {                                                                       \
        return sf_unordered(&sf_format_##fmt, a.bits, b.bits, env);         \
    }                                                                       \
    T sf_##fmt##_round_to_int(T a, sf_round rm, bool exact, sf_env *env)    \
    {                                                                       \
        return fmt##_wrap(sf_round_to_int(&sf_format_##fmt, a.bits, rm,     \
                                          exact, env));                     \
    }                                                                       \
    int32_t sf_##fmt##_to_i32(T a, sf_round rm, sf_env *env)                \
    {                                                                       \
        return sf_to_i32(&sf_format_##fmt, a.bits, rm, env);                \
    }                                                                       \
    int64_t sf_##fmt##_to_i64(T a, sf_round rm, sf_env *env)                \
    {                                                                       \
        return sf_to_i64(&sf_format_##fmt, a.bits, rm, env);                \
    }                                                                       \
    T sf_##fmt##_from_i32(int32_t v, sf_round rm, sf_env *env)              \
    {                                                                       \
        return fmt##_wrap(sf_from_i32(&sf_format_##fmt, v, rm, env));      \
    }                                                                       \
    T sf_##fmt##_from_i64(int64_t v, sf_round rm, sf_env *env)              \
    {                                                                       \
        return fmt##_wrap(sf_from_i64(&sf_format_##fmt, v, rm, env));      \
    }                                                                       \
    T sf_##fmt##_from_double(double x, sf_round rm, sf_env *env)            \
    {                                                                       \
        return fmt##_wrap(sf_from_double(&sf_format_##fmt, x, rm, env));    \
    }                                                                       \
    double sf_##fmt##_to_double(T a)                                        \
    {                                                                       \
        return sf_to_double(&sf_format_##fmt, a.bits);                      \
    }

SF_DEFINE_TYPED_OPS(bf16, sf_bf16, uint16_t)
SF_DEFINE_TYPED_OPS(f16, sf_f16, uint16_t)
SF_DEFINE_TYPED_OPS(f32, sf_f32, uint32_t)
SF_DEFINE_TYPED_OPS(tf32, sf_tf32, uint32_t)
SF_DEFINE_TYPED_OPS(e4m3, sf_e4m3, uint8_t)
SF_DEFINE_TYPED_OPS(e5m2, sf_e5m2, uint8_t)

#define SF_DEFINE_CONVERSION(from, TF, to, TT, WT)                          \
    TT sf_##from##_to_##to(TF a, sf_round rm, sf_env *env)                  \
    {                                                                       \
        TT z;                                                               \
        uint64_t r = s_fast_convert_any(&sf_format_##to, &sf_format_##from, \
                                        a.bits, rm, env);                   \
        if (r == S_FAST_NONE)                                               \
            r = sf_convert(&sf_format_##to, &sf_format_##from, a.bits, rm,  \
                           env);                                            \
        z.bits = (WT)r;                                                     \
        return z;                                                           \
    }

#define SF_DEFINE_CONVERSIONS_FROM(from, TF)                                \
    SF_DEFINE_CONVERSION(from, TF, bf16, sf_bf16, uint16_t)                 \
    SF_DEFINE_CONVERSION(from, TF, f16, sf_f16, uint16_t)                   \
    SF_DEFINE_CONVERSION(from, TF, f32, sf_f32, uint32_t)                   \
    SF_DEFINE_CONVERSION(from, TF, tf32, sf_tf32, uint32_t)                 \
    SF_DEFINE_CONVERSION(from, TF, e4m3, sf_e4m3, uint8_t)                  \
    SF_DEFINE_CONVERSION(from, TF, e5m2, sf_e5m2, uint8_t)

SF_DEFINE_CONVERSIONS_FROM(bf16, sf_bf16)
SF_DEFINE_CONVERSIONS_FROM(f16, sf_f16)
SF_DEFINE_CONVERSIONS_FROM(f32, sf_f32)
SF_DEFINE_CONVERSIONS_FROM(tf32, sf_tf32)
SF_DEFINE_CONVERSIONS_FROM(e4m3, sf_e4m3)
SF_DEFINE_CONVERSIONS_FROM(e5m2, sf_e5m2)
