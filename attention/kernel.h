/* kernel.h -- attention kernels as data: everything that changes the bits
   of a forward or backward pass, as one value (doc/attention.md, "Kernel
   descriptions", documents every field and its evidence) */
#ifndef BF16EMU_ATTENTION_KERNEL_H
#define BF16EMU_ATTENTION_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A number format of a stored intermediate. */
typedef enum
{
    FA_FMT_F32,
    FA_FMT_BF16,
    FA_FMT_F16,
    FA_FMT_IN /* "in": the format of the inputs Q, K, V (BF16 or FP16), as
                 a kernel's Element type */
} fa_fmt;

/* How the argument of the softmax's exponential is formed from a score s
   and the row max m (or the LSE in the backward). */
typedef enum
{
    FA_ARG_SUB,       /* "sub": RN32(s - m) */
    FA_ARG_SUB_ROUND, /* "sub-round": RN_p(RN32(s - m)) (two roundings) */
    FA_ARG_SUB_ONCE,  /* "sub-once": s - m exact, rounded once to the
                         P~ format */
    FA_ARG_SCALE_SUB, /* "scale-sub": RN32(RN32(s sl2) - RN32(m sl2)),
                         exp2 (FA2 built with UNFUSE_FMA) */
    FA_ARG_SCALE_FMA, /* "scale-fma": fma(s, sl2, -RN32(m sl2)), exp2
                         (FA2 without UNFUSE_FMA) */
    FA_ARG_LOG2E_SUB  /* "log2e-sub": RN32(RN32(s L) - RN32(m L)) with
                         L = RN32(log2 e), s scaled, exp2 (the
                         memory-efficient kernel) */
} fa_exp_arg;

/* The rescale factor's argument, m_old against m_new. */
typedef enum
{
    FA_ALPHA_SUB,       /* "sub": exp(RN32(m_old - m_new)) */
    FA_ALPHA_SUB_ROUND, /* "sub-round": exp(RN_a(RN32(m_old - m_new))) */
    FA_ALPHA_SUB_SCALE, /* "sub-scale": exp2(RN32(RN32(m_old - m_new) sl2)) */
    FA_ALPHA_SCALE_SUB,  /* "scale-sub": exp2(RN32(RN32(m_old sl2) -
                           RN32(m_new sl2))), the exp argument's form */
    FA_ALPHA_LOG2E_SUB  /* "log2e-sub": exp2(RN32(RN32(m_old L) -
                           RN32(m_new L))), L = RN32(log2 e) */
} fa_alpha_arg;

/* Which keys of a KV block enter the block's softmax step. */
typedef enum
{
    FA_VISIT_VISIBLE, /* "visible": only the row's visible keys; a block
                         with none is skipped for the row */
    FA_VISIT_BLOCK    /* "block": every key of the block, a masked one as
                         the mask value (its P~ is exp of it) */
} fa_visit;

/* The row sum. */
typedef enum
{
    FA_ROWSUM_SEQUENTIAL, /* "sequential": one FP32 sum over the block's P~
                             from its first term, then
                             l = RN_l(RN_l(alpha l) + RN_l(sum)) */
    FA_ROWSUM_QUAD,       /* "quad": four per-thread partials (thread
                             (t mod 8) / 2 of a quad owns key t of the
                             block), rescaled in place, reduced
                             (s0 + s2) + (s1 + s3) at the end */
    FA_ROWSUM_QUAD_BLOCK,  /* "quad-block": the same four threads; each
                             sums its keys of the block from 0, then
                             s_q = fma(s_q, alpha, block sum) (rowsum_fma;
                             else RN32(RN32(s_q alpha) + block sum));
                             reduced (s0 + s1) + (s2 + s3) at the end */
    FA_ROWSUM_WARPS,      /* "warps": per 32 keys of the block (one warp
                             tile) four thread partials from 0 (thread
                             (t mod 8) / 2 owns key t), reduced
                             (s0 + s1) + (s2 + s3); then
                             l = ((RN32(alpha l) + w0) + w1) + ... */
    FA_ROWSUM_WARP32,     /* "warp32": softmax_warp_forward's sum over the
                             row: lane t of W = min(32, 2^ceil(log2 n))
                             lanes sums keys t, t + W, ... from 0, then
                             the lanes' butterfly xor W/2, ..., 1 */
    FA_ROWSUM_QUAD_REDUCE /* "quad-reduce": Triton's tl.sum(p, 1) on the
                             wgmma accumulator layout: per block four
                             thread partials from 0 (thread (t mod 8) / 2
                             owns key t), reduced (s0 + s2) + (s1 + s3)
                             (lane xor 2, then xor 1), then
                             l = fma(l, alpha, sum) (rowsum_fma; else
                             RN32(RN32(l alpha) + sum)) */
} fa_rowsum;

