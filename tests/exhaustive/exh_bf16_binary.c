/* exh_bf16_binary -- every pair of BF16 operands through add, sub, mul and
   div in all six modes, against host binary64 arithmetic rounded by an
   integer reference (make check-exhaustive) */
#include <math.h>
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

/*----------------------------------------------------------------------------
 * Why binary64 gives the exact answer.
 *
 * Let x be the exact result of a op b for BF16 operands a, b (8-bit
 * significands, exponents in [-133, 127]).  The reference computes a
 * binary64 value y with y = RO53(x), x rounded to odd at 53 bits (truncate
 * toward zero; if anything was discarded, set the last bit), and then
 * rounds y to BF16 with exh_round.  Round-to-odd at p' bits followed by
 * any rounding (RNE, RTZ, RUP, RDN, RNA, or round-to-odd) to p <= p' - 2
 * bits equals that rounding of x directly: RO53 never crosses a p-bit
 * rounding boundary or midpoint, and lands on one only when x is on it.
 * Here p' = 53 >= 8 + 2.  The same holds for the subnormal BF16 results
 * (fewer bits kept) and decides tininess and overflow the same way, since
 * 2^-126 and the overflow thresholds are p-bit boundaries or midpoints.
 * |x| lies in [2^-266, 2^256]: binary64 is neither subnormal nor
 * overflowing anywhere below.
 *
 * - mul: the product of two 8-bit significands has at most 16 bits, so
 *   y = a * b is exact.
 * - add, sub: s = RN(a + b) and the TwoSum error e = (a + b) - s are exact
 *   binary64 values (Knuth's TwoSum, valid in round-to-nearest without
 *   overflow); x = s + e with |e| <= ulp(s)/2, so sign(e) says on which
 *   side of s the exact sum lies, and RO53(x) follows from s and that
 *   sign.  An exactly zero s means x = 0 (s = 0 implies e = 0).
 * - div: q = RN(a / b) and r = fma(-q, b, a) = a - q*b exactly (the
 *   remainder of a correctly rounded quotient is representable, here with
 *   no underflow as |r| >= 2^-450); x - q = r / b, so sign(r) * sign(b)
 *   says on which side of q the exact quotient lies.
 *
 * The program also checks the reference against MPFR on 2^20 pairs per op
 * before the exhaustive loop.
 *--------------------------------------------------------------------------*/

enum
{
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    N_OPS
};
static const char *const op_names[N_OPS] = {"add", "sub", "mul", "div"};
static const int sf_ops[N_OPS] = {SF_OP_ADD, SF_OP_SUB, SF_OP_MUL, SF_OP_DIV};

static double
bf16_to_double(uint16_t a)
{
    uint32_t u = (uint32_t)a << 16;
    float f;

    memcpy(&f, &u, sizeof f);
    return (double)f;
}

static uint64_t
double_bits(double x)
{
    uint64_t u;

    memcpy(&u, &x, sizeof u);
    return u;
}

static double
bits_double(uint64_t u)
{
    double x;

    memcpy(&x, &u, sizeof x);
    return x;
}

/* RO53 of the exact value x, given s = RN(x) (non-zero) and the sign of
   x - s (DIR: -1, 0, +1). */
static double
odd_from_nearest(double s, int dir)
{
    uint64_t u = double_bits(s), mag = u & ~((uint64_t)1 << 63);
    bool neg = (u >> 63) != 0;

    if (dir == 0)
        return s;
    /* truncation toward zero: s itself when |x| > |s|, else the next
       double toward zero */
    if ((dir > 0) == neg)
        mag -= 1;
    mag |= 1; /* x is strictly between mag and mag + 1 unit: odd one */
    return bits_double(mag | (u & ((uint64_t)1 << 63)));
}

typedef enum
{
    K_ZERO,
    K_FIN,
    K_INF,
    K_NAN
} kind;

