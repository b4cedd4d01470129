/* test_gradient.c -- the gradient-error analyzers: delta errors against
   MPFR, the Eq. 1 identity and the Eq. 2 rank-1 sum against explicitly
   formed products (dyadic inputs, so every value is exact), the Jacobi SVD
   against closed forms (diagonal, rank-1, rotated 2 x 2) and against
   LAPACKE when configure found it, the factorised cosines against
   flattened matrices, and the series over steps on crafted increments */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>
#ifdef HAVE_LAPACKE
#include <lapacke.h>
#endif

#include "analysis/gradient.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define EPS DBL_EPSILON

/* Uniform in [-1, 1), 53 random bits. */
static double
rand_sym(tst_rng *r)
{
    return (double)(tst_rand64(r) >> 11) * 0x1p-52 - 1.0;
}

/* A random small dyadic: an integer in [-lim, lim] times 2^-sh. */
static double
rand_dyadic(tst_rng *r, int lim, int sh)
{
    int64_t k = (int64_t)tst_rand_below(r, (uint64_t)(2 * lim + 1)) - lim;
    return ldexp((double)k, -sh);
}

static void
print_matrix(const char *name, size_t m, size_t n, const double *a)
{
    printf("  %s (%zu x %zu):\n", name, m, n);
    for (size_t i = 0; i < m && i < 8; i++) {
        printf("   ");
        for (size_t j = 0; j < n && j < 8; j++)
            printf(" %a", a[i * n + j]);
        printf(n > 8 ? " ...\n" : "\n");
    }
}

/*----------------------------------------------------------------------------
 * The delta error.
 *--------------------------------------------------------------------------*/