/* How O~ takes a block. */
typedef enum
{
    FA_ACC_CHAIN,   /* "chain": O~ = RN_acc(P~V chained from RN32(O~ alpha)) */
    FA_ACC_SEPARATE, /* "separate": O~ = RN_acc(RN_acc(O~ alpha) +
                        RN_acc(P~V from 0)) */
    FA_ACC_WARPS     /* "warps" (decode_acc_update only, visit "block"):
                        each warp of decode_rowsum_span_wide consecutive
                        keys of a block holds its own O~_w =
                        RN_acc(P~V_w chained from RN32(O~_w alpha)); the
                        warps' O~ added at the end as a halving tree,
                        (w0 + w2) + (w1 + w3) for four */
} fa_acc_update;

typedef enum
{
    FA_FIRST_INIT,  /* "init": the first visited block sets m, l, O~ */
    FA_FIRST_UPDATE /* "update": every block updates, from m = m_init,
                       l = 0, O~ = 0 */
} fa_first_block;

typedef enum
{
    FA_NORM_DIVIDE,    /* "divide": O = RN_o(O~ / l) */
    FA_NORM_RECIPROCAL, /* "reciprocal": O = RN_o(O~ RN32(1 / l)); l = 0 or
                          NaN multiplies by 1 */
    FA_NORM_P_DIVIDE,   /* "p-divide": P~ = RN32(P~ / l) before the P~V
                           product (one KV block: untiled), O = RN_o(O~) */
    FA_NORM_RCP_APPROX  /* "reciprocal-approx": O = RN_o(O~ rcp(l)), rcp
                           the configuration's reciprocal model (cfg->rcp:
                           rcp-sm90 for the H200's rcp.approx.f32, MUFU.RCP;
                           NULL: RN32(1 / l)); the "lean" combine's 1 / L
                           too */
} fa_normalize;

typedef enum
{
    FA_LSE_ADD,      /* "add": RN_lse(RN_lse(log l) + m) */
    FA_LSE_FMA_SCALE, /* "fma-scale": fma(m, scale, log l) (m unscaled); l = 0
                         or NaN gives +Inf */
    FA_LSE_FMA_LN2,    /* "fma-ln2": fma(RN32(m sl2), RN32(ln 2), log l) (m
                         unscaled, sl2 the kernel's scale_log2); l = 0 or
                         NaN gives +Inf */
    FA_LSE_LOG2E_DIV,  /* "log2e-div": RN32(RN32(RN32(m L) / L) + log l),
                         L = RN32(log2 e) (m scaled) */
    FA_LSE_LOG2_LN2   /* "log2-ln2": RN32(RN32(RN32(m sl2) + lg2(l))
                         RN32(ln 2)) (score_log2), lg2 the description's
                         base-2 log; l = 0 taken as 1
                         (FlexAttention: m_i + log2(l_i) in the kernel,
                         times math.log(2) after it) */
} fa_lse_rule;

/* The natural log of the LSE and of the combine. */
typedef enum
{
    FA_KLOG_CR, /* "cr": correctly rounded FP32 log (fa_logf_cr) */
    FA_KLOG_LG2, /* "lg2": CUDA's __logf, RN(lg2(x) RN(ln 2)), through the
                   configuration's lg2 table model (cfg->log; lg2-sm90
                   for the H200's lg2.approx) */
    FA_KLOG_CUDA, /* "cuda-logf": CUDA's accurate logf (FP32 FMA
                    arithmetic only, fa_cuda_logf) */
    FA_KLOG_CUDA_LOG2_FTZ /* "cuda-log2f-ftz": base 2, libdevice's log2f
                             with flush-to-zero (fa_cuda_log2f_ftz), for
                             lse "log2-ln2" */
} fa_kernel_log;

typedef enum
{
    FA_MASK_NEG_INF,    /* "-inf" */
    FA_MASK_BF16_LOWEST /* "bf16-lowest": -finfo(bfloat16).max */
} fa_mask_fill;

/* The split-KV combine. */
typedef enum
{
    FA_COMBINE_FA2, /* "fa2": flash_fwd_splitkv_combine_kernel */
    FA_COMBINE_LEAN, /* "lean": cuDNN's decode engine and lean_reduction_
                       kernel: split s visits the KV blocks s, s + S, s + 2S,
                       ... (S splits) and keeps m, l and O~; the reduction,
                       one pass over s from 0 on the stored maxima n_s =
                       RN32(a_s RN32(ln 2)), a_s = RN32(m_s sl2): split 0
                       as it is, then N' = max(N, n_s), alpha, beta =
                       exp2(RN32(RN32(n_s - N') RN32(log2 e))), the same of
                       N (the configured exp model; 0 while N' is -inf),
                       L = fma(L, beta, RN32(l_s alpha)), O~ = fma(O~,
                       beta, RN32(O~_s alpha)); O = RN_o(RN32(O~
                       RN32(1/L))), LSE = fma(M, RN32(ln 2), log L) with
                       combine_log, M = max a_s; combine_exp unused */
    FA_COMBINE_FLEX_DECODE /* "flex-decode": FlexAttention's
                              flex_decoding (PyTorch 2.11 inductor): S =
                              max(2 floor(SMs / (B Hkv)), 1) programs per
                              query block; with TILE = ceil(ceil(K / S) /
                              bc) tiles of bc keys (K: the keys of the
                              block mask's listed blocks, Nk with a block
                              mask, 2^30 without one), program s takes
                              tiles s TILE .. (s + 1) TILE - 1 of the
                              partial list and tiles (S - 1 - s) TILE ..
                              of the full list, and keeps m (base 2), l
                              and O~ unnormalised; two inductor
                              reductions then take M = max m_s, w_s =
                              exp2(m_s - M), L = sum l_s w_s, O = (sum
                              O~_s w_s) / L (div.full), LSE2 = log2 L + M,
                              LSE = LSE2 RN32(ln 2).  Only a row whose
                              keys all fall in one program is modelled
                              (the reductions' own orders, which inductor
                              picks per launch, then change no bit);
                              other rows are refused */
} fa_combine;

