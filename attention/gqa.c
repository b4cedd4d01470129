/* gqa -- the backward of grouped-query heads: a KV head's dK and dV from
   the dK and dV of its group's query heads, by the description's rule
   (kernel.h, fa_gqa_dkv; doc/attention.md, "Grouped-query heads") */
#include <config.h>

#include "attention/fa_local.h"

/* FP32 bits rounded to the input format FMT (RNE), widened back. */
static uint32_t
round_in(const sf_format *fmt, uint32_t a, sf_env *env)
{
    uint64_t r = sf_convert(fmt, &sf_format_f32, a, SF_RNE, env);

    return (uint32_t)sf_convert(&sf_format_f32, fmt, r, SF_RNE, env);
}

int
fa_gqa_reduce(const fa_config *cfg, size_t g, size_t n,
              const uint32_t *parts, uint32_t *out)
{
    const fa_kernel *k = fa_config_kernel(cfg);
    const sf_format *in = cfg != NULL && cfg->input != NULL
                              ? cfg->input
                              : &sf_format_bf16;
    sf_env env = SF_ENV_IEEE;

    if (k == NULL || k->gqa_dkv == FA_GQA_NONE || g == 0)
        return -1;
    if (k->gqa_dkv == FA_GQA_CHAIN) {
        /* the backward of the group (gqa_group) wrote the KV head's
           values into every head of the group; parts that differ come
           from heads run one by one, which this rule cannot sum */
        for (size_t j = 0; j < n; j++) {
            for (size_t h = 1; h < g; h++)
                if (parts[h * n + j] != parts[j])
                    return -1;
            out[j] = parts[j];
        }
        return 0;
    }
    for (size_t j = 0; j < n; j++) {
        /* at::sum: an FP32 accumulator from +0, the group's heads in
           order (each rounded to the input format before, under
           "in-sum"; FP32 under "fp32-sum"), one rounding to the
           tensor's format at the end */
        uint32_t acc = 0;
        for (size_t h = 0; h < g; h++)
            acc = fa_add(acc, parts[h * n + j], &env);
        out[j] = round_in(in, acc, &env);
    }
    return 0;
}