START_TEST(test_delta_hand)
{
    static const float lp[4] = {1.5f, -2.0f, 0x1p-20f, 3.0f};
    static const float hp[4] = {1.25f, -2.0f, 0.0f, -0x1p-30f};
    static const double want[4] = {0.25, 0.0, 0x1p-20, 3.0 + 0x1p-30};
    uint32_t lb[4], hb[4];
    double lpd[4], hpd[4], err[4], sum, sum_d;

    for (int i = 0; i < 4; i++) {
        lb[i] = tst_f32_bits(lp[i]);
        hb[i] = tst_f32_bits(hp[i]);
        lpd[i] = lp[i];
        hpd[i] = hp[i];
    }
    ck_assert_int_eq(grad_delta_error_f32(4, lb, hb, err, &sum), GRAD_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(err[i] == want[i], "err[%d] = %a, want %a", i, err[i],
                      want[i]);
    /* 3.25 + 2^-20 + 2^-30 is exact */
    ck_assert(sum == 3.25 + 0x1p-20 + 0x1p-30);
    ck_assert_int_eq(grad_delta_error(4, lpd, hpd, err, &sum_d), GRAD_OK);
    ck_assert(sum_d == sum);
    ck_assert_int_eq(grad_delta_error_f32(4, lb, hb, NULL, &sum), GRAD_OK);
    ck_assert_int_eq(grad_delta_error_f32(4, lb, hb, err, NULL), GRAD_OK);
    ck_assert_int_eq(grad_delta_error_f32(0, NULL, NULL, NULL, &sum), GRAD_OK);
    ck_assert(sum == 0);
    ck_assert_int_eq(grad_delta_error_f32(4, NULL, hb, err, &sum),
                     GRAD_EINVAL);

    /* NaN and infinity: every error written, EINPUT, the sum NaN */
    lb[1] = 0x7FC00000u;
    hb[3] = 0xFF800000u;
    ck_assert_int_eq(grad_delta_error_f32(4, lb, hb, err, &sum), GRAD_EINPUT);
    ck_assert(err[0] == 0.25 && isnan(err[1]) && err[2] == 0x1p-20);
    ck_assert(err[3] == INFINITY);
    ck_assert(isnan(sum));
    lpd[0] = INFINITY;
    ck_assert_int_eq(grad_delta_error(4, lpd, hpd, err, &sum), GRAD_EINPUT);
    ck_assert(err[0] == INFINITY && isnan(sum));
}
END_TEST

/* Random finite FP32 pairs: each error is the MPFR difference rounded to
   53 bits; the sum is within the compensated-sum bound of the exact sum
   of those errors. */
START_TEST(test_delta_mpfr)
{
    enum
    {
        N = 512
    };
    tst_rng rng;
    uint32_t lb[N], hb[N];
    double err[N], sum, abs_sum = 0;
    mpfr_t a, b, d, exact, diff;
    unsigned long bad = 0, rounds = 20 * tst_multiplier();

    tst_rng_init(&rng, 5);
    mpfr_inits2(24, a, b, (mpfr_ptr)0);
    mpfr_init2(d, 53);
    mpfr_init2(exact, 2000);
    mpfr_init2(diff, 2000);
    for (unsigned long r = 0; r < rounds; r++) {
        mpfr_set_zero(exact, 1);
        abs_sum = 0;
        for (int i = 0; i < N; i++) {
            uint32_t x, y;
            do {
                x = (uint32_t)tst_rand64(&rng);
                /* half the cases close together, like delta_lp/hp */
                if (i % 2 == 0)
                    y = x ^ (uint32_t)tst_rand_below(&rng, 1u << 12);
                else
                    y = (uint32_t)tst_rand64(&rng);
            } while ((x & 0x7F800000u) == 0x7F800000u
                     || (y & 0x7F800000u) == 0x7F800000u);
            lb[i] = x;
            hb[i] = y;
        }
        ck_assert_int_eq(grad_delta_error_f32(N, lb, hb, err, &sum), GRAD_OK);
        for (int i = 0; i < N; i++) {
            float fx, fy;
            memcpy(&fx, &lb[i], sizeof fx);
            memcpy(&fy, &hb[i], sizeof fy);
            mpfr_set_flt(a, fx, MPFR_RNDN);
            mpfr_set_flt(b, fy, MPFR_RNDN);
            mpfr_sub(d, a, b, MPFR_RNDN);
            /* the sum is of the rounded errors: add err[i] exactly */
            mpfr_set_d(diff, err[i], MPFR_RNDN);
            mpfr_add(exact, exact, diff, MPFR_RNDN);
            abs_sum += fabs(err[i]);
            if (mpfr_get_d(d, MPFR_RNDN) != err[i] && bad++ < TST_MAX_PRINT)
                printf("delta error: lp f32:%08X hp f32:%08X (%a - %a) "
                       "expected %a got %a\n",
                       (unsigned)lb[i], (unsigned)hb[i], (double)fx,
                       (double)fy, mpfr_get_d(d, MPFR_RNDN), err[i]);
        }
        {
            double ex = mpfr_get_d(exact, MPFR_RNDN);
            double bound = 2 * EPS * fabs(ex) + N * EPS * EPS * abs_sum;
            if (!(fabs(sum - ex) <= bound) && bad++ < TST_MAX_PRINT)
                printf("delta sum: expected %a got %a\n", ex, sum);
        }
    }
    ck_assert_msg(bad == 0, "%lu wrong", bad);
    mpfr_clears(a, b, d, exact, diff, (mpfr_ptr)0);
}
END_TEST

START_TEST(test_sum_and_convert)
{
    static const double x[3] = {0x1p53, 1.0, -0x1p53};
    uint16_t bf[3] = {0xC013, 0x3F80, 0x0001};
    uint32_t f[2] = {0xC01A0E2Eu, 0x00000001u};
    double out[3];

    /* the compensation keeps the 1 that a plain sum loses */
    ck_assert(grad_sum(3, x) == 1.0);
    ck_assert(grad_sum(0, x) == 0.0);
    {
        double y[2] = {INFINITY, 1.0};
        ck_assert(grad_sum(2, y) == INFINITY);
    }
    grad_from_bf16(3, bf, out);
    ck_assert(out[0] == -2.296875 && out[1] == 1.0 && out[2] == 0x1p-133);
    grad_from_f32(2, f, out);
    ck_assert(out[0] == -2.407115459442138671875 && out[1] == 0x1p-149);
}
END_TEST

/*----------------------------------------------------------------------------
 * Eqs. 1 and 2 with dyadic inputs: the two backward passes that differ only
 * in delta are computed here from their definitions (dS = alpha P o (dP -
 * delta), dQ = dS K, dW = dQ^T X), every value exact in double, and the
 * differences must equal the library's matrices bit for bit.
 *--------------------------------------------------------------------------*/
START_TEST(test_eq1_eq2_identity)
{
    enum
    {
        N = 7,
        D = 5,
        DM = 6
    };
    const double alpha = 0.125;
    tst_rng rng;
    double p[N * N], k[N * D], x[N * DM], dp[N * N];
    double dlp[N], dhp[N], dd[N];
    double ds_lp[N * N], ds_hp[N * N], dq_lp[N * D], dq_hp[N * D];
    double pk[N * D], pk_ref[N * D], dq_err[N * D];
    double dw_lp[D * DM], dw_hp[D * DM], dw_err[D * DM], prod[D * DM];
    unsigned long bad = 0;

    tst_rng_init(&rng, 11);
    for (unsigned long rep = 0; rep < 50 * tst_multiplier(); rep++) {
        for (int t = 0; t < N; t++) {
            /* causal rows of probabilities in multiples of 1/16 */
            for (int j = 0; j < N; j++) {
                p[t * N + j] = j <= t ? rand_dyadic(&rng, 16, 4) : 0.0;
                if (p[t * N + j] < 0)
                    p[t * N + j] = -p[t * N + j];
                dp[t * N + j] = rand_dyadic(&rng, 64, 5);
            }
            dhp[t] = rand_dyadic(&rng, 64, 6);
            dlp[t] = dhp[t] + rand_dyadic(&rng, 8, 12);
            for (int i = 0; i < D; i++)
                k[t * D + i] = rand_dyadic(&rng, 32, 3);
            for (int j = 0; j < DM; j++)
                x[t * DM + j] = rand_dyadic(&rng, 32, 4);
        }
        ck_assert_int_eq(grad_delta_error(N, dlp, dhp, dd, NULL), GRAD_OK);
        /* the two backward passes */
        for (int t = 0; t < N; t++)
            for (int j = 0; j < N; j++) {
                ds_lp[t * N + j] =
                    alpha * p[t * N + j] * (dp[t * N + j] - dlp[t]);
                ds_hp[t * N + j] =
                    alpha * p[t * N + j] * (dp[t * N + j] - dhp[t]);
            }
        for (int t = 0; t < N; t++)
            for (int i = 0; i < D; i++) {
                double sl = 0, sh = 0, sp = 0;
                for (int j = 0; j < N; j++) {
                    sl += ds_lp[t * N + j] * k[j * D + i];
                    sh += ds_hp[t * N + j] * k[j * D + i];
                    sp += p[t * N + j] * k[j * D + i];
                }
                dq_lp[t * D + i] = sl;
                dq_hp[t * D + i] = sh;
                pk_ref[t * D + i] = sp;
            }
        for (int i = 0; i < D; i++)
            for (int j = 0; j < DM; j++) {
                double sl = 0, sh = 0, sx = 0;
                for (int t = 0; t < N; t++) {
                    sl += dq_lp[t * D + i] * x[t * DM + j];
                    sh += dq_hp[t * D + i] * x[t * DM + j];
                    /* Eq. 2 as a product: -alpha (PK)^T diag(dd) X */
                    sx += pk_ref[t * D + i] * (dd[t] * x[t * DM + j]);
                }
                dw_lp[i * DM + j] = sl;
                dw_hp[i * DM + j] = sh;
                prod[i * DM + j] = -alpha * sx;
            }

        ck_assert_int_eq(grad_pk(N, N, D, p, k, pk), GRAD_OK);
        ck_assert_int_eq(grad_dq_error(N, D, alpha, dd, pk, dq_err), GRAD_OK);
        ck_assert_int_eq(grad_dwq_error(N, D, DM, alpha, dd, pk, x, dw_err),
                         GRAD_OK);
        for (int i = 0; i < N * D; i++) {
            /* Eq. 1: dQ_hp - dQ_lp = alpha diag(dd) (PK) = -dq_err */
            if (pk[i] != pk_ref[i] || dq_hp[i] - dq_lp[i] != -dq_err[i]
                || dq_lp[i] - dq_hp[i] != dq_err[i]) {
                if (bad++ < TST_MAX_PRINT)
                    printf("Eq. 1, rep %lu, entry %d: dQ_hp - dQ_lp %a, "
                           "-dq_err %a, pk %a / %a\n",
                           rep, i, dq_hp[i] - dq_lp[i], -dq_err[i], pk[i],
                           pk_ref[i]);
            }
        }
        for (int i = 0; i < D * DM; i++) {
            /* Eq. 2: dW_lp - dW_hp = the rank-1 sum = the product */
            if (dw_lp[i] - dw_hp[i] != dw_err[i] || prod[i] != dw_err[i]) {
                if (bad++ < TST_MAX_PRINT) {
                    printf("Eq. 2, rep %lu, entry %d: dW_lp - dW_hp %a, "
                           "product %a, dw_err %a\n",
                           rep, i, dw_lp[i] - dw_hp[i], prod[i], dw_err[i]);
                    print_matrix("PK", N, D, pk);
                    print_matrix("X", N, DM, x);
                    print_matrix("dd", 1, N, dd);
                }
            }
        }
    }
    ck_assert_msg(bad == 0, "%lu entries differ", bad);
}
END_TEST

/* Random doubles: the rank-1 sum against the product formed column by
   column (another order), to rounding. */
START_TEST(test_eq2_random)
{
    enum
    {
        N = 40,
        D = 8,
        DM = 24
    };
    tst_rng rng;
    double pk[N * D], x[N * DM], dd[N], e[D * DM];
    double maxerr = 0, scale = 0;

    tst_rng_init(&rng, 12);
    for (int i = 0; i < N * D; i++)
        pk[i] = rand_sym(&rng);
    for (int i = 0; i < N * DM; i++)
        x[i] = rand_sym(&rng);
    for (int t = 0; t < N; t++)
        dd[t] = rand_sym(&rng) * 1e-3;
    ck_assert_int_eq(grad_dwq_error(N, D, DM, 0.125, dd, pk, x, e), GRAD_OK);
    for (int i = 0; i < D; i++)
        for (int j = 0; j < DM; j++) {
            double s = 0, sa = 0;
            for (int t = N - 1; t >= 0; t--) {
                double term = dd[t] * x[t * DM + j] * pk[t * D + i];
                s += term;
                sa += fabs(term);
            }
            s *= -0.125;
            if (fabs(s - e[i * DM + j]) > maxerr)
                maxerr = fabs(s - e[i * DM + j]);
            if (0.125 * sa > scale)
                scale = 0.125 * sa;
        }
    ck_assert_msg(maxerr <= 4 * N * EPS * scale, "max error %a, scale %a",
                  maxerr, scale);

    /* argument checks */
    ck_assert_int_eq(grad_dwq_error(0, D, DM, 0.125, dd, pk, x, e),
                     GRAD_EINVAL);
    ck_assert_int_eq(grad_dwq_error(N, D, DM, NAN, dd, pk, x, e), GRAD_EINVAL);
    ck_assert_int_eq(grad_dwq_error(N, D, DM, 0.125, dd, pk, NULL, e),
                     GRAD_EINVAL);
    dd[3] = NAN;
    ck_assert_int_eq(grad_dwq_error(N, D, DM, 0.125, dd, pk, x, e),
                     GRAD_EINPUT);
    ck_assert_int_eq(grad_dq_error(N, D, 0.125, dd, pk, e), GRAD_EINPUT);
    pk[0] = INFINITY;
    ck_assert_int_eq(grad_pk(1, 1, 1, pk, pk, e), GRAD_EINPUT);
    ck_assert_int_eq(grad_pk(0, 1, 1, pk, pk, e), GRAD_EINVAL);
}
END_TEST

/* P K by hand. */
START_TEST(test_pk_hand)
{
    /* P = [[1/2, 1/2, 0], [1/4, 1/4, 1/2]], K = [[1, 2], [3, -4], [8, 0]] */
    static const double p[6] = {0.5, 0.5, 0, 0.25, 0.25, 0.5};
    static const double k[6] = {1, 2, 3, -4, 8, 0};
    static const double want[4] = {2, -1, 5, -0.5};
    double pk[4];

    ck_assert_int_eq(grad_pk(2, 3, 2, p, k, pk), GRAD_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(pk[i] == want[i], "pk[%d] = %a", i, pk[i]);
}
END_TEST

/*----------------------------------------------------------------------------
 * The SVD.
 *--------------------------------------------------------------------------*/

/* Runs grad_svd on A with all vectors; returns its code. */
static int
svd_all(size_t m, size_t n, const double *a, double *sigma, double *u,
        double *v, grad_svd_info *info)
{
    size_t k = m < n ? m : n;
    double *work = malloc(grad_svd_work_size(m, n) * sizeof *work);
    int rc;

    ck_assert_ptr_nonnull(work);
    rc = grad_svd(m, n, a, k, sigma, u, v, work, info);
    free(work);
    return rc;
}

/* |x - y| <= tol for K entries; prints on failure. */
static bool
near_vec(const char *what, size_t k, const double *x, const double *y,
         double tol)
{
    bool ok = true;

    for (size_t i = 0; i < k; i++)
        if (!(fabs(x[i] - y[i]) <= tol)) {
            if (ok)
                printf("%s: entry %zu: %a, expected %a (tol %a)\n", what, i,
                       x[i], y[i], tol);
            ok = false;
        }
    return ok;
}

START_TEST(test_svd_diagonal)
{
    /* diag(3, -5, 1): sigma 5, 3, 1 exactly (no rotation happens);
       A e1 = -5 e1, so u1 = e1 (positive largest entry) and v1 = -e1 */
    static const double a[9] = {3, 0, 0, 0, -5, 0, 0, 0, 1};
    static const double s_want[3] = {5, 3, 1};
    static const double u_want[9] = {0, 1, 0, 1, 0, 0, 0, 0, 1};
    static const double v_want[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
    double s[3], u[9], v[9];
    grad_svd_info info;

    ck_assert_int_eq(svd_all(3, 3, a, s, u, v, &info), GRAD_OK);
    ck_assert(near_vec("diag sigma", 3, s, s_want, 0));
    ck_assert(near_vec("diag u", 9, u, u_want, 0));
    ck_assert(near_vec("diag v", 9, v, v_want, 0));
    ck_assert(info.k == 3 && info.sigma1 == 5 && info.sigma2 == 3);
    ck_assert(info.ratio == 5.0 / 3.0);
    ck_assert(info.energy1 == 25.0 / 35.0 && info.fro2 == 35.0);
    ck_assert_uint_eq(info.sweeps, 1);

    /* wide 2 x 4, entries 2 and -1/2 off the corner: sigma 2, 1/2 */
    {
        static const double w[8] = {0, 0, 2, 0, 0, -0.5, 0, 0};
        static const double ws[2] = {2, 0.5};
        static const double wu[4] = {1, 0, 0, 1};
        static const double wv[8] = {0, 0, 1, 0, 0, -1, 0, 0};
        double s2[2], u2[4], v2[8];

        ck_assert_int_eq(svd_all(2, 4, w, s2, u2, v2, &info), GRAD_OK);
        ck_assert(near_vec("wide sigma", 2, s2, ws, 0));
        ck_assert(near_vec("wide u", 4, u2, wu, 0));
        ck_assert(near_vec("wide v", 8, v2, wv, 0));
        ck_assert(info.ratio == 4 && info.energy1 == 4 / 4.25);
    }

    /* scaling: subnormal and huge entries keep their exact values */
    {
        double t[4] = {0x1.8p-1070, 0, 0, -0x1p-1073};
        double h[4] = {0x1p1000, 0, 0, 0x1.8p1020};
        double st[2], sh[2], ut[4], vt[4];
        double tw[2] = {0x1.8p-1070, 0x1p-1073};
        double hw[2] = {0x1.8p1020, 0x1p1000};

        ck_assert_int_eq(svd_all(2, 2, t, st, ut, vt, &info), GRAD_OK);
        ck_assert(near_vec("subnormal sigma", 2, st, tw, 0));
        ck_assert(info.ratio == 12.0);
        ck_assert_int_eq(svd_all(2, 2, h, sh, ut, vt, &info), GRAD_OK);
        ck_assert(near_vec("huge sigma", 2, sh, hw, 0));
        ck_assert(info.fro2 == INFINITY); /* sigma1^2 overflows */
        ck_assert(info.energy1 > 0.999999 && info.energy1 < 1);
    }
}
END_TEST

START_TEST(test_svd_rank1)
{
    /* a b^T with |a| = |b| = 5: sigma1 = 25, the rest 0 to rounding;
       u1 = a/5 (its largest entry, 4, is positive), v1 = b/5 */
    static const double av[4] = {1, 2, -2, 4};
    static const double bv[6] = {2, 1, -2, 0, 4, 0};
    double a[24], at[24], s[4], u[16], v[24], ua[4], vb[6];
    grad_svd_info info;

    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) {
            a[i * 6 + j] = av[i] * bv[j];
            at[j * 4 + i] = av[i] * bv[j];
        }
    for (int i = 0; i < 4; i++)
        ua[i] = av[i] / 5;
    for (int j = 0; j < 6; j++)
        vb[j] = bv[j] / 5;
    ck_assert_int_eq(svd_all(4, 6, a, s, u, v, &info), GRAD_OK);
    ck_assert_msg(fabs(s[0] - 25) <= 8 * EPS * 25, "sigma1 %a", s[0]);
    for (int i = 1; i < 4; i++)
        ck_assert_msg(s[i] <= 8 * EPS * 25, "sigma%d %a", i + 1, s[i]);
    ck_assert(near_vec("rank-1 u", 4, u, ua, 8 * EPS));
    ck_assert(near_vec("rank-1 v", 6, v, vb, 8 * EPS));
    ck_assert(info.ratio > 1e13);
    ck_assert(info.energy1 > 1 - 1e-14 && info.energy1 <= 1);
    /* the transpose: the roles of u and v swap */
    ck_assert_int_eq(svd_all(6, 4, at, s, v, u, &info), GRAD_OK);
    ck_assert_msg(fabs(s[0] - 25) <= 8 * EPS * 25, "sigma1 %a", s[0]);
    /* the largest entry of b/5 is 4/5 > 0, so v1 = b/5 and u1 = a/5 */
    ck_assert(near_vec("rank-1^T u", 6, v, vb, 8 * EPS));
    ck_assert(near_vec("rank-1^T v", 4, u, ua, 8 * EPS));

    /* the zero matrix: sigma 0, ratio and energy NaN, vectors on the
       rotated side 0 and the identity's columns on the other */
    {
        double z[6] = {0}, sz[2], uz[6], vz[4];
        ck_assert_int_eq(svd_all(3, 2, z, sz, uz, vz, &info), GRAD_OK);
        ck_assert(sz[0] == 0 && sz[1] == 0);
        ck_assert(isnan(info.ratio) && isnan(info.energy1));
        ck_assert(info.fro2 == 0 && info.sigma1 == 0);
        for (int i = 0; i < 6; i++)
            ck_assert(uz[i] == 0);
        ck_assert(vz[0] == 1 && vz[1] == 0 && vz[2] == 0 && vz[3] == 1);
    }
}
END_TEST

START_TEST(test_svd_rotation)
{
    /* A = R(theta) diag(3, 1/2) R(phi)^T: sigma 3, 1/2, u_i and v_i the
       columns of the rotations (signs as the normalisation picks them) */
    const double th = 0.5, ph = 1.1;
    const double ct = cos(th), st = sin(th), cp = cos(ph), sp = sin(ph);
    double a[4], s[2], u[4], v[4];
    double uw[4] = {ct, st, -st, ct}, vw[4] = {cp, sp, -sp, cp};
    double sw[2] = {3, 0.5};
    grad_svd_info info;

    /* A = [ct -st; st ct] diag(3, .5) [cp sp; -sp cp] */
    a[0] = 3 * ct * cp + 0.5 * st * sp;
    a[1] = 3 * ct * sp - 0.5 * st * cp;
    a[2] = 3 * st * cp - 0.5 * ct * sp;
    a[3] = 3 * st * sp + 0.5 * ct * cp;
    ck_assert_int_eq(svd_all(2, 2, a, s, u, v, &info), GRAD_OK);
    ck_assert(near_vec("rotation sigma", 2, s, sw, 16 * EPS));
    ck_assert(near_vec("rotation u", 4, u, uw, 16 * EPS));
    ck_assert(near_vec("rotation v", 4, v, vw, 16 * EPS));
    ck_assert(fabs(info.ratio - 6) <= 64 * EPS);
    ck_assert(fabs(info.energy1 - 9 / 9.25) <= 16 * EPS);

    /* equal singular values: 2 R(phi) has sigma 2, 2, ratio 1, energy
       1/2 */
    a[0] = 2 * cp;
    a[1] = -2 * sp;
    a[2] = 2 * sp;
    a[3] = 2 * cp;
    ck_assert_int_eq(svd_all(2, 2, a, s, u, v, &info), GRAD_OK);
    ck_assert(fabs(s[0] - 2) <= 8 * EPS && fabs(s[1] - 2) <= 8 * EPS);
    ck_assert(fabs(info.ratio - 1) <= 8 * EPS);
    ck_assert(fabs(info.energy1 - 0.5) <= 8 * EPS);
}
END_TEST

/* The independent checks on random matrices: U diag(sigma) V^T = A, U and
   V orthonormal, sum sigma^2 = ||A||_F^2; and with LAPACKE, the singular
   values and (where they are well separated) the vectors of dgesvd. */
static unsigned long
check_random_svd(tst_rng *rng, size_t m, size_t n, bool lowrank)
{
    size_t k = m < n ? m : n;
    double *a = malloc(m * n * sizeof *a), *s = malloc(k * sizeof *s);
    double *u = malloc(k * m * sizeof *u), *v = malloc(k * n * sizeof *v);
    double fro = 0, worst = 0, orth = 0;
    grad_svd_info info;
    unsigned long bad = 0;
    double tol;

    ck_assert(a && s && u && v);
    for (size_t i = 0; i < m * n; i++)
        a[i] = rand_sym(rng);
    if (lowrank) {
        /* rank 3 plus a little noise: the shape of a dW^Q error */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                a[i * n + j] = 1e-6 * a[i * n + j]
                               + sin((double)(i + 1)) * cos((double)j)
                               + 0.3 * cos((double)(3 * i)) * sin((double)j)
                               + 0.01 * (double)((i * j) % 7);
    }
    for (size_t i = 0; i < m * n; i++)
        fro += a[i] * a[i];
    ck_assert_int_eq(svd_all(m, n, a, s, u, v, &info), GRAD_OK);
    tol = 64 * sqrt((double)(m > n ? m : n)) * EPS;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double r = 0;
            for (size_t l = 0; l < k; l++)
                r += u[l * m + i] * s[l] * v[l * n + j];
            if (fabs(r - a[i * n + j]) > worst)
                worst = fabs(r - a[i * n + j]);
        }
    /* the rotation side (V when m >= n, else U) is orthonormal to
       rounding; the other side, W's columns divided by sigma, loses
       accuracy as sigma_1 / sigma: it is checked for sigma > 0 with the
       tolerance scaled by that ratio */
    for (size_t p = 0; p < k; p++)
        for (size_t q = 0; q < k; q++) {
            double du = 0, dv = 0, want = p == q ? 1 : 0;
            double lo = s[p] < s[q] ? s[p] : s[q];
            double rot, div;

            for (size_t i = 0; i < m; i++)
                du += u[p * m + i] * u[q * m + i];
            for (size_t j = 0; j < n; j++)
                dv += v[p * n + j] * v[q * n + j];
            rot = fabs((m >= n ? dv : du) - want);
            div = fabs((m >= n ? du : dv) - want);
            if (rot > orth)
                orth = rot;
            if (lo > 0 && div * lo / s[0] > orth)
                orth = div * lo / s[0];
        }
    for (size_t i = 0; i + 1 < k; i++)
        if (s[i] < s[i + 1])
            bad++;
    if (worst > tol * s[0] || orth > tol
        || fabs(info.fro2 - fro) > tol * fro) {
        printf("svd %zu x %zu: reconstruction %a, orthogonality %a, "
               "fro2 %a vs %a\n",
               m, n, worst, orth, info.fro2, fro);
        print_matrix("A", m, n, a);
        bad++;
    }
#ifdef HAVE_LAPACKE
    {
        double *ac = malloc(m * n * sizeof *ac), *sl = malloc(k * sizeof *sl);
        double *ul = malloc(m * k * sizeof *ul),
               *vl = malloc(k * n * sizeof *vl);
        double *sup = malloc(k * sizeof *sup);
        lapack_int info_l;

        ck_assert(ac && sl && ul && vl && sup);
        memcpy(ac, a, m * n * sizeof *ac);
        info_l = LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'S', 'S', (lapack_int)m,
                                (lapack_int)n, ac, (lapack_int)n, sl, ul,
                                (lapack_int)k, vl, (lapack_int)n, sup);
        ck_assert_int_eq(info_l, 0);
        for (size_t i = 0; i < k; i++) {
            bool sep = true;
            double dot_u = 0, dot_v = 0;

            if (fabs(s[i] - sl[i]) > tol * sl[0]) {
                if (bad++ < TST_MAX_PRINT)
                    printf("svd %zu x %zu: sigma%zu %a, LAPACKE %a\n", m, n,
                           i + 1, s[i], sl[i]);
            }
            /* a vector is determined (up to sign) when its singular value
               is apart from its neighbours and from 0 */
            if (i > 0 && sl[i - 1] - sl[i] < 1e-6 * sl[0])
                sep = false;
            if (i + 1 < k && sl[i] - sl[i + 1] < 1e-6 * sl[0])
                sep = false;
            if (sl[i] < 1e-6 * sl[0])
                sep = false;
            if (!sep)
                continue;
            for (size_t r = 0; r < m; r++)
                dot_u += u[i * m + r] * ul[r * k + i];
            for (size_t c = 0; c < n; c++)
                dot_v += v[i * n + c] * vl[i * n + c];
            /* the same sign on both sides, and parallel */
            if (fabs(fabs(dot_u) - 1) > 1e-8 || fabs(fabs(dot_v) - 1) > 1e-8
                || (dot_u > 0) != (dot_v > 0)) {
                if (bad++ < TST_MAX_PRINT)
                    printf("svd %zu x %zu: vectors %zu: u.u_L %a, v.v_L %a\n",
                           m, n, i + 1, dot_u, dot_v);
            }
        }
        free(ac);
        free(sl);
        free(ul);
        free(vl);
        free(sup);
    }
#endif
    free(a);
    free(s);
    free(u);
    free(v);
    return bad;
}

