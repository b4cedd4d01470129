/* forward -- the reference flash-attention forward pass: for each head
   and chunk of query rows the scores, the online softmax over the KV
   blocks, the normalisation and LSE, or the splits and their combine
   (the steps in forward_tile.c, forward_combine.c; rounding maps:
   doc/attention.md) */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention/fwd_local.h"

static size_t
chunk_rows(const fa_plan *pl)
{
    return pl->br < FA_ROW_CHUNK ? pl->br : FA_ROW_CHUNK;
}

/* The split-KV combine reads each split's m and l, not its LSE. */
static bool
keeps_m_l(const fa_plan *pl)
{
    return pl->k.combine == FA_COMBINE_LEAN
           || pl->k.combine == FA_COMBINE_FLEX_DECODE;
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
    f->ps = fa_ws_take(w, fa_mul_size(r, pl->bc, o), sizeof(uint32_t));
    f->acc = fa_ws_take(w, fa_mul_size(r, pl->d, o), sizeof(uint32_t));
    f->tmp = fa_ws_take(w, fa_mul_size(r, pl->d, o), sizeof(uint32_t));
    f->m = fa_ws_take(w, r, sizeof(uint32_t));
    f->l = fa_ws_take(w, r, sizeof(uint32_t));
    f->part = fa_ws_take(w, fa_mul_size(r, 4, o), sizeof(uint32_t));
    f->alpha = fa_ws_take(w, r, sizeof(uint32_t));
    f->started = fa_ws_take(w, r, 1);
    f->init = fa_ws_take(w, r, 1);
    f->qs = fa_ws_take(w, pl->k.score_prescale ? fa_mul_size(r, pl->d, o) : 0,
                       sizeof(uint32_t));
    f->kts = fa_ws_take(
        w, pl->k.score_prescale ? fa_mul_size(pl->d, pl->nk, o) : 0,
        sizeof(uint32_t));
    f->osplit = fa_ws_take(
        w,
        pl->splits > 1 ? fa_mul_size(fa_mul_size(pl->splits, r, o), pl->d, o)
                       : 0,
        sizeof(uint32_t));
    f->lsplit =
        fa_ws_take(w, pl->splits > 1 ? fa_mul_size(pl->splits, r, o) : 0,
                   sizeof(uint32_t));
    /* the combine's row of O; flex-decode's weights and one column of
       its programs' O~ after it */
    f->orow = fa_ws_take(w,
                         pl->splits > 1 ? pl->d + 2 * pl->splits : 0,
                         sizeof(uint32_t));
    f->msplit = fa_ws_take(w,
                           pl->splits > 1 && keeps_m_l(pl)
                               ? fa_mul_size(pl->splits, r, o)
                               : 0,
                           sizeof(uint32_t));
    f->lpart = fa_ws_take(w,
                          pl->splits > 1 && keeps_m_l(pl)
                              ? fa_mul_size(pl->splits, r, o)
                              : 0,
                          sizeof(uint32_t));
    f->wacc = fa_ws_take(
        w, fa_mul_size(fa_mul_size(fwd_acc_warps(pl), r, o), pl->d, o),
        sizeof(uint32_t));
    f->scalev = fa_ws_take(w, pl->k.score_log2 ? pl->bc : 0,
                           sizeof(uint32_t));
    f->sl2v = fa_ws_take(w, pl->k.exp_arg == FA_ARG_SCALE_FMA ? pl->bc : 0,
                         sizeof(uint32_t));
    f->negms = fa_ws_take(w, pl->k.exp_arg == FA_ARG_SCALE_FMA ? pl->bc : 0,
                          sizeof(uint32_t));
    f->blocks = fa_ws_take(w, pl->k.block_sparse ? pl->tc : 0, sizeof(size_t));
    f->partial = fa_ws_take(w, pl->k.block_sparse ? pl->tc : 0, 1);
    f->visit = fa_ws_take(w, pl->k.block_sparse ? pl->tc : 0, 1);
    f->cls = fa_ws_take(
        w, pl->k.combine == FA_COMBINE_FLEX_DECODE ? pl->tc : 0, 1);
}

