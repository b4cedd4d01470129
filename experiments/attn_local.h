/* attn_local.h -- what the files of bf16emu attn share: attn.c (the
   run's steps and main), attn_options.c (the options), attn_input.c (the
   inputs and the configuration), attn_run.c (the memory, the computation
   and the statistics), attn_report.c (the output file and the text and
   JSON reports) and attn_help.c (the help).  The context of one run, its
   name tables, a few small helpers, and the functions one file calls in
   another. */
#ifndef BF16EMU_EXPERIMENTS_ATTN_LOCAL_H
#define BF16EMU_EXPERIMENTS_ATTN_LOCAL_H

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/attn_exact.h"
#include "analysis/attn_mask.h"
#include "analysis/bias.h"
#include "analysis/gen.h"
#include "analysis/launch.h"
#include "analysis/tensor.h"
#include "analysis/user_tensor.h"
#include "attention/attention.h"
#include "experiments/cli.h"
#include "experiments/fa_cli.h"
#include "experiments/fa_kernel_json.h"
#include "experiments/sdpa_policy.h"

/* The subcommand, for messages. */
#define CMD "attn"

/* The exact reference runs when B H Nq Nk d (x4 with --backward) is at
   most this, unless --exact. */
#define EXACT_WORK_LIMIT ((uint64_t)1 << 26)

/* The exact reference's seconds per unit of that work on one core: the
   figure the limit rests on (2^26 units, about 20 s). */
#define EXACT_S_PER_UNIT 0.3e-6

/* Room for a shape "[a, b, ...]" and for a FILE[:KEY] spec. */
#define SHAPE_MAX (TENSOR_MAX_DIMS * 24 + 4)
#define SPEC_MAX 4200

/*----------------------------------------------------------------------------
 * Types.
 *--------------------------------------------------------------------------*/
/* One input (or the output) given as FILE[:KEY]. */
typedef cli_operand operand;

enum
{
    IN_Q,
    IN_K,
    IN_V,
    IN_DO,
    N_IN
};

static const char *const in_names[N_IN] = {"q", "k", "v", "do"};
static const char *const in_labels[N_IN] = {"Q", "K", "V", "dO"};

enum
{
    OUT_O,
    OUT_LSE,
    OUT_DELTA,
    OUT_DQ,
    OUT_DK,
    OUT_DV,
    N_OUT
};

static const char *const out_names[N_OUT] = {"o",  "lse", "delta",
                                             "dq", "dk",  "dv"};

enum
{
    CAP_S,
    CAP_P,
    CAP_M,
    CAP_L,
    CAP_OBAR,
    CAP_DP,
    CAP_DS,
    N_CAP
};

static const char *const cap_names[N_CAP] = {"s",    "p",  "m", "l",
                                             "obar", "dp", "ds"};

/* The statistics of one output's errors. */
typedef struct
{
    bool have;
    const sf_format *fmt;
    uint64_t skipped; /* exact value not finite */
    bias_cell err;    /* signed errors in ulps */
    bias_cell mag;    /* their magnitudes */
    bool rows;        /* O, dQ, dK, dV: rows of d elements */
    bias_cell rel;    /* signed errors in ulps of the row's scale */
    bias_cell rel_mag;
} err_stat;

/* One rounding event of a trace, kept for the table. */
typedef struct
{
    uint64_t seq; /* 1-based position among the pass's events */
    int op;
    const sf_format *fmt;
    unsigned n_in;
    const sf_format *in_fmt[3];
    uint64_t in[3];
    uint64_t result;
    int dir;
    unsigned guard, round, sticky;
    bool tie;
    double err_ulps;
    unsigned flags;
} trace_ev;

/* The events of one pass: every one counted (by operation), the last CAP
   kept in a ring. */
typedef struct
{
    size_t cap, n, next;
    uint64_t total;
    trace_ev *ring;
    bias_acc *acc;
} trace_log;

/* Bytes by kind, for the memory check. */
typedef struct
{
    uint64_t inputs, outputs, captures, workspace, exact, trace, total;
} mem_estimate;

/* The progress of one parallel loop over the heads, on stderr while it is
   a terminal. */
typedef struct
{
    bool on;
    const char *unit; /* "heads (forward)" */
    uint64_t done, total;
    double t0, last;
} head_progress;

enum
{
    SH_BATCH,
    SH_HEADS,
    SH_NQ,
    SH_NK,
    SH_D,
    N_SH
};

