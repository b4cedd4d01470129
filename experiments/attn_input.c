/* attn_input.c -- bf16emu attn's inputs: the operands read (or
   generated), their layout and shapes, the GPU's outputs for the
   backward, and the configuration they resolve to */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat, strdup, strndup, sysconf */
#endif

#include "experiments/attn_local.h"

/*----------------------------------------------------------------------------
 * Operands.
 *--------------------------------------------------------------------------*/
/* The output: a .safetensors name, not an input, not an existing file
   unless --force. */
bool
attn_check_output(attn_ctx *x)
{
    operand *o = &x->out;

    if (o->key != NULL || !cli_has_suffix(o->path, ".safetensors")) {
        cli_error(CMD,
                  "--out '%s': expected a file name ending in .safetensors "
                  "(it holds several tensors; no :KEY)",
                  o->arg);
        return false;
    }
    return cli_check_output_file(CMD, o, x->in, N_IN, x->force);
}

/* Input O through the shared reader (analysis/user_tensor.h): BF16, or
   with --dtype bf16 F32 / F16 values that are BF16 values and U16 / I16
   bit patterns. */
bool
attn_read_operand(attn_ctx *x, int i)
{
    operand *o = &x->in[i];
    tensor_error err, err16;
    char spec[SPEC_MAX], sh[SHAPE_MAX];

    if (x->round_to != TENSOR_ANY) {
        /* --round-to: F32 or F64 values rounded to nearest even */
        char what[SPEC_MAX];
        cli_spec_str(what, sizeof what, o);
        if (ut_read(o->path, o->key, TENSOR_ANY, false, NULL, &o->t,
                    &x->info[i], &err)
                != TENSOR_OK
            || (o->t.dtype != x->round_to
                && ut_round_to(&o->t, what, x->round_to, &x->info[i], NULL,
                               &err)
                       != TENSOR_OK)) {
            cli_error(CMD, "%s: %s", o->opt, err.message);
            return false;
        }
    } else if (ut_read(o->path, o->key, TENSOR_BF16, x->kopt.dtype_given,
                       "--dtype", &o->t, &x->info[i], &err)
                   != TENSOR_OK
               && !(err.code == TENSOR_E_DTYPE
                    && !x->kopt.dtype_given
                    /* FP16 inputs: their dtype comes from the file */
                    && ut_read(o->path, o->key, TENSOR_F16, false, "--dtype",
                               &o->t, &x->info[i], &err16)
                           == TENSOR_OK)) {
        cli_error(CMD, "%s: %s%s", o->opt, err.message,
                  strstr(err.message, ", not a BF16 value") != NULL
                      ? "; to round F32 values to BF16 (to nearest, ties "
                        "to even, as torch's .to(torch.bfloat16)), pass "
                        "--round-to bf16"
                      : "");
        return false;
    }
    cli_spec_str(spec, sizeof spec, o);
    cli_shape_str(sh, sizeof sh, o->t.ndim, o->t.shape);
    if (o->t.ndim < 2 || o->t.ndim > 4) {
        cli_error(CMD,
                  "%s %s: shape: %s has %u dimension%s; expected [B, H, N, "
                  "d], [H, N, d] or [N, d]",
                  o->opt, spec, sh, o->t.ndim, o->t.ndim == 1 ? "" : "s");
        return false;
    }
    if (o->t.n_elems == 0) {
        cli_error(CMD,
                  "%s %s: shape: %s has no elements; expected every "
                  "dimension at least 1",
                  o->opt, spec, sh);
        return false;
    }
    swap_elems(o->t.data, (size_t)o->t.n_elems, 2);
    return true;
}

/* The layout a dump's manifest M (JSON) gives for Q: its "layout", else
   what its launch shape ("shape": {"heads", "nq", ...} or [B, H, N, d])
   tells: Q's H dimension within the launch's heads and its N dimension
   nq, or the other way round (only one may fit); else UNSET. */
