/* reproduce.c -- bf16emu reproduce: the reproduction targets T1-T13 of
   Qiu and Yao (arXiv:2510.04212), each computed from scratch and checked
   against what the paper (or its analysis) states, into a results
   directory: summary.md, CSVs, data files and plots */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/attn_exact.h"
#include "analysis/gradient.h"
#include "experiments/cli.h"
#include "analysis/gen.h"
#include "experiments/plot.h"
#include "analysis/point.h"
#include "softfloat/mma.h"

#define CMD "reproduce"

/*----------------------------------------------------------------------------
 * Targets and the context.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *id, *what, *expected;
    char obtained[600];
    bool run, pass;
    double seconds;
} target;

enum
{
    T1,
    T2,
    T3,
    T4,
    T5,
    T6,
    T7,
    T8,
    T9,
    T10,
    T11,
    T12,
    T13,
    N_T
};

/* The steps of a run: targets computed together, in this order. */
enum
{
    S_TRACE,
    S_T4,
    S_T5T6,
    S_T7T8,
    S_T9,
    S_T10,
    S_T11,
    S_T12T13,
    S_SWEEP,
    N_STEP
};

#define TBIT(t) (1u << (t))

static const struct
{
    const char *label;
    unsigned targets; /* TBIT mask; 0 for the sweep */
    /* seconds of a full and of a quick run on an idle 2-core machine with
       2 threads: the prior of the ETA, which the elapsed time corrects */
    double w_full, w_quick;
    const char *heading; /* how its section of summary.md starts, or NULL */
} step_defs[N_STEP] = {
    {"T1-T3", TBIT(T1) | TBIT(T2) | TBIT(T3), 0.01, 0.01, "## T1-T3:"},
    {"T4", TBIT(T4), 0.05, 0.01, NULL},
    {"T5, T6", TBIT(T5) | TBIT(T6), 0.03, 0.03, NULL},
    {"T7, T8", TBIT(T7) | TBIT(T8), 0.01, 0.01, NULL},
    {"T9", TBIT(T9), 50.0, 10.0, "## T9:"},
    {"T10", TBIT(T10), 7.0, 2.8, "## T10:"},
    {"T11", TBIT(T11), 0.01, 0.01, "## T11:"},
    {"T12, T13", TBIT(T12) | TBIT(T13), 60.0, 12.0, "## T12, T13:"},
    {"sweep", 0, 21.0, 3.5, "## The bias against the mean of V"},
};

/* Progress on stderr: a bar redrawn in place on a terminal, else one
   line per step (so that logs get it), or nothing. */
typedef enum
{
    PROG_AUTO,
    PROG_OFF,
    PROG_LINES,
    PROG_BAR
} prog_mode;

typedef struct
{
    prog_mode mode;
    int nthreads, n_targets, n_done;
    double t0, last_draw;
    double w_total, w_done, w_step; /* step weights (step_defs[].w_*) */
    double frac;                    /* of the current step, 0 .. 1 */
    size_t drawn;                   /* length of the bar line last drawn */
    const char *label;
} progress;

/* A run recorded in summary.md. */
typedef struct
{
    int id;
    char date[32], version[32], samples[16], computed[96];
    double seconds;
    bool sweep; /* it computed the sweep */
} run_rec;

#define MAX_RUNS 64

/* What an earlier summary.md in the output directory holds, for a run
   with --only to merge into. */
typedef struct
{
    int row_run[N_T]; /* the run of each target's row; 0: no row */
    bool pass[N_T];
    char obtained[N_T][600];
    run_rec runs[MAX_RUNS];
    int nruns, max_id;
    char *section[N_STEP]; /* each step's section (malloc'd), or NULL */
    int sweep_run;         /* the run of the sweep section, or 0 */
} prior;

typedef struct
{
    const char *out;
    bool quick, force, no_plot, json;
    long threads;
    bool only[N_T];
    bool only_set;
    prog_mode prog_want;
    target t[N_T];
    cli_buf section[N_STEP]; /* this run's sections of summary.md */
    int plot_missing;
    char plot_error[512];
    progress *prog;
    prior *prev; /* NULL: a summary of this run alone */
    int run_id;
} repro;

static const struct
{
    const char *what, *expected;
} specs[N_T] = {
    {"Eq. 4 trace: FP32 accumulator 0xC01A0E2E + BF16 0xC013, then RN to "
     "BF16",
     "exact sum 0xC0968717 (-4.703990459442139), guard 1, sticky 1, BF16 "
     "0xC097 (-4.71875), error -0.014759540557861328"},
    {"tie counterfactual: -2.40625 + -2.296875",
     "exact tie 0xC0968000; RNE gives 0xC096 (-4.6875), error +0.015625"},
    {"round-toward-zero case: -0.85546875 + -0.0859375 + -2^-11",
     "-0.94189453125 rounds to 0xBF71 (-0.94140625), guard 0, error "
     "+0.00048828125"},
    {"BF16 x BF16 products are exact in FP32",
     "every product exact; P~ = 1 gives low 16 bits 0; P~ < 1 usually not "
     "(97% in the paper's random test)"},
    {"Eq. 1: dQ(delta1) - dQ(delta2) = alpha diag(delta2 - delta1) PK",
     "equal in exact arithmetic"},
    {"the fix (beta = 2) leaves O and LSE unchanged in exact arithmetic",
     "O, LSE equal to the unfixed ones; max P~ < 1"},
    {"the fix applied to a single large maximum ('always')",
     "l underflows, O = NaN; exp(-x) subnormal from x ~ 87.3, zero from "
     "92.9 (BF16) / 103.97 (FP32)"},
    {"the repo's detector: count(S >= bf16(max - 1e-3)) > 1 per 512-key "
     "block",
     "max > 0: m = 2 max; max < 0: m = 0; single max or maxima in different "
     "blocks: m = max"},
    {"ablations (paper 3.2) and the bias of delta",
     "fp32-pv, fp32-o, delta-dpp, delta-fp32-o remove the delta bias (here: "
     "at least 4x smaller); untiled does not"},
    {"Fig. 5(a) analogue: cumulative sum over steps of sum_T (delta_lp - "
     "delta_hp)",
     "monotonically positive without the fix; no consistent sign with it"},
    {"Fig. 6 analogue: Eq. 5 prefix error along the keys",
     "negative jumps exactly where P~ = 1"},
    {"Monte-Carlo bias of O with k repeated maxima (N = 512, V ~ N(-1.5, "
     "0.4))",
     "k = 2, 3, 4: -1.7e-3, -1.1e-3, -7.7e-4 (within 2x); k = 1: ~0; about "
     "10x smaller with the fix (here: at least 5x)"},
    {"precondition: P~ = 1 twice, same-sign V, tiny residuals",
     "removing any one of the three removes the bias (here: at least 5x "
     "smaller)"},
};

static const char *const target_ids[N_T] = {"T1",  "T2",  "T3", "T4", "T5",
                                            "T6",  "T7",  "T8", "T9", "T10",
                                            "T11", "T12", "T13"};

static void result(target *t, bool pass, const char *fmt, ...)
    CLI_PRINTF(3, 4);

static void
result(target *t, bool pass, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->obtained, sizeof t->obtained, fmt, ap);
    va_end(ap);
    t->pass = pass;
}

static int
nthreads(const repro *r)
{
#ifdef _OPENMP
    return r->threads > 0 ? (int)r->threads : omp_get_max_threads();
#else
    (void)r;
    return 1;
#endif
}

/*----------------------------------------------------------------------------
 * Progress.
 *--------------------------------------------------------------------------*/
static const char *
duration(char *buf, size_t n, double s)
{
    long v = s > 0 ? lround(s) : 0;

    if (v < 60)
        snprintf(buf, n, "%ld s", v);
    else if (v < 3600)
        snprintf(buf, n, "%ld min %02ld s", v / 60, v % 60);
    else
        snprintf(buf, n, "%ld h %02ld min", v / 3600, v / 60 % 60);
    return buf;
}

/* The seconds left: the weights left, at the rate seen so far once there
   is one, else at the prior's (2 threads on an idle machine). */
static double
prog_eta(const progress *p, double now)
{
    double el = now - p->t0, done = p->w_done + p->frac * p->w_step;
    double left = p->w_total - done;

    if (left < 0)
        left = 0;
    if (el > 1.0 && done > 0.02 * p->w_total)
        return left * el / done;
    return left * 2.0 / p->nthreads;
}

