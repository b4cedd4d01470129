/* probe_vectors.h -- the deterministic test vectors of the tensor-core
 * block-FMA probe (mma_probe.cu) and of its CPU-side readers.
 *
 * A vector is one single-row dot product with accumulator,
 *
 *     D = sum_{k<K} a[k] * b[k] + c,
 *
 * with a and b in BF16 or FP16 (bit patterns) and c in FP32 (bit pattern).
 * The GPU puts a in row 0 of A and b in column 0 of B, all other entries
 * zero, and chains K/16 instructions through the accumulator in ascending
 * k order.  Only D comes back from the GPU: the inputs are regenerated on
 * the CPU from (set, format, seed, index) by the same code.
 *
 * Directed sets are fixed lists (pv_directed).  Random sets are an
 * unbounded sequence: vector i depends only on (set, format, seed, i),
 * through a counter-based generator (SplitMix64 finaliser over a key and
 * a counter), so any index can be regenerated on its own and no libc
 * random number generator or transcendental function is involved.  The
 * generator uses only integer arithmetic and exact double operations, so
 * every platform with IEEE double produces the same bits. */

#ifndef BF16EMU_PROBE_VECTORS_H
#define BF16EMU_PROBE_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest K of any set. */
#define PV_KMAX 64
/* Size of a directed vector's tag, NUL included. */
#define PV_TAGLEN 40

/* Input formats of a and b. */
enum pv_fmt
{
    PV_BF16 = 0,
    PV_F16 = 1,
    PV_NFMT = 2
};

/* The vector sets.  The numeric values enter the random keys: never
 * renumber an existing set, only append. */
enum pv_set
{
    PV_SELFCHECK16 = 0, /* directed: one-hot layout checks, K = 16 */
    PV_SELFCHECK32 = 1, /* directed: one-hot layout checks, K = 32 */
    PV_SELFCHECK64 = 2, /* directed: one-hot layout checks, K = 64 */
    PV_DIRECTED16 = 3,  /* directed: corner cases, K = 16 */
    PV_DIRECTED32 = 4,  /* directed: chain corner cases, K = 32 */
    PV_DIRECTED64 = 5,  /* directed: chain corner cases, K = 64 */
    PV_NORMAL = 6,      /* random: exponents -10..10, K = 16 */
    PV_WIDE = 7,        /* random: the whole range, specials, K = 16 */
    PV_CANCEL = 8,      /* random: heavy cancellation, K = 16 */
    PV_ATTN = 9,        /* random: P~ in [0,1] against V < 0 on average */
    PV_TINY = 10,       /* random: every term below 2^-126, K = 16 */
    PV_CHAIN32 = 11,    /* random: normal-ish, K = 32 */
    PV_CHAIN64 = 12,    /* random: normal-ish with C dominance, K = 64 */
    PV_NSET = 13
};

/* One vector.  Only a[0..K-1] and b[0..K-1] are meaningful; tag names a
 * directed vector (empty for random ones) and self-checks carry their
 * expected D in expect (0 otherwise). */
typedef struct
{
    uint16_t a[PV_KMAX];
    uint16_t b[PV_KMAX];
    uint32_t c;
    uint32_t expect;
    char tag[PV_TAGLEN];
} pv_vec;

/* Name of a set ("directed16", "normal", ...), or NULL when out of range. */
const char *pv_set_name(int set);
/* Set number of a name, or -1. */
int pv_set_from_name(const char *name);
/* K of a set (16, 32 or 64). */
int pv_set_k(int set);
/* 1 for random sets, 0 for directed ones. */
int pv_set_random(int set);
/* Name of a format ("bf16", "f16"), or NULL. */
const char *pv_fmt_name(int fmt);
/* Format number of a name, or -1. */
int pv_fmt_from_name(const char *name);

/* Directed set: writes up to cap vectors to out (out may be NULL when cap
 * is 0) and returns the number of vectors in the set, which depends on the
 * format only.  Returns 0 for random sets. */
size_t pv_directed(int set, int fmt, pv_vec *out, size_t cap);

/* Random set: vector number index of (set, fmt, seed).  Returns 0, or -1
 * for a directed set. */
int pv_random(int set, int fmt, uint64_t seed, uint64_t index, pv_vec *out);

/* FNV-1a over the inputs (a[0..K-1], b[0..K-1], c, little-endian) of one
 * vector, continuing from h (start with PV_FNV_INIT).  Used to check that
 * two machines generated the same inputs. */
#define PV_FNV_INIT UINT64_C(0xcbf29ce484222325)
uint64_t pv_hash(uint64_t h, const pv_vec *v, int k);

/* Format helpers, exposed for the readers. */

/* Bits of the double x rounded to nearest even in the binary format with
 * ebits exponent bits and mbits fraction bits (IEEE layout, subnormals,
 * overflow to infinity).  x must not be NaN. */
uint32_t pv_round_bits(double x, int ebits, int mbits);
/* The value of 2^e as a double, for -1074 <= e <= 1023. */
double pv_pow2(int e);

#ifdef __cplusplus
}
#endif

#endif