/* The exp of the combine (natural). */
typedef enum
{
    FA_CEXP_CR,   /* "cr": correctly rounded expf */
    FA_CEXP_LIBM, /* "libm": the C library's expf */
    FA_CEXP_MODEL, /* "model": the configured exp model, natural exp as
                      exp2(RN(x RN(log2 e))) (CUDA's __expf) */
    FA_CEXP_EXPF   /* "cuda-expf": CUDA's expf built without fast math
                      (fa_cuda_expf, its ex2 the configured model) */
} fa_combine_exp;

/* The backward's engine, and the preset of its bwd_* fields (a
   description that leaves them out takes the preset's values).  chain,
   fa2, repo, efficient and cudnn run the tiled backward (backward.c),
   which reads only the bwd_* fields; math and flex run their own engines
   (backward_math.c, backward_flex.c), which read none of them. */
typedef enum
{
    FA_BWD_CHAIN, /* "chain": dQ one chain over the row's visible keys,
                     dK and dV chained through the accumulators over row
                     tiles; FP32 values (fp32, paper-eq4) */
    FA_BWD_FA2,   /* "fa2": the FA2 backward kernel (query blocks walked
                     backwards, causal m_block_min, P~ and dS~ in the
                     inputs' format into the MMA chains, dQ buffers,
                     dot_do_o delta) */
    FA_BWD_REPO,  /* "repo": the released code's backward (BF16 ops) */
    FA_BWD_EFFICIENT, /* "efficient": PyTorch's memory-efficient kernel
                         (P = expf(S - LSE) in the input format, its
                         delta, dS scaled then rounded, dQ, dK, dV MMA
                         chains through the accumulators) */
    FA_BWD_MATH, /* "math": autograd through PyTorch's math SDPA graph (P
                    of the forward, not from LSE; dP, dQ, dK, dV FP32
                    GEMM chains; softmax_warp_backward's strided row sum;
                    the sqrt(scale) factors on both sides; FP32 grads
                    rounded once to the input format) */
    FA_BWD_CUDNN, /* "cudnn": cuDNN 9.19's sm90 flash backward (the fa2
                    scheme with cuDNN's delta, dS scaled before its
                    rounding, dQ per key tile added across tiles in
                    FP32, the last tile first) */
    FA_BWD_FLEX  /* "flex": FlexAttention's Triton backward */
} fa_bwd_scheme;

/* Which keys of a query block the tiled backward computes S, P, dP and
   dS at; the others have P = dP = dS = 0. */
typedef enum
{
    FA_BKEYS_VISIBLE, /* "visible": the row's visible keys */
    FA_BKEYS_ALL,     /* "all": every key, a masked one's score -inf */
    FA_BKEYS_M_BLOCK  /* "m-block-min": every key of the key tiles that
                         the query block reaches (causal: from the tile's
                         m_block_min, fa_bwd_first_mblock, on; a masked
                         key's score -inf); the other tiles enter no
                         product */
} fa_bwd_keys;

/* The backward's delta, rowsum(dO o O), of each query row. */
typedef enum
{
    FA_BDELTA_MMA,       /* "mma": one dot product over the columns on
                            the mma "delta" model */
    FA_BDELTA_BF16_SUM,  /* "bf16-sum": (dO o O).sum(-1) in BF16 ops:
                            each product rounded to BF16, their FP32 sum
                            in column order rounded to BF16 (the delta
                            ablations: BF16 too, over every key) */
    FA_BDELTA_DOT_DO_O,  /* "dot-do-o": FA2's dot_do_o
                            (flash_bwd_preprocess_kernel.h) */
    FA_BDELTA_CUDNN,     /* "cudnn": cuDNN's compute_dot_do_o_specialized
                            (pairs fma(dO O, RN(dO O)), lanes of 8
                            columns, a butterfly) */
    FA_BDELTA_EFFICIENT  /* "efficient": the memory-efficient kernel's
                            computeDelta (bc_bwd / 32 lanes, FFMA chains,
                            a butterfly) */
} fa_bwd_delta;

