/* backward_math -- the backward of PyTorch's math SDPA backend for BF16
   and FP16 inputs on CUDA: autograd through the graph of the forward
   (doc/attention.md, bwd "math"; evidence in doc/notes/gpu-crosscheck-log.md,
   "math backward").

   The forward saved Q' = RN32(Q sqrt(scale)), K' = RN32(K sqrt(scale))
   (FP32 copies of the inputs) and P, the softmax's FP32 output; this
   file takes P from fa_forward of the same configuration.  The backward,
   op by op as autograd runs it:

     dP   = dO V^T               bmm, one FFMA chain over d from 0
     dV   = P^T dO               bmm, one FFMA chain over the queries
     g    = RN32(dP P)           the mul inside _softmax_backward_data
     sum  = rowsum(g)            softmax_warp_backward: lane t of
                                 W = min(32, 2^ceil(log2 Nk)) lanes adds
                                 keys t, t + W, ... from +0 (keys past Nk
                                 as 0), then the butterfly xor W/2 .. 1
     dS   = RN32(g - P sum)      one FFMA (nvcc contracts the expression)
     dQ'  = dS K'                bmm, one FFMA chain over the keys
     dK'T = Q'^T dS              bmm, one FFMA chain over the queries
     dQ   = RN(RN32(dQ' s))      mul.Scalar, then the cast to the input
     dK   = RN(RN32(dK'T s)^T)   format (s = RN32(sqrt(scale)))
     dV   = RN(dV)

   Masked keys have P = 0, so g and dS are zeros there (the kernel
   computes them like any other).  delta receives each row's sum. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "attention/fa_local.h"

/* Working memory of one head. */
typedef struct math_ws
{
    uint32_t *qs;  /* Nq x d: Q' */
    uint32_t *qst; /* d x Nq: Q'^T */
    uint32_t *ks;  /* Nk x d: K' */
    uint16_t *vt;  /* d x Nk: V^T */
    uint32_t *dp;  /* Nq x Nk */
    uint32_t *ds;  /* Nq x Nk */
    uint32_t *pt;  /* Nk x Nq: P^T */
    uint32_t *dqs; /* Nq x d: dQ' */
    uint32_t *dkt; /* d x Nk: dK'^T */
    uint32_t *dvf; /* Nk x d */
} math_ws;

/* The softmax backward of one row: P, dP (NK each) into dS; returns
   the row's sum. */
static uint32_t
softmax_bwd_row(size_t nk, const uint32_t *p, const uint32_t *dp,
                uint32_t *ds, sf_env *env)
{
    uint32_t lane[32], next[32], sum;
    size_t np2 = 1, w;

    while (np2 < nk)
        np2 *= 2;
    w = np2 < 32 ? np2 : 32;
    for (size_t t = 0; t < w; t++) {
        lane[t] = FA_F32_ZERO;
        for (size_t j = t; j < np2; j += w)
            lane[t] = fa_add(lane[t],
                             j < nk ? fa_mul(dp[j], p[j], env) : FA_F32_ZERO,
                             env);
    }
    /* warp_reduce: every lane adds its xor partner, offsets W/2 .. 1 */
    for (size_t off = w / 2; off >= 1; off /= 2) {
        for (size_t t = 0; t < w; t++)
            next[t] = fa_add(lane[t], lane[t ^ off], env);
        memcpy(lane, next, w * sizeof lane[0]);
    }
    sum = lane[0];
    for (size_t j = 0; j < nk; j++)
        ds[j] = fa_fma(p[j] ^ FA_F32_SIGN, sum, fa_mul(dp[j], p[j], env),
                       env);
    return sum;
}

