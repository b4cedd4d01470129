/* trace_summary.c -- bf16emu trace's header and summary, as text and JSON:
   the options, the environment, the operands (with the input error of a
   decimal operand and the conversion of a prefixed one), and at the end
   the result, the exact sums and the errors against them, the counts and
   the flags */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/trace_local.h"

/*----------------------------------------------------------------------------
 * Operands and conversions into the working format.
 *--------------------------------------------------------------------------*/

/* The error of reading the text of operand N (not prefixed), value -
   text, exactly (the text was checked by xdec_parse when it was read). */
static char *
input_error_str(trace_ctx *t, const cli_number *n)
{
    mpq_t x;
    bool neg;
    char *str = NULL;

    mpq_init(x);
    if (xdec_parse(x, &neg, n->text) == XDEC_OK)
        str = te_error_str(n->fmt, n->bits, x);
    else
        tr_internal_error(t, "operand '%s' cannot be read exactly", n->text);
    mpq_clear(x);
    if (str == NULL)
        tr_internal_error(t, "out of memory");
    return str;
}

/* Note the rounding of a decimal operand that TARGET cannot hold. */
static void
note_decimal(trace_ctx *t, int i, const cli_number *n)
{
    char ref[40], dec[DEC_MAX], *err;

    if (!n->inexact || t->j != NULL)
        return;
    err = n->ev.error_infinite ? NULL : input_error_str(t, n);
    tr_ref_str(ref, sizeof ref, n->fmt, n->bits);
    cli_buf_printf(t->b, "  %snote%s: x%d '%s' is not exactly representable "
                   "in %s; read with %s as %s = %s (error %s)\n",
                   tr_sgr(t, SGR_NOTE), tr_sgr(t, SGR_RESET), i, n->text,
                   n->fmt->name, sf_round_name(t->in_mode), ref,
                   tr_value_str(dec, sizeof dec, n->fmt, n->bits,
                                SF_PRINT_EXACT),
                   n->ev.error_infinite ? "infinite: overflow"
                                        : STR_OR(err));
    free(err);
}

static void
json_operand(trace_ctx *t, int i, const cli_number *n)
{
    cli_json_object_begin(t->j, NULL);
    cli_json_int(t->j, "index", i);
    cli_json_string(t->j, "text", n->text);
    cli_json_string(t->j, "input", n->prefixed ? "bits" : "number");
    tr_json_value(t, "value", n->fmt, n->bits);
    cli_json_bool(t->j, "inexact", n->inexact);
    if (!n->prefixed) {
        cli_json_string(t->j, "in_mode", sf_round_name(t->in_mode));
        if (n->inexact && n->ev.error_infinite)
            cli_json_string(t->j, "input_error", "inf");
        else if (n->inexact) {
            char *err = input_error_str(t, n);
            cli_json_string(t->j, "input_error", STR_OR(err));
            free(err);
        } else
            cli_json_string(t->j, "input_error", "0");
    }
    cli_json_object_end(t->j);
}
/* The note (text) or object (JSON) of converting operand I. */
void
tr_conversion(trace_ctx *t, int i, const cli_number *n, const sf_format *f,
              uint64_t z, const char *err)
{
    char ref[40], ref2[40];

    tr_ref_str(ref, sizeof ref, n->fmt, n->bits);
    tr_ref_str(ref2, sizeof ref2, f, z);
    if (t->j != NULL) {
        cli_json_object_begin(t->j, "conversion");
        cli_json_int(t->j, "operand", i);
        tr_json_value(t, "from", n->fmt, n->bits);
        tr_json_value(t, "to", f, z);
        cli_json_string(t->j, "mode", sf_round_name(t->in_mode));
        cli_json_bool(t->j, "exact", t->conv_cap.ev.dir == 0
                                         && !(t->conv_env.flags
                                              & SF_FLAG_INEXACT));
        cli_json_string(t->j, "error", t->conv_cap.ev.error_infinite
                                           ? "inf"
                                           : STR_OR(err));
        cli_json_object_end(t->j);
    } else if (t->conv_env.flags & SF_FLAG_INEXACT) {
        cli_buf_printf(t->b, "  %snote%s: x%d %s is not exactly "
                       "representable in %s; converted with %s to %s "
                       "(error %s)\n", tr_sgr(t, SGR_NOTE), tr_sgr(t, SGR_RESET),
                       i, ref, f->name, sf_round_name(t->in_mode), ref2,
                       t->conv_cap.ev.error_infinite ? "infinite"
                                                     : STR_OR(err));
    } else {
        cli_buf_printf(t->b, "  x%d %s converted to %s exactly: %s\n", i, ref,
                       f->name, ref2);
    }
}