/* How the tiled backward recomputes P from the score S and the LSE (a
   masked key: S = -inf). */
typedef enum
{
    FA_BP_SUB,        /* "sub": P = exp(RN32(RN32(S scale) - LSE)) */
    FA_BP_BF16_OPS,   /* "bf16-ops": s = RN_bf(RN32(RN_bf(S) scale)),
                         P = RN_bf(exp(RN_bf(RN32(s - LSE)))) (the
                         repo's BF16 ops) */
    FA_BP_SCALE_LOG2, /* "scale-log2": P = exp2(RN32(RN32(S sl2) -
                         RN32(LSE log2e))), with exp_arg "scale-fma"
                         exp2(fma(S, sl2, -RN32(LSE log2e))) (FA2; S
                         unscaled) */
    FA_BP_LOG2E_FMA,  /* "log2e-fma": P = exp2(RN32(RN32(fma(S, scale,
                         -LSE)) log2e)); with a mask
                         exp2(RN32(RN32(t - LSE) log2e)), t =
                         RN32(fma(S, scale, b)) (cuDNN; S unscaled) */
    FA_BP_EXPF_IN     /* "expf-in": P = expf(RN32(RN32(S scale) [+ b]) -
                         LSE) (exp_fn's CUDA expf), rounded to the
                         bwd_operand format; dS takes the rounded P (the
                         memory-efficient kernel) */
} fa_bwd_p;

/* dS from P, dP and delta, and where the softmax scale goes. */
typedef enum
{
    FA_BDS_P_DP,       /* "p-dp": dS = RN32(P RN32(dP - delta)); dQ and
                          dK are multiplied by the scale at the end */
    FA_BDS_P_DP_SCALE, /* "p-dp-scale": dS = RN32(RN32(P RN32(dP -
                          delta)) scale) (cuDNN) */
    FA_BDS_DP_P_SCALE, /* "dp-p-scale": dS = RN32(RN32(RN32(dP - delta)
                          P) scale) (the memory-efficient kernel) */
    FA_BDS_BF16_OPS    /* "bf16-ops": dS = RN_bf(RN_bf(RN32(P scale))
                          RN_bf(RN32(dP - delta))) (the repo's) */
} fa_bwd_ds;

/* How dQ = dS~ K accumulates over the key tiles of a row. */
typedef enum
{
    FA_BDQ_CHAIN,    /* "chain": one MMA chain of the FP32 dS over the
                        row's visible keys (bwd_operand "f32") */
    FA_BDQ_BUFFERS,  /* "buffers": each key tile's dS~ K an MMA chain
                        from 0, added in FP32 into buffer n mod G of
                        tile n (G: dq_buffers), tiles ascending; at the
                        end the buffers added in order from +0
                        (FA2's atomicAdd into dq_accum, convert_dQ) */
    FA_BDQ_REVERSE,  /* "reverse": each key tile's from 0 added in FP32
                        into one buffer, the last tile first (cuDNN's
                        red.global.add, convert_dq_to_16bits) */
    FA_BDQ_THROUGH,  /* "through": one MMA chain over the key tiles
                        through the FP32 accumulator (the memory-
                        efficient kernel) */
    FA_BDQ_BF16_ADD  /* "bf16-add": each key tile's from 0 rounded to
                        BF16 and added to dQ, rounded to BF16 (the
                        repo's dqc.add_(dq_chunk)) */
} fa_bwd_dq;

/* How dK = dS~^T Q and dV = P~^T dO accumulate over the query blocks. */
typedef enum
{
    FA_BDKV_CHAIN,   /* "chain": the FP32 P and dS of every key, chained
                        through the accumulators (bwd_operand "f32") */
    FA_BDKV_MMA,     /* "mma": per key tile the MMA chain over the
                        block's rows through the FP32 accumulator */
    FA_BDKV_BF16_ADD /* "bf16-add": per key tile the block's product from
                        0 rounded to BF16, added to the accumulator,
                        rounded to BF16 (the repo's dvc.add_) */
} fa_bwd_dkv;

/* The natural exp of a kernel whose exp_base2 is false. */
typedef enum
{
    FA_EXPFN_MODEL, /* "model": the configured exp model's natural exp */
    FA_EXPFN_CUDA   /* "cuda-expf": CUDA's accurate expf, an FMA range
                       reduction around one exp2 of the configured model
                       (ex2-sm90: the H200's ex2.approx), fa_cuda_expf */
} fa_exp_fn;

/* The number of dQ accumulation buffers of bwd_dq "buffers" (the fa2
   backward's): KV block n adds its dQ contribution into buffer n mod G,
   the blocks of a buffer in ascending order; convert_dQ adds the buffers
   in order from 0, then scales and rounds. */
