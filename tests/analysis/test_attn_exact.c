/* test_attn_exact.c -- the exact attention reference: closed forms, the
   softmax-shift fix in exact arithmetic (T6, T7), tiled against direct,
   causal masking, the Eq. 1 identity (T5), shift invariance, an
   independent double-precision attention, errors, and the ulp helper */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "analysis/attn_exact.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define PREC 256

/*----------------------------------------------------------------------------
 * Helpers.
 *--------------------------------------------------------------------------*/

/* BF16 bits of X, which must be representable. */
static uint16_t
bf(double x)
{
    sf_env env = SF_ENV_IEEE;
    sf_bf16 b = sf_bf16_from_double(x, SF_RNE, &env);

    ck_assert_msg(env.flags == 0, "%a is not a BF16 number", x);
    return b.bits;
}

static double
bfd(uint16_t bits)
{
    sf_bf16 b = {bits};
    return sf_bf16_to_double(b);
}

/* A BF16 number drawn uniformly from [-A, A] (rounded). */
static uint16_t
rand_bf(tst_rng *r, double a)
{
    sf_env env = SF_ENV_IEEE;
    double u = (double)(tst_rand64(r) >> 11) * 0x1p-53;
    return sf_bf16_from_double((2 * u - 1) * a, SF_RNE, &env).bits;
}

/* A configuration built by hand: FP32 policy, untiled, no fix (the paper's
   parameters filled in), scale SCALE. */
static fa_config
make_cfg(size_t b, size_t h, size_t nq, size_t nk, size_t d, float scale)
{
    fa_config c;

    memset(&c, 0, sizeof c);
    c.shape.batch = b;
    c.shape.heads = h;
    c.shape.nq = nq;
    c.shape.nk = nk;
    c.shape.d = d;
    c.scale = scale;
    c.kernel = fa_kernel_of_policy(FA_POLICY_FP32);
    c.order = FA_ORDER_FORWARD;
    c.fix.kind = FA_FIX_NONE;
    c.fix.beta = 2.0;
    c.fix.tol = 1e-3;
    c.fix.eps = 0x1p-5;
    c.fix.zero_max = FA_ZERO_MAX_KEEP;
    c.fix.eps_zero = 0x1p-5;
    return c;
}

static mpfr_t *
mp_new(size_t n, mpfr_prec_t p)
{
    mpfr_t *a = malloc((n ? n : 1) * sizeof *a);

    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n; i++)
        mpfr_init2(a[i], p);
    return a;
}

static void
mp_free(mpfr_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mpfr_clear(a[i]);
    free(a);
}

static double *
dnew(size_t n)
{
    double *a = calloc(n ? n : 1, sizeof *a);
    ck_assert_ptr_nonnull(a);
    return a;
}

static uint16_t *
bnew(size_t n)
{
    uint16_t *a = calloc(n ? n : 1, sizeof *a);
    ck_assert_ptr_nonnull(a);
    return a;
}

/* Prints a case as hex: the shape and every input. */
static void
print_case(const char *what, const fa_config *c, const uint16_t *q,
           const uint16_t *k, const uint16_t *v, const uint16_t *dout)
{
    const fa_shape *s = &c->shape;
    size_t nh = s->batch * s->heads;
    const uint16_t *arr[4] = {q, k, v, dout};
    const char *name[4] = {"q", "k", "v", "do"};
    size_t len[4] = {nh * s->nq * s->d, nh * s->nk * s->d, nh * s->nk * s->d,
                     nh * s->nq * s->d};

    printf("FAILED %s: B=%zu H=%zu Nq=%zu Nk=%zu d=%zu causal=%d "
           "scale=%a bc=%zu order=%d fix=%d beta=%a tol=%a eps=%a "
           "zero_max=%d eps_zero=%a\n",
           what, s->batch, s->heads, s->nq, s->nk, s->d, (int)c->causal,
           (double)c->scale, c->bc, (int)c->order, (int)c->fix.kind,
           c->fix.beta, c->fix.tol, c->fix.eps, (int)c->fix.zero_max,
           c->fix.eps_zero);
    for (int a = 0; a < 4; a++) {
        if (arr[a] == NULL)
            continue;
        printf("  %s bf16:", name[a]);
        for (size_t i = 0; i < len[a]; i++)
            printf(" %04" PRIX16, arr[a][i]);
        printf("\n");
    }
}

/* |a - b| <= tol, with NaN and infinities only equal to themselves. */
static bool
close_mp(mpfr_srcptr a, mpfr_srcptr b, double tol)
{
    mpfr_t d;
    bool ok;

    if (!mpfr_number_p(a) || !mpfr_number_p(b))
        return mpfr_equal_p(a, b) != 0 || (mpfr_nan_p(a) && mpfr_nan_p(b));
    mpfr_init2(d, 64);
    mpfr_sub(d, a, b, MPFR_RNDA);
    mpfr_abs(d, d, MPFR_RNDN);
    ok = mpfr_cmp_d(d, tol) <= 0;
    mpfr_clear(d);
    return ok;
}

static bool
same_double(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/*----------------------------------------------------------------------------
 * An independent attention in double precision: the definition, row by
 * row, with its own masking rule; and, per output, the sum of the
 * magnitudes of the terms (for tolerances).
 *--------------------------------------------------------------------------*/
typedef struct
{
    double *o, *lse, *delta, *dq, *dk, *dv;
    double *mo, *mdelta, *mdq, *mdk, *mdv; /* magnitudes */
} naive_out;

/* Room for the naive outputs of nq * d-element rows (no elements), nl
 * rows and nk * d-element keys (nkd elements); naive_free releases it. */
static void
naive_new(naive_out *r, size_t no, size_t nl, size_t nkd)
{
    r->o = dnew(no);
    r->lse = dnew(nl);
    r->delta = dnew(nl);
    r->dq = dnew(no);
    r->dk = dnew(nkd);
    r->dv = dnew(nkd);
    r->mo = dnew(no);
    r->mdelta = dnew(nl);
    r->mdq = dnew(no);
    r->mdk = dnew(nkd);
    r->mdv = dnew(nkd);
}

static void
naive_free(naive_out *r)
{
    double *all[] = {r->o,  r->lse,    r->delta, r->dq,  r->dk, r->dv,
                     r->mo, r->mdelta, r->mdq,   r->mdk, r->mdv};

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

static void
naive(const fa_config *c, const uint16_t *q, const uint16_t *k,
      const uint16_t *v, const uint16_t *dout, naive_out *r)
{
    const fa_shape *sh = &c->shape;
    size_t nq = sh->nq, nk = sh->nk, d = sh->d;
    size_t nh = sh->batch * sh->heads;
    double scale = c->scale;
    double *s = dnew(nk), *p = dnew(nk), *ms = dnew(nk), *ds = dnew(nk);

    for (size_t x = 0; x < nh * nk * d; x++)
        r->dk[x] = r->dv[x] = r->mdk[x] = r->mdv[x] = 0;
    for (size_t h = 0; h < nh; h++) {
        const uint16_t *qh = q + h * nq * d, *kh = k + h * nk * d;
        const uint16_t *vh = v + h * nk * d, *dh = dout + h * nq * d;

        for (size_t i = 0; i < nq; i++) {
            size_t row = h * nq + i;
            double mx = -INFINITY, l = 0, dl = 0, mdl = 0;
            long lim = (long)i + (long)nk - (long)nq;
            size_t vis = 0;

            for (size_t j = 0; j < nk; j++) {
                if (c->causal && (long)j > lim)
                    break;
                vis = j + 1;
                s[j] = 0;
                for (size_t cc = 0; cc < d; cc++)
                    s[j] += bfd(qh[i * d + cc]) * bfd(kh[j * d + cc]);
                s[j] *= scale;
                mx = fmax(mx, s[j]);
            }
            for (size_t j = 0; j < vis; j++) {
                p[j] = exp(s[j] - mx);
                l += p[j];
            }
            for (size_t j = 0; j < vis; j++)
                p[j] /= l;
            r->lse[row] = vis == 0 ? -INFINITY : mx + log(l);
            for (size_t cc = 0; cc < d; cc++) {
                double o = 0, mo = 0;
                for (size_t j = 0; j < vis; j++) {
                    o += p[j] * bfd(vh[j * d + cc]);
                    mo += p[j] * fabs(bfd(vh[j * d + cc]));
                }
                r->o[row * d + cc] = o;
                r->mo[row * d + cc] = mo;
                dl += bfd(dh[i * d + cc]) * o;
                mdl += fabs(bfd(dh[i * d + cc])) * mo;
            }
            r->delta[row] = dl;
            r->mdelta[row] = mdl;
            for (size_t j = 0; j < vis; j++) {
                double dp = 0, mdp = 0;
                for (size_t cc = 0; cc < d; cc++) {
                    dp += bfd(dh[i * d + cc]) * bfd(vh[j * d + cc]);
                    mdp += fabs(bfd(dh[i * d + cc]) * bfd(vh[j * d + cc]));
                }
                ds[j] = scale * p[j] * (dp - dl);
                ms[j] = fabs(scale) * p[j] * (mdp + mdl + fabs(dl));
            }
            for (size_t cc = 0; cc < d; cc++) {
                double g = 0, mg = 0;
                for (size_t j = 0; j < vis; j++) {
                    g += ds[j] * bfd(kh[j * d + cc]);
                    mg += ms[j] * fabs(bfd(kh[j * d + cc]));
                }
                r->dq[row * d + cc] = g;
                r->mdq[row * d + cc] = mg;
            }
            for (size_t j = 0; j < vis; j++) {
                for (size_t cc = 0; cc < d; cc++) {
                    size_t x = (h * nk + j) * d + cc;
                    double qv = bfd(qh[i * d + cc]), dv = bfd(dh[i * d + cc]);
                    r->dk[x] += ds[j] * qv;
                    r->mdk[x] += ms[j] * fabs(qv);
                    r->dv[x] += p[j] * dv;
                    r->mdv[x] += p[j] * fabs(dv);
                }
            }
        }
    }
    free(s);
    free(p);
    free(ms);
    free(ds);
}

/*----------------------------------------------------------------------------
 * Closed forms.
 *--------------------------------------------------------------------------*/

/* Equal scores: O is the plain mean of V, LSE = s + log N. */
START_TEST(test_equal_scores)
{
    /* d = 1, N = 2: q = 1, k = (1, 1), v = (1, 3), scale 1 */
    uint16_t q[1] = {bf(1)}, k[3] = {bf(1), bf(1), bf(1)};
    uint16_t v[3] = {bf(1), bf(3), bf(4)};
    fa_config c = make_cfg(1, 1, 1, 2, 1, 1.0f);
    double o, lse, expect;
    mpfr_t x;

    mpfr_init2(x, 300);
    for (int method = 0; method < 2; method++) {
        ax_options opt = {PREC, method == 0 ? AX_TILED : AX_DIRECT};

        c.shape.nk = 2;
        ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, &o, &lse), AX_OK);
        ck_assert_msg(o == 2.0, "O = %a, not 2", o);
        mpfr_set_ui(x, 2, MPFR_RNDN);
        mpfr_log(x, x, MPFR_RNDN);
        mpfr_add_ui(x, x, 1, MPFR_RNDN);
        expect = mpfr_get_d(x, MPFR_RNDN);
        ck_assert_msg(lse == expect, "LSE = %a, expected 1 + log 2 = %a", lse,
                      expect);

        /* N = 3: O = 8/3, LSE = 1 + log 3 */
        c.shape.nk = 3;
        ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, &o, &lse), AX_OK);
        ck_assert_msg(o == 8.0 / 3.0, "O = %a, not 8/3", o);
        mpfr_set_ui(x, 3, MPFR_RNDN);
        mpfr_log(x, x, MPFR_RNDN);
        mpfr_add_ui(x, x, 1, MPFR_RNDN);
        expect = mpfr_get_d(x, MPFR_RNDN);
        ck_assert_msg(lse == expect, "LSE = %a, expected 1 + log 3 = %a", lse,
                      expect);
    }
    mpfr_clear(x);
    mpfr_free_cache();
}
END_TEST