static void
prog_draw(progress *p, bool final)
{
    double now = cli_now_s(), done = p->w_done + p->frac * p->w_step;
    double f = p->w_total > 0 ? done / p->w_total : 1;
    char bar[32], line[200], e1[32], e2[32];
    int w = 24, fill = final ? w : (int)(f * w);
    size_t len;

    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[w] = '\0';
    if (final)
        snprintf(line, sizeof line, "[%s] %d/%d targets, done in %s", bar,
                 p->n_done, p->n_targets,
                 duration(e1, sizeof e1, now - p->t0));
    else
        snprintf(line, sizeof line,
                 "[%s] %d/%d targets  %s  elapsed %s  ETA %s", bar, p->n_done,
                 p->n_targets, p->label, duration(e1, sizeof e1, now - p->t0),
                 duration(e2, sizeof e2, prog_eta(p, now)));
    len = strlen(line);
    fprintf(stderr, "\r%s%*s", line,
            p->drawn > len ? (int)(p->drawn - len) : 0, "");
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
    p->drawn = len;
    p->last_draw = now;
}

/* Called by the thread that runs the step (thread 0 of a parallel loop):
   FRAC of the step is done.  Redraws the bar at most 5 times a second;
   without the bar, a line when nothing was printed for 30 s. */
static void
prog_tick(progress *p, double frac)
{
    double now;
    char el[32], eta[32];

    if (p == NULL)
        return;
    p->frac = frac;
    now = cli_now_s();
    if (p->mode == PROG_BAR && now - p->last_draw >= 0.2)
        prog_draw(p, false);
    else if (p->mode == PROG_LINES && now - p->last_draw >= 30) {
        fprintf(stderr,
                "bf16emu reproduce: %s running, %.0f%% done; elapsed %s, "
                "ETA %s\n",
                p->label, 100 * frac, duration(el, sizeof el, now - p->t0),
                duration(eta, sizeof eta, prog_eta(p, now)));
        fflush(stderr);
        p->last_draw = now;
    }
}

static bool
master_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num() == 0;
#else
    return true;
#endif
}

static double
f32v(uint32_t w)
{
    float f;

    memcpy(&f, &w, sizeof f);
    return (double)f;
}

static double
bf16v(uint16_t b)
{
    return f32v((uint32_t)b << 16);
}

/* Writes TEXT to OUT/NAME; false on failure (message printed). */
static bool
write_file(const repro *r, const char *name, const char *text, size_t len)
{
    char *p = cli_path_join(r->out, name);
    bool ok = p != NULL && cli_write_atomic(p, text != NULL ? text : "", len);

    if (!ok)
        cli_error(CMD, "%s: cannot write: %s", p ? p : name, strerror(errno));
    free(p);
    return ok;
}

/* Runs the gnuplot script SCRIPT on OUT/DATA into OUT/BASE.{png,svg}. */
static void
plot(repro *r, const char *script, const char *data, const char *base,
     const char *extra)
{
    char *dp = cli_path_join(r->out, data), *bp = cli_path_join(r->out, base);
    char *log = cli_path_join(r->out, "gnuplot.log");
    char q1[4200], q2[4200], vars[9000], why[512];
    int rc;

    if (r->no_plot || dp == NULL || bp == NULL || log == NULL
        || !plot_quote(q1, sizeof q1, dp) || !plot_quote(q2, sizeof q2, bp)) {
        free(dp);
        free(bp);
        free(log);
        return;
    }
    snprintf(vars, sizeof vars, "datafile=%s; out=%s%s%s", q1, q2,
             extra ? "; " : "", extra ? extra : "");
    rc = plot_run(script, vars, log, why, sizeof why);
    if (rc == 1)
        r->plot_missing = 1;
    else if (rc != 0 && r->plot_error[0] == '\0')
        snprintf(r->plot_error, sizeof r->plot_error, "%s", why);
    else if (rc == 0)
        unlink(log);
    free(dp);
    free(bp);
    free(log);
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

static void
trace_targets(repro *r, cli_buf *dat)
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
        err = bf16v(b) - f32v(sum);
        result(&r->t[T1],
               sum == 0xC0968717u && !(fl & SF_FLAG_INEXACT) && b == 0xC097
                   && ev.guard == 1 && ev.sticky == 1
                   && err == -0.014759540557861328,
               "sum 0x%08X (%.17g, %s), guard %u, sticky %u, BF16 0x%04X "
               "(%.17g), error %.17g",
               sum, f32v(sum), fl & SF_FLAG_INEXACT ? "inexact" : "exact",
               ev.guard, ev.sticky, b, bf16v(b), err);
        cli_buf_printf(dat, "0 %.17g \"T1 (residual: rounds away)\"\n",
                       err / 0.03125);
    }
    {
        b = add_then_round(0xC01A0000u, 0xC0130000u, &sum, &fl, &ev);
        err = bf16v(b) - f32v(sum);
        result(&r->t[T2],
               sum == 0xC0968000u && ev.tie && b == 0xC096 && err == 0.015625,
               "sum 0x%08X, %s, BF16 0x%04X (%.17g), error %+.17g", sum,
               ev.tie ? "a tie" : "not a tie", b, bf16v(b), err);
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
        err = bf16v(b) - (-0.94189453125);
        result(&r->t[T3],
               s0 == 0xBF710000u && !(f0 & SF_FLAG_INEXACT)
                   && sum == 0xBF712000u && ev.guard == 0 && b == 0xBF71
                   && err == 0.00048828125,
               "-0.85546875 + -0.0859375 = 0x%08X (%s); + residual = 0x%08X "
               "(%.17g); guard %u; BF16 0x%04X (%.17g), error %+.17g",
               s0, f0 & SF_FLAG_INEXACT ? "inexact" : "exact", sum, f32v(sum),
               ev.guard, b, bf16v(b), err);
        cli_buf_printf(dat, "2 %.17g \"T3 (guard 0: truncates)\"\n",
                       err / 0.00390625);
    }
}

/*----------------------------------------------------------------------------
 * T4: products.
 *--------------------------------------------------------------------------*/
static void
t4_products(repro *r)
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
                   || f32v(prod) != bf16v(p) * bf16v(v);
        if (p == 0x3F80) {
            ones++;
            one_low += (prod & 0xFFFFu) != 0;
        } else {
            lt1++;
            lt1_low += (prod & 0xFFFFu) != 0;
        }
    }
    result(&r->t[T4],
           inexact == 0 && one_low == 0
               && (double)lt1_low >= 0.9 * (double)lt1,
           "%" PRIu64 " products: %" PRIu64 " inexact; P~ = 1: %" PRIu64
           " of %" PRIu64 " with low bits; P~ < 1: %.1f%% with non-zero low "
           "16 bits",
           n, inexact, one_low, ones, 100.0 * (double)lt1_low / (double)lt1);
}

/*----------------------------------------------------------------------------
 * T5, T6: exact arithmetic (MPFR).
 *--------------------------------------------------------------------------*/