size_t
fa_forward_bytes(const fa_plan *pl)
{
    fa_ws w = {NULL, 0, false};
    fwd_ws f;

    fwd_layout(pl, &w, &f);
    return w.overflow ? SIZE_MAX : w.used;
}

/* Index into a [B,H,Nq,Tc] capture. */
static size_t
block_index(const fwd_run *r, size_t i, size_t vi)
{
    return (r->head * r->pl->nq + i) * r->pl->tc + vi;
}

/* The quad all-reduce of the partials: (s0 + s2) + (s1 + s3) ("quad"),
   (s0 + s1) + (s2 + s3) ("quad-block"). */
static uint32_t
quad_sum(const fa_kernel *k, const uint32_t *part, sf_env *env)
{
    if (k->rowsum == FA_ROWSUM_QUAD_BLOCK)
        return fa_add(fa_add(part[0], part[1], env),
                      fa_add(part[2], part[3], env), env);
    return fa_add(fa_add(part[0], part[2], env), fa_add(part[1], part[3], env),
                  env);
}

/* The row sum l of row RI as the kernel holds it. */
static uint32_t
row_l(const fwd_run *r, size_t ri, sf_env *env)
{
    return r->pl->k.rowsum == FA_ROWSUM_QUAD
                   || r->pl->k.rowsum == FA_ROWSUM_QUAD_BLOCK
               ? quad_sum(&r->pl->k, r->w->part + 4 * ri, env)
               : r->w->l[ri];
}

/* The natural log of the LSE (M: the description's log). */
uint32_t
fa_fwd_log(const fa_plan *pl, fa_kernel_log m, uint32_t x)
{
    switch (m) {
    case FA_KLOG_LG2:
        return fa_log_eval(pl->logm, x);
    case FA_KLOG_CUDA:
        return fa_cuda_logf(x);
    default:
        return fa_logf_cr(x);
    }
}

/* The base-2 log of L for decode_lse "lg2-fma": the log model's table
   (the H200's lg2.approx), else log2 in double rounded to FP32. */
static uint32_t
lg2_of(const fa_plan *pl, uint32_t x)
{
    if (pl->logm != NULL && pl->logm->table != NULL)
        return fa_lg2_table_eval(pl->logm->table, x);
    return sf_host_float_bits((float)log2((double)sf_host_float(x)));
}

/* decode_lse "lg2-fma": fma(lg2(L), RN32(ln 2), RN32(M RN32(ln 2))), M
   in the log2 domain. */
uint32_t
fa_fwd_lse_lg2_fma(const fa_plan *pl, uint32_t m2, uint32_t l, sf_env *e)
{
    return fa_fma(lg2_of(pl, l), F32_LN2, fa_mul(m2, F32_LN2, e), e);
}

/* 1 / l of the normalisation: the reciprocal model's for
   "reciprocal-approx", else RN32(1 / l). */
uint32_t
fa_fwd_inv(const fa_plan *pl, uint32_t l, sf_env *e)
{
    if (pl->k.normalize == FA_NORM_RCP_APPROX && pl->rcpm != NULL)
        return fa_rcp_eval(pl->rcpm, l);
    return fa_div(FA_F32_ONE, l, e);
}

/* The lg2 table the LSEs of the chunk read, or NULL. */
static const fa_lg2_table *
lse_table(const fa_plan *pl)
{
    if (pl->logm == NULL || pl->logm->kind != FA_LOG_LG2
        || !(pl->k.log == FA_KLOG_LG2 || fwd_lse_is_decode(pl)))
        return NULL;
    return pl->logm->table;
}

/* The lg2 table look-ups of the chunk's LSEs are a few dependent cache
   misses each in tables of tens of megabytes; fwd_range asks for their
   lines LSE_AHEAD rows ahead (fa_lg2_table_prefetch's stage 0; stage 1
   half as far ahead), so that they overlap with the rows between. */
#define LSE_AHEAD 4

