/* trace.c -- bf16emu trace: an accumulation or one operation, bit by bit.
   The options, the operands and the traced arithmetic; trace_report.c
   and trace_summary.c write the output, analysis/trace_engine.h does the
   exact arithmetic and the checks. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/trace_local.h"

const char *const tr_op_names[] = {"accumulate", "add", "sub", "mul",
                                   "fma", "div", "sqrt", "convert"};

void
tr_internal_error(trace_ctx *t, const char *fmt, ...)
{
    va_list ap;

    if (t->failed)
        return;
    t->failed = true;
    va_start(ap, fmt);
    vsnprintf(t->fail_msg, sizeof t->fail_msg, fmt, ap);
    va_end(ap);
}

static bool
took_one_event(trace_ctx *t, const te_capture *c, const char *what)
{
    if (c->count != 1) {
        tr_internal_error(t, "%s reported %d rounding events (expected 1)",
                       what, c->count);
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Operands and conversions into the working format.
 *--------------------------------------------------------------------------*/
/* Operand i in format F: prefixed operands of another format are
   converted with the input mode (a note when inexact). */
static uint64_t
operand_in(trace_ctx *t, int i, const sf_format *f)
{
    const cli_number *n = &t->num[i - 1];
    uint64_t z;
    char *err = NULL;
    te_opnd o;
    mpq_t x;

    if (n->fmt == f) {
        t->read_bits[i - 1] = n->bits;
        return n->bits;
    }
    t->conv_cap.count = 0;
    t->conv_env.flags = 0;
    z = sf_convert(f, n->fmt, n->bits, t->in_mode, &t->conv_env);
    took_one_event(t, &t->conv_cap, "an operand conversion");
    if (!t->conv_cap.ev.error_infinite) {
        /* the error, exactly: z - the operand's value */
        mpq_init(x);
        te_decode(n->fmt, n->bits, false, &o);
        te_opnd_to_mpq(&o, x);
        err = te_error_str(f, z, x);
        mpq_clear(x);
        if (err == NULL)
            tr_internal_error(t, "out of memory");
    }
    tr_conversion(t, i, n, f, z, err);
    free(err);
    t->read_bits[i - 1] = z;
    return z;
}

/* Fill R from the captured event (te_rounding_setup); a failed check of
   the exact value or the error is an internal error. */
static void
setup_rounding(trace_ctx *t, te_rounding *r, const char *title,
               const sf_format *f, sf_round mode, const sf_event *ev,
               const xnum *x)
{
    char why[512];

    if (!te_rounding_setup(r, title, f, mode, ev, x, why, sizeof why))
        tr_internal_error(t, "%s", why);
}

/* Division and square root: the event's window must bound the exact value
   (te_check_quotient). */
static void
check_quotient(trace_ctx *t, const sf_event *ev, const te_opnd *oa,
               const te_opnd *ob, bool is_sqrt)
{
    int rc = te_check_quotient(ev, oa, ob, is_sqrt);

    if (rc < 0)
        tr_internal_error(t, "out of memory");
    else if (rc > 0)
        tr_internal_error(t, "the %s window of the rounding event does not "
                       "bound the exact value", is_sqrt ? "square root"
                                                        : "quotient");
}

/*----------------------------------------------------------------------------
 * One addition (an accumulation step, or --op add/sub).
 *--------------------------------------------------------------------------*/
typedef struct
{
    bool valid;
    te_alignment al;
    char context[600];
} add_trace;

