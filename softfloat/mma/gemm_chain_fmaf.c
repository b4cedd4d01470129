/* gemm_chain_fmaf -- the sequential FP32 FMA chain ("fma-chain") of
   sf_mma_gemm in binary64 arithmetic, for hosts and ISA caps without
   gemm_chain.c's vector kernels (BF16EMU_ISA=scalar, other CPUs),
   bit-identical to the chain of sf_f32_fma calls, flags included, with
   no call to the C library's fmaf and code that GCC vectorises with
   baseline SSE2 (two binary64 lanes).

   Preconditions (the caller's, as for gemm_chain.c): an FMA chain in
   FP32 with RNE, no FTZ, no DAZ, tininess after rounding, no event sink,
   finite FP32 operands and C (BF16 and FP16 inputs widened exactly
   beforehand).

   Why binary64 gives RN_binary32(a b + c).  For finite binary32 a, b and
   c (the accumulator), a and b are multiples of 2^-149 below 2^128 in
   magnitude with 24-bit significands, so p = a b is a multiple of 2^-298
   with at most 48 significant bits, below 2^256: exact in binary64
   (53 bits; binary64 is normal from 2^-1022 on).  s = RN64(p + c) is
   below 2^257, far from overflow, and Knuth's TwoSum (six operations, no
   branch) gives the exact error e = p + c - s, since it is exact in
   binary64 round to nearest without overflow.  Every nonzero value met
   (p, c, s, e, the intermediate differences) is a multiple of 2^-298,
   hence at least 2^-298 in magnitude: no binary64 value is subnormal, so
   FTZ and DAZ cannot change a binary64 operation; they matter only for
   the conversions from and to binary32 subnormals (below).  Rounding s
   to odd (when e is nonzero and s's last significand bit is 0, s moves
   one binary64 ulp toward e, that is, the bits minus one when e and s
   have opposite signs, then bit 0 set: integer operations on the bits)
   gives a value whose rounding to binary32 is RN(p + c), because 53 >=
   24 + 2; this holds for normal, subnormal (fewer bits kept) and
   overflowing binary32 results alike.  An exact zero sum follows IEEE in
   binary64 as in binary32: +0 in round to nearest unless both terms are
   -0 (then e = 0 and s is not moved).

   Flags without the host's.  A result is inexact when e is nonzero or the
   conversion to binary32 changed the odd-rounded value.  It may have
   raised underflow when that value is nonzero and below 2^-126 in
   magnitude (exactly when the exact sum is: 2^-126 is even, so only an
   exact sum rounds to odd onto it), overflow when it is at least 2^128 -
   2^103 (it rounds to infinity); a block of rows that met either, or an
   infinity or a NaN after one, is recomputed with sf_f32_fma, which sets
   its bits and flags (conservative: exact subnormal results are
   recomputed too).  Invalid and divide by zero cannot arise from finite
   operands without an overflow first.  These tests are integer
   arithmetic on the bits, as is the rounding to odd (SSE2 has no 64-bit
   comparison).

   The floating environment.  TwoSum needs binary64 round to nearest, and
   the conversions must neither flush binary32 subnormals (DAZ, FTZ) nor
   leave flags in the caller's environment, so the path saves the
   caller's environment (fegetenv), installs the default one
   (fesetenv(FE_DFL_ENV): round to nearest, no trap; on x86-64 and
   AArch64 also FTZ and DAZ off) and puts the caller's back at the end,
   flags and modes as they were.  The chains run in a separate,
   non-inlined function, so that no operation is moved across the
   environment calls.  The build needs FLT_EVAL_METHOD 0 (binary64
   operations rounded to binary64, not to a wider format) and contraction
   off (-ffp-contract=off: a fused p + c would break TwoSum).

   The self-check.  Before any chain, every call runs eleven probes
   through the same kernel under the installed environment and compares
   bits and flags with RN(a b + c) (sf_f32_fma's): ties broken by a term
   far below the binary64 precision (the double-rounding traps, both
   signs, both parities), an exact low product part, the sign of an exact
   zero, exact subnormal results and operands (FTZ, DAZ), underflow,
   overflow, exact and inexact results.  One mismatch (a compiler that
   contracted or reassociated, an environment that flushes) and the call
   returns false: the software chain runs.  No result is kept between
   calls (the library holds no mutable state); the probes and the
   environment calls cost about as much as fifty software FMAs, so
   sf_mma_gemm takes the path only from S_MMA_FMAF_MIN products on.

   The order of operations: each output element is one chain over t = 0
   .. k-1 from C (or +0); the kernel interleaves the chains of
   S_FMAF_COLS columns, never a reduction, so no sum is reassociated. */