static kind
classify(uint16_t a)
{
    unsigned e = (a >> 7) & 0xff, f = a & 0x7f;

    if (e == 0xff)
        return f ? K_NAN : K_INF;
    if (e == 0 && f == 0)
        return K_ZERO;
    return K_FIN;
}

/* The reference, in two steps: prepare() does the special cases and the
   binary64 arithmetic once per pair, finish() rounds in one mode
   (tininess after rounding). */
typedef struct
{
    int what; /* 0: fixed bits, 1: exact zero sum, 2: round y */
    uint16_t bits;
    unsigned flags;
    bool sign;
    uint64_t sig;
    int exp;
} prepared;

static void
fixed(prepared *p, unsigned bits, unsigned flags)
{
    p->what = 0;
    p->bits = (uint16_t)bits;
    p->flags = flags;
}

static void
prepare(int op, uint16_t a, uint16_t b, prepared *p)
{
    kind ka = classify(a), kb = classify(b);
    bool sa = (a >> 15) != 0, sb = (b >> 15) != 0;
    double da, db, y;

    if (op == OP_SUB && kb != K_NAN)
        sb = !sb;
    /* NaN operands: the first NaN, quieted; signalling ones are invalid */
    if (ka == K_NAN || kb == K_NAN) {
        bool snan =
            (ka == K_NAN && !(a & 0x40)) || (kb == K_NAN && !(b & 0x40));
        fixed(p, (ka == K_NAN ? a : b) | 0x40u, snan ? SF_FLAG_INVALID : 0u);
        return;
    }
    switch (op) {
    case OP_ADD:
    case OP_SUB:
        if (ka == K_INF && kb == K_INF && sa != sb) {
            fixed(p, 0x7fc0, SF_FLAG_INVALID);
            return;
        }
        if (ka == K_INF || kb == K_INF) {
            fixed(p, (ka == K_INF ? sa : sb) ? 0xff80 : 0x7f80, 0);
            return;
        }
        if (ka == K_ZERO && kb == K_ZERO) {
            if (sa == sb)
                fixed(p, sa ? 0x8000 : 0, 0);
            else
                p->what = 1;
            return;
        }
        break;
    case OP_MUL:
        if ((ka == K_INF && kb == K_ZERO) || (ka == K_ZERO && kb == K_INF)) {
            fixed(p, 0x7fc0, SF_FLAG_INVALID);
            return;
        }
        if (ka == K_INF || kb == K_INF) {
            fixed(p, sa != sb ? 0xff80 : 0x7f80, 0);
            return;
        }
        if (ka == K_ZERO || kb == K_ZERO) {
            fixed(p, sa != sb ? 0x8000 : 0, 0);
            return;
        }
        break;
    case OP_DIV:
    default:
        if ((ka == K_INF && kb == K_INF) || (ka == K_ZERO && kb == K_ZERO)) {
            fixed(p, 0x7fc0, SF_FLAG_INVALID);
            return;
        }
        if (ka == K_INF) {
            fixed(p, sa != sb ? 0xff80 : 0x7f80, 0);
            return;
        }
        if (kb == K_ZERO) {
            fixed(p, sa != sb ? 0xff80 : 0x7f80, SF_FLAG_DIVZERO);
            return;
        }
        if (ka == K_ZERO || kb == K_INF) {
            fixed(p, sa != sb ? 0x8000 : 0, 0);
            return;
        }
        break;
    }

    da = bf16_to_double(a & 0x7fff);
    db = bf16_to_double(b & 0x7fff);
    if (sa)
        da = -da;
    if (sb)
        db = -db;
    switch (op) {
    case OP_ADD:
    case OP_SUB: {
        double s = da + db, bb = s - da;
        double e = (da - (s - bb)) + (db - bb);
        if (s == 0) { /* exact cancellation */
            p->what = 1;
            return;
        }
        y = odd_from_nearest(s, e > 0 ? 1 : e < 0 ? -1 : 0);
        break;
    }
    case OP_MUL:
        y = da * db;
        break;
    case OP_DIV:
    default: {
        double q = da / db, r = fma(-q, db, da);
        y = odd_from_nearest(q, r == 0 ? 0 : ((r > 0) == (db > 0) ? 1 : -1));
        break;
    }
    }
    p->what = 2;
    exh_split_double(y, &p->sign, &p->sig, &p->exp);
}

