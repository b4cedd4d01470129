/* diff_dump.c -- bf16emu diff: the dump, its manifest, the operands
   (--q, --k, ... and --call) and the mask (the configuration they give:
   diff_config.c) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "experiments/diff_local.h"

/* The launch: the manifest's launch_shape, else --launch, else the
   manifest's shape, else the tensors'; its KV heads in the tensors'
   proportion. */
static bool
fill_launch(diff_ctx *x)
{
    fa_cli_launch *l = &x->kopt.launch;
    size_t g = x->nhkv != 0 && x->nh % x->nhkv == 0 ? x->nh / x->nhkv : 1;

    if (x->man_launch_bh != 0) {
        l->batch = (size_t)x->man_launch_b;
        l->heads = (size_t)x->man_launch_h;
        l->from = "the manifest's launch_shape";
    } else if (x->kopt.launch_given) {
        if (x->kopt.launch_lengths && (l->nq != x->nq || l->nk != x->nk)) {
            cli_error(CMD, "--launch: Nq %zu, Nk %zu but the tensors have "
                           "Nq %zu, Nk %zu (expected the same lengths)",
                      l->nq, l->nk, x->nq, x->nk);
            return false;
        }
    } else if (x->man_shape_given) {
        /* a list [B, H, N, d] is PyTorch's t.shape: the launch's */
        l->batch = (size_t)x->man_shape[0];
        l->heads = (size_t)x->man_shape[1];
        l->from = x->n_man_list == 4 ? "the manifest's shape list"
                                     : "the manifest's shape";
    } else {
        l->batch = x->nb;
        l->heads = x->nh;
        l->from = "the tensors";
    }
    if (l->heads % g != 0) {
        cli_error(CMD, "the launch's %zu heads are not a multiple of the "
                       "group size %zu (%zu query heads over %zu KV heads)",
                  l->heads, g, x->nh, x->nhkv);
        return false;
    }
    fa_cli_launch_fill(l, g, x->nq, x->nk, x->d, x->f16, x->kopt.sms);
    return true;
}

/* The manifest text M into X; false after an error message "FILE:
   manifest: FIELD: what was expected" (analysis/dump_manifest.h).  The
   fields the file's metadata may also give (splits, dq_buffers, fix,
   causal_alignment, layout) are overridden only where the manifest
   gives them. */
static bool
read_manifest(diff_ctx *x, const char *m)
{
    dump_manifest mf;
    tensor_error err;

    if (dump_manifest_parse(x->dump, m, &mf, &err) != TENSOR_OK) {
        cli_error(CMD, "%s", err.message);
        return false;
    }
    x->man_causal_given = mf.causal_given;
    x->man_causal = mf.causal;
    if (mf.align_given) {
        x->man_top_left = mf.top_left;
        x->man_align_given = true;
        x->man_align_from = "manifest";
    }
    if (mf.launch_batch != 0) {
        x->man_launch_b = mf.launch_batch;
        x->man_launch_h = mf.launch_heads;
        x->man_launch_bh = mf.launch_batch * mf.launch_heads;
    }
    if (mf.fix_given) {
        x->man_fix = mf.fix;
        x->man_fix_given = true;
    }
    memcpy(x->man_backend, mf.backend, sizeof x->man_backend);
    x->man_rowsum_separate = mf.rowsum_separate;
    if (mf.scale_text_given) {
        memcpy(x->man_scale_buf, mf.scale_text, sizeof x->man_scale_buf);
        x->man_scale = x->man_scale_buf;
    }
    x->man_scale_number = mf.scale_number_given;
    x->man_scale_value = mf.scale_number;
    if (mf.splits != 0)
        x->man_splits = mf.splits;
    if (mf.dq_buffers != 0)
        x->man_dq = mf.dq_buffers;
    x->man_shape_given = mf.shape_given;
    memcpy(x->man_shape, mf.shape, sizeof x->man_shape);
    x->n_man_list = mf.n_shape_list;
    memcpy(x->man_list, mf.shape_list, sizeof x->man_list);
    x->heads_key = mf.heads_key;
    x->man_heads_kept_given = mf.heads_key != NULL;
    x->n_heads_kept = mf.n_heads;
    memcpy(x->man_heads_kept, mf.heads, sizeof x->man_heads_kept);
    x->man_batch_from_given = mf.batch_from_given;
    x->n_batch_from = mf.n_batch_from;
    memcpy(x->man_batch_from, mf.batch_from, sizeof x->man_batch_from);
    if (mf.layout_given)
        x->man_layout = mf.layout;
    x->man_gqa = mf.enable_gqa;
    x->man_mask_given = mf.mask_given;
    if (x->kopt.softcap == 0.0)
        x->kopt.softcap = mf.softcap;
    x->man_flex = mf.flex;
    memcpy(x->man_mask_mod, mf.mask_mod, sizeof x->man_mask_mod);
    return true;
}

/*----------------------------------------------------------------------------
 * The dump.
 *--------------------------------------------------------------------------*/
/* Which tensors the wanted stages need. */
static void
needed(const diff_ctx *x, bool need[N_T])
{
    memset(need, 0, N_T * sizeof need[0]);
    need[T_Q] = need[T_K] = need[T_V] = true;
    for (int s = 0; s < N_ST; s++)
        if (x->want[s])
            need[st_tensor[s]] = true;
    if (x->want[ST_DQ] || x->want[ST_DK] || x->want[ST_DV]) {
        need[T_DO] = true;
        if (!bwd_math(x))
            need[T_O] = need[T_LSE] = true;
    }
}

/* The shape tensor I should have, from Q's and K's, into W; returns its
   number of dimensions. */
static unsigned
expected_shape(const diff_ctx *x, int i, uint64_t w[5])
{
    const tensor *t = x->t[i];
    const tensor *q = x->t[T_Q], *k = x->t[T_K];
    unsigned nd = 4;

    if (i == T_Q) {
        memcpy(w, q->shape, 4 * sizeof w[0]);
    } else {
        w[0] = q->shape[0];
        w[1] = q->shape[1];
        w[2] = q->shape[2];
        w[3] = q->shape[3];
        switch (i) {
        case T_K:
            w[2] = t->shape[2];
            /* grouped-query heads: K's H divides Q's */
            if (t->ndim == 4 && t->shape[1] != 0
                && q->shape[1] % t->shape[1] == 0)
                w[1] = t->shape[1];
            break;
        case T_V:
        case T_DK:
        case T_DV:
            w[1] = k->shape[1];
            w[2] = k->shape[2];
            break;
        case T_LSE:
            nd = 3;
            break;
        case T_S:
        case T_P:
            w[3] = k->shape[2];
            break;
        case T_M:
        case T_L:
            w[3] = x->tc;
            break;
        case T_ACC:
            nd = 5;
            w[3] = x->tc;
            w[4] = q->shape[3];
            break;
        default:
            break;
        }
    }
    return nd;
}

