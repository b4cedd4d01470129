/* test_policies.c -- the policies bit for bit against straightforward
   re-implementations written in this test from their sources (the
   released code's statements for repo, Algorithm 1 for paper-eq4 and
   fp32, the FA2 backward kernel's loops for fa2), on small cases with
   causal masks, several tiles and the fix; the primitives are softfloat's
   operations and accumulation models, tested on their own */
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

#define NEG_INF 0xFF800000u
#define BF_NEG_MAX 0xFF7F0000u /* -finfo(bfloat16).max, widened */

static sf_env env0 = SF_ENV_IEEE;

/* FP32 operations on bit patterns, RNE */
static uint32_t
add32(uint32_t a, uint32_t b)
{
    return sf_f32_add((sf_f32){a}, (sf_f32){b}, SF_RNE, &env0).bits;
}

static uint32_t
sub32(uint32_t a, uint32_t b)
{
    return sf_f32_sub((sf_f32){a}, (sf_f32){b}, SF_RNE, &env0).bits;
}

static uint32_t
mul32(uint32_t a, uint32_t b)
{
    return sf_f32_mul((sf_f32){a}, (sf_f32){b}, SF_RNE, &env0).bits;
}

static uint32_t
div32(uint32_t a, uint32_t b)
{
    return sf_f32_div((sf_f32){a}, (sf_f32){b}, SF_RNE, &env0).bits;
}

/* FP32 rounded to BF16, widened */
static uint32_t
r16(uint32_t a)
{
    return (uint32_t)sf_f32_to_bf16((sf_f32){a}, SF_RNE, &env0).bits << 16;
}

static uint32_t
w16(uint16_t a)
{
    return (uint32_t)a << 16;
}

static bool
gt32(uint32_t a, uint32_t b)
{
    return ft_f32(a) > ft_f32(b);
}

/* PyTorch's binary op on two BF16 tensors: FP32 opmath, then BF16 */
static uint32_t
tadd(uint32_t a, uint32_t b)
{
    return r16(add32(a, b));
}

static uint32_t
tsub(uint32_t a, uint32_t b)
{
    return r16(sub32(a, b));
}

static uint32_t
tmul(uint32_t a, uint32_t b)
{
    return r16(mul32(a, b));
}

static uint32_t
texp(uint32_t a)
{
    return r16(fa_exp_eval(NULL, false, a));
}

/* A dot product of N terms A[i * sa] B[i * sb] (BF16 or FP32 bit
   patterns as uint32 FP32 values, converted for the model) from C. */
static uint32_t
dotm(const char *model, const uint32_t *a, size_t sa, const uint32_t *b,
     size_t sb, size_t n, uint32_t c, bool a16, bool b16)
{
    uint16_t xa[512], xb[512];
    uint32_t ya[512], yb[512];

    ck_assert_uint_le(n, 512);
    for (size_t i = 0; i < n; i++) {
        xa[i] = (uint16_t)(a[i * sa] >> 16);
        xb[i] = (uint16_t)(b[i * sb] >> 16);
        ya[i] = a[i * sa];
        yb[i] = b[i * sb];
    }
    return (uint32_t)sf_mma_dot(
        sf_mma_preset_by_name(model), a16 ? &sf_format_bf16 : &sf_format_f32,
        a16 ? (const void *)xa : (const void *)ya, 1,
        b16 ? &sf_format_bf16 : &sf_format_f32,
        b16 ? (const void *)xb : (const void *)yb, 1, n, c, &env0);
}

static bool
masked(const fa_config *c, size_t i, size_t j)
{
    return c->causal
           && (long long)j > (long long)i + (long long)c->shape.nk
                                 - (long long)c->shape.nq;
}

typedef struct
{
    fa_config c;
    uint16_t *q, *k, *v, *dout;
    uint32_t *qw, *kw, *vw, *dw; /* widened */
} inputs;

