/* test_forward.c -- the reference attention forward: the fp32 policy
   against a naive double-precision attention within derived FP32 bounds
   (shapes, batches, heads, causal masks, Nq != Nk, head dimensions,
   tiles, KV order, fix variants), tiled against untiled, the fix's
   failure mode (T7) and the repo's detector (T8), captures, the traced
   rounding events, paper-eq4 and repo within BF16 bounds */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "tests/attention/fa_test.h"
#include "tests/support/suite.h"

/* Inputs of one configuration. */
typedef struct
{
    fa_config c;
    uint16_t *q, *k, *v;
    uint32_t *o, *lse;
    double *ro, *rlse, *bo, *blse;
} run;

static void
run_init(run *r, const fa_config *c, tst_rng *rng, double qk)
{
    r->c = *c;
    r->q = ft_alloc(ft_nq_d(c), sizeof(uint16_t));
    r->k = ft_alloc(ft_nk_d(c), sizeof(uint16_t));
    r->v = ft_alloc(ft_nk_d(c), sizeof(uint16_t));
    r->o = ft_alloc(ft_nq_d(c), sizeof(uint32_t));
    r->lse = ft_alloc(ft_rows(c), sizeof(uint32_t));
    r->ro = ft_alloc(ft_nq_d(c), sizeof(double));
    r->rlse = ft_alloc(ft_rows(c), sizeof(double));
    r->bo = ft_alloc(ft_nq_d(c), sizeof(double));
    r->blse = ft_alloc(ft_rows(c), sizeof(double));
    ft_fill_uniform(rng, r->q, ft_nq_d(c), -qk, qk);
    ft_fill_uniform(rng, r->k, ft_nk_d(c), -qk, qk);
    ft_fill_normal(rng, r->v, ft_nk_d(c), 0.0, 1.0);
}

static void
run_free(run *r)
{
    FT_FREE(r->q, r->k, r->v, r->o, r->lse, r->ro, r->rlse, r->bo, r->blse);
}

/* fp32 policy: O and LSE against the reference within the bounds. */
static void
check_fp32(run *r, const char *what)
{
    size_t bad;

    ft_forward(&r->c, r->q, r->k, r->v, r->o, r->lse, NULL);
    ft_ref_forward(&r->c, r->q, r->k, r->v, r->ro, r->rlse, NULL, NULL);
    ft_fp32_forward_bounds(&r->c, r->q, r->k, r->v, r->bo, r->blse);
    bad = ft_check_close(what, r->o, r->ro, r->bo, ft_nq_d(&r->c));
    bad += ft_check_close(what, r->lse, r->rlse, r->blse, ft_rows(&r->c));
    ck_assert_msg(bad == 0, "%s: %zu elements outside the FP32 bound", what,
                  bad);
}

/* Shapes: batches and heads, Nq != Nk both ways, d = 64, 128 and 40 (not a
   multiple of 16), causal and not, untiled and tiled (tiles that do not
   divide N), both KV orders. */
START_TEST(test_fp32_vs_double)
{
    static const struct
    {
        size_t b, h, nq, nk, d, br, bc;
        bool causal, reverse;
    } cases[] = {
        {2, 3, 17, 17, 64, 0, 0, false, false},
        {1, 2, 33, 65, 128, 0, 0, true, false},
        {1, 1, 70, 29, 40, 0, 0, true, false},
        {2, 1, 48, 80, 40, 16, 24, true, false},
        {1, 2, 64, 64, 64, 32, 16, false, true},
        {1, 1, 100, 37, 24, 7, 10, true, true},
        {1, 1, 9, 200, 16, 3, 33, true, false},
        {1, 1, 5, 3, 8, 1, 1, false, false},
        {1, 1, 1, 1, 1, 0, 0, true, false},
    };
    tst_rng rng;

    tst_rng_init(&rng, 101);
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        fa_config c = ft_cfg(FA_POLICY_FP32, cases[t].b, cases[t].h, cases[t].nq,
                          cases[t].nk, cases[t].d);
        run r;
        char what[64];
        c.br = cases[t].br;
        c.bc = cases[t].bc;
        c.causal = cases[t].causal;
        c.order = cases[t].reverse ? FA_ORDER_REVERSE : FA_ORDER_FORWARD;
        run_init(&r, &c, &rng, 2.0);
        snprintf(what, sizeof what, "fp32 case %zu", t);
        check_fp32(&r, what);
        run_free(&r);
    }
}
END_TEST

/* A non-default scale, larger scores, and the untiled ablation. */
START_TEST(test_fp32_scale_ablation)
{
    tst_rng rng;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, 40, 90, 32);
    run r;

    tst_rng_init(&rng, 102);
    c.scale = 0.3f;
    c.bc = 16;
    c.causal = true;
    run_init(&r, &c, &rng, 3.0);
    check_fp32(&r, "fp32 scale 0.3");
    r.c.ablations = FA_ABL_UNTILED;
    check_fp32(&r, "fp32 untiled");
    run_free(&r);
}
END_TEST

/* Tiled and untiled give the same bits where every operation that tiling
   changes is exact, and different bits where it is not. */