/* Q', Q'^T, K', V^T of head HD. */
static void
math_inputs(const fa_plan *pl, math_ws *w, const uint16_t *q,
            const uint16_t *k, const uint16_t *v, sf_env *env)
{
    size_t nq = pl->nq, nk = pl->nk, d = pl->d;

    for (size_t i = 0; i < nq; i++)
        for (size_t c = 0; c < d; c++) {
            uint32_t x = fa_mul(fa_in_wide(pl->in_fmt, q[i * d + c]),
                                pl->sqrt_scale, env);
            w->qs[i * d + c] = x;
            w->qst[c * nq + i] = x;
        }
    for (size_t j = 0; j < nk; j++)
        for (size_t c = 0; c < d; c++) {
            w->ks[j * d + c] = fa_mul(fa_in_wide(pl->in_fmt, k[j * d + c]),
                                      pl->sqrt_scale, env);
            w->vt[c * nk + j] = v[j * d + c];
        }
}

/* The rounding events of dQ[row][col] of the traced head: the row's dP,
   g, sum and dS, the chain dS K', the scale and the cast, in ENV (the
   head's inputs already in W, P its rows). */
static void
math_trace(const fa_plan *pl, math_ws *w, const uint16_t *dout,
           const uint16_t *v, const uint32_t *p, size_t row, size_t col,
           sf_env *env)
{
    size_t nk = pl->nk, d = pl->d;
    uint32_t *dp = w->dp + row * nk, *ds = w->ds + row * nk, x;

    for (size_t j = 0; j < nk; j++)
        dp[j] = (uint32_t)sf_mma_dot(pl->mdp, pl->in, dout + row * d, 1,
                                     pl->in, v + j * d, 1, d, 0, env);
    softmax_bwd_row(nk, p + row * nk, dp, ds, env);
    x = (uint32_t)sf_mma_dot(pl->mdq, &sf_format_f32, ds, 1, &sf_format_f32,
                             w->ks + col, (ptrdiff_t)d, nk, 0, env);
    (void)fa_round(pl->in_fmt, fa_mul(x, pl->sqrt_scale, env), env);
}

