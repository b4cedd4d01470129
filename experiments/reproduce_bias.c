/* reproduce_bias.c -- bf16emu reproduce's bias measurements: T9-T13 and
   the sweep of the bias against the mean of V */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "experiments/reproduce_local.h"

/*----------------------------------------------------------------------------
 * Bias measurements through point.h: the repeated-maximum setting of
 * paper-notes T12.
 *--------------------------------------------------------------------------*/
static pt_spec
t12_spec(const repro *r, size_t n, size_t d, uint64_t k)
{
    pt_spec s;

    memset(&s, 0, sizeof s);
    s.isa = cli_isa();
    s.gen = gen_params_default();
    s.gen.kind = GEN_REPEATED;
    s.gen.repeat = k;
    s.gen.max_value = 3.0;
    s.gen.gap_min = 12.0;
    s.gen.gap_max = 30.0;
    s.gen.v_mean = -1.5;
    s.gen.v_std = 0.4;
    s.gen.seed = 12;
    s.nq = s.nk = n;
    s.d = d;
    s.heads = 1;
    s.policy = FA_POLICY_PAPER_EQ4;
    s.fix = fa_fix_default(FA_FIX_NONE);
    (void)r;
    return s;
}

/* Runs TRIALS trials of each of NS specs in parallel, the trials of a
   spec merged in order. */
static bool
run_specs(const repro *r, size_t ns, const pt_spec *sp, uint64_t trials,
          pt_stats *out)
{
    long long nt = (long long)(ns * trials), ndone = 0;
    pt_stats *res = malloc((size_t)nt * sizeof *res);
    int failed = 0;

    if (res == NULL)
        return false;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(repro_nthreads(r))
#endif
    for (long long t = 0; t < nt; t++) {
        const char *why;
        long long nd;
        pt_stats_init(&res[t]);
        if (pt_trial(&sp[(size_t)t / trials], (uint64_t)t % trials, &res[t],
                     &why)
            != 0) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp atomic capture
#endif
        nd = ++ndone;
        if (repro_master_thread())
            repro_prog_tick(r->prog, (double)nd / (double)nt);
    }
    for (size_t i = 0; i < ns; i++) {
        pt_stats_init(&out[i]);
        for (uint64_t t = 0; t < trials; t++)
            pt_stats_merge(&out[i], &res[i * trials + t]);
    }
    free(res);
    (void)r;
    return !failed;
}

static void
summ(const pt_stats *st, bias_summary *o)
{
    bias_summarize(&st->o_abs[PT_BASE], o);
}

