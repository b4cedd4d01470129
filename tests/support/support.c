/* support.c -- shared test helpers: seeded PRNG, multiplier, failure lines */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define TST_DEFAULT_SEED 1u

/* SplitMix64: one step of the generator that seeds xoshiro256**. */
static uint64_t
splitmix64_next(uint64_t *state)
{
    uint64_t z;

    *state += 0x9E3779B97F4A7C15u;
    z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t
parse_u64_env(const char *name, uint64_t dflt, int *set)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;

    *set = 0;
    if (s == NULL || *s == '\0')
        return dflt;
    v = strtoull(s, &end, 0);
    if (*end != '\0') {
        fprintf(stderr, "%s: ignoring malformed value \"%s\"\n", name, s);
        return dflt;
    }
    *set = 1;
    return (uint64_t)v;
}

int
tst_isa(void)
{
    const char *s = getenv("BF16EMU_ISA");
    int isa;

    if (s == NULL || *s == '\0')
        return SF_ISA_AUTO;
    isa = sf_isa_by_name(s);
    if (isa < 0 || !sf_isa_supported((sf_isa)isa)) {
        fprintf(stderr,
                "BF16EMU_ISA '%s': expected auto, scalar, avx2, avx512 or "
                "neon, one this CPU runs\n",
                s);
        exit(2);
    }
    return isa;
}

uint64_t
tst_seed(void)
{
    static int done = 0;
    static uint64_t seed = TST_DEFAULT_SEED;

    /* Computed once; the test programs read it before any threads start. */
    if (!done) {
        int set;
        seed = parse_u64_env("BF16EMU_TEST_SEED", TST_DEFAULT_SEED, &set);
        if (seed != TST_DEFAULT_SEED)
            fprintf(stderr, "BF16EMU_TEST_SEED=%llu\n",
                    (unsigned long long)seed);
        done = 1;
    }
    return seed;
}

unsigned long
tst_multiplier(void)
{
    static int done = 0;
    static unsigned long mult = 1;

    if (!done) {
        int set;
        uint64_t v = parse_u64_env("BF16EMU_TEST_MULTIPLIER", 1, &set);
        mult = v < 1 ? 1ul : (unsigned long)v;
        if (mult != 1)
            fprintf(stderr, "BF16EMU_TEST_MULTIPLIER=%lu\n", mult);
        done = 1;
    }
    return mult;
}

void
tst_rng_init(tst_rng *r, uint64_t stream)
{
    /* The stream is mixed in before the seed so that neighbouring streams
       start from unrelated states. */
    uint64_t st = tst_seed() ^ (stream * 0xD1B54A32D192ED03u);
    unsigned i;

    for (i = 0; i < 4; i++)
        r->s[i] = splitmix64_next(&st);
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
        r->s[0] = 1; /* the all-zero state is a fixed point */
}

static uint64_t
rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t
tst_rand64(tst_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

uint16_t
tst_bf16_rand(tst_rng *r, int lo, int hi, unsigned zero)
{
    uint64_t x = tst_rand64(r);
    uint16_t sign = (uint16_t)((x >> 8) & 1u) << 15;
    int e = lo + (int)((x >> 32) % (unsigned)(hi - lo + 1));

    if (zero != 0 && x % zero == 0)
        return sign;
    return (uint16_t)(sign | (uint16_t)((e + 127) << 7)
                      | (uint16_t)((x >> 9) & 0x7Fu));
}

void
tst_row_problem(tst_rng *r, int lo, int hi, int base, size_t n, size_t k,
                uint16_t *a, uint16_t *b, uint32_t *c)
{
    for (size_t t = 0; t < k; t++)
        a[t] = tst_bf16_rand(r, lo, hi, 9);
    for (size_t i = 0; i < n * k; i++)
        b[i] = tst_bf16_rand(r, lo, hi, 13);
    for (size_t j = 0; j < n; j++)
        c[j] = tst_rand64(r) % 4 == 0
                   ? 0
                   : (uint32_t)(tst_rand64(r) & 0x80000000u)
                         | (uint32_t)(2 * base + 127 + 8) << 23
                         | (uint32_t)(tst_rand64(r) & 0x7FFFFFu);
}

uint64_t
tst_rand_below(tst_rng *r, uint64_t n)
{
    /* Rejection sampling: accept x below the largest multiple of n. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;

    do
        x = tst_rand64(r);
    while (x >= limit);
    return x % n;
}

void
tst_print_case(const char *op, const sf_format *f, sf_round rm,
               const uint64_t *in, unsigned n_in, uint64_t expected,
               unsigned exp_flags, uint64_t got, unsigned got_flags)
{
    int w = (int)(f->storage_bits + 3) / 4;
    char fe[6], fg[6];
    unsigned i;

    printf("%s_%s %s", f->name, op, sf_round_name(rm));
    for (i = 0; i < n_in; i++)
        printf(" %0*llx", w, (unsigned long long)in[i]);
    printf(" %0*llx %s got %0*llx %s\n", w, (unsigned long long)expected,
           sf_flags_str(exp_flags, fe), w, (unsigned long long)got,
           sf_flags_str(got_flags, fg));
    printf("   ");
    for (i = 0; i < n_in; i++)
        printf(" %a", sf_to_double(f, in[i]));
    printf("  seed %llu\n", (unsigned long long)tst_seed());
    fflush(stdout);
}
