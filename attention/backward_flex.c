/* backward_flex -- the backward of FlexAttention's Triton kernels as
   PyTorch 2.11's inductor generates them for sm90 (flex_backwards.py.jinja;
   doc/flex.md, "The backward").

   Two kernels.  The delta kernel (a persistent reduction) computes
   delta = rowsum(O o dO) from the 16-bit O and dO in FP32: each thread
   an FMA chain over its consecutive columns (the second product first,
   then fma of the first, then the rest in order), then the butterfly
   adds across the row's lanes, then across two warps.  The template
   then runs two kinds of programs over one grid:

     dQ  per query block, the KV blocks of the block mask's row (the
         partial ones first, then the full ones, each ascending) in steps
         of BLOCK_N2 = 64 keys: S = Q K^T (wgmma), t = RN(S scale), the
         score modification, the mask's -inf, P = exp2(arg) with
         arg = RN(RN(t RCP_LN2) - LSE2) in partial blocks and
         fma(t, RCP_LN2, -LSE2) in full ones (LLVM's contraction),
         dP = dO V^T, dS = RN(P RN(dP - delta)) (0 where masked), then
         dQ += dS K (one wgmma chain through the accumulator);
         dQ = RN(dQ scale), rounded to the inputs' format.
     dKdV per KV block, the query blocks of the block mask's column
         (partial, then full, ascending) in steps of BLOCK_M1 = 64 rows:
         the same P^T and dS^T, then dV += P^T dO and dK += dS^T Q, each
         one wgmma chain; dV rounded, dK = RN(dK scale) rounded.

   LSE2 is the forward kernel's base-2 LSE (m + log2 l, before the
   product with RN(ln 2) that makes the returned LSE); -inf becomes 0.
   The tanh soft-cap's gradient: RN(RN(RN(dS cap) fma(-th, th, 1)) RN(1 /
   cap)), th = tanhf(RN(t RN(1 / cap))) of the unmodified t. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "attention/fa_local.h"

#define F32_RCP_LN2 0x3FB8AA3Bu /* RCP_LN2 = 1.44269504, RN32 */
#define FLEX_PROGRAM 128        /* BLOCK_N1 and BLOCK_M2 */

/*----------------------------------------------------------------------------
 * delta
 *--------------------------------------------------------------------------*/
static uint32_t
flex_delta(const fa_plan *pl, size_t xblock, const uint16_t *dout,
           const uint32_t *o, sf_env *env)
{
    /* R0_BLOCK: d rounded up to a power of two; E consecutive columns a
       thread, R0_BLOCK / E lanes over the row (two warps at 64) */
    size_t r0 = 1, e, lanes;
    uint32_t x[64], y[64];

    while (r0 < pl->d)
        r0 *= 2;
    e = xblock == 1 ? (r0 > 64 ? r0 / 64 : 1) : (r0 < 8 ? r0 : 8);
    lanes = r0 / e;
    for (size_t t = 0; t < lanes; t++) {
        uint32_t p[64], acc;
        for (size_t c = 0; c < e; c++) {
            size_t col = t * e + c;
            p[c] = col < pl->d ? fa_in_wide(pl->in_fmt, dout[col]) : 0;
        }
#define O_AT(c) (t * e + (c) < pl->d ? o[t * e + (c)] : FA_F32_ZERO)
        if (e == 1)
            acc = fa_mul(O_AT(0), p[0], env);
        else {
            acc = fa_mul(O_AT(1), p[1], env);
            acc = fa_fma(O_AT(0), p[0], acc, env);
            for (size_t c = 2; c < e; c++)
                acc = fa_fma(O_AT(c), p[c], acc, env);
        }
#undef O_AT
        x[t] = acc;
    }
    /* the butterfly within a warp (xor 16 .. 1, or fewer lanes), then
       the two warps' values added */
    {
        size_t w = lanes < 32 ? lanes : 32;
        for (size_t off = w / 2; off >= 1; off /= 2) {
            for (size_t t = 0; t < lanes; t++)
                y[t] = fa_add(x[t], x[(t & ~(w - 1)) | ((t % w) ^ off)], env);
            memcpy(x, y, lanes * sizeof *x);
        }
        for (size_t t = w; t < lanes; t += w)
            x[0] = fa_add(x[0], x[t], env);
    }
    return x[0];
}

/*----------------------------------------------------------------------------
 * One head
 *--------------------------------------------------------------------------*/