/* T12 and T13. */
void
repro_t12_t13(repro *r, cli_buf *csv, cli_buf *dat)
{
    static const double paper[5] = {0, 7e-7, -1.7e-3, -1.1e-3, -7.7e-4};
    size_t n = 512, d = 32;
    /* one query row per trial: the rows of a head share the keys at the
       maximum, so only rows of different trials are independent */
    uint64_t trials = r->quick ? 300 : 1500;
    pt_spec sp[11];
    pt_stats st[11];
    bias_summary b[11];
    bool ok12 = true, ok13 = true;
    char buf[600];
    size_t o = 0;

    /* 0..3: k = 1..4 without the fix; 4..7 with beta; 8: k = 2 with V of
       both signs; 9: k = 2 with large residuals (gaps 1 .. 10); 10: k = 2
       again (the base of T13 is spec 1) */
    for (uint64_t k = 1; k <= 4; k++) {
        sp[k - 1] = t12_spec(r, n, d, k);
        sp[k - 1].nq = 1;
        sp[k + 3] = t12_spec(r, n, d, k);
        sp[k + 3].nq = 1;
        sp[k + 3].fix = fa_fix_default(FA_FIX_BETA);
    }
    sp[8] = t12_spec(r, n, d, 2);
    sp[8].gen.v_mean = 0.0;
    sp[8].nq = 1;
    sp[9] = t12_spec(r, n, d, 2);
    sp[9].nq = 1;
    sp[9].gen.gap_min = 1.0;
    sp[9].gen.gap_max = 10.0;
    sp[10] = t12_spec(r, n, d, 2);
    if (!run_specs(r, 10, sp, trials, st)) {
        repro_result(&r->t[T12], false, "the attention library failed");
        repro_result(&r->t[T13], false, "the attention library failed");
        return;
    }
    for (int i = 0; i < 10; i++)
        summ(&st[i], &b[i]);
    cli_buf_puts(csv, "k,fix,n,mean,se,t,ci_lo,ci_hi,paper\n");
    cli_buf_puts(dat, "# k mean_none lo hi mean_beta lo hi\n");
    for (int k = 1; k <= 4; k++) {
        const bias_summary *x = &b[k - 1], *y = &b[k + 3];
        cli_buf_printf(
            csv, "%d,none,%" PRIu64 ",%.6g,%.3g,%.2f,%.6g,%.6g,%g\n", k, x->n,
            x->mean, x->se, x->t, x->ci_lo, x->ci_hi, paper[k]);
        cli_buf_printf(csv, "%d,beta,%" PRIu64 ",%.6g,%.3g,%.2f,%.6g,%.6g,\n",
                       k, y->n, y->mean, y->se, y->t, y->ci_lo, y->ci_hi);
        cli_buf_printf(dat, "%d %.6g %.6g %.6g %.6g %.6g %.6g\n", k, x->mean,
                       x->ci_lo, x->ci_hi, y->mean, y->ci_lo, y->ci_hi);
        if (k == 1)
            ok12 = ok12 && fabs(x->mean) < 5e-5;
        else
            ok12 = ok12 && x->t < -5 && x->mean < 0.5 * paper[k]
                   && x->mean > 2 * paper[k] && fabs(y->mean) * 5 < -x->mean;
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              "%sk=%d: %.3g (t %.0f), beta %.2g",
                              k > 1 ? "; " : "", k, x->mean, x->t, y->mean);
        if (o >= sizeof buf)
            o = sizeof buf - 1;
    }
    repro_result(&r->t[T12], ok12, "%s (%" PRIu64 " O elements each)", buf,
                 b[0].n);
    if (r->t[T13].run) {
        double base = b[1].mean;
        ok13 = base < 0 && b[1].t < -5 && fabs(b[0].mean) * 5 < -base
               && fabs(b[8].mean) * 5 < -base && fabs(b[9].mean) * 5 < -base;
        repro_result(
            &r->t[T13], ok13,
            "k = 2, same-sign V, gaps 12..30: %.3g; one maximum: %.2g; V "
            "of both signs (mean 0): %.2g; residuals not tiny (gaps "
            "1..10): %.2g",
            base, b[0].mean, b[8].mean, b[9].mean);
    }
}

/*----------------------------------------------------------------------------
 * T9: the ablations, with delta from the library's backward.
 *--------------------------------------------------------------------------*/
/* The ablations of T9, and whether each should remove the bias of
   delta. */
static const struct
{
    const char *name;
    unsigned abl;
    bool removes;
} t9_abl[] = {{"none", 0, false},
              {"fp32-pv", FA_ABL_FP32_PV, true},
              {"fp32-o", FA_ABL_FP32_O, true},
              {"delta-dpp", FA_ABL_DELTA_DPP, true},
              {"delta-fp32-o", FA_ABL_DELTA_FP32_O, true},
              {"untiled", FA_ABL_UNTILED, false}};
#define T9_NA (sizeof t9_abl / sizeof t9_abl[0])

/* One trial of T9: head H of the repeated-maximum inputs (NQ rows, N
   keys, D columns) through C's forward and backward; the error of each
   row's delta against its binary64 value into CELL.  False when the
   library fails or memory runs out. */
