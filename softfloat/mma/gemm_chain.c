/* gemm_chain -- the sequential FP32 FMA chain ("fma-chain") of
   sf_mma_gemm on the host's binary32 FMA unit (AVX2: eight output
   columns per vector, AVX-512: sixteen), bit-identical to the chain of
   sf_f32_fma calls, flags included.

   Why the host's FMA gives softfloat's bits.  The caller takes this path
   only for an FMA chain in FP32 with RNE, no FTZ, no DAZ, tininess after
   rounding, no event sink, and finite FP32 operands and C (BF16 and FP16
   inputs widened exactly beforehand).  IEEE 754 binary32 fusedMultiplyAdd
   is correctly rounded: for finite a, b, c it returns RN(a * b + c), a
   function of the operands alone, which is also what sf_f32_fma returns
   in RNE.  The host computes that function only under a known control
   state, so around each block of rows the path loads MXCSR with its
   default (0x1F80: round to nearest even, FTZ and DAZ off, every
   exception masked, sticky flags clear) and puts the caller's MXCSR back
   at the end: whatever the host held before, the vector FMAs round to
   nearest even and keep subnormal operands and results.  Every step's
   operands are finite until a result overflows, and a product of finite
   operands plus a finite or infinite accumulator is never a NaN (the
   product is finite): no NaN, hence no NaN payload rule, can arise.

   Flags: after each block the host's sticky flags say what the block
   raised.  Inexact (PE) maps to SF_FLAG_INEXACT, raised by sf_f32_fma
   exactly when the rounded result differs from the exact one, as PE is.
   A block whose MXCSR shows overflow, underflow, invalid or divide by
   zero is discarded and recomputed with sf_f32_fma (the bits would be
   the same; the flags and the saturation rule are left to the scalar
   operation), so only the common case runs on the host.  Columns past
   the last full vector are computed in masked lanes whose operands are
   zero (0 * a + 0 is exact: no flag).

   The order of operations: each output element is one chain over t = 0
   .. k-1 from C (or +0), in one lane of one accumulator; vectors span
   columns, never the reduction, so no sum is reassociated.  The code
   uses only intrinsics (no -ffast-math, no contraction by the compiler:
   every FMA is an explicit fused instruction). */
#include <string.h>

#include "softfloat/mma/mma_local.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_VEC 1
#include <immintrin.h>
#else
#define HAVE_VEC 0
#endif

#if HAVE_VEC

#define MXCSR_DEFAULT 0x1F80u
#define MXCSR_FLAGS 0x3Fu
#define MXCSR_PE 0x20u
/* IE, DE is not a flag of IEEE (denormal operand), ZE, OE, UE */
#define MXCSR_REDO (0x01u | 0x04u | 0x08u | 0x10u)

#define TGT2 __attribute__((target("avx2,fma")))
#define TGT512 __attribute__((target("avx2,fma,avx512f")))

/* The rows of one block: at most S_CHAIN_ROWS, A's row-major with K
   columns, B's row-major with COLS columns, C and OUT row-major with
   COLS columns (C may be NULL: +0). */
#define S_CHAIN_ROWS 4

/* AVX2: NR rows by two vectors of eight columns, then one vector, then a
   masked tail. */
#define CHAIN2_BODY(NR)                                                       \
    do {                                                                      \
        size_t j = 0;                                                         \
        for (; j + 16 <= cols; j += 16) {                                     \
            __m256 acc[NR][2];                                                \
            for (size_t r = 0; r < NR; r++)                                   \
                for (size_t v = 0; v < 2; v++)                                \
                    acc[r][v] = c != NULL ? _mm256_loadu_ps(c + r * cols + j  \
                                                            + 8 * v)          \
                                          : _mm256_setzero_ps();              \
            for (size_t t = 0; t < k; t++) {                                  \
                __m256 b0 = _mm256_loadu_ps(b + t * cols + j);                \
                __m256 b1 = _mm256_loadu_ps(b + t * cols + j + 8);            \
                for (size_t r = 0; r < NR; r++) {                             \
                    __m256 x = _mm256_castsi256_ps(                          \
                        _mm256_set1_epi32((int)a[r * k + t]));            \
                    acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);            \
                    acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);            \
                }                                                             \
            }                                                                 \
            for (size_t r = 0; r < NR; r++)                                   \
                for (size_t v = 0; v < 2; v++)                                \
                    _mm256_storeu_ps(out + r * cols + j + 8 * v, acc[r][v]);  \
        }                                                                     \
        for (; j < cols; j += 8) {                                            \
            size_t w = cols - j < 8 ? cols - j : 8;                           \
            __m256i mk = _mm256_cmpgt_epi32(                                  \
                _mm256_set1_epi32((int)w),                                    \
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));                   \
            __m256 acc[NR];                                                   \
            for (size_t r = 0; r < NR; r++)                                   \
                acc[r] = c != NULL ? _mm256_maskload_ps(c + r * cols + j, mk) \
                                   : _mm256_setzero_ps();                     \
            for (size_t t = 0; t < k; t++) {                                  \
                __m256 b0 = _mm256_maskload_ps(b + t * cols + j, mk);         \
                for (size_t r = 0; r < NR; r++)                               \
                    acc[r] = _mm256_fmadd_ps(                                 \
                        _mm256_castsi256_ps(                                  \
                            _mm256_set1_epi32((int)a[r * k + t])),            \
                        b0, acc[r]);                                          \
            }                                                                 \
            for (size_t r = 0; r < NR; r++)                                   \
                _mm256_maskstore_ps(out + r * cols + j, mk, acc[r]);          \
        }                                                                     \
    } while (0)