static ut_layout
manifest_layout(const char *m, const tensor *q)
{
    json_t *root = json_loads(m, 0, NULL), *sh;
    ut_layout r = UT_LAYOUT_UNSET;
    json_int_t heads = 0, nq = 0;

    if (root == NULL)
        return r;
    if (json_is_string(json_object_get(root, "layout"))
        && ut_layout_parse(json_string_value(json_object_get(root, "layout")),
                           &r)) {
        json_decref(root);
        return r;
    }
    sh = json_object_get(root, "shape");
    if (json_is_object(sh)) {
        heads = json_integer_value(json_object_get(sh, "heads"));
        nq = json_integer_value(json_object_get(sh, "nq"));
    } else if (json_is_array(sh) && json_array_size(sh) == 4) {
        heads = json_integer_value(json_array_get(sh, 1));
        nq = json_integer_value(json_array_get(sh, 2));
    }
    if (heads > 0 && nq > 0)
        r = ut_layout_launch(q, (uint64_t)heads, (uint64_t)nq, NULL);
    json_decref(root);
    return r;
}

/* The layout the metadata of Q's file gives: "layout" ("bhnd" or "bnhd",
   as bf16emu writes it), or a dump's manifest; UNSET when it says
   nothing. */
static ut_layout
file_layout(const operand *o, const tensor *q)
{
    tensor_listing l = TENSOR_LISTING_INIT;
    ut_layout r = UT_LAYOUT_UNSET;

    if (tensor_file_list(o->path, &l, NULL) != TENSOR_OK)
        return r;
    for (size_t i = 0; i < l.n_meta && r == UT_LAYOUT_UNSET; i++)
        if (strcmp(l.meta[i].key, "layout") == 0) {
            if (!ut_layout_parse(l.meta[i].value, &r))
                r = UT_LAYOUT_UNSET;
        } else if (strcmp(l.meta[i].key, "manifest") == 0) {
            r = manifest_layout(l.meta[i].value, q);
        }
    tensor_listing_free(&l);
    return r;
}

/* [B, H, N, d] or [B, N, H, d]: --layout, the metadata of Q's file, the
   shapes of Q and K, or either when H or N is 1; else an error asking for
   --layout.  BNHD inputs are transposed to BHND. */
bool
attn_resolve_layout(attn_ctx *x)
{
    const tensor *q = &x->in[IN_Q].t, *k = &x->in[IN_K].t;
    ut_layout l;

    if (x->kopt.layout != UT_LAYOUT_UNSET) {
        x->layout = x->kopt.layout;
        x->layout_from = "--layout";
    } else if ((l = file_layout(&x->in[IN_Q], q)) != UT_LAYOUT_UNSET) {
        x->layout = l;
        x->layout_from = "the file's metadata";
    } else if ((l = ut_layout_tell(q, k)) != UT_LAYOUT_UNSET) {
        x->layout = l;
        x->layout_from = "the only reading under which K's heads divide Q's";
    } else if (!ut_layout_matters(q) || q->ndim != k->ndim) {
        x->layout = UT_LAYOUT_BHND;
        x->layout_from = NULL;
    } else {
        char spec[SPEC_MAX], sh[SHAPE_MAX], shk[SHAPE_MAX];
        unsigned r = q->ndim;
        cli_error(CMD,
                  "--q %s: shape %s with K %s reads as %s (%" PRIu64
                  " query heads over %" PRIu64 " key/value heads, Nq %" PRIu64
                  ", Nk %" PRIu64 ") or as %s (%" PRIu64 " query heads over %"
                  PRIu64 ", Nq %" PRIu64 ", Nk %" PRIu64 "), and neither the "
                  "file nor the shapes tell which; pass --layout bhnd or "
                  "--layout bnhd",
                  cli_spec_str(spec, sizeof spec, &x->in[IN_Q]),
                  cli_shape_str(sh, sizeof sh, q->ndim, q->shape),
                  cli_shape_str(shk, sizeof shk, k->ndim, k->shape),
                  r == 4 ? "[B, H, N, d]" : "[H, N, d]", q->shape[r - 3],
                  k->shape[r - 3], q->shape[r - 2], k->shape[r - 2],
                  r == 4 ? "[B, N, H, d]" : "[N, H, d]", q->shape[r - 2],
                  k->shape[r - 2], q->shape[r - 3], k->shape[r - 3]);
        return false;
    }
    for (int i = 0; i < N_IN; i++) {
        tensor_error err;
        if (x->in[i].arg == NULL || x->in[i].t.ndim != q->ndim)
            continue;
        if (ut_to_bhnd(&x->in[i].t, x->layout, &x->info[i], &err)
            != TENSOR_OK) {
            cli_error(CMD, "%s: %s", x->in[i].opt, err.message);
            return false;
        }
    }
    return true;
}

