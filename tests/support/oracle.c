/* oracle.c -- MPFR reference results: special cases, rounding and flags */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPFR_USE_INTMAX_T 1
#include <gmp.h>
#include <mpfr.h>

#include "oracle.h"

/* Exact results are kept rounded to odd at WIDE_PREC bits: for any target
   precision p <= WIDE_PREC - 2, rounding that value to p bits (in any of
   the six modes, including at a subnormal quantum) gives the same result
   as rounding the exact value (the round-to-odd theorem). */
#define WIDE_PREC 64
/* Temporaries: wide enough that every operation on them below is exact
   (values with at most WIDE_PREC significant bits, scaled or floored). */
#define TMP_PREC 256

const sf_round oracle_modes[6] = {SF_RNE, SF_RTZ, SF_RDN,
                                  SF_RUP, SF_RNA, SF_ROD};

/*----------------------------------------------------------------------------
 * Formats, written down here independently of softfloat/format.c.  MPFR's
 * convention: a value is 0.1xxx * 2^e, so emin/emax below are one more than
 * the IEEE exponents of the smallest subnormal's leading bit and of the
 * largest binade.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *name;
    int p;    /* precision in bits, hidden bit included */
    int emin; /* MPFR emin: the smallest subnormal is 2^(emin-1) */
    int emax; /* MPFR emax: every finite value is below 2^emax */
    unsigned ebits, fbits, pad, storage;
    bool fn; /* no infinities; only S.1111.111 is NaN */
} ofmt;

static const ofmt ofmts[] = {
    {"bf16", 8, -132, 128, 8, 7, 0, 16, false},
    {"f16", 11, -23, 16, 5, 10, 0, 16, false},
    {"f32", 24, -148, 128, 8, 23, 0, 32, false},
    {"tf32", 11, -135, 128, 8, 10, 13, 32, false},
    {"e5m2", 3, -15, 16, 5, 2, 0, 8, false},
    {"e4m3", 4, -8, 9, 4, 3, 0, 8, true},
};

static const ofmt *
ofmt_of(const sf_format *f)
{
    size_t i;

    for (i = 0; i < sizeof ofmts / sizeof ofmts[0]; i++)
        if (strcmp(f->name, ofmts[i].name) == 0)
            return &ofmts[i];
    fprintf(stderr, "oracle: unknown format %s\n", f->name);
    abort();
}

/* IEEE exponent of the smallest normal: 2^emin_ieee = 0.1 * 2^(emin+p-1). */
static int
emin_ieee(const ofmt *t)
{
    return t->emin + t->p - 2;
}

static int
bias_of(const ofmt *t)
{
    return (1 << (t->ebits - 1)) - 1;
}

static uint64_t
sign_bit(const ofmt *t)
{
    return (uint64_t)1 << (t->storage - 1);
}

static uint64_t
exp_all_ones(const ofmt *t)
{
    return (((uint64_t)1 << t->ebits) - 1) << (t->fbits + t->pad);
}

static uint64_t
pack_bits(const ofmt *t, bool sign, uint64_t exp_field, uint64_t frac)
{
    return (sign ? sign_bit(t) : 0) | (exp_field << (t->fbits + t->pad))
           | (frac << t->pad);
}

static uint64_t
inf_bits(const ofmt *t, bool sign)
{
    return (sign ? sign_bit(t) : 0) | exp_all_ones(t);
}

/* The NaN of a format without infinities: every exponent and fraction bit
   set. */
static uint64_t
fn_nan_bits(const ofmt *t, bool sign)
{
    return pack_bits(t, sign, ((uint64_t)1 << t->ebits) - 1,
                     ((uint64_t)1 << t->fbits) - 1);
}

static uint64_t
max_bits(const ofmt *t, bool sign)
{
    uint64_t e_top = ((uint64_t)1 << t->ebits) - 1;
    uint64_t f_all = ((uint64_t)1 << t->fbits) - 1;

    if (t->fn)
        return pack_bits(t, sign, e_top, f_all - 1);
    return pack_bits(t, sign, e_top - 1, f_all);
}

/* SF_DNAN_POSITIVE: sign clear, quiet bit only; E4M3: its one NaN. */
static uint64_t
default_nan_bits(const ofmt *t)
{
    if (t->fn)
        return fn_nan_bits(t, false);
    return exp_all_ones(t) | ((uint64_t)1 << (t->fbits - 1 + t->pad));
}

