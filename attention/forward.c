/* forward -- the reference flash-attention forward pass: scores, the
   online softmax over KV blocks, P~V and the normalisation, for each
   policy (rounding maps: doc/attention.md) */
#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention/fa_local.h"

/* The RN_f32(1e-10) of the repo's clamp of the block row sum. */
#define F32_CLAMP_MIN 0x2EDBE6FFu
#define F32_LN2 0x3F317218u /* RN32(ln 2) */

/*----------------------------------------------------------------------------
 * Working memory: per head K^T, per chunk of rows the scores, P~, the
 * accumulator and the row state.
 *--------------------------------------------------------------------------*/
typedef struct fwd_ws
{
    uint16_t *kt;           /* K transposed: d x Nk, row-major; or (one
                               chunk of rows per head) by KV blocks, block
                               jb (keys c0 .. c0+bw-1, c0 = jb Bc) d x bw
                               from kt + c0 d */
    uint32_t *s;            /* R x Nk: scores of the chunk's rows */
    uint16_t *pb;           /* R x Bc: P~ in a 16-bit format (rows of the
                               block's width) */
    uint32_t *pf;           /* R x Bc: P~ before its rounding, FP32 */
    uint32_t *ps;           /* R x Bc: P~ as stored, FP32 bits */
    uint32_t *acc;          /* R x d: O~ (or the repo's oc) */
    uint32_t *tmp;          /* R x d: a block's P~V */
    uint32_t *m;            /* R: running max */
    uint32_t *l;            /* R: running row sum (fa2: unused) */
    uint32_t *part;         /* 4R: fa2's per-thread row-sum partials */
    uint32_t *alpha;        /* R: a block's rescale factor */
    unsigned char *started; /* R: the row has seen an unmasked key */
    unsigned char *init;    /* R: this block initialises the row */
    uint32_t *qs;           /* R x d: score_prescale's FP32 Q rows */
    uint32_t *kts;          /* d x Nk: score_prescale's FP32 K^T */
    uint32_t *osplit;       /* R x splits x d: split-KV partial O (FP32) */
    uint32_t *lsplit;       /* splits x R: split-KV partial LSE */
    uint32_t *orow;         /* d: a row of the split combine's O (FP32) */
    uint32_t *msplit;       /* splits x R: "lean": the split's max */
    uint32_t *lpart;        /* splits x R: "lean": the split's l */
    uint32_t *wacc;         /* R x warps x d: decode_acc_update "warps":
                               each warp's O~ */
    uint32_t *scalev;       /* bc: score_log2: the scale, repeated (the
                               array product's second operand) */
    uint32_t *sl2v;         /* bc: exp_arg scale-fma: scale log2 e,
                               repeated, and -max_scaled of the row */
    uint32_t *negms;
    size_t *blocks;         /* tc: block_sparse: the query block's KV
                               blocks in visiting order */
    unsigned char *partial; /* tc: of each, whether it is partial */
    unsigned char *cls;     /* tc: flex-decode: the sparse KV blocks'
                               classes (fa_flex_decode_classes) */
    unsigned char *visit;   /* tc: block_sparse: whether block j is in
                               the list (its scores are computed) */
} fwd_ws;

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

static fa_acc_update acc_update_of(const fa_plan *pl);

/* decode_acc_update "warps": the warps, each with its own O~, that split
   a block's keys (decode_rowsum_span_wide each); else 0. */