/* --o and --lse: the GPU's O (Q's shape; BF16, or F32 holding values of
   the policy's O format) and LSE (F32, Q's shape without d), the inputs
   of the backward in place of the emulator's own forward; FP32 patterns
   into x->bwd_o and x->bwd_lse.  False after an error message. */
bool
attn_read_fwd_outputs(attn_ctx *x)
{
    operand *ops[2] = {&x->gpu_o, &x->gpu_lse};
    const tensor *q = &x->in[IN_Q].t;
    const sf_format *ofmt = fa_output_format(&x->cfg, "o");

    for (int n = 0; n < 2; n++) {
        operand *o = ops[n];
        tensor_error err;
        char spec[SPEC_MAX], sh[SHAPE_MAX], want[SHAPE_MAX];
        unsigned nd = n == 0 ? q->ndim : q->ndim - 1;
        bool same;
        uint32_t *dst;

        cli_spec_str(spec, sizeof spec, o);
        if (ut_read(o->path, o->key, TENSOR_ANY, x->kopt.dtype_given,
                    "--dtype", &o->t, NULL, &err)
                != TENSOR_OK
            || (n == 0 && o->t.dtype != TENSOR_F32
                && !(x->f16 && o->t.dtype == TENSOR_F16)
                && ut_as_dtype(&o->t, spec, TENSOR_BF16, x->kopt.dtype_given,
                               "--dtype", NULL, &err)
                       != TENSOR_OK)) {
            cli_error(CMD, "%s: %s", o->opt, err.message);
            return false;
        }
        if (n == 0 && o->t.ndim == q->ndim
            && ut_to_bhnd(&o->t, x->layout, NULL, &err) != TENSOR_OK) {
            cli_error(CMD, "%s: %s", o->opt, err.message);
            return false;
        }
        same = o->t.ndim == nd;
        for (unsigned j = 0; same && j < nd; j++)
            same = o->t.shape[j] == q->shape[j];
        if (!same) {
            cli_error(CMD, "%s %s: shape %s (expected %s, %s)", o->opt, spec,
                      cli_shape_str(sh, sizeof sh, o->t.ndim, o->t.shape),
                      cli_shape_str(want, sizeof want, nd, q->shape),
                      n == 0 ? "the shape of Q" : "Q's without d");
            return false;
        }
        if (n == 0 && (o->t.dtype == TENSOR_F16) != x->f16
            && o->t.dtype != TENSOR_F32) {
            cli_error(CMD, "%s %s: dtype %s but Q is %s (expected %s or F32)",
                      o->opt, spec, tensor_dtype_name(o->t.dtype),
                      x->f16 ? "F16" : "BF16", x->f16 ? "F16" : "BF16");
            return false;
        }
        if (n == 1 && o->t.dtype != TENSOR_F32) {
            cli_error(CMD, "%s %s: dtype %s (expected F32)", o->opt, spec,
                      tensor_dtype_name(o->t.dtype));
            return false;
        }
        dst = malloc((size_t)o->t.n_elems * sizeof *dst);
        if (dst == NULL) {
            cli_error(CMD, "out of memory");
            return false;
        }
        if (n == 0)
            x->bwd_o = dst;
        else
            x->bwd_lse = dst;
        for (uint64_t j = 0; j < o->t.n_elems; j++) {
            uint64_t b = tensor_get_bits(&o->t, j);
            if (o->t.dtype == TENSOR_F16) {
                sf_env env = SF_ENV_IEEE;
                dst[j] = (uint32_t)sf_convert(&sf_format_f32, &sf_format_f16,
                                              b, SF_RNE, &env);
                continue;
            }
            if (o->t.dtype != TENSOR_F32) {
                dst[j] = (uint32_t)b << 16;
                continue;
            }
            dst[j] = (uint32_t)b;
            if (n == 0 && ofmt != NULL && ofmt != &sf_format_f32
                && !sf_is_nan(&sf_format_f32, b)) {
                sf_env env = SF_ENV_IEEE;
                uint64_t r = sf_convert(ofmt, &sf_format_f32, b, SF_RNE, &env);
                if (sf_convert(&sf_format_f32, ofmt, r, SF_RNE, &env) != b) {
                    cli_error(CMD,
                              "%s %s: element %" PRIu64 " is F32 0x%08" PRIX64
                              ", not a %s value (the policy's O format)",
                              o->opt, spec, j, b, ofmt->name);
                    return false;
                }
            }
        }
    }
    return true;
}