uint64_t
oracle_max_finite_bits(const sf_format *f)
{
    return max_bits(ofmt_of(f), false);
}

uint64_t
oracle_min_normal_bits(const sf_format *f)
{
    return pack_bits(ofmt_of(f), false, 1, 0);
}

/*----------------------------------------------------------------------------
 * Decoding bits with integer code.
 *--------------------------------------------------------------------------*/
typedef enum
{
    C_ZERO,
    C_FIN,
    C_INF,
    C_NAN
} vclass;

typedef struct
{
    vclass cls;
    bool sign;
    bool snan;
    uint64_t frac; /* fraction field */
    uint64_t sig;  /* C_FIN: value = sig * 2^exp */
    int exp;
} decoded;

static void
decode(const ofmt *t, uint64_t bits, decoded *d)
{
    uint64_t e_top = ((uint64_t)1 << t->ebits) - 1;
    uint64_t f_all = ((uint64_t)1 << t->fbits) - 1;
    uint64_t e = (bits >> (t->fbits + t->pad)) & e_top;
    uint64_t fr = (bits >> t->pad) & f_all;
    int bias = bias_of(t);

    d->sign = (bits >> (t->storage - 1)) & 1;
    d->frac = fr;
    d->snan = false;
    d->sig = 0;
    d->exp = 0;
    if (t->fn ? (e == e_top && fr == f_all) : e == e_top) {
        if (!t->fn && fr == 0) {
            d->cls = C_INF;
        } else {
            d->cls = C_NAN;
            d->snan = !t->fn && ((fr >> (t->fbits - 1)) & 1) == 0;
        }
    } else if (e == 0) {
        d->cls = fr == 0 ? C_ZERO : C_FIN;
        d->sig = fr;
        d->exp = 1 - bias - (int)t->fbits;
    } else {
        d->cls = C_FIN;
        d->sig = fr | ((uint64_t)1 << t->fbits);
        d->exp = (int)e - bias - (int)t->fbits;
    }
}

/* The quieted form of a NaN operand. */
static uint64_t
quiet_nan(const ofmt *t, uint64_t bits)
{
    if (t->fn)
        return bits;
    return bits | ((uint64_t)1 << (t->fbits - 1 + t->pad));
}

/*----------------------------------------------------------------------------
 * The oracle object.
 *--------------------------------------------------------------------------*/
typedef enum
{
    R_NAN,    /* result bits fixed (a propagated or default NaN) */
    R_INF,    /* an exact infinity */
    R_ZERO,   /* an exact zero of known sign */
    R_CANCEL, /* an exact zero from x + (-x): +0, or -0 in RDN */
    R_FINITE  /* a non-zero finite value to round */
} rkind;

struct oracle
{
    bool self_check;
    const ofmt *t; /* result format */
    rkind kind;
    bool sign;          /* R_INF, R_ZERO; R_FINITE: sign of x */
    bool inf_converted; /* R_INF: an Inf operand converted */
    uint64_t nan_bits;  /* R_NAN */
    unsigned pre_flags; /* invalid / divzero from the special cases */
    mpfr_t x;           /* R_FINITE: exact result rounded to odd */
    mpfr_t op[3];       /* operand values */
    mpfr_t t1, t2, t3, t4, ru, rb, ro, lim;
    mpfr_t rp; /* target-precision result (re-initialised) */
};

oracle *
oracle_new(void)
{
    oracle *o = calloc(1, sizeof *o);
    unsigned i;

    if (o == NULL)
        abort();
    mpfr_init2(o->x, WIDE_PREC);
    for (i = 0; i < 3; i++)
        mpfr_init2(o->op[i], WIDE_PREC);
    mpfr_init2(o->t1, TMP_PREC);
    mpfr_init2(o->t2, TMP_PREC);
    mpfr_init2(o->t3, TMP_PREC);
    mpfr_init2(o->t4, TMP_PREC);
    mpfr_init2(o->ru, TMP_PREC);
    mpfr_init2(o->rb, TMP_PREC);
    mpfr_init2(o->ro, TMP_PREC);
    mpfr_init2(o->lim, TMP_PREC);
    mpfr_init2(o->rp, WIDE_PREC);
    return o;
}

