/* diff_report.c -- bf16emu diff: the text and JSON reports */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/diff_local.h"

/*----------------------------------------------------------------------------
 * Reports.
 *--------------------------------------------------------------------------*/
static void
text_scale(cli_buf *b, const diff_ctx *x)
{
    char v[64];

    cli_buf_printf(b, "  scale %s (FP32 0x%08" PRIX32 "), ",
                   cli_f32_dec(v, sizeof v, x->scale_used), x->scale_used);
    if (x->kopt.scale_given)
        cli_buf_puts(b, "from --scale\n");
    else if (x->man_scale_number)
        cli_buf_puts(b, "from the manifest\n");
    else if (x->scale_meta)
        cli_buf_puts(b, "from the file's metadata\n");
    else
        cli_buf_printf(b,
                       "1/sqrt(%zu) correctly rounded to FP32; PyTorch's "
                       "float(1/sqrt(d)) in double %s\n",
                       x->d,
                       x->torch_scale_same ? "gives the same value"
                                           : "gives ANOTHER value (give "
                                             "--scale)");
    fa_cli_flex_header(b, &x->cfg, x->need_bwd,
                       x->kopt.delta_xblock != 0 ? "--delta-xblock"
                       : x->delta_from != NULL   ? x->delta_from
                                                 : "default");
}

/* The worst elements of stage S, largest distance first. */
static void
text_worst(cli_buf *b, const diff_ctx *x, int s)
{
    const stage_result *r = &x->r[s];
    char sh[SHAPE_MAX], g[128], m[128];

    cli_buf_puts(b, "  worst elements (largest distance first):\n");
    for (size_t i = 0; i < r->c.n_worst; i++) {
        const diff_elem *e = &r->c.worst[i];
        uint64_t idx[5];
        unsigned nd = diff_split_index(x, s, e->flat, idx);
        cli_buf_printf(b, "    %s: gpu %s, emulator %s, distance ",
                       cli_shape_str(sh, sizeof sh, nd, idx),
                       val_str(g, sizeof g, r->fmt, e->x),
                       val_str(m, sizeof m, r->fmt, e->y));
        if (e->dist == CMP_DIST_INF)
            cli_buf_puts(b, "inf\n");
        else
            cli_buf_printf(b, "%" PRIu64 "\n", e->dist);
    }
}

/* One row of text_exact: LABEL, then the count, mean, standard error and
   signs of the errors C. */
static void
exact_row(cli_buf *b, const char *label, const bias_cell *c)
{
    bias_summary s;
    char mean[32], se[32];

    bias_summarize(c, &s);
    cli_buf_printf(b,
                   "  %-28s %7" PRIu64 " %10s %10s %7" PRIu64 " %7" PRIu64
                   " %7" PRIu64 "\n",
                   label, s.n, fa_cli_g4(mean, sizeof mean, s.mean),
                   fa_cli_g4(se, sizeof se, s.se), c->neg, c->zero, c->pos);
}

/* The errors of stage S against the exact values, the GPU's and the
   emulator's. */
static void
text_exact(cli_buf *b, const diff_ctx *x, int s)
{
    const stage_result *r = &x->r[s];
    char buf[64];

    snprintf(buf, sizeof buf, "against exact (ulps of %s)", r->fmt->name);
    cli_buf_printf(b, "  %-28s %7s %10s %10s %7s %7s %7s\n", buf, "n", "mean",
                   "se", "neg", "zero", "pos");
    exact_row(b, "  gpu - exact", &r->err_gpu);
    exact_row(b, "  emulator - exact", &r->err_emu);
    if (r->skipped > 0)
        cli_buf_printf(b,
                       "    %" PRIu64 " element%s without a finite "
                       "exact value left out\n",
                       r->skipped, r->skipped == 1 ? "" : "s");
}