/* Q [.., Nq, d], K and V [.., Nk, d], dO Q's shape. */
bool
attn_check_shapes(attn_ctx *x)
{
    const tensor *q = &x->in[IN_Q].t;
    char sq[SPEC_MAX], so[SPEC_MAX], hq[SHAPE_MAX], ho[SHAPE_MAX],
        want[SHAPE_MAX];
    uint64_t w[4];
    unsigned r = q->ndim;

    cli_spec_str(sq, sizeof sq, &x->in[IN_Q]);
    cli_shape_str(hq, sizeof hq, q->ndim, q->shape);
    for (int i = IN_K; i < N_IN; i++) {
        const operand *o = &x->in[i];
        bool same;
        if (o->arg == NULL)
            continue;
        memcpy(w, q->shape, sizeof w);
        if (i != IN_DO)
            w[r - 2] = i == IN_V ? x->in[IN_K].t.shape[r - 2]
                                 : o->t.shape[o->t.ndim - 2];
        /* grouped-query heads: K's (and V's) H divides Q's */
        if (i != IN_DO && r >= 3 && o->t.ndim == r) {
            uint64_t hk = i == IN_V ? x->in[IN_K].t.shape[r - 3]
                                    : o->t.shape[r - 3];
            if (hk != 0 && q->shape[r - 3] % hk == 0)
                w[r - 3] = hk;
        }
        same = o->t.ndim == r;
        for (unsigned j = 0; same && j < r; j++)
            same = o->t.shape[j] == w[j];
        if (!same) {
            const char *rule =
                i == IN_DO  ? "dO has the shape of Q"
                : i == IN_K ? "K has Q's batch and d, its own Nk, and Q's "
                              "heads or a divisor of them (grouped-query)"
                            : "V has the shape of K";
            cli_spec_str(so, sizeof so, o);
            cli_shape_str(ho, sizeof ho, o->t.ndim, o->t.shape);
            if (o->t.ndim != r)
                cli_error(CMD,
                          "%s %s: shape: %s has %u dimensions but Q %s has "
                          "%s; expected %u (%s)",
                          o->opt, so, ho, o->t.ndim, sq, hq, r, rule);
            else
                cli_error(CMD,
                          "%s %s: shape: %s does not fit Q %s %s; expected "
                          "%s (%s)",
                          o->opt, so, ho, sq, hq,
                          cli_shape_str(want, sizeof want, r, w), rule);
            return false;
        }
    }
    for (int i = IN_K; i < N_IN; i++)
        if (x->in[i].arg != NULL
            && (x->in[i].t.dtype == TENSOR_F16) != (q->dtype == TENSOR_F16)) {
            cli_spec_str(so, sizeof so, &x->in[i]);
            cli_error(CMD,
                      "%s %s: dtype %s but Q %s is %s (expected one dtype for "
                      "Q, K, V and dO: BF16 or F16)",
                      x->in[i].opt, so, tensor_dtype_name(x->in[i].t.dtype),
                      sq, tensor_dtype_name(q->dtype));
            return false;
        }
    x->f16 = q->dtype == TENSOR_F16;
    x->rank = r;
    x->n_lead = r - 2;
    for (unsigned j = 0; j < x->n_lead; j++)
        x->lead[j] = q->shape[j];
    x->nb = r == 4 ? (size_t)q->shape[0] : 1;
    x->nh = r >= 3 ? (size_t)q->shape[r - 3] : 1;
    x->nq = (size_t)q->shape[r - 2];
    x->d = (size_t)q->shape[r - 1];
    x->nk = (size_t)x->in[IN_K].t.shape[r - 2];
    x->nhkv = r >= 3 ? (size_t)x->in[IN_K].t.shape[r - 3] : 1;
    for (int i = 0; i < N_IN; i++)
        if (x->in[i].arg != NULL)
            x->data[i] = (uint16_t *)(void *)x->in[i].t.data;
    return true;
}