static void
inputs_init(inputs *in, const fa_config *c, tst_rng *rng)
{
    size_t nqd = ft_nq_d(c), nkd = ft_nk_d(c);

    in->c = *c;
    in->q = ft_alloc(nqd, 2);
    in->k = ft_alloc(nkd, 2);
    in->v = ft_alloc(nkd, 2);
    in->dout = ft_alloc(nqd, 2);
    in->qw = ft_alloc(nqd, 4);
    in->kw = ft_alloc(nkd, 4);
    in->vw = ft_alloc(nkd, 4);
    in->dw = ft_alloc(nqd, 4);
    ft_fill_uniform(rng, in->q, nqd, -1.5, 1.5);
    ft_fill_uniform(rng, in->k, nkd, -1.5, 1.5);
    ft_fill_normal(rng, in->v, nkd, -0.5, 1.0);
    ft_fill_normal(rng, in->dout, nqd, 0.0, 1.0);
    /* repeated maxima: duplicate a few keys */
    for (size_t j = 3; j < c->shape.nk; j += 7)
        memcpy(in->k + j * c->shape.d, in->k + (j - 2) * c->shape.d,
               c->shape.d * 2);
    for (size_t x = 0; x < nqd; x++) {
        in->qw[x] = w16(in->q[x]);
        in->dw[x] = w16(in->dout[x]);
    }
    for (size_t x = 0; x < nkd; x++) {
        in->kw[x] = w16(in->k[x]);
        in->vw[x] = w16(in->v[x]);
    }
}

static void
inputs_free(inputs *in)
{
    FT_FREE(in->q, in->k, in->v, in->dout, in->qw, in->kw, in->vw, in->dw);
}

static size_t
report(const char *what, const uint32_t *want, const uint32_t *got, size_t n)
{
    size_t bad = 0;

    for (size_t x = 0; x < n; x++)
        if (want[x] != got[x] && bad++ < TST_MAX_PRINT)
            printf("%s[%zu] re-implementation %08x library %08x\n", what, x,
                   (unsigned)want[x], (unsigned)got[x]);
    return bad;
}

/*----------------------------------------------------------------------------
 * repo: FlashAttentionFunction.forward and .backward, statement by
 * statement, on whole tiles (one head; B = H = 1).
 *--------------------------------------------------------------------------*/
static void
repo_forward(const inputs *in, size_t bucket, bool stable, uint32_t *o,
             uint32_t *lse)
{
    const fa_config *c = &in->c;
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    uint32_t sc = fa_scale_bits(c), eps = ft_f32_bits(1e-3);
    uint32_t clampv = ft_f32_bits(1e-10), two = 0x40000000u;
    uint32_t *row_sums = ft_alloc(nq, 4), *row_maxes = ft_alloc(nq, 4);
    uint32_t aw[64][64], ew[64][64], ev[64][64];

    ck_assert_uint_le(bucket, 64);
    for (size_t i = 0; i < nq; i++) {
        row_maxes[i] = BF_NEG_MAX;
        for (size_t cc = 0; cc < d; cc++)
            o[i * d + cc] = 0;
    }
    for (size_t r0 = 0; r0 < nq; r0 += bucket) {
        size_t nr = nq - r0 < bucket ? nq - r0 : bucket;
        for (size_t c0 = 0; c0 < nk; c0 += bucket) {
            size_t nc = nk - c0 < bucket ? nk - c0 : bucket;
            for (size_t i = 0; i < nr; i++) {
                uint32_t brm = NEG_INF, nrm, acc, brs, ermd, nrs;
                for (size_t j = 0; j < nc; j++) {
                    /* einsum(qc, kc) * scale; masked_fill_ */
                    aw[i][j] = tmul(
                        r16(dotm("fma-chain", in->qw + (r0 + i) * d, 1,
                                 in->kw + (c0 + j) * d, 1, d, 0, true, true)),
                        sc);
                    if (masked(c, r0 + i, c0 + j))
                        aw[i][j] = BF_NEG_MAX;
                    if (gt32(aw[i][j], brm))
                        brm = aw[i][j];
                }
                if (stable) {
                    size_t close = 0;
                    uint32_t thr = tsub(brm, eps);
                    for (size_t j = 0; j < nc; j++)
                        close += ft_f32(aw[i][j]) >= ft_f32(thr);
                    if (close > 1 && ft_f32(brm) > 0)
                        brm = tmul(brm, two);
                    if (close > 1 && ft_f32(brm) < 0)
                        brm = 0;
                }
                nrm = gt32(brm, row_maxes[r0 + i]) ? brm : row_maxes[r0 + i];
                for (size_t j = 0; j < nc; j++)
                    ew[i][j] = texp(tsub(aw[i][j], nrm));
                acc = ew[i][0];
                for (size_t j = 1; j < nc; j++)
                    acc = add32(acc, ew[i][j]);
                brs = r16(acc);
                if (ft_f32(brs) < ft_f32(clampv))
                    brs = r16(clampv);
                for (size_t cc = 0; cc < d; cc++)
                    ev[i][cc] =
                        r16(dotm("fma-chain", ew[i], 1, in->vw + c0 * d + cc,
                                 d, nc, 0, true, true));
                ermd = texp(tsub(row_maxes[r0 + i], nrm));
                nrs = tadd(tmul(ermd, row_sums[r0 + i]), brs);
                for (size_t cc = 0; cc < d; cc++) {
                    uint32_t *x = &o[(r0 + i) * d + cc];
                    *x = tadd(tmul(*x, ermd), ev[i][cc]);
                }
                row_maxes[r0 + i] = nrm;
                row_sums[r0 + i] = nrs;
            }
        }
        for (size_t i = 0; i < nr; i++)
            for (size_t cc = 0; cc < d; cc++)
                o[(r0 + i) * d + cc] =
                    r16(div32(o[(r0 + i) * d + cc], row_sums[r0 + i]));
    }
    for (size_t i = 0; i < nq; i++)
        lse[i] = tadd(r16(fa_logf_cr(row_sums[i])), row_maxes[i]);
    free(row_sums);
    free(row_maxes);
}