static size_t
acc_warps(const fa_plan *pl)
{
    size_t span = pl->k.decode_rowsum_span_wide;

    if (acc_update_of(pl) != FA_ACC_WARPS || span == 0)
        return 0;
    return (pl->bc + span - 1) / span;
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
        w, fa_mul_size(fa_mul_size(acc_warps(pl), r, o), pl->d, o),
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
    bool kt_lazy;              /* K^T transposed by fwd_scores, block by
                                  block (else once per head) */
    const size_t *blocks;      /* the KV blocks fwd_range visits (NULL:
                                  its range) */
    const unsigned char *block_partial; /* with blocks: the block mask
                                           applies to block i */
    bool partial;              /* the block being visited is partial */
    bool log2_scores;          /* decode_log2_scores: the scores taken to
                                  the log2 domain after they are formed */
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

/* The kernel's score from the FP32 dot product RAW of q_i and k_j: the
   dot rounded to score_dot, times the scale (unless the kernel keeps S
   unscaled), rounded to the score format. */
static uint32_t
score_of(const fa_plan *pl, uint32_t raw, sf_env *env)
{
    if (!pl->k.score_scaled || pl->k.score_prescale)
        return raw;
    return fa_round(
        pl->k.score,
        fa_mul(fa_round(pl->k.score_dot, raw, env), pl->scale, env), env);
}

#if defined(__SSE2__) && defined(__GNUC__)
#define FA_HAVE_SSE2 1
#include <emmintrin.h>

/* The 8 x 8 matrix of 16-bit elements at SRC (rows SS apart) transposed
   into DST (rows DS apart).  Inlined and unrolled, so that the 24
   registers stay registers (not arrays on the stack). */
#ifdef __clang__
#define FA_UNROLL _Pragma("unroll")
#else
#define FA_UNROLL _Pragma("GCC unroll 8")
#endif
__attribute__((always_inline)) static inline void
fa_transpose8x8(const uint16_t *src, size_t ss, uint16_t *dst, size_t ds)
{
    __m128i r[8], a[8], b[8];

    FA_UNROLL
    for (size_t u = 0; u < 8; u++)
        r[u] = _mm_loadu_si128((const __m128i *)(const void *)(src + u * ss));
    FA_UNROLL
    for (size_t u = 0; u < 4; u++) {
        a[2 * u] = _mm_unpacklo_epi16(r[2 * u], r[2 * u + 1]);
        a[2 * u + 1] = _mm_unpackhi_epi16(r[2 * u], r[2 * u + 1]);
    }
    /* a[2u] = columns 0..3 of rows 2u, 2u+1; a[2u+1] columns 4..7 */
    FA_UNROLL
    for (size_t x = 0; x < 4; x++) {
        size_t u = x / 2, h = x % 2;
        b[4 * u + 2 * h] = _mm_unpacklo_epi32(a[4 * u + h], a[4 * u + 2 + h]);
        b[4 * u + 2 * h + 1] =
            _mm_unpackhi_epi32(a[4 * u + h], a[4 * u + 2 + h]);
    }
    /* b[4u + 2h + g]: columns 4h + 2g, 4h + 2g + 1 of rows 4u .. 4u+3 */
    FA_UNROLL
    for (size_t c = 0; c < 4; c++) {
        _mm_storeu_si128((__m128i *)(void *)(dst + (2 * c) * ds),
                         _mm_unpacklo_epi64(b[c], b[4 + c]));
        _mm_storeu_si128((__m128i *)(void *)(dst + (2 * c + 1) * ds),
                         _mm_unpackhi_epi64(b[c], b[4 + c]));
    }
}
#endif

/* Keys C0 .. C0+BW-1 of one head's K transposed into BLK (d rows LD
   apart).  Eight keys at a time, so each row of BLK gets 16 bytes per
   step: a transpose key by key writes one element per cache line and,
   with rows of Nk keys for a large power of two Nk, misses on every
   write. */
static void
fwd_transpose(const fa_plan *pl, const uint16_t *k, uint16_t *blk, size_t ld,
              size_t c0, size_t bw)
{
    size_t j = 0;

    /* eight keys at a time: each row of the block gets 16 bytes */
    for (; j + 8 <= bw; j += 8) {
        const uint16_t *kr = k + (c0 + j) * pl->d;
        size_t c = 0;
#ifdef FA_HAVE_SSE2
        /* 8 x 8 tiles in SSE2 registers (in every x86-64 CPU) */
        for (; c + 8 <= pl->d; c += 8)
            fa_transpose8x8(kr + c, pl->d, blk + c * ld + j, ld);
#endif
        for (; c < pl->d; c++)
            for (size_t u = 0; u < 8; u++)
                blk[c * ld + j + u] = kr[u * pl->d + c];
    }
    for (; j < bw; j++) {
        const uint16_t *kr = k + (c0 + j) * pl->d;
        for (size_t c = 0; c < pl->d; c++)
            blk[c * ld + j] = kr[c];
    }
}

/* One dot product of N terms in the gemv order G (lanes 1 .. 128): a[t]
   (FP32 bits, stride SA) times b[t] (FP32 bits B32 or, when B32 is NULL,
   16-bit inputs B16 widened from the inputs' format; stride SB). */
static uint32_t
gemv_dot(const fa_plan *pl, const fa_gemv_order *g, const uint32_t *a,
         ptrdiff_t sa, const uint32_t *b32, const uint16_t *b16, ptrdiff_t sb,
         size_t n, sf_env *env)
{
    uint32_t lane[128], next[128];
    size_t w = g->lanes, ch = g->chunk;

    if (w == 0 || w > 128 || ch == 0) /* excluded by fa_kernel_check */
        return FA_F32_ZERO;
    lane[0] = FA_F32_ZERO;

    for (size_t t = 0; t < w; t++) {
        uint32_t acc = FA_F32_ZERO;
        for (size_t e0 = ch * t; e0 < n; e0 += ch * w)
            for (size_t e = e0; e < e0 + ch && e < n; e++) {
                ptrdiff_t ia = (ptrdiff_t)e * sa, ib = (ptrdiff_t)e * sb;
                uint32_t y = b32 != NULL ? b32[ib]
                                         : fa_in_wide(pl->in_fmt, b16[ib]);
                acc = fa_fma(a[ia], y, acc, env);
            }
        lane[t] = acc;
    }
    if (g->combine == FA_GEMV_SEQUENTIAL) {
        for (size_t t = 1; t < w; t++)
            lane[0] = fa_add(lane[0], lane[t], env);
        return lane[0];
    }
    for (size_t off = w / 2; off >= 1; off /= 2) {
        for (size_t t = 0; t < w; t++)
            next[t] = fa_add(lane[t], lane[t ^ off], env);
        memcpy(lane, next, w * sizeof lane[0]);
    }
    return lane[0];
}

/* Scores of rows I0 .. I0+NR-1 into w->s (masked entries: the mask
   value); with tracing, only the unmasked ones are computed.  With one
   chunk of rows per head, K is transposed block by block just before the
   block's GEMM, while it is in the cache (an element of D depends only on
   its row of A and its column of B, so the bits are those of one GEMM
   over every key); the block's scores go through w->pf when the rows of
   S are longer; several rows and a K^T of at most FWD_KT_WHOLE bytes
   (which stays in the cache whole) take one GEMM over every key, so
   that Q's rows are decoded once.  One query row (a decode step) on a
   path that reads K's rows as they are (sf_mma_gemm_nt_direct) needs no
   K^T at all. */
#define FWD_KT_WHOLE ((size_t)256 << 10)

/* S of rows I0 .. I0+NR-1, KV block by KV block, each block's K^T
   transposed into its place; block_sparse: only the blocks the query
   block visits (w->visit). */
static void
block_scores(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    uint32_t *s = r->w->s;

    for (size_t c0 = 0; c0 < pl->nk; c0 += pl->bc) {
        size_t bw = pl->nk - c0 < pl->bc ? pl->nk - c0 : pl->bc;
        uint32_t *dst = nr == 1 || bw == pl->nk ? s + c0 : r->w->pf;
        if (r->blocks != NULL && !r->w->visit[c0 / pl->bc])
            continue;
        fwd_transpose(pl, r->k, r->w->kt + c0 * pl->d, bw, c0, bw);
        sf_mma_gemm(pl->mqk, nr, bw, pl->d, pl->in, r->q + i0 * pl->d,
                    pl->in, r->w->kt + c0 * pl->d, NULL, dst,
                    SF_MMA_PATH_AUTO, r->env);
        if (dst != s + c0)
            for (size_t ri = 0; ri < nr; ri++)
                memcpy(s + ri * pl->nk + c0, dst + ri * bw, bw * sizeof *s);
    }
}

/* The product Q K^T of rows I0 .. I0 + NR - 1 into the scores, whole rows
   at once (R->tcol < 0); a column-at-a-time run (tile traces) forms each
   score in scores_row instead. */
static void
scores_product(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    uint32_t *s = r->w->s;

    if (pl->k.score_prescale)
        /* Q's rows times RN32(sqrt(scale)) in FP32 (K^T's per head) */
        for (size_t x = 0; x < nr * pl->d; x++)
            r->w->qs[x] = fa_mul(fa_in_wide(pl->in_fmt, r->q[i0 * pl->d + x]),
                                 pl->sqrt_scale, r->env);
    if (r->tcol >= 0)
        return;
    if (pl->k.score_prescale && pl->gemv_s.lanes != 0)
        /* decode: cuBLAS's gemv over d, one score per key */
        for (size_t j = 0; j < pl->nk && nr == 1; j++)
            s[j] = gemv_dot(pl, &pl->gemv_s, r->w->qs, 1, r->w->kts + j, NULL,
                            (ptrdiff_t)pl->nk, pl->d, r->env);
    else if (pl->k.score_prescale)
        sf_mma_gemm(pl->mqk, nr, pl->nk, pl->d, &sf_format_f32, r->w->qs,
                    &sf_format_f32, r->w->kts, NULL, s, SF_MMA_PATH_AUTO,
                    r->env);
    else if (r->blocks != NULL)
        /* block_sparse: the scores of the listed blocks only (the others
           are never visited), K^T block by block */
        block_scores(r, i0, nr);
    else if (!r->kt_lazy)
        sf_mma_gemm(pl->mqk, nr, pl->nk, pl->d, pl->in, r->q + i0 * pl->d,
                    pl->in, r->w->kt, NULL, s, SF_MMA_PATH_AUTO, r->env);
    else if (nr == 1
             && sf_mma_gemm_nt_direct(pl->mqk, 1, pl->in, pl->in,
                                      SF_MMA_PATH_AUTO, r->env))
        /* one row: K's rows read as they are, no K^T */
        sf_mma_gemm_nt(pl->mqk, 1, pl->nk, pl->d, pl->in, r->q + i0 * pl->d,
                       pl->in, r->k, NULL, s, SF_MMA_PATH_AUTO, r->env);
    else if (nr > 1 && pl->nk * pl->d * 2 <= FWD_KT_WHOLE) {
        /* short queries, K^T small: built whole and one product for the
           chunk's rows, straight into S (the rows of Q are decoded once,
           not once per block) */
        fwd_transpose(pl, r->k, r->w->kt, pl->nk, 0, pl->nk);
        sf_mma_gemm(pl->mqk, nr, pl->nk, pl->d, pl->in, r->q + i0 * pl->d,
                    pl->in, r->w->kt, NULL, s, SF_MMA_PATH_AUTO, r->env);
    } else
        block_scores(r, i0, nr);
}

/* flex without a score or mask modification, no events: t = RN(S scale)
   tile by tile through the array product (the same bits and flags as
   fa_bias_score's), then t + (+0): -0 becomes +0 and a NaN goes through
   the addition (a second pass, only when the row holds one); the first
   NV keys are visible, the rest take the mask's value. */
static void
scores_row_scaled(fwd_run *r, uint32_t *srow, size_t nv)
{
    const fa_plan *pl = r->pl;
    uint32_t mv = fa_mask_bits(pl->k.mask);

    for (size_t c0 = 0; c0 < pl->nk; c0 += pl->bc) {
        size_t n = pl->nk - c0 < pl->bc ? pl->nk - c0 : pl->bc;
        size_t nvis = nv <= c0 ? 0 : nv - c0 < n ? nv - c0 : n;
        uint32_t nan = 0;
        if (r->blocks != NULL && !r->w->visit[c0 / pl->bc])
            nvis = 0;
        if (nvis > 0)
            sf_f32_mul_array((const sf_f32 *)(srow + c0),
                             (const sf_f32 *)r->w->scalev,
                             (sf_f32 *)(srow + c0), nvis, SF_RNE, r->env);
        for (size_t j = c0; j < c0 + nvis; j++) {
            uint32_t t = srow[j];
            nan |= (uint32_t)((t & ~FA_F32_SIGN) > FA_F32_INF);
            srow[j] = t == FA_F32_SIGN ? FA_F32_ZERO : t;
        }
        for (size_t j = c0; nan && j < c0 + nvis; j++)
            if (fa_is_nan(srow[j]))
                srow[j] = fa_add(srow[j], FA_F32_ZERO, r->env);
        for (size_t j = c0 + nvis; j < c0 + n; j++)
            srow[j] = mv;
    }
}

/* Row I's scores one by one (the general path): the product where it was
   not formed whole, then the scale, soft-capping, the mask or bias. */
static void
scores_row(fwd_run *r, size_t ri, size_t i, uint32_t *srow, size_t nv)
{
    const fa_plan *pl = r->pl;
    uint32_t mv = fa_mask_bits(pl->k.mask);

    for (size_t j = 0; j < pl->nk; j++) {
        if (j >= nv || (r->blocks != NULL && !r->w->visit[j / pl->bc])) {
            srow[j] = mv;
            continue;
        }
        if (r->tcol >= 0 && pl->k.score_prescale && pl->gemv_s.lanes != 0)
            srow[j] = gemv_dot(pl, &pl->gemv_s, r->w->qs + ri * pl->d, 1,
                               r->w->kts + j, NULL, (ptrdiff_t)pl->nk, pl->d,
                               r->env);
        else if (r->tcol >= 0 && pl->k.score_prescale)
            srow[j] = (uint32_t)sf_mma_dot(
                pl->mqk, &sf_format_f32, r->w->qs + ri * pl->d, 1,
                &sf_format_f32, r->w->kts + j, (ptrdiff_t)pl->nk, pl->d, 0,
                r->env);
        else if (r->tcol >= 0)
            srow[j] = (uint32_t)sf_mma_dot(pl->mqk, pl->in, r->q + i * pl->d,
                                           1, pl->in, r->k + j * pl->d, 1,
                                           pl->d, 0, r->env);
        srow[j] = score_of(pl, srow[j], r->env);
        if (pl->mask != NULL)
            srow[j] = fa_bias_score(pl, srow[j], fa_mask_at(pl, r->head, i, j),
                                    r->env);
        else if (pl->k.score_log2)
            srow[j] = fa_bias_score(pl, srow[j], FA_F32_ZERO, r->env);
    }
}

/* The scores of rows I0 .. I0 + NR - 1 (their S, as the kernel's exp
   reads it), captured when asked. */
static void
fwd_scores(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;

    scores_product(r, i0, nr);
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, nv = fa_visible(pl, i);
        uint32_t *srow = r->w->s + ri * pl->nk;
        if (r->tcol < 0 && pl->k.score_log2 && pl->mask == NULL && !pl->softcap
            && r->env->events == NULL)
            scores_row_scaled(r, srow, nv);
        else
            scores_row(r, ri, i, srow, nv);
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

    if (pl->gemv_pv.lanes != 0 && c == NULL && fa == &sf_format_f32) {
        /* decode: cuBLAS's gemv over the keys */
        for (size_t col = 0; col < pl->d; col++)
            d[col] = gemv_dot(pl, &pl->gemv_pv, a, 1, NULL,
                              r->v + c0 * pl->d + col, (ptrdiff_t)pl->d, n,
                              col_env(r, col));
        return;
    }
    if (r->tcol < 0) {
        sf_mma_gemm(pl->mpv, 1, pl->d, n, fa, a, pl->in, r->v + c0 * pl->d, c,
                    d, SF_MMA_PATH_AUTO, r->env);
        return;
    }
    for (size_t col = 0; col < pl->d; col++)
        d[col] = (uint32_t)sf_mma_dot(
            pl->mpv, fa, a, 1, pl->in, r->v + c0 * pl->d + col,
            (ptrdiff_t)pl->d, n, c != NULL ? c[col] : 0, col_env(r, col));
}

/* The P~V of NR rows at once (A: NR x N, row-major, format FA). */
static void
chunk_pv(fwd_run *r, size_t nr, const sf_format *fa, const void *a, size_t c0,
         size_t n, const uint32_t *c, uint32_t *d)
{
    const fa_plan *pl = r->pl;
    size_t sa = fa->storage_bits / 8;

    if (r->tcol < 0 && !(pl->gemv_pv.lanes != 0 && nr == 1)) {
        sf_mma_gemm(pl->mpv, nr, pl->d, n, fa, a, pl->in, r->v + c0 * pl->d, c,
                    d, SF_MMA_PATH_AUTO, r->env);
        return;
    }
    for (size_t ri = 0; ri < nr; ri++)
        row_pv(r, fa, (const char *)a + ri * n * sa, c0, n,
               c != NULL ? c + ri * pl->d : NULL, d + ri * pl->d);
}

/* fa_max over S[0 .. N-1] from -Inf, without a branch per element: a
   NaN loses, and of equal values the first is kept, which matters only
   for zeros (every other value has one encoding). */
static uint32_t
row_max(const uint32_t *s, size_t n)
{
    uint32_t best = 0; /* below the key of every number */

    for (size_t t = 0; t < n; t++) {
        uint32_t x = s[t], mag = x & FA_F32_MAG;
        /* the key of x with -0 read as +0; 0 for a NaN */
        uint32_t key = mag == 0 ? FA_F32_SIGN : fa_key(x);
        key = mag > FA_F32_INF ? 0 : key;
        best = key > best ? key : best;
    }
    if (best == 0)
        return FA_F32_NEG_INF;
    if (best == FA_F32_SIGN)
        /* the maximum is a zero: the first zero's sign */
        for (size_t t = 0; t < n; t++)
            if (fa_is_zero(s[t]))
                return s[t];
    /* invert fa_key */
    return (best & FA_F32_SIGN) ? best & FA_F32_MAG : ~best;
}

/* fa_add, inline in the per-key loops whatever the compiler's size
   limits (the typed addition's fast path is inline itself). */
#ifdef __GNUC__
__attribute__((always_inline))
#endif
static inline uint32_t
fwd_add(uint32_t a, uint32_t b, sf_env *env)
{
    return sf_f32_add((sf_f32){a}, (sf_f32){b}, SF_RNE, env).bits;
}

/* fa_round with the formats of the hot loops inline. */
static inline uint32_t
fwd_round(fa_fmt f, uint32_t x, sf_env *env)
{
    if (f == FA_FMT_F32)
        return x;
    if (f == FA_FMT_BF16)
        return fa_rbf(x, env);
    return fa_round(f, x, env);
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
          const uint32_t *p32)
{
    uint32_t *dst;

    if (!writing(r) || r->cap == NULL || r->cap->p == NULL)
        return;
    dst = r->cap->p + (r->head * r->pl->nq + i) * r->pl->nk + c0;
    for (size_t t = 0; t < n; t++)
        dst[t] = t >= nv ? 0 : p32[t];
}

/*----------------------------------------------------------------------------
 * One KV block of the online softmax, for every kernel: the fields of the
 * description choose each rounding (doc/attention.md, "Kernel
 * descriptions").
 *--------------------------------------------------------------------------*/
/* The exponential's argument for score S against the row max M (MEFF: M,
   or 0 when M is -Inf; MS: the kernel's max_scaled). */
static uint32_t
exp_arg(const fa_plan *pl, fa_exp_arg ea, uint32_t s, uint32_t meff,
        uint32_t ms, sf_env *e)
{
    switch (ea) {
    case FA_ARG_SUB_ROUND:
        return fwd_round(pl->k.p, fa_sub(s, meff, e), e);
    case FA_ARG_SUB_ONCE:
        return fa_sub_once(pl->k.p, s, meff, e);
    case FA_ARG_SCALE_SUB:
        return fa_sub(fa_mul(s, pl->scale_log2, e), ms, e);
    case FA_ARG_SCALE_FMA:
        return fa_fma(s, pl->scale_log2, ms ^ FA_F32_SIGN, e);
    case FA_ARG_LOG2E_SUB:
        return fa_sub(fa_mul(s, FA_F32_LOG2E, e), fa_mul(meff, FA_F32_LOG2E, e),
                      e);
    default:
        return fa_sub(s, meff, e);
    }
}

/* The rescale factor of m_old against MEFF. */
static uint32_t
alpha_of(const fa_plan *pl, uint32_t mold, uint32_t meff, sf_env *e)
{
    uint32_t x = pl->k.alpha_arg == FA_ALPHA_LOG2E_SUB
                     ? fa_sub(fa_mul(mold, FA_F32_LOG2E, e),
                              fa_mul(meff, FA_F32_LOG2E, e), e)
                     : fa_sub(mold, meff, e);

    switch (pl->k.alpha_arg) {
    case FA_ALPHA_SUB_ROUND:
        x = fwd_round(pl->k.alpha, x, e);
        break;
    case FA_ALPHA_SUB_SCALE:
        x = fa_mul(x, pl->scale_log2, e);
        break;
    case FA_ALPHA_SCALE_SUB:
        x = fa_sub(fa_mul(mold, pl->scale_log2, e),
                   fa_mul(meff, pl->scale_log2, e), e);
        break;
    default:
        break;
    }
    return fwd_round(pl->k.alpha, fa_exp(pl, x), e);
}

/* The P~V product's A operand format. */
static const sf_format *
p_format(const fa_plan *pl)
{
    return fa_fmt_format(pl->k.p);
}

/* The memory-efficient kernel's block sum ("warps"): per 32-key warp
   tile four thread partials from 0 (thread q owns keys 8 n + 2 q and
   8 n + 2 q + 1, n = 0..3, in that order), reduced (s0 + s1) + (s2 + s3),
   then added in tile order to RN_l(alpha l) (LOLD NULL: the first block,
   from the first tile's sum). */
static uint32_t
warps_sum(const uint32_t *p, size_t n, const uint32_t *lold, uint32_t alpha,
          fa_fmt lf, sf_env *e)
{
    uint32_t l = lold != NULL ? fa_round(lf, fa_mul(alpha, *lold, e), e) : 0;
    bool first = lold == NULL;

    for (size_t w0 = 0; w0 < n; w0 += 32) {
        uint32_t part[4], ws;
        for (size_t q = 0; q < 4; q++) {
            part[q] = FA_F32_ZERO;
            for (size_t nn = 0; nn < 4; nn++)
                for (size_t c = 0; c < 2; c++) {
                    size_t t = w0 + 8 * nn + 2 * q + c;
                    if (t < n)
                        part[q] = fa_add(part[q], p[t], e);
                }
        }
        ws = fa_add(fa_add(part[0], part[1], e), fa_add(part[2], part[3], e),
                    e);
        l = first ? fa_round(lf, ws, e) : fa_round(lf, fa_add(l, ws, e), e);
        first = false;
    }
    return l;
}

/* softmax_warp_forward's sum of N values ("warp32"): W = min(32,
   2^ceil(log2 N)) lanes, lane t adding values t, t + W, ... to 0, then
   the butterfly xor W/2, ..., 1; lane 0's value. */
static uint32_t
warp32_sum(const uint32_t *p, size_t n, sf_env *e)
{
    uint32_t x[32], y[32];
    size_t w = 1;

    while (w < n && w < 32)
        w *= 2;
    for (size_t t = 0; t < w; t++) {
        x[t] = FA_F32_ZERO;
        for (size_t j = t; j < n; j += w)
            x[t] = fa_add(x[t], p[j], e);
    }
    for (size_t off = w / 2; off >= 1; off /= 2) {
        for (size_t t = 0; t < w; t++)
            y[t] = fa_add(x[t], x[t ^ off], e);
        memcpy(x, y, w * sizeof *x);
    }
    return x[0];
}

/* The most span sums of one block the decode row sum keeps. */
#define FA_SPAN_MAX 16

/* A thread's N span sums SV (N <= FA_SPAN_MAX) of block JB added into
   SUM[q]: as the pairwise tree (s0 + s1) + (s2 + s3), ..., or one after
   another in ORDER (decode_span_order; with several orders separated by
   '/', block JB takes order JB modulo their count). */
static void
span_tree(uint32_t (*sv)[4], size_t n, uint32_t *sum, const char *order,
          size_t jb, sf_env *e)
{
    if (order[0] != '\0' && strcmp(order, "tree") != 0) {
        /* in the description's order, the spans this block lacks
           skipped */
        bool first = true;
        size_t nseg = 1, len;
        for (size_t i = 0; order[i] != '\0'; i++)
            nseg += order[i] == '/';
        len = (strlen(order) + 1) / nseg - 1;
        order += (jb % nseg) * (len + 1);
        for (size_t i = 0; i < len; i++) {
            size_t s = (size_t)fa_span_digit(order[i]);
            if (s >= n)
                continue;
            for (int q = 0; q < 4; q++)
                sum[q] = first ? sv[s][q] : fa_add(sum[q], sv[s][q], e);
            first = false;
        }
        return;
    }
    for (size_t w = 1; w < n; w *= 2)
        for (size_t a = 0; a + w < n; a += 2 * w)
            for (int q = 0; q < 4; q++)
                sv[a][q] = fa_add(sv[a][q], sv[a + w][q], e);
    for (int q = 0; q < 4; q++)
        sum[q] = sv[0][q];
}

/* Whether one query row runs the second decode engine (from
   decode_wide_min_nk keys). */
static bool
decode_wide(const fa_plan *pl)
{
    const fa_kernel *k = &pl->k;
    return pl->nq == 1 && k->decode_wide_min_nk > 0
           && pl->nk >= k->decode_wide_min_nk;
}

/* The accumulator's update of this launch: decode_acc_update in the second
   decode engine, else acc_update. */
static fa_acc_update
acc_update_of(const fa_plan *pl)
{
    return decode_wide(pl) ? pl->k.decode_acc_update : pl->k.acc_update;
}

/* One block's work on one row of the chunk: the block's settings, then
   the row's state that block_step's steps hand on. */
typedef struct blk_row
{
    size_t c0, bw;        /* the block's keys c0 .. c0+bw-1 */
    size_t cw;            /* warps along the keys (col_warps) */
    size_t span;          /* the decode row sum's span (0: none) */
    fa_exp_arg ea;        /* the exponential's argument of the block */
    bool quad, qblock, qred; /* the row sum: quad, quad-block, quad-reduce */
    bool p16;             /* P~ stored in a 16-bit format */
    bool batch;           /* no event sink: the exps computed as arrays */
    size_t ri, n;         /* the row in the chunk; its keys computed */
    const uint32_t *srow; /* its scores of the block */
    uint32_t *part;       /* its quad's four partials */
    uint32_t *pf, *ps;    /* P~ before its rounding, and as stored */
    uint16_t *pb;         /* P~ in its 16-bit format */
    uint32_t mnew, meff, ms, alpha;
    bool init;            /* this block initialises the row */
    bool fresh[4];        /* the partial starts from this block's key */
    bool fuse[4];         /* the partial's rescale fuses with its add */
    /* quad-reduce: thread q of warp w at 4 w + q */
    uint32_t bsum[4 * FA_COL_WARPS_MAX];
} blk_row;

/* The row's new max (the fix's max over its NFIX keys), its shift meff,
   the rescale factor alpha of the old max, the quad partials' rescale
   where it is a separate product, and the kernel's max_scaled. */
static void
row_max_alpha(fwd_run *r, blk_row *b, size_t nfix)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    fwd_ws *w = r->w;
    sf_env *e = r->env;
    size_t ri = b->ri;
    bool init = b->init;
    uint32_t mx, mt, mnew, meff, alpha = FA_F32_ONE;

    mx = row_max(b->srow, b->n);
    mt = nfix > 0 ? fa_fix_max(pl, b->srow, nfix, mx, e) : mx;
    mnew = init                          ? mt
           : k->first == FA_FIRST_UPDATE ? fa_max(mt, w->m[ri])
                                         : fa_max(w->m[ri], mt);
    /* Check_inf: a row still all -Inf shifts by 0 */
    meff = mnew == FA_F32_NEG_INF ? FA_F32_ZERO : mnew;
    if (!init)
        alpha = alpha_of(pl, w->m[ri], meff, e);
    w->alpha[ri] = alpha;
    for (int q = 0; q < 4; q++) {
        b->fresh[q] = init;
        /* after a rescale, the partial's product with the factor and
           its first addition of the block are one FFMA */
        b->fuse[q] = !init && k->rowsum_fma;
    }
    if (b->quad && !init && !k->rowsum_fma)
        for (int q = 0; q < 4; q++)
            b->part[q] = fa_mul(b->part[q], alpha, e);
    /* max_scaled of the unscaled kernels */
    b->ms = mnew == FA_F32_NEG_INF ? FA_F32_ZERO
            : k->score_scaled      ? meff
                                   : fa_mul(mnew, pl->scale_log2, e);
    b->mnew = mnew;
    b->meff = meff;
    b->alpha = alpha;
}