/*----------------------------------------------------------------------------
 * The headers and the summary.
 *--------------------------------------------------------------------------*/
static const char *
env_desc(const trace_ctx *t, char *buf, size_t n)
{
    snprintf(buf, n, "%s (tininess %s rounding, FTZ %s, DAZ %s)",
             t->env_name, t->env.tininess_after ? "after" : "before",
             t->env.ftz ? "on" : "off", t->env.daz ? "on" : "off");
    return buf;
}

bool
tr_any_sr(const trace_ctx *t)
{
    if (t->op == OP_ACCUMULATE)
        return t->acc_mode == SF_SR || t->mode == SF_SR
               || t->in_mode == SF_SR;
    return t->mode == SF_SR || t->in_mode == SF_SR;
}

void
tr_json_header(trace_ctx *t)
{
    char buf[32];

    cli_json_string(t->j, "command", "trace");
    cli_json_string(t->j, "version", cli_version());
    cli_json_string(t->j, "op", tr_op_names[t->op]);
    if (t->op == OP_ACCUMULATE) {
        cli_json_string(t->j, "acc", t->acc->name);
        cli_json_string(t->j, "acc_mode", sf_round_name(t->acc_mode));
        cli_json_string(t->j, "out", t->out->name);
    } else {
        cli_json_string(t->j, "fmt", t->fmt->name);
        if (t->op == OP_CONVERT)
            cli_json_string(t->j, "out", t->out->name);
    }
    cli_json_string(t->j, "mode", sf_round_name(t->mode));
    cli_json_string(t->j, "in_mode", sf_round_name(t->in_mode));
    cli_json_object_begin(t->j, "env");
    cli_json_string(t->j, "preset", t->env_name);
    cli_json_string(t->j, "tininess", t->env.tininess_after ? "after"
                                                            : "before");
    cli_json_bool(t->j, "ftz", t->env.ftz);
    cli_json_bool(t->j, "daz", t->env.daz);
    if (tr_any_sr(t)) {
        snprintf(buf, sizeof buf, "%" PRIu64, t->seed);
        cli_json_string(t->j, "seed", buf);
    } else {
        cli_json_null(t->j, "seed");
    }
    cli_json_object_end(t->j);
    cli_json_array_begin(t->j, "operands");
    for (int i = 1; i <= t->n_operands; i++)
        json_operand(t, i, &t->num[i - 1]);
    cli_json_array_end(t->j);
}

