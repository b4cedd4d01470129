/* test_convert_blocks.c -- sf_convert_array from FP32 to BF16, FP16, E4M3
   and E5M2 on blocks that mix zeros, subnormals, Inf, NaNs (signalling and
   quiet, with payloads), values that overflow and ties into normal data,
   on every path the CPU has (env.isa forces each), in every mode under
   environments with and without DAZ, FTZ, saturation, the default NaN and
   each tininess rule: each lane's bits against sf_convert, the flags of
   one special lane among exact lanes against sf_convert's for it alone;
   and FP32 to BF16 under SF_ENV_AVX512BF16 against the CPU's
   VCVTNEPS2BF16 where it has one */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "ref/avx512bf16.h"
#include "tests/support/pathcheck.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

static int n_paths;
static sf_isa paths[SF_N_ISA];

static const sf_format *const targets[4] = {&sf_format_bf16, &sf_format_f16,
                                            &sf_format_e4m3, &sf_format_e5m2};

/* The environments: the presets of tst_env_at, then FTZ alone, FTZ with
   tininess before rounding, DAZ alone, saturation with the default NaN. */
#define N_ENVS (TST_N_ENVS + 4)
static sf_env
env_at(int i)
{
    sf_env e = SF_ENV_IEEE;

    if (i < TST_N_ENVS)
        return tst_env_at(i);
    switch (i - TST_N_ENVS) {
    case 0:
        e.ftz = true;
        break;
    case 1:
        e.ftz = true;
        e.tininess_after = false;
        break;
    case 2:
        e.daz = true;
        break;
    default:
        e.saturate = true;
        e.nan_rule = SF_NAN_DEFAULT;
        e.default_nan = SF_DNAN_ALL_ONES;
        break;
    }
    return e;
}

/*----------------------------------------------------------------------------
 * The special values: FP32 bits, each also with the sign set.
 *--------------------------------------------------------------------------*/
static const uint32_t specials[] = {
    0x00000000, /* zero */
    0x00000001, 0x00000002, 0x0000FFFF, 0x00010000, 0x00018000, /* tiny */
    0x00008000, 0x00007FFF, 0x00008001, 0x00017FFF, 0x00028000, /* ties */
    0x003FFFFF, 0x00400000, 0x00408000, 0x007F0000, 0x007F7FFF, /* subn */
    0x007F8000, 0x007F8001, 0x007FBFFF, 0x007FC000, 0x007FFFFF, /* to min */
    0x00800000, 0x00808000, 0x00818000, 0x00FFFFFF,             /* normal */
    0x7F800000,                                                 /* Inf */
    0x7F800001, 0x7F812345, 0x7FBFFFFF, 0x7F80FFFF, 0x7FA00000, /* sNaN */
    0x7FC00000, 0x7FC00001, 0x7FFFFFFF, 0x7FE54321, 0x7FC0FFFF, /* qNaN */
    0x7F7F0000, 0x7F7F0001, 0x7F7F7FFF, 0x7F7F8000, 0x7F7F8001, /* BF16 */
    0x7F7FFFFF, 0x7F7E8000, 0x7F7EFFFF,                         /* max */
    0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x477FFFFF, /* FP16 */
    0x47800000, 0x38800000, 0x387FE000, 0x387FF000, 0x33800000, /* range */
    0x33000000, 0x33000001, 0x32FFFFFF, 0x337FFFFF, 0x38000000,
    0x43E00000, 0x43F00000, 0x43E80000, 0x3B000000, 0x3A800000, /* E4M3 */
    0x47600000, 0x47700000, 0x37800000, 0x37000000, 0x36800000, /* E5M2 */
    0x3F808000, 0x3F818000, 0x3F800001, 0x3F807FFF, 0x3F80FFFF, /* ties */
    0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F802000, 0x3F804000,
};
#define N_SPECIALS (sizeof specials / sizeof specials[0])

/* An FP32 value that every target holds exactly and every mode and
   environment converts without a flag (a small integer, signed). */
static uint32_t
exact_value(tst_rng *rng)
{
    uint32_t m = (uint32_t)tst_rand_below(rng, 4);
    uint32_t e = 127 + (uint32_t)tst_rand_below(rng, 5);

    return (uint32_t)(tst_rand64(rng) & 1) << 31 | e << 23 | m << 21;
}

