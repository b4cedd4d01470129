/* exh_exp -- fa_expf_cr and fa_exp2f_cr on every binary32 input against
   MPFR (make check-exhaustive) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "attention/attention.h"
#include "tests/attention/exp_ref.h"
#include "ref/round.h"

#ifdef _OPENMP
#define EXH_PRAGMA(x) _Pragma(#x)
#else
#define EXH_PRAGMA(x)
#endif

#define N_PRINT 10  /* mismatches printed per function */
#define N_HARD 4096 /* inputs decided by the second evaluation, kept */

/*----------------------------------------------------------------------------
 * How every input is checked without calling MPFR on each.  exp and 2^x
 * increase, and rounding to nearest never decreases, so x -> RN(exp(x))
 * is monotone on the non-NaN inputs of one sign taken in bit-pattern
 * order (increasing for +, decreasing for -).  The inputs of a chunk (2^16
 * consecutive patterns, one sign) are cut into runs of consecutive inputs
 * on which the library returns one value r; when MPFR gives r at both
 * ends of a run, RN(exp(x)) lies between r and r, so equals r, for every
 * x inside it.  When an end differs, every input of the run is compared
 * with MPFR (so the mismatch count is exact).  NaN inputs are compared
 * with the library's rule: the same NaN with the quiet bit set.  With
 * --mpfr-all every input is compared with MPFR instead.
 *--------------------------------------------------------------------------*/

typedef struct
{
    uint32_t x;
    double hardness;
} hard_case;

typedef struct
{
    unsigned long long inputs, mpfr_calls, runs, nans;
    unsigned long long bad, level[4];
    uint32_t first_bad[N_PRINT], want_bad[N_PRINT], got_bad[N_PRINT];
    unsigned n_bad_kept;
    hard_case hard[N_HARD];
    unsigned n_hard;
    unsigned long long hard_total;
} counts;

/* Keeps the N_PRINT smallest mismatching inputs, sorted. */
static void
keep_bad(counts *c, uint32_t x, uint32_t want, uint32_t got)
{
    unsigned i, pos = 0;

    if (c->n_bad_kept == N_PRINT && x >= c->first_bad[N_PRINT - 1])
        return;
    while (pos < c->n_bad_kept && c->first_bad[pos] < x)
        pos++;
    if (c->n_bad_kept < N_PRINT)
        c->n_bad_kept++;
    for (i = c->n_bad_kept - 1; i > pos; i--) {
        c->first_bad[i] = c->first_bad[i - 1];
        c->want_bad[i] = c->want_bad[i - 1];
        c->got_bad[i] = c->got_bad[i - 1];
    }
    c->first_bad[pos] = x;
    c->want_bad[pos] = want;
    c->got_bad[pos] = got;
}

static int
cmp_hard(const void *a, const void *b)
{
    uint32_t x = ((const hard_case *)a)->x, y = ((const hard_case *)b)->x;
    return x < y ? -1 : x > y;
}

typedef struct
{
    bool base2, mpfr_all;
    expref ref;
    counts *c;
} job;

static uint32_t
mpfr_result(job *j, uint32_t x)
{
    j->c->mpfr_calls++;
    return expref_exp(&j->ref, j->base2, x);
}

static void
mismatch(job *j, uint32_t x, uint32_t want, uint32_t got)
{
    j->c->bad++;
    keep_bad(j->c, x, want, got);
}

/* The run of inputs FIRST .. LAST (one sign, no NaN) on which the library
   returned R. */
static void
close_run(job *j, uint32_t first, uint32_t last, uint32_t r)
{
    uint32_t x;
    bool ends_ok;

    j->c->runs++;
    if (j->mpfr_all) {
        ends_ok = false;
    } else {
        ends_ok = mpfr_result(j, first) == r;
        if (first != last)
            ends_ok = (mpfr_result(j, last) == r) && ends_ok;
    }
    if (ends_ok)
        return;
    for (x = first;; x++) {
        uint32_t want = mpfr_result(j, x);
        if (want != r)
            mismatch(j, x, want, r);
        if (x == last)
            break;
    }
}

/* Inputs FIRST .. LAST of one chunk (one sign). */
static void
run_chunk(job *j, uint32_t first, uint32_t last)
{
    counts *c = j->c;
    uint32_t x, run_first = 0, run_r = 0;
    bool open = false;

    for (x = first;; x++) {
        uint32_t got = j->base2 ? fa_exp2f_cr(x) : fa_expf_cr(x);
        int level = fa_exp_cr_level(j->base2, x);

        c->inputs++;
        c->level[level & 3]++;
        if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
            /* NaN: ends a run */
            if (open)
                close_run(j, run_first, x - 1, run_r);
            open = false;
            c->nans++;
            if (got != (x | 0x00400000u))
                mismatch(j, x, x | 0x00400000u, got);
        } else if (!open || got != run_r) {
            if (open)
                close_run(j, run_first, x - 1, run_r);
            open = true;
            run_first = x;
            run_r = got;
        }
        if (level >= 2) {
            c->hard_total++;
            if (c->n_hard < N_HARD) {
                c->hard[c->n_hard].x = x;
                c->hard[c->n_hard].hardness =
                    expref_hardness(&j->ref, j->base2, x);
                c->n_hard++;
            }
        }
        if (x == last)
            break;
    }
    if (open)
        close_run(j, run_first, last, run_r);
}

