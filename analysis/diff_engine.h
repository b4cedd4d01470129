/* diff_engine.h -- the computation of bf16emu diff: the emulator and the
   exact reference run head by head on a GPU dump's inputs, each stage's
   values compared with the GPU's (counts, distances, the worst elements,
   the signed errors against the exact values), and where the rows of the
   worst O elements first diverge */
#ifndef BF16EMU_ANALYSIS_DIFF_ENGINE_H
#define BF16EMU_ANALYSIS_DIFF_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/compare.h"
#include "attention/attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * The stages, in the order of the computation: the forward's intermediate
 * values (captures of the fa2 kernel: the scores S, the running max m,
 * P~, the running sum l, the accumulator after each KV block), then O,
 * LSE and the backward's dQ, dK, dV.
 *--------------------------------------------------------------------------*/
enum
{
    DE_S,
    DE_M,
    DE_P,
    DE_L,
    DE_ACC,
    DE_O,
    DE_LSE,
    DE_DQ,
    DE_DK,
    DE_DV,
    DE_N_STAGES
};

/* The inputs: Q, K, V and dO. */
enum
{
    DE_IN_Q,
    DE_IN_K,
    DE_IN_V,
    DE_IN_DO,
    DE_N_IN
};

/* The worst elements kept of each stage (and O elements traced). */
#define DE_N_WORST 10

/*----------------------------------------------------------------------------
 * One problem: the dimensions, the configuration and the buffers, all
 * the caller's.  Every stage's values are FP32 patterns (BF16 and FP16
 * widened), laid out per query head: [B H, Nq, d] for o and dq, [B H, Nq]
 * for lse, [B H, Nq, Nk] for s and p, [B H, Nq, Tc] for m and l (slot vi:
 * after the vi-th visited KV block), [B H, Nq, Tc, d] for acc and
 * [B H, Nk, d] for dk and dv (the emulator's: one per query head; the
 * GPU's: one per KV head, B Hkv of them).  de_stage_heads and
 * de_stage_per_head give the sizes.
 *--------------------------------------------------------------------------*/
typedef struct de_problem
{
    size_t nb, nh, nhkv; /* batch, query heads, KV heads (divides nh) */
    size_t nq, nk, d;
    size_t heads;          /* nb * nh */
    size_t br, bc, tc;     /* fa2's forward tiles, KV blocks */
    bool causal, top_left; /* the causal mask and its alignment */
    const fa_config *hcfg; /* one head's configuration */
    const am_mask *mask;   /* the attention mask, or NULL */
    size_t chain;          /* query heads per backward call (gqa_dkv
                              "chain": the group; else 1) */
    sf_env env;            /* the environment each run starts from */
    bool want[DE_N_STAGES];
    bool want_cap; /* a capture stage (s, m, p, l, acc) is wanted */
    bool need_bwd; /* dq, dk or dv is wanted */
    const uint16_t *in[DE_N_IN];
    /* the GPU's values (NULL: not read) and their kept elements (NULL:
       all); the backward reads the GPU's O and LSE where present */
    const uint32_t *gpu[DE_N_STAGES];
    const unsigned char *kmask[DE_N_STAGES];
    /* written: the emulator's values, the exact ones (NULL: none), the
       backward's delta [B H, Nq] and the forward's base-2 LSE (NULL:
       unused; the flex backward reads it) */
    uint32_t *emu[DE_N_STAGES];
    double *ex[DE_N_STAGES];
    uint32_t *delta;
    uint32_t *lse2;
} de_problem;

/* The heads of stage S as the dump holds it: the KV heads for dK and dV,
   else the query heads. */
size_t de_stage_heads(const de_problem *p, int s);
/* The elements of stage S per head. */
size_t de_stage_per_head(const de_problem *p, int s);

/*----------------------------------------------------------------------------
 * The runs.  Each writes only its head's (or group's) slices of the
 * buffers, so heads may run in parallel.
 *--------------------------------------------------------------------------*/
/* The emulator on query head HH: O, LSE and the wanted captures, and the
   backward unless it runs by groups (chain > 1).  0, or -1 when the
   library or an allocation failed. */
int de_emu_head(const de_problem *p, size_t hh);
/* The backward of group GI (chain > 1: its query heads against their KV
   head at once).  0 or -1. */
int de_emu_group(const de_problem *p, size_t gi);
/* The exact reference of head HH (analysis/attn_exact.h, direct
   evaluation; the backward from the exact O): AX_OK, AX_EINPUT or
   AX_ERANGE after setting the head's exact values to NaN (no exact
   values for it), or another ax code on failure. */
int de_exact_head(const de_problem *p, size_t hh);

/*----------------------------------------------------------------------------
 * The comparison.
 *--------------------------------------------------------------------------*/
/* One stage compared. */
typedef struct de_stage
{
    bool on;
    const sf_format *fmt; /* the stage's format (the caller sets it) */
    cmp_stats c;          /* elements, equal, differ, distances, the worst */
    bool pass;
    /* an output the dump keeps in part (manifest: outputs_kept): the
       counts above are over the kept elements; the emulator's whole
       tensor against the hash of the GPU's */
    bool kept;
    uint64_t whole; /* the whole tensor's elements */
    uint64_t emu_hash;
    bool hash_equal;
    /* against the exact reference */
    bool have_exact;
    uint64_t skipped;
    bias_cell err_gpu, err_emu;
} de_stage;

/* Stage S (GPU's against the emulator's) into R, whose fmt is set: a pass
   when every distance is at most TOL and, for a stage kept in part, the
   emulator's whole tensor hashes to KEPT_HASH (or TOL > 0).  F32_FILE:
   the dump stores the stage in FP32 (else in the 16-bit format), which
   the hash covers.  The worst elements' flat indices are into the GPU's
   layout. */
void de_compare_stage(const de_problem *p, int s, uint64_t tol, bool f32_file,
                      uint64_t kept_hash, de_stage *r);

/* Where the row of one differing O element first diverges. */
typedef struct de_trace
{
    uint64_t flat; /* index into o */
    bool found;
    size_t visit, block; /* visiting order, KV block */
    int stage;           /* DE_S .. DE_ACC, or DE_O (only the last step) */
} de_trace;

/* The first of the stages s .. lse compared (R[s].on) with a difference,
   or -1. */
int de_first_divergent(const de_stage r[DE_N_STAGES]);
/* When every stage s .. o is wanted: for each of the worst O elements of
   R[DE_O], the first KV block (in visiting order) and stage where its row
   (for acc, its element) diverges, into TR; the number traced (0 when a
   stage is missing). */
size_t de_trace_worst(const de_problem *p, const de_stage r[DE_N_STAGES],
                      de_trace tr[DE_N_WORST]);

#ifdef __cplusplus
}
#endif

#endif