/* Before the LSEs of rows 0 .. NR-1 of the chunk, when they read the lg2
   table T: each row's l into L, and the first rows' lines asked for.  l
   is computed here in a copy of the environment, so that flags, events
   and random bits stay the forward's own; only the memory system sees
   it. */
static void
lse_prefetch(const fwd_run *r, const fa_lg2_table *t, size_t nr, uint32_t *l)
{
    sf_env q = *r->env;

    q.events = NULL;
    for (size_t ri = 0; ri < nr; ri++)
        l[ri] = r->w->started[ri] ? row_l(r, ri, &q) : FA_F32_ZERO;
    for (size_t ri = 0; ri < nr && ri < LSE_AHEAD; ri++)
        fa_lg2_table_prefetch(t, l[ri], 0);
    for (size_t ri = 0; ri < nr && ri < LSE_AHEAD / 2; ri++)
        fa_lg2_table_prefetch(t, l[ri], 1);
}

/*----------------------------------------------------------------------------
 * A chunk: rows I0 .. I0+NR-1 of query block MB, KV blocks LO .. HI-1
 * (their visiting order from the description).  SPLIT < 0: the whole
 * pass, writing O and LSE; else the split's partial O (FP32, normalised
 * by its own l) and partial LSE into w->osplit, w->lsplit ("lean": O~
 * unnormalised, its m and l into w->msplit, w->lpart).  STRIDE: the step
 * between the blocks visited (1, or the split count for "lean").
 *--------------------------------------------------------------------------*/
/* The state of rows 0 .. NR-1 of the chunk before their first block:
   m the description's m_init, l, the partials and O~ zero, no key
   seen. */
static void
range_start(fwd_run *r, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;

    for (size_t ri = 0; ri < nr; ri++) {
        w->m[ri] = fa_mask_bits(pl->k.m_init);
        w->l[ri] = FA_F32_ZERO;
        w->started[ri] = 0;
        for (size_t q = 0; q < 4; q++)
            w->part[4 * ri + q] = FA_F32_ZERO;
        for (size_t col = 0; col < pl->d; col++)
            w->acc[ri * pl->d + col] = FA_F32_ZERO;
    }
}

/* The m and l captures of rows I0 .. I0+NR-1 at visits V0 .. V1-1, from
   the rows' present state (l in the environment SCRATCH). */
static void
capture_m_l(fwd_run *r, size_t i0, size_t nr, size_t v0, size_t v1,
            sf_env *scratch)
{
    fa_capture *cap = r->cap;

    for (size_t ri = 0; ri < nr; ri++)
        for (size_t vi = v0; vi < v1; vi++) {
            size_t x = block_index(r, i0 + ri, vi);
            if (cap->m != NULL)
                cap->m[x] = r->w->m[ri];
            if (cap->l != NULL)
                cap->l[x] = row_l(r, ri, scratch);
        }
}

/* The S and P~ captures of rows I0 .. I0+NR-1 before their blocks are
   visited: the mask value and 0 for every key, so that a key no block,
   program or split visits holds them (the visited keys are written over
   as they are computed). */
static void
capture_clear(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fa_capture *cap = fwd_writing(r) ? r->cap : NULL;
    size_t x0 = (r->head * pl->nq + i0) * pl->nk;
    uint32_t mv = fa_mask_bits(pl->k.mask);

    if (cap != NULL && cap->s != NULL)
        for (size_t x = 0; x < nr * pl->nk; x++)
            cap->s[x0 + x] = mv;
    if (cap != NULL && cap->p != NULL)
        memset(cap->p + x0, 0, nr * pl->nk * sizeof *cap->p);
}

/* "lean" and flex-decode, split SPLIT: each row's O~ unnormalised, its m
   and l kept for the combine (m = -Inf, l = 0 for a row without a
   key). */
static void
range_keep_m_l(fwd_run *r, size_t nr, size_t split)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;

    for (size_t ri = 0; ri < nr; ri++) {
        size_t x = split * nr + ri;
        memcpy(fwd_osplit_row(r, ri, split), w->acc + ri * pl->d,
               pl->d * sizeof *w->acc);
        w->msplit[x] = w->started[ri] ? w->m[ri] : FA_F32_NEG_INF;
        w->lpart[x] = w->started[ri] ? row_l(r, ri, r->env) : FA_F32_ZERO;
    }
}