typedef struct flex_head
{
    const fa_plan *pl;
    size_t head;                      /* b H + h */
    const uint16_t *q, *k, *v, *dout; /* this head */
    const uint32_t *lse2, *delta;     /* this head's rows */
    size_t sq, skv, nqs, nks;         /* sparse blocks */
    bool ragged;
    unsigned char *cls;    /* nqs x nks block classes */
    uint16_t *p16, *ds16;  /* Nq x Nk */
    uint16_t *kt, *vt;     /* d x skv */
    uint32_t *s, *dp;      /* sq x skv */
    uint16_t *a16;         /* a step's operand, up to skv x 64 */
    uint32_t *acc;         /* sq x d: dQ */
    sf_env *env;
} flex_head;

static uint16_t
to_in(const fa_plan *pl, uint32_t x, sf_env *env)
{
    if (pl->in_fmt == FA_FMT_F16)
        return sf_f32_to_f16((sf_f32){x}, SF_RNE, env).bits;
    return fa_bf16(x, env);
}

/* P and dS (in the inputs' format) of the block (QS, KS). */
static void
block_p_ds(flex_head *h, size_t qs, size_t ks)
{
    const fa_plan *pl = h->pl;
    sf_env *e = h->env;
    size_t i0 = qs * h->sq, j0 = ks * h->skv, d = pl->d;
    size_t nr = pl->nq - i0 < h->sq ? pl->nq - i0 : h->sq;
    size_t bw = pl->nk - j0 < h->skv ? pl->nk - j0 : h->skv;
    /* the partial form in a partial block of a block mask, and in every
       block of ragged lengths; without a block mask the one block is a
       partial one whose constant-true mask folds away: the full form */
    bool partial = (pl->sparse_q != 0 && h->cls[qs * h->nks + ks] == 1)
                   || h->ragged;
    bool fma = (partial ? pl->k.exp_arg_partial : pl->k.exp_arg)
               == FA_ARG_SCALE_FMA;

    for (size_t j = 0; j < bw; j++)
        for (size_t c = 0; c < d; c++) {
            h->kt[c * bw + j] = h->k[(j0 + j) * d + c];
            h->vt[c * bw + j] = h->v[(j0 + j) * d + c];
        }
    sf_mma_gemm(pl->mqk, nr, bw, d, pl->in, h->q + i0 * d, pl->in, h->kt,
                NULL, h->s, SF_MMA_PATH_AUTO, e);
    sf_mma_gemm(pl->mdp, nr, bw, d, pl->in, h->dout + i0 * d, pl->in, h->vt,
                NULL, h->dp, SF_MMA_PATH_AUTO, e);
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, vis = fa_visible(pl, i);
        uint32_t lse = h->lse2[i] == FA_F32_NEG_INF ? FA_F32_ZERO : h->lse2[i];
        uint32_t di = h->delta[i];
        for (size_t jj = 0; jj < bw; jj++) {
            size_t j = j0 + jj;
            uint32_t s = h->s[ri * bw + jj], t, p, ds;
            bool hidden = j >= vis;
            t = hidden ? FA_F32_NEG_INF
                       : fa_bias_score(pl, s,
                                       pl->mask != NULL
                                           ? fa_mask_at(pl, h->head, i, j)
                                           : FA_F32_ZERO,
                                       e);
            hidden = hidden || t == FA_F32_NEG_INF;
            p = fa_exp(pl, fma ? fa_fma(t, F32_RCP_LN2, lse ^ FA_F32_SIGN, e)
                               : fa_sub(fa_mul(t, F32_RCP_LN2, e), lse, e));
            ds = fa_mul(p, fa_sub(h->dp[ri * bw + jj], di, e), e);
            if (pl->softcap && !hidden) {
                uint32_t t0 = fa_mul(s, pl->scale, e);
                uint32_t th = fa_cuda_tanhf_ftz(pl->exp, pl->rcpm,
                                                fa_mul(t0, pl->cap_rcp, e));
                uint32_t g = fa_fma(th ^ FA_F32_SIGN, th, FA_F32_ONE, e);
                ds = fa_mul(fa_mul(fa_mul(ds, pl->cap, e), g, e), pl->cap_rcp,
                            e);
            }
            if (hidden)
                ds = FA_F32_ZERO; /* tl.where(mask_mod_output, ds, 0.0) */
            h->p16[i * pl->nk + j] = to_in(pl, p, e);
            h->ds16[i * pl->nk + j] = to_in(pl, ds, e);
        }
    }
}