static void
trace_add(trace_ctx *t, const char *title, const sf_format *f, sf_round rm,
          uint64_t a_bits, const char *a_name, uint64_t b_bits,
          const char *b_name, bool subtract, uint64_t *z, add_trace *at)
{
    te_opnd oa, ob;
    te_addend a, b;
    te_rounding r;
    char nb[64];

    te_decode(f, a_bits, t->env.daz, &oa);
    te_decode(f, b_bits, t->env.daz, &ob);
    t->cap.count = 0;
    *z = subtract ? sf_sub(f, a_bits, b_bits, rm, &t->env)
                  : sf_add(f, a_bits, b_bits, rm, &t->env);
    if (!took_one_event(t, &t->cap, title))
        return;
    if (t->j == NULL) {
        tr_value_line(t, a_name, f, a_bits,
                       oa.daz ? "  (subnormal, read as zero: DAZ)" : NULL);
        tr_value_line(t, b_name, f, b_bits,
                       ob.daz ? "  (subnormal, read as zero: DAZ)" : NULL);
    } else {
        tr_json_value(t, "a", f, a_bits);
        tr_json_value(t, "b", f, b_bits);
    }
    te_addend_from_opnd(&a, a_name, &oa);
    te_addend_from_opnd(&b, b_name, &ob);
    if (subtract) {
        snprintf(nb, sizeof nb, "-%s", b_name);
        b.name = nb;
        b.x.sign = !b.x.sign;
        if (t->j == NULL)
            cli_buf_printf(t->b, "  %s - %s = %s + (-%s)\n", a_name, b_name,
                           a_name, b_name);
    }
    at->valid = false;
    if (oa.k == TE_NAN || ob.k == TE_NAN || oa.k == TE_INF || ob.k == TE_INF) {
        setup_rounding(t, &r, title, f, rm, &t->cap.ev, NULL);
        r.special = true;
        r.special_why = (oa.k == TE_NAN || ob.k == TE_NAN)
                            ? "a NaN operand gives a NaN"
                            : "an infinite operand gives an infinity, or "
                              "Inf - Inf gives the default NaN (invalid)";
        tr_show_rounding(t, &r);
        return;
    }
    tr_show_alignment(t, &a, &b, &at->al);
    at->valid = true;
    tr_alignment_context(&at->al, &a, &b, at->context, sizeof at->context);
    setup_rounding(t, &r, title, f, rm, &t->cap.ev, &at->al.sum);
    r.context = at->context;
    if (xn_is_zero(&at->al.sum) && !r.special)
        tr_internal_error(t, "%s: the sum is exactly zero here but the event "
                       "rounded a value", title);
    if (r.special && xn_is_zero(&at->al.sum))
        r.special_why = rm == SF_RDN ? "the exact sum is zero: -0 when "
                                       "rounding toward negative"
                                     : "the exact sum is zero: +0 (or the "
                                       "sign of two equal zeros)";
    tr_show_rounding(t, &r);
}

/*----------------------------------------------------------------------------
 * The accumulation.
 *--------------------------------------------------------------------------*/
/* Step 1: the first operand initialises the accumulator; returns its
   bits. */
static uint64_t
acc_init(trace_ctx *t)
{
    uint64_t acc;

    if (t->j != NULL) {
        cli_json_object_begin(t->j, NULL);
        cli_json_int(t->j, "step", 1);
        cli_json_string(t->j, "kind", "init");
    } else {
        tr_step_heading(t, "step 1: acc = x1 (%s)", t->acc->name);
    }
    acc = operand_in(t, 1, t->acc);
    if (t->j != NULL) {
        tr_json_value(t, "acc", t->acc, acc);
        cli_json_object_end(t->j);
    } else {
        tr_value_line(t, "acc", t->acc, acc, NULL);
    }
    return acc;
}

/* Steps 2 .. n: acc = acc + x_i in the accumulator's format and mode, each
   traced by trace_add (AT its scratch), until a step fails.  Returns the
   note for the final rounding when the last addition carried (else
   NULL). */
static const char *
acc_steps(trace_ctx *t, uint64_t *acc, add_trace *at)
{
    const char *last_context = NULL;
    char title[64], bname[16];
    uint64_t z;

    for (int i = 2; i <= t->n_operands && !t->failed; i++) {
        uint64_t xb;
        snprintf(title, sizeof title, "step %d (%s addition)", i,
                 t->acc->name);
        snprintf(bname, sizeof bname, "x%d", i);
        if (t->j != NULL) {
            cli_json_object_begin(t->j, NULL);
            cli_json_int(t->j, "step", i);
            cli_json_string(t->j, "kind", "add");
            cli_json_string(t->j, "format", t->acc->name);
            cli_json_string(t->j, "mode", sf_round_name(t->acc_mode));
        } else {
            tr_step_heading(t, "step %d: acc + x%d in %s (%s)", i, i,
                         t->acc->name, sf_round_name(t->acc_mode));
        }
        xb = operand_in(t, i, t->acc);
        trace_add(t, title, t->acc, t->acc_mode, *acc, "acc", xb, bname,
                  false, &z, at);
        last_context = NULL;
        if (at->valid && at->al.carry)
            last_context = "The last addition carried out of the "
                           "significand, so its bits moved one place to the "
                           "right before this rounding.";
        *acc = z;
        if (t->j != NULL)
            cli_json_object_end(t->j);
    }
    return last_context;
}

/* The final rounding: the accumulator ACC converted to the output format
   in the output mode, traced (R its scratch) with LAST_CONTEXT as the
   note, then the summary. */