START_TEST(test_svd_random)
{
    static const size_t shapes[][2] = {{1, 1}, {1, 5},   {5, 1},
                                       {2, 3}, {5, 3},   {3, 5},
                                       {8, 8}, {16, 40}, {40, 16}};
    tst_rng rng;
    unsigned long bad = 0;

    tst_rng_init(&rng, 21);
    for (unsigned long rep = 0; rep < 3 * tst_multiplier(); rep++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            bad += check_random_svd(&rng, shapes[i][0], shapes[i][1], false);
            bad += check_random_svd(&rng, shapes[i][0], shapes[i][1], true);
        }
    /* the paper's shape, d x D = 64 x 768, once */
    bad += check_random_svd(&rng, 64, 768, true);
    ck_assert_msg(bad == 0, "%lu failures", bad);
}
END_TEST

START_TEST(test_svd_args)
{
    double a[4] = {1, 2, 3, 4}, work[16], s[2], u[4], v[4];

    ck_assert_uint_eq(grad_svd_work_size(2, 2), 4 + 4 + 2);
    ck_assert_uint_eq(grad_svd_work_size(64, 768), 768 * 64 + 64 * 64 + 64);
    ck_assert_uint_eq(grad_svd_work_size(768, 64), 768 * 64 + 64 * 64 + 64);
    ck_assert_uint_eq(grad_svd_work_size(0, 3), 0);
    ck_assert_uint_eq(grad_svd_work_size(SIZE_MAX / 2, SIZE_MAX / 2), 0);
    ck_assert_uint_eq(grad_svd_work_size(SIZE_MAX / 4, 3), 0);
    ck_assert_int_eq(grad_svd(2, 2, a, 3, s, u, v, work, NULL), GRAD_EINVAL);
    ck_assert_int_eq(grad_svd(2, 2, a, 1, s, NULL, v, work, NULL),
                     GRAD_EINVAL);
    ck_assert_int_eq(grad_svd(2, 2, a, 0, NULL, NULL, NULL, work, NULL),
                     GRAD_OK);
    ck_assert_int_eq(grad_svd(2, 2, a, 0, s, NULL, NULL, NULL, NULL),
                     GRAD_EINVAL);
    a[2] = NAN;
    ck_assert_int_eq(grad_svd(2, 2, a, 0, s, NULL, NULL, work, NULL),
                     GRAD_EINPUT);
    for (int c = 0; c >= -5; c--)
        ck_assert_ptr_nonnull(grad_strerror(c));
}
END_TEST

