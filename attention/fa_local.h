/* fa_local.h -- internals shared by the reference attention sources: the
   resolved configuration (plan), FP32/BF16 helpers, working memory */
#ifndef BF16EMU_ATTENTION_FA_LOCAL_H
#define BF16EMU_ATTENTION_FA_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attention/attention.h"

/* FP32 bit patterns. */
#define FA_F32_ZERO 0x00000000u
#define FA_F32_ONE 0x3F800000u
#define FA_F32_INF 0x7F800000u
#define FA_F32_NEG_INF 0xFF800000u
#define FA_F32_MAG 0x7FFFFFFFu
#define FA_F32_SIGN 0x80000000u
#define FA_F32_QNAN 0x7FC00000u
/* float(M_LOG2E), the FP32 log2(e) of the FA2 backward: 0x1.715476p+0 */
#define FA_F32_LOG2E 0x3FB8AA3Bu
/* -finfo(bfloat16).max widened to FP32: the repo's forward mask fill */
#define FA_F32_BF16_NEG_MAX 0xFF7F0000u

/* The I-th named description of the SDPA backends (kernels_cudnn.c),
   after those of kernels.c; NULL past the last. */
const fa_kernel *fa_kernel_sdpa_at(size_t i);

/* Rows of S, P~ and O~ the forward holds at once (a chunk of a query
   block; rows are independent in the forward). */
#define FA_ROW_CHUNK 64
/* Backward row tile of fp32 and paper-eq4 when none is given. */
#define FA_BWD_ROWS_DEFAULT 64

/* The mma_* fields of a description whose every product (S, P~V, dP, dQ,
   dK, dV and delta's) runs the one MMA model M (a model's name). */
#define FA_MMA_PRESET(m)                                                     \
    .mma_s = (m), .mma_pv = (m), .mma_dp = (m), .mma_dq = (m),              \
    .mma_dk = (m), .mma_dv = (m), .mma_delta = (m)

/* The bwd_* fields of a description as designated initializers: keys,
   delta, P, dP, dS, operand, dQ, dK and dV, out.  The presets below are
   the one source of the built-in descriptions' values and of
   fa_kernel_bwd_preset's (bwd chain, fa2, repo, efficient, cudnn; math
   and flex, whose engines do not read them, take chain's). */
#define FA_BWD_FIELDS(keys, delta, p, dp, ds, operand, dq, dkv, out)         \
    .bwd_keys = (keys), .bwd_delta = (delta), .bwd_p = (p), .bwd_dp = (dp), \
    .bwd_ds = (ds), .bwd_operand = (operand), .bwd_dq = (dq),                \
    .bwd_dkv = (dkv), .bwd_out = (out)
#define FA_BWD_PRESET_CHAIN                                                  \
    FA_BWD_FIELDS(FA_BKEYS_VISIBLE, FA_BDELTA_MMA, FA_BP_SUB, FA_FMT_F32,     \
                  FA_BDS_P_DP, FA_FMT_F32, FA_BDQ_CHAIN, FA_BDKV_CHAIN,       \
                  FA_FMT_F32)
#define FA_BWD_PRESET_FA2                                                    \
    FA_BWD_FIELDS(FA_BKEYS_M_BLOCK, FA_BDELTA_DOT_DO_O, FA_BP_SCALE_LOG2,     \
                  FA_FMT_F32, FA_BDS_P_DP, FA_FMT_IN, FA_BDQ_BUFFERS,         \
                  FA_BDKV_MMA, FA_FMT_IN)
#define FA_BWD_PRESET_REPO                                                   \
    FA_BWD_FIELDS(FA_BKEYS_ALL, FA_BDELTA_BF16_SUM, FA_BP_BF16_OPS,           \
                  FA_FMT_BF16, FA_BDS_BF16_OPS, FA_FMT_BF16, FA_BDQ_BF16_ADD, \
                  FA_BDKV_BF16_ADD, FA_FMT_BF16)
#define FA_BWD_PRESET_EFFICIENT                                              \
    FA_BWD_FIELDS(FA_BKEYS_ALL, FA_BDELTA_EFFICIENT, FA_BP_EXPF_IN,           \
                  FA_FMT_F32, FA_BDS_DP_P_SCALE, FA_FMT_IN, FA_BDQ_THROUGH,   \
                  FA_BDKV_MMA, FA_FMT_IN)
#define FA_BWD_PRESET_CUDNN                                                  \
    FA_BWD_FIELDS(FA_BKEYS_M_BLOCK, FA_BDELTA_CUDNN, FA_BP_LOG2E_FMA,         \
                  FA_FMT_F32, FA_BDS_P_DP_SCALE, FA_FMT_IN, FA_BDQ_REVERSE,   \
                  FA_BDKV_MMA, FA_FMT_IN)

