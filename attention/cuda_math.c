/* cuda_math -- CUDA's accurate expf and logf (not the __expf and __logf
   intrinsics) as nvcc compiles them for sm_90: FP32 FMA arithmetic around
   one exp2 of a model (expf) or none (logf).  doc/notes/gpu-crosscheck-log.md,
   "math model", has the instruction sequences and the device checks. */
#include <config.h>

#include "attention/fa_local.h"

/* One FP32 FMA, product and sum exact, rounded once in mode RM. */
static uint32_t
ffma(uint32_t a, uint32_t b, uint32_t c, sf_round rm, sf_env *env)
{
    return sf_f32_fma((sf_f32){a}, (sf_f32){b}, (sf_f32){c}, rm, env).bits;
}

uint32_t
fa_cuda_expf(const fa_exp_model *ex2, uint32_t x)
{
    sf_env env = SF_ENV_IEEE;
    uint32_t j, r0, n, f, e;

    /* FFMA.SAT: x log2(e) / 252 + 1/2 clamped to [0, 1] (NaN -> 0) */
    j = ffma(x, 0x3BBB989Du, 0x3F000000u, SF_RNE, &env);
    if (fa_is_nan(j) || (j & FA_F32_SIGN))
        j = FA_F32_ZERO;
    else if (fa_lt(FA_F32_ONE, j))
        j = FA_F32_ONE;
    /* FFMA.RM j 252 + 12582913: 2^23 1.5 + 127 + n, n = round(x log2 e)
       clamped to [-126, 126] */
    r0 = ffma(j, 0x437C0000u, 0x4B400001u, SF_RDN, &env);
    /* n = r0 - 12583039 (exact) */
    n = fa_add(r0, 0xCB40007Fu, &env);
    /* f = x log2(e) - n in two FMAs (log2 e split in two FP32 parts) */
    f = ffma(x, 0x3FB8AA3Bu, n ^ FA_F32_SIGN, SF_RNE, &env);
    f = ffma(x, 0x32A57060u, f, SF_RNE, &env);
    /* 2^n from the low bits of r0 (SHF.L 23), times MUFU.EX2 of f */
    e = fa_exp_eval(ex2, true, f);
    return fa_mul((uint32_t)(r0 << 23), e, &env);
}

uint32_t
fa_cuda_logf(uint32_t x)
{
    /* the polynomial's coefficients, highest first */
    static const uint32_t c[] = {0xBDF8CDCCu, 0x3E0F2955u, 0xBE2AD8B9u,
                                 0x3E4CED0Bu, 0xBE7FFF22u, 0x3EAAAA78u,
                                 0xBF000000u};
    sf_env env = SF_ENV_IEEE;
    uint32_t i, e, m, f, r;
    int32_t ei;
    bool normal = !fa_lt(x, 0x00800000u); /* FSETP.GEU: NaN counts */

    i = FA_F32_ZERO;
    if (!normal) {
        x = fa_mul(x, 0x4B000000u, &env); /* x 2^23 */
        i = 0xC1B80000u;                  /* -23 */
    }
    /* m in [2/3, 4/3): x's exponent taken relative to 0x3F2AAAAB */
    e = (x - 0x3F2AAAABu) & 0xFF800000u;
    m = x - e;
    ei = (int32_t)e;
    i = ffma(sf_f32_from_i32(ei, SF_RNE, &env).bits, 0x34000000u, i, SF_RNE,
             &env);
    f = fa_add(m, 0xBF800000u, &env);
    r = ffma(f, 0xBE055027u, 0x3E1039F6u, SF_RNE, &env);
    for (size_t t = 0; t < sizeof c / sizeof c[0]; t++)
        r = ffma(f, r, c[t], SF_RNE, &env);
    r = fa_mul(f, r, &env);
    r = ffma(f, r, f, SF_RNE, &env);
    r = ffma(i, 0x3F317218u, r, SF_RNE, &env);
    if (x >= FA_F32_INF) /* +Inf, NaN, and (scaled) negatives */
        r = ffma(x, FA_F32_INF, FA_F32_INF, SF_RNE, &env);
    if (fa_is_zero(x))
        r = FA_F32_NEG_INF;
    return r;
}