/* O = O~ / l of row RI into OUT (NULL: computed, not stored; SPLIT < 0:
   rounded to the output format), by the description's normalisation:
   none left for "p-divide" (P~ was divided by l before the product),
   O~ times 1 / l for the reciprocals (1 for ZN: l is zero or NaN), else
   O~ / l. */
static void
row_normalise(fwd_run *r, size_t ri, uint32_t l, bool zn, long split,
              uint32_t *out)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    const uint32_t *acc = r->w->acc + ri * pl->d;
    bool pdiv = k->normalize == FA_NORM_P_DIVIDE;
    bool rcp = k->normalize == FA_NORM_RECIPROCAL
               || k->normalize == FA_NORM_RCP_APPROX;
    uint32_t inv = rcp && !zn ? fa_fwd_inv(pl, l, r->env) : FA_F32_ONE;

    for (size_t col = 0; col < pl->d; col++) {
        sf_env *ce = fwd_col_env(r, col);
        uint32_t x = pdiv  ? acc[col]
                     : rcp ? fa_mul(acc[col], inv, ce)
                           : fa_div(acc[col], l, ce);
        if (split < 0)
            x = fwd_round(k->o, x, ce);
        if (out)
            out[col] = x;
    }
}

/* The LSE of row RI (row sum L, ZN: L is zero or NaN) by the
   description's lse; *LSE2 the kernel's base-2 LSE where it forms one
   (lse "log2-ln2"). */
static uint32_t
row_lse(fwd_run *r, size_t ri, uint32_t l, bool zn, long split, uint32_t *lse2)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    uint32_t m = r->w->m[ri];
    uint32_t empty = split >= 0 ? FA_F32_NEG_INF : FA_F32_INF;
    /* the split's LSE feeds O through the combine */
    sf_env *le = split >= 0 ? r->env : fwd_lse_env(r);

    if (fwd_lse_is_decode(pl))
        return zn ? empty
                  : fa_fwd_lse_lg2_fma(pl, fa_mul(m, pl->scale_log2, le), l,
                                       le);
    if (k->lse == FA_LSE_LOG2_LN2) {
        /* m_i + log2(l_i) in the kernel, then times math.log(2) */
        uint32_t lg = k->log == FA_KLOG_CUDA_LOG2_FTZ ? fa_cuda_log2f_ftz(l)
                                                      : lg2_of(pl, l);
        *lse2 = fa_add(fa_mul(m, pl->scale_log2, le), lg, le);
        return fa_mul(*lse2, F32_LN2, le);
    }
    if (k->lse == FA_LSE_LOG2E_DIV)
        /* RN32(mi / log2e) + log(s_prime), mi = RN32(m log2e) */
        return zn ? FA_F32_INF
                  : fa_add(
                      fa_div(fa_mul(m, FA_F32_LOG2E, le), FA_F32_LOG2E, le),
                      fa_fwd_log(pl, k->log, l), le);
    if (k->lse == FA_LSE_FMA_SCALE)
        /* row_max * softmax_scale + __logf(sum): nvcc contracts it into
           one FFMA */
        return zn ? empty
                  : fa_fma(m, pl->scale, fa_fwd_log(pl, k->log, l), le);
    if (k->lse == FA_LSE_FMA_LN2)
        /* the log2-domain max times RN(ln 2), added to the natural log of
           l in one FFMA */
        return zn ? empty
                  : fa_fma(fa_mul(m, pl->scale_log2, le), F32_LN2,
                           fa_fwd_log(pl, k->log, l), le);
    return fwd_round(
        k->lse_fmt,
        fa_add(fwd_round(k->lse_fmt, fa_fwd_log(pl, k->log, l), le), m, le),
        le);
}

/* Row RI of the chunk after its last block: O into OUT (as
   row_normalise) and its LSE returned (*LSE2 as row_lse's). */
