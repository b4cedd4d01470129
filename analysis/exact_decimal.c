/* exact_decimal -- exact decimal text of rationals and of a + b sqrt(c) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdlib.h>
#include <string.h>

#include "analysis/bits_internal.h"
#include "analysis/exact_decimal.h"

/*----------------------------------------------------------------------------
 * A growable string.
 *--------------------------------------------------------------------------*/
typedef struct
{
    char *p;
    size_t len, cap;
    bool failed;
} xs;

static void
xs_putc(xs *s, char c)
{
    if (s->failed)
        return;
    if (s->len + 2 > s->cap) {
        size_t cap = s->cap < 64 ? 64 : 2 * s->cap;
        char *p = realloc(s->p, cap);
        if (p == NULL) {
            s->failed = true;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    s->p[s->len++] = c;
    s->p[s->len] = '\0';
}

static void
xs_put_mem(xs *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        xs_putc(s, p[i]);
}

static char *
xs_finish(xs *s)
{
    if (s->failed || s->p == NULL) {
        free(s->p);
        return NULL;
    }
    return s->p;
}

/* The text of D * 10^k (D the ND digits DIG, the first non-zero), with a
   '-' when NEG and "..." when MORE. */
static char *
put_decimal(bool neg, const char *dig, size_t nd, int64_t k, bool more)
{
    xs s = {NULL, 0, 0, false};
    int64_t e10 = (int64_t)nd - 1 + k, i;
    char ex[32];
    int ne = 0;
    uint64_t u;

    if (neg)
        xs_putc(&s, '-');
    if (e10 >= -5 && e10 <= 20) {
        if (k >= 0) {
            xs_put_mem(&s, dig, nd);
            for (i = 0; i < k; i++)
                xs_putc(&s, '0');
        } else if (e10 >= 0) {
            xs_put_mem(&s, dig, (size_t)e10 + 1);
            xs_putc(&s, '.');
            xs_put_mem(&s, dig + e10 + 1, nd - (size_t)e10 - 1);
        } else {
            xs_putc(&s, '0');
            xs_putc(&s, '.');
            for (i = 0; i < -e10 - 1; i++)
                xs_putc(&s, '0');
            xs_put_mem(&s, dig, nd);
        }
    } else {
        xs_putc(&s, dig[0]);
        if (nd > 1) {
            xs_putc(&s, '.');
            xs_put_mem(&s, dig + 1, nd - 1);
        }
        xs_putc(&s, 'e');
        xs_putc(&s, e10 < 0 ? '-' : '+');
        u = e10 < 0 ? (uint64_t)0 - (uint64_t)e10 : (uint64_t)e10;
        do {
            ex[ne++] = (char)('0' + u % 10);
            u /= 10;
        } while (u != 0 || ne < 2);
        while (ne > 0)
            xs_putc(&s, ex[--ne]);
    }
    if (more)
        xs_put_mem(&s, "...", 3);
    return xs_finish(&s);
}

/* The text of (-1)^neg * N * 10^k, N > 0; trailing zeros of N are moved
   into k unless MORE (then they are digits of a truncation). */
static char *
put_scaled(bool neg, const mpz_t n, int64_t k, bool more)
{
    char *dig = mpz_get_str(NULL, 10, n), *r;
    size_t nd;

    if (dig == NULL)
        return NULL;
    nd = strlen(dig);
    while (!more && nd > 1 && dig[nd - 1] == '0') {
        nd--;
        k++;
    }
    r = put_decimal(neg, dig, nd, k, more);
    free(dig);
    return r;
}

static char *
dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/*----------------------------------------------------------------------------
 * Exact values.
 *--------------------------------------------------------------------------*/
void
xdec_set_dyadic(mpq_t q, bool sign, const mpz_t sig, int64_t exp)
{
    mpz_t t;

    mpz_init_set(t, sig);
    mpz_abs(t, t);
    if (exp >= 0) {
        mpz_mul_2exp(t, t, (mp_bitcnt_t)exp);
        mpq_set_z(q, t);
    } else {
        mpq_set_z(q, t);
        mpq_div_2exp(q, q, (mp_bitcnt_t)-exp);
    }
    if (sign)
        mpq_neg(q, q);
    mpz_clear(t);
}

/* Whether Q's reduced denominator is 2^i 5^j; *P gets max(i, j), the
   number of decimal places of Q. */
static bool
terminates(const mpq_t q, uint64_t *p)
{
    mpz_t d, five;
    uint64_t i, j;
    bool ok;

    mpz_init_set(d, mpq_denref(q));
    mpz_init_set_ui(five, 5);
    i = mpz_scan1(d, 0);
    mpz_fdiv_q_2exp(d, d, (mp_bitcnt_t)i);
    j = mpz_remove(d, d, five);
    ok = mpz_cmp_ui(d, 1) == 0;
    *p = i > j ? i : j;
    mpz_clear(d);
    mpz_clear(five);
    return ok;
}

/* T = 10^p as a rational (p of any sign). */
static void
pow10q(mpq_t t, int64_t p)
{
    mpz_t z;

    mpz_init(z);
    mpz_ui_pow_ui(z, 10, (unsigned long)(p < 0 ? -p : p));
    mpq_set_z(t, z);
    if (p < 0)
        mpq_inv(t, t);
    mpz_clear(z);
}

/* N = floor((A + B sqrt(C)) 10^p) for a positive value whose sqrt(C) is
   irrational (or B = 0).  With X = A 10^p = xn / xd and Y = B 10^p:
   X + Y sqrt(C) = (xn + sgn(Y) sqrt(Z)) / xd, Z = Y^2 C xd^2.  sqrt(Z) is
   irrational, strictly between z = isqrt(floor(Z)) and z + 1, so the
   numerator lies strictly between two consecutive integers m and m + 1
   (m = xn + z, or xn - z - 1), and floor(num / xd) = floor(m / xd) for the
   positive integer xd. */
static void
floor_scaled(mpz_t n, const mpq_t a, const mpq_t b, const mpq_t c, int64_t p)
{
    mpq_t t, x, y;
    mpz_t z, m;

    mpq_init(t);
    mpq_init(x);
    mpq_init(y);
    mpz_init(z);
    mpz_init(m);
    pow10q(t, p);
    mpq_mul(x, a, t);
    if (mpq_sgn(b) == 0) {
        mpz_fdiv_q(n, mpq_numref(x), mpq_denref(x));
    } else {
        mpq_mul(y, b, t);
        /* Z = Y^2 C xd^2 */
        mpq_mul(t, y, y);
        mpq_mul(t, t, c);
        mpz_mul(z, mpq_denref(x), mpq_denref(x));
        mpz_mul(mpq_numref(t), mpq_numref(t), z);
        mpq_canonicalize(t);
        mpz_fdiv_q(z, mpq_numref(t), mpq_denref(t));
        mpz_sqrt(z, z);
        if (mpq_sgn(y) > 0) {
            mpz_add(m, mpq_numref(x), z);
        } else {
            mpz_sub(m, mpq_numref(x), z);
            mpz_sub_ui(m, m, 1);
        }
        mpz_fdiv_q(n, m, mpq_denref(x));
    }
    mpq_clear(t);
    mpq_clear(x);
    mpq_clear(y);
    mpz_clear(z);
    mpz_clear(m);
}

/* log2 of |Q|, roughly (within 1). */
static int64_t
log2_q(const mpq_t q)
{
    return (int64_t)mpz_sizeinbase(mpq_numref(q), 2)
           - (int64_t)mpz_sizeinbase(mpq_denref(q), 2);
}

/* The first XDEC_DIGITS significant digits of v = A + B sqrt(C) > 0, a
   value whose expansion does not end, then "...". */
static char *
truncated(bool neg, const mpq_t a, const mpq_t b, const mpq_t c)
{
    mpz_t n;
    int64_t e2 = INT32_MIN, p;
    char *dig = NULL, *r = NULL;

    mpz_init(n);
    /* a first guess of p from the larger term; the loop corrects it */
    if (mpq_sgn(a) != 0)
        e2 = log2_q(a);
    if (mpq_sgn(b) != 0 && log2_q(b) + log2_q(c) / 2 > e2)
        e2 = log2_q(b) + log2_q(c) / 2;
    p = XDEC_DIGITS - e2 * 30103 / 100000;
    for (;;) {
        size_t nd;

        floor_scaled(n, a, b, c, p);
        if (mpz_sgn(n) == 0) {
            p += 2 * XDEC_DIGITS;
            continue;
        }
        dig = mpz_get_str(NULL, 10, n);
        if (dig == NULL)
            break;
        nd = strlen(dig);
        if (nd < XDEC_DIGITS) {
            /* n has floor(log10 v + p) + 1 digits */
            p += XDEC_DIGITS - (int64_t)nd;
            free(dig);
            dig = NULL;
            continue;
        }
        /* the first digits of floor(v 10^p) are those of floor(v 10^p') */
        r = put_decimal(neg, dig, XDEC_DIGITS,
                        -p + (int64_t)(nd - XDEC_DIGITS), true);
        break;
    }
    free(dig);
    mpz_clear(n);
    return r;
}

char *
xdec_rational(const mpq_t q)
{
    uint64_t p;
    mpz_t n;
    mpq_t a, zero;
    char *r;

    if (mpq_sgn(q) == 0)
        return dup_str("0");
    if (terminates(q, &p)) {
        mpz_init(n);
        mpz_ui_pow_ui(n, 10, (unsigned long)p);
        mpz_mul(n, n, mpq_numref(q));
        mpz_divexact(n, n, mpq_denref(q));
        mpz_abs(n, n);
        r = put_scaled(mpq_sgn(q) < 0, n, -(int64_t)p, false);
        mpz_clear(n);
        return r;
    }
    mpq_init(a);
    mpq_init(zero);
    mpq_abs(a, q);
    r = truncated(mpq_sgn(q) < 0, a, zero, zero);
    mpq_clear(a);
    mpq_clear(zero);
    return r;
}

char *
xdec_sqrt_affine(const mpq_t a, const mpq_t b, const mpq_t c)
{
    mpq_t x, y, t;
    int sa = mpq_sgn(a), sb = mpq_sgn(b), sign;
    char *r;

    mpq_init(x);
    mpq_init(y);
    mpq_init(t);
    if (sb == 0 || mpq_sgn(c) == 0) {
        r = xdec_rational(a);
        goto done;
    }
    if (mpz_perfect_square_p(mpq_numref(c))
        && mpz_perfect_square_p(mpq_denref(c))) {
        /* sqrt(C) is rational: A + B sqrt(C) ends */
        mpz_sqrt(mpq_numref(t), mpq_numref(c));
        mpz_sqrt(mpq_denref(t), mpq_denref(c));
        mpq_canonicalize(t);
        mpq_mul(t, t, b);
        mpq_add(t, t, a);
        r = xdec_rational(t);
        goto done;
    }
    /* sqrt(C) is irrational, so the value is not zero; its sign is that
       of the term of larger magnitude: compare A^2 with B^2 C */
    if (sa == 0 || sa == sb) {
        sign = sb;
    } else {
        mpq_mul(x, a, a);
        mpq_mul(y, b, b);
        mpq_mul(y, y, c);
        sign = mpq_cmp(x, y) > 0 ? sa : sb;
    }
    mpq_set(x, a);
    mpq_set(y, b);
    if (sign < 0) {
        mpq_neg(x, x);
        mpq_neg(y, y);
    }
    r = truncated(sign < 0, x, y, c);
done:
    mpq_clear(x);
    mpq_clear(y);
    mpq_clear(t);
    return r;
}

/*----------------------------------------------------------------------------
 * The value of a text.
 *--------------------------------------------------------------------------*/
/* Significand digits at *P (base 10 or 16, at most one '.'): appends them
   to DIG (room for strlen of the text), counts those after the point in
   *FRAC; false when there is none.  Leaves *P after them. */
static bool
scan_digits(const char **pp, int base, char *dig, int64_t *frac)
{
    const char *p = *pp;
    bool point = false, any = false;
    size_t n = 0;

    *frac = 0;
    for (;; p++) {
        if (*p == '.' && !point) {
            point = true;
            continue;
        }
        if (base == 16 ? bits_hex_digit(*p) < 0 : (*p < '0' || *p > '9'))
            break;
        any = true;
        dig[n++] = *p;
        *frac += point;
    }
    dig[n] = '\0';
    *pp = p;
    return any;
}

/* Optional exponent after a marker at *P: [+-]digits, saturated far
   beyond any range. */
static bool
scan_exponent(const char **pp, int64_t *e)
{
    const char *p = *pp;
    bool neg = false;
    int64_t v = 0;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++)
        if (v < ((int64_t)1 << 50))
            v = v * 10 + (*p - '0');
    *e = neg ? -v : v;
    *pp = p;
    return true;
}

xdec_status
xdec_parse(mpq_t q, bool *neg, const char *text)
{
    const char *p = text;
    bool hex;
    int64_t frac, e = 0, lead;
    char *dig = malloc(strlen(text) + 1);
    mpz_t d;
    xdec_status st = XDEC_SYNTAX;

    if (dig == NULL)
        return XDEC_SYNTAX;
    mpz_init(d);
    *neg = false;
    if (*p == '+' || *p == '-')
        *neg = *p++ == '-';
    hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    if (hex)
        p += 2;
    if (!scan_digits(&p, hex ? 16 : 10, dig, &frac))
        goto out;
    if (*p == (hex ? 'p' : 'e') || *p == (hex ? 'P' : 'E')) {
        p++;
        if (!scan_exponent(&p, &e))
            goto out;
    }
    if (*p != '\0')
        goto out;
    mpz_set_str(d, dig, hex ? 16 : 10);
    mpq_set_z(q, d);
    if (mpz_sgn(d) == 0) {
        st = XDEC_OK;
        goto out;
    }
    if (hex) {
        /* D 16^-frac 2^e; the leading bit's exponent */
        e -= 4 * frac;
        lead = e + (int64_t)mpz_sizeinbase(d, 2) - 1;
        st = lead > XDEC_EXP2_MAX || lead < -XDEC_EXP2_MAX ? XDEC_RANGE
                                                           : XDEC_OK;
        if (st == XDEC_OK && e >= 0)
            mpq_mul_2exp(q, q, (mp_bitcnt_t)e);
        else if (st == XDEC_OK)
            mpq_div_2exp(q, q, (mp_bitcnt_t)-e);
    } else {
        mpq_t t;
        const char *first = dig;
        while (*first == '0')
            first++;
        e -= frac;
        lead = e + (int64_t)strlen(first) - 1;
        st = lead > XDEC_EXP10_MAX || lead < -XDEC_EXP10_MAX ? XDEC_RANGE
                                                             : XDEC_OK;
        if (st == XDEC_OK) {
            mpq_init(t);
            pow10q(t, e);
            mpq_mul(q, q, t);
            mpq_clear(t);
        }
    }
    if (st == XDEC_OK && *neg)
        mpq_neg(q, q);
out:
    free(dig);
    mpz_clear(d);
    return st;
}
