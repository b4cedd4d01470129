/* dump_outputs.h -- the outputs of a GPU dump: stored whole, or some rows
   of them with the hash of the whole (the manifest's "outputs_kept") */
#ifndef BF16EMU_ANALYSIS_DUMP_OUTPUTS_H
#define BF16EMU_ANALYSIS_DUMP_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A dump (a .safetensors file with a JSON "manifest" in its metadata) may
 * store only some rows of an output and describe the rest by a hash:
 *
 *   "outputs_kept": {
 *     "dk": {"shape": [B, H, N, d],
 *            "rows": [[a0, b0], [a1, b1], ...],
 *            "hash": "0x<16 hex digits>"},
 *     "lse": {"shape": [B, H, N], ...}, ...
 *   }
 *
 * The key is the tensor's name in the file (any name: "dk", "nd.dq",
 * "math.dv").  shape is the whole tensor as the GPU wrote it (3 or 4
 * dimensions, each at least 1); rows are half-open ranges [a, b) of the
 * N axis (axis 2), 0 <= a < b <= N, in increasing order with a gap
 * between two ranges (a > the previous b: adjacent ranges are written as
 * one), at most DUMP_KEPT_MAX_RANGES of them.  The file stores those rows of
 * every (b, h), in order: its tensor is shape with N replaced by the
 * number of rows kept, same dtype.  hash is the hash of the whole tensor
 * (dump_hash below), so a reader can check a tensor it computes whole
 * against every element the GPU wrote, not only the kept ones.
 *
 * The hash is the fixgen tensor hash (analysis/fixgen.h) over the tensor's
 * data as 16-bit little-endian words, in C order: a BF16 or F16 tensor of
 * n elements is its n bit patterns; an F32 tensor of n elements is 2n
 * words, the low half of element i (bits 0..15) at word 2i and the high
 * half at word 2i + 1.
 */

#define DUMP_KEPT_MAX_RANGES 4096

typedef struct
{
    bool kept;         /* false: the file stores the whole tensor */
    unsigned ndim;     /* of the whole tensor, 3 or 4 */
    uint64_t shape[4]; /* the whole tensor */
    size_t n_ranges;
    uint64_t (*ranges)[2]; /* [a, b) of the N axis, malloc'ed */
    uint64_t n_rows;       /* rows kept: the sum of b - a */
    uint64_t hash;         /* of the whole tensor */
} dump_kept;

#define DUMP_KEPT_INIT                                                        \
    {                                                                         \
        false, 0, {0}, 0, NULL, 0, 0                                          \
    }

void dump_kept_free(dump_kept *k);

/* Reads output KEY of the dump PATH into *OUT (empty, TENSOR_INIT) as
   the file stores it, and what its manifest says of it into *KEPT
   (DUMP_KEPT_INIT; kept false when outputs_kept does not name KEY).
   WANT is checked as by safetensors_read.  Errors: the reader's;
   E_FORMAT with "PATH: manifest: outputs_kept.KEY.FIELD: ..." when the
   description is malformed or does not fit the stored tensor.  On error
   *OUT and *KEPT stay empty. */
int dump_output_read(const char *path, const char *key, tensor_dtype want,
                     tensor *out, dump_kept *kept, tensor_error *err);

/* What PATH's manifest says of output KEY into *KEPT (DUMP_KEPT_INIT),
   checked against the file's listing; the errors of dump_output_read.
   A .npy file, or a safetensors file without a manifest, keeps every
   tensor whole. */
int dump_output_kept(const char *path, const char *key, dump_kept *kept,
                     tensor_error *err);

/* Checks every entry of PATH's outputs_kept against the file (as
   dump_output_read does for one); TENSOR_OK when there is none. */
int dump_outputs_check(const char *path, tensor_error *err);

/* The whole tensor's row of row J of the kept rows (J < n_rows). */
uint64_t dump_kept_row(const dump_kept *k, uint64_t j);

/* Whether whole row R is kept. */
bool dump_kept_has_row(const dump_kept *k, uint64_t r);

/* The C-order index in the whole tensor of element I of the stored one
   (the identity when nothing was cut). */
uint64_t dump_kept_index(const dump_kept *k, const tensor *stored, uint64_t i);

/* The hash of a tensor of N 16-bit patterns B (BF16, F16). */
uint64_t dump_hash16(const uint16_t *b, size_t n);

/* The hash of a tensor of N 32-bit patterns B (F32): each element as its
   low then its high 16-bit half. */
uint64_t dump_hash32(const uint32_t *b, size_t n);

/* The hash of T (element size 2 or 4; 0 for other dtypes). */
uint64_t dump_hash_tensor(const tensor *t);

#ifdef __cplusplus
}
#endif

#endif
