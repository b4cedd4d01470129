/* test_trace_decimals.c -- every exact decimal that bf16emu trace --json
   prints (operand values and input errors, conversions, each step's exact
   value, error, error in ulps and discarded fraction, the summary), for
   random and edge operands from 2^-1490 to 2^1023, checked against MPFR
   and exact rational arithmetic with GMP */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* popen, strtok_r */
#endif

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <jansson.h>
#include <mpfr.h>

#include "tests/support/decimal.h"
#include "tests/support/support.h"

#define PREC 4400    /* holds every dyadic from 2^-1600 to 2^2700 */
#define HI_PREC 3000 /* bounds of values that do not end */
#define DIGITS 40    /* significant digits of a value that does not end */

static const char *bf16emu;
static int n_fail, n_checked;
static char cmdline[4096];

/*----------------------------------------------------------------------------
 * The expected text: significant digits laid out as the man page says
 * (positional for leading-digit exponents -5..20, else d.ddde+XX).
 *--------------------------------------------------------------------------*/
/* Every digit of X (held exactly). */
static char *
mpfr_text(const mpfr_t x)
{
    if (mpfr_zero_p(x)) /* the values of -0 are "-0" */
        return strdup(mpfr_signbit(x) ? "-0" : "0");
    return tst_decimal_exact(x);
}

/* Every digit of X as a number (an error, a sum): zero is "0". */
static char *
num_text(const mpfr_t x)
{
    return mpfr_zero_p(x) ? strdup("0") : mpfr_text(x);
}

/* The first DIGITS digits of a value in [LO, HI] (one sign), or NULL when
   the bounds do not decide them. */
static char *
truncated_text(const mpfr_t lo, const mpfr_t hi)
{
    return tst_decimal_truncated(lo, hi, DIGITS);
}

/* Every digit of Q when its reduced denominator is 2^i 5^j (scaled by
   10^max(i, j) it is an integer), else NULL. */
static char *
rational_text(const mpq_t q)
{
    mpz_t d, n, five;
    unsigned long i, j, p;
    char *dig, *r = NULL;

    if (mpq_sgn(q) == 0)
        return strdup("0");
    mpz_inits(d, n, five, NULL);
    mpz_set_ui(five, 5);
    mpz_set(d, mpq_denref(q));
    i = mpz_scan1(d, 0);
    mpz_fdiv_q_2exp(d, d, i);
    j = mpz_remove(d, d, five);
    if (mpz_cmp_ui(d, 1) == 0) {
        p = i > j ? i : j;
        mpz_ui_pow_ui(n, 10, p);
        mpz_mul(n, n, mpq_numref(q));
        mpz_divexact(n, n, mpq_denref(q));
        mpz_abs(n, n);
        dig = mpz_get_str(NULL, 10, n);
        r = tst_decimal_layout(mpq_sgn(q) < 0, dig,
                               (long)strlen(dig) - (long)p, false);
        free(dig);
    }
    mpz_clears(d, n, five, NULL);
    return r;
}

/*----------------------------------------------------------------------------
 * Running the tool and reading its JSON.
 *--------------------------------------------------------------------------*/
static json_t *
run_json(const char *args)
{
    FILE *p;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    json_error_t err;
    json_t *doc;
    int status;

    snprintf(cmdline, sizeof cmdline, "%s trace --json %s", bf16emu, args);
    p = popen(cmdline, "r");
    if (p == NULL)
        return NULL;
    do {
        if (cap - len < 65536) {
            cap += 1 << 20;
            buf = realloc(buf, cap);
        }
        got = fread(buf + len, 1, cap - len - 1, p);
        len += got;
    } while (got > 0);
    buf[len] = '\0';
    status = pclose(p);
    doc = status == 0 ? json_loads(buf, 0, &err) : NULL;
    if (doc == NULL && n_fail++ < TST_MAX_PRINT)
        printf("trace_decimals: '%s' failed (status %d)\n", cmdline, status);
    free(buf);
    return doc;
}

static json_t *
get(json_t *v, const char *path)
{
    char buf[256], *save = NULL, *tok;

    snprintf(buf, sizeof buf, "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok != NULL && v != NULL;
         tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(v))
            v = json_array_get(v, strtoul(tok, NULL, 10));
        else
            v = json_object_get(v, tok);
    }
    return v;
}