void
tr_text_header(trace_ctx *t)
{
    char buf[200], ref[40], dec[DEC_MAX];

    if (t->op == OP_ACCUMULATE)
        cli_buf_printf(t->b, "%strace%s: x1", tr_sgr(t, SGR_BOLD),
                       tr_sgr(t, SGR_RESET));
    if (t->op == OP_ACCUMULATE) {
        for (int i = 2; i <= t->n_operands && i <= 4; i++)
            cli_buf_printf(t->b, " + x%d", i);
        if (t->n_operands > 4)
            cli_buf_printf(t->b, " + ... + x%d", t->n_operands);
        cli_buf_printf(t->b, " accumulated in %s (%s), rounded to %s (%s)\n",
                       t->acc->name, sf_round_name(t->acc_mode),
                       t->out->name, sf_round_name(t->mode));
    } else if (t->op == OP_CONVERT) {
        cli_buf_printf(t->b, "%strace%s: convert to %s (%s)\n",
                       tr_sgr(t, SGR_BOLD), tr_sgr(t, SGR_RESET), t->out->name,
                       sf_round_name(t->mode));
    } else {
        cli_buf_printf(t->b, "%strace%s: one %s %s (%s)\n",
                       tr_sgr(t, SGR_BOLD), tr_sgr(t, SGR_RESET), t->fmt->name,
                       tr_op_names[t->op], sf_round_name(t->mode));
    }
    cli_buf_printf(t->b, "environment: %s\n", env_desc(t, buf, sizeof buf));
    if (tr_any_sr(t))
        cli_buf_printf(t->b, "stochastic rounding seed %" PRIu64 "\n",
                       t->seed);
    cli_buf_putc(t->b, '\n');
    for (int i = 1; i <= t->n_operands; i++) {
        const cli_number *n = &t->num[i - 1];
        tr_ref_str(ref, sizeof ref, n->fmt, n->bits);
        if (n->prefixed)
            cli_buf_printf(t->b, "x%-3d %-18s %s\n", i, ref,
                           tr_value_str(dec, sizeof dec, n->fmt, n->bits,
                                        SF_PRINT_EXACT));
        else
            cli_buf_printf(t->b, "x%-3d %-18s %s  (read as %s%s)\n", i,
                           n->text,
                           tr_value_str(dec, sizeof dec, n->fmt, n->bits,
                                        SF_PRINT_EXACT),
                           ref, n->inexact ? ", inexact" : "");
        note_decimal(t, i, n);
    }
}

/* A sum and the error of the result against it, as exact decimals (from
   malloc): the sum S, result - S, and that in ulps of the result. */
typedef struct
{
    char *sum, *err, *ulps;
} sum_text;

static void
sum_text_set(trace_ctx *t, sum_text *st, const mpq_t s, const mpq_t result,
             const sf_event *final_ev)
{
    mpq_t e;

    mpq_init(e);
    mpq_sub(e, result, s);
    st->sum = xdec_rational(s);
    st->err = xdec_rational(e);
    te_mpq_scale2(e, -(int64_t)final_ev->ulp_exp);
    st->ulps = xdec_rational(e);
    mpq_clear(e);
    if (st->sum == NULL || st->err == NULL || st->ulps == NULL)
        tr_internal_error(t, "out of memory");
}

static void
sum_text_free(sum_text *st)
{
    free(st->sum);
    free(st->err);
    free(st->ulps);
}

/* What the summary tells of the sums of an accumulation. */
typedef struct
{
    bool have;      /* finite operands and result: the sums below are set */
    bool all_exact; /* every operand as typed is exact in the working
                       format */
    bool same;      /* the two sums are equal */
    sum_text read;  /* the operands as read */
    sum_text typed; /* the operands as typed */
} sums;

static void
summary_sums(trace_ctx *t, const sf_format *f, uint64_t result,
             const sf_event *final_ev, sums *s)
{
    mpq_t read, typed, r;
    te_opnd o;
    te_typed *tv;

    memset(s, 0, sizeof *s);
    if (t->op != OP_ACCUMULATE || !sf_is_finite(f, result))
        return;
    tv = malloc((size_t)t->n_operands * sizeof *tv);
    if (tv == NULL) {
        tr_internal_error(t, "out of memory");
        return;
    }
    for (int i = 0; i < t->n_operands; i++) {
        tv[i].text = t->num[i].text;
        tv[i].prefixed = t->num[i].prefixed;
        tv[i].fmt = t->num[i].fmt;
        tv[i].bits = t->num[i].bits;
    }
    mpq_inits(read, typed, r, NULL);
    if (te_operand_sums(t->acc, t->n_operands, t->read_bits, tv, read, typed,
                        &s->all_exact)) {
        s->have = true;
        s->same = mpq_equal(read, typed) != 0;
        te_decode(f, result, false, &o);
        te_opnd_to_mpq(&o, r);
        sum_text_set(t, &s->read, read, r, final_ev);
        sum_text_set(t, &s->typed, typed, r, final_ev);
    }
    mpq_clears(read, typed, r, NULL);
    free(tv);
}

