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

#define SCAN_HEADS 4.0
#define SCAN_DUMP "tests/data/gpu/sdpa_h200_d64_repmax.safetensors"

/* The command that runs PROG scan with reference REF on DUMP, into CMD
   (N bytes). */
static const char *
scan_cmd(char *cmd, size_t n, const char *prog, const char *man,
         const char *dump, const char *ref)
{
    snprintf(cmd, n,
             "'%s' scan --quiet --threads 1 --reference %s --manifest '%s' "
             "'%s' >/dev/null",
             prog, ref, man, dump);
    return cmd;
}

void
bench_scan(const char *prog, const char *srcdir)
{
    char dir[] = "/tmp/bf16emu-bench-XXXXXX", man[4096], dump[4096];
    char c1[16384], c2[16384];
    double m1, m2;
    int rounds = bench_cfg.quick ? 1 : 3;
    bool ok;
    FILE *f;

    if (!bench_scratch("scan", prog, dir))
        return;
    snprintf(dump, sizeof dump, "%s/%s", srcdir, SCAN_DUMP);
    snprintf(man, sizeof man, "%s/m.json", dir);
    f = fopen(man, "w");
    ok = f != NULL
         && fputs("{\"calls\": [{\"layer\": 0, \"step\": 0, "
                  "\"prefix\": \"\", \"causal\": false, \"scale\": "
                  "null, \"layout\": \"bhnd\", \"dtype\": "
                  "\"bfloat16\", \"backend\": \"flash\"}]}\n",
                  f) >= 0;
    if (f != NULL && fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "bench: scan: cannot write %s\n", man);
    else if (!(ok = bench_system_pair(
                   scan_cmd(c1, sizeof c1, prog, man, dump, "exact"),
                   scan_cmd(c2, sizeof c2, prog, man, dump, "binary64"),
                   rounds, &m1, &m2)))
        fprintf(stderr, "bench: cannot run %s scan on %s\n", prog, dump);
    bench_remove_dir(dir);
    if (ok)
        bench_row("scan head 128x128x64 binary64 vs exact", SCAN_HEADS / m2,
                  SCAN_HEADS / m1, "head/s", m1 / m2, BENCH_AT_LEAST, 5.0);
}
