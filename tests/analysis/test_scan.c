/* test_scan.c -- the dW_Q error's spectrum (scan_dwq_spectrum) and top
   singular value (scan_dwq_top) on matrices whose singular values are
   known exactly: a scaled permutation, an outer product of integer
   vectors, a Hadamard matrix; and a non-finite entry refused.  The
   report's rows (scan_groups): the Frobenius cosine, a group's summary
   over steps (orthogonal steps: growth 1; one matrix twice: sqrt 2), the
   ranking by risk with its tie rule, and a step whose X changes width */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scan.h"
#include "analysis/scan_groups.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

/* |GOT - WANT| <= TOL |WANT| (or <= TOL when WANT is 0), else a failure
   with both values in hex. */
static void
near(const char *what, double got, double want, double tol)
{
    double bound = want != 0 ? tol * fabs(want) : tol;

    if (!(fabs(got - want) <= bound))
        ck_abort_msg("%s: got %a, expected %a (tolerance %a)", what, got, want,
                     bound);
}

START_TEST(test_scaled_permutation)
{
    /* [3, 5]: 3 at (0,0), -4 at (1,1), 1.5 at (2,3): sigma 4, 3, 1.5 */
    double m[15] = {0};
    double sg[3], fro2 = 0, s1 = 0;
    const char *why = NULL;

    m[0 * 5 + 0] = 3;
    m[1 * 5 + 1] = -4;
    m[2 * 5 + 3] = 1.5;
    ck_assert_int_eq(scan_dwq_spectrum(m, 3, 5, sg, &fro2, &why), 0);
    near("sigma1", sg[0], 4, 0x1p-50);
    near("sigma2", sg[1], 3, 0x1p-50);
    near("sigma3", sg[2], 1.5, 0x1p-50);
    near("fro2", fro2, 27.25, 0x1p-50);
    ck_assert_int_eq(scan_dwq_top(m, 3, 5, &s1, &fro2, &why), 0);
    near("top", s1, 4, 1e-10);
    ck_assert(fro2 == 27.25); /* sums of squares of exact values */
}
END_TEST

START_TEST(test_outer_product)
{
    /* a b^T, a = (1, 2, 2) (norm 3), b = (2, -1, 2, 4) (norm 5): rank 1,
       sigma1 = 15, |M|_F^2 = 225 */
    static const double a[3] = {1, 2, 2}, b[4] = {2, -1, 2, 4};
    double m[12], mt[12], sg[3], fro2 = 0, s1 = 0;
    const char *why = NULL;

    for (size_t r = 0; r < 3; r++)
        for (size_t c = 0; c < 4; c++) {
            m[r * 4 + c] = a[r] * b[c];
            mt[c * 3 + r] = a[r] * b[c];
        }
    ck_assert_int_eq(scan_dwq_spectrum(m, 3, 4, sg, &fro2, &why), 0);
    near("sigma1", sg[0], 15, 0x1p-50);
    near("sigma2", sg[1], 0, 15 * 0x1p-48);
    near("sigma3", sg[2], 0, 15 * 0x1p-48);
    ck_assert(fro2 == 225);
    /* the transpose: the same values */
    ck_assert_int_eq(scan_dwq_spectrum(mt, 4, 3, sg, &fro2, &why), 0);
    near("sigma1 of M^T", sg[0], 15, 0x1p-50);
    ck_assert_int_eq(scan_dwq_top(m, 3, 4, &s1, &fro2, &why), 0);
    near("top", s1, 15, 0x1p-50);
    ck_assert_int_eq(scan_dwq_top(mt, 4, 3, &s1, &fro2, &why), 0);
    near("top of M^T", s1, 15, 0x1p-50);
}
END_TEST

START_TEST(test_hadamard)
{
    /* H_4 (entries +-1, H H^T = 4 I): every singular value 2 */
    static const double h[16] = {1, 1, 1,  1,  1, -1, 1,  -1,
                                 1, 1, -1, -1, 1, -1, -1, 1};
    double sg[4], fro2 = 0, s1 = 0;
    const char *why = NULL;

    ck_assert_int_eq(scan_dwq_spectrum(h, 4, 4, sg, &fro2, &why), 0);
    for (int i = 0; i < 4; i++)
        near("sigma", sg[i], 2, 0x1p-48);
    ck_assert(fro2 == 16);
    ck_assert_int_eq(scan_dwq_top(h, 4, 4, &s1, &fro2, &why), 0);
    near("top", s1, 2, 1e-12);
}
END_TEST

