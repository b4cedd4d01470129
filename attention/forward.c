/* forward -- the reference flash-attention forward pass: scores, the
   online softmax over KV blocks, P~V and the normalisation, for each
   policy (rounding maps: doc/attention.md) */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "attention/fa_local.h"

/* The RN_f32(1e-10) of the repo's clamp of the block row sum. */
#define F32_CLAMP_MIN 0x2EDBE6FFu

/*----------------------------------------------------------------------------
 * Working memory: per head K^T, per chunk of rows the scores, P~, the
 * accumulator and the row state.
 *--------------------------------------------------------------------------*/
typedef struct fwd_ws
{
    uint16_t *kt;    /* d x Nk: K transposed */
    uint32_t *s;     /* R x Nk: scores of the chunk's rows */
    uint16_t *pb;    /* R x Bc: P~ in BF16 (rows of the block's width) */
    uint32_t *pf;    /* R x Bc: P~ in FP32 */
    uint32_t *acc;   /* R x d: O~ (or the repo's oc) */
    uint32_t *tmp;   /* R x d: a block's P~V */
    uint32_t *m;     /* R: running max */
    uint32_t *l;     /* R: running row sum (fa2: unused) */
    uint32_t *part;  /* 4R: fa2's per-thread row-sum partials */
    uint32_t *alpha; /* R: a block's rescale factor */
    unsigned char *started; /* R: the row has seen an unmasked key */
} fwd_ws;

static size_t
chunk_rows(const fa_plan *pl)
{
    return pl->br < FA_ROW_CHUNK ? pl->br : FA_ROW_CHUNK;
}

static void
fwd_layout(const fa_plan *pl, fa_ws *w, fwd_ws *f)
{
    size_t r = chunk_rows(pl);
    bool *o = &w->overflow;

    f->kt = fa_ws_take(w, fa_mul_size(pl->d, pl->nk, o), sizeof(uint16_t));
    f->s = fa_ws_take(w, fa_mul_size(r, pl->nk, o), sizeof(uint32_t));
    f->pb = fa_ws_take(w, fa_mul_size(r, pl->bc, o), sizeof(uint16_t));
    f->pf = fa_ws_take(w, fa_mul_size(r, pl->bc, o), sizeof(uint32_t));
    f->acc = fa_ws_take(w, fa_mul_size(r, pl->d, o), sizeof(uint32_t));
    f->tmp = fa_ws_take(w, fa_mul_size(r, pl->d, o), sizeof(uint32_t));
    f->m = fa_ws_take(w, r, sizeof(uint32_t));
    f->l = fa_ws_take(w, r, sizeof(uint32_t));
    f->part = fa_ws_take(w, fa_mul_size(r, 4, o), sizeof(uint32_t));
    f->alpha = fa_ws_take(w, r, sizeof(uint32_t));
    f->started = fa_ws_take(w, r, 1);
}

size_t
fa_forward_bytes(const fa_plan *pl)
{
    fa_ws w = {NULL, 0, false};
    fwd_ws f;

    fwd_layout(pl, &w, &f);
    return w.overflow ? SIZE_MAX : w.used;
}

/*----------------------------------------------------------------------------
 * One evaluation of a chunk of rows of one head.
 *--------------------------------------------------------------------------*/
typedef struct fwd_run
{
    const fa_plan *pl;
    fwd_ws *w;
    const uint16_t *q, *k, *v; /* this head */
    size_t head;               /* b H + h */
    uint32_t *o, *lse;         /* outputs of every head */
    fa_capture *cap;           /* captures, or NULL */
    sf_env *env;               /* roundings shared by the whole row */
    sf_env *quiet;             /* columns other than the traced one */
    long tcol;                 /* the traced column, or -1: none */
} fwd_run;

/* The environment of the roundings that feed column COL only. */
static sf_env *
col_env(const fwd_run *r, size_t col)
{
    return r->tcol < 0 || (size_t)r->tcol == col ? r->env : r->quiet;
}

/* Roundings that feed no output element of O (LSE). */
static sf_env *
lse_env(const fwd_run *r)
{
    return r->tcol < 0 ? r->env : r->quiet;
}

static bool
writing(const fwd_run *r)
{
    return r->tcol < 0;
}