static void
repo_backward(const inputs *in, size_t bucket, const uint32_t *o,
              const uint32_t *lse, uint32_t *dq, uint32_t *dk, uint32_t *dv)
{
    const fa_config *c = &in->c;
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    uint32_t sc = fa_scale_bits(c);
    uint32_t aw[64][64], p[64][64], dp[64][64], ds[64][64], dd[64];

    memset(dq, 0, nq * d * 4);
    memset(dk, 0, nk * d * 4);
    memset(dv, 0, nk * d * 4);
    for (size_t r0 = 0; r0 < nq; r0 += bucket) {
        size_t nr = nq - r0 < bucket ? nq - r0 : bucket;
        for (size_t c0 = 0; c0 < nk; c0 += bucket) {
            size_t nc = nk - c0 < bucket ? nk - c0 : bucket;
            for (size_t i = 0; i < nr; i++)
                for (size_t j = 0; j < nc; j++) {
                    aw[i][j] = tmul(
                        r16(dotm("fma-chain", in->qw + (r0 + i) * d, 1,
                                 in->kw + (c0 + j) * d, 1, d, 0, true, true)),
                        sc);
                    if (masked(c, r0 + i, c0 + j))
                        aw[i][j] = NEG_INF;
                    p[i][j] = texp(tsub(aw[i][j], lse[r0 + i]));
                    dp[i][j] =
                        r16(dotm("fma-chain", in->dw + (r0 + i) * d, 1,
                                 in->vw + (c0 + j) * d, 1, d, 0, true, true));
                }
            /* dv_chunk = einsum(p, doc); dp; D = (doc * oc).sum(-1) */
            for (size_t i = 0; i < nr; i++) {
                uint32_t acc = tmul(in->dw[(r0 + i) * d], o[(r0 + i) * d]);
                for (size_t cc = 1; cc < d; cc++)
                    acc = add32(acc, tmul(in->dw[(r0 + i) * d + cc],
                                          o[(r0 + i) * d + cc]));
                dd[i] = r16(acc);
                for (size_t j = 0; j < nc; j++)
                    ds[i][j] = tmul(tmul(p[i][j], sc), tsub(dp[i][j], dd[i]));
            }
            for (size_t j = 0; j < nc; j++)
                for (size_t cc = 0; cc < d; cc++) {
                    uint32_t colp[64], colds[64];
                    uint32_t *x;
                    for (size_t i = 0; i < nr; i++) {
                        colp[i] = p[i][j];
                        colds[i] = ds[i][j];
                    }
                    x = &dv[(c0 + j) * d + cc];
                    *x = tadd(*x, r16(dotm("fma-chain", colp, 1,
                                           in->dw + r0 * d + cc, d, nr, 0,
                                           true, true)));
                    x = &dk[(c0 + j) * d + cc];
                    *x = tadd(*x, r16(dotm("fma-chain", colds, 1,
                                           in->qw + r0 * d + cc, d, nr, 0,
                                           true, true)));
                }
            for (size_t i = 0; i < nr; i++)
                for (size_t cc = 0; cc < d; cc++) {
                    uint32_t *x = &dq[(r0 + i) * d + cc];
                    *x = tadd(*x, r16(dotm("fma-chain", ds[i], 1,
                                           in->kw + c0 * d + cc, d, nc, 0,
                                           true, true)));
                }
        }
    }
}

