/* exh_convert -- every binary32 input converted to BF16 and FP16 in all six
   modes, against an integer reference (make check-exhaustive) */
#include <stdio.h>

#include "ref/round.h"
#include "tests/exhaustive/exh_run.h"
#include "tests/support/oracle.h"
#include "tests/support/support.h"

/* The jobs: binary32 to BF16, binary32 to FP16. */
static const ref_fmt *const ts[2] = {&ref_bf16, &ref_f16};
static const sf_format *const fs[2] = {&sf_format_bf16, &sf_format_f16};
static const char *const job_names[2] = {"f32 -> bf16", "f32 -> f16"};

/* The reference: decode the binary32 bits with integer code; NaNs keep
   their sign and the top of their payload and are quieted (signalling
   ones raise invalid); Inf and zeros carry over; finite values go through
   ref_round. */
static uint64_t
reference(const ref_fmt *t, uint32_t u, sf_round rm, bool tininess_after,
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
        return ref_round(t, sign, frac, -149, false, rm, tininess_after,
                         flags);
    return ref_round(t, sign, frac | 0x800000, (int)be - 150, false, rm,
                     tininess_after, flags);
}

/* The reference against MPFR on sample I of 2^20 (even: uniform; odd:
   aimed at the target's tie and range boundaries), both targets, both
   tininess rules. */
static unsigned long
cross_check(oracle *o, uint64_t i)
{
    unsigned long bad = 0;
    tst_rng rng;
    uint32_t u;
    unsigned k, m, tb;

    tst_rng_init(&rng, 0xE0000000u + i);
    u = (uint32_t)tst_rand64(&rng);
    if (i & 1) {
        /* exponents from below FP16's subnormals to above BF16's top; low
           bits a tie, one off, or random */
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
                fw = oracle_convert(o, fs[k], &sf_format_f32, u, ref_modes[m],
                                    &env, &want);
                got = reference(ts[k], u, ref_modes[m], tb == 0, &fg);
                if (want != got || fw != fg) {
                    EXH_PRAGMA(omp critical)
                    fprintf(stderr,
                            "reference disagrees with MPFR: f32 %08lx -> %s "
                            "%s (tininess %s): MPFR %04llx %u, reference "
                            "%04llx %u\n",
                            (unsigned long)u, ts[k]->name,
                            sf_round_name(ref_modes[m]),
                            tb == 0 ? "after" : "before",
                            (unsigned long long)want, fw,
                            (unsigned long long)got, fg);
                    bad++;
                }
            }
    return bad;
}

static void
run(unsigned k, uint32_t u, exh_results *res)
{
    unsigned m;

    for (m = 0; m < 6; m++) {
        sf_env env = SF_ENV_IEEE;
        res->want[m] = reference(ts[k], u, ref_modes[m], true, &res->fw[m]);
        res->got[m] = sf_convert(fs[k], &sf_format_f32, u, ref_modes[m], &env);
        res->fg[m] = env.flags;
    }
}

static void
print(unsigned k, uint32_t u, sf_round rm, uint64_t want, unsigned fw,
      uint64_t got, unsigned fg)
{
    char a[6], b[6];

    printf("f32_to_%s %s %08lx %04llx %s got %04llx %s\n", ts[k]->name,
           sf_round_name(rm), (unsigned long)u, (unsigned long long)want,
           sf_flags_str(fw, a), (unsigned long long)got, sf_flags_str(fg, b));
}

static const exh_program program = {.name = "exh_convert",
                                    .sample = "inputs",
                                    .job_head = "conversion",
                                    .input_head = "inputs",
                                    .n_jobs = 2,
                                    .job_names = job_names,
                                    .progress_every = 2048,
                                    .cross_check = cross_check,
                                    .run = run,
                                    .print = print};

int
main(int argc, char **argv)
{
    return exh_main(&program, argc, argv);
}