/*----------------------------------------------------------------------------
 * The plan: a configuration checked and resolved (tiles, models, the fix's
 * parameters in the units and format of the policy's scores).
 *--------------------------------------------------------------------------*/
/* rowsum_col_warps at most (kernels.c checks it) */
#define FA_COL_WARPS_MAX 8

typedef struct fa_plan
{
    size_t batch, heads, nq, nk, d;
    /* The description, resolved: the configuration's overrides (order,
       row-sum FMA) and the ablations applied. */
    fa_kernel k;
    bool causal;
    /* The attention mask (NULL: none), the FP32 bits of a False entry of
       a boolean one (the description's bool_fill in the inputs' format),
       and heads per batch entry to index it. */
    const fa_attn_mask *mask;
    uint32_t mask_false;
    long long causal_shift;  /* causal: key j masked for query i when
                                j > i + causal_shift (Nk - Nq, or 0
                                top-left aligned) */
    size_t br, bc;           /* forward tiles */
    size_t sparse_q, sparse_kv; /* block_sparse: the block mask's blocks */
    bool softcap;               /* soft-capping: cap, RN32(1 / cap) */
    uint32_t cap, cap_rcp;
    bool log2_domain;        /* the scores in the log2 domain (bias_add
                                "log2" with a mask): sl2 1 */
    size_t br_bwd, bc_bwd;   /* backward tiles */
    size_t tc;               /* number of forward KV blocks */
    size_t splits;           /* split-KV: 1 not split */
    size_t blocks_per_split; /* split-KV: n_blocks_per_split */
    fa_flex_merge merge_l, merge_o; /* flex-decode: the reductions of L
                                       and of O's columns */
    const char *merge_unknown;      /* flex-decode: NULL, or why they are
                                       not known (then only rows whose
                                       keys one program holds run) */
    size_t col_warps;        /* rowsum quad-reduce: warps splitting a
                                block's keys (0 or 1: one warp; at most
                                FA_COL_WARPS_MAX) */
    size_t dq_buffers;       /* fa2 backward dQ buffers of the launch */
    size_t dq_splits;        /* of them the ones that can be nonzero:
                                min(dq_buffers, backward KV blocks) */
    fa_kv_order order;
    unsigned abl;
    const fa_exp_model *exp;
    const fa_log_model *logm; /* the "lg2" log's table model */
    const fa_rcp_model *rcpm; /* "reciprocal-approx": the model */
    const sf_format *in;      /* the inputs' format (BF16 or FP16) */
    fa_fmt in_fmt;
    const sf_mma_model *mqk, *mpv, *mdp, *mdq, *mdk, *mdv, *mdelta;
    const sf_mma_model *mchain; /* "fma-chain": the split combine's FMAs */
    uint32_t scale;      /* softmax scale, FP32 */
    uint32_t scale_log2; /* fa2: RN_f32(scale * log2(e)) */
    /* The fix, its parameters as FP32 values in the units of the
       kernel's scores (unscaled scores: tol, eps and eps_zero are
       divided by the scale; masked log2-domain scores of bias_add
       "log2": times RN32(log2 e)). */
    fa_fix_kind fix;
    fa_zero_max zero_max;
    uint32_t beta, tol, eps, eps_zero;
    /* score_prescale: RN32(sqrt(scale)), the square root taken in FP64
       of the FP64 scale (PyTorch's math backend) */
    uint32_t sqrt_scale;
    /* Nq = 1 with a matching gemv row of the description: the orders of
       S and P V (lanes 0: the MMA chain) */
    fa_gemv_order gemv_s, gemv_pv;
} fa_plan;

/* Resolves CFG into PL; NULL on success, else the reason (static). */
const char *fa_plan_init(const fa_config *cfg, fa_plan *pl);
bool fa_plan_decode_log2(const fa_config *cfg, fa_plan *pl);

/* A capture is usable with PL: NULL, or the reason. */
const char *fa_plan_capture_check(const fa_plan *pl, const fa_capture *cap);

/* The environments of the traced element's second run, from ENV without
   its flags: *TENV with CAP's event sink, for the roundings that feed the
   traced element; *QUIET without a sink, for the others.  Returns the
   traced head, b H + h. */
static inline size_t
fa_trace_envs(const fa_plan *pl, const fa_capture *cap, const sf_env *env,
              sf_env *tenv, sf_env *quiet)
{
    *tenv = *env;
    *quiet = *env;
    tenv->events = cap->events;
    tenv->flags = 0;
    quiet->events = NULL;
    quiet->flags = 0;
    return cap->trace_b * pl->heads + cap->trace_h;
}

