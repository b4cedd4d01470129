/* sf_<fmt>_sub_array -- a[i] - b[i] over arrays of BF16, FP16 and FP32
   (portable, AVX2 and AVX-512 paths; BF16 on AVX2 and AVX-512 by
   s_add16.h) */
#define S_LANES_ARITH S_ARR_SUB
#include "s_array.h"
#include "s_lanes_all.h"
#include "s_add16.h"

S_ARR_DEFINE_RUN()

void
sf_bf16_sub_array(const sf_bf16 *a, const sf_bf16 *b, sf_bf16 *out, size_t n,
                  sf_round rm, sf_env *env)
{
    if (s_add16_run(a, b, out, n, true, rm, env))
        return;
    s_arr_run(S_ARR_BF16, a, b, NULL, out, n, rm, env);
}

void
sf_f16_sub_array(const sf_f16 *a, const sf_f16 *b, sf_f16 *out, size_t n,
                 sf_round rm, sf_env *env)
{
    s_arr_run(S_ARR_F16, a, b, NULL, out, n, rm, env);
}

void
sf_f32_sub_array(const sf_f32 *a, const sf_f32 *b, sf_f32 *out, size_t n,
                 sf_round rm, sf_env *env)
{
    s_arr_run(S_ARR_F32, a, b, NULL, out, n, rm, env);
}
