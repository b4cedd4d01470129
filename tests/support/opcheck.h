/* opcheck.h -- library-versus-oracle comparison loops for the op tests */
#ifndef BF16EMU_TESTS_OPCHECK_H
#define BF16EMU_TESTS_OPCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "softfloat/softfloat.h"
#include "tests/support/oracle.h"
#include "tests/support/support.h"

/*----------------------------------------------------------------------------
 * One test case: an operation and its operands.  Each case is checked in
 * all six non-stochastic modes; result bits and all five flags must match
 * the oracle.
 *--------------------------------------------------------------------------*/
typedef enum
{
    OPC_ARITH,    /* op = SF_OP_ADD .. SF_OP_FMA on in[] of format f */
    OPC_CONVERT,  /* in[0] of format from, converted to f */
    OPC_FROM_INT, /* iv (width 32 or 64 bits) to f */
    OPC_TO_INT,   /* in[0] of format f to an integer of width bits */
    OPC_ROUND_INT /* sf_round_to_int of in[0], exact or not */
} opc_kind;

typedef struct
{
    opc_kind kind;
    int op;                /* OPC_ARITH: SF_OP_* */
    const sf_format *f;    /* result format (OPC_TO_INT: source) */
    const sf_format *from; /* OPC_CONVERT */
    uint64_t in[3];
    int64_t iv;     /* OPC_FROM_INT */
    unsigned width; /* OPC_FROM_INT, OPC_TO_INT: 32 or 64 */
    bool exact;     /* OPC_ROUND_INT */
} opc_case;

/* Failures kept for printing: the TST_MAX_PRINT with the smallest keys, so
   the output does not depend on the number of threads. */
typedef struct
{
    uint64_t key;
    opc_case c;
    sf_round rm;
    uint64_t expected, got;
    unsigned exp_flags, got_flags;
} opc_fail;

typedef struct
{
    unsigned long n_checked; /* case-mode pairs compared */
    unsigned long n_bad;
    unsigned n_fails;
    opc_fail fails[TST_MAX_PRINT];
} opc_report;

void opc_report_init(opc_report *r);
/* Prints the kept failures (tst_print_case layout) and a summary line
   "LABEL: N checked, M mismatches" to stdout. */
void opc_report_print(const opc_report *r, const char *label);

/* Number of arguments and the name of an arithmetic op ("add", ...). */
unsigned opc_arity(int op);
const char *opc_op_name(int op);

/* Checks case C under the environment template ENV (flags ignored) in all
   six modes with oracle O; mismatches go to R under keys KEY*8 + mode.
   Returns the number of mismatches. Not thread-safe on R: use
   opc_run_cases for parallel loops. */
unsigned opc_check_case(oracle *o, const opc_case *c, const sf_env *env,
                        opc_report *r, uint64_t key);

/* A case generator: fills *C for case number IDX; RNG is seeded per block
   of cases from (STREAM, block number), so the cases are the same for any
   thread count. */
typedef void (*opc_gen_fn)(uint64_t idx, tst_rng *rng, const void *ctx,
                           opc_case *c);

/* Runs cases 0 .. N-1 of GEN (OpenMP-parallel when built with it) and
   adds the outcome to R. With SELF_CHECK, the oracle cross-checks its own
   roundings (slower). */
void opc_run_cases(opc_gen_fn gen, const void *ctx, uint64_t n,
                   uint64_t stream, const sf_env *env, bool self_check,
                   opc_report *r);

/*----------------------------------------------------------------------------
 * Operand generators.
 *--------------------------------------------------------------------------*/
/* Bits of F from sign, biased exponent field and fraction field. */
uint64_t opc_pack(const sf_format *f, bool sign, uint64_t exp_field,
                  uint64_t frac);

/* Structured values of F (TestFloat style): exponents near zero, one, the
   subnormal edge and overflow, times significand patterns (walking ones
   and zeros, runs of ones from either end, alternating bits), both signs,
   plus zeros, infinities, NaNs. Writes at most MAX values into OUT and
   returns the count. The list is the same on every call. */
size_t opc_structured_values(const sf_format *f, uint64_t *out, size_t max);

/* One random operand from a mix: uniform bits, structured values, random
   significands in random binades, specials. */
uint64_t opc_random_value(const sf_format *f, tst_rng *rng);

/* Random operands for OP chosen to hit interesting cases often: exponents
   close together (cancellation, carries), products and quotients near the
   overflow and underflow thresholds, fma addends close to the product. */
void opc_random_operands(const sf_format *f, int op, tst_rng *rng,
                         uint64_t *in);

/* A random significand pattern of W bits: uniform, or runs of ones and
   zeros (TestFloat's random with runs). */
uint64_t opc_random_sig(tst_rng *rng, unsigned w);

/*----------------------------------------------------------------------------
 * Ready-made loops for an arithmetic op of format F (all six modes each).
 *--------------------------------------------------------------------------*/
/* Structured cases: all pairs (triples for fma) of a thinned structured
   list (the oracle cross-checks itself here), then every structured value
   against fixed partners (one, -1, the smallest normal and subnormal, the
   largest value, values one rounding away). */
void opc_test_structured(const sf_format *f, int op, const sf_env *env,
                         uint64_t stream, opc_report *r);
/* N random operand tuples from opc_random_operands. */
void opc_test_random(const sf_format *f, int op, uint64_t n, uint64_t stream,
                     const sf_env *env, opc_report *r);
/* Every operand (unary) or pair (binary; fma with a random addend) of an
   8- or 16-bit format. */
void opc_test_all(const sf_format *f, int op, const sf_env *env,
                  uint64_t stream, opc_report *r);

/*----------------------------------------------------------------------------
 * Hand-written table rows ("special" tcases): the expected bits and flags
 * are written in the table; both the library and the oracle must give
 * them.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *fmt;  /* format name; OPC_CONVERT: the result's */
    const char *from; /* OPC_CONVERT: the source format */
    opc_kind kind;
    int op;
    sf_round rm;
    uint64_t in[3];
    uint64_t expected;
    unsigned flags;
    bool tininess_before; /* default: after rounding */
    bool saturate;
} opc_row;

/* A row of arithmetic op OP (SF_OP_*) in mode SF_RM on operands A, B, C
   (0 where unused): result Z with flags FL, tininess before rounding when
   BEFORE, saturating when SAT. */
#define OPC_ARITH_ROW(fmt, op, rm, a, b, c, z, fl, before, sat)              \
    {                                                                         \
        fmt, NULL, OPC_ARITH, op, SF_##rm, {a, b, c}, z, fl, before, sat      \
    }

/* Checks ROW against the library and the oracle. On failure writes a
   description into MSG (N bytes) and returns false. */
bool opc_check_row(const opc_row *row, char *msg, size_t n);

/* Short flag names for tables, in TestFloat's vioux order. */
#define FV SF_FLAG_INVALID
#define FI SF_FLAG_DIVZERO
#define FO SF_FLAG_OVERFLOW
#define FU SF_FLAG_UNDERFLOW
#define FX SF_FLAG_INEXACT

#endif