static void
acc_final(trace_ctx *t, uint64_t acc, const char *last_context,
          te_rounding *r)
{
    te_opnd o;
    uint64_t z;
    xnum *x = malloc(sizeof *x);

    if (x == NULL) {
        tr_internal_error(t, "out of memory");
        return;
    }
    te_decode(t->acc, acc, t->env.daz, &o);
    te_opnd_value(&o, x);
    t->cap.count = 0;
    z = sf_convert(t->out, t->acc, acc, t->mode, &t->env);
    if (took_one_event(t, &t->cap, "the final rounding")) {
        if (t->j != NULL) {
            cli_json_object_begin(t->j, "final");
            cli_json_string(t->j, "from", t->acc->name);
            cli_json_string(t->j, "to", t->out->name);
            cli_json_string(t->j, "mode", sf_round_name(t->mode));
            tr_json_value(t, "value", t->acc, acc);
        } else {
            tr_step_heading(t, "final: acc to %s (%s)", t->out->name,
                         sf_round_name(t->mode));
            tr_value_line(t, "acc", t->acc, acc,
                           o.daz ? "  (subnormal, read as zero: DAZ)"
                                 : NULL);
        }
        setup_rounding(t, r, "the final rounding", t->out, t->mode,
                       &t->cap.ev, (o.k == TE_FINITE) ? x : NULL);
        if (o.k == TE_FINITE || o.k == TE_ZERO)
            r->context = last_context;
        if (o.k == TE_NAN)
            r->special_why = "the accumulator is a NaN";
        else if (o.k == TE_INF)
            r->special_why = "the accumulator is infinite";
        else if (o.k == TE_ZERO)
            r->special_why = "the accumulator is zero";
        tr_show_rounding(t, r);
        if (t->j != NULL)
            cli_json_object_end(t->j);
        tr_summary(t, t->out, z, &t->cap.ev);
    }
    free(x);
}

/* The accumulation: the steps (a JSON array "steps"), then the final
   rounding unless a step failed. */
static void
run_accumulate(trace_ctx *t)
{
    uint64_t acc;
    add_trace *at = malloc(sizeof *at);
    te_rounding *r = malloc(sizeof *r);
    const char *last_context;

    if (at == NULL || r == NULL) {
        tr_internal_error(t, "out of memory");
        free(at);
        free(r);
        return;
    }
    memset(at, 0, sizeof *at);
    if (t->j != NULL)
        cli_json_array_begin(t->j, "steps");
    acc = acc_init(t);
    last_context = acc_steps(t, &acc, at);
    if (t->j != NULL)
        cli_json_array_end(t->j);
    if (!t->failed)
        acc_final(t, acc, last_context, r);
    free(at);
    free(r);
}

/*----------------------------------------------------------------------------
 * One operation (--op).
 *--------------------------------------------------------------------------*/
/* The operation's step: its JSON object begun, or its text heading (a
   conversion's heading comes with its formats, in run_op). */
static void
op_heading(trace_ctx *t, const sf_format *f)
{
    if (t->j != NULL) {
        cli_json_array_begin(t->j, "steps");
        cli_json_object_begin(t->j, NULL);
        cli_json_int(t->j, "step", 1);
        cli_json_string(t->j, "kind", tr_op_names[t->op]);
        cli_json_string(t->j, "format", t->op == OP_CONVERT ? t->out->name
                                                            : f->name);
        cli_json_string(t->j, "mode", sf_round_name(t->mode));
    } else if (t->op != OP_CONVERT) {
        static const char *const forms[] = {"", "a + b", "a - b", "a * b",
                                            "a * b + c", "a / b",
                                            "sqrt(a)", ""};
        tr_step_heading(t, "%s in %s (%s)", forms[t->op], f->name,
                     sf_round_name(t->mode));
    }
}

/* The traced operation on IN (format F, result in RF), its rounding
   event captured in t->cap. */
static uint64_t
op_result(trace_ctx *t, const sf_format *f, const sf_format *rf,
          const uint64_t *in)
{
    t->cap.count = 0;
    switch (t->op) {
    case OP_MUL:
        return sf_mul(f, in[0], in[1], t->mode, &t->env);
    case OP_FMA:
        return sf_fma(f, in[0], in[1], in[2], t->mode, &t->env);
    case OP_DIV:
        return sf_div(f, in[0], in[1], t->mode, &t->env);
    case OP_SQRT:
        return sf_sqrt(f, in[0], t->mode, &t->env);
    case OP_CONVERT:
    default:
        return sf_convert(rf, f, in[0], t->mode, &t->env);
    }
}

/* Division and square root: R from the event, the special cases named,
   else the window checked and a line on the exact value's expansion. */