static uint16_t
finish(const prepared *p, sf_round rm, unsigned *flags)
{
    switch (p->what) {
    case 0:
        *flags = p->flags;
        return p->bits;
    case 1:
        /* x + (-x) = +0, except -0 when rounding toward negative */
        *flags = 0;
        return (uint16_t)(rm == SF_RDN ? 0x8000 : 0);
    default:
        return (uint16_t)exh_round(&exh_bf16, p->sign, p->sig, p->exp, false,
                                   rm, true, flags);
    }
}

static uint16_t
reference(int op, uint16_t a, uint16_t b, sf_round rm, unsigned *flags)
{
    prepared p;

    prepare(op, a, b, &p);
    return finish(&p, rm, flags);
}

static uint16_t
library(int op, uint16_t a, uint16_t b, sf_round rm, sf_env *env)
{
    sf_bf16 x = {a}, y = {b}, z;

    switch (op) {
    case OP_ADD:
        z = sf_bf16_add(x, y, rm, env);
        break;
    case OP_SUB:
        z = sf_bf16_sub(x, y, rm, env);
        break;
    case OP_MUL:
        z = sf_bf16_mul(x, y, rm, env);
        break;
    case OP_DIV:
    default:
        z = sf_bf16_div(x, y, rm, env);
        break;
    }
    return z.bits;
}

/* The reference against MPFR on 2^20 pairs per op: uniform pairs and
   pairs with close exponents. */
static unsigned long
cross_check(void)
{
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
            uint16_t a, b;
            unsigned op, m;

            tst_rng_init(&rng, 0xB0000000u + (uint64_t)i);
            a = (uint16_t)tst_rand64(&rng);
            b = (uint16_t)tst_rand64(&rng);
            if (i & 1) /* exponents within 10 of each other */
                b = (uint16_t)((b & 0x807f)
                               | ((((a >> 7) & 0xff)
                                   + (unsigned)tst_rand_below(&rng, 21) - 10)
                                  & 0xff)
                                     << 7);
            for (op = 0; op < N_OPS; op++) {
                uint64_t in[2] = {a, b};
                oracle_prepare(o, &sf_format_bf16, sf_ops[op], in);
                for (m = 0; m < 6; m++) {
                    sf_env env = SF_ENV_IEEE;
                    uint64_t want;
                    unsigned fw, fr;
                    uint16_t r;
                    fw = oracle_result(o, exh_modes[m], &env, &want);
                    r = reference((int)op, a, b, exh_modes[m], &fr);
                    if (want != r || fw != fr) {
                        EXH_PRAGMA(omp critical)
                        fprintf(stderr,
                                "reference disagrees with MPFR: bf16_%s %s "
                                "%04x %04x: MPFR %04llx %u, reference %04x "
                                "%u\n",
                                op_names[op], sf_round_name(exh_modes[m]), a,
                                b, (unsigned long long)want, fw, r, fr);
                        bad++;
                    }
                }
            }
        }
        oracle_free(o);
    }
    return bad;
}

