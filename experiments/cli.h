/* cli.h -- shared helpers of the bf16emu subcommands: options, numbers,
   errors, output buffers, JSON and colour */
#ifndef BF16EMU_EXPERIMENTS_CLI_H
#define BF16EMU_EXPERIMENTS_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sys/types.h>

#include "analysis/compare.h"
#include "analysis/tensor.h"
#include "softfloat/softfloat.h"

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/*----------------------------------------------------------------------------
 * Exit codes (contract): 0 ok, 1 a check failed, 2 bad usage or input.
 *--------------------------------------------------------------------------*/
enum
{
    CLI_EXIT_OK = 0,
    CLI_EXIT_CHECK = 1,
    CLI_EXIT_USAGE = 2
};

/* The program's version string ("0.1.0"). */
const char *cli_version(void);

/*----------------------------------------------------------------------------
 * The instruction-set cap of the run: BF16EMU_ISA=auto|scalar|avx2|avx512
 * (unset or empty: auto), read once by main before any subcommand.  Every
 * sf_env the subcommands build carries it in env.isa; it changes speed
 * only, never bits or flags.
 *--------------------------------------------------------------------------*/
/* Reads BF16EMU_ISA; false after a message on stderr for an unknown name
   or a path this CPU lacks. */
bool cli_isa_init(void);
/* The cap read by cli_isa_init (sf_isa; SF_ISA_AUTO before it). */
int cli_isa(void);
/* SF_ENV_IEEE with env.isa = cli_isa(). */
sf_env cli_env_ieee(void);

/*----------------------------------------------------------------------------
 * Subcommands.  Each lives in its own file and has a main that takes argv
 * with argv[0] = the subcommand's name, and a help printer.
 *--------------------------------------------------------------------------*/
int trace_main(int argc, char **argv);
void trace_help(FILE *out);
int mma_main(int argc, char **argv);
void mma_help(FILE *out);
int attn_main(int argc, char **argv);
void attn_help(FILE *out);
int diff_main(int argc, char **argv);
void diff_help(FILE *out);
int sweep_main(int argc, char **argv);
void sweep_help(FILE *out);
int merge_main(int argc, char **argv);
void merge_help(FILE *out);
int reproduce_main(int argc, char **argv);
void reproduce_help(FILE *out);
int ls_main(int argc, char **argv);
void ls_help(FILE *out);
int scan_main(int argc, char **argv);
void scan_help(FILE *out);
int invariance_main(int argc, char **argv);
void invariance_help(FILE *out);

/*----------------------------------------------------------------------------
 * Errors.  cli_error prints "bf16emu CMD: MESSAGE" (or "bf16emu: MESSAGE"
 * when CMD is NULL) and a newline on stderr, and returns CLI_EXIT_USAGE.
 * In the strings of its %s conversions control bytes are written as \xNN,
 * and a string that points into the arguments noted by cli_note_args (a
 * value or operand as typed) is cut after about 60 bytes and followed by
 * "\u2026 (N bytes)", so that no message echoes a huge argument whole.
 *--------------------------------------------------------------------------*/
int cli_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Notes the program's arguments for cli_error (main calls it first). */
void cli_note_args(int argc, char **argv);

/*----------------------------------------------------------------------------
 * Option parsing, GNU style: "--name=value" or "--name value" for options
 * with an argument, "--name" for switches, "-h" for "--help", "--" ends the
 * options.  An argument that starts with '-' followed by a digit, '.' or the
 * start of "inf"/"nan" is an operand, so negative numbers need no "--".
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *name; /* without the leading "--" */
    bool has_arg;
    int id; /* returned by cli_parser_next; >= 0 */
} cli_option;

enum
{
    CLI_ARG_END = -1,     /* no arguments left */
    CLI_ARG_OPERAND = -2, /* *value = the operand */
    CLI_ARG_ERROR = -3    /* message printed on stderr */
};

typedef struct
{
    const char *cmd; /* the subcommand, for messages */
    int argc;
    char **argv;
    int next; /* index of the next argument */
    bool operands_only;
    const char *opt_name; /* the option just returned, as typed */
} cli_parser;

/* Start parsing ARGV[1..ARGC-1]. */
void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv);

/* The next option's id (with *VALUE its argument, or NULL), an operand
   (CLI_ARG_OPERAND, *VALUE the text), CLI_ARG_END, or CLI_ARG_ERROR after
   printing what was wrong.  OPTS ends with an entry whose name is NULL. */
int cli_parser_next(cli_parser *p, const cli_option *opts, const char **value);

/* The names users type for formats and rounding modes, read in one place
   (case does not matter): the format NAME stands for, or NULL: the
   softfloat names (bf16, f16, fp16, f32, fp32, tf32, e4m3, fp8e4m3, e5m2,
   fp8e5m2, f64, fp64), the safetensors dtype names (BF16, ..., F8_E4M3,
   F8_E5M2) and the PyTorch dtype names with or without "torch."
   (bfloat16, float16, half, float32, float, float64, double,
   float8_e4m3fn, float8_e5m2); and the mode NAME stands for, or -1: rne,
   rtz, rdn, rup, rna, rod, sr and the PTX names rn, rz, rm, rp. */
