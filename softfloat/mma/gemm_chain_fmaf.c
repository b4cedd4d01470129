/* gemm_chain_fmaf -- the sequential FP32 FMA chain ("fma-chain") of
   sf_mma_gemm on the C library's fmaf, for hosts and ISA caps without
   gemm_chain.c's vector kernels (BF16EMU_ISA=scalar, other CPUs),
   bit-identical to the chain of sf_f32_fma calls, flags included.

   Why fmaf gives softfloat's bits.  The caller takes this path under the
   preconditions of gemm_chain.c: an FMA chain in FP32 with RNE, no FTZ,
   no DAZ, tininess after rounding, no event sink, finite FP32 operands
   and C (BF16 and FP16 inputs widened exactly beforehand).  C99's fmaf is
   IEEE 754 fusedMultiplyAdd in binary32, rounded once in the current
   rounding direction: for finite a, b, c under round to nearest even it
   returns RN(a * b + c), which is also what sf_f32_fma returns in RNE.

   The floating environment.  The host rounds per its environment, so the
   path saves the caller's (fegetenv), installs the default one
   (fesetenv(FE_DFL_ENV): round to nearest, no trap, flags clear; on
   x86-64 and AArch64 also FTZ and DAZ off) and puts the caller's back at
   the end, flags and modes as they were.  The chains run in a separate,
   non-inlined function, so that no fmaf is moved across the environment
   calls.

   The self-check.  A C library may implement fmaf in software (through
   binary64, which rounds twice unless done with care), and an
   environment may leave a flush-to-zero mode that FE_DFL_ENV does not
   clear.  Before any chain, every call runs eleven probes through the
   same kernel under the installed environment and compares bits and the
   five flags with what RN(a b + c) is (sf_f32_fma's): ties broken by a term far below the
   binary64 precision (the double-rounding traps, both signs, both
   parities, which the directed modes also miss), an exact low product
   part, the sign of an exact zero, exact subnormal results and operands
   (FTZ, DAZ), underflow, overflow, exact and inexact results.  One
   mismatch and the call returns false: the software chain runs.  No
   result is kept between calls (the library holds no mutable state);
   the probes and the environment calls cost about as much as fifty
   software FMAs, so sf_mma_gemm takes the path only from
   S_MMA_FMAF_MIN products on.

   Flags: as gemm_chain.c, per block of rows.  The block's flags are
   cleared before and read after (fetestexcept).  Inexact maps to
   SF_FLAG_INEXACT; a block that raised overflow, underflow, invalid or
   divide by zero is recomputed with sf_f32_fma, which sets its bits and
   flags (a host detecting tininess before rounding raises underflow in
   more cases, never fewer: more blocks recomputed, no flag missed).

   The order of operations: each output element is one chain over t = 0
   .. k-1 from C (or +0); the kernel interleaves the chains of eight
   columns, never a reduction, so no sum is reassociated. */
#include <string.h>

#include "softfloat/mma/mma_local.h"

#include <fenv.h>
#include <math.h>

#if defined(FE_DFL_ENV) && defined(FE_INEXACT) && defined(FE_UNDERFLOW)    \
    && defined(FE_OVERFLOW) && defined(FE_INVALID) && defined(FE_DIVBYZERO) \
    && defined(FE_TONEAREST)
#define HAVE_FENV 1
#else
#define HAVE_FENV 0
#endif

#if HAVE_FENV

/* The compiler must not move floating-point operations across the
   environment calls: C99's pragma where the compiler honours it (GCC
   ignores it with a warning; there the non-inlined kernel and the
   compiler barriers keep the order). */
#if defined(__clang__)
#pragma STDC FENV_ACCESS ON
#endif

#if defined(__GNUC__)
#define BARRIER() __asm__ __volatile__("" ::: "memory")
#if defined(__has_attribute)
#if __has_attribute(noipa)
#define NOINLINE __attribute__((noipa))
#endif
#endif
#ifndef NOINLINE
#define NOINLINE __attribute__((noinline))
#endif
#else
#define BARRIER() ((void)0)
#define NOINLINE
#endif

#define FE_REDO (FE_UNDERFLOW | FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO)
#define FE_FIVE (FE_INEXACT | FE_REDO)