/* The exponentials' arguments of the row's N keys into pf, then their
   exps in one loop, where they overlap; the same operations as one key
   at a time, in another order (the flags are sticky; with an event sink
   block_step keeps the order and does not call this). */
static void
row_exps(fwd_run *r, const blk_row *b)
{
    const fa_plan *pl = r->pl;
    sf_env *e = r->env;
    const uint32_t *srow = b->srow;
    uint32_t *pf = b->pf;
    uint32_t meff = b->meff, ms = b->ms;
    size_t n = b->n;
    fa_exp_arg ea = b->ea;

    if (ea == FA_ARG_SCALE_SUB)
        /* exp_arg's case, its operations inline */
        for (size_t t = 0; t < n; t++)
            pf[t] = sf_f32_sub(sf_f32_mul((sf_f32){srow[t]},
                                          (sf_f32){pl->scale_log2}, SF_RNE,
                                          e),
                               (sf_f32){ms}, SF_RNE, e)
                        .bits;
    else if (ea == FA_ARG_SCALE_FMA) {
        /* fma(s, sl2, -max_scaled) through the array FMA (the same bits
           and flags as exp_arg's) */
        for (size_t t = 0; t < n; t++)
            r->w->negms[t] = ms ^ FA_F32_SIGN;
        sf_f32_fma_array((const sf_f32 *)srow, (const sf_f32 *)r->w->sl2v,
                         (const sf_f32 *)r->w->negms, (sf_f32 *)pf, n, SF_RNE,
                         e);
    } else
        for (size_t t = 0; t < n; t++)
            pf[t] = exp_arg(pl, ea, srow[t], meff, ms, e);
    fa_exp_n(pl, pf, n);
}