START_TEST(test_tiled_vs_untiled)
{
    tst_rng rng;
    size_t nq = 24, nk = 96, d = 16;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, nq, nk, d);
    run r;
    uint32_t *o2 = ft_alloc(nq * d, sizeof(uint32_t));
    uint32_t *l2 = ft_alloc(nq, sizeof(uint32_t));
    size_t diff;

    tst_rng_init(&rng, 103);
    c.scale = 1.0f;
    run_init(&r, &c, &rng, 1.0);
    /* Exact case: each row's scores are 2 (the max, present in the first
       block) or -200 (exp underflows to exactly 0).  P~ is 1 or 0, every
       rescale factor is exp(0) = 1, l is a small integer: the row sums,
       the products alpha l and alpha O~ and the chained P~V are exact or
       the same operations in both tilings. */
    memset(r.q, 0, nq * d * sizeof *r.q);
    memset(r.k, 0, nk * d * sizeof *r.k);
    for (size_t i = 0; i < nq; i++)
        r.q[i * d] = ft_bf16(1.0);
    for (size_t j = 0; j < nk; j++)
        r.k[j * d] =
            ft_bf16(j < 5 || tst_rand_below(&rng, 3) == 0 ? 2.0 : -200.0);
    r.c.bc = 16;
    ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, NULL);
    r.c.bc = 0;
    ft_forward(&r.c, r.q, r.k, r.v, o2, l2, NULL);
    ck_assert_uint_eq(ft_count_diff(r.o, o2, nq * d), 0);
    ck_assert_uint_eq(ft_count_diff(r.lse, l2, nq), 0);
    r.c.order = FA_ORDER_REVERSE; /* the max is in every block: still 1 */
    r.c.bc = 16;
    ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, NULL);
    r.c.order = FA_ORDER_FORWARD;

    /* Inexact case: random scores whose maxima lie in later blocks; the
       rescales and the split row sums round differently. */
    ft_fill_uniform(&rng, r.q, nq * d, -2, 2);
    ft_fill_uniform(&rng, r.k, nk * d, -2, 2);
    r.c.bc = 16;
    check_fp32(&r, "fp32 bc=16");
    memcpy(o2, r.o, nq * d * sizeof *o2);
    memcpy(l2, r.lse, nq * sizeof *l2);
    r.c.bc = 0;
    check_fp32(&r, "fp32 untiled");
    diff = ft_count_diff(r.o, o2, nq * d) + ft_count_diff(r.lse, l2, nq);
    ck_assert_msg(diff > 0, "tiling changed no bit on random scores");
    free(o2);
    free(l2);
    run_free(&r);
}
END_TEST

/* The top-left causal mask: fp32 against the double reference (which
   masks key j for query i when j > i) with Nq < Nk and Nq > Nk; and the
   block-skipping policies (fa2, efficient) with Nq = 64 < Nk = 192, whose
   queries see only keys 0 .. 63: O, LSE and dQ bit-equal to the square
   problem on the first 64 keys (Nq = Nk, where both alignments agree),
   dK and dV equal there and zero beyond. */
START_TEST(test_causal_top_left)
{
    static const size_t shapes[2][2] = {{24, 40}, {40, 24}};
    static const fa_policy pols[2] = {FA_POLICY_FA2, FA_POLICY_EFFICIENT};
    tst_rng rng;
    size_t d = 16;

    tst_rng_init(&rng, 118);
    for (size_t t = 0; t < 2; t++) {
        fa_config c =
            ft_cfg(FA_POLICY_FP32, 1, 2, shapes[t][0], shapes[t][1], d);
        run r;
        c.causal = true;
        c.causal_top_left = true;
        c.bc = 8;
        run_init(&r, &c, &rng, 2.0);
        check_fp32(&r, t == 0 ? "fp32 top-left nq<nk" : "fp32 top-left nq>nk");
        run_free(&r);
    }
    for (size_t pi = 0; pi < 2; pi++) {
        size_t nq = 64, nk = 192, dd = 64, nqd = nq * dd, nkd = nk * dd;
        fa_config tl = ft_cfg(pols[pi], 1, 1, nq, nk, dd);
        fa_config sq = ft_cfg(pols[pi], 1, 1, nq, nq, dd);
        uint16_t *q = ft_alloc(nqd, 2), *k = ft_alloc(nkd, 2),
                 *v = ft_alloc(nkd, 2), *dout = ft_alloc(nqd, 2);
        uint32_t *o[2], *lse[2], *dq[2], *dk[2], *dv[2];
        sf_env env = SF_ENV_IEEE;

        ft_fill_uniform(&rng, q, nqd, -2.0, 2.0);
        ft_fill_uniform(&rng, k, nkd, -2.0, 2.0);
        ft_fill_normal(&rng, v, nkd, 0.0, 1.0);
        ft_fill_normal(&rng, dout, nqd, 0.0, 1.0);
        tl.causal = sq.causal = true;
        tl.causal_top_left = true;
        tl.br = sq.br = tl.bc = sq.bc = 32;
        tl.br_bwd = sq.br_bwd = tl.bc_bwd = sq.bc_bwd = 32;
        for (int x = 0; x < 2; x++) {
            o[x] = ft_alloc(nqd, 4);
            lse[x] = ft_alloc(nq, 4);
            dq[x] = ft_alloc(nqd, 4);
            dk[x] = ft_alloc(nkd, 4);
            dv[x] = ft_alloc(nkd, 4);
            ck_assert_int_eq(fa_forward(x ? &sq : &tl, q, k, v, o[x], lse[x],
                                        NULL, &env),
                             0);
            ck_assert_int_eq(fa_backward(x ? &sq : &tl, q, k, v, o[x], lse[x],
                                         dout, NULL, dq[x], dk[x], dv[x],
                                         NULL, &env),
                             0);
        }
        ck_assert_msg(ft_count_diff(o[0], o[1], nqd) == 0
                          && ft_count_diff(lse[0], lse[1], nq) == 0
                          && ft_count_diff(dq[0], dq[1], nqd) == 0
                          && ft_count_diff(dk[0], dk[1], nqd) == 0
                          && ft_count_diff(dv[0], dv[1], nqd) == 0,
                      "%s top-left 64x192: O %zu, LSE %zu, dQ %zu, dK %zu, "
                      "dV %zu differ from the square problem (first O "
                      "0x%08X vs 0x%08X)",
                      fa_policy_name(pols[pi]),
                      ft_count_diff(o[0], o[1], nqd),
                      ft_count_diff(lse[0], lse[1], nq),
                      ft_count_diff(dq[0], dq[1], nqd),
                      ft_count_diff(dk[0], dk[1], nqd),
                      ft_count_diff(dv[0], dv[1], nqd), o[0][0], o[1][0]);
        for (size_t x = nqd; x < nkd; x++)
            ck_assert_msg(dk[0][x] == 0 && dv[0][x] == 0,
                          "%s top-left: dK[%zu] 0x%08X, dV 0x%08X (key "
                          "seen by no query)",
                          fa_policy_name(pols[pi]), x / dd, dk[0][x],
                          dv[0][x]);
        for (int x = 0; x < 2; x++) {
            free(o[x]);
            free(lse[x]);
            free(dq[x]);
            free(dk[x]);
            free(dv[x]);
        }
        free(q);
        free(k);
        free(v);
        free(dout);
    }
}
END_TEST

