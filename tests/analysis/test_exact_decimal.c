/* test_exact_decimal.c -- exact decimal text against MPFR: dyadic numbers
   from 2^-1600 to 2^1100 (binary64 subnormals, wide differences), decimal
   numbers, quotients and a + b sqrt(c) that do not end (their first
   digits), and the exact value of number texts */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/exact_decimal.h"
#include "tests/support/decimal.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

/*----------------------------------------------------------------------------
 * The oracle: digits from mpfr_get_str, laid out in the notation by the
 * tests' own code, tests/support/decimal.c (pinned by the hand-written
 * cases of test_notation).
 *--------------------------------------------------------------------------*/
/* Every digit of X, an MPFR number held exactly. */
static char *
expect_exact(const mpfr_t x)
{
    return mpfr_zero_p(x) ? strdup("0") : tst_decimal_exact(x);
}

/* The first XDEC_DIGITS digits of a value known to lie in [LO, HI] (same
   sign, not ending), or NULL when the bounds do not decide them. */
static char *
expect_truncated(const mpfr_t lo, const mpfr_t hi)
{
    return tst_decimal_truncated(lo, hi, XDEC_DIGITS);
}

static int n_fail;

static void
check_text(const char *what, const char *got, const char *want)
{
    if (got != NULL && strcmp(got, want) == 0)
        return;
    if (n_fail++ < TST_MAX_PRINT)
        printf("exact_decimal %s\n  expected %s\n  got      %s\n", what, want,
               got != NULL ? got : "(null)");
}

static gmp_randstate_t grs;

static void
rand_init(tst_rng *r, uint64_t stream)
{
    tst_rng_init(r, stream);
    gmp_randinit_default(grs);
    gmp_randseed_ui(grs, (unsigned long)tst_rand64(r));
}

/*----------------------------------------------------------------------------
 * The notation, by hand.
 *--------------------------------------------------------------------------*/
START_TEST(test_notation)
{
    static const struct
    {
        const char *text, *want;
    } c[] = {
        {"0", "0"},
        {"-0", "0"},
        {"1", "1"},
        {"-2.40625", "-2.40625"},
        {"0.00001", "0.00001"},
        {"0.0000015", "1.5e-06"},
        {"16777216", "16777216"},
        {"100000000000000000000", "100000000000000000000"},
        {"1000000000000000000000", "1e+21"},
        {"123456789012345678901.5", "123456789012345678901.5"},
        {"1234567890123456789012.5", "1.2345678901234567890125e+21"},
        {"0.1", "0.1"},
        {"1.490116119384765625e-9", "1.490116119384765625e-09"},
        {"0x1p-149", "1.40129846432481707092372958328991613128026194187651577"
                     "175706828388979108268586060148663818836212158203125"
                     "e-45"},
        {"-0x1.8p1", "-3"},
        {"0x.8p0", "0.5"},
        {"7e100000", "7e+100000"},
        {"12.5e-3", "0.0125"},
    };
    mpq_t q;
    bool neg;

    mpq_init(q);
    n_fail = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *s;
        ck_assert_int_eq(xdec_parse(q, &neg, c[i].text), XDEC_OK);
        ck_assert(neg == (c[i].text[0] == '-'));
        s = xdec_rational(q);
        check_text(c[i].text, s, c[i].want);
        free(s);
    }
    mpq_clear(q);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

/* The cases of the trace bug reports: input errors of 0x1p-400 (f32),
   0x1p-300 (bf16) and 0.1 (f32: 13421773 * 2^-27). */
