/* backward -- the reference flash-attention backward pass: delta, P
   recomputed from LSE, dP, dS and the gradients dQ, dK, dV, for each
   policy (rounding maps: doc/attention.md) */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "attention/fa_local.h"

/*----------------------------------------------------------------------------
 * Working memory: per head K^T, V^T and the dK, dV accumulators; per
 * query block (its rows against every key) the S/P, dP and dS strips and
 * the dQ accumulators.
 *--------------------------------------------------------------------------*/
typedef struct bwd_ws
{
    uint16_t *kt, *vt;  /* d x Nk */
    uint32_t *sp;       /* R x Nk: raw S, then P (FP32 bits) */
    uint32_t *dp;       /* R x Nk: raw dP, then the policy's dP */
    uint32_t *ds;       /* R x Nk: dS */
    uint16_t *pb, *dsb; /* R x Nk: P and dS in BF16 (fa2, repo) */
    uint32_t *at32;     /* Nk x R: P^T or dS^T in FP32 (fp32, paper-eq4) */
    uint16_t *at16;     /* Bc x R: a tile of P^T or dS^T in BF16 */
    uint32_t *dk, *dv;  /* Nk x d accumulators */
    uint32_t *chunk;    /* Bc x d: a repo chunk */
    uint32_t *dqs;      /* R x splits x d: dQ accumulators */
    uint32_t *dqt;      /* d: one block's dQ */
    uint32_t *delta;    /* R */
    uint32_t *ohp;      /* d: O recomputed in FP32 (delta-fp32-o) */
} bwd_ws;

/* The FP32 path (bwd_operand "f32", with bwd_dq and bwd_dkv "chain"):
   FP32 P and dS, one chain per gradient element. */
static bool
fp_policy(const fa_plan *pl)
{
    return pl->k.bwd_operand == FA_FMT_F32;
}

/* F of the description, "in" as the inputs' format. */
static fa_fmt
resolved(const fa_plan *pl, fa_fmt f)
{
    return f == FA_FMT_IN ? pl->in_fmt : f;
}

/* The format of P~ and dS~ as the backward's MMAs take them
   (bwd_operand): FA2's Element type (the inputs' format), the repo's
   BF16. */
static fa_fmt
elt_fmt(const fa_plan *pl)
{
    return resolved(pl, pl->k.bwd_operand);
}

/* Whether dS holds the softmax scale (else dQ and dK take it at the
   end). */
static bool
ds_scaled(const fa_plan *pl)
{
    return pl->k.bwd_ds != FA_BDS_P_DP;
}

static const sf_format *
elt_format(const fa_plan *pl)
{
    return fa_fmt_format(elt_fmt(pl));
}

/* X rounded to the format F (BF16 or FP16, RNE), as its 16-bit pattern
   (cvt.rn.bf16x2.f32, cvt.rn.f16x2.f32: overflow gives infinity). */
static uint16_t
to_elt(fa_fmt f, uint32_t x, sf_env *env)
{
    if (f == FA_FMT_F16)
        return sf_f32_to_f16((sf_f32){x}, SF_RNE, env).bits;
    return fa_bf16(x, env);
}

static void
bwd_layout(const fa_plan *pl, fa_ws *w, bwd_ws *b)
{
    size_t r = pl->br_bwd, nk = pl->nk, d = pl->d;
    bool *o = &w->overflow;
    size_t strip = fa_mul_size(r, nk, o);

    b->kt = fa_ws_take(w, fa_mul_size(d, nk, o), sizeof(uint16_t));
    b->vt = fa_ws_take(w, fa_mul_size(d, nk, o), sizeof(uint16_t));
    b->sp = fa_ws_take(w, strip, sizeof(uint32_t));
    b->dp = fa_ws_take(w, strip, sizeof(uint32_t));
    b->ds = fa_ws_take(w, strip, sizeof(uint32_t));
    b->pb = fa_ws_take(w, fp_policy(pl) ? 0 : strip, sizeof(uint16_t));
    b->dsb = fa_ws_take(w, fp_policy(pl) ? 0 : strip, sizeof(uint16_t));
    b->at32 = fa_ws_take(w, fp_policy(pl) ? strip : 0, sizeof(uint32_t));
    b->at16 = fa_ws_take(w, fp_policy(pl) ? 0 : fa_mul_size(pl->bc_bwd, r, o),
                         sizeof(uint16_t));
    b->dk = fa_ws_take(w, fa_mul_size(nk, d, o), sizeof(uint32_t));
    b->dv = fa_ws_take(w, fa_mul_size(nk, d, o), sizeof(uint32_t));
    b->chunk = fa_ws_take(
        w,
        pl->k.bwd_dkv == FA_BDKV_BF16_ADD ? fa_mul_size(pl->bc_bwd, d, o) : 0,
        sizeof(uint32_t));
    b->dqs = fa_ws_take(w, fa_mul_size(fa_mul_size(r, pl->dq_splits, o), d, o),
                        sizeof(uint32_t));
    b->dqt = fa_ws_take(w, d, sizeof(uint32_t));
    b->delta = fa_ws_take(w, r, sizeof(uint32_t));
    b->ohp = fa_ws_take(w, d, sizeof(uint32_t));
    if (fp_policy(pl))
        b->pb = b->dsb = b->at16 = NULL; /* FP32 P and dS only */
}