/* fa2's BF16 P~ and the quad's partials of FP32 P~ (batch, n >= 8): the
   roundings in one loop, then the first eight keys as row_keys would
   (every partial's first two), then the four chains side by side, each
   in its order. */
static void
row_quad_fp32_p(fwd_run *r, blk_row *b)
{
    sf_env *e = r->env;
    const uint32_t *pf = b->pf;
    uint32_t *ps = b->ps, *part = b->part, alpha = b->alpha;
    uint16_t *pb = b->pb;
    size_t n = b->n, t0;

    for (size_t t = 0; t < n; t++) {
        uint32_t st = fa_rbf(pf[t], e);
        ps[t] = st;
        pb[t] = (uint16_t)(st >> 16);
    }
    for (size_t t = 0; t < 8; t++) {
        int q = (int)(t >> 1);
        if (b->fresh[q])
            part[q] = pf[t];
        else if (b->fuse[q])
            part[q] = fa_fma(part[q], alpha, pf[t], e);
        else
            part[q] = fwd_add(part[q], pf[t], e);
        b->fresh[q] = b->fuse[q] = false;
    }
    for (t0 = 8; t0 + 8 <= n; t0 += 8) {
        uint32_t a0 = part[0], a1 = part[1], a2 = part[2], a3 = part[3];
        a0 = fwd_add(a0, pf[t0], e);
        a1 = fwd_add(a1, pf[t0 + 2], e);
        a2 = fwd_add(a2, pf[t0 + 4], e);
        a3 = fwd_add(a3, pf[t0 + 6], e);
        part[0] = fwd_add(a0, pf[t0 + 1], e);
        part[1] = fwd_add(a1, pf[t0 + 3], e);
        part[2] = fwd_add(a2, pf[t0 + 5], e);
        part[3] = fwd_add(a3, pf[t0 + 7], e);
    }
    for (size_t t = t0; t < n; t++) {
        int q = (int)((t & 7) >> 1);
        part[q] = fwd_add(part[q], pf[t], e);
    }
}

/* P~ of keys T0 .. n-1 of the row (its exp, unless batch computed it),
   its roundings, and each key's addition to the row sum's partials:
   quad-block's span sums (decode), quad-block's and quad-reduce's
   thread sums of the block, or the quad's running partials. */
static void
row_keys(fwd_run *r, blk_row *b, size_t t0)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    sf_env *e = r->env;
    const uint32_t *srow = b->srow;
    uint32_t *pf = b->pf, *ps = b->ps, *part = b->part, *bsum = b->bsum;
    uint16_t *pb = b->pb;
    uint32_t meff = b->meff, ms = b->ms, alpha = b->alpha;
    uint32_t bspan[4] = {FA_F32_ZERO, FA_F32_ZERO, FA_F32_ZERO, FA_F32_ZERO};
    uint32_t sv[FA_SPAN_MAX][4];
    size_t n = b->n, span = b->span, cw = b->cw, nspan = 0;
    fa_exp_arg ea = b->ea;
    bool batch = b->batch, p16 = b->p16, quad = b->quad;
    bool qblock = b->qblock, qred = b->qred;

    for (size_t t = t0; t < n; t++) {
        uint32_t p = batch ? pf[t]
                           : fa_exp(pl, exp_arg(pl, ea, srow[t], meff, ms,
                                                e));
        uint32_t st = fwd_round(k->p, p, e);
        pf[t] = p;
        ps[t] = st;
        if (p16)
            pb[t] = k->p == FA_FMT_BF16
                        ? (uint16_t)(st >> 16)
                        : sf_f32_to_f16((sf_f32){st}, SF_RNE, e).bits;
        if (qblock && span > 0) {
            /* the thread's sum of each span of the block, from 0; at the
               block's end the span sums are added as a pairwise tree */
            int q = (int)((t & 7) >> 1);
            bspan[q] = fa_add(bspan[q], k->rowsum_fp32_p ? p : st, e);
            if ((t + 1) % span == 0 || t + 1 == n) {
                /* past FA_SPAN_MAX spans the last one goes on */
                bool more = nspan == FA_SPAN_MAX;
                size_t si = more ? nspan - 1 : nspan++;
                for (int qq = 0; qq < 4; qq++) {
                    sv[si][qq] = more ? fa_add(sv[si][qq], bspan[qq], e)
                                      : bspan[qq];
                    bspan[qq] = FA_F32_ZERO;
                }
            }
            if (t + 1 == n)
                span_tree(sv, nspan, bsum, k->decode_span_order,
                          b->c0 / pl->bc, e);
        } else if (qblock || qred) {
            /* the thread's own sum of the block, from 0 (with col_warps
               warps, warp (t / 8) mod col_warps holds key t) */
            size_t q = ((t & 7) >> 1) + 4 * ((t >> 3) % cw);
            bsum[q] = fa_add(bsum[q], k->rowsum_fp32_p ? p : st, e);
        } else if (quad) {
            /* thread t' = (t mod 8) / 2 of the quad owns columns
               8n + 2t', 8n + 2t' + 1 and adds them in that order */
            int q = (int)((t & 7) >> 1);
            uint32_t v = k->rowsum_fp32_p ? p : st;
            if (b->fresh[q]) {
                part[q] = v;
                b->fresh[q] = false;
            } else if (b->fuse[q]) {
                part[q] = fa_fma(part[q], alpha, v, e);
                b->fuse[q] = false;
            } else {
                part[q] = fwd_add(part[q], v, e);
            }
        }
    }
}

/* The end of the block for the quad row sums: quad-reduce's block sum
   added to the rescaled l, quad-block's partials rescaled with the
   block's sums added, the quad's partials without a key rescaled. */
static void
row_sum_quads(fwd_run *r, blk_row *b)
{
    const fa_kernel *k = &r->pl->k;
    fwd_ws *w = r->w;
    sf_env *e = r->env;
    const uint32_t *bsum = b->bsum;
    uint32_t *part = b->part, alpha = b->alpha;
    size_t ri = b->ri;
    bool init = b->init;

    if (b->qred) {
        /* the block's sum (the quad's shuffles: xor 2, then xor 1)
           added to the rescaled row sum */
        uint32_t bs = fa_add(fa_add(bsum[0], bsum[2], e),
                             fa_add(bsum[1], bsum[3], e), e);
        /* then the other warps' quad sums, in warp order */
        for (size_t wi = 1; wi < b->cw; wi++)
            bs = fa_add(bs,
                        fa_add(fa_add(bsum[4 * wi], bsum[4 * wi + 2], e),
                               fa_add(bsum[4 * wi + 1], bsum[4 * wi + 3], e),
                               e),
                        e);
        w->l[ri] = init             ? bs
                   : k->rowsum_fma ? fa_fma(w->l[ri], alpha, bs, e)
                                   : fa_add(fa_mul(w->l[ri], alpha, e), bs,
                                            e);
    } else if (b->qblock) {
        /* each partial rescaled and the block's sum added */
        for (int q = 0; q < 4; q++)
            part[q] = init ? bsum[q]
                      : k->rowsum_fma
                          ? fa_fma(part[q], alpha, bsum[q], e)
                          : fa_add(fa_mul(part[q], alpha, e), bsum[q], e);
    } else {
        /* a partial that got no column of this block is only
           rescaled */
        for (int q = 0; q < 4; q++)
            if (b->fuse[q])
                part[q] = fa_mul(part[q], alpha, e);
    }
}

