/* diff_config.c -- bf16emu diff: the configuration the dump, its
   manifest and the options give (mask, scale, tiles, heads) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <string.h>

#include "experiments/diff_local.h"

/*----------------------------------------------------------------------------
 * The configuration.
 *--------------------------------------------------------------------------*/
/* The causal mask: --causal or --no-causal over the manifest's, else the
   file's metadata; the report notes an override. */
static bool
resolve_causal(diff_ctx *x)
{
    if (x->kopt.causal || x->kopt.no_causal) {
        bool file_given = x->man_causal_given || x->meta_causal_given;
        bool file_causal =
            x->man_causal_given ? x->man_causal : x->meta_causal;
        x->causal = x->kopt.causal;
        x->causal_override = file_given && file_causal != x->causal;
        x->causal_from = x->causal ? "--causal" : "--no-causal";
    } else if (x->man_causal_given) {
        x->causal = x->man_causal;
        x->causal_from = "manifest";
    } else if (x->meta_causal_given) {
        x->causal = x->meta_causal;
        x->causal_from = "the file's metadata";
    } else {
        cli_error(CMD, "%s gives causal; pass --causal or --no-causal",
                  x->have_manifest  ? "the manifest does not"
                  : x->dump != NULL ? "no manifest"
                                    : "no --dump manifest");
        return false;
    }
    return true;
}

/* C's softmax scale: --scale, the manifest's number (or "1/sqrt(d)",
   the default), else the file's metadata. */
static bool
resolve_scale(diff_ctx *x, fa_config *c)
{
    float sf;

    if (x->kopt.scale_given) {
        memcpy(&sf, &x->kopt.scale_bits, sizeof sf);
        c->scale = sf;
    } else if (x->man_scale_number) {
        sf_env env = cli_env_ieee();
        uint32_t b = (uint32_t)sf_from_double(
            &sf_format_f32, x->man_scale_value, SF_RNE, &env);
        memcpy(&sf, &b, sizeof sf);
        if (!(sf > 0.0f) || isinf(sf)) {
            cli_error(CMD,
                      "%s: manifest: scale: %.17g (expected a finite "
                      "positive number)",
                      x->dump, x->man_scale_value);
            return false;
        }
        c->scale = sf;
    } else if (x->man_scale != NULL
               && strncmp(x->man_scale, "1/sqrt(d)", 9) != 0) {
        cli_error(CMD,
                  "%s: manifest: scale: \"%s\" (expected a number or "
                  "\"1/sqrt(d) ...\"; or give --scale)",
                  x->dump, x->man_scale);
        return false;
    } else if (x->man_scale == NULL && x->meta_scale != NULL) {
        uint32_t b;
        if (!fa_cli_parse_scale(CMD, x->meta_scale, &b))
            return false;
        memcpy(&sf, &b, sizeof sf);
        c->scale = sf;
        x->scale_meta = true;
    } else if (x->man_scale == NULL) {
        cli_error(CMD,
                  "%s gives scale; pass --scale X (PyTorch's default is "
                  "1/sqrt(d) = %.9g for d = %zu)",
                  x->have_manifest  ? "the manifest does not"
                  : x->dump != NULL ? "no manifest"
                                    : "no --dump manifest",
                  1.0 / sqrt((double)x->d), x->d);
        return false;
    }
    return true;
}

/* X->hcfg: the configuration C of one head (or group), in the launch of
   the whole run, and the dQ buffers in effect. */
static void
head_config(diff_ctx *x, const fa_config *c)
{
    x->hcfg = *c;
    x->hcfg.shape.batch = 1;
    x->hcfg.shape.heads = 1;
    /* grouped heads summed in FP32 before their rounding */
    x->hcfg.dkv_fp32 = x->nhkv != x->nh
                       && fa_config_kernel(c)->gqa_dkv == FA_GQA_FP32_SUM;
    /* the launch's batch x heads: the manifest's launch_shape, else the
       shape it gave, else this run's */
    x->hcfg.launch_bh =
        x->man_launch_bh != 0 ? (size_t)x->man_launch_bh
        : x->man_shape_given  ? (size_t)(x->man_shape[0] * x->man_shape[1])
                              : c->shape.batch * c->shape.heads;
    x->hcfg.launch_group = x->nhkv != 0 ? x->nh / x->nhkv : 1;
    /* one head at a time: the dQ buffers are the whole launch's */
    x->dq_eff = fa_config_dq_buffers(c);
    x->hcfg.dq_splits = x->dq_eff;
}

/* The scale C uses, the file's own where --scale overrides it, and
   whether it is PyTorch's default. */
