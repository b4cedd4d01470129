/* fa_test.c -- shared helpers of the attention tests: inputs, a naive
   double-precision attention forward and backward, the fp32 policy's
   error bounds */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/attention/fa_test.h"

uint16_t
ft_bf16(double x)
{
    sf_env env = SF_ENV_IEEE;

    return (uint16_t)sf_from_double(&sf_format_bf16, x, SF_RNE, &env);
}

double
ft_bf(uint16_t b)
{
    return sf_to_double(&sf_format_bf16, b);
}

double
ft_f32(uint32_t b)
{
    return sf_to_double(&sf_format_f32, b);
}

uint32_t
ft_f32_bits(double x)
{
    sf_env env = SF_ENV_IEEE;

    return (uint32_t)sf_from_double(&sf_format_f32, x, SF_RNE, &env);
}

double
ft_unit(tst_rng *r)
{
    return (double)(tst_rand64(r) >> 11) * 0x1p-53;
}

void
ft_fill_uniform(tst_rng *r, uint16_t *x, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ft_bf16(lo + (hi - lo) * ft_unit(r));
}

void
ft_fill_normal(tst_rng *r, uint16_t *x, size_t n, double mean, double sd)
{
    for (size_t i = 0; i < n; i++) {
        /* Box-Muller */
        double u1 = ft_unit(r), u2 = ft_unit(r);
        double z = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
        x[i] = ft_bf16(mean + sd * z);
    }
}

size_t
ft_nq_d(const fa_config *c)
{
    return c->shape.batch * c->shape.heads * c->shape.nq * c->shape.d;
}

size_t
ft_nk_d(const fa_config *c)
{
    return c->shape.batch * c->shape.heads * c->shape.nk * c->shape.d;
}

size_t
ft_rows(const fa_config *c)
{
    return c->shape.batch * c->shape.heads * c->shape.nq;
}

size_t
ft_nq_nk(const fa_config *c)
{
    return c->shape.batch * c->shape.heads * c->shape.nq * c->shape.nk;
}

void *
ft_alloc(size_t n, size_t size)
{
    void *p = calloc(n == 0 ? 1 : n, size);

    ck_assert_ptr_nonnull(p);
    return p;
}

/* Keys 0 .. visible - 1 are seen by query I (bottom-right causal, or
   top-left: keys 0 .. I). */
static size_t
visible(const fa_config *c, size_t i)
{
    long long lim;

    if (!c->causal)
        return c->shape.nk;
    if (c->causal_top_left)
        return i + 1 < c->shape.nk ? i + 1 : c->shape.nk;
    lim = (long long)i + (long long)c->shape.nk - (long long)c->shape.nq + 1;
    if (lim <= 0)
        return 0;
    return (size_t)lim < c->shape.nk ? (size_t)lim : c->shape.nk;
}

static double
gamma_n(double n)
{
    return n * FT_U / (1.0 - n * FT_U);
}

/*----------------------------------------------------------------------------
 * The reference.
 *--------------------------------------------------------------------------*/
void
ft_ref_forward(const fa_config *c, const uint16_t *q, const uint16_t *k,
               const uint16_t *v, double *o, double *lse, double *s, double *p)
{
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    double sc = ft_f32(fa_scale_bits(c));
    double *row = ft_alloc(nk, sizeof(double));

    for (size_t hd = 0; hd < c->shape.batch * c->shape.heads; hd++)
        for (size_t i = 0; i < nq; i++) {
            size_t vis = visible(c, i), x = hd * nq + i;
            const uint16_t *qi = q + x * d;
            double mx = -INFINITY, l = 0;
            for (size_t j = 0; j < nk; j++) {
                double a = 0;
                if (j >= vis) {
                    row[j] = -INFINITY;
                    continue;
                }
                /* BF16 products are exact in double; the sum's error
                   (below 2^-53 d sum |terms|) is far below the FP32
                   bounds the tests compare with */
                for (size_t cc = 0; cc < d; cc++)
                    a += ft_bf(qi[cc]) * ft_bf(k[(hd * nk + j) * d + cc]);
                row[j] = sc * a;
                if (row[j] > mx)
                    mx = row[j];
            }
            for (size_t j = 0; j < vis; j++)
                l += exp(row[j] - mx);
            if (s != NULL)
                memcpy(s + x * nk, row, nk * sizeof *row);
            if (p != NULL)
                for (size_t j = 0; j < nk; j++)
                    p[x * nk + j] = j < vis ? exp(row[j] - mx) / l : 0.0;
            if (lse != NULL)
                lse[x] = vis == 0 ? -INFINITY : mx + log(l);
            if (o != NULL)
                for (size_t cc = 0; cc < d; cc++) {
                    double a = 0;
                    for (size_t j = 0; j < vis; j++)
                        a += exp(row[j] - mx) / l
                             * ft_bf(v[(hd * nk + j) * d + cc]);
                    o[x * d + cc] = a;
                }
        }
    free(row);
}