/* Checks tensor I's dtype; false after an error message. */
static bool
check_dtype(diff_ctx *x, int i)
{
    const tensor *t = x->t[i];

    if (i == T_LSE || i == T_S || i == T_M || i == T_L || i == T_ACC) {
        if (t->dtype != TENSOR_F32) {
            cli_error(CMD, "%s: dtype %s (expected F32)", x->src[i],
                      tensor_dtype_name(t->dtype));
            return false;
        }
    } else if (i <= T_DO) {
        bool f16 = t->dtype == TENSOR_F16;
        if (!f16 && !tensor_dtype_readable_as(t->dtype, TENSOR_BF16)) {
            cli_error(CMD, "%s: dtype %s (expected BF16 or F16)", x->src[i],
                      tensor_dtype_name(t->dtype));
            return false;
        }
        if (i == T_Q)
            x->f16 = f16;
        else if (f16 != x->f16) {
            cli_error(CMD,
                      "%s%s%s: dtype %s but q is %s (expected one dtype for "
                      "q, k, v and do, BF16 or F16)",
                      x->opd[i].arg != NULL ? x->opd[i].opt : "",
                      x->opd[i].arg != NULL ? " " : "", x->src[i],
                      tensor_dtype_name(t->dtype), x->f16 ? "F16" : "BF16");
            return false;
        }
    } else if (x->f16 && (i == T_O || i == T_DQ || i == T_DK || i == T_DV)) {
        if (t->dtype != TENSOR_F16 && t->dtype != TENSOR_F32) {
            cli_error(CMD,
                      "%s: dtype %s (expected F16, as q, or F32 holding FP16 "
                      "values)",
                      x->src[i], tensor_dtype_name(t->dtype));
            return false;
        }
    } else if (t->dtype != TENSOR_F32
               && !tensor_dtype_readable_as(t->dtype, TENSOR_BF16)) {
        cli_error(CMD,
                  "%s: dtype %s (expected BF16, or F32 holding BF16 "
                  "values)",
                  x->src[i], tensor_dtype_name(t->dtype));
        return false;
    }
    return true;
}

/* Checks tensor I's dtype and shape; false after an error message. */
static bool
check_tensor(diff_ctx *x, int i)
{
    const tensor *t = x->t[i];
    uint64_t w[5];
    unsigned nd = expected_shape(x, i, w);
    char sh[SHAPE_MAX], ws[SHAPE_MAX];
    bool same;

    if (!check_dtype(x, i))
        return false;
    {
        /* an output kept in part: its whole shape (outputs_kept) */
        const dump_kept *kp = &x->kept[i];
        unsigned tnd = kp->kept ? kp->ndim : t->ndim;
        const uint64_t *tsh = kp->kept ? kp->shape : t->shape;
        if (kp->kept && i == T_LSE && tnd == 4 && tsh[3] == 1)
            tnd = 3; /* cuDNN's [B, H, Nq, 1] */
        same = tnd == nd;
        for (unsigned j = 0; same && j < nd; j++)
            same = tsh[j] == w[j];
        if (i == T_Q)
            same = t->ndim == 4 && t->n_elems > 0;
        if (!same)
            cli_shape_str(sh, sizeof sh, tnd, tsh);
    }
    if (!same) {
        if (i == T_Q)
            cli_error(CMD,
                      "%s: shape %s (expected [B, H, Nq, d], every "
                      "dimension at least 1)",
                      x->src[i], sh);
        else
            cli_error(CMD, "%s: shape %s (expected %s)", x->src[i], sh,
                      cli_shape_str(ws, sizeof ws, nd, w));
        return false;
    }
    return true;
}

/* FP32 patterns of output tensor I (BF16 widened) into DST; false after
   an error message when an F32 tensor holds a value that FMT (the stage's
   format) cannot hold. */
bool
diff_load_output(diff_ctx *x, int i, const sf_format *fmt, uint32_t *dst,
                 unsigned char *mask)
{
    const tensor *t = x->t[i];

    for (uint64_t jj = 0; jj < t->n_elems; jj++) {
        uint64_t b = tensor_get_bits(t, jj);
        /* its place in the whole tensor (a cut output: outputs_kept) */
        uint64_t j = dump_kept_index(&x->kept[i], t, jj);
        if (mask != NULL)
            mask[j] = 1;
        if (t->dtype == TENSOR_F16) {
            sf_env env = SF_ENV_IEEE;
            dst[j] = (uint32_t)sf_convert(&sf_format_f32, &sf_format_f16, b,
                                          SF_RNE, &env);
            continue;
        }
        if (t->dtype != TENSOR_F32) {
            dst[j] = (uint32_t)b << 16;
            continue;
        }
        dst[j] = (uint32_t)b;
        if (fmt != &sf_format_f32 && !sf_is_nan(&sf_format_f32, b)) {
            sf_env env = cli_env_ieee();
            uint64_t r = sf_convert(fmt, &sf_format_f32, b, SF_RNE, &env);
            if (sf_convert(&sf_format_f32, fmt, r, SF_RNE, &env) != b) {
                cli_error(CMD,
                          "%s: element %" PRIu64 " is F32 0x%08" PRIX64
                          ", not a %s value (expected %s values)",
                          x->src[i], jj, b, fmt->name, fmt->name);
                return false;
            }
        }
    }
    return true;
}

/* Whether the dump holds a tensor NAME. */
static bool
dump_has(const diff_ctx *x, const char *name)
{
    for (size_t i = 0; i < x->list.n_tensors; i++)
        if (strcmp(x->list.tensors[i].name, name) == 0)
            return true;
    /* an input the manifest's inputs_gen describes */
    for (int i = T_Q; i <= T_DO; i++)
        if (x->gen_input[i - T_Q] && strcmp(t_names[i], name) == 0)
            return true;
    return false;
}