#define CHAIN512_BODY(NR)                                                     \
    do {                                                                      \
        size_t j = 0;                                                         \
        for (; j + 32 <= cols; j += 32) {                                     \
            __m512 acc[NR][2];                                                \
            for (size_t r = 0; r < NR; r++)                                   \
                for (size_t v = 0; v < 2; v++)                                \
                    acc[r][v] = c != NULL ? _mm512_loadu_ps(c + r * cols + j  \
                                                            + 16 * v)         \
                                          : _mm512_setzero_ps();              \
            for (size_t t = 0; t < k; t++) {                                  \
                __m512 b0 = _mm512_loadu_ps(b + t * cols + j);                \
                __m512 b1 = _mm512_loadu_ps(b + t * cols + j + 16);           \
                for (size_t r = 0; r < NR; r++) {                             \
                    __m512 x = _mm512_castsi512_ps(                          \
                        _mm512_set1_epi32((int)a[r * k + t]));                  \
                    acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);            \
                    acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);            \
                }                                                             \
            }                                                                 \
            for (size_t r = 0; r < NR; r++)                                   \
                for (size_t v = 0; v < 2; v++)                                \
                    _mm512_storeu_ps(out + r * cols + j + 16 * v, acc[r][v]); \
        }                                                                     \
        for (; j < cols; j += 16) {                                           \
            size_t w = cols - j < 16 ? cols - j : 16;                         \
            __mmask16 mk = (__mmask16)((1u << w) - 1u);                       \
            __m512 acc[NR];                                                   \
            for (size_t r = 0; r < NR; r++)                                   \
                acc[r] = c != NULL ? _mm512_maskz_loadu_ps(mk, c + r * cols   \
                                                                   + j)       \
                                   : _mm512_setzero_ps();                     \
            for (size_t t = 0; t < k; t++) {                                  \
                __m512 b0 = _mm512_maskz_loadu_ps(mk, b + t * cols + j);      \
                for (size_t r = 0; r < NR; r++)                               \
                    acc[r] = _mm512_fmadd_ps(                                 \
                        _mm512_castsi512_ps(                                  \
                            _mm512_set1_epi32((int)a[r * k + t])),            \
                        b0, acc[r]);                                          \
            }                                                                 \
            for (size_t r = 0; r < NR; r++)                                   \
                _mm512_mask_storeu_ps(out + r * cols + j, mk, acc[r]);        \
        }                                                                     \
    } while (0)

/* The kernels are not inlined into the caller, so that no FMA can be
   scheduled across the MXCSR loads and reads around them. */
#define CHAIN_KERNEL(name, tgt, body)                                         \
    tgt __attribute__((noinline)) static void name(                           \
        size_t nr, size_t cols, size_t k, const uint32_t *a, const float *b,  \
        const float *c, float *out)                                           \
    {                                                                         \
        switch (nr) {                                                         \
        case 1:                                                               \
            body(1);                                                          \
            break;                                                            \
        case 2:                                                               \
            body(2);                                                          \
            break;                                                            \
        case 3:                                                               \
            body(3);                                                          \
            break;                                                            \
        default:                                                              \
            body(4);                                                          \
            break;                                                            \
        }                                                                     \
    }

CHAIN_KERNEL(chain_avx2, TGT2, CHAIN2_BODY)
CHAIN_KERNEL(chain_avx512, TGT512, CHAIN512_BODY)

#endif /* HAVE_VEC */

int
s_mma_chain_native_isa(const sf_mma_model *m, const sf_env *env)
{
#if HAVE_VEC
    sf_isa cap = sf_isa_resolve(env->isa);

    if (env->events != NULL || !m->tininess_after || env->ftz || env->daz)
        return 0;
    if (cap >= SF_ISA_AVX512 && sf_isa_supported(SF_ISA_AVX512))
        return SF_ISA_AVX512;
    if (cap >= SF_ISA_AVX2 && sf_isa_supported(SF_ISA_AVX2))
        return SF_ISA_AVX2;
#else
    (void)m;
    (void)env;
#endif
    return 0;
}

void
s_mma_chain_native(int isa, size_t rows, size_t cols, size_t k,
                   const uint32_t *a, const uint32_t *b, const uint32_t *c,
                   uint32_t *d, uint32_t *tmp, sf_env *env)
{
#if HAVE_VEC
    unsigned saved = _mm_getcsr(), got;

    for (size_t i0 = 0; i0 < rows; i0 += S_CHAIN_ROWS) {
        size_t nr = rows - i0 < S_CHAIN_ROWS ? rows - i0 : S_CHAIN_ROWS;
        const uint32_t *ci = c != NULL ? c + i0 * cols : NULL;

        _mm_setcsr(MXCSR_DEFAULT);
        (isa == SF_ISA_AVX512 ? chain_avx512 : chain_avx2)(
            nr, cols, k, a + i0 * k,
            (const float *)(const void *)b,
            (const float *)(const void *)ci, (float *)(void *)tmp);
        got = _mm_getcsr();
        if ((got & MXCSR_REDO) == 0) {
            memcpy(d + i0 * cols, tmp, nr * cols * sizeof *d);
            if (got & MXCSR_PE)
                env->flags |= SF_FLAG_INEXACT;
            continue;
        }
        /* the rare block: the scalar chain, in the caller's MXCSR (the
           scalar operations never depend on it) */
        _mm_setcsr(saved);
        s_mma_chain_rows_soft(i0, nr, cols, k, a, b, ci, d, env);
    }
    _mm_setcsr(saved);
#else
    (void)isa, (void)rows, (void)cols, (void)k, (void)a, (void)b, (void)c;
    (void)d, (void)tmp, (void)env;
#endif
}