/*----------------------------------------------------------------------------
 * Working memory: a list of arrays carved from one allocation.  A layout
 * function calls fa_ws_take for each array in a fixed order; with
 * ws->base NULL it only counts, so sizing and carving share one list.
 *--------------------------------------------------------------------------*/
typedef struct fa_ws
{
    char *base;    /* NULL: count only */
    size_t used;   /* bytes so far (64-byte aligned pieces) */
    bool overflow; /* a size did not fit in size_t */
} fa_ws;

/* An array of N elements of SIZE bytes; NULL while counting. */
void *fa_ws_take(fa_ws *ws, size_t n, size_t size);
/* A * B, or SIZE_MAX with *OVF set when it overflows. */
size_t fa_mul_size(size_t a, size_t b, bool *ovf);

/* Bytes the forward / backward need under PL (SIZE_MAX on overflow). */
size_t fa_forward_bytes(const fa_plan *pl);
size_t fa_backward_bytes(const fa_plan *pl);
/* The backward of the "math" scheme (backward_math.c): P from
   fa_forward of CFG, then autograd's ops; O and LSE are not used. */
int fa_backward_math(const fa_config *cfg, const fa_plan *pl,
                     const uint16_t *q, const uint16_t *k, const uint16_t *v,
                     const uint16_t *dout, uint32_t *delta, uint32_t *dq,
                     uint32_t *dk, uint32_t *dv, fa_capture *cap,
                     sf_env *env);

/*----------------------------------------------------------------------------
 * Arithmetic on bit patterns, every rounding to nearest even.  BF16
 * values are held widened to FP32 bit patterns (exact).
 *--------------------------------------------------------------------------*/
static inline uint32_t
fa_add(uint32_t a, uint32_t b, sf_env *env)
{
    return sf_f32_add((sf_f32){a}, (sf_f32){b}, SF_RNE, env).bits;
}

static inline uint32_t
fa_sub(uint32_t a, uint32_t b, sf_env *env)
{
    return sf_f32_sub((sf_f32){a}, (sf_f32){b}, SF_RNE, env).bits;
}

static inline uint32_t
fa_mul(uint32_t a, uint32_t b, sf_env *env)
{
    return sf_f32_mul((sf_f32){a}, (sf_f32){b}, SF_RNE, env).bits;
}

static inline uint32_t
fa_div(uint32_t a, uint32_t b, sf_env *env)
{
    return sf_f32_div((sf_f32){a}, (sf_f32){b}, SF_RNE, env).bits;
}

static inline uint32_t
fa_fma(uint32_t a, uint32_t b, uint32_t c, sf_env *env)
{
    return sf_f32_fma((sf_f32){a}, (sf_f32){b}, (sf_f32){c}, SF_RNE, env).bits;
}

/* An input element (BF16 or FP16 bits, as PL says) widened to FP32. */
static inline uint32_t
fa_in_wide(fa_fmt in, uint16_t a)
{
    if (in == FA_FMT_F16) {
        sf_env env = SF_ENV_IEEE;
        return sf_f16_to_f32((sf_f16){a}, SF_RNE, &env).bits;
    }
    return (uint32_t)a << 16;
}

/* FP32 to BF16 (RNE), as BF16 bits. */
static inline uint16_t
fa_bf16(uint32_t a, sf_env *env)
{
    return sf_f32_to_bf16((sf_f32){a}, SF_RNE, env).bits;
}

/* FP32 rounded to BF16 (RNE), widened back to FP32 bits. */
static inline uint32_t
fa_rbf(uint32_t a, sf_env *env)
{
    return (uint32_t)fa_bf16(a, env) << 16;
}

/* BF16 widened to FP32 (exact, no rounding). */
static inline uint32_t
fa_wide(uint16_t a)
{
    return (uint32_t)a << 16;
}

/* x - y computed exactly and rounded once to BF16 (x, y BF16 widened). */
static inline uint32_t
fa_bf16_sub(uint32_t x, uint32_t y, sf_env *env)
{
    sf_bf16 a = {(uint16_t)(x >> 16)}, b = {(uint16_t)(y >> 16)};

    return fa_wide(sf_bf16_sub(a, b, SF_RNE, env).bits);
}

static inline bool
fa_is_nan(uint32_t a)
{
    return (a & FA_F32_MAG) > FA_F32_INF;
}

static inline bool
fa_is_zero(uint32_t a)
{
    return (a & FA_F32_MAG) == 0;
}

