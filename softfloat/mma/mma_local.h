/* mma_local.h -- internals shared by the accumulation-model sources */
#ifndef BF16EMU_SOFTFLOAT_MMA_LOCAL_H
#define BF16EMU_SOFTFLOAT_MMA_LOCAL_H

#include "softfloat/internal.h"
#include "softfloat/mma.h"

/* A strided vector of input bit patterns: element i is the SIZE-byte
   unsigned integer at (const char *)p + i * stride * size. */
typedef struct
{
    const void *p;
    ptrdiff_t stride;
    unsigned size; /* 1, 2, 4 or 8 */
} s_mma_vec;

static inline uint64_t
s_mma_ld(const s_mma_vec *v, size_t i)
{
    ptrdiff_t off = (ptrdiff_t)i * v->stride;

    switch (v->size) {
    case 1:
        return ((const uint8_t *)v->p)[off];
    case 2:
        return ((const uint16_t *)v->p)[off];
    case 4:
        return ((const uint32_t *)v->p)[off];
    default:
        return ((const uint64_t *)v->p)[off];
    }
}

/* The parts of ENV a model replaces, saved by s_mma_enter. */
typedef struct
{
    bool daz, ftz, tininess_after, saturate;
    sf_nan_rule nan_rule;
    sf_default_nan default_nan;
} s_mma_saved;

/* Install M's daz, ftz, tininess, NaN and saturation rules in ENV. */
void s_mma_enter(const sf_mma_model *m, sf_env *env, s_mma_saved *saved);
void s_mma_leave(sf_env *env, const s_mma_saved *saved);

/* The block of N products starting at index K0 of A and B (K0 is used for
   events only; A and B are already offset) applied to accumulator C,
   under an entered ENV; includes the storage rounding. */
uint64_t s_mma_block(const sf_mma_model *m, const sf_format *fa,
                     const s_mma_vec *a, const sf_format *fb,
                     const s_mma_vec *b, size_t n, size_t k0, uint64_t c,
                     sf_env *env);

/* The whole dot product under an entered ENV. */
uint64_t s_mma_dot(const sf_mma_model *m, const sf_format *fa,
                   const s_mma_vec *a, const sf_format *fb, const s_mma_vec *b,
                   size_t k, uint64_t c, sf_env *env);

/* Round (-1)^sign * (sig + tail) * 2^exp to F with mode RM through
   s_round_pack, then apply M's overflow rule (the event, if any, reports
   the final result). */
uint64_t s_mma_round(const sf_mma_model *m, const sf_format *f, bool sign,
                     int32_t exp, s_u128 sig, bool tail, sf_round rm,
                     sf_env *env, const s_opctx *ctx);

/* One rounded step in the accumulator format m->acc. */
uint64_t s_mma_fma(const sf_mma_model *m, const sf_format *fa, uint64_t a,
                   const sf_format *fb, uint64_t b, uint64_t c, sf_env *env);
uint64_t s_mma_mul(const sf_mma_model *m, const sf_format *fa, uint64_t a,
                   const sf_format *fb, uint64_t b, sf_env *env);
uint64_t s_mma_add(const sf_mma_model *m, uint64_t x, uint64_t y, sf_env *env);
/* The NaN result when an operand is a NaN: (FF, FV) is the first NaN
   operand in the model's order; ANY_SNAN whether any is signalling. */
uint64_t s_mma_nan_result(const sf_mma_model *m, const sf_format *ff,
                          uint64_t fv, bool any_snan, sf_env *env);
/* The sign of an exact zero sum under M and RM: ALL_ZERO when every term
   was a zero of one sign, NEG_ALL when that sign is negative (mixed zeros
   and exact cancellations pass false, false). */
bool s_mma_zero_sign(const sf_mma_model *m, sf_round rm, bool all_zero,
                     bool neg_all);
/* The storage rounding of the accumulator (identity without m->store). */
uint64_t s_mma_store(const sf_mma_model *m, uint64_t acc, sf_env *env);

/* The fused block (SF_MMA_FUSED) and the exact rounding (SF_MMA_EXACT),
   without the storage rounding. */
/* WITH_C: C is a term (else the block sum alone is rounded and C is
   ignored); EXACT: nothing is discarded whatever m->frac_bits says. */
