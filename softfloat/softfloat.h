/* softfloat.h -- bit-exact emulation of BF16, FP16, FP32, TF32 and FP8 arithmetic */
#ifndef BF16EMU_SOFTFLOAT_H
#define BF16EMU_SOFTFLOAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * Values.  A value is its bit pattern; each format has its own struct so the
 * compiler rejects mixing them.  TF32 is stored like FP32 (sign, 8 exponent
 * bits, 10 fraction bits, then 13 bits that are always zero).
 *--------------------------------------------------------------------------*/
typedef struct { uint16_t bits; } sf_bf16;
typedef struct { uint16_t bits; } sf_f16;
typedef struct { uint32_t bits; } sf_f32;
typedef struct { uint32_t bits; } sf_tf32;
typedef struct { uint8_t bits; } sf_e4m3;
typedef struct { uint8_t bits; } sf_e5m2;

/* The host's binary32 float and binary64 double with bit pattern X, and
   the bit pattern of a host value: the bits are copied (no conversion, no
   rounding, no flag), for passing values between the emulator and native
   code. */
static inline float
sf_host_float(uint32_t x)
{
    float f;

    memcpy(&f, &x, sizeof f);
    return f;
}

static inline uint32_t
sf_host_float_bits(float f)
{
    uint32_t x;

    memcpy(&x, &f, sizeof x);
    return x;
}

static inline double
sf_host_double(uint64_t x)
{
    double d;

    memcpy(&d, &x, sizeof d);
    return d;
}

static inline uint64_t
sf_host_double_bits(double d)
{
    uint64_t x;

    memcpy(&x, &d, sizeof x);
    return x;
}

/*----------------------------------------------------------------------------
 * Format descriptors.  Every mask and limit is derived from exp_bits,
 * frac_bits, pad_bits and the special-value encoding by SF_FORMAT_INIT.
 *--------------------------------------------------------------------------*/
typedef enum
{
    SF_SPECIALS_IEEE, /* exponent all ones: Inf (fraction 0) or NaN */
    SF_SPECIALS_FN    /* OCP E4M3: no Inf; only S.1111.111 is NaN */
} sf_specials;

typedef struct sf_format
{
    const char *name;      /* "bf16", "f16", "f32", "tf32", "e4m3", "e5m2" */
    unsigned exp_bits;     /* width of the exponent field */
    unsigned frac_bits;    /* width of the fraction field (precision - 1) */
    unsigned pad_bits;     /* zero bits below the fraction (TF32: 13) */
    unsigned storage_bits; /* 1 + exp_bits + frac_bits + pad_bits */
    sf_specials specials;
    int bias;              /* 2^(exp_bits-1) - 1 */
    int emin;              /* 1 - bias: exponent of the smallest normal */
    int emax;              /* exponent of the largest finite binade */
    uint64_t sign_mask;
    uint64_t exp_mask;     /* exponent field in place */
    uint64_t frac_mask;    /* fraction field in place */
    uint64_t quiet_mask;   /* most significant fraction bit in place */
    uint64_t max_frac;     /* fraction field of the largest finite value */
} sf_format;

extern const sf_format sf_format_bf16;
extern const sf_format sf_format_f16;
extern const sf_format sf_format_f32;
extern const sf_format sf_format_tf32;
extern const sf_format sf_format_e4m3;
extern const sf_format sf_format_e5m2;
/* The host's binary64, for conversions only (no typed operations). */
extern const sf_format sf_format_f64;

/* The format named NAME ("bf16", "f16", "fp16", "f32", "fp32", "tf32",
   "e4m3", "e5m2"), or NULL. */
const sf_format *sf_format_by_name(const char *name);

/*----------------------------------------------------------------------------
 * Rounding modes (contract).  Always an explicit argument.
 *--------------------------------------------------------------------------*/