static void
t5_t6(repro *r)
{
    size_t nq = 32, nk = 64, d = 16;
    gen_params g = gen_params_default();
    fa_config c = fa_config_default(FA_POLICY_PAPER_EQ4);
    uint16_t *q = malloc(nq * d * 2), *k = malloc(nk * d * 2),
             *v = malloc(nk * d * 2), *dout = malloc(nq * d * 2);
    double *d1 = malloc(nq * 8), *d2 = malloc(nq * 8),
           *dq1 = malloc(nq * d * 8), *dq2 = malloc(nq * d * 8),
           *p = malloc(nq * nk * 8), *kd = malloc(nk * d * 8),
           *pk = malloc(nq * d * 8), *o1 = malloc(nq * d * 8),
           *o2 = malloc(nq * d * 8), *l1 = malloc(nq * 8),
           *l2 = malloc(nq * 8), *pmax = malloc(nq * 8);
    float scale;
    uint32_t sb;
    ax_options opt = {0, AX_TILED};

    if (!q || !k || !v || !dout || !d1 || !d2 || !dq1 || !dq2 || !p || !kd
        || !pk || !o1 || !o2 || !l1 || !l2 || !pmax) {
        result(&r->t[T5], false, "out of memory");
        result(&r->t[T6], false, "out of memory");
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
    gen_head(&g, scale, nq, nk, d, 0, q, k, v, dout);
    if (r->t[T5].run) {
        ax_outputs ox;
        double worst = 0, big = 0, scale_d = (double)scale;
        int rc1, rc2;
        memset(&ox, 0, sizeof ox);
        ox.delta.d = d1;
        ox.dq.d = dq1;
        ox.p.d = p;
        rc1 = ax_backward_ex(&c, NULL, q, k, v, dout, NULL, &ox);
        /* delta2: delta1 moved by a per-row amount */
        for (size_t i = 0; i < nq; i++)
            d2[i] = d1[i] + ldexp((double)((int)(i % 7) - 3), -9);
        rc2 = ax_backward(&c, NULL, q, k, v, dout, d2, NULL, dq2, NULL, NULL);
        for (size_t j = 0; j < nk * d; j++)
            kd[j] = bf16v(k[j]);
        if (rc1 != 0 || rc2 != 0 || grad_pk(nq, nk, d, p, kd, pk) != GRAD_OK) {
            result(&r->t[T5], false, "the exact backward failed");
        } else {
            for (size_t i = 0; i < nq; i++)
                for (size_t c2 = 0; c2 < d; c2++) {
                    double lhs = dq1[i * d + c2] - dq2[i * d + c2];
                    double rhs = scale_d * (d2[i] - d1[i]) * pk[i * d + c2];
                    worst = fmax(worst, fabs(lhs - rhs));
                    big = fmax(big, fabs(rhs));
                }
            /* normwise: the doubles of dQ(delta1) and dQ(delta2) carry
               2^-53 of |dQ| each, which their difference keeps */
            worst /= big;
            result(&r->t[T5], worst < 1e-12,
                   "%zu x %zu elements of dQ(delta1) - dQ(delta2) against "
                   "alpha diag(delta2 - delta1) PK (MPFR, 256 bits): largest "
                   "difference %.3g of the largest element",
                   nq, d, worst);
        }
    }
    if (r->t[T6].run) {
        ax_outputs o;
        double wo = 0, wl = 0, pm = 0;
        int rc1, rc2;
        memset(&o, 0, sizeof o);
        c.bc = 0; /* one KV block: the maxima are repeated within it */
        o.o.d = o1;
        o.lse.d = l1;
        rc1 = ax_forward_ex(&c, &opt, q, k, v, &o);
        c.fix = fa_fix_default(FA_FIX_BETA);
        o.o.d = o2;
        o.lse.d = l2;
        o.pmax.d = pmax;
        rc2 = ax_forward_ex(&c, &opt, q, k, v, &o);
        for (size_t i = 0; i < nq * d && rc1 == 0 && rc2 == 0; i++)
            wo = fmax(wo, fabs(o1[i] - o2[i]) / fabs(o1[i]));
        for (size_t i = 0; i < nq && rc1 == 0 && rc2 == 0; i++) {
            wl = fmax(wl, fabs(l1[i] - l2[i]) / fabs(l1[i]));
            pm = fmax(pm, pmax[i]);
        }
        result(&r->t[T6],
               rc1 == 0 && rc2 == 0 && wo < 1e-60 && wl < 1e-60 && pm < 1,
               "Algorithm 1 in MPFR (256 bits), %zu rows with 3 repeated "
               "maxima: largest relative difference of O %.3g, "
               "of LSE %.3g; largest P~ with the fix %.6g (one KV block)",
               nq, wo, wl, pm);
    }
out:
    free(q);
    free(k);
    free(v);
    free(dout);
    free(d1);
    free(d2);
    free(dq1);
    free(dq2);
    free(p);
    free(kd);
    free(pk);
    free(o1);
    free(o2);
    free(l1);
    free(l2);
    free(pmax);
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

static void
t7_t8(repro *r)
{
    size_t d = 16, nk = 1024;
    uint16_t *q = malloc(d * 2), *k = malloc(nk * d * 2),
             *v = malloc(nk * d * 2);
    uint32_t *o = malloc(d * 4), lse, *m = malloc(2 * 4);
    double *s = malloc(nk * 8);

    if (!q || !k || !v || !o || !m || !s) {
        result(&r->t[T7], false, "out of memory");
        result(&r->t[T8], false, "out of memory");
        goto out;
    }
    if (r->t[T7].run) {
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
            s[j] = j == 5 ? 110.0 : 110.0 - 20.0 - (double)j * 0.25;
        crafted(64, d, s, scale, q, k, v);
        memset(&cap, 0, sizeof cap);
        c.fix = fa_fix_default(FA_FIX_ALWAYS);
        fa_forward(&c, q, k, v, o, &lse, NULL, &env);
        nan_always = isnan(f32v(o[0]));
        c.fix = fa_fix_default(FA_FIX_BETA);
        fa_forward(&c, q, k, v, o, &lse, NULL, &env);
        fin_beta = isfinite(f32v(o[0]));
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
        result(&r->t[T7],
               nan_always && fin_beta && sub1 && zero_f32 && zero_bf16
                   && nz_bf16,
               "max 110 alone (fp32 policy): 'always' gives O = %s, 'beta' "
               "O = %.6g; exp(-87.5) = 0x%08X (%s), exp(-104) = 0x%08X; "
               "in BF16 exp(-92.8125) %s 0, exp(-93) %s 0",
               nan_always ? "NaN" : "finite", f32v(o[0]), e873,
               sub1 ? "subnormal" : "normal", e1040,
               nz_bf16 ? "!=" : "==", zero_bf16 ? "==" : "!=");
    }
    if (r->t[T8].run) {
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
                s[j] = cases[ci].a - 6.0 - (double)(j % 11) * 0.125;
            s[3] = cases[ci].a;
            s[cases[ci].jb] = cases[ci].b;
            crafted(nk, d, s, scale, q, k, v);
            memset(&cap, 0, sizeof cap);
            cap.m = m;
            fa_forward(&c, q, k, v, o, &lse, &cap, &env);
            /* m after the last block (2 blocks of 512) */
            got = f32v(m[1]);
            ok = ok && got == cases[ci].want;
            o_len += (size_t)snprintf(
                buf + o_len, sizeof buf - o_len, "%s(%g, %g%s) -> m %g",
                ci ? "; " : "", cases[ci].a, cases[ci].b,
                cases[ci].jb >= 512 ? " next block" : "", got);
            if (o_len >= sizeof buf)
                o_len = sizeof buf - 1;
        }
        result(&r->t[T8], ok, "repo policy, 1024 keys, 512-key blocks: %s",
               buf);
    }
out:
    free(q);
    free(k);
    free(v);
    free(o);
    free(m);
    free(s);
}

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
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads(r))
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
        if (master_thread())
            prog_tick(r->prog, (double)nd / (double)nt);
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
static void
t12_t13(repro *r, cli_buf *csv, cli_buf *dat)
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
        result(&r->t[T12], false, "the attention library failed");
        result(&r->t[T13], false, "the attention library failed");
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
    result(&r->t[T12], ok12, "%s (%" PRIu64 " O elements each)", buf, b[0].n);
    if (r->t[T13].run) {
        double base = b[1].mean;
        ok13 = base < 0 && b[1].t < -5 && fabs(b[0].mean) * 5 < -base
               && fabs(b[8].mean) * 5 < -base && fabs(b[9].mean) * 5 < -base;
        result(&r->t[T13], ok13,
               "k = 2, same-sign V, gaps 12..30: %.3g; one maximum: %.2g; V "
               "of both signs (mean 0): %.2g; residuals not tiny (gaps "
               "1..10): %.2g",
               base, b[0].mean, b[8].mean, b[9].mean);
    }
}

/*----------------------------------------------------------------------------
 * T9: the ablations, with delta from the library's backward.
 *--------------------------------------------------------------------------*/
