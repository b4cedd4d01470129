/* sf_<fmt>_fma_array -- a[i] * b[i] + c[i] over arrays of BF16, FP16 and
   FP32, one rounding each (portable, AVX2 and AVX-512 paths) */
#define S_LANES_ARITH S_ARR_FMA
#include "s_array.h"
#include "s_lanes_all.h"

S_ARR_DEFINE_RUN()

void
sf_bf16_fma_array(const sf_bf16 *a, const sf_bf16 *b, const sf_bf16 *c,
                  sf_bf16 *out, size_t n, sf_round rm, sf_env *env)
{
    s_arr_run(S_ARR_BF16, a, b, c, out, n, rm, env);
}

void
sf_f16_fma_array(const sf_f16 *a, const sf_f16 *b, const sf_f16 *c,
                 sf_f16 *out, size_t n, sf_round rm, sf_env *env)
{
    s_arr_run(S_ARR_F16, a, b, c, out, n, rm, env);
}

void
sf_f32_fma_array(const sf_f32 *a, const sf_f32 *b, const sf_f32 *c,
                 sf_f32 *out, size_t n, sf_round rm, sf_env *env)
{
    s_arr_run(S_ARR_F32, a, b, c, out, n, rm, env);
}