void
ft_ref_backward(const fa_config *c, const uint16_t *q, const uint16_t *k,
                const uint16_t *v, const uint16_t *dout, double *delta,
                double *dq, double *dk, double *dv, double *dpo, double *dso)
{
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    size_t nh = c->shape.batch * c->shape.heads;
    double sc = ft_f32(fa_scale_bits(c));
    double *o = ft_alloc(ft_nq_d(c), sizeof(double));
    double *p = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *ds = ft_alloc(ft_nq_nk(c), sizeof(double));

    ft_ref_forward(c, q, k, v, o, NULL, NULL, p);
    for (size_t hd = 0; hd < nh; hd++) {
        for (size_t i = 0; i < nq; i++) {
            size_t x = hd * nq + i;
            double dl = 0;
            for (size_t cc = 0; cc < d; cc++)
                dl += ft_bf(dout[x * d + cc]) * o[x * d + cc];
            if (delta != NULL)
                delta[x] = dl;
            for (size_t j = 0; j < nk; j++) {
                double dp = 0;
                for (size_t cc = 0; cc < d; cc++)
                    dp += ft_bf(dout[x * d + cc])
                          * ft_bf(v[(hd * nk + j) * d + cc]);
                if (dpo != NULL)
                    dpo[x * nk + j] = dp;
                ds[x * nk + j] = sc * p[x * nk + j] * (dp - dl);
            }
            if (dq != NULL)
                for (size_t cc = 0; cc < d; cc++) {
                    double a = 0;
                    for (size_t j = 0; j < nk; j++)
                        a += ds[x * nk + j] * ft_bf(k[(hd * nk + j) * d + cc]);
                    dq[x * d + cc] = a;
                }
        }
        for (size_t j = 0; j < nk; j++)
            for (size_t cc = 0; cc < d; cc++) {
                double a = 0, b = 0;
                for (size_t i = 0; i < nq; i++) {
                    size_t x = hd * nq + i;
                    a += ds[x * nk + j] * ft_bf(q[x * d + cc]);
                    b += p[x * nk + j] * ft_bf(dout[x * d + cc]);
                }
                if (dk != NULL)
                    dk[(hd * nk + j) * d + cc] = a;
                if (dv != NULL)
                    dv[(hd * nk + j) * d + cc] = b;
            }
    }
    if (dso != NULL)
        memcpy(dso, ds, ft_nq_nk(c) * sizeof *ds);
    free(o);
    free(p);
    free(ds);
}

