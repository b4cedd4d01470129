/* kernels_flex -- FlexAttention's Triton kernels as PyTorch 2.11's
   inductor generates them for sm90 (torch/_inductor/kernel/flex:
   flex_attention.py.jinja and common.py.jinja), as descriptions */
#include <config.h>

#include "attention/fa_local.h"

/* The fields the forward template and flex_decoding share (each
   description adds its tiles, combine and row-count fields). */
#define FLEX_COMMON_FIELDS                                                    \
    .d_round = 64,                                                           \
    .n_tiles = 2,                                                            \
    .kv_reverse = false,                                                     \
    .causal_skip = false,                                                    \
    FA_MMA_PRESET("sm90"),                                                   \
    .score_dot = FA_FMT_F32,                                                 \
    .score_scaled = false,                                                   \
    .score = FA_FMT_F32,                                                     \
    .mask = FA_MASK_NEG_INF,                                                 \
    .m_init = FA_MASK_NEG_INF,                                               \
    .visit = FA_VISIT_BLOCK,                                                 \
    .fix_all_keys = false,                                                   \
    .first = FA_FIRST_UPDATE,                                                \
    .exp_base2 = true,                                                       \
    .exp_arg = FA_ARG_SCALE_FMA,                                             \
    .alpha_arg = FA_ALPHA_SCALE_SUB,                                         \
    .alpha = FA_FMT_F32,                                                     \
    .p = FA_FMT_IN,                                                          \
    .rowsum_fp32_p = true,                                                   \
    .rowsum = FA_ROWSUM_QUAD_REDUCE,                                         \
    .rowsum_fma = true,                                                      \
    .rowsum_clamp = false,                                                   \
    .l = FA_FMT_F32,                                                         \
    .acc_update = FA_ACC_CHAIN,                                              \
    .acc = FA_FMT_F32,                                                       \
    .normalize = FA_NORM_RCP_APPROX,                                         \
    .o = FA_FMT_IN,                                                          \
    .lse = FA_LSE_LOG2_LN2,                                                  \
    .lse_fmt = FA_FMT_F32,                                                   \
    .log = FA_KLOG_CUDA_LOG2_FTZ,                                            \
    .empty_lse_pos = false,                                                  \
    .splits = 1,                                                             \
    .combine_exp = FA_CEXP_CR,                                               \
    .combine_log = FA_KLOG_CR,                                               \
    .bwd = FA_BWD_FLEX,                                                      \
    .bwd_reverse_q = false,                                                  \
    FA_BWD_PRESET_CHAIN,                                                     \
    .exp_model = FA_KEXP_EX2_SM90_FTZ,                                       \
    .gqa_dkv = FA_GQA_CHAIN,                                                 \
    .bias_add = FA_BIAS_LOG2,                                                \
    .bool_fill = FA_BFILL_NEG_INF,                                           \
    .masked_lse = FA_MLSE_EMPTY,                                             \
    .score_log2 = true,                                                      \
    .block_sparse = true,                                                    \
    .exp_arg_partial = FA_ARG_SCALE_SUB,                                     \
    .softcap_tanhf = true,

const fa_kernel fa_kernels_flex[] = {
    /* flex: the forward template (triton_tem_fused_flex_attention).
       Per query block of BLOCK_M rows, the KV blocks of its block mask:
       the partial ones first, then the full ones, each list ascending
       (block_sparse); no block mask (block_mask=None): every block in
       order.  qk = tl.dot(q, k^T) (wgmma k16 chains: sm90), qk *=
       SM_SCALE, the score and mask modifications (a hidden key -inf),
       *= RCP_LN2 (1.44269504: RN32(log2 e)); m_ij = max(m_i, rowmax),
       alpha = exp2(m_i - m_ij), p = exp2(s - m_ij) (tl.math.exp2: the
       ex2.approx of the H100/H200), l_i = l_i alpha + tl.sum(p, 1),
       acc = acc alpha, then tl.dot(p in the inputs' format, v, acc);
       from m = -inf, l = 0, acc = 0 for every block.  At the end l = 0
       becomes 1, O = acc / l, LSE = m + log2(l) (lg2.approx), times
       math.log(2) outside the kernel. */
    {
        .name = "flex",
        /* the backward's steps: BLOCK_M1 = 64 query rows (dK, dV) and
           BLOCK_N2 = 64 keys (dQ) */
        .tiles = {{64, 128, 128, 64, 64, 0, 0},
                  {128, 128, 64, 64, 64, 0, 0}},
        .combine = FA_COMBINE_FA2,
        .min_nq = 128,
        .below_min_nq = "flex-decode",
        FLEX_COMMON_FIELDS
    },
    /* flex-decode: the flex_decoding template (triton_tem_fused_flex_
       attention with SPLIT_KV), which inductor runs for fewer than 128
       query rows, read from its generated Triton source, TTGIR and PTX.
       One program per KV head and split holds the group's query rows
       (BLOCK_M = max(16, next power of two of Nq G)) and walks its tiles
       of BLOCK_N = 64 keys: the same block step as flex, but every tile
       checks its bounds (IS_DIVISIBLE false), so the mask's select stands
       before the product by RCP_LN2 and the exponent is RN(RN(t sl2) -
       m2) in every tile; tl.dot is mma.sync.m16n8k16 (sm90: one k16
       block with C, as wgmma); the program's two warps split the keys of
       a 16-row tile (mma layout warpsPerCTA [1, 2]) and hold all of them
       from 32 rows ([2, 1]).  The program stores m, l and O~; inductor's
       two reductions merge the splits (combine "flex-decode"). */
    {
        .name = "flex-decode",
        /* forward: BLOCK_N = 64 (br: the whole query block of the
           block mask); the backward is flex's */
        .tiles = {{64, 128, 64, 64, 64, 0, 0}, {128, 128, 64, 64, 64, 0, 0}},
        .combine = FA_COMBINE_FLEX_DECODE,
        .min_nq = 0,
        .rowsum_col_warps = 2,
        FLEX_COMMON_FIELDS
    },
};

const size_t fa_kernels_flex_count =
    sizeof fa_kernels_flex / sizeof fa_kernels_flex[0];
