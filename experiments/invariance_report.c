/* invariance_report.c -- bf16emu invariance's report: the classes of
   each backend, setting and mode with the rule between neighbours, the
   recommendation, the GPU's own classes, as text or JSON, and the plot
   (invariance_local.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/invariance_local.h"
#include "experiments/plot.h"

static char
cls_letter(size_t c)
{
    return c < 26 ? (char)('A' + c) : c < 52 ? (char)('a' + c - 26) : '?';
}

static const char *
ulps_str(char *buf, size_t n, uint64_t u)
{
    if (u == UINT64_MAX)
        snprintf(buf, n, "NaN");
    else
        snprintf(buf, n, "%llu", (unsigned long long)u);
    return buf;
}

/* How a launch computes the rows: the call as given, or each row as one
   decode step over its cache. */
static const char *
mode_name(int m)
{
    return m == 0 ? "one call" : "decode steps";
}

static void
text_header(cli_buf *b, const inv_ctx *x)
{
    char hc[48] = "";

    cli_buf_printf(b,
                   "bf16emu invariance: %s: H %llu (KV %llu), Nq %llu, Nk "
                   "%llu, d %llu, %s%s; entry 0 of launches of H %llu\n",
                   x->gen ? "generated (--gen normal)" : x->path,
                   (unsigned long long)x->heads,
                   (unsigned long long)x->kv_heads,
                   (unsigned long long)x->nq, (unsigned long long)x->nk,
                   (unsigned long long)x->d, x->f16 ? "FP16" : "BF16",
                   x->causal ? ", causal" : "",
                   (unsigned long long)(x->p.launch_heads));
    cli_buf_printf(b, "descriptions:");
    for (size_t i = 0; i < x->nslots; i++)
        cli_buf_printf(b, "%s %s (exp %s)", i ? "," : "", x->slots[i].k->name,
                       x->slots[i].exp_name);
    cli_buf_printf(b, "; scale 1/sqrt(d); %s\n",
                   x->backward ? "forward and backward (dQ, dK, dV; the "
                                 "deterministic kernels)"
                               : "the forward only");
    if (x->has_mask)
        cli_buf_printf(b, "attn_mask: %s, %s; %llu entries hide a key, "
                          "%llu rows see none\n",
                       x->mask_opd.arg, am_type_name(x->mask.mask.type),
                       (unsigned long long)x->mask.hidden,
                       (unsigned long long)x->mask.rows_empty);
    for (size_t i = 0; i < x->nskip; i++)
        cli_buf_printf(b, "left out: %s (%s)\n", x->skip[i].name,
                       x->skip[i].why);

    if (x->nhc != 0)
        snprintf(hc, sizeof hc, " x %zu head counts", x->nhc);
    cli_buf_printf(b,
                   "launches: %zu (%zu batch sizes x %zu backends x %zu SM "
                   "counts%s x %s); distinct computations: %zu; classes of "
                   "identical %s: %zu\n",
                   x->g.nl, x->nbatch, x->npol, x->nsms, hc,
                   x->mode_prefill && x->mode_decode
                       ? "one call and decode steps"
                   : x->mode_decode ? "decode steps"
                                    : "one call",
                   x->g.nruns,
                   x->backward ? "O, LSE, dQ, dK and dV" : "O and LSE",
                   x->g.ncls);
}