static uint32_t
row_finish(fwd_run *r, size_t ri, long split, uint32_t *out, uint32_t *lse2)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    uint32_t l, lse;
    bool zn;

    if (!r->w->started[ri]) {
        /* no key seen (no visible key, or no block visited: the kernel's
           early exit): O = 0 */
        for (size_t col = 0; col < pl->d && out; col++)
            out[col] = FA_F32_ZERO;
        return split >= 0         ? FA_F32_NEG_INF
               : k->empty_lse_pos ? FA_F32_INF
                                  : FA_F32_NEG_INF;
    }
    l = row_l(r, ri, r->env);
    if (k->lse == FA_LSE_LOG2_LN2 && fa_is_zero(l))
        /* every key masked: l_i = 1, so O = 0 and the LSE is m */
        l = FA_F32_ONE;
    zn = fa_is_zero(l) || fa_is_nan(l);
    row_normalise(r, ri, l, zn, split, out);
    lse = row_lse(r, ri, l, zn, split, lse2);
    if (zn && split < 0 && pl->mask != NULL && k->masked_lse == FA_MLSE_ZERO)
        /* every key masked */
        lse = FA_F32_ZERO;
    return lse;
}

/* Rows I0 .. I0+NR-1 after their last block: O and LSE written (SPLIT <
   0), or the split's partial O and LSE; the lg2 table's lines the LSEs
   read asked for ahead. */
static void
range_rows(fwd_run *r, size_t i0, size_t nr, long split)
{
    const fa_plan *pl = r->pl;
    fa_capture *cap = fwd_writing(r) ? r->cap : NULL;
    const fa_lg2_table *lt = nr <= FA_ROW_CHUNK ? lse_table(pl) : NULL;
    uint32_t lpre[FA_ROW_CHUNK];

    if (lt != NULL)
        lse_prefetch(r, lt, nr, lpre);
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, x = r->head * pl->nq + i;
        uint32_t *out = fwd_writing(r) ? r->o + x * pl->d : NULL;
        uint32_t lse, lse2 = FA_F32_NEG_INF;

        if (lt != NULL && ri + LSE_AHEAD < nr)
            fa_lg2_table_prefetch(lt, lpre[ri + LSE_AHEAD], 0);
        if (lt != NULL && ri + LSE_AHEAD / 2 < nr)
            fa_lg2_table_prefetch(lt, lpre[ri + LSE_AHEAD / 2], 1);
        if (split >= 0)
            out = fwd_osplit_row(r, ri, (size_t)split);
        if (split < 0 && cap != NULL && cap->obar != NULL)
            memcpy(cap->obar + x * pl->d, r->w->acc + ri * pl->d,
                   pl->d * sizeof *r->w->acc);
        lse = row_finish(r, ri, split, out, &lse2);
        if (split >= 0)
            r->w->lsplit[(size_t)split * nr + ri] = lse;
        else if (fwd_writing(r))
            r->lse[x] = lse;
        if (split < 0 && cap != NULL && cap->lse_kernel != NULL)
            cap->lse_kernel[x] = pl->k.lse == FA_LSE_LOG2_LN2 ? lse2 : lse;
    }
}

/* The chunk's rows over their KV blocks (the section's comment), then
   their results. */