/*----------------------------------------------------------------------------
 * The fp32 policy's error bounds (u = 2^-24, gamma_n = n u / (1 - n u)).
 *
 * Forward, one row with n visible keys, T visited KV blocks.
 *  (a) raw_j = Q.K_j by an FMA chain of d exact BF16 products:
 *      |raw_j - q.k_j| <= gamma_d A_j, A_j = sum |q_c k_jc|; then
 *      s_j = RN(sc raw_j) gives |s_j - S*_j| <= sc gamma_d A_j (1 + u)
 *      + u |S*_j| =: Es_j (S* = sc q.k_j, the exact score).
 *  (b) Every shift m of the online softmax is a running maximum of block
 *      maxima or of their fixed shifts (beta r, 0, r + eps, eps_zero),
 *      so |m| <= M and m never decreases: |s_j - m| <= Smax + M and the
 *      shifts move by at most 2M in total (Smax = max |S*_j| + Es_j).
 *  (c) p_j = exp_model(RN(s_j - m)) = e^(s_j - m) e^eps (1 + eta) with
 *      |eps| <= u |s_j - m| (1 + u), |eta| <= u (the cr model, normal
 *      results: the tests keep every argument above -87); each rescale
 *      alpha = exp_model(RN(m_old - m_new)) contributes the same kind of
 *      factor.  Relative to e^(s_j - m_T) every weight is off by a factor
 *      within e^(+-theta), theta = u (Smax + M)(1 + u) + 2 u M (1 + u) +
 *      1.01 (T + 1) u.
 *  (d) The sums: l (positive terms, n additions and 2T rescale
 *      roundings) is within gamma_{n+2T} relative of its ideal value;
 *      O~ (an FMA chain of n steps and T rescale products) within
 *      gamma_{n+T} sum p |v|; O = RN(O~ / l) adds u |O|.
 *  A weighted mean with weights off by e^(+-x) moves by at most
 *  expm1(2x) max |v|, so with V = max |v_j|:
 *      |O - O*| <= 1.01 V (expm1(2 Es) + expm1(2 theta) (1 + expm1(2 Es))
 *                  + (gamma_{n+T} + gamma_{n+2T}) / (1 - gamma_{n+2T})
 *                  + u),   Es = max_j Es_j;
 *      |LSE - LSE*| <= 1.01 (Es + theta + 1.01 gamma_{n+2T}
 *                  + u (|LSE*| + M + 1) + u (|LSE*| + 1)).
 *  The second-order terms dropped are below 10^-6 of the first-order ones
 *  for these inputs; the factor 1.01 covers them.
 *--------------------------------------------------------------------------*/
typedef struct
{
    double es;    /* max Es_j */
    double smax;  /* max |S*_j| + Es_j */
    double vmax;  /* max |v_j| over visible keys, per column below */
    double theta; /* weight perturbation */
    double gsum;  /* the summation terms */
    double m;     /* M */
} row_bound;

static void
row_bounds(const fa_config *c, const uint16_t *q, const uint16_t *k, size_t hd,
           size_t i, row_bound *rb, double *es_j)
{
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    size_t vis = visible(c, i);
    double sc = ft_f32(fa_scale_bits(c));
    const uint16_t *qi = q + (hd * nq + i) * d;
    double es = 0, smax = 0, m, t, n = (double)vis;
    size_t bc = c->ablations & FA_ABL_UNTILED ? nk : c->bc == 0 ? nk : c->bc;
    size_t tcount = (nk + bc - 1) / bc;

    for (size_t j = 0; j < vis; j++) {
        double a = 0, sx = 0, e;
        for (size_t cc = 0; cc < d; cc++) {
            double x = ft_bf(qi[cc]) * ft_bf(k[(hd * nk + j) * d + cc]);
            a += fabs(x);
            sx += x;
        }
        e = sc * gamma_n((double)d) * a * (1 + FT_U) + FT_U * fabs(sc * sx);
        if (es_j != NULL)
            es_j[j] = e;
        if (e > es)
            es = e;
        if (fabs(sc * sx) + e > smax)
            smax = fabs(sc * sx) + e;
    }
    m = smax;
    switch (c->fix.kind) {
    case FA_FIX_BETA:
    case FA_FIX_BETA_V2:
    case FA_FIX_ALWAYS:
        m = fmax(m, c->fix.beta * smax * (1 + FT_U));
        if (c->fix.zero_max == FA_ZERO_MAX_SHIFT)
            m = fmax(m, c->fix.eps_zero * (1 + FT_U));
        break;
    case FA_FIX_EPS:
        m = fmax(m, (smax + c->fix.eps) * (1 + FT_U));
        break;
    default:
        break;
    }
    t = (double)tcount;
    rb->es = es;
    rb->smax = smax;
    rb->m = m;
    rb->theta = FT_U * (smax + m) * (1 + FT_U) + 2 * FT_U * m * (1 + FT_U)
                + 1.01 * (t + 1) * FT_U;
    rb->gsum =
        (gamma_n(n + t) + gamma_n(n + 2 * t)) / (1 - gamma_n(n + 2 * t));
    rb->vmax = 0;
}