static void
summary_json(trace_ctx *t, const sf_format *f, uint64_t result,
             const sf_event *final_ev, const sums *s, const char *flags)
{
    char buf[32];

    cli_json_object_begin(t->j, "summary");
    tr_json_value(t, "result", f, result);
    if (s->have) {
        cli_json_string(t->j, "exact_sum", STR_OR(s->read.sum));
        cli_json_string(t->j, "error", STR_OR(s->read.err));
        cli_json_string(t->j, "error_ulps", STR_OR(s->read.ulps));
        cli_json_int(t->j, "ulp_exp", final_ev->ulp_exp);
        cli_json_bool(t->j, "operands_exact", s->all_exact);
        cli_json_string(t->j, "typed_sum", STR_OR(s->typed.sum));
        cli_json_string(t->j, "typed_error", STR_OR(s->typed.err));
        cli_json_string(t->j, "typed_error_ulps", STR_OR(s->typed.ulps));
    }
    cli_json_int(t->j, "roundings", t->n_roundings);
    cli_json_int(t->j, "inexact_roundings", t->n_inexact);
    cli_json_string(t->j, "flags", flags);
    if (tr_any_sr(t)) {
        snprintf(buf, sizeof buf, "%" PRIu64, t->env.sr_counter);
        cli_json_string(t->j, "sr_draws", buf);
    }
    cli_json_object_end(t->j);
}

/* The exact sum of the operands as read and the error against it; then
   the exact sum of the operands as typed and the error against that, or
   one line saying that it is the same number. */
static void
summary_text_sums(trace_ctx *t, const sf_format *f, const sums *s)
{
    cli_buf_printf(t->b, "  exact sum    %s (of the operands as read: each "
                   "rounded to %s with %s)\n", STR_OR(s->read.sum),
                   t->acc->name, sf_round_name(t->in_mode));
    cli_buf_printf(t->b, "  total error  %s = %s ulp of %s (result - exact "
                   "sum)\n", STR_OR(s->read.err), STR_OR(s->read.ulps),
                   f->name);
    if (s->all_exact) {
        cli_buf_printf(t->b, "  typed sum    the same: every operand as "
                       "typed is exact in %s\n", t->acc->name);
    } else if (s->same) {
        cli_buf_printf(t->b, "  typed sum    the same: the operands' input "
                       "errors cancel\n");
    } else {
        cli_buf_printf(t->b, "  typed sum    %s (exact, of the operands as "
                       "typed, before any rounding)\n", STR_OR(s->typed.sum));
        cli_buf_printf(t->b, "  typed error  %s = %s ulp of %s (result - "
                       "typed sum)\n", STR_OR(s->typed.err),
                       STR_OR(s->typed.ulps), f->name);
    }
}

void
tr_summary(trace_ctx *t, const sf_format *f, uint64_t result,
        const sf_event *final_ev)
{
    char buf[DEC_MAX], flags[6], ref[40];
    sums s;

    sf_flags_str(t->env.flags, flags);
    summary_sums(t, f, result, final_ev, &s);
    if (t->j != NULL) {
        summary_json(t, f, result, final_ev, &s, flags);
    } else {
        tr_ref_str(ref, sizeof ref, f, result);
        cli_buf_printf(t->b, "\n%ssummary%s\n", tr_sgr(t, SGR_BOLD),
                       tr_sgr(t, SGR_RESET));
        cli_buf_printf(t->b, "  result       %s = %s\n", ref,
                       tr_value_str(buf, sizeof buf, f, result,
                                    SF_PRINT_EXACT));
        if (s.have)
            summary_text_sums(t, f, &s);
        cli_buf_printf(t->b, "  roundings    %d, %d inexact\n",
                       t->n_roundings, t->n_inexact);
        cli_buf_printf(t->b, "  flags        %s\n", flags);
        if (tr_any_sr(t))
            cli_buf_printf(t->b, "  sr draws     %" PRIu64 " (seed %" PRIu64
                           ")\n", t->env.sr_counter, t->seed);
    }
    sum_text_free(&s.read);
    sum_text_free(&s.typed);
}
