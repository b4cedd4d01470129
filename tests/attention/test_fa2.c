/* test_fa2.c -- the fa2 policy: P~ of the row max is exactly 1, the KV
   blocks in reverse, the kernel's tiles for d = 64 and 128, a
   straightforward re-implementation of the kernel's steps (thread
   layout of the row sums written out) bit for bit on one small case,
   agreement with the fp32 policy within a BF16 bound, LSE within an FP32
   bound */
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
    uint16_t *q, *k, *v;
    uint32_t *o, *lse, *s, *p, *m, *l;
} bufs;

static void
bufs_init(bufs *b, const fa_config *c, size_t tc, tst_rng *rng, double qk)
{
    b->q = ft_alloc(ft_nq_d(c), 2);
    b->k = ft_alloc(ft_nk_d(c), 2);
    b->v = ft_alloc(ft_nk_d(c), 2);
    b->o = ft_alloc(ft_nq_d(c), 4);
    b->lse = ft_alloc(ft_rows(c), 4);
    b->s = ft_alloc(ft_nq_nk(c), 4);
    b->p = ft_alloc(ft_nq_nk(c), 4);
    b->m = ft_alloc(ft_rows(c) * tc, 4);
    b->l = ft_alloc(ft_rows(c) * tc, 4);
    ft_fill_uniform(rng, b->q, ft_nq_d(c), -qk, qk);
    ft_fill_uniform(rng, b->k, ft_nk_d(c), -qk, qk);
    ft_fill_normal(rng, b->v, ft_nk_d(c), 0.0, 1.0);
}

static void
bufs_free(bufs *b)
{
    FT_FREE(b->q, b->k, b->v, b->o, b->lse, b->s, b->p, b->m, b->l);
}

static void
run_fa2(const fa_config *c, bufs *b)
{
    fa_capture cap;

    memset(&cap, 0, sizeof cap);
    cap.s = b->s;
    cap.p = b->p;
    cap.m = b->m;
    cap.l = b->l;
    ft_forward(c, b->q, b->k, b->v, b->o, b->lse, &cap);
}

/* The kernel's tiles (d = 64: 128 x 128, d = 128: 128 x 64), the reverse
   order of the running max, and P~ = 1 at each row's maximum. */
START_TEST(test_tiles_order_pmax)
{
    tst_rng rng;

    tst_rng_init(&rng, 201);
    for (int t = 0; t < 2; t++) {
        size_t d = t == 0 ? 64 : 128, bc = t == 0 ? 128 : 64;
        size_t nq = 40, nk = 300, tc = (nk + bc - 1) / bc;
        fa_config c = ft_cfg(FA_POLICY_FA2, 1, 1, nq, nk, d);
        bufs b;
        bufs_init(&b, &c, tc, &rng, 2.0);
        run_fa2(&c, &b);
        for (size_t i = 0; i < nq; i++) {
            uint32_t run_m = 0xFF800000u;
            size_t arg = 0;
            for (size_t vi = 0; vi < tc; vi++) {
                size_t c0 = (tc - 1 - vi) * bc;
                size_t c1 = c0 + bc < nk ? c0 + bc : nk;
                for (size_t j = c0; j < c1; j++)
                    if (ft_f32(b.s[i * nk + j]) > ft_f32(run_m)) {
                        run_m = b.s[i * nk + j];
                        arg = j;
                    }
                ck_assert_uint_eq(b.m[i * tc + vi], run_m);
            }
            /* exp2(RN(s sl2) - RN(m sl2)) = exp2(0) at the max */
            ck_assert_uint_eq(b.p[i * nk + arg], 0x3F800000u);
        }
        bufs_free(&b);
    }
}
END_TEST

/*----------------------------------------------------------------------------
 * A straightforward re-implementation, written from the kernel's steps
 * (flash_fwd_kernel.h, softmax.h) without the library's code: one query
 * row at a time, the quad's four threads and their columns written out.
 *--------------------------------------------------------------------------*/
static uint32_t
f_mul(uint32_t a, uint32_t b, sf_env *e)
{
    return sf_f32_mul((sf_f32){a}, (sf_f32){b}, SF_RNE, e).bits;
}

