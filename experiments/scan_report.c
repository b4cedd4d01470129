/* scan_report.c -- bf16emu scan's reports: the text and JSON reports,
   --csv's table and --plot's files (scan_local.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "experiments/plot.h"
#include "experiments/scan_local.h"

/*----------------------------------------------------------------------------
 * Output.
 *--------------------------------------------------------------------------*/
static double
mean_or_nan(const bias_cell *c)
{
    return c->n > 0 ? c->mean : NAN;
}

static double
frac(uint64_t a, uint64_t b)
{
    return b > 0 ? (double)a / (double)b : NAN;
}

static void
put_num(cli_buf *b, double v, int w, int prec)
{
    if (isnan(v))
        cli_buf_printf(b, " %*s", w, "-");
    else
        cli_buf_printf(b, " %*.*f", w, prec, v);
}

static void
json_spec(cli_json *j, const scan_dwq_spec *r)
{
    cli_json_array_begin(j, "sigma");
    for (size_t i = 0; r->ok && i < r->k && i < SCAN_DWQ_SIGMAS; i++)
        cli_json_double(j, NULL, r->sigma[i]);
    cli_json_array_end(j);
    cli_json_double(j, "fro", r->ok ? sqrt(r->fro2) : NAN);
    cli_json_double(j, "energy1", r->ok ? r->energy1 : NAN);
    cli_json_double(j, "stable_rank", r->ok ? r->stable_rank : NAN);
}