uint32_t
fa_cuda_log2f_ftz(uint32_t x)
{
    /* the polynomial's coefficients, highest first */
    static const uint32_t c[] = {0x3E2FCF2Au, 0xBE374E43u, 0x3E520BF4u,
                                 0xBE763C8Bu, 0x3E93BF99u, 0xBEB8AA49u,
                                 0x3EF6384Au, 0xBF38AA3Bu};
    sf_env env = SF_ENV_IEEE;
    uint32_t i, e, m, f, r, q;

    env.ftz = env.daz = true; /* the __CUDA_FTZ variant: FFMA.FTZ */
    if ((x & ~FA_F32_SIGN) == 0 || (x & 0x7F800000u) == 0)
        /* +-0 and (flushed) subnormals */
        return FA_F32_NEG_INF;
    /* m in [0.707, 1.414): x's exponent taken relative to 0x3F3504F3 */
    e = (x - 0x3F3504F3u) & 0xFF800000u;
    m = x - e;
    i = ffma(sf_f32_from_i32((int32_t)e, SF_RNE, &env).bits, 0x34000000u,
             FA_F32_ZERO, SF_RNE, &env);
    f = sf_f32_add((sf_f32){m}, (sf_f32){0xBF800000u}, SF_RNE, &env).bits;
    r = ffma(0x3DC6B27Fu, f, 0xBE2C7F30u, SF_RNE, &env);
    for (size_t t = 0; t < sizeof c / sizeof c[0]; t++)
        r = ffma(r, f, c[t], SF_RNE, &env);
    q = sf_f32_mul((sf_f32){f}, (sf_f32){r}, SF_RNE, &env).bits;
    q = sf_f32_mul((sf_f32){f}, (sf_f32){q}, SF_RNE, &env).bits;
    r = ffma(f, 0x3FB8AA3Bu, q, SF_RNE, &env);
    r = sf_f32_add((sf_f32){i}, (sf_f32){r}, SF_RNE, &env).bits;
    if (x > 0x7F7FFFFFu) /* +Inf, NaN, negatives */
        r = ffma(x, FA_F32_INF, FA_F32_INF, SF_RNE, &env);
    return r;
}

uint32_t
fa_cuda_tanhf_ftz(const fa_exp_model *ex2, const fa_rcp_model *rcp,
                  uint32_t x)
{
    /* the odd polynomial's coefficients in x^2, highest first */
    static const uint32_t c[] = {0xBD563CAEu, 0x3E085941u, 0xBEAAA9EDu,
                                 FA_F32_ZERO};
    sf_env env = SF_ENV_IEEE;
    uint32_t a = x & ~FA_F32_SIGN, s, r, e;

    env.ftz = env.daz = true; /* the __CUDA_FTZ variant */
    if (fa_is_nan(x))
        return x | 0x00400000u;
    if (fa_lt(a, 0x3F19999Au)) {
        /* |x| < 0.6: x + x^3 p(x^2) */
        s = sf_f32_mul((sf_f32){x}, (sf_f32){x}, SF_RNE, &env).bits;
        r = 0x3C80F082u;
        for (size_t t = 0; t < sizeof c / sizeof c[0]; t++)
            r = ffma(r, s, c[t], SF_RNE, &env);
        return ffma(r, x, x, SF_RNE, &env);
    }
    /* 1 - 2 / (2^(2 |x| log2 e) + 1), EX2 and RCP of the hardware,
       1 from |x| >= 9.0109, the sign of x */
    e = fa_exp_eval(ex2, true,
                    sf_f32_mul((sf_f32){a}, (sf_f32){0x4038AA3Bu}, SF_RNE,
                               &env)
                        .bits);
    e = sf_f32_add((sf_f32){e}, (sf_f32){FA_F32_ONE}, SF_RNE, &env).bits;
    s = ffma(fa_rcp_eval(rcp, e), 0xC0000000u, FA_F32_ONE, SF_RNE, &env);
    if (!fa_lt(a, 0x41102CB4u))
        s = FA_F32_ONE;
    return s | (x & FA_F32_SIGN);
}