static void
fwd_range(fwd_run *r, size_t i0, size_t nr, size_t lo, size_t hi, long split,
          size_t stride)
{
    const fa_plan *pl = r->pl;
    fa_capture *cap = fwd_writing(r) ? r->cap : NULL;
    bool cap_m_l = cap != NULL && (cap->m != NULL || cap->l != NULL);
    size_t nvb = hi > lo ? (hi - lo + stride - 1) / stride : 0;
    sf_env scratch = SF_ENV_IEEE;

    range_start(r, nr);
    for (size_t vi = 0; vi < nvb; vi++) {
        size_t x = lo + vi * stride;
        size_t jb = r->blocks != NULL               ? r->blocks[x]
                    : pl->order == FA_ORDER_REVERSE ? hi - 1 - vi
                                                    : x;
        size_t c0 = jb * pl->bc;
        size_t bw = pl->nk - c0 < pl->bc ? pl->nk - c0 : pl->bc;

        r->partial = r->blocks != NULL && r->block_partial[x];
        fa_fwd_block_step(r, i0, nr, c0, bw);
        if (cap_m_l)
            capture_m_l(r, i0, nr, vi, vi + 1, &scratch);
    }
    if (split < 0 && cap_m_l)
        /* the blocks not visited keep the last state */
        capture_m_l(r, i0, nr, nvb, pl->tc, &scratch);
    if (fwd_acc_warps(pl) > 0)
        for (size_t ri = 0; ri < nr; ri++)
            if (r->w->started[ri])
                fa_fwd_warps_reduce(r, ri);
    if (split >= 0 && keeps_m_l(pl))
        range_keep_m_l(r, nr, (size_t)split);
    else
        range_rows(r, i0, nr, split);
}

/* The N blocks of w->blocks (their flags in w->partial) become the ones
   fwd_range visits and fa_fwd_scores computes. */
static void
visit_listed(fwd_run *r, size_t n)
{
    fwd_ws *w = r->w;

    memset(w->visit, 0, r->pl->tc);
    for (size_t b = 0; b < n; b++)
        w->visit[w->blocks[b]] = 1;
    r->blocks = w->blocks;
    r->block_partial = w->partial;
}

/* Rows I0 .. I0+NR-1 of query block MB under flex_decoding: every
   program's tiles (fa_flex_decode_tiles), each program's m, l and O~
   kept, then the reductions that merge them. */
static void
fwd_chunk_decode(fwd_run *r, size_t mb, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;

    fa_flex_decode_classes(pl, r->head, mb, w->cls);
    capture_clear(r, i0, nr);
    for (size_t s = 0; s < pl->splits; s++) {
        size_t n = fa_flex_decode_tiles(pl, w->cls, s, w->blocks,
                                        w->partial);
        if (n > 0 || pl->splits == 1) {
            visit_listed(r, n);
            fa_fwd_scores(r, i0, nr);
        }
        if (pl->splits == 1) {
            /* one program: the reductions return its values (weight 1,
               L = l, O~ / L), as an unsplit forward forms them */
            fwd_range(r, i0, nr, 0, n, -1, 1);
            return;
        }
        /* a program without tiles keeps m = -inf, l = 0, O~ = 0 */
        fwd_range(r, i0, nr, 0, n, (long)s, 1);
    }
    fa_fwd_combine_flex(r, i0, nr);
}

/* Rows I0 .. I0+NR-1 of query block MB. */
static void
fwd_chunk(fwd_run *r, size_t mb, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    size_t nvb = fa_fwd_blocks(pl, mb, pl->br, pl->bc);

    if (pl->k.combine == FA_COMBINE_FLEX_DECODE) {
        fwd_chunk_decode(r, mb, i0, nr);
        return;
    }

    r->blocks = NULL;
    r->partial = false;
    capture_clear(r, i0, nr);
    if (pl->k.block_sparse) {
        /* the block mask's list (the same for every chunk of the query
           block) */
        nvb = fa_sparse_kv_blocks(pl, r->head, mb, r->w->blocks,
                                  r->w->partial);
        visit_listed(r, nvb);
    }
    fa_fwd_scores(r, i0, nr);
    if (r->log2_scores) {
        /* t = RN32(RN32(S scale) RN32(log2 e)), a masked key kept */
        uint32_t mv = fa_mask_bits(pl->k.mask);
        for (size_t x = 0; x < nr * pl->nk; x++)
            if (r->w->s[x] != mv)
                r->w->s[x] = fa_mul(fa_mul(r->w->s[x], pl->scale, r->env),
                                    FA_F32_LOG2E, r->env);
    }
    if (pl->splits <= 1) {
        fwd_range(r, i0, nr, 0, nvb, -1, 1);
        return;
    }
    for (size_t s = 0; s < pl->splits; s++) {
        /* n_blocks_per_split, the split's range, clipped by n_block_max */
        if (pl->k.combine == FA_COMBINE_LEAN) {
            /* the decode engine's CTA s: blocks s, s + S, ... */
            fwd_range(r, i0, nr, s, nvb, (long)s, pl->splits);
            continue;
        }
        size_t lo = s * pl->blocks_per_split;
        size_t hi = lo + pl->blocks_per_split;
        if (hi > nvb)
            hi = nvb;
        fwd_range(r, i0, nr, lo, hi > lo ? hi : lo, (long)s, 1);
    }
    if (pl->k.combine == FA_COMBINE_LEAN)
        fa_fwd_combine_lean(r, i0, nr);
    else
        fa_fwd_combine(r, i0, nr);
}