bool
oracle_thread_safe(void)
{
    return mpfr_buildopt_tls_p() != 0;
}

void
oracle_free(oracle *o)
{
    unsigned i;

    if (o == NULL)
        return;
    mpfr_clear(o->x);
    for (i = 0; i < 3; i++)
        mpfr_clear(o->op[i]);
    mpfr_clear(o->t1);
    mpfr_clear(o->t2);
    mpfr_clear(o->t3);
    mpfr_clear(o->t4);
    mpfr_clear(o->ru);
    mpfr_clear(o->rb);
    mpfr_clear(o->ro);
    mpfr_clear(o->lim);
    mpfr_clear(o->rp);
    free(o);
}

void
oracle_set_self_check(oracle *o, bool check)
{
    o->self_check = check;
}

static void
set_value(mpfr_t v, const decoded *d)
{
    /* exact: sig < 2^24 fits any precision >= 24 */
    mpfr_set_ui_2exp(v, (unsigned long)d->sig, d->exp, MPFR_RNDN);
    if (d->sign)
        mpfr_neg(v, v, MPFR_RNDN);
}

/* Make o->x the exact result rounded to odd, from the ternary value of an
   MPFR operation done toward zero at WIDE_PREC bits. */
static void
finish_odd(oracle *o, int ternary)
{
    if (ternary != 0 && mpfr_min_prec(o->x) < WIDE_PREC) {
        /* the last bit is 0 and the true value lies beyond x: step away
           from zero to the odd neighbour */
        if (mpfr_sgn(o->x) > 0)
            mpfr_nextabove(o->x);
        else
            mpfr_nextbelow(o->x);
    }
    o->sign = mpfr_signbit(o->x) != 0;
    o->kind = R_FINITE;
}

static void
set_nan(oracle *o, uint64_t bits)
{
    o->kind = R_NAN;
    o->nan_bits = bits;
}

/*----------------------------------------------------------------------------
 * Special cases, from IEEE 754-2019 clauses 6 and 7 (NaN operands first,
 * then invalid operations, infinities, division by zero and exact zeros).
 * NaN results: the first NaN operand in the order a, b, c, quieted (sign
 * and payload kept); any signalling NaN operand raises invalid.
 *--------------------------------------------------------------------------*/
static bool
nan_operands(oracle *o, const ofmt *t, const decoded *d, const uint64_t *in,
             unsigned n)
{
    unsigned i;
    int first = -1;

    for (i = 0; i < n; i++) {
        if (d[i].cls == C_NAN && first < 0)
            first = (int)i;
        if (d[i].snan)
            o->pre_flags |= SF_FLAG_INVALID;
    }
    if (first < 0)
        return false;
    set_nan(o, quiet_nan(t, in[first]));
    return true;
}

static void
invalid(oracle *o)
{
    o->pre_flags |= SF_FLAG_INVALID;
    set_nan(o, default_nan_bits(o->t));
}

static void
set_inf(oracle *o, bool sign)
{
    o->kind = R_INF;
    o->sign = sign;
    o->inf_converted = false;
}

static void
set_zero(oracle *o, bool sign)
{
    o->kind = R_ZERO;
    o->sign = sign;
}

static void
prepare_add(oracle *o, decoded *d, bool subtract)
{
    bool sa = d[0].sign, sb = d[1].sign != subtract;
    int tern;

    if (d[0].cls == C_INF && d[1].cls == C_INF) {
        if (sa != sb)
            invalid(o); /* Inf - Inf */
        else
            set_inf(o, sa);
    } else if (d[0].cls == C_INF) {
        set_inf(o, sa);
    } else if (d[1].cls == C_INF) {
        set_inf(o, sb);
    } else if (d[0].cls == C_ZERO && d[1].cls == C_ZERO) {
        if (sa == sb)
            set_zero(o, sa);
        else
            o->kind = R_CANCEL;
    } else {
        /* at least one non-zero finite operand; a zero adds exactly */
        if (subtract)
            tern = mpfr_sub(o->x, o->op[0], o->op[1], MPFR_RNDZ);
        else
            tern = mpfr_add(o->x, o->op[0], o->op[1], MPFR_RNDZ);
        if (mpfr_zero_p(o->x))
            o->kind = R_CANCEL; /* exact: MPFR never underflows here */
        else
            finish_odd(o, tern);
    }
}