uint64_t s_mma_fused(const sf_mma_model *m, const sf_format *fa,
                     const s_mma_vec *a, const sf_format *fb,
                     const s_mma_vec *b, size_t n, size_t k0, uint64_t c,
                     bool with_c, bool exact, sf_env *env);

/* The GEMM as one dot product per element (any model; the reference
   the tiled paths are tested against). */
void s_mma_gemm_dots(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                     const sf_format *fa, const void *a, const sf_format *fb,
                     const void *b, const uint32_t *c, uint32_t *d,
                     sf_env *env);

/* The AVX-512 GEMM; false (nothing written) when the CPU lacks it.  The
   caller has checked the model with sf_mma_gemm_avx512_covers and that
   ENV has no event sink. */
bool s_mma_gemm_avx512(const sf_mma_model *m, size_t rows, size_t cols,
                       size_t k, const sf_format *fa, const void *a,
                       const sf_format *fb, const void *b, const uint32_t *c,
                       uint32_t *d, sf_env *env);

/*----------------------------------------------------------------------------
 * One row of BF16 on the host's binary32 unit (gemm_avx512.c,
 * gemm_avx2.c).
 *
 * Why it gives the block's bits.  A BF16 value is a binary32 value (its
 * bits shifted left by 16), so decoding is a shift.  When every non-zero
 * input of a block is a normal number of exponent -63 .. 63 (checked
 * before any floating-point operation), a product of two of them has at
 * most 16 significant bits and a magnitude in [2^-126, 2^128): the host's
 * binary32 product is exact.  The block's emax is the largest exponent
 * sum E_a + E_b of a non-zero product (not the product's own exponent,
 * which may be one more): it is the exponent of 2^E_a 2^E_b, the exact
 * product of the two values with their fractions cleared (0 when one is
 * zero).  With q = emax - F, the kept part of a product is its value
 * times 2^-q truncated toward zero: scaling by 2^-q is exact unless the
 * result falls below 2^-126 (then it is rounded once), and cvttps2dq
 * truncates; both raise the host's inexact flag exactly when bits are
 * discarded (a scaled product that is rounded is below 1, so its kept
 * part is 0 and it lost bits).  The kept parts are below 2^(F+2) and, for
 * a model with pl->narrow, their sum fits 32 bits, as in the integer
 * kernels; C, the normalisation and the flags of the result are the
 * integer kernels'.  The host state: around the GEMM the path loads MXCSR
 * with its default (round to nearest even, FTZ and DAZ off, exceptions
 * masked, flags clear), maps the inexact flag it reads back afterwards to
 * SF_FLAG_INEXACT and restores the caller's MXCSR; a block outside the
 * range is checked before any floating-point operation and goes to the
 * integer or scalar code, which raises no host flag.
 *
 * Checked by the host's flags (the models of 16-product blocks, the
 * decode step's: fast_nt and fast_row in both files).  B is not range
 * checked: chunks of up to S_MMA_FP_CHUNK columns are computed into a
 * buffer, and MXCSR is the check.  Pass 1 multiplies each input x of B
 * by 2^E_a and keeps the larger magnitude (AVX-512: vrangeps), or
 * multiplies 2^E_b by 2^E_a and takes a float maximum (AVX2); pass 2
 * multiplies x by a and scales.  When none of the invalid, denormal,
 * divide-by-zero, overflow and underflow flags was raised by a chunk: no
 * operand was subnormal (a subnormal x meets its product with 2^E_a or
 * a, a subnormal product its maximum or its scaling, and the denormal
 * flag is raised even when the other operand is zero), no product
 * overflowed or was rounded below 2^-126, and no Inf or NaN was
 * converted (an Inf or NaN x stays one through its products, or becomes
 * NaN with the invalid flag, and cvttps2dq of it raises invalid).  So
 * every x is zero or a normal number and every product x a and x 2^E_a
 * is exact and zero or normal: the argument above holds, the exponent
 * range of B having only made that sure in advance.  Otherwise (also
 * for an Inf or NaN accumulator, whose rules are the scalar block's, and
 * on AVX2 a q outside the scaling's range) the chunk is thrown away,
 * MXCSR is put back as it was before the chunk (its inexact flag is the
 * earlier chunks'), and the range-checked code computes the chunk.  A
 * scaled product rounded below 2^-126 raises underflow and throws its
 * chunk away though the argument allows it (its block's products span
 * more than 2^150).  D is written only after the check, so C may be D.
 * A block's total (kept parts below 2^31 under pl->narrow, C's term
 * below 2^30) is normalised in 32-bit lanes on AVX-512 unless the
 * addition overflows (then in 64-bit lanes, as the integer kernels).
 *--------------------------------------------------------------------------*/