/* Rows per block: the unit of the flag test and the recomputation. */
#define S_FMAF_ROWS 4
/* Columns whose chains one pass interleaves. */
#define S_FMAF_COLS 8

static float
f32_of(uint32_t x)
{
    float f;

    memcpy(&f, &x, sizeof f);
    return f;
}

static uint32_t
bits_of(float f)
{
    uint32_t x;

    memcpy(&x, &f, sizeof x);
    return x;
}

/* OUT (NR x COLS) = A (NR x K) * B (K x COLS) + C (NR x COLS; NULL: +0),
   all row-major FP32 bits, one fmaf chain per element in t order. */
static NOINLINE void
chain_fmaf(size_t nr, size_t cols, size_t k, const uint32_t *a,
           const uint32_t *b, const uint32_t *c, uint32_t *out)
{
    for (size_t r = 0; r < nr; r++) {
        const uint32_t *ar = a + r * k;
        size_t j = 0;

        for (; j + S_FMAF_COLS <= cols; j += S_FMAF_COLS) {
            float acc[S_FMAF_COLS];
            for (size_t u = 0; u < S_FMAF_COLS; u++)
                acc[u] = c != NULL ? f32_of(c[r * cols + j + u]) : 0.0f;
            for (size_t t = 0; t < k; t++) {
                float x = f32_of(ar[t]);
                const uint32_t *bt = b + t * cols + j;
                for (size_t u = 0; u < S_FMAF_COLS; u++)
                    acc[u] = fmaf(x, f32_of(bt[u]), acc[u]);
            }
            for (size_t u = 0; u < S_FMAF_COLS; u++)
                out[r * cols + j + u] = bits_of(acc[u]);
        }
        for (; j < cols; j++) {
            float acc = c != NULL ? f32_of(c[r * cols + j]) : 0.0f;
            for (size_t t = 0; t < k; t++)
                acc = fmaf(f32_of(ar[t]), f32_of(b[t * cols + j]), acc);
            out[r * cols + j] = bits_of(acc);
        }
    }
}

/* SF_FLAG_* of the host's raised exceptions X. */
static unsigned
sf_flags_of(int x)
{
    return ((x & FE_INEXACT) ? SF_FLAG_INEXACT : 0u)
           | ((x & FE_UNDERFLOW) ? SF_FLAG_UNDERFLOW : 0u)
           | ((x & FE_OVERFLOW) ? SF_FLAG_OVERFLOW : 0u)
           | ((x & FE_DIVBYZERO) ? SF_FLAG_DIVZERO : 0u)
           | ((x & FE_INVALID) ? SF_FLAG_INVALID : 0u);
}

/* The probes: a, b, c (FP32 bits), RN(a b + c) and the flags it raises
   (values by exact rational arithmetic; the tests check them against
   sf_f32_fma).  The flags are sticky and clearing them costs about as
   much as a hundred FMAs, so the probes run in this order and each is
   checked against the union of the flags so far: the exact ones first
   (no flag at all), then inexact, underflow and overflow, each raising
   one flag for the first time. */
