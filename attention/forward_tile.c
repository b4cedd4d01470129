/* forward_tile -- the forward's work on one chunk of rows: the scores
   S = Q K^T with the scale, mask and bias, and one KV block of the online
   softmax (max, exp, P~, row sum, P~V) for every kernel description */
#include <config.h>

#include <string.h>

#include "attention/fwd_local.h"

/* The RN_f32(1e-10) of the repo's clamp of the block row sum. */
#define F32_CLAMP_MIN 0x2EDBE6FFu

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
void
fa_fwd_transpose(const fa_plan *pl, const uint16_t *k, uint16_t *blk,
                 size_t ld, size_t c0, size_t bw)
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
        fa_fwd_transpose(pl, r->k, r->w->kt + c0 * pl->d, bw, c0, bw);
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
        fa_fwd_transpose(pl, r->k, r->w->kt, pl->nk, 0, pl->nk);
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

/* The S capture of row I from SROW: the whole row, or with a block list
   only its blocks (the others keep what capture_clear or another program
   wrote). */
static void
capture_s(fwd_run *r, size_t i, const uint32_t *srow)
{
    const fa_plan *pl = r->pl;
    uint32_t *dst = r->cap->s + (r->head * pl->nq + i) * pl->nk;

    if (r->blocks == NULL) {
        memcpy(dst, srow, pl->nk * sizeof *srow);
        return;
    }
    for (size_t j = 0; j < pl->nk; j++)
        if (r->w->visit[j / pl->bc])
            dst[j] = srow[j];
}

/* The scores of rows I0 .. I0 + NR - 1 (their S, as the kernel's exp
   reads it), captured when asked. */
void
fa_fwd_scores(fwd_run *r, size_t i0, size_t nr)
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
        if (fwd_writing(r) && r->cap != NULL && r->cap->s != NULL)
            capture_s(r, i, srow);
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
                              fwd_col_env(r, col));
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
            (ptrdiff_t)pl->d, n, c != NULL ? c[col] : 0, fwd_col_env(r, col));
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

/* The P~ capture of row I for keys c0 .. c0+n-1 (P~ as FP32 bits); keys
   c0+nv .. c0+n-1 get 0. */
static void
capture_p(fwd_run *r, size_t i, size_t c0, size_t n, size_t nv,
          const uint32_t *p32)
{
    uint32_t *dst;

    if (!fwd_writing(r) || r->cap == NULL || r->cap->p == NULL)
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

/* One block's work on one row of the chunk: the block's settings, then
   the row's state that fa_fwd_block_step's steps hand on. */
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
   fa_fwd_block_step keeps the order and does not call this). */
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
            tmp[col] = fa_mul(b->alpha, acc[col], fwd_col_env(r, col));
    row_pv(r, pa, b->p16 ? (const void *)b->pb : (const void *)b->ps, b->c0,
           b->n, b->init ? NULL : tmp, acc);
    for (size_t col = 0; col < pl->d; col++)
        acc[col] = fwd_round(pl->k.acc, acc[col], fwd_col_env(r, col));
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
                           fwd_col_env(r, col));
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
                pl->k.acc, w->acc[ri * pl->d + col], fwd_col_env(r, col));
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
            sf_env *ce = fwd_col_env(r, col);
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
    size_t nw = fwd_acc_warps(pl), kw = pl->k.decode_rowsum_span_wide;

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
                                         fwd_col_env(r, col));
            if (n == 0) {
                memcpy(acc, tmp, pl->d * sizeof *acc);
                continue;
            }
            row_pv(r, pa, a, c0 + k0, n, init ? NULL : tmp, acc);
            for (size_t col = 0; col < pl->d; col++)
                acc[col] = fwd_round(pl->k.acc, acc[col], fwd_col_env(r, col));
        }
    }
}

/* decode_acc_update "warps": the warps' accumulators of row RI added
   into O~ as a halving tree (four warps: (w0 + w2) + (w1 + w3)). */
void
fa_fwd_warps_reduce(fwd_run *r, size_t ri)
{
    const fa_plan *pl = r->pl;
    fwd_ws *w = r->w;
    size_t nw = fwd_acc_warps(pl), half = 1;
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
                                     fwd_col_env(r, col)),
                              fwd_col_env(r, col));
    memcpy(w->acc + ri * pl->d, wa, pl->d * sizeof *wa);
}

/* One KV block (keys c0 .. c0+bw-1) for rows i0 .. i0+nr-1 of the chunk:
   per row the max, alpha, P~ and the row sum, then the accumulator's
   update. */
void
fa_fwd_block_step(fwd_run *r, size_t i0, size_t nr, size_t c0, size_t bw)
{
    const fa_plan *pl = r->pl;
    const fa_kernel *k = &pl->k;
    fwd_ws *w = r->w;
    bool visible = k->visit == FA_VISIT_VISIBLE;
    bool chain = fwd_acc_update(pl) == FA_ACC_CHAIN;
    const sf_format *pa = p_format(pl);
    bool all_init = true, all_cont = true;
    blk_row b;

    b.c0 = c0;
    b.bw = bw;
    b.cw = pl->col_warps > 1 ? pl->col_warps : 1;
    b.span = pl->nq != 1           ? 0
             : fwd_decode_wide(pl) ? k->decode_rowsum_span_wide
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
    else if (fwd_acc_update(pl) == FA_ACC_WARPS)
        chunk_acc_warps(r, nr, c0, bw, pa, b.p16);
    else
        chunk_acc_separate(r, nr, c0, bw, pa, b.p16);
}
