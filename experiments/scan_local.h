/* scan_local.h -- what the files of bf16emu scan share: scan.c (the
   options, the capture, the runs, --shard, --merge and MPI) and
   scan_report.c (the text, JSON and CSV reports and the plots).  The
   context of one run and the report writers. */
#ifndef BF16EMU_EXPERIMENTS_SCAN_LOCAL_H
#define BF16EMU_EXPERIMENTS_SCAN_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/dump_manifest.h"
#include "analysis/scan.h"
#include "analysis/scan_groups.h"
#include "analysis/tensor.h"
#include "analysis/user_tensor.h"
#include "attention/attention.h"
#include "experiments/cli.h"
#include "experiments/fa_cli.h"

#include <jansson.h>

/* The subcommand, for messages. */
#define CMD "scan"

typedef struct
{
    const char *path;
    tensor_listing l;
} shard;

typedef struct
{
    long long layer, step;
    char name[128];
    char prefix[128];
    bool causal;
    bool has_scale;
    double scale;
    ut_layout layout;
    bool f16; /* "dtype": "float16" */
    bool has_mask; /* "attn_mask": the call's mask (tensor PREFIX.attn_mask) */
    char backend[64];
    double softcap;      /* "softcap": FlexAttention's tanh soft-cap */
    bool bottom_right;   /* "causal_alignment": "bottom-right" given */
    size_t n_heads_kept; /* 0: every head, numbered as stored */
    size_t *heads_kept;  /* the model's index of each stored head */
    size_t idx;          /* its index in the manifest's calls */
    /* what the manifest says of the model, 0 when it does not say:
       launch_shape.heads and .d, model.layers, .heads and .head_dim */
    uint64_t launch_heads, launch_d, model_layers, model_heads, model_d;
    /* launch_shape.batch and .kv_heads, 0 when not said */
    uint64_t launch_batch, launch_kv_heads;
    dump_flex flex; /* a FlexAttention call's recorded kernels */
    bool x_rotary;       /* "x": {"rotary": true}: q rotated after W_Q */
    uint64_t x_features; /* "x": {"features": C}, 0 when not said */
} call_spec;

typedef struct
{
    shard *shards;
    size_t n_shards;
    call_spec *calls;
    size_t n_calls;
    const char *manifest_path;
    bool policy_given;       /* the capture's kernel named (--policy or
                                --kernel; else fa2 for FLASH calls) */
    const char *kernel_path; /* --kernel FILE.json */
    fa_kernel kernel;        /* the description run: fa2, --policy's or
                                --kernel's (the configuration points
                                into it) */
    fa_fix fix;
    bool json, force, quiet;
    scan_reference ref;
    const char *csv, *plot;
    long threads;
    scan_groups gr; /* the report's rows */
    fa_cli_exp exp;  /* the description's exp model (fa2: ex2-sm90) */
    fa_cli_log logm; /* its log and reciprocal (fa2: lg2-sm90) */
    int progress;    /* -1 auto (unless --quiet), 0 no, 1 yes */
    bool sharded;    /* --shard given: the items are written, unmerged */
    uint64_t shard_i, shard_n;
    json_t *items;      /* --shard: the items of this shard */
    json_t *call_items; /* --shard: the items of each call */
    bool merge;         /* --merge: the inputs are shard outputs */
    /* calls whose X (the query projection's input) was used for dW_Q's
       error, and those with X left unused: q rotated after W_Q (x.rotary)
       or no dO */
    uint64_t x_used, x_rotary, x_no_do;
} scan_ctx;

/* X's calls from the capture's manifest (--manifest FILE, else the
   shards' metadata entry "manifest", else their sidecars, all the same),
   each entry checked.  False after an error (printed). */
bool scan_load_manifest(scan_ctx *x);

/* Adds the result R of one item (a batch entry and head HEAD of a call
   of LAYER and STEP, named NAME; DWQ [R->eq.d, XC] or NULL) to its
   (layer, head) group; FIRST: the item is of the call's first batch
   entry.  0 or an exit status (printed). */
int scan_add_item(scan_ctx *x, long long layer, long long step,
                  const char *name, size_t head, bool first,
                  const scan_stats *r, const double *dwq, size_t xc);

/* --shard: the shard output of X's items as text (malloc'd; NULL when
   out of memory), and written to stdout (0 or an exit status). */
char *scan_shard_text(const scan_ctx *x);
int scan_write_shard(scan_ctx *x);

/* The shard outputs DOCS (a JSON array of N, named PATHS[0..N) in
   messages) into X's groups; with SETTINGS, X's settings and files come
   from the first (--merge), and DOCS holds the JSON they point into
   (freed by the caller); without, X keeps its own (under mpirun).  0 or
   an exit status. */
int scan_merge_docs(scan_ctx *x, const char *const *paths, size_t n,
                    json_t *docs, bool settings);

/* --merge: the shard outputs PATHS[0..N) into X's groups and settings;
   *KEEP holds the JSON the settings point into (freed by the caller). */
int scan_merge_shards(scan_ctx *x, const char *const *paths, size_t n,
                      json_t **keep);

/* The reports of X's groups (ranked: ORDER their indices by decreasing
   risk) into B: the text one, the JSON one, and --csv's table. */
void scan_report_text(const scan_ctx *x, const size_t *order, cli_buf *b);
void scan_report_json(const scan_ctx *x, const size_t *order, cli_buf *b);
void scan_report_csv(const scan_ctx *x, cli_buf *b);

/* --plot PREFIX's data and gnuplot files.  0 or an exit status. */
int scan_write_plot(const scan_ctx *x);

/* Whether PATH exists. */
bool scan_path_exists(const char *path);

#endif /* BF16EMU_EXPERIMENTS_SCAN_LOCAL_H */