/* Whether tensor I is given: by its option, or in the dump. */
static bool
given(const diff_ctx *x, int i)
{
    return x->opd[i].arg != NULL || dump_has(x, t_names[i]);
}

/* The names of the dump's tensors, "q, k, v" (cut for long lists), or
   "no tensors", into BUF of N bytes. */
static const char *
dump_names(char *buf, size_t n, const diff_ctx *x)
{
    const char **names;

    if (x->list.n_tensors == 0) {
        snprintf(buf, n, "no tensors");
        return buf;
    }
    names = malloc(x->list.n_tensors * sizeof *names);
    if (names == NULL) {
        snprintf(buf, n, "%zu tensors", x->list.n_tensors);
        return buf;
    }
    for (size_t i = 0; i < x->list.n_tensors; i++)
        names[i] = x->list.tensors[i].name;
    tensor_name_list(buf, n, names, x->list.n_tensors);
    free(names);
    return buf;
}

/* Tensors in the attention layout: inputs and the BF16 outputs. */
static bool
is_attn_tensor(int i)
{
    return i <= T_DV && i != T_LSE;
}

/* Reads tensor I from its option (--q FILE[:KEY]) or from the dump (key
   t_names[I]) through the shared reader: the inputs as BF16 (F32 or F16
   values and U16 / I16 bit patterns only with --dtype bf16), the BF16
   outputs as BF16 or F32 (values checked against the stage's format
   later), the others as stored.  False after an error message. */
static bool
load_tensor(diff_ctx *x, int i)
{
    const cli_operand *o = &x->opd[i];
    const char *path = o->arg != NULL ? o->path : x->dump;
    const char *key = o->arg != NULL ? o->key : t_names[i];
    const char *opt = o->arg != NULL ? o->opt : "--dump";
    bool input = i == T_Q || i == T_K || i == T_V || i == T_DO;
    const fa_kernel *kern = run_kernel(x);

    /* fa_dump's LSE through __logf, for a description whose log is lg2 */
    if (o->arg == NULL && i == T_LSE && kern != NULL
        && kern->log == FA_KLOG_LG2 && dump_has(x, "lse_fast"))
        key = "lse_fast";
    tensor *t = &x->own[i];
    tensor_error err, err16;
    int rc;

    if (key != NULL)
        snprintf(x->src[i], SRC_MAX, "%s: %s", path, key);
    else
        snprintf(x->src[i], SRC_MAX, "%s", path);
    rc = ut_read(path, key, input ? TENSOR_BF16 : TENSOR_ANY,
                 x->kopt.dtype_given, "--dtype", t, &x->info[i], &err);
    if (rc != TENSOR_OK && input && err.code == TENSOR_E_DTYPE
        && !x->kopt.dtype_given
        /* FP16 inputs: their dtype comes from the file */
        && ut_read(path, key, TENSOR_F16, false, "--dtype", t, &x->info[i],
                   &err16)
               == TENSOR_OK)
        rc = TENSOR_OK;
    if (rc == TENSOR_OK && is_attn_tensor(i) && !input
        && t->dtype != TENSOR_F32
        && !(t->dtype == TENSOR_F16 && !x->kopt.dtype_given))
        rc = ut_as_dtype(t, x->src[i], TENSOR_BF16, x->kopt.dtype_given,
                         "--dtype", &x->info[i], &err);
    /* an output the manifest keeps in part (outputs_kept) */
    if (rc == TENSOR_OK && !input && key != NULL)
        rc = dump_output_kept(path, key, &x->kept[i], &err);
    if (rc != TENSOR_OK) {
        cli_error(CMD, "%s: %s", opt, err.message);
        return false;
    }
    x->t[i] = t;
    return true;
}

/* Prepends dimensions of 1 to T up to ND dimensions. */
static void
promote(tensor *t, unsigned nd)
{
    unsigned add;

    if (t->ndim >= nd)
        return;
    add = nd - t->ndim;
    memmove(t->shape + add, t->shape, t->ndim * sizeof t->shape[0]);
    for (unsigned j = 0; j < add; j++)
        t->shape[j] = 1;
    t->ndim = nd;
}

/* The layout the manifest's shape tells for Q (3- or 4-D), as
   ut_layout_launch reads it; UNSET without a manifest shape. */
static ut_layout
manifest_layout(const diff_ctx *x, const tensor *q, bool *neither)
{
    if (!x->man_shape_given)
        return UT_LAYOUT_UNSET;
    return ut_layout_launch(q, x->man_shape[1], x->man_shape[2], neither);
}

/* The layout of the attention tensors: --layout, the manifest, the
   shapes of q and k, the manifest's shape, or either when Q has one head
   or one row; else an error asking for --layout. */
static bool
resolve_layout(diff_ctx *x)
{
    const tensor *q = x->t[T_Q], *k = x->t[T_K];
    ut_layout l;
    char sh[SHAPE_MAX];
    bool neither = false;

    if (x->kopt.layout != UT_LAYOUT_UNSET) {
        x->layout = x->kopt.layout;
        x->layout_from =
            x->man_layout != UT_LAYOUT_UNSET && x->man_layout != x->kopt.layout
                ? "--layout, over the manifest's"
                : "--layout";
    } else if (x->man_layout != UT_LAYOUT_UNSET) {
        x->layout = x->man_layout;
        x->layout_from = "manifest";
    } else if ((l = ut_layout_tell(q, k)) != UT_LAYOUT_UNSET) {
        x->layout = l;
        x->layout_from = "the only reading under which k's heads divide q's";
    } else if ((l = manifest_layout(x, q, &neither)) != UT_LAYOUT_UNSET) {
        x->layout = l;
        x->layout_from = "the manifest's shape";
    } else if (!ut_layout_matters(q) || neither) {
        /* either reads alike; or the manifest's shape fits neither, and
           check_manifest_shape says so */
        x->layout = UT_LAYOUT_BHND;
        x->layout_from = q->ndim <= 2 ? "no heads dimension"
                                      : "H or N is 1: both read alike";
    } else {
        cli_shape_str(sh, sizeof sh, q->ndim, q->shape);
        cli_error(CMD,
                  "%s: shape %s may be [B, H, N, d] or [B, N, H, d], and "
                  "%s tells which; pass --layout bhnd or --layout bnhd",
                  x->src[T_Q], sh,
                  x->have_manifest ? "neither the manifest nor the shapes"
                                   : "no manifest gives the layout and no "
                                     "shape");
        return false;
    }
    return true;
}