/*----------------------------------------------------------------------------
 * The configuration.
 *--------------------------------------------------------------------------*/
/* The forward tiles, KV blocks and split count the configuration
   resolves to (TC: the second dimension of the m and l captures). */
static void
resolve_tiles(attn_ctx *x)
{
    (void)fa_config_tiles(&x->cfg, &x->br_eff, &x->bc_eff, &x->tc,
                          &x->splits_eff);
    x->dq_buffers_eff = fa_config_dq_buffers(&x->cfg);
}

/* The launch: --launch, else the tensors' own B and H; its KV heads in
   the tensors' proportion. */
static bool
fill_launch(attn_ctx *x)
{
    fa_cli_launch *l = &x->kopt.launch;

    if (!x->kopt.launch_given) {
        l->batch = x->nb;
        l->heads = x->nh;
        l->from = "the tensors";
    } else if (x->kopt.launch_lengths && (l->nq != x->nq || l->nk != x->nk)) {
        cli_error(CMD, "--launch: Nq %zu, Nk %zu but the inputs have Nq %zu, "
                       "Nk %zu (expected the same lengths)",
                  l->nq, l->nk, x->nq, x->nk);
        return false;
    }
    if (l->heads % (x->nh / x->nhkv) != 0) {
        cli_error(CMD, "--launch: %zu heads is not a multiple of the group "
                       "size %zu (%zu query heads over %zu KV heads)",
                  l->heads, x->nh / x->nhkv, x->nh, x->nhkv);
        return false;
    }
    fa_cli_launch_fill(l, x->nh / x->nhkv, x->nq, x->nk, x->d, x->f16,
                       x->kopt.sms);
    return true;
}

/* --policy sdpa: the backend PyTorch picks for this call, its
   description, causal alignment and splits into X.  False after an
   error message. */
static bool
pick_sdpa(attn_ctx *x)
{
    /* PyTorch 2.11's backend for this call on an H200 */
    sdpa_case sc = sdpa_policy_case(&x->kopt.launch, x->nh, x->nhkv, x->nq,
                                    x->nk, x->d, x->f16, x->kopt.causal);
    const fa_kernel *k;
    bool split_auto;
    unsigned lean;
    sc.requires_grad = x->backward;
    if (x->mask_opd.arg != NULL)
        /* backends that refuse a mask are left out, as PyTorch does
           (diff and the Python attention alike) */
        sc.mask = SDPA_MASK_BOOL;
    if (x->kopt.sdpa_backends_given)
        sc.enabled = x->kopt.sdpa_backends;
    if (!sdpa_policy_pick(CMD, &sc, &k, &x->sdpa_ch, &split_auto, &lean))
        return false;
    sdpa_policy_note(CMD, &x->sdpa_ch, k);
    if (x->kopt.causal && x->nq != x->nk && !x->kopt.align_given
        && !sdpa_policy_causal_align(CMD, &x->sdpa_ch, (int64_t)x->nq,
                                     (int64_t)x->nk, &x->kopt.top_left))
        return false;
    x->kopt.kernel = *k;
    x->kopt.kernel_named = true;
    if (split_auto && x->kopt.splits == 0)
        x->kopt.splits_auto = true;
    if (lean > 1 && x->kopt.splits == 0 && !x->kopt.splits_auto)
        x->kopt.splits = lean;
    return true;
}