static const char *
get_str(json_t *v, const char *path)
{
    json_t *s = get(v, path);
    return json_is_string(s) ? json_string_value(s) : NULL;
}

/* Compares field PATH of DOC with WANT (NULL: undecided, not checked). */
static void
check(json_t *doc, const char *path, const char *want)
{
    const char *got = get_str(doc, path);

    if (want == NULL)
        return;
    n_checked++;
    if (got != NULL && strcmp(got, want) == 0)
        return;
    if (n_fail++ < TST_MAX_PRINT)
        printf("trace_decimals: %s\n  %s\n  expected %s\n  got      %s\n",
               cmdline, path, want, got != NULL ? got : "(missing)");
}

static void
check_free(json_t *doc, const char *path, char *want)
{
    check(doc, path, want);
    free(want);
}

/* X = the value of a value object {format, bits} (bf16, f16, f32, f64);
   false for NaN, Inf or another format. */
static bool
value_of(json_t *v, mpfr_t x)
{
    const char *f = get_str(v, "format"), *b = get_str(v, "bits");
    unsigned eb, fb;
    uint64_t bits, field, frac;

    if (f == NULL || b == NULL)
        return false;
    if (strcmp(f, "bf16") == 0)
        eb = 8, fb = 7;
    else if (strcmp(f, "f16") == 0)
        eb = 5, fb = 10;
    else if (strcmp(f, "f32") == 0)
        eb = 8, fb = 23;
    else if (strcmp(f, "f64") == 0)
        eb = 11, fb = 52;
    else
        return false;
    bits = strtoull(b, NULL, 16);
    field = (bits >> fb) & ((1u << eb) - 1);
    frac = bits & (((uint64_t)1 << fb) - 1);
    if (field == (1u << eb) - 1)
        return false;
    if (field != 0)
        frac |= (uint64_t)1 << fb;
    mpfr_set_ui_2exp(x, 0, 0, MPFR_RNDN);
    mpfr_set_uj_2exp(x, frac,
                     (long)(field != 0 ? field : 1) - ((1L << (eb - 1)) - 1)
                         - (long)fb,
                     MPFR_RNDN);
    if ((bits >> (eb + fb)) & 1)
        mpfr_neg(x, x, MPFR_RNDN);
    return true;
}

/* The checks of one rounding object R (a path) of exact value X (exact),
   result in R.result. */
static void
check_rounding_exact(json_t *doc, const char *r, const mpfr_t x)
{
    char path[128];
    mpfr_t res, t;
    long u;

    snprintf(path, sizeof path, "%s.rounded", r);
    if (!json_is_true(get(doc, path)))
        return;
    mpfr_inits2(PREC, res, t, NULL);
    snprintf(path, sizeof path, "%s.result", r);
    if (!value_of(get(doc, path), res)) {
        mpfr_clears(res, t, NULL);
        return;
    }
    snprintf(path, sizeof path, "%s.ulp_exp", r);
    u = (long)json_integer_value(get(doc, path));
    snprintf(path, sizeof path, "%s.exact", r);
    check_free(doc, path, num_text(x));
    snprintf(path, sizeof path, "%s.discarded_ulps", r);
    mpfr_abs(t, x, MPFR_RNDN);
    mpfr_mul_2si(t, t, -u, MPFR_RNDN);
    mpfr_frac(t, t, MPFR_RNDN);
    check_free(doc, path, num_text(t));
    snprintf(path, sizeof path, "%s.error", r);
    if (get_str(doc, path) != NULL) {
        mpfr_sub(t, res, x, MPFR_RNDN); /* exact at PREC */
        check_free(doc, path, num_text(t));
        mpfr_mul_2si(t, t, -u, MPFR_RNDN);
        snprintf(path, sizeof path, "%s.error_ulps", r);
        check_free(doc, path, num_text(t));
    }
    mpfr_clears(res, t, NULL);
}

/*----------------------------------------------------------------------------
 * Operands.
 *--------------------------------------------------------------------------*/
static tst_rng rng;

static uint64_t
rnd(uint64_t n)
{
    return tst_rand_below(&rng, n);
}

