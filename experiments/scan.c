/* scan.c -- bf16emu scan: the paper's failure mechanism per layer and head
   of captured attention calls (doc/real-models.md).  This file: the
   options, a call's tensors, the runs (analysis/scan.h measures, and
   analysis/scan_groups.h keeps the rows) and MPI; the manifest is
   scan_manifest.c's, --shard and --merge scan_shard.c's, the reports
   scan_report.c's, the help scan_help.c's. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <omp.h>
#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include "analysis/attn_mask.h"
#include "analysis/dump_inputs.h"
#include "analysis/scan.h"
#include "analysis/scan_groups.h"
#include "experiments/cli.h"
#include "experiments/cli_mpi.h"
#include "experiments/fa_cli.h"
#include "experiments/scan_local.h"

/*
 * A capture is one or more .safetensors files (shards) and one manifest
 * with a "calls" list (doc/real-models.md, "The capture format").  The
 * manifest is --manifest FILE, else the metadata entry "manifest" of the
 * shards, else their sidecars (FILE with .json for .safetensors); every
 * shard that carries one must carry the same.  A key may live in any
 * shard, but only in one.
 *
 * Each call's heads are measured in parallel (one scan_head per batch
 * entry and head), the results kept in order and merged in that order, so
 * the output does not depend on the thread count.  Rows of the report are
 * (layer, head), merged over steps and batch entries.
 */

/*----------------------------------------------------------------------------
 * Tensors of a call.
 *--------------------------------------------------------------------------*/
/* The shard holding KEY: its index, -1 when none, -2 after an error (two
   shards hold it).  An input (q, k, v, do) that no shard stores may be
   one a shard's manifest describes (inputs_gen; read back by ut_read). */
static long
find_key(const scan_ctx *x, const char *key)
{
    static const char *const inputs[4] = {"q", "k", "v", "do"};
    long at = -1;

    for (size_t i = 0; i < x->n_shards; i++)
        for (size_t t = 0; t < x->shards[i].l.n_tensors; t++)
            if (strcmp(x->shards[i].l.tensors[t].name, key) == 0) {
                if (at >= 0) {
                    cli_error(CMD, "tensor '%s' is in both %s and %s", key,
                              x->shards[at].path, x->shards[i].path);
                    return -2;
                }
                at = (long)i;
            }
    for (size_t i = 0; at == -1 && i < x->n_shards; i++) {
        bool d[4];
        tensor_error err;
        if (dump_inputs_described(x->shards[i].path, d, &err) != TENSOR_OK) {
            cli_error(CMD, "%s", err.message);
            return -2;
        }
        for (size_t j = 0; j < 4; j++)
            if (d[j] && strcmp(key, inputs[j]) == 0)
                at = (long)i;
    }
    return at;
}

typedef struct
{
    tensor q, k, v, o, lse, dout, x, mask;
    bool has_lse, has_do, has_x, has_mask;
    am_mask am; /* the mask bound to the call's heads */
    size_t b, h, nq, nk, d, xc;
    size_t hkv; /* K's and V's heads: H, or a divisor (grouped-query) */
} call_data;

static void
call_data_free(call_data *c)
{
    tensor_free(&c->q);
    tensor_free(&c->k);
    tensor_free(&c->v);
    tensor_free(&c->o);
    tensor_free(&c->lse);
    tensor_free(&c->dout);
    tensor_free(&c->x);
    tensor_free(&c->mask);
    am_free(&c->am);
}

/* Reads tensor NAME of call C; REQUIRED: missing is an error; *FOUND. */
static bool
read_one(const scan_ctx *x, const call_spec *c, const char *name,
         tensor_dtype want, bool attn, bool required, tensor *out,
         bool *found, char *where, size_t wn)
{
    char key[192];
    long at;
    tensor_error err;

    snprintf(key, sizeof key, "%s%s", c->prefix, name);
    at = find_key(x, key);
    if (at == -2)
        return false;
    if (at == -1) {
        if (found != NULL)
            *found = false;
        if (required)
            return cli_error(CMD,
                             "tensor '%s' (layer %lld step %lld) is in none "
                             "of the files",
                             key, c->layer, c->step),
                   false;
        return true;
    }
    if (found != NULL)
        *found = true;
    snprintf(where, wn, "%s: %s", x->shards[at].path, key);
    if (ut_read(x->shards[at].path, key, want, true, NULL, out, NULL, &err)
        != TENSOR_OK)
        return cli_error(CMD, "%s", err.message), false;
    if (attn) {
        if (out->ndim != 3 && out->ndim != 4)
            return cli_error(CMD,
                             "%s: expected [B, H, N, d] or [B, N, H, d] (or "
                             "3-D without B), got %u dimensions",
                             where, out->ndim),
                   false;
        if (ut_to_bhnd(out, c->layout, NULL, &err) != TENSOR_OK)
            return cli_error(CMD, "%s", err.message), false;
    }
    return true;
}

static void
dims4(const tensor *t, uint64_t s[4])
{
    unsigned off = 4 - t->ndim;

    for (unsigned i = 0; i < 4; i++)
        s[i] = i < off ? 1 : t->shape[i - off];
}

static bool read_one(const scan_ctx *x, const call_spec *c,
                     const char *name, tensor_dtype want, bool attn,
                     bool required, tensor *out, bool *found, char *where,
                     size_t wn);

/* The manifest's model (launch_shape, else model) against Q's shape SQ
   (named WQ). */