typedef enum
{
    SF_RNE, /* roundTiesToEven */
    SF_RTZ, /* roundTowardZero */
    SF_RDN, /* roundTowardNegative */
    SF_RUP, /* roundTowardPositive */
    SF_RNA, /* roundTiesToAway */
    SF_ROD, /* round to odd (not IEEE): truncate, then set the last bit if
               anything was discarded */
    SF_SR   /* stochastic: round away from zero with probability equal to the
               discarded fraction of an ulp (see doc/semantics.md) */
} sf_round;
#define SF_N_ROUND 7

/* "rne", "rtz", ... ; sf_round_by_name returns -1 for an unknown name. */
const char *sf_round_name(sf_round rm);
int sf_round_by_name(const char *name);

/*----------------------------------------------------------------------------
 * Exception flags (SoftFloat's bit values) and the environment.
 *--------------------------------------------------------------------------*/
enum
{
    SF_FLAG_INEXACT = 1,
    SF_FLAG_UNDERFLOW = 2,
    SF_FLAG_OVERFLOW = 4,
    SF_FLAG_DIVZERO = 8,
    SF_FLAG_INVALID = 16
};

/* Which NaN an operation with NaN operands returns. */
typedef enum
{
    SF_NAN_FIRST,      /* the first NaN operand, quieted (x86 SSE order) */
    SF_NAN_SNAN_FIRST, /* the first signalling NaN, else the first quiet
                          NaN, quieted (Arm with FPCR.DN = 0) */
    SF_NAN_DEFAULT     /* always the default NaN (RISC-V, Arm DN = 1) */
} sf_nan_rule;

/* The default NaN pattern: sign and quiet bit, or every fraction bit set. */
typedef enum
{
    SF_DNAN_POSITIVE,  /* 0x7FC0 / 0x7FC00000: Arm, RISC-V */
    SF_DNAN_NEGATIVE,  /* 0xFFC0 / 0xFFC00000: x86 "indefinite" */
    SF_DNAN_ALL_ONES   /* 0x7FFF / 0x7FFFFFFF: NVIDIA canonical NaN */
} sf_default_nan;

typedef enum
{
    SF_OP_ADD = 1, SF_OP_SUB, SF_OP_MUL, SF_OP_DIV, SF_OP_SQRT, SF_OP_FMA,
    SF_OP_CONVERT,     /* between formats */
    SF_OP_ROUND_INT,   /* round to integral value, same format */
    SF_OP_TO_INT,      /* to int32/int64 */
    SF_OP_FROM_INT,    /* from int32/int64 */
    SF_OP_FROM_DOUBLE, /* from a host double */
    SF_OP_FROM_STRING, /* decimal or hex-float text */
    SF_OP_ACCUM = 32   /* first code for accumulation models */
} sf_op;

/* A signed dyadic number (-1)^sign * sig * 2^exp, with sig = hi*2^64 + lo.
   When tail is set, the true value has further non-zero bits below the
   window, of the same sign as the window itself: |true| > sig * 2^exp and
   |true| < (sig + 1) * 2^exp. */
typedef struct
{
    bool sign;
    bool tail;
    int32_t exp;
    uint64_t hi, lo;
} sf_dyadic;

/* One rounding.  Filled when the environment has an event sink. */
typedef struct sf_event
{
    int op;                       /* sf_op */
    sf_round mode;
    const sf_format *fmt;         /* result format; NULL for integers */
    unsigned n_in;                /* number of operands */
    const sf_format *in_fmt[3];   /* NULL for integer, double, text */
    uint64_t in[3];               /* operand bits */
    sf_dyadic exact;              /* the exact result, before rounding */
    int32_t ulp_exp;              /* the ulp of the result is 2^ulp_exp */
    unsigned lsb;                 /* last kept bit before rounding */
    unsigned guard, round, sticky;
    bool tie;                     /* exactly half an ulp was discarded */
    int dir;                      /* +1 up in magnitude, -1 down, 0 exact */
    uint64_t result;              /* result bits */
    sf_dyadic error;              /* result - exact */
    bool error_infinite;          /* the result is an infinity or a NaN */
    unsigned flags;               /* flags this rounding raised */
    bool tiny;                    /* tininess detected (per the env rule) */
    bool subnormal;               /* the result is subnormal */
    bool ftz;                     /* the result was flushed to zero */
    bool daz;                     /* an operand was treated as zero */
    bool overflow;                /* the exponent range was exceeded */
    uint64_t sr_random;           /* the random draw (SF_SR only) */
} sf_event;