static void
text_backend(cli_buf *b, const inv_ctx *x, int m, size_t be, size_t s)
{
    const iv_grid *g = &x->g;
    size_t cl[MAX_LIST], bound;
    char u1[24], u2[24], rule[512];

    unsigned sms;
    size_t heads;
    char hs[32] = "";

    iv_space_setting(&x->sp, s, &sms, &heads);
    if (heads != 0)
        snprintf(hs, sizeof hs, ", H %zu", heads);
    cli_buf_printf(b, "\n%s, %u SMs%s, %s:\n", x->be[be].name,
                   sms != 0 ? sms : 132, hs, mode_name(m));
    cli_buf_printf(b, "  batch  ");
    for (size_t j = 0; j < x->nbatch; j++)
        cli_buf_printf(b, " %5zu", x->batch[j]);
    cli_buf_printf(b, "\n  class  ");
    for (size_t j = 0; j < x->nbatch; j++) {
        cl[j] = iv_grid_class(g, iv_grid_at(g, m, be, s, j));
        cli_buf_printf(b, " %5c", cls_letter(cl[j]));
    }
    cli_buf_printf(b, "\n  splits ");
    for (size_t j = 0; j < x->nbatch; j++) {
        const iv_key *k = &g->key[iv_grid_at(g, m, be, s, j)];
        cli_buf_printf(b, " %5zu", k->steps[k->nsteps - 1].splits);
    }
    cli_buf_printf(b, "\n  runs   ");
    for (size_t j = 0; j < x->nbatch; j++)
        cli_buf_printf(b, " %5s",
                       g->key[iv_grid_at(g, m, be, s, j)].backend);
    cli_buf_putc(b, '\n');
    for (size_t j = 1; j < x->nbatch; j++) {
        size_t i0 = iv_grid_at(g, m, be, s, j - 1),
               i1 = iv_grid_at(g, m, be, s, j);
        iv_delta dO, dL;
        if (cl[j] == cl[j - 1])
            continue;
        iv_grid_delta(g, i0, i1, &dO, &dL);
        iv_rule(&g->key[i0], &g->key[i1], rule, sizeof rule);
        cli_buf_printf(b,
                       "  batch %zu -> %zu: O %zu of %zu elements differ "
                       "(max %s ulps), LSE %zu of %zu (max %s ulps): %s\n",
                       x->batch[j - 1], x->batch[j], dO.differ, x->o_len,
                       ulps_str(u1, sizeof u1, dO.max_ulps), dL.differ,
                       (size_t)(x->heads * x->nq),
                       ulps_str(u2, sizeof u2, dL.max_ulps), rule);
        if (x->backward) {
            iv_delta dB = iv_grid_delta_bwd(g, i0, i1);
            cli_buf_printf(b, "    dQ, dK, dV: %zu of %zu elements differ "
                              "(max %s ulps)\n",
                           dB.differ, (size_t)x->heads * (g->y.head - g->y.dq),
                           ulps_str(u1, sizeof u1, dB.max_ulps));
        }
    }
    bound = iv_batch_bound(x->nbatch, x->batch, cl);
    if (bound == x->batch[0])
        cli_buf_printf(b, "  invariant over the batch sizes asked\n");
    else if (bound != 0)
        cli_buf_printf(b, "  invariant from batch %zu up (of those asked)\n",
                       bound);
    else
        cli_buf_printf(b, "  no batch bound shown: the largest batch size "
                          "asked is alone in its class\n");
}

static void
text_recommend(cli_buf *b, const inv_ctx *x)
{
    const iv_grid *g = &x->g;
    size_t inv = 0;

    cli_buf_printf(b, "\nrecommendation:\n");
    for (size_t be = 0; be < x->npol; be++) {
        bool all = true;
        size_t c0 =
            iv_grid_class(g, iv_grid_at(g, x->mode_prefill ? 0 : 1, be, 0, 0));
        for (int m = 0; m < 2; m++) {
            if (m == 0 ? !x->mode_prefill : !x->mode_decode)
                continue;
            for (size_t s = 0; s < iv_space_settings(&x->sp); s++)
                for (size_t j = 0; j < x->nbatch; j++) {
                    size_t i = iv_grid_at(g, m, be, s, j);
                    all = all && iv_grid_class(g, i) == c0;
                }
        }
        if (all) {
            cli_buf_printf(b, "  pin %s: this call's %s are the same bits "
                              "under every launch asked\n",
                           x->be[be].name,
                           x->backward ? "O, LSE, dQ, dK and dV"
                                       : "O and LSE");
            inv++;
        }
    }
    if (inv == 0)
        cli_buf_printf(b, "  no backend among those asked keeps this call "
                          "invariant over every launch asked; see the batch "
                          "bounds above\n");
}