/* Eq. 3's premise: when every rank-1 term points the same way, the dW^Q
   error is rank 1 whatever the coefficients; random terms spread their
   energy. */
START_TEST(test_dwq_rank)
{
    enum
    {
        N = 32,
        D = 8,
        DM = 20
    };
    tst_rng rng;
    double pk[N * D], x[N * DM], dd[N], e[D * DM], u0[D], x0[DM];
    double work[DM * D + D * D + D], s[D], cos[N];
    double u1[D], v1[DM];
    grad_svd_info info;
    grad_cos_summary cs;
    double cwork[2 * N];

    tst_rng_init(&rng, 31);
    for (int i = 0; i < D; i++)
        u0[i] = rand_sym(&rng);
    for (int j = 0; j < DM; j++)
        x0[j] = rand_sym(&rng);
    for (int t = 0; t < N; t++) {
        double a = 0.5 + (double)t, b = 1 + 0.25 * (double)(t % 5);
        for (int i = 0; i < D; i++)
            pk[t * D + i] = a * u0[i];
        for (int j = 0; j < DM; j++)
            x[t * DM + j] = (t % 3 == 0 ? -b : b) * x0[j];
        dd[t] = 1e-4 * (1 + rand_sym(&rng));
    }
    ck_assert_int_eq(grad_dwq_error(N, D, DM, 0.125, dd, pk, x, e), GRAD_OK);
    ck_assert_int_eq(grad_svd(D, DM, e, 1, s, u1, v1, work, &info), GRAD_OK);
    ck_assert_msg(info.energy1 > 1 - 1e-14, "energy1 %a", info.energy1);
    ck_assert(info.ratio > 1e10);
    ck_assert_int_eq(grad_rank1_cosine(N, D, DM, pk, x, NULL, 0.9, cwork, &cs),
                     GRAD_OK);
    ck_assert_uint_eq(cs.pairs, N * (N - 1) / 2);
    ck_assert(cs.frac_above == 1.0 && cs.mean_abs > 1 - 1e-14);
    ck_assert(cs.min < -1 + 1e-14 && cs.max > 1 - 1e-14);
    /* each term is +- the top direction */
    ck_assert_int_eq(grad_rank1_align(N, D, DM, pk, x, u1, v1, cos), GRAD_OK);
    for (int t = 0; t < N; t++)
        ck_assert_msg(fabs(fabs(cos[t]) - 1) < 1e-14, "cos[%d] %a", t, cos[t]);

    /* random terms */
    for (int i = 0; i < N * D; i++)
        pk[i] = rand_sym(&rng);
    for (int i = 0; i < N * DM; i++)
        x[i] = rand_sym(&rng);
    ck_assert_int_eq(grad_dwq_error(N, D, DM, 0.125, dd, pk, x, e), GRAD_OK);
    ck_assert_int_eq(grad_svd(D, DM, e, 0, s, NULL, NULL, work, &info),
                     GRAD_OK);
    ck_assert_msg(info.energy1 < 0.7, "energy1 %a", info.energy1);
}
END_TEST