/* The launch shape of the manifest against the tensors': equal, except
   that the file may keep some of the launch's heads: "shape" is the
   launch's and "heads_kept" names the heads kept (capture.py), or
   "shape" is the file's, "launch_shape" the launch's and "heads_from"
   (with "batch_from") names them (trim_dump.py, slice_heads.py). */
static bool
check_manifest_shape(diff_ctx *x)
{
    static const char *const sh_keys[5] = {"batch", "heads", "nq", "nk", "d"};
    const size_t got[5] = {x->nb, x->nh, x->nq, x->nk, x->d};
    bool from = x->man_heads_kept_given
                && strcmp(x->heads_key, "heads_from") == 0;
    uint64_t bound_h = 0, bound_b = 0; /* the launch's heads, batch */

    if (x->man_shape_given)
        for (int i = 0; i < 5; i++) {
            if (i == 1 && x->man_shape[i] > got[i]) {
                x->heads_subset = true;
                x->launch_heads = x->man_shape[i];
                continue;
            }
            if (x->man_shape[i] != got[i]) {
                cli_error(CMD,
                          "%s: manifest: shape.%s: %" PRIu64
                          " (expected %zu, as the tensors have it%s)",
                          x->dump, sh_keys[i], x->man_shape[i], got[i],
                          i == 1 ? ", or more: the launch's heads of which "
                                   "the file keeps some"
                                 : "");
                return false;
            }
        }
    if (from) {
        bound_h = x->man_launch_h;
        bound_b = x->man_launch_b;
        if (x->man_launch_h > x->nh || x->man_launch_b > x->nb) {
            x->heads_subset = true;
            x->launch_heads = x->man_launch_h;
        }
    } else if (x->man_shape_given) {
        bound_h = x->man_shape[1];
    }
    if (x->man_heads_kept_given) {
        if (x->n_heads_kept != x->nh) {
            cli_error(CMD,
                      "%s: manifest: %s: %zu heads (expected %zu, "
                      "one for each head the tensors hold)",
                      x->dump, x->heads_key, x->n_heads_kept, x->nh);
            return false;
        }
        for (size_t h = 0; h < x->n_heads_kept; h++)
            if (bound_h != 0 && x->man_heads_kept[h] >= bound_h) {
                cli_error(CMD,
                          "%s: manifest: %s: head %" PRIu64
                          " (expected below the launch's %" PRIu64 " heads)",
                          x->dump, x->heads_key, x->man_heads_kept[h],
                          bound_h);
                return false;
            }
    }
    if (x->man_batch_from_given) {
        size_t n = x->n_batch_from == 0 ? 1 : x->n_batch_from;
        if (x->nb != 1 || (x->n_batch_from != 0 && n != x->nh)) {
            cli_error(CMD,
                      "%s: manifest: batch_from: %s (expected one batch "
                      "index, or one for each of the %zu heads, of a file "
                      "of batch 1)",
                      x->dump,
                      x->nb != 1 ? "the tensors' batch is not 1"
                                 : "not one per head",
                      x->nh);
            return false;
        }
        for (size_t i = 0; i < n; i++)
            if (bound_b != 0 && x->man_batch_from[i] >= bound_b) {
                cli_error(CMD,
                          "%s: manifest: batch_from: %" PRIu64
                          " (expected below the launch's batch %" PRIu64
                          ")",
                          x->dump, x->man_batch_from[i], bound_b);
                return false;
            }
    }
    return true;
}

static bool call_manifest(diff_ctx *x, const char *man);

/* A tensor of the dump whose name says it changes the result (a mask, a
   bias) and that the emulator does not apply: refused by name. */
static bool
check_unapplied_tensors(const diff_ctx *x)
{
    size_t nc = x->call != NULL ? strlen(x->call) : 0;

    for (size_t i = 0; i < x->list.n_tensors; i++) {
        const char *name = x->list.tensors[i].name;
        const char *dot = strrchr(name, '.');
        const char *base = dot != NULL ? dot + 1 : name;
        /* with --call, only the call's own tensors (CALL.attn_mask) */
        if (x->call != NULL && dot != NULL
            && !((size_t)(dot - name) == nc && strncmp(name, x->call, nc) == 0))
            continue;
        if (strcmp(base, "dropout_p") != 0 && strcmp(base, "attn_mask") != 0
            && dump_unmodelled_what(base) != NULL) {
            cli_error(CMD,
                      "%s: tensor '%s': %s changes the result and is not "
                      "modelled yet; bf16emu will not compare without it",
                      x->dump, name, dump_unmodelled_what(base));
            return false;
        }
    }
    return true;
}

/* One metadata entry M of a file bf16emu attn wrote (its settings that
   change bits): the description run ("kernel", as JSON), its exp model,
   split count, dQ buffers and fix are the defaults of this run, as the
   file's causal mask and scale are; ablations diff cannot apply are
   refused.  False after an error message. */
static bool
attn_meta(diff_ctx *x, const tensor_meta *m)
{
    int f;

    if (strcmp(m->key, "kernel") == 0) {
        if (x->kopt.policy_given || x->kopt.kernel_path != NULL)
            return true; /* the option wins; the header says which ran */
        if (!fa_kernel_parse(CMD, "--dump", "metadata \"kernel\"", m->value,
                             &x->kopt.kernel))
            return false;
        x->kopt.kernel_named = true;
        x->kernel_from_meta = true;
    } else if (strcmp(m->key, "exp") == 0 && !x->kopt.exp_given) {
        fa_cli_exp_default(&x->kopt.exp);
        if (!fa_cli_parse_exp(CMD, &x->kopt.exp, m->value))
            return false;
        x->kopt.exp_given = true;
        x->kopt.exp.from = "the file's metadata";
    } else if (strcmp(m->key, "splits") == 0 && x->man_splits == 0) {
        x->man_splits = (size_t)strtoul(m->value, NULL, 10);
    } else if (strcmp(m->key, "dq_buffers") == 0 && x->man_dq == 0) {
        x->man_dq = (size_t)strtoul(m->value, NULL, 10);
    } else if (strcmp(m->key, "fix") == 0 && !x->man_fix_given
               && (f = fa_fix_parse(m->value)) >= 0) {
        x->man_fix = (fa_fix_kind)f;
        x->man_fix_given = true;
    } else if (strcmp(m->key, "ablations") == 0
               && strcmp(m->value, "none") != 0) {
        cli_error(CMD,
                  "%s: metadata \"ablations\": the file was made with "
                  "--ablate %s, which diff does not apply (compare it with "
                  "bf16emu attn --ablate %s)",
                  x->dump, m->value, m->value);
        return false;
    }
    return true;
}