/* score_prescale: K^T of the head (K, Nk x d) times RN32(sqrt(scale)) in
   FP32. */
static void
prescale_k(const fa_plan *pl, fwd_ws *w, const uint16_t *k, sf_env *env)
{
    if (!pl->k.score_prescale)
        return;
    for (size_t j = 0; j < pl->nk; j++)
        for (size_t c = 0; c < pl->d; c++)
            w->kts[c * pl->nk + j] = fa_mul(fa_in_wide(pl->in_fmt, k[j * pl->d + c]),
                                            pl->sqrt_scale, env);
}

/*----------------------------------------------------------------------------
 * The forward.
 *--------------------------------------------------------------------------*/
/* R on head HD (b H + h) of Q (B H x Nq x d), K and V (B H x Nk x d). */
static void
run_head(fwd_run *r, size_t hd, const uint16_t *q, const uint16_t *k,
         const uint16_t *v)
{
    size_t nd = r->pl->nq * r->pl->d, kd = r->pl->nk * r->pl->d;

    r->head = hd;
    r->q = q + hd * nd;
    r->k = k + hd * kd;
    r->v = v + hd * kd;
}

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
    for (size_t j = 0; pl.k.score_log2 && j < pl.bc; j++)
        w.scalev[j] = pl.scale;
    for (size_t j = 0; pl.k.exp_arg == FA_ARG_SCALE_FMA && j < pl.bc; j++)
        w.sl2v[j] = pl.scale_log2;

    memset(&run, 0, sizeof run);
    run.pl = &pl;
    run.w = &w;
    run.o = o;
    run.lse = lse;
    run.cap = cap;
    run.env = env;
    run.quiet = env;
    run.tcol = -1;
    run.log2_scores = fa_plan_decode_log2(cfg, &pl);
    for (size_t hd = 0; hd < pl.batch * pl.heads; hd++) {
        run_head(&run, hd, q, k, v);
        /* K^T whole, unless fa_fwd_scores builds it block by block (one
           chunk of query rows: decode and short queries; never with
           prescaled scores, which read K^T's prescaled copy) */
        run.kt_lazy = pl.nq <= rows && !pl.k.score_prescale;
        if (!run.kt_lazy)
            fa_fwd_transpose(&pl, run.k, w.kt, pl.nk, 0, pl.nk);
        prescale_k(&pl, &w, run.k, env);
        for (size_t mb = 0; mb * pl.br < pl.nq; mb++) {
            size_t end = (mb + 1) * pl.br < pl.nq ? (mb + 1) * pl.br : pl.nq;
            for (size_t i0 = mb * pl.br; i0 < end; i0 += rows)
                fwd_chunk(&run, mb, i0, end - i0 < rows ? end - i0 : rows);
        }
    }

    /* The traced element: its row once more, the sink in a private
       environment that sees only the roundings feeding O[row, col]. */
    if (cap != NULL && cap->trace) {
        sf_env tenv, quiet;

        run_head(&run, fa_trace_envs(&pl, cap, env, &tenv, &quiet), q, k, v);
        run.env = &tenv;
        run.quiet = &quiet;
        run.tcol = (long)cap->trace_col;
        prescale_k(&pl, &w, run.k, &quiet);
        fwd_chunk(&run, cap->trace_row / pl.br, cap->trace_row, 1);
    }
    free(ws.base);
    return 0;
}