/* Causal masks: rows with no visible key (Nq > Nk), KV tiles masked for a
   whole query block, the captures of masked entries. */
START_TEST(test_causal_masks)
{
    tst_rng rng;
    size_t nq = 40, nk = 24, d = 16;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 2, nq, nk, d);
    run r;
    fa_capture cap;
    uint32_t *s = ft_alloc(2 * nq * nk, sizeof(uint32_t));
    uint32_t *p = ft_alloc(2 * nq * nk, sizeof(uint32_t));

    tst_rng_init(&rng, 104);
    c.causal = true;
    c.bc = 8;
    run_init(&r, &c, &rng, 2.0);
    check_fp32(&r, "fp32 causal nq>nk");
    memset(&cap, 0, sizeof cap);
    cap.s = s;
    cap.p = p;
    for (int pol = 0; pol < 4; pol++) {
        r.c.kernel = fa_kernel_of_policy((fa_policy)pol);
        r.c.bc = pol == FA_POLICY_FA2 ? 16 : 8;
        ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, &cap);
        for (size_t hd = 0; hd < 2; hd++)
            for (size_t i = 0; i < nq; i++) {
                size_t x = hd * nq + i;
                /* key j masked when j > i + (nk - nq) = i - 16 */
                long long vis = (long long)i - 16 + 1;
                for (size_t j = 0; j < nk; j++) {
                    bool masked = (long long)j >= vis;
                    if (masked) {
                        uint32_t mv =
                            pol == FA_POLICY_REPO ? 0xFF7F0000u : 0xFF800000u;
                        ck_assert_msg(s[x * nk + j] == mv,
                                      "%s s[%zu][%zu] = %08x",
                                      fa_policy_name((fa_policy)pol), i, j,
                                      (unsigned)s[x * nk + j]);
                        if (pol != FA_POLICY_REPO || vis > 0)
                            ck_assert_uint_eq(p[x * nk + j], 0);
                    }
                }
                if (vis <= 0 && pol != FA_POLICY_REPO) {
                    /* no key: O = 0; LSE = -Inf (log of an empty sum),
                       fa2's kernel writes +Inf */
                    for (size_t cc = 0; cc < d; cc++)
                        ck_assert_uint_eq(r.o[x * d + cc], 0);
                    ck_assert_uint_eq(r.lse[x], pol == FA_POLICY_FA2
                                                    ? 0x7F800000u
                                                    : 0xFF800000u);
                }
                if (vis <= 0 && pol == FA_POLICY_REPO) {
                    /* the repo's fill -finfo.max makes every P~ 1: O is
                       the mean of V, as the released code computes it */
                    ck_assert(!isnan(ft_f32(r.o[x * d])));
                }
            }
    }
    free(s);
    free(p);
    run_free(&r);
}
END_TEST

/* The fix variants leave O and LSE unchanged within rounding (fp32): each
   is within the FP32 bound of the same reference. */
START_TEST(test_fix_variants_fp32)
{
    tst_rng rng;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 2, 32, 64, 16);
    run r;

    tst_rng_init(&rng, 105);
    c.scale = 1.0f;
    c.bc = 16;
    run_init(&r, &c, &rng, 1.0);
    /* repeated maxima: copy some keys, so rows have exact ties, of both
       signs of the max */
    for (size_t hd = 0; hd < 2; hd++)
        for (size_t j = 1; j < 64; j += 5)
            memcpy(r.k + (hd * 64 + j) * 16, r.k + (hd * 64 + j - 1) * 16,
                   16 * sizeof *r.k);
    for (int f = 0; f < 5; f++)
        for (int z = 0; z < 2; z++) {
            char what[64];
            r.c.fix = fa_fix_default((fa_fix_kind)f);
            r.c.fix.zero_max = z ? FA_ZERO_MAX_SHIFT : FA_ZERO_MAX_KEEP;
            snprintf(what, sizeof what, "fix %s zero_max %d",
                     fa_fix_name((fa_fix_kind)f), z);
            check_fp32(&r, what);
            r.c.causal = !r.c.causal;
            check_fp32(&r, what);
        }
    run_free(&r);
}
END_TEST

/* The fix at work: a repeated positive max gives P~ < 1 (beta: max
   exp(-(beta-1) r)), a repeated negative one is shifted to 0, and r = 0
   repeated follows zero_max. */
START_TEST(test_fix_effect)
{
    size_t nk = 8, d = 16;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, 1, nk, d);
    uint16_t q[16] = {0}, k[8 * 16] = {0}, v[8 * 16] = {0};
    uint32_t o[16], lse[1], p[8], m[1];
    fa_capture cap;
    static const double maxes[] = {1.5, -1.5, 0.0};

    memset(&cap, 0, sizeof cap);
    cap.p = p;
    cap.m = m;
    c.scale = 1.0f;
    q[0] = ft_bf16(1.0);
    for (size_t j = 0; j < nk; j++)
        v[j * d] = ft_bf16(0.5 + (double)j);
    for (int t = 0; t < 3; t++) {
        double r = maxes[t];
        k[0] = k[3 * d] = ft_bf16(r); /* repeated max at keys 0 and 3 */
        for (size_t j = 1; j < nk; j++)
            if (j != 3)
                k[j * d] = ft_bf16(r - 1.0 - 0.25 * (double)j);
        for (int f = 0; f < 5; f++)
            for (int z = 0; z < 2; z++) {
                double mexp;
                c.fix = fa_fix_default((fa_fix_kind)f);
                c.fix.zero_max = z ? FA_ZERO_MAX_SHIFT : FA_ZERO_MAX_KEEP;
                ft_forward(&c, q, k, v, o, lse, &cap);
                if (f == FA_FIX_NONE)
                    mexp = r;
                else if (f == FA_FIX_EPS)
                    mexp = r + 0x1p-5;
                else if (r > 0)
                    mexp = c.fix.beta * r;
                else if (r < 0)
                    mexp = 0;
                else
                    mexp = z ? 0x1p-5 : 0;
                ck_assert_msg(ft_f32(m[0]) == mexp,
                              "max %g fix %s zero_max %d: m %g expected %g", r,
                              fa_fix_name((fa_fix_kind)f), z, ft_f32(m[0]),
                              mexp);
                /* P~ = 1 exactly at the max unless shifted */
                ck_assert((p[0] == 0x3F800000u) == (mexp == r));
                ck_assert(p[0] == p[3]);
            }
    }
    /* a single max: beta and beta-v2 do nothing, always does */
    k[3 * d] = ft_bf16(-3.0);
    k[0] = ft_bf16(1.5);
    for (int f = FA_FIX_BETA; f <= FA_FIX_ALWAYS; f++) {
        c.fix = fa_fix_default((fa_fix_kind)f);
        ft_forward(&c, q, k, v, o, lse, &cap);
        ck_assert(ft_f32(m[0]) == (f == FA_FIX_ALWAYS ? 3.0 : 1.5));
    }
}
END_TEST