static void
prepare_mul(oracle *o, decoded *d)
{
    bool s = d[0].sign != d[1].sign;

    if ((d[0].cls == C_INF && d[1].cls == C_ZERO)
        || (d[0].cls == C_ZERO && d[1].cls == C_INF))
        invalid(o);
    else if (d[0].cls == C_INF || d[1].cls == C_INF)
        set_inf(o, s);
    else if (d[0].cls == C_ZERO || d[1].cls == C_ZERO)
        set_zero(o, s);
    else
        finish_odd(o, mpfr_mul(o->x, o->op[0], o->op[1], MPFR_RNDZ));
}

static void
prepare_div(oracle *o, decoded *d)
{
    bool s = d[0].sign != d[1].sign;

    if ((d[0].cls == C_INF && d[1].cls == C_INF)
        || (d[0].cls == C_ZERO && d[1].cls == C_ZERO)) {
        invalid(o);
    } else if (d[0].cls == C_INF) {
        set_inf(o, s);
    } else if (d[1].cls == C_ZERO) {
        o->pre_flags |= SF_FLAG_DIVZERO; /* finite non-zero / 0 */
        set_inf(o, s);
    } else if (d[0].cls == C_ZERO || d[1].cls == C_INF) {
        set_zero(o, s);
    } else {
        finish_odd(o, mpfr_div(o->x, o->op[0], o->op[1], MPFR_RNDZ));
    }
}

static void
prepare_sqrt(oracle *o, decoded *d)
{
    if (d[0].cls == C_ZERO)
        set_zero(o, d[0].sign); /* sqrt(-0) = -0 */
    else if (d[0].sign)
        invalid(o);
    else if (d[0].cls == C_INF)
        set_inf(o, false);
    else
        finish_odd(o, mpfr_sqrt(o->x, o->op[0], MPFR_RNDZ));
}

static void
prepare_fma(oracle *o, decoded *d)
{
    bool sp = d[0].sign != d[1].sign, sc = d[2].sign;
    bool p_inf = d[0].cls == C_INF || d[1].cls == C_INF;
    bool p_zero = d[0].cls == C_ZERO || d[1].cls == C_ZERO;

    if (p_inf && p_zero) {
        invalid(o); /* 0 * Inf */
    } else if (p_inf) {
        if (d[2].cls == C_INF && sc != sp)
            invalid(o); /* Inf - Inf */
        else
            set_inf(o, sp);
    } else if (d[2].cls == C_INF) {
        set_inf(o, sc);
    } else if (p_zero) {
        if (d[2].cls == C_ZERO) {
            if (sp == sc)
                set_zero(o, sc);
            else
                o->kind = R_CANCEL;
        } else {
            mpfr_set(o->x, o->op[2], MPFR_RNDN); /* exact */
            finish_odd(o, 0);
        }
    } else {
        int tern = mpfr_fma(o->x, o->op[0], o->op[1], o->op[2], MPFR_RNDZ);
        if (mpfr_zero_p(o->x))
            o->kind = R_CANCEL;
        else
            finish_odd(o, tern);
    }
}

void
oracle_prepare(oracle *o, const sf_format *f, int op, const uint64_t *in)
{
    const ofmt *t = ofmt_of(f);
    decoded d[3];
    unsigned n = op == SF_OP_SQRT ? 1u : op == SF_OP_FMA ? 3u : 2u;
    unsigned i;

    o->t = t;
    o->pre_flags = 0;
    for (i = 0; i < n; i++) {
        decode(t, in[i], &d[i]);
        if (d[i].cls == C_FIN)
            set_value(o->op[i], &d[i]);
        else if (d[i].cls == C_ZERO)
            mpfr_set_zero(o->op[i], d[i].sign ? -1 : 1);
    }
    if (nan_operands(o, t, d, in, n)) {
        /* fma(0, Inf, qNaN) is an invalid operation too; the NaN operand
           still decides the result */
        if (op == SF_OP_FMA
            && ((d[0].cls == C_INF && d[1].cls == C_ZERO)
                || (d[0].cls == C_ZERO && d[1].cls == C_INF)))
            o->pre_flags |= SF_FLAG_INVALID;
        return;
    }
    switch (op) {
    case SF_OP_ADD:
        prepare_add(o, d, false);
        break;
    case SF_OP_SUB:
        prepare_add(o, d, true);
        break;
    case SF_OP_MUL:
        prepare_mul(o, d);
        break;
    case SF_OP_DIV:
        prepare_div(o, d);
        break;
    case SF_OP_SQRT:
        prepare_sqrt(o, d);
        break;
    case SF_OP_FMA:
        prepare_fma(o, d);
        break;
    default:
        fprintf(stderr, "oracle: unsupported op %d\n", op);
        abort();
    }
}

