/* attn_report.c -- bf16emu attn's output file (the outputs, captures
   and inputs with the run's metadata) and its text and JSON reports */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attn_exact.h"
#include "experiments/attn_local.h"
#include "experiments/fa_kernel_json.h"

/*----------------------------------------------------------------------------
 * The cost.
 *--------------------------------------------------------------------------*/
/* "0.63 s", "25 min", "3.2 h", "41 days" into BUF. */
static const char *
duration_str(char *buf, size_t n, double s)
{
    if (s < 60)
        snprintf(buf, n, "%.2g s", s);
    else if (s < 3600)
        snprintf(buf, n, "%.0f min", s / 60);
    else if (s < 172800)
        snprintf(buf, n, "%.2g h", s / 3600);
    else
        snprintf(buf, n, "%.3g days", s / 86400);
    return buf;
}

/* "cost W: B x H x Nq x Nk x d = ...; the parts that run", without a
   newline: W the work, and the exact reference's time on one core where
   it runs. */
void
attn_cost_text(cli_buf *b, const attn_ctx *x)
{
    double w = run_work(x);
    char t[40];

    cli_buf_printf(b,
                   "cost %.3g: B x H x Nq x Nk x d = %zu x %zu x %zu x %zu x "
                   "%zu%s; runs the %s",
                   w, x->nb, x->nh, x->nq, x->nk, x->d,
                   x->backward ? ", x 4 with --backward" : "",
                   x->backward ? "forward and the backward" : "forward");
    if (x->exact_run)
        cli_buf_printf(b,
                       ", then the exact reference (MPFR at 256 bits, the "
                       "same units at about %.2g us each: %s of one core)",
                       EXACT_S_PER_UNIT * 1e6,
                       duration_str(t, sizeof t, w * EXACT_S_PER_UNIT));
    else
        cli_buf_printf(b, "; the exact reference not run (%s)", x->exact_note);
}


/*----------------------------------------------------------------------------
 * The output file.
 *--------------------------------------------------------------------------*/
#define MAX_TENSORS (N_OUT + N_CAP + N_IN + 1)
#define MAX_META 64
#define META_LEN 96

typedef struct
{
    tensor_named list[MAX_TENSORS];
    size_t n;
    tensor_meta meta[MAX_META];
    char keys[MAX_META][META_LEN], values[MAX_META][META_LEN];
    size_t n_meta;
    /* arrays to swap back after writing on a big-endian host */
    void *swapped[MAX_TENSORS];
    size_t swapped_n[MAX_TENSORS], swapped_es[MAX_TENSORS];
} out_file;

static void meta_add(out_file *f, const char *key, const char *fmt, ...)
    CLI_PRINTF(3, 4);

static void
meta_add(out_file *f, const char *key, const char *fmt, ...)
{
    va_list ap;

    if (f->n_meta == MAX_META)
        return;
    snprintf(f->keys[f->n_meta], META_LEN, "%s", key);
    va_start(ap, fmt);
    vsnprintf(f->values[f->n_meta], META_LEN, fmt, ap);
    va_end(ap);
    f->meta[f->n_meta].key = f->keys[f->n_meta];
    f->meta[f->n_meta].value = f->values[f->n_meta];
    f->n_meta++;
}

/* The shape of a tensor with Q's leading dimensions and two (or one)
   trailing ones; returns its rank. */
static unsigned
out_shape(const attn_ctx *x, uint64_t *shape, size_t a, size_t b, bool two)
{
    unsigned r = 0;

    for (unsigned i = 0; i < x->n_lead; i++)
        shape[r++] = x->lead[i];
    shape[r++] = a;
    if (two)
        shape[r++] = b;
    return r;
}

/* Adds NAME (shape: Q's leading dimensions, then A, and B when TWO) to
   F; HEADS, when not 0, replaces the H dimension (K and V of grouped-query
   heads). */
static void
tensor_add_h(out_file *f, const attn_ctx *x, const char *name,
             tensor_dtype dt, void *data, size_t heads, size_t a, size_t b,
             bool two)
{
    tensor *t = &f->list[f->n].tensor;
    size_t es = tensor_dtype_size(dt);

    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = out_shape(x, t->shape, a, b, two);
    if (heads != 0 && x->n_lead >= 1 && x->rank >= 3)
        t->shape[x->n_lead - 1] = heads;
    t->n_elems = 1;
    for (unsigned i = 0; i < t->ndim; i++)
        t->n_elems *= t->shape[i];
    t->n_bytes = (size_t)t->n_elems * es;
    t->data = data;
    f->list[f->n].name = name;
    swap_elems(data, (size_t)t->n_elems, es);
    f->swapped[f->n] = data;
    f->swapped_n[f->n] = (size_t)t->n_elems;
    f->swapped_es[f->n] = es;
    f->n++;
}

static void
tensor_add(out_file *f, const attn_ctx *x, const char *name, tensor_dtype dt,
           void *data, size_t a, size_t b, bool two)
{
    tensor_add_h(f, x, name, dt, data, 0, a, b, two);
}

/* An input tensor [.., HEADS, A, B]. */
static void
tensor_add_heads(out_file *f, const attn_ctx *x, const char *name,
                 tensor_dtype dt, void *data, size_t heads, size_t a, size_t b)
{
    tensor_add_h(f, x, name, dt, data, heads, a, b, true);
}

static const char *
ablation_list(char *buf, size_t n, unsigned abl)
{
    size_t o = 0;

    buf[0] = '\0';
    for (unsigned b = 0; b < 32; b++)
        if ((abl & (1u << b)) && fa_ablation_name(1u << b) != NULL && o < n)
            o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? "," : "",
                                  fa_ablation_name(1u << b));
    if (o == 0)
        snprintf(buf, n, "none");
    return buf;
}