static void
text_stage(cli_buf *b, const diff_ctx *x, int s)
{
    const stage_result *r = &x->r[s];
    char buf[64], sh[SHAPE_MAX];
    const tensor *t = x->t[st_tensor[s]];

    const dump_kept *kp = &x->kept[st_tensor[s]];
    cli_buf_printf(b, "\nstage %s (%s %s, dump %s", st_names[s],
                   r->fmt->name,
                   kp->kept ? cli_shape_str(sh, sizeof sh, kp->ndim, kp->shape)
                            : cli_shape_str(sh, sizeof sh, t->ndim, t->shape),
                   tensor_dtype_name(t->dtype));
    if (r->kept)
        cli_buf_printf(b, ", %" PRIu64 " of its %" PRIu64 " rows kept",
                       kp->n_rows, kp->shape[2]);
    cli_buf_puts(b, "):\n");
    cli_buf_printf(b,
                   "  %" PRIu64 " elements, %" PRIu64
                   " bit-equal (%.3f%%), %" PRIu64 " differ",
                   r->c.elements, r->c.equal,
                   100.0 * (double)r->c.equal / (double)r->c.elements, r->c.differ);
    if (r->c.nan_vs_number > 0)
        cli_buf_printf(b, " (%" PRIu64 " NaN against a number)",
                       r->c.nan_vs_number);
    cli_buf_putc(b, '\n');
    snprintf(buf, sizeof buf, "ulp distance (%s)", r->fmt->name);
    cli_buf_printf(b, "  %-22s elements\n", buf);
    for (unsigned i = 0; i < CMP_DIST_BUCKETS; i++)
        if (r->c.hist[i] > 0)
            cli_buf_printf(b, "  %-22s %" PRIu64 "\n",
                           cmp_dist_bucket_label(buf, sizeof buf, i),
                           r->c.hist[i]);
    if (r->c.n_worst > 0)
        text_worst(b, x, s);
    if (r->have_exact)
        text_exact(b, x, s);
    if (r->kept)
        cli_buf_printf(b,
                       "  %s: %" PRIu64 "/%" PRIu64
                       " of the kept elements equal; whole tensor (%" PRIu64
                       "): hash %s\n",
                       st_names[s], r->c.equal, r->c.elements, r->whole,
                       r->hash_equal ? "equal" : "differs");
    if (r->kept && r->c.differ == 0 && !r->hash_equal)
        cli_buf_printf(b, "  %s: the kept elements are bit-equal; the whole "
                          "tensor is not\n",
                       st_names[s]);
    else if (r->c.differ == 0)
        cli_buf_printf(b, "  %s: bit-equal\n", st_names[s]);
    else if (r->pass)
        cli_buf_printf(
            b, "  %s: within %" PRIu64 " ulp%s (max distance %" PRIu64 ")\n",
            st_names[s], x->tol, x->tol == 1 ? "" : "s", r->c.max_dist);
    else if (x->tol == 0)
        cli_buf_printf(b, "  %s: %" PRIu64 " of %" PRIu64 " elements differ\n",
                       st_names[s], r->c.differ, r->c.elements);
    else
        cli_buf_printf(b,
                       "  %s: %" PRIu64 " of %" PRIu64
                       " elements beyond %" PRIu64 " ulp%s\n",
                       st_names[s], r->c.elements - r->c.within, r->c.elements,
                       x->tol, x->tol == 1 ? "" : "s");
}

/* The first divergent stage and the traced O elements. */
static void
text_locate(cli_buf *b, const diff_ctx *x)
{
    char sh[SHAPE_MAX];

    if (x->first_div < 0)
        cli_buf_puts(b, "\nfirst divergent stage: none\n");
    else
        cli_buf_printf(b, "\nfirst divergent stage: %s\n",
                       st_names[x->first_div]);
    for (size_t n = 0; n < x->n_trace; n++) {
        const o_trace *tr = &x->trace[n];
        uint64_t idx[5];
        unsigned nd = diff_split_index(x, ST_O, tr->flat, idx);
        cli_buf_printf(b, "  o %s: ", cli_shape_str(sh, sizeof sh, nd, idx));
        if (tr->found) {
            size_t k0 = tr->block * x->bc;
            size_t k1 = k0 + x->bc < x->nk ? k0 + x->bc : x->nk;
            cli_buf_printf(b,
                           "row first diverges in KV block %zu (visit %zu, "
                           "keys %zu..%zu), stage %s\n",
                           tr->block, tr->visit, k0, k1 - 1,
                           st_names[tr->stage]);
        } else {
            cli_buf_puts(b, "every stage of its row agrees; only the "
                            "normalisation differs\n");
        }
    }
}

