/* diff.c -- bf16emu diff: the reference flash attention against a GPU
   dump, stage by stage: bit-equal counts, distances, worst elements, the
   first divergent stage and the signed errors of both against the exact
   reference */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <jansson.h>
#include <omp.h>
#endif

#include <mpfr.h>

#include "analysis/attn_exact.h"
#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/dump_inputs.h"
#include "analysis/dump_manifest.h"
#include "analysis/dump_outputs.h"
#include "analysis/tensor.h"
#include "analysis/user_tensor.h"
#include "attention/attention.h"
#include "experiments/cli.h"
#include "experiments/fa_cli.h"
#include "experiments/fa_kernel_json.h"
#include "experiments/sdpa_policy.h"
#include "analysis/launch.h"

#define CMD "diff"

/*
 * What is compared.  A dump is one .safetensors file with the BF16 inputs
 * q, k, v [B, H, Nq or Nk, d] (and do [B, H, Nq, d]) and the GPU's outputs
 * o (BF16 [B, H, Nq, d]), lse (F32 [B, H, Nq], natural log) and dq, dk, dv
 * (BF16, the shapes of q, k, v), and in its metadata a "manifest" (JSON)
 * that may give the mask ("causal": true/false), the shape and the scale
 * rule.  Each stage is recomputed on the emulator from the dump's own
 * inputs to that stage: o and lse by fa_forward from q, k, v; dq, dk and
 * dv by fa_backward from q, k, v, do and the dump's o and lse (so a
 * difference in the forward does not spill into the backward).  An FP16
 * dump has q, k, v, do, o, dq, dk, dv in F16 (FA2's Element type: the
 * stages are compared in FP16).
 *
 * For each stage the GPU's and the emulator's values are compared in the
 * stage's format (fa_output_format: BF16 for o, dq, dk, dv under fa2, FP32
 * for lse): bit-equal count, distance histogram (cmp_ulp_distance), the
 * worst elements with their indices [b, h, row, col].  A stage passes when
 * every distance is at most --tolerance (default 0: bit-equal).
 *
 * A dump of a kernel's intermediate stages (experiments/gpu/fa_dump.cu)
 * also holds s (F32 [B, H, Nq, Nk], the raw scores), p (BF16, P~), m and
 * l (F32 [B, H, Nq, Tc], the running max and row sum after each KV block
 * in visiting order) and acc (F32 [B, H, Nq, Tc, d], the accumulator O~
 * after each block).  Under fa2 these are compared with the emulator's
 * captures (fa_capture: s, p, m, l); acc after visiting KV block j is
 * the final O~ of the same problem restricted to the keys from block j
 * on (the kernel visits the blocks in reverse, so that suffix is exactly
 * what it has seen), and slots after the last visited block repeat the
 * last value, as in the capture of m and l.  The report names the first
 * divergent stage in the order s, m, p, l, acc, o, lse, and for each of
 * the worst O elements the first KV block and stage where its row (or,
 * for acc, its column) diverges.
 *
 * With the exact reference (analysis/attn_exact.h, the direct evaluation
 * at 256 bits; the backward's delta from the exact O) each element with a
 * finite exact value gives two signed errors, GPU - exact and emulator -
 * exact, in ulps of the stage's format at the exact value; their means,
 * standard errors and sign counts are reported side by side.  It runs
 * while B H Nq Nk d (times 4 when a backward stage is compared) is at most
 * 2^26, unless --exact; --no-exact skips it.
 */

#define EXACT_WORK_LIMIT ((uint64_t)1 << 26)
#define N_WORST 10
#define SRC_MAX 512 /* "FILE: KEY" of a tensor, for messages */

enum
{
    T_Q,
    T_K,
    T_V,
    T_DO,
    T_O,
    T_LSE,
    T_DQ,
    T_DK,
    T_DV,
    T_S,
    T_P,
    T_M,
    T_L,
    T_ACC,
    N_T
};

static const char *const t_names[N_T] = {"q",   "k",  "v",  "do", "o",
                                         "lse", "dq", "dk", "dv", "s",
                                         "p",   "m",  "l",  "acc"};

/* Stages in the order of the computation: the forward's intermediate
   stages (captures) first. */
enum
{
    ST_S,
    ST_M,
    ST_P,
    ST_L,
    ST_ACC,
    ST_O,
    ST_LSE,
    ST_DQ,
    ST_DK,
    ST_DV,
    N_ST
};

static const char *const st_names[N_ST] = {"s", "m",   "p",  "l",  "acc",
                                           "o", "lse", "dq", "dk", "dv"};
/* The dump's tensor of each stage. */
static const int st_tensor[N_ST] = {T_S, T_M,   T_P,  T_L,  T_ACC,
                                    T_O, T_LSE, T_DQ, T_DK, T_DV};
/* The name fa_output_format knows each stage's values by. */
static const char *const st_format_name[N_ST] = {
    "s", "m", "p", "l", "obar", "o", "lse", "dq", "dk", "dv"};

/* A stage of the forward's intermediate values (fa2 only). */
static bool
is_capture(int s)
{
    return s <= ST_ACC;
}

/* x: the GPU's value, y: the emulator's */
typedef cmp_elem diff_elem;

typedef struct
{
    bool on;
    const sf_format *fmt;
    cmp_stats c; /* elements, equal, differ, distances, the worst */
    bool pass;
    /* an output the dump keeps in part (manifest: outputs_kept): the
       counts above are over the kept elements; the emulator's whole
       tensor against the hash of the GPU's */
    bool kept;
    uint64_t whole;   /* the whole tensor's elements */
    uint64_t emu_hash;
    bool hash_equal;
    /* against the exact reference */
    bool have_exact;
    uint64_t skipped;
    bias_cell err_gpu, err_emu;
} stage_result;

typedef enum
{
    CAUSAL_AUTO,
    CAUSAL_YES,
    CAUSAL_NO
} causal_opt;

/* Where the row of one differing O element first diverges. */
typedef struct
{
    uint64_t flat; /* index into o */
    bool found;
    size_t visit, block; /* visiting order, KV block */
    int stage;           /* ST_S .. ST_ACC, or ST_O (only the last step) */
} o_trace;

typedef struct
{
    /* options */
    const char *dump;
    fa_policy policy;
    bool policy_given;
    const char *kernel_path; /* --kernel FILE.json */
    fa_kernel kernel;
    bool kernel_named;  /* kernel: --policy NAME of a named description,
                           the manifest's backend, or sdpa's choice */
    bool sdpa;          /* --policy sdpa, or a manifest's "backend":
                           "default" */
    const char *sdpa_from; /* "--policy sdpa" or "manifest" */
    unsigned sdpa_backends; /* --sdpa-backends (SDPA_EN_*) */
    bool sdpa_backends_given;
    sdpa_choice sdpa_ch;
    bool sdpa_lean; /* its split count: cuDNN's lean reduction */
    char man_backend[16]; /* the manifest's "backend" ("" when none) */
    fa_cli_log logm;     /* its lg2 log, when it has one */
    bool f16;            /* q, k, v (and o) are FP16 */
    uint64_t splits_opt; /* --splits N (0: not given) */
    bool splits_auto;
    uint64_t sms;
    size_t splits;     /* resolved */
    size_t man_splits; /* the manifest's "splits" (0: none) */
    const char *splits_from;
    bool dq_given;   /* --dq-buffers */
    uint64_t dq_opt; /* its count (0: auto) */
    size_t man_dq;   /* the manifest's "dq_buffers" (0: none) */
    size_t dq_set;   /* resolved: cfg->dq_splits (0: the rule) */
    size_t dq_eff;   /* the count the library runs */
    const char *dq_from;
    bool fix_given;
    fa_fix_kind fix_opt;
    fa_cli_exp exp;
    bool exp_given;
    bool stage_given;
    bool want[N_ST];
    causal_opt causal_opt;
    bool scale_given;
    double softcap;     /* --softcap, else the manifest's; 0: none */
    uint64_t delta_xblock;     /* --delta-xblock; 0: from the manifest */
    dump_flex man_flex;        /* the manifest's FlexAttention launch */
    const char *delta_from;    /* where delta_xblock came from, or NULL */
    uint32_t scale_bits;
    uint64_t tol;
    bool json, no_exact, exact_forced;
    cli_operand opd[N_T]; /* --q FILE[:KEY], ...: where each tensor is */
    const char *call;     /* --call L{layer}.s{step}: one call of a capture */
    char *call_arg[N_T];  /* the FILE:KEY --call gives each tensor */
    char *call_man;       /* the manifest with that call's settings */
    bool dtype_given;     /* --dtype bf16 */
    ut_layout layout_opt; /* --layout */

    /* the dump and the tensors */
    tensor_listing list; /* of --dump */
    tensor own[N_T];
    const tensor *t[N_T];
    char src[N_T][SRC_MAX]; /* "FILE: KEY" of each tensor read */
    ut_info info[N_T];
    dump_kept kept[N_T]; /* outputs kept in part (outputs_kept) */
    ut_layout layout;
    const char *layout_from;
    bool have_manifest;
    bool gen_input[4]; /* q, k, v, do described by the manifest's
                          inputs_gen (analysis/dump_inputs.h) */
    bool man_causal_given, man_causal;
    bool man_align_given, man_top_left; /* "causal_alignment" */
    const char *man_align_from; /* "manifest" or "the file's metadata" */
    int align_opt; /* --causal-align: -1 not given, 0 bottom-right, 1 top-left */
    ut_layout man_layout;
    bool man_heads_kept_given;
    uint64_t man_heads_kept[64]; /* "heads_kept" or "heads_from": the
                                    launch's index of each head kept */
    size_t n_heads_kept;
    const char *heads_key; /* which of the two the manifest gave */
    bool man_batch_from_given;
    uint64_t man_batch_from[64]; /* "batch_from": the launch's batch of
                                    each head kept (one number: all) */
    size_t n_batch_from;
    uint64_t man_launch_b, man_launch_h; /* "launch_shape"; 0 absent */
    bool heads_subset; /* the file keeps some of the launch's heads */
    uint64_t launch_heads; /* the launch's heads then */
    bool meta_causal_given, meta_causal; /* a tensor file's "causal" */
    const char *meta_scale;              /* a tensor file's "scale" */
    bool causal_override;                /* an option overrides the file */
    bool scale_meta;                     /* scale from the file's "scale" */
    bool scale_override;                 /* --scale over another one */
    uint32_t scale_file;                 /* the file's scale then */
    const char *man_scale; /* the manifest's scale text, or NULL */
    char man_scale_buf[256];
    bool man_scale_number;
    double man_scale_value;
    bool man_shape_given;
    uint64_t man_shape[5]; /* batch, heads, nq, nk, d */
    uint64_t man_launch_bh; /* "launch_shape": batch x heads; 0 absent */
    uint64_t man_list[4];  /* "shape": [B, H, N, d] as written */
    size_t n_man_list;     /* 4 when given as a list */
    bool man_fix_given;
    fa_fix_kind man_fix;
    bool man_rowsum_separate; /* "rowsum": "FMUL then FADD ..." */
    int rowsum_opt;           /* --fa2-rowsum: -1 not given, 0, 1 */
    size_t nb, nh, nq, nk, d, heads;
    size_t nhkv; /* K's and V's heads (grouped-query: a divisor of H) */
    int man_gqa; /* the manifest's enable_gqa: 1, 0, or -1 absent */
    bool kernel_from_meta; /* the description is the file's (bf16emu attn) */
    fa_cli_launch launch; /* the GPU launch the file's tensors came from */
    bool launch_given, launch_lengths; /* --launch */
    char splits_buf[200];
    size_t br, bc, tc; /* fa2's forward tiles (resolved) and KV blocks */

    /* resolved */
    bool causal;
    const char *causal_from; /* "manifest", "--causal", "default" */
    bool top_left;           /* the causal mask aligned top-left */
    bool align_sdpa;         /* align_opt set by --policy sdpa */
    const char *align_from;  /* "manifest", "--causal-align", "default" */
    fa_fix_kind fix;
    const char *fix_from;
    bool want_cap; /* a capture stage is compared */
    fa_config cfg, hcfg;
    uint32_t scale_used;
    bool torch_scale_same; /* float(1/sqrt(d)) in double gives it */
    bool need_bwd;
    uint16_t *in[4]; /* q, k, v, do: host order */
    uint32_t *gpu[N_ST];
    unsigned char *kmask[N_ST]; /* kept elements of a cut output (NULL:
                                   all) */
    uint32_t *emu[N_ST];
    uint32_t *delta;
    uint32_t *lse2; /* the forward's base-2 LSE for the flex backward */
    double *ex[N_ST];
    bool exact_run;
    /* the attention mask (the dump's attn_mask, or --mask) */
    bool man_mask_given;  /* the manifest's "attn_mask" (not null) */
    char man_mask_mod[32]; /* the manifest's "mask_mod" other than causal */
    bool has_mask;
    tensor mask_t;
    am_mask mask;
    char mask_src[SRC_MAX];
    cli_operand mask_opd;
    const char *exact_note;
    uint64_t exact_work, heads_skipped;
    stage_result r[N_ST];
    int first_div; /* first stage that differs, or -1 */
    size_t n_trace;
    o_trace trace[N_WORST];
    bool pass;
} diff_ctx;