/* The manifest (or the plain metadata of a bf16emu file) of the dump. */
static bool
read_dump_header(diff_ctx *x)
{
    tensor_error err;
    const char *man = NULL;

    if (safetensors_list(x->dump, &x->list, &err) != TENSOR_OK) {
        cli_error(CMD, "--dump: %s", err.message);
        return false;
    }
    if (!check_unapplied_tensors(x))
        return false;
    for (size_t i = 0; i < x->list.n_meta; i++) {
        const tensor_meta *m = &x->list.meta[i];
        if (strcmp(m->key, "manifest") == 0)
            man = m->value;
        else if (strcmp(m->key, "causal") == 0
                 && (strcmp(m->value, "true") == 0
                     || strcmp(m->value, "false") == 0)) {
            x->meta_causal_given = true;
            x->meta_causal = m->value[0] == 't';
        } else if (strcmp(m->key, "causal_alignment") == 0
                   && (strcmp(m->value, "top-left") == 0
                       || strcmp(m->value, "bottom-right") == 0)) {
            /* bf16emu attn --causal-align */
            x->man_align_given = true;
            x->man_top_left = m->value[0] == 't';
            x->man_align_from = "the file's metadata";
        } else if (strcmp(m->key, "scale") == 0) {
            x->meta_scale = m->value;
        } else if (strcmp(m->key, "layout") == 0
                   && x->man_layout == UT_LAYOUT_UNSET
                   && !ut_layout_parse(m->value, &x->man_layout)) {
            /* bf16emu attn's "bhnd" */
            x->man_layout = UT_LAYOUT_UNSET;
        } else if (!attn_meta(x, m)) {
            return false;
        }
    }
    if (x->call != NULL) {
        if (man == NULL) {
            cli_error(CMD, "--call %s: %s has no manifest (expected one "
                           "with a \"calls\" list)",
                      x->call, x->dump);
            return false;
        }
        if (!call_manifest(x, man))
            return false;
        man = x->call_man;
    }
    if (man != NULL) {
        x->have_manifest = true;
        if (!read_manifest(x, man))
            return false;
    }
    /* every output the manifest keeps in part, read or not */
    if (dump_outputs_check(x->dump, &err) != TENSOR_OK) {
        cli_error(CMD, "--dump: %s", err.message);
        return false;
    }
    if (x->n_man_list == 4) {
        /* [B, H, N, d], or [B, N, H, d] under "layout": "bnhd" */
        bool nh = x->man_layout == UT_LAYOUT_BNHD;
        x->man_shape[0] = x->man_list[0];
        x->man_shape[1] = x->man_list[nh ? 2 : 1];
        x->man_shape[2] = x->man_shape[3] = x->man_list[nh ? 1 : 2];
        x->man_shape[4] = x->man_list[3];
    }
    /* the inputs the manifest describes (after its own checks above) */
    if (man != NULL
        && dump_inputs_described(x->dump, x->gen_input, &err) != TENSOR_OK) {
        cli_error(CMD, "--dump: %s", err.message);
        return false;
    }
    return true;
}

/* The description of --policy sdpa (or of a dump PyTorch ran with its
   default settings, "backend": "default"), or of the backend a dump's
   manifest pinned ("cudnn"), when neither --policy nor --kernel is
   given. */
static bool
pick_backend(diff_ctx *x)
{
    sdpa_case sc;
    const fa_kernel *k;
    bool split_auto, causal;
    unsigned lean;

    if (!x->kopt.policy_given && x->kopt.kernel_path == NULL
        && !x->kopt.kernel_named && strcmp(x->man_backend, "flex") == 0) {
        /* a FlexAttention call (flex_dump.py, capture.py): its
           description */
        x->kopt.kernel = *fa_kernel_by_name("flex");
        x->kopt.kernel_named = true;
    }
    if (!x->kopt.policy_given && x->kopt.kernel_path == NULL) {
        /* PyTorch's choice with every backend enabled, or with the one
           the dump pinned (whose kernel variant cuDNN still chooses) */
        unsigned pinned = strcmp(x->man_backend, "cudnn") == 0 ? SDPA_EN_CUDNN
                          : strcmp(x->man_backend, "efficient") == 0
                              ? SDPA_EN_EFFICIENT
                          : strcmp(x->man_backend, "math") == 0 ? SDPA_EN_MATH
                                                                : 0;
        if (strcmp(x->man_backend, "default") == 0 || pinned != 0) {
            x->kopt.sdpa = true;
            x->sdpa_from = "manifest";
            if (pinned != 0) {
                x->kopt.sdpa_backends = pinned;
                x->kopt.sdpa_backends_given = true;
            }
        }
    }
    if (!x->kopt.sdpa)
        return true;
    /* the launch's batch and heads (cuDNN's decode splits depend on
       them): the manifest's launch_shape, else its shape, else the
       tensors' */
    if (x->kopt.causal || x->kopt.no_causal)
        causal = x->kopt.causal;
    else if (x->man_causal_given)
        causal = x->man_causal;
    else
        causal = x->meta_causal_given && x->meta_causal;
    sc = sdpa_policy_case(&x->kopt.launch, x->nh, x->nhkv, x->nq, x->nk, x->d,
                          x->f16, causal);
    {
        /* a mask (--mask, the dump's attn_mask, or the manifest's):
           backends that refuse one are left out, as PyTorch does */
        char mk[256];
        snprintf(mk, sizeof mk, "%s%sattn_mask", x->call ? x->call : "",
                 x->call ? "." : "");
        if (x->mask_opd.arg != NULL || x->man_mask_given)
            sc.mask = SDPA_MASK_BOOL;
        for (size_t i = 0; i < x->list.n_tensors; i++)
            if (strcmp(x->list.tensors[i].name, mk) == 0)
                sc.mask = x->list.tensors[i].dtype == TENSOR_BOOL
                                  || x->list.tensors[i].dtype == TENSOR_U8
                              ? SDPA_MASK_BOOL
                              : SDPA_MASK_FLOAT;
    }
    if (x->kopt.sdpa_backends_given)
        sc.enabled = x->kopt.sdpa_backends;
    if (!sdpa_policy_pick(CMD, &sc, &k, &x->sdpa_ch, &split_auto, &lean))
        return false;
    sdpa_policy_note(CMD, &x->sdpa_ch, k);
    if (sc.causal && x->nq != x->nk && !x->kopt.align_given
        && !x->man_align_given) {
        if (!sdpa_policy_causal_align(CMD, &x->sdpa_ch, (int64_t)x->nq,
                                      (int64_t)x->nk, &x->kopt.top_left))
            return false;
        x->kopt.align_given = true;
        x->align_sdpa = true;
    }
    x->kopt.kernel = *k;
    x->kopt.kernel_named = true;
    if (split_auto && x->kopt.splits == 0 && x->man_splits == 0)
        x->kopt.splits_auto = true;
    if (lean > 1 && x->kopt.splits == 0 && !x->kopt.splits_auto) {
        x->kopt.splits = lean;
        x->sdpa_lean = true;
    }
    return true;
}