/* T7: the beta rule applied to a single large max (r (beta - 1) > 104,
   where exp underflows to 0 in FP32) makes l = 0 and O = 0/0 = NaN; the
   conditional rule does not fire.  FA2's l == 0 rule gives O = 0 and
   LSE = +Inf instead. */
START_TEST(test_t7_underflow)
{
    size_t nk = 8, d = 16;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, 1, nk, d);
    uint16_t q[16] = {0}, k[8 * 16] = {0}, v[8 * 16] = {0};
    uint32_t o[16], lse[1], l[1];
    fa_capture cap;

    memset(&cap, 0, sizeof cap);
    cap.l = l;
    c.scale = 1.0f;
    q[0] = ft_bf16(11.0);
    k[0] = ft_bf16(10.0); /* S = 110 */
    for (size_t j = 1; j < nk; j++)
        k[j * d] = ft_bf16(1.0); /* S = 11 */
    for (size_t x = 0; x < nk * d; x++)
        v[x] = ft_bf16(x % 3 == 0 ? -1.25 : 0.75);
    for (int pol = 0; pol < 4; pol++) {
        if (pol == FA_POLICY_REPO)
            continue; /* below */
        c.kernel = fa_kernel_of_policy((fa_policy)pol);
        c.bc = 0;
        c.fix = fa_fix_default(FA_FIX_ALWAYS);
        ft_forward(&c, q, k, v, o, lse, &cap);
        ck_assert_uint_eq(l[0], 0);
        for (size_t cc = 0; cc < d; cc++)
            ck_assert_msg(pol == FA_POLICY_FA2 ? o[cc] == 0
                                               : isnan(ft_f32(o[cc])),
                          "%s O[%zu] = %08x", fa_policy_name((fa_policy)pol),
                          cc, (unsigned)o[cc]);
        ck_assert_uint_eq(lse[0],
                          pol == FA_POLICY_FA2 ? 0x7F800000u : 0xFF800000u);
        c.fix = fa_fix_default(FA_FIX_BETA);
        ft_forward(&c, q, k, v, o, lse, &cap);
        for (size_t cc = 0; cc < d; cc++)
            ck_assert(!isnan(ft_f32(o[cc])));
        /* P~ = 1 at key 0 and e^-99 elsewhere: O is V[0] */
        ck_assert(fabs(ft_f32(o[0]) - ft_bf(v[0])) < 1e-30 + 0x1p-8);
    }
    /* below the threshold exp(-100) is subnormal, l > 0, no NaN */
    c.kernel = fa_kernel_of_policy(FA_POLICY_FP32);
    c.fix = fa_fix_default(FA_FIX_ALWAYS);
    q[0] = ft_bf16(10.0);
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(l[0]) > 0 && ft_f32(l[0]) < 0x1p-126);
    for (size_t cc = 0; cc < d; cc++)
        ck_assert(!isnan(ft_f32(o[cc])));
}
END_TEST

/* T8: the repo's detector on its BF16 scores: count(S >= bf16(max -
   1e-3)) > 1 in a 512-key block; the BF16 threshold equals the max for
   |max| >= 1/2 (an exact test), the tolerance counts for small maxima;
   a fully masked tile (every entry -finfo.max) is a repeated negative
   max and lifts m to 0. */
