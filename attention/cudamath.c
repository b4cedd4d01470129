/* cudamath -- CUDA's accurate expf and logf (built without fast math), as
   the device library's instruction sequences compute them, on FP32 bit
   patterns */
#include <config.h>

#include "attention/attention.h"

#define F32_ZERO 0x00000000u
#define F32_ONE 0x3F800000u
#define F32_INF 0x7F800000u
#define F32_NEG_INF 0xFF800000u
#define F32_MAG 0x7FFFFFFFu
#define F32_MIN_NORMAL 0x00800000u

static uint32_t
fma_rm(uint32_t a, uint32_t b, uint32_t c, sf_env *e)
{
    return sf_f32_fma((sf_f32){a}, (sf_f32){b}, (sf_f32){c}, SF_RDN, e).bits;
}

static uint32_t
fma_rn(uint32_t a, uint32_t b, uint32_t c, sf_env *e)
{
    return sf_f32_fma((sf_f32){a}, (sf_f32){b}, (sf_f32){c}, SF_RNE, e).bits;
}

static uint32_t
mul_rn(uint32_t a, uint32_t b, sf_env *e)
{
    return sf_f32_mul((sf_f32){a}, (sf_f32){b}, SF_RNE, e).bits;
}

static uint32_t
add_rn(uint32_t a, uint32_t b, sf_env *e)
{
    return sf_f32_add((sf_f32){a}, (sf_f32){b}, SF_RNE, e).bits;
}

static bool
is_nan(uint32_t x)
{
    return (x & F32_MAG) > F32_INF;
}

/* cvt.sat.f32.f32: clamped to [0, 1]; NaN gives +0. */
static uint32_t
sat01(uint32_t x)
{
    if (is_nan(x) || (x & 0x80000000u) != 0)
        return F32_ZERO;
    return x > F32_ONE ? F32_ONE : x;
}

/* expf: with j the integer part of x log2(e) formed through a saturated
   fixed-point step,
     t = sat(RN(x c + 1/2)), c = RN(log2(e) / 252),
     u = RD(t 252 + (1.5 2^23 + 1)), j = RN(u - (1.5 2^23 + 127)),
     r = RN(x lo + RN(x hi - j)), hi + lo = log2(e) in two floats,
     expf(x) = RN(ex2(r) 2^j) with 2^j formed from u's bits shifted
   left by 23 (u's low 9 bits are j + 127). */
uint32_t
fa_cuda_expf(const fa_exp_model *ex2, uint32_t x)
{
    sf_env e = SF_ENV_IEEE;
    uint32_t t, u, j, r, scale;

    t = sat01(fma_rn(x, 0x3BBB989Du, 0x3F000000u, &e));
    u = fma_rm(t, 0x437C0000u, 0x4B400001u, &e);
    j = add_rn(u, 0xCB40007Fu, &e);
    r = fma_rn(x, 0x3FB8AA3Bu, j ^ 0x80000000u, &e);
    r = fma_rn(x, 0x32A57060u, r, &e);
    scale = u << 23;
    return mul_rn(fa_exp_eval(ex2, true, r), scale, &e);
}

/* logf: subnormals scaled by 2^23 first (and 23 taken off the exponent);
   x = 2^e m with m in [2/3, 4/3) (split at the bits of 2/3), f = m - 1
   (exact), P(f) of degree 8 by Horner FMAs from c[0],
     p = RN(f P(f)), q = RN(p f + f), logf(x) = RN(e RN(ln 2) + q),
   e formed as RN(k 2^-23 + bias) from the exponent bits k; +Inf and NaN
   pass through, x < 0 gives NaN, +-0 gives -Inf. */
uint32_t
fa_cuda_logf(uint32_t x)
{
    static const uint32_t c[9] = {0xBE055027u, 0x3E1039F6u, 0xBDF8CDCCu,
                                  0x3E0F2955u, 0xBE2AD8B9u, 0x3E4CED0Bu,
                                  0xBE7FFF22u, 0x3EAAAA78u, 0xBF000000u};
    sf_env e = SF_ENV_IEEE;
    uint32_t a = x, bias = F32_ZERO, k, m, kf, f, p, q, res;
    int32_t ki;

    /* setp.lt.f32 x < 2^-126 (also true for negative x and -Inf) */
    if (sf_f32_lt((sf_f32){x}, (sf_f32){F32_MIN_NORMAL}, &e)) {
        a = mul_rn(x, 0x4B000000u, &e); /* x 2^23 */
        bias = 0xC1B80000u;             /* -23 */
    }
    k = (a - 0x3F2AAAABu) & 0xFF800000u;
    m = a - k;
    ki = (int32_t)k;
    kf = sf_f32_from_i32(ki, SF_RNE, &e).bits; /* exact: 2^23 | k */
    kf = fma_rn(kf, 0x34000000u, bias, &e);    /* k 2^-23 + bias */
    f = add_rn(m, 0xBF800000u, &e);            /* m - 1 */
    p = fma_rn(c[0], f, c[1], &e);
    for (int i = 2; i < 9; i++)
        p = fma_rn(p, f, c[i], &e);
    p = mul_rn(f, p, &e);
    q = fma_rn(p, f, f, &e);
    res = fma_rn(kf, 0x3F317218u, q, &e);
    if (a >= F32_INF) /* +Inf, NaN, and every negative input */
        res = fma_rn(a, F32_INF, F32_INF, &e);
    if ((a & F32_MAG) == 0)
        res = F32_NEG_INF;
    return res;
}