/* Without --stage: every stage the inputs can give (the intermediate
   ones under fa2). */
static void
default_stages(diff_ctx *x)
{
    for (int s = 0; s < N_ST; s++)
        x->want[s] = given(x, st_tensor[s]) && (!is_capture(s) || fa2_like(x));
    if (!given(x, T_DO)
        || (!bwd_math(x) && (!given(x, T_O) || !given(x, T_LSE)))) {
        /* a gradient named on the command line is never dropped
           silently: needed() names what its stage lacks */
        x->want[ST_DQ] = x->opd[T_DQ].arg != NULL;
        x->want[ST_DK] = x->opd[T_DK].arg != NULL;
        x->want[ST_DV] = x->opd[T_DV].arg != NULL;
    }
}

/* Every tensor in NEED given, and at least one stage wanted. */
static bool
inputs_given(const diff_ctx *x, const bool need[N_T])
{
    bool any = false;

    for (int i = 0; i < N_T; i++)
        if (need[i] && !given(x, i)) {
            char held[TENSOR_NAME_LIST_SIZE];
            if (x->dump == NULL)
                cli_error(CMD,
                          "%s: missing (expected --%s FILE[:KEY]%s, or "
                          "--dump FILE holding \"%s\")",
                          t_names[i], t_names[i],
                          i == T_DO || i == T_O || i == T_LSE
                              ? " for the backward stages"
                              : "",
                          t_names[i]);
            else
                cli_error(CMD,
                          "%s: %s: missing (expected a tensor \"%s\"%s); "
                          "the dump holds %s",
                          x->dump, t_names[i], t_names[i],
                          i == T_DO || i == T_O || i == T_LSE
                              ? " for the backward stages"
                              : "",
                          dump_names(held, sizeof held, x));
            return false;
        }
    for (int s = 0; s < N_ST; s++)
        any = any || x->want[s];
    if (!any) {
        cli_error(CMD,
                  "%s: no stage to compare (expected at least one of the "
                  "tensors o, lse, dq, dk, dv, s, m, p, l, acc)",
                  x->dump != NULL ? x->dump : "the inputs");
        return false;
    }
    return true;
}

/* Q's rank checked, the layout resolved, and the loaded tensors of NEED
   as [B, H, N, d] (LSE [B, H, N]). */
static bool
arrange_tensors(diff_ctx *x, const bool need[N_T])
{
    const tensor *q = x->t[T_Q];
    char sh[SHAPE_MAX];
    unsigned rank;

    if (q->ndim < 2 || q->ndim > 4 || q->n_elems == 0) {
        cli_error(CMD,
                  "%s: shape %s (expected [B, H, Nq, d], [H, Nq, d] or "
                  "[Nq, d], every dimension at least 1)",
                  x->src[T_Q],
                  cli_shape_str(sh, sizeof sh, q->ndim, q->shape));
        return false;
    }
    if (!resolve_layout(x))
        return false;
    rank = x->t[T_Q]->ndim;
    for (int i = 0; i < N_T; i++)
        if (x->kept[i].kept
            && (x->layout == UT_LAYOUT_BNHD || rank != 4)) {
            cli_error(CMD,
                      "%s: kept in part (manifest: outputs_kept), which "
                      "needs [B, H, N, d] tensors (B, H, N for lse)",
                      x->src[i]);
            return false;
        }
    for (int i = 0; i < N_T; i++) {
        tensor_error err;
        if (!need[i] || !is_attn_tensor(i))
            continue;
        if (x->own[i].ndim == rank
            && ut_to_bhnd(&x->own[i], x->layout, &x->info[i], &err)
                   != TENSOR_OK) {
            cli_error(CMD, "%s: %s", x->src[i], err.message);
            return false;
        }
    }
    /* [N, d] and [H, N, d] as [1, 1, N, d] and [1, H, N, d]; LSE one
       dimension fewer */
    for (int i = 0; i < N_T; i++)
        if (need[i] && is_attn_tensor(i) && x->own[i].ndim == rank)
            promote(&x->own[i], 4);
    /* cuDNN's LSE (aten._scaled_dot_product_cudnn_attention) is
       [B, H, Nq, 1] */
    if (need[T_LSE] && rank == 4 && x->own[T_LSE].ndim == 4
        && x->own[T_LSE].shape[3] == 1)
        x->own[T_LSE].ndim = 3;
    if (need[T_LSE] && x->own[T_LSE].ndim + 1 == rank)
        promote(&x->own[T_LSE], 3);
    return true;
}

/* The forward's split count and the backward's dQ buffers, each with
   where it came from; without --stage, a split run drops m, l and acc. */