/* The layout, the heads kept and what the reader did to each tensor
   (nothing is printed for a plain BHND dump). */
static void
text_inputs(cli_buf *b, const diff_ctx *x)
{
    char mb[1024]; /* the mask's line */
    if (x->layout == UT_LAYOUT_BNHD || x->kopt.layout != UT_LAYOUT_UNSET
        || x->man_layout != UT_LAYOUT_UNSET)
        cli_buf_printf(b, "  layout %s (%s)%s\n", ut_layout_name(x->layout),
                       x->layout_from,
                       x->layout == UT_LAYOUT_BNHD
                           ? ": [B, N, H, d] read as [B, H, N, d]"
                           : "");
    if (x->heads_subset) {
        cli_buf_printf(
            b, "  the file keeps %zu of the launch's %" PRIu64 " heads", x->nh,
            x->launch_heads);
        if (x->man_heads_kept_given) {
            cli_buf_puts(b, ":");
            for (size_t h = 0; h < x->n_heads_kept; h++)
                cli_buf_printf(b, " %" PRIu64, x->man_heads_kept[h]);
            if (x->man_batch_from_given && x->n_batch_from == 0)
                cli_buf_printf(b, " of batch %" PRIu64,
                               x->man_batch_from[0]);
            else if (x->man_batch_from_given) {
                cli_buf_puts(b, " of batches");
                for (size_t h = 0; h < x->n_batch_from; h++)
                    cli_buf_printf(b, " %" PRIu64, x->man_batch_from[h]);
            }
        } else {
            cli_buf_puts(b, " (which ones: not in the manifest)");
        }
        cli_buf_puts(b, "\n");
    }
    for (int i = 0; i < N_T; i++)
        if (x->t[i] != NULL && x->info[i].how[0] != '\0')
            cli_buf_printf(b, "  %s: %s\n", t_names[i], x->info[i].how);
    if (x->has_mask)
        cli_buf_printf(b, "  %s\n",
                       am_summary(mb, sizeof mb, x->mask_src, &x->mask,
                                  fa_config_kernel(&x->cfg)));
}