/*----------------------------------------------------------------------------
 * Cosines.
 *--------------------------------------------------------------------------*/

/* The cosine of two flattened d x D matrices c_a u_a^T x_a and c_b u_b^T
   x_b, formed entry by entry. */
static double
brute_cos(size_t d, size_t dm, const double *ua, const double *xa, double ca,
          const double *ub, const double *xb, double cb)
{
    double ab = 0, aa = 0, bb = 0;

    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < dm; j++) {
            double ra = ca * ua[i] * xa[j], rb = cb * ub[i] * xb[j];
            ab += ra * rb;
            aa += ra * ra;
            bb += rb * rb;
        }
    return ab / sqrt(aa * bb);
}

START_TEST(test_cosine_crafted)
{
    /* u: e1, 2 e1, e2, e1 + e2, 0; x: e1, 3 e1, e1, e1 + e2, e1 */
    static const double pk[10] = {1, 0, 2, 0, 0, 1, 1, 1, 0, 0};
    static const double x[15] = {1, 0, 0, 3, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0};
    static const double c[5] = {1, -2, 1, 0.5, 3};
    double work[10];
    grad_cos_summary s;

    /* pairs of the four non-zero terms: (0,1) 1, (0,2) 0, (0,3) 1/2,
       (1,2) 0, (1,3) 1/2, (2,3) 1/2 */
    ck_assert_int_eq(grad_rank1_cosine(5, 2, 3, pk, x, NULL, 0.9, work, &s),
                     GRAD_OK);
    ck_assert_uint_eq(s.terms, 4);
    ck_assert_uint_eq(s.skipped, 1);
    ck_assert_uint_eq(s.pairs, 6);
    ck_assert(s.max == 1 && s.min == 0);
    ck_assert_double_eq_tol(s.mean, 2.5 / 6, 4 * EPS);
    ck_assert_double_eq_tol(s.mean_abs, 2.5 / 6, 4 * EPS);
    ck_assert(s.frac_above == 1.0 / 6);
    /* with the coefficients, term 1 flips: (0,1) -1, (1,3) -1/2 */
    ck_assert_int_eq(grad_rank1_cosine(5, 2, 3, pk, x, c, 0.4, work, &s),
                     GRAD_OK);
    ck_assert(s.min == -1);
    ck_assert_double_eq_tol(s.max, 0.5, 4 * EPS);
    ck_assert_double_eq_tol(s.mean, (-1 + 0.5 - 0.5 + 0.5) / 6, 4 * EPS);
    ck_assert_double_eq_tol(s.mean_abs, 2.5 / 6, 4 * EPS);
    ck_assert(s.frac_above == 4.0 / 6);
    /* a zero coefficient leaves its term out */
    {
        double c0[5] = {1, 0, 1, 1, 1};
        ck_assert_int_eq(grad_rank1_cosine(5, 2, 3, pk, x, c0, 0.9, work, &s),
                         GRAD_OK);
        ck_assert_uint_eq(s.terms, 3);
        ck_assert_uint_eq(s.pairs, 3);
    }
    /* one term: no pair */
    ck_assert_int_eq(grad_rank1_cosine(1, 2, 3, pk, x, NULL, 0.9, work, &s),
                     GRAD_OK);
    ck_assert(s.pairs == 0 && isnan(s.mean) && isnan(s.frac_above));
    ck_assert_int_eq(grad_rank1_cosine(5, 2, 3, pk, x, NULL, 1.5, work, &s),
                     GRAD_EINVAL);
    ck_assert_int_eq(grad_rank1_cosine(5, 2, 3, pk, x, NULL, 0.9, NULL, &s),
                     GRAD_EINVAL);
}
END_TEST

