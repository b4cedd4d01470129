/* mma.h -- bit-exact models of dot-product and matrix-unit accumulation */
#ifndef BF16EMU_SOFTFLOAT_MMA_H
#define BF16EMU_SOFTFLOAT_MMA_H

#include <stddef.h>
#include <stdint.h>

#include "softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * A model says how a dot product sum_i a_i * b_i plus an accumulator c is
 * computed: which terms are added together exactly, where rounding
 * happens, and in which order.  Inputs a and b are bit patterns of any
 * format of at most 32 bits (BF16, FP16, TF32, E4M3, E5M2, FP32); the
 * accumulator c and the result are bit patterns of the model's
 * accumulator format (FP32, or FP16 for hardware with FP16 accumulate).
 *
 * A dot product of length K is cut into blocks of n products in ascending
 * index order (the last block may be shorter); each block takes the
 * accumulator produced by the previous one ("chaining through C").  n = 0
 * makes the whole dot product one block.
 *--------------------------------------------------------------------------*/
typedef enum
{
    /* Block FMA ("fused dot-add"): the n exact products and C (when
       c_in_block) are aligned to the largest unnormalised exponent emax
       of the block (a product of significands in [1,2) keeps its
       significand in [1,4) and exponent ea + eb), each aligned term is
       rounded to the grid 2^(emax - frac_bits) by the align rule, the
       rounded terms are added exactly and the sum is rounded once with
       rm.  Without c_in_block the block sum is rounded to the
       accumulator format and then added to C with a second rounding. */
    SF_MMA_FUSED,
    /* acc = fma(a_i, b_i, acc) for each i of the block in ascending
       order (descending when descending is set), one rounding each. */
    SF_MMA_FMA_CHAIN,
    /* lanes interleaved FMA chains starting at +0 (product i goes to
       chain i mod lanes), then the chains are added in lane order
       (((t0 + t1) + t2) + ...) and the result is added to C:
       acc = acc + t, each addition rounded. */
    SF_MMA_FMA_LANES,
    /* acc = round(acc + round(a_i * b_i)) for each i. */
    SF_MMA_MUL_ADD,
    /* p_i = round(a_i * b_i); the block's p_i are added in a balanced
       tree (adjacent pairs level by level, an odd last element carried
       up), each addition rounded; then acc = round(acc + tree). */
    SF_MMA_PAIRWISE,
    /* p_i = round(a_i * b_i) added into acc with Kahan's compensated
       summation (y = p - comp; t = acc + y; comp = (t - acc) - y;
       acc = t), every operation rounded. */
    SF_MMA_KAHAN,
    /* The exact value of C plus every product of the block, rounded
       once. */
    SF_MMA_EXACT
} sf_mma_kind;

/* How a fused block rounds each aligned term to its grid. */
typedef enum
{
    SF_MMA_ALIGN_TRUNC, /* toward zero on the magnitude (no sticky) */
    SF_MMA_ALIGN_RNE,   /* to nearest, ties to even, per term */
    SF_MMA_ALIGN_STICKY /* toward zero, any discarded bit OR-ed into the
                           last kept bit (shift-right-jam) */
} sf_mma_align;

/* Which NaN a model returns. */
typedef enum
{
    SF_MMA_NAN_DEFAULT, /* always the default NaN (NVIDIA canonical NaN,
                           Arm FPCR.DN = 1) */
    SF_MMA_NAN_FIRST    /* the first NaN operand in the model's operand
                           order, quieted and converted to the
                           accumulator format; an invalid operation
                           (Inf * 0, Inf - Inf) gives the default NaN */
} sf_mma_nan;

/* What a rounding that overflows returns. */
typedef enum
{
    SF_MMA_OVF_INF,  /* +-Inf in every rounding mode (the published
                        tensor-core models; Arm BFDOT) */
    SF_MMA_OVF_IEEE, /* as IEEE 754 says for the mode: RZ and round to
                        odd give the largest finite value */
    SF_MMA_OVF_SAT   /* the largest finite value in every mode */
} sf_mma_overflow;

/* The sign of a zero result. */
typedef enum
{
    SF_MMA_ZERO_POS, /* always +0, also for a non-zero sum that rounds
                        to zero (NVIDIA) */
    SF_MMA_ZERO_IEEE /* IEEE 754: the common sign when every term is a
                        zero of that sign, else +0 (-0 under SF_RDN) */
} sf_mma_zero;