#include <string.h>

#include "softfloat/mma/mma_local.h"

#include <fenv.h>
#include <float.h>

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 && defined(FE_DFL_ENV) \
    && defined(FE_INEXACT) && defined(FE_UNDERFLOW) && defined(FE_OVERFLOW) \
    && defined(FE_INVALID) && defined(FE_DIVBYZERO) \
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

/* Rows per block: the unit of the flag test and the recomputation. */
#define S_FMAF_ROWS 4
/* Columns whose chains one pass interleaves. */
#define S_FMAF_COLS 32

/* What the kernel reports of a block: some result inexact; some result
   tiny, non-finite or out of range (the block is recomputed). */
#define K_INEXACT 1u
#define K_REDO 2u

/* Bits of binary64 values (see the header comment). */
#define F64_MAG 0x7FFFFFFFFFFFFFFFu
#define F64_TINY 0x3810000000000000u /* 2^-126 */
#define F64_HUGE 0x47EFFFFFF0000000u /* 2^128 - 2^103: rounds to +Inf */

/* 1 when X is nonzero, else 0, without a comparison (SSE2 has no 64-bit
   one). */
#define NZ64(x) (((x) | (0u - (x))) >> 63)

/* R = RN_binary32(P + C) as binary64, for the exact product P of two
   binary32 values and a binary32 C (both as binary64).  FL collects, in
   bits 0 to 62, nonzero bits when R is inexact (E nonzero, or the
   conversion changed the odd-rounded value O), and in bit 63 a 1 when R
   may have raised underflow or overflow (the software chain recomputes
   the block): with M = |O|'s bits, M - 2^-126 is negative for M below
   2^-126 and M - 1 is negative only for M = 0, so the first term's sign
   is 0 < M < 2^-126; the second's is M >= 2^128 - 2^103 (infinities and
   NaNs included).  Integer arithmetic on the bits, no branch, no
   comparison: GCC vectorises it with SSE2. */
#define FMA_STEP(p, c, r, fl)                                                 \
    do {                                                                      \
        double s_ = (p) + (c), v_ = s_ - (p);                                 \
        double e_ = ((p) - (s_ - v_)) + ((c) - v_);                           \
        uint64_t sb_ = sf_host_double_bits(s_),                               \
                 eb_ = sf_host_double_bits(e_);                               \
        uint64_t z_ = eb_ << 1, nz_ = NZ64(z_), neg_ = (sb_ ^ eb_) >> 63;     \
        uint64_t ob_ = (sb_ - (nz_ & neg_)) | nz_, m_;                        \
        (r) = (double)(float)sf_host_double(ob_);                             \
        m_ = ob_ & F64_MAG;                                                   \
        (fl) |= ((z_ | (sf_host_double_bits(r) ^ ob_)) >> 1)                  \
                | ((((m_ - F64_TINY) & ~(m_ - 1u)) | (F64_HUGE - 1u - m_))    \
                   & ~F64_MAG);                                               \
    } while (0)

/* OUT (NR x COLS) = A (NR x K) * B (K x COLS) + C (NR x COLS; NULL: +0),
   all row-major FP32 bits, one chain of FMA_STEP per element in t order;
   returns K_INEXACT and K_REDO as the block raised them. */