static void
quotient_rounding(trace_ctx *t, te_rounding *r, const char *title,
                  const sf_format *rf, const te_opnd *o)
{
    bool is_sqrt = t->op == OP_SQRT;
    bool zero = o[0].k == TE_ZERO || (!is_sqrt && o[1].k == TE_ZERO)
                || (is_sqrt && o[0].sign);

    setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, NULL);
    if (zero || r->special) {
        r->special = true;
        r->special_why = is_sqrt ? (o[0].sign && o[0].k != TE_ZERO
                                        ? "the square root of a "
                                          "negative number is invalid"
                                        : "the square root of zero is "
                                          "that zero")
                                 : (o[1].k == TE_ZERO
                                        ? "division by zero"
                                        : "a zero dividend gives zero");
        return;
    }
    check_quotient(t, &t->cap.ev, &o[0], &o[1], is_sqrt);
    r->ex_kind = is_sqrt ? TE_EX_SQRT : TE_EX_DIV;
    r->ex_a = o[0];
    r->ex_b = o[1];
    if (t->j == NULL && r->tail)
        cli_buf_printf(t->b, "  the exact %s is an infinite binary "
                       "fraction: its bits are shown to the event's "
                       "128-bit window, '...' marks the infinite rest; "
                       "a decimal that does not end is shown to %d "
                       "significant digits, then '...'\n",
                       is_sqrt ? "square root" : "quotient", XDEC_DIGITS);
    else if (t->j == NULL)
        cli_buf_printf(t->b, "  the exact %s is a finite binary "
                       "fraction\n", is_sqrt ? "square root" : "quotient");
}

/* The exact result of the operation on the NIN operands O (a product, an
   aligned sum, a quotient's window, a converted value) and its rounding
   to RF, shown. */
static void
op_rounding(trace_ctx *t, te_rounding *r, add_trace *at, xnum *x,
            const char *title, const sf_format *rf, const te_opnd *o,
            int nin)
{
    bool special_in = false;

    for (int i = 0; i < nin; i++)
        special_in |= o[i].k == TE_NAN || o[i].k == TE_INF;
    if (special_in) {
        setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, NULL);
        r->special = true;
        r->special_why = "a NaN or infinite operand: the result follows "
                         "the special-value rules";
        tr_show_rounding(t, r);
        return;
    }
    switch (t->op) {
    case OP_MUL: {
        te_addend p;
        tr_show_product(t, &o[0], &o[1], &p);
        setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, &p.x);
        if (r->special)
            r->special_why = "a zero factor: the product is an exact zero";
        break;
    }
    case OP_FMA: {
        te_addend p, c;
        tr_show_product(t, &o[0], &o[1], &p);
        te_addend_from_opnd(&c, "c", &o[2]);
        tr_show_alignment(t, &p, &c, &at->al);
        tr_alignment_context(&at->al, &p, &c, at->context, sizeof at->context);
        setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, &at->al.sum);
        r->context = at->context;
        if (r->special)
            r->special_why = "a*b + c is exactly zero";
        break;
    }
    case OP_DIV:
    case OP_SQRT:
        quotient_rounding(t, r, title, rf, o);
        break;
    case OP_CONVERT:
    default:
        te_opnd_value(&o[0], x);
        setup_rounding(t, r, title, rf, t->mode, &t->cap.ev,
                       o[0].k == TE_FINITE ? x : NULL);
        if (r->special)
            r->special_why = o[0].daz ? "a subnormal read as zero (DAZ)"
                                      : "the operand is zero";
        break;
    }
    tr_show_rounding(t, r);
}

static void
run_op(trace_ctx *t)
{
    uint64_t in[3] = {0, 0, 0}, z = 0;
    int nin = t->n_operands;
    te_opnd o[3];
    const sf_format *f = t->fmt, *rf = t->fmt;
    te_rounding *r = malloc(sizeof *r);
    add_trace *at = malloc(sizeof *at);
    xnum *x = malloc(sizeof *x);
    static const char *const names[] = {"a", "b", "c"};
    char title[64];

    if (r == NULL || at == NULL || x == NULL) {
        tr_internal_error(t, "out of memory");
        goto done;
    }
    memset(&at->al, 0, sizeof at->al);
    snprintf(title, sizeof title, "the %s %s", f->name, tr_op_names[t->op]);
    op_heading(t, f);
    if (t->op == OP_CONVERT) {
        f = t->num[0].fmt;
        rf = t->out;
        in[0] = t->num[0].bits;
        snprintf(title, sizeof title, "the conversion %s to %s", f->name,
                 rf->name);
        if (t->j == NULL)
            tr_step_heading(t, "convert %s to %s (%s)", f->name, rf->name,
                         sf_round_name(t->mode));
    } else {
        for (int i = 0; i < nin; i++)
            in[i] = operand_in(t, i + 1, f);
    }
    for (int i = 0; i < nin; i++)
        te_decode(f, in[i], t->env.daz, &o[i]);

    if (t->op == OP_ADD || t->op == OP_SUB) {
        trace_add(t, title, f, t->mode, in[0], "a", in[1], "b",
                  t->op == OP_SUB, &z, at);
        goto close;
    }

    z = op_result(t, f, rf, in);
    if (!took_one_event(t, &t->cap, title))
        goto close;
    for (int i = 0; i < nin; i++) {
        if (t->j != NULL)
            tr_json_value(t, names[i], f, in[i]);
        else
            tr_value_line(t, names[i], f, in[i],
                           o[i].daz ? "  (subnormal, read as zero: DAZ)"
                                    : NULL);
    }
    op_rounding(t, r, at, x, title, rf, o, nin);

close:
    if (t->j != NULL) {
        cli_json_object_end(t->j);
        cli_json_array_end(t->j);
    }
    if (!t->failed) {
        sf_event ev = t->cap.ev;
        tr_summary(t, rf, z, &ev);
    }
done:
    free(r);
    free(at);
    free(x);
}

