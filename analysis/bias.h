/* bias.h -- mergeable statistics of a stream of signed errors and of
   rounding events: moments, sign and direction counts, by binade and by
   operation */
#ifndef BF16EMU_ANALYSIS_BIAS_H
#define BF16EMU_ANALYSIS_BIAS_H

#include <stdbool.h>
#include <stdint.h>

#include "softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * One cell: the statistics of one stream (doc/exact.md, "Bias
 * statistics", has the definitions and the merge bound).
 *
 * Errors: every finite error x enters the moments (Welford's running mean
 * and sum of squared deviations m2) and the sign counts; a NaN or
 * infinite error is only counted in NONFINITE.
 *
 * Rounding events (bias_cell_add_event): each event is counted once in
 * EVENTS and in exactly one of
 *   EXACT       dir 0: nothing was discarded (or no rounding: NaN);
 *   AWAY/TOWARD the result's magnitude is larger (dir +1, "up in
 *               magnitude", away from zero) or smaller (dir -1, "down in
 *               magnitude", toward zero) than the exact value's;
 * the inexact ones are counted again in exactly one of
 *   UP/DOWN     the signed direction: the result is above the exact value
 *               (toward +Inf: away from zero for a positive exact value,
 *               toward zero for a negative one) or below it;
 * and in exactly one of
 *   TIES/NONTIES exactly half an ulp was discarded, or not; TIES_AWAY
 *               counts the ties rounded away from zero.
 * So EVENTS = EXACT + AWAY + TOWARD, AWAY + TOWARD = UP + DOWN =
 * TIES + NONTIES.  Each event's signed error, in ulps of its result
 * (sf_event_error_ulps), also enters the moments of the same cell.
 *--------------------------------------------------------------------------*/
typedef struct bias_cell
{
    uint64_t n;      /* finite errors in the moments */
    double mean, m2; /* Welford: mean, sum of squared deviations */
    double min, max; /* +Inf and -Inf while n = 0 */
    uint64_t neg, zero, pos;
    uint64_t nonfinite;
    /* rounding events */
    uint64_t events, exact;
    uint64_t away, toward; /* by magnitude */
    uint64_t up, down;     /* by signed direction */
    uint64_t ties, nonties, ties_away;
} bias_cell;

/* The empty cell. */
void bias_cell_init(bias_cell *c);
/* Adds one signed error X (any unit; the project's convention is
   computed - exact). */
void bias_cell_add(bias_cell *c, double x);
/* Adds one rounding event: its counts and its error in ulps. */
void bias_cell_add_event(bias_cell *c, const sf_event *ev);
/* INTO += FROM (Chan, Golub and LeVeque's pairwise update).  Counts add
   exactly; the moments agree with a single pass over both streams within
   the bound of doc/exact.md.  INTO and FROM may be the same cell only if
   the caller wants the stream counted twice. */
void bias_cell_merge(bias_cell *into, const bias_cell *from);

/* What is derived from a cell. */
typedef struct bias_summary
{
    uint64_t n;
    double mean;         /* NaN when n = 0 */
    double min, max;     /* NaN when n = 0 */
    double var;          /* sample variance m2 / (n - 1) */
    double sd;           /* sqrt(var) */
    double se;           /* standard error sqrt(var / n) */
    double t;            /* mean / se; 0 when mean = se = 0, +-Inf when
                            only se = 0 */
    double ci_lo, ci_hi; /* mean -+ 1.959963984540054 se: the 95%
                            interval of the normal approximation */
    bool valid;          /* n >= 2; otherwise var, sd, se, t, ci_lo and
                            ci_hi are NaN */
} bias_summary;

/* The two-sided 95% quantile of the standard normal distribution. */
#define BIAS_Z95 1.959963984540054

void bias_summarize(const bias_cell *c, bias_summary *s);

/*----------------------------------------------------------------------------
 * An accumulator: one cell for everything, one per binade of the exact
 * (reference) value and one per operation.  Fixed arrays, no allocation;
 * about 53 KB.
 *
 * Binade keys: floor(log2 |ref|) for BIAS_BINADE_MIN <= e <= BIAS_BINADE_MAX
 * (index e - BIAS_BINADE_MIN), then BIAS_BIN_BELOW (0 < |ref| <
 * 2^BIAS_BINADE_MIN), BIAS_BIN_ABOVE (|ref| >= 2^(BIAS_BINADE_MAX+1)),
 * BIAS_BIN_ZERO and BIAS_BIN_NONE (NaN or infinite ref, or none given).
 *
 * Operation keys: 0 .. BIAS_N_OPS-2 as given (the sf_op codes of events,
 * SF_OP_ADD = 1 ... SF_OP_ACCUM + 6, or stage numbers the caller
 * chooses); anything larger goes to BIAS_OP_OTHER.
 *--------------------------------------------------------------------------*/
#define BIAS_BINADE_MIN (-160)
#define BIAS_BINADE_MAX 140
#define BIAS_BIN_BELOW (BIAS_BINADE_MAX - BIAS_BINADE_MIN + 1)
#define BIAS_BIN_ABOVE (BIAS_BIN_BELOW + 1)
#define BIAS_BIN_ZERO (BIAS_BIN_BELOW + 2)
#define BIAS_BIN_NONE (BIAS_BIN_BELOW + 3)
#define BIAS_N_BINS (BIAS_BIN_BELOW + 4)
#define BIAS_N_OPS 64
#define BIAS_OP_OTHER (BIAS_N_OPS - 1)

typedef struct bias_acc
{
    bias_cell all;
    bias_cell by_binade[BIAS_N_BINS];
    bias_cell by_op[BIAS_N_OPS];
} bias_acc;

void bias_init(bias_acc *a);
/* The binade key of REF and the operation key of OP. */
int bias_binade_key(double ref);
int bias_op_key(unsigned op);
/* Adds the error X of a value whose exact value is REF (NaN: no binade)
   under operation OP, to ALL, to REF's binade and to OP's cell. */
void bias_add(bias_acc *a, double x, double ref, unsigned op);
/* Adds an event to ALL, to the binade of its exact value and to the cell
   of its operation (ev->op). */
void bias_add_event(bias_acc *a, const sf_event *ev);
/* INTO += FROM, cell by cell. */
void bias_merge(bias_acc *into, const bias_acc *from);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_BIAS_H */
