/* test_scan.c -- the dW_Q error's spectrum (scan_dwq_spectrum) and top
   singular value (scan_dwq_top) on matrices whose singular values are
   known exactly: a scaled permutation, an outer product of integer
   vectors, a Hadamard matrix; and a non-finite entry refused */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/scan.h"
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

static Suite *
scan_suite(void)
{
    Suite *s = suite_create("scan");
    TCase *tc = tcase_create("dwq");

    tcase_add_test(tc, test_scaled_permutation);
    tcase_add_test(tc, test_outer_product);
    tcase_add_test(tc, test_hadamard);
    tcase_add_test(tc, test_zero_and_nonfinite);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return tst_run_suite(scan_suite());
}
