/* bfma_model.h -- an independent integer model of one Hopper tensor-core
 * block FMA with FP32 accumulation, for the probe's CPU-side tools.
 *
 * One block: 16 exact products a[i]*b[i] (BF16 or FP16 bits) and c (FP32
 * bits).  Each product has exponent ea+eb (its significand in [1,4)), C
 * its own; subnormal inputs count with the format's minimum exponent.
 * Every nonzero term is aligned to the largest exponent emax and
 * truncated toward zero to 25 fractional bits below it; the truncated
 * terms are summed exactly and the sum is rounded toward zero to FP32,
 * subnormals included.  Any NaN, Inf*0 or Inf-Inf gives 0x7FFFFFFF;
 * otherwise an infinite term gives a signed infinity; a finite sum of
 * 2^128 or more gives infinity; every zero result is +0.
 *
 * The reading decides emax when every term is tiny:
 *   BFMA_ZC_MINUS126  a zero C takes part with exponent -126;
 *   BFMA_FLOOR133     a zero C is left out and emax is clamped to >= -133;
 *   BFMA_PLAIN        zero terms are left out and there is no clamp. */

#ifndef BF16EMU_BFMA_MODEL_H
#define BF16EMU_BFMA_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum
{
    BFMA_ZC_MINUS126 = 0,
    BFMA_FLOOR133 = 1,
    BFMA_PLAIN = 2,
    BFMA_NREADING = 3
};

/* One k16 block; fmt is PV_BF16 or PV_F16 (probe_vectors.h). */
uint32_t bfma_block(int fmt, const uint16_t *a, const uint16_t *b, uint32_t c,
                    int reading);

/* K = 16, 32 or 64 chained through C in ascending k16 slices. */
uint32_t bfma_chain(int fmt, const uint16_t *a, const uint16_t *b, uint32_t c,
                    int k, int reading);

#ifdef __cplusplus
}
#endif

#endif