/* d = 2, N = 2, distinct scores: O = v1 + (v2 - v1) / (1 + e^(s1 - s2)),
   LSE = s1 + log(1 + e^(s2 - s1)), each column. */
START_TEST(test_two_scores)
{
    /* q = (1, 0.5); k1 = (2, -1), k2 = (0.5, 1): q.k = 1.5 and 1 */
    uint16_t q[2] = {bf(1), bf(0.5)};
    uint16_t k[4] = {bf(2), bf(-1), bf(0.5), bf(1)};
    uint16_t v[4] = {bf(-1.5), bf(0.25), bf(3), bf(-7)};
    const float scales[3] = {1.0f, 0.0f, -0.375f};
    mpfr_t s1, s2, x, y;

    mpfr_inits2(400, s1, s2, x, y, (mpfr_ptr)0);
    for (int si = 0; si < 3; si++) {
        fa_config c = make_cfg(1, 1, 1, 2, 2, scales[si]);
        double o[2], lse, sc;
        uint32_t sb = ax_scale_bits(&c);
        float f;

        memcpy(&f, &sb, sizeof f);
        sc = f;
        if (si == 1) /* the default: RN_f32(1/sqrt(2)) = 0x3F3504F3 */
            ck_assert_uint_eq(sb, 0x3F3504F3u);
        ck_assert_int_eq(ax_forward(&c, NULL, q, k, v, o, &lse), AX_OK);
        mpfr_set_d(s1, 1.5, MPFR_RNDN);
        mpfr_mul_d(s1, s1, sc, MPFR_RNDN); /* exact */
        mpfr_set_d(s2, sc, MPFR_RNDN);
        for (int cc = 0; cc < 2; cc++) {
            double v1 = bfd(v[cc]), v2 = bfd(v[2 + cc]), expect;

            mpfr_sub(x, s1, s2, MPFR_RNDN);
            mpfr_exp(x, x, MPFR_RNDN);
            mpfr_add_ui(x, x, 1, MPFR_RNDN);
            mpfr_set_d(y, v2 - v1, MPFR_RNDN); /* exact */
            mpfr_div(x, y, x, MPFR_RNDN);
            mpfr_add_d(x, x, v1, MPFR_RNDN);
            expect = mpfr_get_d(x, MPFR_RNDN);
            ck_assert_msg(o[cc] == expect,
                          "scale %a col %d: O = %a, %a "
                          "expected",
                          sc, cc, o[cc], expect);
        }
        mpfr_sub(x, s2, s1, MPFR_RNDN);
        mpfr_exp(x, x, MPFR_RNDN);
        mpfr_log1p(x, x, MPFR_RNDN);
        mpfr_add(x, x, s1, MPFR_RNDN);
        ck_assert_msg(lse == mpfr_get_d(x, MPFR_RNDN),
                      "scale %a: LSE = %a, %a expected", sc, lse,
                      mpfr_get_d(x, MPFR_RNDN));
    }
    mpfr_clears(s1, s2, x, y, (mpfr_ptr)0);
    mpfr_free_cache();
}
END_TEST

/* FP16 inputs (cfg->input): values BF16 cannot hold (11 significant
   bits) are read exactly.  q = (1 + 2^-10, 0.5), k1 = (2, -1 - 2^-9),
   k2 = (0.5, 1), so q.k1 = 2.5 + 2^-9 + 2^-10 ... computed here by hand
   in binary64 (exact: few bits), and O, LSE against a 400-bit MPFR
   evaluation of the closed form, as in test_two_scores. */
START_TEST(test_f16_inputs)
{
    /* FP16 bits: 1 + 2^-10 = 0x3C01, 0.5 = 0x3800, 2 = 0x4000,
       -(1 + 2^-9) = 0xBC02, 1 = 0x3C00, V: -1.5 = 0xBE00,
       0.25 + 2^-12 = 0x3401, 3 = 0x4200, -7 - 2^-8 = 0xC701 */
    uint16_t q[2] = {0x3C01, 0x3800};
    uint16_t k[4] = {0x4000, 0xBC02, 0x3800, 0x3C00};
    uint16_t v[4] = {0xBE00, 0x3401, 0x4200, 0xC701};
    const double qd[2] = {1 + 0x1p-10, 0.5};
    const double kd[4] = {2, -1 - 0x1p-9, 0.5, 1};
    const double vd[4] = {-1.5, 0.25 + 0x1p-12, 3, -7 - 0x1p-8};
    fa_config c = make_cfg(1, 1, 1, 2, 2, 1.0f);
    double o[2], lse;
    mpfr_t s1, s2, x, y;

    c.input = &sf_format_f16;
    mpfr_inits2(400, s1, s2, x, y, (mpfr_ptr)0);
    ck_assert_int_eq(ax_forward(&c, NULL, q, k, v, o, &lse), AX_OK);
    mpfr_set_d(s1, qd[0] * kd[0] + qd[1] * kd[1], MPFR_RNDN); /* exact */
    mpfr_set_d(s2, qd[0] * kd[2] + qd[1] * kd[3], MPFR_RNDN);
    for (int cc = 0; cc < 2; cc++) {
        double v1 = vd[cc], v2 = vd[2 + cc], expect;
        mpfr_sub(x, s1, s2, MPFR_RNDN);
        mpfr_exp(x, x, MPFR_RNDN);
        mpfr_add_ui(x, x, 1, MPFR_RNDN);
        mpfr_set_d(y, v2 - v1, MPFR_RNDN); /* exact */
        mpfr_div(x, y, x, MPFR_RNDN);
        mpfr_add_d(x, x, v1, MPFR_RNDN);
        expect = mpfr_get_d(x, MPFR_RNDN);
        ck_assert_msg(o[cc] == expect, "col %d: O = %a, %a expected", cc,
                      o[cc], expect);
    }
    mpfr_sub(x, s2, s1, MPFR_RNDN);
    mpfr_exp(x, x, MPFR_RNDN);
    mpfr_log1p(x, x, MPFR_RNDN);
    mpfr_add(x, x, s1, MPFR_RNDN);
    ck_assert_msg(lse == mpfr_get_d(x, MPFR_RNDN), "LSE = %a, %a expected",
                  lse, mpfr_get_d(x, MPFR_RNDN));
    /* the same bits read as BF16 are other numbers: another O */
    {
        double o16 = o[0];
        c.input = NULL;
        ck_assert_int_eq(ax_forward(&c, NULL, q, k, v, o, &lse), AX_OK);
        ck_assert(o[0] != o16);
    }
    mpfr_clears(s1, s2, x, y, (mpfr_ptr)0);
    mpfr_free_cache();
}
END_TEST

/* The default scale is 1/sqrt(d) rounded once to FP32 (hand-computed
   bits), and a given scale is used as is. */
START_TEST(test_default_scale)
{
    static const struct
    {
        size_t d;
        uint32_t bits;
    } t[] = {{1, 0x3F800000u}, {2, 0x3F3504F3u},  {3, 0x3F13CD3Au},
             {4, 0x3F000000u}, {64, 0x3E000000u}, {128, 0x3DB504F3u}};
    fa_config c = make_cfg(1, 1, 1, 1, 1, 0.0f);

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        c.shape.d = t[i].d;
        ck_assert_msg(ax_scale_bits(&c) == t[i].bits,
                      "d = %zu: 0x%08" PRIX32 ", expected 0x%08" PRIX32,
                      t[i].d, ax_scale_bits(&c), t[i].bits);
    }
    c.scale = -0.375f;
    ck_assert_uint_eq(ax_scale_bits(&c), 0xBEC00000u);
    ck_assert_int_eq((int)ax_score_prec(1), 547);
    ck_assert_int_eq((int)ax_score_prec(64), 553);
}
END_TEST