static void
text_observed(cli_buf *b, const inv_ctx *x, const iv_obs_result *res)
{
    if (x->nobs == 0)
        return;
    cli_buf_printf(b, "\nobserved on the GPU (%s, PyTorch %s)",
                   json_string_value(json_object_get(x->man, "gpu")),
                   json_string_value(json_object_get(x->man, "torch")));
    if (inv_jint(x->man, "rows_kept") > 0)
        cli_buf_printf(b, "; the file keeps the first %lld rows of each "
                          "class output",
                       (long long)inv_jint(x->man, "rows_kept"));
    cli_buf_printf(b, ":\n");
    for (size_t i = 0; i < x->nobs; i++) {
        const iv_obs_result *r = &res[i];
        if (!r->checked) {
            cli_buf_printf(b, "  %s: %s\n", x->obs[i].name, r->note);
            continue;
        }
        cli_buf_printf(b,
                       "  %s: classes ", x->obs[i].name);
        for (size_t j = 0; j < x->obs[i].n; j++)
            cli_buf_printf(b, "%s%zu%s", j == x->nbatch ? "| decode " : "",
                           x->obs[i].classes[j],
                           j + 1 < x->obs[i].n ? " " : "");
        cli_buf_printf(b, ": %s; the %zu class outputs stored: %zu of %zu "
                          "elements differ",
                       r->partition_equal ? "predicted exactly"
                                          : "PREDICTED OTHERWISE",
                       r->nclasses, r->differ, r->compared);
        if (r->differ != 0) {
            cli_buf_printf(b, " (per class:");
            for (size_t c = 0; c < r->nclasses && c < 2 * MAX_LIST; c++)
                cli_buf_printf(b, " %zu", r->class_differ[c]);
            cli_buf_putc(b, ')');
        }
        cli_buf_putc(b, '\n');
        if (r->bwd_checked && !inv_bwd_kept(x, x->obs[i].name))
            cli_buf_printf(b, "  %s backward: classes %s; dQ, dK, dV not "
                              "kept in this file\n",
                           x->obs[i].name,
                           r->bwd_partition_equal ? "predicted exactly"
                                                  : "PREDICTED OTHERWISE");
        else if (r->bwd_checked)
            cli_buf_printf(b, "  %s backward: classes %s; dQ, dK, dV stored: "
                              "%zu of %zu elements differ\n",
                           x->obs[i].name,
                           r->bwd_partition_equal ? "predicted exactly"
                                                  : "PREDICTED OTHERWISE",
                           r->bwd_differ, r->bwd_compared);
        else if (r->bwd_note != NULL)
            cli_buf_printf(b, "  %s backward: %s\n", x->obs[i].name,
                           r->bwd_note);
    }
}

/* The input's fields: the file, the shape, the mask, and the counts of
   launches' computations and classes. */
static void
inv_json_input(cli_json *j, const inv_ctx *x)
{
    const iv_grid *g = &x->g;

    cli_json_string(j, "input", x->gen ? "generated" : x->path);
    cli_json_int(j, "heads", (long long)x->heads);
    cli_json_int(j, "kv_heads", (long long)x->kv_heads);
    cli_json_int(j, "nq", (long long)x->nq);
    cli_json_int(j, "nk", (long long)x->nk);
    cli_json_int(j, "d", (long long)x->d);
    cli_json_string(j, "dtype", x->f16 ? "float16" : "bfloat16");
    cli_json_bool(j, "causal", x->causal);
    if (x->has_mask) {
        cli_json_object_begin(j, "attn_mask");
        cli_json_string(j, "source", x->mask_opd.arg);
        cli_json_string(j, "type", am_type_name(x->mask.mask.type));
        cli_json_int(j, "hidden", (long long)x->mask.hidden);
        cli_json_int(j, "rows_empty", (long long)x->mask.rows_empty);
        cli_json_object_end(j);
    }
    cli_json_int(j, "launch_heads", (long long)x->p.launch_heads);
    cli_json_int(j, "distinct_computations", (long long)g->nruns);
    cli_json_int(j, "classes", (long long)g->ncls);
}

/* "launches": per launch of the grid, its settings, what it runs and its
   class. */
