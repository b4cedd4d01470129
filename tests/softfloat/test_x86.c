/* test_x86.c -- FP32 add, sub, mul, div, sqrt and fma against the x86
   SSE/FMA hardware in the four IEEE directed modes, bits and flags */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <fenv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define X86_HW 1
#include <cpuid.h>
#else
#define X86_HW 0
#endif

/*----------------------------------------------------------------------------
 * Operations and rounding modes under test.
 *--------------------------------------------------------------------------*/
enum
{
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_SQRT,
    OP_FMA,
    N_OPS
};

static const char *const op_names[N_OPS] = {"add", "sub",  "mul",
                                            "div", "sqrt", "fma"};
static const unsigned op_arity[N_OPS] = {2, 2, 2, 2, 1, 3};

static const sf_round modes[4] = {SF_RNE, SF_RTZ, SF_RDN, SF_RUP};

/* Random cases per op and mode at multiplier 1. */
#define N_RANDOM 1000000ul
/* The same with MXCSR.FTZ and DAZ set (a narrower check). */
#define N_RANDOM_FTZ 200000ul

#if X86_HW

/*----------------------------------------------------------------------------
 * The hardware.  Each op is one asm volatile statement that loads MXCSR
 * (rounding control, FTZ, DAZ, all exceptions masked, flags clear), runs
 * the scalar instruction, stores MXCSR and restores the caller's value, so
 * the compiler can neither fold, contract, reorder operands nor move the
 * op away from its rounding mode and flag read.
 *--------------------------------------------------------------------------*/
#define MXCSR_MASKS 0x1F80u /* every exception masked */
#define MXCSR_DAZ 0x0040u
#define MXCSR_FTZ 0x8000u
#define MXCSR_IE 0x01u
#define MXCSR_ZE 0x04u
#define MXCSR_OE 0x08u
#define MXCSR_UE 0x10u
#define MXCSR_PE 0x20u /* 0x02 (denormal operand) is not an IEEE flag */

static uint32_t
mxcsr_rc(sf_round rm)
{
    switch (rm) {
    case SF_RDN:
        return 0x2000u;
    case SF_RUP:
        return 0x4000u;
    case SF_RTZ:
        return 0x6000u;
    case SF_RNE:
    default:
        return 0u;
    }
}

static unsigned
flags_from_mxcsr(uint32_t csr)
{
    unsigned f = 0;

    if (csr & MXCSR_IE)
        f |= SF_FLAG_INVALID;
    if (csr & MXCSR_ZE)
        f |= SF_FLAG_DIVZERO;
    if (csr & MXCSR_OE)
        f |= SF_FLAG_OVERFLOW;
    if (csr & MXCSR_UE)
        f |= SF_FLAG_UNDERFLOW;
    if (csr & MXCSR_PE)
        f |= SF_FLAG_INEXACT;
    return f;
}

/* The AT&T operand order is source first: "addss y, x" is x = x + y, so x
   (the first source, a) is the operand whose NaN SSE returns first.  FMA:
   "vfmadd231ss z, y, x" is x = y * z + x; with y = a, z = b, x = c it is
   a * b + c. */