static uint32_t
f_sub(uint32_t a, uint32_t b, sf_env *e)
{
    return sf_f32_sub((sf_f32){a}, (sf_f32){b}, SF_RNE, e).bits;
}

static uint32_t
f_add(uint32_t a, uint32_t b, sf_env *e)
{
    return sf_f32_add((sf_f32){a}, (sf_f32){b}, SF_RNE, e).bits;
}

static bool
f_gt(uint32_t a, uint32_t b)
{
    return ft_f32(a) > ft_f32(b);
}

static void
fa2_row(const fa_config *c, const bufs *b, size_t i, uint32_t *o,
        uint32_t *lse, uint32_t *l_out)
{
    const sf_mma_model *mm = sf_mma_preset_by_name("sm90");
    size_t nq = c->shape.nq, nk = c->shape.nk, d = c->shape.d;
    size_t bm = c->br, bn = c->bc, tc = (nk + bn - 1) / bn;
    uint32_t sl2 = fa_scale_log2_bits(c), sc = fa_scale_bits(c);
    uint32_t m = 0xFF800000u, sum[4] = {0, 0, 0, 0}, acc[256];
    uint32_t sblk[256], pblk[256];
    uint16_t pb[256];
    long long mb = (long long)(i / bm), nmax;
    sf_env e = SF_ENV_IEEE;

    /* n_block_max for the causal mask */
    nmax = (long long)tc;
    if (c->causal) {
        long long x = (mb + 1) * (long long)bm + (long long)nk - (long long)nq;
        long long cd = (x + (long long)bn - 1) / (long long)bn;
        if (cd < nmax)
            nmax = cd;
    }
    if (nmax <= 0) {
        for (size_t cc = 0; cc < d; cc++)
            o[cc] = 0;
        *lse = 0x7F800000u;
        *l_out = 0;
        return;
    }
    for (size_t cc = 0; cc < d; cc++)
        acc[cc] = 0;
    for (long long nb = nmax - 1; nb >= 0; nb--) {
        bool first = nb == nmax - 1;
        size_t c0 = (size_t)nb * bn;
        uint32_t mprev = m, bmax = 0xFF800000u, ms, scale = 0x3F800000u;
        /* S = Q K^T, masked to -Inf (also past Nk) */
        for (size_t jj = 0; jj < bn; jj++) {
            size_t j = c0 + jj;
            bool masked = j >= nk
                          || (c->causal
                              && (long long)j > (long long)i + (long long)nk
                                                    - (long long)nq);
            sblk[jj] = masked ? 0xFF800000u
                              : (uint32_t)sf_mma_dot(
                                  mm, &sf_format_bf16, b->q + i * d, 1,
                                  &sf_format_bf16, b->k + j * d, 1, d, 0, &e);
            if (f_gt(sblk[jj], bmax))
                bmax = sblk[jj];
        }
        if (first) {
            m = bmax;
        } else {
            uint32_t cur;
            if (f_gt(bmax, m))
                m = bmax;
            cur = m == 0xFF800000u ? 0 : m;
            scale =
                fa_exp_eval(NULL, true, f_mul(f_sub(mprev, cur, &e), sl2, &e));
            /* the row-sum partials: rescaled below, fused with their first
               addition (one FFMA) */
            for (size_t cc = 0; cc < d; cc++)
                acc[cc] = f_mul(acc[cc], scale, &e);
        }
        ms = m == 0xFF800000u ? 0 : f_mul(m, sl2, &e);
        /* thread t of the quad: columns 8n + 2t + {0, 1}, n = 0, 1, ... */
        for (int t = 0; t < 4; t++)
            for (size_t n8 = 0; n8 < bn / 8; n8++)
                for (size_t jj = 0; jj < 2; jj++) {
                    size_t col = 8 * n8 + 2 * (size_t)t + jj;
                    uint32_t p = fa_exp_eval(
                        NULL, true, f_sub(f_mul(sblk[col], sl2, &e), ms, &e));
                    pblk[col] = p;
                    if (first && n8 == 0 && jj == 0)
                        sum[t] = p;
                    else if (n8 == 0 && jj == 0)
                        sum[t] = sf_f32_fma((sf_f32){sum[t]}, (sf_f32){scale},
                                            (sf_f32){p}, SF_RNE, &e)
                                     .bits;
                    else
                        sum[t] = f_add(sum[t], p, &e);
                }
        for (size_t col = 0; col < bn; col++)
            pb[col] = sf_f32_to_bf16((sf_f32){pblk[col]}, SF_RNE, &e).bits;
        /* O += P~ V: the block's keys (zero past Nk add nothing) */
        for (size_t cc = 0; cc < d; cc++) {
            size_t w = nk - c0 < bn ? nk - c0 : bn;
            acc[cc] = (uint32_t)sf_mma_dot(
                mm, &sf_format_bf16, pb, 1, &sf_format_bf16,
                b->v + c0 * d + cc, (ptrdiff_t)d, w, first ? 0 : acc[cc], &e);
        }
    }
    {
        uint32_t l =
            f_add(f_add(sum[0], sum[2], &e), f_add(sum[1], sum[3], &e), &e);
        bool zn = ft_f32(l) == 0 || isnan(ft_f32(l));
        uint32_t inv =
            zn ? 0x3F800000u
               : sf_f32_div((sf_f32){0x3F800000u}, (sf_f32){l}, SF_RNE, &e)
                     .bits;
        for (size_t cc = 0; cc < d; cc++)
            o[cc] = (uint32_t)sf_f32_to_bf16((sf_f32){f_mul(acc[cc], inv, &e)},
                                             SF_RNE, &e)
                        .bits
                    << 16;
        *lse = zn ? 0x7F800000u
                  : sf_f32_fma((sf_f32){m}, (sf_f32){sc},
                               (sf_f32){fa_logf_cr(l)}, SF_RNE, &e)
                        .bits;
        *l_out = l;
    }
}