/*----------------------------------------------------------------------------
 * T6 and T7: the fix in exact arithmetic.  Seven rows of scores over eight
 * keys, made with one-hot (or two-hot) queries picking columns of K:
 *   A repeated positive max 3      B repeated negative max -1
 *   C repeated zero max            D single max 2.5
 *   E single large max 100 (T7)    F max 1 and 1 - 2^-10 (a near tie)
 *   G single negative max -2
 *--------------------------------------------------------------------------*/
#define FX_NQ 7
#define FX_NK 8
#define FX_D 8

static const double fx_scores[FX_NQ][FX_NK] = {
    {3, 1, 3, 0.5, -2, 3, 2.75, 0},
    {-1, -1.5, -3, -1, -2, -1, -5, -1.25},
    {0, -1, 0, -2, -0.5, -3, -0.25, -4},
    {2.5, 1, -1, 0.25, 2, 0, 2.25, -0.5},
    {100, 0, -3, 1, 2, -1, 0.5, 3},
    {1, 1, 0.5, -1, 0.25, 0, -2, 0.75}, /* + (0, -2^-10, 0, ...) */
    {-2, -3, -2.5, -4, -6, -3.5, -2.25, -5},
};
static const double fx_rmax[FX_NQ] = {3, -1, 0, 2.5, 100, 1, -2};

static void
fix_inputs(uint16_t *q, uint16_t *k, uint16_t *v, tst_rng *rng)
{
    static const int col[FX_NQ] = {0, 1, 2, 3, 4, 5, 7};

    memset(q, 0, FX_NQ * FX_D * sizeof *q);
    memset(k, 0, FX_NK * FX_D * sizeof *k);
    for (int i = 0; i < FX_NQ; i++) {
        q[i * FX_D + col[i]] = bf(1);
        for (int j = 0; j < FX_NK; j++)
            k[j * FX_D + col[i]] = bf(fx_scores[i][j]);
    }
    q[5 * FX_D + 6] = bf(1);
    k[1 * FX_D + 6] = bf(-0x1p-10);
    for (int x = 0; x < FX_NK * FX_D; x++)
        v[x] = rand_bf(rng, 2.0);
}

/* The shift the fix uses for row I with one block (hand table). */
static double
fix_expected_m(fa_fix_kind kind, fa_zero_max zm, int i)
{
    static const double none[FX_NQ] = {3, -1, 0, 2.5, 100, 1, -2};
    static const double beta[FX_NQ] = {6, 0, 0, 2.5, 100, 2, -2};
    static const double v2[FX_NQ] = {21, 0, 0, 2.5, 100, 1, -2};
    static const double eps[FX_NQ] = {3.03125, -0.96875, 0.03125, 2.5,
                                      100,     1.03125,  -2};
    static const double always[FX_NQ] = {6, 0, 0, 5, 200, 2, 0};
    double z = zm == FA_ZERO_MAX_SHIFT ? 0x1p-5 : 0.0;

    switch (kind) {
    case FA_FIX_NONE:
        return none[i];
    case FA_FIX_BETA:
        return i == 2 ? z : beta[i];
    case FA_FIX_BETA_V2:
        return i == 2 ? z : v2[i];
    case FA_FIX_EPS:
        return eps[i];
    case FA_FIX_ALWAYS:
        return i == 2 ? z : always[i];
    }
    return NAN;
}

START_TEST(test_fix_exact)
{
    static const fa_fix_kind kinds[5] = {
        FA_FIX_NONE, FA_FIX_BETA, FA_FIX_BETA_V2, FA_FIX_EPS, FA_FIX_ALWAYS};
    static const size_t bcs[5] = {1, 2, 3, 4, FX_NK};
    uint16_t q[FX_NQ * FX_D], k[FX_NK * FX_D], v[FX_NK * FX_D];
    double ro[FX_NQ * FX_D], rlse[FX_NQ], o[FX_NQ * FX_D], lse[FX_NQ];
    double m[FX_NQ], pmax[FX_NQ], vmax[FX_D];
    mpfr_t *rmo = mp_new(FX_NQ * FX_D, PREC), *rml = mp_new(FX_NQ, PREC);
    mpfr_t *mo = mp_new(FX_NQ * FX_D, PREC), *ml = mp_new(FX_NQ, PREC);
    mpfr_t *mpm = mp_new(FX_NQ, PREC), *mm = mp_new(FX_NQ, PREC);
    fa_config c = make_cfg(1, 1, FX_NQ, FX_NK, FX_D, 1.0f);
    ax_options direct = {PREC, AX_DIRECT}, tiled = {PREC, AX_TILED};
    ax_outputs ref, out;
    tst_rng rng;
    mpfr_t x;
    double tol_o = ldexp(1.0, -(PREC - 20));
    int n_bad = 0;

    mpfr_init2(x, PREC);
    tst_rng_init(&rng, 6);
    fix_inputs(q, k, v, &rng);
    for (int cc = 0; cc < FX_D; cc++) {
        vmax[cc] = 0;
        for (int j = 0; j < FX_NK; j++)
            vmax[cc] = fmax(vmax[cc], fabs(bfd(v[j * FX_D + cc])));
    }
    memset(&ref, 0, sizeof ref);
    ref.o.d = ro;
    ref.o.mp = rmo;
    ref.lse.d = rlse;
    ref.lse.mp = rml;
    ck_assert_int_eq(ax_forward_ex(&c, &direct, q, k, v, &ref), AX_OK);

    memset(&out, 0, sizeof out);
    out.o.d = o;
    out.o.mp = mo;
    out.lse.d = lse;
    out.lse.mp = ml;
    out.m.d = m;
    out.m.mp = mm;
    out.pmax.d = pmax;
    out.pmax.mp = mpm;
    for (int ki = 0; ki < 5; ki++)
        for (int zm = 0; zm < 2; zm++)
            for (int bi = 0; bi < 5; bi++)
                for (int ord = 0; ord < 2; ord++) {
                    bool bad = false;

                    c.fix.kind = kinds[ki];
                    c.fix.beta = kinds[ki] == FA_FIX_BETA_V2 ? 7.0 : 2.0;
                    c.fix.zero_max = zm ? FA_ZERO_MAX_SHIFT : FA_ZERO_MAX_KEEP;
                    c.bc = bcs[bi];
                    c.order = ord ? FA_ORDER_REVERSE : FA_ORDER_FORWARD;
                    ck_assert_int_eq(ax_forward_ex(&c, &tiled, q, k, v, &out),
                                     AX_OK);
                    for (int i = 0; i < FX_NQ; i++) {
                        double lt =
                            ldexp(1.0, -(PREC - 20)) * (1 + fabs(rlse[i]));
                        if (lse[i] != rlse[i]
                            || !close_mp(ml[i], rml[i], lt)) {
                            printf("row %d: LSE %a, direct %a\n", i, lse[i],
                                   rlse[i]);
                            bad = true;
                        }
                        for (int cc = 0; cc < FX_D; cc++) {
                            size_t e = (size_t)(i * FX_D + cc);
                            if (o[e] != ro[e]
                                || !close_mp(mo[e], rmo[e],
                                             tol_o * vmax[cc])) {
                                printf("row %d col %d: O %a, direct %a\n", i,
                                       cc, o[e], ro[e]);
                                bad = true;
                            }
                        }
                        /* with one block the shift is the fix's, and the
                           largest P~ is exp(r - m) */
                        if (bcs[bi] == FX_NK) {
                            double em =
                                fix_expected_m(kinds[ki], c.fix.zero_max, i);
                            if (m[i] != em) {
                                printf("row %d: m %a, expected %a\n", i, m[i],
                                       em);
                                bad = true;
                            }
                            mpfr_set_d(x, fx_rmax[i] - em, MPFR_RNDN);
                            mpfr_exp(x, x, MPFR_RNDN);
                            if (!close_mp(mpm[i], x, ldexp(1.0, -(PREC - 8)))
                                || (pmax[i] < 1) != (em > fx_rmax[i])) {
                                printf("row %d: max P~ %a, expected %a\n", i,
                                       pmax[i], mpfr_get_d(x, MPFR_RNDN));
                                bad = true;
                            }
                        }
                        /* never above 1, and the running shift never below
                           the row max */
                        if (pmax[i] > 1 || m[i] < fx_rmax[i]) {
                            printf("row %d: max P~ %a, m %a\n", i, pmax[i],
                                   m[i]);
                            bad = true;
                        }
                    }
                    if (bad && n_bad++ < 3)
                        print_case("fix", &c, q, k, v, NULL);
                }
    ck_assert_msg(n_bad == 0, "%d fix configurations differ from direct",
                  n_bad);
    mp_free(rmo, FX_NQ * FX_D);
    mp_free(rml, FX_NQ);
    mp_free(mo, FX_NQ * FX_D);
    mp_free(ml, FX_NQ);
    mp_free(mpm, FX_NQ);
    mp_free(mm, FX_NQ);
    mpfr_clear(x);
    mpfr_free_cache();
}
END_TEST

/* T7 at MPFR's range: "always" with a single max of 2^30 shifts by 2^31;
   exp(-2^30) is below MPFR's smallest number, l vanishes, and the
   reference refuses (AX_ERANGE) instead of dividing by zero.  Without the
   fix the same row is fine: O = V[0], LSE = 2^30. */
START_TEST(test_fix_range)
{
    uint16_t q[1] = {bf(0x1p15)}, k[2] = {bf(0x1p15), 0};
    uint16_t v[2] = {bf(-1.75), bf(3)};
    fa_config c = make_cfg(1, 1, 1, 2, 1, 1.0f);
    ax_options direct = {PREC, AX_DIRECT}, tiled = {PREC, AX_TILED};
    double o = 0, lse = 0;

    ck_assert_int_eq(ax_forward(&c, &direct, q, k, v, &o, &lse), AX_OK);
    ck_assert(o == -1.75 && lse == 0x1p30);
    ck_assert_int_eq(ax_forward(&c, &tiled, q, k, v, &o, &lse), AX_OK);
    ck_assert(o == -1.75 && lse == 0x1p30);
    c.fix.kind = FA_FIX_ALWAYS;
    ck_assert_int_eq(ax_forward(&c, &tiled, q, k, v, &o, &lse), AX_ERANGE);
    c.bc = 1;
    ck_assert_int_eq(ax_forward(&c, &tiled, q, k, v, &o, &lse), AX_ERANGE);
    /* the FP32 threshold of T7 (a max of 100) is nothing here: covered by
       row E of test_fix_exact */
    mpfr_free_cache();
}
END_TEST