/* frac_bits value: nothing is discarded by alignment. */
#define SF_MMA_F_EXACT (-1)
/* emax_floor value: no floor. */
#define SF_MMA_NO_FLOOR (-0x7FFFFFFF - 1)
/* Largest finite frac_bits and largest block size. */
#define SF_MMA_MAX_F 60
#define SF_MMA_MAX_N 1024

/* Input formats a preset was measured or documented with (in_formats). */
enum
{
    SF_MMA_IN_BF16 = 1,
    SF_MMA_IN_F16 = 2,
    SF_MMA_IN_TF32 = 4,
    SF_MMA_IN_E4M3 = 8,
    SF_MMA_IN_E5M2 = 16,
    SF_MMA_IN_F32 = 32
};

typedef struct sf_mma_model
{
    const char *name;
    sf_mma_kind kind;
    unsigned n;           /* products per block; 0: the whole K */
    int frac_bits;        /* FUSED: F, bits kept below the block's max
                             exponent (0..SF_MMA_MAX_F), or
                             SF_MMA_F_EXACT */
    sf_mma_align align;   /* FUSED: per-term rounding to the grid */
    sf_round rm;          /* every rounding to the accumulator format */
    const sf_format *acc; /* accumulator and result format */
    bool daz;             /* subnormal inputs and C read as zero */
    bool ftz;             /* tiny results flushed to zero */
    bool tininess_after;  /* tininess after rounding (else before) */
    bool c_in_block;      /* FUSED: C is a term of the block */
    bool zero_c_in_max;   /* FUSED: a zero C takes part in emax with
                             the accumulator's emin (MMA-Sim); false:
                             a zero C is ignored */
    int32_t emax_floor;   /* FUSED: emax = max(emax, emax_floor) (the
                             MATLAB H100 model: -133), or
                             SF_MMA_NO_FLOOR */
    sf_mma_nan nan;
    sf_default_nan default_nan;
    sf_mma_overflow overflow;
    sf_mma_zero zero;
    bool descending;        /* FMA_CHAIN: each block from its last
                               product to its first */
    unsigned lanes;         /* FMA_LANES: number of chains (>= 1) */
    const sf_format *store; /* NULL, or the format the accumulator is
                               rounded to (with store_rm) after each
                               block (FUSED, FMA_LANES, PAIRWISE, EXACT)
                               or each product (FMA_CHAIN, MUL_ADD,
                               KAHAN): a BF16-stored accumulator */
    sf_round store_rm;
    unsigned in_formats; /* SF_MMA_IN_* the model is documented for;
                            informative, the engine takes any */
} sf_mma_model;

/*----------------------------------------------------------------------------
 * Rounding events.  With env->events set, every rounding a model makes is
 * reported.  Roundings to a format come from the library's one rounding
 * routine, with these op codes and operands:
 *   SF_OP_MMA_BLOCK  the single rounding of a fused block;
 *                    in = {c (acc format), k0, count} where k0 is the
 *                    index of the block's first product and count the
 *                    number of its products (in_fmt NULL: integers)
 *   SF_OP_MMA_FMA    one FMA step; in = {a, b, acc}
 *   SF_OP_MMA_MUL    a product rounded to the accumulator; in = {a, b}
 *   SF_OP_MMA_ADD    an addition in the accumulator format; in = {x, y}
 *   SF_OP_MMA_STORE  the accumulator rounded to its storage format
 *   SF_OP_MMA_EXACT  the single rounding of SF_MMA_EXACT; in as BLOCK
 * SF_OP_MMA_ALIGN reports one term of a fused block that lost bits when
 * aligned to the grid: fmt is NULL, ulp_exp is the grid exponent, exact
 * is the term, result is the kept signed multiple of 2^ulp_exp as a
 * two's complement integer, error = result - exact; flags 0.  For a
 * product in = {a, b, k} (k its index in the dot product; in_fmt[2]
 * NULL), for C in = {c}.
 *--------------------------------------------------------------------------*/
enum
{
    SF_OP_MMA_ALIGN = SF_OP_ACCUM,
    SF_OP_MMA_BLOCK,
    SF_OP_MMA_FMA,
    SF_OP_MMA_MUL,
    SF_OP_MMA_ADD,
    SF_OP_MMA_STORE,
    SF_OP_MMA_EXACT
};