/* A hex-float text m * 2^e, |value| in about [2^-1490, 2^130]. */
static void
hex_operand(char *buf, size_t n)
{
    int e = (int)rnd(1621) - 1490;
    uint64_t m = tst_rand64(&rng) >> rnd(64);

    snprintf(buf, n, "%s0x%" PRIx64 "p%d", rnd(2) ? "-" : "", m | 1,
             e - (int)rnd(64));
}

/* A decimal text D e K, |value| in about [1e-460, 1e40]. */
static void
dec_operand(char *buf, size_t n)
{
    char dig[40];
    int nd = 1 + (int)rnd(30);

    for (int i = 0; i < nd; i++)
        dig[i] = (char)('0' + rnd(10));
    dig[0] = (char)('1' + rnd(9));
    dig[nd] = '\0';
    snprintf(buf, n, "%s%s.%se%d", rnd(2) ? "-" : "", dig, "5",
             (int)rnd(500) - 460);
}

/* The exact rational of a decimal text made by dec_operand. */
static void
dec_value(const char *text, mpq_t q)
{
    char buf[400], *e;
    mpz_t d, p;
    long k, frac;

    snprintf(buf, sizeof buf, "%s", text);
    e = strchr(buf, 'e');
    k = 0;
    if (e != NULL) {
        *e = '\0';
        k = strtol(e + 1, NULL, 10);
    }
    frac = 0;
    if (strchr(buf, '.') != NULL) {
        frac = (long)strlen(strchr(buf, '.') + 1);
        memmove(strchr(buf, '.'), strchr(buf, '.') + 1,
                strlen(strchr(buf, '.')));
    }
    mpz_inits(d, p, NULL);
    mpz_set_str(d, buf, 10);
    k -= frac;
    mpz_ui_pow_ui(p, 10, (unsigned long)(k < 0 ? -k : k));
    mpq_set_z(q, d);
    if (k < 0)
        mpq_set_den(q, p);
    else
        mpz_mul(mpq_numref(q), mpq_numref(q), p);
    mpq_canonicalize(q);
    mpz_clears(d, p, NULL);
}

/* An f64 bit pattern, normal or subnormal, any exponent. */
static void
f64_operand(char *buf, size_t n)
{
    uint64_t bits = tst_rand64(&rng) & ~((uint64_t)0x7FF << 52);
    uint64_t field = rnd(8) == 0 ? 0 : 1 + rnd(2046);

    snprintf(buf, n, "f64:0x%016" PRIX64, bits | (field << 52));
}

/* Adds operand I (text OP) of DOC to S, the sum of the operands as read
   (in the accumulator's format, after the operand's conversion if it has
   one), and to TS, the sum of their values as typed; clears *EXACT when
   the two values differ.  S becomes NaN when the operand is NaN or
   infinite, as read or as typed. */
static void
add_operand(json_t *doc, int i, const char *op, mpfr_t s, mpq_t ts,
            bool *exact)
{
    json_t *o = json_array_get(get(doc, "operands"), (size_t)i);
    json_t *st = json_array_get(get(doc, "steps"), (size_t)i);
    json_t *c = get(st, "conversion");
    mpfr_t v, x;
    mpq_t r, q;

    mpfr_inits2(PREC, v, x, NULL);
    mpq_inits(r, q, NULL);
    if (!value_of(get(o, "value"), v)
        || (c != NULL && !value_of(get(c, "to"), x))) {
        mpfr_set_nan(s);
    } else {
        if (c == NULL)
            mpfr_set(x, v, MPFR_RNDN);
        mpfr_add(s, s, x, MPFR_RNDN); /* exact at PREC */
        mpfr_get_q(r, x);
        if (strchr(op, ':') != NULL) { /* a bit pattern: its own value */
            mpfr_get_q(q, v);
        } else if (strchr(op, 'x') != NULL) {
            mpfr_strtofr(v, op, NULL, 0, MPFR_RNDN); /* exact */
            mpfr_get_q(q, v);
        } else {
            dec_value(op, q);
        }
        mpq_add(ts, ts, q);
        *exact = *exact && mpq_equal(r, q);
    }
    mpfr_clears(v, x, NULL);
    mpq_clears(r, q, NULL);
}

/* The summary's sum of the operands as typed (TS, exact), the error of
   RESULT against it, also in ulps of 2^U, and whether every operand was
   exact as read (EXACT). */
