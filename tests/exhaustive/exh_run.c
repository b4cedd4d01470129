/* exh_run.c -- the driver of the exhaustive programs */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/round.h"
#include "exh_run.h"
#include "tests/support/support.h"

#define N_PRINT 10
#define N_SAMPLES (1 << 20)

typedef struct
{
    uint64_t key; /* input * 8 + mode */
    uint32_t in;
    sf_round rm;
    uint64_t want, got;
    unsigned fw, fg;
} failure;

/* Keeps the N_PRINT failures with the smallest keys, sorted, so that what
   is printed does not depend on the number of threads. */
static void
keep_failure(failure *list, unsigned *n, const failure *f)
{
    unsigned i, pos = 0;

    if (*n == N_PRINT && f->key >= list[N_PRINT - 1].key)
        return;
    while (pos < *n && list[pos].key < f->key)
        pos++;
    if (*n < N_PRINT)
        (*n)++;
    for (i = *n - 1; i > pos; i--)
        list[i] = list[i - 1];
    list[pos] = *f;
}

static unsigned long
cross_check(const exh_program *p)
{
    unsigned long bad = 0;
    long long i;
    bool threads = oracle_thread_safe();

    (void)threads;
    EXH_PRAGMA(omp parallel if (threads) reduction(+ : bad))
    {
        oracle *o = oracle_new();
        EXH_PRAGMA(omp for schedule(static))
        for (i = 0; i < N_SAMPLES; i++)
            bad += p->cross_check(o, (uint64_t)i);
        oracle_free(o);
    }
    return bad;
}

/* Job J on leading operands OFFSET, OFFSET + STRIDE, ...: adds the
   inputs and mismatches per mode to COUNTS and BAD and prints the first
   mismatches. */
static void
run_job(const exh_program *p, unsigned j, unsigned long stride,
        unsigned long offset, unsigned long long *counts,
        unsigned long long *bad)
{
    failure fails[N_PRINT];
    unsigned n_fails = 0, m;
    long long hi, done = 0;
    double t0 = ref_now();

    EXH_PRAGMA(omp parallel)
    {
        unsigned long long lc[6] = {0}, lb[6] = {0};
        failure lf[N_PRINT];
        unsigned ln = 0, i;

        EXH_PRAGMA(omp for schedule(dynamic, 16))
        for (hi = (long long)offset; hi < 65536; hi += (long long)stride) {
            uint32_t lo;
            long long d;
            for (lo = 0; lo < 65536; lo++) {
                uint32_t in = ((uint32_t)hi << 16) | lo;
                exh_results res;
                unsigned mm;
                p->run(j, in, &res);
                for (mm = 0; mm < 6; mm++) {
                    lc[mm]++;
                    if (res.want[mm] != res.got[mm]
                        || res.fw[mm] != res.fg[mm]) {
                        failure f = {(uint64_t)in * 8 + mm,
                                     in,
                                     ref_modes[mm],
                                     res.want[mm],
                                     res.got[mm],
                                     res.fw[mm],
                                     res.fg[mm]};
                        lb[mm]++;
                        keep_failure(lf, &ln, &f);
                    }
                }
            }
            EXH_PRAGMA(omp atomic capture)
            d = ++done;
            if (d % p->progress_every == 0) {
                double el = ref_now() - t0;
                double frac = (double)d * (double)stride / 65536.0;
                fprintf(stderr, "%s: %s %5.1f%%, %.0f s, about %.0f s left\n",
                        p->name, p->job_names[j], 100.0 * frac, el,
                        el / frac - el);
            }
        }
        EXH_PRAGMA(omp critical)
        {
            for (i = 0; i < 6; i++) {
                counts[i] += lc[i];
                bad[i] += lb[i];
            }
            for (i = 0; i < ln; i++)
                keep_failure(fails, &n_fails, &lf[i]);
        }
    }
    for (m = 0; m < n_fails; m++)
        p->print(j, fails[m].in, fails[m].rm, fails[m].want, fails[m].fw,
                 fails[m].got, fails[m].fg);
    fflush(stdout);
}

int
exh_main(const exh_program *p, int argc, char **argv)
{
    unsigned long stride = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
    unsigned long offset = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
    unsigned long long counts[EXH_MAX_JOBS][6], bad[EXH_MAX_JOBS][6];
    unsigned long long total_bad = 0;
    double secs[EXH_MAX_JOBS], t0, t_start;
    unsigned j, m;

    if (p->n_jobs > EXH_MAX_JOBS) {
        fprintf(stderr, "%s: too many jobs\n", p->name);
        return 2;
    }
    if (stride == 0)
        stride = 1;
    (void)tst_seed();
    t_start = t0 = ref_now();
    if (cross_check(p) != 0) {
        fprintf(stderr, "%s: the reference is wrong; stopping\n", p->name);
        return 2;
    }
    fprintf(stderr, "%s: reference agrees with MPFR on 2^20 %s (%.1f s)\n",
            p->name, p->sample, ref_now() - t0);

    for (j = 0; j < p->n_jobs; j++) {
        memset(counts[j], 0, sizeof counts[j]);
        memset(bad[j], 0, sizeof bad[j]);
        t0 = ref_now();
        run_job(p, j, stride, offset, counts[j], bad[j]);
        secs[j] = ref_now() - t0;
    }

    printf("\n| %s | mode | %s | mismatches | wall time (s), all modes |\n"
           "|---|---|---:|---:|---:|\n",
           p->job_head, p->input_head);
    for (j = 0; j < p->n_jobs; j++)
        for (m = 0; m < 6; m++) {
            printf("| %s | %s | %llu | %llu | %.0f |\n", p->job_names[j],
                   sf_round_name(ref_modes[m]), counts[j][m], bad[j][m],
                   secs[j]);
            total_bad += bad[j][m];
        }
    printf("\n%s: %s (stride %lu, offset %lu, %.0f s in all)\n", p->name,
           total_bad == 0 ? "all match" : "MISMATCHES", stride, offset,
           ref_now() - t_start);
    return total_bad == 0 ? 0 : 1;
}
