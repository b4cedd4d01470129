/* oracle.h -- MPFR reference results for the softfloat tests */
#ifndef BF16EMU_TESTS_ORACLE_H
#define BF16EMU_TESTS_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include "softfloat/softfloat.h"

/*----------------------------------------------------------------------------
 * The oracle computes the result bits and the five IEEE flags of one
 * operation without using the code under test:
 *
 *  - operands are decoded from their bits with integer code and set into
 *    MPFR with mpfr_set_ui_2exp;
 *  - special operands (NaN, Inf, zero) follow hand-written IEEE 754-2019
 *    rules (oracle.c, "special cases");
 *  - a finite result is computed by MPFR once, rounded to odd at 64 bits,
 *    which keeps every later rounding to at most 24 bits correct;
 *  - roundTiesToEven, roundTowardZero/Positive/Negative are done by MPFR
 *    with the format's emin/emax, mpfr_check_range and mpfr_subnormalize;
 *    roundTiesToAway and round-to-odd by comparing the exact value with
 *    its two neighbours in the format;
 *  - flags are derived in one place from the exact value and the rounded
 *    results (with and without the exponent limits); MPFR's own underflow
 *    flag, which it raises on exact subnormal results, is not used.
 *
 * Environment: what is read from the sf_env is tininess_after and
 * saturate; the NaN rule is SF_NAN_FIRST with the positive default NaN
 * (SF_ENV_IEEE), with no FTZ/DAZ.  SF_SR is not supported.
 *
 * Formats without infinities (E4M3): wherever IEEE 754 would deliver an
 * infinity, the result is the NaN with the infinity's sign: x/0 (with
 * divide-by-zero), and an overflow that rounds to infinity in the mode
 * (RNE, RNA, RUP for positive, RDN for negative results), while RTZ and
 * round-to-odd overflow to +-448.  With saturate, every overflow gives
 * +-448 and converting an Inf gives +-448; x/0 stays the NaN.
 *
 * One oracle per thread: the functions are reentrant given distinct
 * oracle objects (MPFR's exponent range is thread-local in thread-safe
 * builds; the oracle restores it after each rounding).
 *--------------------------------------------------------------------------*/
typedef struct oracle oracle;

oracle *oracle_new(void);
/* Whether oracles may be used from several threads at once (MPFR built
   with thread-local state). */
bool oracle_thread_safe(void);
void oracle_free(oracle *o);

/* With CHECK set, every IEEE-mode rounding is done twice, by MPFR and by
   the neighbour comparison used for RNA/ROD, and a disagreement aborts
   the program (a fault of the oracle itself). Off by default. */
void oracle_set_self_check(oracle *o, bool check);

/* Two-step use: prepare the exact result of one operation once, then
   round it in any number of modes and environments. */

/* OP is SF_OP_ADD, SUB, MUL, DIV, SQRT or FMA on operands IN[0..2] of
   format F (as many as the op takes). */
void oracle_prepare(oracle *o, const sf_format *f, int op, const uint64_t *in);
/* Conversion of A from format FROM to format TO. */
void oracle_prepare_convert(oracle *o, const sf_format *to,
                            const sf_format *from, uint64_t a);
/* Conversion of the integer V to format TO. */
void oracle_prepare_from_int(oracle *o, const sf_format *to, int64_t v);

/* The prepared result rounded with RM under ENV: bits in *OUT; returns the
   flags raised. */
unsigned oracle_result(oracle *o, sf_round rm, const sf_env *env,
                       uint64_t *out);

/* One-step forms. */
unsigned oracle_op(oracle *o, const sf_format *f, int op, sf_round rm,
                   const uint64_t *in, const sf_env *env, uint64_t *out);
unsigned oracle_convert(oracle *o, const sf_format *to, const sf_format *from,
                        uint64_t a, sf_round rm, const sf_env *env,
                        uint64_t *out);
unsigned oracle_from_int(oracle *o, const sf_format *to, int64_t v,
                         sf_round rm, const sf_env *env, uint64_t *out);

/* A of format F rounded to an integer with RM and converted to a signed
   integer of WIDTH (32 or 64) bits. NaN, Inf and results out of range
   give the minimum integer and raise only invalid; otherwise inexact when
   the value changed. */
unsigned oracle_to_int(oracle *o, const sf_format *f, uint64_t a, sf_round rm,
                       unsigned width, int64_t *out);

/* roundToIntegral (EXACT false: no inexact) and roundToIntegralExact
   (EXACT true) of A in format F. */
unsigned oracle_round_to_int(oracle *o, const sf_format *f, uint64_t a,
                             sf_round rm, bool exact, uint64_t *out);

/* Bits of A (format F) as the exact value, in a plain description used by
   the test programs' structured generators: the largest finite value and
   the smallest normal, as bits. */
uint64_t oracle_max_finite_bits(const sf_format *f);
uint64_t oracle_min_normal_bits(const sf_format *f);

/* The six non-stochastic modes in a fixed order. */
extern const sf_round oracle_modes[6];
#define ORACLE_N_MODES 6

#endif
