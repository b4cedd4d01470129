/* trace_engine.h -- the arithmetic behind bf16emu trace: exact binary
   numbers as bit arrays, the fields of an operand, the alignment of an
   addition and the product of two significands computed from the operand
   bits, the bits at the ulp of a rounding, and the checks of all of them
   against the library's rounding event; exact decimals of the quantities
   of a rounding and of the sums of an accumulation */
#ifndef BF16EMU_ANALYSIS_TRACE_ENGINE_H
#define BF16EMU_ANALYSIS_TRACE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gmp.h>

#include "softfloat/softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * Exact binary numbers as bit arrays: (-1)^sign * sum bit[i] * 2^(lsb + i).
 * Wide enough for any value of the formats, their products and sums (an
 * FP32 sum spans at most ~280 bits; f64 conversions ~2100).  Weights are
 * int64_t; XN_NONE stands for "no such bit" (the top or lowest 1 bit of
 * zero).
 *--------------------------------------------------------------------------*/
#define XN_BITS 4608
#define XN_NONE INT64_MIN

typedef struct
{
    bool sign;
    int64_t lsb;
    int64_t n; /* bits used, 0 <= n <= XN_BITS */
    unsigned char bit[XN_BITS];
} xnum;

/* x = +0. */
void xn_zero(xnum *x);

/* x = (-1)^sign * sig * 2^lsb. */
void xn_set(xnum *x, bool sign, uint64_t sig, int64_t lsb);

/* The bit of weight 2^w (0 outside the array, and for XN_NONE). */
unsigned xn_bit(const xnum *x, int64_t w);

/* Weight of the highest / lowest 1 bit; XN_NONE when x = 0. */
int64_t xn_top(const xnum *x);
int64_t xn_low(const xnum *x);

bool xn_is_zero(const xnum *x);

/* Compare |a| and |b|: -1, 0, +1. */
int xn_cmp_mag(const xnum *a, const xnum *b);

/* z = a + b exactly (z must not alias a or b); false if too wide.  An
   exact zero difference is +0. */
bool xn_add(xnum *z, const xnum *a, const xnum *b);

/* z = a * b exactly (no aliasing); false if too wide.  z keeps
   a->n + b->n + 1 bits from weight a->lsb + b->lsb. */
bool xn_mul(xnum *z, const xnum *a, const xnum *b);

/* x = the 128-bit window of D (its tail is not represented). */
void xn_from_dyadic(xnum *x, const sf_dyadic *d);

/* The top 128 bits of x as a dyadic; tail set when lower bits are
   non-zero (then |x| is slightly larger than the window). */
void xn_to_dyadic(const xnum *x, sf_dyadic *d);

/* Q = x exactly. */
void xn_to_mpq(const xnum *x, mpq_t q);

/* Weight of the lowest 1 bit of a dyadic's window (XN_NONE if none).
   The library normalises an event's window to 128 bits, so when its tail
   is set the zero bits below this one are padding, not known digits: the
   true value lies strictly between W 2^exp and W 2^exp + 2^low. */
int64_t te_dyadic_low(const sf_dyadic *d);

/* Whether x is the exact value the event reports in D: x agrees with the
   window down to the window's lowest 1 bit, and has further bits below it
   exactly when D's tail is set. */
bool xn_matches(const xnum *x, const sf_dyadic *d);

/* Whether v lies where the dyadic D says: equal to it when its tail is
   clear, else of its sign and strictly between W 2^exp and (W + 1) 2^exp
   (the sf_dyadic contract).  False also when memory runs out. */
bool xn_within(const xnum *v, const sf_dyadic *d);

/* Q = Q * 2^e. */
void te_mpq_scale2(mpq_t q, int64_t e);

/*----------------------------------------------------------------------------
 * Operands: the fields of a bit pattern.
 *--------------------------------------------------------------------------*/
typedef enum
{
    TE_ZERO,
    TE_FINITE,
    TE_INF,
    TE_NAN
} te_kind;

typedef struct
{
    const sf_format *f;
    uint64_t bits;
    te_kind k;
    bool sign;
    bool daz;       /* a subnormal read as zero */
    bool subnormal; /* the encoding is subnormal */
    int64_t e;      /* exponent of the leading (hidden) position */
    uint64_t sig;   /* significand with the hidden bit */
} te_opnd;

