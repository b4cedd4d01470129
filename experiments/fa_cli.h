/* fa_cli.h -- helpers shared by the attention subcommands of bf16emu (attn,
   diff and scan): the softmax scale, the exp model with its measured
   ex2-sm90 tables, and the policy option */
#ifndef BF16EMU_EXPERIMENTS_FA_CLI_H
#define BF16EMU_EXPERIMENTS_FA_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/ex2_table.h"
#include "analysis/launch.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"
#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/user_tensor.h"
#include "attention/attention.h"
#include "experiments/cli.h"

/* The exp model chosen by --exp.  The ex2-sm90 models point into tab and
   rule, so the struct stays where it was first filled in. */
typedef struct fa_cli_exp
{
    const char *name;          /* as given: "cr", "ex2-sm90", ... */
    const char *from;          /* "--exp", or "the description's default" */
    const fa_exp_model *model; /* what the configuration uses */
    ax_ex2_table tab;          /* ex2-sm90: the measured tables */
    fa_exp2_table rule;
    fa_exp_model ex2;
} fa_cli_exp;

/* Sets e to the default model, cr (e must be zeroed first). */
void fa_cli_exp_default(fa_cli_exp *e);

/* --exp NAME: cr, libm, ex2-sm90 or ex2-sm90-ftz (loading the tables).
   Reports an error under cmd and returns false when v is refused. */
bool fa_cli_parse_exp(const char *cmd, fa_cli_exp *e, const char *v);

/* The exp model of a run of K when --exp named none: K's exp_model (its
   description's default, loading the ex2-sm90 tables where it names
   them), the one rule every subcommand follows.  Reports an error under
   cmd and returns false when the tables cannot be loaded. */
bool fa_cli_exp_for(const char *cmd, const fa_kernel *k, fa_cli_exp *e);

/* Whether K is a fused GPU kernel's (FlashAttention-2's quad row sum, or
   cuDNN's quad-block one): then ex2-sm90, the H200's ex2.approx, is the
   default exp model of attn, diff and scan. */
bool fa_cli_fa2_like(const fa_kernel *k);

/* Frees the tables of e. */
void fa_cli_exp_free(fa_cli_exp *e);

/* --scale X: a finite positive number, rounded to FP32 bits. */
bool fa_cli_parse_scale(const char *cmd, const char *v, uint32_t *bits);

/* --causal-align top-left|bottom-right: TOP_LEFT true for top-left. */
bool fa_cli_parse_causal_align(const char *cmd, const char *v,
                               bool *top_left);

/* --policy NAME. */
bool fa_cli_parse_policy(const char *cmd, const char *v, fa_policy *p);

/* --policy NAME of a subcommand that runs one description for every call
   (scan): a built-in description (fa_kernel_by_name: paper-eq4, repo,
   fa2, fp32, cudnn, efficient, math) or flash, PyTorch's name of fa2,
   into *K.  Any other name, sdpa included (a choice per call), is
   reported under cmd with the list of the names taken, and false
   returned. */
bool fa_cli_parse_kernel_name(const char *cmd, const char *v,
                              const fa_kernel **k);

/* The lg2 log model a kernel description asks for ("log" or
   "combine_log": "lg2"): the H200's lg2.approx table (lg2-sm90).  The
   model points into tab, so the struct stays where it was filled in. */
typedef struct fa_cli_log
{
    bool loaded;
    ax_lg2_table tab;
    fa_lg2_table rule;
    fa_log_model model;
    /* the reciprocal of "normalize": "reciprocal-approx" (rcp-sm90) */
    bool rcp_loaded;
    ax_rcp_table rcp_tab;
    fa_rcp_model rcp_model;
} fa_cli_log;

/* Loads the lg2-sm90 table when K needs it ("log" or "combine_log"
   "lg2": the built-in fa2 does), L zeroed first; reports an error under
   CMD naming OPT and the table file, and returns false (exit 2) when it
   cannot. */
bool fa_cli_log_for(const char *cmd, const char *opt, const fa_kernel *k,
                    fa_cli_log *l);

/* The model for a configuration's log field (NULL when not loaded). */
const fa_log_model *fa_cli_log_model(const fa_cli_log *l);

/* The model for a configuration's rcp field: rcp-sm90, loaded by
   fa_cli_log_for for a description whose normalize is
   "reciprocal-approx" (NULL when not loaded). */
const fa_rcp_model *fa_cli_rcp_model(const fa_cli_log *l);