/* The row sum l of the other kernels: the block's sum of P~ ("warps",
   "warp32", or sequential in FP32 from the first term) added to the
   rescaled l in the format of l. */
static void
row_sum_l(fwd_run *r, const blk_row *b)
{
    const fa_kernel *k = &r->pl->k;
    fwd_ws *w = r->w;
    sf_env *e = r->env;
    const uint32_t *src = k->rowsum_fp32_p ? b->pf : b->ps;
    uint32_t alpha = b->alpha;
    size_t ri = b->ri, n = b->n;
    bool init = b->init;

    if (k->rowsum == FA_ROWSUM_WARPS) {
        w->l[ri] = warps_sum(src, n, init ? NULL : &w->l[ri], alpha, k->l, e);
    } else if (k->rowsum == FA_ROWSUM_WARP32) {
        uint32_t bs = warp32_sum(src, n, e);
        w->l[ri] =
            init ? fa_round(k->l, bs, e)
                 : fa_round(
                     k->l,
                     fa_add(fa_round(k->l, fa_mul(alpha, w->l[ri], e), e),
                            fa_round(k->l, bs, e), e),
                     e);
    } else {
        /* rowsum(P~), sequential in FP32 from the first term */
        uint32_t rs = src[0], bs;
        for (size_t t = 1; t < n; t++)
            rs = fwd_add(rs, src[t], e);
        bs = fwd_round(k->l, rs, e);
        if (k->rowsum_clamp && fa_lt(bs, F32_CLAMP_MIN))
            bs = fwd_round(k->l, F32_CLAMP_MIN, e);
        w->l[ri] =
            init ? bs
                 : fwd_round(
                     k->l,
                     fa_add(fwd_round(k->l, fa_mul(alpha, w->l[ri], e), e),
                            bs, e),
                     e);
    }
}

/* The softmax's output: P~ / l before the P~V product (a row whose
   every key is masked: P = 0, PyTorch's _safe_softmax, not 0 / 0). */
static void
row_divide(fwd_run *r, const blk_row *b)
{
    const fa_kernel *k = &r->pl->k;
    sf_env *e = r->env;
    uint32_t l = r->w->l[b->ri];
    const uint32_t *pf = b->pf;
    uint32_t *ps = b->ps;
    uint16_t *pb = b->pb;

    for (size_t t = 0; t < b->n; t++) {
        uint32_t st = fa_is_zero(l) ? FA_F32_ZERO
                                    : fa_round(k->p, fa_div(pf[t], l, e), e);
        ps[t] = st;
        if (b->p16)
            pb[t] = k->p == FA_FMT_BF16
                        ? (uint16_t)(st >> 16)
                        : sf_f32_to_f16((sf_f32){st}, SF_RNE, e).bits;
    }
}

/* O~ = alpha O~ + P~V over the row's visible keys: the block's dot
   products chained from the rescaled accumulator (visit "visible"). */
static void
row_acc_chain(fwd_run *r, const blk_row *b, const sf_format *pa)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    uint32_t *acc = w->acc + b->ri * pl->d, *tmp = w->tmp + b->ri * pl->d;

    if (!b->init)
        for (size_t col = 0; col < pl->d; col++)
            tmp[col] = fa_mul(b->alpha, acc[col], col_env(r, col));
    row_pv(r, pa, b->p16 ? (const void *)b->pb : (const void *)b->ps, b->c0,
           b->n, b->init ? NULL : tmp, acc);
    for (size_t col = 0; col < pl->d; col++)
        acc[col] = fwd_round(pl->k.acc, acc[col], col_env(r, col));
}

/* The chunk's P~V over every key of the block, chained: each
   accumulator rescaled in place, then the chain from it (from 0 for a
   row the block initialises), at once where every row does the same. */
static void
chunk_acc_chain(fwd_run *r, size_t nr, size_t c0, size_t bw,
                const sf_format *pa, bool p16, bool all_init, bool all_cont)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;

    for (size_t ri = 0; ri < nr; ri++)
        if (w->init[ri] == 0)
            for (size_t col = 0; col < pl->d; col++)
                w->acc[ri * pl->d + col] =
                    fa_mul(w->acc[ri * pl->d + col], w->alpha[ri],
                           col_env(r, col));
    if (all_init || all_cont) {
        chunk_pv(r, nr, pa, p16 ? (const void *)w->pb : (const void *)w->ps,
                 c0, bw, all_init ? NULL : w->acc, w->acc);
    } else {
        for (size_t ri = 0; ri < nr; ri++)
            if (w->init[ri] != 2)
                row_pv(r, pa,
                       p16 ? (const void *)(w->pb + ri * bw)
                           : (const void *)(w->ps + ri * bw),
                       c0, bw, w->init[ri] ? NULL : w->acc + ri * pl->d,
                       w->acc + ri * pl->d);
    }
    for (size_t ri = 0; ri < nr; ri++)
        for (size_t col = 0; col < pl->d; col++)
            w->acc[ri * pl->d + col] = fwd_round(
                pl->k.acc, w->acc[ri * pl->d + col], col_env(r, col));
}

/* The chunk's P~V separately: from 0, then oc.mul_(alpha).add_(P~V). */
static void
chunk_acc_separate(fwd_run *r, size_t nr, size_t c0, size_t bw,
                   const sf_format *pa, bool p16)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;

    chunk_pv(r, nr, pa, p16 ? (const void *)w->pb : (const void *)w->ps, c0,
             bw, NULL, w->tmp);
    for (size_t ri = 0; ri < nr; ri++) {
        uint32_t *acc = w->acc + ri * pl->d, *ev = w->tmp + ri * pl->d;
        for (size_t col = 0; col < pl->d; col++) {
            sf_env *ce = col_env(r, col);
            uint32_t evb = fwd_round(pl->k.acc, ev[col], ce);
            acc[col] =
                fwd_round(pl->k.acc, fa_mul(acc[col], w->alpha[ri], ce), ce);
            acc[col] = fwd_round(pl->k.acc, fa_add(acc[col], evb, ce), ce);
        }
    }
}

/* The chunk's P~V per warp (decode_acc_update "warps"): warp wi takes
   the keys wi kw .. wi kw + kw - 1 of the block (kw =
   decode_rowsum_span_wide) into its own accumulator, rescaled in place
   (FMUL) and then the chain of its products from it (from 0 for a row
   the block initialises). */
static void
chunk_acc_warps(fwd_run *r, size_t nr, size_t c0, size_t bw,
                const sf_format *pa, bool p16)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t nw = acc_warps(pl), kw = pl->k.decode_rowsum_span_wide;

    for (size_t ri = 0; ri < nr; ri++) {
        uint32_t *tmp = w->tmp + ri * pl->d;
        bool init = w->init[ri] != 0;

        if (w->init[ri] == 2)
            continue;
        for (size_t wi = 0; wi < nw; wi++) {
            uint32_t *acc = w->wacc + (ri * nw + wi) * pl->d;
            size_t k0 = wi * kw;
            size_t n = k0 >= bw ? 0 : bw - k0 < kw ? bw - k0 : kw;
            const void *a = p16 ? (const void *)(w->pb + ri * bw + k0)
                                : (const void *)(w->ps + ri * bw + k0);

            for (size_t col = 0; col < pl->d; col++)
                tmp[col] = init ? FA_F32_ZERO
                                : fa_mul(acc[col], w->alpha[ri],
                                         col_env(r, col));
            if (n == 0) {
                memcpy(acc, tmp, pl->d * sizeof *acc);
                continue;
            }
            row_pv(r, pa, a, c0 + k0, n, init ? NULL : tmp, acc);
            for (size_t col = 0; col < pl->d; col++)
                acc[col] = fwd_round(pl->k.acc, acc[col], col_env(r, col));
        }
    }
}

/* decode_acc_update "warps": the warps' accumulators of row RI added
   into O~ as a halving tree (four warps: (w0 + w2) + (w1 + w3)). */
static void
row_warps_reduce(fwd_run *r, size_t ri)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t nw = acc_warps(pl), half = 1;
    uint32_t *wa = w->wacc + ri * nw * pl->d;

    while (half < nw)
        half *= 2;
    for (half /= 2; half >= 1; half /= 2)
        for (size_t wi = 0; wi < half && wi + half < nw; wi++)
            for (size_t col = 0; col < pl->d; col++)
                wa[wi * pl->d + col] =
                    fwd_round(pl->k.acc,
                              fa_add(wa[wi * pl->d + col],
                                     wa[(wi + half) * pl->d + col],
                                     col_env(r, col)),
                              col_env(r, col));
    memcpy(w->acc + ri * pl->d, wa, pl->d * sizeof *wa);
}

/* One KV block (keys c0 .. c0+bw-1) for rows i0 .. i0+nr-1 of the chunk:
   per row the max, alpha, P~ and the row sum, then the accumulator's
   update. */