START_TEST(test_reported_cases)
{
    mpq_t q, r;
    mpfr_t x;
    char *s, *w;
    bool neg;

    mpq_init(q);
    mpq_init(r);
    mpfr_init2(x, 8);
    n_fail = 0;
    for (int e = 300; e <= 400; e += 100) {
        char text[16];
        snprintf(text, sizeof text, "0x1p-%d", e);
        ck_assert_int_eq(xdec_parse(q, &neg, text), XDEC_OK);
        mpq_neg(q, q); /* the error 0 - 2^-e */
        s = xdec_rational(q);
        mpfr_set_si_2exp(x, -1, -e, MPFR_RNDN);
        w = expect_exact(x);
        check_text(text, s, w);
        free(s);
        free(w);
    }
    ck_assert_int_eq(xdec_parse(q, &neg, "0.1"), XDEC_OK);
    mpq_set_ui(r, 13421773, 1);
    mpq_div_2exp(r, r, 27);
    mpq_sub(r, r, q);
    s = xdec_rational(r);
    check_text("f32(0.1) - 0.1", s, "1.490116119384765625e-09");
    free(s);
    mpfr_clear(x);
    mpq_clear(q);
    mpq_clear(r);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Dyadic numbers: m 2^e, m up to 2600 bits, every bit in [2^-1600,
 * 2^1100].
 *--------------------------------------------------------------------------*/
static void
check_dyadic(const char *tag, const mpz_t m, long e, bool neg)
{
    mpq_t q;
    mpfr_t x;
    size_t bits = mpz_sizeinbase(m, 2);
    char *s, *w, what[64];

    mpq_init(q);
    mpfr_init2(x, (mpfr_prec_t)(bits < 2 ? 2 : bits));
    xdec_set_dyadic(q, neg, m, e);
    s = xdec_rational(q);
    mpfr_set_z_2exp(x, m, e, MPFR_RNDN); /* exact: prec >= bits */
    if (neg)
        mpfr_neg(x, x, MPFR_RNDN);
    w = expect_exact(x);
    snprintf(what, sizeof what, "%s: %zu-bit m * 2^%ld", tag, bits, e);
    check_text(what, s, w);
    free(s);
    free(w);
    mpfr_clear(x);
    mpq_clear(q);
}

START_TEST(test_dyadic_edges)
{
    static const long e[] = {-1600, -1490, -1075, -1074, -1022, -149,
                             -126,  -1,    0,     1,     52,    127,
                             128,   1023,  1024,  1099};
    mpz_t m;

    mpz_init(m);
    n_fail = 0;
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
        /* 2^e, (2^53 - 1) 2^e, and the odd 2^1100 - 1 .. shifted */
        mpz_set_ui(m, 1);
        check_dyadic("power", m, e[i], false);
        check_dyadic("power", m, e[i], true);
        mpz_set_ui(m, ((uint64_t)1 << 53) - 1);
        check_dyadic("53 ones", m, e[i] - 52, true);
    }
    /* 2^1024 - 2^-1490: every bit from 2^-1490 to 2^1023 set */
    mpz_set_ui(m, 1);
    mpz_mul_2exp(m, m, 2514);
    mpz_sub_ui(m, m, 1);
    check_dyadic("2^1024 - 2^-1490", m, -1490, false);
    /* 2^1023 + 2^-1074 and 2^1023 + 2^-1490 */
    mpz_set_ui(m, 1);
    mpz_mul_2exp(m, m, 2097);
    mpz_add_ui(m, m, 1);
    check_dyadic("2^1023 + 2^-1074", m, -1074, true);
    mpz_set_ui(m, 1);
    mpz_mul_2exp(m, m, 2513);
    mpz_add_ui(m, m, 1);
    check_dyadic("2^1023 + 2^-1490", m, -1490, false);
    mpz_clear(m);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

START_TEST(test_dyadic_random)
{
    tst_rng r;
    unsigned long n = 3000 * tst_multiplier();
    mpz_t m;

    rand_init(&r, 1);
    mpz_init(m);
    n_fail = 0;
    for (unsigned long i = 0; i < n; i++) {
        /* the lowest bit 2^lo, lo in [-1600, 1000]; up to 2600 bits but
           not above 2^1100; every third case a short significand */
        long lo = (long)tst_rand_below(&r, 2601) - 1600;
        unsigned long room = (unsigned long)(1100 - lo), len;
        len = i % 3 == 0 ? 1 + tst_rand_below(&r, 64)
                         : 1 + tst_rand_below(&r, 2600);
        if (len > room)
            len = room;
        mpz_urandomb(m, grs, len);
        mpz_setbit(m, 0);
        mpz_setbit(m, len - 1);
        check_dyadic("random", m, lo, tst_rand64(&r) & 1);
    }
    mpz_clear(m);
    gmp_randclear(grs);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Decimal numbers D * 10^k: the expected text is D's digits moved.
 *--------------------------------------------------------------------------*/
START_TEST(test_decimal_random)
{
    tst_rng r;
    unsigned long n = 2000 * tst_multiplier();
    mpz_t d, p;
    mpq_t q, t;

    rand_init(&r, 2);
    mpz_init(d);
    mpz_init(p);
    mpq_init(q);
    mpq_init(t);
    n_fail = 0;
    for (unsigned long i = 0; i < n; i++) {
        size_t nd = 1 + tst_rand_below(&r, i % 2 ? 30 : 400);
        long k = (long)tst_rand_below(&r, 1401) - 900;
        bool neg = tst_rand64(&r) & 1;
        char *dig = malloc(nd + 1), *s, *w, what[48];

        for (size_t j = 0; j < nd; j++)
            dig[j] = (char)('0' + tst_rand_below(&r, 10));
        dig[0] = (char)('1' + tst_rand_below(&r, 9));
        dig[nd] = '\0';
        /* q = D * 10^k built with GMP */
        mpz_set_str(d, dig, 10);
        mpz_ui_pow_ui(p, 10, (unsigned long)(k < 0 ? -k : k));
        mpq_set_z(q, d);
        mpq_set_z(t, p);
        if (k < 0)
            mpq_div(q, q, t);
        else
            mpq_mul(q, q, t);
        if (neg)
            mpq_neg(q, q);
        s = xdec_rational(q);
        w = tst_decimal_layout(neg, dig, k + (long)nd, false);
        snprintf(what, sizeof what, "%zu digits * 10^%ld", nd, k);
        check_text(what, s, w);
        free(s);
        free(w);
        free(dig);
    }
    mpz_clear(d);
    mpz_clear(p);
    mpq_clear(q);
    mpq_clear(t);
    gmp_randclear(grs);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Values that do not end: quotients, and a + b sqrt(c).
 *--------------------------------------------------------------------------*/
#define HI_PREC 3000

/* A random dyadic m 2^e, m of 1..BITS bits, e in [E0, E0 + span). */
static void
rand_dyadic(tst_rng *r, mpq_t q, mpfr_t x, unsigned long bits, long e0,
            unsigned long span, bool allow_neg)
{
    mpz_t m;
    long e = e0 + (long)tst_rand_below(r, span);
    unsigned long len = 1 + tst_rand_below(r, bits);

    mpz_init(m);
    mpz_urandomb(m, grs, len);
    mpz_setbit(m, len - 1);
    if (allow_neg && (tst_rand64(r) & 1))
        mpz_neg(m, m);
    mpq_set_z(q, m);
    if (e < 0)
        mpq_div_2exp(q, q, (mp_bitcnt_t)-e);
    else
        mpq_mul_2exp(q, q, (mp_bitcnt_t)e);
    mpfr_set_prec(x, (mpfr_prec_t)(len + 1));
    mpfr_set_z_2exp(x, m, e, MPFR_RNDN);
    mpz_clear(m);
}

START_TEST(test_quotient_random)
{
    tst_rng r;
    unsigned long n = 1500 * tst_multiplier();
    mpq_t a, b, q;
    mpfr_t x, y, lo, hi;

    rand_init(&r, 3);
    mpq_init(a);
    mpq_init(b);
    mpq_init(q);
    mpfr_inits2(64, x, y, NULL);
    mpfr_inits2(HI_PREC, lo, hi, NULL);
    n_fail = 0;
    for (unsigned long i = 0; i < n; i++) {
        char *s, *w, what[96];
        rand_dyadic(&r, a, x, 64, -1200, 2300, true);
        rand_dyadic(&r, b, y, 24, -200, 400, true);
        mpq_div(q, a, b);
        {
            /* a quotient whose reduced denominator is 2^i 5^j ends
               (test_decimal_random has those): skip it */
            mpz_t o, five;
            bool ends;
            mpz_init_set(o, mpq_denref(q));
            mpz_init_set_ui(five, 5);
            mpz_remove(o, o, five);
            ends = mpz_scan1(o, 0) == mpz_sizeinbase(o, 2) - 1;
            mpz_clear(o);
            mpz_clear(five);
            if (ends) {
                i--;
                continue;
            }
        }
        s = xdec_rational(q);
        mpfr_div(lo, x, y, MPFR_RNDD);
        mpfr_div(hi, x, y, MPFR_RNDU);
        if (mpfr_equal_p(lo, hi)) {
            w = expect_exact(lo);
        } else {
            w = expect_truncated(mpfr_sgn(lo) < 0 ? hi : lo,
                                 mpfr_sgn(lo) < 0 ? lo : hi);
            if (w == NULL)
                w = strdup("(undecided)");
        }
        snprintf(what, sizeof what, "quotient %a / %a (approx)",
                 mpfr_get_d(x, MPFR_RNDN), mpfr_get_d(y, MPFR_RNDN));
        check_text(what, s, w);
        free(s);
        free(w);
    }
    mpq_clear(a);
    mpq_clear(b);
    mpq_clear(q);
    mpfr_clears(x, y, lo, hi, NULL);
    gmp_randclear(grs);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

/* Bounds [lo, hi] of A + B sqrt(C) from directed roundings. */
static void
sqrt_bounds(mpfr_t lo, mpfr_t hi, const mpfr_t a, const mpfr_t b,
            const mpfr_t c)
{
    mpfr_t s1, s2, t1, t2;

    mpfr_inits2(HI_PREC, s1, s2, t1, t2, NULL);
    mpfr_sqrt(s1, c, MPFR_RNDD);
    mpfr_sqrt(s2, c, MPFR_RNDU);
    if (mpfr_sgn(b) >= 0) {
        mpfr_mul(t1, b, s1, MPFR_RNDD);
        mpfr_mul(t2, b, s2, MPFR_RNDU);
    } else {
        mpfr_mul(t1, b, s2, MPFR_RNDD);
        mpfr_mul(t2, b, s1, MPFR_RNDU);
    }
    mpfr_add(lo, a, t1, MPFR_RNDD);
    mpfr_add(hi, a, t2, MPFR_RNDU);
    mpfr_clears(s1, s2, t1, t2, NULL);
}

START_TEST(test_sqrt_affine_random)
{
    tst_rng r;
    unsigned long n = 1500 * tst_multiplier();
    mpq_t a, b, c;
    mpfr_t x, y, z, lo, hi;

    rand_init(&r, 4);
    mpq_init(a);
    mpq_init(b);
    mpq_init(c);
    mpfr_inits2(64, x, y, z, NULL);
    mpfr_inits2(HI_PREC, lo, hi, NULL);
    n_fail = 0;
    for (unsigned long i = 0; i < n; i++) {
        char *s, *w, what[128];
        int kind = (int)(i % 4);

        rand_dyadic(&r, c, z, 48, -1200, 2300, false);
        if (kind == 0) {
            /* sqrt(c) alone */
            mpq_set_ui(a, 0, 1);
            mpfr_set_ui(x, 0, MPFR_RNDN);
            mpq_set_ui(b, 1, 1);
            mpfr_set_ui(y, 1, MPFR_RNDN);
        } else if (kind == 1) {
            /* r - sqrt(c) scaled by 2^-u, r the 24-bit truncation of
               sqrt(c): the error of a square root, in ulps */
            mpfr_t sq;
            mpz_t m;
            mpfr_exp_t ex;
            long u;
            mpfr_init2(sq, 24);
            mpz_init(m);
            mpfr_sqrt(sq, z, MPFR_RNDZ);
            ex = mpfr_get_z_2exp(m, sq);
            u = (long)tst_rand_below(&r, 2) ? (long)ex : 0;
            mpfr_set_prec(x, 30);
            mpfr_set_z_2exp(x, m, (long)ex - u, MPFR_RNDN);
            mpq_set_z(a, m);
            if ((long)ex - u < 0)
                mpq_div_2exp(a, a, (mp_bitcnt_t)(u - (long)ex));
            else
                mpq_mul_2exp(a, a, (mp_bitcnt_t)((long)ex - u));
            mpq_set_si(b, -1, 1);
            if (u > 0)
                mpq_div_2exp(b, b, (mp_bitcnt_t)u);
            else
                mpq_mul_2exp(b, b, (mp_bitcnt_t)-u);
            mpfr_set_prec(y, 8);
            mpfr_set_si_2exp(y, -1, -u, MPFR_RNDN);
            mpfr_clear(sq);
            mpz_clear(m);
        } else {
            /* random a and b */
            rand_dyadic(&r, a, x, 64, -1200, 2300, true);
            rand_dyadic(&r, b, y, 16, -600, 1200, true);
        }
        if (kind == 3) {
            /* a perfect square: the value ends */
            mpq_mul(c, c, c);
            mpfr_set_prec(lo, 2 * mpfr_get_prec(z));
            mpfr_sqr(lo, z, MPFR_RNDN);
            mpfr_set_prec(z, mpfr_get_prec(lo));
            mpfr_set(z, lo, MPFR_RNDN);
            mpfr_set_prec(lo, HI_PREC);
        }
        s = xdec_sqrt_affine(a, b, c);
        sqrt_bounds(lo, hi, x, y, z);
        if (mpfr_equal_p(lo, hi))
            w = expect_exact(lo);
        else if (mpfr_sgn(lo) < 0 && mpfr_sgn(hi) > 0)
            w = strdup("(sign undecided)");
        else if ((w = expect_truncated(mpfr_sgn(lo) < 0 ? hi : lo,
                                       mpfr_sgn(lo) < 0 ? lo : hi))
                 == NULL)
            w = strdup("(undecided)");
        snprintf(what, sizeof what, "kind %d: %a + %a sqrt(%a) (approx)", kind,
                 mpfr_get_d(x, MPFR_RNDN), mpfr_get_d(y, MPFR_RNDN),
                 mpfr_get_d(z, MPFR_RNDN));
        check_text(what, s, w);
        free(s);
        free(w);
    }
    mpq_clear(a);
    mpq_clear(b);
    mpq_clear(c);
    mpfr_clears(x, y, z, lo, hi, NULL);
    gmp_randclear(grs);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Texts.
 *--------------------------------------------------------------------------*/
START_TEST(test_parse_hex_random)
{
    tst_rng r;
    unsigned long n = 1500 * tst_multiplier();
    mpq_t q;
    mpfr_t x;
    bool neg;

    rand_init(&r, 5);
    mpq_init(q);
    mpfr_init2(x, 8);
    n_fail = 0;
    for (unsigned long i = 0; i < n; i++) {
        char text[200], *p = text, *s, *w;
        size_t nd = 1 + tst_rand_below(&r, 30),
               point = tst_rand_below(&r, nd + 1);
        long e = (long)tst_rand_below(&r, 2701) - 1600;

        if (tst_rand64(&r) & 1)
            *p++ = '-';
        *p++ = '0';
        *p++ = tst_rand64(&r) & 1 ? 'x' : 'X';
        for (size_t j = 0; j < nd; j++) {
            if (j == point)
                *p++ = '.';
            *p++ = "0123456789abcdefABCDEF"[tst_rand_below(&r, 22)];
        }
        snprintf(p, 40, "%c%ld", tst_rand64(&r) & 1 ? 'p' : 'P', e);
        ck_assert_int_eq(xdec_parse(q, &neg, text), XDEC_OK);
        s = xdec_rational(q);
        /* MPFR reads the hex-float exactly at 4 bits a digit */
        mpfr_set_prec(x, (mpfr_prec_t)(4 * nd + 8));
        ck_assert_int_eq(mpfr_strtofr(x, text, NULL, 0, MPFR_RNDN), 0);
        w = expect_exact(x);
        check_text(text, s, w);
        free(s);
        free(w);
    }
    mpq_clear(q);
    mpfr_clear(x);
    gmp_randclear(grs);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

START_TEST(test_parse_decimal_random)
{
    tst_rng r;
    unsigned long n = 1500 * tst_multiplier();
    mpq_t q;
    bool neg;

    rand_init(&r, 6);
    mpq_init(q);
    n_fail = 0;
    for (unsigned long i = 0; i < n; i++) {
        /* [-]zeros digits with a point somewhere, e[+-]E: the expected
           text moves the significant digits */
        char text[512], dig[300], *p = text, *s, *w;
        size_t nz = tst_rand_below(&r, 4), nd = 1 + tst_rand_below(&r, 200);
        size_t point = tst_rand_below(&r, nz + nd + 1), j, k = 0, first = 0;
        long e = (long)tst_rand_below(&r, 1201) - 600;
        bool minus = tst_rand64(&r) & 1, any = false;

        if (minus)
            *p++ = '-';
        else if (tst_rand64(&r) & 1)
            *p++ = '+';
        for (j = 0; j < nz + nd; j++) {
            char c = j < nz ? '0' : (char)('0' + tst_rand_below(&r, 10));
            if (j == point)
                *p++ = '.';
            *p++ = c;
            if (c != '0' && !any) {
                any = true;
                first = j;
            }
            if (any)
                dig[k++] = c;
        }
        if (point == nz + nd && (tst_rand64(&r) & 1))
            *p++ = '.';
        snprintf(p, 40, "%c%ld", tst_rand64(&r) & 1 ? 'e' : 'E', e);
        dig[k] = '\0';
        ck_assert_int_eq(xdec_parse(q, &neg, text), XDEC_OK);
        ck_assert(neg == minus);
        s = xdec_rational(q);
        /* value = 0.DIG * 10^(point - first + e): POINT digits before
           the point, the first significant one at index FIRST */
        w = any ? tst_decimal_layout(minus, dig, (long)point - (long)first + e,
                                     false)
                : strdup("0");
        check_text(text, s, w);
        free(s);
        free(w);
    }
    mpq_clear(q);
    gmp_randclear(grs);
    ck_assert_int_eq(n_fail, 0);
}
END_TEST

START_TEST(test_parse_bad)
{
    static const char *const syntax[] = {"",    "-",    "inf",  "nan",   "1e",
                                         "1e+", "0x",   "0xp1", "1.2.3", "1 ",
                                         " 1",  "0x1p", "1x",   "1e5.0", "."};
    static const char *const range[] = {
        "1e100001",   "-1e-100001",  "0.0001e-99997", "1000e99998",
        "0x1p332194", "0x1p-332194", "0x10p332190"};
    static const char *const ok[] = {"1e100000", "1e-100000", "0x1p332193",
                                     "0x1p-332193", "0.00000e999999999"};
    mpq_t q;
    bool neg;

    mpq_init(q);
    for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++)
        ck_assert_msg(xdec_parse(q, &neg, syntax[i]) == XDEC_SYNTAX,
                      "'%s' is not a number", syntax[i]);
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++)
        ck_assert_msg(xdec_parse(q, &neg, range[i]) == XDEC_RANGE,
                      "'%s' is out of range", range[i]);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(xdec_parse(q, &neg, ok[i]) == XDEC_OK,
                      "'%s' is in range", ok[i]);
    mpq_clear(q);
}
END_TEST

static Suite *
exact_decimal_suite(void)
{
    Suite *s = suite_create("exact_decimal");
    TCase *tc = tst_add_tcase(s, "exact_decimal", 120);

    tcase_add_test(tc, test_notation);
    tcase_add_test(tc, test_reported_cases);
    tcase_add_test(tc, test_dyadic_edges);
    tcase_add_test(tc, test_dyadic_random);
    tcase_add_test(tc, test_decimal_random);
    tcase_add_test(tc, test_quotient_random);
    tcase_add_test(tc, test_sqrt_affine_random);
    tcase_add_test(tc, test_parse_hex_random);
    tcase_add_test(tc, test_parse_decimal_random);
    tcase_add_test(tc, test_parse_bad);
    return s;
}

int
main(void)
{
    return tst_run_suite(exact_decimal_suite());
}
