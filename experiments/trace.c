/* trace.c -- bf16emu trace: an accumulation or one operation, bit by bit */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/exact_decimal.h"
#include "analysis/trace_engine.h"
#include "experiments/cli.h"

#define CMD "trace"

/*
 * What comes from where.  Every rounding fact shown (the exact value, the
 * ulp, the kept last bit, guard, round, sticky, tie, direction, result,
 * error, flags, the stochastic draw) is read from the library's rounding
 * event of that operation.  The presentation of how the exact value came
 * about (exponent difference, aligned significands, shifted-out bits, the
 * exact sum, carry-out, normalisation) is computed from the operand bits
 * with exact integer arithmetic on bit arrays (analysis/trace_engine.h),
 * and checked against the event's exact value; a mismatch is an internal
 * error (exit 1).
 *
 * Every decimal shown (exact values, errors, fractions of an ulp, the
 * input errors of decimal operands) is computed here exactly with GMP from
 * the operand bits and the operands' text (analysis/exact_decimal.h), not
 * from the event's 128-bit windows: a value whose decimal expansion ends is
 * written whole, a quotient or square root that does not end is written to
 * XDEC_DIGITS significant digits (each a true digit) and "...".
 */

/*----------------------------------------------------------------------------
 * Bit strings.  A run of RUN_MIN or more equal bits is written "b{n}"
 * (n copies of bit b), so that any exponent difference fits on a line.
 *--------------------------------------------------------------------------*/
#define RUN_MIN 33

/* Bits of x at weights hi down to lo, '.' after weight `point` when
   lo < point <= hi. */
static void
put_bits(cli_buf *b, const xnum *x, int64_t hi, int64_t lo, int64_t point)
{
    int64_t w = hi;

    while (w >= lo) {
        unsigned v = xn_bit(x, w);
        int64_t end = w;
        while (end > lo && end != point && xn_bit(x, end - 1) == v)
            end--;
        if (w - end + 1 >= RUN_MIN) {
            cli_buf_printf(b, "%u{%" PRId64 "}", v, w - end + 1);
        } else {
            for (int64_t k = w; k >= end; k--)
                cli_buf_putc(b, (char)('0' + v));
        }
        if (end == point && point > lo)
            cli_buf_putc(b, '.');
        w = end - 1;
    }
}

/* Grid of aligned rows: columns hi..lo, '.' after `point`, '|' after
   `cut` (when lo < cut), leading zeros left of the point as blanks.  Runs
   of RUN_MIN or more columns in which every row is constant are written
   "b{n}" (blank rows: spaces of that width). */
typedef struct
{
    const char *label; /* before the row, e.g. "  + " */
    const xnum *x;     /* magnitude shown */
    const char *note;  /* after the row */
} grid_row;

static char
grid_sym(const grid_row *r, int64_t w, int64_t point)
{
    if (w > point) {
        int64_t top = xn_top(r->x);
        if (top == XN_NONE || top < w)
            return ' ';
    }
    return (char)('0' + xn_bit(r->x, w));
}

static void
put_grid(cli_buf *b, const grid_row *rows, int nrows, int64_t hi,
         int64_t lo, int64_t point, int64_t cut, const char *indent)
{
    cli_buf line[4];
    size_t width = 0;

    for (int r = 0; r < nrows; r++)
        cli_buf_init(&line[r]);
    for (int64_t w = hi; w >= lo;) {
        int64_t end = w;
        bool same = true;
        while (end > lo && end != point && end != cut) {
            for (int r = 0; r < nrows && same; r++)
                same = grid_sym(&rows[r], end - 1, point)
                       == grid_sym(&rows[r], w, point);
            if (!same)
                break;
            end--;
        }
        for (int r = 0; r < nrows; r++) {
            char c = grid_sym(&rows[r], w, point);
            if (w - end + 1 >= RUN_MIN) {
                char tok[32];
                snprintf(tok, sizeof tok, "0{%" PRId64 "}", w - end + 1);
                if (c == ' ')
                    for (size_t k = 0; k < strlen(tok); k++)
                        cli_buf_putc(&line[r], ' ');
                else
                    cli_buf_printf(&line[r], "%c{%" PRId64 "}", c,
                                   w - end + 1);
            } else {
                for (int64_t k = w; k >= end; k--)
                    cli_buf_putc(&line[r], grid_sym(&rows[r], k, point));
            }
            if (end == point && point > lo)
                cli_buf_putc(&line[r], '.');
            if (end == cut && cut > lo)
                cli_buf_putc(&line[r], '|');
        }
        w = end - 1;
    }
    for (int r = 0; r < nrows; r++)
        if (line[r].len > width)
            width = line[r].len;
    for (int r = 0; r < nrows; r++) {
        cli_buf_printf(b, "%s%s%s", indent, rows[r].label,
                       line[r].p ? line[r].p : "");
        if (rows[r].note != NULL) {
            for (size_t k = line[r].len; k < width + 3; k++)
                cli_buf_putc(b, ' ');
            cli_buf_puts(b, rows[r].note);
        }
        cli_buf_putc(b, '\n');
        b->failed |= line[r].failed;
        cli_buf_free(&line[r]);
    }
}

/* Text of a cli_buf as a C string ("" when empty). */
static const char *
buf_str(const cli_buf *b)
{
    return b->p != NULL ? b->p : "";
}


/* "bf16:0xC013" */
static void
ref_str(char *buf, size_t n, const sf_format *f, uint64_t bits)
{
    snprintf(buf, n, "%s:0x%0*" PRIX64, f->name,
             (int)((f->storage_bits + 3) / 4), bits);
}

static void
bits_str(char *buf, uint64_t v, unsigned width)
{
    for (unsigned i = 0; i < width; i++)
        buf[i] = (char)('0' + ((v >> (width - 1 - i)) & 1u));
    buf[width] = '\0';
}

/* Exact decimal (or hex-float) text of a value; BUF of N bytes. */
static const char *
value_str(char *buf, size_t n, const sf_format *f, uint64_t bits,
          sf_print_style style)
{
    if (sf_to_string(f, bits, style, buf, n) >= n && n > 4)
        strcpy(buf + n - 4, "...");
    return buf;
}

static const char *
dyadic_str(char *buf, size_t n, const sf_dyadic *d)
{
    if (sf_dyadic_to_string(d, buf, n) >= n && n > 4)
        strcpy(buf + n - 4, "...");
    return buf;
}

static const char *
class_name(const sf_format *f, uint64_t bits)
{
    if (sf_is_snan(f, bits))
        return "snan";
    if (sf_is_nan(f, bits))
        return "nan";
    if (sf_is_inf(f, bits))
        return "inf";
    if (sf_is_zero(f, bits))
        return "zero";
    if (sf_is_subnormal(f, bits))
        return "subnormal";
    return "normal";
}

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

static const char *const op_names[] = {"accumulate", "add", "sub", "mul",
                                       "fma", "div", "sqrt", "convert"};

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

static void
internal_error(trace_ctx *t, const char *fmt, ...) CLI_PRINTF(2, 3);

static void
internal_error(trace_ctx *t, const char *fmt, ...)
{
    va_list ap;

    if (t->failed)
        return;
    t->failed = true;
    va_start(ap, fmt);
    vsnprintf(t->fail_msg, sizeof t->fail_msg, fmt, ap);
    va_end(ap);
}

/* ANSI colours, only when enabled. */
#define SGR_RESET "\033[0m"
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_SIGN "\033[31m"
#define SGR_EXP "\033[32m"
#define SGR_FRAC "\033[34m"
#define SGR_GUARD "\033[1;33m"
#define SGR_NOTE "\033[36m"

static const char *
sgr(const trace_ctx *t, const char *seq)
{
    return t->color ? seq : "";
}