typedef enum
{
    FA_DQB_ONE, /* "one": G = 1 (the non-deterministic kernel's one buffer,
                   which the KV blocks' thread blocks add into with
                   atomicAdd in an order no launch fixes; here in
                   ascending order) */
    FA_DQB_SMS  /* "sms": G = ceil(SMs / (B H)), the deterministic launch
                   (run_flash_bwd_seqk_parallel: the dq_dk_dv kernel's
                   grid.x, thread block x walking the KV blocks x, x + G,
                   ... into buffer x); SMs the configuration's sms */
} fa_dq_buffers;

/* The LSE of cuDNN's 16 x 128 decode engine and its lean reduction. */
typedef enum
{
    FA_DLSE_SAME,   /* "same": as lse says */
    FA_DLSE_LG2_FMA /* "lg2-fma": fma(lg2(l), RN32(ln 2), RN32(M RN32(ln 2)))
                       with M = RN32(m sl2) (the lean reduction: M its
                       log2-domain maximum), lg2 the log model's base-2
                       log */
} fa_decode_lse;

/* The exp model a kernel's exponentials run on unless the user names
   another (--exp): the one default of the exp model, stated here so that
   every subcommand and every way of naming the kernel gives the same
   bits. */
typedef enum
{
    FA_KEXP_CR,          /* "cr": correctly rounded */
    FA_KEXP_LIBM,        /* "libm": the C library's expf */
    FA_KEXP_EX2_SM90,    /* "ex2-sm90": the H200's ex2.approx.f32 (the
                            measured table) */
    FA_KEXP_EX2_SM90_FTZ /* "ex2-sm90-ftz": ex2.approx.ftz.f32 */
} fa_kernel_exp;

/* How the backward of grouped-query heads (Hkv < Hq) forms a KV head's
   dK and dV from the group's query heads. */
typedef enum
{
    FA_GQA_NONE,  /* "none": not modelled (the backward of grouped heads
                     is refused) */
    FA_GQA_IN_SUM, /* "in-sum": each query head's dK and dV as the
                     kernel writes them for an expanded launch (rounded to
                     the input format), then added in FP32 in head order
                     from +0 and rounded once to the input format: the
                     flash backend's dk_expanded summed by at::sum, and
                     the backward of repeat_interleave */
    FA_GQA_FP32_SUM, /* "fp32-sum": each query head's dK and dV in FP32, as
                       the backward has them before its last rounding
                       (fa_config's dkv_fp32), added in FP32 in head order
                       from +0 and rounded once to the input format (the
                       math backend: K and V repeated after their FP32
                       copy, so autograd sums the FP32 gradients) */
    FA_GQA_CHAIN /* "chain": one program per KV head walks its group's
                    query heads in order, dK and dV in one FP32
                    accumulator each (FlexAttention's Triton backward with
                    enable_gqa); the backward runs a group at once
                    (fa_config's gqa_group) */
} fa_gqa_dkv;

/* How an attention mask (fa_config's mask: an additive bias b, or a
   boolean mask turned into one by bool_fill) enters the scores. */
typedef enum
{
    FA_BIAS_NONE, /* "none": the kernel takes no mask (one is refused) */
    FA_BIAS_ADD,  /* "add": S = RN32(S + b) on the kernel's scaled score
                     (score_scaled, or score_prescale's product): the
                     memory-efficient kernel's accum += bias after its
                     scale, the math backend's attn.add_(attn_mask) */
    FA_BIAS_LOG2  /* "log2": a kernel of unscaled scores (score_scaled
                     false) takes the natural score t = RN32(fma(S,
                     scale, b)) and then the log2-domain score
                     RN32(t RN32(log2 e)); the rest of the softmax (max,
                     exp2 arguments, rescale, LSE) runs on it with sl2 =
                     1 (cuDNN's graph: scale, bias add, softmax) */
} fa_bias_add;

/* The value a False entry of a boolean mask becomes: the additive mask
   the launcher (PyTorch 2.11) builds for this backend, in the inputs'
   format. */
typedef enum
{
    FA_BFILL_NEG_INF,  /* "-inf": where(mask, 0, -inf) */
    FA_BFILL_NEG_65504 /* "-65504": where(mask, 0, -65504) rounded to the
                          inputs' format (BF16: -65536; FP16: -65504) */
} fa_bool_fill;

/* The LSE of a row that visited keys but whose every key was masked
   (its row sum 0). */
typedef enum
{
    FA_MLSE_EMPTY, /* "empty": as a row that saw no key (empty_lse) */
    FA_MLSE_ZERO   /* "zero": +0 */
} fa_masked_lse;

/* Tiles of one range of head dimensions; 0 means N (untiled). */
typedef struct fa_kernel_tiles
{
    unsigned d_max;              /* the row serves padded d up to d_max */
    unsigned br, bc;             /* forward */
    unsigned br_bwd, bc_bwd;     /* backward */
    unsigned br_split, bc_split; /* split-KV forward */
} fa_kernel_tiles;