#define S_MMA_MXCSR_DEFAULT 0x1F80u
#define S_MMA_MXCSR_PE 0x20u
/* |x| of a BF16 input the path takes: 0, or a normal number of exponent
   -63 .. 63 (fields 64 .. 190) */
#define S_MMA_FP_ABS_MIN 0x2000u
#define S_MMA_FP_ABS_MAX 0x5F7Fu
/* the longest row of A the path takes */
#define S_MMA_FP_ROW_MAX 1024
/* MXCSR's invalid, denormal, divide-by-zero, overflow and underflow
   flags */
#define S_MMA_MXCSR_BAD 0x1Fu
/* columns of the flag-checked path between two looks at MXCSR */
#define S_MMA_FP_CHUNK 128

/* N rows of BYTES at P (rows LD elements apart) asked into the cache
   ahead of the block that reads them: with one row of A, B streams from
   memory once. */
static inline void
s_mma_prefetch_rows(const uint16_t *p, size_t ld, size_t n, size_t bytes)
{
#if defined(__GNUC__)
    for (size_t r = 0; r < n; r++)
        for (size_t o = 0; o < bytes; o += 64)
            __builtin_prefetch((const char *)(const void *)(p + r * ld) + o);
#else
    (void)p;
    (void)ld;
    (void)n;
    (void)bytes;
#endif
}

/* Whether the N elements of A are in the path's range (and N is at most
   S_MMA_FP_ROW_MAX). */
bool s_mma_fp_row_ok(const uint16_t *a, size_t n);
/* A[0 .. LEN-1] as binary32 bits (AW) and the powers of two 2^E of their
   magnitudes (AP, 0 for a zero); false when one is out of range. */
bool s_mma_fp_side_a(const uint16_t *a, size_t len, uint32_t *aw,
                     uint32_t *ap);

/* D = A B^T + C (BT: COLS x K, row-major) on the AVX-512 binary32 path
   for one row of BF16 (sf_mma_gemm_nt); false (nothing written) when it
   does not apply: not one row, a model or format it does not cover, no
   such CPU, or an element of A outside its range. */
bool s_mma_gemm_nt_avx512_covers(const sf_mma_model *m, size_t rows,
                                 const sf_format *fa, const sf_format *fb);
bool s_mma_gemm_nt_avx512(const sf_mma_model *m, size_t rows, size_t cols,
                          size_t k, const sf_format *fa, const void *a,
                          const sf_format *fb, const void *bt,
                          const uint32_t *c, uint32_t *d, sf_env *env);
/* The same on AVX2 (gemm_avx2.c). */
bool s_mma_gemm_nt_avx2_covers(const sf_mma_model *m, size_t rows,
                               const sf_format *fa, const sf_format *fb);
bool s_mma_gemm_nt_avx2(const sf_mma_model *m, size_t rows, size_t cols,
                        size_t k, const sf_format *fa, const void *a,
                        const sf_format *fb, const void *bt, const uint32_t *c,
                        uint32_t *d, sf_env *env);

/*----------------------------------------------------------------------------
 * One row of BF16 on the host's binary32 unit in portable C
 * (gemm_row_c.c): the products and their scaling as above, but no host
 * flag is read.  Every element of A and of B is checked in integers to be
 * zero or a normal number of exponent -63 .. 63 before the block's float
 * operations use it, so every product x a and x 2^E_a is exact and zero
 * or normal, whatever the host's rounding mode and FTZ/DAZ state.  A
 * block's q must lie in -126 .. 126 (2^q and 2^-q normal); then a scaled
 * product is exact unless it falls below 2^-126, where its kept part is 0
 * however it was rounded or flushed.  The C conversion truncates toward
 * zero in every rounding mode, and a kept part (below 2^(F+2) <= 2^31)
 * has at most the 16 significant bits of its product, so converting it
 * back and multiplying by 2^q is exact: the product lost bits exactly
 * when that differs from it, which is the inexact flag the integer
 * kernels compute.  A block with an operand out of range, a q out of
 * range or an Inf or NaN accumulator sends its column (B^T) or its
 * group of columns (B) to one sf_mma_dot each, from C.
 *--------------------------------------------------------------------------*/