void
ft_fp32_forward_bounds(const fa_config *c, const uint16_t *q,
                       const uint16_t *k, const uint16_t *v, double *bo,
                       double *blse)
{
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    double *lse = ft_alloc(ft_rows(c), sizeof(double));

    ft_ref_forward(c, q, k, v, NULL, lse, NULL, NULL);
    for (size_t hd = 0; hd < c->shape.batch * c->shape.heads; hd++)
        for (size_t i = 0; i < nq; i++) {
            size_t vis = visible(c, i), x = hd * nq + i;
            size_t bc = c->ablations & FA_ABL_UNTILED ? nk
                        : c->bc == 0                  ? nk
                                                      : c->bc;
            double tcount = (double)((nk + bc - 1) / bc);
            row_bound rb;
            double fo, n = (double)vis;

            row_bounds(c, q, k, hd, i, &rb, NULL);
            /* every argument of exp stays above -87: no subnormal P~ */
            ck_assert_msg(vis == 0 || rb.smax + rb.m < 87.0,
                          "ft_fp32_forward_bounds: scores too large");
            fo = 1.01
                 * (expm1(2 * rb.es)
                    + expm1(2 * rb.theta) * (1 + expm1(2 * rb.es)) + rb.gsum
                    + FT_U);
            for (size_t cc = 0; cc < d; cc++) {
                double vm = 0;
                for (size_t j = 0; j < vis; j++)
                    vm = fmax(vm, fabs(ft_bf(v[(hd * nk + j) * d + cc])));
                if (bo != NULL)
                    bo[x * d + cc] = vis == 0 ? 0 : fo * vm;
            }
            if (blse != NULL)
                blse[x] = vis == 0 ? 0
                                   : 1.01
                                         * (rb.es + rb.theta
                                            + 1.01 * gamma_n(n + 2 * tcount)
                                            + FT_U * (fabs(lse[x]) + rb.m + 1)
                                            + FT_U * (fabs(lse[x]) + 1));
        }
    free(lse);
}

/*----------------------------------------------------------------------------
 * Backward, fed with the exact O and LSE rounded to FP32 (so that only
 * the backward's own roundings count: bO_c = u |O*_c|, bL = u |LSE*|),
 * for one row i and its visible keys j:
 *   delta = FMA chain of d products dO_c O_c (rounded):
 *     Edl <= sum |dO_c| bO_c + gamma_d sum |dO_c| (|O*_c| + bO_c);
 *   P_j = exp_model(RN(s_j - LSE)):
 *     |P_j - P*_j| <= P*_j (expm1(Es_j + bL + u X) (1 + u) + u) =: Ep_j,
 *     X = (|S*_j - LSE*| + Es_j + bL)(1 + u);
 *   dP_j = FMA chain of exact BF16 products: Edp_j = gamma_d sum
 *     |dO_c v_jc|;
 *   t_j = RN(dP_j - delta): Et_j = (Edp_j + Edl)(1 + u)
 *     + u |dP*_j - delta*|, |t_j| <= |dP*_j - delta*| + Et_j =: Tm_j;
 *   dS_j = RN(P_j t_j): EdS_j = Ep_j Tm_j + P*_j Et_j
 *     + u (P*_j + Ep_j) Tm_j, |dS_j| <= DSm_j = P*_j |dP* - delta*|
 *     + EdS_j;
 *   dQ_c = RN(scale FMAchain_j(dS_j K_jc)):
 *     scale (sum_j EdS_j |K_jc| + gamma_n sum_j DSm_j |K_jc|)(1 + u)
 *     + u |dQ*_c|;
 *   dK, dV likewise over the rows (gamma_Nq), dV with Ep and P* + Ep.
 * Each is multiplied by 1.01 for the dropped second-order terms.
 *--------------------------------------------------------------------------*/