/* The order of one dot product of a cuBLAS gemv kernel (decode, Nq = 1):
   lane t of LANES takes the reduction's elements in runs of CHUNK
   consecutive ones starting at chunk t + chunk lanes i (i = 0, 1, ...),
   each lane one FMA chain from +0 in ascending order; then the lanes are
   combined.  LANES 0: no gemv order (the description's MMA chain). */
typedef enum
{
    FA_GEMV_BUTTERFLY, /* "butterfly": every lane adds lane t ^ o for
                          o = lanes/2, ..., 1 (the result of lane 0) */
    FA_GEMV_SEQUENTIAL /* "sequential": ((lane 0 + lane 1) + lane 2) ... */
} fa_gemv_combine;

typedef struct fa_gemv_order
{
    unsigned lanes, chunk;
    fa_gemv_combine combine;
} fa_gemv_order;

/* One measured range of decode launches and the orders of its two gemv
   products: S = Q'K'^T (each score a dot product over d) and P V (each
   output column a dot product over the keys).  The bounds are
   inclusive; BH is the launch's batch x heads (cuBLAS picks its kernel
   from the whole strided batch). */
typedef struct fa_gemv_row
{
    unsigned d_min, d_max;
    unsigned nk_min, nk_max;
    unsigned bh_min, bh_max;
    fa_gemv_order s, pv;
} fa_gemv_row;

#define FA_KERNEL_MAX_GEMV 16

#define FA_KERNEL_MAX_TILES 8
#define FA_KERNEL_NAME_MAX 32
#define FA_KERNEL_MMA_MAX 24

/* One kernel.  Every field changes bits; nothing else does (besides the
   configuration's shape, mask, scale, fix, ablations and exp model). */