void fa_cli_log_free(fa_cli_log *l);

/* The launch a file's tensors came from (analysis/launch.h): the GPU's
   grid depends on the whole launch (B, H of every head launched), while a
   file may keep one batch entry and a few heads.  From the manifest's
   launch_shape, from --launch, else the tensors' own shape (FROM says
   which). */
typedef ax_launch fa_cli_launch;

/* --launch B,H or B,H,Nq,Nk: into *L (from "--launch"); Nq and Nk, when
   given, must be the tensors' (checked by the caller).  Reports an error
   under cmd and returns false otherwise. */
bool fa_cli_parse_launch(const char *cmd, const char *v, fa_cli_launch *l,
                         bool *lengths_given);

/* The split count of K's own rule for launch L and its name in *RULE:
   ax_launch_splits. */
unsigned fa_cli_launch_splits(const fa_kernel *k, const fa_cli_launch *l,
                              const char **rule);

/* The backward of grouped-query heads: RES holds dK (or dV) of GROUPS x G
   query heads of N elements each (as fa_backward wrote them against the
   shared K and V); the first GROUPS x N become the KV heads' values by
   CFG's description rule (fa_gqa_reduce), in place.  EX (may be NULL),
   laid out alike, becomes the sums of the group's exact values (binary64:
   their rounding is far below the output formats' ulps).  Reports an
   error under CMD and returns false when the description has no rule or
   memory runs out. */
bool fa_cli_gqa_reduce(const char *cmd, const fa_config *cfg, size_t groups,
                       size_t g, size_t n, uint32_t *res, double *ex);

/* --splits N|auto: N from 1 to 128 into *N (auto: *AUTO set). */
bool fa_cli_parse_splits(const char *cmd, const char *v, uint64_t *n,
                         bool *autosel);

/* Reports the refusal WHY (fa_config_check's reason) of the
   configuration C under cmd, naming the option that set the field where
   one did: more splits than KV blocks names SPLITS_FROM ("--splits",
   "--splits auto" or the dump's "manifest") and the split kernel's
   block count. */
void fa_cli_config_refused(const char *cmd, const fa_config *c,
                           const char *splits_from, const char *why);

/* --dq-buffers N|auto: N from 1 to 65536 into *N (auto: 0, the
   description's rule). */
bool fa_cli_parse_dq_buffers(const char *cmd, const char *v, uint64_t *n);

/* --sms N: 1 to 100000 multiprocessors into *SMS.  Reports an error under
   cmd and returns false otherwise. */
bool fa_cli_parse_sms(const char *cmd, const char *v, uint64_t *sms);

/* --dtype NAME: only bf16 (or BF16) is taken.  Reports an error under cmd
   and returns false otherwise. */
bool fa_cli_parse_dtype(const char *cmd, const char *v);

/* --layout NAME: bhnd or bnhd into *L.  Reports an error under cmd and
   returns false otherwise. */
bool fa_cli_parse_layout(const char *cmd, const char *v, ut_layout *l);

/* --kernel PATH (when not NULL) into *K, refused together with --policy
   (POLICY_GIVEN).  Reports an error under cmd and returns false when
   either is refused. */
bool fa_cli_load_kernel(const char *cmd, const char *path, bool policy_given,
                        fa_kernel *k);

/* Whether the description K is defined for the run's inputs: with F16
   inputs, not when it fixes a BF16 intermediate or output (a format field
   "bf16": "score", "p", "acc", "o", ...; or the "repo" backward, BF16
   arithmetic), which only BF16 inputs give a meaning.  Then reports an
   error under CMD naming OPT ("--policy", "--kernel"), K, its BF16 fields
   and the built-in descriptions defined for F16 inputs, and returns false
   (exit 2).  True for BF16 inputs (F16 false). */
bool fa_cli_inputs_defined(const char *cmd, const char *opt,
                           const fa_kernel *k, bool f16);

/* The query heads per KV head (NH over NHKV) when CFG's description
   runs a group's backward at once (gqa_dkv "chain"), else 1. */
size_t fa_cli_chained_groups(const fa_config *cfg, size_t nh, size_t nhkv);

/* --softcap V: a positive number into *CAP.  False after an error
   message. */
bool fa_cli_parse_softcap(const char *cmd, const char *v, double *cap);

/* The header lines of FlexAttention's settings under C: the soft-cap,
   and with BACKWARD under bwd "flex" the delta kernel's rows per
   program, from XBLOCK_FROM ("--delta-xblock", "the manifest's
   kernels", "default"). */
