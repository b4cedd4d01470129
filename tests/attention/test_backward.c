/* test_backward.c -- the reference attention backward: the fp32 policy
   against a naive double-precision backward within derived FP32 bounds,
   tiles that change no bit, paper-eq4's backward (fp32's from its O),
   fa2 and repo within derived BF16 bounds from rounded exact O and LSE,
   the delta ablations, dQ accumulation buffers, captures and the traced
   events of a dQ element */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "tests/attention/fa_test.h"
#include "tests/support/suite.h"

typedef struct
{
    fa_config c;
    uint16_t *q, *k, *v, *dout;
    uint32_t *o, *lse, *delta, *dq, *dk, *dv;
} bw;

static void
bw_init(bw *b, const fa_config *c, tst_rng *rng, double qk)
{
    b->c = *c;
    b->q = ft_alloc(ft_nq_d(c), 2);
    b->k = ft_alloc(ft_nk_d(c), 2);
    b->v = ft_alloc(ft_nk_d(c), 2);
    b->dout = ft_alloc(ft_nq_d(c), 2);
    b->o = ft_alloc(ft_nq_d(c), 4);
    b->lse = ft_alloc(ft_rows(c), 4);
    b->delta = ft_alloc(ft_rows(c), 4);
    b->dq = ft_alloc(ft_nq_d(c), 4);
    b->dk = ft_alloc(ft_nk_d(c), 4);
    b->dv = ft_alloc(ft_nk_d(c), 4);
    ft_fill_uniform(rng, b->q, ft_nq_d(c), -qk, qk);
    ft_fill_uniform(rng, b->k, ft_nk_d(c), -qk, qk);
    ft_fill_normal(rng, b->v, ft_nk_d(c), 0.0, 1.0);
    ft_fill_normal(rng, b->dout, ft_nq_d(c), 0.0, 1.0);
}

static void
bw_free(bw *b)
{
    FT_FREE(b->q, b->k, b->v, b->dout, b->o, b->lse, b->delta, b->dq, b->dk,
            b->dv);
}

static void
bw_run(bw *b, fa_capture *cap)
{
    ft_forward(&b->c, b->q, b->k, b->v, b->o, b->lse, NULL);
    ft_backward(&b->c, b->q, b->k, b->v, b->o, b->lse, b->dout, b->delta,
                b->dq, b->dk, b->dv, cap);
}

/* fp32: delta, dQ, dK, dV within the bounds of fa_test.c, from the exact
   O and LSE rounded to FP32 (the forward is checked by test_forward). */
static void
check_fp32_bwd(bw *b, const char *what)
{
    fa_config *c = &b->c;
    double *rd = ft_alloc(ft_rows(c), 8), *rq = ft_alloc(ft_nq_d(c), 8);
    double *rk = ft_alloc(ft_nk_d(c), 8), *rv = ft_alloc(ft_nk_d(c), 8);
    double *bd = ft_alloc(ft_rows(c), 8), *bq = ft_alloc(ft_nq_d(c), 8);
    double *bk = ft_alloc(ft_nk_d(c), 8), *bv = ft_alloc(ft_nk_d(c), 8);
    size_t bad;

    ft_fp32_backward_inputs(c, b->q, b->k, b->v, b->o, b->lse);
    ft_backward(c, b->q, b->k, b->v, b->o, b->lse, b->dout, b->delta, b->dq,
                b->dk, b->dv, NULL);
    ft_ref_backward(c, b->q, b->k, b->v, b->dout, rd, rq, rk, rv, NULL, NULL);
    ft_fp32_backward_bounds(c, b->q, b->k, b->v, b->dout, bd, bq, bk, bv);
    bad = ft_check_close("delta", b->delta, rd, bd, ft_rows(c));
    bad += ft_check_close("dq", b->dq, rq, bq, ft_nq_d(c));
    bad += ft_check_close("dk", b->dk, rk, bk, ft_nk_d(c));
    bad += ft_check_close("dv", b->dv, rv, bv, ft_nk_d(c));
    ck_assert_msg(bad == 0, "%s: %zu outside the FP32 bounds", what, bad);
    FT_FREE(rd, rq, rk, rv, bd, bq, bk, bv);
}