static void
file_meta(out_file *f, const attn_ctx *x)
{
    const fa_fix *fx = &x->cfg.fix;
    char buf[META_LEN];

    meta_add(f, "producer", "bf16emu %s attn", cli_version());
    meta_add(f, "policy", "%s", kernel_name(x));
    meta_add(f, "splits", "%zu", x->splits_eff);
    if (x->backward)
        meta_add(f, "dq_buffers", "%zu", x->dq_buffers_eff);
    meta_add(f, "fix", "%s", fa_fix_name(fx->kind));
    meta_add(f, "fix.beta", "%s", dbl_str(buf, sizeof buf, fx->beta));
    meta_add(f, "fix.tol", "%s", dbl_str(buf, sizeof buf, fx->tol));
    meta_add(f, "fix.eps", "%s", dbl_str(buf, sizeof buf, fx->eps));
    meta_add(f, "fix.zero_max", "%s",
             fx->zero_max == FA_ZERO_MAX_SHIFT ? "shift" : "keep");
    meta_add(f, "fix.eps_zero", "%s", dbl_str(buf, sizeof buf, fx->eps_zero));
    meta_add(f, "ablations", "%s",
             ablation_list(buf, sizeof buf, x->ablations));
    meta_add(f, "exp", "%s", x->kopt.exp.name);
    meta_add(f, "scale", "f32:0x%08" PRIX32, x->scale_used);
    meta_add(f, "causal", "%s", x->kopt.causal ? "true" : "false");
    if (x->kopt.causal)
        meta_add(f, "causal_alignment", "%s",
                 x->kopt.top_left ? "top-left" : "bottom-right");
    meta_add(f, "layout", "bhnd");
    meta_add(f, "order", "%s", fa_order_name(x->order));
    meta_add(f, "tiles", "%zux%zu", x->br_eff, x->bc_eff);
    meta_add(f, "kv_blocks", "%zu", x->tc);
    if (x->gen_on) {
        const gen_params *g = &x->gen;
        meta_add(f, "inputs", "generated");
        meta_add(f, "gen", "%s", gen_kind_name(g->kind));
        meta_add(f, "gen.seed", "%" PRIu64, g->seed);
        meta_add(f, "gen.qk_std", "%s", dbl_str(buf, sizeof buf, g->qk_std));
        meta_add(f, "gen.v_mean", "%s", dbl_str(buf, sizeof buf, g->v_mean));
        meta_add(f, "gen.v_std", "%s", dbl_str(buf, sizeof buf, g->v_std));
        if (x->backward)
            meta_add(f, "gen.do_std", "%s",
                     dbl_str(buf, sizeof buf, g->do_std));
        if (g->kind == GEN_SINK)
            meta_add(f, "gen.sink", "%s", dbl_str(buf, sizeof buf, g->sink));
        if (g->kind == GEN_REPEATED) {
            meta_add(f, "gen.repeat", "%" PRIu64, g->repeat);
            meta_add(f, "gen.max_value", "%s",
                     dbl_str(buf, sizeof buf, g->max_value));
            meta_add(f, "gen.gap_min", "%s",
                     dbl_str(buf, sizeof buf, g->gap_min));
            meta_add(f, "gen.gap_max", "%s",
                     dbl_str(buf, sizeof buf, g->gap_max));
        }
    } else {
        meta_add(f, "inputs", "files");
    }
}