START_TEST(test_t8_repo_detector)
{
    size_t nk = 16, d = 16;
    fa_config c = ft_cfg(FA_POLICY_REPO, 1, 1, 1, nk, d);
    uint16_t q[16] = {0}, k[16 * 16] = {0}, v[16 * 16] = {0};
    uint32_t o[16], lse[1], m[2];
    fa_capture cap;

    memset(&cap, 0, sizeof cap);
    cap.m = m;
    c.scale = 1.0f;
    q[0] = ft_bf16(1.0);
    for (size_t j = 0; j < nk; j++)
        k[j * d] = ft_bf16(-4.0 - (double)j);
    /* close maxima 0.0625 and 0.0625 - 2^-11 (0.0615...): within 1e-3 */
    k[2 * d] = ft_bf16(0.0625);
    k[9 * d] = ft_bf16(0.0625 - 0x1p-11);
    c.fix = fa_fix_default(FA_FIX_BETA);
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(m[0]) == 0.125); /* detected: 2 r */
    c.fix = fa_fix_default(FA_FIX_BETA_V2);
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(m[0]) == 0.0625); /* exact equality: not repeated */
    /* at 1.0 the BF16 threshold is 1.0 itself: 1 - 2^-8 is not counted */
    k[2 * d] = ft_bf16(1.0);
    k[9 * d] = ft_bf16(1.0 - 0x1p-8);
    c.fix = fa_fix_default(FA_FIX_BETA);
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(m[0]) == 1.0);
    k[9 * d] = ft_bf16(1.0);
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(m[0]) == 2.0);
    /* the threshold is rounded to BF16: with tol 0.0009, 0.0625 - tol =
       0.0616 rounds down to 252 2^-12 = 0.0615234375, so a score of
       exactly that value counts (it is below the FP32 threshold) */
    k[2 * d] = ft_bf16(0.0625);
    k[9 * d] = ft_bf16(0.0615234375);
    ck_assert(ft_bf(k[9 * d]) == 0.0615234375);
    c.fix.tol = 0.0009;
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(m[0]) == 0.125);
    c.kernel = fa_kernel_of_policy(FA_POLICY_FP32); /* FP32 threshold: not repeated */
    ft_forward(&c, q, k, v, o, lse, &cap);
    ck_assert(ft_f32(m[0]) == 0.0625);
    c.kernel = fa_kernel_of_policy(FA_POLICY_REPO);

    /* causal, 2 x 2 tiles of 8: query block 0 against key block 1 is all
       -finfo.max; with negative scores the fix lifts m to 0 there. */
    {
        size_t n = 16;
        fa_config cc = ft_cfg(FA_POLICY_REPO, 1, 1, n, n, d);
        uint16_t *qq = ft_alloc(n * d, 2);
        uint32_t *oo = ft_alloc(n * d, 4), *ll = ft_alloc(n, 4);
        uint32_t *mm = ft_alloc(n * 2, 4);
        fa_capture c2;
        memset(&c2, 0, sizeof c2);
        c2.m = mm;
        cc.causal = true;
        cc.scale = 1.0f;
        cc.br = cc.bc = 8;
        for (size_t i = 0; i < n; i++)
            qq[i * d] = ft_bf16(1.0);
        for (size_t j = 0; j < n; j++) /* distinct negative scores */
            k[j * d] = ft_bf16(-4.0 - (double)j);
        for (int f = 0; f < 2; f++) {
            cc.fix = fa_fix_default(f ? FA_FIX_BETA : FA_FIX_NONE);
            ft_forward(&cc, qq, k, v, oo, ll, &c2);
            for (size_t i = 0; i < 8; i++) {
                /* block 0 max: the negative score of key 0, unique */
                ck_assert(ft_f32(mm[i * 2]) < 0);
                ck_assert(ft_f32(mm[i * 2 + 1])
                          == (f ? 0.0 : ft_f32(mm[i * 2])));
            }
        }
        free(qq);
        free(oo);
        free(ll);
        free(mm);
    }
}
END_TEST

/* Captures of the fp32 policy: S within its bound of the exact score, the
   running max per block (visiting order), P~ = exp(RN(S - m)) of the
   block's m, O = RN(O~ / l). */
START_TEST(test_captures)
{
    tst_rng rng;
    size_t nq = 12, nk = 50, d = 24, tc;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 1, nq, nk, d);
    run r;
    fa_capture cap;
    uint32_t *s, *p, *m, *l, *ob;
    double *rs;
    sf_env env = SF_ENV_IEEE;

    tst_rng_init(&rng, 106);
    c.bc = 16;
    c.causal = true;
    c.order = FA_ORDER_REVERSE;
    tc = (nk + 15) / 16;
    run_init(&r, &c, &rng, 2.0);
    s = ft_alloc(nq * nk, 4);
    p = ft_alloc(nq * nk, 4);
    m = ft_alloc(nq * tc, 4);
    l = ft_alloc(nq * tc, 4);
    ob = ft_alloc(nq * d, 4);
    rs = ft_alloc(nq * nk, sizeof(double));
    memset(&cap, 0, sizeof cap);
    cap.s = s;
    cap.p = p;
    cap.m = m;
    cap.l = l;
    cap.obar = ob;
    ft_forward(&c, r.q, r.k, r.v, r.o, r.lse, &cap);
    ft_ref_forward(&c, r.q, r.k, r.v, NULL, NULL, rs, NULL);
    for (size_t i = 0; i < nq; i++) {
        size_t vis = i + (nk - nq) + 1;
        uint32_t run_m = 0xFF800000u;
        for (size_t vi = 0; vi < tc; vi++) {
            size_t jb = tc - 1 - vi, c0 = jb * 16;
            size_t c1 = c0 + 16 < nk ? c0 + 16 : nk;
            uint32_t bm = 0xFF800000u;
            for (size_t j = c0; j < c1 && j < vis; j++)
                if (ft_f32(s[i * nk + j]) > ft_f32(bm))
                    bm = s[i * nk + j];
            if (ft_f32(bm) > ft_f32(run_m))
                run_m = bm;
            ck_assert_uint_eq(m[i * tc + vi], run_m);
            for (size_t j = c0; j < c1; j++) {
                uint32_t want = 0;
                if (j < vis)
                    want =
                        fa_exp_eval(NULL, false,
                                    sf_f32_sub((sf_f32){s[i * nk + j]},
                                               (sf_f32){run_m}, SF_RNE, &env)
                                        .bits);
                ck_assert_uint_eq(p[i * nk + j], want);
            }
        }
        for (size_t j = 0; j < nk; j++) {
            double e = fabs(ft_f32(s[i * nk + j]) - rs[i * nk + j]);
            if (j < vis)
                ck_assert(e <= 1e-5 * (1 + fabs(rs[i * nk + j])));
            else
                ck_assert_uint_eq(s[i * nk + j], 0xFF800000u);
        }
        for (size_t cc = 0; cc < d; cc++)
            ck_assert_uint_eq(r.o[i * d + cc],
                              sf_f32_div((sf_f32){ob[i * d + cc]},
                                         (sf_f32){l[i * tc + tc - 1]}, SF_RNE,
                                         &env)
                                  .bits);
    }
    FT_FREE(s, p, m, l, ob, rs);
    run_free(&r);
}
END_TEST

/* The S and P~ captures of a block-sparse forward: every key is written,
   also those of blocks the kernel never visits (the capture buffers are
   filled with a NaN first).  A key outside the mask holds -Inf and 0, a
   key inside it a finite score and a P~ in (0, 1]; without splits each
   row's maximum gives P~ = 1.  KERNEL "flex" (a sliding window of 100
   keys in blocks of 128: query block 3 lists KV blocks 2 and 3) and
   "flex-decode" (its own program count, and one program, on a band of keys in the
   middle). */