typedef struct fa_kernel
{
    char name[FA_KERNEL_NAME_MAX];
    /* tiles: the first row whose d_max >= d rounded up to d_round */
    unsigned d_round;
    size_t n_tiles;
    fa_kernel_tiles tiles[FA_KERNEL_MAX_TILES];
    bool kv_reverse;  /* KV blocks visited last first */
    bool causal_skip; /* causal: only the blocks up to the kernel's
                         n_block_max are visited (the rest masked for the
                         whole query block); none: O = 0, LSE = +Inf */
    /* MMA presets (softfloat/mma.h names) of each product */
    char mma_s[FA_KERNEL_MMA_MAX], mma_pv[FA_KERNEL_MMA_MAX],
        mma_dp[FA_KERNEL_MMA_MAX], mma_dq[FA_KERNEL_MMA_MAX],
        mma_dk[FA_KERNEL_MMA_MAX], mma_dv[FA_KERNEL_MMA_MAX],
        mma_delta[FA_KERNEL_MMA_MAX];
    /* scores */
    fa_fmt score_dot;  /* the dot product rounded to this before scaling */
    bool score_scaled; /* false: S unscaled, the scale in the exponent */
    fa_fmt score;      /* S (and m) */
    fa_mask_fill mask; /* the forward's mask value */
    fa_mask_fill m_init;
    /* the online softmax */
    fa_visit visit;
    bool fix_all_keys; /* the fix's repetition test counts every key of
                          the block (mask fill included) */
    fa_first_block first;
    bool exp_base2;
    fa_exp_arg exp_arg;
    fa_alpha_arg alpha_arg;
    fa_fmt alpha;       /* the rescale factor stored */
    fa_fmt p;           /* P~ as fed to the P~V product */
    bool rowsum_fp32_p; /* l sums P~ before its rounding to the p format */
    fa_rowsum rowsum;
    bool rowsum_fma;   /* quad: a partial's rescale and its next addition
                          are one FMA */
    bool rowsum_clamp; /* the block sum clamped below at RN32(1e-10) */
    fa_fmt l;
    fa_acc_update acc_update;
    fa_fmt acc;
    /* the epilogue */
    fa_normalize normalize;
    fa_fmt o;
    fa_lse_rule lse;
    fa_fmt lse_fmt;
    fa_kernel_log log;
    bool empty_lse_pos; /* a row that saw no key: LSE +Inf (else -Inf) */
    /* split-KV */
    unsigned splits; /* 1: not split */
    fa_combine combine;
    fa_combine_exp combine_exp;
    fa_kernel_log combine_log;
    /* the backward */
    fa_bwd_scheme bwd;
    bool bwd_reverse_q; /* query blocks walked last first */
    /* Appended (optional in JSON, 0 when absent): PyTorch's
       memory-efficient and math SDPA backends. */
    fa_exp_fn exp_fn;    /* how the natural exp is formed */
    bool score_prescale; /* Q and K each times RN32(sqrt(scale)) in FP32
                            before an FP32 product (the math backend's
                            scaling); S is that product, not scaled
                            again */
    /* Decode (Nq = 1) launches run cuBLAS gemv kernels: the first row
       whose ranges hold (d, Nk, batch x heads of the launch) gives the
       orders of S and P V; no row: the MMA chains above. */
    size_t n_gemv;
    fa_gemv_row gemv[FA_KERNEL_MAX_GEMV];
    /* Appended (optional in JSON, "one" when absent). */
    fa_dq_buffers dq_buffers; /* bwd_dq "buffers": the buffer count */
    /* Appended (optional in JSON, 0 when absent): cuDNN's decode engine.
       With one query row (Nq = 1), each thread's block sum of the
       "quad-block" row sum is formed in spans of this many keys of the
       block, each span summed from 0 in key order and the spans added in
       order (cuDNN: 64, the two halves of a 128-key tile); 0: one sum
       over the block. */
    unsigned decode_rowsum_span;
    /* Appended (optional in JSON, 0 when absent): from
       decode_wide_min_nk keys (0: never) the decode launch runs a second
       engine whose spans are decode_rowsum_span_wide keys (cuDNN: 32 from
       257 keys, one per warp of the 16 x 128 tile).  Either way a
       thread's span sums are added as a pairwise tree, (w0 + w1) +
       (w2 + w3) (with two spans the same as in order). */
    unsigned decode_rowsum_span_wide;
    unsigned decode_wide_min_nk;
    /* Appended (optional in JSON, "tree" when absent): how a thread's
       span sums of one block are added.  "tree" (or ""): the pairwise
       tree above.  Otherwise one hexadecimal digit per span, the spans'
       indices in the order they are added, from the first ("2013":
       ((w2 + w0) + w1) + w3); a permutation of 0 .. n - 1 for the n spans
       of a full block, and in a shorter block the spans it lacks are
       skipped.  cuDNN's 16 x 128 decode engine adds its four warps' sums
       in an order that changes from launch to launch (doc/gpu-
       crosscheck.md): each fixed order is one of its possible results. */
    char decode_span_order[FA_KERNEL_NAME_MAX];
    /* Appended (optional in JSON, "same" when absent): the LSE of one
       query row from decode_wide_min_nk keys (the second engine) and of
       the lean reduction after it. */
    fa_decode_lse decode_lse;
    /* Appended (optional in JSON, "chain" when absent): acc_update of one
       query row from decode_wide_min_nk keys (the second engine).
       cuDNN's 16 x 128 decode engine keeps one accumulator per warp of
       32 keys, chained from the rescaled accumulator, and adds the four
       at the end ("warps"), where its prefill engine chains each block's
       products from the one rescaled accumulator ("chain"). */
    fa_acc_update decode_acc_update;
    /* Appended (optional in JSON, false when absent): the forward of one
       query row from decode_wide_min_nk keys (the second engine) scales
       the scores and takes them to the log2 domain before the max, t =
       RN32(RN32(S scale) RN32(log2 e)), the softmax then in that domain
       (sl2 = 1: the exponent's argument RN32(t - m), the rescale's
       RN32(m_old - m_new)); a kernel of unscaled scores only.  cuDNN's
       16 x 128 decode engine multiplies the scores by the scale and then
       by log2 e (FMUL, FMUL), where its prefill engine folds the two. */
    bool decode_log2_scores;
    /* Appended (optional in JSON; absent: "ex2-sm90" for a description
       of a GPU kernel, whose row sum is "quad" or "quad-block", whose
       exp_arg is "log2e-sub" or whose exp_fn is "cuda-expf", else "cr",
       the defaults before the field existed): the exp model run when
       none is named. */
    fa_kernel_exp exp_model;
    /* Appended (optional in JSON, "none" when absent): the backward of
       grouped-query heads. */
    fa_gqa_dkv gqa_dkv;
    /* Appended (optional in JSON; "none", "-inf", "empty" when absent):
       attention masks. */
    fa_bias_add bias_add;
    fa_bool_fill bool_fill;
    fa_masked_lse masked_lse;
    /* Appended (optional in JSON, false when absent): FlexAttention.
       score_log2: the scores are scaled, t = RN32(RN32(S scale) + b) (b
       = 0 without a mask: qk *= SM_SCALE, then the modifications), and
       the softmax runs in base 2 with sl2 = RN32(log2 e) (Triton's
       post_mod_scores *= RCP_LN2, which LLVM contracts into the exp2
       argument: fma(t, sl2, -RN32(m sl2)), the max taken on RN32(t
       sl2)).  block_sparse: the KV blocks each query block visits are
       those of its block mask (fa_config's sparse_q x sparse_kv blocks
       holding a visible key), the partial ones (some key hidden, or
       past Nq or Nk) first in ascending order, then the full ones in
       ascending order; each sparse block is walked in tiles of bc keys.
       Without a mask or causal: every block in order. */
    bool score_log2;
    bool block_sparse;
    /* Appended (optional in JSON, "sub" when absent; block_sparse only):
       the exponent's argument in a partial block, where the mask's
       select stands between the product by sl2 and the subtraction
       (FlexAttention: scale-sub, RN32(RN32(t sl2) - RN32(m sl2)); in
       full blocks, and with no block mask, exp_arg's scale-fma). */
    fa_exp_arg exp_arg_partial;
    /* Appended (optional in JSON, 0 when absent): launches with fewer
       query rows run another kernel, which this description does not
       model (FlexAttention: flex_decoding, split-KV, below 128 rows);
       they are refused. */
    unsigned min_nq;
    /* Appended (optional in JSON, false when absent): the description
       takes FlexAttention's tanh soft-capping (fa_config's softcap c):
       with score_log2, t = RN32(RN32(c) tanhf(RN32(t RN32(1 / c))))
       after the scale and before a mask, tanhf libdevice's with
       flush-to-zero (fa_cuda_tanhf_ftz: the exp model's EX2 and the
       reciprocal model's RCP).  Otherwise a softcap is refused. */
    bool softcap_tanhf;
    /* Appended (optional in JSON, "" when absent): the named description
       that runs a launch of fewer query rows than min_nq (FlexAttention:
       "flex-decode", its flex_decoding kernel); "": such launches are
       refused. */
    char below_min_nq[FA_KERNEL_NAME_MAX];
    /* Appended (optional in JSON, 0 when absent; rowsum "quad-reduce"):
       when the program holds fewer than 128 rows (flex_decoding's BLOCK_M
       = max(16, 2^ceil(log2(Nq G))), G the query heads per KV head:
       Triton's mma.sync layout of the [BLOCK_M, 64] scores with two warps
       is warpsPerCTA [1, 2] until BLOCK_M / 16 reaches 64 / 8), its warps
       split each block's keys: warp w of this many takes the 8-key tiles
       8 w, 8 w + 8 rowsum_col_warps, ...; each warp's quad sum as
       "quad-reduce", then the warps' sums added in order.  0 or 1: one
       warp holds every key of a row. */
    unsigned rowsum_col_warps;
    /* Appended (optional in JSON; absent: the preset of bwd,
       fa_kernel_bwd_preset): the tiled backward (bwd chain, fa2, repo,
       efficient, cudnn) as data.  The math and flex engines read none of
       them (their preset: chain's values). */
    fa_bwd_keys bwd_keys;
    fa_bwd_delta bwd_delta;
    fa_bwd_p bwd_p;
    fa_fmt bwd_dp;      /* dP rounded to this before its use: f32 (not
                           rounded) or bf16 */
    fa_bwd_ds bwd_ds;
    fa_fmt bwd_operand; /* P~ and dS~ as the dQ, dK, dV products take
                           them: f32 (with bwd_dq and bwd_dkv "chain",
                           and only with them), in, bf16 or f16 */
    fa_bwd_dq bwd_dq;
    fa_bwd_dkv bwd_dkv;
    fa_fmt bwd_out;     /* dQ, dK and dV rounded to this at the end (f32:
                           not rounded) */
} fa_kernel;