void
diff_text_report(const diff_ctx *x, cli_buf *b)
{
    int n_fail = 0, n_on = 0;

    cli_buf_printf(b, "bf16emu diff: %s\n",
                   x->dump != NULL ? x->dump : x->src[T_Q]);
    cli_buf_printf(b,
                   "  B %zu, H %zu, Nq %zu, Nk %zu, d %zu; policy %s%s, exp "
                   "%s (%s), causal %s (%s)\n",
                   x->nb, x->nh, x->nq, x->nk, x->d, run_name(x),
                   x->kernel_from_meta ? " (the file's description)" : "",
                   x->kopt.exp.name, x->kopt.exp.from,
                   x->causal ? "yes" : "no", x->causal_from);
    if (x->causal && x->top_left && x->nq != x->nk)
        cli_buf_printf(b,
                       "  causal mask top-left aligned (key j masked for "
                       "query i when j > i; %s)\n",
                       x->align_from);
    if (x->kopt.sdpa)
        cli_buf_printf(b, "  sdpa (%s): PyTorch 2.11 on sm90 (H100, H200: 132 SMs) runs %s, %s: %s\n",
                       x->sdpa_from, sdpa_backend_name(x->sdpa_ch.backend),
                       x->sdpa_ch.variant, x->sdpa_ch.reason);
    if (x->causal_override)
        cli_buf_printf(b, "  note: %s overrides the file's causal: %s\n",
                       x->causal_from, x->causal ? "false" : "true");
    if (x->scale_override) {
        char v[64];
        cli_buf_printf(b,
                       "  note: --scale overrides the file's scale %s "
                       "(FP32 0x%08" PRIX32 ")\n",
                       cli_f32_dec(v, sizeof v, x->scale_file), x->scale_file);
    }
    text_inputs(b, x);
    text_scale(b, x);
    if (x->splits > 1)
        cli_buf_printf(b, "  split-KV: %zu splits (%s)\n", x->splits,
                       x->splits_from);
    if (x->dq_eff > 1 && x->want[ST_DQ])
        cli_buf_printf(b, "  backward: %zu dQ buffers (%s)\n", x->dq_eff,
                       x->dq_from);
    if (x->fix != FA_FIX_NONE)
        cli_buf_printf(b, "  fix %s (%s)\n", fa_fix_name(x->fix), x->fix_from);
    if (x->man_rowsum_separate)
        cli_buf_printf(b, "  fa2 row sums: product, then addition (%s)\n",
                       x->rowsum_opt >= 0 ? "--fa2-rowsum" : "manifest");
    if (x->want_cap)
        cli_buf_printf(b,
                       "  kernel stages: tiles %zu x %zu, %zu KV block%s, "
                       "visited in reverse\n",
                       x->br, x->bc, x->tc, x->tc == 1 ? "" : "s");
    if (x->need_bwd)
        cli_buf_puts(b, "  backward stages from the dump's q, k, v, do, o and "
                        "lse\n");
    if (x->exact_run)
        cli_buf_puts(b, "  exact reference: MPFR, 256 bits, direct\n");
    else
        cli_buf_printf(b, "  exact reference: not run (%s)\n", x->exact_note);
    if (x->heads_skipped > 0)
        cli_buf_printf(b,
                       "  %" PRIu64 " head%s without an exact reference "
                       "(inputs NaN or Inf, or out of MPFR's range)\n",
                       x->heads_skipped, x->heads_skipped == 1 ? "" : "s");
    for (int s = 0; s < N_ST; s++)
        if (x->r[s].on) {
            text_stage(b, x, s);
            n_on++;
            n_fail += !x->r[s].pass;
        }
    if (x->want_cap)
        text_locate(b, x);
    if (n_fail == 0)
        cli_buf_printf(b, "\nresult: %d stage%s compared, all %s\n", n_on,
                       n_on == 1 ? "" : "s",
                       x->tol == 0 ? "bit-equal" : "within tolerance");
    else
        cli_buf_printf(b, "\nresult: %d of %d stage%s differ%s%s\n", n_fail,
                       n_on, n_on == 1 ? "" : "s", n_fail == 1 ? "s" : "",
                       x->tol == 0 ? "" : " beyond tolerance");
}

static void
json_val(cli_json *j, const char *key, const sf_format *fmt, uint32_t bits32)
{
    char buf[64];
    int w = (int)(fmt->storage_bits + 3) / 4;

    cli_json_object_begin(j, key);
    snprintf(buf, sizeof buf, "0x%0*" PRIX64, w, to_fmt(fmt, bits32));
    cli_json_string(j, "bits", buf);
    cli_json_string(j, "value", cli_f32_dec(buf, sizeof buf, bits32));
    cli_json_object_end(j);
}

static void
json_bias(cli_json *j, const char *key, const bias_cell *c)
{
    bias_summary s;

    bias_summarize(c, &s);
    cli_json_object_begin(j, key);
    cli_json_int(j, "n", (long long)s.n);
    fa_cli_json_interval(j, "", &s, false);
    cli_json_double(j, "min", s.min);
    cli_json_double(j, "max", s.max);
    cli_json_int(j, "neg", (long long)c->neg);
    cli_json_int(j, "zero", (long long)c->zero);
    cli_json_int(j, "pos", (long long)c->pos);
    cli_json_int(j, "nonfinite", (long long)c->nonfinite);
    cli_json_object_end(j);
}