/* dQ of the rows of sparse query block QS. */
static void
block_dq(flex_head *h, size_t qs, uint32_t *dq)
{
    const fa_plan *pl = h->pl;
    sf_env *e = h->env;
    size_t i0 = qs * h->sq, d = pl->d;
    size_t nr = pl->nq - i0 < h->sq ? pl->nq - i0 : h->sq;

    memset(h->acc, 0, nr * d * sizeof *h->acc);
    for (int want = 1; want <= 2; want++)
        for (size_t ks = 0; ks < h->nks; ks++) {
            size_t jend = (ks + 1) * h->skv < pl->nk ? (ks + 1) * h->skv
                                                     : pl->nk;
            if (h->cls[qs * h->nks + ks] != want)
                continue;
            for (size_t c0 = ks * h->skv; c0 < jend; c0 += pl->bc_bwd) {
                size_t bw = jend - c0 < pl->bc_bwd ? jend - c0 : pl->bc_bwd;
                for (size_t ri = 0; ri < nr; ri++)
                    memcpy(h->a16 + ri * bw,
                           h->ds16 + (i0 + ri) * pl->nk + c0,
                           bw * sizeof *h->a16);
                sf_mma_gemm(pl->mdq, nr, d, bw, pl->in, h->a16, pl->in,
                            h->k + c0 * d, h->acc, h->acc, SF_MMA_PATH_AUTO,
                            e);
            }
        }
    for (size_t x = 0; x < nr * d; x++)
        dq[i0 * d + x] = fa_round(pl->in_fmt, fa_mul(h->acc[x], pl->scale, e),
                                  e);
}

/* The contributions of this head to dK and dV of the keys of sparse KV
   block KS: the accumulators ACCK, ACCV (Nk x d, FP32) continued, one
   wgmma chain through them (a group's query heads one after another). */
static void
block_dkdv(flex_head *h, size_t ks, uint32_t *acck, uint32_t *accv)
{
    const fa_plan *pl = h->pl;
    sf_env *e = h->env;
    size_t j0 = ks * h->skv, d = pl->d;
    size_t bw = pl->nk - j0 < h->skv ? pl->nk - j0 : h->skv;

    for (int want = 1; want <= 2; want++)
        for (size_t qs = 0; qs < h->nqs; qs++) {
            size_t iend = (qs + 1) * h->sq < pl->nq ? (qs + 1) * h->sq
                                                    : pl->nq;
            if (h->cls[qs * h->nks + ks] != want)
                continue;
            for (size_t r0 = qs * h->sq; r0 < iend; r0 += pl->br_bwd) {
                size_t nr = iend - r0 < pl->br_bwd ? iend - r0 : pl->br_bwd;
                for (int which = 0; which < 2; which++) {
                    const uint16_t *src = which == 0 ? h->p16 : h->ds16;
                    uint32_t *acc = (which == 0 ? accv : acck) + j0 * d;
                    for (size_t jj = 0; jj < bw; jj++)
                        for (size_t ri = 0; ri < nr; ri++)
                            h->a16[jj * nr + ri] =
                                src[(r0 + ri) * pl->nk + j0 + jj];
                    sf_mma_gemm(which == 0 ? pl->mdv : pl->mdk, bw, d, nr,
                                pl->in, h->a16, pl->in,
                                (which == 0 ? h->dout : h->q) + r0 * d, acc,
                                acc, SF_MMA_PATH_AUTO, e);
                }
            }
        }
}

/*----------------------------------------------------------------------------
 * The backward
 *--------------------------------------------------------------------------*/
/* The forward of head HD of CFG alone (its part of the mask), for its
   base-2 LSE into LSE2 (nq); OT (nq x d) and LT (nq) take O and LSE. */
static int
head_forward(const fa_config *cfg, size_t hd, const uint16_t *q,
             const uint16_t *k, const uint16_t *v, uint32_t *ot, uint32_t *lt,
             uint32_t *lse2, sf_env *env)
{
    fa_config c = *cfg;
    fa_attn_mask m;
    fa_capture cap;

    c.shape.batch = 1;
    c.shape.heads = 1;
    c.gqa_group = 0;
    c.lse_kernel = NULL;
    if (cfg->mask != NULL && cfg->mask->head_offset != NULL) {
        m = *cfg->mask;
        m.head_offset += hd;
        c.mask = &m;
    }
    memset(&cap, 0, sizeof cap);
    cap.lse_kernel = lse2;
    return fa_forward(&c, q, k, v, ot, lt, &cap, env);
}