/* Whether model M with inputs FA, FB has that path (BF16 both, blocks of
   at most 16 products whose kept parts sum in 32 bits); the caller has
   checked sf_mma_gemm_covers. */
bool s_mma_row_c_covers(const sf_mma_model *m, const sf_format *fa,
                        const sf_format *fb);
/* D = A B^T + C for one row of A (K elements) and the COLS x K matrix BT,
   under an entered ENV; false (nothing written) when an element of A is
   out of range or K is above S_MMA_FP_ROW_MAX.  C may be D. */
bool s_mma_gemm_nt_c(const sf_mma_model *m, size_t cols, size_t k,
                     const uint16_t *a, const uint16_t *bt, const uint32_t *c,
                     uint32_t *d, sf_env *env);
/* The same for B as stored (K x COLS). */
bool s_mma_gemm_row_c(const sf_mma_model *m, size_t cols, size_t k,
                      const uint16_t *a, const uint16_t *b, const uint32_t *c,
                      uint32_t *d, sf_env *env);

/*----------------------------------------------------------------------------
 * The tiled GEMM of the truncating fused models (sf_mma_gemm_avx512_covers):
 * A and B are decoded once per tile into signed significands and
 * exponents, and a kernel computes one block of pl->lanes output columns
 * of one row at a time.  Kernels: portable C (gemm_fast.c), AVX2
 * (gemm_avx2.c).
 *--------------------------------------------------------------------------*/
#define S_MMA_LANES 16  /* most columns a kernel takes at once */
#define S_MMA_TILE_N 64 /* largest block a kernel takes */
/* Exponent of a zero significand: far below any product, so a zero term
   never sets the block's maximum, and its shift count is huge. */
#define S_MMA_ZERO_E (-(INT32_C(1) << 24))

/* The fields of a 16-bit input format, for decoding. */
typedef struct
{
    uint32_t fb, emask, fmask, hidden, smask;
    int32_t ebias; /* bias + fraction bits + shift */
    int32_t shift; /* the significand is stored times 2^shift */
    uint32_t daz;  /* all ones: a subnormal reads as zero */
} s_mma_dec;

s_mma_dec s_mma_dec_init(const sf_format *f, bool daz, int32_t shift);
/* The N elements X[i] decoded into SIG[i], E[i] (the tile layout below),
   without branches on the data; returns whether one of them is Inf or
   NaN (then a zero is stored for it). */
bool s_mma_decode(const s_mma_dec *d, const uint16_t *x, size_t n,
                  int32_t *sig, int32_t *e);
/* The same for pl->lanes elements, vectorised. */
typedef bool s_mma_decoder(const s_mma_dec *d, const uint16_t *x, int32_t *sig,
                           int32_t *e);

typedef struct s_mma_plan s_mma_plan;
/* One row of A (as stored: A; decoded: AS, AE) against LEN rows of
   pl->lanes columns of B as stored (row t at B + t * LD), decoded here:
   the kernel's contract, and also false, changing nothing, when an
   element of B is Inf or NaN.  For a GEMM of one row, where decoding B
   apart from the kernel costs as much as the kernel. */
typedef bool s_mma_rowkernel(const s_mma_plan *pl, const s_mma_dec *db,
                             const uint16_t *a, const int32_t *as,
                             const int32_t *ae, const uint16_t *b, size_t ld,
                             size_t len, uint32_t *acc, unsigned *flags);

struct s_mma_plan
{
    const sf_mma_model *m;
    const sf_format *fa, *fb;
    s_mma_decoder *decode; /* NULL: s_mma_decode */
    s_mma_rowkernel *row;  /* NULL: decode, then the kernel */
    int32_t f;             /* m->frac_bits */
    int32_t lb;            /* B's significands are stored times 2^lb */
    int32_t qadd;          /* a product with stored exponent sum e has the
                              unnormalised exponent e + qadd (= lb + fab) */
    int32_t lp;            /* the kernel multiplies each product by 2^lp more:
                              lb + lp = max(F - fab, 0), so a product's shift to
                              the grid is never negative */
    size_t lanes;          /* columns per kernel call (at most S_MMA_LANES) */
    bool narrow;           /* the products times 2^(lb + lp) and every block's
                              sum of them fit in int32 */
    uint32_t ovf_bits;     /* an overflowing result (sign apart) */
};