static void
inv_json_launches(cli_json *j, const inv_ctx *x)
{
    const iv_grid *g = &x->g;

    cli_json_array_begin(j, "launches");
    for (size_t i = 0; i < g->nl; i++) {
        const iv_key *k = &g->key[i];
        cli_json_object_begin(j, NULL);
        cli_json_string(j, "backend", x->be[g->l[i].backend].name);
        cli_json_int(j, "batch", (long long)g->l[i].batch);
        cli_json_int(j, "sms", g->l[i].sms != 0 ? g->l[i].sms : 132);
        if (x->nhc != 0)
            cli_json_int(j, "launch_heads", (long long)g->l[i].heads);
        cli_json_string(j, "mode", g->l[i].decode ? "decode" : "prefill");
        cli_json_string(j, "runs", k->backend);
        cli_json_string(j, "description", fa_config_kernel(k->cfg)->name);
        cli_json_string(j, "variant", k->variant);
        cli_json_int(j, "splits", (long long)k->steps[k->nsteps - 1].splits);
        if (x->backward)
            cli_json_int(j, "dq_buffers", (long long)k->dq_buffers);
        cli_json_string(j, "split_rule", k->split_rule);
        cli_json_int(j, "class", (long long)iv_grid_class(g, i));
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
}

/* "pairs": per pair of classes, how far their outputs lie apart (from the
   first launch of each) and the rule that tells them apart. */
static void
inv_json_pairs(cli_json *j, const inv_ctx *x)
{
    const iv_grid *g = &x->g;
    char rule[512];

    cli_json_array_begin(j, "pairs");
    for (size_t c1 = 0; c1 < g->ncls; c1++)
        for (size_t c2 = c1 + 1; c2 < g->ncls; c2++) {
            size_t i1 = 0, i2 = 0;
            iv_delta dO, dL;
            while (iv_grid_class(g, i1) != c1)
                i1++;
            while (iv_grid_class(g, i2) != c2)
                i2++;
            iv_grid_delta(g, i1, i2, &dO, &dL);
            iv_rule(&g->key[i1], &g->key[i2], rule, sizeof rule);
            cli_json_object_begin(j, NULL);
            cli_json_int(j, "a", (long long)c1);
            cli_json_int(j, "b", (long long)c2);
            cli_json_int(j, "o_differ", (long long)dO.differ);
            cli_json_dist(j, "o_max_ulps", dO.max_ulps);
            cli_json_int(j, "lse_differ", (long long)dL.differ);
            cli_json_dist(j, "lse_max_ulps", dL.max_ulps);
            if (x->backward) {
                iv_delta dB = iv_grid_delta_bwd(g, i1, i2);
                cli_json_int(j, "bwd_differ", (long long)dB.differ);
                cli_json_dist(j, "bwd_max_ulps", dB.max_ulps);
            }
            cli_json_string(j, "rule", rule);
            cli_json_object_end(j);
        }
    cli_json_array_end(j);
}

/* "observed" (when a backend's outputs were stored): per backend, whether
   its classes were predicted and how many elements differ. */
static void
inv_json_observed(cli_json *j, const inv_ctx *x, const iv_obs_result *res)
{
    if (x->nobs != 0) {
        cli_json_array_begin(j, "observed");
        for (size_t i = 0; i < x->nobs; i++) {
            cli_json_object_begin(j, NULL);
            cli_json_string(j, "backend", x->obs[i].name);
            cli_json_bool(j, "checked", res[i].checked);
            if (res[i].checked) {
                cli_json_bool(j, "partition_equal", res[i].partition_equal);
                cli_json_int(j, "compared", (long long)res[i].compared);
                cli_json_int(j, "differ", (long long)res[i].differ);
                cli_json_array_begin(j, "class_differ");
                for (size_t c = 0; c < res[i].nclasses && c < 2 * MAX_LIST;
                     c++)
                    cli_json_int(j, NULL, (long long)res[i].class_differ[c]);
                cli_json_array_end(j);
                if (res[i].bwd_checked) {
                    cli_json_bool(j, "bwd_partition_equal",
                                  res[i].bwd_partition_equal);
                    cli_json_int(j, "bwd_compared",
                                 (long long)res[i].bwd_compared);
                    cli_json_int(j, "bwd_differ",
                                 (long long)res[i].bwd_differ);
                }
            } else {
                cli_json_string(j, "note", res[i].note);
            }
            cli_json_object_end(j);
        }
        cli_json_array_end(j);
    }
}

void
inv_json_report(cli_buf *out, const inv_ctx *x, const iv_obs_result *res)
{
    cli_json j;

    cli_json_init(&j, out);
    cli_json_object_begin(&j, NULL);
    inv_json_input(&j, x);
    inv_json_launches(&j, x);
    inv_json_pairs(&j, x);
    inv_json_observed(&j, x, res);
    cli_json_object_end(&j);
    cli_json_finish(&j);
}

/* FILE.dat: per batch size, per backend (prefill, first SM count): the
   elements of O that differ from the first batch size's, and the
   largest distance in ulps; then gnuplot. */
int
inv_write_plot(const inv_ctx *x)
{
    cli_buf b;
    char *dat = NULL, qd[1100], qo[1100], vars[2400], why[512], u[24];
    int rc = CLI_EXIT_OK, prc, m = x->mode_prefill ? 0 : 1;
    const iv_grid *g = &x->g;
    size_t n = strlen(x->plot);

    cli_buf_init(&b);
    if ((dat = malloc(n + 5)) == NULL)
        return cli_error(CMD, "out of memory");
    memcpy(dat, x->plot, n);
    memcpy(dat + n, ".dat", 5);
    cli_buf_printf(&b, "# bf16emu invariance: columns batch, then per "
                       "backend: O elements differing from batch %zu, max "
                       "ulps\n# backends:",
                   x->batch[0]);
    for (size_t be = 0; be < x->npol; be++)
        cli_buf_printf(&b, " %s", x->be[be].name);
    cli_buf_putc(&b, '\n');
    for (size_t j = 0; j < x->nbatch; j++) {
        cli_buf_printf(&b, "%zu", x->batch[j]);
        for (size_t be = 0; be < x->npol; be++) {
            iv_delta dO, dL;
            iv_grid_delta(g, iv_grid_at(g, m, be, 0, 0),
                          iv_grid_at(g, m, be, 0, j), &dO, &dL);
            cli_buf_printf(&b, " %zu %s", dO.differ,
                           dO.max_ulps == UINT64_MAX
                               ? "?"
                               : ulps_str(u, sizeof u, dO.max_ulps));
        }
        cli_buf_putc(&b, '\n');
    }
    if (!cli_write_atomic(dat, b.p, b.len)) {
        rc = cli_error(CMD, "%s: cannot write: %s", dat, strerror(errno));
        goto done;
    }
    if (!plot_quote(qd, sizeof qd, dat) || !plot_quote(qo, sizeof qo, x->plot)) {
        rc = cli_error(CMD, "--plot %s: a quote or newline in the path",
                       x->plot);
        goto done;
    }
    snprintf(vars, sizeof vars, "datafile=%s; out=%s; nb=%zu", qd, qo,
             x->npol);
    for (size_t be = 0; be < x->npol && strlen(vars) < 2000; be++) {
        char t[80];
        snprintf(t, sizeof t, "; name%zu='%s'", be + 1, x->be[be].name);
        strcat(vars, t);
    }
    prc = plot_run("invariance.gp", vars, NULL, why, sizeof why);
    if (prc == 1)
        fprintf(stderr, "bf16emu %s: gnuplot not found; %s written, no plot\n",
                CMD, dat);
    else if (prc != 0)
        rc = cli_error(CMD, "%s", why);
done:
    cli_buf_free(&b);
    free(dat);
    return rc;
}

void
inv_text_report(cli_buf *out, const inv_ctx *x, const iv_obs_result *res)
{
    text_header(out, x);
    for (int m = 0; m < 2; m++) {
        if (m == 0 ? !x->mode_prefill : !x->mode_decode)
            continue;
        for (size_t be = 0; be < x->npol; be++)
            for (size_t s = 0; s < iv_space_settings(&x->sp); s++)
                text_backend(out, x, m, be, s);
    }
    text_recommend(out, x);
    text_observed(out, x, res);
}
