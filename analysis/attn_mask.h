/* attn_mask.h -- an attention mask tensor bound to a launch: SDPA's
   attn_mask (boolean, or additive in FP32, BF16 or FP16) broadcast over
   the launch's [B, H, Nq, Nk], for the heads a file keeps */
#ifndef BF16EMU_ANALYSIS_ATTN_MASK_H
#define BF16EMU_ANALYSIS_ATTN_MASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The launch a mask broadcasts over, and the heads computed: head x
   (of n_heads, the file's b H + h) is the launch's batch entry
   batch_of[x] and head head_of[x]. */
typedef struct am_launch
{
    size_t batch, heads, nq, nk;
    size_t n_heads;
    const size_t *batch_of, *head_of;
} am_launch;

/* A bound mask: mask.head_offset points into head_offset (n_heads
   entries, owned); the data stays the tensor's. */
typedef struct am_mask
{
    fa_attn_mask mask;
    size_t *head_offset;
    size_t n_heads;
    /* what the mask does to the heads computed: entries that hide a key
       (False, or an additive -Inf) and rows that see no key */
    uint64_t hidden, rows_empty;
} am_mask;

/* Binds T (2 to 4 dimensions, right-aligned against [B, H, Nq, Nk], each
   dimension 1 or the launch's; BOOL, U8 0/1, F32, BF16 or F16) to L.
   0, or -1 with a one-line message in MSG ("attn_mask: ...": what was
   found, what was expected).  Nothing is allocated on failure. */
int am_bind(const tensor *t, const am_launch *l, am_mask *out, char *msg,
            size_t msg_len);

/* am_bind for the FILE_B x FILE_H heads of a file (head b FILE_H + h)
   from a launch of L_BATCH x L_HEADS: head (b, h) is the launch's batch
   entry BATCH_FROM[BATCH_EACH ? h : 0] (BATCH_FROM NULL: b) and head
   HEADS_FROM[h] (NULL: h), as a dump's manifest names them. */
int am_bind_file(const tensor *t, size_t l_batch, size_t l_heads, size_t nq,
                 size_t nk, size_t file_b, size_t file_h,
                 const uint64_t *batch_from, bool batch_each,
                 const uint64_t *heads_from, am_mask *out, char *msg,
                 size_t msg_len);

/* CFG for head HH of a bound mask M (NULL or unbound: CFG unchanged): a
   copy whose mask is M's part for that head, held in *HM. */
fa_config am_head_config(const fa_config *cfg, const am_mask *m, size_t hh,
                         fa_attn_mask *hm);

/* NULL when the configuration of every head 0 .. HEADS-1 (CFG with that
   head's part of M, as am_head_config) is usable, else the first
   refusal, its head in *HEAD: a refusal that depends on a head's mask
   (flex-decode's programs) is found before anything is computed. */
const char *am_heads_check(const fa_config *cfg, const am_mask *m,
                           size_t heads, size_t *head);

/* One line (no newline) into BUF of N bytes saying how the bound mask M
   read from SRC enters kernel K and what it hides: "attn_mask: SRC,
   TYPE, applied as the description's bias_add ... rows see none".
   Returns BUF. */
char *am_summary(char *buf, size_t n, const char *src, const am_mask *m,
                 const fa_kernel *k);

/* Frees what am_bind allocated (M may be zeroed). */
void am_free(am_mask *m);

/* "bool" or the additive dtype's name: for headers. */
const char *am_type_name(fa_amask_type t);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_ATTN_MASK_H */