#define HW_BODY(insn)                                                         \
    __asm__ volatile("stmxcsr %[sv]\n\t"                                    \
                     "ldmxcsr %[ci]\n\t" insn "\n\t"                        \
                     "stmxcsr %[co]\n\t"                                    \
                     "ldmxcsr %[sv]"

static uint32_t
hw_mxcsr(int op, uint32_t csr, uint32_t a, uint32_t b, uint32_t c,
         unsigned *flags)
{
    float x = tst_f32_of(a), y = tst_f32_of(b), z = tst_f32_of(c);
    uint32_t saved, after = 0;

    switch (op) {
    case OP_ADD:
        HW_BODY("addss %[y], %[x]")
                : [x] "+x"(x), [sv] "=m"(saved), [co] "=m"(after)
                : [y] "x"(y), [ci] "m"(csr)
                : "memory");
        break;
    case OP_SUB:
        HW_BODY("subss %[y], %[x]")
                : [x] "+x"(x), [sv] "=m"(saved), [co] "=m"(after)
                : [y] "x"(y), [ci] "m"(csr)
                : "memory");
        break;
    case OP_MUL:
        HW_BODY("mulss %[y], %[x]")
                : [x] "+x"(x), [sv] "=m"(saved), [co] "=m"(after)
                : [y] "x"(y), [ci] "m"(csr)
                : "memory");
        break;
    case OP_DIV:
        HW_BODY("divss %[y], %[x]")
                : [x] "+x"(x), [sv] "=m"(saved), [co] "=m"(after)
                : [y] "x"(y), [ci] "m"(csr)
                : "memory");
        break;
    case OP_SQRT:
        HW_BODY("sqrtss %[x], %[x]")
                : [x] "+x"(x), [sv] "=m"(saved), [co] "=m"(after)
                : [ci] "m"(csr)
                : "memory");
        break;
    case OP_FMA:
    default:
        HW_BODY("vfmadd231ss %[y], %[x], %[z]")
                : [z] "+x"(z), [sv] "=m"(saved), [co] "=m"(after)
                : [x] "x"(x), [y] "x"(y), [ci] "m"(csr)
                : "memory");
        x = z;
        break;
    }
    *flags = flags_from_mxcsr(after);
    return tst_f32_bits(x);
}

/* The same instructions under the C99 <fenv.h> interface: fesetround,
   feclearexcept, the op, fetestexcept.  The asm is volatile and clobbers
   memory, so it stays between the library calls (GCC ignores
   FENV_ACCESS). */
static int
fe_mode(sf_round rm)
{
    switch (rm) {
    case SF_RDN:
        return FE_DOWNWARD;
    case SF_RUP:
        return FE_UPWARD;
    case SF_RTZ:
        return FE_TOWARDZERO;
    case SF_RNE:
    default:
        return FE_TONEAREST;
    }
}

static uint32_t
hw_fenv(int op, sf_round rm, uint32_t a, uint32_t b, uint32_t c,
        unsigned *flags)
{
    float x = tst_f32_of(a), y = tst_f32_of(b), z = tst_f32_of(c);
    int raised;

    fesetround(fe_mode(rm));
    feclearexcept(FE_ALL_EXCEPT);
    switch (op) {
    case OP_ADD:
        __asm__ volatile("addss %[y], %[x]"
                         : [x] "+x"(x)
                         : [y] "x"(y)
                         : "memory");
        break;
    case OP_SUB:
        __asm__ volatile("subss %[y], %[x]"
                         : [x] "+x"(x)
                         : [y] "x"(y)
                         : "memory");
        break;
    case OP_MUL:
        __asm__ volatile("mulss %[y], %[x]"
                         : [x] "+x"(x)
                         : [y] "x"(y)
                         : "memory");
        break;
    case OP_DIV:
        __asm__ volatile("divss %[y], %[x]"
                         : [x] "+x"(x)
                         : [y] "x"(y)
                         : "memory");
        break;
    case OP_SQRT:
        __asm__ volatile("sqrtss %[x], %[x]" : [x] "+x"(x) : : "memory");
        break;
    case OP_FMA:
    default:
        __asm__ volatile("vfmadd231ss %[y], %[x], %[z]"
                         : [z] "+x"(z)
                         : [x] "x"(x), [y] "x"(y)
                         : "memory");
        x = z;
        break;
    }
    raised = fetestexcept(FE_ALL_EXCEPT);
    fesetround(FE_TONEAREST);
    feclearexcept(FE_ALL_EXCEPT);
    *flags = ((raised & FE_INVALID) ? SF_FLAG_INVALID : 0u)
             | ((raised & FE_DIVBYZERO) ? SF_FLAG_DIVZERO : 0u)
             | ((raised & FE_OVERFLOW) ? SF_FLAG_OVERFLOW : 0u)
             | ((raised & FE_UNDERFLOW) ? SF_FLAG_UNDERFLOW : 0u)
             | ((raised & FE_INEXACT) ? SF_FLAG_INEXACT : 0u);
    return tst_f32_bits(x);
}