static void
check_sparse_captures(const char *kernel, size_t nq, size_t nk,
                      size_t splits, size_t lo_of_row, size_t width)
{
    tst_rng rng;
    size_t d = 16;
    fa_config c = ft_cfg(FA_POLICY_FA2, 1, 1, nq, nk, d);
    fa_attn_mask mask = {FA_AMASK_BOOL, NULL, NULL, nk, 1};
    uint8_t *keep = ft_alloc(nq * nk, 1);
    uint32_t *s = ft_alloc(nq * nk, 4), *p = ft_alloc(nq * nk, 4);
    fa_capture cap;
    run r;

    for (size_t i = 0; i < nq; i++) {
        size_t lo = lo_of_row == (size_t)-1 ? (i >= width ? i - width : 0)
                                            : lo_of_row;
        size_t hi = lo_of_row == (size_t)-1 ? i + 1 : lo_of_row + width;
        for (size_t j = lo; j < hi && j < nk; j++)
            keep[i * nk + j] = 1;
    }
    mask.data = keep;
    c.kernel = fa_kernel_by_name(kernel);
    ck_assert_ptr_nonnull(c.kernel);
    c.mask = &mask;
    c.splits = splits;
    tst_rng_init(&rng, 107);
    run_init(&r, &c, &rng, 1.0);
    for (size_t x = 0; x < nq * nk; x++)
        s[x] = p[x] = 0x7FC0DEADu;
    memset(&cap, 0, sizeof cap);
    cap.s = s;
    cap.p = p;
    ft_forward(&c, r.q, r.k, r.v, r.o, r.lse, &cap);
    for (size_t i = 0; i < nq; i++) {
        size_t ones = 0;
        for (size_t j = 0; j < nk; j++) {
            uint32_t sx = s[i * nk + j], px = p[i * nk + j];
            bool in = keep[i * nk + j] != 0;
            bool ok = in ? (sx & 0x7F800000u) != 0x7F800000u && px != 0
                               && px <= 0x3F800000u
                         : sx == 0xFF800000u && px == 0;
            ck_assert_msg(ok,
                          "%s row %zu key %zu (%s the mask): S %08" PRIX32
                          " P %08" PRIX32,
                          kernel, i, j, in ? "in" : "outside", sx, px);
            ones += px == 0x3F800000u;
        }
        if (splits <= 1)
            ck_assert_msg(ones > 0, "%s row %zu: no P~ = 1", kernel, i);
    }
    FT_FREE(keep, s, p);
    run_free(&r);
}

START_TEST(test_captures_block_sparse)
{
    check_sparse_captures("flex", 512, 512, 0, (size_t)-1, 100);
    check_sparse_captures("flex-decode", 1, 1000, 0, 100, 600);
    check_sparse_captures("flex-decode", 3, 700, 1, 250, 300);
}
END_TEST

/* The traced element's events: only the roundings that feed O[row, col],
   none of the other columns nor of LSE, and the same output. */
START_TEST(test_trace_fp32)
{
    tst_rng rng;
    size_t nq = 6, nk = 20, d = 8, row = 4, col = 5;
    fa_config c = ft_cfg(FA_POLICY_FP32, 2, 1, nq, nk, d);
    run r;
    fa_capture cap;
    ft_ev_log lg = {0, 4096, NULL};
    sf_event_sink sink = {ft_log_event, &lg};
    uint32_t *o2;
    size_t fma = 0, pv = 0, n = nk;

    tst_rng_init(&rng, 107);
    run_init(&r, &c, &rng, 2.0);
    lg.ev = ft_alloc(lg.cap, sizeof(sf_event));
    o2 = ft_alloc(ft_nq_d(&c), 4);
    memset(&cap, 0, sizeof cap);
    cap.trace = true;
    cap.events = &sink;
    cap.trace_b = 1;
    cap.trace_row = row;
    cap.trace_col = col;
    ft_forward(&c, r.q, r.k, r.v, r.o, r.lse, &cap);
    ft_forward(&c, r.q, r.k, r.v, o2, r.lse, NULL);
    ck_assert_uint_eq(ft_count_diff(r.o, o2, ft_nq_d(&c)), 0);
    /* untiled fp32, no fix: n dot products of d FMA steps and n scale
       products (S), n subtractions (S - m), n - 1 additions (l), n FMA
       steps of column COL (P~V), one division (O) */
    ck_assert_uint_eq(lg.n, n * d + n + n + (n - 1) + n + 1);
    for (size_t x = 0; x < lg.n; x++)
        if (lg.ev[x].op == SF_OP_MMA_FMA) {
            fma++;
            if (fma > n * d) { /* the P~V chain */
                size_t t = fma - n * d - 1;
                ck_assert_uint_eq(lg.ev[x].in[1],
                                  r.v[((size_t)1 * nk + t) * d + col]);
                pv++;
            }
        }
    ck_assert_uint_eq(pv, n);
    ck_assert_int_eq(lg.ev[lg.n - 1].op, SF_OP_DIV);
    ck_assert_uint_eq(lg.ev[lg.n - 1].result,
                      r.o[((size_t)1 * nq + row) * d + col]);
    free(lg.ev);
    free(o2);
    run_free(&r);
}
END_TEST

/* The traced element of every policy: its last event produces the output
   bits; tracing changes no output; the caller's environment gets none of
   the traced events. */
static size_t global_events;

static void
count_event(void *user, const sf_event *ev)
{
    (void)user;
    (void)ev;
    global_events++;
}