/* The shape, mask, scale, tiles, order, fix, ablations, exp and log
   models into C from the options.  False after an error message. */
static bool
config_options(attn_ctx *x, fa_config *c)
{
    float sf;

    c->shape.batch = x->nb;
    c->shape.heads = x->nh;
    c->shape.nq = x->nq;
    c->shape.nk = x->nk;
    c->shape.d = x->d;
    c->causal = x->kopt.causal;
    c->causal_top_left = x->kopt.causal && x->kopt.top_left;
    if (x->kopt.scale_given) {
        memcpy(&sf, &x->kopt.scale_bits, sizeof sf);
        c->scale = sf;
    }
    c->softcap = x->kopt.softcap;
    c->delta_xblock = (size_t)x->kopt.delta_xblock;
    c->br = (size_t)x->br;
    c->bc = (size_t)x->bc;
    if (x->order_given)
        c->order = x->order;
    c->fix = fa_fix_default(x->kopt.fix);
    if (x->beta_given)
        c->fix.beta = x->beta;
    if (x->tol_given)
        c->fix.tol = x->tol;
    if (x->eps_given)
        c->fix.eps = x->eps;
    if (x->zero_max_given)
        c->fix.zero_max = x->zero_max;
    if (x->eps_zero_given)
        c->fix.eps_zero = x->eps_zero;
    c->ablations = x->ablations;
    if (!fa_cli_config_models(CMD, c, x->kopt.kernel_path != NULL,
                              x->kopt.exp_given, &x->kopt.exp, &x->logm,
                              x->f16))
        return false;
    return true;
}

/* The split count into C: --splits auto or a --launch without --splits
   take the kernel's own rule on the launch; X->splits_from says which. */
static void
config_splits(attn_ctx *x, fa_config *c)
{
    /* flex_decoding's program count is the kernel's own, from the launch
       (this run's shape without --launch) */
    bool own = x->kopt.splits == 0
               && fa_config_kernel(c)->combine == FA_COMBINE_FLEX_DECODE;

    if (x->kopt.splits_auto || (x->kopt.launch_given && x->kopt.splits == 0)
        || own) {
        /* the kernel's own rule on the launch */
        const char *rule;
        c->splits =
            fa_cli_launch_splits(fa_config_kernel(c), &x->kopt.launch, &rule);
        snprintf(x->splits_from_buf, sizeof x->splits_from_buf,
                 "%s: %s on the launch B %zu, H %zu (%s)",
                 x->kopt.splits_auto    ? "--splits auto"
                 : x->kopt.launch_given ? "the launch's rule"
                                        : "the kernel's rule",
                 rule, x->kopt.launch.batch, x->kopt.launch.heads,
                 x->kopt.launch.from);
        x->splits_from = x->splits_from_buf;
    } else {
        c->splits = (size_t)x->kopt.splits;
        x->splits_from = x->kopt.splits != 0
                             ? "--splits"
                             : "default: not split (no --launch)";
    }
}

/* The configuration of one head, the head count, the scale and the
   tiles, from the checked configuration of the whole shape. */