static uint32_t
mask_value(const fa_plan *pl)
{
    return pl->policy == FA_POLICY_REPO ? FA_F32_BF16_NEG_MAX : FA_F32_NEG_INF;
}

/* The policy's score from the FP32 dot product RAW of q_i and k_j. */
static uint32_t
score_of(const fa_plan *pl, uint32_t raw, sf_env *env)
{
    switch (pl->policy) {
    case FA_POLICY_FP32:
        return fa_mul(raw, pl->scale, env);
    case FA_POLICY_PAPER_EQ4:
        return fa_rbf(fa_mul(raw, pl->scale, env), env);
    case FA_POLICY_REPO:
        /* einsum output in BF16, then * scale (float opmath), BF16 */
        return fa_rbf(fa_mul(fa_rbf(raw, env), pl->scale, env), env);
    default: /* fa2: unscaled */
        return raw;
    }
}

/* Scores of rows I0 .. I0+NR-1 into w->s (masked entries: the mask
   value); with tracing, only the unmasked ones are computed. */
static void
fwd_scores(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    uint32_t *s = r->w->s;
    uint32_t mv = mask_value(pl);

    if (r->tcol < 0)
        sf_mma_gemm(pl->mqk, nr, pl->nk, pl->d, &sf_format_bf16,
                    r->q + i0 * pl->d, &sf_format_bf16, r->w->kt, NULL, s,
                    SF_MMA_PATH_AUTO, r->env);
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, nv = fa_visible(pl, i);
        uint32_t *srow = s + ri * pl->nk;
        for (size_t j = 0; j < pl->nk; j++) {
            if (j >= nv) {
                srow[j] = mv;
                continue;
            }
            if (r->tcol >= 0)
                srow[j] = (uint32_t)sf_mma_dot(
                    pl->mqk, &sf_format_bf16, r->q + i * pl->d, 1,
                    &sf_format_bf16, r->k + j * pl->d, 1, pl->d, 0, r->env);
            srow[j] = score_of(pl, srow[j], r->env);
        }
        if (writing(r) && r->cap != NULL && r->cap->s != NULL)
            memcpy(r->cap->s + (r->head * pl->nq + i) * pl->nk, srow,
                   pl->nk * sizeof *srow);
    }
}

/* P~V of one row: D[c] = dot(P~[0..n), V[c0 .. c0+n)[c]) + C[c] (C NULL:
   0) for every column, A in format FA; gemm when nothing is traced,
   else one dot product per column in its environment. */
static void
row_pv(fwd_run *r, const sf_format *fa, const void *a, size_t c0, size_t n,
       const uint32_t *c, uint32_t *d)
{
    const fa_plan *pl = r->pl;

    if (r->tcol < 0) {
        sf_mma_gemm(pl->mpv, 1, pl->d, n, fa, a, &sf_format_bf16,
                    r->v + c0 * pl->d, c, d, SF_MMA_PATH_AUTO, r->env);
        return;
    }
    for (size_t col = 0; col < pl->d; col++)
        d[col] = (uint32_t)sf_mma_dot(
            pl->mpv, fa, a, 1, &sf_format_bf16, r->v + c0 * pl->d + col,
            (ptrdiff_t)pl->d, n, c != NULL ? c[col] : 0, col_env(r, col));
}

/* The P~V of NR rows at once (A: NR x N, row-major, format FA). */
static void
chunk_pv(fwd_run *r, size_t nr, const sf_format *fa, const void *a, size_t c0,
         size_t n, const uint32_t *c, uint32_t *d)
{
    const fa_plan *pl = r->pl;
    size_t sa = fa->storage_bits / 8;

    if (r->tcol < 0) {
        sf_mma_gemm(pl->mpv, nr, pl->d, n, fa, a, &sf_format_bf16,
                    r->v + c0 * pl->d, c, d, SF_MMA_PATH_AUTO, r->env);
        return;
    }
    for (size_t ri = 0; ri < nr; ri++)
        row_pv(r, fa, (const char *)a + ri * n * sa, c0, n,
               c != NULL ? c + ri * pl->d : NULL, d + ri * pl->d);
}