/* A value from every class: a special, a random subnormal, a random NaN,
   a random normal with a tie or a random tail, or a random pattern. */
static uint32_t
mixed_value(tst_rng *rng)
{
    uint32_t sign = (uint32_t)(tst_rand64(rng) & 1) << 31;
    uint32_t frac = (uint32_t)tst_rand64(rng) & 0x7FFFFF;

    switch (tst_rand_below(rng, 6)) {
    case 0:
        return sign | specials[tst_rand_below(rng, N_SPECIALS)];
    case 1:
        return sign | frac;
    case 2:
        return sign | 0x7F800000 | (frac | 1);
    case 3: /* a normal near a target's range, its tail a tie */
        return sign | (uint32_t)(100 + tst_rand_below(rng, 56)) << 23
               | (frac & ~0xFFFFu) | 0x8000;
    case 4:
        return sign | (uint32_t)(1 + tst_rand_below(rng, 254)) << 23 | frac;
    default:
        return (uint32_t)tst_rand64(rng);
    }
}

static unsigned long n_checked, n_bad;

/* IN[0..N-1] through sf_convert_array to TO on path P, mode RM, under
   ENV0 (flags cleared), against sf_convert lane by lane; when WANT_FLAGS
   is not negative, the array's flags must be it, else the OR of the
   scalar conversions' flags. */
static void
check_array(const sf_format *to, const uint32_t *in, size_t n, sf_round rm,
            sf_env env0, int p, int env_index, long want_flags)
{
    uint8_t out[4 * 80], want[4 * 80];
    sf_env ref = env0, arr = env0;

    ref.flags = arr.flags = 0;
    arr.isa = (int)paths[p];
    ref.events = &tst_quiet; /* the scalar path, one element at a time */
    for (size_t i = 0; i < n; i++)
        tst_put(want, to, i, sf_convert(to, &sf_format_f32, in[i], rm, &ref));
    sf_convert_array(to, &sf_format_f32, in, out, n, rm, &arr);
    n_checked += n;
    for (size_t i = 0; i < n; i++) {
        if (tst_get(out, to, i) != tst_get(want, to, i)
            && n_bad++ < TST_MAX_PRINT) {
            uint64_t x = in[i];
            printf("sf_convert_array f32 -> %s path %s, lane %zu of %zu, "
                   "env %d:\n",
                   to->name, sf_isa_name(paths[p]), i, n, env_index);
            tst_print_case("convert", &sf_format_f32, rm, &x, 1,
                           tst_get(want, to, i), 0, tst_get(out, to, i), 0);
        }
    }
    if (want_flags < 0)
        want_flags = (long)ref.flags;
    if ((arr.flags != (unsigned)want_flags || ref.flags != arr.flags)
        && n_bad++ < TST_MAX_PRINT)
        printf("sf_convert_array f32 -> %s path %s, %s, env %d, n %zu: "
               "flags %02x, scalar %02x, want %02lx (first input %08lx)\n",
               to->name, sf_isa_name(paths[p]), sf_round_name(rm), env_index,
               n, arr.flags, ref.flags, (unsigned long)want_flags,
               (unsigned long)in[0]);
}

/* Each special value, each sign, at several places of a block of exact
   values of several lengths: the array's flags are the special's alone. */
START_TEST(test_one_special)
{
    const sf_format *to = targets[_i];
    static const size_t lens[] = {1, 5, 16, 17, 32, 33, 64, 71};
    static const size_t places[] = {0, 3, 15, 16, 31, 32, 63, 70};
    tst_rng rng;

    n_checked = n_bad = 0;
    tst_rng_init(&rng, 0xB10C0u + (uint64_t)_i);
    for (size_t s = 0; s < 2 * N_SPECIALS; s++) {
        uint32_t v = specials[s / 2] | (uint32_t)(s & 1) << 31;
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            uint32_t in[80];
            size_t n = lens[l];
            for (size_t i = 0; i < n; i++)
                in[i] = exact_value(&rng);
            for (size_t q = 0; q < sizeof places / sizeof places[0]; q++) {
                size_t at = places[q];
                if (at >= n)
                    continue;
                in[at] = v;
                for (int k = 0; k < N_ENVS; k++) {
                    for (int m = 0; m < TST_N_MODES; m++) {
                        sf_env e = env_at(k), alone = e;
                        alone.flags = 0;
                        (void)sf_convert(to, &sf_format_f32, v, tst_modes[m],
                                         &alone);
                        /* (SR: the draw for the special depends on its
                           place, so only the scalar calls' flags) */
                        for (int p = 0; p < n_paths; p++)
                            check_array(to, in, n, tst_modes[m], e, p, k,
                                        tst_modes[m] == SF_SR
                                            ? -1
                                            : (long)alone.flags);
                    }
                }
                in[at] = exact_value(&rng);
            }
        }
    }
    printf("f32 -> %s, one special in a block: %lu lanes on %d paths, "
           "%lu differ\n",
           to->name, n_checked, n_paths, n_bad);
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

