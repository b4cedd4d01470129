/* bench_exh -- how fast an exhaustive check runs: BF16 additions checked
   against a reference as tests/exhaustive builds it (binary64 sum made
   exact with TwoSum, rounded to odd at 53 bits, then rounded to BF16 by
   ref_round of ref/round.c) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench/bench.h"
#include "softfloat/softfloat.h"
#include "ref/round.h"

static double
bf16_double(uint16_t a)
{
    uint32_t u = (uint32_t)a << 16;
    float f;

    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* The reference's part before rounding: 0 fixed BITS and FLAGS, 1 an
   exact zero sum, 2 the binary64 value Y (rounded to odd at 53 bits). */
typedef struct
{
    int what;
    uint16_t bits;
    unsigned flags;
    double y;
} ref_sum;

static bool
is_nan(uint16_t a)
{
    return (a & 0x7f80) == 0x7f80 && (a & 0x7f) != 0;
}

static bool
is_inf(uint16_t a)
{
    return (a & 0x7fff) == 0x7f80;
}

static void
reference_sum(uint16_t a, uint16_t b, ref_sum *r)
{
    double da, db, s, bb, e;
    uint64_t u;

    r->what = 0;
    r->flags = 0;
    if (is_nan(a) || is_nan(b)) {
        bool snan = (is_nan(a) && !(a & 0x40)) || (is_nan(b) && !(b & 0x40));
        r->bits = (uint16_t)((is_nan(a) ? a : b) | 0x40);
        r->flags = snan ? SF_FLAG_INVALID : 0;
        return;
    }
    if (is_inf(a) && is_inf(b) && a != b) {
        r->bits = 0x7fc0;
        r->flags = SF_FLAG_INVALID;
        return;
    }
    if (is_inf(a) || is_inf(b)) {
        r->bits = is_inf(a) ? a : b;
        return;
    }
    da = bf16_double(a);
    db = bf16_double(b);
    s = da + db;
    if (s == 0) {
        /* both zeros of one sign keep it; otherwise an exact zero sum */
        if ((a & 0x7fff) == 0 && (b & 0x7fff) == 0 && a == b) {
            r->bits = a;
            return;
        }
        r->what = 1;
        return;
    }
    /* TwoSum: e = (da + db) - s exactly */
    bb = s - da;
    e = (da - (s - bb)) + (db - bb);
    memcpy(&u, &s, sizeof u);
    if (e != 0) {
        /* round to odd: truncate toward zero, then make the last bit 1 */
        if ((e > 0) != (s > 0))
            u -= 1;
        u |= 1;
    }
    memcpy(&r->y, &u, sizeof u);
    r->what = 2;
}

static uint16_t
reference_round(const ref_sum *r, sf_round rm, unsigned *flags)
{
    bool sign;
    uint64_t sig;
    int exp;

    switch (r->what) {
    case 0:
        *flags = r->flags;
        return r->bits;
    case 1:
        *flags = 0;
        return (uint16_t)(rm == SF_RDN ? 0x8000 : 0);
    default:
        ref_split_double(r->y, &sign, &sig, &exp);
        return (uint16_t)ref_round(&ref_bf16, sign, sig, exp, false, rm, true,
                                   flags);
    }
}

typedef struct
{
    int modes;    /* 1: RNE only; 6: the six modes of ref_modes */
    unsigned n_a; /* leading operands: 65536 / n_a apart */
    unsigned long bad;
} exh_ctx;

static void
exh_run(void *p, long reps)
{
    exh_ctx *c = p;
    unsigned step = 65536 / c->n_a;

    for (long r = 0; r < reps; r++) {
        for (uint32_t ai = 0; ai < c->n_a; ai++) {
            /* spread the leading operands over every binade and sign */
            uint16_t a = (uint16_t)(ai * step + (ai * 37u) % step);
            for (uint32_t b = 0; b < 65536; b++) {
                ref_sum rs;
                reference_sum(a, (uint16_t)b, &rs);
                for (int m = 0; m < c->modes; m++) {
                    sf_env env = SF_ENV_IEEE;
                    unsigned fw;
                    sf_round rm = ref_modes[m];
                    uint16_t want = reference_round(&rs, rm, &fw);
                    uint16_t got =
                        sf_bf16_add((sf_bf16){a}, (sf_bf16){(uint16_t)b}, rm,
                                    &env)
                            .bits;
                    if (got != want || env.flags != fw) {
                        if (c->bad++ < 5)
                            fprintf(stderr,
                                    "bench: bf16_add %s %04x %04x: reference "
                                    "%04x %u, library %04x %u\n",
                                    sf_round_name(rm), a, (unsigned)b, want,
                                    fw, got, env.flags);
                    }
                }
            }
        }
    }
}

void
bench_exhaustive(void)
{
    unsigned n_a = bench_cfg.quick ? 8 : 64;

    for (int k = 0; k < 2; k++) {
        exh_ctx c = {k == 0 ? 1 : 6, n_a, 0};
        bench_side side = {exh_run, &c, (double)n_a * 65536 * c.modes, false};
        double t = bench_one(&side);
        char label[80];

        if (c.bad != 0) {
            fprintf(stderr, "bench: %lu mismatches in the exhaustive loop\n",
                    c.bad);
            exit(1);
        }
        snprintf(label, sizeof label, "exhaustive bf16_add check, %s",
                 k == 0 ? "RNE" : "6 modes");
        /* checked pairs (one op, one mode each) per second on one core,
           as a fraction of the 40 M/s target */
        bench_row_alone(label, 1e-6 / t, "Mpair/s", 1e-6 / t / 40,
                        BENCH_AT_LEAST, 1);
    }
}