void
ft_fp32_backward_inputs(const fa_config *c, const uint16_t *q,
                        const uint16_t *k, const uint16_t *v, uint32_t *o,
                        uint32_t *lse)
{
    double *ro = ft_alloc(ft_nq_d(c), sizeof(double));
    double *rl = ft_alloc(ft_rows(c), sizeof(double));

    ft_ref_forward(c, q, k, v, ro, rl, NULL, NULL);
    for (size_t x = 0; x < ft_nq_d(c); x++)
        o[x] = ft_f32_bits(ro[x]);
    for (size_t x = 0; x < ft_rows(c); x++)
        lse[x] = ft_f32_bits(rl[x]);
    free(ro);
    free(rl);
}

void
ft_fp32_backward_bounds(const fa_config *c, const uint16_t *q,
                        const uint16_t *k, const uint16_t *v,
                        const uint16_t *dout, double *bdelta, double *bdq,
                        double *bdk, double *bdv)
{
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    size_t nh = c->shape.batch * c->shape.heads;
    double sc = ft_f32(fa_scale_bits(c));
    double *o = ft_alloc(ft_nq_d(c), sizeof(double));
    double *lse = ft_alloc(ft_rows(c), sizeof(double));
    double *s = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *p = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *dp = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *delta = ft_alloc(ft_rows(c), sizeof(double));
    double *dq = ft_alloc(ft_nq_d(c), sizeof(double));
    double *dk = ft_alloc(ft_nk_d(c), sizeof(double));
    double *ep = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *eds = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *dsm = ft_alloc(ft_nq_nk(c), sizeof(double));
    double *es = ft_alloc(nk, sizeof(double));

    ft_ref_forward(c, q, k, v, o, lse, s, p);
    ft_ref_backward(c, q, k, v, dout, delta, dq, dk, NULL, dp, NULL);
    for (size_t hd = 0; hd < nh; hd++) {
        for (size_t i = 0; i < nq; i++) {
            size_t x = hd * nq + i, vis = visible(c, i);
            double edl = 0, a2 = 0, bl = FT_U * 1.01 * fabs(lse[x]);
            row_bound rb;

            row_bounds(c, q, k, hd, i, &rb, es);
            for (size_t cc = 0; cc < d; cc++) {
                double g = fabs(ft_bf(dout[x * d + cc]));
                double bo = FT_U * 1.01 * fabs(o[x * d + cc]);
                edl += g * bo;
                a2 += g * (fabs(o[x * d + cc]) + bo);
            }
            edl += gamma_n((double)d) * a2;
            if (bdelta != NULL)
                bdelta[x] = 1.01 * edl;
            for (size_t j = 0; j < nk; j++) {
                size_t y = x * nk + j;
                double adp = 0, edp, et, tm, xx, diff;
                if (j >= vis) {
                    ep[y] = eds[y] = dsm[y] = 0;
                    continue;
                }
                for (size_t cc = 0; cc < d; cc++)
                    adp += fabs(ft_bf(dout[x * d + cc])
                                * ft_bf(v[(hd * nk + j) * d + cc]));
                edp = gamma_n((double)d) * adp;
                xx = (fabs(s[y] - lse[x]) + es[j] + bl) * (1 + FT_U);
                ep[y] =
                    p[y] * (expm1(es[j] + bl + FT_U * xx) * (1 + FT_U) + FT_U);
                diff = fabs(dp[y] - delta[x]);
                et = (edp + edl) * (1 + FT_U) + FT_U * diff;
                tm = diff + et;
                eds[y] =
                    1.01
                    * (ep[y] * tm + p[y] * et + FT_U * (p[y] + ep[y]) * tm);
                dsm[y] = p[y] * diff + eds[y];
            }
            if (bdq != NULL)
                for (size_t cc = 0; cc < d; cc++) {
                    double e1 = 0, e2 = 0;
                    for (size_t j = 0; j < vis; j++) {
                        double kk = fabs(ft_bf(k[(hd * nk + j) * d + cc]));
                        e1 += eds[x * nk + j] * kk;
                        e2 += dsm[x * nk + j] * kk;
                    }
                    bdq[x * d + cc] =
                        1.01
                        * (sc * (e1 + gamma_n((double)vis) * e2) * (1 + FT_U)
                           + FT_U * fabs(dq[x * d + cc]));
                }
        }
        for (size_t j = 0; j < nk; j++)
            for (size_t cc = 0; cc < d; cc++) {
                double e1 = 0, e2 = 0, f1 = 0, f2 = 0, g = gamma_n((double)nq);
                size_t y = (hd * nk + j) * d + cc;
                for (size_t i = 0; i < nq; i++) {
                    size_t x = hd * nq + i;
                    double qq = fabs(ft_bf(q[x * d + cc]));
                    double gg = fabs(ft_bf(dout[x * d + cc]));
                    e1 += eds[x * nk + j] * qq;
                    e2 += dsm[x * nk + j] * qq;
                    f1 += ep[x * nk + j] * gg;
                    f2 += (p[x * nk + j] + ep[x * nk + j]) * gg;
                }
                if (bdk != NULL)
                    bdk[y] = 1.01
                             * (sc * (e1 + g * e2) * (1 + FT_U)
                                + FT_U * fabs(dk[y]));
                if (bdv != NULL)
                    bdv[y] = 1.01 * (f1 + g * f2);
            }
    }
    FT_FREE(o, lse, s, p, dp, delta, dq, dk, ep, eds, dsm, es);
}

