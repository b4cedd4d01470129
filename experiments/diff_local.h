/* diff_local.h -- what the files of bf16emu diff share: diff.c (the
   options, the run and the comparison), diff_dump.c (the dump, its
   manifest, the operands and the mask), diff_config.c (the configuration
   they give), diff_report.c (the text and JSON reports) and diff_help.c
   (the help).  The context of one run,
   its name tables, a few small helpers, and the functions one file calls
   in another. */
#ifndef BF16EMU_EXPERIMENTS_DIFF_LOCAL_H
#define BF16EMU_EXPERIMENTS_DIFF_LOCAL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/attn_exact.h"
#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/diff_engine.h"
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
#define N_WORST DE_N_WORST
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
    ST_S = DE_S,
    ST_M = DE_M,
    ST_P = DE_P,
    ST_L = DE_L,
    ST_ACC = DE_ACC,
    ST_O = DE_O,
    ST_LSE = DE_LSE,
    ST_DQ = DE_DQ,
    ST_DK = DE_DK,
    ST_DV = DE_DV,
    N_ST = DE_N_STAGES
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
static inline bool
is_capture(int s)
{
    return s <= ST_ACC;
}

/* x: the GPU's value, y: the emulator's */
typedef cmp_elem diff_elem;

/* One stage compared (analysis/diff_engine.h). */
typedef de_stage stage_result;

/* Where the row of one differing O element first diverges. */
typedef de_trace o_trace;

typedef struct
{
    /* options */
    const char *dump;
    /* the description, the launch, the run (--policy, --splits, --exp,
       --json, ...); kernel, kernel_named and sdpa also from the
       manifest's "backend" ("default": sdpa), softcap from its
       "softcap" */
    fa_cli_kernel_opts kopt;
    const char *sdpa_from; /* "--policy sdpa" or "manifest" */
    sdpa_choice sdpa_ch;
    bool sdpa_lean; /* its split count: cuDNN's lean reduction */
    char man_backend[16]; /* the manifest's "backend" ("" when none) */
    fa_cli_log logm;     /* its lg2 log, when it has one */
    bool f16;            /* q, k, v (and o) are FP16 */
    size_t splits;     /* resolved */
    size_t man_splits; /* the manifest's "splits" (0: none) */
    const char *splits_from;
    size_t man_dq;   /* the manifest's "dq_buffers" (0: none) */
    size_t dq_set;   /* resolved: cfg->dq_splits (0: the rule) */
    size_t dq_eff;   /* the count the library runs */
    const char *dq_from;
    bool stage_given;
    bool want[N_ST];
    dump_flex man_flex;        /* the manifest's FlexAttention launch */
    const char *delta_from;    /* where delta_xblock came from, or NULL */
    uint64_t tol;
    cli_operand opd[N_T]; /* --q FILE[:KEY], ...: where each tensor is */
    const char *call;     /* --call L{layer}.s{step}: one call of a capture */
    char *call_arg[N_T];  /* the FILE:KEY --call gives each tensor */
    char *call_man;       /* the manifest with that call's settings */

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
    char splits_buf[200];
    size_t br, bc, tc; /* fa2's forward tiles (resolved) and KV blocks */

    /* resolved */
    bool causal;
    const char *causal_from; /* "manifest", "--causal", "default" */
    bool top_left;           /* the causal mask aligned top-left */
    bool align_sdpa;         /* kopt.top_left set by --policy sdpa */
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
static inline const fa_kernel *run_kernel(const diff_ctx *x);

static inline bool
fa2_like(const diff_ctx *x)
{
    if (x->kopt.sdpa && !x->kopt.kernel_named)
        return true; /* not yet picked: the fused GPU kernels */
    return fa_cli_fa2_like(run_kernel(x));
}

/* The description run: --kernel's, the named one, or the policy's. */
static inline const fa_kernel *
run_kernel(const diff_ctx *x)
{
    return x->kopt.kernel_path != NULL || x->kopt.kernel_named
               ? &x->kopt.kernel
               : fa_kernel_of_policy(x->kopt.policy);
}

/* The name of the description run. */
static inline const char *
run_name(const diff_ctx *x)
{
    return x->kopt.kernel_path != NULL || x->kopt.kernel_named
               ? x->kopt.kernel.name
               : fa_policy_name(x->kopt.policy);
}

/* m, l and acc: stages of one non-split pass. */
static inline bool
split_stage(int s)
{
    return s == ST_M || s == ST_L || s == ST_ACC;
}

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
#define SHAPE_MAX (TENSOR_MAX_DIMS * 24 + 4)

/* BITS32 (an FP32 pattern whose value lies on FMT) as FMT's pattern. */
static inline uint64_t
to_fmt(const sf_format *fmt, uint32_t bits32)
{
    sf_env env = cli_env_ieee();

    if (fmt == &sf_format_f32)
        return bits32;
    return sf_convert(fmt, &sf_format_f32, bits32, SF_RNE, &env);
}

/* "0x3F80 1.5" (FMT's bits and the shortest decimal) into BUF. */
static inline const char *
val_str(char *buf, size_t n, const sf_format *fmt, uint32_t bits32)
{
    char dec[64];
    int w = (int)(fmt->storage_bits + 3) / 4;

    snprintf(buf, n, "0x%0*" PRIX64 " %s", w, to_fmt(fmt, bits32),
             cli_f32_dec(dec, sizeof dec, bits32));
    return buf;
}

/* The backward is the math backend's autograd, which takes P from the
   forward and needs neither O nor LSE. */
static inline bool
bwd_math(const diff_ctx *x)
{
    const fa_kernel *k = run_kernel(x);

    return k != NULL && k->bwd == FA_BWD_MATH;
}

/*----------------------------------------------------------------------------
 * Across the files.
 *--------------------------------------------------------------------------*/
/* diff_dump.c and diff_config.c.  Each returns false after an error
   message. */
/* The dump (or the --q, --k, ... operands): its tensors, manifest and
   metadata into X, checked against each other. */
bool diff_read_dump(diff_ctx *x);
/* The configuration of the run (X->cfg, X->hcfg) from the options, the
   manifest and the tensors (diff_config.c). */
bool diff_build_config(diff_ctx *x);
/* The attention mask: --mask FILE[:KEY], or the dump's tensor attn_mask
   (CALL.attn_mask with --call), bound to the launch the file's heads come
   from.  True without a mask. */
bool diff_load_mask(diff_ctx *x);
/* --call NAME: each tensor not given by its option, from the dump's key
   "NAME.q", "NAME.k", ... where the dump has it. */
bool diff_call_operands(diff_ctx *x);
/* FP32 patterns of output tensor I (BF16 widened) into DST, and its kept
   elements into MASK (NULL: all kept); false when an F32 tensor holds a
   value that FMT (the stage's format) cannot hold. */
bool diff_load_output(diff_ctx *x, int i, const sf_format *fmt,
                      uint32_t *dst, unsigned char *mask);

/* diff.c */
/* The index of flat element I of stage S: [b, h, row, col] ([b, h, row]
   for lse, [b, h, row, key] for s and p, [b, h, row, block] for m and l,
   [b, h, row, block, col] for acc); the number of indices. */
unsigned diff_split_index(const diff_ctx *x, int s, uint64_t i,
                          uint64_t idx[5]);

/* diff_report.c */
void diff_text_report(const diff_ctx *x, cli_buf *b);
void diff_json_report(const diff_ctx *x, cli_json *j);

#endif