static uint32_t
row_max(const uint32_t *s, size_t n)
{
    uint32_t mx = FA_F32_NEG_INF;

    for (size_t t = 0; t < n; t++)
        mx = fa_max(mx, s[t]);
    return mx;
}

/* Index into a [B,H,Nq,Tc] capture. */
static size_t
block_index(const fwd_run *r, size_t i, size_t vi)
{
    return (r->head * r->pl->nq + i) * r->pl->tc + vi;
}

/* The P~ capture of row I for keys c0 .. c0+n-1 (P~ as FP32 bits); keys
   c0+nv .. c0+n-1 get 0. */
static void
capture_p(fwd_run *r, size_t i, size_t c0, size_t n, size_t nv,
          const uint32_t *p32, const uint16_t *p16)
{
    uint32_t *dst;

    if (!writing(r) || r->cap == NULL || r->cap->p == NULL)
        return;
    dst = r->cap->p + (r->head * r->pl->nq + i) * r->pl->nk + c0;
    for (size_t t = 0; t < n; t++)
        dst[t] = t >= nv ? 0 : p32 != NULL ? p32[t] : fa_wide(p16[t]);
}

/*----------------------------------------------------------------------------
 * fp32 and paper-eq4: Algorithm 1 with FP32 m (paper-eq4: BF16 scores,
 * so BF16 m), l and dot products; paper-eq4 rounds S - m and P~ to BF16
 * and O~ to BF16 after each block's FP32 dot product (its lp).
 *--------------------------------------------------------------------------*/
static void
block_fp(fwd_run *r, size_t i0, size_t nr, size_t c0, size_t bw)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    bool eq4 = pl->policy == FA_POLICY_PAPER_EQ4;
    bool keep32 = (pl->abl & (FA_ABL_FP32_PV | FA_ABL_FP32_O)) != 0;
    /* P~ in BF16: paper-eq4 without the fp32-p ablation */
    bool p16 = eq4 && (pl->abl & FA_ABL_FP32_P) == 0;
    const sf_format *fa = p16 ? &sf_format_bf16 : &sf_format_f32;

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, vis = fa_visible(pl, i);
        size_t nv = vis <= c0 ? 0 : vis - c0 < bw ? vis - c0 : bw;
        const uint32_t *srow = w->s + ri * pl->nk + c0;
        uint32_t *acc = w->acc + ri * pl->d, *tmp = w->tmp + ri * pl->d;
        uint32_t *pf = w->pf + ri * pl->bc;
        uint16_t *pb = w->pb + ri * pl->bc;
        uint32_t mt, mnew, meff, alpha = FA_F32_ONE, rs;
        bool started = w->started[ri] != 0;

        if (nv == 0) {
            /* no unmasked key of this row in this block: nothing to do */
            capture_p(r, i, c0, bw, 0, NULL, NULL);
            continue;
        }
        mt = fa_fix_max(pl, srow, nv, row_max(srow, nv), r->env);
        mnew = started ? fa_max(w->m[ri], mt) : mt;
        /* an all -Inf row would give -Inf - -Inf: shift by 0 instead */
        meff = mnew == FA_F32_NEG_INF ? FA_F32_ZERO : mnew;
        if (started)
            alpha = fa_exp(pl, fa_sub(w->m[ri], meff, r->env));
        for (size_t t = 0; t < nv; t++) {
            if (p16) {
                uint32_t x = fa_bf16_sub(srow[t], meff, r->env);
                pb[t] = fa_bf16(fa_exp(pl, x), r->env);
            } else {
                pf[t] = fa_exp(pl, fa_sub(srow[t], meff, r->env));
            }
        }
        /* rowsum(P~), sequential in FP32 from the first term */
        rs = p16 ? fa_wide(pb[0]) : pf[0];
        for (size_t t = 1; t < nv; t++)
            rs = fa_add(rs, p16 ? fa_wide(pb[t]) : pf[t], r->env);
        w->l[ri] =
            started ? fa_add(fa_mul(alpha, w->l[ri], r->env), rs, r->env) : rs;
        /* O~ = alpha O~ + P~V: the block's dot products chained from the
           rescaled accumulator */
        if (started)
            for (size_t col = 0; col < pl->d; col++)
                tmp[col] = fa_mul(alpha, acc[col], col_env(r, col));
        row_pv(r, fa, p16 ? (const void *)pb : (const void *)pf, c0, nv,
               started ? tmp : NULL, acc);
        if (eq4 && !keep32)
            for (size_t col = 0; col < pl->d; col++)
                acc[col] = fa_rbf(acc[col], col_env(r, col));
        w->m[ri] = mnew;
        w->started[ri] = 1;
        capture_p(r, i, c0, bw, nv, p16 ? NULL : pf, pb);
    }
}