/*----------------------------------------------------------------------------
 * Random cases: tiled against direct, every fix, causal or not, Nq != Nk,
 * repeated maxima made by repeated keys; and both against the double
 * attention.
 *--------------------------------------------------------------------------*/
typedef struct
{
    fa_config c;
    uint16_t *q, *k, *v, *dout;
} rcase;

static void
rcase_make(rcase *r, tst_rng *rng, size_t nq, size_t nk, size_t d, bool causal)
{
    size_t nh = 2, nqd = nh * nq * d, nkd = nh * nk * d;

    r->c = make_cfg(2, 1, nq, nk, d, 0.0f);
    r->c.causal = causal;
    r->c.scale = (float)bfd(rand_bf(rng, 1.0)) + 0.5f;
    r->q = bnew(nqd);
    r->k = bnew(nkd);
    r->v = bnew(nkd);
    r->dout = bnew(nqd);
    for (size_t x = 0; x < nqd; x++) {
        r->q[x] = rand_bf(rng, 3.0);
        r->dout[x] = rand_bf(rng, 2.0);
    }
    for (size_t x = 0; x < nkd; x++) {
        r->k[x] = rand_bf(rng, 3.0);
        r->v[x] = rand_bf(rng, 2.0);
    }
    /* repeat some keys, so that rows have repeated maxima */
    for (size_t h = 0; h < nh; h++)
        for (size_t j = 2; j < nk; j += 3)
            memcpy(r->k + (h * nk + j) * d, r->k + (h * nk + j - 2) * d,
                   d * sizeof *r->k);
}

static void
rcase_free(rcase *r)
{
    free(r->q);
    free(r->k);
    free(r->v);
    free(r->dout);
}