static void
json_dwq_head(cli_json *j, const scan_group *g)
{
    if (!g->has_dwq) {
        cli_json_null(j, "dwq");
        return;
    }
    cli_json_object_begin(j, "dwq");
    for (size_t t = 0; t < g->n_by_step; t++)
        if (g->by_step[t].dwq != NULL) {
            cli_json_int(j, "rows", (long long)g->by_step[t].eq.d);
            cli_json_int(j, "cols", (long long)g->by_step[t].dwq_c);
            break;
        }
    cli_json_double(j, "cos_adjacent_mean", g->dsum.cos_mean);
    cli_json_double(j, "growth", g->dsum.growth);
    cli_json_object_begin(j, "cum");
    json_spec(j, &g->dsum.cum);
    cli_json_object_end(j);
    cli_json_array_begin(j, "steps");
    for (size_t t = 0; t < g->n_by_step; t++) {
        const scan_step *r = &g->by_step[t];
        long p;
        if (r->dwq == NULL)
            continue;
        p = scan_group_dwq_prev(g, t);
        cli_json_object_begin(j, NULL);
        cli_json_int(j, "step", r->step);
        json_spec(j, &r->sp);
        cli_json_double(j, "cos_prev",
                        p >= 0 ? scan_dwq_cosine(g->by_step[p].dwq, r->dwq,
                                            r->eq.d * r->dwq_c)
                               : NAN);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_object_end(j);
}

/* The main table: one row per (layer, head). */
static void
text_rows(const scan_ctx *x, cli_buf *b)
{
    for (size_t i = 0; i < x->gr.n; i++) {
        const scan_group *g = &x->gr.g[i];
        const scan_stats *s = &g->st;
        cli_buf_printf(b, "%5lld %4zu %6" PRIu64 " %6" PRIu64 " %6" PRIu64
                          " %6" PRIu64 " %6" PRIu64 " %6" PRIu64,
                       g->layer, g->head, s->rows, s->rep_exact, s->near_tol,
                       s->p1_ge2, s->p1_ge2_fix, s->sink_rows);
        put_num(b, s->rows ? s->sum_p_max / (double)s->rows : NAN, 6, 3);
        put_num(b, frac(s->one_sign, s->features), 6, 3);
        put_num(b, mean_or_nan(&s->o_cap), 9, 4);
        put_num(b, mean_or_nan(&s->o_emu), 9, 4);
        put_num(b, mean_or_nan(&s->o_fix), 9, 4);
        if (s->has_do) {
            cli_buf_printf(b, " %10.3e %10.3e", mean_or_nan(&s->d_emu),
                           mean_or_nan(&s->d_fix));
        } else {
            cli_buf_printf(b, " %10s %10s", "needs dO", "needs dO");
        }
        put_num(b, frac(s->o_match, s->o_elems), 6, 3);
        cli_buf_printf(b, " %7.4f %4zu", g->risk, g->rank);
        if (s->bad_heads > 0)
            cli_buf_printf(b, "  (%" PRIu64 " head%s left out: %" PRIu64
                              " non-finite inputs)",
                           s->bad_heads, s->bad_heads == 1 ? "" : "s",
                           s->bad_elems);
        cli_buf_putc(b, '\n');
    }
}

/* Eq. 2-3's table, when some head has its sums. */
static void
text_eq23(const scan_ctx *x, cli_buf *b)
{
    bool any_eq = false;
    for (size_t i = 0; i < x->gr.n; i++)
        any_eq = any_eq || x->gr.g[i].st.eq.d > 0;
    if (any_eq) {
        cli_buf_puts(b,
                     "\nEq. 2-3: the error of delta carried into dQ, "
                     "u_i = -scale e_i (P K)_i; coherence "
                     "|sum u| / sum |u|,\nrank1 the share of one "
                     "direction, cos the direction of sum u between "
                     "consecutive steps (mean),\ncum_err the sum of "
                     "e_i over rows and steps\n\n");
        cli_buf_printf(b, "%5s %4s %5s %9s %9s %9s %11s\n", "layer",
                       "head", "steps", "coherence", "rank1", "cos",
                       "cum_err");
        for (size_t i = 0; i < x->gr.n; i++) {
            const scan_group *g = &x->gr.g[i];
            cli_buf_printf(b, "%5lld %4zu %5zu", g->layer, g->head,
                           g->n_by_step);
            put_num(b, scan_eq23_coherence(&g->st.eq), 9, 4);
            put_num(b, scan_eq23_rank1(&g->st.eq), 9, 4);
            put_num(b, scan_group_cos_adjacent(g), 9, 4);
            cli_buf_printf(b, " %11.3e\n", g->st.eq.err_sum);
        }
    }
}

/* Eq. 2's dW_Q tables (per head, per layer and step), when some head has
   a dW_Q error. */
static void
text_dwq(const scan_ctx *x, cli_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < x->gr.n; i++)
        any = any || x->gr.g[i].has_dwq;
    if (any) {
        cli_buf_puts(b,
                     "\nEq. 2: the error of dW_Q that delta's error "
                     "carries, sum_i u_i x_i^T (X the query\n"
                     "projection's input); per head over steps: "
                     "energy1 = sigma1^2 / |M|_F^2 and the stable\n"
                     "rank |M|_F^2 / sigma1^2 of the sum over steps, "
                     "cos the Frobenius cosine of\nconsecutive steps "
                     "(mean), growth |sum_t M_t|_F / sqrt(sum_t "
                     "|M_t|_F^2)\n\n");
        cli_buf_printf(b, "%5s %4s %5s %11s %9s %9s %9s %9s\n",
                       "layer", "head", "steps", "sigma1", "energy1",
                       "srank", "cos", "growth");
        for (size_t i = 0; i < x->gr.n; i++) {
            const scan_group *g = &x->gr.g[i];
            const scan_dwq_sum *sm = &g->dsum;
            if (!g->has_dwq)
                continue;
            cli_buf_printf(b, "%5lld %4zu %5zu", g->layer, g->head,
                           sm->steps);
            cli_buf_printf(b, " %11.4e",
                           sm->cum.ok ? sm->cum.sigma[0] : NAN);
            put_num(b, sm->cum.ok ? sm->cum.energy1 : NAN, 9, 4);
            put_num(b, sm->cum.ok ? sm->cum.stable_rank : NAN, 9, 3);
            put_num(b, sm->cos_mean, 9, 4);
            put_num(b, sm->growth, 9, 3);
            cli_buf_putc(b, '\n');
        }
        cli_buf_puts(b, "\nper layer (its heads' rows stacked), per "
                        "step:\n");
        cli_buf_printf(b, "%5s %6s %5s %11s %9s %9s\n", "layer",
                       "step", "heads", "sigma1", "energy1", "srank");
        for (size_t k = 0; k < x->gr.n_layers; k++) {
            const scan_layer *L = &x->gr.layers[k];
            bool ok = L->ok && L->fro2 > 0;
            cli_buf_printf(b, "%5lld %6lld %5zu", L->layer, L->step,
                           L->heads);
            cli_buf_printf(b, " %11.4e", L->ok ? L->sigma1 : NAN);
            put_num(b, ok ? L->sigma1 * L->sigma1 / L->fro2 : NAN, 9,
                    4);
            put_num(b, ok && L->sigma1 > 0
                           ? L->fro2 / (L->sigma1 * L->sigma1)
                           : NAN,
                    9, 3);
            cli_buf_putc(b, '\n');
        }
    }
}

