/* reproduce_exact.c -- bf16emu reproduce's targets T1-T8, computed on
   crafted values through softfloat and MPFR */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/reproduce_local.h"

double
repro_f32v(uint32_t w)
{
    float f;

    memcpy(&f, &w, sizeof f);
    return (double)f;
}

double
repro_bf16v(uint16_t b)
{
    return repro_f32v((uint32_t)b << 16);
}

/*----------------------------------------------------------------------------
 * T1-T3: the Eq. 4 trace and its two companions, through softfloat.
 *--------------------------------------------------------------------------*/
typedef struct
{
    sf_event ev;
    unsigned n;
} last_event;

static void
keep_event(void *user, const sf_event *ev)
{
    last_event *l = user;

    l->ev = *ev;
    l->n++;
}

/* acc (FP32) + addend (FP32), then RN to BF16; the sum's flags, the
   conversion's event. */
static uint16_t
add_then_round(uint32_t acc, uint32_t addend, uint32_t *sum, unsigned *flags,
               sf_event *ev)
{
    sf_env env = cli_env_ieee();
    last_event le = {.n = 0};
    sf_event_sink sink = {keep_event, &le};
    uint16_t b;

    *sum = (uint32_t)sf_add(&sf_format_f32, acc, addend, SF_RNE, &env);
    *flags = env.flags;
    env.events = &sink;
    b = (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32, *sum, SF_RNE,
                             &env);
    *ev = le.ev;
    return b;
}

void
repro_trace_targets(repro *r, cli_buf *dat)
{
    uint32_t sum;
    unsigned fl;
    sf_event ev;
    uint16_t b;
    double err;

    /* the three always: eq4-trace.dat holds them all, whichever of them
       --only asks for (the others' rows are not reported) */
    cli_buf_puts(dat, "# case error(ulps of BF16 at 4) label\n");
    {
        b = add_then_round(0xC01A0E2Eu, 0xC0130000u, &sum, &fl, &ev);
        err = repro_bf16v(b) - repro_f32v(sum);
        repro_result(
            &r->t[T1],
            sum == 0xC0968717u && !(fl & SF_FLAG_INEXACT) && b == 0xC097
                && ev.guard == 1 && ev.sticky == 1
                && err == -0.014759540557861328,
            "sum 0x%08X (%.17g, %s), guard %u, sticky %u, BF16 0x%04X "
            "(%.17g), error %.17g",
            sum, repro_f32v(sum), fl & SF_FLAG_INEXACT ? "inexact" : "exact",
            ev.guard, ev.sticky, b, repro_bf16v(b), err);
        cli_buf_printf(dat, "0 %.17g \"T1 (residual: rounds away)\"\n",
                       err / 0.03125);
    }
    {
        b = add_then_round(0xC01A0000u, 0xC0130000u, &sum, &fl, &ev);
        err = repro_bf16v(b) - repro_f32v(sum);
        repro_result(&r->t[T2],
                     sum == 0xC0968000u && ev.tie && b == 0xC096
                         && err == 0.015625,
                     "sum 0x%08X, %s, BF16 0x%04X (%.17g), error %+.17g", sum,
                     ev.tie ? "a tie" : "not a tie", b, repro_bf16v(b), err);
        cli_buf_printf(dat, "1 %.17g \"T2 (no residual: tie to even)\"\n",
                       err / 0.03125);
    }
    {
        uint32_t s0;
        unsigned f0;
        sf_event e0;
        /* -0.85546875 + -0.0859375 in FP32, then the residual -2^-11 */
        (void)add_then_round(0xBF5B0000u, 0xBDB00000u, &s0, &f0, &e0);
        b = add_then_round(s0, 0xBA000000u, &sum, &fl, &ev);
        err = repro_bf16v(b) - (-0.94189453125);
        repro_result(
            &r->t[T3],
            s0 == 0xBF710000u && !(f0 & SF_FLAG_INEXACT) && sum == 0xBF712000u
                && ev.guard == 0 && b == 0xBF71 && err == 0.00048828125,
            "-0.85546875 + -0.0859375 = 0x%08X (%s); + residual = 0x%08X "
            "(%.17g); guard %u; BF16 0x%04X (%.17g), error %+.17g",
            s0, f0 & SF_FLAG_INEXACT ? "inexact" : "exact", sum,
            repro_f32v(sum), ev.guard, b, repro_bf16v(b), err);
        cli_buf_printf(dat, "2 %.17g \"T3 (guard 0: truncates)\"\n",
                       err / 0.00390625);
    }
}

