/* bench.h -- the make bench program: timing pairs and the result table */
#ifndef BF16EMU_BENCH_H
#define BF16EMU_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One side of a comparison: RUN does REPS repetitions of a unit of work
   worth ITEMS items (operations, elements, products, forward passes). */
typedef struct
{
    void (*run)(void *ctx, long reps);
    void *ctx;
    double items;
    bool wall; /* timed by the wall clock (threads); else by the CPU time
                  of the calling thread, which other processes sharing the
                  core do not inflate */
} bench_side;

/* Settings of the whole run (from the command line). */
typedef struct
{
    int rounds;      /* interleaved rounds per pair; the median is kept */
    double min_time; /* seconds one timed call should last at least */
    bool quick;      /* smaller shapes, for a smoke run */
    int isa;         /* env.isa of the attention rows (BF16EMU_ISA) */
} bench_opts;

extern bench_opts bench_cfg;

/* Seconds since an arbitrary origin: CLOCK_MONOTONIC when WALL, else the
   CPU time of the calling thread. */
double bench_now(bool wall);

/* Times EMU and BASE alternately bench_cfg.rounds times (after choosing
   a repetition count for each so that one call lasts about
   bench_cfg.min_time) and stores the median seconds per item of each. */
void bench_pair(const bench_side *emu, const bench_side *base, double *emu_s,
                double *base_s);
/* The same over ROUNDS rounds (at most 64), and *RATIO (unless NULL):
   the median of the rounds' own ratios, each of two times taken one
   after the other (a change in the machine's load between rounds falls
   on both of a round's times). */
void bench_pair_ratio(const bench_side *emu, const bench_side *base,
                      int rounds, double *emu_s, double *base_s,
                      double *ratio);
/* Times N sides (at most BENCH_GROUP_MAX) alternately ROUNDS times,
   each round running every side once in order (after choosing each
   side's repetitions as bench_pair does): T[k ROUNDS + i] the seconds
   per item of side k in round i. */
#define BENCH_GROUP_MAX 8
void bench_group(const bench_side *sides, int n, int rounds, double *t);
/* The median over ROUNDS (at most 64) of the rounds' ratios TA[i] /
   TB[i]. */
double bench_round_ratio(const double *ta, const double *tb, int rounds);
/* One side alone: the median of bench_cfg.rounds timed calls. */
double bench_one(const bench_side *side);

/* How a row's ratio (emulated time / baseline time) is judged. */
typedef enum
{
    BENCH_AT_MOST,  /* met when ratio <= target */
    BENCH_AT_LEAST, /* met when ratio >= target */
    BENCH_NONE      /* no target */
} bench_goal;

/* Adds a row: EMU and BASE are throughputs in UNIT; RATIO is printed as
   is; TARGET with GOAL decides the last column. */
void bench_row(const char *op, double emu, double base, const char *unit,
               double ratio, bench_goal goal, double target);
/* Adds a row whose baseline is absent (printed as "-"). */
void bench_row_alone(const char *op, double emu, const char *unit,
                     double ratio, bench_goal goal, double target);
/* Prints every row as one table on stdout. */
void bench_print_table(void);

/* The wall seconds system(CMD) took, or -1 when it did not exit 0. */
double bench_system(const char *cmd);
/* Runs the commands A and B alternately ROUNDS times (1 to
   BENCH_SYSTEM_ROUNDS_MAX; so that a change of the machine's load hits
   both), the median wall seconds of each into *MA and *MB; false,
   stopping there, when one does not exit 0. */
#define BENCH_SYSTEM_ROUNDS_MAX 9
bool bench_system_pair(const char *a, const char *b, int rounds, double *ma,
                       double *mb);
/* Before the row WHAT that runs PROG (the bf16emu program): false after
   a message when PROG is NULL or the scratch folder DIR (a mkdtemp
   template, made here) cannot be made. */
bool bench_scratch(const char *what, const char *prog, char *dir);
/* Removes the scratch folder DIR and all below it (a message on stderr
   when that fails). */
void bench_remove_dir(const char *dir);

/* The median of V[0..N-1] (reorders V). */
double bench_median(double *v, int n);

/* A splitmix64 step, for inputs. */
uint64_t bench_next(uint64_t *s);
/* BF16 bits of a value uniform in (-R, R) with the top 8 bits of the
   significand kept (truncated; any BF16 will do), from bench_next(S). */
uint16_t bench_rand_bf16(uint64_t *s, double r);
/* malloc(N), or "bench: out of memory" and exit 1. */
void *bench_xmalloc(size_t n);

/* The parts of the table, each adding its rows. */
void bench_scalar(void);
void bench_events(const char *hook_prog, const char *nohook_prog);
void bench_convert(void);
void bench_arrays(void);
void bench_gemm(void);
void bench_attn(void);
/* FlexAttention's description "flex" against fa2 (bench_flex.c). */
void bench_attn_flex(void);
void bench_exhaustive(void);
/* PROG: the bf16emu program (NULL: the row is left out with a message). */
void bench_sweep(const char *prog);
/* bf16emu scan (PROG) on SRCDIR's H200 dump: binary64 against the exact
   reference. */
void bench_scan(const char *prog, const char *srcdir);

#endif