/* A key that orders non-NaN FP32 values as unsigned integers (-0 just
   below +0). */
static inline uint32_t
fa_key(uint32_t a)
{
    return (a & FA_F32_SIGN) ? ~a : a | FA_F32_SIGN;
}

/* IEEE a < b, a <= b, a == b for FP32 bits (false when either is NaN). */
static inline bool
fa_lt(uint32_t a, uint32_t b)
{
    if (fa_is_nan(a) || fa_is_nan(b) || (fa_is_zero(a) && fa_is_zero(b)))
        return false;
    return fa_key(a) < fa_key(b);
}

static inline bool
fa_eq(uint32_t a, uint32_t b)
{
    if (fa_is_nan(a) || fa_is_nan(b))
        return false;
    return a == b || (fa_is_zero(a) && fa_is_zero(b));
}

static inline bool
fa_le(uint32_t a, uint32_t b)
{
    return fa_lt(a, b) || fa_eq(a, b);
}

/* The larger of A and B; a NaN loses to a number (fmaxf), the first of
   two equal values is kept. */
static inline uint32_t
fa_max(uint32_t a, uint32_t b)
{
    if (fa_is_nan(a))
        return b;
    if (fa_is_nan(b))
        return a;
    return fa_lt(a, b) ? b : a;
}

/*----------------------------------------------------------------------------
 * Shared steps.
 *--------------------------------------------------------------------------*/
/* Number of keys query I sees: keys 0 .. fa_visible(pl, i) - 1. */
static inline size_t
fa_visible(const fa_plan *pl, size_t i)
{
    long long lim;

    if (!pl->causal)
        return pl->nk;
    /* key j is masked when j > i + shift (bottom-right: Nk - Nq) */
    lim = (long long)i + pl->causal_shift + 1;
    if (lim <= 0)
        return 0;
    return (size_t)lim < pl->nk ? (size_t)lim : pl->nk;
}

/* The mask's value for key J of query row I of head HEAD (b H + h), as
   FP32 bits (a boolean entry as 0 or the fill). */
static inline uint32_t
fa_mask_at(const fa_plan *pl, size_t head, size_t i, size_t j)
{
    const fa_attn_mask *m = pl->mask;
    size_t x = (m->head_offset != NULL ? m->head_offset[head] : 0)
               + i * m->row_stride + j * m->key_stride;
    switch (m->type) {
    case FA_AMASK_BOOL:
        return ((const uint8_t *)m->data)[x] ? FA_F32_ZERO : pl->mask_false;
    case FA_AMASK_F32:
        return ((const uint32_t *)m->data)[x];
    case FA_AMASK_BF16:
        return (uint32_t)((const uint16_t *)m->data)[x] << 16;
    default:
        return fa_in_wide(FA_FMT_F16, ((const uint16_t *)m->data)[x]);
    }
}

/* Score S of the kernel with the mask's value B added, by the
   description's bias_add rule (attention/kernel.h, fa_bias_add). */
uint32_t fa_bias_score(const fa_plan *pl, uint32_t s, uint32_t b, sf_env *env);

/* exp (natural, or exp2 for a base-2 kernel) of FP32 bits under the
   configured model. */
static inline uint32_t
fa_exp(const fa_plan *pl, uint32_t x)
{
    if (!pl->k.exp_base2 && pl->k.exp_fn == FA_EXPFN_CUDA)
        return fa_cuda_expf(pl->exp, x);
    return fa_exp_eval(pl->exp, pl->k.exp_base2, x);
}

/* fa_exp_eval of each of the N values at X, in place: the same bits, the
   model dispatched once. */
void fa_exp_eval_n(const fa_exp_model *m, bool base2, uint32_t *x, size_t n);

/* fa_exp of each of the N values at X, in place. */
static inline void
fa_exp_n(const fa_plan *pl, uint32_t *x, size_t n)
{
    if (!pl->k.exp_base2 && pl->k.exp_fn == FA_EXPFN_CUDA) {
        for (size_t i = 0; i < n; i++)
            x[i] = fa_cuda_expf(pl->exp, x[i]);
        return;
    }
    fa_exp_eval_n(pl->exp, pl->k.exp_base2, x, n);
}

/* X rounded to format F (held widened to FP32 bits). */
uint32_t fa_round(fa_fmt f, uint32_t x, sf_env *env);
/* X - Y computed exactly and rounded once to F (X, Y on F's grid). */
uint32_t fa_sub_once(fa_fmt f, uint32_t x, uint32_t y, sf_env *env);
/* The softfloat format of F. */
const sf_format *fa_fmt_format(fa_fmt f);
/* The FP32 bits of the mask value M. */
uint32_t fa_mask_bits(fa_mask_fill m);