size_t
fa_backward_bytes(const fa_plan *pl)
{
    fa_ws w = {NULL, 0, false};
    bwd_ws b;

    bwd_layout(pl, &w, &b);
    return w.overflow ? SIZE_MAX : w.used;
}

/*----------------------------------------------------------------------------
 * FA2's delta: the dot_do_o order of flash_bwd_preprocess_kernel.h.
 *--------------------------------------------------------------------------*/
uint32_t
fa2_dot_do_o(const fa_plan *pl, const uint16_t *dout, const uint32_t *o,
             sf_env *env)
{
    /* The kernel's head dimension kHeadDim (zero padded): PyTorch's
       head_size_rounded, d rounded up to 32 up to 128 and to 64 above
       (d = 160 runs the 192 kernel), its "page" of 64 columns (32 when
       not a multiple of 64) and T threads per row, each loading 8
       consecutive columns of every page. */
    size_t kd = pl->d <= 128 ? (pl->d + 31) / 32 * 32 : (pl->d + 63) / 64 * 64;
    size_t page = kd % 64 == 0 ? 64 : 32, nt = page / 8;
    uint32_t x[8], y[8];
    unsigned need[4];
    int levels = 0;

    for (size_t t = 0; t < nt; t++) {
        bool first = true;
        for (size_t p0 = 0; p0 < kd; p0 += page)
            for (size_t e = 0; e < 8; e++) {
                size_t c = p0 + 8 * t + e;
                uint32_t a =
                    c < pl->d ? fa_in_wide(pl->in_fmt, dout[c]) : FA_F32_ZERO;
                uint32_t b = c < pl->d ? o[c] : FA_F32_ZERO;
                /* do * o, then FFMA (nvcc contracts dP_sum += do * o) */
                x[t] = first ? fa_mul(a, b, env) : fa_fma(a, b, x[t], env);
                first = false;
            }
    }
    /* Allreduce<nt>: lane r adds lane r ^ off, off = nt/2, ..., 1.  Only
       the adds that lane 0's result depends on are evaluated: NEED[k] is
       the set of lanes whose value after level k is used. */
    for (size_t off = nt / 2; off >= 1; off /= 2)
        levels++;
    need[levels - 1] = 1u; /* lane 0 after the last level */
    for (int k = levels - 1; k > 0; k--) {
        unsigned off = (unsigned)(nt >> (k + 1));
        unsigned s = need[k], add = 0;
        for (unsigned ln = 0; ln < nt; ln++)
            if (s & (1u << ln))
                add |= 1u << (ln ^ off);
        need[k - 1] = s | add;
    }
    for (int k = 0; k < levels; k++) {
        unsigned off = (unsigned)(nt >> (k + 1));
        for (unsigned ln = 0; ln < nt; ln++)
            if (need[k] & (1u << ln))
                y[ln] = fa_add(x[ln], x[ln ^ off], env);
        for (unsigned ln = 0; ln < nt; ln++)
            if (need[k] & (1u << ln))
                x[ln] = y[ln];
    }
    /* times p_keep = 1 (no dropout): exact */
    return x[0];
}

/*----------------------------------------------------------------------------
 * The memory-efficient kernel's delta (computeDelta): T = bc_bwd / 32
 * threads per row (2 for the 64 x 64 kernel, 4 for 128 x 128), thread t
 * taking 8 consecutive columns at 8 t + 8 T it for it = 0, 1, ...; each an
 * FFMA chain o * do from 0, then the butterfly adds lane ^ 1, lane ^ 2.
 *--------------------------------------------------------------------------*/
static uint32_t
eff_delta(const fa_plan *pl, const uint16_t *dout, const uint32_t *o,
          sf_env *env)
{
    /* br_bwd bc_bwd / 32 threads over br_bwd rows */
    size_t nt = (size_t)pl->bc_bwd / 32, step;
    uint32_t x[4];

    if (nt < 1)
        nt = 1;
    if (nt > 4)
        nt = 4;
    step = 8 * nt;
    for (size_t t = 0; t < nt; t++) {
        x[t] = FA_F32_ZERO;
        for (size_t c0 = 8 * t; c0 < pl->d; c0 += step)
            for (size_t e = 0; e < 8 && c0 + e < pl->d; e++)
                x[t] = fa_fma(o[c0 + e], fa_in_wide(pl->in_fmt, dout[c0 + e]),
                              x[t], env);
    }
    for (size_t off = 1; off < nt; off *= 2)
        for (size_t t = 0; t < nt; t += 2 * off)
            x[t] = fa_add(x[t], x[t + off], env);
    return x[0];
}