int
fa_backward_math(const fa_config *cfg, const fa_plan *pl, const uint16_t *q,
                 const uint16_t *k, const uint16_t *v, const uint16_t *dout,
                 uint32_t *delta, uint32_t *dq, uint32_t *dk, uint32_t *dv,
                 fa_capture *cap, sf_env *env)
{
    size_t nq = pl->nq, nk = pl->nk, d = pl->d;
    size_t nh = pl->batch * pl->heads;
    bool ov = false;
    size_t pn = fa_mul_size(fa_mul_size(nh, nq, &ov), nk, &ov);
    size_t on = fa_mul_size(fa_mul_size(nh, nq, &ov), d, &ov);
    size_t s = fa_mul_size(nq, nk, &ov), sq = fa_mul_size(nq, d, &ov);
    size_t sk = fa_mul_size(nk, d, &ov);
    uint32_t *p = NULL, *o = NULL, *lse = NULL, *buf = NULL;
    math_ws w;
    fa_capture fc;
    int rc = -1;

    if (ov || pn > SIZE_MAX / 4 || on > SIZE_MAX / 4 || s > SIZE_MAX / 64
        || sq > SIZE_MAX / 64 || sk > SIZE_MAX / 64)
        return -1;
    p = malloc(pn * sizeof *p);
    o = malloc(on * sizeof *o);
    lse = malloc(fa_mul_size(nh, nq, &ov) * sizeof *lse);
    /* qs, qst, dqs: 3 sq; ks, dkt, dvf: 3 sk; dp, ds, pt: 3 s; vt */
    buf = malloc((3 * sq + 3 * sk + 3 * s) * sizeof(uint32_t)
                 + sk * sizeof(uint16_t));
    if (p == NULL || o == NULL || lse == NULL || buf == NULL)
        goto done;
    w.qs = buf;
    w.qst = w.qs + sq;
    w.dqs = w.qst + sq;
    w.ks = w.dqs + sq;
    w.dkt = w.ks + sk;
    w.dvf = w.dkt + sk;
    w.dp = w.dvf + sk;
    w.ds = w.dp + s;
    w.pt = w.ds + s;
    w.vt = (uint16_t *)(void *)(w.pt + s);

    /* P of every head: the forward's softmax output (what P V took) */
    memset(&fc, 0, sizeof fc);
    fc.p = p;
    if (fa_forward(cfg, q, k, v, o, lse, &fc, env) != 0)
        goto done;

    for (size_t hd = 0; hd < nh; hd++) {
        const uint16_t *qh = q + hd * nq * d, *kh = k + hd * nk * d;
        const uint16_t *vh = v + hd * nk * d, *doh = dout + hd * nq * d;
        const uint32_t *ph = p + hd * s;

        math_inputs(pl, &w, qh, kh, vh, env);
        sf_mma_gemm(pl->mdp, nq, nk, d, pl->in, doh, pl->in, w.vt, NULL, w.dp,
                    SF_MMA_PATH_AUTO, env);
        for (size_t i = 0; i < nq; i++) {
            uint32_t sum = softmax_bwd_row(nk, ph + i * nk, w.dp + i * nk,
                                           w.ds + i * nk, env);
            if (delta != NULL)
                delta[hd * nq + i] = sum;
        }
        if (cap != NULL && cap->dp != NULL)
            memcpy(cap->dp + hd * s, w.dp, s * sizeof *w.dp);
        if (cap != NULL && cap->ds != NULL)
            memcpy(cap->ds + hd * s, w.ds, s * sizeof *w.ds);
        /* dQ' = dS K' */
        sf_mma_gemm(pl->mdq, nq, d, nk, &sf_format_f32, w.ds, &sf_format_f32,
                    w.ks, NULL, w.dqs, SF_MMA_PATH_AUTO, env);
        /* dK'^T = Q'^T dS */
        sf_mma_gemm(pl->mdk, d, nk, nq, &sf_format_f32, w.qst, &sf_format_f32,
                    w.ds, NULL, w.dkt, SF_MMA_PATH_AUTO, env);
        /* dV = P^T dO */
        for (size_t i = 0; i < nq; i++)
            for (size_t j = 0; j < nk; j++)
                w.pt[j * nq + i] = ph[i * nk + j];
        sf_mma_gemm(pl->mdv, nk, d, nq, &sf_format_f32, w.pt, pl->in, doh,
                    NULL, w.dvf, SF_MMA_PATH_AUTO, env);
        for (size_t x = 0; x < sq; x++)
            dq[hd * sq + x] = fa_round(
                pl->in_fmt, fa_mul(w.dqs[x], pl->sqrt_scale, env), env);
        for (size_t j = 0; j < nk; j++)
            for (size_t c = 0; c < d; c++) {
                uint32_t gk = fa_mul(w.dkt[c * nk + j], pl->sqrt_scale, env);
                uint32_t gv = w.dvf[j * d + c];
                /* dkv_fp32: the FP32 gradients of a repeated K and V, for
                   the group's sum */
                dk[hd * sk + j * d + c] =
                    cfg->dkv_fp32 ? gk : fa_round(pl->in_fmt, gk, env);
                dv[hd * sk + j * d + c] =
                    cfg->dkv_fp32 ? gv : fa_round(pl->in_fmt, gv, env);
            }
    }

    if (cap != NULL && cap->trace) {
        sf_env tenv, quiet;
        size_t hd = fa_trace_envs(pl, cap, env, &tenv, &quiet);

        math_inputs(pl, &w, q + hd * nq * d, k + hd * nk * d,
                    v + hd * nk * d, &quiet);
        math_trace(pl, &w, dout + hd * nq * d, v + hd * nk * d, p + hd * s,
                   cap->trace_row, cap->trace_col, &tenv);
    }
    rc = 0;
done:
    free(p);
    free(o);
    free(lse);
    free(buf);
    return rc;
}