static void
note_scale(diff_ctx *x, const fa_config *c)
{
    float sf;

    x->scale_used = fa_scale_bits(c);
    if (x->kopt.scale_given) {
        /* the file's own scale, to note an override */
        fa_config fc = *c;
        bool file_says = true;
        fc.scale = fa_config_default(x->kopt.policy).scale;
        if (x->man_scale_number) {
            sf_env env = SF_ENV_IEEE;
            uint32_t b = (uint32_t)sf_from_double(
                &sf_format_f32, x->man_scale_value, SF_RNE, &env);
            memcpy(&sf, &b, sizeof sf);
            fc.scale = sf;
        } else if (x->man_scale == NULL && x->meta_scale != NULL) {
            uint32_t b;
            if (fa_cli_parse_scale(CMD, x->meta_scale, &b)) {
                memcpy(&sf, &b, sizeof sf);
                fc.scale = sf;
            } else {
                file_says = false;
            }
        } else if (x->man_scale == NULL
                   || strncmp(x->man_scale, "1/sqrt(d)", 9) != 0) {
            file_says = false;
        }
        if (file_says && fa_scale_bits(&fc) != x->scale_used) {
            x->scale_override = true;
            x->scale_file = fa_scale_bits(&fc);
        }
    }
    {
        /* PyTorch's default: 1/sqrt(d) in double, then to float */
        double r = 1.0 / sqrt((double)x->d);
        float f = (float)r;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        x->torch_scale_same = b == x->scale_used;
    }
}

bool
diff_build_config(diff_ctx *x)
{
    fa_config *c = &x->cfg;
    const char *why;

    /* Every setting that changes bits comes from the file or an option;
       an option given over the file's setting wins, and the report says
       so. */
    if (!resolve_causal(x))
        return false;
    if (x->kopt.kernel_path != NULL || x->kopt.kernel_named)
        *c = fa_config_kernel_default(&x->kopt.kernel);
    else
        *c = fa_config_default(x->kopt.policy);
    c->splits = x->splits;
    c->dq_splits = x->dq_set;
    c->sms = (size_t)x->kopt.sms;
    c->shape.batch = x->nb;
    c->shape.heads = x->nh;
    c->shape.nq = x->nq;
    c->shape.nk = x->nk;
    c->shape.d = x->d;
    c->causal = x->causal;
    x->top_left = x->kopt.align_given ? x->kopt.top_left : x->man_top_left;
    x->align_from = x->align_sdpa         ? "--policy sdpa"
                    : x->kopt.align_given ? "--causal-align"
                    : x->man_align_given  ? x->man_align_from
                                          : "default";
    c->causal_top_left = x->causal && x->top_left;
    c->softcap = x->kopt.softcap;
    /* FlexAttention's pinned tiles and delta kernel, --delta-xblock
       first */
    c->delta_xblock = (size_t)x->kopt.delta_xblock;
    x->delta_from = dump_flex_apply(
        &x->man_flex,
        (x->man_launch_bh != 0 ? x->man_launch_bh : (uint64_t)(x->nb * x->nh))
            * x->nq,
        c);
    if (x->man_flex.forward_unfused && fa_config_kernel(c)->block_sparse) {
        cli_error(CMD,
                  "%s: the GPU did not run FlexAttention's Triton kernel for "
                  "this call (the manifest's kernels.forward holds no "
                  "triton_tem_fused_flex_attention: torch.compile fell back "
                  "to PyTorch's unfused implementation, e.g. past dynamo's "
                  "recompile limit); the flex descriptions model the Triton "
                  "kernel only",
                  x->dump);
        return false;
    }
    if (!resolve_scale(x, c))
        return false;
    if (x->kopt.fix_given) {
        x->fix = x->kopt.fix;
        x->fix_from = "--fix";
    } else if (x->man_fix_given) {
        x->fix = x->man_fix;
        x->fix_from = "manifest";
    } else {
        x->fix = FA_FIX_NONE;
        x->fix_from = "default";
    }
    c->fix = fa_fix_default(x->fix);
    if (x->rowsum_opt >= 0)
        x->man_rowsum_separate = x->rowsum_opt == 0;
    if (x->man_rowsum_separate)
        c->fa2_rowsum_fma = false;
    if (!fa_cli_config_models(CMD, c, x->kopt.kernel_path != NULL,
                              x->kopt.exp_given, &x->kopt.exp, &x->logm,
                              x->f16))
        return false;
    if (!fa_cli_inputs_defined(
            CMD, x->kopt.kernel_path != NULL ? "--kernel" : "--policy",
            fa_config_kernel(c), x->f16))
        return false;
    why = fa_config_check(c);
    if (why != NULL) {
        fa_cli_config_refused(CMD, c,
                              strcmp(x->splits_from, "manifest") == 0
                                  ? "the manifest's splits"
                                  : x->splits_from,
                              why);
        return false;
    }
    head_config(x, c);
    note_scale(x, c);
    for (int s = 0; s < N_ST; s++) {
        x->r[s].fmt = fa_output_format(c, st_format_name[s]);
        if (x->r[s].fmt == NULL)
            x->r[s].fmt = &sf_format_f32;
    }
    return true;
}