typedef void (*sf_event_fn)(void *user, const sf_event *ev);

typedef struct sf_event_sink
{
    sf_event_fn fn;
    void *user;
} sf_event_sink;

typedef struct sf_env
{
    unsigned flags;              /* sticky SF_FLAG_* bits */
    bool tininess_after;         /* detect tininess after rounding (x86);
                                    false: before rounding (Arm) */
    bool ftz;                    /* flush tiny results to zero */
    bool daz;                    /* treat subnormal operands as zero */
    bool saturate;               /* overflow gives the largest finite value
                                    in every mode (NVIDIA .satfinite, OCP
                                    saturating FP8 conversion) */
    sf_nan_rule nan_rule;
    sf_default_nan default_nan;
    uint64_t sr_seed;            /* stochastic rounding: the i-th SR rounding
                                    draws sf_sr_random(sr_seed, i) */
    uint64_t sr_counter;         /* number of SR draws made so far */
    const sf_event_sink *events; /* NULL: no events (one branch per op) */
    int isa;                     /* sf_isa: which vector path the array and
                                    matrix calls may take; 0 (SF_ISA_AUTO):
                                    the best the CPU has.  Never changes
                                    bits or flags, only speed. */
} sf_env;

/* Strict IEEE 754-2019 defaults, tininess after rounding (as x86). */
#define SF_ENV_IEEE                                                         \
    {0, true, false, false, false, SF_NAN_FIRST, SF_DNAN_POSITIVE, 0, 0,   \
     NULL, 0}
/* x86 SSE/AVX scalar with MXCSR defaults. */
#define SF_ENV_X86                                                          \
    {0, true, false, false, false, SF_NAN_FIRST, SF_DNAN_NEGATIVE, 0, 0,   \
     NULL, 0}
/* x86 AVX512-BF16 (VCVTNEPS2BF16, VDPBF16PS): DAZ and FTZ, RNE, MXCSR
   neither read nor written (ignore the flags). */
#define SF_ENV_AVX512BF16                                                   \
    {0, true, true, true, false, SF_NAN_FIRST, SF_DNAN_NEGATIVE, 0, 0,     \
     NULL, 0}
/* NVIDIA cvt.rn without .ftz: subnormals kept, canonical NaN. */
#define SF_ENV_NVIDIA                                                       \
    {0, true, false, false, false, SF_NAN_DEFAULT, SF_DNAN_ALL_ONES, 0, 0,  \
     NULL, 0}
/* Arm BFDOT/BFMMLA with FEAT_EBF16 off: FTZ and DAZ, default NaN, no
   flags; the products and sums use SF_ROD. */
#define SF_ENV_ARM_BFDOT                                                    \
    {0, false, true, true, false, SF_NAN_DEFAULT, SF_DNAN_POSITIVE, 0, 0,   \
     NULL, 0}

/*----------------------------------------------------------------------------
 * Instruction-set paths.  The array and matrix calls (sf_convert_array,
 * sf_mma_gemm, the attention engine's loops) have a portable path and
 * vector paths; every path gives the same bits and flags.  env->isa caps
 * the path a call may take, so a test or a user can force a slower one.
 *--------------------------------------------------------------------------*/
