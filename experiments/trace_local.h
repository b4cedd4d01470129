/* trace_local.h -- what the files of bf16emu trace share: trace.c (the
   options, the operands, the traced arithmetic), trace_report.c (the
   text and JSON output of the steps) and trace_summary.c (the header and
   the summary).  The context of one trace and the report writers. */
#ifndef BF16EMU_EXPERIMENTS_TRACE_LOCAL_H
#define BF16EMU_EXPERIMENTS_TRACE_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/exact_decimal.h"
#include "analysis/trace_engine.h"
#include "experiments/cli.h"

/* The subcommand, for messages. */
#define CMD "trace"

/* Room for the exact decimal of a value of the formats. */
#define DEC_MAX 4096

/*----------------------------------------------------------------------------
 * The trace context.
 *--------------------------------------------------------------------------*/
typedef enum
{
    OP_ACCUMULATE,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_FMA,
    OP_DIV,
    OP_SQRT,
    OP_CONVERT
} op_kind;

/* The operations' names, by op_kind. */
extern const char *const tr_op_names[];

typedef struct
{
    /* options */
    op_kind op;
    const sf_format *acc, *out, *fmt;
    sf_round acc_mode, mode, in_mode;
    const char *env_name;
    bool json, explain;
    cli_color_when color_when;
    uint64_t seed;
    int n_operands, cap_operands;
    char **operand_text;
    const char **operand_file; /* NULL: the command line; else its name */
    long *operand_line;
    char **file_text; /* the contents of operand files, owned */
    int n_files;
    cli_number *num;
    uint64_t *read_bits; /* each operand as read into the working format
                            (set by operand_in) */

    /* output */
    cli_buf *b;
    cli_json *j; /* NULL: text */
    bool color;
    bool failed;
    char fail_msg[512];

    /* the traced arithmetic, and the conversions of operands */
    sf_env env;
    sf_event_sink sink;
    te_capture cap;
    sf_env conv_env;
    sf_event_sink conv_sink;
    te_capture conv_cap;
    int n_roundings, n_inexact;
} trace_ctx;

/* S, or a marker when memory ran out. */
#define STR_OR(s) ((s) != NULL ? (s) : "(out of memory)")

/* ANSI colours, only when enabled. */
#define SGR_RESET "\033[0m"
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_SIGN "\033[31m"
#define SGR_EXP "\033[32m"
#define SGR_FRAC "\033[34m"
#define SGR_GUARD "\033[1;33m"
#define SGR_NOTE "\033[36m"

/*----------------------------------------------------------------------------
 * trace.c
 *--------------------------------------------------------------------------*/
/* Records the first internal error (a failed check); the trace then ends
   with exit status 1. */
void tr_internal_error(trace_ctx *t, const char *fmt, ...) CLI_PRINTF(2, 3);

/*----------------------------------------------------------------------------
 * trace_report.c
 *--------------------------------------------------------------------------*/
/* SEQ when colour is on, else "". */
const char *tr_sgr(const trace_ctx *t, const char *seq);

/* "bf16:0xC013" into BUF of N bytes. */
void tr_ref_str(char *buf, size_t n, const sf_format *f, uint64_t bits);

/* The exact decimal (or hex-float, by STYLE) of BITS in F into BUF of N
   bytes, "..." at the end when cut; BUF. */
const char *tr_value_str(char *buf, size_t n, const sf_format *f,
                         uint64_t bits, sf_print_style style);

/* "  LABEL  bf16:0xC097  1 10000001 1.0010111  -4.71875SUFFIX" */
void tr_value_line(trace_ctx *t, const char *label, const sf_format *f,
                   uint64_t bits, const char *suffix);

/* The object KEY: the fields and value of BITS in F. */
void tr_json_value(trace_ctx *t, const char *key, const sf_format *f,
                   uint64_t bits);

/* One rounding: the split at the ulp, the decision, the result, the
   error, the flags (and with --explain, why); counts it. */
void tr_show_rounding(trace_ctx *t, const te_rounding *r);

/* Computes (te_align) and shows the alignment of a + b. */
void tr_show_alignment(trace_ctx *t, const te_addend *a, const te_addend *b,
                       te_alignment *al);

/* First sentence of --explain for a rounding after an addition, into BUF
   of N bytes. */
void tr_alignment_context(const te_alignment *al, const te_addend *a,
                          const te_addend *b, char *buf, size_t n);

/* Computes (te_product) and shows the product of two operands as P. */
void tr_show_product(trace_ctx *t, const te_opnd *oa, const te_opnd *ob,
                     te_addend *p);

/* A step's heading (text only). */
void tr_step_heading(trace_ctx *t, const char *fmt, ...) CLI_PRINTF(2, 3);

/*----------------------------------------------------------------------------
 * trace_summary.c
 *--------------------------------------------------------------------------*/
/* Whether any rounding of the trace is stochastic. */
bool tr_any_sr(const trace_ctx *t);

/* The header: the options, the environment and the operands. */
void tr_json_header(trace_ctx *t);
void tr_text_header(trace_ctx *t);

/* The summary of a trace ending with RESULT in F, its last event
   FINAL_EV. */
void tr_summary(trace_ctx *t, const sf_format *f, uint64_t result,
                const sf_event *final_ev);

/* The note of converting operand I (a prefixed operand of another
   format, N) to Z in F, ERR its error's text. */
void tr_conversion(trace_ctx *t, int i, const cli_number *n,
                   const sf_format *f, uint64_t z, const char *err);

#endif /* BF16EMU_EXPERIMENTS_TRACE_LOCAL_H */
