/* fixgen.h -- the fixture input generator: attention inputs that C and
   Python (experiments/gpu/fixgen.py) produce bit for bit with integer
   arithmetic only, so a GPU dump need not store them */
#ifndef BF16EMU_ANALYSIS_FIXGEN_H
#define BF16EMU_ANALYSIS_FIXGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The generator "splitmix64-ih12" (contract: the name, the constants and
 * every step below are fixed; a change is a new name).
 *
 *   mix(z)    the splitmix64 finaliser: z ^= z >> 30, z *= 0xbf58476d1ce4e5b9,
 *             z ^= z >> 27, z *= 0x94d049bb133111eb, z ^= z >> 31 (mod 2^64)
 *   G         0x9e3779b97f4a7c15
 *   key       mix(seed + G (stream + 1))
 *   w_j       mix(key + G (3 i + j + 1)), j = 0, 1, 2, for element i
 *             (the C-order index in the whole tensor)
 *   S         the sum of the twelve 16-bit fields of w_0, w_1, w_2
 *   T         S - 393210 (= 12 x 65535 / 2), an integer in [-393210, 393210]
 *   value     mean + std T / 2^16, rounded once to the format (BF16 or
 *             FP16) to nearest, ties to even; overflow gives infinity, an
 *             exact zero +0
 *
 * T / 2^16 is an Irwin-Hall sum of twelve uniforms, centred: mean 0,
 * variance (1 - 2^-32), within 6 of 0.  mean and std are dyadic numbers
 * m 2^e with |m| < 2^24 (every finite binary32 value), so the exact value
 * is a dyadic number too, and the rounding is done on integers.
 *
 * The tensor hash of N elements b_0 .. b_{N-1} (their 16-bit patterns):
 *   mix(N + sum over i of mix(i 2^16 + b_i + G) mod 2^64), i < 2^48.
 */

#define FIXGEN_NAME "splitmix64-ih12"

typedef enum
{
    FIXGEN_BF16,
    FIXGEN_F16
} fixgen_format;

/* m 2^e, |m| < 2^24. */
typedef struct
{
    int32_t m;
    int32_t e;
} fixgen_dyadic;

/* The splitmix64 finaliser. */
uint64_t fixgen_mix(uint64_t z);

/* The binary64 value with bits BITS as a dyadic number (m odd, or 0 with
   e 0) into *OUT; false (and *OUT untouched) when it is not finite or
   needs more than 24 significant bits. */
bool fixgen_dyadic_from_f64_bits(uint64_t bits, fixgen_dyadic *out);

/* T of element INDEX of stream STREAM (the integer above). */
int32_t fixgen_irwin_hall(uint64_t seed, uint32_t stream, uint64_t index);

/* The bits of MEAN + STD T 2^-16 rounded to FMT (the value above). */
uint16_t fixgen_round(fixgen_dyadic mean, fixgen_dyadic std, int32_t t,
                      fixgen_format fmt);

/* Elements FIRST .. FIRST + N - 1 of stream STREAM into OUT[0 .. N). */
void fixgen_fill(uint64_t seed, uint32_t stream, fixgen_dyadic mean,
                 fixgen_dyadic std, fixgen_format fmt, uint64_t first,
                 size_t n, uint16_t *out);

/* The value of the finite FMT bits B as a dyadic number into *OUT; false
   (and *OUT untouched) for an infinity or a NaN. */
bool fixgen_dyadic_from_bits(uint16_t b, fixgen_format fmt,
                             fixgen_dyadic *out);

/*
 * The "u" transform (sink and repeated-maximum inputs; part of the
 * contract of splitmix64-ih12 as analysis/dump_inputs.h records it).
 * u is a tensor [B, H, 1, d] of its own stream (mean 0, a std of its own,
 * the format of the tensor it serves), element (b H + h) d + c.  With a
 * scale X (a dyadic number of at most 12 significant bits), element
 * (b, h, i, c) of a tensor [B, H, N, d] is X u[b, h, c] + std T 2^-16
 * rounded once (T of the tensor's own stream at the element's C-order
 * index): X u is the element's mean.  With rows R, the tensor is made as
 * without u, then rows r of R of every (b, h) become u[b, h, :].
 */