START_TEST(test_reimplementation)
{
    tst_rng rng;
    /* causal, Nq > Nk (rows with no key; in the second shape whole query
       blocks the kernel skips), Nk not a multiple of the block, d = 40,
       small blocks so that several are visited */
    static const size_t shapes[][5] = {{70, 53, 40, 32, 16},
                                       {150, 40, 24, 32, 16}};

    tst_rng_init(&rng, 202);
    for (size_t t = 0; t < 2; t++) {
        size_t nq = shapes[t][0], nk = shapes[t][1], d = shapes[t][2], tc;
        fa_config c = ft_cfg(FA_POLICY_FA2, 1, 1, nq, nk, d);
        bufs b;
        size_t bad = 0;

        c.causal = true;
        c.br = shapes[t][3];
        c.bc = shapes[t][4];
        tc = (nk + c.bc - 1) / c.bc;
        bufs_init(&b, &c, tc, &rng, 2.0);
        run_fa2(&c, &b);
        for (size_t i = 0; i < nq; i++) {
            uint32_t o[64], lse, l;
            fa2_row(&c, &b, i, o, &lse, &l);
            for (size_t cc = 0; cc < d; cc++)
                if (o[cc] != b.o[i * d + cc] && bad++ < TST_MAX_PRINT)
                    printf("fa2 O[%zu][%zu] re-implementation %08x library "
                           "%08x\n",
                           i, cc, (unsigned)o[cc], (unsigned)b.o[i * d + cc]);
            if (lse != b.lse[i] && bad++ < TST_MAX_PRINT)
                printf("fa2 LSE[%zu] %08x library %08x\n", i, (unsigned)lse,
                       (unsigned)b.lse[i]);
            if (l != b.l[i * tc + tc - 1] && bad++ < TST_MAX_PRINT)
                printf("fa2 l[%zu] %08x library %08x\n", i, (unsigned)l,
                       (unsigned)b.l[i * tc + tc - 1]);
        }
        ck_assert_uint_eq(bad, 0);
        bufs_free(&b);
    }
}
END_TEST