void
scan_report_text(const scan_ctx *x, const size_t *order, cli_buf *b)
{
    bool any_do = false;
    uint64_t bad = 0;

    for (size_t i = 0; i < x->gr.n; i++) {
        any_do = any_do || x->gr.g[i].st.has_do;
        bad += x->gr.g[i].st.bad_heads;
    }
    cli_buf_printf(b,
                   "scan: %zu call%s, %zu (layer, head) cells; policy %s, "
                   "exp %s, fix %s (tol %g); reference %s\n",
                   x->n_calls, x->n_calls == 1 ? "" : "s", x->gr.n,
                   x->kernel.name, x->exp.name,
                   fa_fix_name(x->fix.kind), x->fix.tol,
                   x->ref == SCAN_REF_EXACT ? "exact" : "binary64");
    cli_buf_puts(b,
                 "O errors: mean (computed - exact) in ulps of the call's "
                 "format (BF16, or FP16 for FP16 calls); delta: mean "
                 "absolute (computed - exact)\n\n");
    cli_buf_printf(b,
                   "%5s %4s %6s %6s %6s %6s %6s %6s %6s %6s %9s %9s %9s "
                   "%10s %10s %6s %7s %4s\n",
                   "layer", "head", "rows", "rep", "near", "P1>=2", "fixP1",
                   "sink", "p_max", "1sign", "O_cap", "O_emu", "O_fix",
                   "d_emu", "d_fix", "match", "risk", "rank");
    text_rows(x, b);
    text_eq23(x, b);
    text_dwq(x, b);
    cli_buf_puts(b, "\nhighest risk:");
    for (size_t r = 0; r < x->gr.n && r < 10; r++)
        cli_buf_printf(b, "%s L%lld.h%zu %.4f", r ? "," : "",
                       x->gr.g[order[r]].layer, x->gr.g[order[r]].head,
                       x->gr.g[order[r]].risk);
    cli_buf_putc(b, '\n');
    if (!any_do)
        cli_buf_puts(b, "delta: the capture has no dO; the bias of delta = "
                        "rowsum(dO o O) needs it\n");
    if (x->x_used < x->n_calls) {
        uint64_t absent = x->n_calls - x->x_used - x->x_rotary - x->x_no_do;
        cli_buf_printf(b, "dW_Q: X (key x, the query projection's input) "
                          "used in %" PRIu64 " of %zu calls",
                       x->x_used, x->n_calls);
        if (absent > 0)
            cli_buf_printf(b, "; absent in %" PRIu64, absent);
        if (x->x_rotary > 0)
            cli_buf_printf(b, "; unused in %" PRIu64 " (x.rotary: q is "
                              "rotated after the projection)",
                           x->x_rotary);
        if (x->x_no_do > 0)
            cli_buf_printf(b, "; unused in %" PRIu64 " (no dO)",
                           x->x_no_do);
        cli_buf_putc(b, '\n');
    }
    if (bad > 0)
        cli_buf_printf(b, "non-finite inputs: %" PRIu64
                          " head%s left out (see the rows above)\n",
                       bad, bad == 1 ? "" : "s");
}

static void
json_cell(cli_json *j, const char *key, const bias_cell *c)
{
    bias_summary s;

    bias_summarize(c, &s);
    cli_json_object_begin(j, key);
    cli_json_int(j, "n", (long long)s.n);
    cli_json_double(j, "mean", s.n > 0 ? s.mean : NAN);
    cli_json_double(j, "se", s.se);
    cli_json_double(j, "t", s.t);
    cli_json_object_end(j);
}