static void
block_step(fwd_run *r, size_t i0, size_t nr, size_t c0, size_t bw)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    fwd_ws *w = r->w;
    bool visible = k->visit == FA_VISIT_VISIBLE;
    bool chain = acc_update_of(pl) == FA_ACC_CHAIN;
    const sf_format *pa = p_format(pl);
    bool all_init = true, all_cont = true;
    blk_row b;

    b.c0 = c0;
    b.bw = bw;
    b.cw = pl->col_warps > 1 ? pl->col_warps : 1;
    b.span = pl->nq != 1        ? 0
             : decode_wide(pl) ? k->decode_rowsum_span_wide
                               : k->decode_rowsum_span;
    /* a block the mask applies to may form the exponent otherwise */
    b.ea = r->partial ? k->exp_arg_partial : k->exp_arg;
    b.quad = k->rowsum == FA_ROWSUM_QUAD;
    b.qblock = k->rowsum == FA_ROWSUM_QUAD_BLOCK;
    b.qred = k->rowsum == FA_ROWSUM_QUAD_REDUCE;
    b.p16 = k->p != FA_FMT_F32;
    b.batch = r->env->events == NULL;
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri, vis = fa_visible(pl, i), t0 = 0;
        size_t nv = vis <= c0 ? 0 : vis - c0 < bw ? vis - c0 : bw;

        b.ri = ri;
        b.n = visible ? nv : bw;
        b.srow = w->s + ri * pl->nk + c0;
        b.part = w->part + 4 * ri;
        b.pf = w->pf + ri * bw;
        b.ps = w->ps + ri * bw;
        b.pb = w->pb + ri * bw;
        b.init = k->first == FA_FIRST_INIT && !w->started[ri];
        memset(b.bsum, 0, sizeof b.bsum);
        w->init[ri] = b.init;
        if (b.n == 0) {
            /* no visible key of this row in this block: nothing to do */
            w->init[ri] = 2;
            capture_p(r, i, c0, bw, 0, NULL);
            continue;
        }
        row_max_alpha(r, &b, k->fix_all_keys ? bw : nv);
        if (b.batch)
            row_exps(r, &b);
        if (b.batch && b.quad && k->rowsum_fp32_p && k->p == FA_FMT_BF16
            && b.n >= 8) {
            row_quad_fp32_p(r, &b);
            t0 = b.n;
        }
        row_keys(r, &b, t0);
        if (b.qred || b.qblock || b.quad)
            row_sum_quads(r, &b);
        else
            row_sum_l(r, &b);
        if (k->normalize == FA_NORM_P_DIVIDE && !b.quad)
            row_divide(r, &b);
        w->m[ri] = b.mnew;
        w->started[ri] = 1;
        if (b.init)
            all_cont = false;
        else
            all_init = false;
        capture_p(r, i, c0, bw, b.n, b.ps);
        if (visible && chain)
            row_acc_chain(r, &b, pa);
    }
    if (visible && chain)
        return;
    /* Every key of the block: the chunk's P~V at once. */
    if (chain)
        chunk_acc_chain(r, nr, c0, bw, pa, b.p16, all_init, all_cont);
    else if (acc_update_of(pl) == FA_ACC_WARPS)
        chunk_acc_warps(r, nr, c0, bw, pa, b.p16);
    else
        chunk_acc_separate(r, nr, c0, bw, pa, b.p16);
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
static uint32_t
log_of(const fa_plan *pl, fa_kernel_log m, uint32_t x)
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
    float f, r;
    uint32_t y;

    memcpy(&f, &x, sizeof f);
    r = (float)log2((double)f);
    memcpy(&y, &r, sizeof y);
    return y;
}

/* decode_lse "lg2-fma": fma(lg2(L), RN32(ln 2), RN32(M RN32(ln 2))), M
   in the log2 domain. */
static uint32_t
lse_lg2_fma(const fa_plan *pl, uint32_t m2, uint32_t l, sf_env *e)
{
    return fa_fma(lg2_of(pl, l), F32_LN2, fa_mul(m2, F32_LN2, e), e);
}

/* Whether a row's LSE is the decode engine's (decode_lse). */
static bool
lse_is_decode(const fa_plan *pl)
{
    const fa_kernel *k = &pl->k;
    return k->decode_lse == FA_DLSE_LG2_FMA && decode_wide(pl);
}

/* 1 / l of the normalisation: the reciprocal model's for
   "reciprocal-approx", else RN32(1 / l). */
static uint32_t
inv_of(const fa_plan *pl, uint32_t l, sf_env *e)
{
    if (pl->k.normalize == FA_NORM_RCP_APPROX && pl->rcpm != NULL)
        return fa_rcp_eval(pl->rcpm, l);
    return fa_div(FA_F32_ONE, l, e);
}

/* The combine's natural exp. */
static uint32_t
combine_exp(const fa_plan *pl, uint32_t x)
{
    switch (pl->k.combine_exp) {
    case FA_CEXP_LIBM:
        return fa_exp_eval(fa_exp_model_by_name("libm"), false, x);
    case FA_CEXP_MODEL:
        return fa_exp_eval(pl->exp, false, x);
    case FA_CEXP_EXPF:
        return fa_cuda_expf(pl->exp, x);
    default:
        return fa_expf_cr(x);
    }
}

/* Split S's partial O of row RI of the chunk (d FP32 words; a row's
   splits are adjacent, so that its combine reads one splits x d block). */
static uint32_t *
osplit_row(const fwd_run *r, size_t ri, size_t s)
{
    return r->w->osplit + (ri * r->pl->splits + s) * r->pl->d;
}

/* The lg2 table the LSEs of the chunk read, or NULL. */
static const fa_lg2_table *
lse_table(const fa_plan *pl)
{
    if (pl->logm == NULL || pl->logm->kind != FA_LOG_LG2
        || !(pl->k.log == FA_KLOG_LG2 || lse_is_decode(pl)))
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
static void
fwd_range(fwd_run *r, size_t i0, size_t nr, size_t lo, size_t hi, long split,
          size_t stride)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    fwd_ws *w = r->w;
    fa_capture *cap = writing(r) ? r->cap : NULL;
    size_t nvb = hi > lo ? (hi - lo + stride - 1) / stride : 0;
    sf_env scratch = SF_ENV_IEEE;
    const fa_lg2_table *lt = nr <= FA_ROW_CHUNK ? lse_table(pl) : NULL;
    uint32_t lpre[FA_ROW_CHUNK];

    for (size_t ri = 0; ri < nr; ri++) {
        w->m[ri] = fa_mask_bits(k->m_init);
        w->l[ri] = FA_F32_ZERO;
        w->started[ri] = 0;
        for (size_t q = 0; q < 4; q++)
            w->part[4 * ri + q] = FA_F32_ZERO;
        for (size_t col = 0; col < pl->d; col++)
            w->acc[ri * pl->d + col] = FA_F32_ZERO;
    }

    for (size_t vi = 0; vi < nvb; vi++) {
        size_t jb = r->blocks != NULL ? r->blocks[lo + vi * stride]
                    : pl->order == FA_ORDER_REVERSE ? hi - 1 - vi
                                                    : lo + vi * stride;
        size_t c0 = jb * pl->bc;
        size_t bw = pl->nk - c0 < pl->bc ? pl->nk - c0 : pl->bc;

        r->partial = r->blocks != NULL && r->block_partial[lo + vi * stride];
        block_step(r, i0, nr, c0, bw);
        if (cap != NULL && (cap->m != NULL || cap->l != NULL))
            for (size_t ri = 0; ri < nr; ri++) {
                size_t x = block_index(r, i0 + ri, vi);
                if (cap->m != NULL)
                    cap->m[x] = w->m[ri];
                if (cap->l != NULL)
                    cap->l[x] = row_l(r, ri, &scratch);
            }
    }
    if (split < 0 && cap != NULL && cap->p != NULL && hi < pl->tc)
        /* the blocks the kernel skips (masked for the whole query
           block) */
        for (size_t ri = 0; ri < nr; ri++)
            for (size_t j = hi * pl->bc; j < pl->nk; j++)
                cap->p[(r->head * pl->nq + i0 + ri) * pl->nk + j] = 0;
    if (split < 0 && cap != NULL && (cap->m != NULL || cap->l != NULL))
        for (size_t ri = 0; ri < nr; ri++)
            for (size_t vi = nvb; vi < pl->tc; vi++) {
                size_t x = block_index(r, i0 + ri, vi);
                if (cap->m != NULL)
                    cap->m[x] = w->m[ri];
                if (cap->l != NULL)
                    cap->l[x] = row_l(r, ri, &scratch);
            }

    if (acc_warps(pl) > 0)
        for (size_t ri = 0; ri < nr; ri++)
            if (w->started[ri])
                row_warps_reduce(r, ri);
    if (split >= 0 && keeps_m_l(pl))
        lt = NULL; /* no LSE here */
    if (lt != NULL)
        lse_prefetch(r, lt, nr, lpre);
    /* O = O~ / l and LSE */
    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        uint32_t *acc = w->acc + ri * pl->d;
        uint32_t *out;
        uint32_t lse, l, lse2 = FA_F32_NEG_INF;
        bool zn;

        if (lt != NULL && ri + LSE_AHEAD < nr)
            fa_lg2_table_prefetch(lt, lpre[ri + LSE_AHEAD], 0);
        if (lt != NULL && ri + LSE_AHEAD / 2 < nr)
            fa_lg2_table_prefetch(lt, lpre[ri + LSE_AHEAD / 2], 1);

        if (split >= 0 && keeps_m_l(pl)) {
            size_t x = (size_t)split * nr + ri;
            memcpy(osplit_row(r, ri, (size_t)split), acc,
                   pl->d * sizeof *acc);
            w->msplit[x] = w->started[ri] ? w->m[ri] : FA_F32_NEG_INF;
            w->lpart[x] = w->started[ri] ? row_l(r, ri, r->env) : FA_F32_ZERO;
            continue;
        }
        if (split >= 0)
            out = osplit_row(r, ri, (size_t)split);
        else
            out = writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;
        if (split < 0 && cap != NULL && cap->obar != NULL)
            memcpy(cap->obar + (r->head * pl->nq + i) * pl->d, acc,
                   pl->d * sizeof *acc);
        if (!w->started[ri]) {
            /* no key seen (no visible key, or no block visited: the
               kernel's early exit): O = 0 */
            for (size_t col = 0; col < pl->d && out; col++)
                out[col] = FA_F32_ZERO;
            lse = split >= 0         ? FA_F32_NEG_INF
                  : k->empty_lse_pos ? FA_F32_INF
                                     : FA_F32_NEG_INF;
        } else {
            l = row_l(r, ri, r->env);
            if (k->lse == FA_LSE_LOG2_LN2 && fa_is_zero(l))
                /* every key masked: l_i = 1, so O = 0 and the LSE is m */
                l = FA_F32_ONE;
            zn = fa_is_zero(l) || fa_is_nan(l);
            if (k->normalize == FA_NORM_P_DIVIDE) {
                /* P~ was divided by l before the product */
                for (size_t col = 0; col < pl->d; col++) {
                    uint32_t x = acc[col];
                    if (split < 0)
                        x = fa_round(k->o, x, col_env(r, col));
                    if (out)
                        out[col] = x;
                }
            } else if (k->normalize == FA_NORM_RECIPROCAL
                       || k->normalize == FA_NORM_RCP_APPROX) {
                uint32_t inv = zn ? FA_F32_ONE : inv_of(pl, l, r->env);
                for (size_t col = 0; col < pl->d; col++) {
                    sf_env *ce = col_env(r, col);
                    uint32_t x = fa_mul(acc[col], inv, ce);
                    if (split < 0)
                        x = fwd_round(k->o, x, ce);
                    if (out)
                        out[col] = x;
                }
            } else {
                for (size_t col = 0; col < pl->d; col++) {
                    sf_env *ce = col_env(r, col);
                    uint32_t x = fa_div(acc[col], l, ce);
                    if (split < 0)
                        x = fwd_round(k->o, x, ce);
                    if (out)
                        out[col] = x;
                }
            }
            /* the split's LSE feeds O through the combine */
            sf_env *le = split >= 0 ? r->env : lse_env(r);
            if (lse_is_decode(pl)) {
                lse = zn ? (split >= 0 ? FA_F32_NEG_INF : FA_F32_INF)
                         : lse_lg2_fma(
                             pl, fa_mul(w->m[ri], pl->scale_log2, le), l, le);
            } else if (k->lse == FA_LSE_LOG2_LN2) {
                /* m_i + log2(l_i) in the kernel, then times math.log(2) */
                uint32_t lg = k->log == FA_KLOG_CUDA_LOG2_FTZ
                                  ? fa_cuda_log2f_ftz(l)
                                  : lg2_of(pl, l);
                lse2 = fa_add(fa_mul(w->m[ri], pl->scale_log2, le), lg, le);
                lse = fa_mul(lse2, F32_LN2, le);
            } else if (k->lse == FA_LSE_LOG2E_DIV) {
                /* RN32(mi / log2e) + log(s_prime), mi = RN32(m log2e) */
                lse = zn ? FA_F32_INF
                         : fa_add(fa_div(fa_mul(w->m[ri], FA_F32_LOG2E, le),
                                         FA_F32_LOG2E, le),
                                  log_of(pl, k->log, l), le);
            } else if (k->lse == FA_LSE_FMA_SCALE) {
                /* row_max * softmax_scale + __logf(sum): nvcc contracts
                   it into one FFMA */
                lse = zn ? (split >= 0 ? FA_F32_NEG_INF : FA_F32_INF)
                         : fa_fma(w->m[ri], pl->scale, log_of(pl, k->log, l),
                                  le);
            } else if (k->lse == FA_LSE_FMA_LN2) {
                /* the log2-domain max times RN(ln 2), added to the
                   natural log of l in one FFMA */
                lse = zn ? (split >= 0 ? FA_F32_NEG_INF : FA_F32_INF)
                         : fa_fma(fa_mul(w->m[ri], pl->scale_log2, le),
                                  F32_LN2, log_of(pl, k->log, l), le);
            } else {
                lse = fwd_round(
                    k->lse_fmt,
                    fa_add(fwd_round(k->lse_fmt, log_of(pl, k->log, l), le),
                           w->m[ri], le),
                    le);
            }
            if (zn && split < 0 && pl->mask != NULL
                && k->masked_lse == FA_MLSE_ZERO)
                /* every key masked */
                lse = FA_F32_ZERO;
        }
        if (split >= 0)
            w->lsplit[(size_t)split * nr + ri] = lse;
        else if (writing(r))
            r->lse[r->head * pl->nq + i] = lse;
        if (split < 0 && writing(r) && cap != NULL && cap->lse_kernel != NULL)
            cap->lse_kernel[r->head * pl->nq + i] =
                k->lse == FA_LSE_LOG2_LN2 ? lse2 : lse;
    }
}