/*----------------------------------------------------------------------------
 * Which FMA cases the hardware can judge.
 *
 * NaN operands: the NaN an x86 FMA returns depends on the encoding and on
 * the vendor.  On AMD (checked on Zen 4 for the 132, 213 and 231 forms) the
 * first NaN among (first multiplicand, second multiplicand, addend) wins,
 * so the 231 form used here returns the first NaN of (a, b, c), which is
 * SF_NAN_FIRST.  Intel documents a priority by operand position (dest,
 * src2, src3), which for the 231 form would put c first.  So NaN operands
 * are compared only on AMD and excluded from the FMA comparison elsewhere.
 *
 * 0 * Inf + qNaN: IEEE 754 leaves the invalid flag to the implementation;
 * the library raises it (as Intel documents), AMD Zen 4 does not.  The
 * result (the quiet NaN c) is compared, the invalid flag is not.
 *--------------------------------------------------------------------------*/
static bool fma_ok = false;        /* the CPU has FMA3 */
static bool fma_nan_known = false; /* the NaN priority above is verified */

static void
detect_cpu(void)
{
    unsigned eax, ebx, ecx, edx;
    char vendor[13];

    __builtin_cpu_init();
    fma_ok = __builtin_cpu_supports("fma") != 0;
    if (__get_cpuid(0, &eax, &ebx, &ecx, &edx)) {
        memcpy(vendor, &ebx, 4);
        memcpy(vendor + 4, &edx, 4);
        memcpy(vendor + 8, &ecx, 4);
        vendor[12] = '\0';
        fma_nan_known = strcmp(vendor, "AuthenticAMD") == 0;
    }
}

static bool
f32_is_nan(uint32_t a)
{
    return (a & 0x7FFFFFFFu) > 0x7F800000u;
}

static bool
f32_is_qnan(uint32_t a)
{
    return (a & 0x7FC00000u) == 0x7FC00000u;
}

/* DAZ: subnormal operands count as zeros. */
static bool
f32_inf_times_zero(uint32_t a, uint32_t b, bool daz)
{
    uint32_t ma = a & 0x7FFFFFFFu, mb = b & 0x7FFFFFFFu;
    bool za = daz ? ma < 0x00800000u : ma == 0;
    bool zb = daz ? mb < 0x00800000u : mb == 0;
    return (ma == 0x7F800000u && zb) || (za && mb == 0x7F800000u);
}

/* Whether this case is compared at all; *flag_mask gets the flags that
   are compared. */