static void
t9_ablations(repro *r, cli_buf *csv)
{
    static const struct
    {
        const char *name;
        unsigned abl;
        bool removes;
    } ab[] = {{"none", 0, false},
              {"fp32-pv", FA_ABL_FP32_PV, true},
              {"fp32-o", FA_ABL_FP32_O, true},
              {"delta-dpp", FA_ABL_DELTA_DPP, true},
              {"delta-fp32-o", FA_ABL_DELTA_FP32_O, true},
              {"untiled", FA_ABL_UNTILED, false}};
    enum
    {
        NA = sizeof ab / sizeof ab[0]
    };
    /* one query row per trial (the rows of a head share the keys at the
       maximum, so only trials are independent); 256 keys */
    size_t n = 256, nq = 1, d = 64;
    size_t heads = r->quick ? 300 : 1500;
    long long ndone = 0;
    bias_cell cells[NA];
    bool ok = true, fail = false;
    char buf[600];
    size_t o = 0;
    float scale;
    uint32_t sb;
    fa_config c0 = fa_config_default(FA_POLICY_PAPER_EQ4);

    c0.shape = (fa_shape){1, 1, nq, n, d};
    c0.bc = 64; /* tiled, so that untiled changes something */
    sb = fa_scale_bits(&c0);
    memcpy(&scale, &sb, sizeof scale);
    bias_cell *jobs = malloc(NA * heads * sizeof *jobs);

    if (jobs == NULL) {
        result(&r->t[T9], false, "out of memory");
        return;
    }
    for (size_t a = 0; a < NA; a++)
        bias_cell_init(&cells[a]);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads(r))
#endif
    for (long long job = 0; job < (long long)(NA * heads); job++) {
        size_t a = (size_t)job / heads, h = (size_t)job % heads;
        gen_params g = gen_params_default();
        uint16_t *q = malloc(nq * d * 2), *k = malloc(n * d * 2),
                 *v = malloc(n * d * 2), *dout = malloc(nq * d * 2);
        uint32_t *oo = malloc(nq * d * 4), *lse = malloc(nq * 4),
                 *delta = malloc(nq * 4), *dq = malloc(nq * d * 4),
                 *dk = malloc(n * d * 4), *dv = malloc(n * d * 4);
        double *ref = malloc(nq * d * 8), *work = malloc(n * 8);
        fa_config c = c0;
        sf_env env = cli_env_ieee();
        bias_cell local;
        bias_cell_init(&local);
        g.kind = GEN_REPEATED;
        g.repeat = 2;
        g.v_mean = -1.5;
        g.v_std = 0.4;
        g.do_mean = -1.0;
        g.seed = gen_draw(9, 12, (uint64_t)h, 0);
        c.ablations = ab[a].abl;
        if (q && k && v && dout && oo && lse && delta && dq && dk && dv && ref
            && work) {
            gen_head(&g, scale, nq, n, d, 0, q, k, v, dout);
            pt_reference(nq, n, d, false, (double)scale, q, k, v, work, ref);
            if (fa_forward(&c, q, k, v, oo, lse, NULL, &env) != 0
                || fa_backward(&c, q, k, v, oo, lse, dout, delta, dq, dk, dv,
                               NULL, &env)
                       != 0) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                fail = true;
            } else {
                for (size_t i = 0; i < nq; i++) {
                    double hp = 0;
                    for (size_t cc = 0; cc < d; cc++)
                        hp += bf16v(dout[i * d + cc]) * ref[i * d + cc];
                    bias_cell_add(&local, f32v(delta[i]) - hp);
                }
            }
        } else {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            fail = true;
        }
        jobs[job] = local;
        {
            long long nd;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
            nd = ++ndone;
            if (master_thread())
                prog_tick(r->prog, (double)nd / (double)(NA * heads));
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
    }
    /* merged in job order: the result does not depend on the threads */
    for (size_t j = 0; j < NA * heads; j++)
        bias_cell_merge(&cells[j / heads], &jobs[j]);
    free(jobs);
    if (fail) {
        result(&r->t[T9], false, "the attention library failed");
        return;
    }
    cli_buf_puts(csv,
                 "ablation,n,delta_mean,se,t,ci_lo,ci_hi,ratio_to_none\n");
    {
        bias_summary base;
        bias_summarize(&cells[0], &base);
        ok = base.t > 5;
        for (size_t a = 0; a < NA; a++) {
            bias_summary s;
            double ratio;
            bias_summarize(&cells[a], &s);
            ratio = s.mean / base.mean;
            cli_buf_printf(
                csv, "%s,%" PRIu64 ",%.6g,%.3g,%.2f,%.6g,%.6g,%.4f\n",
                ab[a].name, s.n, s.mean, s.se, s.t, s.ci_lo, s.ci_hi, ratio);
            if (ab[a].removes)
                ok = ok && fabs(ratio) <= 0.25;
            else
                ok = ok && ratio >= 0.5 && s.t > 5;
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s %.3g",
                                  a ? "; " : "", ab[a].name, s.mean);
            if (o >= sizeof buf)
                o = sizeof buf - 1;
        }
    }
    result(&r->t[T9], ok,
           "paper-eq4, one query row x 256 keys per trial, 2 repeated "
           "maxima, V ~ N(-1.5, 0.4), dO ~ N(-1, 1), "
           "mean delta_lp - delta_hp: %s",
           buf);
}

/*----------------------------------------------------------------------------
 * T10: the delta error summed over the tokens of each step, accumulated
 * over steps (each step new inputs; the maximum's value drawn in [2, 6)).
 *--------------------------------------------------------------------------*/
static void
t10_steps(repro *r, cli_buf *dat)
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
        result(&r->t[T10], false, "out of memory");
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
        result(&r->t[T10], false, "the attention library failed");
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
    result(&r->t[T10], ok,
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
static void
t11_prefix(repro *r, cli_buf *dat)
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
        hp += exp(bf16v(sd)) * bf16v(v);
        if (mx)
            ulp = ldexp(1.0, (int)floor(log2(fabs(hp))) - 7);
        err = bf16v(lp) - hp;
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
    result(&r->t[T11], ones == 3 && neg_at_one >= 1 && big_elsewhere == 0,
           "one row, 64 keys, maxima at keys 9, 30, 51 (P~ = 1: %zu), V < 0: "
           "%zu negative jumps of more than 1/4 ulp at P~ = 1 after the "
           "first, %zu jumps of that size elsewhere; final error %.3g ulps",
           ones, neg_at_one, big_elsewhere, ulp > 0 ? prev / ulp : 0.0);
}

/*----------------------------------------------------------------------------
 * The sweep of bias against the mean of V (bf16emu sweep into OUT/sweep).
 *--------------------------------------------------------------------------*/
static int
run_sweep_part(repro *r)
{
    char dir[4096], thr[32];
    char *argv[40];
    int argc = 0;

    snprintf(dir, sizeof dir, "%s/sweep", r->out);
    snprintf(thr, sizeof thr, "%d", nthreads(r));
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

/*----------------------------------------------------------------------------
 * Target lists: "T1-T3, T8, T12".
 *--------------------------------------------------------------------------*/
static const char target_list[] =
    "T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13";

/* The targets of MASK (TBIT bits), consecutive ones as a range, into BUF
   of N bytes; returns BUF. */
static const char *
ids_str(unsigned mask, char *buf, size_t n)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < N_T && o < n; i++) {
        int j = i;
        if (!(mask & TBIT(i)))
            continue;
        while (j + 1 < N_T && (mask & TBIT(j + 1)))
            j++;
        if (j == i)
            o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? ", " : "",
                                  target_ids[i]);
        else
            o += (size_t)snprintf(buf + o, n - o, "%s%s%s%s", o ? ", " : "",
                                  target_ids[i], j == i + 1 ? ", " : "-",
                                  target_ids[j]);
        i = j;
    }
    return buf;
}

static unsigned
run_mask(const repro *r)
{
    unsigned m = 0;

    for (int i = 0; i < N_T; i++)
        if (r->t[i].run)
            m |= TBIT(i);
    return m;
}

static bool
step_runs(const repro *r, int s)
{
    return s == S_SWEEP ? !r->only_set
                        : (run_mask(r) & step_defs[s].targets) != 0;
}

static double
step_weight(const repro *r, int s)
{
    return r->quick ? step_defs[s].w_quick : step_defs[s].w_full;
}

/*----------------------------------------------------------------------------
 * Progress of the steps.
 *--------------------------------------------------------------------------*/