/* Whether the split combine's FMA chains of row RI (weights W, NS
   splits) may run as one sf_mma_gemm of the "fma-chain" model: the same
   sf_f32_fma calls in the same order from +0, bits and flags, when
   nothing is traced and the environment's FTZ, DAZ, tininess and
   saturation are the model's (its call enters them for its duration).
   The operands must be finite: then no NaN arises, and the NaN rules
   of the model and of the environment cannot differ in a result. */
static bool
combine_as_product(const fwd_run *r, size_t ri, const uint32_t *w, size_t ns)
{
    const sf_mma_model *m = r->pl->mchain;
    const sf_env *e = r->env;
    const uint32_t *o = osplit_row(r, ri, 0);
    uint32_t special = 0; /* an Inf or a NaN among the operands */

    if (m == NULL || r->tcol >= 0 || e->events != NULL || e->ftz != m->ftz
        || e->daz != m->daz || e->tininess_after != m->tininess_after
        || e->saturate != (m->overflow == SF_MMA_OVF_SAT))
        return false;
    for (size_t s = 0; s < ns; s++)
        special |= (uint32_t)((w[s] & FA_F32_INF) == FA_F32_INF);
    for (size_t x = 0; x < ns * r->pl->d; x++)
        special |= (uint32_t)((o[x] & FA_F32_INF) == FA_F32_INF);
    return special == 0;
}

/* A split's max M as the decode engine stores it for the lean
   reduction: RN32(a RN32(ln 2)), a = RN32(M sl2) its log2-domain max. */
static uint32_t
lean_nat_max(const fa_plan *pl, uint32_t m, sf_env *e)
{
    return m == FA_F32_NEG_INF
               ? m
               : fa_mul(fa_mul(m, pl->scale_log2, e), F32_LN2, e);
}

/* The reduction's weight of a max X against the running max N:
   EX2(RN32(RN32(X - N) RN32(log2 e))), 0 for X = -inf. */
static uint32_t
lean_weight(const fa_plan *pl, uint32_t x, uint32_t n, sf_env *e)
{
    if (x == FA_F32_NEG_INF)
        return FA_F32_ZERO;
    return fa_exp_eval(pl->exp, true,
                       fa_mul(fa_sub(x, n, e), FA_F32_LOG2E, e));
}

/* The "lean" reduction of rows I0 .. I0+NR-1 (cuDNN's lean_reduction_
   kernel; attention/kernel.h, FA_COMBINE_LEAN): one pass over the splits
   in order from split 0 on the stored maxima, the running max N, l and
   O~ rescaled online. */
static void
fwd_combine_lean(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t ns = pl->splits;
    sf_env *e = r->env;
    uint32_t *acc = w->orow; /* d */

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        uint32_t mx = FA_F32_NEG_INF, n, l, inv, lse;
        uint32_t *out =
            writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;

        for (size_t s = 0; s < ns; s++) {
            uint32_t m = w->msplit[s * nr + ri];
            mx = fa_max(mx, m == FA_F32_NEG_INF
                                ? m
                                : fa_mul(m, pl->scale_log2, e));
        }
        /* split 0 as it is; then, for split s, N' = max(N, n_s),
           alpha = w(n_s, N'), beta = w(N, N') (both 0 while N' is -inf),
           l = fma(l, beta, RN32(l_s alpha)), O~ = fma(O~, beta,
           RN32(O~_s alpha)) */
        n = lean_nat_max(pl, w->msplit[ri], e);
        l = w->lpart[ri];
        memcpy(acc, osplit_row(r, ri, 0), pl->d * sizeof *acc);
        for (size_t s = 1; s < ns; s++) {
            uint32_t ns_ = lean_nat_max(pl, w->msplit[s * nr + ri], e);
            uint32_t nn = fa_max(n, ns_), al = FA_F32_ZERO,
                     be = FA_F32_ZERO;
            const uint32_t *os = osplit_row(r, ri, s);

            if (nn != FA_F32_NEG_INF) {
                al = lean_weight(pl, ns_, nn, e);
                be = lean_weight(pl, n, nn, e);
            }
            l = fa_fma(l, be, fa_mul(w->lpart[s * nr + ri], al, e), e);
            for (size_t col = 0; col < pl->d; col++) {
                sf_env *ce = col_env(r, col);
                acc[col] = fa_fma(acc[col], be, fa_mul(os[col], al, ce), ce);
            }
            n = nn;
        }
        if (mx == FA_F32_NEG_INF || fa_is_zero(l) || fa_is_nan(l)) {
            for (size_t col = 0; col < pl->d && out; col++)
                out[col] = FA_F32_ZERO;
            if (writing(r))
                r->lse[r->head * pl->nq + i] =
                    pl->k.empty_lse_pos ? FA_F32_INF : FA_F32_NEG_INF;
            continue;
        }
        inv = inv_of(pl, l, e);
        lse = lse_is_decode(pl)
                  ? lse_lg2_fma(pl, mx, l, lse_env(r))
                  : fa_fma(mx, F32_LN2, log_of(pl, pl->k.combine_log, l),
                           lse_env(r));
        for (size_t col = 0; col < pl->d; col++) {
            sf_env *ce = col_env(r, col);
            uint32_t o = fwd_round(pl->k.o, fa_mul(acc[col], inv, ce), ce);
            if (out)
                out[col] = o;
        }
        if (writing(r))
            r->lse[r->head * pl->nq + i] = lse;
    }
}

/* The split-KV combine of rows I0 .. I0+NR-1 (flash_fwd_splitkv_combine_
   kernel): the max of the partial LSEs, their exp sum as the combine's
   threads hold it, LSE = log(sum) + max, the weights exp(LSE_s - LSE) and
   O = RN_o(FMA chain over the splits in order from 0). */
static void
fwd_combine(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t ns = pl->splits;
    size_t dpad = (pl->d + 31) / 32 * 32;
    size_t bm = dpad % 128 == 0 ? 4 : dpad % 64 == 0 ? 8 : 16;
    size_t maxs = 2, lanes, per;
    uint32_t x[32], y[32], wgt[128], *orow = w->orow;

    while (maxs < ns)
        maxs *= 2;
    /* the combine kernel's kRowsPerLoadTranspose threads per row, each
       holding kNLsePerThread splits: lane t has splits l lanes + t */
    lanes = 128 / bm < maxs ? 128 / bm : maxs;
    per = (maxs * bm + 127) / 128;
    for (size_t ri = 0; ri < nr; ri++) {
        const uint32_t *ls = w->lsplit;
        size_t i = i0 + ri;
        uint32_t mx = FA_F32_NEG_INF, lse;
        sf_env *e = r->env;
        uint32_t *out =
            writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;

        for (size_t s = 0; s < ns; s++)
            mx = fa_max(mx, ls[s * nr + ri]);
        if (mx == FA_F32_NEG_INF)
            mx = FA_F32_ZERO;
        for (size_t t = 0; t < lanes; t++)
            for (size_t l = 0; l < per; l++) {
                size_t s = l * lanes + t;
                uint32_t v = s < ns ? ls[s * nr + ri] : FA_F32_NEG_INF;
                uint32_t ex = combine_exp(pl, fa_sub(v, mx, e));
                x[t] = l == 0 ? ex : fa_add(x[t], ex, e);
            }
        /* Allreduce over the lanes: xor lanes/2, ..., 1 */
        for (size_t off = lanes / 2; off >= 1; off /= 2) {
            for (size_t t = 0; t < lanes; t++)
                y[t] = fa_add(x[t], x[t ^ off], e);
            memcpy(x, y, lanes * sizeof *x);
        }
        lse = fa_is_zero(x[0]) || fa_is_nan(x[0])
                  ? FA_F32_INF
                  : fa_add(log_of(pl, pl->k.combine_log, x[0]), mx, e);
        for (size_t s = 0; s < ns; s++)
            wgt[s] = combine_exp(pl, fa_sub(ls[s * nr + ri], lse, e));
        if (combine_as_product(r, ri, wgt, ns)) {
            /* the same FMA chains, as one 1 x ns by ns x d product */
            sf_mma_gemm(pl->mchain, 1, pl->d, ns, &sf_format_f32, wgt,
                        &sf_format_f32, osplit_row(r, ri, 0), NULL, orow,
                        SF_MMA_PATH_AUTO, e);
            for (size_t col = 0; col < pl->d; col++) {
                uint32_t o = fwd_round(pl->k.o, orow[col], e);
                if (out)
                    out[col] = o;
            }
        } else {
            for (size_t col = 0; col < pl->d; col++) {
                sf_env *ce = col_env(r, col);
                uint32_t acc = FA_F32_ZERO;
                for (size_t s = 0; s < ns; s++)
                    acc = fa_fma(wgt[s], osplit_row(r, ri, s)[col], acc, ce);
                acc = fwd_round(pl->k.o, acc, ce);
                if (out)
                    out[col] = acc;
            }
        }
        if (writing(r))
            r->lse[r->head * pl->nq + i] = lse;
    }
}

