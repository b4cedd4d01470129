/* support.h -- shared test helpers: seeded PRNG, multiplier, failure vectors */
#ifndef BF16EMU_TESTS_SUPPORT_H
#define BF16EMU_TESTS_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "softfloat/softfloat.h"

/* xoshiro256** seeded through SplitMix64 from (seed, stream). The seed is
   BF16EMU_TEST_SEED (default 1); a non-default seed is printed once. */
typedef struct { uint64_t s[4]; } tst_rng;
void tst_rng_init(tst_rng *r, uint64_t stream);
uint64_t tst_rand64(tst_rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t tst_rand_below(tst_rng *r, uint64_t n);
uint64_t tst_seed(void);
/* The bits of a random normal BF16 value of exponent LO .. HI (random
   sign and significand), or a signed zero one time in ZERO (never when
   ZERO is 0). */
uint16_t tst_bf16_rand(tst_rng *r, int lo, int hi, unsigned zero);
/* A one-row GEMM problem: A's K elements and B's K x N elements random
   BF16 of exponent LO .. HI (tst_bf16_rand; zeros one time in 9 and 13),
   then C's N elements zero one time in four, else FP32 of random sign
   and significand and exponent 2 BASE + 8. */
void tst_row_problem(tst_rng *r, int lo, int hi, int base, size_t n,
                     size_t k, uint16_t *a, uint16_t *b, uint32_t *c);
/* The bits of a host binary32 or binary64 and back: tst_f32_bits,
   tst_f32_of, tst_f64_bits, tst_f64_of. */
#define TST_BIT_CAST(name, from, to)                                          \
    static inline to name(from x)                                             \
    {                                                                         \
        to y;                                                                 \
        memcpy(&y, &x, sizeof y);                                             \
        return y;                                                             \
    }
TST_BIT_CAST(tst_f32_bits, float, uint32_t)
TST_BIT_CAST(tst_f32_of, uint32_t, float)
TST_BIT_CAST(tst_f64_bits, double, uint64_t)
TST_BIT_CAST(tst_f64_of, uint64_t, double)

/* BF16EMU_TEST_MULTIPLIER (default 1, at least 1): scales random counts. */
unsigned long tst_multiplier(void);

/* BF16EMU_ISA (auto, scalar, avx2, avx512, neon; unset or empty: auto) as
   an env->isa cap, read as the CLI reads it, so that a test of the
   library runs on one path: BF16EMU_ISA=scalar make check TESTS=...
   An unknown name or a path the CPU lacks stops the program (exit 2). */
int tst_isa(void);

/* Prints one failure as a line that can be pasted into a table:
   "<fmt>_<op> <rm> <in hex>... <expected hex> <flags> got <hex> <flags>"
   followed by the inputs as %a. Returns nothing; callers count failures
   and print at most TST_MAX_PRINT of them. */
#define TST_MAX_PRINT 10
/* Counts one more failure in *PRINTED (atomically in an OpenMP build)
   and returns whether it is among the first TST_MAX_PRINT, to be
   printed. */
static inline bool
tst_print_slot(unsigned long *printed)
{
    unsigned long idx;

#ifdef _OPENMP
#pragma omp atomic capture
#endif
    idx = (*printed)++;
    return idx < TST_MAX_PRINT;
}
void tst_print_case(const char *op, const sf_format *f, sf_round rm,
                    const uint64_t *in, unsigned n_in, uint64_t expected,
                    unsigned exp_flags, uint64_t got, unsigned got_flags);

#endif