void fa_cli_flex_header(cli_buf *b, const fa_config *c, bool backward,
                        const char *xblock_from);

/* --delta-xblock V: a power of two 1 .. 1024 into *N.  False after an
   error message. */
bool fa_cli_parse_delta_xblock(const char *cmd, const char *v, uint64_t *n);

/* Every head's configuration (HCFG with head h's part of the mask M,
   h < HEADS) usable, checked before anything is computed: a refusal that
   depends on a head's mask (flex-decode's programs).  False after CMD's
   error message. */
bool fa_cli_heads_usable(const char *cmd, const fa_config *hcfg,
                         const am_mask *m, size_t heads);

/* The help lines of --sms and --launch, which attn and diff share, into
   OUT; the last line ("kernel's own rule") without its newline, so that
   a subcommand can add to it. */
void fa_cli_help_launch(FILE *out);

/* The mean of S and its 95% interval into J: the keys PREFIX "mean",
   with SD PREFIX "sd", then PREFIX "se", "t", "ci_lo", "ci_hi" (attn's
   and diff's reports write them alike). */
void fa_cli_json_interval(cli_json *j, const char *prefix,
                          const bias_summary *s, bool sd);

/* X with four significant digits into BUF of N bytes, "-" for NaN (the
   moments in attn's and diff's reports); returns BUF. */
const char *fa_cli_g4(char *buf, size_t n, double x);

/* The extremes of S into J: PREFIX "min", "max" and "max_abs" (the
   largest magnitude; NaN when S is empty). */
void fa_cli_json_extremes(cli_json *j, const char *prefix,
                          const bias_summary *s);

/* The options of the description, its launch and the run that attn and
   diff share, as given; each subcommand resolves them against its
   inputs (and may complete them there: the launch, sdpa's choice of
   description).  Their entries in a subcommand's option table are
   FA_CLI_KERNEL_OPTIONS (diff adds "no-causal", FA_CLI_O_NO_CAUSAL), and
   fa_cli_kernel_option reads them; the subcommand's own ids stay below
   FA_CLI_O_FIRST. */
typedef struct fa_cli_kernel_opts
{
    fa_policy policy; /* --policy NAME of a precision policy */
    bool policy_given;
    const char *kernel_path; /* --kernel FILE.json */
    fa_kernel kernel;        /* loaded from it, or the named one */
    bool kernel_named;       /* --policy NAME of a named description (or
                                sdpa's choice) in kernel */
    bool sdpa;               /* --policy sdpa */
    unsigned sdpa_backends;  /* --sdpa-backends (SDPA_EN_*) */
    bool sdpa_backends_given;
    uint64_t splits;     /* --splits N (0: not given) */
    bool splits_auto;    /* --splits auto */
    uint64_t dq_buffers; /* --dq-buffers N (0: auto, or not given) */
    bool dq_given;
    uint64_t sms;         /* --sms */
    fa_cli_launch launch; /* --launch */
    bool launch_given, launch_lengths;
    fa_fix_kind fix; /* --fix */
    bool fix_given;
    fa_cli_exp exp; /* --exp */
    bool exp_given;
    bool causal, no_causal; /* --causal, --no-causal */
    bool top_left;          /* --causal-align top-left */
    bool align_given;       /* --causal-align given */
    uint32_t scale_bits;    /* --scale */
    bool scale_given;
    double softcap;        /* --softcap: FlexAttention's tanh cap, 0 none */
    uint64_t delta_xblock; /* --delta-xblock; 0: not given */
    bool exact_forced, no_exact; /* --exact, --no-exact */
    bool json;
    bool dtype_given; /* --dtype bf16 */
    ut_layout layout; /* --layout */
} fa_cli_kernel_opts;

enum
{
    FA_CLI_O_FIRST = 256,
    FA_CLI_O_POLICY = FA_CLI_O_FIRST,
    FA_CLI_O_KERNEL,
    FA_CLI_O_SDPA_BACKENDS,
    FA_CLI_O_SPLITS,
    FA_CLI_O_DQ_BUFFERS,
    FA_CLI_O_SMS,
    FA_CLI_O_LAUNCH,
    FA_CLI_O_FIX,
    FA_CLI_O_EXP,
    FA_CLI_O_CAUSAL,
    FA_CLI_O_NO_CAUSAL,
    FA_CLI_O_CAUSAL_ALIGN,
    FA_CLI_O_SCALE,
    FA_CLI_O_SOFTCAP,
    FA_CLI_O_DELTA_XBLOCK,
    FA_CLI_O_EXACT,
    FA_CLI_O_NO_EXACT,
    FA_CLI_O_JSON,
    FA_CLI_O_DTYPE,
    FA_CLI_O_LAYOUT
};

