/* bench_sweep.c -- OpenMP scaling of bf16emu sweep: the default grid's 54
   points with fewer trials, one thread against two (wall clock) */
#define _POSIX_C_SOURCE 200809L
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench/bench.h"

#define MAX_SWEEP_ROUNDS 9
#define SWEEP_POINTS 54.0 /* the default grid */

/* Runs PROG sweep with THREADS threads into DIR; the wall seconds, or a
   negative number when it fails. */
static double
run_sweep(const char *prog, const char *dir, int threads, int trials)
{
    char cmd[4096];

    snprintf(cmd, sizeof cmd,
             "'%s' sweep --out '%s/out' --force --no-plot --quiet "
             "--threads %d --trials %d >/dev/null",
             prog, dir, threads, trials);
    return bench_system(cmd);
}

void
bench_sweep(const char *prog)
{
    char dir[] = "/tmp/bf16emu-bench-XXXXXX";
    double one[MAX_SWEEP_ROUNDS], two[MAX_SWEEP_ROUNDS], m1, m2;
    int rounds = bench_cfg.quick ? 1 : 3, trials = bench_cfg.quick ? 1 : 2;

    if (!bench_scratch("sweep", prog, dir))
        return;
    /* one and two threads alternately, so that a change of the machine's
       load hits both */
    for (int i = 0; i < rounds; i++) {
        one[i] = run_sweep(prog, dir, 1, trials);
        two[i] = run_sweep(prog, dir, 2, trials);
        if (one[i] < 0 || two[i] < 0) {
            fprintf(stderr, "bench: cannot run %s sweep\n", prog);
            rounds = 0;
            break;
        }
    }
    bench_remove_dir(dir);
    if (rounds == 0)
        return;
    m1 = bench_median(one, rounds);
    m2 = bench_median(two, rounds);
    bench_row("sweep 54 points 2 threads vs 1 (speed-up)", SWEEP_POINTS / m2,
              SWEEP_POINTS / m1, "point/s", m1 / m2, BENCH_AT_LEAST, 1.8);
}