/* The biased exponent field and the fraction field of BITS in F. */
unsigned te_exp_field(const sf_format *f, uint64_t bits);
uint64_t te_frac_field(const sf_format *f, uint64_t bits);

/* The fields of BITS in F; DAZ: a subnormal is read as zero (o->daz). */
void te_decode(const sf_format *f, uint64_t bits, bool daz, te_opnd *o);

/* The exact value of an operand: 0 (with the operand's sign when it is a
   zero) unless finite. */
void te_opnd_value(const te_opnd *o, xnum *x);

/* Q = the value of a finite or zero operand (0 for the others). */
void te_opnd_to_mpq(const te_opnd *o, mpq_t q);

/* Exact decimal text (xdec_rational) of (value of BITS in F) - X, from
   malloc (NULL when memory runs out). */
char *te_error_str(const sf_format *f, uint64_t bits, const mpq_t x);

/*----------------------------------------------------------------------------
 * Collecting rounding events: a sink (sf_event_sink.fn, user a
 * te_capture) that keeps the last event and counts them.
 *--------------------------------------------------------------------------*/
typedef struct
{
    sf_event ev;
    int count;
} te_capture;

void te_capture_event(void *user, const sf_event *ev);

/*----------------------------------------------------------------------------
 * One rounding: the event, and the exact value computed from the operand
 * bits.
 *--------------------------------------------------------------------------*/
typedef enum
{
    TE_EX_BITS, /* the exact value is the bits in exact */
    TE_EX_DIV,  /* ex_a / ex_b */
    TE_EX_SQRT  /* sqrt(ex_a) */
} te_exact_kind;

typedef struct
{
    const char *title; /* "f32 addition", for messages */
    const sf_format *f;
    sf_round mode;
    sf_event ev;
    xnum exact;        /* exact value (the event's window when tail) */
    bool tail;
    te_exact_kind ex_kind; /* where the exact value's decimal comes from */
    te_opnd ex_a, ex_b;
    bool special;      /* no rounding happened: NaN, Inf, exact zero */
    const char *special_why;
    const char *context; /* first sentence of an explanation, or NULL */
} te_rounding;

/* Fills R from the event EV of a rounding to F with MODE; X is the exact
   value computed from the operand bits (NULL to take the event's window:
   division and square root).  An event with an exact value of zero makes
   R special (special_why says why).  Checks X against the event's exact
   value and the event's error against result - X: returns true, or false
   with a message in WHY (N bytes; also "out of memory"), R filled in
   either case. */
bool te_rounding_setup(te_rounding *r, const char *title, const sf_format *f,
                       sf_round mode, const sf_event *ev, const xnum *x,
                       char *why, size_t n);

/* The quantities of a rounding written as exact decimals. */
typedef enum
{
    TE_V_EXACT,     /* the exact value v */
    TE_V_ERROR,     /* result - v */
    TE_V_ERROR_ULP, /* (result - v) / ulp */
    TE_V_DISCARDED  /* the discarded part of |v|, in ulps */
} te_quantity;

/* The exact decimal of quantity K of rounding R (xdec_sqrt_affine: a
   quotient or root that does not end is cut to XDEC_DIGITS digits), from
   malloc (NULL when memory runs out).  v = A + B sqrt(C), computed from
   the operand bits. */
char *te_rounding_str(const te_rounding *r, te_quantity k);

/* The bits of the exact value at the event's ulp 2^u. */
typedef struct
{
    unsigned lsb, g, r, s; /* last kept bit (weight u), guard (u - 1),
                              round (u - 2), sticky (any lower bit, or
                              the tail) */
    uint64_t sr_f; /* stochastic rounding: the 64 discarded bits below u,
                      the lower ones jammed into the last */
} te_ulp_bits;

/* The bits of R's exact value at its event's ulp.  Unless R is special,
   checks them against the event's: true, or false with a message in WHY
   (N bytes). */
bool te_ulp_bits_get(const te_rounding *r, te_ulp_bits *u, char *why,
                     size_t n);