START_TEST(test_cosine_random)
{
    enum
    {
        N = 24,
        D = 6,
        DM = 10
    };
    tst_rng rng;
    double pk[N * D], x[N * DM], c[N], work[2 * N], cosv[N];
    double u1[D], v1[DM];
    grad_cos_summary s;
    unsigned long bad = 0;

    tst_rng_init(&rng, 41);
    for (unsigned long rep = 0; rep < 20 * tst_multiplier(); rep++) {
        double sum = 0, sum_abs = 0, mn = INFINITY, mx = -INFINITY;
        uint64_t pairs = 0, above = 0;

        for (int i = 0; i < N * D; i++)
            pk[i] = rand_sym(&rng);
        for (int i = 0; i < N * DM; i++)
            x[i] = rand_sym(&rng);
        /* a shared component, so that many cosines are large */
        for (int t = 0; t < N; t++) {
            double w = 3 * rand_sym(&rng);
            for (int j = 0; j < DM; j++)
                x[t * DM + j] += w * (double)(j + 1);
            for (int i = 0; i < D; i++)
                pk[t * D + i] += w * (double)(i % 2 ? 1 : -1);
            c[t] = rand_sym(&rng);
        }
        for (int i = 0; i < D; i++)
            u1[i] = rand_sym(&rng);
        for (int j = 0; j < DM; j++)
            v1[j] = rand_sym(&rng);
        ck_assert_int_eq(grad_rank1_cosine(N, D, DM, pk, x, c, 0.9, work, &s),
                         GRAD_OK);
        for (int a = 0; a < N; a++)
            for (int b = a + 1; b < N; b++) {
                double cb = brute_cos(D, DM, pk + a * D, x + a * DM, c[a],
                                      pk + b * D, x + b * DM, c[b]);
                pairs++;
                sum += cb;
                sum_abs += fabs(cb);
                if (cb < mn)
                    mn = cb;
                if (cb > mx)
                    mx = cb;
                if (fabs(cb) > 0.9)
                    above++;
            }
        if (s.pairs != pairs || fabs(s.mean - sum / (double)pairs) > 1e-13
            || fabs(s.mean_abs - sum_abs / (double)pairs) > 1e-13
            || fabs(s.min - mn) > 1e-13 || fabs(s.max - mx) > 1e-13
            || s.frac_above != (double)above / (double)pairs) {
            if (bad++ < TST_MAX_PRINT) {
                printf("cosine rep %lu: mean %a/%a min %a/%a max %a/%a "
                       "above %a/%a\n",
                       rep, s.mean, sum / (double)pairs, s.min, mn, s.max, mx,
                       s.frac_above, (double)above / (double)pairs);
                print_matrix("PK", N, D, pk);
            }
        }
        ck_assert_int_eq(grad_rank1_align(N, D, DM, pk, x, u1, v1, cosv),
                         GRAD_OK);
        for (int t = 0; t < N; t++) {
            double cb = brute_cos(D, DM, pk + t * D, x + t * DM, 1, u1, v1, 1);
            if (fabs(cosv[t] - cb) > 1e-13 && bad++ < TST_MAX_PRINT)
                printf("align rep %lu token %d: %a, brute %a\n", rep, t,
                       cosv[t], cb);
        }
    }
    ck_assert_msg(bad == 0, "%lu failures", bad);
    {
        double z[DM] = {0};
        ck_assert_int_eq(grad_rank1_align(N, D, DM, pk, x, u1, z, cosv),
                         GRAD_EINVAL);
        for (int i = 0; i < DM; i++)
            x[i] = 0;
        ck_assert_int_eq(grad_rank1_align(N, D, DM, pk, x, u1, v1, cosv),
                         GRAD_OK);
        ck_assert(isnan(cosv[0]) && !isnan(cosv[1]));
    }
}
END_TEST