/* Every input from FIRST to LAST (inclusive) for one function. */
static void
run(bool base2, uint32_t first, uint32_t last, bool mpfr_all, counts *all)
{
    long long hi, hi_first = first >> 16, hi_last = last >> 16;
    long long done = 0, n_hi = hi_last - hi_first + 1;
    double t0 = ref_now();
    const char *name = base2 ? "exp2" : "exp";
    bool threads = mpfr_buildopt_tls_p() != 0;

    memset(all, 0, sizeof *all);
    (void)threads;
    EXH_PRAGMA(omp parallel if (threads))
    {
        job j;
        unsigned i;

        j.base2 = base2;
        j.mpfr_all = mpfr_all;
        j.c = calloc(1, sizeof *j.c);
        if (j.c == NULL) {
            fprintf(stderr, "exh_exp: out of memory\n");
            exit(2);
        }
        expref_init(&j.ref);
        EXH_PRAGMA(omp for schedule(dynamic, 4))
        for (hi = hi_first; hi <= hi_last; hi++) {
            uint32_t base = (uint32_t)hi << 16;
            long long d;

            run_chunk(&j, hi == hi_first ? first : base,
                      hi == hi_last ? last : base | 0xFFFFu);
            EXH_PRAGMA(omp atomic capture)
            d = ++done;
            if (d % 2048 == 0) {
                double el = ref_now() - t0, frac = (double)d / (double)n_hi;
                fprintf(stderr,
                        "exh_exp: %s %5.1f%%, %.0f s, about %.0f s left\n",
                        name, 100.0 * frac, el, el / frac - el);
            }
        }
        EXH_PRAGMA(omp critical)
        {
            counts *c = j.c;
            all->inputs += c->inputs;
            all->mpfr_calls += c->mpfr_calls;
            all->runs += c->runs;
            all->nans += c->nans;
            all->bad += c->bad;
            all->hard_total += c->hard_total;
            for (i = 0; i < 4; i++)
                all->level[i] += c->level[i];
            for (i = 0; i < c->n_bad_kept; i++)
                keep_bad(all, c->first_bad[i], c->want_bad[i], c->got_bad[i]);
            for (i = 0; i < c->n_hard && all->n_hard < N_HARD; i++)
                all->hard[all->n_hard++] = c->hard[i];
        }
        expref_clear(&j.ref);
        free(j.c);
    }
    qsort(all->hard, all->n_hard, sizeof all->hard[0], cmp_hard);
}

int
main(int argc, char **argv)
{
    bool mpfr_all = false;
    uint32_t first = 0, last = 0xFFFFFFFFu;
    int argi = 1, status = 0;
    unsigned f, i;
    double t_start = ref_now();

    if (argi < argc && strcmp(argv[argi], "--mpfr-all") == 0) {
        mpfr_all = true;
        argi++;
    }
    if (argc - argi == 2) {
        first = (uint32_t)strtoul(argv[argi], NULL, 0);
        last = (uint32_t)strtoul(argv[argi + 1], NULL, 0);
    } else if (argc - argi != 0 || first > last) {
        fprintf(stderr, "usage: exh_exp [--mpfr-all] [FIRST LAST]\n"
                        "  FIRST, LAST: binary32 bit patterns (inclusive, "
                        "default 0 0xffffffff)\n");
        return 2;
    }
    printf("exh_exp: inputs 0x%08x .. 0x%08x, %s\n", (unsigned)first,
           (unsigned)last,
           mpfr_all ? "every input compared with MPFR"
                    : "runs of equal results checked at both ends by MPFR");
    printf("\n| function | inputs | NaN inputs | runs | MPFR calls | "
           "level 0 | level 1 | level 2 | level 3 | mismatches | "
           "wall time (s) |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (f = 0; f < 2; f++) {
        bool base2 = f == 1;
        counts *c = calloc(1, sizeof *c);
        double t0 = ref_now(), secs;
        double hardest = 1.0;
        uint32_t hardest_x = 0;

        if (c == NULL) {
            fprintf(stderr, "exh_exp: out of memory\n");
            return 2;
        }
        run(base2, first, last, mpfr_all, c);
        secs = ref_now() - t0;
        printf("| %s | %llu | %llu | %llu | %llu | %llu | %llu | %llu | "
               "%llu | %llu | %.0f |\n",
               base2 ? "exp2" : "exp", c->inputs, c->nans, c->runs,
               c->mpfr_calls, c->level[0], c->level[1], c->level[2],
               c->level[3], c->bad, secs);
        for (i = 0; i < c->n_bad_kept; i++)
            printf("MISMATCH %s x=0x%08x want 0x%08x got 0x%08x\n",
                   base2 ? "exp2" : "exp", (unsigned)c->first_bad[i],
                   (unsigned)c->want_bad[i], (unsigned)c->got_bad[i]);
        for (i = 0; i < c->n_hard; i++) {
            printf("level2 %s x=0x%08x result 0x%08x hardness 2^%.2f\n",
                   base2 ? "exp2" : "exp", (unsigned)c->hard[i].x,
                   (unsigned)(base2 ? fa_exp2f_cr(c->hard[i].x)
                                    : fa_expf_cr(c->hard[i].x)),
                   log2(c->hard[i].hardness));
            if (c->hard[i].hardness < hardest) {
                hardest = c->hard[i].hardness;
                hardest_x = c->hard[i].x;
            }
        }
        if (c->n_hard > 0)
            printf("%s: %llu inputs need the second evaluation; the closest "
                   "to a midpoint is x=0x%08x at 2^%.2f relative\n",
                   base2 ? "exp2" : "exp", c->hard_total, (unsigned)hardest_x,
                   log2(hardest));
        if (c->bad != 0 || c->level[3] != 0)
            status = 1;
        free(c);
    }
    printf("\nexh_exp: %s (%.0f s in all)\n",
           status == 0 ? "all match" : "MISMATCHES", ref_now() - t_start);
    return status;
}