typedef struct
{
    /* options */
    fa_cli_kernel_opts kopt; /* the description, the launch, the run
                                (--policy, --splits, --exp, --json, ...) */
    operand in[N_IN];
    operand out;
    operand gpu_o, gpu_lse; /* --o, --lse: the backward's O and LSE */
    operand mask_opd;       /* --mask */
    am_mask mask;           /* bound to the tensors' [B, H, Nq, Nk] */
    bool has_mask;
    bool gen_on;
    gen_params gen;
    const char *gen_only[16]; /* generator options given, for messages */
    size_t n_gen_only;
    const char *kind_only[8]; /* options of one generator: "--sink" */
    gen_kind kind_of[8];
    size_t n_kind_only;
    bool sh_given[N_SH];
    uint64_t sh[N_SH];
    bool f16;                /* the input files are F16 */
    sdpa_choice sdpa_ch;     /* its choice */
    fa_cli_log logm;         /* its lg2 log, when it has one */
    bool describe;
    tensor_dtype round_to;   /* --round-to: BF16 or F16; TENSOR_ANY none */
    const char *splits_from; /* what set the split count, with its rule */
    char splits_from_buf[160];
    bool beta_given, tol_given, eps_given, eps_zero_given, zero_max_given;
    double beta, tol, eps, eps_zero;
    fa_zero_max zero_max;
    unsigned ablations;
    uint64_t br, bc;
    bool order_given;
    fa_kv_order order;
    bool backward;
    unsigned captures; /* 1 << CAP_* */
    bool trace;
    uint64_t trace_at[4]; /* b, h, row, col */
    uint64_t trace_keep;
    bool trace_keep_given;
    bool force;
    bool dry_run; /* --dry-run */
    bool tty;     /* stderr is a terminal: progress there */
    uint64_t max_memory;
    bool max_memory_given;
    uint64_t threads;

    /* resolved */
    fa_config cfg;  /* the whole shape */
    fa_config hcfg; /* one head */
    unsigned rank;  /* of Q: 2, 3 or 4 */
    uint64_t lead[2];
    unsigned n_lead;
    size_t nb, nh, nq, nk, d; /* B, H, Nq, Nk, d */
    size_t nhkv; /* K's and V's heads (grouped-query: a divisor of H) */
    size_t heads;             /* B H */
    size_t br_eff, bc_eff, tc, splits_eff, dq_buffers_eff;
    uint32_t scale_used;
    uint16_t *data[N_IN]; /* the inputs, host order */
    ut_info info[N_IN];   /* what the reader did to each input */
    ut_layout layout;
    const char *layout_from;
    uint32_t *bwd_o, *bwd_lse; /* --o, --lse as FP32 patterns, or NULL */
    uint16_t *gen_buf[N_IN];
    uint64_t nonfinite_in[N_IN];
    uint32_t *res[N_OUT];
    /* the forward's base-2 LSE for the flex backward (NULL: not kept) */
    uint32_t *lse2;
    uint32_t *cap[N_CAP];
    bool p_internal;
    unsigned flags_fwd, flags_bwd;
    mem_estimate mem;
    int threads_used;

    /* the exact reference */
    bool exact_run;
    const char *exact_note; /* why it did not run */
    uint64_t exact_work;
    uint64_t heads_nonfinite, heads_range;
    double *ex[N_OUT];
    err_stat st[N_OUT];

    /* rows with P~ = 1 */
    bool rows_have;
    uint64_t rows, rows_p1, rows_p2;

    trace_log tr[2]; /* forward (O), backward (dQ) */
} attn_ctx;

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
/* "1.5 GiB" (binary units, three significant digits) into BUF. */
static inline const char *
bytes_str(char *buf, size_t n, uint64_t b)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB",
                                        "TiB",   "PiB", "EiB"};
    double v = (double)b;
    unsigned u = 0;

    if (b == UINT64_MAX) {
        snprintf(buf, n, "more than 16 EiB");
        return buf;
    }
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%" PRIu64 " bytes", b);
    else
        snprintf(buf, n, "%.3g %s", v, units[u]);
    return buf;
}

/* Reverses the bytes of each ES-byte element of P[0..N): little-endian
   file order <-> host order on a big-endian host; nothing on a
   little-endian one. */
static inline void
swap_elems(void *p, size_t n, size_t es)
{
    unsigned char *b = p;

    if (cli_host_little_endian() || es < 2 || p == NULL)
        return;
    for (size_t i = 0; i < n; i++, b += es)
        for (size_t x = 0, y = es - 1; x < y; x++, y--) {
            unsigned char c = b[x];
            b[x] = b[y];
            b[y] = c;
        }
}

/* V in "%.17g" into BUF. */
static inline const char *
dbl_str(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%.17g", v);
    return buf;
}

/* The description run: --kernel's, or the policy's. */
static inline const char *
kernel_name(const attn_ctx *x)
{
    const fa_kernel *k = fa_config_kernel(&x->cfg);

    return k != NULL ? k->name : "none";
}

/* The work of the run: B H Nq Nk d, x4 with --backward (as x->exact_work
   counts it, without its saturation). */