static bool
check_model(const call_spec *c, const uint64_t sq[4], const char *wq)
{
    /* the manifest's model against the tensors */
    uint64_t md = c->launch_d ? c->launch_d : c->model_d;
    uint64_t mh = c->launch_heads ? c->launch_heads : c->model_heads;
    if (md != 0 && md != sq[3])
        return cli_error(CMD,
                         "%s: d = %" PRIu64 ", but manifest calls[%zu] "
                         "says %s %" PRIu64
                         " (a manifest of another model?)",
                         wq, sq[3], c->idx,
                         c->launch_d ? "launch_shape.d"
                                     : "model.head_dim",
                         md),
               false;
    if (mh != 0 && c->n_heads_kept == 0 && sq[1] != mh)
        return cli_error(CMD,
                         "%s: %" PRIu64 " heads, but manifest calls[%zu] "
                         "says %s %" PRIu64
                         " and keeps every head (a manifest of another "
                         "model?)",
                         wq, sq[1], c->idx,
                         c->launch_heads ? "launch_shape.heads"
                                         : "model.heads",
                         mh),
               false;
    return true;
}

/* X [B, Nq, C] (or [Nq, C] when B = 1), the query rows' inputs (named
   WX), against Q's shape SQ (named WQ) and the manifest's x.features;
   CD->xc. */
static bool
check_x(const call_spec *c, call_data *cd, const uint64_t sq[4],
        const char *wq, const char *wx)
{
    uint64_t xb = cd->x.ndim == 3 ? cd->x.shape[0] : 1;
    uint64_t xn = cd->x.ndim >= 2 ? cd->x.shape[cd->x.ndim - 2] : 0;
    uint64_t xc = cd->x.ndim >= 2 ? cd->x.shape[cd->x.ndim - 1] : 0;
    if ((cd->x.ndim != 2 && cd->x.ndim != 3) || xb != sq[0]
        || xn != sq[2] || xc == 0 || xc > (1u << 20)) {
        char got[96];
        size_t at = 0;
        got[0] = '\0';
        for (unsigned i = 0; i < cd->x.ndim && at < sizeof got - 24;
             i++)
            at += (size_t)snprintf(got + at, sizeof got - at,
                                   "%s%" PRIu64, i ? ", " : "",
                                   cd->x.shape[i]);
        return cli_error(CMD,
                         "%s: shape [%s] does not fit %s: expected "
                         "[B, Nq, C] = [%" PRIu64 ", %" PRIu64
                         ", C] (or [Nq, C] when B = 1), C from 1 to "
                         "2^20",
                         wx, got, wq, sq[0], sq[2]),
               false;
    }
    if (c->x_features != 0 && c->x_features != xc)
        return cli_error(CMD,
                         "%s: C = %" PRIu64 ", but manifest calls[%zu] "
                         "says x.features %" PRIu64,
                         wx, xc, c->idx, c->x_features),
               false;
    cd->xc = (size_t)xc;
    return true;
}

/* The call's attn_mask (tensor PREFIX.attn_mask; required when the
   manifest's entry names one), bound to the call's tensors: a capture
   keeps the mask at the kept batch entries and heads, as it keeps Q
   (capture.py; a dimension of size 1 stays broadcast). */
static bool
load_mask(const scan_ctx *x, const call_spec *c, call_data *cd)
{
    char wm[256], msg[512];
    int rc;

    if (!read_one(x, c, "attn_mask", TENSOR_ANY, false, c->has_mask,
                  &cd->mask, &cd->has_mask, wm, sizeof wm))
        return false;
    if (!cd->has_mask)
        return true;
    rc = am_bind_file(&cd->mask, cd->b, cd->h, cd->nq, cd->nk, cd->b, cd->h,
                      NULL, false, NULL, &cd->am, msg, sizeof msg);
    if (rc != 0)
        return cli_error(CMD, "%s: %s", wm, msg), false;
    return true;
}

static bool
load_call(const scan_ctx *x, const call_spec *c, call_data *cd)
{
    char wq[256], wk[256], wv[256], wo[256], wl[256], wd[256], wx[256];
    uint64_t sq[4], sk[4], sv[4], so[4];
    bool f;

    tensor_dtype in = c->f16 ? TENSOR_F16 : TENSOR_BF16;

    memset(cd, 0, sizeof *cd);
    if (!read_one(x, c, "q", in, true, true, &cd->q, NULL, wq, sizeof wq)
        || !read_one(x, c, "k", in, true, true, &cd->k, NULL, wk, sizeof wk)
        || !read_one(x, c, "v", in, true, true, &cd->v, NULL, wv, sizeof wv)
        || !read_one(x, c, "o", in, true, true, &cd->o, NULL, wo, sizeof wo)
        || !read_one(x, c, "lse", TENSOR_F32, false, false, &cd->lse,
                     &cd->has_lse, wl, sizeof wl)
        || !read_one(x, c, "do", in, true, false, &cd->dout, &f, wd,
                     sizeof wd))
        return false;
    cd->has_do = f;
    if (!read_one(x, c, "x", TENSOR_BF16, false, false, &cd->x, &cd->has_x,
                  wx, sizeof wx))
        return false;
    dims4(&cd->q, sq);
    dims4(&cd->k, sk);
    dims4(&cd->v, sv);
    dims4(&cd->o, so);
    if (memcmp(sk, sv, sizeof sk) != 0 || sk[0] != sq[0] || sk[1] == 0
        || sq[1] % sk[1] != 0 || sk[3] != sq[3])
        return cli_error(CMD,
                         "%s [%" PRIu64 ", %" PRIu64 ", %" PRIu64
                         ", %" PRIu64 "] does not fit %s [%" PRIu64
                         ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "] and %s (B "
                         "and d must agree, K's heads divide Q's, K and V "
                         "the same shape)",
                         wk, sk[0], sk[1], sk[2], sk[3], wq, sq[0], sq[1],
                         sq[2], sq[3], wv),
               false;
    if (memcmp(so, sq, sizeof so) != 0)
        return cli_error(CMD, "%s: shape differs from %s", wo, wq), false;
    if (cd->has_do) {
        uint64_t sd[4];
        dims4(&cd->dout, sd);
        if (memcmp(sd, sq, sizeof sd) != 0)
            return cli_error(CMD, "%s: shape differs from %s", wd, wq), false;
    }
    if (cd->has_lse && cd->lse.n_elems != sq[0] * sq[1] * sq[2])
        return cli_error(CMD,
                         "%s: %" PRIu64 " elements, expected B*H*Nq = %" PRIu64,
                         wl, cd->lse.n_elems, sq[0] * sq[1] * sq[2]),
               false;
    if (sq[2] == 0 || sk[2] == 0 || sq[3] == 0)
        return cli_error(CMD, "%s: empty tensor", wq), false;
    if (c->causal && sq[2] != sk[2] && !c->bottom_right)
        return cli_error(CMD,
                         "layer %lld step %lld: causal with Nq = %" PRIu64
                         " != Nk = %" PRIu64 ": the manifest must say "
                         "\"causal_alignment\": \"bottom-right\" (the "
                         "flash kernel's; top-left is not modelled)",
                         c->layer, c->step, sq[2], sk[2]),
               false;
    if (c->n_heads_kept != 0 && c->n_heads_kept != sq[1])
        return cli_error(CMD,
                         "%s: %" PRIu64 " heads, but the manifest's "
                         "heads_kept lists %zu",
                         wq, sq[1], c->n_heads_kept),
               false;
    if (!check_model(c, sq, wq)
        || (cd->has_x && !check_x(c, cd, sq, wq, wx)))
        return false;
    cd->b = (size_t)sq[0];
    cd->h = (size_t)sq[1];
    cd->hkv = (size_t)sk[1];
    cd->nq = (size_t)sq[2];
    cd->nk = (size_t)sk[2];
    cd->d = (size_t)sq[3];
    return load_mask(x, c, cd);
}

