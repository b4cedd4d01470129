/* reproduce_local.h -- what the files of bf16emu reproduce share:
   reproduce.c (the targets, the steps, the options and main),
   reproduce_help.c (the help), reproduce_progress.c (the progress on
   stderr), reproduce_exact.c (T1-T8, on crafted values),
   reproduce_bias.c (T9-T13 and the sweep, the bias measurements) and
   reproduce_summary.c (the files of the results directory and
   summary.md).  The targets, the steps, the context of one run and the
   functions one file calls in another. */
#ifndef BF16EMU_EXPERIMENTS_REPRODUCE_LOCAL_H
#define BF16EMU_EXPERIMENTS_REPRODUCE_LOCAL_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/attn_exact.h"
#include "analysis/gen.h"
#include "analysis/gradient.h"
#include "analysis/point.h"
#include "experiments/cli.h"
#include "experiments/plot.h"
#include "softfloat/mma.h"

#define CMD "reproduce"

/*----------------------------------------------------------------------------
 * Targets and the context.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *id, *what, *expected;
    char obtained[600];
    bool run, pass;
    double seconds;
} target;

enum
{
    T1,
    T2,
    T3,
    T4,
    T5,
    T6,
    T7,
    T8,
    T9,
    T10,
    T11,
    T12,
    T13,
    N_T
};

/* The steps of a run: targets computed together, in this order. */
enum
{
    S_TRACE,
    S_T4,
    S_T5T6,
    S_T7T8,
    S_T9,
    S_T10,
    S_T11,
    S_T12T13,
    S_SWEEP,
    N_STEP
};

#define TBIT(t) (1u << (t))

static const struct
{
    const char *label;
    unsigned targets; /* TBIT mask; 0 for the sweep */
    /* seconds of a full and of a quick run on an idle 2-core machine with
       2 threads: the prior of the ETA, which the elapsed time corrects */
    double w_full, w_quick;
    const char *heading; /* how its section of summary.md starts, or NULL */
} step_defs[N_STEP] = {
    {"T1-T3", TBIT(T1) | TBIT(T2) | TBIT(T3), 0.01, 0.01, "## T1-T3:"},
    {"T4", TBIT(T4), 0.05, 0.01, NULL},
    {"T5, T6", TBIT(T5) | TBIT(T6), 0.03, 0.03, NULL},
    {"T7, T8", TBIT(T7) | TBIT(T8), 0.01, 0.01, NULL},
    {"T9", TBIT(T9), 50.0, 10.0, "## T9:"},
    {"T10", TBIT(T10), 7.0, 2.8, "## T10:"},
    {"T11", TBIT(T11), 0.01, 0.01, "## T11:"},
    {"T12, T13", TBIT(T12) | TBIT(T13), 60.0, 12.0, "## T12, T13:"},
    {"sweep", 0, 21.0, 3.5, "## The bias against the mean of V"},
};

/* Progress on stderr: a bar redrawn in place on a terminal, else one
   line per step (so that logs get it), or nothing. */
typedef enum
{
    PROG_AUTO,
    PROG_OFF,
    PROG_LINES,
    PROG_BAR
} prog_mode;

typedef struct
{
    prog_mode mode;
    int nthreads, n_targets, n_done;
    double t0, last_draw;
    double w_total, w_done, w_step; /* step weights (step_defs[].w_*) */
    double frac;                    /* of the current step, 0 .. 1 */
    size_t drawn;                   /* length of the bar line last drawn */
    const char *label;
} progress;

/* A run recorded in summary.md. */
typedef struct
{
    int id;
    char date[32], version[32], samples[16], computed[96];
    double seconds;
    bool sweep; /* it computed the sweep */
} run_rec;

#define MAX_RUNS 64

/* What an earlier summary.md in the output directory holds, for a run
   with --only to merge into. */