static inline double
run_work(const attn_ctx *x)
{
    return (double)x->heads * (double)x->nq * (double)x->nk * (double)x->d
           * (x->backward ? 4.0 : 1.0);
}

/*----------------------------------------------------------------------------
 * attn.c
 *--------------------------------------------------------------------------*/
/* The threads the parallel loops over the heads use: --threads, at most
   one per head, at most 1024. */
int attn_thread_count(const attn_ctx *x);

/*----------------------------------------------------------------------------
 * attn_report.c
 *--------------------------------------------------------------------------*/
/* "cost W: B x H x Nq x Nk x d = ...; the parts that run", without a
   newline, into B: W the work (run_work), and the exact reference's time
   on one core where it runs. */
void attn_cost_text(cli_buf *b, const attn_ctx *x);

/* Writes --out: O, LSE (delta, dQ, dK, dV), the captures and, for
   generated inputs, the inputs, with the run's metadata and the whole
   description.  False after an error message (nothing left behind). */
bool attn_write_output(attn_ctx *x);

/* The text report of a finished run into B. */
void attn_text_report(attn_ctx *x, cli_buf *b);

/* --dry-run's text report into B: the header, the memory estimate and the
   cost. */
void attn_text_dry_run(cli_buf *b, const attn_ctx *x);

/* The JSON report of a run (finished, or resolved with --dry-run) into
   J. */
void attn_json_report(attn_ctx *x, cli_json *j);

/* Progress on a terminal is redrawn at most this often (seconds). */
#define PROGRESS_EVERY_S 0.25
#define MAX_MEMORY_DEFAULT ((uint64_t)8 << 30)
/* P~ is captured for the row statistics when it takes at most this. */
#define AUTO_P_BYTES ((uint64_t)64 << 20)
/* Trace events kept per pass (the last ones). */
#define TRACE_KEEP_DEFAULT 1000
/* Bytes per MPFR number of the exact reference (struct and limbs of a
   score at 546 + bitlen(d) bits, rounded up), for the estimate. */
#define MP_NUMBER_BYTES 128

/* attn_input.c */
/* The output: a .safetensors name, not an input, not an existing file
   unless --force. */
bool attn_check_output(attn_ctx *x);

/* Input O through the shared reader (analysis/user_tensor.h): BF16, or
   with --dtype bf16 F32 / F16 values that are BF16 values and U16 / I16
   bit patterns. */
bool attn_read_operand(attn_ctx *x, int i);

/* [B, H, N, d] or [B, N, H, d]: --layout, the metadata of Q's file, the
   shapes of Q and K, or either when H or N is 1; else an error asking for
   --layout.  BNHD inputs are transposed to BHND. */
bool attn_resolve_layout(attn_ctx *x);

/* --o and --lse: the GPU's O (Q's shape; BF16, or F32 holding values of
   the policy's O format) and LSE (F32, Q's shape without d), the inputs
   of the backward in place of the emulator's own forward; FP32 patterns
   into x->bwd_o and x->bwd_lse.  False after an error message. */
bool attn_read_fwd_outputs(attn_ctx *x);

/* Q [.., Nq, d], K and V [.., Nk, d], dO Q's shape. */
bool attn_check_shapes(attn_ctx *x);

/* The configuration of the whole shape (X->cfg) and of one head
   (X->hcfg) from the options, the launch and the description; false
   after an error message. */
bool attn_build_config(attn_ctx *x);

/* attn_run.c */
uint64_t attn_default_max_memory(void);

void attn_estimate_memory(attn_ctx *x);

bool attn_check_memory(attn_ctx *x);

/* Before reading files: their sizes against the limit. */
bool attn_check_file_sizes(const attn_ctx *x);

/* The cost line on stderr, before the computation. */
void attn_cost_report(const attn_ctx *x);

bool attn_allocate(attn_ctx *x);

bool attn_compute(attn_ctx *x);

/* Grouped-query heads: dK and dV of each query head become the KV
   head's (fa_cli_gqa_reduce), with the exact values.  False after an
   error message. */
bool attn_reduce_groups(attn_ctx *x);

/* Codes of the exact reference that stop the run. */
bool attn_exact_all(attn_ctx *x);

/* The errors of output I against the exact values. */
void attn_stat_output(attn_ctx *x, int i);

/* Rows whose P~ has entries exactly 1 (from the p capture). */
void attn_count_rows(attn_ctx *x);

/* attn_options.c */
/* The options of ARGV into X: -1 when the run goes on, else the exit
   code (CLI_EXIT_OK after --help, CLI_EXIT_USAGE after an error). */
int attn_take_options(attn_ctx *x, int argc, char **argv);

/* The combinations of options; false after an error message. */
bool attn_check_options(attn_ctx *x);

#endif