/*----------------------------------------------------------------------------
 * Work items: one (call, batch entry x head) each.  --shard I/N keeps the
 * items with (call + item) mod N == I and writes them unmerged (their
 * scan_stats bit for bit); --merge reads the shards back and adds the items
 * in (call, item) order, the order of an unsharded run, so the report is
 * the same byte for byte.
 *--------------------------------------------------------------------------*/
/* Adds the result R of one item to its (layer, head) group; FIRST: the
   item is of the call's first batch entry.  0 or an exit status. */
int
scan_add_item(scan_ctx *x, long long layer, long long step, const char *name,
         size_t head, bool first, const scan_stats *r, const double *dwq,
         size_t xc)
{
    int e = scan_groups_add(&x->gr, layer, step, name, head, first, r, dwq,
                            xc);

    if (e == -1)
        return cli_error(CMD, "out of memory");
    if (e != 0)
        return cli_error(CMD,
                         "layer %lld step %lld head %zu: out of memory, or "
                         "x has other columns than in another call of "
                         "this step",
                         layer, step, head);
    return CLI_EXIT_OK;
}

/*----------------------------------------------------------------------------
 * Running.
 *--------------------------------------------------------------------------*/
/* Whether item BH of call CI is this run's (every item without --shard). */
static bool
in_shard(const scan_ctx *x, size_t ci, size_t bh)
{
    return !x->sharded || ((uint64_t)ci + (uint64_t)bh) % x->shard_n
                              == x->shard_i;
}

/* --shard: item BH of call CI (of C, the model's head HEAD) into X->items. */
static int
shard_item(scan_ctx *x, size_t ci, size_t bh, const call_spec *c, size_t head,
           bool first, const scan_stats *r, const double *dwq, size_t xc)
{
    size_t n = scan_stats_format(r, NULL, 0);
    char *st = malloc(n + 1);
    json_t *o = NULL;

    if (st != NULL) {
        scan_stats_format(r, st, n + 1);
        o = json_pack("{s:I, s:I, s:I, s:I, s:s, s:I, s:b, s:s}", "call",
                      (json_int_t)ci, "item", (json_int_t)bh, "layer",
                      (json_int_t)c->layer, "step", (json_int_t)c->step,
                      "name", c->name, "head", (json_int_t)head, "first",
                      (int)first, "stats", st);
    }
    free(st);
    if (o != NULL && dwq != NULL && r->eq.d > 0) {
        /* the dW_Q error [d, xc], doubles by their bits */
        size_t nd = r->eq.d * xc, len = scan_words_format(dwq, nd, NULL, 0);
        char *m = malloc(len + 1);
        bool ok = m != NULL;
        if (ok) {
            scan_words_format(dwq, nd, m, len + 1);
            ok = json_object_set_new(o, "dwq_cols",
                                     json_integer((json_int_t)xc))
                     == 0
                 && json_object_set_new(o, "dwq", json_string(m)) == 0;
        }
        if (!ok) {
            json_decref(o);
            o = NULL;
        }
        free(m);
    }
    if (o == NULL || json_array_append_new(x->items, o) != 0)
        return cli_error(CMD, "out of memory");
    return CLI_EXIT_OK;
}

/* The launch's rules for call C: the split count of the kernel's own rule
   on the launch the manifest gives (launch_shape; else the call's
   tensors), and a FlexAttention call's recorded merge and delta kernels,
   as diff applies them. */
static void
call_launch(const call_spec *c, const call_data *cd, fa_config *cfg)
{
    ax_launch l;
    const char *rule;

    memset(&l, 0, sizeof l);
    l.batch = c->launch_batch != 0 ? (size_t)c->launch_batch : cd->b;
    l.heads = c->launch_heads != 0 ? (size_t)c->launch_heads : cd->h;
    l.kv_heads = c->launch_kv_heads != 0 ? (size_t)c->launch_kv_heads
                 : c->launch_heads != 0  ? 0
                                         : cd->hkv;
    l.nq = cd->nq;
    l.nk = cd->nk;
    l.d = cd->d;
    l.f16 = c->f16;
    l.from = c->launch_heads != 0 ? "manifest" : "the tensors";
    cfg->splits = ax_launch_splits(fa_config_kernel(cfg), &l, &rule);
    /* one head of the launch: its batch x heads, and its group */
    cfg->launch_bh = l.batch * l.heads;
    cfg->launch_group = cd->hkv != 0 ? cd->h / cd->hkv : 1;
    (void)dump_flex_apply(&c->flex, (uint64_t)(l.batch * l.heads * l.nq),
                          cfg);
}