START_TEST(test_zero_and_nonfinite)
{
    double z[6] = {0}, m[6] = {1, 2, 3, 4, 5, 6}, sg[2], fro2 = -1, s1 = -1;
    const char *why = NULL;

    ck_assert_int_eq(scan_dwq_top(z, 2, 3, &s1, &fro2, &why), 0);
    ck_assert(s1 == 0 && fro2 == 0);
    m[4] = NAN;
    ck_assert_int_eq(scan_dwq_spectrum(m, 2, 3, sg, &fro2, &why), -1);
    ck_assert_ptr_nonnull(why);
    why = NULL;
    ck_assert_int_eq(scan_dwq_top(m, 2, 3, &s1, &fro2, &why), -1);
    ck_assert_ptr_nonnull(why);
    m[4] = INFINITY;
    ck_assert_int_eq(scan_dwq_top(m, 2, 3, &s1, &fro2, &why), -1);
}
END_TEST

START_TEST(test_dwq_cosine)
{
    /* (3, 4) . (4, 3) = 24, |a| = |b| = 5: 24/25; against (4, -3): 0 */
    const double a[2] = {3, 4}, b[2] = {4, 3}, c[2] = {4, -3};
    const double z[2] = {0, 0};

    near("cos(a, b)", scan_dwq_cosine(a, b, 2), 0.96, 0x1p-52);
    ck_assert(scan_dwq_cosine(a, c, 2) == 0);
    ck_assert(isnan(scan_dwq_cosine(a, z, 2)));
    ck_assert(isnan(scan_dwq_cosine(NULL, b, 2)));
}
END_TEST

/* One item's stats with Eq. 2-3 sums of D features (all zero but d). */
static scan_stats
item(size_t d)
{
    scan_stats r;

    scan_stats_init(&r);
    r.eq.d = d;
    return r;
}

START_TEST(test_group_summary)
{
    /* head (0, 0): steps 7 and 5 (added out of order), dW_Q [1, 2] =
       (0, 4) at 7, (3, 0) at 5: orthogonal, so cos 0, the sum (3, 4)
       has sigma1 5, |M|_F^2 25, and growth sqrt(25 / (9 + 16)) = 1.
       head (0, 1): (3, 4) at steps 1 and 2: cos 1, the sum (6, 8) has
       sigma1 10, |M|_F^2 100, growth sqrt(100 / 50) = sqrt 2. */
    scan_groups t;
    scan_stats r = item(1);
    const double m7[2] = {0, 4}, m5[2] = {3, 0}, m34[2] = {3, 4};
    size_t order[2];

    scan_groups_init(&t);
    ck_assert_int_eq(scan_groups_add(&t, 0, 7, "l0", 0, true, &r, m7, 2), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 5, "l0", 0, true, &r, m5, 2), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 1, "l0", 1, true, &r, m34, 2), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 2, "l0", 1, true, &r, m34, 2), 0);
    ck_assert_uint_eq(t.n, 2);
    scan_groups_rank(&t, order);
    ck_assert(t.g[0].by_step[0].step == 5 && t.g[0].by_step[1].step == 7);
    for (size_t i = 0; i < 2; i++)
        scan_group_spectra(&t.g[i]);
    ck_assert(t.g[0].has_dwq && t.g[0].dsum.steps == 2);
    ck_assert(t.g[0].dsum.cos_mean == 0);
    near("sigma1 (0, 0)", t.g[0].dsum.cum.sigma[0], 5, 0x1p-50);
    near("fro2 (0, 0)", t.g[0].dsum.cum.fro2, 25, 0x1p-50);
    near("growth (0, 0)", t.g[0].dsum.growth, 1, 0x1p-50);
    near("step 5 sigma1", t.g[0].by_step[0].sp.sigma[0], 3, 0x1p-50);
    near("cos (0, 1)", t.g[1].dsum.cos_mean, 1, 0x1p-52);
    near("sigma1 (0, 1)", t.g[1].dsum.cum.sigma[0], 10, 0x1p-50);
    near("growth (0, 1)", t.g[1].dsum.growth, sqrt(2.0), 0x1p-50);
    /* the layer's heads stacked at a step: only steps with X of both
       heads at once would stack two; here each step has one head */
    ck_assert_int_eq(scan_groups_layers(&t), 0);
    ck_assert_uint_eq(t.n_layers, 4);
    ck_assert(t.layers[0].step == 1 && t.layers[3].step == 7);
    scan_groups_layer_top(&t, 3);
    ck_assert(t.layers[3].ok && t.layers[3].heads == 1);
    near("layer step 7 sigma1", t.layers[3].sigma1, 4, 0x1p-40);
    scan_groups_free(&t);
    ck_assert_uint_eq(t.n, 0);
}
END_TEST