/*----------------------------------------------------------------------------
 * fa2 against the exact attention and the fp32 policy.
 *
 * With b = 2^-8 (BF16), u = 2^-24, V = max |v| of the column, the error of
 *fa2's O has: P~ rounded to BF16 in the numerator only (the row sum takes the
 * FP32 p): at most b sum pi |v| <= b V; O rounded to BF16: b |O| <= b V;
 * and FP32-level terms: an sm90 block (16 products and C, each truncated
 * at 2^(emax - 25), the sum truncated to 24 bits) errs by less than
 * (17 2^-25 + 2^-23) sum |terms| < 2^-20 sum |terms|, so S errs by at most
 * K_S 2^-20 scale sum |q k| (K_S = ceil(d/16) chained blocks) and O~ by
 * K_O 2^-20 sum p |v| (K_O = ceil(Nk/16) + T, with the rescales); the
 * exponent of p, RN(RN(s sl2) - RN(m sl2)) with sl2 = scale log2(e)
 * (1 + 1.01u), errs by at most 4 u (|S| + |m| + 1) in natural units
 * (plus u for exp2); the row sums by gamma_{Nk + 2T + 2}; 1/l and the
 * product by 2u.  So
 *   |O - O*| <= 1.02 V (2.02 b + expm1(2 x) + K_O 2^-20 + gamma + 2u),
 *   x = Es + 4 u (2 Smax + 1) + u + T u (2 Smax + 1),
 * and |LSE - LSE*| <= 1.02 (Es + x + gamma + u (|log l| + |LSE*| + 2)).
 * The fp32 policy is within its own bound (fa_test.c) of O*, so the two
 * policies differ by at most the sum of the bounds.
 *--------------------------------------------------------------------------*/