/*----------------------------------------------------------------------------
 * The series over steps.
 *--------------------------------------------------------------------------*/
START_TEST(test_series)
{
    static const double inc[11] = {1, 2, -1, 0, 3, 4, 0, 0, -2, -3, 5};
    static const double cum_want[11] = {1, 3, 2, 2, 5, 9, 9, 9, 7, 4, 9};
    double ib[12], cb[12];
    grad_series s;
    grad_monotone m;

    grad_series_init(&s, ib, cb, 12);
    for (int i = 0; i < 11; i++)
        ck_assert_int_eq(grad_series_push(&s, inc[i]), GRAD_OK);
    ck_assert_uint_eq(s.len, 11);
    for (int i = 0; i < 11; i++)
        ck_assert(s.cum[i] == cum_want[i] && s.incr[i] == inc[i]);

    /* the whole series: signs + + - 0 + + 0 0 - - + */
    ck_assert_int_eq(grad_series_monotone(&s, 0, 11, &m), GRAD_OK);
    ck_assert_uint_eq(m.n, 11);
    ck_assert_uint_eq(m.pos, 5);
    ck_assert_uint_eq(m.neg, 3);
    ck_assert_uint_eq(m.zero, 3);
    ck_assert(m.frac_pos == 5.0 / 11);
    ck_assert_uint_eq(m.sign_changes, 4);
    ck_assert_uint_eq(m.run_pos, 2);
    ck_assert_uint_eq(m.run_neg, 2);
    ck_assert(!m.nondecreasing && !m.nonincreasing);
    ck_assert(m.cum_positive && !m.cum_negative);
    ck_assert(m.sum == 9 && m.cum_first == 1 && m.cum_last == 9);

    /* steps 4 .. 7: 3 4 0 0, non-decreasing */
    ck_assert_int_eq(grad_series_monotone(&s, 4, 8, &m), GRAD_OK);
    ck_assert(m.n == 4 && m.pos == 2 && m.zero == 2 && m.neg == 0);
    ck_assert(m.nondecreasing && !m.nonincreasing);
    ck_assert_uint_eq(m.sign_changes, 0);
    ck_assert_uint_eq(m.run_pos, 2);
    ck_assert(m.sum == 7 && m.cum_first == 5 && m.cum_last == 9);

    /* steps 6, 7: zeros only, monotone both ways */
    ck_assert_int_eq(grad_series_monotone(&s, 6, 8, &m), GRAD_OK);
    ck_assert(m.nondecreasing && m.nonincreasing && m.frac_pos == 0);
    ck_assert(m.run_pos == 0 && m.run_neg == 0 && m.sign_changes == 0);

    /* steps 8, 9: - -, non-increasing */
    ck_assert_int_eq(grad_series_monotone(&s, 8, 10, &m), GRAD_OK);
    ck_assert(m.nonincreasing && !m.nondecreasing && m.run_neg == 2);

    /* + 0 + counts one run each side of the zero, no sign change */
    {
        double i2[3], c2[3];
        grad_series s2;
        grad_series_init(&s2, i2, c2, 3);
        ck_assert_int_eq(grad_series_push(&s2, 1), GRAD_OK);
        ck_assert_int_eq(grad_series_push(&s2, 0), GRAD_OK);
        ck_assert_int_eq(grad_series_push(&s2, -0.5), GRAD_OK);
        ck_assert_int_eq(grad_series_push(&s2, 1), GRAD_EFULL);
        ck_assert_int_eq(grad_series_monotone(&s2, 0, 3, &m), GRAD_OK);
        ck_assert(m.sign_changes == 1 && m.run_pos == 1 && m.run_neg == 1);
        ck_assert(m.cum_positive);
    }

    /* errors */
    ck_assert_int_eq(grad_series_monotone(&s, 3, 3, &m), GRAD_EINVAL);
    ck_assert_int_eq(grad_series_monotone(&s, 0, 12, &m), GRAD_EINVAL);
    ck_assert_int_eq(grad_series_push(&s, NAN), GRAD_EINPUT);
    ck_assert_int_eq(grad_series_push(&s, -INFINITY), GRAD_EINPUT);
    ck_assert_uint_eq(s.len, 11);
    ck_assert_int_eq(grad_series_push_tokens(&s, 2, inc), GRAD_OK);
    ck_assert(s.incr[11] == 3 && s.cum[11] == 12);
    ck_assert_int_eq(grad_series_push_tokens(&s, 2, inc), GRAD_EFULL);
}
END_TEST