/*----------------------------------------------------------------------------
 * cuDNN's delta (compute_dot_do_o_specialized<bf16, d>, 128 threads over
 * 128 / T rows): T lanes a row, T = d / 8 rounded up to a power of two,
 * lane t taking the 8 consecutive columns 8 t .. 8 t + 7 (one 16-byte
 * load of dO and of O; lanes past d hold 0) as four pairs, each
 * fma(dO_c+1, O_c+1, RN(dO_c O_c)), added in order; then the butterfly
 * adds lane ^ T/2, ..., lane ^ 1.
 *--------------------------------------------------------------------------*/
static uint32_t
cudnn_delta(const fa_plan *pl, const uint16_t *dout, const uint32_t *o,
            sf_env *env)
{
    uint32_t x[64], y[64];
    size_t nt = 1;

    while (nt < (pl->d + 7) / 8 && nt < 64)
        nt *= 2;
    for (size_t t = 0; t < nt; t++) {
        x[t] = FA_F32_ZERO;
        for (size_t e = 0; e < 8; e += 2) {
            size_t c = 8 * t + e;
            uint32_t v;
            if (c >= pl->d)
                break;
            /* a pair: fma(dO_c+1, O_c+1, RN(dO_c O_c)) */
            v = fa_mul(fa_in_wide(pl->in_fmt, dout[c]), o[c], env);
            if (c + 1 < pl->d)
                v = fa_fma(fa_in_wide(pl->in_fmt, dout[c + 1]), o[c + 1], v,
                           env);
            x[t] = e == 0 ? v : fa_add(x[t], v, env);
        }
    }
    for (size_t off = nt / 2; off >= 1; off /= 2) {
        for (size_t t = 0; t < nt; t++)
            y[t] = fa_add(x[t], x[t ^ off], env);
        memcpy(x, y, nt * sizeof *x);
    }
    return x[0];
}

/*----------------------------------------------------------------------------
 * One evaluation of a query block of one head.
 *--------------------------------------------------------------------------*/
typedef struct bwd_run
{
    const fa_plan *pl;
    bwd_ws *w;
    const uint16_t *q, *k, *v, *dout; /* this head */
    const uint32_t *o, *lse;          /* this head */
    size_t head;
    uint32_t *delta, *dq; /* outputs of every head */
    fa_capture *cap;
    sf_env *env, *quiet;
    long tcol;
} bwd_run;

static sf_env *
col_env(const bwd_run *r, size_t col)
{
    return r->tcol < 0 || (size_t)r->tcol == col ? r->env : r->quiet;
}

static bool
writing(const bwd_run *r)
{
    return r->tcol < 0;
}

/* Whether the backward computes S, P, dP, dS at (a row of query block
   MB with VIS visible keys, key J) (bwd_keys). */
static bool
computed(const fa_plan *pl, size_t mb, size_t vis, size_t j)
{
    switch (pl->k.bwd_keys) {
    case FA_BKEYS_ALL:
        return true;
    case FA_BKEYS_M_BLOCK:
        return mb >= fa_bwd_first_mblock(pl, j / pl->bc_bwd);
    default:
        return j < vis;
    }
}

/* Whether key tile NB enters no product of query block MB (bwd_keys
   "m-block-min": a causal block before the tile's m_block_min). */
static bool
tile_skipped(const fa_plan *pl, size_t mb, size_t nb)
{
    return pl->k.bwd_keys == FA_BKEYS_M_BLOCK
           && mb < fa_bwd_first_mblock(pl, nb);
}