/* The flex backward's buffers besides the head's. */
typedef struct flex_mem
{
    uint32_t *lse2, *dl;   /* B H x Nq: the forward's base-2 LSE, delta */
    uint32_t *otmp, *ltmp; /* Nq x d, Nq: a head's forward O and LSE */
    uint32_t *acck, *accv; /* Nk x d: a KV head's dK and dV */
} flex_mem;

/* The sparse blocks of H under PL: without a block mask one block of
   every row and key, its form the partial one only when the lengths are
   ragged; false where the block mask's blocks are not whole programs
   (fa_config_backward_refusal says why). */
static bool
flex_blocks(flex_head *h, const fa_plan *pl)
{
    h->sq = pl->sparse_q != 0 ? pl->sparse_q : pl->nq;
    h->skv = pl->sparse_kv != 0 ? pl->sparse_kv : pl->nk;
    h->nqs = (pl->nq + h->sq - 1) / h->sq;
    h->nks = (pl->nk + h->skv - 1) / h->skv;
    h->ragged = pl->nq % FLEX_PROGRAM != 0 || pl->nk % FLEX_PROGRAM != 0;
    return !((pl->sparse_q != 0 && pl->sparse_q % FLEX_PROGRAM != 0)
             || (pl->sparse_kv != 0 && pl->sparse_kv % FLEX_PROGRAM != 0));
}

/* The buffers of H and M for BH heads; false when one is missing (those
   taken stay for flex_free). */
static bool
flex_alloc(flex_head *h, flex_mem *m, size_t bh)
{
    const fa_plan *pl = h->pl;
    size_t nq = pl->nq, nk = pl->nk, d = pl->d;

    m->lse2 = malloc(bh * nq * sizeof *m->lse2);
    m->dl = malloc(bh * nq * sizeof *m->dl);
    m->otmp = malloc(nq * d * sizeof *m->otmp);
    m->ltmp = malloc(nq * sizeof *m->ltmp);
    m->acck = malloc(nk * d * sizeof *m->acck);
    m->accv = malloc(nk * d * sizeof *m->accv);
    h->cls = malloc(h->nqs * h->nks);
    h->p16 = malloc(nq * nk * sizeof *h->p16);
    h->ds16 = malloc(nq * nk * sizeof *h->ds16);
    h->kt = malloc(d * h->skv * sizeof *h->kt);
    h->vt = malloc(d * h->skv * sizeof *h->vt);
    h->s = malloc(h->sq * h->skv * sizeof *h->s);
    h->dp = malloc(h->sq * h->skv * sizeof *h->dp);
    h->a16 = malloc((h->skv > h->sq ? h->skv : h->sq)
                    * (pl->br_bwd > pl->bc_bwd ? pl->br_bwd : pl->bc_bwd)
                    * sizeof *h->a16);
    h->acc = malloc(h->sq * d * sizeof *h->acc);
    return m->lse2 != NULL && m->dl != NULL && m->otmp != NULL
           && m->ltmp != NULL && m->acck != NULL && m->accv != NULL
           && h->cls != NULL && h->p16 != NULL && h->ds16 != NULL
           && h->kt != NULL && h->vt != NULL && h->s != NULL && h->dp != NULL
           && h->a16 != NULL && h->acc != NULL;
}

static void
flex_free(flex_head *h, flex_mem *m)
{
    free(m->lse2);
    free(m->dl);
    free(m->otmp);
    free(m->ltmp);
    free(m->acck);
    free(m->accv);
    free(h->cls);
    free(h->p16);
    free(h->ds16);
    free(h->kt);
    free(h->vt);
    free(h->s);
    free(h->dp);
    free(h->a16);
    free(h->acc);
}

/* The forward's base-2 LSE of every head into M->lse2 (the caller's
   when its forward kept it, else head by head, its flags in a private
   copy: the forward is not part of this computation), then delta from
   O (the forward's own where O is not given) into M->dl. */
static int
flex_lse_delta(const fa_config *cfg, const fa_plan *pl, const uint16_t *q,
               const uint16_t *k, const uint16_t *v, const uint32_t *o,
               const uint16_t *dout, flex_mem *m, sf_env *env)
{
    size_t nq = pl->nq, nd = nq * pl->d, kd = pl->nk * pl->d;
    size_t g = cfg->gqa_group != 0 ? cfg->gqa_group : 1;
    size_t xblock = cfg->delta_xblock != 0 ? cfg->delta_xblock : 8;
    sf_env fenv = *env;

    fenv.events = NULL;
    for (size_t hd = 0; hd < pl->batch * pl->heads; hd++) {
        const uint32_t *oh = o != NULL ? o + hd * nd : m->otmp;
        if (cfg->lse_kernel != NULL && o != NULL)
            memcpy(m->lse2 + hd * nq, cfg->lse_kernel + hd * nq,
                   nq * sizeof *m->lse2);
        else if (head_forward(cfg, hd, q + hd * nd, k + hd / g * kd,
                              v + hd / g * kd, m->otmp, m->ltmp,
                              m->lse2 + hd * nq, &fenv)
                 != 0)
            return -1;
        for (size_t i = 0; i < nq; i++)
            m->dl[hd * nq + i] = flex_delta(
                pl, xblock, dout + hd * nd + i * pl->d, oh + i * pl->d, env);
    }
    return 0;
}