/* The configuration of call C (one head of it) with the data CD: the
   description's, with the call's shape, causality, scale and input
   format.  0 or an exit status (a call of another backend without the
   kernel named, a configuration scan_check refuses). */
static int
call_config(const scan_ctx *x, const call_spec *c, const call_data *cd,
            fa_config *cfg)
{
    const char *w;

    if (!x->policy_given && strcasecmp(c->backend, "flash") != 0)
        return cli_error(CMD,
                         "layer %lld step %lld: the manifest names backend "
                         "'%s', not FLASH; give --policy or --kernel (the "
                         "kernel that produced the capture)",
                         c->layer, c->step,
                         c->backend[0] ? c->backend : "(none)");
    *cfg = fa_config_kernel_default(&x->kernel);
    cfg->softcap = c->softcap;
    cfg->shape.batch = 1;
    cfg->shape.heads = 1;
    cfg->shape.nq = cd->nq;
    cfg->shape.nk = cd->nk;
    cfg->shape.d = cd->d;
    cfg->causal = c->causal;
    if (x->exp.model != NULL)
        cfg->exp = x->exp.model;
    cfg->log = fa_cli_log_model(&x->logm);
    cfg->rcp = fa_cli_rcp_model(&x->logm);
    cfg->input = c->f16 ? &sf_format_f16 : NULL;
    if (c->has_scale)
        /* the scale as PyTorch gives it (a double), rounded to nearest
           FP32 as the kernels take it (diff does the same) */
        cfg->scale = (float)c->scale;
    call_launch(c, cd, cfg);
    if ((w = scan_check(cfg, &x->fix)) != NULL)
        return cli_error(CMD, "layer %lld step %lld: %s", c->layer, c->step,
                         w);
    return CLI_EXIT_OK;
}

/* The engine's view of CD (X only when USE_X). */
static scan_call_in
call_in(const call_data *cd, bool use_x)
{
    scan_call_in in;

    in.q = (const uint16_t *)cd->q.data;
    in.k = (const uint16_t *)cd->k.data;
    in.v = (const uint16_t *)cd->v.data;
    in.o = (const uint16_t *)cd->o.data;
    in.dout = cd->has_do ? (const uint16_t *)cd->dout.data : NULL;
    in.lse = cd->has_lse ? (const uint32_t *)cd->lse.data : NULL;
    in.x = use_x ? (const uint16_t *)cd->x.data : NULL;
    in.b = cd->b;
    in.h = cd->h;
    in.hkv = cd->hkv;
    in.nq = cd->nq;
    in.nk = cd->nk;
    in.d = cd->d;
    in.xc = cd->xc;
    in.mask = cd->has_mask ? &cd->am : NULL;
    return in;
}

/* Call CI's N items of this run (RES, WHY, DWQ [d, xc] each), added to
   the groups or, with --shard, to the shard's items, in item order.  0 or
   an exit status. */
static int
call_results(scan_ctx *x, size_t ci, const call_data *cd, size_t n,
             const scan_stats *res, const char *const *why,
             const double *dwq)
{
    const call_spec *c = &x->calls[ci];
    int rc = CLI_EXIT_OK;

    if (x->sharded
        && json_array_append_new(x->call_items, json_integer((json_int_t)n))
               != 0)
        rc = cli_error(CMD, "out of memory");
    for (size_t i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        size_t head = c->n_heads_kept ? c->heads_kept[i % cd->h] : i % cd->h;
        const double *m = dwq != NULL ? dwq + i * cd->d * cd->xc : NULL;
        if (!in_shard(x, ci, i))
            continue;
        if (why[i] != NULL)
            return cli_error(CMD, "layer %lld step %lld head %zu: %s",
                             c->layer, c->step, i % cd->h, why[i]);
        if (x->sharded)
            rc = shard_item(x, ci, i, c, head, i / cd->h == 0, &res[i], m,
                            cd->xc);
        else
            rc = scan_add_item(x, c->layer, c->step, c->name, head,
                               i / cd->h == 0, &res[i], m, cd->xc);
    }
    return rc;
}

/* The progress line after call CI of N items (T0: the start). */
static void
call_progress(const scan_ctx *x, size_t ci, size_t n, double t0)
{
    const call_spec *c = &x->calls[ci];
    double now = cli_now_s();
    bool tty = isatty(2) != 0;

    fprintf(stderr,
            "%sbf16emu scan: %zu/%zu calls (layer %lld step %lld, %zu "
            "heads), %.1f s%s",
            tty ? "\r" : "", ci + 1, x->n_calls, c->layer, c->step, n,
            now - t0, tty ? (ci + 1 == x->n_calls ? " \n" : " ") : "\n");
    fflush(stderr);
}