void
oracle_prepare_convert(oracle *o, const sf_format *to, const sf_format *from,
                       uint64_t a)
{
    const ofmt *tt = ofmt_of(to), *tf = ofmt_of(from);
    decoded d;

    o->t = tt;
    o->pre_flags = 0;
    decode(tf, a, &d);
    switch (d.cls) {
    case C_NAN: {
        /* quiet bit set, payload kept from the top, sign kept */
        uint64_t payload = d.frac;
        if (d.snan)
            o->pre_flags |= SF_FLAG_INVALID;
        if (tt->fn) {
            set_nan(o, fn_nan_bits(tt, d.sign));
            break;
        }
        if (tt->fbits >= tf->fbits)
            payload <<= tt->fbits - tf->fbits;
        else
            payload >>= tf->fbits - tt->fbits;
        set_nan(o, quiet_nan(tt, (d.sign ? sign_bit(tt) : 0) | exp_all_ones(tt)
                                     | (payload << tt->pad)));
        break;
    }
    case C_INF:
        set_inf(o, d.sign);
        o->inf_converted = true;
        break;
    case C_ZERO:
        set_zero(o, d.sign);
        break;
    case C_FIN:
    default:
        set_value(o->x, &d);
        finish_odd(o, 0);
        break;
    }
}

void
oracle_prepare_from_int(oracle *o, const sf_format *to, int64_t v)
{
    o->t = ofmt_of(to);
    o->pre_flags = 0;
    if (v == 0) {
        set_zero(o, false);
        return;
    }
    mpfr_set_sj(o->x, (intmax_t)v, MPFR_RNDN); /* exact in 64 bits */
    finish_odd(o, 0);
}

/*----------------------------------------------------------------------------
 * Rounding.
 *--------------------------------------------------------------------------*/
static mpfr_rnd_t
mpfr_mode(sf_round rm)
{
    switch (rm) {
    case SF_RNE:
        return MPFR_RNDN;
    case SF_RTZ:
        return MPFR_RNDZ;
    case SF_RUP:
        return MPFR_RNDU;
    case SF_RDN:
        return MPFR_RNDD;
    default:
        fprintf(stderr, "oracle: mode %d has no MPFR equivalent\n", (int)rm);
        abort();
    }
}

static bool
ieee_mode(sf_round rm)
{
    return rm == SF_RNE || rm == SF_RTZ || rm == SF_RUP || rm == SF_RDN;
}

/* OUT = X rounded to a multiple of 2^Q with mode RM, by comparing X with
   its two neighbours k * 2^Q and (k + 1) * 2^Q (k = floor(|X| / 2^Q)) and
   their midpoint. Returns whether the result differs from X. Uses t1..t4;
   OUT must be another variable of TMP_PREC bits. */