/* Query head HD of H's KV head: the blocks' classes, P and dS of each
   block it computes, its dQ into DQ, its part of dK and dV added into
   M's accumulators. */
static void
flex_query_head(flex_head *h, size_t hd, const uint16_t *q,
                const uint16_t *dout, const flex_mem *m, uint32_t *dq)
{
    const fa_plan *pl = h->pl;
    size_t nd = pl->nq * pl->d;

    h->head = hd;
    h->q = q + hd * nd;
    h->dout = dout + hd * nd;
    h->lse2 = m->lse2 + hd * pl->nq;
    h->delta = m->dl + hd * pl->nq;
    for (size_t qs = 0; qs < h->nqs; qs++)
        for (size_t ks = 0; ks < h->nks; ks++) {
            int c = pl->sparse_q != 0 ? fa_sparse_class(pl, hd, qs, ks) : 1;
            h->cls[qs * h->nks + ks] = (unsigned char)c;
            if (c != 0)
                block_p_ds(h, qs, ks);
        }
    for (size_t qs = 0; qs < h->nqs; qs++)
        block_dq(h, qs, dq + hd * nd);
    for (size_t ks = 0; ks < h->nks; ks++)
        block_dkdv(h, ks, m->acck, m->accv);
}

/* KV head KH (of group size G): its program walks the group's query
   heads in order, dK and dV in one accumulator each; dV rounded, dK
   times the scale, then rounded, and every head of the group gets the
   KV head's values. */
static void
flex_kv_head(flex_head *h, size_t kh, size_t g, const uint16_t *q,
             const uint16_t *k, const uint16_t *v, const uint16_t *dout,
             flex_mem *m, uint32_t *dq, uint32_t *dk, uint32_t *dv)
{
    const fa_plan *pl = h->pl;
    size_t kd = pl->nk * pl->d;
    sf_env *env = h->env;

    memset(m->acck, 0, kd * sizeof *m->acck);
    memset(m->accv, 0, kd * sizeof *m->accv);
    h->k = k + kh * kd;
    h->v = v + kh * kd;
    for (size_t hd = kh * g; hd < (kh + 1) * g; hd++)
        flex_query_head(h, hd, q, dout, m, dq);
    for (size_t x = 0; x < kd; x++) {
        uint32_t gk =
            fa_round(pl->in_fmt, fa_mul(m->acck[x], pl->scale, env), env);
        uint32_t gv = fa_round(pl->in_fmt, m->accv[x], env);
        for (size_t hd = kh * g; hd < (kh + 1) * g; hd++) {
            dk[hd * kd + x] = gk;
            dv[hd * kd + x] = gv;
        }
    }
}

int
fa_backward_flex(const fa_config *cfg, const fa_plan *pl, const uint16_t *q,
                 const uint16_t *k, const uint16_t *v, const uint32_t *o,
                 const uint16_t *dout, uint32_t *delta, uint32_t *dq,
                 uint32_t *dk, uint32_t *dv, sf_env *env)
{
    size_t bh = pl->batch * pl->heads;
    size_t g = cfg->gqa_group != 0 ? cfg->gqa_group : 1;
    flex_head h;
    flex_mem m;
    int rc = -1;

    if (pl->d > 512 || pl->heads % g != 0)
        return -1;
    memset(&h, 0, sizeof h);
    h.pl = pl;
    h.env = env;
    if (!flex_blocks(&h, pl))
        return -1;
    if (flex_alloc(&h, &m, bh)
        && flex_lse_delta(cfg, pl, q, k, v, o, dout, &m, env) == 0) {
        for (size_t kh = 0; kh < bh / g; kh++)
            flex_kv_head(&h, kh, g, q, k, v, dout, &m, dq, dk, dv);
        if (delta != NULL)
            memcpy(delta, m.dl, bh * pl->nq * sizeof *delta);
        rc = 0;
    }
    flex_free(&h, &m);
    return rc;
}
