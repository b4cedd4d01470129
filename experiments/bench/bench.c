/* bench -- make bench: the emulator against native arithmetic, MPFR and
   the CPU's own BF16 conversion, printed as one table

   Usage: bench [--quick] [--rounds N] [--events HOOK NOHOOK]
                [--sweep BF16EMU] [PART...]
   PART is one of scalar, events, convert, gemm, attn, exhaustive, sweep,
   scan, arrays, flex
   (default: all).  Every ratio is the emulated time per item divided by
   the baseline's (for the thread rows, the one-thread time divided by the
   two-thread time), both measured alternately in the same run; each
   figure is the median of the rounds (the attention rows' decode and
   split pairs: at least 15 rounds, the ratio the median of the rounds'
   own ratios).  Times are the CPU time of the
   measuring thread, except for the thread rows (wall clock).  Progress goes to
   stderr, the table to stdout.  BF16EMU_ISA=auto|scalar|avx2|avx512 caps
   the vector paths of the attention rows (exit 2 for an unknown name or a
   path this CPU lacks); the GEMM rows force each path themselves. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "experiments/bench/bench.h"
#include "softfloat/softfloat.h"

bench_opts bench_cfg = {5, 0.05, false, 0};

double
bench_now(bool wall)
{
    struct timespec ts;

    clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t
bench_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint16_t
bench_rand_bf16(uint64_t *s, double r)
{
    double x = ((double)(bench_next(s) >> 11) * 0x1p-53 * 2 - 1) * r;
    float f = (float)x;
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

void *
bench_xmalloc(size_t n)
{
    void *p = malloc(n);

    if (p == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double
bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double
bench_system(const char *cmd)
{
    double t0, t1;

    t0 = bench_now(true);
    if (system(cmd) != 0)
        return -1;
    t1 = bench_now(true);
    return t1 - t0;
}

bool
bench_system_pair(const char *a, const char *b, int rounds, double *ma,
                  double *mb)
{
    double ta[BENCH_SYSTEM_ROUNDS_MAX], tb[BENCH_SYSTEM_ROUNDS_MAX];

    if (rounds > BENCH_SYSTEM_ROUNDS_MAX)
        rounds = BENCH_SYSTEM_ROUNDS_MAX;
    for (int i = 0; i < rounds; i++) {
        ta[i] = bench_system(a);
        tb[i] = bench_system(b);
        if (ta[i] < 0 || tb[i] < 0)
            return false;
    }
    *ma = bench_median(ta, rounds);
    *mb = bench_median(tb, rounds);
    return true;
}

bool
bench_scratch(const char *what, const char *prog, char *dir)
{
    if (prog == NULL) {
        fprintf(stderr, "bench: %s: no --sweep PROGRAM given\n", what);
        return false;
    }
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "bench: %s: mkdtemp: %s\n", what, strerror(errno));
        return false;
    }
    return true;
}

void
bench_remove_dir(const char *dir)
{
    char cmd[256];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: cannot remove %s\n", dir);
}

/* Repetitions so that one call of SIDE lasts about min_time (one warm-up
   call included). */
static long
calibrate(const bench_side *side)
{
    long reps = 1;

    for (;;) {
        double t0 = bench_now(side->wall), dt;
        side->run(side->ctx, reps);
        dt = bench_now(side->wall) - t0;
        if (dt >= bench_cfg.min_time || reps >= (1L << 30))
            return reps;
        if (dt < bench_cfg.min_time / 64)
            reps *= 16;
        else
            reps = (long)((double)reps * 1.2 * bench_cfg.min_time / dt) + 1;
    }
}

static double
timed(const bench_side *side, long reps)
{
    double t0 = bench_now(side->wall);

    side->run(side->ctx, reps);
    return (bench_now(side->wall) - t0) / ((double)reps * side->items);
}

#define MAX_ROUNDS 64