static bool
comparable(int op, uint32_t a, uint32_t b, uint32_t c, bool daz,
           unsigned *flag_mask)
{
    *flag_mask = 0x1Fu;
    if (op != OP_FMA)
        return true;
    if (!fma_ok)
        return false;
    if (f32_is_nan(a) || f32_is_nan(b) || f32_is_nan(c)) {
        if (!fma_nan_known)
            return false;
        if (f32_inf_times_zero(a, b, daz) && f32_is_qnan(c))
            *flag_mask &= ~(unsigned)SF_FLAG_INVALID;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * The emulator (typed wrappers) and the comparison.
 *--------------------------------------------------------------------------*/
static uint32_t
emu(int op, uint32_t a, uint32_t b, uint32_t c, sf_round rm, sf_env *env)
{
    sf_f32 x = {a}, y = {b}, z = {c};

    switch (op) {
    case OP_ADD:
        return sf_f32_add(x, y, rm, env).bits;
    case OP_SUB:
        return sf_f32_sub(x, y, rm, env).bits;
    case OP_MUL:
        return sf_f32_mul(x, y, rm, env).bits;
    case OP_DIV:
        return sf_f32_div(x, y, rm, env).bits;
    case OP_SQRT:
        return sf_f32_sqrt(x, rm, env).bits;
    case OP_FMA:
    default:
        return sf_f32_fma(x, y, z, rm, env).bits;
    }
}

typedef struct
{
    bool ftz_daz;         /* MXCSR.FTZ = DAZ = 1 and env.ftz = env.daz */
    bool also_fenv;       /* also run the <fenv.h> path (not with FTZ) */
    unsigned long n;      /* cases compared */
    unsigned long bad;    /* emulator mismatches */
    unsigned long hw_bad; /* the two hardware paths disagree */
    unsigned printed;
} tally;

static void
report(int op, sf_round rm, uint32_t a, uint32_t b, uint32_t c, uint32_t want,
       unsigned want_flags, uint32_t got, unsigned got_flags)
{
    uint64_t in[3] = {a, b, c};

    tst_print_case(op_names[op], &sf_format_f32, rm, in, op_arity[op], want,
                   want_flags, got, got_flags);
}

static void
check_case(tally *t, int op, sf_round rm, uint32_t a, uint32_t b, uint32_t c)
{
    unsigned mask, hw_flags, got_flags;
    uint32_t csr, hw, got;
    sf_env env = SF_ENV_X86;

    if (op_arity[op] < 3)
        c = 0;
    if (op_arity[op] < 2)
        b = 0;
    if (!comparable(op, a, b, c, t->ftz_daz, &mask))
        return;
    csr = MXCSR_MASKS | mxcsr_rc(rm)
          | (t->ftz_daz ? (MXCSR_FTZ | MXCSR_DAZ) : 0u);
    hw = hw_mxcsr(op, csr, a, b, c, &hw_flags);
    env.ftz = env.daz = t->ftz_daz;
    got = emu(op, a, b, c, rm, &env);
    got_flags = env.flags;
    t->n++;
    if (got != hw || (got_flags & mask) != (hw_flags & mask)) {
        t->bad++;
        if (t->printed < TST_MAX_PRINT) {
            t->printed++;
            if (t->ftz_daz)
                printf("(MXCSR FTZ+DAZ, env.ftz = env.daz = true)\n");
            report(op, rm, a, b, c, hw, hw_flags, got, got_flags);
        }
    }
    if (t->also_fenv) {
        unsigned fe_flags;
        uint32_t hw2 = hw_fenv(op, rm, a, b, c, &fe_flags);
        if (hw2 != hw || fe_flags != hw_flags) {
            t->hw_bad++;
            if (t->printed < TST_MAX_PRINT) {
                t->printed++;
                printf("fenv path disagrees with the MXCSR path:\n");
                report(op, rm, a, b, c, hw, hw_flags, hw2, fe_flags);
            }
        }
    }
}

/*----------------------------------------------------------------------------
 * Inputs.
 *--------------------------------------------------------------------------*/
/* Specials, subnormal and normal edges, near overflow, values that make
   ties and exact results. */
static const uint32_t edges[] = {
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x00000002, 0x00000003,
    0x0000FFFF, 0x00400000, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
    0x00800001, 0x00FFFFFF, 0x01000000, 0x0D800000, 0x1F800000, 0x33800000,
    0x34000000, 0x3EAAAAAB, 0x3F000000, 0x3F7FFFFE, 0x3F7FFFFF, 0x3F800000,
    0xBF800000, 0x3F800001, 0x3F800002, 0x3FA00000, 0x3FC00000, 0x3FFFFFFF,
    0x40000000, 0xC0000000, 0x40400000, 0x4B000000, 0x4B800000, 0x4B800001,
    0x5F800000, 0x7E800000, 0x7F000000, 0x7F7FFFFE, 0x7F7FFFFF, 0xFF7FFFFF,
    0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFFFFFFF,
    0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FA00000};
#define N_EDGES (sizeof edges / sizeof edges[0])

static uint32_t
pack(bool sign, uint32_t biased_exp, uint32_t frac)
{
    return (sign ? 0x80000000u : 0u) | (biased_exp << 23) | (frac & 0x7FFFFFu);
}

static uint32_t
rand_bits(tst_rng *r, unsigned n)
{
    return (uint32_t)(tst_rand64(r) >> (64 - n));
}

/* A 23-bit fraction: TestFloat-like patterns or uniform bits. */
static uint32_t
rand_frac(tst_rng *r)
{
    unsigned k = (unsigned)tst_rand_below(r, 23);

    switch (tst_rand_below(r, 10)) {
    case 0:
        return 0;
    case 1:
        return 0x7FFFFFu;
    case 2:
        return 1u << k;
    case 3:
        return 0x7FFFFFu ^ (1u << k);
    case 4:
        return 0x7FFFFFu >> k;
    case 5:
        return (0x7FFFFFu << k) & 0x7FFFFFu;
    case 6: /* a tie-like tail: a 1 followed by zeros */
        return (rand_bits(r, 23) & ~((2u << k) - 1u)) | (1u << k);
    default:
        return rand_bits(r, 23);
    }
}

static bool
rand_sign(tst_rng *r)
{
    return (tst_rand64(r) >> 63) != 0;
}

/* Unbiased exponent E in [-149, 127] as an operand: subnormal (random
   fraction) below -126. */
static uint32_t
operand_at(tst_rng *r, int e)
{
    if (e > 127)
        e = 127;
    if (e < -149)
        e = -149;
    if (e < -126) { /* the leading one at bit e + 149 of the fraction */
        uint32_t top = 1u << (e + 149);
        return pack(rand_sign(r), 0, top | (rand_frac(r) & (top - 1u)));
    }
    return pack(rand_sign(r), (uint32_t)(e + 127), rand_frac(r));
}

static int
rand_int(tst_rng *r, int lo, int hi)
{
    return lo + (int)tst_rand_below(r, (uint64_t)(hi - lo + 1));
}

/* Operands (a, b) for a binary op in scenario S, steering the result
   exponent for mul and div. */
static void
gen_binary(tst_rng *r, int op, unsigned s, uint32_t *a, uint32_t *b)
{
    int ea, eb, t;

    switch (s) {
    case 0: /* uniform bits */
        *a = (uint32_t)tst_rand64(r);
        *b = (uint32_t)tst_rand64(r);
        return;
    case 1: /* close exponents: cancellation, ties, carries */
        ea = rand_int(r, -126, 127);
        eb = ea
             + (tst_rand_below(r, 2) ? rand_int(r, -2, 2)
                                     : rand_int(r, -26, 26));
        *a = operand_at(r, ea);
        *b = operand_at(r, eb);
        return;
    case 2: /* tiny operands or tiny results */
    case 3: /* near overflow */
        if (op == OP_ADD || op == OP_SUB) {
            if (s == 2) {
                *a = operand_at(r, rand_int(r, -149, -100));
                *b = operand_at(r, rand_int(r, -149, -100));
            } else {
                *a = operand_at(r, rand_int(r, 120, 127));
                *b = operand_at(r, rand_int(r, 120, 127));
            }
            return;
        }
        t = s == 2 ? rand_int(r, -155, -120) : rand_int(r, 122, 130);
        ea = rand_int(r, -140, 127);
        eb = op == OP_MUL ? t - ea : ea - t;
        if (eb < -149 || eb > 127) {
            ea = t / 2;
            eb = op == OP_MUL ? t - ea : ea - t;
        }
        *a = operand_at(r, ea);
        *b = operand_at(r, eb);
        return;
    default: /* an edge value against a random one */
        *a = edges[tst_rand_below(r, N_EDGES)];
        *b = (uint32_t)tst_rand64(r);
        if (tst_rand_below(r, 2)) {
            uint32_t tmp = *a;
            *a = *b;
            *b = tmp;
        }
        return;
    }
}

static uint32_t
gen_sqrt(tst_rng *r, unsigned s)
{
    switch (s) {
    case 0:
        return (uint32_t)tst_rand64(r);
    case 1: /* positive, any exponent */
        return (uint32_t)tst_rand64(r) & 0x7FFFFFFFu;
    case 2: /* subnormal */
        return rand_bits(r, 23);
    case 3: { /* exact squares of 12-bit significands */
        uint32_t m = (uint32_t)tst_rand_below(r, 4096) | 1u;
        int e = rand_int(r, -55, 50);
        uint32_t sq = m * m;            /* < 2^24 */
        int lz = __builtin_clz(sq) - 8; /* normalise to 24 bits */
        return pack(false, (uint32_t)(2 * e + 127 + 23 - lz), sq << lz);
    }
    default:
        return pack(false, (uint32_t)rand_int(r, 1, 254), rand_frac(r));
    }
}

static void
gen_fma(tst_rng *r, unsigned s, uint32_t *a, uint32_t *b, uint32_t *c)
{
    int ea, eb, t;
    unsigned fl;

    switch (s) {
    case 0:
        *a = (uint32_t)tst_rand64(r);
        *b = (uint32_t)tst_rand64(r);
        *c = (uint32_t)tst_rand64(r);
        return;
    case 1: /* c near -(a*b): massive cancellation */
        ea = rand_int(r, -60, 60);
        eb = rand_int(r, -60, 60);
        *a = operand_at(r, ea);
        *b = operand_at(r, eb);
        *c = hw_mxcsr(OP_MUL, MXCSR_MASKS, *a, *b, 0, &fl) ^ 0x80000000u;
        *c += (uint32_t)rand_int(r, -3, 3);
        return;
    case 2: /* c close in exponent to a*b */
        ea = rand_int(r, -100, 100);
        eb = rand_int(r, -100, 100);
        if (ea + eb > 127 || ea + eb < -149)
            eb = -ea;
        *a = operand_at(r, ea);
        *b = operand_at(r, eb);
        *c = operand_at(r, ea + eb + rand_int(r, -30, 30));
        return;
    case 3: /* tiny product and/or tiny c */
        t = rand_int(r, -175, -110);
        ea = rand_int(r, -100, 0);
        eb = t - ea;
        if (eb < -149)
            eb = -149;
        *a = operand_at(r, ea);
        *b = operand_at(r, eb);
        *c = operand_at(r, rand_int(r, -149, -110));
        return;
    case 4: /* near overflow */
        t = rand_int(r, 124, 131);
        ea = rand_int(r, t - 127, 127);
        *a = operand_at(r, ea);
        *b = operand_at(r, t - ea);
        *c = operand_at(r, rand_int(r, 110, 127));
        return;
    default: /* edge values mixed in */
        *a = tst_rand_below(r, 3) ? (uint32_t)tst_rand64(r)
                                  : edges[tst_rand_below(r, N_EDGES)];
        *b = tst_rand_below(r, 3) ? (uint32_t)tst_rand64(r)
                                  : edges[tst_rand_below(r, N_EDGES)];
        *c = tst_rand_below(r, 2) ? (uint32_t)tst_rand64(r)
                                  : edges[tst_rand_below(r, N_EDGES)];
        return;
    }
}

static void
run_random(tally *t, int op, unsigned long n, uint64_t stream)
{
    tst_rng r;

    tst_rng_init(&r, stream);
    for (int m = 0; m < 4; m++) {
        for (unsigned long i = 0; i < n; i++) {
            uint32_t a, b = 0, c = 0;
            if (op == OP_SQRT)
                a = gen_sqrt(&r, (unsigned)(i % 5));
            else if (op == OP_FMA)
                gen_fma(&r, (unsigned)(i % 6), &a, &b, &c);
            else
                gen_binary(&r, op, (unsigned)(i % 5), &a, &b);
            if (t->ftz_daz && (i & 1)) {
                /* bias towards the subnormal range */
                a = (a & 0x80FFFFFFu);
                if (op != OP_SQRT)
                    b = (b & 0x80FFFFFFu) | (i & 2 ? 0x3F000000u : 0u);
            }
            check_case(t, op, modes[m], a, b, c);
        }
    }
}

/*----------------------------------------------------------------------------
 * Tests.
 *--------------------------------------------------------------------------*/
static void
finish(const tally *t, const char *what, int op)
{
    printf("x86 %s %s: %lu cases, %lu mismatches\n", what, op_names[op], t->n,
           t->bad);
    ck_assert_msg(t->bad == 0 && t->hw_bad == 0,
                  "f32_%s %s: %lu of %lu cases differ from the hardware "
                  "(%lu fenv/MXCSR disagreements)",
                  op_names[op], what, t->bad, t->n, t->hw_bad);
}

START_TEST(test_edges)
{
    tally t = {false, true, 0, 0, 0, 0};
    int op = _i;

    if (op == OP_FMA && !fma_ok) {
        printf("x86: no FMA3 on this CPU; f32_fma not compared\n");
        return;
    }
    for (int m = 0; m < 4; m++) {
        for (size_t i = 0; i < N_EDGES; i++) {
            if (op_arity[op] == 1) {
                check_case(&t, op, modes[m], edges[i], 0, 0);
                continue;
            }
            for (size_t j = 0; j < N_EDGES; j++) {
                if (op_arity[op] == 2) {
                    check_case(&t, op, modes[m], edges[i], edges[j], 0);
                    continue;
                }
                for (size_t k = 0; k < N_EDGES; k++)
                    check_case(&t, op, modes[m], edges[i], edges[j], edges[k]);
            }
        }
    }
    finish(&t, "edges", op);
}
END_TEST

START_TEST(test_random)
{
    tally t = {false, false, 0, 0, 0, 0};
    int op = _i;

    if (op == OP_FMA && !fma_ok) {
        printf("x86: no FMA3 on this CPU; f32_fma not compared\n");
        return;
    }
    run_random(&t, op, N_RANDOM * tst_multiplier(), 0x8600u + (unsigned)op);
    /* the <fenv.h> path on a smaller sample */
    t.also_fenv = true;
    run_random(&t, op, N_RANDOM / 50 * tst_multiplier(),
               0x8680u + (unsigned)op);
    finish(&t, "random", op);
}
END_TEST

START_TEST(test_ftz_daz)
{
    tally t = {true, false, 0, 0, 0, 0};
    int op = _i;

    if (op == OP_FMA && !fma_ok) {
        printf("x86: no FMA3 on this CPU; f32_fma not compared\n");
        return;
    }
    for (int m = 0; m < 4; m++)
        for (size_t i = 0; i < N_EDGES; i++)
            for (size_t j = 0; j < N_EDGES; j++)
                check_case(&t, op, modes[m], edges[i], edges[j],
                           edges[(i + j) % N_EDGES]);
    run_random(&t, op, N_RANDOM_FTZ * tst_multiplier(),
               0x8700u + (unsigned)op);
    finish(&t, "ftz+daz", op);
}
END_TEST

static Suite *
x86_suite(void)
{
    Suite *s = suite_create("x86");
    TCase *tc;

    detect_cpu();
    if (!fma_nan_known)
        printf("x86: not an AMD CPU; FMA cases with NaN operands are not "
               "compared (vendor-specific NaN priority)\n");
    tc = tst_add_tcase(s, "special", 120);
    tcase_add_loop_test(tc, test_edges, 0, N_OPS);
    tc = tst_add_tcase(s, "random", 600);
    tcase_add_loop_test(tc, test_random, 0, N_OPS);
    tc = tst_add_tcase(s, "ftz_daz", 300);
    tcase_add_loop_test(tc, test_ftz_daz, 0, N_OPS);
    return s;
}

#else /* !X86_HW */

START_TEST(test_skip)
{
    printf("test_x86: skipped: not an x86-64 host built with GCC or "
           "Clang\n");
}
END_TEST

static Suite *
x86_suite(void)
{
    Suite *s = suite_create("x86");

    tcase_add_test(tst_add_tcase(s, "skip", 0), test_skip);
    (void)modes;
    (void)op_names;
    (void)op_arity;
    return s;
}

#endif /* X86_HW */

int
main(void)
{
    return tst_run_suite(x86_suite());
}
