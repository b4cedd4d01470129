/* round.h -- integer reference rounding, independent of softfloat/: the
   reference of the exhaustive checks and of make bench's exhaustive row */
#ifndef BF16EMU_REF_ROUND_H
#define BF16EMU_REF_ROUND_H

#include <stdbool.h>
#include <stdint.h>

#include "softfloat/softfloat.h"

/* An IEEE binary format with at most 62 significant bits, written down
   here (not taken from softfloat/). */
typedef struct
{
    const char *name;
    int p;            /* precision, hidden bit included */
    int emin;         /* exponent of the smallest normal */
    int emax;         /* exponent of the largest binade */
    unsigned fbits;   /* fraction field width */
    unsigned storage; /* total bits */
} ref_fmt;

extern const ref_fmt ref_bf16, ref_f16, ref_f32;

/* Bits of (-1)^SIGN * (SIG + STICKY) * 2^EXP rounded to T with mode RM
   (no SF_SR), where SIG > 0, SIG < 2^62, and STICKY means "plus something
   in (0, 1)" (the true value lies strictly between SIG and SIG + 1 units).
   *FLAGS gets inexact, underflow (tininess after rounding when
   TININESS_AFTER, else before) and overflow. */
uint64_t ref_round(const ref_fmt *t, bool sign, uint64_t sig, int exp,
                   bool sticky, sf_round rm, bool tininess_after,
                   unsigned *flags);

/* Splits a finite non-zero binary64 X into X = (-1)^sign * sig * 2^exp. */
void ref_split_double(double x, bool *sign, uint64_t *sig, int *exp);

/* The elapsed wall time in seconds since an arbitrary origin. */
double ref_now(void);

extern const sf_round ref_modes[6];

#endif
