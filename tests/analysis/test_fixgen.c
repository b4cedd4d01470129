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

/* The conversion of IN gave OK and D; the case wants WANT_OK and, when
   it is true, M 2^E; a refusal must leave D as it was (12345, 678). */
static void
check_dyadic(const char *what, uint64_t in, bool ok, fixgen_dyadic d,
             bool want_ok, int32_t m, int32_t e)
{
    if (ok != want_ok || (ok && (d.m != m || d.e != e)))
        printf("fixgen %s 0x%" PRIx64 ": %s %" PRId32 " %" PRId32
               " expected, got %s %" PRId32 " %" PRId32 "\n",
               what, in, want_ok ? "ok" : "refused", m, e,
               ok ? "ok" : "refused", d.m, d.e);
    ck_assert(ok == want_ok);
    if (ok) {
        ck_assert_int_eq(d.m, m);
        ck_assert_int_eq(d.e, e);
    } else {
        ck_assert_int_eq(d.m, 12345);
    }
}

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
        check_dyadic("dyadic", v[i].bits, ok, d, v[i].ok, v[i].m, v[i].e);
    }
}
END_TEST

/* The BF16 / FP16 bits as dyadic numbers, worked out by hand from the
   formats' definitions. */
START_TEST(test_dyadic_bits)
{
    static const struct
    {
        uint16_t b;
        fixgen_format fmt;
        bool ok;
        int32_t m, e;
    } v[] = {
        {0x3f80, FIXGEN_BF16, true, 1, 0},     /* 1 */
        {0xbfc0, FIXGEN_BF16, true, -3, -1},   /* -1.5 */
        {0x0001, FIXGEN_BF16, true, 1, -133},  /* 2^-126 2^-7 */
        {0x0080, FIXGEN_BF16, true, 1, -126},  /* the smallest normal */
        {0x8000, FIXGEN_BF16, true, 0, 0},     /* -0 */
        {0x7f80, FIXGEN_BF16, false, 0, 0},    /* +inf */
        {0x3c00, FIXGEN_F16, true, 1, 0},      /* 1 */
        {0x0001, FIXGEN_F16, true, 1, -24},    /* 2^-14 2^-10 */
        {0x3555, FIXGEN_F16, true, 1365, -12}, /* 0x555 + 0x400 = 1365 */
        {0x7e00, FIXGEN_F16, false, 0, 0},     /* NaN */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        fixgen_dyadic d = {12345, 678};
        bool ok = fixgen_dyadic_from_bits(v[i].b, v[i].fmt, &d);
        check_dyadic("dyadic bits", v[i].b, ok, d, v[i].ok, v[i].m, v[i].e);
    }
}
END_TEST

/* The u transform with std 0: every element is scale u exactly, so with
   scale 4 a normal BF16 u gains 2 in its exponent field (0x100 in the
   bits); a scale whose product with u needs 25 bits is refused. */
START_TEST(test_u_scaled)
{
    const fixgen_dyadic zero = {0, 0}, four = {1, 2}, wide = {8388607, 0};
    uint16_t u[3 * 8], out[3 * 5 * 8];
    size_t bad = 0;

    fixgen_fill(5, 4, zero, (fixgen_dyadic){1, -1}, FIXGEN_BF16, 0, 24, u);
    ck_assert(fixgen_fill_u_scaled(5, 0, zero, FIXGEN_BF16, u, four, 3, 5, 8,
                                   out));
    for (size_t p = 0; p < 3; p++)
        for (size_t i = 0; i < 5; i++)
            for (size_t c = 0; c < 8; c++) {
                uint16_t want = (uint16_t)(u[p * 8 + c] + 0x100);
                uint16_t got = out[(p * 5 + i) * 8 + c];
                if ((u[p * 8 + c] & 0x7f80) == 0)
                    want = u[p * 8 + c]; /* not hit with these seeds */
                if (got != want && bad++ == 0)
                    printf("u scaled [%zu, %zu, %zu]: u 0x%04x, 0x%04x "
                           "expected, got 0x%04x\n",
                           p, i, c, u[p * 8 + c], want, got);
            }
    ck_assert(bad == 0);
    /* 2^23 - 1 times a u of 8 significant bits (0x3f81: 129 2^-7) */
    u[0] = 0x3f81;
    ck_assert(!fixgen_fill_u_scaled(5, 0, zero, FIXGEN_BF16, u, wide, 1, 1, 8,
                                    out));
}
END_TEST

/* One mirror case: T (in), the transform, the expected bits (worked out
   by hand from the definition in analysis/fixgen.h). */