const sf_format *cli_format_by_name(const char *name);
int cli_mode_by_name(const char *name);

/* Option values.  Each prints an error naming OPT (as "--acc") and what
   was expected, and returns false, when VALUE is not valid.  Formats and
   modes are read with cli_format_by_name and cli_mode_by_name. */
bool cli_parse_format(const char *cmd, const char *opt, const char *value,
                      bool arithmetic, const sf_format **fmt);
bool cli_parse_mode(const char *cmd, const char *opt, const char *value,
                    sf_round *rm);
bool cli_parse_u64(const char *cmd, const char *opt, const char *value,
                   uint64_t *v);
/* --threads VALUE: an integer from 1 to 1024 into *THREADS; false after
   the error. */
bool cli_parse_threads(const char *cmd, const char *value, long *threads);
/* A real number: anything cli_parse_number reads (decimal and hex-float
   text rounded to a double once, to nearest; a prefixed bit pattern
   converted exactly).  With FINITE, NaN and infinities are refused. */
bool cli_parse_double(const char *cmd, const char *opt, const char *value,
                      bool finite, double *v);
/* A byte count: decimal digits with an optional suffix K, M, G or T
   (powers of 1024; "KiB", "MiB", ... and a final "B" are also read). */
bool cli_parse_bytes(const char *cmd, const char *opt, const char *value,
                     uint64_t *v);

/* Environment presets: "ieee", "x86", "avx512bf16", "nvidia",
   "arm-bfdot".  Returns false (after an error message) for another name. */
bool cli_parse_env(const char *cmd, const char *opt, const char *value,
                   sf_env *env);

/* The formats that arithmetic accepts, for messages:
   "bf16, f16, f32, tf32, e4m3, e5m2". */
extern const char cli_format_list[];

/*----------------------------------------------------------------------------
 * Numbers on the command line: a decimal number, a C99 hex-float, inf or
 * nan (read into TARGET with IN_MODE, one correct rounding), or a bit
 * pattern with a format prefix ("bf16:0xC013", which keeps its format).
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *text;
    const sf_format *fmt; /* the prefix's format, else TARGET */
    uint64_t bits;
    bool prefixed;  /* given as FORMAT:0xBITS */
    bool inexact;   /* decimal text that TARGET cannot hold exactly */
    unsigned flags; /* flags raised by reading the text */
    sf_event ev;    /* the rounding of the text (not prefixed) */
} cli_number;

/* Parse TEXT.  On failure writes into WHY (N bytes) what was wrong and
   what was expected, and returns false. */
bool cli_parse_number(const char *text, const sf_format *target,
                      sf_round in_mode, cli_number *num, char *why, size_t n);

/*----------------------------------------------------------------------------
 * A growable text buffer.  Output is built in memory and written at the
 * end, so that an error found late leaves stdout empty.
 *--------------------------------------------------------------------------*/
typedef struct
{
    char *p;
    size_t len, cap;
    bool failed; /* an allocation failed; the content is incomplete */
} cli_buf;

void cli_buf_init(cli_buf *b);
void cli_buf_free(cli_buf *b);
void cli_buf_putc(cli_buf *b, char c);
void cli_buf_puts(cli_buf *b, const char *s);
void cli_buf_put_mem(cli_buf *b, const char *s, size_t n);
void cli_buf_printf(cli_buf *b, const char *fmt, ...) CLI_PRINTF(2, 3);
void cli_buf_vprintf(cli_buf *b, const char *fmt, va_list ap);
/* Write the content to OUT; false if anything failed. */
bool cli_buf_write(const cli_buf *b, FILE *out);

/*----------------------------------------------------------------------------
 * JSON output: a small streaming writer, two-space indentation, keys in the
 * order written.  KEY is NULL inside arrays and for the top-level value.
 *--------------------------------------------------------------------------*/
#define CLI_JSON_MAX_DEPTH 32

typedef struct
{
    cli_buf *out;
    int depth;
    bool has_items[CLI_JSON_MAX_DEPTH];
} cli_json;

void cli_json_init(cli_json *j, cli_buf *out);
void cli_json_object_begin(cli_json *j, const char *key);
void cli_json_object_end(cli_json *j);
void cli_json_array_begin(cli_json *j, const char *key);
void cli_json_array_end(cli_json *j);
/* A string (escaped); NULL writes null. */
void cli_json_string(cli_json *j, const char *key, const char *s);
void cli_json_int(cli_json *j, const char *key, long long v);
/* An array of NDIM integers. */
void cli_json_shape(cli_json *j, const char *key, unsigned ndim,
                    const uint64_t *shape);
/* A distance: an integer, or "inf" for CMP_DIST_INF. */
void cli_json_dist(cli_json *j, const char *key, uint64_t d);
/* One bucket of a distance histogram (analysis/compare.h), COUNT
   distances: {"bucket": its label, "min" and "max" (null for the infinite
   bucket), "count"}; finite bucket I, or the infinite one when INF. */