static void
check_typed_sum(json_t *doc, const mpfr_t result, const mpq_t ts, bool exact,
                long u)
{
    mpq_t e;
    bool got = json_is_true(get(doc, "summary.operands_exact"));

    n_checked++;
    if (got != exact && n_fail++ < TST_MAX_PRINT)
        printf("trace_decimals: %s\n  summary.operands_exact\n  expected "
               "%s\n",
               cmdline, exact ? "true" : "false");
    mpq_init(e);
    check_free(doc, "summary.typed_sum", rational_text(ts));
    mpfr_get_q(e, result);
    mpq_sub(e, e, ts);
    check_free(doc, "summary.typed_error", rational_text(e));
    if (u < 0)
        mpq_mul_2exp(e, e, (mp_bitcnt_t)-u);
    else
        mpq_div_2exp(e, e, (mp_bitcnt_t)u);
    check_free(doc, "summary.typed_error_ulps", rational_text(e));
    mpq_clear(e);
}

static const char *const modes[] = {"rne", "rtz", "rdn", "rup", "rna", "rod"};
static const char *const accs[] = {"f32", "bf16", "f16"};
static const char *const outs[] = {"bf16", "f32", "f16", "f64"};

/* One accumulation of 1..4 operands; checks every decimal. */
static void
one_accumulation(const char *forced)
{
    char args[2048], ops[4][80];
    int n = 1 + (int)rnd(4);
    json_t *doc;
    mpfr_t x, v, s;
    mpq_t q, t, ts;
    bool exact = true;

    snprintf(args, sizeof args,
             "--acc %s --acc-mode %s --out %s --mode %s "
             "--in-mode %s",
             accs[rnd(3)], modes[rnd(6)], outs[rnd(4)], modes[rnd(6)],
             modes[rnd(6)]);
    strcat(args, " --");
    for (int i = 0; i < n; i++) {
        int kind = (int)rnd(3);
        if (i == 0 && forced != NULL)
            snprintf(ops[i], sizeof ops[i], "%s", forced);
        else if (kind == 0)
            hex_operand(ops[i], sizeof ops[i]);
        else if (kind == 1)
            dec_operand(ops[i], sizeof ops[i]);
        else
            f64_operand(ops[i], sizeof ops[i]);
        strcat(args, " ");
        strcat(args, ops[i]);
    }
    doc = run_json(args);
    if (doc == NULL)
        return;
    mpfr_inits2(PREC, x, v, s, NULL);
    mpq_inits(q, t, ts, NULL);
    mpfr_set_ui(s, 0, MPFR_RNDN);
    mpq_set_ui(ts, 0, 1);
    /* operands: value, input error; the exact sums as read and as typed */
    for (int i = 0; i < n; i++) {
        json_t *o = json_array_get(get(doc, "operands"), (size_t)i);
        const char *ie = get_str(o, "input_error");
        add_operand(doc, i, ops[i], s, ts, &exact);
        if (!value_of(get(o, "value"), v))
            continue;
        check_free(o, "value.value", mpfr_text(v)); /* a value: -0 */
        if (strchr(ops[i], ':') != NULL || ie == NULL
            || strcmp(ie, "inf") == 0)
            continue;
        if (strchr(ops[i], 'x') != NULL) {
            mpfr_strtofr(x, ops[i], NULL, 0, MPFR_RNDN); /* exact */
            mpfr_sub(x, v, x, MPFR_RNDN);                /* exact */
            check_free(o, "input_error", num_text(x));
        } else {
            dec_value(ops[i], q);
            mpfr_get_q(t, v);
            mpq_sub(t, t, q);
            check_free(o, "input_error", rational_text(t));
        }
    }
    /* conversions of f64 operands, and each addition */
    for (size_t i = 0; i < json_array_size(get(doc, "steps")); i++) {
        json_t *st = json_array_get(get(doc, "steps"), i);
        json_t *c = get(st, "conversion");
        if (c != NULL && value_of(get(c, "from"), x)
            && value_of(get(c, "to"), v) && get_str(c, "error") != NULL
            && strcmp(get_str(c, "error"), "inf") != 0) {
            mpfr_sub(v, v, x, MPFR_RNDN);
            check_free(c, "error", num_text(v));
        }
        if (get(st, "rounding") != NULL && value_of(get(st, "a"), x)
            && value_of(get(st, "b"), v)) {
            mpfr_add(x, x, v, MPFR_RNDN);
            check_rounding_exact(st, "rounding", x);
        }
    }
    if (value_of(get(doc, "final.value"), x))
        check_rounding_exact(doc, "final.rounding", x);
    /* the summary */
    if (!mpfr_nan_p(s) && get_str(doc, "summary.exact_sum") != NULL
        && value_of(get(doc, "summary.result"), v)) {
        long u = (long)json_integer_value(get(doc, "summary.ulp_exp"));
        check_free(doc, "summary.exact_sum", num_text(s));
        check_typed_sum(doc, v, ts, exact, u);
        mpfr_sub(v, v, s, MPFR_RNDN);
        check_free(doc, "summary.error", num_text(v));
        mpfr_mul_2si(v, v, -u, MPFR_RNDN);
        check_free(doc, "summary.error_ulps", num_text(v));
    }
    mpfr_clears(x, v, s, NULL);
    mpq_clears(q, t, ts, NULL);
    json_decref(doc);
}

