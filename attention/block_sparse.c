/* block_sparse -- the KV blocks a FlexAttention query block visits, from
   its block mask (kernel.h, block_sparse) */
#include <config.h>

#include "attention/fa_local.h"

/* Whether key J is visible to query row I of head HEAD. */
static bool
key_visible(const fa_plan *pl, size_t head, size_t i, size_t j)
{
    if (j >= fa_visible(pl, i))
        return false;
    return pl->mask == NULL || fa_mask_at(pl, head, i, j) != FA_F32_NEG_INF;
}

/* The block mask's class of the sparse block (query block QS, key block
   KS): 0 no visible key, 1 partial, 2 full.  A block reaching past Nq or
   Nk is never full: create_block_mask pads the mask with False. */
int
fa_sparse_class(const fa_plan *pl, size_t head, size_t qs, size_t ks)
{
    size_t i0 = qs * pl->sparse_q, j0 = ks * pl->sparse_kv;
    size_t i1 = i0 + pl->sparse_q, j1 = j0 + pl->sparse_kv;
    bool padded = i1 > pl->nq || j1 > pl->nk;
    size_t seen = 0, all;

    if (i1 > pl->nq)
        i1 = pl->nq;
    if (j1 > pl->nk)
        j1 = pl->nk;
    all = (i1 - i0) * (j1 - j0);
    for (size_t i = i0; i < i1; i++)
        for (size_t j = j0; j < j1; j++)
            seen += key_visible(pl, head, i, j);
    return seen == 0 ? 0 : seen == all && !padded ? 2 : 1;
}

size_t
fa_sparse_kv_blocks(const fa_plan *pl, size_t head, size_t mb, size_t *list,
                    unsigned char *partial)
{
    size_t n = 0, nks, qs;
    /* Nq or Nk not a multiple of the tile (IS_DIVISIBLE false): every
       block checks its bounds, a select like the mask's */
    bool ragged = pl->nq % pl->br != 0 || pl->nk % pl->bc != 0;

    if (pl->sparse_q == 0 || pl->sparse_kv == 0) {
        /* no block mask: one block of every key, to which the mask (a
           constant True) adds nothing */
        for (size_t jb = 0; jb < pl->tc; jb++) {
            partial[n] = ragged;
            list[n++] = jb;
        }
        return n;
    }
    nks = (pl->nk + pl->sparse_kv - 1) / pl->sparse_kv;
    qs = mb * pl->br / pl->sparse_q;
    /* the partial blocks, then the full ones, each list ascending; a
       sparse block's tiles in order, up to Nk */
    for (int want = 1; want <= 2; want++)
        for (size_t ks = 0; ks < nks; ks++) {
            if (fa_sparse_class(pl, head, qs, ks) != want)
                continue;
            for (size_t c0 = ks * pl->sparse_kv;
                 c0 < (ks + 1) * pl->sparse_kv && c0 < pl->nk; c0 += pl->bc) {
                partial[n] = want == 1 || ragged;
                list[n++] = c0 / pl->bc;
            }
        }
    return n;
}

/* flex_decoding's tiles: the key count each program's share is cut from
   (TILE_KV_OG's numerator) is Nk with a block mask (HAS_FULL_BLOCKS) and
   one sparse block of 2^30 keys without one. */
#define FLEX_NO_MASK_BLOCK ((size_t)1 << 30)

void
fa_flex_decode_classes(const fa_plan *pl, size_t head, size_t mb,
                       unsigned char *cls)
{
    size_t nks, qs;

    if (pl->sparse_q == 0 || pl->sparse_kv == 0)
        return;
    nks = (pl->nk + pl->sparse_kv - 1) / pl->sparse_kv;
    qs = mb * pl->br / pl->sparse_q;
    for (size_t ks = 0; ks < nks; ks++)
        cls[ks] = (unsigned char)fa_sparse_class(pl, head, qs, ks);
}

size_t
fa_flex_decode_tiles(const fa_plan *pl, const unsigned char *cls, size_t s,
                     size_t *list, unsigned char *partial)
{
    size_t ns = pl->splits, bc = pl->bc, n = 0;
    size_t tiles_nk = (pl->nk + bc - 1) / bc;
    size_t span, per, mult, nks;

    if (pl->sparse_q == 0 || pl->sparse_kv == 0) {
        /* no block mask: one listed block of 2^30 keys */
        span = (FLEX_NO_MASK_BLOCK + ns - 1) / ns;
        per = (span + bc - 1) / bc;
        for (size_t p = s * per; p < (s + 1) * per && p < tiles_nk; p++) {
            partial[n] = 1;
            list[n++] = p;
        }
        return n;
    }
    span = (pl->nk + ns - 1) / ns;
    per = (span + bc - 1) / bc;
    mult = pl->sparse_kv / bc;
    nks = (pl->nk + pl->sparse_kv - 1) / pl->sparse_kv;
    /* the partial list from position s per, then the full list from
       position (S - 1 - s) per (the last program first); position p is
       tile p mod mult of the list's block p / mult; a list's positions
       end at min(its blocks x mult, ceil(Nk / bc)) */
    for (int want = 1; want <= 2; want++) {
        size_t first = want == 1 ? s * per : (ns - 1 - s) * per;
        size_t nb = 0, pos = 0, end;
        for (size_t ks = 0; ks < nks; ks++)
            nb += cls[ks] == want;
        end = nb * mult < tiles_nk ? nb * mult : tiles_nk;
        for (size_t ks = 0; ks < nks && pos < first + per && pos < end;
             ks++) {
            if (cls[ks] != want)
                continue;
            for (size_t t = 0; t < mult; t++, pos++) {
                size_t tile = ks * mult + t;
                if (pos >= first && pos < first + per && pos < end
                    && tile < pl->tc) {
                    /* every tile checks its bounds (IS_DIVISIBLE is
                       false below 128 rows): the partial form */
                    partial[n] = 1;
                    list[n++] = tile;
                }
            }
        }
    }
    return n;
}

/* Whether query row I of head HEAD sees a key of tile JB. */
static bool
tile_seen(const fa_plan *pl, size_t head, size_t i, size_t jb)
{
    size_t j1 = (jb + 1) * pl->bc < pl->nk ? (jb + 1) * pl->bc : pl->nk;

    for (size_t j = jb * pl->bc; j < j1; j++)
        if (key_visible(pl, head, i, j))
            return true;
    return false;
}

bool
fa_flex_decode_spans(const fa_plan *pl, size_t *list, unsigned char *partial,
                     unsigned char *cls, long *owner)
{
    for (size_t h = 0; h < pl->batch * pl->heads; h++)
        for (size_t mb = 0; mb * pl->br < pl->nq; mb++) {
            size_t i1 = (mb + 1) * pl->br < pl->nq ? (mb + 1) * pl->br
                                                   : pl->nq;
            for (size_t jb = 0; jb < pl->tc; jb++)
                owner[jb] = -1;
            fa_flex_decode_classes(pl, h, mb, cls);
            for (size_t s = 0; s < pl->splits; s++) {
                size_t n = fa_flex_decode_tiles(pl, cls, s, list, partial);
                for (size_t t = 0; t < n; t++)
                    owner[list[t]] = (long)s;
            }
            for (size_t i = mb * pl->br; i < i1; i++) {
                long seen = -1;
                for (size_t jb = 0; jb < pl->tc; jb++) {
                    if (owner[jb] < 0 || owner[jb] == seen
                        || !tile_seen(pl, h, i, jb))
                        continue;
                    if (seen >= 0)
                        return true;
                    seen = owner[jb];
                }
            }
        }
    return false;
}
