/* kernels_cudnn -- the named descriptions of PyTorch's cuDNN SDPA backend
   on the H200 (each with its evidence; doc/notes/gpu-crosscheck-log.md,
   "cuDNN model") */
#include <config.h>

#include "attention/fa_local.h"

static const fa_kernel kernels[] = {
    /* cudnn: cuDNN 9.19's fused flash forward as PyTorch 2.11 runs it for
       BF16 and FP16 on an H200 (sm90_flash_fprop_wgmma_f16_knob_7_
       64x128x64 for d = 64, ..._64x128x128 for d = 128; with one query
       row the sm80 WMMA decode engines, which give the same bits up to
       512 keys).  From crafted inputs (sdpa_probes.py): P~ and the exp
       argument as fa2's, O by the rounded reciprocal of l, one FP32 chain
       of P~V through the sm90 block FMA over 128-key tiles in ascending
       order.  From the backend dumps, by testing each hypothesis row by
       row (doc/notes/gpu-crosscheck-log.md, "cuDNN model"): the rescale
       factor's argument RN(m_old sl2) - RN(m_new sl2), per-thread block sums
       folded into the four partials by one FFMA and reduced (s0 + s1) +
       (s2 + s3), LSE = fma(RN(m sl2), RN(ln 2), __logf(l)).  The
       reciprocal of l is the H200's rcp.approx.f32 (MUFU.RCP; rcp-sm90,
       rcp_probe.cu on all 2^23 significands; cudnn_lean_probe.py's FP16
       heads: 28,672 of 28,672 O elements, against 28,651 with RN(1/l)).
       Measured: O and LSE bit for bit on every dump of
       tests/data/gpu/backends and tests/data/gpu/cudnn with Nq > 1 or
       Nk <= 512 (tests/experiments/test_cudnn_model.sh).  With one query
       row each thread sums a 128-key tile in two 64-key spans
       (decode_rowsum_span; cudnn_order_probe.py: 32,258 of 32,258 rows
       of powers of two, Nk 128 and 256); from 257 keys (the 16 x 128
       engine, four warps of 32 keys) in four 32-key spans added as
       (w0 + w1) + (w2 + w3) (decode_rowsum_span_wide; crafted rows of
       513 and 600 keys: 371 of 405 LSE, against 349 with 64-key
       spans).  From 513 keys
       cuDNN runs the decode engine on S CTAs per row (a power of two
       from the keys, the batch and the heads; --policy sdpa sets splits;
       S = 1 when B H fills the GPU, then with no reduction) and a lean
       reduction: combine "lean", split s on the blocks s, s + S, ...,
       reduced in the log2 domain; O bit for bit on every decode dump;
       the LSE 1 ulp off on about a third of the rows: the decode
       engine's per-split row sum is not fully modelled (the reduction's
       log and final formula are: 5,632 of 5,632 rows of integer sums).
       d = 192 and 256 (..._64x128x192, _64x128x256): the same forward,
       O and LSE bit for bit.
       The backward (cudnn_bwd_probe.py): compute_dot_do_o_specialized
       (delta, backward.c), sm90_flash_bprop_wgmma_f16_knob_26_64x64x{d}
       (query blocks of 64 rows in ascending order, dK and dV chained
       through the accumulators), P = exp2(RN(fma(S, scale, -LSE)
       log2e)), dS scaled before its rounding, dQ one chain over each
       128-key tile (also above d = 128, where the grid has one CTA per
       64 keys), the tiles added in FP32 (last first),
       convert_dq_to_16bits; bwd "cudnn".
       With an attention mask (PyTorch passes it as an additive bias in
       the inputs' format, a False entry as -65504: BF16 -65536), the
       scores leave the folded scale: t = RN(fma(S, scale, b)), the
       log2-domain score RN(t RN(log2 e)) (bias_add "log2"); the
       backward's P = exp2(RN(RN(t - LSE) log2e)).  A row whose every key
       is masked is an ordinary softmax of scores near -65536 (finite O,
       LSE about -65530).  Measured on 28 masked H100 dumps
       (tests/data/gpu/mask: padding, windows, ALiBi, random, rows with no
       key; scales 0.125, 1/sqrt(128), 0.1, 0.3; FP16; 512 keys; one
       query row; grouped heads): O, LSE, dQ, dK, dV bit for bit, but 2
       dQ elements of the one file whose GPU runs differed. */
    {
        .name = "cudnn",
        .d_round = 64,
        .n_tiles = 3,
        .tiles = {{64, 64, 128, 64, 128, 0, 0},
                  {128, 64, 128, 64, 128, 0, 0},
                  {256, 64, 128, 64, 128, 0, 0}},
        .kv_reverse = false,
        .causal_skip = true,
        FA_MMA_PRESET("sm90"),
        .score_dot = FA_FMT_F32,
        .score_scaled = false,
        .score = FA_FMT_F32,
        .mask = FA_MASK_NEG_INF,
        .m_init = FA_MASK_NEG_INF,
        .visit = FA_VISIT_BLOCK,
        .fix_all_keys = false,
        .first = FA_FIRST_INIT,
        .exp_base2 = true,
        .exp_arg = FA_ARG_SCALE_SUB,
        .alpha_arg = FA_ALPHA_SCALE_SUB,
        .alpha = FA_FMT_F32,
        .p = FA_FMT_IN,
        .rowsum_fp32_p = true,
        .rowsum = FA_ROWSUM_QUAD_BLOCK,
        .rowsum_fma = true,
        .rowsum_clamp = false,
        .l = FA_FMT_F32,
        .acc_update = FA_ACC_CHAIN,
        .acc = FA_FMT_F32,
        .normalize = FA_NORM_RCP_APPROX,
        .o = FA_FMT_IN,
        .lse = FA_LSE_FMA_LN2,
        .lse_fmt = FA_FMT_F32,
        .log = FA_KLOG_LG2,
        .empty_lse_pos = true,
        .splits = 1,
        .combine = FA_COMBINE_LEAN,
        .combine_exp = FA_CEXP_CR,
        .combine_log = FA_KLOG_LG2,
        .bwd = FA_BWD_CUDNN,
        .bwd_reverse_q = false,
        FA_BWD_PRESET_CUDNN,
        .decode_rowsum_span = 64,
        .decode_rowsum_span_wide = 32,
        .decode_wide_min_nk = 257,
        .decode_lse = FA_DLSE_LG2_FMA,
        /* the 16 x 128 engine: each of its four warps keeps its own
           accumulator over its 32 keys of every tile, rescaled by FMUL
           and then chained through the warp's two k16 HMMAs; at the end
           of the CTA the warps' accumulators are added (w0 + w2) +
           (w1 + w3) (the kernel's SASS under Nsight Compute, BF16 and
           FP16, 4,096 keys; H100 decode dumps,
           tests/data/gpu/invariance: 53 O elements of the stored class
           outputs differ, against 85 with "separate") */
        .decode_acc_update = FA_ACC_WARPS,
        /* the same engine scales the scores, then multiplies them by
           RN32(log2 e) (FMUL, FMUL), the max and the exponent's argument
           in that domain (its SASS; H100 decode dumps at d = 128, where
           the scale is no power of two: dec_d128_nk16384_h8 1 O element
           off, against 17, dec_gqa_d128_nk4096_h32_kv8 3, against 33) */
        .decode_log2_scores = true,
        .exp_model = FA_KEXP_EX2_SM90,
        /* grouped-query heads: sm90_flash_bprop writes each query head's
           dK and dV, fmha_reduce_head adds a group's (H100 dumps,
           tests/data/gpu/gqa: the grouped call's dK and dV equal the
           expanded call's summed by repeat_interleave's backward) */
        .gqa_dkv = FA_GQA_IN_SUM,
        .bias_add = FA_BIAS_LOG2,
        .bool_fill = FA_BFILL_NEG_65504,
        .masked_lse = FA_MLSE_EMPTY,
    },
};

const fa_kernel *
fa_kernel_sdpa_at(size_t i)
{
    return i < sizeof kernels / sizeof kernels[0] ? &kernels[i] : NULL;
}