START_TEST(test_fp32_vs_double)
{
    static const struct
    {
        size_t b, h, nq, nk, d, brb;
        bool causal;
    } cases[] = {
        {1, 2, 24, 40, 32, 0, true},  {2, 1, 33, 17, 16, 5, false},
        {1, 1, 40, 24, 64, 16, true}, {1, 1, 20, 20, 40, 0, true},
        {1, 1, 3, 70, 24, 1, true},
    };
    tst_rng rng;

    tst_rng_init(&rng, 401);
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        fa_config c = ft_cfg(FA_POLICY_FP32, cases[t].b, cases[t].h, cases[t].nq,
                          cases[t].nk, cases[t].d);
        bw b;
        char what[32];
        c.causal = cases[t].causal;
        c.br_bwd = cases[t].brb;
        bw_init(&b, &c, &rng, 2.0);
        snprintf(what, sizeof what, "fp32 backward case %zu", t);
        check_fp32_bwd(&b, what);
        bw_free(&b);
    }
}
END_TEST

/* With FMA chains through the accumulators, the backward tiles of fp32
   change no bit (the same operations in the same order); paper-eq4's
   backward is fp32's, applied to paper-eq4's O. */
START_TEST(test_fp32_tiles_and_eq4)
{
    tst_rng rng;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, 37, 29, 24);
    bw b;
    size_t n = ft_nq_d(&c), m = ft_nk_d(&c);
    uint32_t *q2 = ft_alloc(n, 4), *k2 = ft_alloc(m, 4), *v2 = ft_alloc(m, 4);
    uint32_t *d2 = ft_alloc(37, 4);

    tst_rng_init(&rng, 402);
    c.causal = true;
    bw_init(&b, &c, &rng, 2.0);
    b.c.br_bwd = 37;
    bw_run(&b, NULL);
    memcpy(q2, b.dq, n * 4);
    memcpy(k2, b.dk, m * 4);
    memcpy(v2, b.dv, m * 4);
    memcpy(d2, b.delta, 37 * 4);
    for (size_t brb = 1; brb <= 16; brb += 5) {
        b.c.br_bwd = brb;
        ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta, b.dq,
                    b.dk, b.dv, NULL);
        ck_assert_uint_eq(ft_count_diff(b.dq, q2, n), 0);
        ck_assert_uint_eq(ft_count_diff(b.dk, k2, m), 0);
        ck_assert_uint_eq(ft_count_diff(b.dv, v2, m), 0);
    }
    /* paper-eq4's backward from the same O and LSE is the same */
    b.c.kernel = fa_kernel_of_policy(FA_POLICY_PAPER_EQ4);
    ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta, b.dq, b.dk,
                b.dv, NULL);
    ck_assert_uint_eq(ft_count_diff(b.dq, q2, n), 0);
    ck_assert_uint_eq(ft_count_diff(b.dk, k2, m), 0);
    ck_assert_uint_eq(ft_count_diff(b.delta, d2, 37), 0);
    /* ... and from its own (BF16) O, delta differs */
    ft_forward(&b.c, b.q, b.k, b.v, b.o, b.lse, NULL);
    ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta, b.dq, b.dk,
                b.dv, NULL);
    ck_assert_uint_gt(ft_count_diff(b.delta, d2, 37), 0);
    free(q2);
    free(k2);
    free(v2);
    free(d2);
    bw_free(&b);
}
END_TEST

