/* fwd_local.h -- the forward's internals shared by its sources: the
   working memory, one evaluation of a chunk of rows, and the steps each
   source offers the others (forward.c: the plan of the pass, the rows'
   normalisation and LSE; forward_tile.c: the scores and one KV block;
   forward_combine.c: the split-KV combines) */
#ifndef BF16EMU_ATTENTION_FWD_LOCAL_H
#define BF16EMU_ATTENTION_FWD_LOCAL_H

#include "attention/fa_local.h"

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
    bool kt_lazy;              /* K^T transposed by fa_fwd_scores, block by
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
static inline sf_env *
fwd_col_env(const fwd_run *r, size_t col)
{
    return r->tcol < 0 || (size_t)r->tcol == col ? r->env : r->quiet;
}

/* Roundings that feed no output element of O (LSE). */
static inline sf_env *
fwd_lse_env(const fwd_run *r)
{
    return r->tcol < 0 ? r->env : r->quiet;
}

static inline bool
fwd_writing(const fwd_run *r)
{
    return r->tcol < 0;
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

/* Whether one query row runs the second decode engine (from
   decode_wide_min_nk keys). */
static inline bool
fwd_decode_wide(const fa_plan *pl)
{
    const fa_kernel *k = &pl->k;
    return pl->nq == 1 && k->decode_wide_min_nk > 0
           && pl->nk >= k->decode_wide_min_nk;
}

/* The accumulator's update of this launch: decode_acc_update in the second
   decode engine, else acc_update. */
static inline fa_acc_update
fwd_acc_update(const fa_plan *pl)
{
    return fwd_decode_wide(pl) ? pl->k.decode_acc_update : pl->k.acc_update;
}

/* decode_acc_update "warps": the warps, each with its own O~, that split
   a block's keys (decode_rowsum_span_wide each); else 0. */
static inline size_t
fwd_acc_warps(const fa_plan *pl)
{
    size_t span = pl->k.decode_rowsum_span_wide;

    if (fwd_acc_update(pl) != FA_ACC_WARPS || span == 0)
        return 0;
    return (pl->bc + span - 1) / span;
}

/* Whether a row's LSE is the decode engine's (decode_lse). */
static inline bool
fwd_lse_is_decode(const fa_plan *pl)
{
    const fa_kernel *k = &pl->k;
    return k->decode_lse == FA_DLSE_LG2_FMA && fwd_decode_wide(pl);
}

/* Split S's partial O of row RI of the chunk (d FP32 words; a row's
   splits are adjacent, so that its combine reads one splits x d block). */
static inline uint32_t *
fwd_osplit_row(const fwd_run *r, size_t ri, size_t s)
{
    return r->w->osplit + (ri * r->pl->splits + s) * r->pl->d;
}

/*----------------------------------------------------------------------------
 * The steps of the pass, across its sources.
 *--------------------------------------------------------------------------*/
/* forward_tile.c: keys C0 .. C0+BW-1 of one head's K (Nk x d) transposed
   into BLK (d rows LD apart). */
void fa_fwd_transpose(const fa_plan *pl, const uint16_t *k, uint16_t *blk,
                      size_t ld, size_t c0, size_t bw);
/* forward_tile.c: the scores of rows I0 .. I0+NR-1 into w->s (as the
   kernel's exp reads them), captured when asked. */
void fa_fwd_scores(fwd_run *r, size_t i0, size_t nr);
/* forward_tile.c: one KV block (keys C0 .. C0+BW-1) for rows I0 ..
   I0+NR-1 of the chunk: the row state and the accumulators updated. */
void fa_fwd_block_step(fwd_run *r, size_t i0, size_t nr, size_t c0,
                       size_t bw);
/* forward_tile.c: decode_acc_update "warps": the warps' accumulators of
   row RI added into O~. */
void fa_fwd_warps_reduce(fwd_run *r, size_t ri);

/* forward.c: the natural log of X by the description's log M. */
uint32_t fa_fwd_log(const fa_plan *pl, fa_kernel_log m, uint32_t x);
/* forward.c: decode_lse "lg2-fma" of the log2-domain max M2 and the row
   sum L. */
uint32_t fa_fwd_lse_lg2_fma(const fa_plan *pl, uint32_t m2, uint32_t l,
                            sf_env *e);
/* forward.c: 1 / L of the normalisation. */
uint32_t fa_fwd_inv(const fa_plan *pl, uint32_t l, sf_env *e);

/* forward_combine.c: the combines of rows I0 .. I0+NR-1 from the
   splits' partial results: the split-KV combine of the partial LSEs,
   the "lean" reduction, flex_decoding's reductions. */
void fa_fwd_combine(fwd_run *r, size_t i0, size_t nr);
void fa_fwd_combine_lean(fwd_run *r, size_t i0, size_t nr);
void fa_fwd_combine_flex(fwd_run *r, size_t i0, size_t nr);

#endif /* BF16EMU_ATTENTION_FWD_LOCAL_H */