/* delta of row RI (P and dP strips ready). */
static uint32_t
row_delta(bwd_run *r, size_t i, size_t ri, size_t vis)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    const uint16_t *dor = r->dout + i * pl->d;
    const uint32_t *orow = r->o + i * pl->d;
    const uint32_t *prow = w->sp + ri * pl->nk, *dprow = w->dp + ri * pl->nk;
    bool b16 = pl->k.bwd_delta == FA_BDELTA_BF16_SUM;
    size_t nkeys = b16 ? pl->nk : vis;
    sf_env *e = r->env;
    uint32_t acc = FA_F32_ZERO;

    if (pl->abl & FA_ABL_DELTA_FP32_O) {
        /* O recomputed as P V in FP32 (FMA chains over the keys), then
           delta = rowsum(dO o O) as an FMA chain over the columns */
        for (size_t c = 0; c < pl->d; c++) {
            uint32_t a = FA_F32_ZERO;
            for (size_t j = 0; j < nkeys; j++)
                a = fa_fma(prow[j],
                           fa_in_wide(pl->in_fmt, r->v[j * pl->d + c]), a, e);
            w->ohp[c] = a;
        }
        for (size_t c = 0; c < pl->d; c++)
            acc = fa_fma(fa_in_wide(pl->in_fmt, dor[c]), w->ohp[c], acc, e);
        return b16 ? fa_rbf(acc, e) : acc;
    }
    if (pl->abl & FA_ABL_DELTA_DPP) {
        if (b16) {
            /* (dp * p).sum(-1): BF16 products, FP32 sum, BF16 */
            acc = fa_rbf(fa_mul(dprow[0], prow[0], e), e);
            for (size_t j = 1; j < pl->nk; j++)
                acc = fa_add(acc, fa_rbf(fa_mul(dprow[j], prow[j], e), e), e);
            return fa_rbf(acc, e);
        }
        for (size_t j = 0; j < vis; j++)
            acc = fa_fma(prow[j], dprow[j], acc, e);
        return acc;
    }
    switch (pl->k.bwd_delta) {
    case FA_BDELTA_BF16_SUM:
        /* D = (doc * oc).sum(-1): BF16 products, FP32 sum, BF16 */
        acc = fa_rbf(fa_mul(fa_in_wide(pl->in_fmt, dor[0]), orow[0], e), e);
        for (size_t c = 1; c < pl->d; c++)
            acc = fa_add(
                acc,
                fa_rbf(fa_mul(fa_in_wide(pl->in_fmt, dor[c]), orow[c], e), e),
                e);
        return fa_rbf(acc, e);
    case FA_BDELTA_DOT_DO_O:
        return fa2_dot_do_o(pl, dor, orow, e);
    case FA_BDELTA_CUDNN:
        return cudnn_delta(pl, dor, orow, e);
    case FA_BDELTA_EFFICIENT:
        return eff_delta(pl, dor, orow, e);
    default:
        return (uint32_t)sf_mma_dot(pl->mdelta, pl->in, dor, 1, &sf_format_f32,
                                    orow, 1, pl->d, 0, e);
    }
}

/* P at key J of row I from S (the raw score; its computed entries) and
   the row's LSE (LSE2 = RN32(LSE log2e) for bwd_p "scale-log2"),
   bwd_p's formula; P~ into *PB (the operand format) when PB is not
   NULL. */
static uint32_t
p_at(const bwd_run *r, size_t i, size_t j, bool masked, uint32_t s0,
     uint32_t lse, uint32_t lse2, uint16_t *pb)
{
    const fa_plan *pl = r->pl;
    sf_env *e = r->env;
    uint32_t s, p;

    switch (pl->k.bwd_p) {
    case FA_BP_BF16_OPS:
        s = masked ? FA_F32_NEG_INF
                   : fa_rbf(fa_mul(fa_rbf(s0, e), pl->scale, e), e);
        /* p = exp(S - lse), BF16 */
        p = fa_rbf(fa_exp(pl, fa_rbf(fa_sub(s, lse, e), e)), e);
        if (pb != NULL)
            *pb = (uint16_t)(p >> 16);
        return p;
    case FA_BP_LOG2E_FMA:
        /* P = exp2(RN(RN(S scale - LSE) log2e)): the natural argument by
           one FFMA, then to base 2 */
        s = masked ? FA_F32_NEG_INF : s0;
        if (pl->mask != NULL && !masked) {
            /* with a mask: t = RN(fma(S, scale, b)) (the forward's), P =
               exp2(RN(RN(t - LSE) log2e)) */
            uint32_t t = fa_fma(s, pl->scale, fa_mask_at(pl, r->head, i, j), e);
            p = fa_exp(pl, fa_mul(fa_sub(t, lse, e), FA_F32_LOG2E, e));
        } else {
            p = fa_exp(
                pl, fa_mul(fa_fma(s, pl->scale, lse ^ FA_F32_SIGN, e),
                           FA_F32_LOG2E, e));
        }
        break;
    case FA_BP_SCALE_LOG2:
        s = masked ? FA_F32_NEG_INF : s0;
        /* P = exp2(RN(S scale_log2) - RN(LSE log2e)) (without UNFUSE_FMA
           one FFMA) */
        p = fa_exp(pl, pl->k.exp_arg == FA_ARG_SCALE_FMA
                           ? fa_fma(s, pl->scale_log2, lse2 ^ FA_F32_SIGN, e)
                           : fa_sub(fa_mul(s, pl->scale_log2, e), lse2, e));
        break;
    case FA_BP_EXPF_IN: {
        /* P = expf(RN(S scale) - LSE) (CUDA's accurate expf), kept in the
           operand format */
        uint16_t x;
        s = masked ? FA_F32_NEG_INF : fa_mul(s0, pl->scale, e);
        if (pl->mask != NULL && !masked)
            s = fa_bias_score(pl, s, fa_mask_at(pl, r->head, i, j), e);
        x = to_elt(elt_fmt(pl), fa_cuda_expf(pl->exp, fa_sub(s, lse, e)), e);
        if (pb != NULL)
            *pb = x;
        return fa_in_wide(elt_fmt(pl), x);
    }
    default:
        s = masked ? FA_F32_NEG_INF : fa_mul(s0, pl->scale, e);
        p = fa_exp(pl, fa_sub(s, lse, e));
        break;
    }
    if (pb != NULL)
        *pb = to_elt(elt_fmt(pl), p, e);
    return p;
}