/* Blocks of every class mixed (from all special to one special), of
   lengths around the vector widths. */
START_TEST(test_mixed)
{
    const sf_format *to = targets[_i];
    tst_rng rng;

    n_checked = n_bad = 0;
    tst_rng_init(&rng, 0x313Du + (uint64_t)_i);
    for (int r = 0; r < 300; r++) {
        uint32_t in[80];
        size_t n = 1 + (size_t)tst_rand_below(&rng, 80);
        unsigned share = (unsigned)tst_rand_below(&rng, 9); /* of 8 */
        for (size_t i = 0; i < n; i++)
            in[i] = tst_rand_below(&rng, 8) < share ? mixed_value(&rng)
                                                    : exact_value(&rng)
                                                          ^ (uint32_t)
                                                              tst_rand_below(
                                                                  &rng,
                                                                  0x10000);
        for (int k = 0; k < N_ENVS; k++)
            for (int m = 0; m < TST_N_MODES; m++)
                for (int p = 0; p < n_paths; p++)
                    check_array(to, in, n, tst_modes[m], env_at(k), p, k, -1);
    }
    printf("f32 -> %s, mixed blocks: %lu lanes on %d paths, %lu differ\n",
           to->name, n_checked, n_paths, n_bad);
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

/* FP32 to BF16 under SF_ENV_AVX512BF16 on every path against
   VCVTNEPS2BF16 (RNE, DAZ, FTZ; it has no flags), on the specials and
   mixed blocks. */
START_TEST(test_hardware)
{
    const char *why = ref_avx512bf16_missing();
    unsigned long n = 0, bad = 0;
    tst_rng rng;

    if (why != NULL) {
        printf("test_convert_blocks: no VCVTNEPS2BF16: %s\n", why);
        return;
    }
    tst_rng_init(&rng, 0xCB16u);
    for (int r = 0; r < 4096; r++) {
        uint32_t in[64];
        uint16_t hw[64], out[64];
        for (size_t i = 0; i < 64; i++)
            in[i] = r < (int)(2 * N_SPECIALS / 64 + 1)
                        ? specials[((size_t)r * 64 + i) / 2 % N_SPECIALS]
                              | (uint32_t)(i & 1) << 31
                        : mixed_value(&rng);
        for (size_t i = 0; i < 64; i += 16)
            ref_avx512bf16_cvt16(in + i, hw + i);
        for (int p = 0; p < n_paths; p++) {
            sf_env e = SF_ENV_AVX512BF16;
            e.isa = (int)paths[p];
            sf_convert_array(&sf_format_bf16, &sf_format_f32, in, out, 64,
                             SF_RNE, &e);
            for (size_t i = 0; i < 64; i++) {
                n++;
                if (out[i] != hw[i] && bad++ < TST_MAX_PRINT) {
                    uint64_t x = in[i];
                    printf("sf_convert_array path %s, lane %zu, against "
                           "VCVTNEPS2BF16:\n",
                           sf_isa_name(paths[p]), i);
                    tst_print_case("convert", &sf_format_f32, SF_RNE, &x, 1,
                                   hw[i], 0, out[i], 0);
                }
            }
        }
    }
    printf("f32 -> bf16 against VCVTNEPS2BF16: %lu lanes on %d paths, "
           "%lu differ\n",
           n, n_paths, bad);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("convert_blocks");
    TCase *tc = tst_add_tcase(s, "blocks", 600);

    n_paths = tst_find_paths(paths);
    tcase_add_loop_test(tc, test_one_special, 0, 4);
    tcase_add_loop_test(tc, test_mixed, 0, 4);
    tcase_add_test(tc, test_hardware);
    return tst_run_suite(s);
}