START_TEST(test_repo)
{
    tst_rng rng;
    fa_config c = fa_config_default(FA_POLICY_REPO);
    inputs in;
    size_t nq = 40, nk = 40, d = 24, bad = 0;
    uint32_t *o1 = ft_alloc(nq * d, 4), *o2 = ft_alloc(nq * d, 4);
    uint32_t *l1 = ft_alloc(nq, 4), *l2 = ft_alloc(nq, 4);
    uint32_t *g1 = ft_alloc(3 * nk * d, 4), *g2 = ft_alloc(3 * nk * d, 4);
    uint32_t *delta = ft_alloc(nq, 4);

    tst_rng_init(&rng, 501);
    c.shape = (fa_shape){1, 1, nq, nk, d};
    c.causal = true;
    c.br = c.bc = 16;
    inputs_init(&in, &c, &rng);
    for (int stable = 0; stable < 2; stable++) {
        in.c.fix = fa_fix_default(stable ? FA_FIX_BETA : FA_FIX_NONE);
        repo_forward(&in, 16, stable != 0, o1, l1);
        ft_forward(&in.c, in.q, in.k, in.v, o2, l2, NULL);
        bad += report("repo O", o1, o2, nq * d);
        bad += report("repo LSE", l1, l2, nq);
        repo_backward(&in, 16, o2, l2, g1, g1 + nk * d, g1 + 2 * nk * d);
        ft_backward(&in.c, in.q, in.k, in.v, o2, l2, in.dout, delta, g2,
                    g2 + nk * d, g2 + 2 * nk * d, NULL);
        bad += report("repo dQ", g1, g2, nq * d);
        bad += report("repo dK", g1 + nk * d, g2 + nk * d, nk * d);
        bad += report("repo dV", g1 + 2 * nk * d, g2 + 2 * nk * d, nk * d);
    }
    ck_assert_uint_eq(bad, 0);
    FT_FREE(o1, o2, l1, l2, g1, g2, delta);
    inputs_free(&in);
}
END_TEST

/*----------------------------------------------------------------------------
 * paper-eq4 and fp32: Algorithm 1 with the eps fix (detection on the
 * block's scores, S >= RN(RN32(r - tol)), then m = max(shifted r, m)).
 *--------------------------------------------------------------------------*/