/* S and dP of the computed entries of row RI (row I of query block MB,
   VIS visible keys), then P in place of S, P~ and dP as bwd_dp says. */
static void
row_p(bwd_run *r, size_t mb, size_t i, size_t ri, size_t vis)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    sf_env *e = r->env;
    size_t nk = pl->nk, d = pl->d;
    uint32_t *sp = w->sp + ri * nk, *dp = w->dp + ri * nk;
    uint16_t *pb = w->pb != NULL ? w->pb + ri * nk : NULL;
    uint32_t lse = r->lse[i], lse2 = FA_F32_ZERO;

    if (pl->k.bwd_p == FA_BP_SCALE_LOG2 && lse != FA_F32_NEG_INF)
        lse2 = fa_mul(lse, FA_F32_LOG2E, e);
    for (size_t j = 0; j < nk; j++) {
        bool masked = j >= vis;
        if (!computed(pl, mb, vis, j)) {
            sp[j] = dp[j] = FA_F32_ZERO;
            continue;
        }
        if (r->tcol >= 0) {
            if (!masked)
                sp[j] = (uint32_t)sf_mma_dot(pl->mqk, pl->in, r->q + i * d, 1,
                                             pl->in, r->k + j * d, 1, d, 0, e);
            dp[j] = (uint32_t)sf_mma_dot(pl->mdp, pl->in, r->dout + i * d, 1,
                                         pl->in, r->v + j * d, 1, d, 0, e);
        }
        sp[j] = p_at(r, i, j, masked, sp[j], lse, lse2,
                     pb != NULL ? pb + j : NULL);
        if (pl->k.bwd_dp == FA_FMT_BF16)
            dp[j] = fa_rbf(dp[j], e);
    }
}

/* dS at one entry from P, dP and delta (bwd_ds). */
static uint32_t
ds_at(const fa_plan *pl, uint32_t p, uint32_t dp, uint32_t delta, sf_env *e)
{
    switch (pl->k.bwd_ds) {
    case FA_BDS_BF16_OPS:
        /* ds = p * scale * (dp - D) */
        return fa_rbf(fa_mul(fa_rbf(fa_mul(p, pl->scale, e), e),
                             fa_rbf(fa_sub(dp, delta, e), e), e),
                      e);
    case FA_BDS_P_DP_SCALE:
        /* dS = RN(RN(P RN(dP - delta)) scale) (dQ, dK take no final
           scale) */
        return fa_mul(fa_mul(p, fa_sub(dp, delta, e), e), pl->scale, e);
    case FA_BDS_DP_P_SCALE:
        /* dS = RN(RN(dP - delta) P) scale (dQ, dK unscaled) */
        return fa_mul(fa_mul(fa_sub(dp, delta, e), p, e), pl->scale, e);
    default:
        return fa_mul(p, fa_sub(dp, delta, e), e);
    }
}

/* dS of row RI (P, dP and DELTA ready), and dS~ (the operand format). */
static void
row_ds(bwd_run *r, size_t mb, size_t ri, size_t vis, uint32_t delta)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    sf_env *e = r->env;
    size_t nk = pl->nk;
    const uint32_t *sp = w->sp + ri * nk, *dp = w->dp + ri * nk;
    uint32_t *ds = w->ds + ri * nk;
    uint16_t *pb = w->pb != NULL ? w->pb + ri * nk : NULL;
    uint16_t *dsb = w->dsb != NULL ? w->dsb + ri * nk : NULL;

    for (size_t j = 0; j < nk; j++) {
        if (!computed(pl, mb, vis, j)) {
            ds[j] = FA_F32_ZERO;
            if (dsb != NULL)
                dsb[j] = 0;
            if (pb != NULL)
                pb[j] = 0;
            continue;
        }
        ds[j] = ds_at(pl, sp[j], dp[j], delta, e);
        if (dsb == NULL)
            continue;
        /* bf16-ops: dS is a BF16 value already */
        dsb[j] = pl->k.bwd_ds == FA_BDS_BF16_OPS
                     ? (uint16_t)(ds[j] >> 16)
                     : to_elt(elt_fmt(pl), ds[j], e);
    }
}

/* dQ of row RI as one FP32 chain over its VIS visible keys, into OUT
   (NULL: not written) (bwd_dq "chain"). */
