/* exact_decimal.h -- exact decimal text of rationals and of a + b sqrt(c),
   and the exact value of a number's text */
#ifndef BF16EMU_ANALYSIS_EXACT_DECIMAL_H
#define BF16EMU_ANALYSIS_EXACT_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gmp.h>

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * Text.  Every value is written in the notation of sf_to_string
 * (SF_PRINT_EXACT): the significant digits D and the decimal exponent E of
 * the leading digit, in plain positional notation ("-4.71875", "0.000123",
 * "16777216") when -5 <= E <= 20, else scientific "d.ddde+XX" with at
 * least two exponent digits ("1.401298464324817e-45").  Zero is "0".
 *
 * A decimal expansion that terminates (a rational whose reduced
 * denominator has no prime factor but 2 and 5: every dyadic number, every
 * decimal number, and their sums and products) is written whole, however
 * long.  One that does not end is written as its first XDEC_DIGITS
 * significant digits, truncated toward zero (so each digit shown is a
 * digit of the value), followed by "...".
 *
 * The functions return a string from malloc, which the caller frees, or
 * NULL when memory runs out.
 *--------------------------------------------------------------------------*/
#define XDEC_DIGITS 40

/* The value Q (canonical). */
char *xdec_rational(const mpq_t q);

/* The value A + B sqrt(C) (canonical rationals, C >= 0). */
char *xdec_sqrt_affine(const mpq_t a, const mpq_t b, const mpq_t c);

/* Q = (-1)^sign * sig * 2^exp. */
void xdec_set_dyadic(mpq_t q, bool sign, const mpz_t sig, int64_t exp);

/*----------------------------------------------------------------------------
 * The exact value of a number's text, as sf_from_string reads it: an
 * optional sign, then a decimal (digits with at most one '.', at least one
 * digit, an optional exponent e[+-]digits) or a C99 hex-float (0x, hex
 * digits with at most one '.', an optional binary exponent p[+-]digits).
 * The whole text must be the number.
 *
 * Returns XDEC_OK and sets Q (and *NEG, the sign, so that "-0" is told
 * from "0"); XDEC_SYNTAX when the text is not such a number (inf, nan,
 * garbage); XDEC_RANGE when its exponent, counted from the leading
 * significant digit, is beyond XDEC_EXP10_MAX (decimal) or
 * XDEC_EXP2_MAX (hex-float) in magnitude: far outside every format, and
 * too large to expand exactly.
 *--------------------------------------------------------------------------*/
#define XDEC_EXP10_MAX 100000
#define XDEC_EXP2_MAX 332193

typedef enum
{
    XDEC_OK,
    XDEC_SYNTAX,
    XDEC_RANGE
} xdec_status;

xdec_status xdec_parse(mpq_t q, bool *neg, const char *text);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_EXACT_DECIMAL_H */