#define P_IX FE_INEXACT
#define P_UF (FE_INEXACT | FE_UNDERFLOW)
#define P_OF (FE_INEXACT | FE_OVERFLOW)
static const struct
{
    uint32_t a, b, c, want;
    int flags;
} probes[] = {
    /* (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly: the product's low part */
    {0x3F800001u, 0x3F800001u, 0xBF800002u, 0x28800000u, 0},
    /* 1 * 1 - 1 = +0 (-0 rounding down) */
    {0x3F800000u, 0x3F800000u, 0xBF800000u, 0x00000000u, 0},
    /* 2^-100 2^-30 = 2^-130, an exact subnormal (zero under FTZ) */
    {0x0D800000u, 0x30800000u, 0x00000000u, 0x00080000u, 0},
    /* 2^-149 2^100 = 2^-49: a subnormal operand (zero under DAZ) */
    {0x00000001u, 0x71800000u, 0x00000000u, 0x27000000u, 0},
    /* RN(1/3) 3 - 1 = 2^-25 exactly */
    {0x3EAAAAABu, 0x40400000u, 0xBF800000u, 0x33000000u, 0},
    /* (1 + 2^-12)^2 + 2^-80 = 1 + 2^-11 + 2^-24 + 2^-80: a tie (even
       below) pushed up; through binary64, 3F801000 */
    {0x3F800800u, 0x3F800800u, 0x17800000u, 0x3F801001u, P_IX},
    /* the same negated: the directed modes miss one of the two */
    {0xBF800800u, 0x3F800800u, 0x97800000u, 0xBF801001u, P_IX},
    /* (1 + 2^-23) 1.5 - 2^-80: a tie (odd below) pulled down; through
       binary64, 3FC00002 */
    {0x3F800001u, 0x3FC00000u, 0x97800000u, 0x3FC00001u, P_IX},
    /* RN(1/3)^2 */
    {0x3EAAAAABu, 0x3EAAAAABu, 0x00000000u, 0x3DE38E3Au, P_IX},
    /* 3 2^-149 / 2 = 1.5 2^-149 -> 2^-148: tiny before and after
       rounding, inexact */
    {0x00000003u, 0x3F000000u, 0x00000000u, 0x00000002u, P_UF},
    /* 2^127 2 -> +Inf */
    {0x7F000000u, 0x40000000u, 0x00000000u, 0x7F800000u, P_OF},
};

/* Whether fmaf, in the installed environment (flags clear), gives every
   probe's bits and flags. */
static bool
fmaf_trusted(void)
{
    int so_far = 0;

    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint32_t got;

        BARRIER();
        chain_fmaf(1, 1, 1, &probes[i].a, &probes[i].b, &probes[i].c, &got);
        BARRIER();
        so_far |= probes[i].flags;
        if (got != probes[i].want || fetestexcept(FE_FIVE) != so_far)
            return false;
    }
    return true;
}

#endif /* HAVE_FENV */

bool
s_mma_chain_fmaf_ok(const sf_mma_model *m, const sf_env *env)
{
#if HAVE_FENV
    return env->events == NULL && m->tininess_after && !env->ftz
           && !env->daz;
#else
    (void)m;
    (void)env;
    return false;
#endif
}

bool
s_mma_chain_fmaf(size_t rows, size_t cols, size_t k, const uint32_t *a,
                 const uint32_t *b, const uint32_t *c, uint32_t *d,
                 uint32_t *tmp, sf_env *env)
{
#if HAVE_FENV
    fenv_t saved;
    unsigned flags = 0;

    if (fegetenv(&saved) != 0)
        return false;
    if (fesetenv(FE_DFL_ENV) != 0 || !fmaf_trusted()) {
        (void)fesetenv(&saved);
        return false;
    }
    for (size_t i0 = 0; i0 < rows; i0 += S_FMAF_ROWS) {
        size_t nr = rows - i0 < S_FMAF_ROWS ? rows - i0 : S_FMAF_ROWS;
        const uint32_t *ci = c != NULL ? c + i0 * cols : NULL;
        int raised;

        feclearexcept(FE_ALL_EXCEPT);
        BARRIER();
        chain_fmaf(nr, cols, k, a + i0 * k, b, ci, tmp);
        BARRIER();
        raised = fetestexcept(FE_FIVE);
        if ((raised & FE_REDO) == 0) {
            memcpy(d + i0 * cols, tmp, nr * cols * sizeof *d);
            flags |= sf_flags_of(raised);
            continue;
        }
        /* the rare block: the software chain (integer arithmetic, no
           host state) */
        for (size_t r = 0; r < nr; r++)
            for (size_t j = 0; j < cols; j++) {
                sf_f32 acc = {ci != NULL ? ci[r * cols + j] : 0};
                for (size_t t = 0; t < k; t++)
                    acc = sf_f32_fma((sf_f32){a[(i0 + r) * k + t]},
                                     (sf_f32){b[t * cols + j]}, acc, SF_RNE,
                                     env);
                d[(i0 + r) * cols + j] = acc.bits;
            }
    }
    (void)fesetenv(&saved);
    env->flags |= flags;
    return true;
#else
    (void)rows, (void)cols, (void)k, (void)a, (void)b, (void)c, (void)d;
    (void)tmp, (void)env;
    return false;
#endif
}