static void
resolve_splits(diff_ctx *x)
{
    /* the split count (a refused configuration is reported later) */
    if (x->kopt.splits_auto
        || (x->kopt.splits == 0 && x->man_splits == 0
            && (x->man_launch_bh != 0 || x->kopt.launch_given
                || x->n_man_list == 4))) {
        /* the kernel's own rule on the launch: asked for, or the
           default once the launch is known */
        const char *rule;
        x->splits =
            fa_cli_launch_splits(run_kernel(x), &x->kopt.launch, &rule);
        snprintf(x->splits_buf, sizeof x->splits_buf,
                 "%s: %s on the launch B %zu, H %zu (%s)",
                 x->kopt.splits_auto ? "--splits auto" : "the launch's rule",
                 rule, x->kopt.launch.batch, x->kopt.launch.heads,
                 x->kopt.launch.from);
        x->splits_from = x->splits_buf;
    } else if (x->kopt.splits != 0) {
        x->splits = (size_t)x->kopt.splits;
        x->splits_from = x->sdpa_lean
                             ? "--policy sdpa: cuDNN's decode engine's "
                               "splits (a power of two: Nk above 127 "
                               "each, 264 CTAs at most)"
                             : "--splits";
    } else if (x->man_splits != 0) {
        x->splits = x->man_splits;
        x->splits_from = "manifest";
    } else {
        x->splits = 1;
        x->splits_from = "default";
    }
    /* the backward's dQ buffers: the option, the manifest, the rule */
    if (x->kopt.dq_given) {
        x->dq_set = (size_t)x->kopt.dq_buffers;
        x->dq_from =
            x->kopt.dq_buffers == 0 ? "--dq-buffers auto" : "--dq-buffers";
    } else if (x->man_dq != 0) {
        x->dq_set = x->man_dq;
        x->dq_from = "manifest";
    } else {
        x->dq_set = 0;
        x->dq_from = "default";
    }
    if (!x->stage_given && x->splits > 1)
        /* m, l and acc belong to a pass that is not split */
        for (int st = 0; st < N_ST; st++)
            if (split_stage(st))
                x->want[st] = false;
}

/* The forward tiles as the library resolves them for the kernel and the
   split count, else a fallback. */
static bool
resolve_tiles(diff_ctx *x)
{
    fa_config c = x->kopt.kernel_path != NULL || x->kopt.kernel_named
                      ? fa_config_kernel_default(&x->kopt.kernel)
                      : fa_config_default(x->kopt.policy);
    c.shape.batch = x->nb;
    c.shape.heads = x->nh;
    c.shape.nq = x->nq;
    c.shape.nk = x->nk;
    c.shape.d = x->d;
    c.splits = x->splits;
    (void)dump_flex_apply(&x->man_flex, 0, &c);
    if (!fa_cli_log_for(CMD,
                        x->kopt.kernel_path != NULL ? "--kernel" : "--policy",
                        fa_config_kernel(&c), &x->logm))
        return false;
    c.log = fa_cli_log_model(&x->logm);
    c.rcp = fa_cli_rcp_model(&x->logm);
    /* (the stages of another kernel are refused later: its dump
       tensors are checked against fa2's tiles) */
    if (!fa2_like(x)
        || fa_config_tiles(&c, &x->br, &x->bc, &x->tc, NULL) != 0) {
        x->br = x->nq < 128 ? x->nq : 128;
        x->bc = x->d <= 64 ? 128 : 64;
        if (x->bc > x->nk)
            x->bc = x->nk;
        x->tc = x->nk == 0 ? 0 : (x->nk + x->bc - 1) / x->bc;
    }
    return true;
}

bool
diff_read_dump(diff_ctx *x)
{
    bool need[N_T];

    if (x->dump != NULL && !read_dump_header(x))
        return false;
    if (!x->stage_given)
        default_stages(x);
    needed(x, need);
    if (!inputs_given(x, need))
        return false;
    for (int i = 0; i < N_T; i++)
        if (need[i] && !load_tensor(x, i))
            return false;
    if (!arrange_tensors(x, need))
        return false;
    if (!check_tensor(x, T_Q) || !check_tensor(x, T_K))
        return false;
    x->nb = (size_t)x->t[T_Q]->shape[0];
    x->nh = (size_t)x->t[T_Q]->shape[1];
    x->nq = (size_t)x->t[T_Q]->shape[2];
    x->d = (size_t)x->t[T_Q]->shape[3];
    x->nk = (size_t)x->t[T_K]->shape[2];
    x->nhkv = (size_t)x->t[T_K]->shape[1];
    x->heads = x->nb * x->nh;
    if (x->man_gqa == 0 && x->nhkv != x->nh) {
        cli_error(CMD, "%s: manifest: enable_gqa is false but K has %zu "
                       "heads and Q %zu (expected equal heads)",
                  x->dump, x->nhkv, x->nh);
        return false;
    }
    if (!fill_launch(x) || !pick_backend(x))
        return false;
    resolve_splits(x);
    if (!resolve_tiles(x))
        return false;
    for (int i = T_V; i < N_T; i++)
        if (need[i] && !check_tensor(x, i))
            return false;
    return check_manifest_shape(x);
}

/* --call NAME: the manifest MAN with the settings of its calls entry whose
   prefix is "NAME." laid over the top-level ones, into X->call_man. */
static bool
call_manifest(diff_ctx *x, const char *man)
{
    static const char *const keys[] = {"causal",     "layout",
                                       "dtype",      "backend",
                                       "splits",     "fix",
                                       "causal_alignment", "enable_gqa",
                                       "softcap",    "kernel_options",
                                       "kernels",    "delta_xblock",
                                       "launch_shape", "heads_kept",
                                       "mask_mod"};
    json_error_t je;
    json_t *m = json_loads(man, 0, &je), *calls, *c = NULL, *bk;
    const json_t *sc;
    size_t n = strlen(x->call);

    if (m == NULL || !json_is_array(calls = json_object_get(m, "calls"))) {
        cli_error(CMD, "--call %s: %s: manifest: expected a JSON object "
                       "with a \"calls\" list",
                  x->call, x->dump);
        json_decref(m);
        return false;
    }
    for (size_t i = 0; i < json_array_size(calls) && c == NULL; i++) {
        /* "prefix", else L{layer}.s{step}. (as scan reads the calls) */
        json_t *e = json_array_get(calls, i);
        const char *p = json_string_value(json_object_get(e, "prefix"));
        char def[64];
        if (p == NULL && json_is_integer(json_object_get(e, "layer"))
            && json_is_integer(json_object_get(e, "step"))) {
            snprintf(def, sizeof def, "L%lld.s%lld.",
                     (long long)json_integer_value(json_object_get(e, "layer")),
                     (long long)json_integer_value(json_object_get(e, "step")));
            p = def;
        }
        if (p != NULL && strncmp(p, x->call, n) == 0 && p[n] == '.'
            && p[n + 1] == '\0')
            c = e;
    }
    if (c == NULL) {
        cli_error(CMD, "--call %s: %s: manifest: no entry of calls has "
                       "prefix \"%s.\" (expected L{layer}.s{step})",
                  x->call, x->dump, x->call);
        json_decref(m);
        return false;
    }
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(c, keys[i]);
        if (v != NULL)
            json_object_set(m, keys[i], v);
    }
    /* and what is refused by name when set */
    for (size_t i = 0; dump_unmodelled_key(i) != NULL; i++) {
        json_t *v = json_object_get(c, dump_unmodelled_key(i));
        if (v != NULL)
            json_object_set(m, dump_unmodelled_key(i), v);
    }
    /* the launch's batch entry the call keeps (capture.py's batch_kept,
       a list) as a dump's batch_from, where it is one */
    bk = json_object_get(c, "batch_kept");
    if (json_is_array(bk) && json_array_size(bk) == 1)
        json_object_set(m, "batch_from", json_array_get(bk, 0));
    sc = json_object_get(c, "scale");
    if (sc != NULL)
        json_object_set_new(m, "scale",
                            json_is_null(sc)
                                ? json_string("1/sqrt(d) (PyTorch default)")
                                : json_deep_copy(sc));
    json_object_del(m, "calls");
    x->call_man = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(m);
    if (x->call_man == NULL) {
        cli_error(CMD, "out of memory");
        return false;
    }
    return true;
}