/* The compensated running sum: 2^53, then 1, then -2^53 leave 1 (a plain
   running sum leaves 0). */
START_TEST(test_series_compensated)
{
    double ib[4], cb[4], dd[3] = {0x1p-60, 0x1p-60, -0x1p-61};
    grad_series s;
    grad_monotone m;

    grad_series_init(&s, ib, cb, 4);
    ck_assert_int_eq(grad_series_push(&s, 0x1p53), GRAD_OK);
    ck_assert_int_eq(grad_series_push(&s, 1), GRAD_OK);
    ck_assert_int_eq(grad_series_push(&s, -0x1p53), GRAD_OK);
    ck_assert(s.cum[0] == 0x1p53 && s.cum[1] == 0x1p53 && s.cum[2] == 1);
    /* the step's tokens sum exactly to 3 2^-61; 1 + 3 2^-61 rounds to 1 */
    ck_assert_int_eq(grad_series_push_tokens(&s, 3, dd), GRAD_OK);
    ck_assert(s.incr[3] == 0x1.8p-60 && s.cum[3] == 1.0);
    ck_assert(s.total + s.comp == 1.0 && s.total == 0x1.8p-60);
    ck_assert_int_eq(grad_series_monotone(&s, 0, 4, &m), GRAD_OK);
    ck_assert(m.sum == 1.0);
    ck_assert_uint_eq(m.sign_changes, 2);
}
END_TEST

static Suite *
gradient_suite(void)
{
    Suite *s = suite_create("gradient");
    TCase *tc;

    tc = tst_add_tcase(s, "delta", 60);
    tcase_add_test(tc, test_delta_hand);
    tcase_add_test(tc, test_delta_mpfr);
    tcase_add_test(tc, test_sum_and_convert);
    tc = tst_add_tcase(s, "equations", 60);
    tcase_add_test(tc, test_pk_hand);
    tcase_add_test(tc, test_eq1_eq2_identity);
    tcase_add_test(tc, test_eq2_random);
    tc = tst_add_tcase(s, "svd", 120);
    tcase_add_test(tc, test_svd_diagonal);
    tcase_add_test(tc, test_svd_rank1);
    tcase_add_test(tc, test_svd_rotation);
    tcase_add_test(tc, test_svd_random);
    tcase_add_test(tc, test_svd_args);
    tcase_add_test(tc, test_dwq_rank);
    tc = tst_add_tcase(s, "cosine", 60);
    tcase_add_test(tc, test_cosine_crafted);
    tcase_add_test(tc, test_cosine_random);
    tc = tst_add_tcase(s, "series", 30);
    tcase_add_test(tc, test_series);
    tcase_add_test(tc, test_series_compensated);
    return s;
}

int
main(void)
{
    return tst_run_suite(gradient_suite());
}