START_TEST(test_trace_policies)
{
    tst_rng rng;
    size_t nq = 20, nk = 40, d = 32;
    fa_config c = ft_cfg(FA_POLICY_FP32, 1, 2, nq, nk, d);
    run r;
    fa_capture cap;
    ft_ev_log lg = {0, 1u << 16, NULL};
    sf_event_sink sink = {ft_log_event, &lg}, gsink = {count_event, NULL};
    uint32_t *o2 = ft_alloc(ft_nq_d(&c), 4), *l2 = ft_alloc(ft_rows(&c), 4);

    tst_rng_init(&rng, 108);
    c.causal = true;
    run_init(&r, &c, &rng, 2.0);
    lg.ev = ft_alloc(lg.cap, sizeof(sf_event));
    for (int pol = 0; pol < 4; pol++) {
        sf_env env = SF_ENV_IEEE;
        size_t ge, x = ((size_t)1 * nq + 13) * d + 7;
        r.c.kernel = fa_kernel_of_policy((fa_policy)pol);
        r.c.bc = pol == FA_POLICY_FA2 ? 16 : pol == FA_POLICY_REPO ? 8 : 0;
        r.c.fix =
            fa_fix_default(pol == FA_POLICY_REPO ? FA_FIX_BETA : FA_FIX_NONE);
        ft_forward(&r.c, r.q, r.k, r.v, o2, l2, NULL);
        memset(&cap, 0, sizeof cap);
        cap.trace = true;
        cap.events = &sink;
        cap.trace_h = 1;
        cap.trace_row = 13;
        cap.trace_col = 7;
        lg.n = 0;
        global_events = 0;
        env.events = &gsink;
        ck_assert_int_eq(
            fa_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, &cap, &env), 0);
        ge = global_events;
        ck_assert_uint_eq(ft_count_diff(r.o, o2, ft_nq_d(&c)), 0);
        ck_assert_uint_eq(ft_count_diff(r.lse, l2, ft_rows(&c)), 0);
        ck_assert_uint_gt(lg.n, 0);
        ck_assert_uint_le(lg.n, lg.cap);
        ck_assert_uint_eq(lg.ev[lg.n - 1].result,
                          r.o[x] >> (pol == FA_POLICY_FP32 ? 0 : 16));
        /* a second run without the trace sees as many global events */
        global_events = 0;
        ck_assert_int_eq(
            fa_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, NULL, &env), 0);
        ck_assert_uint_eq(global_events, ge);
    }
    free(lg.ev);
    free(o2);
    free(l2);
    run_free(&r);
}
END_TEST

/* paper-eq4 and repo against the reference within BF16-level bounds
   (b = 2^-8, the BF16 unit roundoff; u = 2^-24; V = max |v| of the
   column's visible values; Smax = max |S*|; T blocks).
   paper-eq4: S = BF16(RN(raw scale)) is within Es = 1.01 b Smax of S*;
     S - m rounded to BF16 moves an exponent by b |S - m| <= 2 b Smax;
     P~ = BF16(exp) is off by b + u relative; each rescale factor (FP32)
     by u (1 + 2 Smax) over all blocks: the weights move by e^(+-theta),
     theta = 1.01 (2 b Smax + b) + 2 u (1 + Smax);  O~ is rounded to BF16
     once per block (at most b sum p |v| each time), O once more (b |O|):
       |O - O*| <= 1.02 V (expm1(2 Es) + expm1(2 theta)(1 + expm1(2 Es))
                           + 1.01 (T + 1) b + 2^-16).
   repo: two BF16 roundings of S (Es = 2.02 b Smax), S - m and P~ as
     above, alpha = BF16(exp(BF16(m_old - m_new))) adds 2 b |dm| + b per
     block to the older weights (theta += 1.01 (2 b Smax + T b)), l is
     rounded twice per block (2 T b relative), the block's P~V, oc alpha
     and oc + P~V once each (3 T b), O once; the clamp adds at most
     1e-10 T to l >= 1:
       |O - O*| <= 1.02 V (expm1(2 Es) + expm1(2 theta)(1 + expm1(2 Es))
                           + 1.01 (5 T + 1) b + 1e-10 T + 2^-16).
   (2^-16 covers the FP32 sums, far below b.) */
static double
bf16_bound(fa_policy p, double smax, double vmax, size_t t)
{
    double b = 0x1p-8, u = FT_U, T = (double)t, es, th, rest;

    if (p == FA_POLICY_PAPER_EQ4) {
        es = 1.01 * b * smax;
        th = 1.01 * (2 * b * smax + b) + 2 * u * (1 + smax);
        rest = 1.01 * (T + 1) * b + 0x1p-16;
    } else {
        es = 2.02 * b * smax;
        th = 1.01 * (2 * b * smax + b) + 2 * u * (1 + smax)
             + 1.01 * (2 * b * smax + T * b);
        rest = 1.01 * (5 * T + 1) * b + 1e-10 * T + 0x1p-16;
    }
    return 1.02 * vmax
           * (expm1(2 * es) + expm1(2 * th) * (1 + expm1(2 * es)) + rest);
}

/* The split combine's FMA chains as one fma-chain product per row (no
   sink, IEEE environment: the host's FMA unit, or binary64 on the
   portable path) against the same chains one sf_f32_fma at a time (an
   event sink on the environment): O, LSE and the flags bit for bit, at
   2, 3 and 4 splits, d = 64 and 96, with a few large scores. */
START_TEST(test_split_combine_paths)
{
    const size_t ds[2] = {64, 96}, ss[3] = {2, 3, 4};
    sf_event_sink gsink = {count_event, NULL};
    tst_rng rng;

    tst_rng_init(&rng, 311);
    for (size_t di = 0; di < 2; di++)
        for (size_t si = 0; si < 3; si++) {
            fa_config c = ft_cfg(FA_POLICY_FA2, 1, 2, 64, 1024, ds[di]);
            run r;
            uint32_t *o2 = ft_alloc(ft_nq_d(&c), 4),
                     *l2 = ft_alloc(ft_rows(&c), 4);
            sf_env fast = SF_ENV_NVIDIA, slow = SF_ENV_NVIDIA,
                   port = SF_ENV_NVIDIA;
            c.splits = ss[si];
            run_init(&r, &c, &rng, 3.0);
            for (size_t x = 0; x < ft_nk_d(&c); x += 997)
                r.k[x] = 0x4180; /* 16: scores far apart across splits */
            ck_assert_ptr_null(fa_config_check(&r.c));
            slow.events = &gsink;
            port.isa = SF_ISA_SCALAR;
            ck_assert_int_eq(
                fa_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, NULL, &fast), 0);
            ck_assert_int_eq(
                fa_forward(&r.c, r.q, r.k, r.v, o2, l2, NULL, &slow), 0);
            ck_assert_uint_eq(ft_count_diff(r.o, o2, ft_nq_d(&c)), 0);
            ck_assert_uint_eq(ft_count_diff(r.lse, l2, ft_rows(&c)), 0);
            ck_assert_uint_eq(fast.flags, slow.flags);
            ck_assert_int_eq(
                fa_forward(&r.c, r.q, r.k, r.v, o2, l2, NULL, &port), 0);
            ck_assert_uint_eq(ft_count_diff(r.o, o2, ft_nq_d(&c)), 0);
            ck_assert_uint_eq(ft_count_diff(r.lse, l2, ft_rows(&c)), 0);
            ck_assert_uint_eq(fast.flags, port.flags);
            free(o2);
            free(l2);
            run_free(&r);
        }
}
END_TEST

START_TEST(test_bf16_policies)
{
    tst_rng rng;
    size_t nq = 24, nk = 64, d = 32;
    fa_config c = ft_cfg(FA_POLICY_PAPER_EQ4, 1, 2, nq, nk, d);
    run r;
    double *rs = ft_alloc(ft_nq_nk(&c), sizeof(double));

    tst_rng_init(&rng, 109);
    c.causal = true;
    run_init(&r, &c, &rng, 1.0);
    ft_ref_forward(&c, r.q, r.k, r.v, r.ro, r.rlse, rs, NULL);
    for (int pol = 0; pol < 2; pol++)
        for (size_t bc = 16; bc <= 64; bc *= 4) {
            size_t bad, t = (nk + bc - 1) / bc;
            r.c.kernel = fa_kernel_of_policy(pol == 0 ? FA_POLICY_PAPER_EQ4 : FA_POLICY_REPO);
            r.c.bc = bc;
            ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, NULL);
            for (size_t x = 0; x < ft_rows(&c); x++) {
                size_t hd = x / nq, i = x % nq, vis = i + nk - nq + 1;
                double smax = 0;
                for (size_t j = 0; j < vis; j++)
                    smax = fmax(smax, fabs(rs[x * nk + j]));
                for (size_t cc = 0; cc < d; cc++) {
                    double vm = 0;
                    for (size_t j = 0; j < vis; j++)
                        vm =
                            fmax(vm, fabs(ft_bf(r.v[(hd * nk + j) * d + cc])));
                    r.bo[x * d + cc] = bf16_bound((fa_policy)fa_policy_parse(r.c.kernel->name), smax, vm, t);
                }
            }
            bad = ft_check_close(fa_policy_name((fa_policy)fa_policy_parse(r.c.kernel->name)), r.o, r.ro, r.bo,
                                 ft_nq_d(&c));
            ck_assert_uint_eq(bad, 0);
        }
    free(rs);
    run_free(&r);
}
END_TEST

/* Ablations fp32-pv and fp32-o: O~ kept FP32 (O still BF16 with fp32-pv),
   and with fp32-o O = RN_f32(O~ / l). */
START_TEST(test_ablations_forward)
{
    tst_rng rng;
    size_t nq = 16, nk = 48, d = 16, tc = 3;
    fa_config c = ft_cfg(FA_POLICY_PAPER_EQ4, 1, 1, nq, nk, d);
    run r;
    fa_capture cap;
    uint32_t *ob = ft_alloc(nq * d, 4), *l = ft_alloc(nq * tc, 4);
    sf_env env = SF_ENV_IEEE;

    tst_rng_init(&rng, 110);
    c.bc = 16;
    run_init(&r, &c, &rng, 1.0);
    memset(&cap, 0, sizeof cap);
    cap.obar = ob;
    cap.l = l;
    for (int pol = 0; pol < 2; pol++) {
        size_t low;
        r.c.kernel = fa_kernel_of_policy(pol == 0 ? FA_POLICY_PAPER_EQ4 : FA_POLICY_REPO);
        r.c.ablations = 0;
        ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, &cap);
        for (size_t x = 0; x < nq * d; x++) {
            ck_assert_uint_eq(r.o[x] & 0xFFFF, 0);
            ck_assert_uint_eq(ob[x] & 0xFFFF, 0);
        }
        r.c.ablations = FA_ABL_FP32_PV;
        ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, &cap);
        low = 0;
        for (size_t x = 0; x < nq * d; x++) {
            ck_assert_uint_eq(r.o[x] & 0xFFFF, 0); /* O still BF16 */
            low += (ob[x] & 0xFFFF) != 0;
        }
        ck_assert_uint_gt(low, 0); /* O~ is FP32 */
        r.c.ablations = FA_ABL_FP32_O;
        ft_forward(&r.c, r.q, r.k, r.v, r.o, r.lse, &cap);
        low = 0;
        for (size_t x = 0; x < nq * d; x++) {
            uint32_t want =
                sf_f32_div((sf_f32){ob[x]}, (sf_f32){l[(x / d) * tc + tc - 1]},
                           SF_RNE, &env)
                    .bits;
            ck_assert_uint_eq(r.o[x], want);
            low += (r.o[x] & 0xFFFF) != 0;
        }
        ck_assert_uint_gt(low, 0);
    }
    free(ob);
    free(l);
    run_free(&r);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_forward");
    TCase *tc = tst_add_tcase(s, "forward", 120);

    tcase_add_test(tc, test_fp32_vs_double);
    tcase_add_test(tc, test_fp32_scale_ablation);
    tcase_add_test(tc, test_tiled_vs_untiled);
    tcase_add_test(tc, test_causal_masks);
    tcase_add_test(tc, test_causal_top_left);
    tcase_add_test(tc, test_fix_variants_fp32);
    tcase_add_test(tc, test_fix_effect);
    tcase_add_test(tc, test_t7_underflow);
    tcase_add_test(tc, test_t8_repo_detector);
    tcase_add_test(tc, test_captures);
    tcase_add_test(tc, test_captures_block_sparse);
    tcase_add_test(tc, test_trace_fp32);
    tcase_add_test(tc, test_trace_policies);
    tcase_add_test(tc, test_bf16_policies);
    tcase_add_test(tc, test_split_combine_paths);
    tcase_add_test(tc, test_ablations_forward);
    return tst_run_suite(s);
}