/*----------------------------------------------------------------------------
 * repo: the released PyTorch code, one rounding per PyTorch op on BF16
 * tensors (FP32 opmath, then BF16).
 *--------------------------------------------------------------------------*/
static void
block_repo(fwd_run *r, size_t i0, size_t nr, size_t c0, size_t bw)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    bool keep32 = (pl->abl & (FA_ABL_FP32_PV | FA_ABL_FP32_O)) != 0;
    sf_env *e = r->env;

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        const uint32_t *srow = w->s + ri * pl->nk + c0;
        uint16_t *pb = w->pb + ri * bw;
        uint32_t mt, mnew, acc32, bs;

        /* block_row_maxes = amax; the STABLE branch; torch.maximum */
        mt = fa_fix_max(pl, srow, bw, row_max(srow, bw), e);
        mnew = fa_max(mt, w->m[ri]);
        /* exp_weights = exp(S - new_max), both BF16 */
        for (size_t t = 0; t < bw; t++)
            pb[t] =
                fa_bf16(fa_exp(pl, fa_rbf(fa_sub(srow[t], mnew, e), e)), e);
        /* block_row_sums = sum(-1).clamp(min=1e-10): FP32 accumulation,
           BF16 result, then the clamp (float max, BF16) */
        acc32 = fa_wide(pb[0]);
        for (size_t t = 1; t < bw; t++)
            acc32 = fa_add(acc32, fa_wide(pb[t]), e);
        bs = fa_rbf(acc32, e);
        if (fa_lt(bs, F32_CLAMP_MIN))
            bs = fa_rbf(F32_CLAMP_MIN, e);
        /* exp_row_max_diff = exp(row_maxes - new_row_maxes) */
        w->alpha[ri] =
            fa_rbf(fa_exp(pl, fa_rbf(fa_sub(w->m[ri], mnew, e), e)), e);
        /* new_row_sums = exp_row_max_diff * row_sums + block_row_sums */
        w->l[ri] = fa_rbf(
            fa_add(fa_rbf(fa_mul(w->alpha[ri], w->l[ri], e), e), bs, e), e);
        w->m[ri] = mnew;
        capture_p(r, i, c0, bw, bw, NULL, pb);
    }
    /* exp_values = einsum(P~, V): FP32 accumulation, BF16 output */
    chunk_pv(r, nr, &sf_format_bf16, w->pb, c0, bw, NULL, w->tmp);
    for (size_t ri = 0; ri < nr; ri++) {
        uint32_t *acc = w->acc + ri * pl->d, *ev = w->tmp + ri * pl->d;
        for (size_t col = 0; col < pl->d; col++) {
            sf_env *ce = col_env(r, col);
            /* oc.mul_(exp_row_max_diff).add_(exp_values) */
            if (keep32) {
                acc[col] = fa_mul(acc[col], w->alpha[ri], ce);
                acc[col] = fa_add(acc[col], ev[col], ce);
            } else {
                uint32_t evb = fa_rbf(ev[col], ce);
                acc[col] = fa_rbf(fa_mul(acc[col], w->alpha[ri], ce), ce);
                acc[col] = fa_rbf(fa_add(acc[col], evb, ce), ce);
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * fa2: the FlashAttention-2 kernel (softmax_rescale_o, UNFUSE_FMA).
 *--------------------------------------------------------------------------*/
static void
block_fa2(fwd_run *r, size_t i0, size_t nr, size_t c0, size_t bw, bool first)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    sf_env *e = r->env;
    bool p32 = (pl->abl & FA_ABL_FP32_P) != 0;

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, vis = fa_visible(pl, i);
        size_t nv = vis <= c0 ? 0 : vis - c0 < bw ? vis - c0 : bw;
        const uint32_t *srow = w->s + ri * pl->nk + c0;
        uint32_t *part = w->part + 4 * ri, *acc = w->acc + ri * pl->d;
        uint32_t *pf = w->pf + ri * bw;
        uint16_t *pb = w->pb + ri * bw;
        uint32_t mx = row_max(srow, bw), mt = mx, mnew, ms, sc = FA_F32_ONE;
        bool fresh[4] = {first, first, first, first};
        /* after a rescale, nvcc contracts a partial's product with the
           rescale factor and its first addition of the block into one
           FFMA (measured: bit-equal to PyTorch's flash kernel) */
        bool fz = !first && pl->rowsum_fma;
        bool fuse[4] = {fz, fz, fz, fz};

        if (nv > 0)
            mt = fa_fix_max(pl, srow, nv, mx, e);
        mnew = first ? mt : fa_max(w->m[ri], mt);
        if (!first) {
            /* Check_inf: a row still all -Inf rescales against 0 */
            uint32_t cur = mnew == FA_F32_NEG_INF ? FA_F32_ZERO : mnew;
            sc = fa_exp(pl,
                        fa_mul(fa_sub(w->m[ri], cur, e), pl->scale_log2, e));
            if (!pl->rowsum_fma)
                for (int k = 0; k < 4; k++)
                    part[k] = fa_mul(part[k], sc, e);
            for (size_t col = 0; col < pl->d; col++)
                acc[col] = fa_mul(acc[col], sc, col_env(r, col));
        }
        /* max_scaled; p = exp2(RN(s scale_log2) - max_scaled) */
        ms = mnew == FA_F32_NEG_INF ? FA_F32_ZERO
                                    : fa_mul(mnew, pl->scale_log2, e);
        for (size_t t = 0; t < bw; t++) {
            /* thread t' = (t mod 8) / 2 of the quad owns columns
               8n + 2t', 8n + 2t' + 1 and adds them in that order */
            int k = (int)((t & 7) >> 1);
            uint32_t p =
                fa_exp(pl, fa_sub(fa_mul(srow[t], pl->scale_log2, e), ms, e));
            pf[t] = p;
            if (!p32)
                pb[t] = fa_bf16(p, e);
            if (fresh[k]) {
                part[k] = p;
                fresh[k] = false;
            } else if (fuse[k]) {
                part[k] = fa_fma(part[k], sc, p, e);
                fuse[k] = false;
            } else {
                part[k] = fa_add(part[k], p, e);
            }
        }
        /* a partial that got no column of this block is only rescaled */
        for (int k = 0; k < 4; k++)
            if (fuse[k])
                part[k] = fa_mul(part[k], sc, e);
        w->m[ri] = mnew;
        capture_p(r, i, c0, bw, bw, p32 ? pf : NULL, pb);
    }
    /* O~ += P~(BF16) V through the MMA chain, from 0 for the first
       block (fp32-p: P~ in FP32) */
    if (p32)
        chunk_pv(r, nr, &sf_format_f32, w->pf, c0, bw, first ? NULL : w->acc,
                 w->acc);
    else
        chunk_pv(r, nr, &sf_format_bf16, w->pb, c0, bw, first ? NULL : w->acc,
                 w->acc);
}

/* fa2's l: the quad all-reduce (s0 + s2) + (s1 + s3). */
static uint32_t
quad_sum(const uint32_t *part, sf_env *env)
{
    return fa_add(fa_add(part[0], part[2], env), fa_add(part[1], part[3], env),
                  env);
}

/*----------------------------------------------------------------------------
 * A chunk: rows I0 .. I0+NR-1 of query block MB.
 *--------------------------------------------------------------------------*/
static void
fwd_chunk(fwd_run *r, size_t mb, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    bool fa2 = pl->policy == FA_POLICY_FA2;
    bool o32 = (pl->abl & (FA_ABL_FP32_O | FA_ABL_FP32_OCAST)) != 0;
    size_t nvb = fa2 ? fa2_fwd_blocks(pl, mb) : pl->tc;
    fa_capture *cap = writing(r) ? r->cap : NULL;
    sf_env scratch = SF_ENV_IEEE;

    fwd_scores(r, i0, nr);
    for (size_t ri = 0; ri < nr; ri++) {
        w->m[ri] = pl->policy == FA_POLICY_REPO ? FA_F32_BF16_NEG_MAX
                                                : FA_F32_NEG_INF;
        w->l[ri] = FA_F32_ZERO;
        w->started[ri] = 0;
        for (size_t k = 0; k < 4; k++)
            w->part[4 * ri + k] = FA_F32_ZERO;
        for (size_t col = 0; col < pl->d; col++)
            w->acc[ri * pl->d + col] = FA_F32_ZERO;
    }

    for (size_t vi = 0; vi < nvb; vi++) {
        size_t jb = pl->order == FA_ORDER_REVERSE ? nvb - 1 - vi : vi;
        size_t c0 = jb * pl->bc;
        size_t bw = pl->nk - c0 < pl->bc ? pl->nk - c0 : pl->bc;

        switch (pl->policy) {
        case FA_POLICY_REPO:
            block_repo(r, i0, nr, c0, bw);
            break;
        case FA_POLICY_FA2:
            block_fa2(r, i0, nr, c0, bw, vi == 0);
            break;
        default:
            block_fp(r, i0, nr, c0, bw);
            break;
        }
        if (cap != NULL && (cap->m != NULL || cap->l != NULL))
            for (size_t ri = 0; ri < nr; ri++) {
                size_t x = block_index(r, i0 + ri, vi);
                if (cap->m != NULL)
                    cap->m[x] = w->m[ri];
                if (cap->l != NULL)
                    cap->l[x] =
                        fa2 ? quad_sum(w->part + 4 * ri, &scratch) : w->l[ri];
            }
    }
    if (cap != NULL && cap->p != NULL && nvb < pl->tc)
        /* fa2: the blocks the kernel skips (masked for the whole query
           block) */
        for (size_t ri = 0; ri < nr; ri++)
            for (size_t j = nvb * pl->bc; j < pl->nk; j++)
                cap->p[(r->head * pl->nq + i0 + ri) * pl->nk + j] = 0;
    if (cap != NULL && (cap->m != NULL || cap->l != NULL))
        for (size_t ri = 0; ri < nr; ri++)
            for (size_t vi = nvb; vi < pl->tc; vi++) {
                size_t x = block_index(r, i0 + ri, vi);
                if (cap->m != NULL)
                    cap->m[x] = w->m[ri];
                if (cap->l != NULL)
                    cap->l[x] =
                        fa2 ? quad_sum(w->part + 4 * ri, &scratch) : w->l[ri];
            }

    /* O = O~ / l and LSE */
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        uint32_t *acc = w->acc + ri * pl->d;
        uint32_t *orow = r->o + (r->head * pl->nq + i) * pl->d;
        uint32_t lse = FA_F32_NEG_INF;
        uint32_t *out = writing(r) ? orow : NULL;
        uint32_t l = w->l[ri];

        if (cap != NULL && cap->obar != NULL)
            memcpy(cap->obar + (r->head * pl->nq + i) * pl->d, acc,
                   pl->d * sizeof *acc);
        switch (pl->policy) {
        case FA_POLICY_FA2:
            if (nvb == 0) {
                /* the kernel's early exit: O = 0, LSE = +Inf */
                for (size_t col = 0; col < pl->d && out; col++)
                    out[col] = FA_F32_ZERO;
                lse = FA_F32_INF;
                break;
            }
            l = quad_sum(w->part + 4 * ri, r->env);
            {
                bool zn = fa_is_zero(l) || fa_is_nan(l);
                uint32_t inv = zn ? FA_F32_ONE : fa_div(FA_F32_ONE, l, r->env);
                for (size_t col = 0; col < pl->d; col++) {
                    sf_env *ce = col_env(r, col);
                    uint32_t x = fa_mul(acc[col], inv, ce);
                    if (!o32)
                        x = fa_rbf(x, ce);
                    if (out)
                        out[col] = x;
                }
                /* row_max * softmax_scale + __logf(sum): nvcc contracts it
                   into one FFMA */
                lse = zn ? FA_F32_INF
                         : fa_fma(w->m[ri], pl->scale, fa_logf_cr(l),
                                  lse_env(r));
            }
            break;
        case FA_POLICY_REPO:
            for (size_t col = 0; col < pl->d; col++) {
                sf_env *ce = col_env(r, col);
                uint32_t x = fa_div(acc[col], l, ce);
                if (!o32)
                    x = fa_rbf(x, ce);
                if (out)
                    out[col] = x;
            }
            /* lse = all_row_sums.log() + all_row_maxes */
            lse = fa_rbf(fa_add(fa_rbf(fa_logf_cr(l), lse_env(r)), w->m[ri],
                                lse_env(r)),
                         lse_env(r));
            break;
        default:
            if (!w->started[ri]) {
                /* no visible key: no softmax; O = 0, LSE = log 0 */
                for (size_t col = 0; col < pl->d && out; col++)
                    out[col] = FA_F32_ZERO;
                lse = FA_F32_NEG_INF;
                break;
            }
            for (size_t col = 0; col < pl->d; col++) {
                sf_env *ce = col_env(r, col);
                uint32_t x = fa_div(acc[col], l, ce);
                if (pl->policy == FA_POLICY_PAPER_EQ4 && !o32)
                    x = fa_rbf(x, ce);
                if (out)
                    out[col] = x;
            }
            lse = fa_add(w->m[ri], fa_logf_cr(l), lse_env(r));
            break;
        }
        if (writing(r))
            r->lse[r->head * pl->nq + i] = lse;
    }
}

