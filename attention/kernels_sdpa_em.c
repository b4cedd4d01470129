/* kernels_sdpa_em -- the descriptions of PyTorch 2.11's memory-efficient
   and math SDPA backends on the H200 (doc/attention.md, "Kernel
   descriptions"; evidence in doc/notes/gpu-crosscheck-log.md,
   "memory-efficient model" and "math model"), and the checks of the
   fields they brought */
#include <config.h>

#include "attention/fa_local.h"

#define B FA_GEMV_BUTTERFLY
#define Q FA_GEMV_SEQUENTIAL

const fa_kernel fa_kernels_sdpa_em[] = {
    /* efficient: fmha_cutlassF_{bf16,f16}_aligned_64x64_rf_sm80 (d <= 64)
       and _64x128_rf_sm80 (d <= 128), PyTorch 2.11's
       mem_eff_attention/kernel_forward.h with bias support: 64 query rows
       a block, 64 or 128 keys a block in ascending order, the output
       kept in registers (one value iteration).  S = RN32(dot scale) from
       mma.sync.m16n8k8 (CUTLASS's 16x8x8 instruction shape for 16-bit
       inputs on sm75+; sm90-k8 on the H200, P~V likewise), then times
       RN32(log2 e): the row max mi and P~ = exp2f(RN32(s' - mi)) (exp2f
       is ex2.approx), the rescale exp2f(RN32(m_prime - mi)) applied to
       the output fragment and to s_prime, the block sum per 32-key warp
       tile (iterative_softmax), P~ rounded to the input format into
       shared memory, P~V chained through the rescaled accumulator, the
       epilogue O = RN(acc RN32(1 / s_prime)), LSE = RN32(mi / log2e) +
       logf(s_prime) with CUDA's accurate logf.  Causal: keys up to
       query_start + 64 (the blocks past it are skipped); SDPA's
       is_causal is top-left aligned (the configuration's
       causal_top_left).  The backward:
       fmha_cutlassB_{bf16,f16}_aligned_64x64_k64 (d <= 64) and
       _128x128_k128 (d <= 128), kernel_backward.h: bwd "efficient"
       (backward.c), its products m16n8k8 as well, with one key split
       (PyTorch's choice under deterministic algorithms; with several,
       dQ is added in arrival order).  An attention mask arrives as
       attn_bias in the inputs' format (a False entry -inf) and is added
       to RN32(dot scale) in FP32 (bias_add "add"), in the backward's P
       too; a row whose every key is masked has O = 0, dQ = 0 and LSE
       +0 (masked_lse "zero"; tests/data/gpu/mask, bit for bit). */
    {
        .name = "efficient",
        .d_round = 1,
        .n_tiles = 2,
        .tiles = {{64, 64, 64, 64, 64, 0, 0}, {128, 64, 128, 128, 128, 0, 0}},
        .kv_reverse = false,
        .causal_skip = true,
        .mma_s = "sm90-k8",
        .mma_pv = "sm90-k8",
        .mma_dp = "sm90-k8",
        .mma_dq = "sm90-k8",
        .mma_dk = "sm90-k8",
        .mma_dv = "sm90-k8",
        .mma_delta = "fma-chain",
        .score_dot = FA_FMT_F32,
        .score_scaled = true,
        .score = FA_FMT_F32,
        .mask = FA_MASK_NEG_INF,
        .m_init = FA_MASK_NEG_INF,
        .visit = FA_VISIT_BLOCK,
        .fix_all_keys = false,
        .first = FA_FIRST_INIT,
        .exp_base2 = true,
        .exp_arg = FA_ARG_LOG2E_SUB,
        .alpha_arg = FA_ALPHA_LOG2E_SUB,
        .alpha = FA_FMT_F32,
        .p = FA_FMT_IN,
        .rowsum_fp32_p = true,
        .rowsum = FA_ROWSUM_WARPS,
        .rowsum_fma = false,
        .rowsum_clamp = false,
        .l = FA_FMT_F32,
        .acc_update = FA_ACC_CHAIN,
        .acc = FA_FMT_F32,
        .normalize = FA_NORM_RECIPROCAL,
        .o = FA_FMT_IN,
        .lse = FA_LSE_LOG2E_DIV,
        .lse_fmt = FA_FMT_F32,
        .log = FA_KLOG_CUDA,
        .empty_lse_pos = true,
        .splits = 1,
        .combine = FA_COMBINE_FA2,
        .combine_exp = FA_CEXP_CR,
        .combine_log = FA_KLOG_CR,
        .bwd = FA_BWD_EFFICIENT,
        .bwd_reverse_q = false,
        FA_BWD_PRESET_EFFICIENT,
        .exp_fn = FA_EXPFN_MODEL,
        .score_prescale = false,
        .exp_model = FA_KEXP_EX2_SM90,
        .bias_add = FA_BIAS_ADD,
        .bool_fill = FA_BFILL_NEG_INF,
        .masked_lse = FA_MLSE_ZERO,
    },
    /* math: _scaled_dot_product_attention_math for BF16 and FP16 inputs
       on CUDA (no LSE): Q, K, V copied to FP32; Q and K^T each times
       RN32(sqrt(scale)); S by cuBLAS's FP32 SIMT GEMM
       (sm80_xmma_gemm_f32f32_..._ffma: one FFMA chain over d from 0);
       the causal mask added (-Inf); _safe_softmax: softmax_warp_forward
       with CUDA's expf of RN32(s - max), the warp's strided sum, then
       P = RN32(e / sum); P V by the same GEMM (one FFMA chain over the
       keys); O cast to the input format.  Nq = 1: cuBLAS runs gemv
       kernels, whose orders were fitted on the H200 for launches of
       batch x heads 16 (experiments/gpu/probes/sdpa_math_more.py: every
       S and P V element of 30 shapes, d 32 to 256, Nk 64 to 2048); the
       gemv rows below hold them (lanes, chunk, combine; B butterfly, Q
       sequential), an order not fitted is left to the chain (lanes 0).
       The backward: autograd through this graph (backward_math.c).  An
       attention mask (a boolean one as where(mask, 0, -inf) in the
       inputs' format) is added to S in FP32 (bias_add "add"); a row
       whose every key is masked gets P = 0 from _safe_softmax (O = 0,
       dQ = 0). */
    {
        .name = "math",
        .d_round = 1,
        .n_tiles = 1,
        .tiles = {{4096, 0, 0, 64, 0, 0, 0}},
        .kv_reverse = false,
        .causal_skip = false,
        FA_MMA_PRESET("fma-chain"),
        .score_dot = FA_FMT_F32,
        .score_scaled = true,
        .score = FA_FMT_F32,
        .mask = FA_MASK_NEG_INF,
        .m_init = FA_MASK_NEG_INF,
        .visit = FA_VISIT_BLOCK,
        .fix_all_keys = false,
        .first = FA_FIRST_INIT,
        .exp_base2 = false,
        .exp_arg = FA_ARG_SUB,
        .alpha_arg = FA_ALPHA_SUB,
        .alpha = FA_FMT_F32,
        .p = FA_FMT_F32,
        .rowsum_fp32_p = true,
        .rowsum = FA_ROWSUM_WARP32,
        .rowsum_fma = false,
        .rowsum_clamp = false,
        .l = FA_FMT_F32,
        .acc_update = FA_ACC_CHAIN,
        .acc = FA_FMT_F32,
        .normalize = FA_NORM_P_DIVIDE,
        .o = FA_FMT_IN,
        .lse = FA_LSE_ADD,
        .lse_fmt = FA_FMT_F32,
        .log = FA_KLOG_CR,
        .empty_lse_pos = false,
        .splits = 1,
        .combine = FA_COMBINE_FA2,
        .combine_exp = FA_CEXP_CR,
        .combine_log = FA_KLOG_CR,
        .bwd = FA_BWD_MATH,
        .bwd_reverse_q = false,
        FA_BWD_PRESET_CHAIN,
        .exp_fn = FA_EXPFN_CUDA,
        .score_prescale = true,
        /* d, Nk, batch x heads; S (gemvx<..., true, ..., 6> up to 256
           keys, then gemvx<..., 5> or gemv2T_kernel_val<128, 16, 2, 2>);
           P V (gemvNSP<1, 32, 4, 1024> up to 256 keys, then gemvx<...,
           false, ..., 7 to 9>) */
        .n_gemv = 13,
        .gemv = {
            {32, 32, 64, 256, 16, 16, {8, 4, B}, {32, 4, B}},
            {32, 32, 512, 2048, 16, 16, {2, 16, B}, {32, 1, B}},
            {64, 64, 64, 256, 16, 16, {8, 8, B}, {32, 4, B}},
            {64, 64, 512, 2048, 16, 16, {4, 1, B}, {32, 1, B}},
            {96, 96, 64, 256, 16, 16, {0, 0, B}, {32, 4, B}},
            {96, 96, 512, 2048, 16, 16, {16, 1, Q}, {32, 1, B}},
            {128, 128, 64, 128, 16, 16, {16, 8, B}, {32, 4, B}},
            {128, 128, 256, 256, 16, 16, {8, 16, B}, {32, 4, B}},
            {128, 128, 512, 2048, 16, 16, {16, 1, Q}, {32, 1, B}},
            {256, 256, 64, 64, 16, 16, {16, 16, B}, {8, 8, B}},
            {256, 256, 128, 128, 16, 16, {16, 16, B}, {0, 0, B}},
            {256, 256, 256, 256, 16, 16, {16, 1, Q}, {0, 0, B}},
            {256, 256, 512, 2048, 16, 16, {16, 1, Q}, {8, 64, B}},
        },
        .exp_model = FA_KEXP_EX2_SM90,
        .gqa_dkv = FA_GQA_FP32_SUM,
        .bias_add = FA_BIAS_ADD,
        .bool_fill = FA_BFILL_NEG_INF,
    },
};