START_TEST(test_vs_fp32)
{
    tst_rng rng;
    static const size_t shapes[][5] = {
        {1, 2, 64, 256, 64}, {1, 1, 48, 130, 128}, {2, 1, 33, 97, 40}};

    tst_rng_init(&rng, 203);
    for (size_t t = 0; t < 3; t++) {
        fa_config c = ft_cfg(FA_POLICY_FA2, shapes[t][0], shapes[t][1], shapes[t][2],
                          shapes[t][3], shapes[t][4]);
        fa_config c32;
        size_t nq = c.shape.nq, nk = c.shape.nk, d = c.shape.d, bad = 0;
        size_t bc = d <= 64 ? 128 : 64, tcount = (nk + bc - 1) / bc;
        bufs b;
        uint32_t *o32 = ft_alloc(ft_nq_d(&c), 4);
        uint32_t *l32 = ft_alloc(ft_rows(&c), 4);
        double *ro = ft_alloc(ft_nq_d(&c), 8), *rl = ft_alloc(ft_rows(&c), 8);
        double *rs = ft_alloc(ft_nq_nk(&c), 8);
        double *bo = ft_alloc(ft_nq_d(&c), 8), *bl = ft_alloc(ft_rows(&c), 8);
        double *bf = ft_alloc(ft_nq_d(&c), 8), *blf = ft_alloc(ft_rows(&c), 8);
        double sc;

        c.causal = t != 1;
        bufs_init(&b, &c, tcount, &rng, 2.0);
        run_fa2(&c, &b);
        c32 = c;
        c32.kernel = fa_kernel_of_policy(FA_POLICY_FP32);
        c32.order = FA_ORDER_FORWARD;
        c32.mma_qk = c32.mma_pv = c32.mma_bwd = NULL;
        ft_forward(&c32, b.q, b.k, b.v, o32, l32, NULL);
        ft_ref_forward(&c, b.q, b.k, b.v, ro, rl, rs, NULL);
        ft_fp32_forward_bounds(&c32, b.q, b.k, b.v, bo, bl);
        sc = ft_f32(fa_scale_bits(&c));
        for (size_t x = 0; x < ft_rows(&c); x++) {
            size_t hd = x / nq, i = x % nq;
            size_t vis = c.causal ? (i + nk >= nq ? i + nk - nq + 1 : 0) : nk;
            double es = 0, smax = 0, g, xx, ko;
            if (vis > nk)
                vis = nk;
            for (size_t j = 0; j < vis; j++) {
                double a = 0;
                for (size_t cc = 0; cc < d; cc++)
                    a += fabs(ft_bf(b.q[x * d + cc])
                              * ft_bf(b.k[(hd * nk + j) * d + cc]));
                es = fmax(es, (double)((d + 15) / 16) * 0x1p-20 * sc * a);
                smax = fmax(smax, fabs(rs[x * nk + j]));
            }
            g = (double)(nk + 2 * tcount + 2) * FT_U * 1.01;
            ko = (double)((nk + 15) / 16 + tcount);
            xx = es + 4 * FT_U * (2 * smax + 1) + FT_U
                 + (double)tcount * FT_U * (2 * smax + 1);
            for (size_t cc = 0; cc < d; cc++) {
                double vm = 0;
                for (size_t j = 0; j < vis; j++)
                    vm = fmax(vm, fabs(ft_bf(b.v[(hd * nk + j) * d + cc])));
                bf[x * d + cc] = 1.02 * vm
                                 * (2.02 * 0x1p-8 + expm1(2 * xx)
                                    + ko * 0x1p-20 + g + 2 * FT_U);
                /* against the fp32 policy: both bounds */
                bo[x * d + cc] += bf[x * d + cc];
            }
            blf[x] =
                vis == 0
                    ? 0
                    : 1.02
                          * (es + xx + g
                             + FT_U * (fabs(rl[x]) + smax + 2 + fabs(rl[x])));
        }
        /* O: against the exact and the fp32 policy; LSE: against the
           exact (no BF16 step feeds it).  A row with no key: the
           kernel's O = 0 and LSE = +Inf. */
        for (size_t x = 0; x < ft_rows(&c); x++)
            if (isinf(rl[x]))
                rl[x] = INFINITY;
        {
            double *o32d = ft_alloc(ft_nq_d(&c), 8);
            for (size_t x = 0; x < ft_nq_d(&c); x++)
                o32d[x] = ft_f32(o32[x]);
            bad += ft_check_close("fa2 O vs exact", b.o, ro, bf, ft_nq_d(&c));
            bad += ft_check_close("fa2 O vs fp32", b.o, o32d, bo, ft_nq_d(&c));
            bad += ft_check_close("fa2 LSE", b.lse, rl, blf, ft_rows(&c));
            free(o32d);
        }
        ck_assert_uint_eq(bad, 0);
        FT_FREE(o32, l32, ro, rl, rs, bo, bl, bf, blf);
        bufs_free(&b);
    }
}
END_TEST

/* The order matters: reverse and forward differ in some bits of O~ (O
   kept in FP32 by fp32-o, where the differences are not hidden by the
   BF16 rounding of O) and of l, and the models matter: an exact
   accumulation gives other bits than sm90's truncation. */
START_TEST(test_order_and_models)
{
    tst_rng rng;
    size_t nq = 32, nk = 256, d = 64;
    fa_config c = ft_cfg(FA_POLICY_FA2, 1, 1, nq, nk, d);
    bufs b;
    uint32_t *o2 = ft_alloc(nq * d, 4), *l2 = ft_alloc(nq, 4);

    tst_rng_init(&rng, 204);
    c.ablations = FA_ABL_FP32_O;
    bufs_init(&b, &c, 2, &rng, 2.0);
    run_fa2(&c, &b);
    c.order = FA_ORDER_FORWARD;
    ft_forward(&c, b.q, b.k, b.v, o2, l2, NULL);
    ck_assert_uint_gt(ft_count_diff(b.o, o2, nq * d), 0);
    c.order = FA_ORDER_REVERSE;
    c.mma_pv = sf_mma_preset_by_name("exact");
    ft_forward(&c, b.q, b.k, b.v, o2, l2, NULL);
    ck_assert_uint_gt(ft_count_diff(b.o, o2, nq * d), 0);
    free(o2);
    free(l2);
    bufs_free(&b);
}
END_TEST