static void
row_dq_chain(bwd_run *r, size_t ri, size_t vis, uint32_t *out)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    size_t d = pl->d;
    const uint32_t *ds = w->ds + ri * pl->nk;

    /* dQ = scale * (dS K), one chain over the visible keys */
    if (r->tcol < 0)
        sf_mma_gemm(pl->mdq, 1, d, vis, &sf_format_f32, ds, pl->in, r->k,
                    NULL, w->dqt, SF_MMA_PATH_AUTO, r->env);
    for (size_t c = 0; c < d; c++) {
        sf_env *ce = col_env(r, c);
        uint32_t x = r->tcol < 0 ? w->dqt[c]
                                 : (uint32_t)sf_mma_dot(
                                       pl->mdq, &sf_format_f32, ds, 1, pl->in,
                                       r->k + c, (ptrdiff_t)d, vis, 0, ce);
        if (!ds_scaled(pl))
            x = fa_mul(x, pl->scale, ce);
        x = fa_round(resolved(pl, pl->k.bwd_out), x, ce);
        if (out)
            out[c] = x;
    }
}

/* Key tile NB's dS~ K of row RI added into ACC (d FP32 values) as bwd_dq
   says. */
static void
tile_dq(bwd_run *r, size_t ri, size_t nb, uint32_t *acc)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    size_t nk = pl->nk, d = pl->d;
    size_t c0 = nb * pl->bc_bwd;
    size_t bw = nk - c0 < pl->bc_bwd ? nk - c0 : pl->bc_bwd;
    const uint16_t *dsb = w->dsb + ri * nk;

    if (pl->k.bwd_dq == FA_BDQ_THROUGH) {
        /* one MMA chain over the key blocks through the accumulator (one
           split: the FP32 workspace tile reloaded from the previous key
           block) */
        if (r->tcol < 0)
            sf_mma_gemm(pl->mdq, 1, d, bw, elt_format(pl), dsb + c0, pl->in,
                        r->k + c0 * d, acc, acc, SF_MMA_PATH_AUTO, r->env);
        else
            for (size_t c = 0; c < d; c++)
                acc[c] = (uint32_t)sf_mma_dot(
                    pl->mdq, elt_format(pl), dsb + c0, 1, pl->in,
                    r->k + c0 * d + c, (ptrdiff_t)d, bw, acc[c],
                    col_env(r, c));
        return;
    }
    /* the block's dS K, an MMA chain over its keys from 0 */
    if (r->tcol < 0)
        sf_mma_gemm(pl->mdq, 1, d, bw, elt_format(pl), dsb + c0, pl->in,
                    r->k + c0 * d, NULL, w->dqt, SF_MMA_PATH_AUTO, r->env);
    for (size_t c = 0; c < d; c++) {
        sf_env *ce = col_env(r, c);
        uint32_t x = r->tcol < 0
                         ? w->dqt[c]
                         : (uint32_t)sf_mma_dot(pl->mdq, elt_format(pl),
                                                dsb + c0, 1, pl->in,
                                                r->k + c0 * d + c,
                                                (ptrdiff_t)d, bw, 0, ce);
        if (pl->k.bwd_dq == FA_BDQ_BF16_ADD)
            /* dqc.add_(dq_chunk), both BF16 */
            acc[c] = fa_rbf(fa_add(acc[c], fa_rbf(x, ce), ce), ce);
        else
            /* atomicAdd into dq_accum */
            acc[c] = fa_add(acc[c], x, ce);
    }
}

/* dQ of row RI of query block MB (VIS visible keys) into OUT (NULL: not
   written), bwd_dq's accumulation over the key tiles. */
static void
row_dq(bwd_run *r, size_t mb, size_t ri, size_t vis, uint32_t *out)
{
    const fa_plan *pl = r->pl;
    size_t nk = pl->nk, d = pl->d, g = pl->dq_splits;
    uint32_t *dqrow = r->w->dqs + ri * g * d;
    size_t tb = (nk + pl->bc_bwd - 1) / pl->bc_bwd;
    bool buffers = pl->k.bwd_dq == FA_BDQ_BUFFERS;

    if (fp_policy(pl)) {
        row_dq_chain(r, ri, vis, out);
        return;
    }
    for (size_t x = 0; x < g * d; x++)
        dqrow[x] = FA_F32_ZERO;
    for (size_t nb_ = 0; nb_ < tb; nb_++) {
        /* reverse: each key tile's CTA adds its dQ tile to the FP32
           workspace (red.global.add), the last tile first */
        size_t nb = pl->k.bwd_dq == FA_BDQ_REVERSE ? tb - 1 - nb_ : nb_;
        if (!tile_skipped(pl, mb, nb))
            tile_dq(r, ri, nb, dqrow + (buffers ? nb % g : 0) * d);
    }
    for (size_t c = 0; c < d; c++) {
        sf_env *ce = col_env(r, c);
        uint32_t x = dqrow[c];
        if (buffers) {
            /* convert_dQ: the buffers added in order from 0 */
            x = FA_F32_ZERO;
            for (size_t b = 0; b < g; b++)
                x = fa_add(x, dqrow[b * d + c], ce);
        }
        if (!ds_scaled(pl))
            x = fa_mul(x, pl->scale, ce);
        x = fa_round(resolved(pl, pl->k.bwd_out), x, ce);
        if (out)
            out[c] = x;
    }
}