typedef struct
{
    int row_run[N_T]; /* the run of each target's row; 0: no row */
    bool pass[N_T];
    char obtained[N_T][600];
    run_rec runs[MAX_RUNS];
    int nruns, max_id;
    char *section[N_STEP]; /* each step's section (malloc'd), or NULL */
    int sweep_run;         /* the run of the sweep section, or 0 */
} prior;

typedef struct
{
    const char *out;
    bool quick, force, no_plot, json;
    long threads;
    bool only[N_T];
    bool only_set;
    prog_mode prog_want;
    target t[N_T];
    cli_buf section[N_STEP]; /* this run's sections of summary.md */
    int plot_missing;
    char plot_error[512];
    progress *prog;
    prior *prev; /* NULL: a summary of this run alone */
    int run_id;
} repro;

/* What each target computes and what the paper states (reproduce.c). */
typedef struct
{
    const char *what, *expected;
} repro_spec;

extern const repro_spec repro_specs[N_T];
extern const char *const repro_target_ids[N_T]; /* "T1" .. "T13" */

/* reproduce.c */
void repro_result(target *t, bool pass, const char *fmt, ...) CLI_PRINTF(3, 4);

int repro_nthreads(const repro *r);

/* The targets of MASK (TBIT bits), consecutive ones as a range, into BUF
   of N bytes; returns BUF. */
const char *repro_ids_str(unsigned mask, char *buf, size_t n);

unsigned repro_run_mask(const repro *r);

bool repro_step_runs(const repro *r, int s);

double repro_step_weight(const repro *r, int s);

/* reproduce_progress.c */
/* Called by the thread that runs the step (thread 0 of a parallel loop):
   FRAC of the step is done.  Redraws the bar at most 5 times a second;
   without the bar, a line when nothing was printed for 30 s. */
void repro_prog_tick(progress *p, double frac);

bool repro_master_thread(void);

void repro_prog_begin(repro *r, progress *p);

void repro_prog_step_begin(repro *r, int s);

void repro_prog_step_end(repro *r, int s, double seconds, bool ok);

void repro_prog_end(repro *r);

/* reproduce_exact.c */
double repro_f32v(uint32_t w);

double repro_bf16v(uint16_t b);

void repro_trace_targets(repro *r, cli_buf *dat);

void repro_t4_products(repro *r);

void repro_t5_t6(repro *r);

void repro_t7_t8(repro *r);

/* reproduce_bias.c */
/* T12 and T13. */
void repro_t12_t13(repro *r, cli_buf *csv, cli_buf *dat);

void repro_t9_ablations(repro *r, cli_buf *csv);

void repro_t10_steps(repro *r, cli_buf *dat);

void repro_t11_prefix(repro *r, cli_buf *dat);

int repro_run_sweep_part(repro *r);

/* reproduce_summary.c */
/* Writes TEXT to OUT/NAME; false on failure (message printed). */
bool repro_write_file(const repro *r, const char *name, const char *text,
                      size_t len);

/* Runs the gnuplot script SCRIPT on OUT/DATA into OUT/BASE.{png,svg}. */
void repro_plot(repro *r, const char *script, const char *data,
                const char *base, const char *extra);

void repro_prior_free(prior *pv);

/* Reads TEXT, a summary.md written by reproduce (this version's or the
   earlier one without the run column), into PV: the target rows, the
   runs, the sections.  Lines it does not know are left out; the
   gnuplot notes belong to the run that wrote them and are dropped.
   False when out of memory. */
bool repro_prior_parse(prior *pv, const char *text);

/* The rows of the summary: this run's targets, and from the earlier
   summary (when merging) the others; *KEPT the targets kept. */
void repro_summary_rows(const repro *r, int *row_run, bool *pass,
                        const char **obtained, unsigned *kept);

/* The run of the sweep section: this run's, the earlier one's, or 0. */
int repro_sweep_run(const repro *r);

void repro_summary(const repro *r, cli_buf *b, double total_s);

#endif