static bool
t9_trial(const fa_config *c, float scale, size_t nq, size_t n, size_t d,
         size_t h, bias_cell *cell)
{
    gen_params g = gen_params_default();
    uint16_t *q = malloc(nq * d * 2), *k = malloc(n * d * 2),
             *v = malloc(n * d * 2), *dout = malloc(nq * d * 2);
    uint32_t *oo = malloc(nq * d * 4), *lse = malloc(nq * 4),
             *delta = malloc(nq * 4), *dq = malloc(nq * d * 4),
             *dk = malloc(n * d * 4), *dv = malloc(n * d * 4);
    double *ref = malloc(nq * d * 8), *work = malloc(n * 8);
    sf_env env = cli_env_ieee();
    bool ok = false;

    g.kind = GEN_REPEATED;
    g.repeat = 2;
    g.v_mean = -1.5;
    g.v_std = 0.4;
    g.do_mean = -1.0;
    g.seed = gen_draw(9, 12, (uint64_t)h, 0);
    if (q && k && v && dout && oo && lse && delta && dq && dk && dv && ref
        && work) {
        gen_head(&g, scale, nq, n, d, 0, q, k, v, dout);
        pt_reference(nq, n, d, false, (double)scale, q, k, v, work, ref);
        ok = fa_forward(c, q, k, v, oo, lse, NULL, &env) == 0
             && fa_backward(c, q, k, v, oo, lse, dout, delta, dq, dk, dv, NULL,
                            &env)
                    == 0;
        for (size_t i = 0; ok && i < nq; i++) {
            double hp = 0;
            for (size_t cc = 0; cc < d; cc++)
                hp += repro_bf16v(dout[i * d + cc]) * ref[i * d + cc];
            bias_cell_add(cell, repro_f32v(delta[i]) - hp);
        }
    }
    free(q);
    free(k);
    free(v);
    free(dout);
    free(oo);
    free(lse);
    free(delta);
    free(dq);
    free(dk);
    free(dv);
    free(ref);
    free(work);
    return ok;
}

/* T9's table (t9-ablations.csv) into CSV and its result, from the
   statistics of each ablation. */
static void
t9_table(repro *r, const bias_cell cells[T9_NA], cli_buf *csv)
{
    bias_summary base;
    bool ok;
    char buf[600];
    size_t o = 0;

    cli_buf_puts(csv,
                 "ablation,n,delta_mean,se,t,ci_lo,ci_hi,ratio_to_none\n");
    bias_summarize(&cells[0], &base);
    ok = base.t > 5;
    for (size_t a = 0; a < T9_NA; a++) {
        bias_summary s;
        double ratio;
        bias_summarize(&cells[a], &s);
        ratio = s.mean / base.mean;
        cli_buf_printf(csv, "%s,%" PRIu64 ",%.6g,%.3g,%.2f,%.6g,%.6g,%.4f\n",
                       t9_abl[a].name, s.n, s.mean, s.se, s.t, s.ci_lo,
                       s.ci_hi, ratio);
        if (t9_abl[a].removes)
            ok = ok && fabs(ratio) <= 0.25;
        else
            ok = ok && ratio >= 0.5 && s.t > 5;
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s %.3g",
                              a ? "; " : "", t9_abl[a].name, s.mean);
        if (o >= sizeof buf)
            o = sizeof buf - 1;
    }
    repro_result(&r->t[T9], ok,
                 "paper-eq4, one query row x 256 keys per trial, 2 repeated "
                 "maxima, V ~ N(-1.5, 0.4), dO ~ N(-1, 1), "
                 "mean delta_lp - delta_hp: %s",
                 buf);
}

void
repro_t9_ablations(repro *r, cli_buf *csv)
{
    /* one query row per trial (the rows of a head share the keys at the
       maximum, so only trials are independent); 256 keys */
    size_t n = 256, nq = 1, d = 64;
    size_t heads = r->quick ? 300 : 1500;
    long long ndone = 0;
    bias_cell cells[T9_NA];
    bool fail = false;
    float scale;
    uint32_t sb;
    fa_config c0 = fa_config_default(FA_POLICY_PAPER_EQ4);

    c0.shape = (fa_shape){1, 1, nq, n, d};
    c0.bc = 64; /* tiled, so that untiled changes something */
    sb = fa_scale_bits(&c0);
    memcpy(&scale, &sb, sizeof scale);
    bias_cell *jobs = malloc(T9_NA * heads * sizeof *jobs);

    if (jobs == NULL) {
        repro_result(&r->t[T9], false, "out of memory");
        return;
    }
    for (size_t a = 0; a < T9_NA; a++)
        bias_cell_init(&cells[a]);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(repro_nthreads(r))
#endif
    for (long long job = 0; job < (long long)(T9_NA * heads); job++) {
        size_t a = (size_t)job / heads, h = (size_t)job % heads;
        fa_config c = c0;
        bias_cell local;
        long long nd;
        bias_cell_init(&local);
        c.ablations = t9_abl[a].abl;
        if (!t9_trial(&c, scale, nq, n, d, h, &local)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            fail = true;
        }
        jobs[job] = local;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
        nd = ++ndone;
        if (repro_master_thread())
            repro_prog_tick(r->prog, (double)nd / (double)(T9_NA * heads));
    }
    /* merged in job order: the result does not depend on the threads */
    for (size_t j = 0; j < T9_NA * heads; j++)
        bias_cell_merge(&cells[j / heads], &jobs[j]);
    free(jobs);
    if (fail) {
        repro_result(&r->t[T9], false, "the attention library failed");
        return;
    }
    t9_table(r, cells, csv);
}

