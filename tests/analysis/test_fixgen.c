/* test_fixgen.c -- the fixture input generator splitmix64-ih12 against
   known vectors: Irwin-Hall sums computed from the definition with
   Python's big integers (int.to_bytes), rounded values each the nearest
   (ties to even) of an enumeration of every finite value of the format in
   exact rationals, and tensor hashes that experiments/gpu/fixgen.py
   checks too (its VEC_T, VEC_ROUND and VEC_HASH) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/fixgen.h"

static const struct
{
    uint64_t seed;
    uint32_t stream;
    uint64_t index;
    int32_t t;
} vec_t[] = {
    {0, 0, 0, 119065},
    {1, 1, 5, -28365},
    {171, 2, 123456789, -21055},
    {UINT64_C(9007199254740991), 3, UINT64_C(1099511627776), 51263},
};

/* mean = mm 2^me, std = sm 2^se */
static const struct
{
    int32_t mm, me, sm, se, t;
    fixgen_format fmt;
    uint16_t bits;
} vec_round[] = {
    {0, 0, 1, 0, 0, FIXGEN_BF16, 0x0000},
    {0, 0, 1, 0, 65536, FIXGEN_BF16, 0x3f80},
    {0, 0, 1, 0, -65536, FIXGEN_F16, 0xbc00},
    {0, 0, 1, 0, 65536 + 256, FIXGEN_BF16, 0x3f80}, /* tie, to even */
    {0, 0, 1, 0, 65536 + 768, FIXGEN_BF16, 0x3f82}, /* tie, to even */
    {0, 0, 1, 0, 65536 + 257, FIXGEN_BF16, 0x3f81},
    {0, 0, 1, 0, 393210, FIXGEN_F16, 0x4600},
    {-3, -1, 13421773, -25, 1000, FIXGEN_BF16, 0xbfbf},
    {-3, -1, 13421773, -25, 393210, FIXGEN_F16, 0x3b33},
    {0, 0, 1, -30, 1, FIXGEN_F16, 0x0000},
    {0, 0, 1, -30, -1, FIXGEN_F16, 0x8000},
    {0, 0, 1, -8, 3, FIXGEN_F16, 0x0003},
    {0, 0, 1, 20, 393210, FIXGEN_F16, 0x7c00},
    {0, 0, 1, 20, -393210, FIXGEN_BF16, 0xcac0},
    {257, -8, 1, -40, 0, FIXGEN_BF16, 0x3f80},
    {257, -8, 1, -40, 1, FIXGEN_BF16, 0x3f81},
    {257, -8, 1, -40, -1, FIXGEN_BF16, 0x3f80},
    {259, -8, 1, -40, 0, FIXGEN_BF16, 0x3f82},
    {259, -8, 1, -40, -1, FIXGEN_BF16, 0x3f81},
    {1, 10, 1, -60, -1, FIXGEN_F16, 0x6400},
};

static const struct
{
    uint64_t seed;
    int32_t mm, me, sm, se;
    fixgen_format fmt;
    size_t n;
    uint64_t hash;
} vec_hash[] = {
    {7, 0, 0, 1, 0, FIXGEN_BF16, 1000, UINT64_C(0xbec51abe48dda4cb)},
    {171, -3, -1, 13421773, -25, FIXGEN_F16, 4096,
     UINT64_C(0x08983c196a14fa41)},
};

