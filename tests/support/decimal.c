/* decimal.c -- the expected exact decimal texts of the decimal tests */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/decimal.h"

char *
tst_decimal_layout(bool neg, const char *dig, long e10p, bool more)
{
    size_t nd = strlen(dig), cap = nd + 64;
    long e = e10p - 1; /* exponent of the leading digit */
    char *out = malloc(cap + (size_t)(e > 0 && e < 30 ? e : 0)
                       + (size_t)(e < 0 && e > -10 ? -e : 0));
    char *p = out;

    while (!more && nd > 1 && dig[nd - 1] == '0')
        nd--;
    if (neg)
        *p++ = '-';
    if (e >= -5 && e <= 20) {
        if (e < 0) {
            *p++ = '0';
            *p++ = '.';
            for (long i = 0; i < -e - 1; i++)
                *p++ = '0';
            memcpy(p, dig, nd);
            p += nd;
        } else {
            for (long i = 0; i <= e; i++)
                *p++ = (size_t)i < nd ? dig[i] : '0';
            if ((size_t)e + 1 < nd) {
                *p++ = '.';
                memcpy(p, dig + e + 1, nd - (size_t)e - 1);
                p += nd - (size_t)e - 1;
            }
        }
    } else {
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, dig + 1, nd - 1);
            p += nd - 1;
        }
        p += sprintf(p, "e%c%02ld", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    if (more) {
        memcpy(p, "...", 3);
        p += 3;
    }
    *p = '\0';
    return out;
}

char *
tst_decimal_exact(const mpfr_t x)
{
    mpfr_exp_t e;
    long ex, n;
    char *dig, *r;

    ex = (long)mpfr_get_exp(x);
    /* the lowest bit is at least 2^(ex - prec): that many places after
       the point, plus the integer digits, hold every digit */
    n = (ex > 0 ? ex * 31 / 100 + 2 : 2)
        + (ex - (long)mpfr_get_prec(x) < 0 ? (long)mpfr_get_prec(x) - ex : 0)
        + 4;
    dig = mpfr_get_str(NULL, &e, 10, (size_t)n, x, MPFR_RNDN);
    r = tst_decimal_layout(dig[0] == '-', dig + (dig[0] == '-'), (long)e,
                           false);
    mpfr_free_str(dig);
    return r;
}

char *
tst_decimal_truncated(const mpfr_t lo, const mpfr_t hi, size_t digits)
{
    mpfr_exp_t e1, e2;
    char *d1 = mpfr_get_str(NULL, &e1, 10, digits, lo, MPFR_RNDZ);
    char *d2 = mpfr_get_str(NULL, &e2, 10, digits, hi, MPFR_RNDZ);
    char *r = NULL;

    if (e1 == e2 && strcmp(d1, d2) == 0 && mpfr_sgn(lo) == mpfr_sgn(hi))
        r = tst_decimal_layout(d1[0] == '-', d1 + (d1[0] == '-'), (long)e1,
                               true);
    mpfr_free_str(d1);
    mpfr_free_str(d2);
    return r;
}
