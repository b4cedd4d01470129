/* bench_scan.c -- bf16emu scan on the H200 repeated-max dump (4 heads of
   128 x 128 x 64), the binary64 reference against the exact (MPFR) one,
   one thread (wall clock) */
#define _POSIX_C_SOURCE 200809L
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench/bench.h"

#define MAX_SCAN_ROUNDS 9
#define SCAN_HEADS 4.0
#define SCAN_DUMP "tests/data/gpu/sdpa_h200_d64_repmax.safetensors"

static double
run_scan(const char *prog, const char *man, const char *dump,
         const char *ref)
{
    char cmd[16384];

    snprintf(cmd, sizeof cmd,
             "'%s' scan --quiet --threads 1 --reference %s --manifest '%s' "
             "'%s' >/dev/null",
             prog, ref, man, dump);
    return bench_system(cmd);
}

void
bench_scan(const char *prog, const char *srcdir)
{
    char dir[] = "/tmp/bf16emu-bench-XXXXXX", man[4096], dump[4096];
    double ex[MAX_SCAN_ROUNDS], fast[MAX_SCAN_ROUNDS], m1, m2;
    int rounds = bench_cfg.quick ? 1 : 3;
    FILE *f;

    if (!bench_scratch("scan", prog, dir))
        return;
    snprintf(dump, sizeof dump, "%s/%s", srcdir, SCAN_DUMP);
    snprintf(man, sizeof man, "%s/m.json", dir);
    f = fopen(man, "w");
    if (f == NULL || fputs("{\"calls\": [{\"layer\": 0, \"step\": 0, "
                           "\"prefix\": \"\", \"causal\": false, \"scale\": "
                           "null, \"layout\": \"bhnd\", \"dtype\": "
                           "\"bfloat16\", \"backend\": \"flash\"}]}\n",
                           f) < 0
        || fclose(f) != 0) {
        fprintf(stderr, "bench: scan: cannot write %s\n", man);
        rounds = 0;
    }
    for (int i = 0; i < rounds; i++) {
        ex[i] = run_scan(prog, man, dump, "exact");
        fast[i] = run_scan(prog, man, dump, "binary64");
        if (ex[i] < 0 || fast[i] < 0) {
            fprintf(stderr, "bench: cannot run %s scan on %s\n", prog, dump);
            rounds = 0;
            break;
        }
    }
    bench_remove_dir(dir);
    if (rounds == 0)
        return;
    m1 = bench_median(ex, rounds);
    m2 = bench_median(fast, rounds);
    bench_row("scan head 128x128x64 binary64 vs exact",
              SCAN_HEADS / m2, SCAN_HEADS / m1, "head/s", m1 / m2,
              BENCH_AT_LEAST, 5.0);
}