static size_t
check_mirror(const char *what, uint16_t *t, const uint16_t *want, size_t n,
             fixgen_format fmt, fixgen_mirror_role role,
             const fixgen_mirror *m, uint64_t bh, uint64_t rows, uint64_t d)
{
    size_t bad = 0;

    ck_assert_msg(fixgen_mirror_apply(t, fmt, role, m, bh, rows, d),
                  "mirror %s: refused", what);
    for (size_t i = 0; i < n; i++)
        if (t[i] != want[i] && bad++ < 4)
            printf("mirror %s [%zu]: 0x%04x expected, got 0x%04x\n", what, i,
                   want[i], t[i]);
    return bad;
}

/* The mirror transform on hand-made tensors.  BF16 K, one-row blocks,
   stride 2, 5 rows: rows 0, 1 are sources of rows 2, 3 (copied with the
   second half negated), row 4 is unpaired (4 + 2 is past the end); the
   second half times 4 in rows 0 to 3 (-3 -> -12, 1.5 -> 6, a +0 copied
   to -0), times 1/2 in row 4 (4 -> 2; 2^-133 -> 2^-134, a tie between
   +0 and 2^-133: +0).  FP16 K, blocks of 2 rows, stride 1, 7 rows: block
   0 (rows 0, 1) is the source of block 1; block 2 is not a source, its
   partner block 3 being one row long; times 3 in blocks 0 and 1 ((1 +
   2^-10) 3 = 3 + 1.5 2^-9, a tie: 3 + 2^-8, 0x4202; 2^-24 3 = 0x0003),
   times 2^-12 in blocks 2 and 3 (65504 -> 15.9921875 exact, 2^-13 ->
   2^-25 a tie with +0: +0, -2^-12 -> -2^-24).  Q: the second half +0
   (NaN and -0 too).  V: rows 2, 3 become rows 0, 1 (blocks of 2,
   stride 1, 5 rows: block 2 has no partner). */
START_TEST(test_mirror)
{
    fixgen_mirror m = {1, 2, 2, {1, 2}, {1, -1}};
    uint16_t kb[] = {0x3f80, 0x4000, 0x3f80, 0xc040, 0x0000, 0x8000, 0x0000,
                     0x3fc0, 0x1234, 0x1234, 0x1234, 0x1234, 0x5555, 0x5555,
                     0x5555, 0x5555, 0x3f80, 0x3f80, 0x4080, 0x0001};
    static const uint16_t kb_want[] = {0x3f80, 0x4000, 0x4080, 0xc140, 0x0000,
                                       0x8000, 0x0000, 0x40c0, 0x3f80, 0x4000,
                                       0xc080, 0x4140, 0x0000, 0x8000, 0x8000,
                                       0xc0c0, 0x3f80, 0x3f80, 0x4000, 0x0000};
    uint16_t kh[] = {0x1234, 0x3c01, 0x8000, 0x0001, 0x5555, 0x5555, 0x5555,
                     0x5555, 0x4321, 0x7bff, 0x0001, 0x0800, 0x7c00, 0x8c00};
    static const uint16_t kh_want[] = {0x1234, 0x4202, 0x8000, 0x0003, 0x1234,
                                       0xc202, 0x8000, 0x8003, 0x4321, 0x4bff,
                                       0x0001, 0x0000, 0x7c00, 0x8001};
    uint16_t q[] = {0x3f80, 0x7fc0, 0x8000, 0x4000, 0xbf80, 0x0001};
    static const uint16_t q_want[] = {0x3f80, 0x0000, 0x0000,
                                      0x4000, 0x0000, 0x0000};
    uint16_t v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    static const uint16_t v_want[] = {1, 2, 3, 4, 1, 2, 3, 4, 9, 10};
    uint16_t inf[] = {0x3f80, 0x7f80};
    size_t bad = 0;

    bad += check_mirror("bf16 k", kb, kb_want, 20, FIXGEN_BF16,
                        FIXGEN_MIRROR_K, &m, 1, 5, 4);
    m = (fixgen_mirror){2, 1, 1, {3, 0}, {1, -12}};
    bad += check_mirror("f16 k", kh, kh_want, 14, FIXGEN_F16, FIXGEN_MIRROR_K,
                        &m, 1, 7, 2);
    m.half = 1;
    bad += check_mirror("q", q, q_want, 6, FIXGEN_BF16, FIXGEN_MIRROR_Q, &m, 2,
                        1, 3);
    bad += check_mirror("v", v, v_want, 10, FIXGEN_BF16, FIXGEN_MIRROR_V, &m,
                        1, 5, 2);
    ck_assert(bad == 0);
    /* refusals: an infinity to scale, 13 significant bits, half > d, a
       zero block or stride */
    ck_assert(
        !fixgen_mirror_apply(inf, FIXGEN_BF16, FIXGEN_MIRROR_K, &m, 1, 1, 2));
    m.big = (fixgen_dyadic){4097, 0};
    ck_assert(
        !fixgen_mirror_apply(v, FIXGEN_BF16, FIXGEN_MIRROR_K, &m, 1, 5, 2));
    m = (fixgen_mirror){2, 1, 3, {1, 0}, {1, 0}};
    ck_assert(
        !fixgen_mirror_apply(v, FIXGEN_BF16, FIXGEN_MIRROR_Q, &m, 1, 5, 2));
    m.half = 1;
    m.block = 0;
    ck_assert(
        !fixgen_mirror_apply(v, FIXGEN_BF16, FIXGEN_MIRROR_V, &m, 1, 5, 2));
    m.block = 2;
    m.stride = 0;
    ck_assert(
        !fixgen_mirror_apply(v, FIXGEN_BF16, FIXGEN_MIRROR_V, &m, 1, 5, 2));
}
END_TEST

