/* attention.h -- reference flash attention on the emulator */
#ifndef BF16EMU_ATTENTION_H
#define BF16EMU_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "mma.h"
#include "softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * Tensors.  Q, dO and O are [B, H, Nq, d]; K and V are [B, H, Nk, d]; S,
 * P and their gradients are [B, H, Nq, Nk]; LSE and delta are [B, H, Nq];
 * all row-major, caller-owned.  Inputs (Q, K, V, dO) are BF16 bit
 * patterns.  Every output is an array of FP32 bit patterns (uint32_t):
 * a policy that produces a BF16 value stores that value widened exactly,
 * so the same buffers serve every policy; fa_output_format() says which
 * format the values of a given output lie on.
 *
 * Signs of errors elsewhere in the project are computed - exact (the
 * paper's lp - hp); this library only computes.
 *--------------------------------------------------------------------------*/
typedef struct fa_shape
{
    size_t batch, heads; /* B, H */
    size_t nq, nk;       /* query and key sequence lengths */
    size_t d;            /* head dimension */
} fa_shape;

/*----------------------------------------------------------------------------
 * An attention mask: SDPA's attn_mask broadcast over [B, H, Nq, Nk].
 * Boolean (true: the key takes part) or additive (FP32, BF16 or FP16
 * values added to the scores).  The kernel description says how it
 * enters (bias_add) and what a False entry becomes (bool_fill).
 *--------------------------------------------------------------------------*/
typedef enum
{
    FA_AMASK_BOOL, /* uint8_t, nonzero: the key takes part */
    FA_AMASK_F32,  /* uint32_t FP32 bit patterns */
    FA_AMASK_BF16, /* uint16_t BF16 bit patterns */
    FA_AMASK_F16   /* uint16_t FP16 bit patterns */
} fa_amask_type;

typedef struct fa_attn_mask
{
    fa_amask_type type;
    const void *data;
    /* Element offsets: head (b, h) of the configuration (b H + h) starts
       at head_offset[b H + h] (NULL: every head at 0); entry (i, j) of a
       head at i row_stride + j key_stride (0 broadcasts). */
    const size_t *head_offset;
    size_t row_stride, key_stride;
} fa_attn_mask;

/*----------------------------------------------------------------------------
 * Policies: where the forward and backward round, and to what (the
 * contract names of DESIGN.md section 4; each policy's rounding map is
 * in doc/attention.md).
 *--------------------------------------------------------------------------*/
typedef enum
{
    FA_POLICY_PAPER_EQ4, /* "paper-eq4": every dot product in FP32, one
                            rounding to BF16 where the paper writes lp */
    FA_POLICY_REPO,      /* "repo": the released PyTorch code's per-op
                            BF16 roundings (m, l and O accumulator BF16) */
    FA_POLICY_FA2,       /* "fa2": the FlashAttention-2 kernel on sm90 */
    FA_POLICY_FP32,      /* "fp32": everything FP32 (the paper's hp) */
    FA_POLICY_EFFICIENT, /* "efficient": PyTorch's memory-efficient SDPA
                            kernel (CUTLASS) on sm80+ */
    FA_POLICY_MATH       /* "math": PyTorch's math SDPA backend on CUDA
                            (FP32 throughout, cuBLAS FFMA GEMMs) */
} fa_policy;

/* Softmax-shift fix variants (paper section 4, Algorithm 1). */
typedef enum
{
    FA_FIX_NONE,    /* "none": m = running row max */
    FA_FIX_BETA,    /* "beta": block max r repeated when more than one S
                       >= r - tol (in the policy's score format); then
                       m = beta * r for r > 0, m = 0 for r < 0 */
    FA_FIX_BETA_V2, /* "beta-v2": repeated means exact equality */
    FA_FIX_EPS,     /* "eps": m = r + eps when repeated (P~ < 1) */
    FA_FIX_ALWAYS   /* "always": the beta rule without the repetition
                       test (shows the underflow failure) */
} fa_fix_kind;

/* A row whose repeated block max r is exactly 0 is covered by neither
   branch of the paper's rule; FA_ZERO_MAX_KEEP leaves m = 0 (P~ = 1 stays
   possible, as the paper and its code do), FA_ZERO_MAX_SHIFT uses
   m = eps_zero > 0 so that P~ < 1. */
typedef enum
{
    FA_ZERO_MAX_KEEP,
    FA_ZERO_MAX_SHIFT
} fa_zero_max;

typedef struct fa_fix
{
    fa_fix_kind kind;
    double beta;          /* > 1; 2 for beta/always, 7 for beta-v2 */
    double tol;           /* beta: near-max tolerance (1e-3) */
    double eps;           /* eps: shift (2^-5) */
    fa_zero_max zero_max; /* r = 0 repeated */
    double eps_zero;      /* FA_ZERO_MAX_SHIFT: the shift used (2^-5) */
} fa_fix;

/* The fix KIND with its default parameters: beta 2 (7 for beta-v2), tol
   1e-3, eps 2^-5, zero_max keep, eps_zero 2^-5.  The parameters are
   rounded to FP32 where they are used; doc/attention.md says where. */
fa_fix fa_fix_default(fa_fix_kind kind);

/* Ablations (paper section 3.2), OR-ed. */
enum
{
    FA_ABL_FP32_PV = 1u << 0,      /* "fp32-pv": O~ = P~V kept FP32 */
    FA_ABL_FP32_O = 1u << 1,       /* "fp32-o": O kept FP32 */
    FA_ABL_DELTA_DPP = 1u << 2,    /* "delta-dpp": delta = rowsum(dP o P) */
    FA_ABL_DELTA_FP32_O = 1u << 3, /* "delta-fp32-o": delta from O
                                      recomputed in FP32 */
    FA_ABL_UNTILED = 1u << 4,      /* "untiled": Br = Nq, Bc = Nk */
    FA_ABL_FP32_P = 1u << 5,       /* "fp32-p": P~ kept FP32 and fed to the
                                      P~V product in FP32 (paper-eq4,
                                      fa2) */
    FA_ABL_FP32_OCAST = 1u << 6    /* "fp32-ocast": only the final
                                      rounding of O to BF16 left out */
};

/*----------------------------------------------------------------------------
 * exp models.  Every exponential of the forward and backward goes
 * through one model: natural exp (paper-eq4, repo, fp32) or exp2 (fa2),
 * FP32 in, FP32 out (bit patterns).  doc/exp-models.md has the rules, the
 * method of the correctly rounded functions and their error bounds.
 *--------------------------------------------------------------------------*/
typedef enum
{
    FA_EXP_CR,    /* "cr": correctly rounded (RNE), subnormals kept */
    FA_EXP_LIBM,  /* "libm": the C library's expf / exp2f */
    FA_EXP_TABLE, /* a measured exp2 table (ex2-sm90 when measured);
                     natural exp is exp2(RN(x * RN(log2 e))) */
    FA_EXP_FN     /* a caller-supplied function */
} fa_exp_kind;

/* A table model of exp2, made for x <= 0 (the arguments of softmax) and
   applied by the same rule to x > 0.  values[i] is the model's exp2 of
   the grid point -1 + i 2^-frac_bits of [-1, 0).  For FP32 x:
     q = x truncated toward zero to a multiple of 2^-frac_bits,
     n = floor(q), f = q - n in [0, 1),
     exp2(x) = values[f 2^frac_bits] * 2^(n + 1),
   the product exact while it is normal; below 2^-126 it is rounded once
   to the FP32 subnormal grid (roundTiesToEven), or with ftz flushed to a
   zero of the entry's sign (+0).  Beyond the FP32 range it is +Inf or
   +0.  Special inputs: NaN -> the NaN quieted (payload kept), -Inf ->
   +0, +Inf -> +Inf, +-0 -> 2 values[0].  A NaN entry is returned
   quieted.  So x in [-1, 0) on the grid gives values[i] itself, and a
   subnormal x (|x| < 2^-126) behaves as 0 whether or not ftz is set.
   0 <= frac_bits <= FA_EXP2_TABLE_MAX_BITS. */
typedef struct fa_exp2_table
{
    unsigned frac_bits;     /* grid 2^-frac_bits */
    const uint32_t *values; /* 2^frac_bits FP32 bit patterns */
    bool ftz;               /* subnormal results flushed to +0 */
    /* Optional, for a measured unit (the H200's ex2.approx,
       doc/gpu-measurements.md):
       pos_values: NULL, or 2^frac_bits entries giving exp2 at the grid
         points i 2^-frac_bits of [0, 1); then a q > 0 gives
         pos_values[f 2^frac_bits] * 2^n instead of the rule above;
       square_below: without ftz, an x below -126 gives the model at x/2
         squared and rounded once (to nearest even) into the subnormal
         range, instead of the one rounding of the scaled entry. */
    const uint32_t *pos_values;
    bool square_below;
} fa_exp2_table;

typedef struct fa_exp_model
{
    const char *name;
    fa_exp_kind kind;
    const fa_exp2_table *table;                         /* FA_EXP_TABLE */
    uint32_t (*fn)(void *user, bool base2, uint32_t x); /* FA_EXP_FN */
    void *user;
} fa_exp_model;

/* The built-in models by name ("cr", "libm"), or NULL (also for a NULL
   NAME). */
const fa_exp_model *fa_exp_model_by_name(const char *name);
/* exp(x) (base2 false) or exp2(x) of FP32 bits X under model M.  A NULL M
   is "cr"; a model that fa_exp_model_check refuses gives the default NaN
   0x7FC00000.  FA_EXP_FN passes M->user, BASE2 and X to M->fn. */
uint32_t fa_exp_eval(const fa_exp_model *m, bool base2, uint32_t x);
/* Correctly rounded FP32 exp and exp2 for every FP32 input: RNE,
   subnormal results rounded once, overflow to +Inf, -Inf -> +0, +Inf ->
   +Inf, NaN -> the same NaN with the quiet bit set.  They assume the
   host's default floating-point environment (double operations rounded to
   nearest). */
uint32_t fa_expf_cr(uint32_t x);
uint32_t fa_exp2f_cr(uint32_t x);

/* CUDA's accurate expf (not __expf), as nvcc compiles it for sm_90: an
   FMA range reduction x log2(e) = n + f, one exp2 of f through EX2 (the
   model of MUFU.EX2: a table model, ex2-sm90 for the H200; NULL: the
   correctly rounded exp2), times 2^n
   (n clamped to [-126, 126], the product rounded once).  Equal to the
   H200's expf on every FP32 input with ex2.approx in place of EX2
   (doc/notes/gpu-crosscheck-log.md, "math model"). */
uint32_t fa_cuda_expf(const fa_exp_model *ex2, uint32_t x);
/* CUDA's accurate logf (not __logf), as nvcc compiles it for sm_90: a
   polynomial in FP32 FMAs, no special-function unit; -Inf for +-0, NaN
   below 0. */
uint32_t fa_cuda_logf(uint32_t x);
/* CUDA's accurate log2f with flush-to-zero (libdevice's __nv_log2f as
   Triton links it, __CUDA_FTZ on): a polynomial in FP32 FMAs on the
   mantissa reduced to [sqrt(2)/2, sqrt(2)), plus the exponent; -Inf for
   +-0 and subnormals, NaN below 0. */
uint32_t fa_cuda_log2f_ftz(uint32_t x);
/* CUDA's tanhf with flush-to-zero (libdevice's __nv_tanhf as Triton
   links it): below |x| = 0.6 an odd polynomial in FP32 FMAs, above it
   1 - 2 RCP(EX2(2 |x| log2 e) + 1) (EX2 and RCP of the models EX2 and
   RCP: ex2.approx.ftz and rcp.approx.ftz), 1 from |x| >= 9.0109, with
   the sign of x. */
struct fa_exp_model;
struct fa_rcp_model;
uint32_t fa_cuda_tanhf_ftz(const struct fa_exp_model *ex2,
                           const struct fa_rcp_model *rcp, uint32_t x);

/* The largest frac_bits of a table model: 2^24 entries, every grid point
   of [-1, 0) an FP32 value. */
#define FA_EXP2_TABLE_MAX_BITS 24

/* Fills VALUES[0 .. 2^FRAC_BITS - 1] with FN(-1 + i 2^-FRAC_BITS) (FP32
   bits in and out), the table of a model whose exp2 is FN on the grid.
   Returns 0, or -1 (nothing written) for a NULL argument or FRAC_BITS
   above FA_EXP2_TABLE_MAX_BITS. */
int fa_exp2_table_fill(uint32_t *values, unsigned frac_bits,
                       uint32_t (*fn)(uint32_t x));

/* NULL if M can be evaluated (a NULL M is "cr"), else a static string
   saying what is wrong: a table model without a table or values or with
   frac_bits above the maximum, a function model without fn, an unknown
   kind. */
const char *fa_exp_model_check(const fa_exp_model *m);

/* How fa_expf_cr (BASE2 false) or fa_exp2f_cr decides X, for tests and
   doc/exp-models.md: 0 without evaluating (NaN, infinities, beyond the
   overflow and underflow bounds), 1 by the double evaluation, 2 by the
   double-double evaluation, 3 by neither (the result is then the
   double-double value rounded to nearest; make check-exhaustive counts
   these inputs and finds none). */
int fa_exp_cr_level(bool base2, uint32_t x);
/* The result of the double-double evaluation alone (what fa_expf_cr or
   fa_exp2f_cr returns when the first evaluation cannot decide; level-0
   inputs as there), for tests: it is correctly rounded wherever its own
   test decides. */
uint32_t fa_exp_cr_second(bool base2, uint32_t x);

/*----------------------------------------------------------------------------
 * Captures: caller-owned buffers, NULL when not wanted.  Sizes in
 * elements; FP32 bit patterns unless stated.  A per-block capture is
 * indexed by the block in visiting order.
 *--------------------------------------------------------------------------*/
typedef struct fa_capture
{
    uint32_t *s;    /* [B,H,Nq,Nk] scores as the policy holds them */
    uint32_t *p;    /* [B,H,Nq,Nk] P~ as fed to the P~V product */
    uint32_t *m;    /* [B,H,Nq,Tc] running max after each KV block */
    uint32_t *l;    /* [B,H,Nq,Tc] running row sum after each block */
    uint32_t *obar; /* [B,H,Nq,d] O~ (unnormalised) after the last block */
    uint32_t *lse_kernel; /* [B,H,Nq] the LSE as the kernel keeps it for
                             its backward: lse "log2-ln2" m + log2(l) in
                             base 2 (before the product with RN(ln 2));
                             otherwise the LSE */
    uint32_t *dp;   /* [B,H,Nq,Nk] */
    uint32_t *ds;   /* [B,H,Nq,Nk] */
    /* Rounding events of one output element O[b,h,row,col] (forward) and
       of dQ[b,h,row,col] (backward): every rounding that feeds it is
       delivered to EVENTS (NULL: none). */
    bool trace;
    size_t trace_b, trace_h, trace_row, trace_col;
    const sf_event_sink *events;
} fa_capture;
/* fa_forward fills s, p, m, l and obar; fa_backward fills dp and ds.
   Values are those of the policy (BF16 ones widened exactly); s of fa2 is
   the unscaled Q K^T, as the kernel holds it; ds of fp32, paper-eq4 and
   fa2 is P o (dP - delta) without the softmax scale (applied to dQ and dK
   at the end), of the repo with it.  Masked entries hold the policy's
   mask value in s (-Inf; the repo -finfo(bf16).max) and 0 in p, dp, ds
   where nothing is computed (also the keys of blocks that no block list,
   program or split visits).  With splits, p holds each split's P~ against
   its own running max.  For a row that visits fewer than Tc blocks
   the last m and l are repeated (a row that visits none: m -Inf, l 0).
   The traced events come from a second evaluation of that element's
   chain with the sink installed in a private copy of the environment;
   the caller's ENV neither sees them nor gets their flags (it already has
   the flags of the first evaluation).  The exp model and the log raise no
   events. */

/*----------------------------------------------------------------------------
 * The configuration.  fa_config_default() fills every field; then set
 * the shape and what differs.
 *--------------------------------------------------------------------------*/
typedef enum
{
    FA_ORDER_FORWARD, /* KV blocks 0, 1, ... */
    FA_ORDER_REVERSE  /* last KV block first (the FA2 kernel) */
} fa_kv_order;

typedef enum
{
    FA_DELTA_DO_O, /* delta = rowsum(dO o O) (FA2, the paper) */
    FA_DELTA_DP_P  /* delta = rowsum(dP o P) */
} fa_delta_rule;

typedef struct fa_config
{
    fa_shape shape;
    bool causal;       /* key j masked for query i when
                          j > i + (Nk - Nq) (bottom-right aligned) */
    bool causal_top_left; /* with causal: key j masked for query i when
                             j > i (top-left aligned: SDPA's is_causal
                             for the memory-efficient and math
                             backends); same as bottom-right when
                             Nq = Nk */
    float scale;       /* softmax scale; 0: 1/sqrt(d) correctly
                          rounded to FP32 */
    size_t br, bc;     /* tile sizes; 0: the policy's default (fa2:
                          d <= 64 -> 128 x 128, else 128 x 64; repo:
                          512 x 512, the released code's buckets;
                          others: untiled); larger than N: N */
    fa_kv_order order; /* 0-initialised: forward; fa2 default reverse */
    fa_fix fix;
    unsigned ablations;      /* FA_ABL_* */
    const fa_exp_model *exp; /* NULL: "cr" */
    /* Accumulation models of the dot products: Q K^T, P~V and those of
       the backward (FP32 accumulator).  NULL: the policy's default (fa2:
       sm90; the others: fma-chain, sequential FP32 FMA). */
    const sf_mma_model *mma_qk, *mma_pv, *mma_bwd;
    /* Backward tiles (query rows x keys); 0: the policy's default (fa2:
       d <= 64 -> 128 x 128, else 64 x 128; repo: br x bc; fp32 and
       paper-eq4: 64 rows, all keys). */
    size_t br_bwd, bc_bwd;
    /* fa2 backward: the number of dQ accumulation buffers (the
       deterministic kernel's nsplits; KV block n goes to buffer
       n mod dq_splits, the buffers are added in order at the end);
       0: the description's dq_buffers rule (fa2: ceil(sms / (B H))). */
    size_t dq_splits;
    /* fa2 forward: after a rescale, each row-sum partial's product with
       the rescale factor and its first addition of the block are one
       FMA (nvcc's contraction in PyTorch's build, measured on the H200:
       true, the default); false: a product, then an addition (the
       source's order without contraction). */
    bool fa2_rowsum_fma;
    /* The kernel description (attention/kernel.h) the configuration
       runs: the one place a kernel's settings come from.  Set with
       fa_config_default or fa_config_kernel_default, which also fill
       order, the models and fa2_rowsum_fma from it. */
    const fa_kernel *kernel;
    /* The format of the inputs Q, K, V and dO (their uint16_t bit
       patterns): NULL or &sf_format_bf16 for BF16, &sf_format_f16 for
       FP16 (forward and backward; O given to the backward is FP16 then).
       A description's "in" format is this one. */
    const sf_format *input;
    /* The log model of a description whose log is "lg2" (a table model,
       FA_LOG_LG2); NULL otherwise. */
    const struct fa_log_model *log;
    /* Split-KV: the number of splits of the KV blocks (FA2's
       flash_fwd_splitkv_kernel and its combine); 0: the description's
       (1 for every named one); 1: not split. */
    size_t splits;
    /* The batch x heads of the launch whose kernels are modelled, where
       the choice depends on it (the math backend's cuBLAS gemv kernels
       for Nq = 1: the description's gemv rows; the fa2 backward's dQ
       buffers under the "sms" rule); 0: batch x heads of
       this configuration.  A caller that runs one head of a larger
       launch sets the launch's. */
    size_t launch_bh;
    /* The GPU's multiprocessors, for a description whose dq_buffers is
       "sms"; 0: 132 (the H200). */
    size_t sms;
    /* The reciprocal model of a description whose normalize is
       "reciprocal-approx" (FA_NORM_RCP_APPROX); NULL: the correctly
       rounded reciprocal. */
    const struct fa_rcp_model *rcp;
    /* An attention mask (not copied: it must outlive the configuration);
       NULL: none.  Refused unless the description's bias_add takes
       one. */
    const fa_attn_mask *mask;
    /* The backward leaves dK and dV in FP32 where the description rounds
       them to the input format last (the math backend): for a caller that
       sums a group's query heads first (gqa_dkv "fp32-sum"). */
    bool dkv_fp32;
    /* The block size of a FlexAttention block mask (create_block_mask's
       BLOCK_SIZE), query rows and keys, for a description whose
       block_sparse is set: which KV blocks each query block visits, and
       in which order; 0: 128, the default of create_block_mask. */
    size_t sparse_q, sparse_kv;
    /* FlexAttention's tanh soft-capping score_mod, cap tanh(score / cap),
       for a description whose softcap_tanhf is set: the cap (0: none),
       a double as the Python number the user wrote */
    double softcap;
    /* FlexAttention's backward: the rows per program of its delta kernel
       (triton_per_fused_flex_attention_backward_mul_0, XBLOCK), which
       inductor autotunes by timing on the GPU, so that only the launch
       (the kernel's grid in the capture's manifest) tells it.  1: a row
       over 64 threads, d / 64 consecutive columns each; above 1: 8
       consecutive columns a thread; 0: 8 (the common choice). */
    size_t delta_xblock;
    /* flex-decode's merge where inductor picks it by timing (a persistent
       reduction: 64 programs or fewer): the programs (the grid) and the
       threads per program (the block) its kernel of M and L ([0]) and of
       O ([1]) ran with, as the launch shows them (a manifest's recorded
       kernels); 0: not known, and rows over several programs are
       refused. */
    size_t flex_merge_programs[2], flex_merge_threads[2];
    /* Grouped-query heads for a description whose gqa_dkv is "chain":
       query heads g h .. g h + g - 1 share key/value head h, K and V hold
       H / g heads (not repeated), and fa_backward writes each group's dK
       and dV (one accumulator through the group's heads, as the kernel
       walks them) into every head of the group; 0 or 1: no groups.
       fa_forward takes K and V of H heads whatever this is. */
    size_t gqa_group;
    /* The query heads per KV head of the launch, for a description whose
       combine is "flex-decode" (flex_decoding packs a group's query rows
       into one program: its row count and its programs per query block
       depend on it); 0: gqa_group, else 1. */
    size_t launch_group;
    /* The forward's base-2 LSE of the heads this configuration runs (as
       fa_capture's lse_kernel, [B, H, Nq]), for a description whose bwd
       is "flex": given with O, fa_backward reads it in place of running
       the forward again (the same bits: that forward's); NULL: it runs
       the forward. */
    const uint32_t *lse_kernel;
} fa_config;

/* Defaults for POLICY: scale 0, tiles 0 (the policy's), fix none (with
   beta 2, tol 1e-3, eps 2^-5 filled in), exp model "cr", the policy's
   accumulation models (sm90 for fa2, fma-chain otherwise), reverse KV
   order for fa2, the description's dQ buffers (dq_splits 0; sms 0: 132),
   the fa2 row-sum FMA. */
fa_config fa_config_default(fa_policy policy);

/* Defaults for kernel description K (not copied: K must outlive the
   configuration): as fa_config_default, with the order, the MMA models
   and the row-sum FMA taken from K. */
fa_config fa_config_kernel_default(const fa_kernel *k);

/* The built-in description of POLICY (its namesake); NULL for an unknown
   policy. */
const fa_kernel *fa_kernel_of_policy(fa_policy policy);

/* The description CFG runs: cfg->kernel, or the description it names
   for launches of fewer rows than its min_nq; NULL when cfg->kernel is
   NULL. */
const fa_kernel *fa_config_kernel(const fa_config *cfg);

/* NULL if CFG is usable, else a static string saying what is wrong.
   This is the one check that reads every entry of cfg->log's lg2 table
   (fa_lg2_table_check, millions of corrections): fa_forward and
   fa_backward, which may run once per head, look only at the table's
   arrays, so check a configuration here once before them (a table
   never checked gives wrong logs where it is malformed, never undefined
   behaviour). */
const char *fa_config_check(const fa_config *cfg);

/* NULL if CAP can be used with CFG (a NULL CAP can), else a static string
   saying what is wrong (CFG unusable, a traced element out of range,
   tracing without a sink). */
const char *fa_capture_check(const fa_config *cfg, const fa_capture *cap);

/* The softmax scale CFG gives (cfg->scale, or 1/sqrt(d) correctly
   rounded to FP32 when it is 0) and fa2's scale_log2, the kernel's
   float(scale * M_LOG2E) (a double product rounded to FP32), as FP32
   bits; 0 when CFG is unusable. */
uint32_t fa_scale_bits(const fa_config *cfg);
uint32_t fa_scale_log2_bits(const fa_config *cfg);

/* The forward tiles BR x BC, the number of KV blocks TC and the split
   count SPLITS that CFG resolves to (any may be NULL); 0, or -1 when CFG
   is unusable. */
int fa_config_tiles(const fa_config *cfg, size_t *br, size_t *bc, size_t *tc,
                    size_t *splits);

/* The number of dQ accumulation buffers of the fa2 backward under CFG
   (cfg->dq_splits, or the description's rule on the shape: ceil(SMs /
   (B H)) for "sms", 1 for "one"); 0 when CFG is unusable.  Buffers past
   the number of backward KV blocks stay zero and change no bit. */
size_t fa_config_dq_buffers(const fa_config *cfg);

/* Bytes of working memory fa_forward / fa_backward allocate for CFG
   (so a caller can refuse a shape before allocating outputs): the larger
   of the two; 0 when CFG is unusable. */
size_t fa_workspace_bytes(const fa_config *cfg);

/* The largest head dimension (fa2: FA2_MAX_HEAD_DIM, the kernel's). */
#define FA_MAX_HEAD_DIM 4096
#define FA2_MAX_HEAD_DIM 256
/* One of inductor's reductions over flex_decoding's programs (the row
   sums L, or the columns of O): the programs cut into CHUNKS contiguous
   chunks of ceil(S / chunks) (a split reduction); in a chunk lane r of
   R0 takes the programs r, r + R0, ... (persistent: one, its product
   rounded; looped: an FMA chain from +0); r = JW w + j, the lanes of a
   warp added by the butterfly over j (v_j + v_{j+h}, h = JW / 2 .. 1),
   then the WARPS warps' sums by the butterfly over w.  FUSED
   (persistent, no mask between the product and the sum): the first
   level of the lanes' butterfly is fma(w_j, x_j, RN(w_{j+h} x_{j+h})).
   SPT > 0 (one output: an inner persistent reduction): lane r holds the
   SPT programs SPT r .. SPT r + SPT - 1 instead, its sum
   fma(w_{SPT-1}, x_{SPT-1}, ... fma(w_0, x_0, RN(w_1 x_1))), and R0
   lanes (R0 = JW WARPS).  The chunks' sums (the second stage, a
   persistent reduction over the chunks padded with +0 to a power of
   two, P of them): chunk c = u + CU k, u < CU = C_JW C_WARPS; lane u
   adds its chunks in the order of k, then the butterflies over its C_JW
   lanes (u = C_JW w + j) and C_WARPS warps. */
#define FA_MERGE_LANES_MAX 256
#define FA_MERGE_CHUNKS_MAX 16
typedef struct fa_flex_merge
{
    bool persistent;
    unsigned r0, jw, warps, chunks;
    bool fused;
    unsigned spt;
    unsigned c_jw, c_warps;
} fa_flex_merge;

/* The reduction inductor (PyTorch 2.11, Triton 3.6, sm90) generates for
   S programs and XNUMEL outputs (the launch's B H Nq rows for L, times d
   for O) into *M: NULL, or why it is not known (a shape not recorded, or
   a persistent reduction over several outputs, whose configuration
   inductor picks by timing on the GPU). */
const char *fa_flex_merge_rule(size_t s, size_t xnumel, fa_flex_merge *m);

/* The persistent reduction inductor generates for S programs (64 or
   fewer) and XNUMEL outputs, in the configuration the launch shows:
   PROGRAMS programs of THREADS threads (XBLOCK the power of two that
   covers XNUMEL in PROGRAMS, R0_BLOCK the power of two of S; Triton's
   layout with the outputs contiguous, a lane and warp that hold another's
   data adding nothing).  NULL, or why it is not modelled. */
const char *fa_flex_merge_persistent(size_t s, size_t xnumel,
                                     size_t programs, size_t threads,
                                     fa_flex_merge *m);

/* FlexAttention's flex_decoding programs per query block on a GPU of
   SMS multiprocessors (0: FA_H200_SMS) for a launch of BHKV batch x KV
   heads: max(2 floor(SMS / BHKV), 1) (inductor's get_split_k). */
size_t fa_flex_decode_splits(size_t sms, size_t bhkv);

/* The multiprocessors of an H200 (cfg->sms when 0). */
#define FA_H200_SMS 132

/* Names <-> values; the parse functions return -1 for an unknown name. */
const char *fa_policy_name(fa_policy p);
int fa_policy_parse(const char *name);
const char *fa_fix_name(fa_fix_kind f);
int fa_fix_parse(const char *name);
/* "fp32-pv,untiled" -> FA_ABL_FP32_PV | FA_ABL_UNTILED; -1 on an unknown
   name. */
long fa_ablations_parse(const char *list);
const char *fa_ablation_name(unsigned one_bit);
/* "forward", "reverse". */
const char *fa_order_name(fa_kv_order o);
int fa_order_parse(const char *name);
/* The names return NULL for a value they do not know; the parse functions
   take NULL as unknown.  fa_ablations_parse takes "" and "none" as 0. */

/* The format the values of output NAME ("o", "lse", "delta", "dq", "dk",
   "dv", "s", "p", and the captures "m", "l", "obar", "dp", "ds") lie on
   under CFG; NULL for an unknown name or a NULL CFG. */
const sf_format *fa_output_format(const fa_config *cfg, const char *name);

/* Correctly rounded FP32 natural log (RNE): +-0 -> -Inf, x < 0 -> the
   default NaN 0x7FC00000, +Inf -> +Inf, NaN -> quieted (payload kept).
   No flags are reported (the function has no environment);
   doc/attention.md gives the method and its check. */
uint32_t fa_logf_cr(uint32_t x);
/* How fa_logf_cr decides X: 0 a special input, 1 from the double log, 2
   from the long double log, 3 from neither (the long double log rounded;
   make check-exhaustive counts these inputs and compares every result
   with MPFR). */
int fa_logf_cr_level(uint32_t x);

/*----------------------------------------------------------------------------
 * log models.  The LSE of the forward takes a natural log of the row sum
 * l >= 1.  "cr" is fa_logf_cr; a measured model is the H200's
 * lg2.approx.f32 (lg2-sm90) or lg2.approx.ftz.f32 (lg2-sm90-ftz) as a
 * table (doc/gpu-measurements.md, analysis/lg2_table.h), with the natural
 * log as CUDA's __logf computes it: RN(lg2(x) * RN(ln 2)).
 *--------------------------------------------------------------------------*/

/* The mantissa bits of lg2's internal table: FA_LG2_MBITS = 23. */
#define FA_LG2_MBITS 23
/* Fixed-point scale of the corrections: G in units of 2^-FA_LG2_GBITS. */
#define FA_LG2_GBITS 54
/* Entries of the corrections' index: one per 64 mantissa indices. */
#define FA_LG2_INDEX_WORDS ((size_t)1 << (FA_LG2_MBITS - 6))

/* A table model of lg2.approx.  For a positive normal x = 2^E (1 + f),
   f = i 2^-23, the unit reduces m = 1 + f to [0.75, 1.5): e = E and
   G = G(i) ~ log2(1 + f) for i < 2^22, else e = E + 1 and G ~ log2((1 +
   f) / 2) in [-0.415, 0).  The result is
     e = 0:  base[i], the hardware's own output on [0.75, 1.5);
     e != 0: e + G(i) rounded toward zero to FP32,
   with G(i) = base[i] (as a real) unless i is among the corrections,
   then G(i) = corr_g[k] 2^-FA_LG2_GBITS.  Special inputs: +-0 -> -Inf,
   x < 0 (-Inf, negative subnormals) -> 0x7FFFFFFF, NaN -> 0x7FFFFFFF,
   +Inf -> +Inf.  A positive subnormal x gives -Inf with ftz, else the
   model at x 2^24 minus 24 rounded to nearest (the instruction's
   pre-scaling).  index, when not NULL, is the corrections' index
   (fa_lg2_table_index, FA_LG2_INDEX_WORDS entries): a look-up reads one
   entry instead of searching the ascending indices, and the results are
   the same with or without it. */
typedef struct fa_lg2_index
{
    uint64_t bits;  /* bit b: 64 w + b is among the corrections */
    uint64_t below; /* the corrections with indices below 64 w */
} fa_lg2_index;

typedef struct fa_lg2_table
{
    const uint32_t *base;  /* 2^23 FP32 bit patterns */
    size_t ncorr;          /* corrections */
    const uint32_t *corr_i; /* ncorr mantissa indices, ascending */
    const int64_t *corr_g;  /* ncorr values of G, units 2^-54 */
    bool ftz;
    const fa_lg2_index *index; /* NULL, or the corrections' index */
} fa_lg2_table;

/* lg2(x) of FP32 bits X under T (NULL T: the correctly rounded log2 is not
   provided; returns the default NaN 0x7FC00000). */
uint32_t fa_lg2_table_eval(const fa_lg2_table *t, uint32_t x);
/* A hint, with no effect on any result: asks the memory system for the
   lines that fa_lg2_table_eval(T, X) will read.  STAGE 0: X's base entry
   and its entry of the index; STAGE 1 (some time after stage 0): X's
   correction, which the index entry locates.  Asking a few inputs ahead
   of their evaluations lets their cache misses overlap. */
void fa_lg2_table_prefetch(const fa_lg2_table *t, uint32_t x, int stage);

/* The unit's core for a reduced input: E + G(I) rounded toward zero
   (E != 0), or base[I] (E = 0); I < 2^23, |E| <= 200.  For tests. */
uint32_t fa_lg2_table_core(const fa_lg2_table *t, int e, uint32_t i);
/* NULL if T is usable, else a static string saying what is wrong (an
   index included: it must be the one fa_lg2_table_index builds). */
const char *fa_lg2_table_check(const fa_lg2_table *t);
/* Fills INDEX (FA_LG2_INDEX_WORDS entries) with the index of T's
   corrections (ascending indices below 2^23, as fa_lg2_table_check
   wants them): entry w holds which of 64 w .. 64 w + 63 are corrected
   and how many corrections lie below 64 w. */
void fa_lg2_table_index(const fa_lg2_table *t, fa_lg2_index *index);

typedef enum
{
    FA_LOG_CR,   /* "cr": fa_logf_cr */
    FA_LOG_LG2   /* a lg2 table: RN(lg2(x) * RN(ln 2)), CUDA's __logf */
} fa_log_kind;

typedef struct fa_log_model
{
    const char *name;
    fa_log_kind kind;
    const fa_lg2_table *table; /* FA_LOG_LG2 */
} fa_log_model;

/* A reciprocal model: DELTA[i] is the difference, in FP32 ulps, of the
   modelled reciprocal of x = 1 + i 2^-23 from RN32(1 / x) (2^23 entries;
   for the H200's rcp.approx.f32 each -1, 0 or 1, read from
   experiments/gpu/probes/rcp_probe.cu by analysis/rcp_table.h). */
typedef struct fa_rcp_model
{
    const char *name;
    const int8_t *delta;
} fa_rcp_model;

/* 1 / x of FP32 bits X under M: RN32(1 / x), plus M's delta of x's
   significand when x and RN32(1 / x) are both normal (the unit scales
   the exponent exactly there); a NULL M (or one with no table) is the
   correctly rounded reciprocal. */
uint32_t fa_rcp_eval(const fa_rcp_model *m, uint32_t x);

/* Natural log of FP32 bits X under M (a NULL M is "cr").  FA_LOG_LG2: y
   = lg2(x) under the table, then RN(y * 0x3F317218) for finite y, y
   itself for +-Inf, 0x7FFFFFFF for NaN; a model with no table gives the
   default NaN 0x7FC00000. */
uint32_t fa_log_eval(const fa_log_model *m, uint32_t x);

/*----------------------------------------------------------------------------
 * Forward: O [B,H,Nq,d] and LSE [B,H,Nq] (natural log).  Returns 0, or
 * -1 when CFG or CAP is unusable or memory runs out (nothing useful
 * written).  ENV carries flags and events of the whole computation.
 * Deterministic; no global state; the only allocation is the working
 * memory of fa_workspace_bytes.
 *--------------------------------------------------------------------------*/
int fa_forward(const fa_config *cfg, const uint16_t *q, const uint16_t *k,
               const uint16_t *v, uint32_t *o, uint32_t *lse, fa_capture *cap,
               sf_env *env);

/* Backward from the forward's O and LSE (as fa_forward wrote them) and
   dO: delta [B,H,Nq], dQ [B,H,Nq,d], dK and dV [B,H,Nk,d].  The "math"
   scheme (bwd "math") reads neither O nor LSE (they may be NULL): it
   takes P from fa_forward, as autograd takes the saved softmax output,
   and its delta is the softmax backward's row sum rowsum(dP o P). */
int fa_backward(const fa_config *cfg, const uint16_t *q, const uint16_t *k,
                const uint16_t *v, const uint32_t *o, const uint32_t *lse,
                const uint16_t *dout, uint32_t *delta, uint32_t *dq,
                uint32_t *dk, uint32_t *dv, fa_capture *cap, sf_env *env);

/* NULL when fa_backward can run CFG for a call whose query heads come
   in groups of GROUP over one key/value head (1: no grouping); else why
   not (static). */
const char *fa_config_backward_refusal(const fa_config *cfg, size_t group);

/* The backward of grouped-query heads: the dK (or dV) of G query heads
   of one KV head, PARTS[h n + j] for head h of the group (FP32 bits of
   the values fa_backward wrote for each query head against the shared K
   and V), into OUT[j] (n elements), by the description's gqa_dkv rule.
   Returns 0, or -1 when the description has no rule ("none"), CFG is
   unusable, or the rule is "chain" and the parts differ (they were not
   written by one backward of the whole group: fa_config's gqa_group). */
int fa_gqa_reduce(const fa_config *cfg, size_t g, size_t n,
                  const uint32_t *parts, uint32_t *out);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ATTENTION_H */