static void
alg1_forward(const inputs *in, size_t bc, bool eq4, uint32_t *o, uint32_t *lse)
{
    const fa_config *c = &in->c;
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    uint32_t sc = fa_scale_bits(c);
    uint32_t tol = ft_f32_bits(1e-3), eps = ft_f32_bits(0x1p-5);

    for (size_t i = 0; i < nq; i++) {
        uint32_t s[128], m = NEG_INF, l = 0, acc[64];
        bool started = false;
        for (size_t j = 0; j < nk; j++) {
            uint32_t x = mul32(dotm("fma-chain", in->qw + i * d, 1,
                                    in->kw + j * d, 1, d, 0, true, true),
                               sc);
            s[j] = masked(c, i, j) ? NEG_INF : eq4 ? r16(x) : x;
        }
        for (size_t c0 = 0; c0 < nk; c0 += bc) {
            size_t nc = nk - c0 < bc ? nk - c0 : bc, nv = 0, close = 0;
            uint32_t r = NEG_INF, thr, mnew, alpha = 0, p[128], rs;
            for (size_t j = 0; j < nc; j++)
                if (s[c0 + j] != NEG_INF) {
                    nv++;
                    if (gt32(s[c0 + j], r))
                        r = s[c0 + j];
                }
            if (nv == 0)
                continue;
            thr = sub32(r, tol);
            if (eq4)
                thr = r16(thr);
            for (size_t j = 0; j < nv; j++)
                close += ft_f32(s[c0 + j]) >= ft_f32(thr);
            if (close > 1) {
                r = add32(r, eps);
                if (eq4)
                    r = r16(r);
            }
            mnew = started && gt32(m, r) ? m : r;
            if (started)
                alpha = fa_exp_eval(NULL, false, sub32(m, mnew));
            for (size_t j = 0; j < nv; j++) {
                if (eq4) {
                    sf_bf16 a = {(uint16_t)(s[c0 + j] >> 16)};
                    sf_bf16 b = {(uint16_t)(mnew >> 16)};
                    uint32_t x = w16(sf_bf16_sub(a, b, SF_RNE, &env0).bits);
                    p[j] = r16(fa_exp_eval(NULL, false, x));
                } else {
                    p[j] = fa_exp_eval(NULL, false, sub32(s[c0 + j], mnew));
                }
            }
            rs = p[0];
            for (size_t j = 1; j < nv; j++)
                rs = add32(rs, p[j]);
            l = started ? add32(mul32(alpha, l), rs) : rs;
            for (size_t cc = 0; cc < d; cc++) {
                uint32_t c_in = started ? mul32(alpha, acc[cc]) : 0;
                acc[cc] = dotm("fma-chain", p, 1, in->vw + c0 * d + cc, d, nv,
                               c_in, eq4, true);
                if (eq4)
                    acc[cc] = r16(acc[cc]);
            }
            m = mnew;
            started = true;
        }
        for (size_t cc = 0; cc < d; cc++) {
            uint32_t x = started ? div32(acc[cc], l) : 0;
            o[i * d + cc] = eq4 ? r16(x) : x;
        }
        lse[i] = started ? add32(m, fa_logf_cr(l)) : NEG_INF;
    }
}

START_TEST(test_algorithm1)
{
    tst_rng rng;
    inputs in;
    size_t nq = 30, nk = 45, d = 16, bad = 0;
    fa_config c = fa_config_default(FA_POLICY_PAPER_EQ4);
    uint32_t *o1 = ft_alloc(nq * d, 4), *o2 = ft_alloc(nq * d, 4);
    uint32_t *l1 = ft_alloc(nq, 4), *l2 = ft_alloc(nq, 4);

    tst_rng_init(&rng, 502);
    c.shape = (fa_shape){1, 1, nq, nk, d};
    c.causal = true;
    c.bc = 8;
    c.fix = fa_fix_default(FA_FIX_EPS);
    inputs_init(&in, &c, &rng);
    for (int eq4 = 0; eq4 < 2; eq4++) {
        in.c.kernel = fa_kernel_of_policy(eq4 ? FA_POLICY_PAPER_EQ4 : FA_POLICY_FP32);
        alg1_forward(&in, 8, eq4 != 0, o1, l1);
        ft_forward(&in.c, in.q, in.k, in.v, o2, l2, NULL);
        bad += report(eq4 ? "eq4 O" : "fp32 O", o1, o2, nq * d);
        bad += report(eq4 ? "eq4 LSE" : "fp32 LSE", l1, l2, nq);
    }
    ck_assert_uint_eq(bad, 0);
    free(o1);
    free(o2);
    free(l1);
    free(l2);
    inputs_free(&in);
}
END_TEST

