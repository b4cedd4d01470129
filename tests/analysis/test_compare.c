/* test_compare.c -- the comparison of two arrays (analysis/compare.h):
   distances on the number line of BF16, FP32 and FP8 values (across
   zero, NaN, infinities), their buckets, the worst elements' order and
   the counts of cmp_add, on hand-made pairs */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "analysis/compare.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

START_TEST(test_distances)
{
    const sf_format *b = &sf_format_bf16, *f = &sf_format_f32;

    ck_assert_uint_eq(cmp_ulp_distance(b, 0x3F80, 0x3F80), 0);
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x3F80, 0x3F81), 1);
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x3F81, 0x3F80), 1);
    /* -0 and +0 are one point; the smallest subnormals are 2 apart */
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x8000, 0x0000), 0);
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x8001, 0x0001), 2);
    /* across a binade: 1 - 2^-8 and 1 + 2^-7 are 2 apart */
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x3F7F, 0x3F81), 2);
    /* the largest finite and the infinity are neighbours */
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x7F7F, 0x7F80), 1);
    /* NaNs: 0 apart, a NaN and a number infinitely far */
    ck_assert_uint_eq(cmp_ulp_distance(b, 0x7FC0, 0xFFC1), 0);
    ck_assert(cmp_ulp_distance(b, 0x7FC0, 0x3F80) == CMP_DIST_INF);
    ck_assert_uint_eq(cmp_ulp_distance(f, 0x3F800000, 0x3F800003), 3);
    ck_assert_uint_eq(cmp_ulp_distance(&sf_format_e4m3, 0x38, 0xB8), 2 * 0x38);
    ck_assert(cmp_ulp_distance(&sf_format_e4m3, 0x7F, 0x38) == CMP_DIST_INF);
}
END_TEST

START_TEST(test_buckets)
{
    char buf[32];
    uint64_t lo, hi;

    ck_assert_uint_eq(cmp_dist_bucket(0), 0);
    ck_assert_uint_eq(cmp_dist_bucket(1), 1);
    ck_assert_uint_eq(cmp_dist_bucket(2), 2);
    ck_assert_uint_eq(cmp_dist_bucket(3), 2);
    ck_assert_uint_eq(cmp_dist_bucket(4), 3);
    ck_assert_uint_eq(cmp_dist_bucket(CMP_DIST_INF), CMP_DIST_BUCKET_INF);
    cmp_dist_bucket_bounds(5, &lo, &hi);
    ck_assert_uint_eq(lo, 16);
    ck_assert_uint_eq(hi, 31);
    ck_assert_str_eq(cmp_dist_bucket_label(buf, sizeof buf, 5), "16-31");
    ck_assert_str_eq(cmp_dist_bucket_label(buf, sizeof buf, 1), "1");
    ck_assert_str_eq(
        cmp_dist_bucket_label(buf, sizeof buf, CMP_DIST_BUCKET_INF), "inf");
}
END_TEST

/* GPU and emulated BF16 values with known distances: equal, 1, 16, -0
   against +0, a NaN against 1, and 1 again. */
static const uint16_t gpu[] = {0x3F80, 0x3F80, 0x3F80, 0x8000, 0x7FC0, 0x4000};
static const uint16_t emu[] = {0x3F80, 0x3F81, 0x3F90, 0x0000, 0x3F80, 0x3FFF};

START_TEST(test_stats)
{
    cmp_stats s;

    cmp_init(&s, 3);
    for (size_t j = 0; j < sizeof gpu / sizeof gpu[0]; j++) {
        cmp_elem e = {j, 0, gpu[j], emu[j]};
        cmp_add(&s, &sf_format_bf16, gpu[j], emu[j], 1, e);
    }
    ck_assert_uint_eq(s.elements, 6);
    ck_assert_uint_eq(s.equal, 1);
    ck_assert_uint_eq(s.differ, 5); /* -0 and +0 differ in bits */
    ck_assert_uint_eq(s.nan_vs_number, 1);
    ck_assert_uint_eq(s.max_dist, 16);
    /* at most 1 apart: the equal pair, -0/+0 and the two neighbours */
    ck_assert_uint_eq(s.within, 4);
    ck_assert_uint_eq(s.hist[0], 2);
    ck_assert_uint_eq(s.hist[1], 2);
    ck_assert_uint_eq(s.hist[5], 1);
    ck_assert_uint_eq(s.hist[CMP_DIST_BUCKET_INF], 1);
    /* the 3 worst, largest first; of equal distances the first stays */
    ck_assert_uint_eq(s.n_worst, 3);
    ck_assert_uint_eq(s.worst[0].flat, 4);
    ck_assert_uint_eq(s.worst[1].flat, 2);
    ck_assert_uint_eq(s.worst[1].dist, 16);
    ck_assert_uint_eq(s.worst[2].flat, 1);
    ck_assert_uint_eq(s.worst[2].x, 0x3F80);
    ck_assert_uint_eq(s.worst[2].y, 0x3F81);
}
END_TEST

START_TEST(test_no_worst)
{
    cmp_stats s;
    cmp_elem e = {0, 0, 1, 2};

    cmp_init(&s, 0);
    cmp_add(&s, &sf_format_bf16, 1, 2, 0, e);
    ck_assert_uint_eq(s.differ, 1);
    ck_assert_uint_eq(s.n_worst, 0);
    cmp_init(&s, 1000);
    ck_assert_uint_eq(s.cap, CMP_WORST_MAX);
}
END_TEST

static Suite *
compare_suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tst_add_tcase(s, "crafted", 30);

    tcase_add_test(tc, test_distances);
    tcase_add_test(tc, test_buckets);
    tcase_add_test(tc, test_stats);
    tcase_add_test(tc, test_no_worst);
    return s;
}

int
main(void)
{
    return tst_run_suite(compare_suite());
}