/* A decoded tile: element (k, l) of B at bs[k * pl->lanes + l]; A's
   row at as[k].  Significands carry the sign; a zero (or a DAZ-flushed
   subnormal) has significand 0 and exponent S_MMA_ZERO_E; an exponent is
   that of the significand's bit 0.  ACC: pl->lanes accumulators, updated
   in place.  Returns false, changing nothing, when an accumulator is Inf
   or NaN. */
typedef bool s_mma_kernel(const s_mma_plan *pl, const int32_t *as,
                          const int32_t *ae, const int32_t *bs,
                          const int32_t *be, size_t len, uint32_t *acc,
                          unsigned *flags);

/* PL for model M with inputs FA, FB and LANES columns per kernel call;
   LB: whether B's significands are stored pre-shifted (the 32-bit
   kernels). */
void s_mma_plan_init(s_mma_plan *pl, const sf_mma_model *m,
                     const sf_format *fa, const sf_format *fb, size_t lanes,
                     bool lb);
/* The tiled GEMM with KERNEL (same contract as sf_mma_gemm, under an
   entered ENV). */
void s_mma_gemm_tiled(const s_mma_plan *pl, s_mma_kernel *kernel, size_t rows,
                      size_t cols, size_t k, const void *a, const void *b,
                      const uint32_t *c, uint32_t *d, sf_env *env);
/* The accumulator ACC (finite) as a term of a block whose largest
   product exponent is EP (the unnormalised exponent of 2^E_a 2^E_b; far
   below any real one when the block has no non-zero product): the grid
   exponent q of the block into *Q, C's part on that grid (signed,
   truncated) returned, the bits it lost ORed into *LOST. */
static inline int64_t
s_mma_c_grid(const s_mma_plan *pl, uint32_t acc, int32_t ep, int32_t *q,
             uint64_t *lost)
{
    const sf_mma_model *m = pl->m;
    uint32_t cef = (acc >> 23) & 0xFF, cfr = acc & 0x7FFFFF;
    uint64_t csig = cef != 0 ? cfr | 0x800000u : m->daz ? 0 : cfr, kc;
    int32_t celow = (int32_t)(cef != 0 ? cef : 1) - 150;
    int32_t emax = ep, shc;

    if (csig != 0)
        emax = celow + 23 > emax ? celow + 23 : emax;
    else if (m->zero_c_in_max && m->acc->emin > emax)
        emax = m->acc->emin;
    if (m->emax_floor != SF_MMA_NO_FLOOR && emax < m->emax_floor)
        emax = m->emax_floor;
    *q = emax - pl->f;
    /* C on the grid: shc >= 23 - F >= -17 when C is not zero */
    shc = *q - celow;
    if (csig == 0) {
        kc = 0;
    } else if (shc <= 0) {
        kc = csig << -shc;
    } else {
        int32_t s = shc > 63 ? 63 : shc;
        kc = csig >> s;
        *lost |= csig ^ (kc << s);
    }
    return (acc >> 31) != 0 ? -(int64_t)kc : (int64_t)kc;
}

/* A block's total SUM on the grid 2^Q normalised once and truncated (RZ)
   to FP32 (a total that truncates to zero is +0, SF_MMA_ZERO_POS); the
   flags it raises ORed into *FL. */
static inline uint32_t
s_mma_finish64(const s_mma_plan *pl, int64_t sum, int32_t q, unsigned *fl)
{
    bool neg = sum < 0, normal, ovf, inexf;
    uint64_t mag = neg ? (uint64_t)0 - (uint64_t)sum : (uint64_t)sum;
    uint64_t mm, bits;
    int32_t t, ex, sh;

    if (mag == 0)
        return 0;
    t = 63 - s_clz64(mag);
    ex = q + t;
    sh = t - 23 > -149 - q ? t - 23 : -149 - q;
    if (sh <= 0) {
        mm = mag << -sh;
        inexf = false;
    } else {
        int32_t s = sh > 63 ? 63 : sh;
        mm = mag >> s;
        inexf = (mm << s) != mag;
    }
    normal = ex >= -126;
    ovf = ex > 127;
    bits = ((uint64_t)(normal ? ex + 126 : 0) << 23) + mm;
    if (ovf) {
        bits = pl->ovf_bits;
        *fl |= SF_FLAG_OVERFLOW | SF_FLAG_INEXACT;
    }
    if (neg && (mm != 0 || ovf))
        bits |= 0x80000000u;
    if (inexf)
        *fl |= normal ? SF_FLAG_INEXACT : SF_FLAG_INEXACT | SF_FLAG_UNDERFLOW;
    return (uint32_t)bits;
}