/*----------------------------------------------------------------------------
 * fa2 and repo from the exact O and LSE rounded to their formats (BF16 O;
 * LSE FP32 for fa2, BF16 for the repo), so that only the backward's own
 * roundings count.  b = 2^-8 (the BF16 unit roundoff), u = 2^-24; per row i
 *and visible key j (S* = scale q.k_j, P* = exp(S* - LSE*), dP* = dO.v_j):
 *
 * fa2: P = exp2(RN(RN(s sl2) - RN(lse log2e))): exponent error at most
 *   Es_j + 4u(|S*| + |LSE*| + 1) (natural units) with Es_j = ceil(d/16)
 *   2^-20 scale sum |q k| (sm90 chains: < 2^-20 sum |terms| per block),
 *   so eP_j = P* (expm1(that) (1 + u) + u); dP: EdP = ceil(d/16) 2^-20
 *   sum |dO v|; delta (dot_do_o, BF16 O): Ed = sum |dO| b |O*| (1 + b)
 *   + gamma_d sum |dO O|; dS = RN(P RN(dP - delta)):
 *   EdS = eP T + P* (EdP + Ed)(1 + u) + 2u (P* + eP) T, T = |dP* - delta*|
 *   + EdP + Ed; the GEMMs take BF16 dS~ and P~ (b relative more) and
 *   chain sm90 blocks (K blocks: K 2^-20 sum |terms|); the results are
 *   scaled (u) and rounded to BF16 (b |.|).
 * repo: S = BF16(BF16(raw) scale): Es = 2.02 b |S*|; p = BF16(exp(BF16(S
 *   - lse))) with lse BF16: eP = P* (expm1(Es + b |LSE*| + 1.01 b |S* -
 *   LSE*|)(1 + b) + b); dp = BF16: EdP = b |dP*| (1.01) + gamma_d sum |dO
 *   v|; D = BF16(sum BF16(dO O)): Ed = sum |dO| b |O*| + 1.01 b sum |dO O|
 *   + gamma_d sum |dO O| + 1.01 b |delta*|; ds = BF16(BF16(p scale)
 *   BF16(dp - D)): EdS = scale (eP T + P* (EdP + Ed) + 3.03 b (P* + eP)
 *   T); each chunk product is an FP32 chain rounded to BF16 and added in
 *   BF16 to the accumulator (b per chunk and b per addition: the
 *   accumulator never exceeds sum |terms|).
 * Every bound is multiplied by 1.02 for the dropped second-order terms.
 *--------------------------------------------------------------------------*/