/*----------------------------------------------------------------------------
 * T10: the delta error summed over the tokens of each step, accumulated
 * over steps (each step new inputs; the maximum's value drawn in [2, 6)).
 *--------------------------------------------------------------------------*/
void
repro_t10_steps(repro *r, cli_buf *dat)
{
    size_t steps = r->quick ? 24 : 60;
    pt_spec *sp = malloc(2 * steps * sizeof *sp);
    pt_stats *st = malloc(2 * steps * sizeof *st);
    double *incr = malloc(2 * steps * sizeof *incr),
           *cum = malloc(2 * steps * sizeof *cum);
    grad_series se[2];
    grad_monotone mo[2];
    bool ok;

    if (!sp || !st || !incr || !cum) {
        repro_result(&r->t[T10], false, "out of memory");
        goto out;
    }
    for (size_t f = 0; f < 2; f++)
        for (size_t i = 0; i < steps; i++) {
            pt_spec *s = &sp[f * steps + i];
            *s = t12_spec(r, 128, 64, 2);
            s->gen.seed = 1000 + i;
            s->gen.max_value =
                2.0 + 4.0 * (double)(gen_draw(10, 11, i, 0) >> 11) * 0x1p-53;
            s->gen.do_mean = -1.0;
            s->fix = fa_fix_default(f ? FA_FIX_BETA : FA_FIX_NONE);
        }
    if (!run_specs(r, 2 * steps, sp, 1, st)) {
        repro_result(&r->t[T10], false, "the attention library failed");
        goto out;
    }
    for (size_t f = 0; f < 2; f++) {
        grad_series_init(&se[f], incr + f * steps, cum + f * steps, steps);
        for (size_t i = 0; i < steps; i++) {
            const bias_cell *c = &st[f * steps + i].delta[PT_BASE];
            grad_series_push(&se[f], c->mean * (double)c->n);
        }
        grad_series_monotone(&se[f], 0, steps, &mo[f]);
    }
    cli_buf_puts(dat, "# step cum_none cum_beta\n");
    for (size_t i = 0; i < steps; i++)
        cli_buf_printf(dat, "%zu %.9g %.9g\n", i + 1, cum[i], cum[steps + i]);
    ok = mo[0].nondecreasing && mo[0].cum_positive && !mo[1].nondecreasing
         && mo[1].sign_changes >= 2;
    repro_result(
        &r->t[T10], ok,
        "%zu steps of 128 tokens: without the fix %zu of %zu increments "
        "positive, cumulative %.4g, %s; with beta %zu positive, %zu sign "
        "changes, cumulative %.4g",
        steps, mo[0].pos, mo[0].n, mo[0].cum_last,
        mo[0].nondecreasing ? "non-decreasing" : "not monotone", mo[1].pos,
        mo[1].sign_changes, mo[1].cum_last);
out:
    free(sp);
    free(st);
    free(incr);
    free(cum);
}

/*----------------------------------------------------------------------------
 * T11: Eq. 5, the prefix error along the keys of one row and one column:
 * lp(t) = RN16 of the FP32 FMA chain over keys 0 .. t of P~_lp V, hp(t) =
 * the binary64 sum of P~_hp V (P~_hp = exp(s - m) in binary64).
 *--------------------------------------------------------------------------*/