/*----------------------------------------------------------------------------
 * Comparisons.
 *--------------------------------------------------------------------------*/
size_t
ft_check_close(const char *what, const uint32_t *got, const double *ref,
               const double *bound, size_t n)
{
    size_t bad = 0;
    double worst = 0;

    for (size_t i = 0; i < n; i++) {
        double g = ft_f32(got[i]);
        bool ok;
        if (isnan(ref[i]))
            ok = isnan(g);
        else if (isinf(ref[i]))
            ok = g == ref[i];
        else
            ok = fabs(g - ref[i]) <= bound[i];
        if (ok && isfinite(ref[i]) && bound[i] > 0)
            worst = fmax(worst, fabs(g - ref[i]) / bound[i]);
        if (!ok) {
            if (bad < TST_MAX_PRINT)
                printf("%s[%zu] got %08x (%.9g) ref %.17g bound "
                       "%.3g seed "
                       "%llu\n",
                       what, i, (unsigned)got[i], g, ref[i], bound[i],
                       (unsigned long long)tst_seed());
            bad++;
        }
    }
    /* FT_TEST_RATIO set: how much of its bound the largest error
     * uses */
    if (getenv("FT_TEST_RATIO") != NULL)
        printf("%s: largest error / bound %.3g over %zu\n", what, worst, n);
    return bad;
}

size_t
ft_count_diff(const uint32_t *a, const uint32_t *b, size_t n)
{
    size_t diff = 0;

    for (size_t i = 0; i < n; i++)
        diff += a[i] != b[i];
    return diff;
}

void
ft_forward(const fa_config *c, const uint16_t *q, const uint16_t *k,
           const uint16_t *v, uint32_t *o, uint32_t *lse, fa_capture *cap)
{
    sf_env env = SF_ENV_IEEE;
    const char *why = fa_config_check(c);

    ck_assert_msg(why == NULL, "config: %s", why ? why : "");
    ck_assert_int_eq(fa_forward(c, q, k, v, o, lse, cap, &env), 0);
}

void
ft_backward(const fa_config *c, const uint16_t *q, const uint16_t *k,
            const uint16_t *v, const uint32_t *o, const uint32_t *lse,
            const uint16_t *dout, uint32_t *delta, uint32_t *dq, uint32_t *dk,
            uint32_t *dv, fa_capture *cap)
{
    sf_env env = SF_ENV_IEEE;

    ck_assert_ptr_null(fa_config_check(c));
    ck_assert_int_eq(
        fa_backward(c, q, k, v, o, lse, dout, delta, dq, dk, dv, cap, &env),
        0);
}

fa_config
ft_cfg(fa_policy p, size_t b, size_t h, size_t nq, size_t nk, size_t d)
{
    fa_config c = fa_config_default(p);

    c.shape = (fa_shape){b, h, nq, nk, d};
    return c;
}

void
ft_log_event(void *user, const sf_event *ev)
{
    ft_ev_log *lg = user;

    if (lg->n < lg->cap)
        lg->ev[lg->n] = *ev;
    lg->n++;
}

void
ft_free_all(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}