/* --call NAME: each tensor not given by its option, from the dump's key
   "NAME.q", "NAME.k", ... where the dump has it. */
bool
diff_call_operands(diff_ctx *x)
{
    tensor_listing l;
    tensor_error err;
    bool any = false;

    if (x->dump == NULL) {
        cli_error(CMD, "--call %s: expected --dump CAPTURE (the capture "
                       "holding the call)",
                  x->call);
        return false;
    }
    if (safetensors_list(x->dump, &l, &err) != TENSOR_OK) {
        cli_error(CMD, "--dump: %s", err.message);
        return false;
    }
    for (int i = 0; i < N_T; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s.%s", x->call, t_names[i]);
        for (size_t t = 0; t < l.n_tensors; t++)
            if (strcmp(l.tensors[t].name, key) == 0) {
                any = true;
                if (x->opd[i].arg != NULL)
                    break;
                size_t len = strlen(x->dump) + strlen(key) + 2;
                x->call_arg[i] = malloc(len);
                if (x->call_arg[i] == NULL) {
                    tensor_listing_free(&l);
                    cli_error(CMD, "out of memory");
                    return false;
                }
                snprintf(x->call_arg[i], len, "%s:%s", x->dump, key);
                x->opd[i].arg = x->call_arg[i];
                break;
            }
    }
    tensor_listing_free(&l);
    if (!any) {
        cli_error(CMD, "--call %s: %s holds no tensor \"%s.q\", "
                       "\"%s.k\", ... (expected L{layer}.s{step})",
                  x->call, x->dump, x->call, x->call);
        return false;
    }
    return true;
}

/* The attention mask: --mask FILE[:KEY], or the dump's tensor attn_mask
   (CALL.attn_mask with --call), bound to the launch the file's heads come
   from.  True without a mask; false after an error message. */
bool
diff_load_mask(diff_ctx *x)
{
    const char *path = NULL, *key = NULL;
    char keybuf[256], msg[512];
    tensor_error err;
    int rc;

    if (x->mask_opd.arg != NULL) {
        path = x->mask_opd.path;
        key = x->mask_opd.key;
    } else if (x->dump != NULL) {
        if (x->call != NULL)
            snprintf(keybuf, sizeof keybuf, "%s.attn_mask", x->call);
        else
            snprintf(keybuf, sizeof keybuf, "attn_mask");
        if (dump_has(x, keybuf)) {
            path = x->dump;
            key = keybuf;
        }
    }
    if (path == NULL) {
        if (x->man_mask_mod[0] != '\0') {
            cli_error(CMD,
                      "%s: manifest: \"mask_mod\": \"%s\" hides keys, and "
                      "the dump holds no tensor attn_mask with its values "
                      "(expected one, or --mask FILE[:KEY])",
                      x->dump, x->man_mask_mod);
            return false;
        }
        if (x->man_mask_given) {
            cli_error(CMD,
                      "%s: manifest: \"attn_mask\": the dump holds no tensor "
                      "\"%s\" with the mask's values (expected it, or "
                      "--mask FILE[:KEY])",
                      x->dump, x->call != NULL ? "CALL.attn_mask" : "attn_mask");
            return false;
        }
        return true;
    }
    if (key != NULL)
        snprintf(x->mask_src, sizeof x->mask_src, "%s: %s", path, key);
    else
        snprintf(x->mask_src, sizeof x->mask_src, "%s", path);
    if (tensor_file_read(path, key, TENSOR_ANY, &x->mask_t, &err)
        != TENSOR_OK) {
        cli_error(CMD, "%s: %s", x->mask_opd.arg != NULL ? "--mask" : "--dump",
                  err.message);
        return false;
    }
    if (x->call != NULL && x->mask_opd.arg == NULL)
        /* a capture keeps a call's mask at the kept batch entries and
           heads (capture.py), as it keeps Q */
        rc = am_bind_file(&x->mask_t, x->nb, x->nh, x->nq, x->nk, x->nb,
                          x->nh, NULL, false, NULL, &x->mask, msg, sizeof msg);
    else
        rc = am_bind_file(
            &x->mask_t,
            x->man_launch_bh != 0  ? (size_t)x->man_launch_b
            : x->kopt.launch_given ? x->kopt.launch.batch
                                   : x->nb,
            x->man_launch_bh != 0  ? (size_t)x->man_launch_h
            : x->kopt.launch_given ? x->kopt.launch.heads
                                   : x->nh,
            x->nq, x->nk, x->nb, x->nh,
            x->man_batch_from_given ? x->man_batch_from : NULL,
            x->n_batch_from != 0,
            x->man_heads_kept_given ? x->man_heads_kept : NULL, &x->mask,
            msg, sizeof msg);
    if (rc != 0) {
        cli_error(CMD, "%s: %s", x->mask_src, msg);
        return false;
    }
    x->has_mask = true;
    return true;
}