static const size_t shapes[][3] = {
    /* nq, nk, d */
    {5, 9, 3}, {7, 6, 4}, {6, 6, 2}, {1, 4, 5}, {8, 3, 3}, {12, 16, 8},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

START_TEST(test_tiled_vs_direct)
{
    static const fa_fix_kind kinds[5] = {
        FA_FIX_NONE, FA_FIX_BETA, FA_FIX_BETA_V2, FA_FIX_EPS, FA_FIX_ALWAYS};
    unsigned long reps = tst_multiplier();
    tst_rng rng;
    int n_bad = 0;

    tst_rng_init(&rng, 61);
    for (unsigned long rep = 0; rep < reps; rep++)
        for (size_t si = 0; si < N_SHAPES; si++)
            for (int causal = 0; causal < 2; causal++) {
                size_t nq = shapes[si][0], nk = shapes[si][1];
                size_t d = shapes[si][2], no = 2 * nq * d, nl = 2 * nq;
                rcase r;
                double *ro = dnew(no), *rl = dnew(nl);
                double *o = dnew(no), *l = dnew(nl);
                mpfr_t *rmo = mp_new(no, PREC), *rml = mp_new(nl, PREC);
                mpfr_t *mo = mp_new(no, PREC), *ml = mp_new(nl, PREC);
                ax_options direct = {PREC, AX_DIRECT};
                ax_options tiled = {PREC, AX_TILED};
                ax_outputs ref, out;
                double vmax = 2.0;

                rcase_make(&r, &rng, nq, nk, d, causal != 0);
                memset(&ref, 0, sizeof ref);
                ref.o = (ax_buf){ro, rmo};
                ref.lse = (ax_buf){rl, rml};
                memset(&out, 0, sizeof out);
                out.o = (ax_buf){o, mo};
                out.lse = (ax_buf){l, ml};
                ck_assert_int_eq(
                    ax_forward_ex(&r.c, &direct, r.q, r.k, r.v, &ref), AX_OK);
                for (int ki = 0; ki < 5; ki++)
                    for (size_t bc = 1; bc <= nk; bc++)
                        for (int ord = 0; ord < 2; ord++) {
                            bool bad = false;

                            r.c.fix.kind = kinds[ki];
                            r.c.fix.zero_max = (bc & 1) ? FA_ZERO_MAX_SHIFT
                                                        : FA_ZERO_MAX_KEEP;
                            r.c.bc = bc;
                            r.c.order =
                                ord ? FA_ORDER_REVERSE : FA_ORDER_FORWARD;
                            ck_assert_int_eq(ax_forward_ex(&r.c, &tiled, r.q,
                                                           r.k, r.v, &out),
                                             AX_OK);
                            for (size_t x = 0; x < nl; x++)
                                bad |= !same_double(l[x], rl[x])
                                       || !close_mp(ml[x], rml[x],
                                                    ldexp(1 + fabs(rl[x]),
                                                          -(PREC - 20)));
                            for (size_t x = 0; x < no; x++)
                                bad |= !same_double(o[x], ro[x])
                                       || !close_mp(mo[x], rmo[x],
                                                    ldexp(vmax, -(PREC - 20)));
                            if (bad && n_bad++ < 3)
                                print_case("tiled vs direct", &r.c, r.q, r.k,
                                           r.v, NULL);
                        }
                rcase_free(&r);
                free(ro);
                free(rl);
                free(o);
                free(l);
                mp_free(rmo, no);
                mp_free(rml, nl);
                mp_free(mo, no);
                mp_free(ml, nl);
            }
    ck_assert_msg(n_bad == 0, "%d tiled runs differ from direct", n_bad);
    mpfr_free_cache();
}
END_TEST

/* Forward and backward against the double attention, causal or not,
   Nq < Nk, Nq = Nk and Nq > Nk (rows with every key masked). */
START_TEST(test_against_double)
{
    unsigned long reps = tst_multiplier();
    tst_rng rng;
    int n_bad = 0;

    tst_rng_init(&rng, 62);
    for (unsigned long rep = 0; rep < reps; rep++)
        for (size_t si = 0; si < N_SHAPES; si++)
            for (int causal = 0; causal < 2; causal++) {
                size_t nq = shapes[si][0], nk = shapes[si][1];
                size_t d = shapes[si][2], no = 2 * nq * d, nl = 2 * nq;
                size_t nkd = 2 * nk * d;
                rcase r;
                naive_out nv;
                double *o = dnew(no), *l = dnew(nl), *dl = dnew(nl);
                double *dq = dnew(no), *dk = dnew(nkd), *dv = dnew(nkd);
                double *bo = dnew(no), *bl = dnew(nl);
                ax_outputs out;
                bool bad = false;
                const double tol = 1e-12;

                rcase_make(&r, &rng, nq, nk, d, causal != 0);
                naive_new(&nv, no, nl, nkd);
                naive(&r.c, r.q, r.k, r.v, r.dout, &nv);

                ck_assert_int_eq(ax_forward(&r.c, NULL, r.q, r.k, r.v, o, l),
                                 AX_OK);
                memset(&out, 0, sizeof out);
                out.o.d = bo;
                out.lse.d = bl;
                out.delta.d = dl;
                out.dq.d = dq;
                out.dk.d = dk;
                out.dv.d = dv;
                ck_assert_int_eq(ax_backward_ex(&r.c, NULL, r.q, r.k, r.v,
                                                r.dout, NULL, &out),
                                 AX_OK);
                for (size_t x = 0; x < nl; x++) {
                    if (isinf(nv.lse[x])) {
                        bad |= l[x] != nv.lse[x] || bl[x] != nv.lse[x];
                    } else {
                        double t = tol * (1 + fabs(nv.lse[x]));
                        bad |= fabs(l[x] - nv.lse[x]) > t
                               || fabs(bl[x] - nv.lse[x]) > t;
                    }
                    bad |= fabs(dl[x] - nv.delta[x])
                           > tol * nv.mdelta[x] + 1e-300;
                }
                for (size_t x = 0; x < no; x++) {
                    bad |= fabs(o[x] - nv.o[x]) > tol * nv.mo[x] + 1e-300;
                    bad |= bo[x] != o[x];
                    bad |= fabs(dq[x] - nv.dq[x]) > tol * nv.mdq[x] + 1e-300;
                }
                for (size_t x = 0; x < nkd; x++) {
                    bad |= fabs(dk[x] - nv.dk[x]) > tol * nv.mdk[x] + 1e-300;
                    bad |= fabs(dv[x] - nv.dv[x]) > tol * nv.mdv[x] + 1e-300;
                }
                /* a fully masked row: O = 0, LSE = -Inf, delta = 0,
                   dQ = 0 */
                for (size_t x = 0; x < nl; x++)
                    if (isinf(nv.lse[x])) {
                        bad |= !(l[x] == -INFINITY && dl[x] == 0);
                        for (size_t cc = 0; cc < d; cc++)
                            bad |= o[x * d + cc] != 0 || dq[x * d + cc] != 0;
                    }
                if (bad && n_bad++ < 3)
                    print_case("against double", &r.c, r.q, r.k, r.v, r.dout);
                rcase_free(&r);
                free(o);
                free(l);
                free(dl);
                free(dq);
                free(dk);
                free(dv);
                free(bo);
                free(bl);
                naive_free(&nv);
            }
    ck_assert_msg(n_bad == 0, "%d cases differ from the double attention",
                  n_bad);
    mpfr_free_cache();
}
END_TEST

/* Causal masking by construction: row i of a causal run equals a
   non-causal run over the keys it sees. */
START_TEST(test_causal_prefix)
{
    size_t nq = 4, nk = 6, d = 3;
    tst_rng rng;
    rcase r;
    double o[2 * 4 * 3], l[2 * 4];

    tst_rng_init(&rng, 63);
    rcase_make(&r, &rng, nq, nk, d, true);
    r.c.shape.batch = 1;
    ck_assert_int_eq(ax_forward(&r.c, NULL, r.q, r.k, r.v, o, l), AX_OK);
    for (size_t i = 0; i < nq; i++) {
        /* query i sees keys 0 .. i + nk - nq */
        size_t vis = i + nk - nq + 1;
        fa_config c1 = make_cfg(1, 1, 1, vis, d, r.c.scale);
        double o1[3], l1;

        ck_assert_int_eq(ax_forward(&c1, NULL, r.q + i * d, r.k, r.v, o1, &l1),
                         AX_OK);
        ck_assert_msg(l1 == l[i], "row %zu: LSE %a, prefix run %a", i, l[i],
                      l1);
        for (size_t cc = 0; cc < d; cc++)
            ck_assert_msg(o1[cc] == o[i * d + cc],
                          "row %zu col %zu: O %a, prefix run %a", i, cc,
                          o[i * d + cc], o1[cc]);
    }
    rcase_free(&r);
    mpfr_free_cache();
}
END_TEST

/* An attention mask as its meaning: a boolean mask equal to the causal
   mask gives the causal results (forward and backward); each row of a
   random boolean mask gives the forward of its kept keys alone (K and V
   rows gathered); an additive constant per row leaves O unchanged and
   adds itself to LSE; a row with no key gives O = 0, LSE = -Inf. */
START_TEST(test_mask_meaning)
{
    size_t nq = 5, nk = 7, d = 3, nh = 2;
    tst_rng rng;
    rcase r;
    double o[2 * 5 * 3], l[2 * 5], oc[2 * 5 * 3], lc[2 * 5];
    double dq[2 * 5 * 3], dk[2 * 7 * 3], dv[2 * 7 * 3];
    double dqc[2 * 5 * 3], dkc[2 * 7 * 3], dvc[2 * 7 * 3];
    uint8_t keep[5 * 7], rnd[2 * 5 * 7];
    uint32_t add[5 * 7];
    size_t hoff[2] = {0, 5 * 7};
    fa_attn_mask m = {FA_AMASK_BOOL, keep, NULL, 7, 1};
    fa_config c;

    tst_rng_init(&rng, 64);
    rcase_make(&r, &rng, nq, nk, d, true);
    /* the causal mask (bottom-right) as a boolean mask, both heads */
    for (size_t i = 0; i < nq; i++)
        for (size_t j = 0; j < nk; j++)
            keep[i * nk + j] = j <= i + nk - nq;
    ck_assert_int_eq(ax_forward(&r.c, NULL, r.q, r.k, r.v, oc, lc), AX_OK);
    ck_assert_int_eq(ax_backward(&r.c, NULL, r.q, r.k, r.v, r.dout, NULL,
                                 NULL, dqc, dkc, dvc),
                     AX_OK);
    c = r.c;
    c.causal = false;
    c.mask = &m;
    ck_assert_int_eq(ax_forward(&c, NULL, r.q, r.k, r.v, o, l), AX_OK);
    ck_assert_int_eq(ax_backward(&c, NULL, r.q, r.k, r.v, r.dout, NULL, NULL,
                                 dq, dk, dv),
                     AX_OK);
    for (size_t x = 0; x < nh * nq * d; x++)
        ck_assert_msg(o[x] == oc[x] && dq[x] == dqc[x],
                      "causal as a mask: element %zu: O %a / %a, dQ %a / %a",
                      x, o[x], oc[x], dq[x], dqc[x]);
    for (size_t x = 0; x < nh * nq; x++)
        ck_assert_msg(l[x] == lc[x], "causal as a mask: LSE %zu: %a / %a", x,
                      l[x], lc[x]);
    for (size_t x = 0; x < nh * nk * d; x++)
        ck_assert_msg(dk[x] == dkc[x] && dv[x] == dvc[x],
                      "causal as a mask: dK/dV %zu: %a / %a, %a / %a", x,
                      dk[x], dkc[x], dv[x], dvc[x]);

    /* a random mask per head (head 1 at its own offset), row 2 of head 0
       with no key */
    for (size_t x = 0; x < nh * nq * nk; x++)
        rnd[x] = (uint8_t)(tst_rand_below(&rng, 3) != 0);
    for (size_t j = 0; j < nk; j++)
        rnd[2 * nk + j] = 0;
    m.data = rnd;
    m.head_offset = hoff;
    ck_assert_int_eq(ax_forward(&c, NULL, r.q, r.k, r.v, o, l), AX_OK);
    for (size_t h = 0; h < nh; h++)
        for (size_t i = 0; i < nq; i++) {
            uint16_t kk[7 * 3], vv[7 * 3];
            size_t n = 0;
            double o1[3], l1;
            for (size_t j = 0; j < nk; j++)
                if (rnd[h * nq * nk + i * nk + j]) {
                    memcpy(kk + n * d, r.k + (h * nk + j) * d, d * 2);
                    memcpy(vv + n * d, r.v + (h * nk + j) * d, d * 2);
                    n++;
                }
            if (n == 0) {
                ck_assert_msg(isinf(l[h * nq + i]) && l[h * nq + i] < 0,
                              "row without a key: LSE %a", l[h * nq + i]);
                for (size_t cc = 0; cc < d; cc++)
                    ck_assert(o[(h * nq + i) * d + cc] == 0.0);
                continue;
            }
            fa_config c1 = make_cfg(1, 1, 1, n, d, r.c.scale);
            ck_assert_int_eq(ax_forward(&c1, NULL, r.q + (h * nq + i) * d, kk,
                                        vv, o1, &l1),
                             AX_OK);
            ck_assert_msg(l1 == l[h * nq + i],
                          "head %zu row %zu: LSE %a, kept keys alone %a", h, i,
                          l[h * nq + i], l1);
            for (size_t cc = 0; cc < d; cc++)
                ck_assert_msg(o1[cc] == o[(h * nq + i) * d + cc],
                              "head %zu row %zu col %zu: O %a, alone %a", h,
                              i, cc, o[(h * nq + i) * d + cc], o1[cc]);
        }

    /* an additive constant per row (FP32, exact): O unchanged, LSE + C */
    c.causal = false;
    r.c.causal = false;
    ck_assert_int_eq(ax_forward(&r.c, NULL, r.q, r.k, r.v, oc, lc), AX_OK);
    for (size_t i = 0; i < nq; i++)
        for (size_t j = 0; j < nk; j++)
            add[i * nk + j] = 0x41200000u + (uint32_t)i * 0x00100000u;
    m.type = FA_AMASK_F32;
    m.data = add;
    m.head_offset = NULL;
    ck_assert_int_eq(ax_forward(&c, NULL, r.q, r.k, r.v, o, l), AX_OK);
    for (size_t h = 0; h < nh; h++)
        for (size_t i = 0; i < nq; i++) {
            float cf;
            uint32_t b = add[i * nk];
            memcpy(&cf, &b, sizeof cf);
            ck_assert_msg(fabs(l[h * nq + i] - (lc[h * nq + i] + cf))
                              <= 0x1p-40 * fabs(l[h * nq + i]),
                          "row %zu: LSE %a, unmasked + C %a", i,
                          l[h * nq + i], lc[h * nq + i] + cf);
            for (size_t cc = 0; cc < d; cc++)
                ck_assert_msg(
                    fabs(o[(h * nq + i) * d + cc] - oc[(h * nq + i) * d + cc])
                        <= 0x1p-45 * fabs(oc[(h * nq + i) * d + cc]),
                    "row %zu col %zu: O %a, unmasked %a", i, cc,
                    o[(h * nq + i) * d + cc], oc[(h * nq + i) * d + cc]);
        }
    rcase_free(&r);
    mpfr_free_cache();
}
END_TEST

/* Adding a constant C to every score of a row (an extra column: q = 1,
   k = C for every key) leaves O unchanged and adds scale * C to LSE. */
START_TEST(test_shift_invariance)
{
    size_t nq = 3, nk = 5, d = 3;
    const double cs[3] = {37.5, -1000, 0.0078125};
    tst_rng rng;
    rcase r;
    uint16_t q2[3 * 4], k2[5 * 4];
    double o[3 * 3], l[3], o2[3 * 3], l2[3];
    mpfr_t *ml = mp_new(nq, PREC), *ml2 = mp_new(nq, PREC);
    mpfr_t *mo = mp_new(nq * d, PREC), *mo2 = mp_new(nq * d, PREC);
    mpfr_t x;
    ax_outputs out;

    mpfr_init2(x, PREC + 64);
    tst_rng_init(&rng, 64);
    rcase_make(&r, &rng, nq, nk, d, false);
    r.c.shape.batch = 1;
    memset(&out, 0, sizeof out);
    out.o = (ax_buf){o, mo};
    out.lse = (ax_buf){l, ml};
    ck_assert_int_eq(ax_forward_ex(&r.c, NULL, r.q, r.k, r.v, &out), AX_OK);
    for (int ci = 0; ci < 3; ci++) {
        fa_config c2 = r.c;

        c2.shape.d = d + 1;
        for (size_t i = 0; i < nq; i++) {
            memcpy(q2 + i * (d + 1), r.q + i * d, d * sizeof *q2);
            q2[i * (d + 1) + d] = bf(1);
        }
        for (size_t j = 0; j < nk; j++) {
            memcpy(k2 + j * (d + 1), r.k + j * d, d * sizeof *k2);
            k2[j * (d + 1) + d] = bf(cs[ci]);
        }
        /* V keeps d columns: use a V of d + 1 columns with a zero one */
        {
            uint16_t v2[5 * 4];
            double o2w[3 * 4];
            mpfr_t *mo2w = mp_new(nq * (d + 1), PREC);

            for (size_t j = 0; j < nk; j++) {
                memcpy(v2 + j * (d + 1), r.v + j * d, d * sizeof *v2);
                v2[j * (d + 1) + d] = 0;
            }
            memset(&out, 0, sizeof out);
            out.o = (ax_buf){o2w, mo2w};
            out.lse = (ax_buf){l2, ml2};
            ck_assert_int_eq(ax_forward_ex(&c2, NULL, q2, k2, v2, &out),
                             AX_OK);
            for (size_t i = 0; i < nq; i++)
                for (size_t cc = 0; cc < d; cc++) {
                    o2[i * d + cc] = o2w[i * (d + 1) + cc];
                    mpfr_set(mo2[i * d + cc], mo2w[i * (d + 1) + cc],
                             MPFR_RNDN);
                }
            mp_free(mo2w, nq * (d + 1));
        }
        for (size_t i = 0; i < nq; i++) {
            for (size_t cc = 0; cc < d; cc++) {
                ck_assert_msg(o2[i * d + cc] == o[i * d + cc],
                              "C = %g row %zu col %zu: O %a, unshifted %a",
                              cs[ci], i, cc, o2[i * d + cc], o[i * d + cc]);
                ck_assert(close_mp(mo2[i * d + cc], mo[i * d + cc],
                                   ldexp(2.0, -(PREC - 20))));
            }
            /* LSE2 - LSE = scale * C */
            mpfr_sub(x, ml2[i], ml[i], MPFR_RNDN);
            mpfr_sub_d(x, x, (double)r.c.scale * cs[ci], MPFR_RNDN);
            ck_assert_msg(
                mpfr_cmpabs_ui(x, 0) == 0 || mpfr_get_exp(x) < -(PREC - 32),
                "C = %g row %zu: LSE moved by the wrong amount", cs[ci], i);
        }
    }
    mp_free(ml, nq);
    mp_free(ml2, nq);
    mp_free(mo, nq * d);
    mp_free(mo2, nq * d);
    mpfr_clear(x);
    rcase_free(&r);
    mpfr_free_cache();
}
END_TEST

/*----------------------------------------------------------------------------
 * T5: dQ(delta1) - dQ(delta2) = scale diag(delta2 - delta1) (P K), with P
 * and P K computed here in MPFR from scores computed here.
 *--------------------------------------------------------------------------*/
START_TEST(test_eq1_identity)
{
    size_t nq = 5, nk = 7, d = 4, nh = 2;
    size_t no = nh * nq * d, nl = nh * nq;
    tst_rng rng;
    rcase r;
    double *d1 = dnew(nl), *d2 = dnew(nl), *dout1 = dnew(nl);
    mpfr_t *dq1 = mp_new(no, PREC), *dq2 = mp_new(no, PREC);
    mpfr_t *md2 = mp_new(nl, PREC), *delta = mp_new(nl, PREC);
    mpfr_t *p = mp_new(nk, 600), *dpr = mp_new(nk, 600);
    mpfr_t s, mx, l, x, y, pk, lhs, mag;
    ax_outputs out;
    ax_in in1, in2;
    int n_bad = 0;

    mpfr_inits2(600, s, mx, l, x, y, pk, lhs, mag, (mpfr_ptr)0);
    tst_rng_init(&rng, 65);
    for (int causal = 0; causal < 2; causal++) {
        rcase_make(&r, &rng, nq, nk, d, causal != 0);
        for (size_t x0 = 0; x0 < nl; x0++) {
            d1[x0] = bfd(rand_bf(&rng, 4.0)) + 0x1p-30;
            d2[x0] = bfd(rand_bf(&rng, 4.0));
            mpfr_set_d(md2[x0], d2[x0], MPFR_RNDN);
        }
        memset(&out, 0, sizeof out);
        out.dq.mp = dq1;
        out.delta.d = dout1;
        in1 = (ax_in){d1, NULL};
        ck_assert_int_eq(
            ax_backward_ex(&r.c, NULL, r.q, r.k, r.v, r.dout, &in1, &out),
            AX_OK);
        for (size_t x0 = 0; x0 < nl; x0++)
            ck_assert(dout1[x0] == d1[x0]); /* the delta used is reported */
        memset(&out, 0, sizeof out);
        out.dq.mp = dq2;
        in2 = (ax_in){NULL, md2};
        ck_assert_int_eq(
            ax_backward_ex(&r.c, NULL, r.q, r.k, r.v, r.dout, &in2, &out),
            AX_OK);
        /* the computed delta, for the rowsum(dP o P) check */
        memset(&out, 0, sizeof out);
        out.delta.mp = delta;
        ck_assert_int_eq(
            ax_backward_ex(&r.c, NULL, r.q, r.k, r.v, r.dout, NULL, &out),
            AX_OK);

        for (size_t h = 0; h < nh; h++)
            for (size_t i = 0; i < nq; i++) {
                size_t row = h * nq + i, vis = nk;
                long lim = (long)i + (long)nk - (long)nq;

                if (causal)
                    vis = lim < 0                ? 0
                          : (size_t)lim + 1 < nk ? (size_t)lim + 1
                                                 : nk;
                /* scores, exactly; P = exp(s - max) / sum */
                mpfr_set_inf(mx, -1);
                for (size_t j = 0; j < vis; j++) {
                    mpfr_set_zero(s, 1);
                    for (size_t cc = 0; cc < d; cc++) {
                        mpfr_set_d(x, bfd(r.q[row * d + cc]), MPFR_RNDN);
                        mpfr_mul_d(x, x, bfd(r.k[(h * nk + j) * d + cc]),
                                   MPFR_RNDN);
                        mpfr_add(s, s, x, MPFR_RNDN);
                    }
                    mpfr_mul_d(p[j], s, (double)r.c.scale, MPFR_RNDN);
                    mpfr_max(mx, mx, p[j], MPFR_RNDN);
                    /* dP = dO . V */
                    mpfr_set_zero(dpr[j], 1);
                    for (size_t cc = 0; cc < d; cc++) {
                        mpfr_set_d(x, bfd(r.dout[row * d + cc]), MPFR_RNDN);
                        mpfr_mul_d(x, x, bfd(r.v[(h * nk + j) * d + cc]),
                                   MPFR_RNDN);
                        mpfr_add(dpr[j], dpr[j], x, MPFR_RNDN);
                    }
                }
                mpfr_set_zero(l, 1);
                for (size_t j = 0; j < vis; j++) {
                    mpfr_sub(p[j], p[j], mx, MPFR_RNDN);
                    mpfr_exp(p[j], p[j], MPFR_RNDN);
                    mpfr_add(l, l, p[j], MPFR_RNDN);
                }
                for (size_t j = 0; j < vis; j++)
                    mpfr_div(p[j], p[j], l, MPFR_RNDN);
                /* delta = rowsum(dP o P) (the same number as rowsum(dO o
                   O)) */
                mpfr_set_zero(y, 1);
                for (size_t j = 0; j < vis; j++) {
                    mpfr_mul(x, dpr[j], p[j], MPFR_RNDN);
                    mpfr_add(y, y, x, MPFR_RNDN);
                }
                if (!close_mp(delta[row], y, ldexp(16.0, -(PREC - 20)))) {
                    printf("row %zu: delta differs from rowsum(dP o P)\n",
                           row);
                    n_bad++;
                }
                for (size_t cc = 0; cc < d; cc++) {
                    size_t e = row * d + cc;
                    double tol;

                    mpfr_set_zero(pk, 1);
                    mpfr_set_zero(mag, 1);
                    for (size_t j = 0; j < vis; j++) {
                        double kv = bfd(r.k[(h * nk + j) * d + cc]);
                        mpfr_mul_d(x, p[j], kv, MPFR_RNDN);
                        mpfr_add(pk, pk, x, MPFR_RNDN);
                        mpfr_abs(x, x, MPFR_RNDN);
                        mpfr_abs(y, dpr[j], MPFR_RNDN);
                        mpfr_add_d(y, y, fabs(d1[row]) + fabs(d2[row]) + 1,
                                   MPFR_RNDN);
                        mpfr_mul(x, x, y, MPFR_RNDN);
                        mpfr_add(mag, mag, x, MPFR_RNDN);
                    }
                    /* rhs = scale (delta2 - delta1) (P K) */
                    mpfr_mul_d(pk, pk, (double)r.c.scale, MPFR_RNDN);
                    mpfr_mul_d(pk, pk, d2[row] - d1[row], MPFR_RNDN);
                    mpfr_sub(lhs, dq1[e], dq2[e], MPFR_RNDN);
                    tol = ldexp(mpfr_get_d(mag, MPFR_RNDU)
                                    * fabs((double)r.c.scale),
                                -(PREC - 20));
                    if (!close_mp(lhs, pk, tol)) {
                        printf("row %zu col %zu: dQ1 - dQ2 = %a, scale "
                               "(d2 - d1) (PK) = %a\n",
                               row, cc, mpfr_get_d(lhs, MPFR_RNDN),
                               mpfr_get_d(pk, MPFR_RNDN));
                        n_bad++;
                    }
                }
            }
        if (n_bad != 0)
            print_case("eq1", &r.c, r.q, r.k, r.v, r.dout);
        rcase_free(&r);
    }
    ck_assert_msg(n_bad == 0, "%d elements break the Eq. 1 identity", n_bad);
    free(d1);
    free(d2);
    free(dout1);
    mp_free(dq1, no);
    mp_free(dq2, no);
    mp_free(md2, nl);
    mp_free(delta, nl);
    mp_free(p, nk);
    mp_free(dpr, nk);
    mpfr_clears(s, mx, l, x, y, pk, lhs, mag, (mpfr_ptr)0);
    mpfr_free_cache();
}
END_TEST

/*----------------------------------------------------------------------------
 * The error bounds of doc/exact.md, checked at the smallest precision
 * (p = 64) against p = 512: with u = 2^-64, T blocks and the magnitudes of
 * the double attention,
 *   O     (4T + 1) u sum_j P_j |V_j|           (direct: T = 1)
 *   LSE   u (2T + log n + |m - max S| + |LSE|)
 *   delta 6 u D,  D = sum_c |dO_c| sum_j P_j |V_jc|
 *   dQ    7 u |scale| sum_j P_j |K_j| (|dP_j| + |delta| + D)
 *   dK    8 u |scale| sum_i P_i |Q_i| (|dP_i| + |delta_i| + D_i)
 *   dV    5 u sum_i P_i |dO_i|
 *--------------------------------------------------------------------------*/
static bool
within(mpfr_srcptr a, mpfr_srcptr b, double bound)
{
    /* the bound of the p = 512 run is 2^-448 times smaller: 1 % slack */
    return close_mp(a, b, bound * 1.01 + 1e-300);
}

START_TEST(test_precision_bounds)
{
    static const fa_fix_kind kinds[3] = {FA_FIX_NONE, FA_FIX_BETA,
                                         FA_FIX_ALWAYS};
    size_t nq = 6, nk = 7, d = 4, nh = 2;
    size_t no = nh * nq * d, nl = nh * nq, nkd = nh * nk * d;
    const double u = 0x1p-64;
    tst_rng rng;
    int n_bad = 0;

    tst_rng_init(&rng, 67);
    for (int causal = 0; causal < 2; causal++) {
        rcase r;
        naive_out nv;
        mpfr_t *o[2], *l[2], *m[2], *dl[2], *dq[2], *dk[2], *dv[2];
        ax_outputs out;
        double *smax = dnew(nl);

        rcase_make(&r, &rng, nq, nk, d, causal != 0);
        naive_new(&nv, no, nl, nkd);
        naive(&r.c, r.q, r.k, r.v, r.dout, &nv);
        for (int a = 0; a < 2; a++) {
            o[a] = mp_new(no, 512);
            l[a] = mp_new(nl, 512);
            m[a] = mp_new(nl, 512);
            dl[a] = mp_new(nl, 512);
            dq[a] = mp_new(no, 512);
            dk[a] = mp_new(nkd, 512);
            dv[a] = mp_new(nkd, 512);
        }
        /* the backward (direct forward inside) at p = 64 and p = 512 */
        for (int a = 0; a < 2; a++) {
            ax_options opt = {a == 0 ? 64 : 512, AX_DIRECT};

            memset(&out, 0, sizeof out);
            out.o.mp = o[a];
            out.lse.mp = l[a];
            out.m.mp = m[a];
            out.delta.mp = dl[a];
            out.dq.mp = dq[a];
            out.dk.mp = dk[a];
            out.dv.mp = dv[a];
            ck_assert_int_eq(
                ax_backward_ex(&r.c, &opt, r.q, r.k, r.v, r.dout, NULL, &out),
                AX_OK);
        }
        for (size_t x = 0; x < nl; x++) {
            smax[x] = mpfr_get_d(m[1][x], MPFR_RNDN);
            if (isinf(nv.lse[x]))
                continue;
            n_bad += !within(l[0][x], l[1][x],
                             u * (2 + log((double)nk) + fabs(nv.lse[x])));
            n_bad += !within(dl[0][x], dl[1][x], 6 * u * nv.mdelta[x]);
        }
        for (size_t x = 0; x < no; x++) {
            n_bad += !within(o[0][x], o[1][x], 5 * u * nv.mo[x]);
            n_bad += !within(dq[0][x], dq[1][x], 7 * u * nv.mdq[x]);
        }
        for (size_t x = 0; x < nkd; x++) {
            n_bad += !within(dk[0][x], dk[1][x], 8 * u * nv.mdk[x]);
            n_bad += !within(dv[0][x], dv[1][x], 5 * u * nv.mdv[x]);
        }
        /* the tiled forward, against the p = 512 direct one */
        for (int ki = 0; ki < 3; ki++)
            for (size_t bc = 1; bc <= 3; bc += 2) {
                ax_options opt = {64, AX_TILED};

                r.c.fix.kind = kinds[ki];
                r.c.bc = bc;
                memset(&out, 0, sizeof out);
                out.o.mp = o[0];
                out.lse.mp = l[0];
                out.m.mp = m[0];
                ck_assert_int_eq(
                    ax_forward_ex(&r.c, &opt, r.q, r.k, r.v, &out), AX_OK);
                for (size_t x = 0; x < nl; x++) {
                    double t = (double)((nk + bc - 1) / bc);
                    double mm = mpfr_get_d(m[0][x], MPFR_RNDN);

                    if (isinf(nv.lse[x]))
                        continue;
                    n_bad += !within(l[0][x], l[1][x],
                                     u
                                         * (2 * t + log((double)nk)
                                            + fabs(mm - smax[x])
                                            + fabs(nv.lse[x])));
                    for (size_t cc = 0; cc < d; cc++)
                        n_bad += !within(o[0][x * d + cc], o[1][x * d + cc],
                                         (4 * t + 1) * u * nv.mo[x * d + cc]);
                }
            }
        if (n_bad != 0)
            print_case("precision bounds", &r.c, r.q, r.k, r.v, r.dout);
        for (int a = 0; a < 2; a++) {
            mp_free(o[a], no);
            mp_free(l[a], nl);
            mp_free(m[a], nl);
            mp_free(dl[a], nl);
            mp_free(dq[a], no);
            mp_free(dk[a], nkd);
            mp_free(dv[a], nkd);
        }
        rcase_free(&r);
        free(smax);
        naive_free(&nv);
    }
    ck_assert_msg(n_bad == 0, "%d values outside the documented bounds",
                  n_bad);
    mpfr_free_cache();
}
END_TEST

/*----------------------------------------------------------------------------
 * Outputs, errors, MPFR state.
 *--------------------------------------------------------------------------*/

/* S, P, m, l, dP, dS as documented: masked S = -Inf, P = dS = 0 there,
   rows of P sum to 1, l = sum exp(S - m). */
START_TEST(test_intermediates)
{
    size_t nq = 4, nk = 3, d = 2, nl = 2 * nq, ns = 2 * nq * nk;
    tst_rng rng;
    rcase r;
    double *s = dnew(ns), *p = dnew(ns), *dp = dnew(ns), *ds = dnew(ns);
    double *m = dnew(nl), *l = dnew(nl), *lse = dnew(nl);
    ax_outputs out;

    tst_rng_init(&rng, 66);
    rcase_make(&r, &rng, nq, nk, d, true);
    memset(&out, 0, sizeof out);
    out.s.d = s;
    out.p.d = p;
    out.m.d = m;
    out.l.d = l;
    out.lse.d = lse;
    out.dp.d = dp;
    out.ds.d = ds;
    ck_assert_int_eq(
        ax_backward_ex(&r.c, NULL, r.q, r.k, r.v, r.dout, NULL, &out), AX_OK);
    for (size_t row = 0; row < nl; row++) {
        size_t i = row % nq, h = row / nq;
        double sum = 0, lsum = 0;
        long lim = (long)i + (long)nk - (long)nq;

        for (size_t j = 0; j < nk; j++) {
            size_t e = row * nk + j;
            double sc = 0, dpv = 0;

            for (size_t cc = 0; cc < d; cc++) {
                sc += bfd(r.q[row * d + cc]) * bfd(r.k[(h * nk + j) * d + cc]);
                dpv += bfd(r.dout[row * d + cc])
                       * bfd(r.v[(h * nk + j) * d + cc]);
            }
            sc *= (double)r.c.scale; /* exact in double here */
            ck_assert_msg(dp[e] == dpv, "dP[%zu] = %a, %a expected", e, dp[e],
                          dpv);
            if ((long)j > lim) {
                ck_assert(s[e] == -INFINITY && p[e] == 0 && ds[e] == 0);
                continue;
            }
            ck_assert_msg(s[e] == sc, "S[%zu] = %a, %a expected", e, s[e], sc);
            sum += p[e];
            lsum += exp(s[e] - m[row]);
        }
        if (lim < 0) {
            ck_assert(m[row] == -INFINITY && l[row] == 0
                      && lse[row] == -INFINITY);
        } else {
            ck_assert_msg(fabs(sum - 1) < 1e-15, "row %zu: P sums to %a", row,
                          sum);
            ck_assert(fabs(lsum - l[row]) < 1e-15 * l[row]);
        }
    }
    rcase_free(&r);
    free(s);
    free(p);
    free(dp);
    free(ds);
    free(m);
    free(l);
    free(lse);
    mpfr_free_cache();
}
END_TEST

START_TEST(test_errors)
{
    uint16_t q[2] = {bf(1), bf(2)}, k[2] = {bf(1), bf(-1)};
    uint16_t v[2] = {bf(0.5), bf(1)}, dout[2] = {bf(1), bf(1)};
    fa_config c = make_cfg(1, 1, 1, 1, 2, 1.0f);
    ax_options opt = {PREC, AX_TILED};
    double o[2], lse, dq[2];
    mpfr_exp_t emin = mpfr_get_emin();

    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_OK);
    ck_assert_int_eq(ax_forward(NULL, &opt, q, k, v, o, &lse), AX_ECONFIG);
    ck_assert_int_eq(ax_forward_ex(&c, &opt, q, k, v, NULL), AX_ECONFIG);
    ck_assert_int_eq(ax_forward(&c, &opt, NULL, k, v, o, &lse), AX_ECONFIG);
    /* NaN and Inf inputs */
    q[1] = 0x7FC0;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_EINPUT);
    q[1] = 0xFF80;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_EINPUT);
    q[1] = bf(2);
    dout[0] = 0x7F80;
    ck_assert_int_eq(
        ax_backward(&c, &opt, q, k, v, dout, NULL, NULL, dq, NULL, NULL),
        AX_EINPUT);
    dout[0] = bf(1);
    {
        double bad = NAN;
        ck_assert_int_eq(
            ax_backward(&c, &opt, q, k, v, dout, &bad, NULL, dq, NULL, NULL),
            AX_EINPUT);
    }
    /* the configuration */
    opt.prec = 10;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    opt.prec = PREC;
    c.shape.d = 0;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.shape.d = 2;
    c.scale = INFINITY;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.scale = 1.0f;
    c.fix.kind = FA_FIX_BETA;
    c.fix.beta = 1.0;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.fix.beta = 2.0;
    c.fix.tol = -1;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.fix.tol = 1e-3;
    c.fix.zero_max = FA_ZERO_MAX_SHIFT;
    c.fix.eps_zero = 0;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.fix.eps_zero = 0x1p-5;
    c.fix.kind = FA_FIX_EPS;
    c.fix.eps = 0;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.fix.eps = 0x1p-5;
    c.fix.kind = (fa_fix_kind)99;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.fix.kind = FA_FIX_NONE;
    c.shape.batch = SIZE_MAX / 2;
    c.shape.heads = 4;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ECONFIG);
    c.shape.batch = c.shape.heads = 1;
    /* too small an exponent range */
    mpfr_set_emin(-1000);
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_ERANGE);
    mpfr_set_emin(emin);
    /* empty shapes are fine */
    c.shape.nq = 0;
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_OK);
    c.shape.nq = 1;
    c.shape.nk = 0; /* no key at all: a fully masked row */
    ck_assert_int_eq(ax_forward(&c, &opt, q, k, v, o, &lse), AX_OK);
    ck_assert(o[0] == 0 && o[1] == 0 && lse == -INFINITY);
    for (int code = -5; code <= 0; code++)
        ck_assert_ptr_nonnull(ax_strerror(code));
    ck_assert_str_eq(ax_strerror(AX_ENOMEM), "out of memory");
    ck_assert_str_eq(ax_strerror(7), "unknown error");
    mpfr_free_cache();
}
END_TEST