/* A head's Eq. 2-3 sums, overall and per step (when it has them). */
static void
json_head_eq23(cli_json *j, const scan_group *g)
{
    const scan_stats *s = &g->st;
    double cum = 0;

    if (s->eq.d == 0)
        return;
    cli_json_object_begin(j, "eq23");
    cli_json_int(j, "rows", (long long)s->eq.rows);
    cli_json_double(j, "err_sum", s->eq.err_sum);
    cli_json_double(j, "coherence", scan_eq23_coherence(&s->eq));
    cli_json_double(j, "rank1", scan_eq23_rank1(&s->eq));
    cli_json_double(j, "cos_adjacent_mean", scan_group_cos_adjacent(g));
    cli_json_array_begin(j, "steps");
    for (size_t t = 0; t < g->n_by_step; t++) {
        const scan_eq23 *e = &g->by_step[t].eq;
        cum += e->err_sum;
        cli_json_object_begin(j, NULL);
        cli_json_int(j, "step", g->by_step[t].step);
        cli_json_int(j, "rows", (long long)e->rows);
        cli_json_double(j, "err_mean",
                        e->rows ? e->err_sum / (double)e->rows
                                : NAN);
        cli_json_double(j, "err_sum", e->err_sum);
        cli_json_double(j, "cum_err", cum);
        cli_json_double(j, "coherence", scan_eq23_coherence(e));
        cli_json_double(j, "rank1", scan_eq23_rank1(e));
        {
            double n2 = 0;
            for (size_t c = 0; c < e->d; c++)
                n2 += e->u_sum[c] * e->u_sum[c];
            cli_json_double(j, "u_sum_norm", sqrt(n2));
        }
        cli_json_double(j, "cos_prev",
                        t > 0 ? scan_eq23_cosine(
                                    &g->by_step[t - 1].eq, e)
                              : NAN);
        cli_json_double(j, "cos_last",
                        scan_eq23_cosine(
                            e, &g->by_step[g->n_by_step - 1].eq));
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_object_end(j);
}

/* One head's object in "heads". */
static void
json_head(cli_json *j, const scan_group *g)
{
    const scan_stats *s = &g->st;

    cli_json_object_begin(j, NULL);
    cli_json_int(j, "layer", g->layer);
    cli_json_string(j, "name", g->name[0] ? g->name : NULL);
    cli_json_int(j, "head", (long long)g->head);
    cli_json_int(j, "steps", (long long)g->steps);
    cli_json_int(j, "heads_measured", (long long)s->heads);
    cli_json_int(j, "heads_nonfinite", (long long)s->bad_heads);
    cli_json_int(j, "nonfinite_elements", (long long)s->bad_elems);
    cli_json_int(j, "rows", (long long)s->rows);
    cli_json_int(j, "rows_repeated_max", (long long)s->rep_exact);
    cli_json_int(j, "rows_near_max", (long long)s->near_tol);
    cli_json_int(j, "rows_repeated_max_kernel",
                 (long long)s->rep_kernel);
    cli_json_int(j, "rows_p1_ge2", (long long)s->p1_ge2);
    cli_json_int(j, "rows_p1_ge2_fix", (long long)s->p1_ge2_fix);
    cli_json_int(j, "p1_entries", (long long)s->p1_entries);
    cli_json_int(j, "rows_sink", (long long)s->sink_rows);
    cli_json_double(j, "mean_p_max",
                    s->rows ? s->sum_p_max / (double)s->rows : NAN);
    cli_json_int(j, "v_features", (long long)s->features);
    cli_json_int(j, "v_features_one_sign", (long long)s->one_sign);
    cli_json_object_begin(j, "o_bias_ulps");
    json_cell(j, "captured", &s->o_cap);
    json_cell(j, "emulated", &s->o_emu);
    json_cell(j, "fix", &s->o_fix);
    cli_json_object_end(j);
    if (s->has_do) {
        cli_json_object_begin(j, "delta_bias");
        json_cell(j, "captured", &s->d_cap);
        json_cell(j, "emulated", &s->d_emu);
        json_cell(j, "fix", &s->d_fix);
        cli_json_object_end(j);
    } else {
        cli_json_string(j, "delta_bias", "needs dO");
    }
    cli_json_int(j, "o_match", (long long)s->o_match);
    cli_json_int(j, "o_elements", (long long)s->o_elems);
    cli_json_int(j, "lse_match", (long long)s->lse_match);
    cli_json_int(j, "lse_elements", (long long)s->lse_elems);
    cli_json_double(j, "risk", g->risk);
    cli_json_int(j, "rank", (long long)g->rank);
    json_head_eq23(j, g);
    json_dwq_head(j, g);
    cli_json_object_end(j);
}

/* "dwq_layers": each layer's heads stacked, per step. */
static void
json_layers(const scan_ctx *x, cli_json *j)
{
    cli_json_array_begin(j, "dwq_layers");
    for (size_t k = 0; k < x->gr.n_layers; k++) {
        const scan_layer *L = &x->gr.layers[k];
        bool ok = L->ok && L->fro2 > 0;
        cli_json_object_begin(j, NULL);
        cli_json_int(j, "layer", L->layer);
        cli_json_int(j, "step", L->step);
        cli_json_int(j, "heads", (long long)L->heads);
        cli_json_double(j, "sigma1", L->ok ? L->sigma1 : NAN);
        cli_json_double(j, "fro", L->ok ? sqrt(L->fro2) : NAN);
        cli_json_double(j, "energy1",
                        ok ? L->sigma1 * L->sigma1 / L->fro2 : NAN);
        cli_json_double(j, "stable_rank",
                        ok && L->sigma1 > 0
                            ? L->fro2 / (L->sigma1 * L->sigma1)
                            : NAN);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
}

void
scan_report_json(const scan_ctx *x, const size_t *order, cli_buf *b)
{
    cli_json j;

    cli_json_init(&j, b);
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "policy", x->kernel.name);
    cli_json_string(&j, "exp", x->exp.name);
    cli_json_object_begin(&j, "fix");
    cli_json_string(&j, "kind", fa_fix_name(x->fix.kind));
    cli_json_double(&j, "tol", x->fix.tol);
    cli_json_object_end(&j);
    cli_json_array_begin(&j, "files");
    for (size_t i = 0; i < x->n_shards; i++)
        cli_json_string(&j, NULL, x->shards[i].path);
    cli_json_array_end(&j);
    cli_json_int(&j, "calls", (long long)x->n_calls);
    cli_json_string(&j, "reference",
                    x->ref == SCAN_REF_EXACT ? "exact" : "binary64");
    cli_json_object_begin(&j, "x");
    cli_json_int(&j, "calls_used", (long long)x->x_used);
    cli_json_int(&j, "calls_rotary", (long long)x->x_rotary);
    cli_json_int(&j, "calls_without_do", (long long)x->x_no_do);
    cli_json_int(&j, "calls_absent",
                 (long long)(x->n_calls - x->x_used - x->x_rotary
                             - x->x_no_do));
    cli_json_object_end(&j);
    cli_json_array_begin(&j, "heads");
    for (size_t i = 0; i < x->gr.n; i++)
        json_head(&j, &x->gr.g[i]);
    cli_json_array_end(&j);
    json_layers(x, &j);
    cli_json_array_begin(&j, "ranking");
    for (size_t r = 0; r < x->gr.n; r++) {
        cli_json_object_begin(&j, NULL);
        cli_json_int(&j, "layer", x->gr.g[order[r]].layer);
        cli_json_int(&j, "head", (long long)x->gr.g[order[r]].head);
        cli_json_double(&j, "risk", x->gr.g[order[r]].risk);
        cli_json_object_end(&j);
    }
    cli_json_array_end(&j);
    cli_json_object_end(&j);
    cli_json_finish(&j);
}

void
scan_report_csv(const scan_ctx *x, cli_buf *b)
{
    cli_buf_puts(b, "layer,head,steps,rows,rows_repeated_max,rows_near_max,"
                    "rows_repeated_max_kernel,rows_p1_ge2,rows_p1_ge2_fix,"
                    "p1_entries,rows_sink,mean_p_max,v_features,"
                    "v_features_one_sign,o_bias_captured,o_bias_emulated,"
                    "o_bias_fix,delta_bias_captured,delta_bias_emulated,"
                    "delta_bias_fix,o_match,o_elements,lse_match,"
                    "lse_elements,heads_nonfinite,risk,rank\n");
    for (size_t i = 0; i < x->gr.n; i++) {
        const scan_group *g = &x->gr.g[i];
        const scan_stats *s = &g->st;
        cli_buf_printf(b,
                       "%lld,%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                       ",%" PRIu64 ",%.17g,%" PRIu64 ",%" PRIu64
                       ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%" PRIu64
                       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                       ",%.17g,%zu\n",
                       g->layer, g->head, g->steps, s->rows, s->rep_exact,
                       s->near_tol, s->rep_kernel, s->p1_ge2, s->p1_ge2_fix,
                       s->p1_entries, s->sink_rows,
                       s->rows ? s->sum_p_max / (double)s->rows : NAN,
                       s->features, s->one_sign, mean_or_nan(&s->o_cap),
                       mean_or_nan(&s->o_emu), mean_or_nan(&s->o_fix),
                       mean_or_nan(&s->d_cap), mean_or_nan(&s->d_emu),
                       mean_or_nan(&s->d_fix), s->o_match, s->o_elems,
                       s->lse_match, s->lse_elems, s->bad_heads, g->risk,
                       g->rank);
    }
}

bool
scan_path_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* "MEAN CI" of C (CI: 1.96 standard errors), "? ?" without a value. */
static void
put_ci(cli_buf *b, const bias_cell *c)
{
    bias_summary s;

    bias_summarize(c, &s);
    if (s.n == 0 || !isfinite(s.mean))
        cli_buf_puts(b, " ? ?");
    else
        cli_buf_printf(b, " %.17g %.17g", s.mean,
                       isfinite(s.se) ? 1.96 * s.se : 0.0);
}

/* B written to DAT, then gnuplot's SCRIPT over it into OUT (without
   gnuplot: a note on stderr, not an error). */
static int
plot_data(const scan_ctx *x, const char *script, const cli_buf *b,
          const char *dat, const char *out)
{
    char vars[8320], qd[4096], qo[4096], why[512];
    int prc;

    if (!cli_write_atomic(dat, b->p, b->len))
        return cli_error(CMD, "%s: cannot write: %s", dat, strerror(errno));
    if (!plot_quote(qd, sizeof qd, dat) || !plot_quote(qo, sizeof qo, out))
        return cli_error(CMD, "--plot %s: a quote or newline in the path",
                         x->plot);
    snprintf(vars, sizeof vars, "datafile=%s; out=%s", qd, qo);
    prc = plot_run(script, vars, NULL, why, sizeof why);
    if (prc == 1)
        fprintf(stderr, "%s: gnuplot not found; %s written, no plot\n", CMD,
                dat);
    else if (prc != 0)
        return cli_error(CMD, "%s", why);
    return CLI_EXIT_OK;
}

/* PREFIX-bias.dat and its plot: the bias of O and delta per (layer,
   head), emulated and with the fix, with 95% intervals. */
static int
write_bias_plot(const scan_ctx *x)
{
    cli_buf b;
    size_t n = strlen(x->plot) + 16;
    char *dat = malloc(n), *out = malloc(n);
    int rc;

    if (dat == NULL || out == NULL) {
        free(dat);
        free(out);
        return cli_error(CMD, "out of memory");
    }
    snprintf(out, n, "%s-bias", x->plot);
    snprintf(dat, n, "%s-bias.dat", x->plot);
    cli_buf_init(&b);
    cli_buf_puts(&b, "# bf16emu scan: index label o_emu o_emu_ci o_fix "
                     "o_fix_ci d_emu d_emu_ci d_fix d_fix_ci (ci: 1.96 se)\n");
    for (size_t i = 0; i < x->gr.n; i++) {
        const scan_stats *s = &x->gr.g[i].st;
        cli_buf_printf(&b, "%zu L%lld.h%zu", i, x->gr.g[i].layer,
                       x->gr.g[i].head);
        put_ci(&b, &s->o_emu);
        put_ci(&b, &s->o_fix);
        if (s->has_do) {
            put_ci(&b, &s->d_emu);
            put_ci(&b, &s->d_fix);
        } else {
            cli_buf_puts(&b, " ? ? ? ?");
        }
        cli_buf_putc(&b, '\n');
    }
    rc = plot_data(x, "scan-bias.gp", &b, dat, out);
    cli_buf_free(&b);
    free(dat);
    free(out);
    return rc;
}

int
scan_write_plot(const scan_ctx *x)
{
    cli_buf b;
    char *dat = NULL, *png = NULL, *svg = NULL;
    size_t n = strlen(x->plot) + 5;
    int rc = CLI_EXIT_OK;

    dat = malloc(n);
    png = malloc(n);
    svg = malloc(n);
    if (dat == NULL || png == NULL || svg == NULL) {
        rc = cli_error(CMD, "out of memory");
        goto done;
    }
    snprintf(dat, n, "%s.dat", x->plot);
    snprintf(png, n, "%s.png", x->plot);
    snprintf(svg, n, "%s.svg", x->plot);
    cli_buf_init(&b);
    cli_buf_puts(&b, "# bf16emu scan: layer head risk\n");
    for (size_t i = 0; i < x->gr.n; i++) {
        if (i > 0 && x->gr.g[i].layer != x->gr.g[i - 1].layer)
            cli_buf_putc(&b, '\n');
        cli_buf_printf(&b, "%lld %zu %.17g\n", x->gr.g[i].layer,
                       x->gr.g[i].head, x->gr.g[i].risk);
    }
    rc = plot_data(x, "scan-heat.gp", &b, dat, x->plot);
    cli_buf_free(&b);
    if (rc == CLI_EXIT_OK)
        rc = write_bias_plot(x);
done:
    free(dat);
    free(png);
    free(svg);
    return rc;
}