typedef enum
{
    SF_ISA_AUTO = 0, /* the best path the CPU runs */
    SF_ISA_SCALAR,   /* portable C only */
    SF_ISA_AVX2,     /* x86-64 AVX2 with FMA and F16C */
    SF_ISA_AVX512,   /* x86-64 AVX-512 F, BW, CD, VL, DQ */
    SF_ISA_NEON,     /* AArch64 Advanced SIMD (sf_convert_array between
                        FP32 and BF16, sf_bf16_add_array and
                        sf_bf16_sub_array; the other calls run the
                        portable path) */
    SF_N_ISA
} sf_isa;

/* The best path the running CPU (and its operating system) supports. */
sf_isa sf_isa_cpu(void);
/* Whether the running CPU supports path ISA (SF_ISA_AUTO and
   SF_ISA_SCALAR: always). */
bool sf_isa_supported(sf_isa isa);
/* The path a call with env->isa == WANT takes: SF_ISA_AUTO gives
   sf_isa_cpu(); a request the CPU lacks gives the best path below it of
   the CPU's own family (x86-64 or AArch64), else SF_ISA_SCALAR. */
sf_isa sf_isa_resolve(int want);
/* "auto", "scalar", "avx2", "avx512", "neon"; "?" for other values. */
const char *sf_isa_name(sf_isa isa);
/* The path named NAME (case-insensitive), or -1. */
int sf_isa_by_name(const char *name);

/* Flags as TestFloat prints them: "vioux" order, '.' for clear. BUF gets 6
   bytes. Returns BUF. */
char *sf_flags_str(unsigned flags, char buf[6]);

/* The counter-based generator behind SF_SR: a bijective 64-bit mix of
   seed + (counter + 1) * golden ratio (SplitMix64 finaliser). */
uint64_t sf_sr_random(uint64_t seed, uint64_t counter);

/*----------------------------------------------------------------------------
 * Generic operations on any format: operands and results are bit patterns
 * in the low storage_bits of a uint64_t.  Every rounding operation computes
 * the exact result and rounds it once.
 *--------------------------------------------------------------------------*/
uint64_t sf_add(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
                sf_env *env);
uint64_t sf_sub(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
                sf_env *env);
uint64_t sf_mul(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
                sf_env *env);
uint64_t sf_div(const sf_format *f, uint64_t a, uint64_t b, sf_round rm,
                sf_env *env);
uint64_t sf_sqrt(const sf_format *f, uint64_t a, sf_round rm, sf_env *env);
/* a*b + c with one rounding; 0*Inf + c raises invalid even if c is a
   quiet NaN (as Intel documents its FMA; AMD Zen 4 does not raise it). */
uint64_t sf_fma(const sf_format *f, uint64_t a, uint64_t b, uint64_t c,
                sf_round rm, sf_env *env);
/* Sign-bit operations: never raise flags, never change NaN payloads. */
uint64_t sf_neg(const sf_format *f, uint64_t a);
uint64_t sf_abs(const sf_format *f, uint64_t a);
/* IEEE 754-2019 minimum/maximum (NaN wins, -0 < +0) and
   minimumNumber/maximumNumber (numbers win over NaN). Signalling NaN
   operands raise invalid. */