void cli_json_dist_bucket(cli_json *j, unsigned i, bool inf, uint64_t count);
void cli_json_bool(cli_json *j, const char *key, bool v);
void cli_json_null(cli_json *j, const char *key);
/* A number, printed with 17 significant digits (it reads back as the
   same double); NaN and infinities, which JSON cannot hold, are null. */
void cli_json_double(cli_json *j, const char *key, double v);
/* Ends the document with a newline. */
void cli_json_finish(cli_json *j);

/*----------------------------------------------------------------------------
 * Colour: on for "always", off for "never", and for "auto" only when the
 * stream is a terminal and the NO_COLOR environment variable is unset or
 * empty.
 *--------------------------------------------------------------------------*/
typedef enum
{
    CLI_COLOR_AUTO,
    CLI_COLOR_ALWAYS,
    CLI_COLOR_NEVER
} cli_color_when;

bool cli_parse_color(const char *cmd, const char *opt, const char *value,
                     cli_color_when *when);
bool cli_color_enabled(FILE *stream, cli_color_when when);

/*----------------------------------------------------------------------------
 * Tensor operands given as FILE[:KEY].
 *--------------------------------------------------------------------------*/
typedef struct cli_operand
{
    const char *opt; /* "--q" */
    const char *arg; /* as typed; NULL when not given */
    char *path;      /* the file (malloc'ed) */
    const char *key; /* the key (in ARG), or NULL */
    bool have_id;    /* the file exists: its device and inode */
    dev_t dev;
    ino_t ino;
    tensor t;
    const sf_format *fmt; /* the input format, where the subcommand sets one */
} cli_operand;

/* Splits O->arg into the file and the key (a last ':' not followed by a
   '/' starts the key, unless the whole argument names a file) and notes
   the file's identity; false after an error message under CMD. */
bool cli_split_spec(const char *cmd, cli_operand *o);
/* "FILE" or "FILE:KEY" into BUF of N bytes; returns BUF. */
const char *cli_spec_str(char *buf, size_t n, const cli_operand *o);
/* Whether S ends in SUFFIX (and has more before it). */
bool cli_has_suffix(const char *s, const char *suffix);
/* Refuses an output OUT that is one of the N_IN inputs IN (those given),
   or that exists unless FORCE; false after an error message under CMD. */
bool cli_check_output_file(const char *cmd, const cli_operand *out,
                           const cli_operand *in, size_t n_in, bool force);

/* Writes the report OUT of subcommand CMD to stdout and frees it; true
   when written, else false with *RC set after an error message (out of
   memory, or the write failed). */
bool cli_report_emit(const char *cmd, cli_buf *out, int *rc);

/* Reads the arguments of a subcommand that takes options only: TAKE(CTX,
   id, value) for each option (false stops), HELP(stdout) for HELP_ID,
   and an operand refused with "unexpected operand 'X' (HINT)".  Returns
   -1 when every argument was taken, else the exit code: CLI_EXIT_OK after
   the help, CLI_EXIT_USAGE after an error. */
int cli_take_options(const char *cmd, int argc, char **argv,
                     const cli_option *opts, int help_id,
                     void (*help)(FILE *out), const char *hint,
                     bool (*take)(void *ctx, int id, const char *v),
                     void *ctx);

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
/* The whole file PATH in a malloc'd NUL-terminated buffer of *LEN bytes
   (plus the NUL); NULL with errno set on failure. */
char *cli_read_all(const char *path, size_t *len);
/* Writes N bytes of BUF to PATH atomically: a temporary file in the same
   directory, fsync, rename; false (errno set, PATH untouched) on
   failure. */
bool cli_write_atomic(const char *path, const char *buf, size_t n);
/* Seconds on the monotonic clock. */
double cli_now_s(void);
/* Progress of a long run on stderr, DONE of TOTAL UNITs ("points",
   "heads") since T0 (cli_now_s): on a terminal (TTY) a bar redrawn in
   place, ended by a newline when FINAL; otherwise one line "bf16emu CMD:
   DONE/TOTAL UNIT (P%), ..." per call that is not FINAL (for logs). */
void cli_progress(const char *cmd, const char *unit, bool tty, uint64_t done,
                  uint64_t total, double t0, bool final);
/* "DIR/NAME" in a malloc'd string (NULL: out of memory). */
char *cli_path_join(const char *dir, const char *name);
/* a * b, or UINT64_MAX where it overflows. */
uint64_t cli_sat_mul(uint64_t a, uint64_t b);
/* Whether the host stores integers least significant byte first. */
bool cli_host_little_endian(void);
/* "[2, 3, 4]" ("[]" for a scalar) into BUF of N bytes; returns BUF. */
const char *cli_shape_str(char *buf, size_t n, unsigned ndim,
                          const uint64_t *shape);
/* The shortest decimal of the FP32 bits V into BUF of N bytes; returns
   BUF. */
const char *cli_f32_dec(char *buf, size_t n, uint32_t v);

#endif /* BF16EMU_EXPERIMENTS_CLI_H */
