/* decimal.h -- the expected exact decimal texts of the decimal tests: MPFR
   digits laid out in the notation of the man page, by code of their own */
#ifndef BF16EMU_TESTS_DECIMAL_H
#define BF16EMU_TESTS_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>

#include <mpfr.h>

/* The text of 0.DIG * 10^E10P (DIG from mpfr_get_str, no sign; a '-' first
   when NEG): positional for leading-digit exponents -5..20, else
   d.ddde+XX; "..." follows when MORE, trailing zeros dropped unless MORE.
   malloc'd. */
char *tst_decimal_layout(bool neg, const char *dig, long e10p, bool more);

/* Every digit of X, a nonzero MPFR number held exactly, as laid out by
   tst_decimal_layout.  malloc'd. */
char *tst_decimal_exact(const mpfr_t x);

/* The first DIGITS significant digits (then "...") of a value known to lie
   in [LO, HI] that does not end, or NULL when the bounds do not decide
   them (other digits, or other signs).  malloc'd. */
char *tst_decimal_truncated(const mpfr_t lo, const mpfr_t hi, size_t digits);

#endif