void
repro_t11_prefix(repro *r, cli_buf *dat)
{
    size_t nk = 64;
    static const size_t maxima[3] = {9, 30, 51};
    uint64_t acc = 0;
    double prev = 0, hp = 0, ulp = 0;
    size_t neg_at_one = 0, big_elsewhere = 0, ones = 0;
    sf_env env = cli_env_ieee();

    cli_buf_puts(dat, "# t error_ulps p_is_one\n");
    for (size_t t = 0; t < nk; t++) {
        bool mx = t == maxima[0] || t == maxima[1] || t == maxima[2];
        double gap =
            mx ? 0
               : 12.0 + 18.0 * (double)(gen_draw(11, 1, t, 0) >> 11) * 0x1p-53;
        uint16_t sd =
            (uint16_t)sf_from_double(&sf_format_bf16, -gap, SF_RNE, &env);
        uint32_t e = fa_expf_cr((uint32_t)sd << 16);
        uint16_t p = (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32, e,
                                          SF_RNE, &env);
        double vv = -1.5 - 0.4 * fabs(cos(1.7 * (double)t));
        uint16_t v =
            (uint16_t)sf_from_double(&sf_format_bf16, vv, SF_RNE, &env);
        double err, jump;
        uint16_t lp;
        acc = sf_fma(&sf_format_f32, (uint64_t)p << 16, (uint64_t)v << 16, acc,
                     SF_RNE, &env);
        lp = (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32, acc, SF_RNE,
                                  &env);
        hp += exp(repro_bf16v(sd)) * repro_bf16v(v);
        if (mx)
            ulp = ldexp(1.0, (int)floor(log2(fabs(hp))) - 7);
        err = repro_bf16v(lp) - hp;
        jump = err - prev;
        prev = err;
        if (p == 0x3F80) {
            ones++;
            neg_at_one += jump < -0.25 * ulp && t > maxima[0];
        } else if (ulp > 0 && fabs(jump) > 0.25 * ulp) {
            big_elsewhere++;
        }
        cli_buf_printf(dat, "%zu %.9g %d\n", t, ulp > 0 ? err / ulp : 0.0,
                       p == 0x3F80);
    }
    repro_result(
        &r->t[T11], ones == 3 && neg_at_one >= 1 && big_elsewhere == 0,
        "one row, 64 keys, maxima at keys 9, 30, 51 (P~ = 1: %zu), V < 0: "
        "%zu negative jumps of more than 1/4 ulp at P~ = 1 after the "
        "first, %zu jumps of that size elsewhere; final error %.3g ulps",
        ones, neg_at_one, big_elsewhere, ulp > 0 ? prev / ulp : 0.0);
}

/*----------------------------------------------------------------------------
 * The sweep of bias against the mean of V (bf16emu sweep into OUT/sweep).
 *--------------------------------------------------------------------------*/
int
repro_run_sweep_part(repro *r)
{
    char dir[4096], thr[32];
    char *argv[40];
    int argc = 0;

    snprintf(dir, sizeof dir, "%s/sweep", r->out);
    snprintf(thr, sizeof thr, "%d", repro_nthreads(r));
    argv[argc++] = (char *)"sweep";
    argv[argc++] = (char *)"--out";
    argv[argc++] = dir;
    argv[argc++] = (char *)"--force";
    argv[argc++] = (char *)"--quiet";
    argv[argc++] = (char *)"--threads";
    argv[argc++] = thr;
    argv[argc++] = (char *)"--policy";
    argv[argc++] = (char *)"paper-eq4";
    argv[argc++] = (char *)"--fix";
    argv[argc++] = (char *)"none,beta";
    argv[argc++] = (char *)"--repeat";
    argv[argc++] = (char *)"2";
    argv[argc++] = (char *)"--n";
    argv[argc++] = (char *)"128";
    argv[argc++] = (char *)"--trials";
    argv[argc++] = (char *)"1";
    argv[argc++] = (char *)"--heads";
    argv[argc++] = (char *)(r->quick ? "1" : "2");
    argv[argc++] = (char *)"--v-mean";
    argv[argc++] = (char *)(r->quick ? "-1.5:1.5:1.5" : "-2:2:0.5");
    argv[argc++] = (char *)"--stages";
    argv[argc++] = (char *)"on";
    if (r->no_plot)
        argv[argc++] = (char *)"--no-plot";
    argv[argc] = NULL;
    return sweep_main(argc, argv);
}
