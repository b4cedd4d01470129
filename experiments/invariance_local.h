/* invariance_local.h -- what the files of bf16emu invariance share: the
   run's context (the call, the descriptions, the launch grid and its
   outputs), and the report written from it (invariance_report.c). */
#ifndef BF16EMU_EXPERIMENTS_INVARIANCE_LOCAL_H
#define BF16EMU_EXPERIMENTS_INVARIANCE_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/attn_mask.h"
#include "analysis/gen.h"
#include "analysis/invariance.h"
#include "analysis/tensor.h"
#include "attention/attention.h"
#include "experiments/cli.h"
#include "experiments/cli_mpi.h"
#include "experiments/fa_cli.h"

#define CMD "invariance"
#define MAX_LIST 64
#define MAX_BACKENDS 12

/* A description loaded for this run: its configuration and models. */
typedef struct slot
{
    const fa_kernel *k;
    fa_config cfg;
    fa_cli_exp exp; /* loaded here unless an earlier slot has the model */
    const char *exp_name;
} slot;

_Static_assert(2 * MAX_LIST <= IV_OBS_MAX, "a dump's classes fit");


typedef struct inv_ctx
{
    const char *path; /* the dump */
    bool gen;
    gen_params gp;
    uint64_t heads, kv_heads, nq, nk, d;
    bool causal, f16, f16_given;
    size_t batch[MAX_LIST], nbatch;
    unsigned sms[MAX_LIST];
    size_t nsms;
    size_t hc[MAX_LIST], nhc; /* --head-counts: the launch's heads, each */
    const char *pol[MAX_BACKENDS];
    size_t npol;
    bool mode_prefill, mode_decode, mode_given;
    uint64_t launch_heads, launch_kv_heads;
    bool json;
    const char *plot;
    uint64_t threads;
    /* the call */
    tensor tq, tk, tv;
    json_t *man;
    const json_t *inv; /* the manifest's "invariance" */
    iv_observed obs[MAX_BACKENDS]; /* what the dump recorded */
    size_t nobs;
    bool obs_decode; /* some backend of the dump ran decode steps */
    bool obs_bwd;    /* some backend of the dump ran the backward */
    /* the descriptions: fa2, cudnn, efficient, math, then others */
    slot slots[MAX_BACKENDS];
    size_t nslots;
    fa_cli_log log; /* the log and reciprocal tables, loaded once */
    iv_backend be[MAX_BACKENDS];
    iv_problem p;
    /* the launches, their runs, outputs and classes */
    iv_space sp;
    iv_grid g;
    size_t o_len;      /* words of a run's O */
    bool backward;     /* --backward, or the dump's bwd_classes */
    tensor tdo;
    char why[512];     /* a computation's refusal */
    cli_mpi mpi;       /* under mpirun: the ranks share the runs */
    cli_operand mask_opd; /* --mask, or the dump's attn_mask */
    am_mask mask;         /* bound to the kept heads (mask_opd.t) */
    bool has_mask;
    uint64_t mask_batch;  /* the launch's batch the mask covers (dump) */
    bool pol_default;  /* the backends came from the dump */
    iv_skip skip[MAX_BACKENDS];
    size_t nskip;
    char pol_buf[512]; /* --policy's names */
} inv_ctx;

/* Integer K of the JSON object O, or -1 when absent or not an
   integer. */
int64_t inv_jint(const json_t *o, const char *k);

/* Whether the dump keeps the backward's class outputs of backend NAME
   (a trimmed fixture's "bwd_kept"; every backend without one). */
bool inv_bwd_kept(const inv_ctx *x, const char *name);

/* The text report of X (the classes per backend, setting and mode, the
   rules between them, the recommendation, the GPU's classes in RES)
   into OUT. */
void inv_text_report(cli_buf *out, const inv_ctx *x,
                     const iv_obs_result *res);

/* The same as JSON. */
void inv_json_report(cli_buf *out, const inv_ctx *x,
                     const iv_obs_result *res);

/* --plot FILE: FILE.dat and gnuplot's FILE.png and FILE.svg; an exit
   status. */
int inv_write_plot(const inv_ctx *x);

#endif
