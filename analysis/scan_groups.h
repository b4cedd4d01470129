/* scan_groups.h -- the rows of bf16emu scan's report: one record per
   (layer, head) of a model, merged over the captured calls, their steps
   and batch entries, with each step's Eq. 2-3 sums and dW_Q error
   (analysis/scan.h), the spectra of those errors, the layers' stacked
   heads and the ranking of the heads by risk */
#ifndef BF16EMU_ANALYSIS_SCAN_GROUPS_H
#define BF16EMU_ANALYSIS_SCAN_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/scan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The spectrum of a dW_Q error (scan_dwq_spectrum): the largest
   singular values, |M|_F^2, energy1 = sigma1^2 / |M|_F^2 and stable_rank
   = |M|_F^2 / sigma1^2 (NaN where sigma1 or |M|_F is 0); ok false where
   it could not be had (out of memory, a non-finite entry, no
   convergence, an empty matrix). */
#define SCAN_DWQ_SIGMAS 8 /* singular values kept */
typedef struct scan_dwq_spec
{
    bool ok;
    size_t k; /* singular values (min(rows, cols)) */
    double sigma[SCAN_DWQ_SIGMAS];
    double fro2, energy1, stable_rank;
} scan_dwq_spec;

/* One step's Eq. 2-3 sums of a (layer, head) (batch entries merged), and
   the dW_Q error [eq.d, dwq_c] (NULL: no X) summed over them, with its
   spectrum sp (scan_group_spectra). */
typedef struct scan_step
{
    long long step;
    scan_eq23 eq;
    double *dwq;
    size_t dwq_c;
    scan_dwq_spec sp;
} scan_step;

/* A (layer, head)'s dW_Q error over its steps: the mean Frobenius cosine
   of consecutive steps (cos_mean), the spectrum of their sum (cum), and
   growth = |sum_t M_t|_F / sqrt(sum_t |M_t|_F^2) (1 when the steps are
   orthogonal, sqrt(steps) when they are one matrix). */
typedef struct scan_dwq_sum
{
    size_t steps;
    double cos_mean, growth;
    scan_dwq_spec cum;
} scan_dwq_sum;

/* A layer's heads stacked at one step, [sum of their d, C]: its largest
   singular value and |M|_F^2 (ok false where they could not be had). */
typedef struct scan_layer
{
    long long layer, step;
    size_t heads;
    bool ok;
    double sigma1, fro2;
} scan_layer;

/* One row of the report: a (layer, head). */
typedef struct scan_group
{
    long long layer;
    size_t head;
    char name[128];
    uint64_t steps; /* calls of its first batch entry */
    scan_stats st;  /* every item merged, in the order added */
    double risk;    /* scan_risk(&st), set by scan_groups_rank */
    size_t rank;    /* 1 for the highest risk, set by scan_groups_rank */
    scan_step *by_step; /* sorted by step by scan_groups_rank */
    size_t n_by_step;
    bool has_dwq; /* dsum holds its dW_Q error's summary */
    scan_dwq_sum dsum;
} scan_group;

/* The rows, and the (layer, step) pairs with a dW_Q error
   (scan_groups_layers); first[k] is the index of the first group of
   layers[k]'s layer. */
typedef struct scan_groups
{
    scan_group *g;
    size_t n, cap;
    scan_layer *layers;
    size_t *first;
    size_t n_layers;
} scan_groups;

/* An empty table; scan_groups_free releases what it holds (every step's
   dW_Q error included) and leaves it empty. */
void scan_groups_init(scan_groups *t);
void scan_groups_free(scan_groups *t);

/* The group of (LAYER, HEAD), added (named NAME, stats empty) when T has
   none; NULL when out of memory.  Groups keep the order of their first
   addition (until scan_groups_rank). */
scan_group *scan_groups_get(scan_groups *t, long long layer, size_t head,
                            const char *name);

/* The result R of one work item (a batch entry and head of a call of
   LAYER and STEP), added to the group of (LAYER, HEAD): R merged into its
   stats (scan_stats_merge), R->eq (when R->eq.d > 0) merged into its
   record of STEP, and DWQ [R->eq.d, XC] (NULL: none) added to that step's
   dW_Q error; FIRST (the item is of the call's first batch entry) counts
   one step.  Items are to be added in one fixed order (the sums are
   floating point).  Returns 0; -1 when out of memory for the group; -2
   when out of memory for the step, or DWQ has other columns than the
   step's earlier ones (the group's stats already hold R). */
int scan_groups_add(scan_groups *t, long long layer, long long step,
                    const char *name, size_t head, bool first,
                    const scan_stats *r, const double *dwq, size_t xc);

/* Sorts T's groups by (layer, head) and each group's steps by step, sets
   each group's risk (scan_risk) and rank, and writes ORDER[0..T->n): the
   groups' indices by decreasing risk, ties by (layer, head). */
void scan_groups_rank(scan_groups *t, size_t *order);

/* The mean of scan_eq23_cosine between the u_sum of consecutive steps of
   G (steps where it is NaN left out); NaN when there is none. */
double scan_group_cos_adjacent(const scan_group *g);

/* The spectrum of M [ROWS, COLS] as above (at most SCAN_DWQ_SIGMAS of
   its singular values kept). */
scan_dwq_spec scan_dwq_spec_of(const double *m, size_t rows, size_t cols);

/* <A, B>_F / (|A|_F |B|_F) over N entries; NaN when either is NULL or
   zero. */
double scan_dwq_cosine(const double *a, const double *b, size_t n);

/* The index of the last step before step index T of G whose dW_Q error
   has the same shape as step T's, or -1. */
long scan_group_dwq_prev(const scan_group *g, size_t t);

/* G's steps' spectra (those with a dW_Q error) and its summary dsum:
   has_dwq false when G has no dW_Q error (or memory is short).  Steps
   of another shape than the first are left out of the summary; the
   consecutive cosines pair each step with scan_group_dwq_prev's.  Reads
   and writes G only, so groups may be done in parallel. */
void scan_group_spectra(scan_group *g);

/* T->layers: the (layer, step) pairs where some group has a dW_Q error,
   by layer (groups sorted as scan_groups_rank leaves them) then step,
   results not yet computed.  Returns 0, or -1 when out of memory. */
int scan_groups_layers(scan_groups *t);

/* Layer K's heads at its step stacked (by head) and its largest singular
   value (scan_dwq_top); ok false when none has X there, their widths
   differ or memory is short.  Writes T->layers[K] only, so layers may be
   done in parallel. */
void scan_groups_layer_top(scan_groups *t, size_t k);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_SCAN_GROUPS_H */