/*----------------------------------------------------------------------------
 * T4: products.
 *--------------------------------------------------------------------------*/
void
repro_t4_products(repro *r)
{
    uint64_t n = r->quick ? 20000 : 200000, inexact = 0, lt1 = 0, lt1_low = 0,
             one_low = 0, ones = 0;

    for (uint64_t i = 0; i < n; i++) {
        sf_env env = cli_env_ieee();
        uint64_t h = gen_draw(4, 9, i, 0);
        double u = 0.01 + (10 - 0.01) * (double)(h >> 11) * 0x1p-53;
        uint16_t p, v;
        uint32_t prod;
        gen_params g = gen_params_default();
        g.seed = 4;
        g.v_mean = -1.5;
        g.v_std = 0.4;
        p = (uint16_t)sf_from_double(&sf_format_bf16, exp(-u), SF_RNE, &env);
        if (i % 10 == 0)
            p = 0x3F80; /* P~ = 1 */
        {
            uint16_t q[1], k[1], vv[1];
            gen_head(&g, 1.0f, 1, 1, 1, i, q, k, vv, NULL);
            v = vv[0];
        }
        env.flags = 0;
        prod = (uint32_t)sf_mul(&sf_format_f32, (uint64_t)p << 16,
                                (uint64_t)v << 16, SF_RNE, &env);
        inexact += (env.flags & SF_FLAG_INEXACT) != 0
                   || repro_f32v(prod) != repro_bf16v(p) * repro_bf16v(v);
        if (p == 0x3F80) {
            ones++;
            one_low += (prod & 0xFFFFu) != 0;
        } else {
            lt1++;
            lt1_low += (prod & 0xFFFFu) != 0;
        }
    }
    repro_result(
        &r->t[T4],
        inexact == 0 && one_low == 0 && (double)lt1_low >= 0.9 * (double)lt1,
        "%" PRIu64 " products: %" PRIu64 " inexact; P~ = 1: %" PRIu64
        " of %" PRIu64 " with low bits; P~ < 1: %.1f%% with non-zero low "
        "16 bits",
        n, inexact, one_low, ones, 100.0 * (double)lt1_low / (double)lt1);
}

/*----------------------------------------------------------------------------
 * T5, T6: exact arithmetic (MPFR).
 *--------------------------------------------------------------------------*/
/* The inputs of T5 and T6 (NQ x D queries, NK x D keys) and the arrays
   of their exact results. */
typedef struct
{
    size_t nq, nk, d;
    uint16_t *q, *k, *v, *dout;
    double *d1, *d2, *dq1, *dq2, *p, *kd, *pk; /* T5 */
    double *o1, *o2, *l1, *l2, *pmax;          /* T6 */
} t56_work;

/* T5: dQ for two deltas against Eq. 1 (C the configuration, SCALE
   alpha). */
static void
t5_eq1(repro *r, const fa_config *c, float scale, t56_work *w)
{
    size_t nq = w->nq, nk = w->nk, d = w->d;
    ax_outputs ox;
    double worst = 0, big = 0, scale_d = (double)scale;
    int rc1, rc2;

    memset(&ox, 0, sizeof ox);
    ox.delta.d = w->d1;
    ox.dq.d = w->dq1;
    ox.p.d = w->p;
    rc1 = ax_backward_ex(c, NULL, w->q, w->k, w->v, w->dout, NULL, &ox);
    /* delta2: delta1 moved by a per-row amount */
    for (size_t i = 0; i < nq; i++)
        w->d2[i] = w->d1[i] + ldexp((double)((int)(i % 7) - 3), -9);
    rc2 = ax_backward(c, NULL, w->q, w->k, w->v, w->dout, w->d2, NULL, w->dq2,
                      NULL, NULL);
    for (size_t j = 0; j < nk * d; j++)
        w->kd[j] = repro_bf16v(w->k[j]);
    if (rc1 != 0 || rc2 != 0
        || grad_pk(nq, nk, d, w->p, w->kd, w->pk) != GRAD_OK) {
        repro_result(&r->t[T5], false, "the exact backward failed");
        return;
    }
    for (size_t i = 0; i < nq; i++)
        for (size_t c2 = 0; c2 < d; c2++) {
            double lhs = w->dq1[i * d + c2] - w->dq2[i * d + c2];
            double rhs = scale_d * (w->d2[i] - w->d1[i]) * w->pk[i * d + c2];
            worst = fmax(worst, fabs(lhs - rhs));
            big = fmax(big, fabs(rhs));
        }
    /* normwise: the doubles of dQ(delta1) and dQ(delta2) carry
       2^-53 of |dQ| each, which their difference keeps */
    worst /= big;
    repro_result(&r->t[T5], worst < 1e-12,
                 "%zu x %zu elements of dQ(delta1) - dQ(delta2) against "
                 "alpha diag(delta2 - delta1) PK (MPFR, 256 bits): largest "
                 "difference %.3g of the largest element",
                 nq, d, worst);
}