typedef struct
{
    uint64_t key; /* (a * 2^16 + b) * 8 + mode */
    uint16_t a, b;
    sf_round rm;
    uint16_t want, got;
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
    /* optional: check only every STRIDE-th leading operand (first
       argument), starting at OFFSET (second): for sampling and splitting
       a run across machines */
    unsigned long stride = argc > 1 ? strtoul(argv[1], NULL, 0) : 1;
    unsigned long offset = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
    unsigned long long counts[N_OPS][6], bad[N_OPS][6], total_bad = 0;
    double secs[N_OPS], t0, t_start;
    int op;
    unsigned m;

    if (stride == 0)
        stride = 1;
    (void)tst_seed();
    t_start = t0 = exh_now();
    if (cross_check() != 0) {
        fprintf(stderr, "exh_bf16_binary: the reference is wrong; stopping\n");
        return 2;
    }
    fprintf(stderr,
            "exh_bf16_binary: reference agrees with MPFR on 2^20 "
            "pairs per op (%.1f s)\n",
            exh_now() - t0);

    for (op = 0; op < N_OPS; op++) {
        failure fails[N_PRINT];
        unsigned n_fails = 0;
        long long a, done = 0;

        memset(counts[op], 0, sizeof counts[op]);
        memset(bad[op], 0, sizeof bad[op]);
        t0 = exh_now();
        EXH_PRAGMA(omp parallel)
        {
            unsigned long long lc[6] = {0}, lb[6] = {0};
            failure lf[N_PRINT];
            unsigned ln = 0, i;

            EXH_PRAGMA(omp for schedule(dynamic, 16))
            for (a = (long long)offset; a < 65536; a += (long long)stride) {
                uint32_t b;
                long long d;
                for (b = 0; b < 65536; b++) {
                    unsigned mm;
                    prepared pr;
                    prepare(op, (uint16_t)a, (uint16_t)b, &pr);
                    for (mm = 0; mm < 6; mm++) {
                        sf_env env = SF_ENV_IEEE;
                        unsigned fw, fg;
                        uint16_t want = finish(&pr, exh_modes[mm], &fw);
                        uint16_t got = library(op, (uint16_t)a, (uint16_t)b,
                                               exh_modes[mm], &env);
                        fg = env.flags;
                        lc[mm]++;
                        if (want != got || fw != fg) {
                            failure f = {(((uint64_t)a << 16) | b) * 8 + mm,
                                         (uint16_t)a,
                                         (uint16_t)b,
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
                if (d % 1024 == 0) {
                    double el = exh_now() - t0;
                    double frac = (double)d * (double)stride / 65536.0;
                    fprintf(stderr,
                            "exh_bf16_binary: %s %5.1f%%, %.0f s, about %.0f "
                            "s left for this op\n",
                            op_names[op], 100.0 * frac, el, el / frac - el);
                }
            }
            EXH_PRAGMA(omp critical)
            {
                for (i = 0; i < 6; i++) {
                    counts[op][i] += lc[i];
                    bad[op][i] += lb[i];
                }
                for (i = 0; i < ln; i++)
                    keep_failure(fails, &n_fails, &lf[i]);
            }
        }
        secs[op] = exh_now() - t0;
        for (m = 0; m < n_fails; m++) {
            char x[6], y[6];
            printf("bf16_%s %s %04x %04x %04x %s got %04x %s\n", op_names[op],
                   sf_round_name(fails[m].rm), fails[m].a, fails[m].b,
                   fails[m].want, sf_flags_str(fails[m].fw, x), fails[m].got,
                   sf_flags_str(fails[m].fg, y));
        }
        fflush(stdout);
    }

    printf("\n| op | mode | pairs | mismatches | wall time (s), all modes |\n"
           "|---|---|---:|---:|---:|\n");
    for (op = 0; op < N_OPS; op++)
        for (m = 0; m < 6; m++) {
            printf("| bf16_%s | %s | %llu | %llu | %.0f |\n", op_names[op],
                   sf_round_name(exh_modes[m]), counts[op][m], bad[op][m],
                   secs[op]);
            total_bad += bad[op][m];
        }
    printf("\nexh_bf16_binary: %s (stride %lu, offset %lu, %.0f s in all)\n",
           total_bad == 0 ? "all match" : "MISMATCHES", stride, offset,
           exh_now() - t_start);
    return total_bad == 0 ? 0 : 1;
}
