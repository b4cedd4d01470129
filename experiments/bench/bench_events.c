/* bench_events -- what the rounding-event hook costs when no sink is set

   Built twice from this file and softfloat/'s sources: as they are (hook
   present) and compiled with SF_NO_EVENT_HOOK (hook removed). Each run
   prints one line per operation: "<label> <op> <ns per op, median>";
   make bench (experiments/bench/bench --events) or
   experiments/bench/run-events.sh runs both builds interleaved and prints
   the ratios.  Times are the CPU time of the thread, which other
   processes sharing the core do not inflate. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softfloat/softfloat.h"

#define N_VALUES 4096
#define N_REPEAT 7

static uint64_t
next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint16_t a16[N_VALUES], b16[N_VALUES];
static uint32_t a32[N_VALUES], b32[N_VALUES], c32[N_VALUES];

/* Median over N_REPEAT runs of ns per operation; OP selects the loop. */
static double
measure(int op, long iters)
{
    double t[N_REPEAT];
    volatile uint32_t sink = 0;

    for (int rep = 0; rep < N_REPEAT; rep++) {
        sf_env env = SF_ENV_IEEE;
        uint32_t acc = 0;
        double t0 = now();
        for (long it = 0; it < iters; it++) {
            for (int i = 0; i < N_VALUES; i++) {
                switch (op) {
                case 0:
                    acc ^= sf_bf16_add((sf_bf16){a16[i]}, (sf_bf16){b16[i]},
                                       SF_RNE, &env)
                               .bits;
                    break;
                case 1:
                    acc ^= sf_bf16_mul((sf_bf16){a16[i]}, (sf_bf16){b16[i]},
                                       SF_RNE, &env)
                               .bits;
                    break;
                case 2:
                    acc ^= sf_f32_add((sf_f32){a32[i]}, (sf_f32){b32[i]},
                                      SF_RNE, &env)
                               .bits;
                    break;
                default:
                    acc ^= sf_f32_fma((sf_f32){a32[i]}, (sf_f32){b32[i]},
                                      (sf_f32){c32[i]}, SF_RNE, &env)
                               .bits;
                    break;
                }
            }
        }
        t[rep] = (now() - t0) * 1e9 / ((double)iters * N_VALUES);
        sink ^= acc ^ env.flags;
    }
    qsort(t, N_REPEAT, sizeof t[0], cmp_double);
    (void)sink;
    return t[N_REPEAT / 2];
}

int
main(int argc, char **argv)
{
    static const char *const names[] = {"bf16_add", "bf16_mul", "f32_add",
                                        "f32_fma"};
    const char *label = argc > 1 ? argv[1] : "run";
    long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
    uint64_t s = 1;

    for (int i = 0; i < N_VALUES; i++) {
        /* finite normal operands in a few binades around 1 */
        a16[i] =
            (uint16_t)(0x3C00 + (next(&s) & 0x07FF) + ((next(&s) & 1) << 15));
        b16[i] = (uint16_t)(0x3C00 + (next(&s) & 0x07FF));
        a32[i] = (uint32_t)(0x3C000000 + (next(&s) & 0x07FFFFFF));
        b32[i] = (uint32_t)(0x3C000000 + (next(&s) & 0x07FFFFFF)
                            + ((next(&s) & 1) << 31));
        c32[i] = (uint32_t)(0x3C000000 + (next(&s) & 0x07FFFFFF));
    }
    for (int op = 0; op < 4; op++)
        printf("%s %s %.3f\n", label, names[op], measure(op, iters));
    return 0;
}