/* T6: Algorithm 1 in exact arithmetic with and without the fix (C0 the
   configuration without it). */
static void
t6_fix_exact(repro *r, const fa_config *c0, t56_work *w)
{
    size_t nq = w->nq, d = w->d;
    fa_config c = *c0;
    ax_options opt = {0, AX_TILED};
    ax_outputs o;
    double wo = 0, wl = 0, pm = 0;
    int rc1, rc2;

    memset(&o, 0, sizeof o);
    c.bc = 0; /* one KV block: the maxima are repeated within it */
    o.o.d = w->o1;
    o.lse.d = w->l1;
    rc1 = ax_forward_ex(&c, &opt, w->q, w->k, w->v, &o);
    c.fix = fa_fix_default(FA_FIX_BETA);
    o.o.d = w->o2;
    o.lse.d = w->l2;
    o.pmax.d = w->pmax;
    rc2 = ax_forward_ex(&c, &opt, w->q, w->k, w->v, &o);
    for (size_t i = 0; i < nq * d && rc1 == 0 && rc2 == 0; i++)
        wo = fmax(wo, fabs(w->o1[i] - w->o2[i]) / fabs(w->o1[i]));
    for (size_t i = 0; i < nq && rc1 == 0 && rc2 == 0; i++) {
        wl = fmax(wl, fabs(w->l1[i] - w->l2[i]) / fabs(w->l1[i]));
        pm = fmax(pm, w->pmax[i]);
    }
    repro_result(&r->t[T6],
                 rc1 == 0 && rc2 == 0 && wo < 1e-60 && wl < 1e-60 && pm < 1,
                 "Algorithm 1 in MPFR (256 bits), %zu rows with 3 repeated "
                 "maxima: largest relative difference of O %.3g, "
                 "of LSE %.3g; largest P~ with the fix %.6g (one KV block)",
                 nq, wo, wl, pm);
}

void
repro_t5_t6(repro *r)
{
    size_t nq = 32, nk = 64, d = 16;
    gen_params g = gen_params_default();
    fa_config c = fa_config_default(FA_POLICY_PAPER_EQ4);
    t56_work w = {.nq = nq,
                  .nk = nk,
                  .d = d,
                  .q = malloc(nq * d * 2),
                  .k = malloc(nk * d * 2),
                  .v = malloc(nk * d * 2),
                  .dout = malloc(nq * d * 2),
                  .d1 = malloc(nq * 8),
                  .d2 = malloc(nq * 8),
                  .dq1 = malloc(nq * d * 8),
                  .dq2 = malloc(nq * d * 8),
                  .p = malloc(nq * nk * 8),
                  .kd = malloc(nk * d * 8),
                  .pk = malloc(nq * d * 8),
                  .o1 = malloc(nq * d * 8),
                  .o2 = malloc(nq * d * 8),
                  .l1 = malloc(nq * 8),
                  .l2 = malloc(nq * 8),
                  .pmax = malloc(nq * 8)};
    float scale;
    uint32_t sb;

    if (!w.q || !w.k || !w.v || !w.dout || !w.d1 || !w.d2 || !w.dq1 || !w.dq2
        || !w.p || !w.kd || !w.pk || !w.o1 || !w.o2 || !w.l1 || !w.l2
        || !w.pmax) {
        repro_result(&r->t[T5], false, "out of memory");
        repro_result(&r->t[T6], false, "out of memory");
        goto out;
    }
    c.shape = (fa_shape){1, 1, nq, nk, d};
    sb = fa_scale_bits(&c);
    memcpy(&scale, &sb, sizeof scale);
    g.kind = GEN_REPEATED;
    g.repeat = 3;
    g.v_mean = -1.5;
    g.v_std = 0.4;
    g.seed = 5;
    gen_head(&g, scale, nq, nk, d, 0, w.q, w.k, w.v, w.dout);
    if (r->t[T5].run)
        t5_eq1(r, &c, scale, &w);
    if (r->t[T6].run)
        t6_fix_exact(r, &c, &w);
out:
    free(w.q);
    free(w.k);
    free(w.v);
    free(w.dout);
    free(w.d1);
    free(w.d2);
    free(w.dq1);
    free(w.dq2);
    free(w.p);
    free(w.kd);
    free(w.pk);
    free(w.o1);
    free(w.o2);
    free(w.l1);
    free(w.l2);
    free(w.pmax);
}