START_TEST(test_irwin_hall)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof vec_t / sizeof vec_t[0]; i++) {
        int32_t got =
            fixgen_irwin_hall(vec_t[i].seed, vec_t[i].stream, vec_t[i].index);
        if (got != vec_t[i].t && bad++ < 10)
            printf("fixgen T seed 0x%016" PRIx64 " stream %" PRIu32
                   " index 0x%" PRIx64 ": %" PRId32 " expected, got %" PRId32
                   "\n",
                   vec_t[i].seed, vec_t[i].stream, vec_t[i].index, vec_t[i].t,
                   got);
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_round)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof vec_round / sizeof vec_round[0]; i++) {
        fixgen_dyadic mean = {vec_round[i].mm, vec_round[i].me};
        fixgen_dyadic std = {vec_round[i].sm, vec_round[i].se};
        uint16_t got =
            fixgen_round(mean, std, vec_round[i].t, vec_round[i].fmt);
        if (got != vec_round[i].bits && bad++ < 10)
            printf("fixgen round %s %" PRId32 "*2^%" PRId32 " + %" PRId32
                   "*2^%" PRId32 " * %" PRId32 "/2^16: 0x%04x expected, "
                   "got 0x%04x\n",
                   vec_round[i].fmt == FIXGEN_BF16 ? "bf16" : "f16",
                   vec_round[i].mm, vec_round[i].me, vec_round[i].sm,
                   vec_round[i].se, vec_round[i].t, vec_round[i].bits, got);
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_hash)
{
    for (size_t i = 0; i < sizeof vec_hash / sizeof vec_hash[0]; i++) {
        fixgen_dyadic mean = {vec_hash[i].mm, vec_hash[i].me};
        fixgen_dyadic std = {vec_hash[i].sm, vec_hash[i].se};
        size_t n = vec_hash[i].n;
        uint16_t *b = malloc(n * sizeof *b);
        uint64_t whole, split;
        ck_assert_ptr_nonnull(b);
        fixgen_fill(vec_hash[i].seed, 1, mean, std, vec_hash[i].fmt, 0, n, b);
        whole = fixgen_hash_final(fixgen_hash_add(0, 0, b, n), n);
        /* the same elements in two calls, the second filled on its own */
        fixgen_fill(vec_hash[i].seed, 1, mean, std, vec_hash[i].fmt, 100,
                    n - 100, b + 100);
        split =
            fixgen_hash_final(fixgen_hash_add(fixgen_hash_add(0, 0, b, 100),
                                              100, b + 100, n - 100),
                              n);
        if (whole != vec_hash[i].hash || split != whole)
            printf("fixgen hash seed %" PRIu64 " n %zu: 0x%016" PRIx64
                   " expected, got 0x%016" PRIx64
                   " (in two parts 0x%016" PRIx64 ")\n",
                   vec_hash[i].seed, n, vec_hash[i].hash, whole, split);
        ck_assert_uint_eq(whole, vec_hash[i].hash);
        ck_assert_uint_eq(split, whole);
        free(b);
    }
}
END_TEST

START_TEST(test_dyadic)
{
    static const struct
    {
        uint64_t bits;
        bool ok;
        int32_t m, e;
    } v[] = {
        {UINT64_C(0x3fd99999a0000000), true, 13421773, -25}, /* (float)0.4 */
        {UINT64_C(0xbff8000000000000), true, -3, -1},        /* -1.5 */
        {UINT64_C(0x0000000000000000), true, 0, 0},
        {UINT64_C(0x8000000000000000), true, 0, 0},
        {UINT64_C(0x0000000000000001), true, 1, -1074},
        {UINT64_C(0x3fb999999999999a), false, 0, 0}, /* 0.1: 52 bits */
        {UINT64_C(0x7ff0000000000000), false, 0, 0},
        {UINT64_C(0x7ff8000000000000), false, 0, 0},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        fixgen_dyadic d = {12345, 678};
        bool ok = fixgen_dyadic_from_f64_bits(v[i].bits, &d);
        if (ok != v[i].ok || (ok && (d.m != v[i].m || d.e != v[i].e)))
            printf("fixgen dyadic 0x%016" PRIx64 ": %s %" PRId32 " %" PRId32
                   " expected, got %s %" PRId32 " %" PRId32 "\n",
                   v[i].bits, v[i].ok ? "ok" : "refused", v[i].m, v[i].e,
                   ok ? "ok" : "refused", d.m, d.e);
        ck_assert(ok == v[i].ok);
        if (ok) {
            ck_assert_int_eq(d.m, v[i].m);
            ck_assert_int_eq(d.e, v[i].e);
        } else {
            ck_assert_int_eq(d.m, 12345);
        }
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("fixgen");
    TCase *tc = tcase_create("vectors");
    SRunner *sr;
    int nf;

    tcase_add_test(tc, test_irwin_hall);
    tcase_add_test(tc, test_round);
    tcase_add_test(tc, test_hash);
    tcase_add_test(tc, test_dyadic);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