static void
prog_begin(repro *r, progress *p)
{
    char ids[128], eta[32];

    memset(p, 0, sizeof *p);
    p->mode = r->prog_want;
    if (p->mode == PROG_AUTO)
        p->mode = isatty(2) ? PROG_BAR : PROG_LINES;
    r->prog = p->mode == PROG_OFF ? NULL : p;
    if (r->prog == NULL)
        return;
    p->t0 = p->last_draw = cli_now_s();
    p->nthreads = nthreads(r);
    p->label = "starting";
    for (int s = 0; s < N_STEP; s++)
        if (step_runs(r, s))
            p->w_total += step_weight(r, s);
    for (int i = 0; i < N_T; i++)
        p->n_targets += r->t[i].run;
    if (p->mode == PROG_LINES)
        fprintf(stderr,
                "bf16emu reproduce: %s%s (%s samples, %d thread%s) into %s; "
                "ETA %s\n",
                ids_str(run_mask(r), ids, sizeof ids),
                r->only_set ? "" : " and the sweep",
                r->quick ? "quick" : "full", p->nthreads,
                p->nthreads == 1 ? "" : "s", r->out,
                duration(eta, sizeof eta, prog_eta(p, p->t0)));
    else
        prog_draw(p, false);
}

static void
prog_step_begin(repro *r, int s)
{
    progress *p = r->prog;

    if (p == NULL)
        return;
    p->label = step_defs[s].label;
    p->w_step = step_weight(r, s);
    p->frac = 0;
    if (p->mode == PROG_BAR)
        prog_draw(p, false);
}

static void
prog_step_end(repro *r, int s, double seconds, bool ok)
{
    progress *p = r->prog;
    char what[160], el[32], eta[32];
    size_t o = 0;
    double now = cli_now_s();

    if (p == NULL)
        return;
    p->w_done += p->w_step;
    p->w_step = 0;
    p->frac = 0;
    what[0] = '\0';
    for (int i = 0; i < N_T; i++)
        if ((step_defs[s].targets & TBIT(i)) && r->t[i].run) {
            p->n_done++;
            if (o < sizeof what)
                o += (size_t)snprintf(what + o, sizeof what - o, "%s%s %s",
                                      o ? ", " : "", r->t[i].id,
                                      r->t[i].pass ? "PASS" : "FAIL");
        }
    if (s == S_SWEEP)
        snprintf(what, sizeof what, "sweep %s", ok ? "done" : "failed");
    if (p->mode == PROG_LINES)
        fprintf(stderr,
                "bf16emu reproduce: [%2d/%d] %s (%.1f s); elapsed %s, ETA "
                "%s\n",
                p->n_done, p->n_targets, what, seconds,
                duration(el, sizeof el, now - p->t0),
                duration(eta, sizeof eta, prog_eta(p, now)));
    else
        prog_draw(p, false);
    p->last_draw = now;
}

static void
prog_end(repro *r)
{
    if (r->prog != NULL && r->prog->mode == PROG_BAR)
        prog_draw(r->prog, true);
}

/*----------------------------------------------------------------------------
 * An earlier summary.md, read back to merge a run with --only into it.
 *--------------------------------------------------------------------------*/

/* Splits the table row LINE ("| a | b \| c |", no newline) in place into
   its cells, trimmed, "\|" read as '|'; the number of cells (the first
   MAX in CELL), or -1 when LINE is not a table row. */
static int
split_row(char *line, char **cell, int max)
{
    size_t len = strlen(line);
    char *rd, *wr;
    int n = 0;

    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
        line[--len] = '\0';
    if (len < 2 || line[0] != '|' || line[len - 1] != '|'
        || line[len - 2] == '\\')
        return -1;
    rd = line + 1;
    while (*rd != '\0') {
        char *start, *end;
        while (*rd == ' ')
            rd++;
        start = wr = rd;
        while (*rd != '\0' && *rd != '|') {
            if (rd[0] == '\\' && rd[1] == '|')
                rd++;
            *wr++ = *rd++;
        }
        if (*rd == '|')
            rd++;
        for (end = wr; end > start && end[-1] == ' '; end--)
            ;
        *end = '\0';
        if (n < max)
            cell[n] = start;
        n++;
    }
    return n;
}

/* A run number (1 .. 10^6) in TEXT, else 0. */
static int
run_number(const char *text)
{
    char *end;
    long v;

    if (*text < '0' || *text > '9')
        return 0;
    v = strtol(text, &end, 10);
    return *end == '\0' && v >= 1 && v <= 1000000 ? (int)v : 0;
}

static run_rec *
prior_run(prior *pv, int id)
{
    for (int i = 0; i < pv->nruns; i++)
        if (pv->runs[i].id == id)
            return &pv->runs[i];
    return NULL;
}

static void
prior_free(prior *pv)
{
    for (int s = 0; s < N_STEP; s++)
        free(pv->section[s]);
}

/* Reads TEXT, a summary.md written by reproduce (this version's or the
   earlier one without the run column), into PV: the target rows, the
   runs, the sections.  Lines it does not know are left out; the
   gnuplot notes belong to the run that wrote them and are dropped.
   False when out of memory. */
static bool
prior_parse(prior *pv, const char *text)
{
    cli_buf sec[N_STEP];
    run_rec legacy;
    bool have_legacy = false, ok = true;
    int cur = -1;

    memset(pv, 0, sizeof *pv);
    memset(&legacy, 0, sizeof legacy);
    for (int s = 0; s < N_STEP; s++)
        cli_buf_init(&sec[s]);
    for (const char *line = text, *next; *line != '\0'; line = next) {
        const char *nl = strchr(line, '\n');
        size_t len;
        char *row, *cell[8];
        int n;

        next = nl != NULL ? nl + 1 : line + strlen(line);
        len = (size_t)(next - line);
        if (strncmp(line, "## ", 3) == 0) {
            cur = -1;
            for (int s = 0; s < N_STEP; s++)
                if (step_defs[s].heading != NULL
                    && strncmp(line, step_defs[s].heading,
                               strlen(step_defs[s].heading))
                           == 0)
                    cur = s;
            if (cur >= 0)
                sec[cur].len = 0;
        }
        if (cur >= 0) {
            if (strncmp(line, "gnuplot is not installed", 24) != 0
                && strncmp(line, "A plot failed:", 14) != 0)
                cli_buf_put_mem(&sec[cur], line, len);
            continue;
        }
        row = malloc(len + 1);
        if (row == NULL) {
            ok = false;
            break;
        }
        memcpy(row, line, len);
        row[len - (nl != NULL)] = '\0';
        n = split_row(row, cell, 8);
        if (n >= 5) {
            int i, id = 1;
            for (i = 0; i < N_T; i++)
                if (strcmp(cell[0], target_ids[i]) == 0)
                    break;
            if (n >= 6)
                id = run_number(cell[5]);
            if (i < N_T && id > 0) {
                pv->row_run[i] = id;
                pv->pass[i] = strcmp(cell[4], "PASS") == 0;
                snprintf(pv->obtained[i], sizeof pv->obtained[i], "%s",
                         cell[3]);
            } else if (n == 6 && run_number(cell[0]) > 0
                       && pv->nruns < MAX_RUNS) {
                run_rec *x = &pv->runs[pv->nruns++];
                x->id = run_number(cell[0]);
                snprintf(x->date, sizeof x->date, "%s", cell[1]);
                snprintf(x->version, sizeof x->version, "%s", cell[2]);
                snprintf(x->samples, sizeof x->samples, "%s", cell[3]);
                snprintf(x->computed, sizeof x->computed, "%s", cell[4]);
                x->seconds = strtod(cell[5], NULL);
                x->sweep = strstr(x->computed, "sweep") != NULL;
            }
        } else if (n < 0 && strncmp(row, "bf16emu ", 8) == 0
                   && sscanf(row, "bf16emu %31[^,], %31[^,], %15s run, %lf s",
                             legacy.version, legacy.date, legacy.samples,
                             &legacy.seconds)
                          == 4) {
            have_legacy = true;
        }
        free(row);
    }
    for (int s = 0; s < N_STEP; s++) {
        /* one blank line after each section */
        while (sec[s].len > 0 && sec[s].p[sec[s].len - 1] == '\n')
            sec[s].len--;
        if (sec[s].len > 0 && !sec[s].failed) {
            cli_buf_puts(&sec[s], "\n\n");
            pv->section[s] = sec[s].failed ? NULL : strdup(sec[s].p);
            ok = ok && pv->section[s] != NULL;
        }
        cli_buf_free(&sec[s]);
    }
    /* the earlier format: one run, described by the line under the title */
    if (pv->nruns == 0) {
        unsigned m = 0;
        char ids[96];
        if (!have_legacy) {
            snprintf(legacy.date, sizeof legacy.date, "?");
            snprintf(legacy.version, sizeof legacy.version, "?");
            snprintf(legacy.samples, sizeof legacy.samples, "?");
        }
        legacy.id = 1;
        for (int i = 0; i < N_T; i++)
            if (pv->row_run[i])
                m |= TBIT(i);
        legacy.sweep = pv->section[S_SWEEP] != NULL;
        snprintf(legacy.computed, sizeof legacy.computed, "%s%s",
                 ids_str(m, ids, sizeof ids), legacy.sweep ? ", sweep" : "");
        pv->runs[pv->nruns++] = legacy;
    }
    if (pv->section[S_SWEEP] != NULL) {
        for (int i = pv->nruns - 1; i >= 0; i--)
            if (pv->runs[i].sweep)
                pv->sweep_run = pv->runs[i].id;
        if (pv->sweep_run == 0)
            pv->sweep_run = pv->runs[0].id;
    }
    /* rows whose run is not in the table: a run of unknown date */
    for (int i = 0; i < N_T; i++)
        if (pv->row_run[i] && prior_run(pv, pv->row_run[i]) == NULL
            && pv->nruns < MAX_RUNS) {
            run_rec *x = &pv->runs[pv->nruns++];
            memset(x, 0, sizeof *x);
            x->id = pv->row_run[i];
            snprintf(x->date, sizeof x->date, "?");
            snprintf(x->version, sizeof x->version, "?");
            snprintf(x->samples, sizeof x->samples, "?");
            snprintf(x->computed, sizeof x->computed, "?");
        }
    for (int i = 0; i < pv->nruns; i++)
        if (pv->runs[i].id > pv->max_id)
            pv->max_id = pv->runs[i].id;
    for (int i = 0; i < N_T; i++)
        if (pv->row_run[i] > pv->max_id)
            pv->max_id = pv->row_run[i];
    return ok;
}

