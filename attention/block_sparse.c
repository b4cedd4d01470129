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
