/* internal.h -- unpacked values, the rounding core and bit primitives */
#ifndef BF16EMU_SOFTFLOAT_INTERNAL_H
#define BF16EMU_SOFTFLOAT_INTERNAL_H

/* The library defines the typed operations: no inline macros over them
   here (the fast paths are called by their internal names). */
#ifndef SF_NO_INLINE
#define SF_NO_INLINE 1
#endif
#include "softfloat.h"

/* GCC and Clang provide 128-bit integers on every 64-bit target we build
   for; the exact intermediates of all ops fit in one. */
typedef unsigned __int128 s_u128;

#ifdef SF_ENABLE_ASSERT
#include <assert.h>
#define SF_ASSERT_DEBUG(x) assert(x)
#else
#define SF_ASSERT_DEBUG(x) ((void)0)
#endif

#if defined(__GNUC__)
#define SF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SF_LIKELY(x) (x)
#define SF_UNLIKELY(x) (x)
#endif

/* Whether ENV has an event sink. Building with SF_NO_EVENT_HOOK removes the
   hook altogether; only the events micro-benchmark does that, to measure
   what the hook costs when no sink is set. */
#ifdef SF_NO_EVENT_HOOK
#define S_EVENTS_ON(env) 0
#else
#define S_EVENTS_ON(env) SF_UNLIKELY((env)->events != NULL)
#endif

/* The widths of the formats that have fast paths (softfloat/s_fast.h),
   where they must be compile-time constants; format.c builds the
   descriptors from the same macros. */
#define S_BF16_EXP_BITS 8
#define S_BF16_FRAC_BITS 7
#define S_F16_EXP_BITS 5
#define S_F16_FRAC_BITS 10
#define S_F32_EXP_BITS 8
#define S_F32_FRAC_BITS 23

/*----------------------------------------------------------------------------
 * Unpacked operand.
 *--------------------------------------------------------------------------*/
typedef enum { S_ZERO, S_FINITE, S_INF, S_NAN } s_class;

typedef struct
{
    s_class cls;
    bool sign;
    bool snan;     /* S_NAN only */
    bool daz;      /* a subnormal operand was read as zero */
    int32_t exp;   /* S_FINITE: value = sig * 2^exp */
    uint64_t sig;  /* S_FINITE: 0 < sig < 2^(frac_bits+1) */
} s_unpacked;

/* Split A (bits of format F) into its class, sign and significand. A
   subnormal becomes a signed zero (with daz set) when ENV->daz. */
void s_unpack(const sf_format *f, uint64_t a, const sf_env *env,
              s_unpacked *u);

/* Bits of +-0, +-Inf (the NaN in formats without Inf), the largest
   finite value of F. */
static inline uint64_t
s_pack_zero(const sf_format *f, bool sign)
{
    return sign ? f->sign_mask : 0;
}

uint64_t s_pack_inf(const sf_format *f, bool sign);
uint64_t s_pack_max(const sf_format *f, bool sign);

/*----------------------------------------------------------------------------
 * NaNs.
 *--------------------------------------------------------------------------*/
/* The result of an op of format F whose N operands (bits in A, all of
   format F) include a NaN: raises invalid for a signalling NaN and returns
   the NaN chosen by ENV->nan_rule. */
uint64_t s_propagate_nan(const sf_format *f, const uint64_t *a, unsigned n,
                         sf_env *env);
/* A NaN of format FROM carried into format TO (payload from the top,
   quieted, sign kept; or the default NaN). Raises invalid if signalling. */
uint64_t s_convert_nan(const sf_format *to, const sf_format *from, uint64_t a,
                       sf_env *env);
/* An invalid operation: raises invalid and returns the default NaN. */
uint64_t s_invalid(const sf_format *f, sf_env *env);

/*----------------------------------------------------------------------------
 * The rounding core.
 *--------------------------------------------------------------------------*/
/* What the op was, for rounding events. Ignored unless env->events. */
typedef struct
{
    int op;
    unsigned n_in;
    const sf_format *in_fmt[3];
    uint64_t in[3];
    bool daz;
} s_opctx;

/* Result of rounding an exact magnitude to a multiple of 2^q. */
typedef struct
{
    uint64_t kept;     /* rounded magnitude in units of 2^q */
    int dir;           /* +1 increased in magnitude, -1 decreased, 0 exact */
    unsigned lsb, guard, round, sticky;
    bool tie;
} s_rounded;

/* Round the exact magnitude X = sig * 2^(e - 127) (+ a tail below bit 0
   when TAIL), sig with its top bit at bit 127, to a multiple of 2^q with
   mode RM (RND is the random draw for SF_SR, else ignored). Requires
   e - q <= 62 so the kept magnitude fits (e - q = 63 only when nothing
   is discarded). */
void s_round_at(bool sign, int32_t e, s_u128 sig, bool tail, int32_t q,
                sf_round rm, uint64_t rnd, s_rounded *r);

/* THE round-and-pack routine: rounds (-1)^sign * (sig + tail) * 2^exp,
   sig != 0, to format F with mode RM under ENV (tininess, FTZ, saturation,
   flags, SR draws, events).  TAIL means non-zero bits exist below bit 0 of
   sig; it requires sig >= 2^(frac_bits + 3) so they lie below the round
   bit. */
uint64_t s_round_pack(const sf_format *f, bool sign, int32_t exp, s_u128 sig,
                      bool tail, sf_round rm, sf_env *env,
                      const s_opctx *ctx);

/* The random draw for the next SF_SR rounding (advances the counter). */
uint64_t s_sr_draw(sf_env *env);

/* Report an exact result or a special value that needed no rounding (NaN,
   Inf, exact zero) to the event sink; does nothing without a sink. */
void s_event_special(const sf_format *f, uint64_t result, unsigned flags,
                     sf_round rm, sf_env *env, const s_opctx *ctx);