/*----------------------------------------------------------------------------
 * T7, T8: the fix's failure mode and the repo's detector, on crafted
 * rows.  Q = e0, K[j] = s_j / scale e0: the scores are s_j exactly.
 *--------------------------------------------------------------------------*/
static void
crafted(size_t nk, size_t d, const double *s, float scale, uint16_t *q,
        uint16_t *k, uint16_t *v)
{
    sf_env env = cli_env_ieee();

    memset(q, 0, d * 2);
    memset(k, 0, nk * d * 2);
    q[0] = 0x3F80;
    for (size_t j = 0; j < nk; j++) {
        k[j * d] = (uint16_t)sf_from_double(&sf_format_bf16, s[j] / scale,
                                            SF_RNE, &env);
        for (size_t c = 0; c < d; c++)
            v[j * d + c] = (uint16_t)sf_from_double(
                &sf_format_bf16, -1.0 - 0.01 * (double)((j + c) % 7), SF_RNE,
                &env);
    }
}

/* The crafted rows of T7 and T8 (up to NK keys of D columns) and their
   outputs. */
typedef struct
{
    size_t d, nk;
    uint16_t *q, *k, *v;
    uint32_t *o, *m;
    double *s;
} t78_work;

/* T7: the fix applied to a single large maximum, and where exp
   underflows. */
static void
t7_always(repro *r, t78_work *w)
{
    size_t d = w->d;
    uint32_t lse;

    /* one large maximum at 110, the others far below */
    fa_config c = fa_config_default(FA_POLICY_FP32);
    fa_capture cap;
    float scale = 0.25f;
    sf_env env = cli_env_ieee();
    bool nan_always, fin_beta, sub1, zero_f32, zero_bf16, nz_bf16;
    uint32_t e873, e1040, e928, e930;
    c.shape = (fa_shape){1, 1, 1, 64, d};
    c.scale = scale;
    for (size_t j = 0; j < 64; j++)
        w->s[j] = j == 5 ? 110.0 : 110.0 - 20.0 - (double)j * 0.25;
    crafted(64, d, w->s, scale, w->q, w->k, w->v);
    memset(&cap, 0, sizeof cap);
    c.fix = fa_fix_default(FA_FIX_ALWAYS);
    fa_forward(&c, w->q, w->k, w->v, w->o, &lse, NULL, &env);
    nan_always = isnan(repro_f32v(w->o[0]));
    c.fix = fa_fix_default(FA_FIX_BETA);
    fa_forward(&c, w->q, w->k, w->v, w->o, &lse, NULL, &env);
    fin_beta = isfinite(repro_f32v(w->o[0]));
    e873 = fa_expf_cr(0xC2AF0000u);  /* -87.5 */
    e1040 = fa_expf_cr(0xC2D00000u); /* -104 */
    e928 = fa_expf_cr(0xC2B9A000u);  /* -92.8125 */
    e930 = fa_expf_cr(0xC2BA0000u);  /* -93 */
    sub1 = e873 != 0 && e873 < 0x00800000u;
    zero_f32 = e1040 == 0;
    {
        sf_env e2 = cli_env_ieee();
        zero_bf16 =
            (sf_convert(&sf_format_bf16, &sf_format_f32, e930, SF_RNE, &e2)
             & 0x7FFF)
            == 0;
        nz_bf16 =
            (sf_convert(&sf_format_bf16, &sf_format_f32, e928, SF_RNE, &e2)
             & 0x7FFF)
            != 0;
    }
    repro_result(&r->t[T7],
                 nan_always && fin_beta && sub1 && zero_f32 && zero_bf16
                     && nz_bf16,
                 "max 110 alone (fp32 policy): 'always' gives O = %s, 'beta' "
                 "O = %.6g; exp(-87.5) = 0x%08X (%s), exp(-104) = 0x%08X; "
                 "in BF16 exp(-92.8125) %s 0, exp(-93) %s 0",
                 nan_always ? "NaN" : "finite", repro_f32v(w->o[0]), e873,
                 sub1 ? "subnormal" : "normal", e1040,
                 nz_bf16 ? "!=" : "==", zero_bf16 ? "==" : "!=");
}