static void
head_config(attn_ctx *x)
{
    const fa_config *c = &x->cfg;

    x->hcfg = *c;
    x->hcfg.shape.batch = 1;
    x->hcfg.shape.heads = 1;
    /* grouped heads summed in FP32 before their rounding */
    x->hcfg.dkv_fp32 = x->nhkv != x->nh
                       && fa_config_kernel(c)->gqa_dkv == FA_GQA_FP32_SUM;
    /* one head at a time: the dQ buffers and the gemv kernels of a
       decode are the whole launch's */
    x->hcfg.dq_splits = fa_config_dq_buffers(c);
    x->hcfg.launch_bh = x->kopt.launch.batch * x->kopt.launch.heads;
    x->hcfg.launch_group = x->nhkv != 0 ? x->nh / x->nhkv : 1;
    x->heads = x->nb * x->nh;
    x->scale_used = fa_scale_bits(c);
    x->order = c->order;
    resolve_tiles(x);
}

/* --trace b,h,row,col within the shape; false after an error
   message. */
static bool
check_trace_at(const attn_ctx *x)
{
    if (x->trace) {
        static const char *const what[4] = {"b", "h", "row", "col"};
        const uint64_t lim[4] = {x->nb, x->nh, x->nq, x->d};
        for (int i = 0; i < 4; i++)
            if (x->trace_at[i] >= lim[i]) {
                cli_error(CMD,
                          "--trace %" PRIu64 ",%" PRIu64 ",%" PRIu64
                          ",%" PRIu64 ": %s %" PRIu64
                          " is out of range (expected below %" PRIu64 ")",
                          x->trace_at[0], x->trace_at[1], x->trace_at[2],
                          x->trace_at[3], what[i], x->trace_at[i], lim[i]);
                return false;
            }
    }
    return true;
}

/* The configuration of the whole shape (X->cfg) and of one head
   (X->hcfg) from the options, the launch and the description; false
   after an error message. */
bool
attn_build_config(attn_ctx *x)
{
    fa_config *c = &x->cfg;
    const char *why;

    if (!fill_launch(x))
        return false;
    if (x->kopt.sdpa && !pick_sdpa(x))
        return false;
    if (x->kopt.kernel_path != NULL || x->kopt.kernel_named)
        *c = fa_config_kernel_default(&x->kopt.kernel);
    else
        *c = fa_config_default(x->kopt.policy);
    if (x->nhkv != x->nh && x->backward
        && fa_config_kernel(c)->gqa_dkv == FA_GQA_NONE) {
        cli_error(CMD, "--backward: grouped-query heads (%zu query heads over "
                       "%zu key/value heads): the description '%s' has no "
                       "rule for the sum of dK and dV over a group (gqa_dkv "
                       "\"none\"; the forward runs); give K and V repeated "
                       "to %zu heads for the backward of PyTorch's expanded "
                       "call",
                  x->nh, x->nhkv, fa_config_kernel(c)->name, x->nh);
        return false;
    }
    if (!config_options(x, c))
        return false;
    config_splits(x, c);
    c->dq_splits = (size_t)x->kopt.dq_buffers;
    c->sms = (size_t)x->kopt.sms;
    if (c->splits > 1
        && (x->captures
            & ((1u << CAP_M) | (1u << CAP_L) | (1u << CAP_OBAR)))) {
        cli_error(CMD, "--capture: m, l and obar are not defined with "
                       "--splits above 1 (expected s or p)");
        return false;
    }
    why = fa_config_check(c);
    if (why != NULL) {
        fa_cli_config_refused(
            CMD, c, x->kopt.splits_auto ? "--splits auto" : "--splits", why);
        return false;
    }
    if (x->backward && (why = fa_config_backward_refusal(c, 1)) != NULL) {
        cli_error(CMD, "--backward: %s (the forward runs without --backward)",
                  why);
        return false;
    }
    if (x->backward && fa_config_kernel(c)->bwd == FA_BWD_FLEX
        && (x->trace || (x->captures & ((1u << CAP_DP) | (1u << CAP_DS))))) {
        cli_error(CMD, "--backward: FlexAttention's backward (bwd \"flex\") "
                       "keeps no dP or dS captures and traces no dQ "
                       "element; drop --trace and --capture dp,ds");
        return false;
    }
    head_config(x);
    return check_trace_at(x);
}