/* *out = (-1)^sign * (R * 2^rexp - (X + tail) * 2^xexp), R < 2^64: the
   signed error of a result R against an exact X of the same sign. */
void s_dyadic_error(bool sign, uint64_t rsig, int32_t rexp, s_u128 xsig,
                    int32_t xexp, bool xtail, sf_dyadic *out);

/* Fill the operation part of an event (op, operands, mode, format) and
   clear the rounding part. */
void s_event_begin(sf_event *ev, const sf_format *f, sf_round rm,
                   const s_opctx *ctx);

/* Copy the rounding bits of R (lsb, guard, round, sticky, tie) into EV;
   the direction is the caller's, which may know more than R. */
static inline void
s_event_rounded(sf_event *ev, const s_rounded *r)
{
    ev->lsb = r->lsb;
    ev->guard = r->guard;
    ev->round = r->round;
    ev->sticky = r->sticky;
    ev->tie = r->tie;
}

/* Convert a 128-bit window into the public sf_dyadic. */
void s_dyadic_set(sf_dyadic *d, bool sign, int32_t exp, s_u128 sig,
                  bool tail);

/*----------------------------------------------------------------------------
 * Shared exact arithmetic.
 *--------------------------------------------------------------------------*/
/* The exact sum of two non-zero signed dyadics (-1)^sx * x * 2^ex and
   (-1)^sy * y * 2^ey with x, y < 2^64, as (-1)^sign * (sig + tail) * 2^exp
   with sig < 2^126 and, when tail is set, sig >= 2^64. Returns false (and
   leaves the outputs unset) if the sum is exactly zero. */
bool s_add_exact(bool sx, s_u128 x, int32_t ex, bool sy, s_u128 y,
                 int32_t ey, bool *sign, int32_t *exp, s_u128 *sig,
                 bool *tail);

/* The fused multiply-add core of sf_fma and of the accumulation models'
   FMA step, s_fma_core, is inlined into both from s_fma.h. */

/* Add or subtract (a - b when SUBTRACT) for sf_add and sf_sub. */
uint64_t s_add_sub(const sf_format *f, uint64_t a, uint64_t b, bool subtract,
                   sf_round rm, sf_env *env);
/* sf_mul and sf_fma without their fast paths (softfloat/s_fast.h). */
uint64_t s_mul(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
               sf_env *env);
uint64_t s_fma(const sf_format *f, uint64_t a, uint64_t b, uint64_t c,
               sf_round rm, sf_env *env);

/* sf_convert with the event context CTX (sf_from_double uses its own). */
uint64_t s_convert(const sf_format *to, const sf_format *from, uint64_t a,
                   sf_round rm, sf_env *env, s_opctx *ctx);

/* Pack an exactly representable finite value sig * 2^exp (sig < 2^63);
   no flags. */
uint64_t s_pack_exact(const sf_format *f, bool sign, int32_t exp,
                      uint64_t sig);

/*----------------------------------------------------------------------------
 * Bit primitives.
 *--------------------------------------------------------------------------*/
/* Number of leading zeros; A != 0. */
static inline int
s_clz64(uint64_t a)
{
    return __builtin_clzll(a);
}

static inline int
s_clz128(s_u128 a)
{
    uint64_t hi = (uint64_t)(a >> 64);
    return hi ? __builtin_clzll(hi) : 64 + __builtin_clzll((uint64_t)a);
}

/* A >> dist with every shifted-out bit OR-ed into bit 0 ("jam"); any
   dist >= 0; dist >= 128 gives (a != 0). */
static inline s_u128
s_shift_right_jam128(s_u128 a, int dist)
{
    if (dist <= 0)
        return a;
    if (dist >= 128)
        return a != 0;
    return (a >> dist) | ((a & (((s_u128)1 << dist) - 1)) != 0);
}

/* Significand of F in place (frac_bits wide) of BITS; exponent field. */
static inline uint64_t
s_frac(const sf_format *f, uint64_t bits)
{
    return (bits & f->frac_mask) >> f->pad_bits;
}

static inline unsigned
s_exp_field(const sf_format *f, uint64_t bits)
{
    return (unsigned)((bits & f->exp_mask) >> (f->frac_bits + f->pad_bits));
}

static inline bool
s_sign(const sf_format *f, uint64_t bits)
{
    return (bits & f->sign_mask) != 0;
}

/* Pack sign, biased exponent field and fraction (frac_bits wide). */
static inline uint64_t
s_pack(const sf_format *f, bool sign, uint64_t exp_field, uint64_t frac)
{
    return (sign ? f->sign_mask : 0)
           | (exp_field << (f->frac_bits + f->pad_bits))
           | (frac << f->pad_bits);
}

/* Round the exact X = (-1)^sign * sig * 2^exp (sig != 0) to an integer
   with mode RM (drawing the SR random number from ENV). Sets *r (kept is
   the magnitude) and returns false if |x| >= 2^64, where nothing is
   rounded and *r is untouched. *rnd gets the SR draw (0 otherwise). */
bool s_round_to_integer(bool sign, int32_t exp, uint64_t sig, sf_round rm,
                        sf_env *env, s_rounded *r, uint64_t *rnd);

/* Report a rounding to an integer quantum (ulp 2^0) to the event sink:
   exact x as above, *r from s_round_to_integer, the result bits (an
   integer's two's complement when F is NULL), the flags raised. */
void s_event_integer(const sf_format *f, bool sign, int32_t exp, uint64_t sig,
                     const s_rounded *r, uint64_t rnd, uint64_t result,
                     unsigned flags, sf_round rm, sf_env *env,
                     const s_opctx *ctx);

#endif /* BF16EMU_SOFTFLOAT_INTERNAL_H */