static bool
round_at_quantum(oracle *o, mpfr_t out, const mpfr_t x, long q, sf_round rm)
{
    bool neg = mpfr_signbit(x) != 0;
    bool inexact, odd, inc;
    int half;

    mpfr_abs(o->t1, x, MPFR_RNDN);
    mpfr_mul_2si(o->t1, o->t1, -q, MPFR_RNDN); /* |x| / 2^q, exact */
    mpfr_floor(o->t2, o->t1);                  /* k, exact */
    mpfr_sub(o->t3, o->t1, o->t2, MPFR_RNDN);  /* fraction in [0, 1) */
    inexact = !mpfr_zero_p(o->t3);
    half = mpfr_cmp_ui_2exp(o->t3, 1, -1); /* fraction vs 1/2 */
    mpfr_div_2ui(o->t4, o->t2, 1, MPFR_RNDN);
    odd = !mpfr_integer_p(o->t4);
    switch (rm) {
    case SF_RNE:
        inc = half > 0 || (half == 0 && odd);
        break;
    case SF_RNA:
        inc = half >= 0;
        break;
    case SF_RUP:
        inc = inexact && !neg;
        break;
    case SF_RDN:
        inc = inexact && neg;
        break;
    case SF_ROD:
        inc = inexact && !odd;
        break;
    case SF_RTZ:
    default:
        inc = false;
        break;
    }
    if (inc)
        mpfr_add_ui(o->t2, o->t2, 1, MPFR_RNDN);
    mpfr_mul_2si(out, o->t2, q, MPFR_RNDN);
    if (neg)
        mpfr_neg(out, out, MPFR_RNDN);
    return inexact;
}

static void
self_check_fail(oracle *o, const char *what, sf_round rm, const mpfr_t a,
                const mpfr_t b)
{
    fprintf(stderr,
            "oracle self-check failed (%s, %s, mode %s): x = ", o->t->name,
            what, sf_round_name(rm));
    mpfr_out_str(stderr, 16, 0, o->x, MPFR_RNDN);
    fprintf(stderr, ", MPFR ");
    mpfr_out_str(stderr, 16, 0, a, MPFR_RNDN);
    fprintf(stderr, ", own ");
    mpfr_out_str(stderr, 16, 0, b, MPFR_RNDN);
    fprintf(stderr, "\n");
    abort();
}

static bool
same_value(const mpfr_t a, const mpfr_t b)
{
    return mpfr_equal_p(a, b) && mpfr_signbit(a) == mpfr_signbit(b);
}

/* o->ru = x rounded to the format's precision, exponent unbounded. */
static void
round_unbounded(oracle *o, sf_round rm)
{
    long q = (long)mpfr_get_exp(o->x) - o->t->p;

    if (ieee_mode(rm)) {
        mpfr_set_prec(o->rp, o->t->p);
        mpfr_set(o->rp, o->x, mpfr_mode(rm));
        mpfr_set(o->ru, o->rp, MPFR_RNDN);
        if (o->self_check) {
            round_at_quantum(o, o->ro, o->x, q, rm);
            if (!same_value(o->ru, o->ro))
                self_check_fail(o, "unbounded", rm, o->ru, o->ro);
        }
    } else {
        round_at_quantum(o, o->ru, o->x, q, rm);
    }
}

/* o->rb = x rounded to the format with subnormals (|x| below the smallest
   normal); no overflow is possible here. The MPFR recipe: round in the
   wide range, then mpfr_check_range and mpfr_subnormalize under the
   format's emin/emax. */
static void
round_subnormal(oracle *o, sf_round rm)
{
    long q = (long)o->t->emin - 1; /* quantum of the subnormals */

    if (ieee_mode(rm)) {
        mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
        mpfr_rnd_t r = mpfr_mode(rm);
        int tern;

        mpfr_set_prec(o->rp, o->t->p);
        tern = mpfr_set(o->rp, o->x, r);
        mpfr_set_emin(o->t->emin);
        mpfr_set_emax(o->t->emax);
        tern = mpfr_check_range(o->rp, tern, r);
        mpfr_subnormalize(o->rp, tern, r);
        mpfr_set_emin(old_emin);
        mpfr_set_emax(old_emax);
        mpfr_set(o->rb, o->rp, MPFR_RNDN);
        if (o->self_check) {
            round_at_quantum(o, o->ro, o->x, q, rm);
            if (!same_value(o->rb, o->ro))
                self_check_fail(o, "subnormal", rm, o->rb, o->ro);
        }
    } else {
        round_at_quantum(o, o->rb, o->x, q, rm);
    }
}

/* Bits of the non-zero finite value V, which is representable in the
   format. */