/*----------------------------------------------------------------------------
 * summary.md
 *--------------------------------------------------------------------------*/

/* S into B with '|' written as "\|", so that it stays one table cell. */
static void
put_cell(cli_buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|')
            cli_buf_putc(b, '\\');
        cli_buf_putc(b, *s);
    }
}

/* The rows of the summary: this run's targets, and from the earlier
   summary (when merging) the others; *KEPT the targets kept. */
static void
summary_rows(const repro *r, int *row_run, bool *pass, const char **obtained,
             unsigned *kept)
{
    *kept = 0;
    for (int i = 0; i < N_T; i++) {
        row_run[i] = 0;
        if (r->t[i].run) {
            row_run[i] = r->run_id;
            pass[i] = r->t[i].pass;
            obtained[i] = r->t[i].obtained;
        } else if (r->prev != NULL && r->prev->row_run[i] != 0) {
            row_run[i] = r->prev->row_run[i];
            pass[i] = r->prev->pass[i];
            obtained[i] = r->prev->obtained[i];
            *kept |= TBIT(i);
        }
    }
}

/* The run of the sweep section: this run's, the earlier one's, or 0. */
static int
sweep_run(const repro *r)
{
    if (!r->only_set)
        return r->run_id;
    return r->prev != NULL ? r->prev->sweep_run : 0;
}

static void
summary(const repro *r, cli_buf *b, double total_s)
{
    int npass = 0, nrow = 0, row_run[N_T], ids[N_T + 2], nids = 0;
    bool pass[N_T], merged;
    const char *obtained[N_T];
    unsigned kept;
    time_t now = time(NULL);
    struct tm tmv;
    char date[32], mine[96];

    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tmv);
    summary_rows(r, row_run, pass, obtained, &kept);
    merged = kept != 0 || (r->only_set && sweep_run(r) != 0);
    for (int i = 0; i < N_T; i++)
        if (row_run[i]) {
            nrow++;
            npass += pass[i];
        }
    ids_str(run_mask(r), mine, sizeof mine);
    cli_buf_printf(b,
                   "# bf16emu reproduce: Qiu & Yao, arXiv:2510.04212\n\n"
                   "bf16emu %s, %s, %s run%s%s, %.0f s%s.  **%d of %d "
                   "targets PASS.**\n\n",
                   PACKAGE_VERSION, date, r->quick ? "quick" : "full",
                   merged ? " of " : "", merged ? mine : "", total_s,
                   merged ? ", merged into the earlier summary (the run "
                            "column says which run each row comes from)"
                          : "",
                   npass, nrow);
    cli_buf_puts(b, "Every number below was computed by bf16emu reproduce, "
                    "from generated inputs with fixed seeds; the expected "
                    "values are the paper's (or, where marked in "
                    "doc/reproduce.md, what its analysis implies).  Rerun "
                    "some targets with `bf16emu reproduce --only ID,...`: "
                    "their rows, files and sections are replaced and the "
                    "others kept.\n\n");
    cli_buf_puts(b, "| target | what | expected | obtained | result | run |\n"
                    "|---|---|---|---|---|---|\n");
    for (int i = 0; i < N_T; i++) {
        if (!row_run[i])
            continue;
        cli_buf_printf(b, "| %s | %s | %s | ", target_ids[i], specs[i].what,
                       specs[i].expected);
        put_cell(b, obtained[i]);
        cli_buf_printf(b, " | %s | %d |\n", pass[i] ? "PASS" : "**FAIL**",
                       row_run[i]);
    }
    /* the runs still present, in order */
    for (int i = 0; i < N_T; i++)
        if (row_run[i])
            ids[nids++] = row_run[i];
    if (sweep_run(r) != 0)
        ids[nids++] = sweep_run(r);
    cli_buf_puts(b, "\n| run | date | bf16emu | samples | computed | time |\n"
                    "|---|---|---|---|---|---|\n");
    for (int id = 1, last = 0; nids > 0; id = last + 1) {
        int next = 0;
        const run_rec *x;
        for (int k = 0; k < nids; k++)
            if (ids[k] >= id && (next == 0 || ids[k] < next))
                next = ids[k];
        if (next == 0)
            break;
        last = next;
        if (next == r->run_id)
            cli_buf_printf(b, "| %d | %s | %s | %s | %s%s | %.0f s |\n", next,
                           date, PACKAGE_VERSION, r->quick ? "quick" : "full",
                           mine, r->only_set ? "" : ", sweep", total_s);
        else if (r->prev != NULL && (x = prior_run(r->prev, next)) != NULL) {
            cli_buf_printf(b, "| %d | ", next);
            put_cell(b, x->date);
            cli_buf_puts(b, " | ");
            put_cell(b, x->version);
            cli_buf_puts(b, " | ");
            put_cell(b, x->samples);
            cli_buf_puts(b, " | ");
            put_cell(b, x->computed);
            cli_buf_printf(b, " | %.0f s |\n", x->seconds);
        }
    }
    cli_buf_puts(b, "\n");
    for (int s = 0; s < N_STEP; s++) {
        if (r->section[s].len > 0)
            cli_buf_put_mem(b, r->section[s].p, r->section[s].len);
        else if (r->prev != NULL && r->prev->section[s] != NULL)
            cli_buf_puts(b, r->prev->section[s]);
    }
    if (r->plot_missing || r->plot_error[0])
        cli_buf_printf(b, "## Notes\n\n");
    if (r->plot_missing)
        cli_buf_printf(b,
                       "gnuplot is not installed: run %d drew no plots "
                       "(the .dat files are there).\n",
                       r->run_id);
    if (r->plot_error[0])
        cli_buf_printf(b, "A plot of run %d failed: %s\n", r->run_id,
                       r->plot_error);
}

/*----------------------------------------------------------------------------
 * The steps.
 *--------------------------------------------------------------------------*/

/* The T9 section: the table of t9-ablations.csv. */
static void
t9_section(cli_buf *sec, const cli_buf *csv)
{
    char *save = NULL, *copy = strdup(csv->p ? csv->p : "");
    int line = 0;

    cli_buf_puts(sec, "## T9: ablations\n\n");
    cli_buf_puts(sec, "| ablation | n | mean delta_lp - delta_hp "
                      "| se | t | 95% CI | / none |\n"
                      "|---|---|---|---|---|---|---|\n");
    for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save)) {
        char *f[8], *s2 = NULL;
        int n = 0;
        if (line++ == 0)
            continue;
        for (char *x = strtok_r(l, ",", &s2); x && n < 8;
             x = strtok_r(NULL, ",", &s2))
            f[n++] = x;
        if (n == 8)
            cli_buf_printf(sec,
                           "| %s | %s | %s | %s | %s | [%s, %s] | "
                           "%s |\n",
                           f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
    }
    free(copy);
    cli_buf_puts(sec, "\nThe ablations that keep O (or delta) out of BF16 "
                      "remove the bias of delta; computing without tiles "
                      "does not (t9-ablations.csv).\n\n");
}