void
bench_pair_ratio(const bench_side *emu, const bench_side *base, int rounds,
                 double *emu_s, double *base_s, double *ratio)
{
    double te[MAX_ROUNDS], tb[MAX_ROUNDS], r[MAX_ROUNDS];
    long re = calibrate(emu), rb = calibrate(base);
    int n = rounds < MAX_ROUNDS ? rounds : MAX_ROUNDS;

    for (int i = 0; i < n; i++) {
        te[i] = timed(emu, re);
        tb[i] = timed(base, rb);
        r[i] = te[i] / tb[i];
    }
    *emu_s = bench_median(te, n);
    *base_s = bench_median(tb, n);
    if (ratio != NULL)
        *ratio = bench_median(r, n);
}

void
bench_group(const bench_side *sides, int n, int rounds, double *t)
{
    long reps[BENCH_GROUP_MAX];

    if (n > BENCH_GROUP_MAX)
        n = BENCH_GROUP_MAX;
    for (int k = 0; k < n; k++)
        reps[k] = calibrate(&sides[k]);
    for (int i = 0; i < rounds; i++)
        for (int k = 0; k < n; k++)
            t[k * rounds + i] = timed(&sides[k], reps[k]);
}

double
bench_round_ratio(const double *ta, const double *tb, int rounds)
{
    double r[MAX_ROUNDS];
    int n = rounds < MAX_ROUNDS ? rounds : MAX_ROUNDS;

    for (int i = 0; i < n; i++)
        r[i] = ta[i] / tb[i];
    return bench_median(r, n);
}

void
bench_pair(const bench_side *emu, const bench_side *base, double *emu_s,
           double *base_s)
{
    bench_pair_ratio(emu, base, bench_cfg.rounds, emu_s, base_s, NULL);
}

double
bench_one(const bench_side *side)
{
    double t[MAX_ROUNDS];
    long r = calibrate(side);

    for (int i = 0; i < bench_cfg.rounds; i++)
        t[i] = timed(side, r);
    return bench_median(t, bench_cfg.rounds);
}

/*----------------------------------------------------------------------------
 * The table.
 *--------------------------------------------------------------------------*/
typedef struct
{
    char op[64];
    double emu, base, ratio, target;
    bool has_base;
    char unit[16];
    bench_goal goal;
} row;

#define MAX_ROWS 160
static row rows[MAX_ROWS];
static int n_rows;

static void
add_row(const char *op, double emu, double base, bool has_base,
        const char *unit, double ratio, bench_goal goal, double target)
{
    row *r;

    if (n_rows == MAX_ROWS)
        return;
    r = &rows[n_rows++];
    snprintf(r->op, sizeof r->op, "%s", op);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    r->emu = emu;
    r->base = base;
    r->has_base = has_base;
    r->ratio = ratio;
    r->goal = goal;
    r->target = target;
    fprintf(stderr, "bench: %s done\n", op);
}

void
bench_row(const char *op, double emu, double base, const char *unit,
          double ratio, bench_goal goal, double target)
{
    add_row(op, emu, base, true, unit, ratio, goal, target);
}

void
bench_row_alone(const char *op, double emu, const char *unit, double ratio,
                bench_goal goal, double target)
{
    add_row(op, emu, 0, false, unit, ratio, goal, target);
}

/* A throughput with 4 significant digits and no exponent. */
static void
fmt_num(char *buf, size_t n, double x)
{
    if (x >= 1000)
        snprintf(buf, n, "%.0f", x);
    else if (x >= 100)
        snprintf(buf, n, "%.1f", x);
    else if (x >= 10)
        snprintf(buf, n, "%.2f", x);
    else if (x >= 1)
        snprintf(buf, n, "%.3f", x);
    else
        snprintf(buf, n, "%.4f", x);
}