/* The named descriptions ("fa2", "paper-eq4", "repo", "fp32", then
   "efficient" and "math"): NULL for an unknown name. */
const fa_kernel *fa_kernel_by_name(const char *name);
/* The I-th named description (NULL past the last). */
const fa_kernel *fa_kernel_at(size_t i);

/* Sets K's bwd_* fields to the preset of K->bwd (the values of the
   named description of that backward; math and flex: chain's). */
void fa_kernel_bwd_preset(fa_kernel *k);

/* Whether K's backward is the tiled one (bwd chain, fa2, repo, efficient
   or cudnn), the one the bwd_* fields describe. */
bool fa_kernel_bwd_tiled(const fa_kernel *k);

/* NULL if K is usable, else a static string naming the field and what is
   wrong. */
const char *fa_kernel_check(const fa_kernel *k);

/* The tiles of K for head dimension D (the row of D rounded up to
   d_round), or NULL when no row serves D. */
const fa_kernel_tiles *fa_kernel_tiles_for(const fa_kernel *k, size_t d);

/* The gemv row of K that a decode launch (Nq = 1) of head dimension D,
   NK keys and batch x heads BH runs (the first whose bounds hold), or
   NULL when none does (the description's MMA chain then). */
const fa_gemv_row *fa_kernel_gemv_for(const fa_kernel *k, size_t d, size_t nk,
                                      size_t bh);

/* The exp model of a description written before exp_model existed (the
   rule in exp_model's comment). */
fa_kernel_exp fa_kernel_exp_legacy(const fa_kernel *k);

/* Names of enumerated values, by field: FIELD is the JSON field name
   ("score", "exp_arg", ...).  fa_kernel_enum_names returns the
   NULL-terminated list of names of FIELD's values (value i = names[i]),
   or NULL when FIELD is not an enumerated field. */
const char *const *fa_kernel_enum_names(const char *field);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ATTENTION_KERNEL_H */