/* A finite non-zero f32 or bf16 pattern. */
static uint64_t
small_operand(bool f32, bool positive)
{
    uint64_t b = tst_rand64(&rng) & (f32 ? 0x7FFFFFFF : 0x7FFF);
    uint64_t top = f32 ? 0x7F800000 : 0x7F80;

    if ((b & top) == top)
        b &= ~(f32 ? (uint64_t)0x40000000 : 0x4000);
    if (b == 0)
        b = 1;
    if (!positive && rnd(2))
        b |= f32 ? 0x80000000 : 0x8000;
    return b;
}

/* One --op div or sqrt: values that may not end. */
static void
one_quotient(bool is_sqrt)
{
    bool f32 = rnd(2);
    uint64_t a = small_operand(f32, is_sqrt), b = small_operand(f32, false);
    char args[256], path[64];
    json_t *doc;
    mpfr_t x, y, lo, hi, res, t1, t2;
    mpq_t q, r;
    long u;
    char *ends = NULL;

    if (is_sqrt)
        snprintf(args, sizeof args, "--op sqrt --mode %s %s:0x%0*" PRIX64,
                 modes[rnd(6)], f32 ? "f32" : "bf16", f32 ? 8 : 4, a);
    else
        snprintf(args, sizeof args,
                 "--op div --mode %s %s:0x%0*" PRIX64 " %s:0x%0*" PRIX64,
                 modes[rnd(6)], f32 ? "f32" : "bf16", f32 ? 8 : 4, a,
                 f32 ? "f32" : "bf16", f32 ? 8 : 4, b);
    doc = run_json(args);
    if (doc == NULL)
        return;
    mpfr_inits2(PREC, x, y, res, NULL);
    mpfr_inits2(HI_PREC, lo, hi, t1, t2, NULL);
    mpq_inits(q, r, NULL);
    snprintf(path, sizeof path, "steps.0.rounding");
    if (!json_is_true(get(doc, "steps.0.rounding.rounded"))
        || !value_of(get(doc, "steps.0.a"), x)
        || (!is_sqrt && !value_of(get(doc, "steps.0.b"), y))
        || !value_of(get(doc, "steps.0.rounding.result"), res))
        goto done;
    u = (long)json_integer_value(get(doc, "steps.0.rounding.ulp_exp"));
    if (is_sqrt) {
        mpfr_sqrt(lo, x, MPFR_RNDD);
        mpfr_sqrt(hi, x, MPFR_RNDU);
    } else {
        mpfr_div(lo, x, y, MPFR_RNDD);
        mpfr_div(hi, x, y, MPFR_RNDU);
    }
    mpfr_get_q(q, x);
    if (!is_sqrt) {
        mpfr_get_q(r, y);
        mpq_div(q, q, r);
        ends = rational_text(q);
    }
    mpfr_get_q(r, res);
    if (mpfr_equal_p(lo, hi)) {
        /* a dyadic result: every digit */
        check_rounding_exact(doc, path, lo);
    } else if (ends != NULL) {
        /* a quotient that ends in decimal: exact rationals */
        mpq_t e;
        mpq_init(e);
        check_free(doc, "steps.0.rounding.exact", rational_text(q));
        mpq_sub(e, r, q);
        check_free(doc, "steps.0.rounding.error", rational_text(e));
        if (u > 0)
            mpq_div_2exp(e, e, (mp_bitcnt_t)u);
        else
            mpq_mul_2exp(e, e, (mp_bitcnt_t)-u);
        check_free(doc, "steps.0.rounding.error_ulps", rational_text(e));
        mpq_clear(e);
    } else {
        /* does not end: the first digits from bounds */
        check_free(doc, "steps.0.rounding.exact",
                   mpfr_sgn(lo) < 0 ? truncated_text(hi, lo)
                                    : truncated_text(lo, hi));
        mpfr_sub(t1, res, hi, MPFR_RNDD);
        mpfr_sub(t2, res, lo, MPFR_RNDU);
        check_free(doc, "steps.0.rounding.error",
                   mpfr_sgn(t1) < 0 ? truncated_text(t2, t1)
                                    : truncated_text(t1, t2));
        mpfr_mul_2si(t1, t1, -u, MPFR_RNDN);
        mpfr_mul_2si(t2, t2, -u, MPFR_RNDN);
        check_free(doc, "steps.0.rounding.error_ulps",
                   mpfr_sgn(t1) < 0 ? truncated_text(t2, t1)
                                    : truncated_text(t1, t2));
        mpfr_abs(t1, mpfr_sgn(lo) < 0 ? hi : lo, MPFR_RNDN);
        mpfr_abs(t2, mpfr_sgn(lo) < 0 ? lo : hi, MPFR_RNDN);
        mpfr_mul_2si(t1, t1, -u, MPFR_RNDN);
        mpfr_mul_2si(t2, t2, -u, MPFR_RNDN);
        mpfr_frac(t1, t1, MPFR_RNDD);
        mpfr_frac(t2, t2, MPFR_RNDU);
        if (mpfr_cmp(t1, t2) < 0)
            check_free(doc, "steps.0.rounding.discarded_ulps",
                       truncated_text(t1, t2));
    }
done:
    free(ends);
    mpfr_clears(x, y, res, lo, hi, t1, t2, NULL);
    mpq_clears(q, r, NULL);
    json_decref(doc);
}