/* The caller's MPFR flags and range survive a call; the block width
   follows the documented defaults. */
START_TEST(test_mpfr_state_and_tiles)
{
    uint16_t q[1] = {bf(1)}, k[2] = {bf(1), bf(3)}, v[2] = {bf(1), bf(2)};
    fa_config c = make_cfg(1, 1, 1, 2, 1, 1.0f);
    double o, lse;
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();

    mpfr_clear_flags();
    mpfr_set_erangeflag();
    ck_assert_int_eq(ax_forward(&c, NULL, q, k, v, &o, &lse), AX_OK);
    ck_assert_uint_eq(mpfr_flags_save(), MPFR_FLAGS_ERANGE);
    ck_assert(mpfr_get_emin() == emin && mpfr_get_emax() == emax);
    mpfr_clear_flags();

    c.shape.nk = 1000;
    c.shape.d = 64;
    ck_assert_uint_eq(ax_block_cols(&c), 1000); /* fp32: untiled */
    c.kernel = fa_kernel_of_policy(FA_POLICY_FA2);
    ck_assert_uint_eq(ax_block_cols(&c), 128);
    c.shape.d = 128;
    ck_assert_uint_eq(ax_block_cols(&c), 64);
    c.bc = 32;
    ck_assert_uint_eq(ax_block_cols(&c), 32);
    c.ablations = FA_ABL_UNTILED;
    ck_assert_uint_eq(ax_block_cols(&c), 1000);
    c.ablations = 0;
    c.bc = 5000;
    ck_assert_uint_eq(ax_block_cols(&c), 1000);
    /* the tiles come from the description: cudnn's forward tile is 128
       keys at d = 128 (fa2's 64 before) */
    c.bc = 0;
    c.kernel = fa_kernel_by_name("cudnn");
    ck_assert_uint_eq(ax_block_cols(&c), 128);
    c.shape.d = 64;
    ck_assert_uint_eq(ax_block_cols(&c), 128);
    c.kernel = fa_kernel_by_name("efficient");
    ck_assert_uint_eq(ax_block_cols(&c), 64);
    mpfr_free_cache();
}
END_TEST