/*----------------------------------------------------------------------------
 * The forward.
 *--------------------------------------------------------------------------*/
int
fa_forward(const fa_config *cfg, const uint16_t *q, const uint16_t *k,
           const uint16_t *v, uint32_t *o, uint32_t *lse, fa_capture *cap,
           sf_env *env)
{
    fa_plan pl;
    fa_ws ws = {NULL, 0, false};
    fwd_ws w;
    fwd_run run;
    size_t rows;

    if (fa_plan_init(cfg, &pl) != NULL || fa_plan_capture_check(&pl, cap)
        || q == NULL || k == NULL || v == NULL || o == NULL || lse == NULL
        || env == NULL)
        return -1;
    ws.base = malloc(fa_forward_bytes(&pl));
    if (ws.base == NULL)
        return -1;
    fwd_layout(&pl, &ws, &w);
    rows = chunk_rows(&pl);

    memset(&run, 0, sizeof run);
    run.pl = &pl;
    run.w = &w;
    run.o = o;
    run.lse = lse;
    run.cap = cap;
    run.env = env;
    run.quiet = env;
    run.tcol = -1;
    for (size_t hd = 0; hd < pl.batch * pl.heads; hd++) {
        size_t nd = pl.nq * pl.d, kd = pl.nk * pl.d;
        run.head = hd;
        run.q = q + hd * nd;
        run.k = k + hd * kd;
        run.v = v + hd * kd;
        for (size_t j = 0; j < pl.nk; j++)
            for (size_t c = 0; c < pl.d; c++)
                w.kt[c * pl.nk + j] = run.k[j * pl.d + c];
        for (size_t mb = 0; mb * pl.br < pl.nq; mb++) {
            size_t end = (mb + 1) * pl.br < pl.nq ? (mb + 1) * pl.br : pl.nq;
            for (size_t i0 = mb * pl.br; i0 < end; i0 += rows)
                fwd_chunk(&run, mb, i0, end - i0 < rows ? end - i0 : rows);
        }
    }

    /* The traced element: its row once more, the sink in a private
       environment that sees only the roundings feeding O[row, col]. */
    if (cap != NULL && cap->trace) {
        sf_env tenv = *env, quiet = *env;
        size_t hd = cap->trace_b * pl.heads + cap->trace_h;
        size_t nd = pl.nq * pl.d, kd = pl.nk * pl.d;

        tenv.events = cap->events;
        tenv.flags = 0;
        quiet.events = NULL;
        quiet.flags = 0;
        run.env = &tenv;
        run.quiet = &quiet;
        run.tcol = (long)cap->trace_col;
        run.head = hd;
        run.q = q + hd * nd;
        run.k = k + hd * kd;
        run.v = v + hd * kd;
        fwd_chunk(&run, cap->trace_row / pl.br, cap->trace_row, 1);
    }
    free(ws.base);
    return 0;
}
