/* probe_tools.h -- what check_model and mma_fixture share: the Hopper
 * block-FMA model (the sm90 preset of softfloat/mma.h) under the three
 * readings of the all-tiny corner that they compare, for the vectors of
 * probe_vectors.h, and lookups in mma_probe's output files (read with
 * analysis/tensor.h).
 *
 * Every reading is sm90 (16 exact products and C aligned to the largest
 * exponent, truncated to 25 bits below it, summed exactly and rounded
 * toward zero to FP32, subnormals kept, canonical NaN 0x7FFFFFFF,
 * overflow to Inf, +0 for every zero result, K > 16 chained through C in
 * ascending k16 slices); they differ in how emax is found when every
 * term is tiny:
 *   TC_ZC_MINUS126  a zero C takes part with exponent -126, no clamp;
 *   TC_FLOOR133     a zero C is left out and emax is clamped to >= -133
 *                   (the sm90 preset itself);
 *   TC_PLAIN        a zero C is left out and there is no clamp. */
#ifndef BF16EMU_GPU_PROBE_TOOLS_H
#define BF16EMU_GPU_PROBE_TOOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/tensor.h"
#include "softfloat/mma.h"

enum
{
    TC_ZC_MINUS126 = 0,
    TC_FLOOR133 = 1,
    TC_PLAIN = 2,
    TC_NREADING = 3
};

typedef struct
{
    sf_mma_model m[TC_NREADING];
} tc_readings;

/* Fills R from the sm90 preset; false when the library has none. */
bool tc_readings_init(tc_readings *r);

/* D of one vector: K = 16, 32 or 64 products of A and B (bits of format
 * FMT, PV_BF16 or PV_F16) and the FP32 bits C, under READING. */
uint32_t tc_chain(const tc_readings *r, int reading, int fmt,
                  const uint16_t *a, const uint16_t *b, uint32_t c, int k);

/* The tensor NAME of F, or NULL. */
const tensor *tc_find_tensor(const tensor_file *f, const char *name);

/* The metadata value of KEY in F, or NULL. */
const char *tc_find_meta(const tensor_file *f, const char *key);

/* The input hash (FNV-1a, probe_vectors.h) that the probe's JSON manifest
 * MANIFEST records for tensor NAME ("tensors": [{"name": NAME,
 * "input_fnv1a": "<16 hex digits>", ...}, ...]), or 0 when MANIFEST is
 * NULL or malformed or has no such entry. */
unsigned long long tc_manifest_hash(const char *manifest, const char *name);

#endif