/* S, P, dP, delta, dS and dQ of rows I0 .. I0+NR-1 of query block MB. */
static void
bwd_rows(bwd_run *r, size_t mb, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    sf_env *e = r->env;
    size_t nk = pl->nk, d = pl->d;

    if (r->tcol < 0) {
        sf_mma_gemm(pl->mqk, nr, nk, d, pl->in, r->q + i0 * d, pl->in, w->kt,
                    NULL, w->sp, SF_MMA_PATH_AUTO, e);
        sf_mma_gemm(pl->mdp, nr, nk, d, pl->in, r->dout + i0 * d, pl->in,
                    w->vt, NULL, w->dp, SF_MMA_PATH_AUTO, e);
    }
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, vis = fa_visible(pl, i);
        uint32_t delta;

        row_p(r, mb, i, ri, vis);
        delta = row_delta(r, i, ri, vis);
        w->delta[ri] = delta;
        row_ds(r, mb, ri, vis, delta);
        if (writing(r)) {
            fa_capture *cap = r->cap;
            size_t x = (r->head * pl->nq + i) * nk;
            if (r->delta != NULL)
                r->delta[r->head * pl->nq + i] = delta;
            if (cap != NULL && cap->dp != NULL)
                memcpy(cap->dp + x, w->dp + ri * nk, nk * sizeof *w->dp);
            if (cap != NULL && cap->ds != NULL)
                memcpy(cap->ds + x, w->ds + ri * nk, nk * sizeof *w->ds);
        }
        row_dq(r, mb, ri, vis,
               writing(r) ? r->dq + (r->head * pl->nq + i) * d : NULL);
    }
}