/* The portable kernel, S_MMA_C_LANES columns. */
#define S_MMA_C_LANES 8
s_mma_kernel s_mma_kernel_c;
/* The AVX2 GEMM; false (nothing written) when the CPU lacks AVX2, FMA,
   F16C or BMI2 or the build has no such path. */
bool s_mma_gemm_avx2(const sf_mma_model *m, size_t rows, size_t cols, size_t k,
                     const sf_format *fa, const void *a, const sf_format *fb,
                     const void *b, const uint32_t *c, uint32_t *d,
                     sf_env *env);
/* The FP32 FMA chain on the host's FMA unit (gemm_chain.c): the ISA
   (SF_ISA_AVX2 or SF_ISA_AVX512) it would take for model M under ENV
   (entered), or 0 when it cannot (no such CPU or build, an event sink,
   FTZ, DAZ or tininess before rounding). */
int s_mma_chain_native_isa(const sf_mma_model *m, const sf_env *env);
/* D = A * B + C (C NULL: +0) as per-element FP32 FMA chains in RNE,
   bit for bit and flag for flag those of sf_f32_fma; A (ROWS x K), B
   (K x COLS), C and D (ROWS x COLS) FP32 row-major and finite; C may be
   D; TMP holds 4 * COLS words. */
void s_mma_chain_native(int isa, size_t rows, size_t cols, size_t k,
                        const uint32_t *a, const uint32_t *b,
                        const uint32_t *c, uint32_t *d, uint32_t *tmp,
                        sf_env *env);

/* Rows I0 to I0 + NR - 1 of the chains' D = A * B + C by sf_f32_fma (CI:
   those rows of C, or NULL for +0; it may alias D): the blocks the two
   host chains below hand back to software. */
static inline void
s_mma_chain_rows_soft(size_t i0, size_t nr, size_t cols, size_t k,
                      const uint32_t *a, const uint32_t *b,
                      const uint32_t *ci, uint32_t *d, sf_env *env)
{
    for (size_t r = 0; r < nr; r++)
        for (size_t j = 0; j < cols; j++) {
            sf_f32 acc = {ci != NULL ? ci[r * cols + j] : 0};
            for (size_t t = 0; t < k; t++)
                acc = sf_f32_fma((sf_f32){a[(i0 + r) * k + t]},
                                 (sf_f32){b[t * cols + j]}, acc, SF_RNE, env);
            d[(i0 + r) * cols + j] = acc.bits;
        }
}

/* The fewest products (rows x cols x k) for which sf_mma_gemm runs the
   chain of gemm_chain_fmaf.c: below, the self-check and the environment
   calls cost more than the software chain. */
#define S_MMA_FMAF_MIN 64
/* The same chain in binary64 arithmetic (gemm_chain_fmaf.c): whether
   model M under ENV (entered) meets the path's conditions (no event sink,
   FTZ, DAZ or tininess before rounding; a build with <fenv.h>'s default
   environment and the five exception flags, and FLT_EVAL_METHOD 0). */
bool s_mma_chain_fmaf_ok(const sf_mma_model *m, const sf_env *env);
/* s_mma_chain_native's contract in binary64 arithmetic, in the default
   floating environment (the caller's put back): false, nothing written,
   when the environment cannot be set or the kernel fails the
   self-check. */
bool s_mma_chain_fmaf(size_t rows, size_t cols, size_t k, const uint32_t *a,
                      const uint32_t *b, const uint32_t *c, uint32_t *d,
                      uint32_t *tmp, sf_env *env);

#endif /* BF16EMU_SOFTFLOAT_MMA_LOCAL_H */