uint64_t sf_minimum(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
uint64_t sf_maximum(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
uint64_t sf_minimum_number(const sf_format *f, uint64_t a, uint64_t b,
                           sf_env *env);
uint64_t sf_maximum_number(const sf_format *f, uint64_t a, uint64_t b,
                           sf_env *env);

/* Comparison. A quiet comparison raises invalid only for signalling NaNs;
   a signalling comparison raises invalid for any NaN. */
typedef enum { SF_CMP_LT = -1, SF_CMP_EQ = 0, SF_CMP_GT = 1,
               SF_CMP_UN = 2 } sf_cmp;
sf_cmp sf_compare(const sf_format *f, uint64_t a, uint64_t b, bool signaling,
                  sf_env *env);
bool sf_eq(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
bool sf_lt(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
bool sf_le(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
bool sf_eq_signaling(const sf_format *f, uint64_t a, uint64_t b,
                     sf_env *env);
bool sf_lt_quiet(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
bool sf_le_quiet(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);
bool sf_unordered(const sf_format *f, uint64_t a, uint64_t b, sf_env *env);

/* Round to an integral value in the same format (roundToIntegral); with
   EXACT set, an inexact result raises inexact (roundToIntegralExact). */
uint64_t sf_round_to_int(const sf_format *f, uint64_t a, sf_round rm,
                         bool exact, sf_env *env);

/* Conversion between formats (exact or one rounding). NaN: quiet bit set,
   payload truncated or zero-extended from the top, sign kept (unless the
   rule is SF_NAN_DEFAULT). */
uint64_t sf_convert(const sf_format *to, const sf_format *from, uint64_t a,
                    sf_round rm, sf_env *env);
/* OUT[i] = sf_convert(TO, FROM, IN[i], RM, ENV) for 0 <= i < N, in
   ascending i: the same bits, flags, SR draws and events.  IN and OUT hold
   elements of storage_bits / 8 bytes (uint8_t, uint16_t or uint32_t) and
   must not overlap.  FP32 to BF16, FP16, E4M3 and E5M2 and BF16 and FP16
   to FP32, without an event sink and in a mode other than SF_SR, run on
   the vector path env->isa allows (8 elements a step on AVX2, 16 on
   AVX-512) or a portable loop that handles the values of the fast subset
   (normal in and out) and +-0 by their fields, each other element alone
   through sf_convert.  On AVX2 and AVX-512, FP32 to BF16 handles every
   value (subnormals, Inf, NaN, overflow, under every env setting) in the
   vector lanes, and FP32 to FP16, E4M3 and E5M2 every value but the
   normal ones whose result is tiny.  Every other pair, and every pair
   with a sink or in SF_SR, goes element by element through sf_convert. */
void sf_convert_array(const sf_format *to, const sf_format *from,
                      const void *in, void *out, size_t n, sf_round rm,
                      sf_env *env);

/* To integers: NaN or out of range raises invalid and returns the x86
   "integer indefinite" (INT32_MIN / INT64_MIN); inexact when rounded. */
int32_t sf_to_i32(const sf_format *f, uint64_t a, sf_round rm, sf_env *env);
int64_t sf_to_i64(const sf_format *f, uint64_t a, sf_round rm, sf_env *env);
uint64_t sf_from_i32(const sf_format *f, int32_t v, sf_round rm, sf_env *env);
uint64_t sf_from_i64(const sf_format *f, int64_t v, sf_round rm, sf_env *env);

/* To and from the host's binary64 (the one boundary with native floating
   point).  sf_to_double is exact (every value of every format is a
   double); NaN payloads are moved to the top of the double's fraction. */
uint64_t sf_from_double(const sf_format *f, double x, sf_round rm,
                        sf_env *env);
double sf_to_double(const sf_format *f, uint64_t a);

/* Text.  sf_from_string parses (optional sign) a decimal number with an
   optional exponent, a C99 hex-float (0x1.8p-3), "inf", "infinity", "nan",
   "snan", "nan(0x...)", case-insensitive, and rounds it correctly (one
   rounding of the exact value). *END gets the first byte not parsed (END
   may be NULL); on a syntax error *END = S and the result is +0. */
uint64_t sf_from_string(const sf_format *f, const char *s, const char **end,
                        sf_round rm, sf_env *env);

typedef enum
{
    SF_PRINT_EXACT,    /* every digit of the exact decimal value */
    SF_PRINT_SHORTEST, /* fewest significant digits that parse back (RNE) */
    SF_PRINT_HEX       /* C99 hex-float, normalised: -0x1.34p+1 */
} sf_print_style;
/* Writes the value of A as text into BUF (always NUL-terminated when
   n > 0); returns the length the full text needs, like snprintf. */
size_t sf_to_string(const sf_format *f, uint64_t a, sf_print_style style,
                    char *buf, size_t n);
/* The exact value of a dyadic number as a decimal string (same return
   convention).  With a tail, the value lies strictly inside the window
   (W 2^exp, (W + 1) 2^exp): only the leading digits that every such value
   shares are written (each a digit of the true value, truncated), then
   "...". */
size_t sf_dyadic_to_string(const sf_dyadic *d, char *buf, size_t n);

/* Classification (no flags). */
bool sf_is_nan(const sf_format *f, uint64_t a);
bool sf_is_snan(const sf_format *f, uint64_t a);
bool sf_is_inf(const sf_format *f, uint64_t a);
bool sf_is_zero(const sf_format *f, uint64_t a);
bool sf_is_subnormal(const sf_format *f, uint64_t a);
bool sf_is_finite(const sf_format *f, uint64_t a);
bool sf_sign(const sf_format *f, uint64_t a);
/* The default NaN of F under ENV's pattern. */
uint64_t sf_default_nan_bits(const sf_format *f, const sf_env *env);

/* Events: error in ulps of the result (2^ulp_exp), as the nearest double;
   +-Inf when error_infinite. The dyadic as the nearest double. */
double sf_event_error_ulps(const sf_event *ev);
double sf_dyadic_to_double(const sf_dyadic *d);

/*----------------------------------------------------------------------------
 * Typed wrappers: sf_<fmt>_<op>.  Same semantics as the generic forms.
 *--------------------------------------------------------------------------*/
#define SF_DECLARE_TYPED_OPS(fmt, T)                                        \
    T sf_##fmt##_add(T a, T b, sf_round rm, sf_env *env);                   \
    T sf_##fmt##_sub(T a, T b, sf_round rm, sf_env *env);                   \
    T sf_##fmt##_mul(T a, T b, sf_round rm, sf_env *env);                   \
    T sf_##fmt##_div(T a, T b, sf_round rm, sf_env *env);                   \
    T sf_##fmt##_sqrt(T a, sf_round rm, sf_env *env);                       \
    T sf_##fmt##_fma(T a, T b, T c, sf_round rm, sf_env *env);              \
    T sf_##fmt##_neg(T a);                                                  \
    T sf_##fmt##_abs(T a);                                                  \
    T sf_##fmt##_minimum(T a, T b, sf_env *env);                            \
    T sf_##fmt##_maximum(T a, T b, sf_env *env);                            \
    T sf_##fmt##_minimum_number(T a, T b, sf_env *env);                     \
    T sf_##fmt##_maximum_number(T a, T b, sf_env *env);                     \
    bool sf_##fmt##_eq(T a, T b, sf_env *env);                              \
    bool sf_##fmt##_lt(T a, T b, sf_env *env);                              \
    bool sf_##fmt##_le(T a, T b, sf_env *env);                              \
    bool sf_##fmt##_eq_signaling(T a, T b, sf_env *env);                    \
    bool sf_##fmt##_lt_quiet(T a, T b, sf_env *env);                        \
    bool sf_##fmt##_le_quiet(T a, T b, sf_env *env);                        \
    bool sf_##fmt##_unordered(T a, T b, sf_env *env);                       \
    T sf_##fmt##_round_to_int(T a, sf_round rm, bool exact, sf_env *env);   \
    int32_t sf_##fmt##_to_i32(T a, sf_round rm, sf_env *env);               \
    int64_t sf_##fmt##_to_i64(T a, sf_round rm, sf_env *env);               \
    T sf_##fmt##_from_i32(int32_t v, sf_round rm, sf_env *env);             \
    T sf_##fmt##_from_i64(int64_t v, sf_round rm, sf_env *env);             \
    T sf_##fmt##_from_double(double x, sf_round rm, sf_env *env);           \
    double sf_##fmt##_to_double(T a);

SF_DECLARE_TYPED_OPS(bf16, sf_bf16)
SF_DECLARE_TYPED_OPS(f16, sf_f16)
SF_DECLARE_TYPED_OPS(f32, sf_f32)
SF_DECLARE_TYPED_OPS(tf32, sf_tf32)
SF_DECLARE_TYPED_OPS(e4m3, sf_e4m3)
SF_DECLARE_TYPED_OPS(e5m2, sf_e5m2)

/*----------------------------------------------------------------------------
 * Array arithmetic: sf_<fmt>_<op>_array for add, sub, mul and fma of BF16,
 * FP16 and FP32.  OUT[i] = sf_<fmt>_<op>(A[i], B[i] (, C[i]), RM, ENV) for
 * 0 <= i < N, as if in ascending i: the same bits, the same flags (OR-ed
 * into env->flags), the same SR draws in the same order and, when env has
 * an event sink, the same events in the same order.  OUT may be one of
 * the inputs (in place); no other overlap is allowed.  Without a sink and
 * in a mode other than SF_SR the elements whose operands are normal and
 * whose result is normal and nonzero go through the vector path env->isa
 * allows (8 a step on AVX2, 16 on AVX-512) or a portable loop of the
 * scalar fast subset; the rest (and every element with a sink or in
 * SF_SR) through the scalar operation.
 *--------------------------------------------------------------------------*/
#define SF_DECLARE_ARRAY_OPS(fmt, T)                                        \
    void sf_##fmt##_add_array(const T *a, const T *b, T *out, size_t n,     \
                              sf_round rm, sf_env *env);                    \
    void sf_##fmt##_sub_array(const T *a, const T *b, T *out, size_t n,     \
                              sf_round rm, sf_env *env);                    \
    void sf_##fmt##_mul_array(const T *a, const T *b, T *out, size_t n,     \
                              sf_round rm, sf_env *env);                    \
    void sf_##fmt##_fma_array(const T *a, const T *b, const T *c, T *out,   \
                              size_t n, sf_round rm, sf_env *env);

SF_DECLARE_ARRAY_OPS(bf16, sf_bf16)
SF_DECLARE_ARRAY_OPS(f16, sf_f16)
SF_DECLARE_ARRAY_OPS(f32, sf_f32)

/* Conversions between every pair of formats: sf_<from>_to_<to>. */
#define SF_DECLARE_CONVERSIONS_FROM(from, TF)                               \
    sf_bf16 sf_##from##_to_bf16(TF a, sf_round rm, sf_env *env);            \
    sf_f16 sf_##from##_to_f16(TF a, sf_round rm, sf_env *env);              \
    sf_f32 sf_##from##_to_f32(TF a, sf_round rm, sf_env *env);              \
    sf_tf32 sf_##from##_to_tf32(TF a, sf_round rm, sf_env *env);            \
    sf_e4m3 sf_##from##_to_e4m3(TF a, sf_round rm, sf_env *env);            \
    sf_e5m2 sf_##from##_to_e5m2(TF a, sf_round rm, sf_env *env);

SF_DECLARE_CONVERSIONS_FROM(bf16, sf_bf16)
SF_DECLARE_CONVERSIONS_FROM(f16, sf_f16)
SF_DECLARE_CONVERSIONS_FROM(f32, sf_f32)
SF_DECLARE_CONVERSIONS_FROM(tf32, sf_tf32)
SF_DECLARE_CONVERSIONS_FROM(e4m3, sf_e4m3)
SF_DECLARE_CONVERSIONS_FROM(e5m2, sf_e5m2)

/* The inline fast paths of the typed BF16, FP16 and FP32 add, sub, mul
   and fma (macros over the functions above; SF_NO_INLINE turns them
   off). */
#include "softfloat_inline.h"

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_SOFTFLOAT_H */
