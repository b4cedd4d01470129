/* attention.h -- reference flash attention on the emulator */
#ifndef BF16EMU_ATTENTION_H
#define BF16EMU_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"

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
    FA_POLICY_FP32       /* "fp32": everything FP32 (the paper's hp) */
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

/* Ablations (paper section 3.2), OR-ed. */
enum
{
    FA_ABL_FP32_PV = 1u << 0,      /* "fp32-pv": O~ = P~V kept FP32 */
    FA_ABL_FP32_O = 1u << 1,       /* "fp32-o": O kept FP32 */
    FA_ABL_DELTA_DPP = 1u << 2,    /* "delta-dpp": delta = rowsum(dP o P) */
    FA_ABL_DELTA_FP32_O = 1u << 3, /* "delta-fp32-o": delta from O
                                      recomputed in FP32 */
    FA_ABL_UNTILED = 1u << 4       /* "untiled": Br = Nq, Bc = Nk */
};

/*----------------------------------------------------------------------------
 * exp models.  Every exponential of the forward and backward goes
 * through one model: natural exp (paper-eq4, repo, fp32) or exp2 (fa2),
 * FP32 in, FP32 out (bit patterns).
 *--------------------------------------------------------------------------*/
typedef enum
{
    FA_EXP_CR,    /* "cr": correctly rounded (RNE), subnormals kept */
    FA_EXP_LIBM,  /* "libm": the C library's expf / exp2f */
    FA_EXP_TABLE, /* a measured exp2 table (ex2-sm90 when measured) */
    FA_EXP_FN     /* a caller-supplied function */
} fa_exp_kind;

/* A table model of exp2 for x <= 0: x is cut to t = floor(x) + f with
   f in [0, 1) quantised toward zero... the exact rule is in
   doc/attention.md; entries give exp2 of each grid point of [-1, 0). */
typedef struct fa_exp2_table
{
    unsigned frac_bits;     /* grid 2^-frac_bits */
    const uint32_t *values; /* 2^frac_bits FP32 bit patterns */
    bool ftz;               /* subnormal results flushed to +0 */
} fa_exp2_table;

typedef struct fa_exp_model
{
    const char *name;
    fa_exp_kind kind;
    const fa_exp2_table *table;                   /* FA_EXP_TABLE */
    uint32_t (*fn)(void *user, bool base2, uint32_t x); /* FA_EXP_FN */
    void *user;
} fa_exp_model;

/* The built-in models by name ("cr", "libm"), or NULL. */
const fa_exp_model *fa_exp_model_by_name(const char *name);
/* exp(x) (base2 false) or exp2(x) of FP32 bits X under model M. */
uint32_t fa_exp_eval(const fa_exp_model *m, bool base2, uint32_t x);
/* Correctly rounded FP32 exp and exp2 (RNE, subnormal results rounded
   once, overflow to +Inf, NaN quieted). */
uint32_t fa_expf_cr(uint32_t x);
uint32_t fa_exp2f_cr(uint32_t x);

/*----------------------------------------------------------------------------
 * Captures: caller-owned buffers, NULL when not wanted.  Sizes in
 * elements; FP32 bit patterns unless stated.  A per-block capture is
 * indexed by the block in visiting order.
 *--------------------------------------------------------------------------*/
typedef struct fa_capture
{
    uint32_t *s;     /* [B,H,Nq,Nk] scores as the policy holds them */
    uint32_t *p;     /* [B,H,Nq,Nk] P~ as fed to the P~V product */
    uint32_t *m;     /* [B,H,Nq,Tc] running max after each KV block */
    uint32_t *l;     /* [B,H,Nq,Tc] running row sum after each block */
    uint32_t *obar;  /* [B,H,Nq,d] O~ (unnormalised) after the last block */
    uint32_t *dp;    /* [B,H,Nq,Nk] */
    uint32_t *ds;    /* [B,H,Nq,Nk] */
    /* Rounding events of one output element O[b,h,row,col] (forward) and
       of dQ[b,h,row,col] (backward): every rounding that feeds it is
       delivered to EVENTS (NULL: none). */
    bool trace;
    size_t trace_b, trace_h, trace_row, trace_col;
    const sf_event_sink *events;
} fa_capture;

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
    FA_DELTA_DO_O,   /* delta = rowsum(dO o O) (FA2, the paper) */
    FA_DELTA_DP_P    /* delta = rowsum(dP o P) */
} fa_delta_rule;

typedef struct fa_config
{
    fa_shape shape;
    bool causal;          /* key j masked for query i when
                             j > i + (Nk - Nq) (bottom-right aligned) */
    float scale;          /* softmax scale; 0: 1/sqrt(d) rounded to FP32 */
    size_t br, bc;        /* tile sizes; 0: the policy's default (fa2:
                             d <= 64 -> 128 x 128, else 128 x 64;
                             others: untiled) */
    fa_kv_order order;    /* 0-initialised: forward; fa2 default reverse */
    fa_policy policy;
    fa_fix fix;
    unsigned ablations;   /* FA_ABL_* */
    const fa_exp_model *exp;
    /* Matrix-unit models for Q K^T and P~V (fa2; NULL: sm90) and the
       dot products of the backward. */
    const sf_mma_model *mma_qk, *mma_pv, *mma_bwd;
} fa_config;

/* Defaults for POLICY: scale 0, untiled or the FA2 tiles, fix none
   (with beta 2, tol 1e-3, eps 2^-5 filled in), exp model "cr", sm90
   models, reverse KV order for fa2. */
fa_config fa_config_default(fa_policy policy);

/* NULL if CFG is usable, else a static string saying what is wrong. */
const char *fa_config_check(const fa_config *cfg);

/* Bytes of working memory fa_forward / fa_backward allocate for CFG
   (so a caller can refuse a shape before allocating outputs). */
size_t fa_workspace_bytes(const fa_config *cfg);

/* Names <-> values; the parse functions return -1 for an unknown name. */
const char *fa_policy_name(fa_policy p);
int fa_policy_parse(const char *name);
const char *fa_fix_name(fa_fix_kind f);
int fa_fix_parse(const char *name);
/* "fp32-pv,untiled" -> FA_ABL_FP32_PV | FA_ABL_UNTILED; -1 on an unknown
   name. */
long fa_ablations_parse(const char *list);
const char *fa_ablation_name(unsigned one_bit);

/* The format the values of output NAME ("o", "lse", "delta", "dq", "dk",
   "dv", "s", "p") lie on under CFG. */
const sf_format *fa_output_format(const fa_config *cfg, const char *name);

/*----------------------------------------------------------------------------
 * Forward: O [B,H,Nq,d] and LSE [B,H,Nq] (natural log).  Returns 0, or
 * -1 when CFG is unusable or memory runs out (nothing useful written).
 * ENV carries flags and events of the whole computation.
 *--------------------------------------------------------------------------*/
int fa_forward(const fa_config *cfg, const uint16_t *q, const uint16_t *k,
               const uint16_t *v, uint32_t *o, uint32_t *lse,
               fa_capture *cap, sf_env *env);

/* Backward from the forward's O and LSE (as fa_forward wrote them) and
   dO: delta [B,H,Nq], dQ [B,H,Nq,d], dK and dV [B,H,Nk,d]. */
int fa_backward(const fa_config *cfg, const uint16_t *q, const uint16_t *k,
                const uint16_t *v, const uint32_t *o, const uint32_t *lse,
                const uint16_t *dout, uint32_t *delta, uint32_t *dq,
                uint32_t *dk, uint32_t *dv, fa_capture *cap, sf_env *env);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ATTENTION_H */