/* The block max of the policy's scores after the fix: S holds the N
   scores of one row in one KV block that the repetition test counts
   (FP32 bits, BF16 widened when the policy holds BF16: the unmasked ones,
   or for the repo every entry with its mask fill); R is their max, not
   -Inf.  Returns the shifted max m~ (R when the fix does not apply).
   Roundings go to ENV. */
uint32_t fa_fix_max(const fa_plan *pl, const uint32_t *s, size_t n, uint32_t r,
                    sf_env *env);

/* The FA2 dot_do_o order for delta = rowsum(dO o O): DOUT (BF16) and O
   (FP32 bits) of one row of D elements. */
uint32_t fa2_dot_do_o(const fa_plan *pl, const uint16_t *dout,
                      const uint32_t *o, sf_env *env);

/* KV blocks a causal_skip kernel's forward visits for query block MB of
   BR rows with KV blocks of BC keys (the kernel's n_block_max, at most
   the number of blocks, possibly 0); without causal_skip all of them. */
size_t fa_fwd_blocks(const fa_plan *pl, size_t mb, size_t br, size_t bc);

/* block_sparse: the KV blocks (of bc keys) that query block MB (of br
   rows) of head HEAD visits, in the kernel's order (kernel.h), written
   to LIST (room for tc), and for each in PARTIAL whether it is a
   partial block (the mask applies to it); their number. */
size_t fa_sparse_kv_blocks(const fa_plan *pl, size_t head, size_t mb,
                           size_t *list, unsigned char *partial);

/* flex_decoding (combine "flex-decode"): the block mask's class
   (fa_sparse_class) of each sparse KV block for query block MB of head
   HEAD into CLS (room for tc; nothing without a block mask), computed
   once for every program's tiles. */
void fa_flex_decode_classes(const fa_plan *pl, size_t head, size_t mb,
                            unsigned char *cls);

/* The tiles (of bc keys) that program S visits, in its order (the
   partial list's share, then the full list's), from the classes CLS,
   written to LIST (room for tc) with PARTIAL 1 for each (every tile
   checks its bounds); their number. */
size_t fa_flex_decode_tiles(const fa_plan *pl, const unsigned char *cls,
                            size_t s, size_t *list, unsigned char *partial);

/* Whether some query row of PL sees keys of more than one program (the
   plan refuses such a row when the launch's reductions are not known:
   merge_unknown; a row of one program's keys is that program's values
   whatever their orders).  LIST, PARTIAL, CLS, OWNER: scratch of tc
   entries each. */
bool fa_flex_decode_spans(const fa_plan *pl, size_t *list,
                          unsigned char *partial, unsigned char *cls,
                          long *owner);

/* The block mask's class of sparse block (query block QS of sparse_q
   rows, key block KS of sparse_kv keys) of head HEAD: 0 no visible key
   (not visited), 1 partial (the mask applies), 2 full. */
int fa_sparse_class(const fa_plan *pl, size_t head, size_t qs, size_t ks);

/* The backward of FlexAttention's Triton kernels (backward_flex.c):
   LSE in base 2 from fa_forward of CFG, delta, then dQ, dK, dV by the
   block mask's lists; O is the forward's (the delta kernel reads it;
   NULL: fa_forward's), LSE is not used. */
int fa_backward_flex(const fa_config *cfg, const fa_plan *pl,
                     const uint16_t *q, const uint16_t *k, const uint16_t *v,
                     const uint32_t *o, const uint16_t *dout, uint32_t *delta,
                     uint32_t *dq, uint32_t *dk, uint32_t *dv, sf_env *env);

/* First query block of a causal_skip backward for KV block NB
   (m_block_min). */
size_t fa_bwd_first_mblock(const fa_plan *pl, size_t nb);

/* The descriptions of PyTorch's memory-efficient and math SDPA backends
   (kernels_sdpa_em.c), after the named ones of kernels.c. */
extern const fa_kernel fa_kernels_sdpa_em[];
extern const size_t fa_kernels_sdpa_em_count;
/* FlexAttention's descriptions (kernels_flex.c), after those. */
extern const fa_kernel fa_kernels_flex[];
extern const size_t fa_kernels_flex_count;
/* The checks of the fields those descriptions brought (NULL: usable). */
const char *fa_kernel_check_sdpa_em(const fa_kernel *k);
/* A digit of decode_span_order: its value 0 .. 15, or -1. */
static inline int
fa_span_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}


#endif /* BF16EMU_ATTENTION_FA_LOCAL_H */