/*----------------------------------------------------------------------------
 * The ulp helper, by hand.
 *--------------------------------------------------------------------------*/
START_TEST(test_error_ulps)
{
    const sf_format *f32 = &sf_format_f32, *b16 = &sf_format_bf16;
    mpfr_t x;

    /* the ulp at binade edges and below the normal range */
    ck_assert_int_eq(ax_ulp_exp(f32, 1.0), -23);
    ck_assert_int_eq(ax_ulp_exp(f32, 1.0 - 0x1p-30), -24);
    ck_assert_int_eq(ax_ulp_exp(f32, -2.0), -22);
    ck_assert_int_eq(ax_ulp_exp(f32, 0x1p-126), -149);
    ck_assert_int_eq(ax_ulp_exp(f32, 0x1p-127), -149);
    ck_assert_int_eq(ax_ulp_exp(f32, 0x1p-149), -149);
    ck_assert_int_eq(ax_ulp_exp(f32, 0x1p-200), -149);
    ck_assert_int_eq(ax_ulp_exp(f32, 0.0), -149);
    ck_assert_int_eq(ax_ulp_exp(f32, 0x1p128), 104);
    ck_assert_int_eq(ax_ulp_exp(f32, INFINITY), 104);
    ck_assert_int_eq(ax_ulp_exp(b16, 1.0), -7);
    ck_assert_int_eq(ax_ulp_exp(b16, 0x1p-127), -133);
    ck_assert_int_eq(ax_ulp_exp(b16, 0.75), -8);

    /* FP32 1.0 against 1 - 2^-25: the ulp is 2^-24 below 1, error +1/2 */
    ck_assert_double_eq(ax_error_ulps(f32, 0x3F800000u, 1.0 - 0x1p-25), 0.5);
    /* FP32 0x3F7FFFFF (1 - 2^-24) against 1: ulp 2^-23, error -1/2 */
    ck_assert_double_eq(ax_error_ulps(f32, 0x3F7FFFFFu, 1.0), -0.5);
    /* BF16 -4.71875 (0xC097) against -4.703990459442138671875 (T1):
       -0.4723052978515625 ulp of 2^-5 */
    ck_assert_double_eq(ax_error_ulps(b16, 0xC097u, -4.703990459442138671875),
                        -0.4723052978515625);
    /* subnormals: FP32 0 against 2^-140 is -2^9 ulps of 2^-149; the
       smallest subnormal against 0 is +1 */
    ck_assert_double_eq(ax_error_ulps(f32, 0, 0x1p-140), -512.0);
    ck_assert_double_eq(ax_error_ulps(f32, 1, 0.0), 1.0);
    ck_assert_double_eq(ax_error_ulps(f32, 0x80000001u, 0x1p-150), -1.5);
    ck_assert_double_eq(ax_error_ulps(b16, 0x0001u, 0x1p-134), 0.5);
    /* exact */
    ck_assert_double_eq(ax_error_ulps(f32, 0x40490FDBu, 0x1.921fb6p+1), 0.0);
    /* specials */
    ck_assert(isnan(ax_error_ulps(f32, 0x7FC00000u, 1.0)));
    ck_assert(isnan(ax_error_ulps(f32, 0x3F800000u, NAN)));
    ck_assert(ax_error_ulps(f32, 0x7F800000u, 1.0) == INFINITY);
    ck_assert(ax_error_ulps(f32, 0xFF800000u, -INFINITY) == 0.0);
    ck_assert(ax_error_ulps(f32, 0x3F800000u, -INFINITY) == INFINITY);

    /* against an MPFR value: 1 - 2^-200 is not a double; the ulp is taken
       at it (2^-24), so FP32 1.0 is 2^-176 ulps above it ... */
    mpfr_init2(x, 300);
    mpfr_set_ui(x, 1, MPFR_RNDN);
    mpfr_sub_d(x, x, 0x1p-200, MPFR_RNDN);
    ck_assert_double_eq(ax_error_ulps_mp(f32, 0x3F800000u, x), 0x1p-176);
    /* ... while its double rounding is 1.0 and gives 0 */
    ck_assert_double_eq(
        ax_error_ulps(f32, 0x3F800000u, mpfr_get_d(x, MPFR_RNDN)), 0.0);
    /* the MPFR difference is rounded once: 1 + 2^-60 + 2^-120 against
       FP32 1.0 */
    mpfr_set_ui(x, 1, MPFR_RNDN);
    mpfr_add_d(x, x, 0x1p-60, MPFR_RNDN);
    mpfr_add_d(x, x, 0x1p-120, MPFR_RNDN);
    ck_assert_double_eq(ax_error_ulps_mp(f32, 0x3F800000u, x),
                        -(0x1p-37 + 0x1p-97));
    mpfr_set_d(x, 0x1p-140, MPFR_RNDN);
    ck_assert_double_eq(ax_error_ulps_mp(f32, 0, x), -512.0);
    mpfr_set_zero(x, -1);
    ck_assert_double_eq(ax_error_ulps_mp(b16, 0x8001u, x), -1.0);
    mpfr_set_inf(x, -1);
    ck_assert(ax_error_ulps_mp(f32, 0xFF800000u, x) == 0.0);
    mpfr_set_nan(x);
    ck_assert(isnan(ax_error_ulps_mp(f32, 0, x)));
    mpfr_clear(x);
    mpfr_free_cache();
}
END_TEST