/*----------------------------------------------------------------------------
 * Presets (contract names):
 *   sm70        Volta HMMA, FP16 inputs: FUSED n=4, F=23, truncate, RZ
 *   sm80        Ampere/Ada mma bf16/f16: FUSED n=8, F=24, truncate, RZ
 *               (a k16 instruction is two chained k8 blocks)
 *   sm90        Hopper mma.sync/wgmma bf16/f16: FUSED n=16, F=25,
 *               truncate, RZ
 *   sm90-k8     Hopper mma.sync.m16n8k8 bf16/f16: FUSED n=8, F=25
 *   sm90-tf32   Hopper TF32: n=8, F=25;  sm90-fp8: E4M3/E5M2, n=32, F=13
 *   sm100       Blackwell tcgen05 bf16/f16: FUSED n=16, F=25, RZ
 *   avx512bf16  VDPBF16PS: per FP32 lane two FMAs, odd element first,
 *               RNE, DAZ, FTZ, x86 NaN priority
 *   amx         TDPBF16PS: two FMA chains (even/odd elements) from +0
 *               over the 32 products of a full tile row, summed, then
 *               added to C; RNE, DAZ, FTZ
 *   arm-bfdot   BFDOT with FEAT_EBF16 off: products and sums rounded to
 *               odd, FTZ/DAZ, default NaN, overflow to Inf
 *   arm-ebf16   BFDOT with FPCR.EBF = 1: each pair fused and rounded once
 *               (RNE), then added to C (RNE), default NaN
 *   fma-chain   sequential FP32 FMA (RNE)
 *   exact       exact dot product plus C, one rounding (RNE)
 * and the extra names mul-add, pairwise, kahan (FP32, RNE) and
 * fma-chain-bf16acc (FP32 FMA with the accumulator stored as BF16, RNE).
 * The NVIDIA presets use the canonical NaN 0x7FFFFFFF, overflow to Inf
 * and +0 for every zero result; the Hopper ones ignore a zero C and clamp
 * emax >= -133 (measured on an H200), the others let a zero C take part
 * with exponent -126 (MMA-Sim).  doc/mma-models.md gives the evidence for
 * each preset and what is unverified.
 *--------------------------------------------------------------------------*/
/* The preset called NAME, or NULL. */
const sf_mma_model *sf_mma_preset_by_name(const char *name);
/* The variant of preset NAME for inputs of format IN (e.g. "sm90" with
   E4M3 gives sm90-fp8), or NULL when the preset has no such input. */
const sf_mma_model *sf_mma_preset_for(const char *name, const sf_format *in);
/* Presets by index, 0 <= i < sf_mma_preset_count(). */
size_t sf_mma_preset_count(void);
const sf_mma_model *sf_mma_preset(size_t i);

/* NULL if M is usable, else why not (a static string). */
const char *sf_mma_model_check(const sf_mma_model *m);

/*----------------------------------------------------------------------------
 * Evaluation.  ENV supplies the sticky flags, the event sink and the SR
 * state; the model's own daz, ftz, tininess, NaN and overflow settings
 * replace ENV's during the call (ENV's are restored).  Flags: those of
 * every rounding, plus inexact when alignment discarded non-zero bits.
 * The model must pass sf_mma_model_check.
 *--------------------------------------------------------------------------*/
/* One block: the N products a[i] * b[i] (N <= m->n unless m->n == 0)
   and the accumulator C; returns the new accumulator.  A has format FA,
   B format FB; bits in the low storage_bits of each element. */
uint64_t sf_mma_block(const sf_mma_model *m, const sf_format *fa,
                      const uint64_t *a, const sf_format *fb,
                      const uint64_t *b, size_t n, uint64_t c, sf_env *env);

/* The dot product of K elements, chained through C in blocks of m->n in
   ascending index order.  A and B point at elements of storage_bits / 8
   bytes (uint8_t, uint16_t or uint32_t), element i at A + i * A_STRIDE
   (strides in elements). */
uint64_t sf_mma_dot(const sf_mma_model *m, const sf_format *fa, const void *a,
                    ptrdiff_t a_stride, const sf_format *fb, const void *b,
                    ptrdiff_t b_stride, size_t k, uint64_t c, sf_env *env);