/*----------------------------------------------------------------------------
 * Options and main.
 *--------------------------------------------------------------------------*/
enum
{
    O_ACC,
    O_ACC_MODE,
    O_OUT,
    O_MODE,
    O_IN_MODE,
    O_OP,
    O_FMT,
    O_SEED,
    O_FTZ,
    O_DAZ,
    O_ENV,
    O_JSON,
    O_EXPLAIN,
    O_COLOR,
    O_HELP
};

static const cli_option options[] = {
    {"acc", true, O_ACC},         {"acc-mode", true, O_ACC_MODE},
    {"out", true, O_OUT},         {"mode", true, O_MODE},
    {"in-mode", true, O_IN_MODE}, {"op", true, O_OP},
    {"fmt", true, O_FMT},         {"seed", true, O_SEED},
    {"ftz", false, O_FTZ},        {"daz", false, O_DAZ},
    {"env", true, O_ENV},         {"json", false, O_JSON},
    {"explain", false, O_EXPLAIN}, {"color", true, O_COLOR},
    {"help", false, O_HELP},      {NULL, false, 0}};



static bool
parse_op(const char *value, op_kind *op)
{
    for (int i = OP_ADD; i <= OP_CONVERT; i++)
        if (strcmp(value, tr_op_names[i]) == 0) {
            *op = (op_kind)i;
            return true;
        }
    cli_error(CMD, "--op '%s': unknown operation (expected add, sub, mul, "
              "fma, div, sqrt or convert)", value);
    return false;
}

static int
operand_count(op_kind op)
{
    switch (op) {
    case OP_SQRT:
    case OP_CONVERT:
        return 1;
    case OP_FMA:
        return 3;
    case OP_ACCUMULATE:
        return -1;
    default:
        return 2;
    }
}

/*----------------------------------------------------------------------------
 * Operands from files: @FILE, or - for standard input.
 *--------------------------------------------------------------------------*/
/* Appends operand TEXT (from FILE's line LINE; FILE NULL for the command
   line). */
static bool
add_operand(trace_ctx *t, char *text, const char *file, long line)
{
    if (t->n_operands == t->cap_operands) {
        int cap = t->cap_operands < 16 ? 16 : 2 * t->cap_operands;
        char **tx = realloc(t->operand_text, (size_t)cap * sizeof *tx);
        const char **fl;
        long *ln;
        if (tx == NULL)
            return false;
        t->operand_text = tx;
        fl = realloc(t->operand_file, (size_t)cap * sizeof *fl);
        if (fl == NULL)
            return false;
        t->operand_file = fl;
        ln = realloc(t->operand_line, (size_t)cap * sizeof *ln);
        if (ln == NULL)
            return false;
        t->operand_line = ln;
        t->cap_operands = cap;
    }
    t->operand_text[t->n_operands] = text;
    t->operand_file[t->n_operands] = file;
    t->operand_line[t->n_operands] = line;
    t->n_operands++;
    return true;
}

/* Reads the operands of ARG ("@FILE" or "-"): whitespace-separated
   tokens, '#' to the end of the line a comment.  Returns CLI_EXIT_OK, or
   CLI_EXIT_USAGE after a message naming the file. */