static Suite *
attn_exact_suite(void)
{
    Suite *s = suite_create("attn_exact");
    TCase *tc;

    tc = tst_add_tcase(s, "closed forms", 30);
    tcase_add_test(tc, test_equal_scores);
    tcase_add_test(tc, test_two_scores);
    tcase_add_test(tc, test_f16_inputs);
    tcase_add_test(tc, test_default_scale);
    tc = tst_add_tcase(s, "fix", 60);
    tcase_add_test(tc, test_fix_exact);
    tcase_add_test(tc, test_fix_range);
    tc = tst_add_tcase(s, "random", 120);
    tcase_add_test(tc, test_tiled_vs_direct);
    tcase_add_test(tc, test_against_double);
    tcase_add_test(tc, test_causal_prefix);
    tcase_add_test(tc, test_mask_meaning);
    tcase_add_test(tc, test_shift_invariance);
    tc = tst_add_tcase(s, "backward", 60);
    tcase_add_test(tc, test_eq1_identity);
    tcase_add_test(tc, test_intermediates);
    tcase_add_test(tc, test_precision_bounds);
    tc = tst_add_tcase(s, "api", 30);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_mpfr_state_and_tiles);
    tcase_add_test(tc, test_error_ulps);
    return s;
}

int
main(void)
{
    return tst_run_suite(attn_exact_suite());
}
