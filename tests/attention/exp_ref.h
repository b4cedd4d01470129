/* exp_ref.h -- MPFR references for the tests of the exp models */
#ifndef BF16EMU_TESTS_EXP_REF_H
#define BF16EMU_TESTS_EXP_REF_H

#include <stdbool.h>
#include <stdint.h>

#include <mpfr.h>

/*----------------------------------------------------------------------------
 * Binary32 results computed by MPFR, independently of attention/: inputs
 * are decoded from their bits with integer code and set exactly with
 * mpfr_set_ui_2exp; a result is computed at precision 24 with
 * roundTiesToEven under the binary32 exponent range (emin -148, emax 128)
 * and mpfr_subnormalize, and encoded with integer code.  NaN inputs follow
 * the rule written down in the header (the NaN with its quiet bit set).
 * The exponent range of the calling thread is restored after each call;
 * one expref per thread.
 *--------------------------------------------------------------------------*/
typedef struct
{
    mpfr_t x, y, t;
} expref;

void expref_init(expref *r);
void expref_clear(expref *r);

/* exp(x) (BASE2 false) or 2^x of the binary32 bits X, rounded as above. */
uint32_t expref_exp(expref *r, bool base2, uint32_t x);

/* The table rule of fa_exp2_table (attention.h) for X, with the entry for
   the grid point g = -1 + i 2^-FRAC_BITS taken to be 2^g rounded to
   binary32 by MPFR (what a table filled from a correctly rounded exp2
   holds), the product rounded to binary32 (or, with FTZ, below 2^-126
   flushed to +0).  Every step is done by MPFR on exact values. */
uint32_t expref_table_exp2(expref *r, unsigned frac_bits, bool ftz,
                           uint32_t x);

/* X times log2(e) rounded to binary32 (0x3FB8AA3B), then multiplied by X
   and rounded to binary32: the argument of the table model's natural
   exp.  NaN, infinities and zeros are returned as they are. */
uint32_t expref_mul_log2e(expref *r, uint32_t x);

/* Relative distance |v - mid| / v, as a double, of v = exp(x) or 2^x from
   the nearest midpoint between binary32 neighbours (computed at 200
   bits): how hard X is to round.  X finite and not an exact case. */
double expref_hardness(expref *r, bool base2, uint32_t x);

#endif
