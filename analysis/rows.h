/* rows.h -- classification of attention rows: repeated maxima, entries
   with P~ == 1, sink strength and the top-k mass, per row and summed over
   many rows */
#ifndef BF16EMU_ANALYSIS_ROWS_H
#define BF16EMU_ANALYSIS_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * What is classified (doc/analysis.md, "Row classification").
 *
 * A row is n entries of one attention row: the scores S and/or the
 * unnormalised probabilities P~ = exp(S - m) of the same row, given as
 * FP32 bit patterns (the outputs of attention.h) or as doubles (the exact
 * reference of attn_exact.h).  At least one of the two is given.
 *
 * Entry j is
 *   invalid  when S_j is NaN or +Inf, or P~_j is NaN, infinite or
 *            negative;
 *   masked   when S is given and S_j <= mask_below (-Inf by default:
 *            only -Inf entries; -3.3e38 also masks the repo's fill value
 *            -3.39e38).  Masked entries are left out of every statistic,
 *            their P~ included;
 *   visible  otherwise.
 *
 * The key values x_j are S_j when S is given, else P~_j.  Over the
 * visible entries:
 *   max      the largest x_j;
 *   n_max    the number of x_j == max (exact equality);
 *   n_near   the number of x_j >= max - tol (max - tol rounded to nearest
 *            as a double; n_near >= n_max, equal when tol = 0);
 *   gap      max - (the largest x_j < max), rounded as a double; +Inf
 *            when every visible x_j equals max.
 * The probabilities: P~_j as given, or, without P~, P~_j = 1 where S_j ==
 * max and exp(S_j - max) (the C library's exp, in double) elsewhere;
 *   n_one    the number of P~_j == 1 exactly (without P~: n_max, the
 *            count an exact exp would give);
 *   l        sum of P~_j, in index order, in double;
 *   p_max    the sink strength max_j P~_j / l: the largest normalised
 *            probability P = P~ / l; sink_index its first index;
 *   k_mass   the fewest entries whose probabilities add up to at least
 *            mass * l (Su's statistic, mass = 0.9): the P~_j sorted in
 *            decreasing order, summed in that order in double, and k the
 *            first count whose partial sum reaches mass times the full
 *            sum of that order; k_frac = k_mass / n_visible.
 *
 * The class, by the first rule that applies:
 *   ROWS_INVALID   an invalid entry (nothing else is computed: max, gap,
 *                  l, p_max and k_frac are NaN, the counts 0);
 *   ROWS_MASKED    no visible entry (n = 0 included): max = -Inf, l = 0,
 *                  p_max, gap and k_frac NaN, the counts 0;
 *   ROWS_REPEATED  n_max >= 2: the maximum occurs more than once (the
 *                  paper's trigger when S and P~ come from an unfixed
 *                  forward: then n_one = n_max);
 *   ROWS_NEAR      n_max == 1 and n_near >= 2: another entry within tol
 *                  of the maximum (the repo detector's tolerance, here in
 *                  double);
 *   ROWS_SINK      p_max >= sink (0.5 by default): one key holds at least
 *                  that share of the row's probability;
 *   ROWS_SINGLE    otherwise: one clear maximum, no sink.
 * A row where l = 0 (every given P~ is 0) is classified by its key values
 * and has p_max and k_frac NaN, k_mass 0.
 *--------------------------------------------------------------------------*/

/* Return codes. */
enum
{
    ROWS_OK = 0,
    ROWS_EINVAL = -1 /* a NULL pointer where data is needed, or bad
                        options */
};

typedef enum
{
    ROWS_INVALID = 0,
    ROWS_MASKED,
    ROWS_REPEATED,
    ROWS_NEAR,
    ROWS_SINK,
    ROWS_SINGLE
} rows_class;
#define ROWS_N_CLASSES 6

/* "invalid", "masked", "repeated", "near", "sink", "single"; NULL for a
   value out of range. */
const char *rows_class_name(rows_class c);

typedef struct rows_options
{
    double tol;        /* near-max tolerance, >= 0 (1e-3, the repo's) */
    double sink;       /* sink threshold on p_max, in (0, 1] (0.5) */
    double mass;       /* target mass of k_mass, in (0, 1] (0.9) */
    double mask_below; /* S <= mask_below is masked; not NaN (-Inf) */
} rows_options;

/* The defaults above. */
rows_options rows_options_default(void);
/* NULL when OPT is usable, else a static message naming the field. */
const char *rows_options_check(const rows_options *opt);

typedef struct rows_info
{
    size_t n;         /* entries */
    size_t n_invalid; /* invalid entries */
    size_t n_masked;  /* masked entries (n_visible = n - n_masked) */
    double max;       /* the largest key value */
    size_t n_max;     /* key values equal to max */
    size_t n_near;    /* key values >= max - tol */
    double gap;       /* max - the next smaller key value */
    size_t n_one;     /* P~ == 1 exactly */
    double l;         /* sum of P~ */
    double p_max;     /* max P = max P~ / l (sink strength) */
    size_t sink_index;
    size_t k_mass; /* top-k count reaching mass * l (0: not computed) */
    double k_frac; /* k_mass / n_visible (NaN: not computed) */
    rows_class cls;
} rows_info;

/* Classifies one row of N entries: S and P (FP32 bit patterns; either may
   be NULL, not both unless N = 0).  OPT NULL means the defaults.  WORK
   holds N doubles for the top-k count; with WORK NULL k_mass is 0 and
   k_frac NaN.  Fills *INFO.  Returns ROWS_OK, or ROWS_EINVAL (bad options,
   INFO NULL, or no data for N > 0; *INFO untouched). */
int rows_classify(size_t n, const uint32_t *s, const uint32_t *p,
                  const rows_options *opt, double *work, rows_info *info);
/* The same for rows of doubles (masked scores -Inf, as attn_exact.h
   writes them). */
int rows_classify_d(size_t n, const double *s, const double *p,
                    const rows_options *opt, double *work, rows_info *info);

/*----------------------------------------------------------------------------
 * Many rows: counts and sums that merge exactly (integer counts; sums of
 * doubles in the order rows were added).
 *--------------------------------------------------------------------------*/
#define ROWS_HIST 9 /* n_max histogram: 0 .. 7, then 8 or more */

typedef struct rows_summary
{
    uint64_t rows;
    uint64_t by_class[ROWS_N_CLASSES];
    uint64_t hist_n_max[ROWS_HIST]; /* rows by n_max (0: invalid or masked
                                       rows) */
    uint64_t max_n_max;             /* the largest n_max */
    uint64_t one_ge2;  /* rows with n_one >= 2 (the paper's trigger) */
    uint64_t near_ge2; /* rows with n_near >= 2 (repeated or near) */
    uint64_t sink;     /* rows with p_max >= the sink threshold (also
                          repeated and near ones) */
    uint64_t n_prob;   /* rows with a p_max (not NaN) */
    double sum_p_max, max_p_max;
    uint64_t n_k; /* rows with a k_mass */
    double sum_k_mass, sum_k_frac;
} rows_summary;

void rows_summary_init(rows_summary *s);
/* Adds one classified row; SINK_THRESHOLD is the options' sink. */
void rows_summary_add(rows_summary *s, const rows_info *info,
                      double sink_threshold);
/* INTO += FROM. */
void rows_summary_merge(rows_summary *into, const rows_summary *from);

/* What is derived: fractions of all rows (NaN when there are none) and
   means over the rows that have the quantity (NaN when none has). */
typedef struct rows_fractions
{
    double by_class[ROWS_N_CLASSES];
    double one_ge2, near_ge2, sink;
    double mean_p_max, mean_k_mass, mean_k_frac;
} rows_fractions;

void rows_summary_fractions(const rows_summary *s, rows_fractions *f);

/* Classifies ROWS rows of COLS entries each (a [B,H,Nq,Nk] tensor is ROWS
   = B*H*Nq rows of COLS = Nk; S and P as in rows_classify, row-major).
   INFO (NULL or ROWS entries) receives each row's result; SUM (NULL or
   initialised) has every row added.  WORK: COLS doubles, or NULL.
   Returns ROWS_OK or ROWS_EINVAL (nothing written). */
int rows_classify_tensor(size_t rows, size_t cols, const uint32_t *s,
                         const uint32_t *p, const rows_options *opt,
                         double *work, rows_info *info, rows_summary *sum);
int rows_classify_tensor_d(size_t rows, size_t cols, const double *s,
                           const double *p, const rows_options *opt,
                           double *work, rows_info *info, rows_summary *sum);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_ROWS_H */
