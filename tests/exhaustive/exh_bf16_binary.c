/* exh_bf16_binary -- every pair of BF16 operands through add, sub, mul and
   div in all six modes, against host binary64 arithmetic rounded by an
   integer reference (make check-exhaustive) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref/round.h"
#include "tests/exhaustive/exh_run.h"
#include "tests/support/oracle.h"
#include "tests/support/support.h"

/*----------------------------------------------------------------------------
 * Why binary64 gives the exact answer.
 *
 * Let x be the exact result of a op b for BF16 operands a, b (8-bit
 * significands, exponents in [-133, 127]).  The reference computes a
 * binary64 value y with y = RO53(x), x rounded to odd at 53 bits (truncate
 * toward zero; if anything was discarded, set the last bit), and then
 * rounds y to BF16 with ref_round.  Round-to-odd at p' bits followed by
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
static const char *const op_names[N_OPS] = {"bf16_add", "bf16_sub", "bf16_mul",
                                            "bf16_div"};
static const int sf_ops[N_OPS] = {SF_OP_ADD, SF_OP_SUB, SF_OP_MUL, SF_OP_DIV};

static double
bf16_to_double(uint16_t a)
{
    return (double)tst_f32_of((uint32_t)a << 16);
}

/* RO53 of the exact value x, given s = RN(x) (non-zero) and the sign of
   x - s (DIR: -1, 0, +1). */
static double
odd_from_nearest(double s, int dir)
{
    uint64_t u = tst_f64_bits(s), mag = u & ~((uint64_t)1 << 63);
    bool neg = (u >> 63) != 0;

    if (dir == 0)
        return s;
    /* truncation toward zero: s itself when |x| > |s|, else the next
       double toward zero */
    if ((dir > 0) == neg)
        mag -= 1;
    mag |= 1; /* x is strictly between mag and mag + 1 unit: odd one */
    return tst_f64_of(mag | (u & ((uint64_t)1 << 63)));
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
    ref_split_double(y, &p->sign, &p->sig, &p->exp);
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
        return (uint16_t)ref_round(&ref_bf16, p->sign, p->sig, p->exp, false,
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

/* The reference against MPFR on sample I of 2^20, every op: a uniform
   pair (I even) or a pair with close exponents (I odd). */
static unsigned long
cross_check(oracle *o, uint64_t i)
{
    unsigned long bad = 0;
    tst_rng rng;
    uint16_t a, b;
    unsigned op, m;

    tst_rng_init(&rng, 0xB0000000u + i);
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
            fw = oracle_result(o, ref_modes[m], &env, &want);
            r = reference((int)op, a, b, ref_modes[m], &fr);
            if (want != r || fw != fr) {
                EXH_PRAGMA(omp critical)
                fprintf(stderr,
                        "reference disagrees with MPFR: %s %s %04x %04x: "
                        "MPFR %04llx %u, reference %04x %u\n",
                        op_names[op], sf_round_name(ref_modes[m]), a, b,
                        (unsigned long long)want, fw, r, fr);
                bad++;
            }
        }
    }
    return bad;
}

/* The pair a = IN >> 16, b = IN & 0xffff through OP. */
static void
run(unsigned op, uint32_t in, exh_results *res)
{
    uint16_t a = (uint16_t)(in >> 16), b = (uint16_t)in;
    prepared pr;
    unsigned m;

    prepare((int)op, a, b, &pr);
    for (m = 0; m < 6; m++) {
        sf_env env = SF_ENV_IEEE;
        res->want[m] = finish(&pr, ref_modes[m], &res->fw[m]);
        res->got[m] = library((int)op, a, b, ref_modes[m], &env);
        res->fg[m] = env.flags;
    }
}

static void
print(unsigned op, uint32_t in, sf_round rm, uint64_t want, unsigned fw,
      uint64_t got, unsigned fg)
{
    char x[6], y[6];

    printf("%s %s %04x %04x %04x %s got %04x %s\n", op_names[op],
           sf_round_name(rm), (unsigned)(in >> 16), (unsigned)(in & 0xffff),
           (unsigned)want, sf_flags_str(fw, x), (unsigned)got,
           sf_flags_str(fg, y));
}

static const exh_program program = {.name = "exh_bf16_binary",
                                    .sample = "pairs per op",
                                    .job_head = "op",
                                    .input_head = "pairs",
                                    .n_jobs = N_OPS,
                                    .job_names = op_names,
                                    .progress_every = 1024,
                                    .cross_check = cross_check,
                                    .run = run,
                                    .print = print};

int
main(int argc, char **argv)
{
    return exh_main(&program, argc, argv);
}