static int
run_call(scan_ctx *x, size_t ci, double t0)
{
    const call_spec *c = &x->calls[ci];
    call_data cd;
    fa_config cfg;
    scan_call_in in;
    scan_stats *res = NULL;
    const char **why = NULL;
    double *dwq = NULL; /* each item's dW_Q error [d, xc], with X */
    bool use_x;
    size_t n;
    int nt = x->threads > 0 ? (int)x->threads : omp_get_max_threads();
    int rc;
    long i;

    if (!load_call(x, c, &cd)) {
        call_data_free(&cd);
        return CLI_EXIT_USAGE;
    }
    if ((rc = call_config(x, c, &cd, &cfg)) != CLI_EXIT_OK)
        goto out;
    n = cd.b * cd.h;
    use_x = scan_call_uses_x(cd.has_x, cd.has_do, c->x_rotary, cd.d);
    if (cd.has_x) {
        if (use_x)
            x->x_used++;
        else if (c->x_rotary)
            x->x_rotary++;
        else if (!cd.has_do)
            x->x_no_do++;
    }
    res = calloc(n, sizeof *res);
    why = calloc(n, sizeof *why);
    if (use_x)
        dwq = calloc(n * cd.d * cd.xc, sizeof *dwq);
    if (res == NULL || why == NULL || (use_x && dwq == NULL)) {
        rc = cli_error(CMD, "out of memory");
        goto out;
    }
    in = call_in(&cd, use_x);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (i = 0; i < (long)n; i++) {
        size_t bh = (size_t)i;
        if (in_shard(x, ci, bh))
            (void)scan_call_item(&cfg, &x->fix, x->ref, &in, bh, &res[bh],
                                 use_x ? dwq + bh * cd.d * cd.xc : NULL,
                                 &why[bh]);
    }
    rc = call_results(x, ci, &cd, n, res, why, use_x ? dwq : NULL);
    if (rc == CLI_EXIT_OK
        && (x->progress == 1 || (x->progress < 0 && !x->quiet)))
        call_progress(x, ci, n, t0);
out:
    free(res);
    free(why);
    free(dwq);
    call_data_free(&cd);
    return rc;
}

/* The spectra of every step of every group, each group's summary, and
   each (layer, step)'s stacked heads (groups sorted by layer and head),
   on NT threads (each result computed by one thread: the same for any
   NT).  0 or an exit status. */
static int
dwq_prepare(scan_ctx *x, int nt)
{
    long n;

#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (n = 0; n < (long)x->gr.n; n++)
        scan_group_spectra(&x->gr.g[n]);
    if (scan_groups_layers(&x->gr) != 0)
        return cli_error(CMD, "out of memory");
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (n = 0; n < (long)x->gr.n_layers; n++)
        scan_groups_layer_top(&x->gr, (size_t)n);
    return CLI_EXIT_OK;
}

#ifdef HAVE_MPI
/*----------------------------------------------------------------------------
 * Under mpirun: rank r of n measures the items of --shard r/n; rank 0
 * gathers the ranks' shard outputs and merges them as --merge does, so
 * the report is byte for byte that of one process.  Only rank 0 writes:
 * the other ranks' stderr goes to a temporary file, and when a rank fails
 * while rank 0 does not, rank 0 prints the first failing rank's messages.
 *--------------------------------------------------------------------------*/
/* The text of ERRLOG (malloc'd, NUL-terminated; "" when unreadable). */
static char *
read_log(FILE *errlog, int *len)
{
    long n;
    char *t;

    fflush(stderr);
    if (errlog == NULL || fseek(errlog, 0, SEEK_END) != 0
        || (n = ftell(errlog)) < 0 || n > (1 << 20))
        n = 0;
    t = malloc((size_t)n + 1);
    if (t == NULL)
        return *len = 0, NULL;
    if (n > 0) {
        rewind(errlog);
        n = (long)fread(t, 1, (size_t)n, errlog);
    }
    t[n] = '\0';
    *len = (int)n;
    return t;
}

/* A run that failed on some rank (ALL_RC the worst status, RC this
   rank's): when rank 0 succeeded, it prints the words of the first
   failing rank, which sends its log ERRLOG.  Returns ALL_RC. */