/* Runs step S: its targets, files, plots and section.  False when a file
   could not be written (message printed). */
static bool
run_step(repro *r, int s)
{
    cli_buf a, b, *sec = &r->section[s];
    bool ok = true;

    cli_buf_init(&a);
    cli_buf_init(&b);
    switch (s) {
    case S_TRACE:
        trace_targets(r, &a);
        ok = write_file(r, "eq4-trace.dat", a.p, a.len);
        plot(r, "eq4-trace.gp", "eq4-trace.dat", "eq4-trace", NULL);
        cli_buf_puts(sec,
                     "## T1-T3: the Eq. 4 trace\n\n"
                     "![signed errors](eq4-trace.png)\n\n"
                     "The same two BF16 operands, with and without the FP32 "
                     "residual: the residual sets the sticky bit, so the "
                     "exact tie (T2, rounded to even, +1/2 ulp) becomes a "
                     "round away from zero (T1, about -1/2 ulp).  T3 is the "
                     "opposite case, guard bit 0: a small positive error.  "
                     "Command: `bf16emu trace --acc f32 --out bf16 "
                     "f32:0xC01A0E2E bf16:0xC013`.\n\n");
        break;
    case S_T4:
        t4_products(r);
        break;
    case S_T5T6:
        t5_t6(r);
        break;
    case S_T7T8:
        t7_t8(r);
        break;
    case S_T9:
        t9_ablations(r, &a);
        ok = write_file(r, "t9-ablations.csv", a.p, a.len);
        t9_section(sec, &a);
        break;
    case S_T10:
        t10_steps(r, &a);
        ok = write_file(r, "fig5a-cumulative.dat", a.p, a.len);
        plot(r, "fig5a.gp", "fig5a-cumulative.dat", "fig5a-cumulative", NULL);
        cli_buf_puts(sec, "## T10: the Fig. 5(a) analogue\n\n"
                          "![cumulative delta error](fig5a-cumulative.png)"
                          "\n\n");
        break;
    case S_T11:
        t11_prefix(r, &a);
        ok = write_file(r, "fig6-prefix.dat", a.p, a.len);
        plot(r, "fig6.gp", "fig6-prefix.dat", "fig6-prefix", NULL);
        cli_buf_puts(sec, "## T11: the Fig. 6 analogue\n\n"
                          "![prefix error](fig6-prefix.png)\n\n");
        break;
    case S_T12T13:
        t12_t13(r, &a, &b);
        if (!r->t[T12].run) /* T13 alone: T12's files stay */
            break;
        ok = write_file(r, "t12-bias.csv", a.p, a.len)
             && write_file(r, "t12-bias.dat", b.p, b.len);
        plot(r, "t12.gp", "t12-bias.dat", "t12-bias", NULL);
        cli_buf_puts(sec,
                     "## T12, T13: Monte-Carlo bias of O\n\n"
                     "![bias against k](t12-bias.png)\n\n"
                     "Mean O_lp - O_exact (absolute) over every element, "
                     "policy paper-eq4 (the paper's Eq. 4 abstraction), "
                     "N = 512 keys, k at the maximum 3, the others 12 to 30 "
                     "below; t12-bias.csv has the intervals.\n\n");
        break;
    default:
        ok = run_sweep_part(r) == 0;
        cli_buf_puts(sec,
                     "## The bias against the mean of V\n\n"
                     "![bias against the mean of V](sweep/bias-vmean.png)\n\n"
                     "`bf16emu sweep` with 2 repeated maxima, paper-eq4, "
                     "without and with the fix (sweep/sweep.csv also holds "
                     "the stage attribution: the share of the bias that "
                     "goes when each rounding is left out).\n\n");
        break;
    }
    ok = ok && !a.failed && !b.failed && !sec->failed;
    cli_buf_free(&a);
    cli_buf_free(&b);
    return ok;
}

/*----------------------------------------------------------------------------
 * Options and the run.
 *--------------------------------------------------------------------------*/
void
reproduce_help(FILE *out)
{
    fputs(
        "usage: bf16emu reproduce [--out DIR] [--quick] [--only T1,T12,...]\n"
        "                         [--threads N] [--no-plot] [--force] "
        "[--json]\n"
        "                         [--progress | --no-progress]\n"
        "\n"
        "Computes the paper's reproduction targets T1-T13 (see "
        "doc/reproduce.md)\n"
        "and writes DIR (default results): summary.md (expected, obtained, "
        "PASS or\n"
        "FAIL per target), t9-ablations.csv, t12-bias.csv, the data files "
        "of the\n"
        "plots and the plots (PNG and SVG, with gnuplot): eq4-trace, "
        "fig6-prefix,\n"
        "t12-bias, fig5a-cumulative, sweep/bias-vmean.  Exit 1 when a "
        "target fails.\n"
        "\n"
        "  --quick        smaller samples (for tests; about 4x faster)\n"
        "  --only LIST    only these targets (T1 .. T13, separated by "
        "commas); a\n"
        "                 summary.md already in DIR keeps the other "
        "targets' rows,\n"
        "                 files and sections, and its run column says "
        "which run\n"
        "                 each row comes from\n"
        "  --threads N    OpenMP threads (results do not depend on N)\n"
        "  --no-plot      no gnuplot\n"
        "  --json         the targets as one JSON object on stdout\n"
        "  --progress     progress on stderr (the default): a bar on a "
        "terminal,\n"
        "                 else one line per target or group of targets\n"
        "  --no-progress  no progress\n"
        "  --force        write into DIR even if it holds files not written "
        "by\n"
        "                 reproduce\n",
        out);
}

/* The --only list V into R->only; false after an error message. */
static bool
take_only(repro *r, const char *v)
{
    const char *p = v;

    if (*v == '\0') {
        cli_error(CMD,
                  "--only: an empty list (expected target names "
                  "separated by commas, from %s)",
                  target_list);
        return false;
    }
    r->only_set = true;
    for (;;) {
        size_t len = strcspn(p, ","), k;
        const char *e = p + len;
        int i;
        while (p < e && *p == ' ')
            p++;
        while (e > p && e[-1] == ' ')
            e--;
        k = (size_t)(e - p);
        if (k == 0) {
            cli_error(CMD,
                      "--only '%s': an empty target name (expected target "
                      "names separated by commas, from %s)",
                      v, target_list);
            return false;
        }
        for (i = 0; i < N_T; i++)
            if (strlen(target_ids[i]) == k
                && strncasecmp(p, target_ids[i], k) == 0)
                break;
        if (i == N_T) {
            cli_error(CMD,
                      "--only: unknown target '%.*s' (expected one of %s)",
                      (int)k, p, target_list);
            return false;
        }
        r->only[i] = true;
        p += strcspn(p, ",");
        if (*p == '\0')
            return true;
        p++;
    }
}

static bool
take(void *ctx, int id, const char *v)
{
    repro *r = ctx;

    switch (id) {
    case 1:
        if (*v == '\0') {
            cli_error(CMD, "--out: an empty directory name");
            return false;
        }
        r->out = v;
        return true;
    case 2:
        r->quick = true;
        return true;
    case 3:
        return take_only(r, v);
    case 4: {
        uint64_t n;
        if (!cli_parse_u64(CMD, "--threads", v, &n))
            return false;
        if (n < 1 || n > 1024) {
            cli_error(CMD, "--threads %s: expected 1 .. 1024", v);
            return false;
        }
        r->threads = (long)n;
        return true;
    }
    case 5:
        r->no_plot = true;
        return true;
    case 7:
        r->json = true;
        return true;
    case 8:
        r->prog_want = PROG_AUTO;
        return true;
    case 9:
        r->prog_want = PROG_OFF;
        return true;
    default:
        r->force = true;
        return true;
    }
}