/* The stage ablations.  fp32-ocast leaves out only the last rounding:
   RN16 of its O is the policy's O, bit for bit, while LSE is unchanged.
   fp32-p (fa2) feeds the FP32 P~ to the P~V product: RN16 of its
   captured P~ is the policy's P~, m and l are unchanged (they never see
   the BF16 P~), and O moves.  The converter RN16 here is sf_convert, not
   the policy's code path. */
static uint32_t
rn16(uint32_t x)
{
    sf_env env = SF_ENV_IEEE;
    uint16_t b =
        (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32, x, SF_RNE, &env);
    return (uint32_t)b << 16;
}

START_TEST(test_stage_ablations)
{
    static const fa_policy pols[] = {FA_POLICY_FA2, FA_POLICY_PAPER_EQ4};
    tst_rng rng;
    size_t nq = 48, nk = 256, d = 64;

    tst_rng_init(&rng, 205);
    for (size_t pi = 0; pi < 2; pi++) {
        fa_config c = fa_config_default(pols[pi]);
        bufs b, x;
        size_t n = nq * d, bad = 0, moved = 0;

        c.shape = (fa_shape){1, 1, nq, nk, d};
        c.bc = 64;
        bufs_init(&b, &c, 4, &rng, 2.0);
        bufs_init(&x, &c, 4, &rng, 2.0);
        memcpy(x.q, b.q, nq * d * 2);
        memcpy(x.k, b.k, nk * d * 2);
        memcpy(x.v, b.v, nk * d * 2);
        run_fa2(&c, &b);
        c.ablations = FA_ABL_FP32_OCAST;
        ck_assert_ptr_eq(fa_output_format(&c, "o"), &sf_format_f32);
        run_fa2(&c, &x);
        for (size_t i = 0; i < n; i++)
            if (rn16(x.o[i]) != b.o[i] && bad++ < 5)
                printf("fp32-ocast %s O[%zu]: %08x -> %08x, policy %08x\n",
                       fa_policy_name((fa_policy)fa_policy_parse(c.kernel->name)), i, x.o[i], rn16(x.o[i]),
                       b.o[i]);
        ck_assert_uint_eq(bad, 0);
        ck_assert_uint_eq(ft_count_diff(x.lse, b.lse, nq), 0);
        ck_assert_uint_gt(ft_count_diff(x.o, b.o, n), 0);
        if ((fa_policy)fa_policy_parse(c.kernel->name) == FA_POLICY_FA2) {
            c.ablations = FA_ABL_FP32_P;
            ck_assert_ptr_eq(fa_output_format(&c, "p"), &sf_format_f32);
            run_fa2(&c, &x);
            for (size_t i = 0; i < nq * nk; i++) {
                moved += x.p[i] != b.p[i];
                if (rn16(x.p[i]) != b.p[i] && bad++ < 5)
                    printf("fp32-p P[%zu]: %08x -> %08x, policy %08x\n", i,
                           x.p[i], rn16(x.p[i]), b.p[i]);
            }
            ck_assert_uint_eq(bad, 0);
            ck_assert_uint_gt(moved, 0);
            ck_assert_uint_eq(ft_count_diff(x.m, b.m, nq * 4), 0);
            ck_assert_uint_eq(ft_count_diff(x.l, b.l, nq * 4), 0);
            ck_assert_uint_gt(ft_count_diff(x.o, b.o, n), 0);
        } else {
            /* paper-eq4: P~ = exp(RN32(s - m)) in FP32; at the row's max
               it is still exactly 1 */
            c.ablations = FA_ABL_FP32_P;
            run_fa2(&c, &x);
            ck_assert_uint_gt(ft_count_diff(x.p, b.p, nq * nk), 0);
            ck_assert_uint_gt(ft_count_diff(x.o, b.o, n), 0);
        }
        bufs_free(&b);
        bufs_free(&x);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_fa2");
    TCase *tc = tst_add_tcase(s, "fa2", 120);

    tcase_add_test(tc, test_tiles_order_pmax);
    tcase_add_test(tc, test_reimplementation);
    tcase_add_test(tc, test_vs_fp32);
    tcase_add_test(tc, test_order_and_models);
    tcase_add_test(tc, test_stage_ablations);
    return tst_run_suite(s);
}