static int
mpi_failed(int all_rc, int rc, int rank, int size, FILE *errlog)
{
    int r0 = rc, me, first_bad, len = 0;
    char *text = NULL;

    MPI_Bcast(&r0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    me = rc != CLI_EXIT_OK ? rank : size;
    MPI_Allreduce(&me, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (r0 == CLI_EXIT_OK && first_bad > 0) {
        /* rank 0 succeeded: it prints the first failing rank's words */
        if (rank == first_bad) {
            text = read_log(errlog, &len);
            MPI_Send(&len, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            MPI_Send(text != NULL ? text : "", len, MPI_CHAR, 0, 2,
                     MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&len, 1, MPI_INT, first_bad, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            text = malloc((size_t)len + 1);
            if (text != NULL) {
                MPI_Recv(text, len, MPI_CHAR, first_bad, 2, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                fwrite(text, 1, (size_t)len, stderr);
                if (len == 0)
                    fprintf(stderr, "bf16emu %s: rank %d failed\n", CMD,
                            first_bad);
            } else {
                fprintf(stderr, "bf16emu %s: rank %d failed\n", CMD,
                        first_bad);
            }
        }
    }
    free(text);
    return all_rc;
}

/* On rank 0: the offsets DISPLS of the SIZE ranks' texts of COUNTS bytes
   and *ALL, room for all of them.  Returns the status (an error when they
   do not fit). */
static int
mpi_root_layout(const int *counts, int *displs, int size, char **all)
{
    long long total = 0;

    for (int i = 0; counts != NULL && displs != NULL && i < size; i++) {
        displs[i] = (int)total;
        total += counts[i];
    }
    if (counts == NULL || displs == NULL || total >= INT32_MAX
        || (*all = malloc((size_t)total + 1)) == NULL)
        return cli_error(CMD, "the ranks' items do not fit in memory on "
                              "rank 0");
    return CLI_EXIT_OK;
}

/* On rank 0: the SIZE ranks' items (ALL, rank i's COUNTS[i] bytes at
   DISPLS[i]) read as JSON and merged as shards named "rank i".  Returns
   the merge's status. */
static int
mpi_root_merge(scan_ctx *x, const char *all, const int *counts,
               const int *displs, int size)
{
    int rc = CLI_EXIT_OK;
    json_t *docs = json_array();
    char (*names)[32] = malloc((size_t)size * sizeof *names);
    const char **np = malloc((size_t)size * sizeof *np);

    if (docs == NULL || names == NULL || np == NULL) {
        rc = cli_error(CMD, "out of memory");
    } else {
        for (int i = 0; i < size && rc == CLI_EXIT_OK; i++) {
            json_error_t je;
            json_t *d = json_loadb(all + displs[i], (size_t)counts[i], 0,
                                   &je);
            snprintf(names[i], sizeof names[i], "rank %d", i);
            np[i] = names[i];
            if (d == NULL)
                rc = cli_error(CMD, "rank %d sent unreadable items: %s", i,
                               je.text);
            else
                json_array_append_new(docs, d);
        }
        x->sharded = false;
        if (rc == CLI_EXIT_OK)
            rc = scan_merge_docs(x, np, (size_t)size, docs, false);
    }
    json_decref(docs);
    free(names);
    free(np);
    return rc;
}

/* After the run (this rank's status RC): the items to rank 0, merged
   there.  Returns the status of the run: an error of any rank, else
   rank 0's merge's. */
static int
mpi_collect(scan_ctx *x, int rc, int rank, int size, FILE *errlog)
{
    int all_rc, len = 0;
    char *text = NULL, *all = NULL;
    int *counts = NULL, *displs = NULL;

    MPI_Allreduce(&rc, &all_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all_rc != CLI_EXIT_OK)
        return mpi_failed(all_rc, rc, rank, size, errlog);
    /* each rank's items as text, their lengths gathered on rank 0 */
    text = scan_shard_text(x);
    rc = text != NULL && strlen(text) < INT32_MAX ? CLI_EXIT_OK
                                                  : CLI_EXIT_USAGE;
    len = rc == CLI_EXIT_OK ? (int)strlen(text) : 0;
    if (rank == 0) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
    }
    MPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int lr = mpi_root_layout(counts, displs, size, &all);
        if (lr != CLI_EXIT_OK)
            rc = lr;
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc != CLI_EXIT_OK) {
        if (text == NULL && rank == 0)
            cli_error(CMD, "out of memory");
        goto out;
    }
    /* the texts to rank 0, which merges them */
    MPI_Gatherv(text, len, MPI_CHAR, all, counts, displs, MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (rank == 0)
        rc = mpi_root_merge(x, all, counts, displs, size);
out:
    free(text);
    free(all);
    free(counts);
    free(displs);
    return rc;
}
#endif

/*----------------------------------------------------------------------------
 * The command.
 *--------------------------------------------------------------------------*/
enum
{
    O_HELP,
    O_POLICY,
    O_FIX,
    O_MANIFEST,
    O_JSON,
    O_CSV,
    O_PLOT,
    O_THREADS,
    O_FORCE,
    O_QUIET,
    O_REFERENCE,
    O_SHARD,
    O_MERGE,
    O_PROGRESS,
    O_NO_PROGRESS,
    O_KERNEL
};

/* One option of scan (not --help) into X; *GIVEN names the last one that
   --merge takes from the shards, *POLICY_OPT says --policy came.  Reports
   an error and returns false when V is refused. */
static bool
take_option(scan_ctx *x, int id, const char *v, const char **given,
            bool *policy_opt)
{
    const fa_kernel *named;
    int k;
    uint64_t u;
    unsigned long long si, sn;
    int used = 0;

    switch (id) {
    case O_POLICY:
        if (!fa_cli_parse_kernel_name(CMD, v, &named))
            return false;
        x->kernel = *named;
        x->policy_given = *policy_opt = true;
        *given = "--policy";
        return true;
    case O_KERNEL:
        x->kernel_path = v;
        x->policy_given = true;
        *given = "--kernel";
        return true;
    case O_FIX:
        if ((k = fa_fix_parse(v)) < 0 || k == FA_FIX_NONE)
            return cli_error(CMD,
                             "--fix %s: expected beta, beta-v2, eps or "
                             "always",
                             v),
                   false;
        x->fix = fa_fix_default((fa_fix_kind)k);
        *given = "--fix";
        return true;
    case O_MANIFEST:
        x->manifest_path = v;
        *given = "--manifest";
        return true;
    case O_JSON:
        x->json = true;
        return true;
    case O_CSV:
        x->csv = v;
        return true;
    case O_PLOT:
        x->plot = v;
        return true;
    case O_THREADS:
        if (!cli_parse_u64(CMD, "--threads", v, &u))
            return false;
        if (u < 1 || u > 4096)
            return cli_error(CMD, "--threads %s: expected 1 to 4096", v),
                   false;
        x->threads = (long)u;
        return true;
    case O_FORCE:
        x->force = true;
        return true;
    case O_QUIET:
        x->quiet = true;
        return true;
    case O_REFERENCE:
        if (strcmp(v, "exact") == 0)
            x->ref = SCAN_REF_EXACT;
        else if (strcmp(v, "binary64") == 0)
            x->ref = SCAN_REF_BINARY64;
        else
            return cli_error(CMD, "--reference %s: expected exact or binary64",
                             v),
                   false;
        *given = "--reference";
        return true;
    case O_SHARD:
        if (sscanf(v, "%llu/%llu%n", &si, &sn, &used) != 2 || v[used] != '\0'
            || v[0] == '-' || sn == 0 || si >= sn)
            return cli_error(CMD, "--shard %s: expected I/N with 0 <= I < N",
                             v),
                   false;
        x->shard_i = si;
        x->shard_n = sn;
        x->sharded = true;
        return true;
    case O_MERGE:
        x->merge = true;
        return true;
    case O_PROGRESS:
    case O_NO_PROGRESS:
        x->progress = id == O_PROGRESS;
        return true;
    default:
        x->shards[x->n_shards++].path = v;
        return true;
    }
}

/* What scan_main holds besides the context: MPI's rank and size (mpi
   false: one process), the log the other ranks' stderr goes to, the
   shards' settings kept by --merge, the report's order, and what the
   options said of the kernel. */
typedef struct
{
    bool mpi;
    int rank, size;
    FILE *errlog;
    json_t *keep;
    size_t *order;
    const char *given; /* an option --merge takes from the shards */
    bool policy_opt;   /* --policy given */
} scan_run;

/* Under mpirun: MPI started, the rank and size, and the stderr of ranks
   other than 0 sent to a temporary file (rank 0 speaks for all,
   mpi_collect). */
static void
mpi_begin(scan_run *r)
{
    cli_mpi m;

    cli_mpi_begin(&m);
    r->mpi = m.on;
    r->rank = m.rank;
    r->size = m.size;
    r->errlog = m.errlog;
}

static void
mpi_end(scan_run *r)
{
    cli_mpi m = {r->mpi, r->rank, r->size, r->errlog};

    cli_mpi_end(&m);
    r->errlog = NULL;
}

/* The options into X.  *HELP when --help printed the help.  0 or an exit
   status. */
static int
parse_options(scan_ctx *x, scan_run *r, int argc, char **argv, bool *help)
{
    static const cli_option opts[] = {
        {"help", false, O_HELP},     {"policy", true, O_POLICY},
        {"kernel", true, O_KERNEL},  {"fix", true, O_FIX},
        {"manifest", true, O_MANIFEST},
        {"json", false, O_JSON},     {"csv", true, O_CSV},
        {"plot", true, O_PLOT},      {"threads", true, O_THREADS},
        {"force", false, O_FORCE},   {"quiet", false, O_QUIET},
        {"reference", true, O_REFERENCE},
        {"shard", true, O_SHARD},    {"merge", false, O_MERGE},
        {"progress", false, O_PROGRESS},
        {"no-progress", false, O_NO_PROGRESS},
        {NULL, false, 0}};
    cli_parser p;
    const char *v;
    int id;

    cli_parser_init(&p, CMD, argc, argv);
    while ((id = cli_parser_next(&p, opts, &v)) != CLI_ARG_END) {
        if (id == CLI_ARG_ERROR)
            return CLI_EXIT_USAGE;
        if (id == O_HELP) {
            scan_help(stdout);
            *help = true;
            return CLI_EXIT_OK;
        }
        if (!take_option(x, id, v, &r->given, &r->policy_opt))
            return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* --csv and --plot's files must not exist, unless --force. */
static int
check_outputs(const scan_ctx *x)
{
    const char *ext[] = {".dat",      ".png",      ".svg",
                         "-bias.dat", "-bias.png", "-bias.svg"};

    if (x->force)
        return CLI_EXIT_OK;
    if (x->csv != NULL && scan_path_exists(x->csv))
        return cli_error(CMD, "--csv %s: exists (give --force)", x->csv);
    for (size_t e = 0; x->plot != NULL && e < 6; e++) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s%s", x->plot, ext[e]);
        if (scan_path_exists(buf))
            return cli_error(CMD, "--plot %s: %s exists (give --force)",
                             x->plot, buf);
    }
    return CLI_EXIT_OK;
}

/* The options' combinations, and the kernel loaded.  0 or an exit
   status. */
static int
check_options(scan_ctx *x, const scan_run *r)
{
    if (x->n_shards == 0)
        return cli_error(CMD, "expected one or more CAPTURE files (see "
                              "'bf16emu scan --help')");
    if (r->mpi && (x->sharded || x->merge))
        return cli_error(CMD, "under mpirun the ranks share the calls and "
                              "heads: --shard and --merge are not "
                              "available");
    if (x->merge && (x->sharded || r->given != NULL))
        return cli_error(CMD, "--merge: %s comes from the shards; leave it "
                              "out",
                         x->sharded ? "--shard" : r->given);
    /* the kernel: --policy's description (fa2 without it), or --kernel's */
    if (!fa_cli_load_kernel(CMD, x->kernel_path, r->policy_opt, &x->kernel))
        return CLI_EXIT_USAGE;
    if (x->sharded && (x->csv != NULL || x->plot != NULL))
        return cli_error(CMD, "--shard: the output is the shard's JSON; give "
                              "%s to 'scan --merge'",
                         x->csv != NULL ? "--csv" : "--plot");
    return check_outputs(x);
}

/* --merge: the shard outputs named read back into X's groups. */
static int
read_merge(scan_ctx *x, scan_run *r)
{
    const char **in = malloc(x->n_shards * sizeof *in);
    size_t nin = x->n_shards;
    int rc;

    if (in == NULL)
        return cli_error(CMD, "out of memory");
    for (size_t i = 0; i < nin; i++)
        in[i] = x->shards[i].path;
    free(x->shards);
    x->shards = NULL;
    x->n_shards = 0;
    rc = scan_merge_shards(x, in, nin, &r->keep);
    free(in);
    return rc;
}

/* A capture of FlexAttention calls (capture.py's flex_attention: backend
   "flex") runs under the flex description when none is named, and says
   so in the header; a capture mixing it with other backends needs the
   kernel named.  0 or an exit status. */
static int
flex_capture(scan_ctx *x)
{
    size_t nflex = 0;

    for (size_t i = 0; i < x->n_calls; i++)
        nflex += strcasecmp(x->calls[i].backend, "flex") == 0;
    if (x->policy_given || nflex == 0)
        return CLI_EXIT_OK;
    if (nflex != x->n_calls)
        return cli_error(CMD, "the capture mixes FlexAttention calls with "
                              "other backends; give --policy or --kernel");
    x->kernel = *fa_kernel_by_name("flex");
    x->policy_given = true;
    return CLI_EXIT_OK;
}

/* The capture's shards listed and its manifest read. */
static int
read_capture(scan_ctx *x)
{
    for (size_t i = 0; i < x->n_shards; i++) {
        tensor_error err;
        if (tensor_file_list(x->shards[i].path, &x->shards[i].l, &err)
            != TENSOR_OK)
            return cli_error(CMD, "%s", err.message);
        if (x->shards[i].l.kind != TENSOR_KIND_SAFETENSORS)
            return cli_error(CMD, "%s: a capture shard must be .safetensors",
                             x->shards[i].path);
    }
    if (!scan_load_manifest(x))
        return CLI_EXIT_USAGE;
    return flex_capture(x);
}

/* The description's exp model, log and reciprocal (fa2's and cudnn's:
   the H200's ex2.approx and lg2.approx tables); with --merge, the shards'
   exp must be it. */
static int
load_models(scan_ctx *x, const scan_run *r)
{
    if (!fa_cli_exp_for(CMD, &x->kernel, &x->exp)
        || !fa_cli_log_for(CMD,
                           x->kernel_path != NULL ? "--kernel" : "--policy",
                           &x->kernel, &x->logm))
        return CLI_EXIT_USAGE;
    if (x->merge) {
        const json_t *h = json_array_get(r->keep,
                                         json_array_size(r->keep) - 1);
        const char *e = json_string_value(json_object_get(h, "exp"));
        if (e == NULL || strcmp(e, x->exp.name) != 0)
            return cli_error(CMD, "--merge: the shards' exp is '%s', "
                                  "expected '%s'",
                             e ? e : "(none)", x->exp.name);
    }
    return CLI_EXIT_OK;
}

/* Every call measured (under mpirun, this rank's share, then collected on
   rank 0).  *DONE when nothing is left to report here: a shard written,
   or a rank other than 0. */
static int
run_calls(scan_ctx *x, const scan_run *r, bool *done)
{
    int rc = CLI_EXIT_OK;
    double t0;

    if (r->mpi) {
        /* each rank its shard: rank 0 merges them (mpi_collect) */
        x->sharded = true;
        x->shard_i = (uint64_t)r->rank;
        x->shard_n = (uint64_t)r->size;
    }
    if (x->sharded
        && ((x->items = json_array()) == NULL
            || (x->call_items = json_array()) == NULL))
        return cli_error(CMD, "out of memory");
    t0 = cli_now_s();
    for (size_t c = 0; c < x->n_calls && rc == CLI_EXIT_OK; c++)
        rc = run_call(x, c, t0);
#ifdef HAVE_MPI
    if (r->mpi) {
        rc = mpi_collect(x, rc, r->rank, r->size, r->errlog);
        if (rc != CLI_EXIT_OK || r->rank > 0) {
            *done = true;
            return rc;
        }
    }
#endif
    if (rc != CLI_EXIT_OK)
        return rc;
    if (x->sharded) {
        *done = true;
        return scan_write_shard(x);
    }
    return CLI_EXIT_OK;
}

/* The groups ranked and their dW_Q errors' spectra; --csv and --plot's
   files; the report on stdout. */
static int
report(scan_ctx *x, scan_run *r)
{
    int rc;

    r->order = malloc((x->gr.n ? x->gr.n : 1) * sizeof *r->order);
    if (r->order == NULL)
        return cli_error(CMD, "out of memory");
    scan_groups_rank(&x->gr, r->order);
    if ((rc = dwq_prepare(x, x->threads > 0 ? (int)x->threads
                                            : omp_get_max_threads()))
        != CLI_EXIT_OK)
        return rc;
    if (x->csv != NULL) {
        cli_buf b;
        cli_buf_init(&b);
        scan_report_csv(x, &b);
        if (!cli_write_atomic(x->csv, b.p, b.len)) {
            rc = cli_error(CMD, "--csv %s: cannot write: %s", x->csv,
                           strerror(errno));
            cli_buf_free(&b);
            return rc;
        }
        cli_buf_free(&b);
    }
    if (x->plot != NULL && (rc = scan_write_plot(x)) != CLI_EXIT_OK)
        return rc;
    {
        cli_buf b;
        cli_buf_init(&b);
        if (x->json)
            scan_report_json(x, r->order, &b);
        else
            scan_report_text(x, r->order, &b);
        cli_report_emit(CMD, &b, &rc);
    }
    return rc;
}

static void
scan_free(scan_ctx *x, scan_run *r)
{
    json_decref(x->items);
    json_decref(x->call_items);
    json_decref(r->keep);
    free(r->order);
    fa_cli_exp_free(&x->exp);
    fa_cli_log_free(&x->logm);
    for (size_t i = 0; i < x->n_shards; i++)
        tensor_listing_free(&x->shards[i].l);
    free(x->shards);
    for (size_t i = 0; x->calls != NULL && i < x->n_calls; i++)
        free(x->calls[i].heads_kept);
    free(x->calls);
    scan_groups_free(&x->gr);
    mpi_end(r);
}

int
scan_main(int argc, char **argv)
{
    scan_ctx x;
    scan_run r;
    bool help = false, done = false;
    int rc;

    memset(&r, 0, sizeof r);
    r.size = 1;
    mpi_begin(&r);
    memset(&x, 0, sizeof x);
    x.progress = -1;
    x.shard_n = 1;
    fa_cli_exp_default(&x.exp);
    x.kernel = *fa_kernel_by_name("fa2");
    x.fix = fa_fix_default(FA_FIX_BETA);
    x.shards = calloc((size_t)(argc > 0 ? argc : 1), sizeof *x.shards);
    if (x.shards == NULL)
        return cli_error(CMD, "out of memory");
    if ((rc = parse_options(&x, &r, argc, argv, &help)) != CLI_EXIT_OK
        || help
        || (rc = check_options(&x, &r)) != CLI_EXIT_OK
        || (rc = x.merge ? read_merge(&x, &r) : read_capture(&x))
               != CLI_EXIT_OK
        || (rc = load_models(&x, &r)) != CLI_EXIT_OK)
        goto out;
    if (!x.merge && ((rc = run_calls(&x, &r, &done)) != CLI_EXIT_OK || done))
        goto out;
    rc = report(&x, &r);
out:
    scan_free(&x, &r);
    return rc;
}
