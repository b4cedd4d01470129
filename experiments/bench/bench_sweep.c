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

#define SWEEP_POINTS 54.0 /* the default grid */

/* The command that runs PROG sweep with THREADS threads into DIR, into
   CMD (N bytes). */
static const char *
sweep_cmd(char *cmd, size_t n, const char *prog, const char *dir,
          int threads, int trials)
{
    snprintf(cmd, n,
             "'%s' sweep --out '%s/out' --force --no-plot --quiet "
             "--threads %d --trials %d >/dev/null",
             prog, dir, threads, trials);
    return cmd;
}

void
bench_sweep(const char *prog)
{
    char dir[] = "/tmp/bf16emu-bench-XXXXXX", c1[4096], c2[4096];
    double m1, m2;
    int rounds = bench_cfg.quick ? 1 : 3, trials = bench_cfg.quick ? 1 : 2;
    bool ok;

    if (!bench_scratch("sweep", prog, dir))
        return;
    ok = bench_system_pair(sweep_cmd(c1, sizeof c1, prog, dir, 1, trials),
                           sweep_cmd(c2, sizeof c2, prog, dir, 2, trials),
                           rounds, &m1, &m2);
    if (!ok)
        fprintf(stderr, "bench: cannot run %s sweep\n", prog);
    bench_remove_dir(dir);
    if (ok)
        bench_row("sweep 54 points 2 threads vs 1 (speed-up)",
                  SWEEP_POINTS / m2, SWEEP_POINTS / m1, "point/s", m1 / m2,
                  BENCH_AT_LEAST, 1.8);
}