/* One --op convert of a binary64 pattern (subnormals to 2^-1074, up to
   2^1024) to a narrower format. */
static void
one_convert(void)
{
    char args[256], op[64];
    json_t *doc;
    mpfr_t x;

    f64_operand(op, sizeof op);
    snprintf(args, sizeof args, "--op convert --out %s --mode %s %s",
             outs[rnd(3)], modes[rnd(6)], op);
    doc = run_json(args);
    if (doc == NULL)
        return;
    mpfr_init2(x, PREC);
    if (value_of(get(doc, "steps.0.a"), x))
        check_rounding_exact(doc, "steps.0.rounding", x);
    mpfr_clear(x);
    json_decref(doc);
}

int
main(void)
{
    static const char *const edges[] = {"0x1p-400",
                                        "0x1p-300",
                                        "-0x1p-1490",
                                        "0x1p-1074",
                                        "0x1.8p-149",
                                        "0x1p-150",
                                        "0.1",
                                        "1e-45",
                                        "1e-460",
                                        "3.4e38",
                                        "0x1p128",
                                        "-0x1.fffffep127",
                                        "f64:0x0000000000000001",
                                        "f64:0x7FEFFFFFFFFFFFFF",
                                        "f64:0x000FFFFFFFFFFFFF",
                                        "f64:0x3FB999999999999A"};
    unsigned long n = 20 * tst_multiplier();

    bf16emu = getenv("BF16EMU");
    if (bf16emu == NULL)
        bf16emu = "./experiments/bf16emu";
    tst_rng_init(&rng, 1);
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        one_accumulation(edges[i]);
    for (unsigned long i = 0; i < n; i++) {
        one_accumulation(NULL);
        one_quotient(false);
        one_quotient(true);
        one_convert();
    }
    printf("trace_decimals: %d values checked, %d wrong\n", n_checked, n_fail);
    return n_fail == 0 && n_checked > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