static int
read_operand_file(trace_ctx *t, const char *arg)
{
    bool is_stdin = strcmp(arg, "-") == 0;
    const char *name = is_stdin ? "stdin" : arg + 1;
    FILE *fp;
    char *buf = NULL, **files;
    size_t len = 0, cap = 0;
    long line = 1;

    if (!is_stdin && name[0] == '\0')
        return cli_error(CMD, "operand '@': expected a file name after '@' "
                         "(e.g. @operands.txt), or - for standard input");
    fp = is_stdin ? stdin : fopen(name, "rb");
    if (fp == NULL)
        return cli_error(CMD, "operand file '%s': cannot open it (%s)", name,
                         strerror(errno));
    for (;;) {
        size_t got;
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap + 65536);
            if (nb == NULL) {
                free(buf);
                if (!is_stdin)
                    fclose(fp);
                return cli_error(CMD, "out of memory");
            }
            buf = nb;
            cap += 65536;
        }
        got = fread(buf + len, 1, cap - len - 1, fp);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(fp)) {
        int e = errno;
        free(buf);
        if (!is_stdin)
            fclose(fp);
        return cli_error(CMD, "operand file '%s': cannot read it (%s)", name,
                         strerror(e));
    }
    if (!is_stdin)
        fclose(fp);
    buf[len] = '\0';
    files = realloc(t->file_text, (size_t)(t->n_files + 1) * sizeof *files);
    if (files == NULL) {
        free(buf);
        return cli_error(CMD, "out of memory");
    }
    t->file_text = files;
    t->file_text[t->n_files++] = buf;

    /* tokens, split in place */
    for (size_t i = 0; i < len;) {
        char c = buf[i];
        if (c == '\0')
            return cli_error(CMD, "%s:%ld: a NUL byte (expected text: "
                             "numbers separated by white space)", name, line);
        if (c == '\n') {
            line++;
            i++;
        } else if (isspace((unsigned char)c)) {
            i++;
        } else if (c == '#') {
            while (i < len && buf[i] != '\n')
                i++;
        } else {
            size_t start = i;
            while (i < len && buf[i] != '\0' && buf[i] != '#'
                   && !isspace((unsigned char)buf[i]))
                i++;
            if (i < len && buf[i] == '#') {
                /* a comment right after the token: end the token, skip
                   the comment */
                buf[i] = '\0';
                while (i < len && buf[i] != '\n')
                    i++;
            } else if (i < len && buf[i] != '\0') {
                char sep = buf[i];
                buf[i] = '\0';
                i++;
                if (sep == '\n') {
                    if (!add_operand(t, buf + start, name, line))
                        return cli_error(CMD, "out of memory");
                    line++;
                    continue;
                }
            }
            if (!add_operand(t, buf + start, name, line))
                return cli_error(CMD, "out of memory");
        }
    }
    return CLI_EXIT_OK;
}

/* "FILE:LINE: " for an operand read from a file, else "". */
static const char *
operand_where(const trace_ctx *t, int i, char *buf, size_t n)
{
    if (t->operand_file[i] == NULL)
        return "";
    snprintf(buf, n, "%s:%ld: ", t->operand_file[i], t->operand_line[i]);
    return buf;
}

static void
free_operands(trace_ctx *t)
{
    for (int i = 0; i < t->n_files; i++)
        free(t->file_text[i]);
    free(t->file_text);
    free(t->operand_text);
    free(t->operand_file);
    free(t->operand_line);
}

/*----------------------------------------------------------------------------
 * main: the options, their consistency, the operands, the output.
 *--------------------------------------------------------------------------*/
/* What the options say beyond trace_ctx: the flags of the environment
   and which of the format options were given. */
typedef struct
{
    bool ftz, daz, acc_given, acc_mode_given, out_given, fmt_given;
    sf_env env;
} trace_opts;

/* Reads the options and the operands' text into T and O.  True when the
   trace goes on; false after --help or an error, with the exit status
   in *RC. */