/* The direction (+1 up in magnitude, -1 down) the documented rule of R's
   mode gives for these bits, or 0 when no rule applies (nothing
   discarded, an overflow without discarded bits, FTZ, a special rounding,
   a mode without a rule). */
int te_expected_dir(const te_rounding *r, const te_ulp_bits *u);

/*----------------------------------------------------------------------------
 * Alignment of an addition a + b (b already negated for a subtraction),
 * computed from the operand bits.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *name; /* "a", "acc", "a*b" */
    xnum x;           /* exact signed value */
    int64_t lead;     /* weight of the leading significand position */
    int64_t last;     /* weight of the last significand position */
    bool zero;
} te_addend;

typedef struct
{
    bool any_zero;     /* an operand is zero: only sum is set */
    int64_t exp_big, exp_small, diff;
    bool swapped;      /* b has the larger exponent or magnitude */
    bool subtract;     /* signs differ */
    int64_t point;     /* weight of the larger leading position */
    int64_t hi, lo;    /* the columns of the aligned rows */
    int64_t big_last, small_last; /* weights of the operands' last bits */
    int64_t n_shifted; /* bits of the smaller operand below the larger's */
    bool shifted_nonzero;
    unsigned carry;    /* carry-out of the significand */
    int64_t norm;      /* normalisation: +1 right, -k left by k, 0 */
    int64_t exp_result;
    xnum mag_big, mag_small, mag_sum; /* the magnitudes aligned */
    xnum sum;          /* exact signed sum */
} te_alignment;

/* The addend of operand O (NAME not copied). */
void te_addend_from_opnd(te_addend *a, const char *name, const te_opnd *o);

/* Computes the alignment of A + B into AL.  Returns true, or false with a
   message in WHY (N bytes) when the exact sum is too wide to hold. */
bool te_align(const te_addend *a, const te_addend *b, te_alignment *al,
              char *why, size_t n);

/* The product of two operands of one format as an addend P named "a*b":
   its value, leading and last weights.  SA and SB get the significands
   (hidden bit included) at weight 0, *TOP the weight of the top 1 bit of
   their product SA * SB (XN_NONE when a factor is not finite: then P is a
   signed zero).  The product's own bits are P->x's, whose lsb is P->last.
   False when the product is too wide to hold. */
bool te_product(const te_opnd *oa, const te_opnd *ob, te_addend *p,
                xnum *sa, xnum *sb, int64_t *top);

/* Division and square root: the exact value is the event's window; checks
   it with exact multiplication: v0 b <= |a| < v1 b (v0^2 <= |a| < v1^2 for
   the root), with equality exactly when the tail is clear.  Returns 0 when
   it holds, 1 when not, -1 when memory runs out. */
int te_check_quotient(const sf_event *ev, const te_opnd *oa,
                      const te_opnd *ob, bool is_sqrt);

/*----------------------------------------------------------------------------
 * The sums of an accumulation.
 *--------------------------------------------------------------------------*/
/* An operand as typed: TEXT, a decimal or hex-float read by xdec_parse,
   unless PREFIXED (a bit pattern BITS of FMT). */
typedef struct
{
    const char *text;
    bool prefixed;
    const sf_format *fmt;
    uint64_t bits;
} te_typed;

/* The value of an operand as typed: the exact value of a decimal's or
   hex-float's text, or of a bit pattern in its own format, before any
   rounding.  False for a NaN or an infinity (or text xdec_parse
   refuses). */
bool te_typed_value(const te_typed *x, mpq_t q);

/* The exact sums of N operands: READ, of READ_BITS (each operand as read
   into the working format ACC: the values the accumulation adds), and
   TYPED_SUM, of their values as typed (TYPED).  *ALL_EXACT: every operand
   as read equals its value as typed.  False when an operand is a NaN or
   infinite, as typed or as read (READ and TYPED_SUM then mean
   nothing). */
bool te_operand_sums(const sf_format *acc, int n, const uint64_t *read_bits,
                     const te_typed *typed, mpq_t read, mpq_t typed_sum,
                     bool *all_exact);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_ANALYSIS_TRACE_ENGINE_H */