/* The butterfly HT of V[0 .. K-1] (K a power of two) from half width
   H0: v_j = v_j + v_{j+h} for h = H0, H0 / 2, ..., 1; the result is v_0
   (every lane's, the addition being commutative). */
static uint32_t
butterfly(uint32_t *v, size_t h0, sf_env *e)
{
    for (size_t h = h0; h >= 1; h /= 2)
        for (size_t j = 0; j < h; j++)
            v[j] = fa_add(v[j], v[j + h], e);
    return v[0];
}

/* The sum of NS values X[s xs] weighted W[s] as one of inductor's
   reductions over flex_decoding's programs forms it (attention.h,
   fa_flex_merge): the programs cut into CHUNKS contiguous chunks of
   ceil(NS / chunks); in a chunk, lane r of R0 takes its indices r, r +
   R0, ...: a looped reduction chains fma(w, x, .) from +0 over them, a
   persistent one holds the one product RN(w x); an inner one (SPT)
   takes SPT contiguous indices, the second's product rounded and the
   others' fused in order; the lanes of a warp (r = jw w + j) are added
   by the butterfly over j, then the warps' sums by the butterfly over
   w; the chunks' sums, padded with +0 to a power of two, by the second
   stage's lanes and warps. */
static uint32_t
merge_sum(const uint32_t *x, size_t xs, const uint32_t *wt, size_t ns,
          const fa_flex_merge *m, sf_env *e)
{
    uint32_t v[FA_MERGE_LANES_MAX], wv[FA_MERGE_LANES_MAX];
    uint32_t part[FA_MERGE_CHUNKS_MAX];
    size_t cs = (ns + m->chunks - 1) / m->chunks;

    for (size_t c = 0; c < m->chunks; c++) {
        size_t lo = c * cs, n = lo >= ns ? 0 : ns - lo < cs ? ns - lo : cs;
        for (size_t r = 0; r < m->r0; r++) {
            uint32_t a = FA_F32_ZERO;
            if (m->spt > 0) {
                /* programs spt r ..: ((v0 + v1) + v2) + ..., the first
                   addition fused with v0's product (spt divides n: a
                   lane's programs are all in or all out) */
                size_t u0 = r * m->spt;
                if (u0 < n) {
                    const uint32_t *xu = x + (lo + u0) * xs;
                    const uint32_t *wu = wt + lo + u0;
                    a = m->spt > 1 ? fa_mul(wu[1], xu[xs], e)
                                   : fa_mul(wu[0], xu[0], e);
                    if (m->spt > 1)
                        a = fa_fma(wu[0], xu[0], a, e);
                    for (size_t k = 2; k < m->spt; k++)
                        a = fa_fma(wu[k], xu[k * xs], a, e);
                }
                v[r] = a;
                continue;
            }
            for (size_t u = r; u < n; u += m->r0)
                a = m->persistent ? fa_mul(wt[lo + u], x[(lo + u) * xs], e)
                                  : fa_fma(wt[lo + u], x[(lo + u) * xs], a, e);
            v[r] = a;
        }
        for (size_t w = 0; w < m->warps; w++) {
            uint32_t *vw = v + w * m->jw;
            size_t h0 = m->jw / 2;
            if (m->fused && m->spt == 0 && h0 >= 1) {
                /* no mask between the product and the first addition:
                   the lane's own product fused with the other's rounded
                   one */
                for (size_t j = 0; j < h0; j++) {
                    size_t t = w * m->jw + j;
                    vw[j] = t < n ? fa_fma(wt[lo + t], x[(lo + t) * xs],
                                           vw[j + h0], e)
                                  : vw[j + h0];
                }
                h0 /= 2;
            }
            wv[w] = h0 >= 1 ? butterfly(vw, h0, e) : vw[0];
        }
        part[c] = m->warps > 1 ? butterfly(wv, m->warps / 2, e) : wv[0];
    }
    /* the second stage: the chunks padded with +0 to a power of two, k;
       lane u of cu adds its chunks u, u + cu, ... in order, then the
       butterflies over its lanes and warps */
    {
        size_t k = 1, cu = (size_t)m->c_jw * m->c_warps;
        if (m->chunks == 1)
            return part[0];
        while (k < m->chunks)
            k *= 2;
        for (size_t c = m->chunks; c < k; c++)
            part[c] = FA_F32_ZERO;
        for (size_t u = 0; u < cu; u++) {
            v[u] = part[u];
            for (size_t c = u + cu; c < k; c += cu)
                v[u] = fa_add(v[u], part[c], e);
        }
        for (size_t w = 0; w < m->c_warps; w++)
            wv[w] = m->c_jw > 1 ? butterfly(v + w * m->c_jw, m->c_jw / 2, e)
                                : v[w * m->c_jw];
        return m->c_warps > 1 ? butterfly(wv, m->c_warps / 2, e) : wv[0];
    }
}

/* flex_decoding's two reductions for rows I0 .. I0+NR-1 (kernel.h,
   FA_COMBINE_FLEX_DECODE): M = max m_s (base 2), w_s = exp2(m_s - M)
   (0 when M is -inf), L and the columns of O by merge_sum, L' = 1 when M
   is -inf, O = RN_o(sum RCP(L')), LSE2 = RN(log2f(L') + M) and LSE =
   RN(LSE2 RN32(ln 2)). */
static void
fwd_combine_flex(fwd_run *r, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    fa_capture *cap = writing(r) ? r->cap : NULL;
    size_t ns = pl->splits;
    sf_env *e = r->env;
    uint32_t *wt = w->orow + pl->d, *col = wt + ns;

    for (size_t ri = 0; ri < nr; ri++) {
        size_t i = i0 + ri;
        uint32_t mx = FA_F32_NEG_INF, l, inv, lse2, lse;
        uint32_t *out =
            writing(r) ? r->o + (r->head * pl->nq + i) * pl->d : NULL;
        sf_env *le = lse_env(r);

        for (size_t s = 0; s < ns; s++) {
            uint32_t m = w->msplit[s * nr + ri];
            wt[s] = m == FA_F32_NEG_INF ? m : fa_mul(m, pl->scale_log2, e);
            mx = fa_max(mx, wt[s]);
        }
        for (size_t s = 0; s < ns; s++)
            wt[s] = fa_exp_eval(pl->exp, true,
                                mx == FA_F32_NEG_INF ? FA_F32_ZERO
                                                     : fa_sub(wt[s], mx, e));
        l = merge_sum(w->lpart + ri, nr, wt, ns, &pl->merge_l, e);
        if (mx == FA_F32_NEG_INF)
            l = FA_F32_ONE;
        inv = inv_of(pl, l, e);
        for (size_t c = 0; c < pl->d; c++) {
            sf_env *ce = col_env(r, c);
            for (size_t s = 0; s < ns; s++)
                col[s] = osplit_row(r, ri, s)[c];
            uint32_t o = fwd_round(pl->k.o,
                                   fa_mul(merge_sum(col, 1, wt, ns,
                                                    &pl->merge_o, ce),
                                          inv,
                                          ce),
                                   ce);
            if (out)
                out[c] = o;
        }
        lse2 = fa_add(fa_cuda_log2f_ftz(l), mx, le);
        lse = fa_mul(lse2, F32_LN2, le);
        if (writing(r))
            r->lse[r->head * pl->nq + i] = lse;
        if (cap != NULL && cap->lse_kernel != NULL)
            cap->lse_kernel[r->head * pl->nq + i] = lse2;
    }
}

/* Rows I0 .. I0+NR-1 of query block MB under flex_decoding: every
   program's tiles (fa_flex_decode_tiles), each program's m, l and O~
   kept, then the reductions that merge them. */
/* The N blocks of w->blocks (their flags in w->partial) become the ones
   fwd_range visits and fwd_scores computes. */
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

static void
fwd_chunk_decode(fwd_run *r, size_t mb, size_t i0, size_t nr)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;

    fa_flex_decode_classes(pl, r->head, mb, w->cls);
    for (size_t s = 0; s < pl->splits; s++) {
        size_t n = fa_flex_decode_tiles(pl, w->cls, s, w->blocks,
                                        w->partial);
        if (n > 0 || pl->splits == 1) {
            visit_listed(r, n);
            fwd_scores(r, i0, nr);
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
    fwd_combine_flex(r, i0, nr);
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
    if (pl->k.block_sparse) {
        /* the block mask's list (the same for every chunk of the query
           block) */
        nvb = fa_sparse_kv_blocks(pl, r->head, mb, r->w->blocks,
                                  r->w->partial);
        visit_listed(r, nvb);
    }
    fwd_scores(r, i0, nr);
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
        fwd_combine_lean(r, i0, nr);
    else
        fwd_combine(r, i0, nr);
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
        size_t nd = pl.nq * pl.d, kd = pl.nk * pl.d;
        run.head = hd;
        run.q = q + hd * nd;
        run.k = k + hd * kd;
        run.v = v + hd * kd;
        /* K^T whole, unless fwd_scores builds it block by block (one
           chunk of query rows: decode and short queries; never with
           prescaled scores, which read K^T's prescaled copy) */
        run.kt_lazy = pl.nq <= rows && !pl.k.score_prescale;
        if (!run.kt_lazy)
            fwd_transpose(&pl, run.k, w.kt, pl.nk, 0, pl.nk);
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
        prescale_k(&pl, &w, run.k, &quiet);
        fwd_chunk(&run, cap->trace_row / pl.br, cap->trace_row, 1);
    }
    free(ws.base);
    return 0;
}