/* DIR may be written: it does not exist, is empty, or holds a
   summary.md written by reproduce (then *OLD is its text, malloc'd); or
   --force. */
static bool
check_out(const repro *r, char **old)
{
    struct stat st;
    char *sp, *text;
    size_t len;
    bool ours;

    *old = NULL;
    if (stat(r->out, &st) != 0) {
        if (mkdir(r->out, 0755) != 0) {
            cli_error(CMD, "--out %s: cannot create: %s", r->out,
                      strerror(errno));
            return false;
        }
        return true;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error(CMD, "--out %s: not a directory", r->out);
        return false;
    }
    sp = cli_path_join(r->out, "summary.md");
    if (sp == NULL) {
        cli_error(CMD, "out of memory");
        return false;
    }
    text = cli_read_all(sp, &len);
    if (text == NULL && errno != ENOENT && !r->force) {
        cli_error(CMD, "%s: cannot read: %s", sp, strerror(errno));
        free(sp);
        return false;
    }
    free(sp);
    if (text == NULL)
        return true;
    ours =
        strncmp(text, "# bf16emu reproduce", 19) == 0 && strlen(text) == len;
    if (ours) {
        *old = text;
        return true;
    }
    free(text);
    if (r->force)
        return true;
    cli_error(CMD,
              "--out %s: holds a summary.md not written by bf16emu "
              "reproduce (--force writes there anyway)",
              r->out);
    return false;
}

/* The JSON report of this run. */
static bool
report_json(const repro *r, double seconds, int *rc)
{
    cli_buf jb;
    cli_json j;
    int np = 0, nr = 0, row_run[N_T];
    bool pass[N_T];
    const char *obtained[N_T];
    unsigned kept;

    summary_rows(r, row_run, pass, obtained, &kept);
    cli_buf_init(&jb);
    cli_json_init(&j, &jb);
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "tool", "bf16emu reproduce");
    cli_json_string(&j, "version", PACKAGE_VERSION);
    cli_json_string(&j, "out", r->out);
    cli_json_bool(&j, "quick", r->quick);
    cli_json_array_begin(&j, "targets");
    for (int i = 0; i < N_T; i++) {
        if (!r->t[i].run)
            continue;
        nr++;
        np += r->t[i].pass;
        cli_json_object_begin(&j, NULL);
        cli_json_string(&j, "id", r->t[i].id);
        cli_json_string(&j, "what", r->t[i].what);
        cli_json_string(&j, "expected", r->t[i].expected);
        cli_json_string(&j, "obtained", r->t[i].obtained);
        cli_json_bool(&j, "pass", r->t[i].pass);
        cli_json_double(&j, "seconds", r->t[i].seconds);
        cli_json_object_end(&j);
    }
    cli_json_array_end(&j);
    cli_json_int(&j, "passed", np);
    cli_json_int(&j, "run", nr);
    cli_json_int(&j, "run_id", r->run_id);
    cli_json_array_begin(&j, "kept");
    for (int i = 0; i < N_T; i++)
        if (kept & TBIT(i)) {
            cli_json_object_begin(&j, NULL);
            cli_json_string(&j, "id", target_ids[i]);
            cli_json_int(&j, "run_id", row_run[i]);
            cli_json_bool(&j, "pass", pass[i]);
            cli_json_object_end(&j);
        }
    cli_json_array_end(&j);
    cli_json_double(&j, "seconds", seconds);
    cli_json_object_end(&j);
    cli_json_finish(&j);
    *rc = CLI_EXIT_OK;
    return cli_report_emit(CMD, &jb, rc);
}

/* The report of this run on stdout: the targets, where the summary is,
   and what it kept from earlier runs. */
static void
report_text(const repro *r, double seconds)
{
    const char *sep = "";
    int row_run[N_T], from[N_T + 1], nfrom = 0;
    bool pass[N_T];
    const char *obtained[N_T];
    unsigned kept;
    char ids[96];

    summary_rows(r, row_run, pass, obtained, &kept);
    printf("bf16emu reproduce: ");
    for (int i = 0; i < N_T; i++)
        if (r->t[i].run) {
            printf("%s%s %s", sep, r->t[i].id, r->t[i].pass ? "PASS" : "FAIL");
            sep = ", ";
        }
    printf("\n-> %s/summary.md (%.0f s)", r->out, seconds);
    if (kept == 0 && !(r->only_set && sweep_run(r) != 0)) {
        printf("\n");
        return;
    }
    for (int i = 0; i <= N_T; i++) {
        int id = i < N_T ? ((kept & TBIT(i)) ? row_run[i] : 0) : sweep_run(r);
        bool seen = false;
        for (int k = 0; k < nfrom; k++)
            seen = seen || from[k] == id;
        if (id != 0 && !seen)
            from[nfrom++] = id;
    }
    printf(", run %d merged into the earlier summary: kept %s%s%s from run%s",
           r->run_id, ids_str(kept, ids, sizeof ids),
           kept != 0 && sweep_run(r) != 0 ? " and " : "",
           sweep_run(r) != 0 ? "the sweep" : "", nfrom > 1 ? "s" : "");
    for (int k = 0; k < nfrom; k++)
        printf("%s%d", k == 0 ? " " : ", ", from[k]);
    printf("\n");
}

int
reproduce_main(int argc, char **argv)
{
    static const cli_option opts[] = {
        {"help", false, 0},     {"out", true, 1},
        {"quick", false, 2},    {"only", true, 3},
        {"threads", true, 4},   {"no-plot", false, 5},
        {"force", false, 6},    {"json", false, 7},
        {"progress", false, 8}, {"no-progress", false, 9},
        {NULL, false, 0}};
    repro r;
    progress prog;
    prior prev;
    int rc;
    double t0 = cli_now_s();
    cli_buf sum;
    char *old = NULL;
    bool all_pass = true, ok = true;

    memset(&r, 0, sizeof r);
    r.out = "results";
    r.prog_want = PROG_AUTO;
    rc = cli_take_options(CMD, argc, argv, opts, 0, reproduce_help,
                          "reproduce takes options only", take, &r);
    if (rc >= 0)
        return rc;
    for (int i = 0; i < N_T; i++) {
        r.t[i].id = target_ids[i];
        r.t[i].what = specs[i].what;
        r.t[i].expected = specs[i].expected;
        r.t[i].run = !r.only_set || r.only[i];
        snprintf(r.t[i].obtained, sizeof r.t[i].obtained, "not computed");
    }
    if (!check_out(&r, &old))
        return CLI_EXIT_USAGE;
    /* a run of some targets merges into the summary already there */
    if (old != NULL && r.only_set) {
        if (!prior_parse(&prev, old)) {
            prior_free(&prev);
            free(old);
            return cli_error(CMD, "out of memory");
        }
        r.prev = &prev;
    }
    free(old);
    r.run_id = r.prev != NULL ? r.prev->max_id + 1 : 1;
    for (int s = 0; s < N_STEP; s++)
        cli_buf_init(&r.section[s]);
    cli_buf_init(&sum);

    prog_begin(&r, &prog);
    for (int s = 0; s < N_STEP; s++) {
        double ts;
        bool step_ok;
        if (!step_runs(&r, s))
            continue;
        prog_step_begin(&r, s);
        ts = cli_now_s();
        step_ok = run_step(&r, s);
        ts = cli_now_s() - ts;
        for (int i = 0; i < N_T; i++)
            if (step_defs[s].targets & TBIT(i))
                r.t[i].seconds = ts;
        prog_step_end(&r, s, ts, step_ok);
        ok = ok && step_ok;
    }
    prog_end(&r);
    summary(&r, &sum, cli_now_s() - t0);
    ok = ok && !sum.failed && write_file(&r, "summary.md", sum.p, sum.len);
    for (int i = 0; i < N_T; i++)
        if (r.t[i].run && !r.t[i].pass)
            all_pass = false;
    if (ok && r.json) {
        if (!report_json(&r, cli_now_s() - t0, &rc))
            ok = false;
    } else if (ok) {
        report_text(&r, cli_now_s() - t0);
    }
    for (int s = 0; s < N_STEP; s++)
        cli_buf_free(&r.section[s]);
    cli_buf_free(&sum);
    if (r.prev != NULL)
        prior_free(r.prev);
    if (!ok)
        return CLI_EXIT_USAGE;
    return all_pass ? CLI_EXIT_OK : 1;
}