/* Whether the operation just run reported exactly one rounding event. */
static bool
took_one_event(trace_ctx *t, const te_capture *c, const char *what)
{
    if (c->count != 1) {
        internal_error(t, "%s reported %d rounding events (expected 1)",
                       what, c->count);
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Values: text and JSON.
 *--------------------------------------------------------------------------*/
/* "1 10000000 1.0011010" (finite) or "1 11111111 0000000" (Inf, NaN). */
static void
put_fields(trace_ctx *t, const sf_format *f, uint64_t bits)
{
    char e[16], fr[64];
    te_opnd o;

    te_decode(f, bits, false, &o);
    bits_str(e, te_exp_field(f, bits), f->exp_bits);
    bits_str(fr, te_frac_field(f, bits), f->frac_bits);
    cli_buf_printf(t->b, "%s%u%s %s%s%s ", sgr(t, SGR_SIGN),
                   (unsigned)o.sign, sgr(t, SGR_RESET), sgr(t, SGR_EXP), e,
                   sgr(t, SGR_RESET));
    if (o.k == TE_FINITE || o.k == TE_ZERO)
        cli_buf_printf(t->b, "%s%u.%s%s",
                       sgr(t, SGR_FRAC), te_exp_field(f, bits) != 0 ? 1u : 0u,
                       fr, sgr(t, SGR_RESET));
    else
        cli_buf_printf(t->b, "%s%s%s", sgr(t, SGR_FRAC), fr,
                       sgr(t, SGR_RESET));
}

/* "bf16:0xC097  1 10000001 1.0010111  -4.71875" */
static void
put_value_line(trace_ctx *t, const char *label, const sf_format *f,
               uint64_t bits, const char *suffix)
{
    char ref[40], dec[DEC_MAX];

    ref_str(ref, sizeof ref, f, bits);
    cli_buf_printf(t->b, "  %-8s %-16s ", label, ref);
    put_fields(t, f, bits);
    cli_buf_printf(t->b, "  %s%s\n",
                   value_str(dec, sizeof dec, f, bits, SF_PRINT_EXACT),
                   suffix ? suffix : "");
}

static void
json_value(trace_ctx *t, const char *key, const sf_format *f, uint64_t bits)
{
    char buf[DEC_MAX], e[16], fr[64];
    te_opnd o;

    te_decode(f, bits, false, &o);
    cli_json_object_begin(t->j, key);
    cli_json_string(t->j, "format", f->name);
    ref_str(buf, sizeof buf, f, bits);
    cli_json_string(t->j, "bits", strchr(buf, ':') + 1);
    cli_json_string(t->j, "class", class_name(f, bits));
    cli_json_int(t->j, "sign", o.sign);
    bits_str(e, te_exp_field(f, bits), f->exp_bits);
    cli_json_string(t->j, "exponent_bits", e);
    bits_str(fr, te_frac_field(f, bits), f->frac_bits);
    cli_json_string(t->j, "fraction_bits", fr);
    if (o.k == TE_FINITE || o.k == TE_ZERO) {
        char sig[80];
        snprintf(sig, sizeof sig, "%u.%s", te_exp_field(f, bits) != 0 ? 1u : 0u,
                 fr);
        cli_json_string(t->j, "significand", sig);
        cli_json_int(t->j, "exponent",
                     o.k == TE_FINITE ? (long long)o.e : 0);
    } else {
        cli_json_null(t->j, "significand");
        cli_json_null(t->j, "exponent");
    }
    cli_json_string(t->j, "value",
                    value_str(buf, sizeof buf, f, bits, SF_PRINT_EXACT));
    cli_json_string(t->j, "hex",
                    value_str(buf, sizeof buf, f, bits, SF_PRINT_HEX));
    cli_json_object_end(t->j);
}

/* The exact binary of x, normalised: "-1.0010110100001110001 * 2^2". */
static void
put_exact_binary(cli_buf *b, const xnum *x, bool tail)
{
    int64_t top = xn_top(x), low = xn_low(x);

    if (top == XN_NONE) {
        cli_buf_puts(b, x->sign ? "-0" : "0");
        return;
    }
    if (low > top - 1)
        low = top - 1;
    if (x->sign)
        cli_buf_putc(b, '-');
    put_bits(b, x, top, low, top);
    if (tail)
        cli_buf_puts(b, "...");
    cli_buf_printf(b, " * 2^%" PRId64, top);
}

/*----------------------------------------------------------------------------
 * Rounding: the split at the ulp, the decision, the result, the error.
 *--------------------------------------------------------------------------*/
/* Derived split of the exact value at the event's ulp. */
typedef struct
{
    cli_buf kept, kept_frac, sticky_bits, discarded, fraction_ulps;
    int64_t hidden_w; /* weight of the hidden-bit position */
    te_ulp_bits u;    /* the bits at the ulp; SR: the 64-bit discarded
                         fraction F (u.sr_f) */
} split;

static void
split_free(split *s)
{
    cli_buf_free(&s->kept);
    cli_buf_free(&s->kept_frac);
    cli_buf_free(&s->sticky_bits);
    cli_buf_free(&s->discarded);
    cli_buf_free(&s->fraction_ulps);
}

/* S, or a marker when memory ran out. */
#define STR_OR(s) ((s) != NULL ? (s) : "(out of memory)")

static void
make_split(trace_ctx *t, const te_rounding *r, split *s)
{
    const sf_event *ev = &r->ev;
    char why[512];
    int64_t u = ev->ulp_exp, low = xn_low(&r->exact);
    int64_t fb = (int64_t)r->f->frac_bits;

    cli_buf_init(&s->kept);
    cli_buf_init(&s->kept_frac);
    cli_buf_init(&s->sticky_bits);
    cli_buf_init(&s->discarded);
    cli_buf_init(&s->fraction_ulps);
    s->hidden_w = u + fb;
    put_bits(&s->kept, &r->exact, u + fb, u, u + fb);
    put_bits(&s->kept_frac, &r->exact, u + fb - 1, u, XN_NONE);
    if (low != XN_NONE && low < u - 2)
        put_bits(&s->sticky_bits, &r->exact, u - 3, low, XN_NONE);
    else if (!r->tail)
        cli_buf_puts(&s->sticky_bits, "(none)");
    if (r->tail)
        cli_buf_puts(&s->sticky_bits, "...");
    if (low != XN_NONE && low < u)
        put_bits(&s->discarded, &r->exact, u - 1, low, XN_NONE);
    if (r->tail)
        cli_buf_puts(&s->discarded, "...");

    /* the discarded fraction of an ulp, exactly */
    {
        char *d = te_rounding_str(r, TE_V_DISCARDED);
        if (d == NULL)
            internal_error(t, "out of memory");
        cli_buf_puts(&s->fraction_ulps, STR_OR(d));
        free(d);
    }

    /* the displayed bits must be the event's */
    if (!te_ulp_bits_get(r, &s->u, why, sizeof why))
        internal_error(t, "%s", why);
}

static const char *
dir_word(int dir)
{
    return dir > 0 ? "up" : dir < 0 ? "down" : "exact";
}

/* One line: what the mode did with these bits, and why.  Also checks the
   event's direction against the documented rule of the mode. */
static void
decision_text(trace_ctx *t, const te_rounding *r, const split *s, cli_buf *o)
{
    const sf_event *ev = &r->ev;
    bool neg = ev->exact.sign, inexact = ev->guard || ev->round || ev->sticky;
    int expect = te_expected_dir(r, &s->u);
    const char *mag = ev->dir > 0 ? "up in magnitude (away from zero)"
                                  : "down in magnitude (toward zero)";

    if (r->special) {
        cli_buf_printf(o, "no rounding: %s", r->special_why);
        return;
    }
    if (ev->ftz) {
        cli_buf_puts(o, "the result is tiny and FTZ flushes it to zero "
                        "(underflow and inexact are raised)");
        return;
    }
    if (ev->overflow && !inexact) {
        cli_buf_printf(o, "nothing is discarded, but the value exceeds the "
                       "largest finite %s: overflow to %s", r->f->name,
                       ev->error_infinite ? (r->f->specials == SF_SPECIALS_FN
                                                 ? "NaN (no infinity)"
                                                 : "infinity")
                                          : "the largest finite value");
        return;
    }
    if (!inexact) {
        cli_buf_puts(o, "exact: nothing is discarded, no rounding");
        return;
    }
    switch (r->mode) {
    case SF_RNE:
        if (ev->tie) {
            cli_buf_printf(o, "a tie (guard 1, round 0, sticky 0): ties go "
                           "to the even neighbour; the last kept bit is %u, "
                           "so round %s", ev->lsb, mag);
        } else if (ev->guard) {
            cli_buf_printf(o, "guard 1, and round or sticky 1: more than "
                           "half an ulp is discarded, so round %s", mag);
        } else {
            cli_buf_printf(o, "guard 0: less than half an ulp is discarded, "
                           "so round %s", mag);
        }
        break;
    case SF_RNA:
        if (ev->tie)
            cli_buf_printf(o, "a tie (guard 1, round 0, sticky 0): ties go "
                           "away from zero, so round %s", mag);
        else if (ev->guard)
            cli_buf_printf(o, "guard 1: more than half an ulp is discarded, "
                           "so round %s", mag);
        else
            cli_buf_printf(o, "guard 0: less than half an ulp is discarded, "
                           "so round %s", mag);
        break;
    case SF_RTZ:
        cli_buf_printf(o, "toward zero: the discarded bits are dropped, "
                       "round %s", mag);
        break;
    case SF_RDN:
        cli_buf_printf(o, "toward negative on a %s value: round %s",
                       neg ? "negative" : "positive", mag);
        break;
    case SF_RUP:
        cli_buf_printf(o, "toward positive on a %s value: round %s",
                       neg ? "negative" : "positive", mag);
        break;
    case SF_ROD:
        if (ev->lsb)
            cli_buf_printf(o, "round to odd: inexact and the last kept bit "
                           "is already 1, so round %s", mag);
        else
            cli_buf_printf(o, "round to odd: inexact and the last kept bit "
                           "is 0, so it is set to 1: round %s", mag);
        break;
    case SF_SR: {
        char f[DEC_MAX];
        sf_dyadic p = {false, false, -64, 0, s->u.sr_f};
        double u = (double)ev->sr_random / 18446744073709551616.0;
        cli_buf_printf(o, "stochastic: P(up) = F/2^64 = %s; draw U = "
                       "0x%016" PRIX64 " (U/2^64 = %.6f) %s F = 0x%016"
                       PRIX64 ", so round %s",
                       dyadic_str(f, sizeof f, &p), ev->sr_random, u,
                       expect > 0 ? "<" : ">=", s->u.sr_f, mag);
        break;
    }
    default:
        break;
    }
    if (ev->overflow)
        cli_buf_printf(o, "; the result overflows %s (%s)", r->f->name,
                       ev->error_infinite ? (r->f->specials == SF_SPECIALS_FN
                                                 ? "NaN, no infinity"
                                                 : "infinity")
                                          : "largest finite");
    else if (expect != 0 && expect != ev->dir)
        internal_error(t, "%s: the rounding event says %s but %s with these "
                       "bits rounds %s", r->title, dir_word(ev->dir),
                       sf_round_name(r->mode), dir_word(expect));
}

/* Word-wrap TEXT at 78 columns: FIRST before the first line, INDENT
   before the others. */
static void
put_wrapped2(cli_buf *b, const char *text, const char *first,
             const char *indent)
{
    const size_t width = 78;
    size_t col = 0, ind = strlen(indent);

    while (*text != '\0') {
        const char *sp = text;
        size_t len;
        while (*sp != '\0' && *sp != ' ')
            sp++;
        len = (size_t)(sp - text);
        if (col == 0) {
            cli_buf_puts(b, first);
            col = strlen(first);
        } else if (col + 1 + len > width) {
            cli_buf_putc(b, '\n');
            cli_buf_puts(b, indent);
            col = ind;
        } else {
            cli_buf_putc(b, ' ');
            col++;
        }
        cli_buf_put_mem(b, text, len);
        col += len;
        text = *sp == ' ' ? sp + 1 : sp;
    }
    if (col > 0)
        cli_buf_putc(b, '\n');
}

static void
put_wrapped(cli_buf *b, const char *text, const char *indent)
{
    put_wrapped2(b, text, indent, indent);
}

/* The --explain paragraph, from the event facts. */
static void
explain_text(const te_rounding *r, const split *s, cli_buf *o)
{
    const sf_event *ev = &r->ev;
    bool neg = ev->exact.sign;
    bool inexact = ev->guard || ev->round || ev->sticky;
    char res[40], dec[DEC_MAX], *err, *ub;
    const char *fmt = r->f->name;

    ref_str(res, sizeof res, r->f, ev->result);
    if (r->context != NULL)
        cli_buf_printf(o, "%s ", r->context);
    if (r->special) {
        cli_buf_printf(o, "No rounding was needed: %s.", r->special_why);
        return;
    }
    if (ev->daz)
        cli_buf_puts(o, "A subnormal operand was read as zero (DAZ). ");
    if (!inexact && ev->overflow) {
        cli_buf_printf(o, "No bits are discarded, but the value is beyond "
                       "the largest finite %s, so the result overflows to "
                       "%s.", fmt, res);
        return;
    }
    if (!inexact) {
        cli_buf_printf(o, "The exact value fits in %s (%u significant "
                       "bits), so nothing is discarded and the result %s "
                       "is exact in every rounding mode.", fmt,
                       r->f->frac_bits + 1, res);
        return;
    }
    cli_buf_printf(o, "Rounding to %s keeps the bits down to the ulp 2^%d "
                   "(%s) and discards %s, which is %s of an ulp. ",
                   fmt, ev->ulp_exp, buf_str(&s->kept),
                   buf_str(&s->discarded), buf_str(&s->fraction_ulps));
    if (ev->tie)
        cli_buf_puts(o, "The first discarded bit (guard) is 1 and every bit "
                        "below it is 0: an exact tie, half an ulp. ");
    else if (ev->guard)
        cli_buf_printf(o, "The first discarded bit (guard) is 1 and the bits "
                       "below it are not all zero (round %u, sticky %u): "
                       "more than half an ulp. ", ev->round, ev->sticky);
    else
        cli_buf_printf(o, "The first discarded bit (guard) is 0 (round %u, "
                       "sticky %u): less than half an ulp. ", ev->round,
                       ev->sticky);
    if (ev->guard && !ev->round && ev->sticky)
        cli_buf_puts(o, "Without the low-order bits that make sticky 1, "
                        "this would be an exact tie. ");
    switch (r->mode) {
    case SF_RNE:
        if (ev->tie)
            cli_buf_printf(o, "Round-to-nearest-even breaks the tie toward "
                           "the neighbour with an even last bit; the kept "
                           "last bit is %u, so it rounds %s. ", ev->lsb,
                           ev->lsb ? "up in magnitude to make it even"
                                   : "down in magnitude (keeps it)");
        else if (ev->guard)
            cli_buf_puts(o, "Round-to-nearest therefore rounds away from "
                            "zero (up in magnitude). ");
        else
            cli_buf_puts(o, "Round-to-nearest therefore truncates (toward "
                            "zero). ");
        break;
    case SF_RNA:
        if (ev->tie)
            cli_buf_puts(o, "Round-to-nearest-ties-away sends the tie away "
                            "from zero (up in magnitude). ");
        else
            cli_buf_printf(o, "Round-to-nearest-ties-away therefore rounds "
                           "%s. ", ev->guard ? "away from zero (up in "
                                               "magnitude)"
                                             : "toward zero (truncates)");
        break;
    case SF_RTZ:
        cli_buf_puts(o, "Round toward zero ignores the discarded bits and "
                        "truncates (down in magnitude). ");
        break;
    case SF_RDN:
    case SF_RUP: {
        bool away = (r->mode == SF_RDN) == neg;
        cli_buf_printf(o, "Rounding toward %s on a %s value goes %s whenever "
                       "anything is discarded. ",
                       r->mode == SF_RDN ? "negative" : "positive",
                       neg ? "negative" : "positive",
                       away ? "away from zero (up in magnitude)"
                            : "toward zero (truncates)");
        break;
    }
    case SF_ROD:
        cli_buf_printf(o, "Round to odd truncates and then sets the last "
                       "bit when anything was discarded; the kept last bit "
                       "is %u, so the result %s. ", ev->lsb,
                       ev->lsb ? "is the truncated value (down in magnitude)"
                               : "gets its last bit set (up in magnitude)");
        break;
    case SF_SR: {
        char f[DEC_MAX];
        sf_dyadic p = {false, false, -64, 0, s->u.sr_f};
        cli_buf_printf(o, "Stochastic rounding rounds up in magnitude with "
                       "probability equal to the discarded fraction, here "
                       "%s; the random draw U/2^64 = %.6f was %s it, so "
                       "it rounded %s. ",
                       dyadic_str(f, sizeof f, &p),
                       (double)ev->sr_random / 18446744073709551616.0,
                       ev->dir > 0 ? "below" : "not below",
                       ev->dir > 0 ? "up in magnitude" : "down in magnitude");
        break;
    }
    default:
        break;
    }
    if (ev->ftz)
        cli_buf_puts(o, "The result is tiny, and FTZ replaces it by zero. ");
    if (ev->overflow)
        cli_buf_printf(o, "The rounded value exceeds the largest finite %s, "
                       "so the result is %s. ", fmt,
                       ev->error_infinite ? "infinite" : "the largest finite "
                                                         "value");
    if (ev->error_infinite) {
        cli_buf_printf(o, "The result is %s = %s.", res,
                       value_str(dec, sizeof dec, r->f, ev->result,
                                 SF_PRINT_EXACT));
        return;
    }
    err = te_rounding_str(r, TE_V_ERROR);
    ub = te_rounding_str(r, TE_V_ERROR_ULP);
    cli_buf_printf(o, "The result is %s = %s; the error (result - exact) is "
                   "%s = %s ulp", res,
                   value_str(dec, sizeof dec, r->f, ev->result,
                             SF_PRINT_EXACT),
                   STR_OR(err), STR_OR(ub));
    free(err);
    free(ub);
    if (ev->dir != 0)
        cli_buf_printf(o, ": %s, because the value is %s and it was rounded "
                       "%s in magnitude.",
                       ev->error.sign ? "negative (the result lies below the "
                                        "exact value)"
                                      : "positive (the result lies above the "
                                        "exact value)",
                       neg ? "negative" : "positive",
                       ev->dir > 0 ? "up" : "down");
    else
        cli_buf_puts(o, ".");
}

static void
show_rounding(trace_ctx *t, const te_rounding *r)
{
    const sf_event *ev = &r->ev;
    split s;
    cli_buf dec_line, expl;
    char buf[DEC_MAX], flags[6];
    sf_dyadic eu = ev->error;
    char *xs = NULL, *es = NULL, *us = NULL;

    make_split(t, r, &s);
    if (!r->special) {
        /* computed exactly here; the event's windows are only checked */
        xs = te_rounding_str(r, TE_V_EXACT);
        es = te_rounding_str(r, TE_V_ERROR);
        us = te_rounding_str(r, TE_V_ERROR_ULP);
        if (xs == NULL || es == NULL || us == NULL)
            internal_error(t, "out of memory");
    } else {
        xs = malloc(DEC_MAX);
        es = malloc(DEC_MAX);
        us = malloc(DEC_MAX);
        if (xs == NULL || es == NULL || us == NULL) {
            internal_error(t, "out of memory");
        } else {
            eu.exp -= ev->ulp_exp;
            dyadic_str(xs, DEC_MAX, &ev->exact);
            dyadic_str(es, DEC_MAX, &ev->error);
            dyadic_str(us, DEC_MAX, &eu);
        }
    }
    cli_buf_init(&dec_line);
    cli_buf_init(&expl);
    decision_text(t, r, &s, &dec_line);
    if (t->explain)
        explain_text(r, &s, &expl);
    sf_flags_str(ev->flags, flags);
    t->n_roundings++;
    if (ev->dir != 0)
        t->n_inexact++;

    if (t->j != NULL) {
        cli_json_object_begin(t->j, "rounding");
        cli_json_string(t->j, "format", r->f->name);
        cli_json_string(t->j, "mode", sf_round_name(r->mode));
        cli_json_bool(t->j, "rounded", !r->special);
        if (r->special)
            cli_json_string(t->j, "reason", r->special_why);
        cli_json_string(t->j, "exact", STR_OR(xs));
        if (!r->special) {
            cli_buf eb;
            cli_buf_init(&eb);
            put_exact_binary(&eb, &r->exact, r->tail);
            cli_json_string(t->j, "exact_binary", buf_str(&eb));
            cli_buf_free(&eb);
            cli_json_int(t->j, "ulp_exp", ev->ulp_exp);
            cli_json_string(t->j, "kept", buf_str(&s.kept));
            cli_json_string(t->j, "kept_fraction", buf_str(&s.kept_frac));
            cli_json_string(t->j, "discarded", buf_str(&s.discarded));
            cli_json_string(t->j, "discarded_ulps", buf_str(&s.fraction_ulps));
            cli_json_int(t->j, "lsb", ev->lsb);
            cli_json_int(t->j, "guard", ev->guard);
            cli_json_int(t->j, "round", ev->round);
            cli_json_int(t->j, "sticky", ev->sticky);
            cli_json_string(t->j, "sticky_bits", buf_str(&s.sticky_bits));
            cli_json_bool(t->j, "tie", ev->tie);
        }
        cli_json_string(t->j, "direction", dir_word(ev->dir));
        cli_json_string(t->j, "decision", buf_str(&dec_line));
        if (r->mode == SF_SR && !r->special) {
            char f[DEC_MAX];
            sf_dyadic p = {false, false, -64, 0, s.u.sr_f};
            cli_json_object_begin(t->j, "sr");
            snprintf(buf, sizeof buf, "0x%016" PRIX64, ev->sr_random);
            cli_json_string(t->j, "draw", buf);
            snprintf(buf, sizeof buf, "0x%016" PRIX64, s.u.sr_f);
            cli_json_string(t->j, "threshold", buf);
            cli_json_string(t->j, "p_up", dyadic_str(f, sizeof f, &p));
            cli_json_object_end(t->j);
        }
        json_value(t, "result", r->f, ev->result);
        if (ev->error_infinite) {
            cli_json_null(t->j, "error");
            cli_json_null(t->j, "error_ulps");
        } else {
            cli_json_string(t->j, "error", STR_OR(es));
            cli_json_string(t->j, "error_ulps", STR_OR(us));
        }
        cli_json_string(t->j, "flags", flags);
        cli_json_bool(t->j, "inexact", (ev->flags & SF_FLAG_INEXACT) != 0);
        cli_json_bool(t->j, "tiny", ev->tiny);
        cli_json_bool(t->j, "subnormal", ev->subnormal);
        cli_json_bool(t->j, "ftz", ev->ftz);
        cli_json_bool(t->j, "daz", ev->daz);
        cli_json_bool(t->j, "overflow", ev->overflow);
        if (t->explain)
            cli_json_string(t->j, "explanation", buf_str(&expl));
        cli_json_object_end(t->j);
    } else {
        cli_buf *b = t->b;
        if (!r->special) {
            size_t klen = s.kept.len;
            cli_buf_puts(b, "  exact    ");
            put_exact_binary(b, &r->exact, r->tail);
            cli_buf_printf(b, " = %s\n", STR_OR(xs));
            cli_buf_printf(b, "  round to %s (%u fraction bits, %s) at the "
                           "ulp 2^%d:\n", r->f->name, r->f->frac_bits,
                           sf_round_name(r->mode), ev->ulp_exp);
            cli_buf_printf(b, "           %s%s%s | %s%u%s | %u | %s%s%s\n",
                           sgr(t, SGR_BOLD), buf_str(&s.kept),
                           sgr(t, SGR_RESET), sgr(t, SGR_GUARD), ev->guard,
                           sgr(t, SGR_RESET), ev->round, sgr(t, SGR_DIM),
                           buf_str(&s.sticky_bits), sgr(t, SGR_RESET));
            cli_buf_puts(b, "           kept");
            for (size_t k = 4; k < klen; k++)
                cli_buf_putc(b, ' ');
            cli_buf_puts(b, " | G | R | sticky bits\n");
            cli_buf_printf(b, "  kept fraction %s, guard %u, round %u, "
                           "sticky %u%s\n", buf_str(&s.kept_frac),
                           ev->guard, ev->round, ev->sticky,
                           ev->tie ? " (a tie)" : "");
        }
        put_wrapped2(b, buf_str(&dec_line), "  decision ", "           ");
        put_value_line(t, "result", r->f, ev->result, NULL);
        if (!r->special)
            cli_buf_printf(b, "  exact    %s\n", STR_OR(xs));
        if (ev->error_infinite)
            cli_buf_puts(b, "  error    infinite (the result is not "
                            "finite)\n");
        else if (!r->special || ev->dir != 0)
            cli_buf_printf(b, "  error    %s = %s ulp (result - exact, ulp "
                           "2^%d)\n", STR_OR(es), STR_OR(us), ev->ulp_exp);
        cli_buf_printf(b, "  flags    %s%s%s%s%s%s\n", flags,
                       ev->tiny ? "  tiny" : "",
                       ev->subnormal ? "  subnormal result" : "",
                       ev->ftz ? "  flushed to zero (FTZ)" : "",
                       ev->daz ? "  subnormal operand read as zero (DAZ)"
                               : "",
                       ev->overflow ? "  overflow" : "");
        if (t->explain) {
            cli_buf_printf(b, "  %swhy%s\n", sgr(t, SGR_NOTE),
                           sgr(t, SGR_RESET));
            put_wrapped(b, buf_str(&expl), "    ");
        }
    }
    split_free(&s);
    cli_buf_free(&dec_line);
    cli_buf_free(&expl);
    free(xs);
    free(es);
    free(us);
}




/* The alignment of a + b as JSON. */
static void
alignment_json(trace_ctx *t, const te_alignment *al, const char *big_name,
               const cli_buf *shifted)
{
    cli_buf rows[3];

    cli_json_object_begin(t->j, "alignment");
    cli_json_bool(t->j, "zero_operand", false);
    cli_json_string(t->j, "larger", big_name);
    cli_json_int(t->j, "exponent_larger", (long long)al->exp_big);
    cli_json_int(t->j, "exponent_smaller", (long long)al->exp_small);
    cli_json_int(t->j, "exponent_difference", (long long)al->diff);
    cli_json_int(t->j, "shift", (long long)al->diff);
    cli_json_string(t->j, "operation",
                    al->subtract ? "subtract magnitudes" : "add magnitudes");
    for (int i = 0; i < 3; i++)
        cli_buf_init(&rows[i]);
    put_bits(&rows[0], &al->mag_big, al->point, al->lo, al->point);
    put_bits(&rows[1], &al->mag_small, al->point, al->lo, al->point);
    put_bits(&rows[2], &al->mag_sum, al->hi, al->lo, al->point);
    cli_json_string(t->j, "aligned_larger", buf_str(&rows[0]));
    cli_json_string(t->j, "aligned_smaller", buf_str(&rows[1]));
    cli_json_string(t->j, "shifted_out", buf_str(shifted));
    cli_json_int(t->j, "shifted_out_count", (long long)al->n_shifted);
    cli_json_string(t->j, "sum_magnitude", buf_str(&rows[2]));
    cli_json_int(t->j, "carry_out", al->carry);
    cli_json_int(t->j, "normalisation_shift", (long long)al->norm);
    cli_json_int(t->j, "exponent_result", (long long)al->exp_result);
    for (int i = 0; i < 3; i++)
        cli_buf_free(&rows[i]);
    cli_json_object_end(t->j);
}

/* The alignment of a + b as text: the shift, the aligned rows, the
   normalisation. */
static void
alignment_text(trace_ctx *t, const te_alignment *al, const te_addend *a,
               const te_addend *b, const cli_buf *shifted)
{
    const te_addend *big = al->swapped ? b : a, *small = al->swapped ? a : b;
    int64_t point = al->point;
    grid_row rows[3];
    char buf[256], n0[64], n1[64], n2[64];

    cli_buf_printf(t->b, "  exponents %" PRId64 " (%s) and %" PRId64
                   " (%s): difference %" PRId64 ", %s shifted right by %"
                   PRId64 "\n", a->lead, a->name, b->lead, b->name,
                   al->diff < 0 ? -al->diff : al->diff, small->name,
                   al->diff < 0 ? -al->diff : al->diff);
    if (al->n_shifted > 0)
        cli_buf_printf(t->b, "  shifted out of %s (below the last bit of %s)"
                       ": %s (%" PRId64 " bits, %s)\n", small->name,
                       big->name, buf_str(shifted), al->n_shifted,
                       al->shifted_nonzero ? "not all zero" : "all zero");
    else
        cli_buf_puts(t->b, "  no bits shifted out\n");
    cli_buf_printf(t->b, "  %s: the magnitudes are %s\n",
                   al->subtract ? "signs differ" : "signs equal",
                   al->subtract ? "subtracted" : "added");
    snprintf(n0, sizeof n0, "%s", big->name);
    snprintf(n1, sizeof n1, "%s", small->name);
    snprintf(n2, sizeof n2, "exact %s, * 2^%" PRId64,
             al->subtract ? "difference" : "sum", point);
    rows[0].label = "    ";
    rows[0].x = &al->mag_big;
    rows[0].note = n0;
    rows[1].label = al->subtract ? "  - " : "  + ";
    rows[1].x = &al->mag_small;
    rows[1].note = n1;
    rows[2].label = "  = ";
    rows[2].x = &al->sum;
    rows[2].note = n2;
    put_grid(t->b, rows, 3, al->hi, al->lo, point, al->big_last, "     ");
    if (al->carry)
        snprintf(buf, sizeof buf, "carry-out 1: normalise by shifting right "
                 "1, exponent %" PRId64 " -> %" PRId64, point, point + 1);
    else if (al->norm < 0 && !xn_is_zero(&al->sum))
        snprintf(buf, sizeof buf, "carry-out 0, %" PRId64 " leading %s: "
                 "normalise by shifting left %" PRId64 ", exponent %" PRId64
                 " -> %" PRId64, -al->norm,
                 al->subtract ? "bit(s) cancelled" : "zero bit(s)",
                 -al->norm, point, al->exp_result);
    else if (xn_is_zero(&al->sum))
        snprintf(buf, sizeof buf, "the sum is exactly zero");
    else
        snprintf(buf, sizeof buf, "carry-out 0, no normalisation shift");
    cli_buf_printf(t->b, "  %s\n", buf);
}

/* Compute (te_align) and show the alignment of a + b (b already negated
   for a subtraction). */
static void
show_alignment(trace_ctx *t, const te_addend *a, const te_addend *b,
               te_alignment *al)
{
    char why[512];
    cli_buf shifted;
    bool ok = te_align(a, b, al, why, sizeof why);

    if (!ok)
        internal_error(t, "%s", why);
    if (al->any_zero) {
        if (t->j == NULL)
            cli_buf_printf(t->b, "  %s is zero: the exact sum is the other "
                           "operand\n", a->zero ? a->name : b->name);
        else {
            cli_json_object_begin(t->j, "alignment");
            cli_json_bool(t->j, "zero_operand", true);
            cli_json_object_end(t->j);
        }
        return;
    }
    if (!ok)
        return;
    /* the bits of the smaller operand below the larger's last bit */
    cli_buf_init(&shifted);
    if (al->n_shifted > 0)
        put_bits(&shifted, &al->mag_small, al->big_last - 1, al->small_last,
                 XN_NONE);
    if (t->j != NULL)
        alignment_json(t, al, al->swapped ? b->name : a->name, &shifted);
    else
        alignment_text(t, al, a, b, &shifted);
    cli_buf_free(&shifted);
}

/* First sentence of --explain for a rounding after an addition. */
static void
alignment_context(const te_alignment *al, const te_addend *a, const te_addend *b,
                  char *buf, size_t n)
{
    const char *smaller = al->swapped ? a->name : b->name;
    char shift[160];

    if (al->any_zero) {
        snprintf(buf, n, "One operand is zero, so the exact sum is the "
                 "other operand.");
        return;
    }
    if (al->diff == 0)
        snprintf(shift, sizeof shift, "The operands have the same exponent, "
                 "so no alignment shift is needed");
    else
        snprintf(shift, sizeof shift, "The exponents differ by %" PRId64
                 ", so %s is shifted right %" PRId64 " places%s", al->diff,
                 smaller, al->diff,
                 al->n_shifted > 0 ? (al->shifted_nonzero
                                          ? " and some of its bits fall "
                                            "below the last bit of the "
                                            "other operand"
                                          : " (only zero bits fall below the "
                                            "other operand)")
                                   : "");
    if (al->carry)
        snprintf(buf, n, "%s; the %s carries out of the significand "
                 "(exponent %" PRId64 " -> %" PRId64 "), so the sum is "
                 "shifted right one place and its lowest bit moves below the "
                 "kept bits.", shift, al->subtract ? "difference" : "sum",
                 al->exp_big, al->exp_big + 1);
    else if (al->norm < 0)
        snprintf(buf, n, "%s; the subtraction cancels %" PRId64 " leading "
                 "bit%s, so the result is shifted left.", shift, -al->norm,
                 al->norm == -1 ? "" : "s");
    else
        snprintf(buf, n, "%s; there is no carry-out.", shift);
}

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
        internal_error(t, "operand '%s' cannot be read exactly", n->text);
    mpq_clear(x);
    if (str == NULL)
        internal_error(t, "out of memory");
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
    ref_str(ref, sizeof ref, n->fmt, n->bits);
    cli_buf_printf(t->b, "  %snote%s: x%d '%s' is not exactly representable "
                   "in %s; read with %s as %s = %s (error %s)\n",
                   sgr(t, SGR_NOTE), sgr(t, SGR_RESET), i, n->text,
                   n->fmt->name, sf_round_name(t->in_mode), ref,
                   value_str(dec, sizeof dec, n->fmt, n->bits,
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
    json_value(t, "value", n->fmt, n->bits);
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

/* Operand i in format F: prefixed operands of another format are
   converted with the input mode (a note when inexact). */
static uint64_t
operand_in(trace_ctx *t, int i, const sf_format *f)
{
    const cli_number *n = &t->num[i - 1];
    uint64_t z;
    char ref[40], ref2[40], *err = NULL;
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
    ref_str(ref, sizeof ref, n->fmt, n->bits);
    ref_str(ref2, sizeof ref2, f, z);
    if (!t->conv_cap.ev.error_infinite) {
        /* the error, exactly: z - the operand's value */
        mpq_init(x);
        te_decode(n->fmt, n->bits, false, &o);
        te_opnd_to_mpq(&o, x);
        err = te_error_str(f, z, x);
        mpq_clear(x);
        if (err == NULL)
            internal_error(t, "out of memory");
    }
    if (t->j != NULL) {
        cli_json_object_begin(t->j, "conversion");
        cli_json_int(t->j, "operand", i);
        json_value(t, "from", n->fmt, n->bits);
        json_value(t, "to", f, z);
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
                       "(error %s)\n", sgr(t, SGR_NOTE), sgr(t, SGR_RESET),
                       i, ref, f->name, sf_round_name(t->in_mode), ref2,
                       t->conv_cap.ev.error_infinite ? "infinite"
                                                     : STR_OR(err));
    } else {
        cli_buf_printf(t->b, "  x%d %s converted to %s exactly: %s\n", i, ref,
                       f->name, ref2);
    }
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
        internal_error(t, "%s", why);
}

/* Division and square root: the event's window must bound the exact value
   (te_check_quotient). */
static void
check_quotient(trace_ctx *t, const sf_event *ev, const te_opnd *oa,
               const te_opnd *ob, bool is_sqrt)
{
    int rc = te_check_quotient(ev, oa, ob, is_sqrt);

    if (rc < 0)
        internal_error(t, "out of memory");
    else if (rc > 0)
        internal_error(t, "the %s window of the rounding event does not "
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
        put_value_line(t, a_name, f, a_bits,
                       oa.daz ? "  (subnormal, read as zero: DAZ)" : NULL);
        put_value_line(t, b_name, f, b_bits,
                       ob.daz ? "  (subnormal, read as zero: DAZ)" : NULL);
    } else {
        json_value(t, "a", f, a_bits);
        json_value(t, "b", f, b_bits);
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
        show_rounding(t, &r);
        return;
    }
    show_alignment(t, &a, &b, &at->al);
    at->valid = true;
    alignment_context(&at->al, &a, &b, at->context, sizeof at->context);
    setup_rounding(t, &r, title, f, rm, &t->cap.ev, &at->al.sum);
    r.context = at->context;
    if (xn_is_zero(&at->al.sum) && !r.special)
        internal_error(t, "%s: the sum is exactly zero here but the event "
                       "rounded a value", title);
    if (r.special && xn_is_zero(&at->al.sum))
        r.special_why = rm == SF_RDN ? "the exact sum is zero: -0 when "
                                       "rounding toward negative"
                                     : "the exact sum is zero: +0 (or the "
                                       "sign of two equal zeros)";
    show_rounding(t, &r);
}

/*----------------------------------------------------------------------------
 * The accumulation.
 *--------------------------------------------------------------------------*/
static const char *
env_desc(const trace_ctx *t, char *buf, size_t n)
{
    snprintf(buf, n, "%s (tininess %s rounding, FTZ %s, DAZ %s)",
             t->env_name, t->env.tininess_after ? "after" : "before",
             t->env.ftz ? "on" : "off", t->env.daz ? "on" : "off");
    return buf;
}

static bool
any_sr(const trace_ctx *t)
{
    if (t->op == OP_ACCUMULATE)
        return t->acc_mode == SF_SR || t->mode == SF_SR
               || t->in_mode == SF_SR;
    return t->mode == SF_SR || t->in_mode == SF_SR;
}

static void
json_header(trace_ctx *t)
{
    char buf[32];

    cli_json_string(t->j, "command", "trace");
    cli_json_string(t->j, "version", cli_version());
    cli_json_string(t->j, "op", op_names[t->op]);
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
    if (any_sr(t)) {
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

static void
text_header(trace_ctx *t)
{
    char buf[200], ref[40], dec[DEC_MAX];

    if (t->op == OP_ACCUMULATE)
        cli_buf_printf(t->b, "%strace%s: x1", sgr(t, SGR_BOLD),
                       sgr(t, SGR_RESET));
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
                       sgr(t, SGR_BOLD), sgr(t, SGR_RESET), t->out->name,
                       sf_round_name(t->mode));
    } else {
        cli_buf_printf(t->b, "%strace%s: one %s %s (%s)\n",
                       sgr(t, SGR_BOLD), sgr(t, SGR_RESET), t->fmt->name,
                       op_names[t->op], sf_round_name(t->mode));
    }
    cli_buf_printf(t->b, "environment: %s\n", env_desc(t, buf, sizeof buf));
    if (any_sr(t))
        cli_buf_printf(t->b, "stochastic rounding seed %" PRIu64 "\n",
                       t->seed);
    cli_buf_putc(t->b, '\n');
    for (int i = 1; i <= t->n_operands; i++) {
        const cli_number *n = &t->num[i - 1];
        ref_str(ref, sizeof ref, n->fmt, n->bits);
        if (n->prefixed)
            cli_buf_printf(t->b, "x%-3d %-18s %s\n", i, ref,
                           value_str(dec, sizeof dec, n->fmt, n->bits,
                                     SF_PRINT_EXACT));
        else
            cli_buf_printf(t->b, "x%-3d %-18s %s  (read as %s%s)\n", i,
                           n->text,
                           value_str(dec, sizeof dec, n->fmt, n->bits,
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
        internal_error(t, "out of memory");
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
        internal_error(t, "out of memory");
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
    json_value(t, "result", f, result);
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
    if (any_sr(t)) {
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

static void
summary(trace_ctx *t, const sf_format *f, uint64_t result,
        const sf_event *final_ev)
{
    char buf[DEC_MAX], flags[6], ref[40];
    sums s;

    sf_flags_str(t->env.flags, flags);
    summary_sums(t, f, result, final_ev, &s);
    if (t->j != NULL) {
        summary_json(t, f, result, final_ev, &s, flags);
    } else {
        ref_str(ref, sizeof ref, f, result);
        cli_buf_printf(t->b, "\n%ssummary%s\n", sgr(t, SGR_BOLD),
                       sgr(t, SGR_RESET));
        cli_buf_printf(t->b, "  result       %s = %s\n", ref,
                       value_str(buf, sizeof buf, f, result,
                                 SF_PRINT_EXACT));
        if (s.have)
            summary_text_sums(t, f, &s);
        cli_buf_printf(t->b, "  roundings    %d, %d inexact\n",
                       t->n_roundings, t->n_inexact);
        cli_buf_printf(t->b, "  flags        %s\n", flags);
        if (any_sr(t))
            cli_buf_printf(t->b, "  sr draws     %" PRIu64 " (seed %" PRIu64
                           ")\n", t->env.sr_counter, t->seed);
    }
    sum_text_free(&s.read);
    sum_text_free(&s.typed);
}

static void
step_heading(trace_ctx *t, const char *fmt, ...) CLI_PRINTF(2, 3);

static void
step_heading(trace_ctx *t, const char *fmt, ...)
{
    va_list ap;

    cli_buf_printf(t->b, "\n%s", sgr(t, SGR_BOLD));
    va_start(ap, fmt);
    cli_buf_vprintf(t->b, fmt, ap);
    va_end(ap);
    cli_buf_printf(t->b, "%s\n", sgr(t, SGR_RESET));
}

static void
run_accumulate(trace_ctx *t)
{
    uint64_t acc, z;
    char title[64], bname[16];
    add_trace *at = malloc(sizeof *at);
    te_rounding *r = malloc(sizeof *r);
    const char *last_context = NULL;

    if (at == NULL || r == NULL) {
        internal_error(t, "out of memory");
        free(at);
        free(r);
        return;
    }
    memset(at, 0, sizeof *at);
    if (t->j != NULL)
        cli_json_array_begin(t->j, "steps");

    /* step 1: the first operand initialises the accumulator */
    if (t->j != NULL) {
        cli_json_object_begin(t->j, NULL);
        cli_json_int(t->j, "step", 1);
        cli_json_string(t->j, "kind", "init");
    } else {
        step_heading(t, "step 1: acc = x1 (%s)", t->acc->name);
    }
    acc = operand_in(t, 1, t->acc);
    if (t->j != NULL) {
        json_value(t, "acc", t->acc, acc);
        cli_json_object_end(t->j);
    } else {
        put_value_line(t, "acc", t->acc, acc, NULL);
    }

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
            step_heading(t, "step %d: acc + x%d in %s (%s)", i, i,
                         t->acc->name, sf_round_name(t->acc_mode));
        }
        xb = operand_in(t, i, t->acc);
        trace_add(t, title, t->acc, t->acc_mode, acc, "acc", xb, bname,
                  false, &z, at);
        last_context = NULL;
        if (at->valid && at->al.carry)
            last_context = "The last addition carried out of the "
                           "significand, so its bits moved one place to the "
                           "right before this rounding.";
        acc = z;
        if (t->j != NULL)
            cli_json_object_end(t->j);
    }
    if (t->j != NULL)
        cli_json_array_end(t->j);

    /* the final rounding */
    if (!t->failed) {
        te_opnd o;
        xnum *x = malloc(sizeof *x);
        if (x == NULL) {
            internal_error(t, "out of memory");
        } else {
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
                    json_value(t, "value", t->acc, acc);
                } else {
                    step_heading(t, "final: acc to %s (%s)", t->out->name,
                                 sf_round_name(t->mode));
                    put_value_line(t, "acc", t->acc, acc,
                                   o.daz ? "  (subnormal, read as zero: DAZ)"
                                         : NULL);
                }
                setup_rounding(t, r, "the final rounding", t->out, t->mode,
                               &t->cap.ev,
                               (o.k == TE_FINITE) ? x : NULL);
                if (o.k == TE_FINITE || o.k == TE_ZERO)
                    r->context = last_context;
                if (o.k == TE_NAN)
                    r->special_why = "the accumulator is a NaN";
                else if (o.k == TE_INF)
                    r->special_why = "the accumulator is infinite";
                else if (o.k == TE_ZERO)
                    r->special_why = "the accumulator is zero";
                show_rounding(t, r);
                if (t->j != NULL)
                    cli_json_object_end(t->j);
                summary(t, t->out, z, &t->cap.ev);
            }
            free(x);
        }
    }
    free(at);
    free(r);
}

/*----------------------------------------------------------------------------
 * One operation (--op).
 *--------------------------------------------------------------------------*/
/* Show a product of two finite operands and return it as an addend. */
static void
show_product(trace_ctx *t, const te_opnd *oa, const te_opnd *ob,
             te_addend *p)
{
    xnum *sg = malloc(2 * sizeof *sg);
    int64_t fb = (int64_t)oa->f->frac_bits, top, lsb0;
    cli_buf s1, s2, s3;

    if (sg == NULL) {
        internal_error(t, "out of memory");
        return;
    }
    if (!te_product(oa, ob, p, &sg[0], &sg[1], &top)) {
        internal_error(t, "a product is too wide to show");
        free(sg);
        return;
    }
    /* the product's bits, counted from its last significand position */
    lsb0 = p->zero ? p->x.lsb : p->last;
    cli_buf_init(&s1);
    cli_buf_init(&s2);
    cli_buf_init(&s3);
    put_bits(&s1, &sg[0], fb, 0, fb);
    put_bits(&s2, &sg[1], fb, 0, fb);
    put_bits(&s3, &p->x, lsb0 + 2 * fb + 1, lsb0, lsb0 + 2 * fb);
    if (t->j != NULL) {
        cli_json_object_begin(t->j, "product");
        cli_json_string(t->j, "significand_a", buf_str(&s1));
        cli_json_string(t->j, "significand_b", buf_str(&s2));
        cli_json_string(t->j, "significand_product", buf_str(&s3));
        cli_json_int(t->j, "exponent", (long long)(oa->e + ob->e));
        cli_json_int(t->j, "carry_out", !p->zero && top == 2 * fb + 1);
        cli_json_int(t->j, "normalisation_shift",
                     p->zero ? 0 : (long long)(top - 2 * fb));
        cli_json_object_end(t->j);
    } else if (!p->zero) {
        cli_buf_printf(t->b, "  exponents %" PRId64 " + %" PRId64 " = %"
                       PRId64 "\n", oa->e, ob->e, oa->e + ob->e);
        cli_buf_printf(t->b, "  significands multiplied exactly: %s * %s = "
                       "%s (%" PRId64 " bits)\n", buf_str(&s1), buf_str(&s2),
                       buf_str(&s3), 2 * fb + 2);
        if (top == 2 * fb + 1)
            cli_buf_printf(t->b, "  carry-out 1 (product in [2, 4)): "
                           "normalise by shifting right 1, exponent %" PRId64
                           " -> %" PRId64 "\n", oa->e + ob->e,
                           oa->e + ob->e + 1);
        else if (top < 2 * fb)
            cli_buf_printf(t->b, "  subnormal operand: normalise by shifting "
                           "left %" PRId64 "\n", 2 * fb - top);
        else
            cli_buf_puts(t->b, "  carry-out 0, no normalisation shift\n");
    } else {
        cli_buf_puts(t->b, "  a zero factor: the product is zero\n");
    }
    cli_buf_free(&s1);
    cli_buf_free(&s2);
    cli_buf_free(&s3);
    free(sg);
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
        internal_error(t, "out of memory");
        goto done;
    }
    memset(&at->al, 0, sizeof at->al);
    snprintf(title, sizeof title, "the %s %s", f->name, op_names[t->op]);
    if (t->j != NULL) {
        cli_json_array_begin(t->j, "steps");
        cli_json_object_begin(t->j, NULL);
        cli_json_int(t->j, "step", 1);
        cli_json_string(t->j, "kind", op_names[t->op]);
        cli_json_string(t->j, "format", t->op == OP_CONVERT ? t->out->name
                                                            : f->name);
        cli_json_string(t->j, "mode", sf_round_name(t->mode));
    } else if (t->op != OP_CONVERT) {
        static const char *const forms[] = {"", "a + b", "a - b", "a * b",
                                            "a * b + c", "a / b",
                                            "sqrt(a)", ""};
        step_heading(t, "%s in %s (%s)", forms[t->op], f->name,
                     sf_round_name(t->mode));
    }
    if (t->op == OP_CONVERT) {
        f = t->num[0].fmt;
        rf = t->out;
        in[0] = t->num[0].bits;
        snprintf(title, sizeof title, "the conversion %s to %s", f->name,
                 rf->name);
        if (t->j == NULL)
            step_heading(t, "convert %s to %s (%s)", f->name, rf->name,
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

    t->cap.count = 0;
    switch (t->op) {
    case OP_MUL:
        z = sf_mul(f, in[0], in[1], t->mode, &t->env);
        break;
    case OP_FMA:
        z = sf_fma(f, in[0], in[1], in[2], t->mode, &t->env);
        break;
    case OP_DIV:
        z = sf_div(f, in[0], in[1], t->mode, &t->env);
        break;
    case OP_SQRT:
        z = sf_sqrt(f, in[0], t->mode, &t->env);
        break;
    case OP_CONVERT:
    default:
        z = sf_convert(rf, f, in[0], t->mode, &t->env);
        break;
    }
    if (!took_one_event(t, &t->cap, title))
        goto close;
    for (int i = 0; i < nin; i++) {
        if (t->j != NULL)
            json_value(t, names[i], f, in[i]);
        else
            put_value_line(t, names[i], f, in[i],
                           o[i].daz ? "  (subnormal, read as zero: DAZ)"
                                    : NULL);
    }
    {
        bool special_in = false;
        for (int i = 0; i < nin; i++)
            special_in |= o[i].k == TE_NAN || o[i].k == TE_INF;
        if (special_in) {
            setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, NULL);
            r->special = true;
            r->special_why = "a NaN or infinite operand: the result follows "
                             "the special-value rules";
            show_rounding(t, r);
            goto close;
        }
    }
    switch (t->op) {
    case OP_MUL: {
        te_addend p;
        show_product(t, &o[0], &o[1], &p);
        setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, &p.x);
        if (r->special)
            r->special_why = "a zero factor: the product is an exact zero";
        break;
    }
    case OP_FMA: {
        te_addend p, c;
        show_product(t, &o[0], &o[1], &p);
        te_addend_from_opnd(&c, "c", &o[2]);
        show_alignment(t, &p, &c, &at->al);
        alignment_context(&at->al, &p, &c, at->context, sizeof at->context);
        setup_rounding(t, r, title, rf, t->mode, &t->cap.ev, &at->al.sum);
        r->context = at->context;
        if (r->special)
            r->special_why = "a*b + c is exactly zero";
        break;
    }
    case OP_DIV:
    case OP_SQRT: {
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
            break;
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
                           "fraction\n", is_sqrt ? "square root"
                                                  : "quotient");
        break;
    }
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
    show_rounding(t, r);

close:
    if (t->j != NULL) {
        cli_json_object_end(t->j);
        cli_json_array_end(t->j);
    }
    if (!t->failed) {
        sf_event ev = t->cap.ev;
        summary(t, rf, z, &ev);
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

void
trace_help(FILE *out)
{
    fputs(
        "usage: bf16emu trace [options] X1 [X2 ...]\n"
        "       bf16emu trace [options] @FILE | -\n"
        "       bf16emu trace --op OP [options] A [B [C]]\n"
        "\n"
        "Traces the accumulation X1 + X2 + ... + Xn in the accumulator "
        "format, each\naddition rounded with --acc-mode, then the final "
        "rounding to --out with\n--mode; or, with --op, one operation.  For "
        "each rounding it prints the\noperands' bits, the alignment, the "
        "exact result, the kept bits, guard,\nround and sticky, the "
        "decision and why, the result and the signed error\n(result - "
        "exact) exactly and in ulps.\n"
        "\n"
        "Operands: a decimal (-2.40625), a C99 hex-float (-0x1.c5cp-11), "
        "inf, nan,\nor FORMAT:0xBITS (bf16:0xC013, f32:0xC01A0E2E, f16:, "
        "tf32:, e4m3:, e5m2:,\nf64:).  Numbers are read into the working "
        "format with --in-mode; bit\npatterns keep their format and are "
        "converted (a note says when inexactly).\n"
        "@FILE reads operands from FILE, - from standard input: numbers "
        "separated by\nblanks or newlines, '#' to the end of the line a "
        "comment; they take the\nplace of the argument, and may be mixed "
        "with operands on the command line.\n"
        "\n"
        "Every decimal printed is exact: values, sums, errors and the "
        "error of reading\na decimal or hex-float operand (result - the "
        "text's value) are written to\ntheir last digit; a quotient or "
        "square root that does not end is written to\n40 significant "
        "digits, each a true digit, then '...'.\n"
        "\n"
        "options:\n"
        "  --acc FMT         accumulator format (default f32)\n"
        "  --acc-mode MODE   rounding of each addition (default rne)\n"
        "  --out FMT         final format (default bf16; f64 allowed)\n"
        "  --mode MODE       final rounding, or the rounding of --op "
        "(default rne)\n"
        "  --in-mode MODE    reading numbers and converting operands "
        "(default rne)\n"
        "  --op OP           one operation: add, sub, mul, fma (a*b + c), "
        "div, sqrt,\n"
        "                    convert (A to --out)\n"
        "  --fmt FMT         format of --op (default: the first prefixed "
        "operand's\n"
        "                    format, else f32)\n"
        "  --seed N          stochastic-rounding seed (default 0)\n"
        "  --ftz, --daz      flush tiny results / read subnormal operands "
        "as zero\n"
        "  --env PRESET      ieee (default), x86, avx512bf16, nvidia, "
        "arm-bfdot\n"
        "  --explain         add a plain-language reading of each rounding\n"
        "  --json            print one JSON object instead of text\n"
        "  --color WHEN      auto (default: on a terminal unless NO_COLOR), "
        "always,\n"
        "                    never\n"
        "  -h, --help        this help\n"
        "\n"
        "Formats: bf16 f16 f32 tf32 e4m3 e5m2.  Modes: rne rtz rdn rup rna "
        "rod sr.\nIn bit strings, b{n} stands for n copies of bit b.\n"
        "\n"
        "example (the paper's addition):\n"
        "  bf16emu trace f32:0xC01A0E2E bf16:0xC013\n"
        "  bf16emu trace -2.40625 -0x1.c5cp-11 -2.296875\n"
        "  seq 1 1000 | sed 's/$/e-3/' | bf16emu trace --acc bf16 -\n"
        "\n"
        "Exit status: 0 ok, 1 an internal check failed, 2 bad usage or "
        "input.\n",
        out);
}

static bool
parse_op(const char *value, op_kind *op)
{
    for (int i = OP_ADD; i <= OP_CONVERT; i++)
        if (strcmp(value, op_names[i]) == 0) {
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

int
trace_main(int argc, char **argv)
{
    trace_ctx *t = calloc(1, sizeof *t);
    cli_parser p;
    cli_buf out;
    cli_json js;
    const char *v;
    int id, rc = CLI_EXIT_OK;
    bool ftz = false, daz = false, acc_given = false, acc_mode_given = false,
         out_given = false, fmt_given = false;
    char why[512], where[300];
    sf_env env = cli_env_ieee();

    if (t == NULL)
        return cli_error(CMD, "out of memory");
    t->op = OP_ACCUMULATE;
    t->acc = &sf_format_f32;
    t->out = &sf_format_bf16;
    t->fmt = NULL;
    t->acc_mode = t->mode = t->in_mode = SF_RNE;
    t->env_name = "ieee";
    t->color_when = CLI_COLOR_AUTO;

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
            acc_given = true;
            break;
        case O_ACC_MODE:
            ok = cli_parse_mode(CMD, "--acc-mode", v, &t->acc_mode);
            acc_mode_given = true;
            break;
        case O_OUT:
            ok = cli_parse_format(CMD, "--out", v, false, &t->out);
            out_given = true;
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
            fmt_given = true;
            break;
        case O_SEED:
            ok = cli_parse_u64(CMD, "--seed", v, &t->seed);
            break;
        case O_FTZ:
            ftz = true;
            break;
        case O_DAZ:
            daz = true;
            break;
        case O_ENV:
            ok = cli_parse_env(CMD, "--env", v, &env);
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
            free_operands(t);
            free(t);
            return CLI_EXIT_OK;
        default:
            break;
        }
        if (!ok) {
            free_operands(t);
            free(t);
            return CLI_EXIT_USAGE;
        }
    }

    /* consistency of the options */
    if (t->op != OP_ACCUMULATE && (acc_given || acc_mode_given))
        rc = cli_error(CMD, "--acc and --acc-mode apply to accumulations, "
                       "not to --op %s (use --fmt and --mode)",
                       op_names[t->op]);
    else if (t->op != OP_ACCUMULATE && t->op != OP_CONVERT && out_given)
        rc = cli_error(CMD, "--out applies to accumulations and --op "
                       "convert, not to --op %s (use --fmt)",
                       op_names[t->op]);
    else if (t->op == OP_ACCUMULATE && fmt_given)
        rc = cli_error(CMD, "--fmt applies to --op (the accumulator format "
                       "is --acc)");
    else if (t->n_operands == 0)
        rc = cli_error(CMD, "no operands (expected %s; see 'bf16emu trace "
                       "--help')", t->op == OP_ACCUMULATE
                                       ? "X1 [X2 ...]"
                                       : "the operation's operands");
    else if (operand_count(t->op) > 0
             && t->n_operands != operand_count(t->op))
        rc = cli_error(CMD, "--op %s takes %d operand%s, got %d",
                       op_names[t->op], operand_count(t->op),
                       operand_count(t->op) == 1 ? "" : "s", t->n_operands);
    if (rc != CLI_EXIT_OK)
        goto out_free;

    /* --fmt default for --op: the first prefixed operand's format */
    if (t->op != OP_ACCUMULATE && t->fmt == NULL) {
        t->fmt = &sf_format_f32;
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
            if (f != NULL && f != &sf_format_f64) {
                t->fmt = f;
                break;
            }
        }
    }

    if (t->n_operands <= 0) {
        rc = cli_error(CMD, "no operands");
        goto out_free;
    }
    t->num = calloc((size_t)t->n_operands, sizeof *t->num);
    t->read_bits = calloc((size_t)t->n_operands, sizeof *t->read_bits);
    if (t->num == NULL || t->read_bits == NULL) {
        rc = cli_error(CMD, "out of memory");
        goto out_free;
    }
    for (int i = 0; i < t->n_operands; i++) {
        const sf_format *target = t->op == OP_ACCUMULATE ? t->acc : t->fmt;
        if (!cli_parse_number(t->operand_text[i], target, t->in_mode,
                              &t->num[i], why, sizeof why)) {
            rc = cli_error(CMD, "%soperand %d '%s': %s",
                           operand_where(t, i, where, sizeof where), i + 1,
                           t->operand_text[i], why);
            goto out_free;
        }
        if (!t->num[i].prefixed) {
            /* the input error is shown exactly: the text's value must be
               within reach */
            mpq_t x;
            bool neg;
            xdec_status st;
            mpq_init(x);
            st = xdec_parse(x, &neg, t->operand_text[i]);
            mpq_clear(x);
            if (st == XDEC_RANGE) {
                rc = cli_error(CMD, "%soperand %d '%s': the exponent is "
                               "out of range (expected a decimal exponent "
                               "within +-%d, or a binary one within +-%d)",
                               operand_where(t, i, where, sizeof where),
                               i + 1, t->operand_text[i], XDEC_EXP10_MAX,
                               XDEC_EXP2_MAX);
                goto out_free;
            }
        }
        if (t->op != OP_ACCUMULATE && t->op != OP_CONVERT
            && t->num[i].fmt == &sf_format_f64) {
            rc = cli_error(CMD, "%soperand %d '%s': f64 operands are for "
                           "--op convert only",
                           operand_where(t, i, where, sizeof where), i + 1,
                           t->operand_text[i]);
            goto out_free;
        }
    }

    /* the environment of the traced arithmetic */
    t->env = env;
    t->env.ftz = t->env.ftz || ftz;
    t->env.daz = t->env.daz || daz;
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

    cli_buf_init(&out);
    t->b = &out;
    if (t->json) {
        cli_json_init(&js, &out);
        t->j = &js;
        cli_json_object_begin(&js, NULL);
        json_header(t);
    } else {
        text_header(t);
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

out_free:
    free(t->num);
    free(t->read_bits);
    free_operands(t);
    free(t);
    return rc;
}
