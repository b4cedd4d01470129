/* exh_convert -- every binary32 input converted to BF16 and FP16 in all six
   modes, against an integer reference (make check-exhaustive) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/exhaustive/exh_ref.h"
#include "tests/support/oracle.h"
#include "tests/support/support.h"

#ifdef _OPENMP
#define EXH_PRAGMA(x) _Pragma(#x)
#else
#define EXH_PRAGMA(x)
#endif

#define N_PRINT 10

/* The reference: decode the binary32 bits with integer code; NaNs keep
   their sign and the top of their payload and are quieted (signalling
   ones raise invalid); Inf and zeros carry over; finite values go through
   exh_round. */
static uint64_t
reference(const exh_fmt *t, uint32_t u, sf_round rm, bool tininess_after,
          unsigned *flags)
{
    bool sign = (u >> 31) != 0;
    unsigned be = (u >> 23) & 0xff;
    uint32_t frac = u & 0x7fffff;
    uint64_t sbit = sign ? (uint64_t)1 << (t->storage - 1) : 0;
    uint64_t exp_ones = (((uint64_t)1 << (t->storage - 1 - t->fbits)) - 1)
                        << t->fbits;

    *flags = 0;
    if (be == 0xff) {
        if (frac == 0)
            return sbit | exp_ones;
        if ((frac & 0x400000) == 0)
            *flags = SF_FLAG_INVALID;
        return sbit | exp_ones | (frac >> (23 - t->fbits))
               | ((uint64_t)1 << (t->fbits - 1));
    }
    if (be == 0 && frac == 0)
        return sbit;
    if (be == 0)
        return exh_round(t, sign, frac, -149, false, rm, tininess_after,
                         flags);
    return exh_round(t, sign, frac | 0x800000, (int)be - 150, false, rm,
                     tininess_after, flags);
}

/* The reference against MPFR on 2^20 inputs (half uniform, half aimed at
   the target's tie and range boundaries), both tininess rules. */
static unsigned long
cross_check(void)
{
    const exh_fmt *ts[2] = {&exh_bf16, &exh_f16};
    const sf_format *fs[2] = {&sf_format_bf16, &sf_format_f16};
    unsigned long bad = 0;
    long long i;
    bool threads = oracle_thread_safe();

    (void)threads;
    EXH_PRAGMA(omp parallel if (threads) reduction(+ : bad))
    {
        oracle *o = oracle_new();
        EXH_PRAGMA(omp for schedule(static))
        for (i = 0; i < (1 << 20); i++) {
            tst_rng rng;
            uint32_t u;
            unsigned k, m, tb;

            tst_rng_init(&rng, 0xE0000000u + (uint64_t)i);
            u = (uint32_t)tst_rand64(&rng);
            if (i & 1) {
                /* exponents from below FP16's subnormals to above BF16's
                   top; low bits a tie, one off, or random */
                uint32_t e = 90 + (uint32_t)tst_rand_below(&rng, 166);
                uint32_t low = (uint32_t)tst_rand_below(&rng, 4);
                u = (u & 0x807fe000u) | (e << 23)
                    | (low == 0   ? 0x1000u
                       : low == 1 ? 0x0fffu
                       : low == 2 ? 0x1001u
                                  : (u & 0x1fffu));
                if (tst_rand_below(&rng, 2))
                    u = (u & 0xffff0000u)
                        | (low == 0   ? 0x8000u
                           : low == 1 ? 0x7fffu
                                      : 0x8001u);
            }
            for (k = 0; k < 2; k++)
                for (tb = 0; tb < 2; tb++)
                    for (m = 0; m < 6; m++) {
                        sf_env env = SF_ENV_IEEE;
                        uint64_t want, got;
                        unsigned fw, fg;
                        env.tininess_after = tb == 0;
                        fw = oracle_convert(o, fs[k], &sf_format_f32, u,
                                            exh_modes[m], &env, &want);
                        got = reference(ts[k], u, exh_modes[m], tb == 0, &fg);
                        if (want != got || fw != fg) {
                            EXH_PRAGMA(omp critical)
                            fprintf(stderr,
                                    "reference disagrees with MPFR: f32 "
                                    "%08lx -> %s %s (tininess %s): MPFR "
                                    "%04llx %u, reference %04llx %u\n",
                                    (unsigned long)u, ts[k]->name,
                                    sf_round_name(exh_modes[m]),
                                    tb == 0 ? "after" : "before",
                                    (unsigned long long)want, fw,
                                    (unsigned long long)got, fg);
                            bad++;
                        }
                    }
        }
        oracle_free(o);
    }
    return bad;
}

