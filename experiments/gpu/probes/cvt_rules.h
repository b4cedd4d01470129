/* cvt_rules.h -- the GPU's narrowing conversions as the emulator models
   them, and the chunk hashes that cvt_probe records, shared by the probe
   (which runs on the GPU's host) and the CPU-only fixture test */
#ifndef BF16EMU_CVT_RULES_H
#define BF16EMU_CVT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "softfloat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cvt_rule
{
    const char *key;  /* the fixture's name */
    const char *ptx;  /* the instruction */
    const char *rule; /* how the emulator reproduces it */
    const sf_format *fmt;
    sf_round rm;
    bool relu;     /* negative results become +0 */
    bool pair;     /* an x2 form: (a, b) = (x, -x), a in the upper half */
    bool sat;      /* .satfinite */
    bool nan_trunc; /* NaN bits truncated like any other bits (cvt.rna.tf32) */
    unsigned bytes; /* storage bytes of one result */
} cvt_rule;

#define CVT_NRULES 13
extern const cvt_rule cvt_rules[CVT_NRULES];

/* The rule called KEY, or NULL. */
const cvt_rule *cvt_rule_by_key(const char *key);

/* The emulator's result for FP32 input X (one element). */
uint32_t cvt_emulate(const cvt_rule *r, uint32_t x);

/* What the GPU's instruction returns for X: the element, or for an x2
   form the packed pair (emulated (x) << width | emulated (-x)). */
uint32_t cvt_emulate_packed(const cvt_rule *r, uint32_t x);

/* Chunks of 2^CVT_CHUNK_BITS inputs (chunk c holds c << CVT_CHUNK_BITS
   and up), hashed in parts of 2^CVT_PART_BITS: FNV-1a 64 over the results
   of each part in input order (each as little-endian bytes of the storage
   width), then FNV-1a 64 over the part hashes (8 little-endian bytes
   each). */
#define CVT_CHUNK_BITS 24
#define CVT_PART_BITS 20
#define CVT_NCHUNK 256
#define CVT_NPART (1u << (CVT_CHUNK_BITS - CVT_PART_BITS))
#define CVT_FNV_BASIS 1469598103934665603ull

/* Feed one result of BYTES bytes into an FNV-1a 64 hash. */
static inline uint64_t
cvt_fnv_feed(uint64_t h, uint32_t v, unsigned bytes)
{
    for (unsigned k = 0; k < bytes; k++) {
        h ^= (v >> (8 * k)) & 0xFF;
        h *= 1099511628211ull;
    }
    return h;
}

/* The hash of the emulator's results for part PART of chunk CHUNK. */
uint64_t cvt_part_hash(const cvt_rule *r, unsigned chunk, unsigned part);

/* The chunk hash from its CVT_NPART part hashes. */
uint64_t cvt_combine(const uint64_t *parts);

#ifdef __cplusplus
}
#endif

#endif /* BF16EMU_CVT_RULES_H */