bool
attn_write_output(attn_ctx *x)
{
    out_file *f = calloc(1, sizeof *f);
    tensor_error err;
    size_t nq = x->nq, nk = x->nk, d = x->d;
    /* the whole description run, so that diff of this file runs it */
    char *kjson = fa_kernel_json(fa_config_kernel(&x->cfg));
    int rc;

    if (f == NULL || kjson == NULL) {
        free(f);
        free(kjson);
        cli_error(CMD, "out of memory");
        return false;
    }
    file_meta(f, x);
    if (f->n_meta < MAX_META) {
        f->meta[f->n_meta].key = "kernel";
        f->meta[f->n_meta].value = kjson;
        f->n_meta++;
    }
    tensor_add(f, x, "o", TENSOR_F32, x->res[OUT_O], nq, d, true);
    tensor_add(f, x, "lse", TENSOR_F32, x->res[OUT_LSE], nq, 0, false);
    if (x->backward) {
        tensor_add(f, x, "delta", TENSOR_F32, x->res[OUT_DELTA], nq, 0, false);
        tensor_add(f, x, "dq", TENSOR_F32, x->res[OUT_DQ], nq, d, true);
        tensor_add_heads(f, x, "dk", TENSOR_F32, x->res[OUT_DK], x->nhkv, nk,
                         d);
        tensor_add_heads(f, x, "dv", TENSOR_F32, x->res[OUT_DV], x->nhkv, nk,
                         d);
    }
    for (int i = 0; i < N_CAP; i++) {
        if (!(x->captures & (1u << i)))
            continue;
        tensor_add(f, x, cap_names[i], TENSOR_F32, x->cap[i], nq,
                   i == CAP_M || i == CAP_L ? x->tc
                   : i == CAP_OBAR          ? d
                                            : nk,
                   true);
    }
    for (int i = 0; i < N_IN; i++) {
        if (x->data[i] == NULL)
            continue;
        tensor_add_heads(f, x, in_names[i],
                         x->f16 ? TENSOR_F16 : TENSOR_BF16, x->data[i],
                         i == IN_K || i == IN_V ? x->nhkv : x->nh,
                         i == IN_K || i == IN_V ? nk : nq, d);
    }
    if (x->has_mask) {
        /* the mask as given, so that diff of this file applies it */
        const tensor *mt = &x->mask_opd.t;
        size_t es = tensor_dtype_size(mt->dtype);
        f->list[f->n].tensor = *mt;
        f->list[f->n].name = "attn_mask";
        swap_elems(mt->data, (size_t)mt->n_elems, es);
        f->swapped[f->n] = mt->data;
        f->swapped_n[f->n] = (size_t)mt->n_elems;
        f->swapped_es[f->n] = es;
        f->n++;
    }
    for (size_t i = 0; i < f->n; i++) {
        char key[32];
        const char *name = f->list[i].name;
        if (strcmp(name, "attn_mask") == 0)
            continue;
        const sf_format *fmt = fa_output_format(&x->cfg, name);
        if (fmt == NULL) /* the inputs */
            fmt = x->f16 ? &sf_format_f16 : &sf_format_bf16;
        snprintf(key, sizeof key, "format.%s", name);
        meta_add(f, key, "%s", fmt->name);
    }
    rc = safetensors_write(x->out.path, f->list, f->n, f->meta, f->n_meta,
                           x->force, &err);
    for (size_t i = 0; i < f->n; i++)
        swap_elems(f->swapped[i], f->swapped_n[i], f->swapped_es[i]);
    free(f);
    free(kjson);
    if (rc != TENSOR_OK) {
        cli_error(CMD, "--out: %s", err.message);
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Reports.
 *--------------------------------------------------------------------------*/
static const char *
op_name(int op)
{
    switch (op) {
    case SF_OP_ADD:
        return "add";
    case SF_OP_SUB:
        return "sub";
    case SF_OP_MUL:
        return "mul";
    case SF_OP_DIV:
        return "div";
    case SF_OP_SQRT:
        return "sqrt";
    case SF_OP_FMA:
        return "fma";
    case SF_OP_CONVERT:
        return "convert";
    case SF_OP_ROUND_INT:
        return "round-int";
    case SF_OP_TO_INT:
        return "to-int";
    case SF_OP_FROM_INT:
        return "from-int";
    case SF_OP_FROM_DOUBLE:
        return "from-double";
    case SF_OP_FROM_STRING:
        return "from-string";
    case SF_OP_MMA_ALIGN:
        return "mma-align";
    case SF_OP_MMA_BLOCK:
        return "mma-block";
    case SF_OP_MMA_FMA:
        return "mma-fma";
    case SF_OP_MMA_MUL:
        return "mma-mul";
    case SF_OP_MMA_ADD:
        return "mma-add";
    case SF_OP_MMA_STORE:
        return "mma-store";
    case SF_OP_MMA_EXACT:
        return "mma-exact";
    default:
        return "other";
    }
}

static const char *
dir_name(int dir)
{
    return dir > 0 ? "away" : dir < 0 ? "toward" : "exact";
}

/* BITS of FMT as hex with the format's digits ("0x3F80"); an integer
   (FMT NULL) in decimal. */
static const char *
bits_str(char *buf, size_t n, const sf_format *fmt, uint64_t bits)
{
    if (fmt == NULL)
        snprintf(buf, n, "%" PRId64, (int64_t)bits);
    else
        snprintf(buf, n, "0x%0*" PRIX64, (int)(fmt->storage_bits / 4), bits);
    return buf;
}

static const char *
gen_desc(char *buf, size_t n, const attn_ctx *x)
{
    const gen_params *g = &x->gen;
    size_t o;

    o = (size_t)snprintf(buf, n,
                         "%s, seed %" PRIu64 ":\n    Q, K ~ N(0, %.6g), V ~ "
                         "N(%.6g, %.6g)",
                         gen_kind_name(g->kind), g->seed, g->qk_std, g->v_mean,
                         g->v_std);
    if (x->backward && o < n)
        o += (size_t)snprintf(buf + o, n - o, ", dO ~ N(0, %.6g)", g->do_std);
    if (g->kind == GEN_SINK && o < n)
        snprintf(buf + o, n - o, ";\n    key 0's scores raised by %.6g",
                 g->sink);
    else if (g->kind == GEN_REPEATED && o < n)
        snprintf(buf + o, n - o,
                 ";\n    %" PRIu64 " keys at score %.6g, the others %.6g to "
                 "%.6g below",
                 g->repeat, g->max_value, g->gap_min, g->gap_max);
    return buf;
}

/* Whether input I is part of the run (generated inputs are allocated
   only to be computed, not by --dry-run). */
static bool
input_present(const attn_ctx *x, int i)
{
    return x->data[i] != NULL
           || (x->gen_on && x->dry_run && (i != IN_DO || x->backward));
}

static void
text_input(cli_buf *b, const attn_ctx *x, int i)
{
    char spec[SPEC_MAX], sh[SHAPE_MAX];
    uint64_t shape[4];
    unsigned r;

    if (!input_present(x, i))
        return;
    if (x->gen_on) {
        r = out_shape(x, shape, i == IN_K || i == IN_V ? x->nk : x->nq, x->d,
                      true);
        cli_buf_printf(b, "  %-3s generated  BF16 %s", in_labels[i],
                       cli_shape_str(sh, sizeof sh, r, shape));
    } else {
        const operand *o = &x->in[i];
        cli_buf_printf(b, "  %-3s %s  %s %s", in_labels[i],
                       cli_spec_str(spec, sizeof spec, o),
                       tensor_dtype_name(o->t.dtype),
                       cli_shape_str(sh, sizeof sh, o->t.ndim, o->t.shape));
        if (x->info[i].how[0] != '\0')
            cli_buf_printf(b, " (%s)", x->info[i].how);
        if (x->info[i].transposed)
            cli_buf_printf(b, " (read as %s, layout %s: %s)",
                           x->rank == 4 ? "[B, N, H, d]" : "[N, H, d]",
                           ut_layout_name(x->layout), x->layout_from);
    }
    if (x->nonfinite_in[i] > 0)
        cli_buf_printf(b, ", %" PRIu64 " NaN or Inf", x->nonfinite_in[i]);
    cli_buf_putc(b, '\n');
}

static void
text_fix(cli_buf *b, const attn_ctx *x)
{
    const fa_fix *f = &x->cfg.fix;

    cli_buf_printf(b, "fix %s", fa_fix_name(f->kind));
    switch (f->kind) {
    case FA_FIX_BETA:
    case FA_FIX_BETA_V2:
    case FA_FIX_ALWAYS:
        cli_buf_printf(b, " (beta %.6g", f->beta);
        if (f->kind == FA_FIX_BETA)
            cli_buf_printf(b, ", tol %.6g", f->tol);
        if (f->zero_max == FA_ZERO_MAX_SHIFT)
            cli_buf_printf(b, ", zero max shifted by %.6g)", f->eps_zero);
        else
            cli_buf_puts(b, ", zero max kept)");
        break;
    case FA_FIX_EPS:
        cli_buf_printf(b, " (eps %.6g, tol %.6g)", f->eps, f->tol);
        break;
    default:
        break;
    }
}

/* One line of the moments table: output I's count, mean, se, t and 95%
   interval of the errors in C, summarized into *S. */
static void
text_moments(cli_buf *b, const attn_ctx *x, int i, const bias_cell *c,
             bias_summary *s)
{
    char v[3][32], ci[64];

    bias_summarize(c, s);
    if (s->valid)
        snprintf(ci, sizeof ci, "[%.4g, %.4g]", s->ci_lo, s->ci_hi);
    else
        snprintf(ci, sizeof ci, "-");
    cli_buf_printf(b, "  %-6s %-6s %7" PRIu64 " %10s %10s %10s  %s\n",
                   out_names[i], x->st[i].fmt->name, s->n,
                   fa_cli_g4(v[0], sizeof v[0], s->mean),
                   fa_cli_g4(v[1], sizeof v[1], s->se),
                   fa_cli_g4(v[2], sizeof v[2], s->t), ci);
}

/* The errors in ulps of the row's scale (stat_rows). */
static void
text_row_stats(cli_buf *b, const attn_ctx *x)
{
    bias_summary s;
    char v[2][32];
    bool any = false;

    for (int i = 0; i < N_OUT; i++)
        any = any || (x->st[i].have && x->st[i].rows);
    if (!any)
        return;
    cli_buf_puts(b, "\nerrors relative to the row's scale (computed - exact, "
                    "in ulps of the format\nat the row's largest |exact|; a "
                    "row: the d elements of one query or key):\n");
    cli_buf_puts(b, "  output format       n       mean         se          t"
                    "  95% CI\n");
    for (int i = 0; i < N_OUT; i++)
        if (x->st[i].have && x->st[i].rows)
            text_moments(b, x, i, &x->st[i].rel, &s);
    cli_buf_puts(b, "  output   max|err|  mean|err|\n");
    for (int i = 0; i < N_OUT; i++) {
        const err_stat *st = &x->st[i];
        if (!st->have || !st->rows)
            continue;
        bias_summarize(&st->rel, &s);
        cli_buf_printf(
            b, "  %-6s %10s %10s\n", out_names[i],
            fa_cli_g4(v[0], sizeof v[0],
                      s.n > 0 ? fmax(fabs(s.min), fabs(s.max)) : NAN),
            fa_cli_g4(v[1], sizeof v[1],
                      st->rel_mag.n > 0 ? st->rel_mag.mean : NAN));
    }
}

static void
text_stats(cli_buf *b, const attn_ctx *x)
{
    bias_summary s[N_OUT];
    char v[5][32];

    cli_buf_puts(b, "\nerrors against the exact reference (computed - exact, "
                    "in ulps of the format):\n");
    cli_buf_puts(b, "  output format       n       mean         se          t"
                    "  95% CI\n");
    for (int i = 0; i < N_OUT; i++)
        if (x->st[i].have)
            text_moments(b, x, i, &x->st[i].err, &s[i]);
    cli_buf_puts(b,
                 "  output     neg    zero     pos   max|err|  mean|err|\n");
    for (int i = 0; i < N_OUT; i++) {
        const err_stat *st = &x->st[i];
        if (!st->have)
            continue;
        cli_buf_printf(
            b, "  %-6s %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %10s %10s\n",
            out_names[i], st->err.neg, st->err.zero, st->err.pos,
            fa_cli_g4(v[3], sizeof v[3],
                      s[i].n > 0 ? fmax(fabs(s[i].min), fabs(s[i].max)) : NAN),
            fa_cli_g4(v[4], sizeof v[4], st->mag.n > 0 ? st->mag.mean : NAN));
    }
    for (int i = 0; i < N_OUT; i++) {
        const err_stat *st = &x->st[i];
        if (!st->have || (st->skipped == 0 && st->err.nonfinite == 0))
            continue;
        cli_buf_printf(b, "  %s: ", out_names[i]);
        if (st->skipped > 0)
            cli_buf_printf(b,
                           "%" PRIu64 " element%s without a finite exact "
                           "value left out",
                           st->skipped, st->skipped == 1 ? "" : "s");
        if (st->err.nonfinite > 0)
            cli_buf_printf(b,
                           "%s%" PRIu64 " computed NaN or Inf against a "
                           "finite exact value (not in the moments)",
                           st->skipped > 0 ? "; " : "", st->err.nonfinite);
        cli_buf_putc(b, '\n');
    }
    text_row_stats(b, x);
}

static void
text_trace(cli_buf *b, const attn_ctx *x, int pass)
{
    const trace_log *t = &x->tr[pass];
    char r[40], ops[80];

    cli_buf_printf(b,
                   "\ntrace: rounding events of %s[%" PRIu64 ", %" PRIu64
                   ", %" PRIu64 ", %" PRIu64 "] (%s): %" PRIu64 " events",
                   pass == 0 ? "O" : "dQ", x->trace_at[0], x->trace_at[1],
                   x->trace_at[2], x->trace_at[3],
                   pass == 0 ? "forward" : "backward", t->total);
    if (t->total > t->n)
        cli_buf_printf(b, ", the last %zu listed\n", t->n);
    else
        cli_buf_puts(b, "\n");
    cli_buf_puts(b, "  operation       events   exact    away  toward    "
                    "ties  mean error (ulps)\n");
    for (int op = 0; op < BIAS_N_OPS; op++) {
        const bias_cell *c = &t->acc->by_op[op];
        if (c->events == 0)
            continue;
        cli_buf_printf(b,
                       "  %-12s %9" PRIu64 " %7" PRIu64 " %7" PRIu64
                       " %7" PRIu64 " %7" PRIu64 "  %+.4g\n",
                       op_name(op), c->events, c->exact, c->away, c->toward,
                       c->ties, c->n > 0 ? c->mean : 0.0);
    }
    if (t->n == 0)
        return;
    cli_buf_puts(b, "  #         operation    fmt   operands                  "
                    "      result       dir     G R S tie  error (ulps)\n");
    for (size_t i = 0; i < t->n; i++) {
        const trace_ev *e = &t->ring[(t->next + t->cap - t->n + i) % t->cap];
        size_t o = 0;
        ops[0] = '\0';
        for (unsigned j = 0; j < e->n_in && o < sizeof ops; j++) {
            char one[40];
            o += (size_t)snprintf(
                ops + o, sizeof ops - o, "%s%s", j ? " " : "",
                bits_str(one, sizeof one, e->in_fmt[j], e->in[j]));
        }
        cli_buf_printf(
            b,
            "  %-9" PRIu64 " %-12s %-5s %-31s %-12s %-7s %u %u "
            "%u %-3s  %+.6g\n",
            e->seq, op_name(e->op), e->fmt != NULL ? e->fmt->name : "-", ops,
            bits_str(r, sizeof r, e->fmt, e->result), dir_name(e->dir),
            e->guard, e->round, e->sticky, e->tie ? "yes" : "no", e->err_ulps);
    }
}

/* With F16 inputs: the format O is written in, and the description's
   field that sets it. */
static void
text_o_format(cli_buf *b, const attn_ctx *x)
{
    const fa_kernel *k = fa_config_kernel(&x->cfg);
    const sf_format *f = fa_output_format(&x->cfg, "o");
    const char *const *names = fa_kernel_enum_names("o");

    if (!x->f16 || k == NULL || f == NULL || names == NULL)
        return;
    cli_buf_printf(b,
                   "  O written in %s (the description's \"o\": \"%s\"%s)\n",
                   f->name, names[k->o],
                   f == &sf_format_f16 ? ", the inputs' format"
                   : k->o == FA_FMT_IN ? ", changed by --ablate"
                                       : "");
}

/* The report's lines up to the computation's results: the description,
   fix and exp model, the inputs, the shape, the tiles and splits. */
static void
text_header(cli_buf *b, const attn_ctx *x)
{
    char mb[1024]; /* the mask's line */
    char buf[512], sv[64], abl[128];

    cli_buf_printf(b, "attn: %s %s, ", kernel_name(x),
                   x->backward ? "forward and backward" : "forward");
    text_fix(b, x);
    cli_buf_printf(b, ", exp %s (%s)\n", x->kopt.exp.name, x->kopt.exp.from);
    for (int i = 0; i < N_IN; i++)
        text_input(b, x, i);
    if (x->gen_on)
        cli_buf_printf(b, "  generated by %s\n", gen_desc(buf, sizeof buf, x));
    cli_buf_printf(b,
                   "  B %zu, H %zu, Nq %zu, Nk %zu, d %zu; scale %s "
                   "(f32:0x%08" PRIX32 "), %s\n",
                   x->nb, x->nh, x->nq, x->nk, x->d,
                   cli_f32_dec(sv, sizeof sv, x->scale_used), x->scale_used,
                   !x->kopt.causal ? (x->has_mask ? "not causal" : "no mask")
                   : x->kopt.top_left
                       ? "causal, top-left aligned (SDPA's is_causal)"
                       : "causal, bottom-right aligned");
    if (x->has_mask)
        cli_buf_printf(b, "  %s\n",
                       am_summary(mb, sizeof mb, x->mask_opd.arg, &x->mask,
                                  fa_config_kernel(&x->cfg)));
    fa_cli_flex_header(b, &x->cfg, x->backward,
                       x->kopt.delta_xblock != 0 ? "--delta-xblock"
                                                 : "default");
    cli_buf_printf(b, "  tiles %zu x %zu, %zu KV block%s", x->br_eff,
                   x->bc_eff, x->tc, x->tc == 1 ? "" : "s");
    if (x->splits_eff > 1)
        cli_buf_printf(b, " in %zu splits (split-KV)", x->splits_eff);
    cli_buf_printf(b, ", order %s; ablations %s\n", fa_order_name(x->order),
                   ablation_list(abl, sizeof abl, x->ablations));
    cli_buf_printf(b, "  splits %zu (%s)\n", x->splits_eff,
                   x->splits_from != NULL ? x->splits_from : "default");
    if (x->nhkv != x->nh)
        cli_buf_printf(b, "  grouped-query heads: %zu query heads over %zu "
                          "key/value heads (query head h reads KV head "
                          "h / %zu)\n",
                       x->nh, x->nhkv, x->nh / x->nhkv);
    text_o_format(b, x);
}

/* --dry-run: the header, the memory estimate and the cost. */
void
attn_text_dry_run(cli_buf *b, const attn_ctx *x)
{
    char tot[40], lim[40];

    text_header(b, x);
    cli_buf_printf(b, "  memory about %s (limit %s)%s\n",
                   bytes_str(tot, sizeof tot, x->mem.total),
                   bytes_str(lim, sizeof lim, x->max_memory),
                   x->mem.total > x->max_memory
                       ? ": above the limit, the run would be refused"
                       : "");
    if (x->out.arg != NULL)
        cli_buf_printf(b, "  out %s: not written (--dry-run)\n", x->out.path);
    attn_cost_text(b, x);
    cli_buf_puts(b, "\ndry run: nothing computed\n");
}

void
attn_text_report(attn_ctx *x, cli_buf *b)
{
    char fl[6], fl2[6];

    text_header(b, x);
    cli_buf_printf(b, "  flags %s", sf_flags_str(x->flags_fwd, fl));
    if (x->backward)
        cli_buf_printf(b, " (forward), %s (backward)",
                       sf_flags_str(x->flags_bwd, fl2));
    cli_buf_putc(b, '\n');
    if (x->rows_have)
        cli_buf_printf(
            b,
            "  rows with P~ = 1 entries: %" PRIu64 " of %" PRIu64
            " (%.4g%%); with two or more: %" PRIu64 " (%.4g%%)\n",
            x->rows_p1, x->rows,
            x->rows ? 100.0 * (double)x->rows_p1 / (double)x->rows : 0.0,
            x->rows_p2,
            x->rows ? 100.0 * (double)x->rows_p2 / (double)x->rows : 0.0);
    if (x->out.arg != NULL) {
        cli_buf_printf(b, "  out %s: o, lse", x->out.path);
        if (x->backward)
            cli_buf_puts(b, ", delta, dq, dk, dv");
        for (int i = 0; i < N_CAP; i++)
            if (x->captures & (1u << i))
                cli_buf_printf(b, ", %s", cap_names[i]);
        cli_buf_puts(b, " (F32);");
        for (int i = 0; i < N_IN; i++)
            if (x->data[i] != NULL)
                cli_buf_printf(b, "%s %s", i ? "," : "", in_names[i]);
        cli_buf_puts(b, x->f16 ? " (F16)\n" : " (BF16)\n");
    }
    if (x->exact_run) {
        text_stats(b, x);
        if (x->heads_nonfinite > 0)
            cli_buf_printf(b,
                           "  %" PRIu64 " head%s with NaN or Inf inputs have "
                           "no exact reference (left out)\n",
                           x->heads_nonfinite,
                           x->heads_nonfinite == 1 ? "" : "s");
        if (x->heads_range > 0)
            cli_buf_printf(b,
                           "  %" PRIu64 " head%s outside MPFR's exponent "
                           "range left out\n",
                           x->heads_range, x->heads_range == 1 ? "" : "s");
    } else {
        cli_buf_printf(b, "\nexact reference: not run (%s)\n", x->exact_note);
    }
    for (int p = 0; x->trace && p < (x->backward ? 2 : 1); p++)
        text_trace(b, x, p);
}

static void
json_shape(cli_json *j, const char *key, unsigned ndim, const uint64_t *shape)
{
    cli_json_array_begin(j, key);
    for (unsigned i = 0; i < ndim; i++)
        cli_json_int(j, NULL, (long long)shape[i]);
    cli_json_array_end(j);
}

static void
json_input(cli_json *j, const attn_ctx *x, int i)
{
    uint64_t shape[4];
    unsigned r;

    if (!input_present(x, i)) {
        cli_json_null(j, in_names[i]);
        return;
    }
    cli_json_object_begin(j, in_names[i]);
    if (x->gen_on) {
        cli_json_null(j, "file");
        cli_json_null(j, "key");
        cli_json_string(j, "dtype", x->f16 ? "F16" : "BF16");
        r = out_shape(x, shape, i == IN_K || i == IN_V ? x->nk : x->nq, x->d,
                      true);
        json_shape(j, "shape", r, shape);
    } else {
        const operand *o = &x->in[i];
        cli_json_string(j, "file", o->path);
        cli_json_string(j, "key", o->key);
        cli_json_string(j, "dtype", tensor_dtype_name(o->t.dtype));
        json_shape(j, "shape", o->t.ndim, o->t.shape);
    }
    cli_json_int(j, "nonfinite", (long long)x->nonfinite_in[i]);
    cli_json_object_end(j);
}

/* The errors in ulps of the row's scale (stat_rows), beside the others:
   row_count, row_mean, ..., row_mean_abs. */
static void
json_row_stats(cli_json *j, const err_stat *st)
{
    bias_summary s;

    if (!st->rows)
        return;
    bias_summarize(&st->rel, &s);
    cli_json_int(j, "row_count", (long long)s.n);
    fa_cli_json_interval(j, "row_", &s, true);
    fa_cli_json_extremes(j, "row_", &s);
    cli_json_double(j, "row_mean_abs",
                    st->rel_mag.n > 0 ? st->rel_mag.mean : NAN);
}

static void
json_stats(cli_json *j, const attn_ctx *x)
{
    if (!x->exact_run || x->dry_run) {
        cli_json_null(j, "errors");
        return;
    }
    cli_json_object_begin(j, "errors");
    for (int i = 0; i < N_OUT; i++) {
        const err_stat *st = &x->st[i];
        bias_summary s;
        if (!st->have)
            continue;
        bias_summarize(&st->err, &s);
        cli_json_object_begin(j, out_names[i]);
        cli_json_string(j, "format", st->fmt->name);
        cli_json_int(j, "count", (long long)s.n);
        cli_json_int(j, "nonfinite", (long long)st->err.nonfinite);
        cli_json_int(j, "skipped", (long long)st->skipped);
        fa_cli_json_interval(j, "", &s, true);
        cli_json_int(j, "neg", (long long)st->err.neg);
        cli_json_int(j, "zero", (long long)st->err.zero);
        cli_json_int(j, "pos", (long long)st->err.pos);
        fa_cli_json_extremes(j, "", &s);
        cli_json_double(j, "mean_abs", st->mag.n > 0 ? st->mag.mean : NAN);
        json_row_stats(j, st);
        cli_json_object_end(j);
    }
    cli_json_object_end(j);
}

/* The memory estimate and the cost. */
static void
json_cost(cli_json *j, const attn_ctx *x)
{
    cli_json_object_begin(j, "memory");
    cli_json_int(j, "estimate", (long long)x->mem.total);
    cli_json_int(j, "limit", (long long)x->max_memory);
    cli_json_object_end(j);
    cli_json_object_begin(j, "cost");
    cli_json_double(j, "work", run_work(x));
    cli_json_double(j, "exact_seconds",
                    x->exact_run ? run_work(x) * EXACT_S_PER_UNIT : NAN);
    cli_json_object_end(j);
}

static void
json_trace(cli_json *j, const attn_ctx *x, int pass)
{
    const trace_log *t = &x->tr[pass];
    char buf[40];

    cli_json_object_begin(j, pass == 0 ? "forward" : "backward");
    cli_json_string(j, "element", pass == 0 ? "o" : "dq");
    cli_json_int(j, "events", (long long)t->total);
    cli_json_int(j, "listed", (long long)t->n);
    cli_json_array_begin(j, "by_operation");
    for (int op = 0; op < BIAS_N_OPS; op++) {
        const bias_cell *c = &t->acc->by_op[op];
        if (c->events == 0)
            continue;
        cli_json_object_begin(j, NULL);
        cli_json_string(j, "op", op_name(op));
        cli_json_int(j, "code", op);
        cli_json_int(j, "events", (long long)c->events);
        cli_json_int(j, "exact", (long long)c->exact);
        cli_json_int(j, "away", (long long)c->away);
        cli_json_int(j, "toward", (long long)c->toward);
        cli_json_int(j, "up", (long long)c->up);
        cli_json_int(j, "down", (long long)c->down);
        cli_json_int(j, "ties", (long long)c->ties);
        cli_json_double(j, "mean_error_ulps", c->n > 0 ? c->mean : NAN);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_array_begin(j, "list");
    for (size_t i = 0; i < t->n; i++) {
        const trace_ev *e = &t->ring[(t->next + t->cap - t->n + i) % t->cap];
        cli_json_object_begin(j, NULL);
        cli_json_int(j, "seq", (long long)e->seq);
        cli_json_string(j, "op", op_name(e->op));
        cli_json_string(j, "format", e->fmt != NULL ? e->fmt->name : NULL);
        cli_json_array_begin(j, "operands");
        for (unsigned k = 0; k < e->n_in; k++)
            cli_json_string(j, NULL,
                            bits_str(buf, sizeof buf, e->in_fmt[k], e->in[k]));
        cli_json_array_end(j);
        cli_json_string(j, "result",
                        bits_str(buf, sizeof buf, e->fmt, e->result));
        cli_json_string(j, "direction", dir_name(e->dir));
        cli_json_int(j, "guard", e->guard);
        cli_json_int(j, "round", e->round);
        cli_json_int(j, "sticky", e->sticky);
        cli_json_bool(j, "tie", e->tie);
        cli_json_double(j, "error_ulps", e->err_ulps);
        cli_json_string(j, "flags", sf_flags_str(e->flags, buf));
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_object_end(j);
}

/* The report's description, fix, ablations, exp, mask, scale, order and
   tiles. */
static void
json_computation(cli_json *j, const attn_ctx *x)
{
    const fa_fix *f = &x->cfg.fix;
    char buf[64];

    cli_json_string(j, "policy", kernel_name(x));
    cli_json_string(j, "o_format",
                    fa_output_format(&x->cfg, "o") != NULL
                        ? fa_output_format(&x->cfg, "o")->name
                        : NULL);
    if (x->kopt.sdpa) {
        cli_json_object_begin(j, "sdpa");
        cli_json_string(j, "backend", sdpa_backend_name(x->sdpa_ch.backend));
        cli_json_string(j, "variant", x->sdpa_ch.variant);
        cli_json_string(j, "reason", x->sdpa_ch.reason);
        cli_json_object_end(j);
    }
    cli_json_object_begin(j, "fix");
    cli_json_string(j, "kind", fa_fix_name(f->kind));
    cli_json_double(j, "beta", f->beta);
    cli_json_double(j, "tol", f->tol);
    cli_json_double(j, "eps", f->eps);
    cli_json_string(j, "zero_max",
                    f->zero_max == FA_ZERO_MAX_SHIFT ? "shift" : "keep");
    cli_json_double(j, "eps_zero", f->eps_zero);
    cli_json_object_end(j);
    cli_json_array_begin(j, "ablations");
    for (unsigned b = 0; b < 32; b++)
        if ((x->ablations & (1u << b)) && fa_ablation_name(1u << b) != NULL)
            cli_json_string(j, NULL, fa_ablation_name(1u << b));
    cli_json_array_end(j);
    cli_json_string(j, "exp", x->kopt.exp.name);
    cli_json_string(j, "exp_from", x->kopt.exp.from);
    cli_json_bool(j, "causal", x->kopt.causal);
    cli_json_bool(j, "causal_top_left", x->kopt.causal && x->kopt.top_left);
    cli_json_object_begin(j, "scale");
    snprintf(buf, sizeof buf, "0x%08" PRIX32, x->scale_used);
    cli_json_string(j, "bits", buf);
    cli_json_string(j, "value", cli_f32_dec(buf, sizeof buf, x->scale_used));
    cli_json_object_end(j);
    cli_json_string(j, "order", fa_order_name(x->order));
    cli_json_object_begin(j, "tiles");
    cli_json_int(j, "br", (long long)x->br_eff);
    cli_json_int(j, "bc", (long long)x->bc_eff);
    cli_json_int(j, "kv_blocks", (long long)x->tc);
    cli_json_int(j, "splits", (long long)x->splits_eff);
    cli_json_int(j, "dq_buffers", (long long)x->dq_buffers_eff);
    cli_json_object_end(j);
    cli_json_bool(j, "backward", x->backward);
}

/* The report's shape and inputs (the generator, or each file). */
static void
json_inputs(cli_json *j, const attn_ctx *x)
{
    cli_json_object_begin(j, "shape");
    fa_cli_json_shape(j, x->nb, x->nh, x->nq, x->nk, x->d);
    cli_json_int(j, "rank", x->rank);
    cli_json_object_end(j);
    cli_json_object_begin(j, "inputs");
    cli_json_string(j, "source", x->gen_on ? "generated" : "files");
    if (x->gen_on) {
        const gen_params *g = &x->gen;
        cli_json_object_begin(j, "generator");
        cli_json_string(j, "name", gen_kind_name(g->kind));
        cli_json_int(j, "seed", (long long)g->seed);
        cli_json_double(j, "qk_std", g->qk_std);
        cli_json_double(j, "v_mean", g->v_mean);
        cli_json_double(j, "v_std", g->v_std);
        cli_json_double(j, "do_std", g->do_std);
        if (g->kind == GEN_SINK)
            cli_json_double(j, "sink", g->sink);
        if (g->kind == GEN_REPEATED) {
            cli_json_int(j, "repeat", (long long)g->repeat);
            cli_json_double(j, "max_value", g->max_value);
            cli_json_double(j, "gap_min", g->gap_min);
            cli_json_double(j, "gap_max", g->gap_max);
        }
        cli_json_object_end(j);
    } else {
        cli_json_null(j, "generator");
    }
    for (int i = 0; i < N_IN; i++)
        json_input(j, x, i);
    cli_json_object_end(j);
}

/* The report's flags, threads, cost, rows with P~ = 1 and the exact
   reference's run. */
static void
json_results(cli_json *j, const attn_ctx *x)
{
    char fl[6];

    if (x->dry_run)
        cli_json_null(j, "flags");
    else
        cli_json_string(j, "flags", sf_flags_str(x->flags_fwd, fl));
    if (x->backward && !x->dry_run)
        cli_json_string(j, "flags_backward", sf_flags_str(x->flags_bwd, fl));
    else
        cli_json_null(j, "flags_backward");
    cli_json_int(j, "threads",
                 x->dry_run ? attn_thread_count(x) : x->threads_used);
    json_cost(j, x);
    if (x->rows_have) {
        cli_json_object_begin(j, "rows");
        cli_json_int(j, "count", (long long)x->rows);
        cli_json_int(j, "p_one", (long long)x->rows_p1);
        cli_json_int(j, "p_one_repeated", (long long)x->rows_p2);
        cli_json_object_end(j);
    } else {
        cli_json_null(j, "rows");
    }
    cli_json_object_begin(j, "exact");
    cli_json_bool(j, "run", x->exact_run);
    cli_json_string(j, "note", x->exact_run ? NULL : x->exact_note);
    cli_json_int(j, "work", (long long)x->exact_work);
    cli_json_int(j, "limit", (long long)EXACT_WORK_LIMIT);
    cli_json_int(j, "prec", AX_PREC_DEFAULT);
    cli_json_int(j, "heads_nonfinite", (long long)x->heads_nonfinite);
    cli_json_int(j, "heads_range", (long long)x->heads_range);
    cli_json_object_end(j);
}

/* The report's trace and output file. */
static void
json_trace_out(cli_json *j, const attn_ctx *x)
{
    if (x->trace && !x->dry_run) {
        cli_json_object_begin(j, "trace");
        cli_json_int(j, "b", (long long)x->trace_at[0]);
        cli_json_int(j, "h", (long long)x->trace_at[1]);
        cli_json_int(j, "row", (long long)x->trace_at[2]);
        cli_json_int(j, "col", (long long)x->trace_at[3]);
        for (int p = 0; p < (x->backward ? 2 : 1); p++)
            json_trace(j, x, p);
        cli_json_object_end(j);
    } else {
        cli_json_null(j, "trace");
    }
    if (x->out.arg != NULL) {
        cli_json_object_begin(j, "out");
        cli_json_string(j, "file", x->out.path);
        cli_json_array_begin(j, "tensors");
        cli_json_string(j, NULL, "o");
        cli_json_string(j, NULL, "lse");
        for (int i = OUT_DELTA; x->backward && i < N_OUT; i++)
            cli_json_string(j, NULL, out_names[i]);
        for (int i = 0; i < N_CAP; i++)
            if (x->captures & (1u << i))
                cli_json_string(j, NULL, cap_names[i]);
        for (int i = 0; i < N_IN; i++)
            if (x->data[i] != NULL)
                cli_json_string(j, NULL, in_names[i]);
        cli_json_array_end(j);
        cli_json_object_end(j);
    } else {
        cli_json_null(j, "out");
    }
}

void
attn_json_report(attn_ctx *x, cli_json *j)
{
    cli_json_object_begin(j, NULL);
    cli_json_string(j, "command", "attn");
    cli_json_string(j, "version", cli_version());
    cli_json_bool(j, "dry_run", x->dry_run);
    json_computation(j, x);
    json_inputs(j, x);
    json_results(j, x);
    json_stats(j, x);
    json_trace_out(j, x);
    cli_json_object_end(j);
    cli_json_finish(j);
}