typedef struct
{
    uint64_t key; /* input * 8 + mode */
    uint32_t in;
    sf_round rm;
    uint64_t want, got;
    unsigned fw, fg;
} failure;

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

int
main(int argc, char **argv)
{
    const exh_fmt *ts[2] = {&exh_bf16, &exh_f16};
    const sf_format *fs[2] = {&sf_format_bf16, &sf_format_f16};
    /* optional: check only every STRIDE-th leading operand (first
       argument), starting at OFFSET (second): for sampling and splitting
       a run across machines */
    unsigned long stride = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
    unsigned long offset = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
    unsigned long long total_bad = 0;
    unsigned long long counts[2][6], bad[2][6];
    double secs[2], t0;
    unsigned k, m;

    if (stride == 0)
        stride = 1;
    (void)tst_seed();
    t0 = exh_now();
    if (cross_check() != 0) {
        fprintf(stderr, "exh_convert: the reference is wrong; stopping\n");
        return 2;
    }
    fprintf(stderr,
            "exh_convert: reference agrees with MPFR on 2^20 inputs "
            "(%.1f s)\n",
            exh_now() - t0);

    for (k = 0; k < 2; k++) {
        failure fails[N_PRINT];
        unsigned n_fails = 0;
        long long hi, done = 0;

        memset(counts[k], 0, sizeof counts[k]);
        memset(bad[k], 0, sizeof bad[k]);
        t0 = exh_now();
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
                    uint32_t u = ((uint32_t)hi << 16) | lo;
                    unsigned mm;
                    for (mm = 0; mm < 6; mm++) {
                        sf_env env = SF_ENV_IEEE;
                        unsigned fw, fg;
                        uint64_t want =
                            reference(ts[k], u, exh_modes[mm], true, &fw);
                        uint64_t got = sf_convert(fs[k], &sf_format_f32, u,
                                                  exh_modes[mm], &env);
                        fg = env.flags;
                        lc[mm]++;
                        if (want != got || fw != fg) {
                            failure f = {(uint64_t)u * 8 + mm,
                                         u,
                                         exh_modes[mm],
                                         want,
                                         got,
                                         fw,
                                         fg};
                            lb[mm]++;
                            keep_failure(lf, &ln, &f);
                        }
                    }
                }
                EXH_PRAGMA(omp atomic capture)
                d = ++done;
                if (d % 2048 == 0) {
                    double el = exh_now() - t0;
                    double frac = (double)d * (double)stride / 65536.0;
                    fprintf(stderr,
                            "exh_convert: f32 -> %s %5.1f%%, %.0f s, about "
                            "%.0f s left\n",
                            ts[k]->name, 100.0 * frac, el, el / frac - el);
                }
            }
            EXH_PRAGMA(omp critical)
            {
                for (i = 0; i < 6; i++) {
                    counts[k][i] += lc[i];
                    bad[k][i] += lb[i];
                }
                for (i = 0; i < ln; i++)
                    keep_failure(fails, &n_fails, &lf[i]);
            }
        }
        secs[k] = exh_now() - t0;
        for (m = 0; m < n_fails; m++) {
            char a[6], b[6];
            printf("f32_to_%s %s %08lx %04llx %s got %04llx %s\n", ts[k]->name,
                   sf_round_name(fails[m].rm), (unsigned long)fails[m].in,
                   (unsigned long long)fails[m].want,
                   sf_flags_str(fails[m].fw, a),
                   (unsigned long long)fails[m].got,
                   sf_flags_str(fails[m].fg, b));
        }
    }

    printf("\n| conversion | mode | inputs | mismatches | wall time (s), "
           "all modes |\n|---|---|---:|---:|---:|\n");
    for (k = 0; k < 2; k++)
        for (m = 0; m < 6; m++) {
            printf("| f32 -> %s | %s | %llu | %llu | %.0f |\n", ts[k]->name,
                   sf_round_name(exh_modes[m]), counts[k][m], bad[k][m],
                   secs[k]);
            total_bad += bad[k][m];
        }
    printf("\nexh_convert: %s (stride %lu, offset %lu)\n",
           total_bad == 0 ? "all match" : "MISMATCHES", stride, offset);
    return total_bad == 0 ? 0 : 1;
}