static void
bf16_bwd_bounds(const fa_config *c, const bw *b, const double *o,
                const double *lse, const double *s, const double *p,
                const double *dp, const double *delta, const double *ds,
                double *bd, double *bq, double *bk, double *bv)
{
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    double bb = 0x1p-8, u = FT_U, sc = ft_f32(fa_scale_bits(c));
    bool fa2 = c->kernel == fa_kernel_of_policy(FA_POLICY_FA2);
    /* the tiles (repo: the forward's buckets by default) */
    size_t brb = fa2         ? (d <= 64 ? 128 : 64)
                 : c->br_bwd ? c->br_bwd
                 : c->br     ? c->br
                             : 512;
    size_t bcb = fa2         ? (d <= 128 ? 128 : 64)
                 : c->bc_bwd ? c->bc_bwd
                 : c->bc     ? c->bc
                             : 512;
    double tr = (double)((nq + brb - 1) / brb),
           tb = (double)((nk + bcb - 1) / bcb);
    double kd = (double)((d + 15) / 16);
    double gd = (double)d * u * 1.01;
    double *ep = ft_alloc(nq * nk, 8), *eds = ft_alloc(nq * nk, 8);

    for (size_t i = 0; i < nq; i++) {
        double ed = 0, sdo = 0;
        for (size_t cc = 0; cc < d; cc++) {
            double g = fabs(ft_bf(b->dout[i * d + cc]));
            ed += g * bb * fabs(o[i * d + cc]) * (1 + bb);
            sdo += g * fabs(o[i * d + cc]);
        }
        ed += fa2 ? gd * sdo
                  : 1.01 * bb * sdo + gd * sdo + 1.01 * bb * fabs(delta[i]);
        bd[i] = 1.02 * ed;
        for (size_t j = 0; j < nk; j++) {
            size_t y = i * nk + j;
            double sq = 0, sv = 0, es, edp, t, ex;
            if (p[y] == 0) {
                ep[y] = eds[y] = 0;
                continue;
            }
            for (size_t cc = 0; cc < d; cc++) {
                sq += fabs(ft_bf(b->q[i * d + cc]) * ft_bf(b->k[j * d + cc]));
                sv +=
                    fabs(ft_bf(b->dout[i * d + cc]) * ft_bf(b->v[j * d + cc]));
            }
            if (fa2) {
                es = kd * 0x1p-20 * sc * sq;
                ex = es + 4 * u * (fabs(s[y]) + fabs(lse[i]) + 1);
                ep[y] = p[y] * (expm1(ex) * (1 + u) + u);
                edp = kd * 0x1p-20 * sv;
                t = fabs(dp[y] - delta[i]) + edp + ed;
                eds[y] = ep[y] * t + p[y] * (edp + ed) * (1 + u)
                         + 2 * u * (p[y] + ep[y]) * t;
            } else {
                es = 2.02 * bb * fabs(s[y]);
                ex = es + bb * fabs(lse[i]) + 1.01 * bb * fabs(s[y] - lse[i]);
                ep[y] = p[y] * (expm1(ex) * (1 + bb) + bb);
                edp = 1.01 * bb * fabs(dp[y]) + gd * sv;
                t = fabs(dp[y] - delta[i]) + edp + ed;
                eds[y] = sc
                         * (ep[y] * t + p[y] * (edp + ed)
                            + 3.03 * bb * (p[y] + ep[y]) * t);
            }
        }
    }
    /* dQ (row i): the terms dS_j K_jc */
    for (size_t i = 0; i < nq; i++)
        for (size_t cc = 0; cc < d; cc++) {
            double e1 = 0, e2 = 0, ref = 0;
            for (size_t j = 0; j < nk; j++) {
                size_t y = i * nk + j;
                double kk = fabs(ft_bf(b->k[j * d + cc]));
                /* fa2's ds excludes the scale */
                double dsv = fa2 ? fabs(ds[y]) / sc : fabs(ds[y]);
                double e = eds[y];
                e1 += e * kk;
                e2 += (dsv + e) * kk;
                ref += ds[y] * ft_bf(b->k[j * d + cc]);
            }
            if (fa2)
                bq[i * d + cc] =
                    1.02
                    * (sc * (e1 + (bb + ((double)nk / 16 + tb) * 0x1p-20) * e2)
                           * (1 + u)
                       + (bb + u) * fabs(ref));
            else
                bq[i * d + cc] =
                    1.02
                    * (e1
                       + (gd * (double)nk / (double)d + bb + 1.01 * tb * bb)
                             * e2
                       + bb * fabs(ref));
        }
    /* dK, dV (key j): the terms over the rows */
    for (size_t j = 0; j < nk; j++)
        for (size_t cc = 0; cc < d; cc++) {
            double e1 = 0, e2 = 0, f1 = 0, f2 = 0, rk = 0, rv = 0;
            for (size_t i = 0; i < nq; i++) {
                size_t y = i * nk + j;
                double qq = fabs(ft_bf(b->q[i * d + cc]));
                double gg = fabs(ft_bf(b->dout[i * d + cc]));
                double dsv = fa2 ? fabs(ds[y]) / sc : fabs(ds[y]);
                e1 += eds[y] * qq;
                e2 += (dsv + eds[y]) * qq;
                f1 += ep[y] * gg;
                f2 += (p[y] + ep[y]) * gg;
                rk += ds[y] * ft_bf(b->q[i * d + cc]);
                rv += p[y] * ft_bf(b->dout[i * d + cc]);
            }
            if (fa2) {
                double ch = bb + ((double)nq / 16 + tr) * 0x1p-20;
                bk[j * d + cc] =
                    1.02
                    * (sc * (e1 + ch * e2) * (1 + u) + (bb + u) * fabs(rk));
                bv[j * d + cc] = 1.02 * (f1 + ch * f2 + bb * fabs(rv));
            } else {
                double ch = gd * (double)nq / (double)d + bb + 1.01 * tr * bb;
                bk[j * d + cc] = 1.02 * (e1 + ch * e2 + bb * fabs(rk));
                bv[j * d + cc] = 1.02 * (f1 + ch * f2 + bb * fabs(rv));
            }
        }
    free(ep);
    free(eds);
}

