/* sweep_local.h -- what the files of bf16emu sweep and merge share:
   sweep.c (the options and main), sweep_help.c (the help), sweep_run.c
   (the points and the run), sweep_mpi.c (the run under mpirun),
   sweep_output.c (the columns, sweep-meta.txt, sweep.json),
   sweep_plot.c (the plots) and sweep_merge.c (bf16emu merge).  The
   context of one run, the provenance of sweep.csv and the functions one
   file calls in another. */
#ifndef BF16EMU_EXPERIMENTS_SWEEP_LOCAL_H
#define BF16EMU_EXPERIMENTS_SWEEP_LOCAL_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include "analysis/point.h"
#include "experiments/cli.h"
#include "experiments/cli_mpi.h"
#include "experiments/fa_cli.h"
#include "experiments/grid.h"
#include "experiments/plot.h"

/* The subcommand, for messages. */
#define CMD "sweep"

/*
 * Output directory (--out, default ./sweep-out):
 *   sweep.csv        plain CSV: the column names, then one row per point
 *                    in index order, appended and flushed to disk after
 *                    each batch of points;
 *   sweep-meta.txt   the provenance of sweep.csv, "key = value" lines:
 *                    tool, version, the grid's hash, the number of points
 *                    of the grid, the shard (resume and merge check it);
 *   grid.txt         the canonical grid;
 *   sweep.json       the provenance and the same rows as JSON, written
 *                    (atomically) at the end;
 *   bias-KEY.dat, .png, .svg    for each axis KEY with two or more values
 *                    (key without '-': bias-vmean, bias-n, bias-policy):
 *                    the bias of O against it, one line per combination
 *                    of the other axes that vary; delta-KEY.* the same
 *                    for delta.
 * A point's numbers depend on the grid, the seed and the point only, not
 * on the thread count or the shard: every trial is computed on its own
 * (pt_trial) and a point's trials are merged in trial order.
 */

/*----------------------------------------------------------------------------
 * The context.
 *--------------------------------------------------------------------------*/
typedef struct
{
    sweep_grid grid;
    bool grid_ok;
    const char *out_dir;
    long threads;
    bool resume, force, quiet, dry_run, print_grid, json;
    int plot;     /* -1 auto, 0 no, 1 yes */
    int progress; /* -1 auto (unless --quiet), 0 no, 1 yes */
    uint64_t shard_i, shard_n;
    /* exp models, one per value of the exp axis */
    fa_cli_exp *exps;
    fa_cli_exp *policy_exps; /* exp "default": per policy of the axis */
    fa_cli_log logm;         /* lg2-sm90, when the policy axis has fa2 */
    char *text;              /* grid_text */
    uint64_t hash;
} sweep_ctx;

#define META_FILE "sweep-meta.txt"

typedef struct
{
    uint64_t hash;    /* FNV-1a of the canonical grid text */
    uint64_t npoints; /* of the whole grid */
    uint64_t shard_i, shard_n;
} sweep_meta;

/* The most columns of sweep.csv (sweep_split_csv). */
#define MAX_COLS 128

/* A batch of points: per point its statistics, its failure (or NULL)
   and its specification; TRIALS per point. */
typedef struct
{
    pt_stats *res;
    const char **why;
    pt_spec *specs;
    uint64_t trials;
} batch_work;

/* sweep_output.c */
void sweep_csv_header(cli_buf *b, bool stages);

void sweep_csv_row(cli_buf *b, const sweep_grid *g, uint64_t index,
                   const pt_stats *st, bool stages);

bool sweep_append_sync(int fd, const char *buf, size_t n);

/* Whether DIR (the value of --out) can hold the output: an existing
   directory, or a new one that CREATE makes; false after a message. */
bool sweep_out_dir_ok(const char *cmd, const char *dir, bool create);

void sweep_meta_text(cli_buf *b, const sweep_meta *m);

/* Parses TEXT, a sweep-meta.txt, into M.  Returns NULL, or what is
   wrong. */
const char *sweep_meta_parse(const char *text, sweep_meta *m);

/* Splits LINE (modified) at commas into at most MAX_COLS fields. */
size_t sweep_split_csv(char *line, char **f);

/* sweep.json and the plots, from the finished CSV in DIR. */
int sweep_finish_outputs(const char *cmd, const char *dir, const sweep_grid *g,
                         const char *grid_txt, const sweep_meta *m, int plot,
                         bool quiet);

/* Copies DIR/sweep.json to stdout. */
int sweep_print_json(const char *cmd, const char *dir);

/* A whole sweep's outputs into DIR: grid.txt (GRID_TXT), sweep-meta.txt
   (M), sweep.csv (CSV: the header and every point's row, in order), then
   sweep_finish_outputs, and with JSON sweep_print_json. */
int sweep_write_outputs(const char *cmd, const char *dir, const sweep_grid *g,
                        const char *grid_txt, const sweep_meta *m,
                        const cli_buf *csv, int plot, bool quiet, bool json);

/* sweep_plot.c */
/* The plots of the finished CSV into DIR; PLOT -1 (auto: no gnuplot, no
   plot), 1 (gnuplot required). */
int sweep_write_plots(const char *cmd, const char *dir, const sweep_grid *g,
                      const char *csv, int plot, bool quiet);

/* sweep_run.c */
uint64_t sweep_fnv1a(const char *s);

/* The description a policy-axis value names (flash is fa2). */
const fa_kernel *sweep_kernel(const char *name);

void sweep_point_spec(const sweep_ctx *x, uint64_t index, pt_spec *s);

/* "cost C: ..." for the points of this shard, without a newline. */
void sweep_cost_text(cli_buf *b, const sweep_ctx *x, uint64_t npoints);

int sweep_thread_count(const sweep_ctx *x);

sweep_meta sweep_ctx_meta(const sweep_ctx *x, uint64_t npoints);

size_t sweep_batch_size(int nt);

bool sweep_batch_init(batch_work *w, size_t batch, uint64_t trials);

void sweep_batch_free(batch_work *w);

/* The rows of the NB points POINTS (at most the batch size) into ROWS. */
int sweep_compute_batch(const sweep_ctx *x, batch_work *w,
                        const uint64_t *points, size_t nb, int nt,
                        cli_buf *rows);

int sweep_run(sweep_ctx *x);

/* sweep_mpi.c */
int sweep_run_mpi(sweep_ctx *x);

#endif