/* The block kinds against dump_sdpa.py's loop, written out here: for n
   ascending, pair n with n + stride unless n is already a target or the
   two blocks' lengths differ; every N <= 40, block <= 8, stride <= 6. */
START_TEST(test_mirror_pairing)
{
    size_t bad = 0;

    for (uint64_t n = 1; n <= 40; n++)
        for (uint64_t b = 1; b <= 8; b++)
            for (uint64_t g = 1; g <= 6; g++) {
                int kind[40] = {0};
                uint64_t nblk = (n + b - 1) / b;
                for (uint64_t j = 0; j + g < nblk; j++) {
                    uint64_t lo = j * b,
                             hi = (j + 1) * b < n ? (j + 1) * b : n;
                    uint64_t mlo = (j + g) * b,
                             mhi = mlo + b < n ? mlo + b : n;
                    if (kind[j] != 0 || hi - lo != mhi - mlo)
                        continue;
                    kind[j] = 1;
                    kind[j + g] = 2;
                }
                for (uint64_t j = 0; j < nblk; j++) {
                    int got = fixgen_mirror_block_kind(n, b, g, j);
                    if (got != kind[j] && bad++ < 4)
                        printf("mirror pairing N %" PRIu64 " block %" PRIu64
                               " stride %" PRIu64 " block %" PRIu64
                               ": %d expected, got %d\n",
                               n, b, g, j, kind[j], got);
                }
            }
    ck_assert(bad == 0);
}
END_TEST

/* The text form of a hash: "0x" and exactly 16 hex digits, either case;
   a refusal leaves the output as it was. */
START_TEST(test_hash_parse)
{
    static const struct
    {
        const char *s;
        bool ok;
        uint64_t h;
    } v[] = {
        {"0x0123456789abcdef", true, UINT64_C(0x0123456789abcdef)},
        {"0XFEDCBA9876543210", true, UINT64_C(0xfedcba9876543210)},
        {"0x00000000000000aF", true, UINT64_C(0xaf)},
        {"0x0123456789abcde", false, 0},   /* 15 digits */
        {"0x0123456789abcdef0", false, 0}, /* 17 digits */
        {"0x0123456789abcdeg", false, 0},  /* not hex */
        {"0123456789abcdef01", false, 0},  /* no 0x */
        {"1x0123456789abcdef", false, 0},
        {"0x", false, 0},
        {"", false, 0},
        {NULL, false, 0},
    };
    int bad = 0;

    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint64_t h = 12345;
        bool ok = fixgen_hash_parse(v[i].s, &h);
        uint64_t want = v[i].ok ? v[i].h : 12345;
        if (ok != v[i].ok || h != want) {
            printf("fixgen_hash_parse \"%s\": %s 0x%016" PRIx64
                   " expected, got %s 0x%016" PRIx64 "\n",
                   v[i].s != NULL ? v[i].s : "(null)",
                   v[i].ok ? "ok" : "refused", want, ok ? "ok" : "refused",
                   h);
            bad++;
        }
    }
    ck_assert_int_eq(bad, 0);
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
    tcase_add_test(tc, test_hash_parse);
    tcase_add_test(tc, test_dyadic);
    tcase_add_test(tc, test_dyadic_bits);
    tcase_add_test(tc, test_u_scaled);
    tcase_add_test(tc, test_mirror);
    tcase_add_test(tc, test_mirror_pairing);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