START_TEST(test_group_rank)
{
    /* risk = p1_ge2 / rows * one_sign / features:
         (1, 0): 1/4 * 2/2 = 1/4;  (0, 1): 1/2 * 2/4 = 1/4;  (0, 0): 0.
       Sorted by (layer, head): (0, 0), (0, 1), (1, 0); by decreasing
       risk, the tie by (layer, head): (0, 1), (1, 0), (0, 0). */
    scan_groups t;
    scan_stats a = item(0), b = item(0), c = item(0);
    size_t order[3];

    a.rows = 4, a.p1_ge2 = 1, a.features = 2, a.one_sign = 2;
    b.rows = 2, b.p1_ge2 = 1, b.features = 4, b.one_sign = 2;
    c.rows = 3, c.features = 1;
    scan_groups_init(&t);
    ck_assert_int_eq(scan_groups_add(&t, 1, 0, "l1", 0, true, &a, NULL, 0), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 0, "l0", 1, true, &b, NULL, 0), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 0, "l0", 0, true, &c, NULL, 0), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 1, "l0", 0, false, &c, NULL, 0),
                     0);
    scan_groups_rank(&t, order);
    ck_assert(t.g[0].layer == 0 && t.g[0].head == 0);
    ck_assert(t.g[2].layer == 1 && t.g[2].head == 0);
    ck_assert_uint_eq(t.g[0].steps, 1);
    ck_assert_uint_eq(t.g[0].st.rows, 6);
    ck_assert(t.g[1].risk == 0.25 && t.g[2].risk == 0.25);
    ck_assert(t.g[0].risk == 0);
    ck_assert(order[0] == 1 && order[1] == 2 && order[2] == 0);
    ck_assert(t.g[1].rank == 1 && t.g[2].rank == 2 && t.g[0].rank == 3);
    ck_assert(isnan(scan_group_cos_adjacent(&t.g[0])));
    scan_groups_free(&t);
}
END_TEST

START_TEST(test_group_cols)
{
    /* X of 2 columns, then of 3 in the same step: refused (-2); in
       another step it is a step of its own */
    scan_groups t;
    scan_stats r = item(1);
    const double m[3] = {1, 2, 3};

    scan_groups_init(&t);
    ck_assert_int_eq(scan_groups_add(&t, 0, 0, "l0", 0, true, &r, m, 2), 0);
    ck_assert_int_eq(scan_groups_add(&t, 0, 0, "l0", 0, false, &r, m, 3),
                     -2);
    ck_assert_int_eq(scan_groups_add(&t, 0, 1, "l0", 0, true, &r, m, 3), 0);
    ck_assert_uint_eq(t.g[0].n_by_step, 2);
    ck_assert(scan_group_dwq_prev(&t.g[0], 1) == -1);
    scan_groups_free(&t);
}
END_TEST