/* T8: the repo's detector of repeated maxima on crafted rows. */
static void
t8_detector(repro *r, t78_work *w)
{
    size_t d = w->d, nk = w->nk;
    uint32_t lse;

    fa_config c = fa_config_default(FA_POLICY_REPO);
    fa_capture cap;
    float scale = 0.125f;
    bool ok = true;
    char buf[400];
    size_t o_len = 0;
    static const struct
    {
        double a, b; /* the two largest scores */
        size_t jb;   /* where the second one is */
        double want;
    } cases[] = {{2.0, 2.0, 100, 4.0},    {-1.5, -1.5, 100, 0.0},
                 {2.0, 1.0, 100, 2.0},    {2.0, 2.0, 600, 2.0},
                 {2.0, 1.9995, 100, 4.0}, {-0.5, -0.5, 7, 0.0}};
    c.shape = (fa_shape){1, 1, 1, nk, d};
    c.scale = scale;
    c.fix = fa_fix_default(FA_FIX_BETA);
    buf[0] = '\0';
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        sf_env env = cli_env_ieee();
        double got;
        for (size_t j = 0; j < nk; j++)
            w->s[j] = cases[ci].a - 6.0 - (double)(j % 11) * 0.125;
        w->s[3] = cases[ci].a;
        w->s[cases[ci].jb] = cases[ci].b;
        crafted(nk, d, w->s, scale, w->q, w->k, w->v);
        memset(&cap, 0, sizeof cap);
        cap.m = w->m;
        fa_forward(&c, w->q, w->k, w->v, w->o, &lse, &cap, &env);
        /* m after the last block (2 blocks of 512) */
        got = repro_f32v(w->m[1]);
        ok = ok && got == cases[ci].want;
        o_len += (size_t)snprintf(
            buf + o_len, sizeof buf - o_len, "%s(%g, %g%s) -> m %g",
            ci ? "; " : "", cases[ci].a, cases[ci].b,
            cases[ci].jb >= 512 ? " next block" : "", got);
        if (o_len >= sizeof buf)
            o_len = sizeof buf - 1;
    }
    repro_result(&r->t[T8], ok, "repo policy, 1024 keys, 512-key blocks: %s",
                 buf);
}

void
repro_t7_t8(repro *r)
{
    size_t d = 16, nk = 1024;
    t78_work w = {.d = d, .nk = nk};

    w.q = malloc(d * 2);
    w.k = malloc(nk * d * 2);
    w.v = malloc(nk * d * 2);
    w.o = malloc(d * 4);
    w.m = malloc(2 * 4);
    w.s = malloc(nk * 8);
    if (!w.q || !w.k || !w.v || !w.o || !w.m || !w.s) {
        repro_result(&r->t[T7], false, "out of memory");
        repro_result(&r->t[T8], false, "out of memory");
        goto out;
    }
    if (r->t[T7].run)
        t7_always(r, &w);
    if (r->t[T8].run)
        t8_detector(r, &w);
out:
    free(w.q);
    free(w.k);
    free(w.v);
    free(w.o);
    free(w.m);
    free(w.s);
}