#undef B
#undef Q

const size_t fa_kernels_sdpa_em_count =
    sizeof fa_kernels_sdpa_em / sizeof fa_kernels_sdpa_em[0];

const char *
fa_kernel_check_sdpa_em(const fa_kernel *k)
{
    if ((k->exp_arg == FA_ARG_LOG2E_SUB) != (k->alpha_arg == FA_ALPHA_LOG2E_SUB))
        return "exp_arg: log2e-sub goes with alpha_arg log2e-sub";
    if (k->exp_arg == FA_ARG_LOG2E_SUB && (!k->score_scaled || !k->exp_base2))
        return "exp_arg: log2e-sub needs scaled scores and exp_base2";
    if (k->lse == FA_LSE_LOG2E_DIV && !k->score_scaled)
        return "lse: log2e-div needs scaled scores (score_scaled true)";
    if (k->exp_fn == FA_EXPFN_CUDA && k->exp_base2)
        return "exp_fn: cuda-expf is a natural exp (exp_base2 false)";
    if (k->score_prescale && !k->score_scaled)
        return "score_prescale: needs score_scaled true";
    if (k->normalize == FA_NORM_P_DIVIDE) {
        for (size_t i = 0; i < k->n_tiles && i < FA_KERNEL_MAX_TILES; i++)
            if (k->tiles[i].bc != 0)
                return "normalize: p-divide needs one KV block (bc 0)";
        if (k->rowsum == FA_ROWSUM_QUAD)
            return "normalize: p-divide needs a whole-row sum, not quad";
        if (k->splits > 1)
            return "normalize: p-divide cannot be split";
    }
    if (k->rowsum == FA_ROWSUM_WARPS && k->rowsum_fma)
        return "rowsum_fma: only with the quad row sum";
    if (k->n_gemv > FA_KERNEL_MAX_GEMV)
        return "gemv: at most 16 rows";
    if (k->n_gemv > 0 && !k->score_prescale)
        return "gemv: needs score_prescale true (the math backend's "
               "FP32 products)";
    for (size_t g = 0; g < k->n_gemv && g < FA_KERNEL_MAX_GEMV; g++) {
        const fa_gemv_row *r = &k->gemv[g];
        const fa_gemv_order *o[2] = {&r->s, &r->pv};
        if (r->d_min > r->d_max || r->nk_min > r->nk_max
            || r->bh_min > r->bh_max)
            return "gemv: a range's min above its max";
        for (int i = 0; i < 2; i++) {
            unsigned w = o[i]->lanes;
            if (w != 0 && (w > 128 || (w & (w - 1)) != 0 || o[i]->chunk == 0))
                return "gemv: lanes 0 or a power of two up to 128, chunk "
                       "at least 1";
            if ((unsigned)o[i]->combine > FA_GEMV_SEQUENTIAL)
                return "gemv: combine out of range";
        }
    }
    return NULL;
}
