/* scan.h -- the paper's failure mechanism measured on one head of a
   captured attention call: repeated maxima, P~ == 1, sink strength, the
   sign structure of V and the bias of O and delta against the exact
   reference, with and without a fix */
#ifndef BF16EMU_ANALYSIS_SCAN_H
#define BF16EMU_ANALYSIS_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/attn_exact.h"
#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/rows.h"
#include "attention/attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * What is measured (doc/real-models.md, "What scan measures").
 *
 * One head: Q, dO, O [Nq, d] and K, V [Nk, d] (BF16 bit patterns, or FP16
 * ones with cfg->input &sf_format_f16; the
 * captured tensors), LSE [Nq] (FP32 bits, optional), under CFG (shape
 * B = H = 1, causal, scale, the policy of the kernel that produced the
 * capture, fix none) and FIX (the fix to compare; FA_FIX_NONE: none).
 *
 * Rows (queries with at least one visible key):
 *   rep_exact   rows whose exact scores S = scale Q K^T have their maximum
 *               two or more times;
 *   near_tol    rows with two or more scores within the fix's tolerance
 *               of the row maximum (rows.h's n_near >= 2, tol = fix.tol),
 *               in the scores as the emulated kernel holds them, the
 *               domain of the fix's own test (fa2: the unscaled Q K^T);
 *   rep_kernel  rows whose scores as the emulated kernel holds them have a
 *               repeated maximum;
 *   p1_ge2      rows where one KV block (the policy's width Bc,
 *               ax_block_cols) has two or more P~ == 1 exactly, as fed to
 *               the P~V product of the emulated forward without the fix
 *               (the paper's trigger; a P~ == 1 in each of two blocks,
 *               where the running maximum grew, is not one);
 *   p1_ge2_fix  the same under the fix;
 *   p1_entries  all P~ == 1 entries of the rows without the fix (every
 *               block);
 *   sink_rows   rows whose exact P has one key with >= 0.5 of the mass;
 *   sum_p_max   the sum over rows of the largest exact P (sink strength).
 * V: of its d features (columns), those whose Nk values are all >= 0 or
 * all <= 0 with at least one non-zero value (one_sign).
 * Errors (computed - exact), O in units of the ulp of the inputs' format
 * (cfg->input: BF16, or FP16) at the exact value (whatever the policy's O
 * format), delta absolute:
 *   o_cap, o_emu, o_fix   the captured O, the emulated O without and with
 *                         the fix;
 *   d_cap, d_emu, d_fix   delta = rowsum(dO o O) from each of those O,
 *                         against rowsum(dO o O_exact); both sums in
 *                         double (each product of two BF16 values is
 *                         exact), so this is the part of delta's error
 *                         that O's error carries (the paper's path);
 *                         only with dO.
 * o_match and lse_match count the captured O and LSE elements that the
 * emulation without the fix reproduces bit for bit (a check that the
 * policy is the capture's kernel).
 *--------------------------------------------------------------------------*/
/* The paper's Eq. 2-3 on one head: the error of delta carried into dQ.
 * dQ_i = scale sum_j P_ij (dP_ij - delta_i) k_j, so an error e_i =
 * delta_lp,i - delta_exact,i (delta from the captured O, else the
 * emulated O, as d_cap / d_emu) changes dQ_i by
 *     u_i = -scale e_i (P K)_i          (P the exact probabilities),
 * and dW_Q = X^T dQ by sum_i x_i u_i^T.  Where the u_i share one
 * direction that sum is close to rank 1 and does not cancel over tokens;
 * where that direction stays across steps, the error adds up over
 * training.  Per head (rows with at least one visible key):
 *   d           features summed (0: not measured, no dO or d > 256);
 *   rows, err_sum  rows and sum of e_i;
 *   u_sum[c]    sum of u_i (its direction is compared across steps);
 *   u_norm_sum  sum of |u_i|;  u_norm2_sum  sum of |u_i|^2;
 *   sigma1_2    the largest eigenvalue of sum_i u_i u_i^T (power
 *               iteration), summed over merged heads.
 * coherence = |u_sum| / u_norm_sum (1: every u_i in one direction, about
 * rows^-1/2 for random directions); rank1 = sigma1_2 / u_norm2_sum (the
 * share of the u_i's energy in one direction, 1 for rank 1). */
#define SCAN_EQ23_DMAX 256
typedef struct scan_eq23
{
    size_t d;
    uint64_t rows;
    double err_sum;
    double u_sum[SCAN_EQ23_DMAX];
    double u_norm_sum, u_norm2_sum, sigma1_2;
} scan_eq23;

/* INTO += FROM (when the features agree or INTO is empty). */
void scan_eq23_merge(scan_eq23 *into, const scan_eq23 *from);
/* coherence and rank1 as above; NaN when nothing was summed. */
double scan_eq23_coherence(const scan_eq23 *e);
double scan_eq23_rank1(const scan_eq23 *e);
/* The cosine of the angle between the u_sum of A and of B; NaN when
   either is zero or the features differ. */
double scan_eq23_cosine(const scan_eq23 *a, const scan_eq23 *b);

typedef struct scan_stats
{
    uint64_t heads;          /* heads measured */
    uint64_t bad_heads;      /* heads left out: a non-finite input */
    uint64_t bad_elems;      /* their non-finite elements */
    uint64_t rows, rep_exact, near_tol, rep_kernel;
    uint64_t p1_ge2, p1_ge2_fix, p1_entries, sink_rows;
    double sum_p_max;
    uint64_t features, one_sign;
    bias_cell o_cap, o_emu, o_fix;
    bias_cell d_cap, d_emu, d_fix;
    uint64_t o_match, o_elems, lse_match, lse_elems;
    bool has_do;
    scan_eq23 eq; /* Eq. 2-3 (needs dO) */
} scan_stats;

void scan_stats_init(scan_stats *s);
/* INTO += FROM (counts exactly, moments as bias_cell_merge). */
void scan_stats_merge(scan_stats *into, const scan_stats *from);

/* The risk score of doc/real-models.md: the share of rows with two or
   more P~ == 1 in one KV block (p1_ge2 / rows) times the share of V features of one sign
   (one_sign / features).  0 when there are no rows or features. */
double scan_risk(const scan_stats *s);

/* One head's inputs; O, DOUT and LSE may be NULL.
 *
 * X (optional, with DOUT): the input of the query projection at the call's
 * query rows, [Nq, X_COLS] BF16, the rows of the batch entry of this head.
 * With X and DWQ (X_COLS * d doubles, [d, X_COLS] as the rows of W_Q
 * belonging to the head, zeroed or holding an earlier sum), the error of
 * dW_Q that delta's error carries (the paper's Eq. 2),
 *     DWQ[c][a] += sum_i u_i[c] X[i][a],  u_i as in scan_eq23,
 * summed in row order; its singular values are scan_dwq_spectrum's.  The
 * rows without a visible key add nothing. */
typedef struct scan_head_in
{
    const uint16_t *q, *k, *v, *o, *dout;
    const uint32_t *lse;
    const uint16_t *x;
    size_t x_cols;
    double *dwq;
} scan_head_in;

/* The spectrum of a dW_Q error M [ROWS, COLS] (row-major; a head's
   [d, C], or a layer's heads stacked, [H d, C]): the singular values
   SIGMA[0..min(ROWS, COLS)) in decreasing order (analysis/gradient.h's
   one-sided Jacobi SVD), and *FRO2 = sum sigma^2.  Returns 0, or -1 with
   a static message in *WHY (out of memory, a non-finite entry, no
   convergence). */
int scan_dwq_spectrum(const double *m, size_t rows, size_t cols,
                      double *sigma, double *fro2, const char **why);

/* The largest singular value *SIGMA1 of M [ROWS, COLS] by power iteration
   on M^T M from the all-ones vector (to a relative change below 1e-13, at
   most 5000 iterations; cheaper than the whole spectrum for a layer's
   stacked heads), and *FRO2 = |M|_F^2.  Returns 0, or -1 with a static
   message in *WHY (out of memory, a non-finite entry). */
int scan_dwq_top(const double *m, size_t rows, size_t cols, double *sigma1,
                 double *fro2, const char **why);

/* NULL when CFG (one head: batch = heads = 1, fix none) and FIX are
   usable, else a static message. */
const char *scan_check(const fa_config *cfg, const fa_fix *fix);

/* The reference O and scores are compared with:
     SCAN_REF_EXACT     attn_exact.h's direct evaluation (MPFR, 256 bits):
                        exact scores, O correctly rounded to a double;
     SCAN_REF_BINARY64  point.h's pt_reference for O (binary64, relative
                        error a few hundred units of 2^-53) and the scores
                        summed in binary64 in index order (each BF16
                        product is exact; the sum is exact unless the
                        products of a row span more than about 2^29),
                        about ten times faster, for large captures. */
typedef enum
{
    SCAN_REF_EXACT = 0,
    SCAN_REF_BINARY64
} scan_reference;

/* Measures one head and adds it to *OUT (initialised by the caller).  A
   head with a NaN or infinite element in Q, K, V, dO or O is counted in
   bad_heads and bad_elems and nothing else.  Returns 0, or -1 with a
   static message in *WHY (configuration refused, out of memory, the exact
   evaluation failed). */
int scan_head(const fa_config *cfg, const fa_fix *fix, scan_reference ref,
              const scan_head_in *in, scan_stats *out, const char **why);

/* One captured call: B batch entries of H query heads, each a work item
   BH = b H + h.  Q, O, DOUT [B, H, Nq, d], K, V [B, HKV, Nk, d] (HKV
   divides H: grouped-query heads, query head h reads KV head h / (H /
   HKV) of its batch entry), LSE [B, H, Nq], X [B, Nq, XC] (the query
   projection's input of each batch entry); O, DOUT, LSE and X may be NULL
   (X: not used).  MASK: the call's mask bound to its B x H heads, or
   NULL. */
typedef struct scan_call_in
{
    const uint16_t *q, *k, *v, *o, *dout;
    const uint32_t *lse;
    const uint16_t *x;
    size_t b, h, hkv, nq, nk, d, xc;
    const am_mask *mask;
} scan_call_in;

/* Whether a call's X enters dW_Q's error: with X (HAS_X), dO (Eq. 2
   needs delta's error), q not rotated by position after the projection
   (X_ROTARY false) and D <= SCAN_EQ23_DMAX. */
bool scan_call_uses_x(bool has_x, bool has_do, bool x_rotary, size_t d);

/* Item BH of call IN measured: *RES initialised, then scan_head on the
   item's head (CFG with the head's part of IN->mask, am_head_config),
   with IN->x's rows of its batch entry and DWQ (the item's [d, XC] dW_Q
   error, zeroed by the caller) when IN->x is given.  Items write only
   their own RES and DWQ, so they may be measured in parallel.  Returns 0,
   or -1 with a static message in *WHY (as scan_head; "failed" when it
   gave none). */
int scan_call_item(const fa_config *cfg, const fa_fix *fix,
                   scan_reference ref, const scan_call_in *in, size_t bh,
                   scan_stats *res, double *dwq, const char **why);

/* A scan_stats as text, for results written apart and merged later
   (bf16emu scan --shard / --merge): every field as a lower-case hex word
   (a double by its bits), one space between words, in the order of the
   struct's declaration: heads, bad_heads, bad_elems, rows, rep_exact,
   near_tol, rep_kernel, p1_ge2, p1_ge2_fix, p1_entries, sink_rows,
   features, one_sign, o_match, o_elems, lse_match, lse_elems; sum_p_max;
   o_cap, o_emu, o_fix, d_cap, d_emu, d_fix (each bias_cell's 14 counts
   n .. ties_away, then mean, m2, min, max); has_do (0 or 1); eq.d, and
   eq.rows, eq.err_sum, eq.u_sum[0..eq.d), eq.u_norm_sum,
   eq.u_norm2_sum, eq.sigma1_2.  Parsing that text gives back S bit for
   bit, so merged results equal unmerged ones.
 *
 * scan_stats_format writes S's words into BUF (N bytes, NUL-terminated
 * when N > 0, truncated to fit) and returns the length of the whole text
 * (as snprintf: call with N = 0 for the size).  scan_stats_parse reads
 * TEXT (leading and trailing spaces allowed) into *S; returns 0, or -1
 * when a word is missing, is not hex, is out of range, eq.d exceeds
 * SCAN_EQ23_DMAX or text follows the last word (*S then undefined). */
size_t scan_stats_format(const scan_stats *s, char *buf, size_t n);
int scan_stats_parse(const char *text, scan_stats *s);

/* The same for N doubles V (a dW_Q error): scan_words_format as
   scan_stats_format; scan_words_parse reads exactly N words, else -1. */
size_t scan_words_format(const double *v, size_t n, char *buf, size_t len);
int scan_words_parse(const char *text, double *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_SCAN_H */