/* fa2 (with 1, 2 and 3 dQ buffers over 3 KV blocks) and the repo (3 x 3
   buckets of 16) within the bounds above, causal and not; one buffer and
   as many as KV blocks give the same bits (each buffer then holds one
   block: 0 + x is exact). */
START_TEST(test_bf16_policies_vs_double)
{
    tst_rng rng;

    tst_rng_init(&rng, 403);
    for (int pol = 0; pol < 2; pol++)
        for (int causal = 0; causal < 2; causal++) {
            /* the repo's rows with no visible key are not the
               reference's (its mask fill makes them average V), so its
               case has none */
            size_t nq = pol ? 40 : 48, nk = pol ? 40 : 300, d = 32;
            fa_config c =
                ft_cfg(pol ? FA_POLICY_REPO : FA_POLICY_FA2, 1, 1, nq, nk, d);
            bw b;
            double *o = ft_alloc(nq * d, 8), *lse = ft_alloc(nq, 8);
            double *s = ft_alloc(nq * nk, 8), *p = ft_alloc(nq * nk, 8);
            double *dp = ft_alloc(nq * nk, 8), *dl = ft_alloc(nq, 8);
            double *ds = ft_alloc(nq * nk, 8), *rq = ft_alloc(nq * d, 8);
            double *rk = ft_alloc(nk * d, 8), *rv = ft_alloc(nk * d, 8);
            double *bd = ft_alloc(nq, 8), *bq = ft_alloc(nq * d, 8);
            double *bk = ft_alloc(nk * d, 8), *bv = ft_alloc(nk * d, 8);
            uint32_t *dq1 = ft_alloc(nq * d, 4);

            c.causal = causal != 0;
            if (pol)
                c.br = c.bc = 16; /* several repo chunks */
            bw_init(&b, &c, &rng, 1.5);
            ft_ref_forward(&c, b.q, b.k, b.v, o, lse, s, p);
            ft_ref_backward(&c, b.q, b.k, b.v, b.dout, dl, rq, rk, rv, dp, ds);
            for (size_t x = 0; x < nq * d; x++)
                b.o[x] = (uint32_t)ft_bf16(o[x]) << 16;
            for (size_t x = 0; x < nq; x++)
                b.lse[x] = pol             ? (uint32_t)ft_bf16(lse[x]) << 16
                           : isinf(lse[x]) ? 0x7F800000u
                                           : ft_f32_bits(lse[x]);
            bf16_bwd_bounds(&c, &b, o, lse, s, p, dp, dl, ds, bd, bq, bk, bv);
            for (size_t sp = 1; sp <= (pol ? 1u : 3u); sp++) {
                size_t bad;
                b.c.dq_splits = sp;
                ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta,
                            b.dq, b.dk, b.dv, NULL);
                bad = ft_check_close("delta", b.delta, dl, bd, nq);
                bad += ft_check_close("dq", b.dq, rq, bq, nq * d);
                bad += ft_check_close("dk", b.dk, rk, bk, nk * d);
                bad += ft_check_close("dv", b.dv, rv, bv, nk * d);
                ck_assert_msg(bad == 0, "%s causal %d splits %zu: %zu outside",
                              fa_policy_name((fa_policy)fa_policy_parse(c.kernel->name)), causal, sp, bad);
                /* BF16 outputs */
                for (size_t x = 0; x < nq * d; x++)
                    ck_assert_uint_eq(b.dq[x] & 0xFFFF, 0);
                for (size_t x = 0; x < nk * d; x++)
                    ck_assert_uint_eq((b.dk[x] | b.dv[x]) & 0xFFFF, 0);
                if (sp == 1)
                    memcpy(dq1, b.dq, nq * d * 4);
                if (sp == 3)
                    ck_assert_uint_eq(ft_count_diff(b.dq, dq1, nq * d), 0);
            }
            FT_FREE(o, lse, s, p, dp, dl, ds, rq, rk, rv, bd, bq, bk, bv, dq1);
            bw_free(&b);
        }
}
END_TEST