/* The shared entries of an option table (cli_option). */
/* clang-format off */
#define FA_CLI_KERNEL_OPTIONS                                                 \
    {"policy", true, FA_CLI_O_POLICY},                                        \
    {"kernel", true, FA_CLI_O_KERNEL},                                        \
    {"sdpa-backends", true, FA_CLI_O_SDPA_BACKENDS},                          \
    {"splits", true, FA_CLI_O_SPLITS},                                        \
    {"dq-buffers", true, FA_CLI_O_DQ_BUFFERS},                                \
    {"sms", true, FA_CLI_O_SMS},                                              \
    {"launch", true, FA_CLI_O_LAUNCH},                                        \
    {"fix", true, FA_CLI_O_FIX},                                              \
    {"exp", true, FA_CLI_O_EXP},                                              \
    {"causal", false, FA_CLI_O_CAUSAL},                                       \
    {"causal-align", true, FA_CLI_O_CAUSAL_ALIGN},                            \
    {"scale", true, FA_CLI_O_SCALE},                                          \
    {"softcap", true, FA_CLI_O_SOFTCAP},                                      \
    {"delta-xblock", true, FA_CLI_O_DELTA_XBLOCK},                            \
    {"exact", false, FA_CLI_O_EXACT},                                         \
    {"no-exact", false, FA_CLI_O_NO_EXACT},                                   \
    {"json", false, FA_CLI_O_JSON},                                           \
    {"dtype", true, FA_CLI_O_DTYPE},                                          \
    {"layout", true, FA_CLI_O_LAYOUT}
/* clang-format on */

/* O before the options: POLICY (the subcommand's default), 132
   multiprocessors (an H100's, an H200's), no fix; the rest zero. */
void fa_cli_kernel_opts_init(fa_cli_kernel_opts *o, fa_policy policy);

/* The option ID (FA_CLI_O_*) with its value V (NULL for a switch) into
   *O; false after an error message under CMD.  --causal and --no-causal
   contradict each other. */
bool fa_cli_kernel_option(const char *cmd, int id, const char *v,
                          fa_cli_kernel_opts *o);

/* After the options of attn and diff: --kernel loaded into O->kernel
   (fa_cli_load_kernel), and --sdpa-backends refused without --policy
   sdpa.  -1 when the run goes on (as cli_take_options), else the exit
   code after an error message under CMD. */
int fa_cli_kernel_options(const char *cmd, fa_cli_kernel_opts *o);

/* --exact and --no-exact together refused: false after an error message
   under CMD. */
bool fa_cli_exact_options(const char *cmd, const fa_cli_kernel_opts *o);

/* The models of C's description (--kernel's when KERNEL_GIVEN, else
   --policy's): the exp model (*EXP, the description's unless EXP_GIVEN),
   the lg2 and rcp models (*LOGM) and the input format (FP16 when F16,
   else BF16).  False after an error message under CMD. */
bool fa_cli_config_models(const char *cmd, fa_config *c, bool kernel_given,
                          bool exp_given, fa_cli_exp *exp, fa_cli_log *logm,
                          bool f16);

/* The keys "batch", "heads", "nq", "nk" and "d" of a report's shape into
   J (inside its object). */
void fa_cli_json_shape(cli_json *j, size_t nb, size_t nh, size_t nq, size_t nk,
                       size_t d);

/* The rest of the launch L once its batch and heads are known: its KV
   heads (heads / GROUP, GROUP query heads sharing one), the lengths NQ
   and NK, the head dimension D, FP16 inputs (F16) and the
   multiprocessors SMS. */
void fa_cli_launch_fill(fa_cli_launch *l, size_t group, size_t nq, size_t nk,
                        size_t d, bool f16, uint64_t sms);

/* The exact reference's work, HEADS x NQ x NK x D (x4 with the backward,
   BACKWARD), saturating; and why it does not run when --no-exact
   (NO_EXACT) or a soft-capping (SOFTCAP != 0) rule it out, else NULL:
   what attn and diff decide alike before their own reasons. */
uint64_t fa_cli_exact_work(uint64_t heads, size_t nq, size_t nk, size_t d,
                           bool backward);
const char *fa_cli_exact_off(bool no_exact, double softcap);

#endif