/* The kernel is a fused GPU kernel's (fa_cli_fa2_like): the fa_dump
   stages, the ex2-sm90 default. */
static const fa_kernel *run_kernel(const diff_ctx *x);

static bool
fa2_like(const diff_ctx *x)
{
    if (x->sdpa && !x->kernel_named)
        return true; /* not yet picked: the fused GPU kernels */
    return fa_cli_fa2_like(run_kernel(x));
}

/* The description run: --kernel's, the named one, or the policy's. */
static const fa_kernel *
run_kernel(const diff_ctx *x)
{
    return x->kernel_path != NULL || x->kernel_named
               ? &x->kernel
               : fa_kernel_by_name(fa_policy_name(x->policy));
}

/* The launch: the manifest's launch_shape, else --launch, else the
   manifest's shape, else the tensors'; its KV heads in the tensors'
   proportion. */
static bool
fill_launch(diff_ctx *x)
{
    fa_cli_launch *l = &x->launch;
    size_t g = x->nhkv != 0 && x->nh % x->nhkv == 0 ? x->nh / x->nhkv : 1;

    if (x->man_launch_bh != 0) {
        l->batch = (size_t)x->man_launch_b;
        l->heads = (size_t)x->man_launch_h;
        l->from = "the manifest's launch_shape";
    } else if (x->launch_given) {
        if (x->launch_lengths && (l->nq != x->nq || l->nk != x->nk)) {
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
    l->kv_heads = l->heads / g;
    l->nq = x->nq;
    l->nk = x->nk;
    l->d = x->d;
    l->f16 = x->f16;
    l->sms = (unsigned)x->sms;
    return true;
}

/* The name of the description run. */
static const char *
run_name(const diff_ctx *x)
{
    return x->kernel_path != NULL || x->kernel_named
               ? x->kernel.name
               : fa_policy_name(x->policy);
}

/* m, l and acc: stages of one non-split pass. */
static bool
split_stage(int s)
{
    return s == ST_M || s == ST_L || s == ST_ACC;
}

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
#define SHAPE_MAX (TENSOR_MAX_DIMS * 24 + 4)

/* BITS32 (an FP32 pattern whose value lies on FMT) as FMT's pattern. */
static uint64_t
to_fmt(const sf_format *fmt, uint32_t bits32)
{
    sf_env env = cli_env_ieee();

    if (fmt == &sf_format_f32)
        return bits32;
    return sf_convert(fmt, &sf_format_f32, bits32, SF_RNE, &env);
}

/* "0x3F80 1.5" (FMT's bits and the shortest decimal) into BUF. */
static const char *
val_str(char *buf, size_t n, const sf_format *fmt, uint32_t bits32)
{
    char dec[64];
    int w = (int)(fmt->storage_bits + 3) / 4;

    snprintf(buf, n, "0x%0*" PRIX64 " %s", w, to_fmt(fmt, bits32),
             cli_f32_dec(dec, sizeof dec, bits32));
    return buf;
}

static const char *
g4(char *buf, size_t n, double x)
{
    if (isnan(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.4g", x);
    return buf;
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
    if (x->softcap == 0.0)
        x->softcap = mf.softcap;
    x->man_flex = mf.flex;
    memcpy(x->man_mask_mod, mf.mask_mod, sizeof x->man_mask_mod);
    return true;
}

/*----------------------------------------------------------------------------
 * The dump.
 *--------------------------------------------------------------------------*/
/* The backward is the math backend's autograd, which takes P from the
   forward and needs neither O nor LSE. */
static bool
bwd_math(const diff_ctx *x)
{
    const fa_kernel *k = run_kernel(x);

    return k != NULL && k->bwd == FA_BWD_MATH;
}

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

/* Checks tensor I's dtype and shape; false after an error message. */
static bool
check_tensor(diff_ctx *x, int i)
{
    const tensor *t = x->t[i];
    const tensor *q = x->t[T_Q], *k = x->t[T_K];
    uint64_t w[5];
    unsigned nd = 4;
    char sh[SHAPE_MAX], ws[SHAPE_MAX];
    bool same;

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
static bool
load_output(diff_ctx *x, int i, const sf_format *fmt, uint32_t *dst,
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
    rc = ut_read(path, key, input ? TENSOR_BF16 : TENSOR_ANY, x->dtype_given,
                 "--dtype", t, &x->info[i], &err);
    if (rc != TENSOR_OK && input && err.code == TENSOR_E_DTYPE
        && !x->dtype_given
        /* FP16 inputs: their dtype comes from the file */
        && ut_read(path, key, TENSOR_F16, false, "--dtype", t, &x->info[i],
                   &err16)
               == TENSOR_OK)
        rc = TENSOR_OK;
    if (rc == TENSOR_OK && is_attn_tensor(i) && !input
        && t->dtype != TENSOR_F32
        && !(t->dtype == TENSOR_F16 && !x->dtype_given))
        rc = ut_as_dtype(t, x->src[i], TENSOR_BF16, x->dtype_given, "--dtype",
                         &x->info[i], &err);
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

    if (x->layout_opt != UT_LAYOUT_UNSET) {
        x->layout = x->layout_opt;
        x->layout_from =
            x->man_layout != UT_LAYOUT_UNSET && x->man_layout != x->layout_opt
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
        if (x->policy_given || x->kernel_path != NULL)
            return true; /* the option wins; the header says which ran */
        if (!fa_kernel_parse(CMD, "--dump", "metadata \"kernel\"", m->value,
                             &x->kernel))
            return false;
        x->kernel_named = true;
        x->kernel_from_meta = true;
    } else if (strcmp(m->key, "exp") == 0 && !x->exp_given) {
        fa_cli_exp_default(&x->exp);
        if (!fa_cli_parse_exp(CMD, &x->exp, m->value))
            return false;
        x->exp_given = true;
        x->exp.from = "the file's metadata";
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
    bool split_auto;
    unsigned lean;

    if (!x->policy_given && x->kernel_path == NULL && !x->kernel_named
        && strcmp(x->man_backend, "flex") == 0) {
        /* a FlexAttention call (flex_dump.py, capture.py): its
           description */
        x->kernel = *fa_kernel_by_name("flex");
        x->kernel_named = true;
    }
    if (!x->policy_given && x->kernel_path == NULL) {
        /* PyTorch's choice with every backend enabled, or with the one
           the dump pinned (whose kernel variant cuDNN still chooses) */
        unsigned pinned = strcmp(x->man_backend, "cudnn") == 0 ? SDPA_EN_CUDNN
                          : strcmp(x->man_backend, "efficient") == 0
                              ? SDPA_EN_EFFICIENT
                          : strcmp(x->man_backend, "math") == 0 ? SDPA_EN_MATH
                                                                : 0;
        if (strcmp(x->man_backend, "default") == 0 || pinned != 0) {
            x->sdpa = true;
            x->sdpa_from = "manifest";
            if (pinned != 0) {
                x->sdpa_backends = pinned;
                x->sdpa_backends_given = true;
            }
        }
    }
    if (!x->sdpa)
        return true;
    sc = sdpa_case_default();
    /* the launch's batch and heads (cuDNN's decode splits depend on
       them): the manifest's launch_shape, else its shape, else the
       tensors' */
    sc.batch = (int64_t)x->launch.batch;
    sc.heads = (int64_t)x->launch.heads;
    sc.kv_heads = (int64_t)x->launch.kv_heads;
    sc.enable_gqa = x->nhkv != x->nh;
    sc.nq = (int64_t)x->nq;
    sc.nk = (int64_t)x->nk;
    sc.d = (int64_t)x->d;
    sc.dtype = x->f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
    sc.causal = x->causal_opt != CAUSAL_AUTO ? x->causal_opt == CAUSAL_YES
                : x->man_causal_given        ? x->man_causal
                                             : x->meta_causal_given
                                                   && x->meta_causal;
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
    if (x->sdpa_backends_given)
        sc.enabled = x->sdpa_backends;
    if (!sdpa_policy_pick(CMD, &sc, &k, &x->sdpa_ch, &split_auto, &lean))
        return false;
    sdpa_policy_note(CMD, &x->sdpa_ch, k);
    if (sc.causal && x->nq != x->nk && x->align_opt < 0
        && !x->man_align_given) {
        bool tl;
        if (!sdpa_policy_causal_align(CMD, &x->sdpa_ch, (int64_t)x->nq,
                                      (int64_t)x->nk, &tl))
            return false;
        x->align_opt = tl ? 1 : 0;
        x->align_sdpa = true;
    }
    x->kernel = *k;
    x->kernel_named = true;
    if (split_auto && x->splits_opt == 0 && x->man_splits == 0)
        x->splits_auto = true;
    if (lean > 1 && x->splits_opt == 0 && !x->splits_auto) {
        x->splits_opt = lean;
        x->sdpa_lean = true;
    }
    return true;
}

static bool
read_dump(diff_ctx *x)
{
    bool need[N_T];
    const char *label = x->dump != NULL ? x->dump : "the inputs";
    unsigned rank;

    if (x->dump != NULL && !read_dump_header(x))
        return false;
    if (!x->stage_given) {
        /* every stage the inputs can give (the intermediate ones under
           fa2) */
        for (int s = 0; s < N_ST; s++)
            x->want[s] =
                given(x, st_tensor[s]) && (!is_capture(s) || fa2_like(x));
        if (!given(x, T_DO)
            || (!bwd_math(x) && (!given(x, T_O) || !given(x, T_LSE)))) {
            /* a gradient named on the command line is never dropped
               silently: needed() names what its stage lacks */
            x->want[ST_DQ] = x->opd[T_DQ].arg != NULL;
            x->want[ST_DK] = x->opd[T_DK].arg != NULL;
            x->want[ST_DV] = x->opd[T_DV].arg != NULL;
        }
    }
    needed(x, need);
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
    {
        bool any = false;
        for (int s = 0; s < N_ST; s++)
            any = any || x->want[s];
        if (!any) {
            cli_error(CMD,
                      "%s: no stage to compare (expected at least one of "
                      "the tensors o, lse, dq, dk, dv, s, m, p, l, acc)",
                      label);
            return false;
        }
    }
    for (int i = 0; i < N_T; i++)
        if (need[i] && !load_tensor(x, i))
            return false;
    {
        const tensor *q = x->t[T_Q];
        char sh[SHAPE_MAX];
        if (q->ndim < 2 || q->ndim > 4 || q->n_elems == 0) {
            cli_error(CMD,
                      "%s: shape %s (expected [B, H, Nq, d], [H, Nq, d] or "
                      "[Nq, d], every dimension at least 1)",
                      x->src[T_Q],
                      cli_shape_str(sh, sizeof sh, q->ndim, q->shape));
            return false;
        }
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
    /* the forward tiles as the library resolves them for the kernel and
       the split count (a refused configuration is reported later) */
    if (x->splits_auto
        || (x->splits_opt == 0 && x->man_splits == 0
            && (x->man_launch_bh != 0 || x->launch_given
                || x->n_man_list == 4))) {
        /* the kernel's own rule on the launch: asked for, or the
           default once the launch is known */
        const char *rule;
        x->splits = fa_cli_launch_splits(run_kernel(x), &x->launch, &rule);
        snprintf(x->splits_buf, sizeof x->splits_buf,
                 "%s: %s on the launch B %zu, H %zu (%s)",
                 x->splits_auto ? "--splits auto" : "the launch's rule", rule,
                 x->launch.batch, x->launch.heads, x->launch.from);
        x->splits_from = x->splits_buf;
    } else if (x->splits_opt != 0) {
        x->splits = (size_t)x->splits_opt;
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
    if (x->dq_given) {
        x->dq_set = (size_t)x->dq_opt;
        x->dq_from = x->dq_opt == 0 ? "--dq-buffers auto" : "--dq-buffers";
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
    {
        fa_config c = x->kernel_path != NULL || x->kernel_named
                          ? fa_config_kernel_default(&x->kernel)
                          : fa_config_default(x->policy);
        c.shape.batch = x->nb;
        c.shape.heads = x->nh;
        c.shape.nq = x->nq;
        c.shape.nk = x->nk;
        c.shape.d = x->d;
        c.splits = x->splits;
        (void)dump_flex_apply(&x->man_flex, 0, &c);
        if (!fa_cli_log_for(CMD, x->kernel_path != NULL ? "--kernel" : "--policy", fa_config_kernel(&c), &x->logm))
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
    }
    for (int i = T_V; i < N_T; i++)
        if (need[i] && !check_tensor(x, i))
            return false;
    return check_manifest_shape(x);
}

/*----------------------------------------------------------------------------
 * The configuration.
 *--------------------------------------------------------------------------*/
static bool
build_config(diff_ctx *x)
{
    fa_config *c = &x->cfg;
    const char *why;
    float sf;

    /* Every setting that changes bits comes from the file or an option;
       an option given over the file's setting wins, and the report says
       so. */
    if (x->causal_opt != CAUSAL_AUTO) {
        bool file_given = x->man_causal_given || x->meta_causal_given;
        bool file_causal =
            x->man_causal_given ? x->man_causal : x->meta_causal;
        x->causal = x->causal_opt == CAUSAL_YES;
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
    if (x->kernel_path != NULL || x->kernel_named)
        *c = fa_config_kernel_default(&x->kernel);
    else
        *c = fa_config_default(x->policy);
    c->splits = x->splits;
    c->dq_splits = x->dq_set;
    c->sms = (size_t)x->sms;
    c->shape.batch = x->nb;
    c->shape.heads = x->nh;
    c->shape.nq = x->nq;
    c->shape.nk = x->nk;
    c->shape.d = x->d;
    c->causal = x->causal;
    x->top_left = x->align_opt >= 0 ? x->align_opt == 1 : x->man_top_left;
    x->align_from = x->align_sdpa       ? "--policy sdpa"
                    : x->align_opt >= 0 ? "--causal-align"
                    : x->man_align_given ? x->man_align_from
                                         : "default";
    c->causal_top_left = x->causal && x->top_left;
    c->softcap = x->softcap;
    /* FlexAttention's pinned tiles and delta kernel, --delta-xblock
       first */
    c->delta_xblock = (size_t)x->delta_xblock;
    x->delta_from = dump_flex_apply(
        &x->man_flex,
        (x->man_launch_bh != 0 ? x->man_launch_bh : (uint64_t)(x->nb * x->nh))
            * x->nq,
        c);
    if (x->scale_given) {
        memcpy(&sf, &x->scale_bits, sizeof sf);
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
    if (x->fix_given) {
        x->fix = x->fix_opt;
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
    if (!x->exp_given && !fa_cli_exp_for(CMD, fa_config_kernel(c), &x->exp))
        return false;
    c->exp = x->exp.model;
    if (!fa_cli_log_for(CMD, x->kernel_path != NULL ? "--kernel" : "--policy", fa_config_kernel(c), &x->logm))
        return false;
    c->log = fa_cli_log_model(&x->logm);
    c->rcp = fa_cli_rcp_model(&x->logm);
    c->input = x->f16 ? &sf_format_f16 : NULL;
    if (!fa_cli_inputs_defined(CMD, x->kernel_path != NULL ? "--kernel" : "--policy", fa_config_kernel(c), x->f16))
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
    x->scale_used = fa_scale_bits(c);
    if (x->scale_given) {
        /* the file's own scale, to note an override */
        fa_config fc = *c;
        bool file_says = true;
        fc.scale = fa_config_default(x->policy).scale;
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
    for (int s = 0; s < N_ST; s++) {
        x->r[s].fmt = fa_output_format(c, st_format_name[s]);
        if (x->r[s].fmt == NULL)
            x->r[s].fmt = &sf_format_f32;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Computation.
 *--------------------------------------------------------------------------*/
/* The heads of stage S as the dump holds it: the KV heads for dK and dV
   (grouped-query heads), else the query heads. */
static size_t
stage_heads(const diff_ctx *x, int s)
{
    return s == ST_DK || s == ST_DV ? x->nb * x->nhkv : x->heads;
}

static size_t
stage_per_head(const diff_ctx *x, int s)
{
    switch (s) {
    case ST_LSE:
        return x->nq;
    case ST_DK:
    case ST_DV:
        return x->nk * x->d;
    case ST_S:
    case ST_P:
        return x->nq * x->nk;
    case ST_M:
    case ST_L:
        return x->nq * x->tc;
    case ST_ACC:
        return x->nq * x->tc * x->d;
    default:
        return x->nq * x->d;
    }
}

/* KV blocks the fa2 kernel visits for query block MB (its n_block_max;
   the library's rule, with C's truncating division). */
static size_t
fa2_blocks(const diff_ctx *x, size_t mb)
{
    long long num, n;

    if (!x->causal)
        return x->tc;
    num = (long long)((mb + 1) * x->br)
          + (x->top_left ? 0 : (long long)x->nk - (long long)x->nq);
    n = (num + (long long)x->bc - 1) / (long long)x->bc;
    if (n <= 0)
        return 0;
    return (size_t)n < x->tc ? (size_t)n : x->tc;
}

static bool
allocate(diff_ctx *x)
{
    for (int i = 0; i < 4; i++) {
        const tensor *t = x->t[i];
        if (t == NULL)
            continue;
        x->in[i] = malloc((size_t)t->n_elems * sizeof(uint16_t));
        if (x->in[i] == NULL)
            goto nomem;
        for (uint64_t j = 0; j < t->n_elems; j++)
            x->in[i][j] = (uint16_t)tensor_get_bits(t, j);
    }
    for (int s = 0; s < N_ST; s++) {
        /* the emulator's per query head (dK, dV of grouped heads summed
           later), the GPU's as the dump holds them */
        size_t n = x->heads * stage_per_head(x, s);
        size_t n_gpu = stage_heads(x, s) * stage_per_head(x, s);
        bool gpu = x->want[s] || (x->need_bwd && !bwd_math(x)
                                  && (s == ST_O || s == ST_LSE));
        if (gpu) {
            const dump_kept *kp = &x->kept[st_tensor[s]];
            if (kp->kept && !x->want[s]) {
                cli_error(CMD,
                          "%s: kept in part (manifest: outputs_kept), but "
                          "the backward reads the GPU's whole %s",
                          x->src[st_tensor[s]], st_names[s]);
                return false;
            }
            x->gpu[s] = calloc(n_gpu, sizeof(uint32_t));
            if (x->gpu[s] == NULL)
                goto nomem;
            if (kp->kept) {
                x->kmask[s] = calloc(n_gpu, 1);
                if (x->kmask[s] == NULL)
                    goto nomem;
            }
            if (!load_output(x, st_tensor[s], x->r[s].fmt, x->gpu[s],
                             x->kmask[s]))
                return false;
        }
        if (is_capture(s) && !x->want[s])
            continue;
        x->emu[s] = calloc(n, sizeof(uint32_t));
        if (x->emu[s] == NULL)
            goto nomem;
        if (x->exact_run && x->want[s] && !is_capture(s)) {
            x->ex[s] = calloc(n, sizeof(double));
            if (x->ex[s] == NULL)
                goto nomem;
        }
    }
    x->delta = calloc(x->heads * x->nq, sizeof(uint32_t));
    if (x->delta == NULL)
        goto nomem;
    if (x->need_bwd && fa_config_kernel(&x->cfg)->bwd == FA_BWD_FLEX) {
        /* the forward's base-2 LSE, which the flex backward reads */
        x->lse2 = calloc(x->heads * x->nq, sizeof(uint32_t));
        if (x->lse2 == NULL)
            goto nomem;
    }
    return true;
nomem:
    cli_error(CMD, "out of memory");
    return false;
}

/* The accumulator after each visited KV block of head HH into
   x->emu[ST_ACC]: OBAR holds Tc slots of [Nq, d]; slot 0 is the whole
   problem's O~ on entry.  Slot j (j >= 1) gets the O~ of the problem
   restricted to the keys from block j on: the kernel visits blocks in
   reverse, so after it has visited block j a row has seen exactly that
   suffix, in the same order, with the same tiles and mask (the causal
   offset Nk - Nq and n_block_max both shift by whole blocks).  0 or -1. */
static int
acc_head(const diff_ctx *x, size_t hh, const uint16_t *q, const uint16_t *k,
         const uint16_t *v, uint32_t *obar)
{
    size_t nq = x->nq, d = x->d, tc = x->tc;
    uint32_t *o = malloc(nq * d * sizeof *o), *lse = malloc(nq * sizeof *lse);
    uint32_t *dst = x->emu[ST_ACC] + hh * nq * tc * d;
    int rc = 0;

    if (o == NULL || lse == NULL)
        rc = -1;
    for (size_t j = 1; j < tc && rc == 0; j++) {
        fa_config c = x->hcfg;
        fa_capture cap;
        sf_env env = cli_env_ieee();
        size_t off = j * x->bc * d;
        memset(&cap, 0, sizeof cap);
        cap.obar = obar + j * nq * d;
        c.shape.nk = x->nk - j * x->bc;
        if (fa_forward(&c, q, k + off, v + off, o, lse, &cap, &env) != 0)
            rc = -1;
    }
    for (size_t i = 0; i < nq && rc == 0; i++) {
        size_t nvb = fa2_blocks(x, i / x->br);
        for (size_t vi = 0; vi < tc; vi++) {
            size_t slot = vi < nvb ? nvb - 1 - vi : 0;
            memcpy(dst + (i * tc + vi) * d, obar + (slot * nq + i) * d,
                   d * sizeof *dst);
        }
    }
    free(o);
    free(lse);
    return rc;
}

/* The K and V head that query head HH (of B H) reads (grouped-query
   heads: H / Hkv query heads per KV head, in order). */
static size_t
kv_head(const diff_ctx *x, size_t hh)
{
    size_t g = x->nhkv != 0 && x->nh % x->nhkv == 0 ? x->nh / x->nhkv : 1;

    return hh / x->nh * (x->nh / g) + hh % x->nh / g;
}

/* The query heads per KV head when the description's backward walks a
   group at once (gqa_dkv "chain"), else 1. */
static size_t
chained_groups(const diff_ctx *x)
{
    return fa_cli_chained_groups(&x->cfg, x->nh, x->nhkv);
}

/* The backward of group GI (gqa_dkv "chain": its G query heads against
   their KV head, at once); 0 or -1. */
static int
emu_group(const diff_ctx *x, size_t gi)
{
    size_t g = chained_groups(x), hh = gi * g;
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    sf_env env = cli_env_ieee();
    fa_attn_mask hm;
    fa_config hc = am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL,
                                  hh, &hm);

    hc.shape.heads = g;
    hc.gqa_group = g;
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    return fa_backward(&hc, x->in[T_Q] + hh * nq * d, x->in[T_K] + kh * nk * d,
                       x->in[T_V] + kh * nk * d,
                       x->gpu[ST_O] != NULL ? x->gpu[ST_O] + hh * nq * d
                                            : NULL,
                       x->gpu[ST_LSE] != NULL ? x->gpu[ST_LSE] + hh * nq
                                              : NULL,
                       x->in[T_DO] + hh * nq * d, x->delta + hh * nq,
                       x->emu[ST_DQ] + hh * nq * d,
                       x->emu[ST_DK] + hh * nk * d,
                       x->emu[ST_DV] + hh * nk * d, NULL, &env);
}

/* The emulator on head HH; 0 or -1. */
static int
emu_head(const diff_ctx *x, size_t hh)
{
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint16_t *q = x->in[T_Q] + hh * nq * d;
    const uint16_t *k = x->in[T_K] + kh * nk * d;
    const uint16_t *v = x->in[T_V] + kh * nk * d;
    sf_env env = cli_env_ieee();
    fa_capture cap;
    uint32_t *obar = NULL;
    int rc = 0;

    memset(&cap, 0, sizeof cap);
    if (x->want[ST_S])
        cap.s = x->emu[ST_S] + hh * nq * nk;
    if (x->want[ST_P])
        cap.p = x->emu[ST_P] + hh * nq * nk;
    if (x->want[ST_M])
        cap.m = x->emu[ST_M] + hh * nq * x->tc;
    if (x->want[ST_L])
        cap.l = x->emu[ST_L] + hh * nq * x->tc;
    if (x->want[ST_ACC]) {
        /* O~ of the whole problem and of each suffix of KV blocks */
        obar = malloc(x->tc * nq * d * sizeof *obar);
        if (obar == NULL)
            return -1;
        cap.obar = obar;
    }
    if (x->lse2 != NULL)
        cap.lse_kernel = x->lse2 + hh * nq;
    fa_attn_mask hm;
    fa_config hc = am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL,
                                  hh, &hm);
    if (fa_forward(&hc, q, k, v, x->emu[ST_O] + hh * nq * d,
                   x->emu[ST_LSE] + hh * nq,
                   x->want_cap || x->lse2 != NULL ? &cap : NULL, &env)
        != 0) {
        free(obar);
        return -1;
    }
    if (obar != NULL) {
        rc = acc_head(x, hh, q, k, v, obar);
        free(obar);
        if (rc != 0)
            return rc;
    }
    if (!x->need_bwd || chained_groups(x) > 1)
        return 0; /* the group's backward runs once (emu_group) */
    env = cli_env_ieee();
    hc.lse_kernel = x->lse2 != NULL ? x->lse2 + hh * nq : NULL;
    return fa_backward(&hc, q, k, v,
                       x->gpu[ST_O] != NULL ? x->gpu[ST_O] + hh * nq * d
                                            : NULL,
                       x->gpu[ST_LSE] != NULL ? x->gpu[ST_LSE] + hh * nq
                                              : NULL,
                       x->in[T_DO] + hh * nq * d,
                       x->delta + hh * nq, x->emu[ST_DQ] + hh * nq * d,
                       x->emu[ST_DK] + hh * nk * d,
                       x->emu[ST_DV] + hh * nk * d, NULL, &env);
}

/* The exact reference of head HH: AX_OK or an ax code. */
static int
exact_head(const diff_ctx *x, size_t hh)
{
    fa_attn_mask hm;
    fa_config hc = am_head_config(&x->hcfg, x->has_mask ? &x->mask : NULL,
                                  hh, &hm);
    size_t nq = x->nq, nk = x->nk, d = x->d, kh = kv_head(x, hh);
    const uint16_t *q = x->in[T_Q] + hh * nq * d;
    const uint16_t *k = x->in[T_K] + kh * nk * d;
    const uint16_t *v = x->in[T_V] + kh * nk * d;
    ax_options opt = {0, AX_DIRECT};
    ax_outputs out;

    memset(&out, 0, sizeof out);
    if (x->ex[ST_O] != NULL)
        out.o.d = x->ex[ST_O] + hh * nq * d;
    if (x->ex[ST_LSE] != NULL)
        out.lse.d = x->ex[ST_LSE] + hh * nq;
    if (!x->need_bwd)
        return ax_forward_ex(&hc, &opt, q, k, v, &out);
    if (x->ex[ST_DQ] != NULL)
        out.dq.d = x->ex[ST_DQ] + hh * nq * d;
    if (x->ex[ST_DK] != NULL)
        out.dk.d = x->ex[ST_DK] + hh * nk * d;
    if (x->ex[ST_DV] != NULL)
        out.dv.d = x->ex[ST_DV] + hh * nk * d;
    return ax_backward_ex(&hc, &opt, q, k, v, x->in[T_DO] + hh * nq * d,
                          NULL, &out);
}

static int
thread_count(const diff_ctx *x)
{
#ifdef _OPENMP
    int n = omp_get_max_threads();
    if ((size_t)n > x->heads)
        n = (int)x->heads;
    return n < 1 ? 1 : n;
#else
    (void)x;
    return 1;
#endif
}

/* Grouped-query heads: the emulator's dK and dV of each query head
   become the KV head's by the description's rule (fa_cli_gqa_reduce),
   with the exact values.  False after an error message. */
static bool
reduce_groups(diff_ctx *x)
{
    size_t g = x->nhkv != 0 ? x->nh / x->nhkv : 1;

    if (!x->need_bwd || g <= 1)
        return true;
    for (int s = ST_DK; s <= ST_DV; s++)
        if (x->emu[s] != NULL
            && !fa_cli_gqa_reduce(CMD, &x->cfg, x->nb * x->nhkv, g,
                                  x->nk * x->d, x->emu[s], x->ex[s]))
            return false;
    return true;
}

static bool
compute(diff_ctx *x)
{
    long long nh = (long long)x->heads;
    int failed = 0, nt = thread_count(x);
    uint64_t skipped = 0;

#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(|                                                               \
              : failed)
#else
    (void)nt;
#endif
    for (long long hh = 0; hh < nh; hh++)
        if (emu_head(x, (size_t)hh) != 0)
            failed |= 1;
    if (x->need_bwd && chained_groups(x) > 1) {
        long long ng = nh / (long long)chained_groups(x);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : failed)
#endif
        for (long long gi = 0; gi < ng; gi++)
            if (emu_group(x, (size_t)gi) != 0)
                failed |= 1;
    }
    if (failed) {
        cli_error(CMD, "the attention library failed (out of memory for its "
                       "working memory)");
        return false;
    }
    if (!x->exact_run)
        return reduce_groups(x);
    if (!mpfr_buildopt_tls_p())
        nt = 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)                 \
    reduction(| : failed) reduction(+ : skipped)
#endif
    for (long long hh = 0; hh < nh; hh++) {
        int rc = exact_head(x, (size_t)hh);
        if (rc == AX_OK)
            continue;
        if (rc == AX_EINPUT || rc == AX_ERANGE) {
            /* no exact values for this head */
            for (int s = 0; s < N_ST; s++)
                if (x->ex[s] != NULL) {
                    size_t per = stage_per_head(x, s);
                    for (size_t j = 0; j < per; j++)
                        x->ex[s][(size_t)hh * per + j] = NAN;
                }
            skipped++;
        } else {
            failed |= 1;
        }
    }
    mpfr_free_cache();
    if (failed) {
        cli_error(CMD, "the exact reference failed (out of memory)");
        return false;
    }
    x->heads_skipped = skipped;
    return reduce_groups(x);
}

/*----------------------------------------------------------------------------
 * The comparison.
 *--------------------------------------------------------------------------*/

/* (computed - exact) in ulps of FMT at the exact value E. */
static double
err_ulps(const sf_format *fmt, uint32_t bits32, double e)
{
    double u = ax_error_ulps(&sf_format_f32, bits32, e);

    if (fmt != &sf_format_f32 && isfinite(u))
        u = ldexp(u, ax_ulp_exp(&sf_format_f32, e) - ax_ulp_exp(fmt, e));
    return u;
}

/* The hash (analysis/dump_outputs.h) of the emulator's whole stage S as
   the dump stores it: BF16 / F16 patterns, or FP32 ones. */
static uint64_t
emu_hash(const diff_ctx *x, int s)
{
    const tensor *t = x->t[st_tensor[s]];
    const sf_format *f = x->r[s].fmt;
    size_t n = stage_heads(x, s) * stage_per_head(x, s);
    uint64_t h = 0;

    if (t->dtype == TENSOR_F32) {
        uint32_t *b = malloc(n * sizeof *b);
        if (b == NULL)
            return 0;
        for (size_t j = 0; j < n; j++) {
            sf_env env = cli_env_ieee();
            b[j] = f == &sf_format_f32
                       ? x->emu[s][j]
                       : (uint32_t)sf_convert(&sf_format_f32, f,
                                              to_fmt(f, x->emu[s][j]), SF_RNE,
                                              &env);
        }
        h = dump_hash32(b, n);
        free(b);
    } else {
        uint16_t *b = malloc(n * sizeof *b);
        if (b == NULL)
            return 0;
        for (size_t j = 0; j < n; j++)
            b[j] = (uint16_t)to_fmt(f, x->emu[s][j]);
        h = dump_hash16(b, n);
        free(b);
    }
    return h;
}

static void
compare_stage(diff_ctx *x, int s)
{
    stage_result *r = &x->r[s];
    size_t n = stage_heads(x, s) * stage_per_head(x, s);
    const uint32_t *g = x->gpu[s], *m = x->emu[s];

    r->on = true;
    cmp_init(&r->c, N_WORST);
    r->whole = n;
    bias_cell_init(&r->err_gpu);
    bias_cell_init(&r->err_emu);
    if (x->kmask[s] != NULL) {
        r->kept = true;
        r->emu_hash = emu_hash(x, s);
        r->hash_equal = r->emu_hash == x->kept[st_tensor[s]].hash;
    }
    for (size_t j = 0; j < n; j++) {
        diff_elem e;
        if (x->kmask[s] != NULL && !x->kmask[s][j])
            continue; /* a row the dump does not keep */
        e.flat = j;
        e.dist = 0;
        e.x = g[j];
        e.y = m[j];
        cmp_add(&r->c, r->fmt, to_fmt(r->fmt, g[j]), to_fmt(r->fmt, m[j]),
                x->tol, e);
        if (x->ex[s] != NULL) {
            double ex = x->ex[s][j];
            if (!isfinite(ex)) {
                r->skipped++;
                continue;
            }
            bias_cell_add(&r->err_gpu, err_ulps(r->fmt, g[j], ex));
            bias_cell_add(&r->err_emu, err_ulps(r->fmt, m[j], ex));
        }
    }
    r->have_exact = x->ex[s] != NULL;
    /* a cut output: the hash tells bit-equality of the whole tensor only,
       so it decides with --tol 0 */
    r->pass = r->c.within == r->c.elements && (!r->kept || r->hash_equal
                                           || x->tol > 0);
}

/* The index of flat element I of stage S: [b, h, row, col] ([b, h, row]
   for lse, [b, h, row, key] for s and p, [b, h, row, block] for m and l,
   [b, h, row, block, col] for acc). */
static unsigned
split_index(const diff_ctx *x, int s, uint64_t i, uint64_t idx[5])
{
    uint64_t rows = s == ST_DK || s == ST_DV ? x->nk : x->nq;
    uint64_t inner[2];
    unsigned ni = 0, nd;

    switch (s) {
    case ST_LSE:
        break;
    case ST_S:
    case ST_P:
        inner[ni++] = x->nk;
        break;
    case ST_M:
    case ST_L:
        inner[ni++] = x->tc;
        break;
    case ST_ACC:
        inner[ni++] = x->tc;
        inner[ni++] = x->d;
        break;
    default:
        inner[ni++] = x->d;
        break;
    }
    nd = 3 + ni;
    for (unsigned j = ni; j-- > 0;) {
        idx[3 + j] = i % inner[j];
        i /= inner[j];
    }
    idx[2] = i % rows;
    i /= rows;
    if (s == ST_DK || s == ST_DV) {
        /* K's heads: the file's KV head index */
        idx[1] = i % x->nhkv;
        idx[0] = i / x->nhkv;
        return nd;
    }
    idx[1] = i % x->nh;
    idx[0] = i / x->nh;
    /* a file that keeps some heads: the launch's indices */
    if (x->man_batch_from_given)
        idx[0] = x->man_batch_from[x->n_batch_from == 0 ? 0 : idx[1]];
    if (x->man_heads_kept_given)
        idx[1] = x->man_heads_kept[idx[1]];
    return nd;
}

/* Whether the GPU's and the emulator's values of stage S differ at flat
   index J (in the stage's format). */
static bool
differs(const diff_ctx *x, int s, size_t j)
{
    const sf_format *f = x->r[s].fmt;

    if (x->kmask[s] != NULL && !x->kmask[s][j])
        return false; /* not kept: unknown */
    return to_fmt(f, x->gpu[s][j]) != to_fmt(f, x->emu[s][j]);
}

/* Where the row of O element FLAT first diverges: KV blocks in visiting
   order, in each the stages s, m, p (the row's keys of the block), l and
   acc (the element's column). */
static void
trace_o(const diff_ctx *x, o_trace *tr)
{
    size_t d = x->d, nq = x->nq, nk = x->nk, tc = x->tc;
    size_t col = (size_t)(tr->flat % d), row = (size_t)(tr->flat / d);
    size_t i = row % nq, nvb = fa2_blocks(x, i / x->br);

    tr->found = false;
    for (size_t vi = 0; vi < nvb; vi++) {
        size_t jb = nvb - 1 - vi, k0 = jb * x->bc;
        size_t k1 = k0 + x->bc < nk ? k0 + x->bc : nk;
        size_t xm = row * tc + vi;
        int st = -1;
        for (size_t key = k0; key < k1 && st < 0; key++)
            if (differs(x, ST_S, row * nk + key))
                st = ST_S;
        if (st < 0 && differs(x, ST_M, xm))
            st = ST_M;
        for (size_t key = k0; key < k1 && st < 0; key++)
            if (differs(x, ST_P, row * nk + key))
                st = ST_P;
        if (st < 0 && differs(x, ST_L, xm))
            st = ST_L;
        if (st < 0 && differs(x, ST_ACC, xm * d + col))
            st = ST_ACC;
        if (st >= 0) {
            tr->found = true;
            tr->visit = vi;
            tr->block = jb;
            tr->stage = st;
            return;
        }
    }
    tr->stage = ST_O;
}

/* The first divergent stage, and the traces of the worst O elements. */
static void
locate(diff_ctx *x)
{
    bool all = true;

    x->first_div = -1;
    for (int s = 0; s < ST_DQ; s++)
        if (x->r[s].on && x->r[s].c.differ > 0) {
            x->first_div = s;
            break;
        }
    for (int s = ST_S; s <= ST_O; s++)
        all = all && x->want[s];
    if (!all)
        return;
    for (size_t n = 0; n < x->r[ST_O].c.n_worst; n++) {
        x->trace[n].flat = x->r[ST_O].c.worst[n].flat;
        trace_o(x, &x->trace[n]);
    }
    x->n_trace = x->r[ST_O].c.n_worst;
}

/*----------------------------------------------------------------------------
 * Reports.
 *--------------------------------------------------------------------------*/
static void
text_scale(cli_buf *b, const diff_ctx *x)
{
    char v[64];

    cli_buf_printf(b, "  scale %s (FP32 0x%08" PRIX32 "), ",
                   cli_f32_dec(v, sizeof v, x->scale_used), x->scale_used);
    if (x->scale_given)
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
                       x->delta_xblock != 0 ? "--delta-xblock"
                       : x->delta_from != NULL ? x->delta_from
                                               : "default");
}

static void
text_stage(cli_buf *b, const diff_ctx *x, int s)
{
    const stage_result *r = &x->r[s];
    char buf[64], sh[SHAPE_MAX], g[128], m[128];
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
    if (r->c.n_worst > 0) {
        cli_buf_puts(b, "  worst elements (largest distance first):\n");
        for (size_t i = 0; i < r->c.n_worst; i++) {
            const diff_elem *e = &r->c.worst[i];
            uint64_t idx[5];
            unsigned nd = split_index(x, s, e->flat, idx);
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
    if (r->have_exact) {
        bias_summary sg, se;
        char v[4][32];
        bias_summarize(&r->err_gpu, &sg);
        bias_summarize(&r->err_emu, &se);
        snprintf(buf, sizeof buf, "against exact (ulps of %s)", r->fmt->name);
        cli_buf_printf(b, "  %-28s %7s %10s %10s %7s %7s %7s\n", buf, "n",
                       "mean", "se", "neg", "zero", "pos");
        cli_buf_printf(b,
                       "  %-28s %7" PRIu64 " %10s %10s %7" PRIu64 " %7" PRIu64
                       " %7" PRIu64 "\n",
                       "  gpu - exact", sg.n, g4(v[0], sizeof v[0], sg.mean),
                       g4(v[1], sizeof v[1], sg.se), r->err_gpu.neg,
                       r->err_gpu.zero, r->err_gpu.pos);
        cli_buf_printf(b,
                       "  %-28s %7" PRIu64 " %10s %10s %7" PRIu64 " %7" PRIu64
                       " %7" PRIu64 "\n",
                       "  emulator - exact", se.n,
                       g4(v[2], sizeof v[2], se.mean),
                       g4(v[3], sizeof v[3], se.se), r->err_emu.neg,
                       r->err_emu.zero, r->err_emu.pos);
        if (r->skipped > 0)
            cli_buf_printf(b,
                           "    %" PRIu64 " element%s without a finite "
                           "exact value left out\n",
                           r->skipped, r->skipped == 1 ? "" : "s");
    }
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
        unsigned nd = split_index(x, ST_O, tr->flat, idx);
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
    if (x->layout == UT_LAYOUT_BNHD || x->layout_opt != UT_LAYOUT_UNSET
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

static void
text_report(const diff_ctx *x, cli_buf *b)
{
    int n_fail = 0, n_on = 0;

    cli_buf_printf(b, "bf16emu diff: %s\n",
                   x->dump != NULL ? x->dump : x->src[T_Q]);
    cli_buf_printf(b,
                   "  B %zu, H %zu, Nq %zu, Nk %zu, d %zu; policy %s%s, exp "
                   "%s (%s), causal %s (%s)\n",
                   x->nb, x->nh, x->nq, x->nk, x->d, run_name(x),
                   x->kernel_from_meta ? " (the file's description)" : "",
                   x->exp.name, x->exp.from, x->causal ? "yes" : "no",
                   x->causal_from);
    if (x->causal && x->top_left && x->nq != x->nk)
        cli_buf_printf(b,
                       "  causal mask top-left aligned (key j masked for "
                       "query i when j > i; %s)\n",
                       x->align_from);
    if (x->sdpa)
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
    cli_json_double(j, "mean", s.mean);
    cli_json_double(j, "se", s.se);
    cli_json_double(j, "t", s.t);
    cli_json_double(j, "ci_lo", s.ci_lo);
    cli_json_double(j, "ci_hi", s.ci_hi);
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
    for (unsigned i = 0; i < CMP_DIST_BUCKETS; i++) {
        uint64_t lo, hi;
        if (r->c.hist[i] == 0)
            continue;
        cli_json_object_begin(j, NULL);
        cli_json_string(j, "bucket",
                        cmp_dist_bucket_label(buf, sizeof buf, i));
        if (i == CMP_DIST_BUCKET_INF) {
            cli_json_null(j, "min");
            cli_json_null(j, "max");
        } else {
            cmp_dist_bucket_bounds(i, &lo, &hi);
            cli_json_int(j, "min", (long long)lo);
            cli_json_int(j, "max", (long long)hi);
        }
        cli_json_int(j, "count", (long long)r->c.hist[i]);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_array_begin(j, "worst");
    for (size_t i = 0; i < r->c.n_worst; i++) {
        const diff_elem *e = &r->c.worst[i];
        uint64_t idx[5];
        unsigned nd = split_index(x, s, e->flat, idx);
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

static void
json_report(const diff_ctx *x, cli_json *j)
{
    char buf[64];

    cli_json_object_begin(j, NULL);
    cli_json_string(j, "command", "diff");
    cli_json_string(j, "version", cli_version());
    cli_json_string(j, "dump", x->dump);
    cli_json_bool(j, "manifest", x->have_manifest);
    cli_json_object_begin(j, "shape");
    cli_json_int(j, "batch", (long long)x->nb);
    cli_json_int(j, "heads", (long long)x->nh);
    cli_json_int(j, "nq", (long long)x->nq);
    cli_json_int(j, "nk", (long long)x->nk);
    cli_json_int(j, "d", (long long)x->d);
    cli_json_object_end(j);
    cli_json_string(j, "policy", run_name(x));
    if (x->sdpa) {
        cli_json_object_begin(j, "sdpa");
        cli_json_string(j, "from", x->sdpa_from);
        cli_json_string(j, "backend", sdpa_backend_name(x->sdpa_ch.backend));
        cli_json_string(j, "variant", x->sdpa_ch.variant);
        cli_json_string(j, "reason", x->sdpa_ch.reason);
        cli_json_object_end(j);
    }
    cli_json_string(j, "exp", x->exp.name);
    cli_json_string(j, "exp_from", x->exp.from);
    cli_json_bool(j, "causal", x->causal);
    cli_json_bool(j, "causal_top_left", x->causal && x->top_left);
    cli_json_string(j, "causal_from", x->causal_from);
    cli_json_bool(j, "causal_override", x->causal_override);
    cli_json_string(j, "layout", ut_layout_name(x->layout));
    cli_json_string(j, "layout_from", x->layout_from);
    if (x->heads_subset) {
        cli_json_int(j, "launch_heads", (long long)x->launch_heads);
        if (x->man_heads_kept_given)
            cli_json_shape(j, "heads_kept", (unsigned)x->n_heads_kept,
                           x->man_heads_kept);
        else
            cli_json_null(j, "heads_kept");
        if (x->man_batch_from_given)
            cli_json_shape(j, "batch_from",
                           (unsigned)(x->n_batch_from == 0 ? 1
                                                           : x->n_batch_from),
                           x->man_batch_from);
    }
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
    cli_json_object_begin(j, "scale");
    snprintf(buf, sizeof buf, "0x%08" PRIX32, x->scale_used);
    cli_json_string(j, "bits", buf);
    cli_json_string(j, "value", cli_f32_dec(buf, sizeof buf, x->scale_used));
    cli_json_string(j, "from",
                    x->scale_given        ? "--scale"
                    : x->man_scale_number ? "manifest"
                    : x->scale_meta       ? "metadata"
                                          : "1/sqrt(d)");
    cli_json_bool(j, "torch_default_same", x->torch_scale_same);
    cli_json_bool(j, "override", x->scale_override);
    cli_json_object_end(j);
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
    if (x->want_cap) {
        cli_json_object_begin(j, "kernel");
        cli_json_int(j, "br", (long long)x->br);
        cli_json_int(j, "bc", (long long)x->bc);
        cli_json_int(j, "tc", (long long)x->tc);
        cli_json_object_end(j);
        if (x->first_div < 0)
            cli_json_null(j, "first_divergent_stage");
        else
            cli_json_string(j, "first_divergent_stage",
                            st_names[x->first_div]);
        cli_json_array_begin(j, "o_trace");
        for (size_t n = 0; n < x->n_trace; n++) {
            const o_trace *tr = &x->trace[n];
            uint64_t idx[5];
            unsigned nd = split_index(x, ST_O, tr->flat, idx);
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
    cli_json_bool(j, "pass", x->pass);
    cli_json_object_end(j);
    cli_json_finish(j);
}

/*----------------------------------------------------------------------------
 * Options.
 *--------------------------------------------------------------------------*/
enum
{
    O_HELP,
    O_DUMP,
    O_POLICY,
    O_KERNEL,
    O_SDPA_BACKENDS,
    O_SPLITS,
    O_DQ_BUFFERS,
    O_SMS,
    O_LAUNCH,
    O_STAGE,
    O_EXP,
    O_FIX,
    O_CAUSAL,
    O_NO_CAUSAL,
    O_CAUSAL_ALIGN,
    O_SCALE,
    O_SOFTCAP,
    O_DELTA_XBLOCK,
    O_TOLERANCE,
    O_EXACT,
    O_NO_EXACT,
    O_JSON,
    O_ROWSUM,
    O_DTYPE,
    O_LAYOUT,
    O_CALL,
    O_MASK,
    O_TENSOR /* O_TENSOR + T_Q .. T_DV: --q, --k, ... FILE[:KEY] */
};

static const cli_option options[] = {{"help", false, O_HELP},
                                     {"dump", true, O_DUMP},
                                     {"policy", true, O_POLICY},
                                     {"stage", true, O_STAGE},
                                     {"kernel", true, O_KERNEL},
                                     {"sdpa-backends", true, O_SDPA_BACKENDS},
                                     {"splits", true, O_SPLITS},
                                     {"dq-buffers", true, O_DQ_BUFFERS},
                                     {"sms", true, O_SMS},
                                     {"launch", true, O_LAUNCH},
                                     {"exp", true, O_EXP},
                                     {"fix", true, O_FIX},
                                     {"causal", false, O_CAUSAL},
                                     {"no-causal", false, O_NO_CAUSAL},
                                     {"causal-align", true, O_CAUSAL_ALIGN},
                                     {"scale", true, O_SCALE},
                                     {"softcap", true, O_SOFTCAP},
                                     {"delta-xblock", true, O_DELTA_XBLOCK},
                                     {"tolerance", true, O_TOLERANCE},
                                     {"exact", false, O_EXACT},
                                     {"no-exact", false, O_NO_EXACT},
                                     {"json", false, O_JSON},
                                     {"fa2-rowsum", true, O_ROWSUM},
                                     {"dtype", true, O_DTYPE},
                                     {"layout", true, O_LAYOUT},
                                     {"call", true, O_CALL},
                                     {"mask", true, O_MASK},
                                     {"q", true, O_TENSOR + T_Q},
                                     {"k", true, O_TENSOR + T_K},
                                     {"v", true, O_TENSOR + T_V},
                                     {"do", true, O_TENSOR + T_DO},
                                     {"o", true, O_TENSOR + T_O},
                                     {"lse", true, O_TENSOR + T_LSE},
                                     {"dq", true, O_TENSOR + T_DQ},
                                     {"dk", true, O_TENSOR + T_DK},
                                     {"dv", true, O_TENSOR + T_DV},
                                     {NULL, false, 0}};

void
diff_help(FILE *out)
{
    fputs(
        "usage: bf16emu diff --dump FILE [--policy fa2] [--stage LIST] "
        "[--exp MODEL]\n"
        "       bf16emu diff --q FILE[:KEY] --k .. --v .. --o .. [--lse ..] "
        "[--do ..]\n"
        "                    [--dq ..] [--dk ..] [--dv ..] [--dump FILE] "
        "[--layout L]\n"
        "                    [--dtype bf16] [options]\n"
        "                    [--fix NAME] [--causal | --no-causal] "
        "[--scale X]\n"
        "                    [--tolerance ULPS] [--exact | --no-exact] "
        "[--json]\n"
        "\n"
        "Recomputes each stage of a GPU flash-attention dump on the "
        "emulator, from the\n"
        "dump's own inputs to that stage, and compares bit by bit.\n"
        "\n"
        "  --dump FILE          a .safetensors dump: q, k, v [B, H, N, d] "
        "BF16, do (for\n"
        "                       the backward), o BF16, lse F32 [B, H, Nq], "
        "dq, dk, dv\n"
        "                       BF16; a kernel's stages: s, p [B, H, Nq, "
        "Nk] (F32, BF16),\n"
        "                       m, l [B, H, Nq, Tc] and acc [B, H, Nq, Tc, "
        "d] (F32);\n"
        "                       its metadata \"manifest\" (JSON) may give "
        "causal, fix,\n"
        "                       shape and scale\n"
        "  --q, --k, --v, --do, --o, --lse, --dq, --dk, --dv FILE[:KEY]\n"
        "                       a tensor from another file or key "
        "(.safetensors or\n"
        "                       .npy; over the dump's); [B, H, N, d], "
        "[H, N, d] or\n"
        "                       [N, d] (lse one dimension fewer)\n"
        "  --call L3.s10945     one call of a capture (its keys "
        "L3.s10945.q, .k, ...;\n"
        "                       causal, scale, layout from its manifest "
        "entry in calls)\n"
        "  --layout bhnd|bnhd   [B, H, N, d] or PyTorch's [B, N, H, d] "
        "(needed when\n"
        "                       H and N both exceed 1 and neither the "
        "manifest's\n"
        "                       \"layout\" or \"shape\" nor the shapes of q "
        "and k tell)\n"
        "  --dtype bf16         read F32 or F16 tensors whose values are "
        "BF16 values,\n"
        "                       and U16 / I16 bit patterns, as BF16 (every "
        "value checked)\n"
        "  --policy NAME        paper-eq4, repo, fa2 (default), fp32, a "
        "backend's\n"
        "                       description (cudnn,\n"
        "                       efficient, math), flex (FlexAttention's "
        "Triton\n"
        "                       forward), or sdpa: the backend "
        "PyTorch 2.11\n"
        "                       runs on an H200 for the dump's shape (the "
        "choice and\n"
        "                       why on stderr); a manifest's \"backend\": "
        "\"default\" means\n"
        "                       sdpa, \"cudnn\" the cudnn description\n"
        "  --sdpa-backends LIST with sdpa: the backends enabled (cudnn, "
        "flash, efficient,\n"
        "                       math; default all)\n"
        "  --kernel FILE        a kernel description (JSON, as 'bf16emu "
        "attn --describe'\n"
        "                       writes it) instead of --policy\n"
        "  --splits N|auto      split-KV: N splits (1: not split, the "
        "default); auto:\n"
        "                       PyTorch 2.11's rule for the dump's shape "
        "(o and lse\n"
        "                       stages only)\n"
        "  --dq-buffers N|auto  the fa2 backward's dQ accumulation buffers "
        "(default: the\n"
        "                       manifest's dq_buffers, else auto: the "
        "description's\n"
        "                       rule, fa2: ceil(SMs / (B H)) on the dump's "
        "shape)\n"
        "  --sms N              multiprocessors for --splits auto and "
        "--dq-buffers auto\n"
        "                       (default 132, H200)\n"
        "  --launch B,H[,Nq,Nk] the GPU launch the tensors came from "
        "(a file may keep\n"
        "                       one batch entry and a few heads): the "
        "launch-dependent\n"
        "                       rules (split count, cuDNN's decode grid, "
        "PyTorch's\n"
        "                       dispatch) use it; with it, --splits "
        "defaults to the\n"
        "                       kernel's own rule (a manifest's launch_shape\n"
        "                       gives it too)\n"
        "  --mask FILE[:KEY]    SDPA's attn_mask (BOOL or U8 0/1: True "
        "takes part;\n"
        "                       F32, BF16, F16: added), broadcasting to the "
        "launch's\n"
        "                       [B, H, Nq, Nk]; a dump's tensor attn_mask is "
        "used\n"
        "                       without it.  The description says how it "
        "enters\n"
        "                       (bias_add, bool_fill); fa2 takes none\n"
        "  --stage LIST         comma-separated: s, m, p, l, acc (fa2 only), "
        "o, lse, dq,\n"
        "                       dk, dv (default: every stage the dump "
        "holds); s, m, p,\n"
        "                       l, acc, o and lse from q, k, v; dq, dk, dv "
        "from q, k, v,\n"
        "                       do and the dump's o and lse\n"
        "  --exp MODEL          cr, libm, ex2-sm90 or ex2-sm90-ftz "
        "(default: the\n"
        "                       description's exp_model, as in every "
        "subcommand)\n"
        "  --fa2-rowsum fma|separate  the row-sum partials' rescale and "
        "first\n"
        "                       addition: one FFMA (PyTorch's build, the "
        "default)\n"
        "                       or a product and an addition (the "
        "manifest's\n"
        "                       \"rowsum\": \"FMUL ...\")\n"
        "  --fix NAME           none, beta, beta-v2, eps or always "
        "(default: the\n"
        "                       manifest's \"fix\", else none)\n"
        "  --causal, --no-causal  the mask (default: the manifest's "
        "\"causal\"; needed\n"
        "                       when the file does not say; over the "
        "manifest, noted)\n"
        "  --causal-align top-left|bottom-right  key j masked for query i "
        "when j > i\n"
        "                       (SDPA's is_causal) or j > i + Nk - Nq (the "
        "flash\n"
        "                       kernel's; default: the manifest's "
        "\"causal_alignment\",\n"
        "                       else bottom-right)\n"
        "  --scale X            softmax scale (default: the manifest's "
        "number, or\n"
        "                       1/sqrt(d) correctly rounded to FP32 when it "
        "says\n"
        "                       \"1/sqrt(d)\"; needed when the file does "
        "not say)\n"
        "  --softcap C          FlexAttention's soft-capping score_mod, C "
        "tanh(score / C)\n"
        "                       (default: the manifest's \"softcap\"; "
        "flex only)\n"
        "  --delta-xblock N     FlexAttention's backward: the rows per "
        "program of its\n"
        "                       delta kernel, which inductor autotunes "
        "(default: from the\n"
        "                       manifest's kernels and launch, else 8)\n"
        "  --tolerance ULPS     a stage passes when every element is at most "
        "ULPS apart\n"
        "                       (default 0: bit-equal)\n"
        "  --exact              run the exact reference on any size\n"
        "  --no-exact           skip the exact reference (it runs while B H "
        "Nq Nk d,\n"
        "                       x4 with a backward stage, is at most "
        "2^26)\n"
        "  --json               one JSON object on stdout\n"
        "  -h, --help           this text\n"
        "\n"
        "Distances are counted in the stage's format (BF16 for o, dq, dk, "
        "dv; FP32 for\n"
        "lse): the number of representable values between the GPU's and "
        "the emulator's.\n"
        "With the exact reference, GPU - exact and emulator - exact are "
        "reported side by\n"
        "side in ulps of that format.\n"
        "The stages s, m, p, l, acc: the report names the first stage "
        "that differs and,\n"
        "for the worst O elements, the first KV block and stage where "
        "their row diverges.\n"
        "\n"
        "Example:\n"
        "  bf16emu diff --policy fa2 --dump sdpa_h200_d64.safetensors "
        "--stage o\n"
        "\n"
        "Exit status: 0 every compared stage bit-equal (or within "
        "--tolerance), 1 a\n"
        "stage differs, 2 bad usage or input.\n",
        out);
}

static bool
parse_stages(diff_ctx *x, const char *v)
{
    const char *p = v;

    memset(x->want, 0, sizeof x->want);
    x->stage_given = true;
    for (;;) {
        size_t n = strcspn(p, ",");
        int s;
        for (s = 0; s < N_ST; s++)
            if (strlen(st_names[s]) == n && strncmp(p, st_names[s], n) == 0)
                break;
        if (s == N_ST) {
            cli_error(CMD,
                      "--stage '%s': unknown stage '%.*s' (expected a "
                      "comma-separated list of s, m, p, l, acc, o, lse, dq, "
                      "dk, dv)",
                      v, (int)n, p);
            return false;
        }
        x->want[s] = true;
        if (p[n] == '\0')
            return true;
        p += n + 1;
    }
}

static bool
take_option(void *ctx, int id, const char *v)
{
    diff_ctx *x = ctx;
    switch (id) {
    case O_DUMP:
        x->dump = v;
        return true;
    case O_POLICY: {
        const fa_kernel *named;
        x->policy_given = true;
        x->kernel_named = x->sdpa = false;
        if (sdpa_policy_named(v, &named, &x->sdpa)) {
            if (named != NULL) {
                x->kernel = *named;
                x->kernel_named = true;
            }
            x->sdpa_from = "--policy sdpa";
            return true;
        }
        return fa_cli_parse_policy(CMD, v, &x->policy);
    }
    case O_SDPA_BACKENDS:
        x->sdpa_backends_given = true;
        return sdpa_policy_parse_backends(CMD, v, &x->sdpa_backends);
    case O_KERNEL:
        x->kernel_path = v;
        return true;
    case O_SPLITS:
        return fa_cli_parse_splits(CMD, v, &x->splits_opt, &x->splits_auto);
    case O_DQ_BUFFERS:
        x->dq_given = true;
        return fa_cli_parse_dq_buffers(CMD, v, &x->dq_opt);
    case O_MASK:
        x->mask_opd.opt = "--mask";
        x->mask_opd.arg = v;
        return cli_split_spec(CMD, &x->mask_opd);
    case O_LAUNCH:
        x->launch_given = true;
        return fa_cli_parse_launch(CMD, v, &x->launch, &x->launch_lengths);
    case O_SMS:
        return fa_cli_parse_sms(CMD, v, &x->sms);
    case O_STAGE:
        return parse_stages(x, v);
    case O_EXP:
        x->exp_given = true;
        return fa_cli_parse_exp(CMD, &x->exp, v);
    case O_ROWSUM:
        if (strcmp(v, "fma") != 0 && strcmp(v, "separate") != 0) {
            cli_error(CMD, "--fa2-rowsum '%s': expected fma or separate", v);
            return false;
        }
        x->rowsum_opt = v[0] == 'f' ? 1 : 0;
        return true;
    case O_FIX: {
        int f = fa_fix_parse(v);
        if (f < 0) {
            cli_error(CMD,
                      "--fix '%s': unknown fix (expected none, beta, beta-v2, "
                      "eps or always)",
                      v);
            return false;
        }
        x->fix_opt = (fa_fix_kind)f;
        x->fix_given = true;
        return true;
    }
    case O_CAUSAL:
    case O_NO_CAUSAL:
        if (x->causal_opt != CAUSAL_AUTO
            && x->causal_opt != (id == O_CAUSAL ? CAUSAL_YES : CAUSAL_NO)) {
            cli_error(CMD, "--causal and --no-causal contradict each other");
            return false;
        }
        x->causal_opt = id == O_CAUSAL ? CAUSAL_YES : CAUSAL_NO;
        return true;
    case O_CAUSAL_ALIGN: {
        bool tl;
        if (!fa_cli_parse_causal_align(CMD, v, &tl))
            return false;
        x->align_opt = tl ? 1 : 0;
        return true;
    }
    case O_SCALE:
        if (!fa_cli_parse_scale(CMD, v, &x->scale_bits))
            return false;
        x->scale_given = true;
        return true;
    case O_DELTA_XBLOCK:
        return fa_cli_parse_delta_xblock(CMD, v, &x->delta_xblock);
    case O_SOFTCAP:
        return fa_cli_parse_softcap(CMD, v, &x->softcap);
    case O_TOLERANCE:
        return cli_parse_u64(CMD, "--tolerance", v, &x->tol);
    case O_EXACT:
        x->exact_forced = true;
        return true;
    case O_NO_EXACT:
        x->no_exact = true;
        return true;
    case O_JSON:
        x->json = true;
        return true;
    case O_DTYPE:
        if (!fa_cli_parse_dtype(CMD, v))
            return false;
        x->dtype_given = true;
        return true;
    case O_LAYOUT:
        return fa_cli_parse_layout(CMD, v, &x->layout_opt);
    case O_CALL:
        x->call = v;
        return true;
    default:
        if (id >= O_TENSOR && id <= O_TENSOR + T_DV) {
            x->opd[id - O_TENSOR].arg = v;
            return true;
        }
        return true;
    }
}

static void
ctx_free(diff_ctx *x)
{
    for (int i = 0; i < 4; i++)
        free(x->in[i]);
    for (int s = 0; s < N_ST; s++) {
        free(x->gpu[s]);
        free(x->kmask[s]);
        free(x->emu[s]);
        free(x->ex[s]);
    }
    free(x->delta);
    free(x->lse2);
    for (int i = 0; i < N_T; i++) {
        tensor_free(&x->own[i]);
        dump_kept_free(&x->kept[i]);
        free(x->opd[i].path);
        free(x->call_arg[i]);
    }
    free(x->call_man);
    am_free(&x->mask);
    tensor_free(&x->mask_t);
    free(x->mask_opd.path);
    tensor_listing_free(&x->list);
    fa_cli_exp_free(&x->exp);
    fa_cli_log_free(&x->logm);
    free(x);
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
                                       "kernels",    "delta_xblock"};
    json_error_t je;
    json_t *m = json_loads(man, 0, &je), *calls, *c = NULL;
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
static bool
call_operands(diff_ctx *x)
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
static bool
load_mask(diff_ctx *x)
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
    rc = am_bind_file(
        &x->mask_t,
        x->man_launch_bh != 0 ? (size_t)x->man_launch_b
        : x->launch_given     ? x->launch.batch
                              : x->nb,
        x->man_launch_bh != 0 ? (size_t)x->man_launch_h
        : x->launch_given     ? x->launch.heads
                              : x->nh,
        x->nq, x->nk, x->nb, x->nh,
        x->man_batch_from_given ? x->man_batch_from : NULL,
        x->n_batch_from != 0,
        x->man_heads_kept_given ? x->man_heads_kept : NULL, &x->mask, msg,
        sizeof msg);
    if (rc != 0) {
        cli_error(CMD, "%s: %s", x->mask_src, msg);
        return false;
    }
    x->has_mask = true;
    return true;
}

static bool
run(diff_ctx *x)
{
    if (x->call != NULL && !call_operands(x))
        return false;
    if (x->dump == NULL && x->opd[T_Q].arg == NULL) {
        cli_error(CMD, "missing --dump FILE, or --q, --k, --v FILE[:KEY] "
                       "(see 'bf16emu diff --help')");
        return false;
    }
    for (int i = 0; i < N_T; i++)
        if (x->opd[i].arg != NULL && !cli_split_spec(CMD, &x->opd[i]))
            return false;
    if (x->exact_forced && x->no_exact) {
        cli_error(CMD, "--exact and --no-exact contradict each other");
        return false;
    }
    if (!x->exp_given)
        fa_cli_exp_default(&x->exp); /* the description's, once known */
    if (!read_dump(x) || !build_config(x) || !load_mask(x))
        return false;
    if (x->has_mask
        && fa_config_kernel(&x->cfg)->bias_add == FA_BIAS_NONE) {
        cli_error(CMD,
                  "%s: an attention mask, and the description '%s' takes "
                  "none (bias_add \"none\"; PyTorch's flash backend refuses "
                  "masks): pass --policy cudnn, efficient or math, the "
                  "backend that ran the call",
                  x->mask_src, fa_config_kernel(&x->cfg)->name);
        return false;
    }
    x->need_bwd = x->want[ST_DQ] || x->want[ST_DK] || x->want[ST_DV];
    if (x->need_bwd && x->nhkv != x->nh
        && fa_config_kernel(&x->cfg)->gqa_dkv == FA_GQA_NONE) {
        cli_error(CMD,
                  "--stage dq, dk, dv: grouped-query heads (%zu query heads "
                  "over %zu key/value heads): the description '%s' has no "
                  "rule for the sum of dK and dV over a group (gqa_dkv "
                  "\"none\"); pass --stage o,lse",
                  x->nh, x->nhkv, fa_config_kernel(&x->cfg)->name);
        return false;
    }
    if (x->need_bwd) {
        const char *why = fa_config_backward_refusal(&x->cfg, 1);
        if (why != NULL) {
            cli_error(CMD, "--stage dq, dk, dv: %s; pass --stage o,lse", why);
            return false;
        }
    }
    for (int s = ST_S; s <= ST_ACC; s++)
        x->want_cap = x->want_cap || x->want[s];
    if (x->splits > 1 && (x->want[ST_M] || x->want[ST_L] || x->want[ST_ACC])) {
        cli_error(CMD, "--stage: m, l and acc are not defined with --splits "
                       "above 1 (expected s, p, o, lse, dq, dk or dv)");
        return false;
    }
    if (x->want_cap && !fa2_like(x)) {
        cli_error(CMD,
                  "the stages s, m, p, l and acc are compared under --policy "
                  "fa2 only (the kernel dumps of experiments/gpu/fa_dump.cu)");
        return false;
    }
    x->exact_work =
        cli_sat_mul(cli_sat_mul(cli_sat_mul((uint64_t)x->heads, x->nq),
                                cli_sat_mul(x->nk, x->d)),
                    x->need_bwd ? 4 : 1);
    if (x->no_exact)
        x->exact_note = "--no-exact";
    else if (x->softcap != 0.0)
        x->exact_note = "the exact reference has no soft-capping";
    else if (!x->want[ST_O] && !x->want[ST_LSE] && !x->need_bwd)
        x->exact_note = "no stage with an exact value compared";
    else if (x->exact_work > EXACT_WORK_LIMIT && !x->exact_forced)
        x->exact_note = "B*H*Nq*Nk*d (x4 with a backward stage) is above "
                        "2^26; give --exact to run it anyway";
    else
        x->exact_run = true;
    if (!fa_cli_heads_usable(CMD, &x->hcfg, x->has_mask ? &x->mask : NULL,
                             x->heads)
        || !allocate(x) || !compute(x))
        return false;
    x->pass = true;
    for (int s = 0; s < N_ST; s++)
        if (x->want[s]) {
            compare_stage(x, s);
            x->pass = x->pass && x->r[s].pass;
        }
    locate(x);
    return true;
}

int
diff_main(int argc, char **argv)
{
    diff_ctx *x = calloc(1, sizeof *x);
    cli_buf out;
    cli_json js;
    int id, rc;

    if (x == NULL)
        return cli_error(CMD, "out of memory");
    x->policy = FA_POLICY_FA2;
    x->sms = 132;
    x->man_gqa = -1;
    x->causal_opt = CAUSAL_AUTO;
    x->align_opt = -1;
    x->rowsum_opt = -1;
    for (int i = 0; i < N_T; i++) {
        static const char *const opts[N_T] = {"--q",  "--k",  "--v",
                                              "--do", "--o",  "--lse",
                                              "--dq", "--dk", "--dv"};
        x->opd[i].opt = opts[i] != NULL ? opts[i] : t_names[i];
    }
    id = cli_take_options(CMD, argc, argv, options, O_HELP, diff_help,
                          "the dump is --dump FILE; see 'bf16emu diff "
                          "--help'",
                          take_option, x);
    if (id >= 0) {
        ctx_free(x);
        return id;
    }
    if (!fa_cli_load_kernel(CMD, x->kernel_path, x->policy_given,
                            &x->kernel)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    if (x->sdpa_backends_given && !x->sdpa) {
        ctx_free(x);
        return cli_error(CMD, "--sdpa-backends applies to --policy sdpa");
    }
    if (!run(x)) {
        ctx_free(x);
        return CLI_EXIT_USAGE;
    }
    rc = x->pass ? CLI_EXIT_OK : CLI_EXIT_CHECK;
    cli_buf_init(&out);
    if (x->json) {
        cli_json_init(&js, &out);
        json_report(x, &js);
    } else {
        text_report(x, &out);
    }
    cli_report_emit(CMD, &out, &rc);
    ctx_free(x);
    return rc;
}