/* GEMM: D = A * B + C with A [M x K], B [K x N], C and D [M x N], all
   row-major; each D[i][j] is sf_mma_dot of row i of A and column j of B
   with C[i][j] (C NULL: +0).  A and B hold elements of storage_bits / 8
   bytes; C and D accumulator bits in uint32_t.  D may alias C.

   Paths.  Every path gives the same bits and flags; they differ only in
   speed.  The models of sf_mma_gemm_covers (the truncating fused models
   with BF16 or FP16 inputs: the NVIDIA presets) have a tiled path that
   decodes each input once per tile and three kernels for it: portable C,
   AVX2 (with FMA, F16C and BMI2) and AVX-512; blocks that hold an Inf or
   NaN operand go through the one-block code.  The FP32 FMA chain
   (fma-chain: RNE, no FTZ or DAZ) with finite FP32, BF16 or FP16
   operands and C runs, under SF_MMA_PATH_AUTO on a CPU with AVX2 or
   AVX-512 allowed by env->isa, on the host's binary32 FMA instructions
   (correctly rounded, so the same bits; the host's MXCSR set to its
   default around the kernel and put back; any block that overflows or
   underflows recomputed in software for the flags) and returns
   SF_MMA_PATH_SCALAR.  Other models, and any call while ENV has an event
   sink, take one dot product per element.

   PATH and env->isa combine so: env->isa (sf_isa, 0 = auto) caps the
   instruction set any path may use; SF_MMA_PATH_AUTO takes the fastest
   kernel under the cap that covers the model; SF_MMA_PATH_SCALAR takes
   portable C whatever the cap; SF_MMA_PATH_AVX2 and SF_MMA_PATH_AVX512
   demand that kernel and fail (return -1, nothing written) when the CPU
   lacks it, env->isa caps below it, the model is not covered or ENV has
   an event sink. */
typedef enum
{
    SF_MMA_PATH_AUTO,   /* the fastest path allowed (see above) */
    SF_MMA_PATH_SCALAR, /* portable C */
    SF_MMA_PATH_AVX512, /* AVX-512: needs the CPU features and a model it
                           covers (sf_mma_gemm_avx512_covers) */
    SF_MMA_PATH_AVX2    /* AVX2: needs AVX2, FMA, F16C, BMI2 and a
                           covered model */
} sf_mma_path;

/* Returns the path used (SF_MMA_PATH_SCALAR, SF_MMA_PATH_AVX2 or
   SF_MMA_PATH_AVX512), or -1 when the requested PATH cannot run (nothing
   is written then). */
int sf_mma_gemm(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                const sf_format *fa, const void *a, const sf_format *fb,
                const void *b, const uint32_t *c, uint32_t *d,
                sf_mma_path path, sf_env *env);

/* D = A * B^T + C: sf_mma_gemm with B given transposed, BT (COLS x K,
   row-major: column j of B is row j of BT), same bits and flags.  With
   one row of BF16 inputs, the AVX2 and AVX-512 paths read BT's rows
   directly (sf_mma_gemm_nt_direct; A's elements zero or of exponent
   -63 .. 63); otherwise B is transposed into allocated memory and
   sf_mma_gemm runs (element by element, without memory, when none can
   be had).  Returns what sf_mma_gemm returns. */
int sf_mma_gemm_nt(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                   const sf_format *fa, const void *a, const sf_format *fb,
                   const void *bt, const uint32_t *c, uint32_t *d,
                   sf_mma_path path, sf_env *env);
/* Whether sf_mma_gemm_nt with these arguments may take the path that
   reads BT directly (it still checks A's values). */
bool sf_mma_gemm_nt_direct(const sf_mma_model *m, size_t rows,
                           const sf_format *fa, const sf_format *fb,
                           sf_mma_path path, const sf_env *env);

/* The path sf_mma_gemm would take for M, FA, FB, PATH and ENV (its
   event sink and isa), or -1; computes nothing. */
int sf_mma_gemm_choose(const sf_mma_model *m, const sf_format *fa,
                       const sf_format *fb, sf_mma_path path,
                       const sf_env *env);

/* Whether the tiled kernels cover model M with inputs FA, FB:
   SF_MMA_FUSED with C in the block, SF_MMA_ALIGN_TRUNC, F <= 40,
   n <= 64, SF_RTZ, FP32 accumulator, BF16 or FP16 inputs, no FTZ, the
   default-NaN rule, +0 for zero sums, no storage rounding (the NVIDIA
   presets with 16-bit inputs).  sf_mma_gemm_avx512_covers is the same
   test under its older name. */
bool sf_mma_gemm_covers(const sf_mma_model *m, const sf_format *fa,
                        const sf_format *fb);
bool sf_mma_gemm_avx512_covers(const sf_mma_model *m, const sf_format *fa,
                               const sf_format *fb);
/* Whether the running CPU has the AVX-512 kernel (AVX512F, AVX512CD and
   OS support), and the AVX2 kernel (AVX2, FMA, F16C, BMI2), and the build
   has it. */
bool sf_mma_gemm_avx512_available(void);
bool sf_mma_gemm_avx2_available(void);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_SOFTFLOAT_MMA_H */