static bool
parse_options(trace_ctx *t, trace_opts *o, int argc, char **argv, int *rc)
{
    cli_parser p;
    const char *v;
    int id;

    cli_parser_init(&p, CMD, argc, argv);
    while ((id = cli_parser_next(&p, options, &v)) != CLI_ARG_END) {
        bool ok = true;
        switch (id) {
        case CLI_ARG_ERROR:
            ok = false;
            break;
        case CLI_ARG_OPERAND:
            if (v[0] == '@' || strcmp(v, "-") == 0)
                ok = read_operand_file(t, v) == CLI_EXIT_OK;
            else if (!add_operand(t, (char *)v, NULL, 0))
                ok = cli_error(CMD, "out of memory") == CLI_EXIT_OK;
            break;
        case O_ACC:
            ok = cli_parse_format(CMD, "--acc", v, true, &t->acc);
            o->acc_given = true;
            break;
        case O_ACC_MODE:
            ok = cli_parse_mode(CMD, "--acc-mode", v, &t->acc_mode);
            o->acc_mode_given = true;
            break;
        case O_OUT:
            ok = cli_parse_format(CMD, "--out", v, false, &t->out);
            o->out_given = true;
            break;
        case O_MODE:
            ok = cli_parse_mode(CMD, "--mode", v, &t->mode);
            break;
        case O_IN_MODE:
            ok = cli_parse_mode(CMD, "--in-mode", v, &t->in_mode);
            break;
        case O_OP:
            ok = parse_op(v, &t->op);
            break;
        case O_FMT:
            ok = cli_parse_format(CMD, "--fmt", v, true, &t->fmt);
            o->fmt_given = true;
            break;
        case O_SEED:
            ok = cli_parse_u64(CMD, "--seed", v, &t->seed);
            break;
        case O_FTZ:
            o->ftz = true;
            break;
        case O_DAZ:
            o->daz = true;
            break;
        case O_ENV:
            ok = cli_parse_env(CMD, "--env", v, &o->env);
            t->env_name = v;
            break;
        case O_JSON:
            t->json = true;
            break;
        case O_EXPLAIN:
            t->explain = true;
            break;
        case O_COLOR:
            ok = cli_parse_color(CMD, "--color", v, &t->color_when);
            break;
        case O_HELP:
            trace_help(stdout);
            *rc = CLI_EXIT_OK;
            return false;
        default:
            break;
        }
        if (!ok) {
            *rc = CLI_EXIT_USAGE;
            return false;
        }
    }
    return true;
}

/* The options against each other and the operand count: CLI_EXIT_OK, or
   the status of the error reported. */
static int
check_options(const trace_ctx *t, const trace_opts *o)
{
    if (t->op != OP_ACCUMULATE && (o->acc_given || o->acc_mode_given))
        return cli_error(CMD, "--acc and --acc-mode apply to accumulations, "
                         "not to --op %s (use --fmt and --mode)",
                         tr_op_names[t->op]);
    if (t->op != OP_ACCUMULATE && t->op != OP_CONVERT && o->out_given)
        return cli_error(CMD, "--out applies to accumulations and --op "
                         "convert, not to --op %s (use --fmt)",
                         tr_op_names[t->op]);
    if (t->op == OP_ACCUMULATE && o->fmt_given)
        return cli_error(CMD, "--fmt applies to --op (the accumulator "
                         "format is --acc)");
    if (t->n_operands == 0)
        return cli_error(CMD, "no operands (expected %s; see 'bf16emu "
                         "trace --help')", t->op == OP_ACCUMULATE
                                               ? "X1 [X2 ...]"
                                               : "the operation's operands");
    if (operand_count(t->op) > 0 && t->n_operands != operand_count(t->op))
        return cli_error(CMD, "--op %s takes %d operand%s, got %d",
                         tr_op_names[t->op], operand_count(t->op),
                         operand_count(t->op) == 1 ? "" : "s",
                         t->n_operands);
    return CLI_EXIT_OK;
}

/* --fmt default for --op: the first prefixed operand's format (f64
   aside), else f32. */
static const sf_format *
default_fmt(const trace_ctx *t)
{
    for (int i = 0; i < t->n_operands; i++) {
        const char *c = strchr(t->operand_text[i], ':');
        char name[32];
        size_t len = c ? (size_t)(c - t->operand_text[i]) : 0;
        const sf_format *f;
        if (c == NULL || len >= sizeof name)
            continue;
        for (size_t k = 0; k < len; k++)
            name[k] = (char)tolower((unsigned char)t->operand_text[i][k]);
        name[len] = '\0';
        f = cli_format_by_name(name);
        if (f != NULL && f != &sf_format_f64)
            return f;
    }
    return &sf_format_f32;
}

/* Reads operand I's text into t->num[I]: CLI_EXIT_OK, or the status of
   the error reported. */
static int
read_operand(trace_ctx *t, int i)
{
    const sf_format *target = t->op == OP_ACCUMULATE ? t->acc : t->fmt;
    char why[512], where[300];

    if (!cli_parse_number(t->operand_text[i], target, t->in_mode,
                          &t->num[i], why, sizeof why))
        return cli_error(CMD, "%soperand %d '%s': %s",
                         operand_where(t, i, where, sizeof where), i + 1,
                         t->operand_text[i], why);
    if (!t->num[i].prefixed) {
        /* the input error is shown exactly: the text's value must be
           within reach */
        mpq_t x;
        bool neg;
        xdec_status st;
        mpq_init(x);
        st = xdec_parse(x, &neg, t->operand_text[i]);
        mpq_clear(x);
        if (st == XDEC_RANGE)
            return cli_error(CMD, "%soperand %d '%s': the exponent is "
                             "out of range (expected a decimal exponent "
                             "within +-%d, or a binary one within +-%d)",
                             operand_where(t, i, where, sizeof where),
                             i + 1, t->operand_text[i], XDEC_EXP10_MAX,
                             XDEC_EXP2_MAX);
    }
    if (t->op != OP_ACCUMULATE && t->op != OP_CONVERT
        && t->num[i].fmt == &sf_format_f64)
        return cli_error(CMD, "%soperand %d '%s': f64 operands are for "
                         "--op convert only",
                         operand_where(t, i, where, sizeof where), i + 1,
                         t->operand_text[i]);
    return CLI_EXIT_OK;
}