static uint64_t
encode(oracle *o, const mpfr_t v)
{
    const ofmt *t = o->t;
    bool sign = mpfr_signbit(v) != 0;
    long e = (long)mpfr_get_exp(v) - 1; /* |v| in [2^e, 2^(e+1)) */
    int emin_n = emin_ieee(t);
    uint64_t sig;

    mpfr_abs(o->t1, v, MPFR_RNDN);
    if (e >= emin_n) {
        mpfr_mul_2si(o->t1, o->t1, (long)t->fbits - e, MPFR_RNDN);
        if (!mpfr_integer_p(o->t1))
            abort();
        sig = mpfr_get_ui(o->t1, MPFR_RNDN);
        return pack_bits(t, sign, (uint64_t)(e + bias_of(t)),
                         sig - ((uint64_t)1 << t->fbits));
    }
    mpfr_mul_2si(o->t1, o->t1, (long)t->fbits - emin_n, MPFR_RNDN);
    if (!mpfr_integer_p(o->t1))
        abort();
    sig = mpfr_get_ui(o->t1, MPFR_RNDN);
    return pack_bits(t, sign, 0, sig);
}

/* The infinity of the format, or what stands for it; SATURATE: the
   largest finite value instead. */
static uint64_t
infinity_bits(oracle *o, bool sign, bool saturate)
{
    if (saturate)
        return max_bits(o->t, sign);
    return o->t->fn ? fn_nan_bits(o->t, sign) : inf_bits(o->t, sign);
}

static unsigned
round_finite(oracle *o, sf_round rm, const sf_env *env, uint64_t *out)
{
    const ofmt *t = o->t;
    bool tiny_before, tiny_after, tiny, inexact, to_inf;
    int emin_n = emin_ieee(t);

    round_unbounded(o, rm);

    /* overflow: the rounded value, exponent unbounded, exceeds the largest
       finite value (E4M3: 448) */
    mpfr_set_ui_2exp(o->lim, ((unsigned long)1 << t->p) - 1 - (t->fn ? 1 : 0),
                     t->emax - t->p, MPFR_RNDN);
    if (mpfr_cmpabs(o->ru, o->lim) > 0) {
        switch (rm) {
        case SF_RNE:
        case SF_RNA:
            to_inf = true;
            break;
        case SF_RUP:
            to_inf = !o->sign;
            break;
        case SF_RDN:
            to_inf = o->sign;
            break;
        default: /* RTZ, ROD */
            to_inf = false;
            break;
        }
        if (env->saturate)
            to_inf = false;
        *out =
            to_inf ? infinity_bits(o, o->sign, false) : max_bits(t, o->sign);
        return SF_FLAG_OVERFLOW | SF_FLAG_INEXACT;
    }

    /* tininess: before rounding, |x| < 2^emin; after rounding, the value
       rounded with unbounded exponent is below 2^emin */
    mpfr_set_ui_2exp(o->lim, 1, emin_n, MPFR_RNDN);
    tiny_before = mpfr_cmpabs(o->x, o->lim) < 0;
    tiny_after = mpfr_cmpabs(o->ru, o->lim) < 0;
    if (tiny_before)
        round_subnormal(o, rm);
    else
        mpfr_set(o->rb, o->ru, MPFR_RNDN);
    inexact = !mpfr_equal_p(o->rb, o->x);
    /* IEEE 754-2019 7.5: underflow is signalled when the result is tiny
       and inexact (MPFR's flag, raised for exact subnormals too, is not
       consulted). */
    tiny = env->tininess_after ? tiny_after : tiny_before;
    if (mpfr_zero_p(o->rb))
        *out = o->sign ? sign_bit(t) : 0;
    else
        *out = encode(o, o->rb);
    return (inexact ? SF_FLAG_INEXACT : 0u)
           | (tiny && inexact ? SF_FLAG_UNDERFLOW : 0u);
}

unsigned
oracle_result(oracle *o, sf_round rm, const sf_env *env, uint64_t *out)
{
    switch (o->kind) {
    case R_NAN:
        *out = o->nan_bits;
        return o->pre_flags;
    case R_INF:
        /* only a conversion saturates an Inf operand (to the largest
           finite value, in every format); an arithmetic infinity (x/0)
           stays infinite (in E4M3: its NaN) */
        *out = infinity_bits(o, o->sign, o->inf_converted && env->saturate);
        return o->pre_flags;
    case R_ZERO:
        *out = o->sign ? sign_bit(o->t) : 0;
        return o->pre_flags;
    case R_CANCEL:
        /* 6.3: an exact zero sum of opposite-signed operands is +0 in
           every mode but roundTowardNegative, where it is -0 (round to
           odd behaves as toward zero) */
        *out = rm == SF_RDN ? sign_bit(o->t) : 0;
        return o->pre_flags;
    case R_FINITE:
    default:
        return o->pre_flags | round_finite(o, rm, env, out);
    }
}