START_TEST(test_words)
{
    /* 1 = 0x3ff0000000000000, -2 = 0xc000000000000000 (sign, exponent
       1024 = 0x400 shifted by 52) */
    const double v[2] = {1.0, -2.0};
    double back[2];
    char buf[64], small[5];
    const char *want = "3ff0000000000000 c000000000000000";

    ck_assert_uint_eq(scan_words_format(v, 2, buf, sizeof buf), 33);
    ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(scan_words_format(v, 2, small, sizeof small), 33);
    ck_assert_str_eq(small, "3ff0");
    ck_assert_int_eq(scan_words_parse("  3ff0000000000000  "
                                      "c000000000000000 ",
                                      back, 2),
                     0);
    ck_assert(back[0] == 1.0 && back[1] == -2.0);
    ck_assert_int_eq(scan_words_parse("3ff0000000000000", back, 2), -1);
    ck_assert_int_eq(scan_words_parse("3ff0000000000000 c000000000000000 0",
                                      back, 2),
                     -1);
    ck_assert_int_eq(scan_words_parse("3ff0000000000000 zz", back, 2), -1);
}
END_TEST

START_TEST(test_stats_words)
{
    /* 17 counts, sum_p_max, 6 cells of 14 + 4, has_do, eq.d, eq.rows,
       err_sum, eq.d u_sum words and 3 sums: with eq.d = 2, 17 + 1 + 108
       + 2 + 1 + 1 + 2 + 3 = 135 words, 134 spaces; heads = 255 first
       ("ff"), has_do 1 and eq.d 2 are the 127th and 128th words. */
    scan_stats s, t;
    char buf[4096], *w;
    size_t n, spaces = 0, k;

    scan_stats_init(&s);
    s.heads = 255;
    s.sum_p_max = 0.5;
    s.o_emu.mean = -0.125;
    s.has_do = true;
    s.eq.d = 2;
    s.eq.u_sum[1] = 3.0;
    s.eq.sigma1_2 = 1e-300;
    n = scan_stats_format(&s, buf, sizeof buf);
    ck_assert_uint_eq(n, strlen(buf));
    for (size_t i = 0; i < n; i++)
        spaces += buf[i] == ' ';
    ck_assert_uint_eq(spaces, 134);
    ck_assert(strncmp(buf, "ff ", 3) == 0);
    for (w = buf, k = 1; k < 127; k++)
        w = strchr(w, ' ') + 1;
    ck_assert(strncmp(w, "1 2 ", 4) == 0);
    ck_assert_uint_eq(scan_stats_format(&s, NULL, 0), n);
    memset(&t, 0xA5, sizeof t);
    ck_assert_int_eq(scan_stats_parse(buf, &t), 0);
    ck_assert(t.heads == 255 && t.has_do && t.eq.d == 2);
    ck_assert(t.sum_p_max == 0.5 && t.o_emu.mean == -0.125);
    ck_assert(t.eq.u_sum[0] == 0 && t.eq.u_sum[1] == 3.0);
    ck_assert(t.eq.sigma1_2 == 1e-300);
    ck_assert(memcmp(&t.o_cap, &s.o_cap, sizeof s.o_cap) == 0);
    /* eq.d above SCAN_EQ23_DMAX (0x12c = 300) is refused */
    s.eq.d = 0;
    s.eq.sigma1_2 = 0;
    n = scan_stats_format(&s, buf, sizeof buf);
    ck_assert(n > 6 && strcmp(buf + n - 6, " 0 0 0") == 0);
    w = strstr(buf, " 1 0 0 ");
    ck_assert_ptr_nonnull(w);
    memcpy(w, " 1 12c", 6);
    ck_assert_int_eq(scan_stats_parse(buf, &t), -1);
}
END_TEST

static Suite *
scan_suite(void)
{
    Suite *s = suite_create("scan");
    TCase *tc = tst_add_tcase(s, "dwq", 0);

    tcase_add_test(tc, test_scaled_permutation);
    tcase_add_test(tc, test_outer_product);
    tcase_add_test(tc, test_hadamard);
    tcase_add_test(tc, test_zero_and_nonfinite);
    tc = tst_add_tcase(s, "groups", 0);
    tcase_add_test(tc, test_dwq_cosine);
    tcase_add_test(tc, test_group_summary);
    tcase_add_test(tc, test_group_rank);
    tcase_add_test(tc, test_group_cols);
    tc = tst_add_tcase(s, "words", 0);
    tcase_add_test(tc, test_words);
    tcase_add_test(tc, test_stats_words);
    return s;
}

int
main(void)
{
    return tst_run_suite(scan_suite());
}