void
bench_print_table(void)
{
    printf("%-44s %11s %11s %-8s %9s %10s %s\n", "operation", "emulated",
           "baseline", "unit", "ratio", "target", "met");
    for (int i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        char e[32], b[32], t[32], ra[32];
        const char *met = "";
        fmt_num(e, sizeof e, r->emu);
        if (r->has_base)
            fmt_num(b, sizeof b, r->base);
        else
            snprintf(b, sizeof b, "-");
        fmt_num(ra, sizeof ra, r->ratio);
        switch (r->goal) {
        case BENCH_AT_MOST:
            snprintf(t, sizeof t, "<= %g", r->target);
            met = r->ratio <= r->target ? "yes" : "no";
            break;
        case BENCH_AT_LEAST:
            snprintf(t, sizeof t, ">= %g", r->target);
            met = r->ratio >= r->target ? "yes" : "no";
            break;
        default:
            snprintf(t, sizeof t, "-");
            break;
        }
        printf("%-44s %11s %11s %-8s %9s %10s %s\n", r->op, e, b, r->unit, ra,
               t, met);
    }
}

static void
usage(void)
{
    fprintf(stderr,
            "usage: bench [--quick] [--rounds N] [--events HOOK NOHOOK] "
            "[--sweep BF16EMU]\n"
            "             [scalar|events|convert|gemm|attn|exhaustive|sweep|"
            "scan|arrays|flex]...\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    static const char *const parts[] = {"scalar", "events",     "convert",
                                        "gemm",   "attn",       "exhaustive",
                                        "sweep",  "scan",       "arrays",
                                        "flex"};
    enum { N_PARTS = sizeof parts / sizeof parts[0] };
    bool want[N_PARTS] = {false}, any = false;
    const char *hook = NULL, *nohook = NULL, *sweep_prog = NULL;
    const char *isa = getenv("BF16EMU_ISA");

    /* BF16EMU_ISA caps the vector path of the attention rows (the GEMM
       rows force each path themselves) */
    if (isa != NULL && isa[0] != '\0') {
        bench_cfg.isa = sf_isa_by_name(isa);
        if (bench_cfg.isa < 0) {
            fprintf(stderr,
                    "bench: BF16EMU_ISA '%s': expected auto, scalar, avx2 "
                    "or avx512\n",
                    isa);
            return 2;
        }
        if (!sf_isa_supported((sf_isa)bench_cfg.isa)) {
            fprintf(stderr, "bench: BF16EMU_ISA '%s': this CPU lacks it\n",
                    isa);
            return 2;
        }
    }

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            bench_cfg.quick = true;
            bench_cfg.rounds = 3;
            bench_cfg.min_time = 0.01;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            bench_cfg.rounds = atoi(argv[++i]);
            if (bench_cfg.rounds < 1 || bench_cfg.rounds > MAX_ROUNDS)
                usage();
        } else if (strcmp(argv[i], "--events") == 0 && i + 2 < argc) {
            hook = argv[++i];
            nohook = argv[++i];
        } else if (strcmp(argv[i], "--sweep") == 0 && i + 1 < argc) {
            sweep_prog = argv[++i];
        } else {
            int j;
            for (j = 0; j < N_PARTS; j++)
                if (strcmp(argv[i], parts[j]) == 0)
                    break;
            if (j == N_PARTS)
                usage();
            want[j] = any = true;
        }
    }
    for (int j = 0; j < N_PARTS; j++)
        if (!any)
            want[j] = true;
    if (want[0])
        bench_scalar();
    if (want[1])
        bench_events(hook, nohook);
    if (want[2])
        bench_convert();
    if (want[3])
        bench_gemm();
    if (want[4])
        bench_attn();
    if (want[5])
        bench_exhaustive();
    if (want[6])
        bench_sweep(sweep_prog);
    if (want[7])
        bench_scan(sweep_prog, BENCH_SRCDIR);
    if (want[8])
        bench_arrays();
    if (want[9])
        bench_attn_flex();
    bench_print_table();
    return 0;
}