static void
json_stage(cli_json *j, const diff_ctx *x, int s)
{
    const stage_result *r = &x->r[s];
    const tensor *t = x->t[st_tensor[s]];
    char buf[64];

    cli_json_object_begin(j, NULL);
    cli_json_string(j, "stage", st_names[s]);
    cli_json_string(j, "format", r->fmt->name);
    cli_json_string(j, "gpu_dtype", tensor_dtype_name(t->dtype));
    if (r->kept) {
        const dump_kept *kp = &x->kept[st_tensor[s]];
        cli_json_shape(j, "shape", kp->ndim, kp->shape);
        cli_json_object_begin(j, "kept");
        cli_json_int(j, "rows", (long long)kp->n_rows);
        cli_json_int(j, "elements", (long long)r->c.elements);
        cli_json_int(j, "whole_elements", (long long)r->whole);
        snprintf(buf, sizeof buf, "0x%016" PRIx64, kp->hash);
        cli_json_string(j, "gpu_hash", buf);
        snprintf(buf, sizeof buf, "0x%016" PRIx64, r->emu_hash);
        cli_json_string(j, "emulator_hash", buf);
        cli_json_bool(j, "hash_equal", r->hash_equal);
        cli_json_object_end(j);
    } else {
        cli_json_shape(j, "shape", t->ndim, t->shape);
        cli_json_null(j, "kept");
    }
    cli_json_int(j, "elements", (long long)r->c.elements);
    cli_json_int(j, "equal", (long long)r->c.equal);
    cli_json_double(j, "equal_fraction",
                    (double)r->c.equal / (double)r->c.elements);
    cli_json_int(j, "differ", (long long)r->c.differ);
    cli_json_int(j, "nan_vs_number", (long long)r->c.nan_vs_number);
    cli_json_dist(j, "max_distance",
                  r->c.nan_vs_number > 0 ? CMP_DIST_INF : r->c.max_dist);
    cli_json_int(j, "within_tolerance", (long long)r->c.within);
    cli_json_bool(j, "pass", r->pass);
    cli_json_array_begin(j, "histogram");
    for (unsigned i = 0; i < CMP_DIST_BUCKETS; i++)
        if (r->c.hist[i] != 0)
            cli_json_dist_bucket(j, i, i == CMP_DIST_BUCKET_INF,
                                 r->c.hist[i]);
    cli_json_array_end(j);
    cli_json_array_begin(j, "worst");
    for (size_t i = 0; i < r->c.n_worst; i++) {
        const diff_elem *e = &r->c.worst[i];
        uint64_t idx[5];
        unsigned nd = diff_split_index(x, s, e->flat, idx);
        cli_json_object_begin(j, NULL);
        cli_json_shape(j, "index", nd, idx);
        json_val(j, "gpu", r->fmt, e->x);
        json_val(j, "emulator", r->fmt, e->y);
        cli_json_dist(j, "distance", e->dist);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    if (r->have_exact) {
        cli_json_object_begin(j, "exact");
        cli_json_int(j, "skipped", (long long)r->skipped);
        json_bias(j, "gpu", &r->err_gpu);
        json_bias(j, "emulator", &r->err_emu);
        cli_json_object_end(j);
    } else {
        cli_json_null(j, "exact");
    }
    cli_json_object_end(j);
}

/* A dump of some heads of a launch: the launch's heads, the heads and
   batch entry kept. */
static void
json_heads_kept(cli_json *j, const diff_ctx *x)
{
    cli_json_int(j, "launch_heads", (long long)x->launch_heads);
    if (x->man_heads_kept_given)
        cli_json_shape(j, "heads_kept", (unsigned)x->n_heads_kept,
                       x->man_heads_kept);
    else
        cli_json_null(j, "heads_kept");
    if (x->man_batch_from_given)
        cli_json_shape(j, "batch_from",
                       (unsigned)(x->n_batch_from == 0 ? 1 : x->n_batch_from),
                       x->man_batch_from);
}

/* The scale used, its bits, value and where it came from. */
static void
json_scale(cli_json *j, const diff_ctx *x)
{
    char buf[64];

    cli_json_object_begin(j, "scale");
    snprintf(buf, sizeof buf, "0x%08" PRIX32, x->scale_used);
    cli_json_string(j, "bits", buf);
    cli_json_string(j, "value", cli_f32_dec(buf, sizeof buf, x->scale_used));
    cli_json_string(j, "from",
                    x->kopt.scale_given   ? "--scale"
                    : x->man_scale_number ? "manifest"
                    : x->scale_meta       ? "metadata"
                                          : "1/sqrt(d)");
    cli_json_bool(j, "torch_default_same", x->torch_scale_same);
    cli_json_bool(j, "override", x->scale_override);
    cli_json_object_end(j);
}

/* With captures: the tiles, the first stage that differs and where each
   traced element of O took its difference. */
static void
json_capture(cli_json *j, const diff_ctx *x)
{
    cli_json_object_begin(j, "kernel");
    cli_json_int(j, "br", (long long)x->br);
    cli_json_int(j, "bc", (long long)x->bc);
    cli_json_int(j, "tc", (long long)x->tc);
    cli_json_object_end(j);
    if (x->first_div < 0)
        cli_json_null(j, "first_divergent_stage");
    else
        cli_json_string(j, "first_divergent_stage", st_names[x->first_div]);
    cli_json_array_begin(j, "o_trace");
    for (size_t n = 0; n < x->n_trace; n++) {
        const o_trace *tr = &x->trace[n];
        uint64_t idx[5];
        unsigned nd = diff_split_index(x, ST_O, tr->flat, idx);
        cli_json_object_begin(j, NULL);
        cli_json_shape(j, "index", nd, idx);
        if (tr->found) {
            cli_json_int(j, "block", (long long)tr->block);
            cli_json_int(j, "visit", (long long)tr->visit);
        } else {
            cli_json_null(j, "block");
            cli_json_null(j, "visit");
        }
        cli_json_string(j, "stage", st_names[tr->stage]);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
}

void
diff_json_report(const diff_ctx *x, cli_json *j)
{
    cli_json_object_begin(j, NULL);
    cli_json_string(j, "command", "diff");
    cli_json_string(j, "version", cli_version());
    cli_json_string(j, "dump", x->dump);
    cli_json_bool(j, "manifest", x->have_manifest);
    cli_json_object_begin(j, "shape");
    fa_cli_json_shape(j, x->nb, x->nh, x->nq, x->nk, x->d);
    cli_json_object_end(j);
    cli_json_string(j, "policy", run_name(x));
    if (x->kopt.sdpa) {
        cli_json_object_begin(j, "sdpa");
        cli_json_string(j, "from", x->sdpa_from);
        cli_json_string(j, "backend", sdpa_backend_name(x->sdpa_ch.backend));
        cli_json_string(j, "variant", x->sdpa_ch.variant);
        cli_json_string(j, "reason", x->sdpa_ch.reason);
        cli_json_object_end(j);
    }
    cli_json_string(j, "exp", x->kopt.exp.name);
    cli_json_string(j, "exp_from", x->kopt.exp.from);
    cli_json_bool(j, "causal", x->causal);
    cli_json_bool(j, "causal_top_left", x->causal && x->top_left);
    cli_json_string(j, "causal_from", x->causal_from);
    cli_json_bool(j, "causal_override", x->causal_override);
    cli_json_string(j, "layout", ut_layout_name(x->layout));
    cli_json_string(j, "layout_from", x->layout_from);
    if (x->heads_subset)
        json_heads_kept(j, x);
    cli_json_object_begin(j, "read");
    for (int i = 0; i < N_T; i++)
        if (x->t[i] != NULL && x->info[i].how[0] != '\0')
            cli_json_string(j, t_names[i], x->info[i].how);
    cli_json_object_end(j);
    cli_json_string(j, "fix", fa_fix_name(x->fix));
    cli_json_string(j, "fix_from", x->fix_from);
    cli_json_bool(j, "rowsum_fma", !x->man_rowsum_separate);
    cli_json_int(j, "splits", (long long)x->splits);
    cli_json_string(j, "splits_from", x->splits_from);
    cli_json_int(j, "dq_buffers", (long long)x->dq_eff);
    cli_json_string(j, "dq_buffers_from", x->dq_from);
    json_scale(j, x);
    cli_json_int(j, "tolerance", (long long)x->tol);
    cli_json_object_begin(j, "exact_reference");
    cli_json_bool(j, "run", x->exact_run);
    cli_json_string(j, "note", x->exact_run ? NULL : x->exact_note);
    cli_json_int(j, "heads_skipped", (long long)x->heads_skipped);
    cli_json_object_end(j);
    cli_json_array_begin(j, "stages");
    for (int s = 0; s < N_ST; s++)
        if (x->r[s].on)
            json_stage(j, x, s);
    cli_json_array_end(j);
    if (x->want_cap)
        json_capture(j, x);
    cli_json_bool(j, "pass", x->pass);
    cli_json_object_end(j);
    cli_json_finish(j);
}