/* The dK, dV contributions of query block MB (rows I0 .. I0+NR-1). */
static void
bwd_kv(bwd_run *r, size_t mb, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    bwd_ws *w = r->w;
    sf_env *e = r->env;
    size_t nk = pl->nk, d = pl->d;
    size_t tb = (nk + pl->bc_bwd - 1) / pl->bc_bwd;

    if (fp_policy(pl)) {
        /* dV += P^T dO, dK += dS^T Q, chained through the accumulators */
        for (size_t j = 0; j < nk; j++)
            for (size_t ri = 0; ri < nr; ri++)
                w->at32[j * nr + ri] = w->sp[ri * nk + j];
        sf_mma_gemm(pl->mdv, nk, d, nr, &sf_format_f32, w->at32, pl->in,
                    r->dout + i0 * d, w->dv, w->dv, SF_MMA_PATH_AUTO, e);
        for (size_t j = 0; j < nk; j++)
            for (size_t ri = 0; ri < nr; ri++)
                w->at32[j * nr + ri] = w->ds[ri * nk + j];
        sf_mma_gemm(pl->mdk, nk, d, nr, &sf_format_f32, w->at32, pl->in,
                    r->q + i0 * d, w->dk, w->dk, SF_MMA_PATH_AUTO, e);
        return;
    }
    for (size_t nb = 0; nb < tb; nb++) {
        size_t c0 = nb * pl->bc_bwd;
        size_t bw = nk - c0 < pl->bc_bwd ? nk - c0 : pl->bc_bwd;
        uint32_t *dv = w->dv + c0 * d, *dk = w->dk + c0 * d;
        for (int which = 0; which < 2; which++) {
            const uint16_t *src = which == 0 ? w->pb : w->dsb;
            const uint16_t *rhs = which == 0 ? r->dout : r->q;
            uint32_t *acc = which == 0 ? dv : dk;
            const sf_mma_model *mm = which == 0 ? pl->mdv : pl->mdk;
            if (tile_skipped(pl, mb, nb))
                continue;
            for (size_t j = 0; j < bw; j++)
                for (size_t ri = 0; ri < nr; ri++)
                    w->at16[j * nr + ri] = src[ri * nk + c0 + j];
            if (pl->k.bwd_dkv == FA_BDKV_MMA) {
                /* acc_dv += P~^T dO (acc_dk += dS~^T Q): the MMA chain
                   over the block's rows, through the accumulator */
                sf_mma_gemm(mm, bw, d, nr, elt_format(pl), w->at16, pl->in,
                            rhs + i0 * d, acc, acc, SF_MMA_PATH_AUTO, e);
            } else {
                /* bf16-add: dv_chunk (dk_chunk) in BF16, then dvc.add_ */
                sf_mma_gemm(mm, bw, d, nr, elt_format(pl), w->at16, pl->in,
                            rhs + i0 * d, NULL, w->chunk, SF_MMA_PATH_AUTO, e);
                for (size_t x = 0; x < bw * d; x++)
                    acc[x] =
                        fa_rbf(fa_add(acc[x], fa_rbf(w->chunk[x], e), e), e);
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * The backward.
 *--------------------------------------------------------------------------*/
/* R on head HD (b H + h) of Q, O, dO (B H x Nq x d), K, V (B H x Nk x d)
   and LSE (B H x Nq). */
static void
run_head(bwd_run *r, size_t hd, const uint16_t *q, const uint16_t *k,
         const uint16_t *v, const uint32_t *o, const uint32_t *lse,
         const uint16_t *dout)
{
    size_t nd = r->pl->nq * r->pl->d, kd = r->pl->nk * r->pl->d;

    r->head = hd;
    r->q = q + hd * nd;
    r->dout = dout + hd * nd;
    r->o = o + hd * nd;
    r->lse = lse + hd * r->pl->nq;
    r->k = k + hd * kd;
    r->v = v + hd * kd;
}

int
fa_backward(const fa_config *cfg, const uint16_t *q, const uint16_t *k,
            const uint16_t *v, const uint32_t *o, const uint32_t *lse,
            const uint16_t *dout, uint32_t *delta, uint32_t *dq, uint32_t *dk,
            uint32_t *dv, fa_capture *cap, sf_env *env)
{
    fa_plan pl;
    fa_ws ws = {NULL, 0, false};
    bwd_ws w;
    bwd_run run;
    size_t nmb;

    if (fa_plan_init(cfg, &pl) != NULL || fa_plan_capture_check(&pl, cap)
        || q == NULL || k == NULL || v == NULL || dout == NULL || dq == NULL
        || dk == NULL || dv == NULL || env == NULL)
        return -1;
    if (cfg->gqa_group > 1 && pl.k.gqa_dkv != FA_GQA_CHAIN)
        return -1; /* fa_config_backward_refusal says why */
    if (pl.k.bwd == FA_BWD_FLEX)
        return fa_backward_flex(cfg, &pl, q, k, v, o, dout, delta, dq, dk, dv,
                                env);
    /* the math backend's autograd takes P from its forward */
    if (pl.k.bwd == FA_BWD_MATH)
        return fa_backward_math(cfg, &pl, q, k, v, dout, delta, dq, dk, dv,
                                cap, env);
    if (o == NULL || lse == NULL)
        return -1;
    ws.base = malloc(fa_backward_bytes(&pl));
    if (ws.base == NULL)
        return -1;
    bwd_layout(&pl, &ws, &w);
    nmb = (pl.nq + pl.br_bwd - 1) / pl.br_bwd;

    memset(&run, 0, sizeof run);
    run.pl = &pl;
    run.w = &w;
    run.delta = delta;
    run.dq = dq;
    run.cap = cap;
    run.env = env;
    run.quiet = env;
    run.tcol = -1;
    for (size_t hd = 0; hd < pl.batch * pl.heads; hd++) {
        size_t kd = pl.nk * pl.d;
        run_head(&run, hd, q, k, v, o, lse, dout);
        for (size_t j = 0; j < pl.nk; j++)
            for (size_t c = 0; c < pl.d; c++) {
                w.kt[c * pl.nk + j] = run.k[j * pl.d + c];
                w.vt[c * pl.nk + j] = run.v[j * pl.d + c];
            }
        memset(w.dk, 0, kd * sizeof *w.dk);
        memset(w.dv, 0, kd * sizeof *w.dv);
        for (size_t x = 0; x < nmb; x++) {
            /* bwd_query_order "reverse": the query blocks walked
               backwards (the FA2 kernel) */
            size_t mb = pl.k.bwd_reverse_q ? nmb - 1 - x : x;
            size_t i0 = mb * pl.br_bwd;
            size_t nr = pl.nq - i0 < pl.br_bwd ? pl.nq - i0 : pl.br_bwd;
            bwd_rows(&run, mb, i0, nr);
            bwd_kv(&run, mb, i0, nr);
        }
        for (size_t x = 0; x < kd; x++) {
            uint32_t gk = w.dk[x], gv = w.dv[x];
            fa_fmt out = resolved(&pl, pl.k.bwd_out);
            if (!ds_scaled(&pl))
                gk = fa_mul(gk, pl.scale, env);
            gk = fa_round(out, gk, env);
            gv = fa_round(out, gv, env);
            dk[hd * kd + x] = gk;
            dv[hd * kd + x] = gv;
        }
    }

    if (cap != NULL && cap->trace) {
        sf_env tenv, quiet;
        size_t hd = fa_trace_envs(&pl, cap, env, &tenv, &quiet);

        run_head(&run, hd, q, k, v, o, lse, dout);
        run.env = &tenv;
        run.quiet = &quiet;
        run.tcol = (long)cap->trace_col;
        bwd_rows(&run, cap->trace_row / pl.br_bwd, cap->trace_row, 1);
    }
    free(ws.base);
    return 0;
}