static NOINLINE unsigned
chain_f64(size_t nr, size_t cols, size_t k, const uint32_t *a,
          const uint32_t *b, const uint32_t *c, uint32_t *out)
{
    uint64_t fl = 0;

    for (size_t r = 0; r < nr; r++) {
        const uint32_t *ar = a + r * k;
        size_t j = 0;

        for (; j + S_FMAF_COLS <= cols; j += S_FMAF_COLS) {
            double acc[S_FMAF_COLS];
            uint64_t flv[S_FMAF_COLS];
            for (size_t u = 0; u < S_FMAF_COLS; u++) {
                acc[u] = 0.0;
                flv[u] = 0;
            }
            if (c != NULL)
                for (size_t u = 0; u < S_FMAF_COLS; u++)
                    acc[u] = (double)sf_host_float(c[r * cols + j + u]);
            for (size_t t = 0; t < k; t++) {
                double x = (double)sf_host_float(ar[t]);
                const uint32_t *bt = b + t * cols + j;
                for (size_t u = 0; u < S_FMAF_COLS; u++) {
                    double p = x * (double)sf_host_float(bt[u]), q;
                    FMA_STEP(p, acc[u], q, flv[u]);
                    acc[u] = q;
                }
            }
            for (size_t u = 0; u < S_FMAF_COLS; u++) {
                out[r * cols + j + u] = sf_host_float_bits((float)acc[u]);
                fl |= flv[u];
            }
        }
        for (; j < cols; j++) {
            double acc =
                c != NULL ? (double)sf_host_float(c[r * cols + j]) : 0.0;
            for (size_t t = 0; t < k; t++) {
                double p = (double)sf_host_float(ar[t])
                           * (double)sf_host_float(b[t * cols + j]),
                       q;
                FMA_STEP(p, acc, q, fl);
                acc = q;
            }
            out[r * cols + j] = sf_host_float_bits((float)acc);
        }
    }
    return (fl >> 63 != 0 ? K_REDO : 0u)
           | ((fl << 1) != 0 ? K_INEXACT : 0u);
}

/* The probes: a, b, c (FP32 bits), RN(a b + c) and the flags it raises
   (values by exact rational arithmetic; the same cases are among the
   tests' directed ones, checked against sf_f32_fma).  The kernel must
   give the bits and the inexact flag, and send the underflow and
   overflow cases to the software chain. */
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

/* Whether the kernel, in the installed environment, gives every probe's
   bits and inexact flag, and sends those that raise underflow or
   overflow to the software chain (it may send more: the exact subnormal
   results). */
static bool
kernel_trusted(void)
{
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint32_t got;
        unsigned raised;

        BARRIER();
        raised = chain_f64(1, 1, 1, &probes[i].a, &probes[i].b,
                           &probes[i].c, &got);
        BARRIER();
        if (got != probes[i].want
            || ((raised & K_INEXACT) != 0) != ((probes[i].flags & P_IX) != 0)
            || ((probes[i].flags & FE_REDO) != 0 && (raised & K_REDO) == 0))
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
    if (fesetenv(FE_DFL_ENV) != 0 || !kernel_trusted()) {
        (void)fesetenv(&saved);
        return false;
    }
    for (size_t i0 = 0; i0 < rows; i0 += S_FMAF_ROWS) {
        size_t nr = rows - i0 < S_FMAF_ROWS ? rows - i0 : S_FMAF_ROWS;
        const uint32_t *ci = c != NULL ? c + i0 * cols : NULL;
        unsigned raised;

        BARRIER();
        raised = chain_f64(nr, cols, k, a + i0 * k, b, ci, tmp);
        BARRIER();
        if ((raised & K_REDO) == 0) {
            memcpy(d + i0 * cols, tmp, nr * cols * sizeof *d);
            flags |= (raised & K_INEXACT) != 0 ? SF_FLAG_INEXACT : 0u;
            continue;
        }
        /* the rare block: the software chain (integer arithmetic, no
           host state) */
        s_mma_chain_rows_soft(i0, nr, cols, k, a, b, ci, d, env);
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