/* The delta ablations: with a BF16 O (paper-eq4, fa2), delta from O
   carries O's rounding (about b sum |dO O|); rowsum(dP o P) and the FP32
   recomputation of O do not, so their error against delta* is at FP32
   level: far below an eighth of the default's.  paper-eq4 gets the fp32
   forward's LSE (the paper's premise: only delta differs), so that its P
   is FP32-accurate; fa2's own LSE is (no BF16 step feeds it). */
START_TEST(test_delta_ablations)
{
    tst_rng rng;

    tst_rng_init(&rng, 404);
    for (int pol = 0; pol < 2; pol++) {
        size_t nq = 32, nk = 64, d = 64;
        fa_config c =
            ft_cfg(pol ? FA_POLICY_FA2 : FA_POLICY_PAPER_EQ4, 1, 1, nq, nk, d);
        bw b;
        double *rd = ft_alloc(nq, 8), e0 = 0;

        bw_init(&b, &c, &rng, 2.0);
        ft_ref_backward(&c, b.q, b.k, b.v, b.dout, rd, NULL, NULL, NULL, NULL,
                        NULL);
        if (!pol) {
            uint32_t *o32 = ft_alloc(nq * d, 4);
            b.c.kernel = fa_kernel_of_policy(FA_POLICY_FP32);
            ft_forward(&b.c, b.q, b.k, b.v, o32, b.lse, NULL);
            b.c.kernel = fa_kernel_of_policy(FA_POLICY_PAPER_EQ4);
            ft_forward(&b.c, b.q, b.k, b.v, b.o, o32, NULL);
            free(o32);
        } else {
            ft_forward(&b.c, b.q, b.k, b.v, b.o, b.lse, NULL);
        }
        ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta, b.dq,
                    b.dk, b.dv, NULL);
        for (size_t i = 0; i < nq; i++)
            e0 = fmax(e0, fabs(ft_f32(b.delta[i]) - rd[i]));
        ck_assert(e0 > 0);
        for (int a = 0; a < 2; a++) {
            double e1 = 0;
            b.c.ablations = a ? FA_ABL_DELTA_FP32_O : FA_ABL_DELTA_DPP;
            ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta, b.dq,
                        b.dk, b.dv, NULL);
            for (size_t i = 0; i < nq; i++)
                e1 = fmax(e1, fabs(ft_f32(b.delta[i]) - rd[i]));
            ck_assert_msg(e1 < e0 / 8, "%s %s: %g vs %g",
                          fa_policy_name((fa_policy)fa_policy_parse(c.kernel->name)),
                          fa_ablation_name(b.c.ablations), e1, e0);
        }
        b.c.ablations = 0;
        free(rd);
        bw_free(&b);
    }
}
END_TEST