/* Reads every operand (t->num, t->read_bits allocated): CLI_EXIT_OK, or
   the status of the first error reported. */
static int
read_operands(trace_ctx *t)
{
    if (t->n_operands <= 0)
        return cli_error(CMD, "no operands");
    t->num = calloc((size_t)t->n_operands, sizeof *t->num);
    t->read_bits = calloc((size_t)t->n_operands, sizeof *t->read_bits);
    if (t->num == NULL || t->read_bits == NULL)
        return cli_error(CMD, "out of memory");
    for (int i = 0; i < t->n_operands; i++) {
        int rc = read_operand(t, i);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return CLI_EXIT_OK;
}

/* The environments of the traced arithmetic and of the operand
   conversions, with their event sinks. */
static void
setup_env(trace_ctx *t, const trace_opts *o)
{
    t->env = o->env;
    t->env.ftz = t->env.ftz || o->ftz;
    t->env.daz = t->env.daz || o->daz;
    t->env.sr_seed = t->seed;
    t->env.sr_counter = 0;
    t->env.flags = 0;
    t->sink.fn = te_capture_event;
    t->sink.user = &t->cap;
    t->env.events = &t->sink;
    t->conv_env = cli_env_ieee();
    t->conv_env.sr_seed = t->seed;
    t->conv_sink.fn = te_capture_event;
    t->conv_sink.user = &t->conv_cap;
    t->conv_env.events = &t->conv_sink;
    t->color = !t->json && cli_color_enabled(stdout, t->color_when);
}

/* Runs the trace into a buffer and writes it to standard output: the
   exit status. */
static int
run_trace(trace_ctx *t)
{
    cli_buf out;
    cli_json js;
    int rc = CLI_EXIT_OK;

    cli_buf_init(&out);
    t->b = &out;
    if (t->json) {
        cli_json_init(&js, &out);
        t->j = &js;
        cli_json_object_begin(&js, NULL);
        tr_json_header(t);
    } else {
        tr_text_header(t);
    }
    if (t->op == OP_ACCUMULATE)
        run_accumulate(t);
    else
        run_op(t);
    if (t->json) {
        cli_json_object_end(&js);
        cli_json_finish(&js);
    }
    if (t->failed) {
        fprintf(stderr, "bf16emu trace: internal error: %s\n", t->fail_msg);
        rc = CLI_EXIT_CHECK;
    } else if (out.failed) {
        rc = cli_error(CMD, "out of memory");
        rc = CLI_EXIT_CHECK;
    } else if (!cli_buf_write(&out, stdout)) {
        fprintf(stderr, "bf16emu trace: cannot write the output\n");
        rc = CLI_EXIT_CHECK;
    }
    cli_buf_free(&out);
    return rc;
}

int
trace_main(int argc, char **argv)
{
    trace_ctx *t = calloc(1, sizeof *t);
    trace_opts o = {0};
    int rc = CLI_EXIT_OK;

    if (t == NULL)
        return cli_error(CMD, "out of memory");
    t->op = OP_ACCUMULATE;
    t->acc = &sf_format_f32;
    t->out = &sf_format_bf16;
    t->fmt = NULL;
    t->acc_mode = t->mode = t->in_mode = SF_RNE;
    t->env_name = "ieee";
    t->color_when = CLI_COLOR_AUTO;
    o.env = cli_env_ieee();

    if (parse_options(t, &o, argc, argv, &rc)) {
        rc = check_options(t, &o);
        if (rc == CLI_EXIT_OK && t->op != OP_ACCUMULATE && t->fmt == NULL)
            t->fmt = default_fmt(t);
        if (rc == CLI_EXIT_OK)
            rc = read_operands(t);
        if (rc == CLI_EXIT_OK) {
            setup_env(t, &o);
            rc = run_trace(t);
        }
    }
    free(t->num);
    free(t->read_bits);
    free_operands(t);
    free(t);
    return rc;
}
