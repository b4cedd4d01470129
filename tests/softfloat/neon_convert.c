/* neon_convert -- the AArch64 NEON paths: sf_convert_array between FP32
   and BF16, and sf_bf16_add_array and sf_bf16_sub_array, on the NEON path
   and on the portable path (forced through env.isa), against sf_convert,
   sf_add and sf_sub element by element with an event sink (which keeps
   every fast path aside): the bits of every result, the flags and the SR
   counter, in every mode under the environments of pathcheck.h.  Built
   for AArch64 and run under an emulator by test_neon.sh; libc only (no
   Check).

   No argument: every BF16 input widened and every top half of an FP32
   input narrowed (with a bottom half at a tie, a neighbour of one, zero
   or random), and random arrays of every length up to 70 at odd
   offsets; BF16 add and sub arrays on every second operand for a few
   leading ones, and on random pairs (close, far and cancelling
   exponents, any bits).
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

/* a + b or a - b (SUB) over A[0..N), B[0..N) on path ISA against sf_add
   or sf_sub. */
static void
check_addsub(const uint16_t *a, const uint16_t *b, size_t n, bool sub,
             sf_isa isa, sf_round rm, int k, unsigned flags0)
{
    sf_env ref = tst_env_at(k), arr;
    int op = sub ? TST_OP_SUB : TST_OP_ADD;

    ref.flags = flags0;
    ref.sr_seed = 11;
    arr = ref;
    arr.isa = (int)isa;
    ref.events = &tst_quiet;
    for (size_t i = 0; i < n; i++)
        want16[i] = (uint16_t)tst_generic_op(&sf_format_bf16, op, a[i], b[i],
                                             0, rm, &ref);
    if (sub)
        sf_bf16_sub_array((const sf_bf16 *)a, (const sf_bf16 *)b,
                          (sf_bf16 *)bf16out, n, rm, &arr);
    else
        sf_bf16_add_array((const sf_bf16 *)a, (const sf_bf16 *)b,
                          (sf_bf16 *)bf16out, n, rm, &arr);
    n_checked += n;
    for (size_t i = 0; i < n; i++)
        if (bf16out[i] != want16[i] && n_bad++ < TST_MAX_PRINT)
            printf("bf16_%s_array path %s, %s, env %d: %04x %04x gives %04x, "
                   "want %04x\n",
                   tst_op_names[op], sf_isa_name(isa), sf_round_name(rm), k,
                   (unsigned)a[i], (unsigned)b[i], (unsigned)bf16out[i],
                   (unsigned)want16[i]);
    if (arr.flags != ref.flags || arr.sr_counter != ref.sr_counter)
        bad_flags(sub ? "bf16_sub_array" : "bf16_add_array", isa, rm, k, n,
                  &arr, &ref);
}

/* A BF16 operand: exponent field near CENTER (within SPREAD, clamped to
   the normal range), random sign and fraction; any bits 1 time in 16. */
static uint16_t
bf16_near(tst_rng *rng, int center, int spread)
{
    int e =
        center + (int)tst_rand_below(rng, 2 * (uint64_t)spread + 1) - spread;

    if (tst_rand_below(rng, 16) == 0)
        return (uint16_t)tst_rand64(rng);
    e = e < 1 ? 1 : e > 254 ? 254 : e;
    return (uint16_t)(((tst_rand64(rng) & 1) << 15) | ((unsigned)e << 7)
                      | tst_rand_frac(&sf_format_bf16, rng));
}

static void
run_addsub(tst_rng *rng)
{
    static uint16_t a[65536], b[65536];
    static const uint16_t leads[4] = {0x3F80, 0x4B7F, 0x0880, 0x7E81};
    const sf_isa paths[2] = {SF_ISA_SCALAR, SF_ISA_NEON};

    /* every second operand for a few leading ones, IEEE, every mode */
    for (int l = 0; l < 4; l++) {
        for (uint32_t i = 0; i < 65536; i++) {
            a[i] = leads[l];
            b[i] = (uint16_t)i;
        }
        for (int m = 0; m < TST_N_MODES; m++)
            for (int sub = 0; sub < 2; sub++)
                check_addsub(a, b, 65536, sub, SF_ISA_NEON, tst_modes[m], 0,
                             0);
    }
    /* random pairs: close, far (the replaced operand) and cancelling
       exponents, on both paths, every environment and mode */
    for (uint32_t i = 0; i < 4096; i++) {
        int ea = 1 + (int)tst_rand_below(rng, 254);
        a[i] = bf16_near(rng, ea, 0);
        switch (i % 3) {
        case 0:
            b[i] = bf16_near(rng, ea, 10);
            break;
        case 1:
            b[i] = bf16_near(rng, ea - 14 - (int)tst_rand_below(rng, 30), 0);
            break;
        default:
            b[i] = (uint16_t)((a[i] ^ 0x8000) + tst_rand_below(rng, 3));
            break;
        }
        if (tst_rand64(rng) & 1) {
            uint16_t t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < TST_N_ENVS; k++)
            for (int m = 0; m < TST_N_MODES; m++)
                for (int sub = 0; sub < 2; sub++) {
                    size_t n = 4096 - (size_t)tst_rand_below(rng, 9);
                    check_addsub(a, b, n, sub, paths[p], tst_modes[m], k,
                                 (unsigned)tst_rand64(rng) & 31);
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
    run_addsub(&rng);
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