/* Captures: dP against the exact dP, dS = 0 where masked. */
START_TEST(test_captures)
{
    tst_rng rng;
    size_t nq = 20, nk = 30, d = 16;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, nq, nk, d);
    bw b;
    fa_capture cap;
    uint32_t *dp = ft_alloc(nq * nk, 4), *ds = ft_alloc(nq * nk, 4);
    double *rdp = ft_alloc(nq * nk, 8);

    tst_rng_init(&rng, 406);
    c.causal = true;
    bw_init(&b, &c, &rng, 2.0);
    memset(&cap, 0, sizeof cap);
    cap.dp = dp;
    cap.ds = ds;
    bw_run(&b, &cap);
    ft_ref_backward(&c, b.q, b.k, b.v, b.dout, NULL, NULL, NULL, NULL, rdp,
                    NULL);
    for (size_t i = 0; i < nq; i++)
        for (size_t j = 0; j < nk; j++) {
            size_t y = i * nk + j;
            if (j > i + nk - nq) {
                ck_assert_uint_eq(ds[y], 0);
                ck_assert_uint_eq(dp[y], 0);
            } else {
                double a = 0;
                for (size_t cc = 0; cc < d; cc++)
                    a += fabs(ft_bf(b.dout[i * d + cc])
                              * ft_bf(b.v[j * d + cc]));
                ck_assert(fabs(ft_f32(dp[y]) - rdp[y])
                          <= (double)d * FT_U * 1.01 * a);
            }
        }
    free(dp);
    free(ds);
    free(rdp);
    bw_free(&b);
}
END_TEST

/* The traced dQ element: fp32's event count (delta: d FMA steps; S: n d
   FMA steps and n products; P: n subtractions; dP: n d FMA steps; dS: n
   subtractions and n products; dQ: n FMA steps of its column and the
   scale product), and for every policy the last event gives the output
   and tracing changes nothing. */
START_TEST(test_trace)
{
    tst_rng rng;
    size_t nq = 12, nk = 20, d = 8, row = 7, col = 3;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 2, nq, nk, d);
    bw b;
    fa_capture cap;
    ft_ev_log lg = {0, 1u << 14, NULL};
    sf_event_sink sink = {ft_log_event, &lg};
    uint32_t *dq2 = ft_alloc(ft_nq_d(&c), 4);

    tst_rng_init(&rng, 407);
    bw_init(&b, &c, &rng, 2.0);
    lg.ev = ft_alloc(lg.cap, sizeof(sf_event));
    for (int pol = 0; pol < 4; pol++) {
        size_t x = ((size_t)1 * nq + row) * d + col, n = nk;
        b.c.kernel = fa_kernel_of_policy((fa_policy)pol);
        b.c.bc = b.c.bc_bwd = pol == FA_POLICY_REPO ? 8 : 0;
        bw_run(&b, NULL);
        memcpy(dq2, b.dq, ft_nq_d(&c) * 4);
        memset(&cap, 0, sizeof cap);
        cap.trace = true;
        cap.events = &sink;
        cap.trace_h = 1;
        cap.trace_row = row;
        cap.trace_col = col;
        lg.n = 0;
        ft_backward(&b.c, b.q, b.k, b.v, b.o, b.lse, b.dout, b.delta, b.dq,
                    b.dk, b.dv, &cap);
        ck_assert_uint_eq(ft_count_diff(b.dq, dq2, ft_nq_d(&c)), 0);
        ck_assert_uint_le(lg.n, lg.cap);
        if (pol == FA_POLICY_FP32 || pol == FA_POLICY_PAPER_EQ4)
            ck_assert_uint_eq(lg.n, d + 2 * n * d + 5 * n + 1);
        ck_assert_uint_eq(lg.ev[lg.n - 1].result,
                          pol == FA_POLICY_FP32 || pol == FA_POLICY_PAPER_EQ4
                              ? b.dq[x]
                              : b.dq[x] >> 16);
    }
    free(lg.ev);
    free(dq2);
    bw_free(&b);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_backward");
    TCase *tc = tst_add_tcase(s, "backward", 120);

    tcase_add_test(tc, test_fp32_vs_double);
    tcase_add_test(tc, test_fp32_tiles_and_eq4);
    tcase_add_test(tc, test_bf16_policies_vs_double);
    tcase_add_test(tc, test_delta_ablations);
    tcase_add_test(tc, test_captures);
    tcase_add_test(tc, test_trace);
    return tst_run_suite(s);
}