/*----------------------------------------------------------------------------
 * fa2 backward: the preprocess (dot_do_o with its eight threads and
 * butterfly), then the kernel's loops: KV blocks, each walking the query
 * blocks from the last down to m_block_min, the dQ partials atomically
 * added into buffer n_block mod nsplits, convert_dQ.
 *--------------------------------------------------------------------------*/
static uint32_t
dot_do_o(const uint32_t *dout, const uint32_t *o, size_t d)
{
    /* kHeadDim 64 here: one page of 64 columns, 8 threads of 8 columns */
    uint32_t lane[8], nxt[8];

    ck_assert_uint_le(d, 64);
    for (size_t t = 0; t < 8; t++)
        for (size_t e = 0; e < 8; e++) {
            size_t col = 8 * t + e;
            uint32_t a = col < d ? dout[col] : 0, b = col < d ? o[col] : 0;
            lane[t] = e == 0 ? mul32(a, b)
                             : sf_f32_fma((sf_f32){a}, (sf_f32){b},
                                          (sf_f32){lane[t]}, SF_RNE, &env0)
                                   .bits;
        }
    for (size_t off = 4; off >= 1; off /= 2) {
        for (size_t t = 0; t < 8; t++)
            nxt[t] = add32(lane[t], lane[t ^ off]);
        memcpy(lane, nxt, sizeof lane);
    }
    return lane[0];
}

static void
fa2_backward(const inputs *in, size_t bm, size_t bn, size_t nsplits,
             const char *mb_model, const uint32_t *o, const uint32_t *lse,
             uint32_t *delta, uint32_t *dq, uint32_t *dk, uint32_t *dv)
{
    const fa_config *c = &in->c;
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    size_t tm = (nq + bm - 1) / bm, tn = (nk + bn - 1) / bn;
    uint32_t sc = fa_scale_bits(c), sl2 = fa_scale_log2_bits(c);
    uint32_t *acc = ft_alloc(nsplits * nq * d, 4);
    uint32_t *adk = ft_alloc(nk * d, 4), *adv = ft_alloc(nk * d, 4);
    uint32_t pt[64][64], dst[64][64];

    for (size_t i = 0; i < nq; i++)
        delta[i] = dot_do_o(in->dw + i * d, o + i * d, d);
    for (size_t nb = 0; nb < tn; nb++) {
        size_t c0 = nb * bn, nc = nk - c0 < bn ? nk - c0 : bn;
        long long mmin = 0;
        if (c->causal) {
            mmin = ((long long)c0 + (long long)nq - (long long)nk)
                   / (long long)bm;
            if (mmin < 0)
                mmin = 0;
        }
        for (long long mb = (long long)tm - 1; mb >= mmin; mb--) {
            size_t r0 = (size_t)mb * bm, nr = nq - r0 < bm ? nq - r0 : bm;
            for (size_t i = 0; i < nr; i++) {
                uint32_t lse2 = lse[r0 + i] == NEG_INF
                                    ? 0
                                    : mul32(lse[r0 + i], 0x3FB8AA3Bu);
                for (size_t j = 0; j < nc; j++) {
                    uint32_t s =
                        masked(c, r0 + i, c0 + j)
                            ? NEG_INF
                            : dotm("sm90", in->qw + (r0 + i) * d, 1,
                                   in->kw + (c0 + j) * d, 1, d, 0, true, true);
                    uint32_t p =
                        fa_exp_eval(NULL, true, sub32(mul32(s, sl2), lse2));
                    uint32_t dp =
                        dotm(mb_model, in->dw + (r0 + i) * d, 1,
                             in->vw + (c0 + j) * d, 1, d, 0, true, true);
                    uint32_t ds = mul32(p, sub32(dp, delta[r0 + i]));
                    pt[j][i] = r16(p);
                    dst[j][i] = r16(ds);
                }
            }
            /* acc_dv += P~^T dO, acc_dk += dS~^T Q (k = the block's rows) */
            for (size_t j = 0; j < nc; j++)
                for (size_t cc = 0; cc < d; cc++) {
                    uint32_t *x = &adv[(c0 + j) * d + cc];
                    *x = dotm(mb_model, pt[j], 1, in->dw + r0 * d + cc, d, nr,
                              *x, true, true);
                    x = &adk[(c0 + j) * d + cc];
                    *x = dotm(mb_model, dst[j], 1, in->qw + r0 * d + cc, d, nr,
                              *x, true, true);
                }
            /* dQ partial = dS~ K over the block's keys, atomicAdd */
            for (size_t i = 0; i < nr; i++) {
                uint32_t row[64];
                for (size_t j = 0; j < nc; j++)
                    row[j] = dst[j][i];
                for (size_t cc = 0; cc < d; cc++) {
                    uint32_t *x =
                        &acc[((nb % nsplits) * nq + r0 + i) * d + cc];
                    *x = add32(*x, dotm(mb_model, row, 1, in->kw + c0 * d + cc,
                                        d, nc, 0, true, true));
                }
            }
        }
    }
    for (size_t x = 0; x < nq * d; x++) {
        uint32_t t = 0;
        for (size_t sp = 0; sp < nsplits; sp++)
            t = add32(t, acc[sp * nq * d + x]);
        dq[x] = r16(mul32(t, sc));
    }
    for (size_t x = 0; x < nk * d; x++) {
        dk[x] = r16(mul32(adk[x], sc));
        dv[x] = r16(adv[x]);
    }
    free(acc);
    free(adk);
    free(adv);
}