/* Elements 0 .. BH N D - 1 of stream STREAM with the means SCALE u (U:
   BH D bits of FMT), std STD, into OUT; false (OUT partly written) when a
   u is not finite or SCALE u needs more than 24 significant bits. */
bool fixgen_fill_u_scaled(uint64_t seed, uint32_t stream, fixgen_dyadic std,
                          fixgen_format fmt, const uint16_t *u,
                          fixgen_dyadic scale, uint64_t bh, uint64_t n,
                          uint64_t d, uint16_t *out);

/*
 * The "mirror" transform (the inputs of dump_sdpa.py --gen mirror; part
 * of the contract of splitmix64-ih12 as analysis/dump_inputs.h records
 * it), in place on a tensor [BH, N, d] of FMT bits.  The N rows are cut
 * into blocks of BLOCK rows, the last one possibly shorter.  Block n is
 * a source when n mod 2 STRIDE < STRIDE, block n + STRIDE exists and has
 * the same length; that block is then its target; every other block is
 * unpaired.  (This is the pairing of dump_sdpa.py's loop: ascending n,
 * pair n with n + STRIDE unless n is already a target or the lengths
 * differ.)
 *
 *   FIXGEN_MIRROR_Q  columns c >= HALF of every row become +0;
 *   FIXGEN_MIRROR_V  each target's rows become its source's;
 *   FIXGEN_MIRROR_K  each target's rows become its source's with columns
 *                    c >= HALF negated (the sign bit flipped, zeros too);
 *                    then columns c >= HALF of every row are multiplied
 *                    by BIG in sources and targets and by SMALL in
 *                    unpaired blocks, rounded once to FMT (nearest, ties
 *                    to even; overflow gives infinity, a zero result
 *                    keeps the sign of the product).
 */

typedef enum
{
    FIXGEN_MIRROR_Q,
    FIXGEN_MIRROR_K,
    FIXGEN_MIRROR_V
} fixgen_mirror_role;

typedef struct
{
    uint64_t block;      /* rows per block, >= 1 */
    uint64_t stride;     /* a source's distance to its target, >= 1 */
    uint64_t half;       /* the first column of the second half, <= d */
    fixgen_dyadic big;   /* at most 12 significant bits */
    fixgen_dyadic small; /* at most 12 significant bits */
} fixgen_mirror;

/* The kind of block NB of a tensor of N rows in blocks of BLOCK rows with
   STRIDE (>= 1 both): 0 unpaired, 1 a source, 2 a target. */
int fixgen_mirror_block_kind(uint64_t n, uint64_t block, uint64_t stride,
                             uint64_t nb);

/* Applies the transform of ROLE with the parameters M (BLOCK and STRIDE
   are read for K and V, HALF for Q and K, BIG and SMALL for K) to T, the
   BH N D bits of FMT, in place.  False (T partly written) when a
   parameter is out of range (BLOCK or STRIDE 0, HALF > D, BIG or SMALL
   of more than 12 significant bits) or, for K, an element to scale is
   not finite. */
bool fixgen_mirror_apply(uint16_t *t, fixgen_format fmt,
                         fixgen_mirror_role role, const fixgen_mirror *m,
                         uint64_t bh, uint64_t n, uint64_t d);

/* The running sum of the hash: ACC plus the terms of elements FIRST ..
   FIRST + N - 1 with bits B[0 .. N).  Start at 0; the sum does not depend
   on how the elements are split into calls. */
uint64_t fixgen_hash_add(uint64_t acc, uint64_t first, const uint16_t *b,
                         size_t n);

/* The hash of N elements from their running sum ACC. */
uint64_t fixgen_hash_final(uint64_t acc, uint64_t n);

/* A hash as manifests write it, "0x" (or "0X") and exactly 16 hex digits,
   into *OUT; false (and *OUT untouched) for anything else, NULL too. */
bool fixgen_hash_parse(const char *s, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif
