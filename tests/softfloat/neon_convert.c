/* neon_convert -- sf_convert_array between FP32 and BF16 on the AArch64
   NEON path and on the portable path (forced through env.isa), against
   sf_convert element by element with an event sink (which keeps every
   fast path aside): the bits of every result, the flags and the SR
   counter, in every mode under the environments of pathcheck.h.  Built
   for AArch64 and run under an emulator by test_neon.sh; libc only (no
   Check).

   No argument: every BF16 input widened and every top half of an FP32
   input narrowed (with a bottom half at a tie, a neighbour of one, zero
   or random), and random arrays of every length up to 70 at odd
   offsets.
   "all [STRIDE]": every FP32 input (or every STRIDE-th) narrowed in the
   six modes but SR under IEEE on the NEON path (make check-exhaustive).
   Exit 0: no difference; 1: differences (hex vectors printed); 2: bad
   usage; 77: no NEON path on this CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "tests/support/pathcheck.h"
#include "tests/support/support.h"

#define MAXN 65536

static uint32_t f32s[MAXN + 8], f32out[MAXN + 8];
static uint16_t bf16s[MAXN + 8], bf16out[MAXN + 8], want16[MAXN + 8];
static uint32_t want32[MAXN + 8];
static unsigned long n_checked, n_bad;

static void
bad_flags(const char *what, sf_isa isa, sf_round rm, int k, size_t n,
          const sf_env *got, const sf_env *want)
{
    if (n_bad++ < TST_MAX_PRINT)
        printf("%s path %s, %s, env %d, n %zu: flags %02x counter %llu, "
               "want %02x %llu\n",
               what, sf_isa_name(isa), sf_round_name(rm), k, n, got->flags,
               (unsigned long long)got->sr_counter, want->flags,
               (unsigned long long)want->sr_counter);
}

/* FP32 -> BF16 of IN[0..N) on path ISA against sf_convert. */
static void
check_narrow(const uint32_t *in, size_t n, sf_isa isa, sf_round rm, int k,
             unsigned flags0)
{
    sf_env ref = tst_env_at(k), arr;

    ref.flags = flags0;
    ref.sr_seed = 7;
    arr = ref;
    arr.isa = (int)isa;
    ref.events = &tst_quiet;
    for (size_t i = 0; i < n; i++)
        want16[i] = (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32,
                                         in[i], rm, &ref);
    sf_convert_array(&sf_format_bf16, &sf_format_f32, in, bf16out, n, rm,
                     &arr);
    n_checked += n;
    for (size_t i = 0; i < n; i++)
        if (bf16out[i] != want16[i] && n_bad++ < TST_MAX_PRINT)
            printf("f32 -> bf16 path %s, %s, env %d: %08x gives %04x, want "
                   "%04x\n",
                   sf_isa_name(isa), sf_round_name(rm), k, (unsigned)in[i],
                   (unsigned)bf16out[i], (unsigned)want16[i]);
    if (arr.flags != ref.flags || arr.sr_counter != ref.sr_counter)
        bad_flags("f32 -> bf16", isa, rm, k, n, &arr, &ref);
}

/* BF16 -> FP32 of IN[0..N) on path ISA against sf_convert. */
static void
check_widen(const uint16_t *in, size_t n, sf_isa isa, sf_round rm, int k,
            unsigned flags0)
{
    sf_env ref = tst_env_at(k), arr;

    ref.flags = flags0;
    arr = ref;
    arr.isa = (int)isa;
    ref.events = &tst_quiet;
    for (size_t i = 0; i < n; i++)
        want32[i] = (uint32_t)sf_convert(&sf_format_f32, &sf_format_bf16,
                                         in[i], rm, &ref);
    sf_convert_array(&sf_format_f32, &sf_format_bf16, in, f32out, n, rm, &arr);
    n_checked += n;
    for (size_t i = 0; i < n; i++)
        if (f32out[i] != want32[i] && n_bad++ < TST_MAX_PRINT)
            printf("bf16 -> f32 path %s, %s, env %d: %04x gives %08x, want "
                   "%08x\n",
                   sf_isa_name(isa), sf_round_name(rm), k, (unsigned)in[i],
                   (unsigned)f32out[i], (unsigned)want32[i]);
    if (arr.flags != ref.flags)
        bad_flags("bf16 -> f32", isa, rm, k, n, &arr, &ref);
}

/* Every FP32 input (every STRIDE-th) narrowed in the six modes but SR. */
static void
run_all(unsigned long stride)
{
    for (uint64_t base = 0; base < ((uint64_t)1 << 32);
         base += (uint64_t)MAXN * stride) {
        size_t n = 0;
        for (uint64_t x = base; n < MAXN && x < ((uint64_t)1 << 32);
             x += stride)
            f32s[n++] = (uint32_t)x;
        for (int m = 0; m < 6; m++)
            check_narrow(f32s, n, SF_ISA_NEON, tst_modes[m], 0, 0);
    }
}

static void
run_short(void)
{
    static const uint16_t bottoms[7] = {0x0000, 0x8000, 0x7FFF, 0x8001,
                                        0x0001, 0xFFFF, 0x4000};
    const sf_isa paths[2] = {SF_ISA_SCALAR, SF_ISA_NEON};
    tst_rng rng;

    tst_rng_init(&rng, 0xAA64u);
    /* every BF16 input; every top half with a bottom half from the list
       or random */
    for (uint32_t i = 0; i < 65536; i++)
        bf16s[i] = (uint16_t)i;
    for (uint32_t i = 0; i < MAXN; i++) {
        uint32_t t = (uint32_t)tst_rand_below(&rng, 8);
        uint32_t lo =
            t == 7 ? (uint32_t)tst_rand64(&rng) & 0xFFFF : bottoms[t];
        f32s[i] = (i << 16) | lo;
    }
    /* the NEON path under every environment, the portable one (which
       test_array checks on the build machine) under IEEE */
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < (p == 0 ? 1 : TST_N_ENVS); k++)
            for (int m = 0; m < TST_N_MODES; m++) {
                unsigned f0 = (unsigned)tst_rand64(&rng) & 31;
                check_widen(bf16s, 65536, paths[p], tst_modes[m], k, f0);
                check_narrow(f32s, MAXN, paths[p], tst_modes[m], k, f0);
            }
    /* short arrays at odd offsets: the tails and single refused steps */
    for (int r = 0; r < 300; r++) {
        size_t n = (size_t)tst_rand_below(&rng, 71);
        size_t off = (size_t)tst_rand_below(&rng, 8);
        unsigned special = (unsigned)tst_rand_below(&rng, 4);
        for (size_t i = 0; i < n; i++) {
            uint64_t v = tst_rand64(&rng);
            uint32_t x = (uint32_t)v;
            if (tst_rand_below(&rng, 16) >= special) /* normal, near 1 */
                x = (x & 0x807FFFFFu)
                    | (uint32_t)((120 + (v >> 40) % 16) << 23);
            f32s[off + i] = x;
            bf16s[off + i] = (uint16_t)(x >> 16);
        }
        for (int p = 0; p < 2; p++)
            for (int m = 0; m < TST_N_MODES; m++) {
                int k = (int)tst_rand_below(&rng, TST_N_ENVS);
                unsigned f0 = (unsigned)tst_rand64(&rng) & 31;
                check_widen(bf16s + off, n, paths[p], tst_modes[m], k, f0);
                check_narrow(f32s + off, n, paths[p], tst_modes[m], k, f0);
            }
    }
}

int
main(int argc, char **argv)
{
    if (!sf_isa_supported(SF_ISA_NEON)) {
        printf("neon_convert: no NEON path on this CPU: skipped\n");
        return 77;
    }
    if (argc > 1 && strcmp(argv[1], "all") == 0 && argc <= 3) {
        unsigned long stride = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
        if (stride < 1 || stride > 65536) {
            fprintf(stderr,
                    "neon_convert: stride: expected 1 to 65536, "
                    "got %s\n",
                    argv[2]);
            return 2;
        }
        run_all(stride);
    } else if (argc > 1) {
        fprintf(stderr, "neon_convert: usage: neon_convert [all [STRIDE]]\n");
        return 2;
    } else {
        run_short();
    }
    printf("neon_convert: %lu results compared, %lu differ\n", n_checked,
           n_bad);
    return n_bad != 0;
}