/* The sm90 backward, and the same with a BF16-stored accumulator for the
   backward's products (fma-chain-bf16acc), whose results depend on the
   order of every chain step at BF16 level: the walk of the query blocks,
   the dQ buffers and the k order become visible in the outputs. */
START_TEST(test_fa2_backward)
{
    tst_rng rng;
    fa_config c = fa_config_default(FA_POLICY_FA2);
    inputs in;
    size_t nq = 70, nk = 53, d = 40, bad = 0;
    uint32_t *o = ft_alloc(nq * d, 4), *lse = ft_alloc(nq, 4);
    uint32_t *d1 = ft_alloc(nq, 4), *d2 = ft_alloc(nq, 4);
    uint32_t *g1 = ft_alloc(3 * nq * d, 4), *g2 = ft_alloc(3 * nq * d, 4);
    static const char *const models[] = {"sm90", "fma-chain-bf16acc"};

    tst_rng_init(&rng, 503);
    c.shape = (fa_shape){1, 1, nq, nk, d};
    c.causal = true;
    c.br_bwd = 32;
    c.bc_bwd = 16;
    c.dq_splits = 3;
    inputs_init(&in, &c, &rng);
    ft_forward(&in.c, in.q, in.k, in.v, o, lse, NULL);
    for (int m = 0; m < 2; m++) {
        in.c.mma_bwd = sf_mma_preset_by_name(models[m]);
        ck_assert_ptr_nonnull(in.c.mma_bwd);
        /* dQ at 0, dK at nq d, dV at (nq + nk) d */
        fa2_backward(&in, 32, 16, 3, models[m], o, lse, d1, g1, g1 + nq * d,
                     g1 + (nq + nk) * d);
        ft_backward(&in.c, in.q, in.k, in.v, o, lse, in.dout, d2, g2,
                    g2 + nq * d, g2 + (nq + nk) * d, NULL);
        bad += report("fa2 delta", d1, d2, nq);
        bad += report("fa2 dQ", g1, g2, nq * d);
        bad += report("fa2 dK", g1 + nq * d, g2 + nq * d, nk * d);
        bad +=
            report("fa2 dV", g1 + (nq + nk) * d, g2 + (nq + nk) * d, nk * d);
    }
    ck_assert_uint_eq(bad, 0);
    FT_FREE(o, lse, d1, d2, g1, g2);
    inputs_free(&in);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_policies");
    TCase *tc = tst_add_tcase(s, "policies", 120);

    tcase_add_test(tc, test_repo);
    tcase_add_test(tc, test_algorithm1);
    tcase_add_test(tc, test_fa2_backward);
    return tst_run_suite(s);
}