unsigned
oracle_op(oracle *o, const sf_format *f, int op, sf_round rm,
          const uint64_t *in, const sf_env *env, uint64_t *out)
{
    oracle_prepare(o, f, op, in);
    return oracle_result(o, rm, env, out);
}

unsigned
oracle_convert(oracle *o, const sf_format *to, const sf_format *from,
               uint64_t a, sf_round rm, const sf_env *env, uint64_t *out)
{
    oracle_prepare_convert(o, to, from, a);
    return oracle_result(o, rm, env, out);
}

unsigned
oracle_from_int(oracle *o, const sf_format *to, int64_t v, sf_round rm,
                const sf_env *env, uint64_t *out)
{
    oracle_prepare_from_int(o, to, v);
    return oracle_result(o, rm, env, out);
}

/*----------------------------------------------------------------------------
 * Rounding to integers.
 *--------------------------------------------------------------------------*/
/* o->ru = the finite value o->x rounded to an integer with RM: MPFR's rint
   (RNA: mpfr_round, ties away) or, for round-to-odd, the neighbour
   comparison. Returns whether the value changed. */
static bool
round_integer(oracle *o, sf_round rm)
{
    bool inexact;

    if (rm == SF_ROD) {
        inexact = round_at_quantum(o, o->ru, o->x, 0, rm);
    } else {
        if (rm == SF_RNA)
            mpfr_round(o->ru, o->x);
        else
            mpfr_rint(o->ru, o->x, mpfr_mode(rm));
        inexact = !mpfr_equal_p(o->ru, o->x);
        if (o->self_check) {
            round_at_quantum(o, o->ro, o->x, 0, rm);
            if (!mpfr_equal_p(o->ru, o->ro))
                self_check_fail(o, "integer", rm, o->ru, o->ro);
        }
    }
    return inexact;
}

unsigned
oracle_to_int(oracle *o, const sf_format *f, uint64_t a, sf_round rm,
              unsigned width, int64_t *out)
{
    const ofmt *t = ofmt_of(f);
    int64_t imin = width == 32 ? INT32_MIN : INT64_MIN;
    decoded d;
    bool inexact;

    o->t = t;
    decode(t, a, &d);
    *out = imin;
    if (d.cls == C_NAN || d.cls == C_INF)
        return SF_FLAG_INVALID;
    if (d.cls == C_ZERO) {
        *out = 0;
        return 0;
    }
    set_value(o->x, &d);
    inexact = round_integer(o, rm);
    /* in range: -2^(w-1) <= r < 2^(w-1) */
    if (mpfr_cmp_si_2exp(o->ru, -1, (mpfr_exp_t)width - 1) < 0
        || mpfr_cmp_ui_2exp(o->ru, 1, (mpfr_exp_t)width - 1) >= 0)
        return SF_FLAG_INVALID;
    *out = (int64_t)mpfr_get_sj(o->ru, MPFR_RNDN);
    return inexact ? SF_FLAG_INEXACT : 0u;
}

unsigned
oracle_round_to_int(oracle *o, const sf_format *f, uint64_t a, sf_round rm,
                    bool exact, uint64_t *out)
{
    const ofmt *t = ofmt_of(f);
    decoded d;
    bool inexact;

    o->t = t;
    decode(t, a, &d);
    if (d.cls == C_NAN) {
        *out = quiet_nan(t, a);
        return d.snan ? SF_FLAG_INVALID : 0u;
    }
    if (d.cls != C_FIN) {
        *out = a; /* zeros and infinities are integral */
        return 0;
    }
    set_value(o->x, &d);
    inexact = round_integer(o, rm);
    if (mpfr_zero_p(o->ru))
        *out = d.sign ? sign_bit(t) : 0; /* the sign of x is kept */
    else
        *out = encode(o, o->ru);
    return exact && inexact ? SF_FLAG_INEXACT : 0u;
}
