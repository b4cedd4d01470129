/* trace_report.c -- bf16emu trace's output of the steps: the operands'
   bits, the alignment, the product, the rounding (kept bits, guard,
   round, sticky, the decision and why), as text and JSON; the header and
   the summary are in trace_summary.c */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/trace_local.h"

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
void
tr_ref_str(char *buf, size_t n, const sf_format *f, uint64_t bits)
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
const char *
tr_value_str(char *buf, size_t n, const sf_format *f, uint64_t bits,
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

const char *
tr_sgr(const trace_ctx *t, const char *seq)
{
    return t->color ? seq : "";
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
    cli_buf_printf(t->b, "%s%u%s %s%s%s ", tr_sgr(t, SGR_SIGN),
                   (unsigned)o.sign, tr_sgr(t, SGR_RESET), tr_sgr(t, SGR_EXP), e,
                   tr_sgr(t, SGR_RESET));
    if (o.k == TE_FINITE || o.k == TE_ZERO)
        cli_buf_printf(t->b, "%s%u.%s%s",
                       tr_sgr(t, SGR_FRAC), te_exp_field(f, bits) != 0 ? 1u : 0u,
                       fr, tr_sgr(t, SGR_RESET));
    else
        cli_buf_printf(t->b, "%s%s%s", tr_sgr(t, SGR_FRAC), fr,
                       tr_sgr(t, SGR_RESET));
}

/* "bf16:0xC097  1 10000001 1.0010111  -4.71875" */
void
tr_value_line(trace_ctx *t, const char *label, const sf_format *f,
               uint64_t bits, const char *suffix)
{
    char ref[40], dec[DEC_MAX];

    tr_ref_str(ref, sizeof ref, f, bits);
    cli_buf_printf(t->b, "  %-8s %-16s ", label, ref);
    put_fields(t, f, bits);
    cli_buf_printf(t->b, "  %s%s\n",
                   tr_value_str(dec, sizeof dec, f, bits, SF_PRINT_EXACT),
                   suffix ? suffix : "");
}

void
tr_json_value(trace_ctx *t, const char *key, const sf_format *f, uint64_t bits)
{
    char buf[DEC_MAX], e[16], fr[64];
    te_opnd o;

    te_decode(f, bits, false, &o);
    cli_json_object_begin(t->j, key);
    cli_json_string(t->j, "format", f->name);
    tr_ref_str(buf, sizeof buf, f, bits);
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
                    tr_value_str(buf, sizeof buf, f, bits, SF_PRINT_EXACT));
    cli_json_string(t->j, "hex",
                    tr_value_str(buf, sizeof buf, f, bits, SF_PRINT_HEX));
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
            tr_internal_error(t, "out of memory");
        cli_buf_puts(&s->fraction_ulps, STR_OR(d));
        free(d);
    }

    /* the displayed bits must be the event's */
    if (!te_ulp_bits_get(r, &s->u, why, sizeof why))
        tr_internal_error(t, "%s", why);
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
        tr_internal_error(t, "%s: the rounding event says %s but %s with these "
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

/* The --explain sentence on the rounding mode's choice for the discarded
   bits of S. */
static void
explain_mode(const te_rounding *r, const split *s, cli_buf *o)
{
    const sf_event *ev = &r->ev;
    bool neg = ev->exact.sign;

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
}

/* The end of the --explain paragraph: FTZ and overflow, then the result
   RES, its value and its error with the error's sign explained. */
static void
explain_result(const te_rounding *r, const char *res, cli_buf *o)
{
    const sf_event *ev = &r->ev;
    bool neg = ev->exact.sign;
    char dec[DEC_MAX], *err, *ub;

    if (ev->ftz)
        cli_buf_puts(o, "The result is tiny, and FTZ replaces it by zero. ");
    if (ev->overflow)
        cli_buf_printf(o, "The rounded value exceeds the largest finite %s, "
                       "so the result is %s. ", r->f->name,
                       ev->error_infinite ? "infinite" : "the largest finite "
                                                         "value");
    if (ev->error_infinite) {
        cli_buf_printf(o, "The result is %s = %s.", res,
                       tr_value_str(dec, sizeof dec, r->f, ev->result,
                                    SF_PRINT_EXACT));
        return;
    }
    err = te_rounding_str(r, TE_V_ERROR);
    ub = te_rounding_str(r, TE_V_ERROR_ULP);
    cli_buf_printf(o, "The result is %s = %s; the error (result - exact) is "
                   "%s = %s ulp", res,
                   tr_value_str(dec, sizeof dec, r->f, ev->result,
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

/* The --explain paragraph, from the event facts. */
static void
explain_text(const te_rounding *r, const split *s, cli_buf *o)
{
    const sf_event *ev = &r->ev;
    bool inexact = ev->guard || ev->round || ev->sticky;
    char res[40];
    const char *fmt = r->f->name;

    tr_ref_str(res, sizeof res, r->f, ev->result);
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
    explain_mode(r, s, o);
    explain_result(r, res, o);
}

/* The rounding R as JSON: XS, ES, US the exact value, the error and the
   error in ulps; DEC the decision, EXPL the explanation. */
static void
rounding_json(trace_ctx *t, const te_rounding *r, const split *s,
              const char *xs, const char *es, const char *us,
              const cli_buf *dec_line, const cli_buf *expl,
              const char *flags)
{
    const sf_event *ev = &r->ev;
    char buf[DEC_MAX];

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
        cli_json_string(t->j, "kept", buf_str(&s->kept));
        cli_json_string(t->j, "kept_fraction", buf_str(&s->kept_frac));
        cli_json_string(t->j, "discarded", buf_str(&s->discarded));
        cli_json_string(t->j, "discarded_ulps", buf_str(&s->fraction_ulps));
        cli_json_int(t->j, "lsb", ev->lsb);
        cli_json_int(t->j, "guard", ev->guard);
        cli_json_int(t->j, "round", ev->round);
        cli_json_int(t->j, "sticky", ev->sticky);
        cli_json_string(t->j, "sticky_bits", buf_str(&s->sticky_bits));
        cli_json_bool(t->j, "tie", ev->tie);
    }
    cli_json_string(t->j, "direction", dir_word(ev->dir));
    cli_json_string(t->j, "decision", buf_str(dec_line));
    if (r->mode == SF_SR && !r->special) {
        char f[DEC_MAX];
        sf_dyadic p = {false, false, -64, 0, s->u.sr_f};
        cli_json_object_begin(t->j, "sr");
        snprintf(buf, sizeof buf, "0x%016" PRIX64, ev->sr_random);
        cli_json_string(t->j, "draw", buf);
        snprintf(buf, sizeof buf, "0x%016" PRIX64, s->u.sr_f);
        cli_json_string(t->j, "threshold", buf);
        cli_json_string(t->j, "p_up", dyadic_str(f, sizeof f, &p));
        cli_json_object_end(t->j);
    }
    tr_json_value(t, "result", r->f, ev->result);
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
        cli_json_string(t->j, "explanation", buf_str(expl));
    cli_json_object_end(t->j);
}

/* The rounding R as text (the arguments of rounding_json). */
static void
rounding_text(trace_ctx *t, const te_rounding *r, const split *s,
              const char *xs, const char *es, const char *us,
              const cli_buf *dec_line, const cli_buf *expl,
              const char *flags)
{
    const sf_event *ev = &r->ev;
    cli_buf *b = t->b;

    if (!r->special) {
        size_t klen = s->kept.len;
        cli_buf_puts(b, "  exact    ");
        put_exact_binary(b, &r->exact, r->tail);
        cli_buf_printf(b, " = %s\n", STR_OR(xs));
        cli_buf_printf(b, "  round to %s (%u fraction bits, %s) at the "
                       "ulp 2^%d:\n", r->f->name, r->f->frac_bits,
                       sf_round_name(r->mode), ev->ulp_exp);
        cli_buf_printf(b, "           %s%s%s | %s%u%s | %u | %s%s%s\n",
                       tr_sgr(t, SGR_BOLD), buf_str(&s->kept),
                       tr_sgr(t, SGR_RESET), tr_sgr(t, SGR_GUARD), ev->guard,
                       tr_sgr(t, SGR_RESET), ev->round, tr_sgr(t, SGR_DIM),
                       buf_str(&s->sticky_bits), tr_sgr(t, SGR_RESET));
        cli_buf_puts(b, "           kept");
        for (size_t k = 4; k < klen; k++)
            cli_buf_putc(b, ' ');
        cli_buf_puts(b, " | G | R | sticky bits\n");
        cli_buf_printf(b, "  kept fraction %s, guard %u, round %u, "
                       "sticky %u%s\n", buf_str(&s->kept_frac),
                       ev->guard, ev->round, ev->sticky,
                       ev->tie ? " (a tie)" : "");
    }
    put_wrapped2(b, buf_str(dec_line), "  decision ", "           ");
    tr_value_line(t, "result", r->f, ev->result, NULL);
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
        cli_buf_printf(b, "  %swhy%s\n", tr_sgr(t, SGR_NOTE),
                       tr_sgr(t, SGR_RESET));
        put_wrapped(b, buf_str(expl), "    ");
    }
}

void
tr_show_rounding(trace_ctx *t, const te_rounding *r)
{
    const sf_event *ev = &r->ev;
    split s;
    cli_buf dec_line, expl;
    char flags[6];
    sf_dyadic eu = ev->error;
    char *xs = NULL, *es = NULL, *us = NULL;

    make_split(t, r, &s);
    if (!r->special) {
        /* computed exactly here; the event's windows are only checked */
        xs = te_rounding_str(r, TE_V_EXACT);
        es = te_rounding_str(r, TE_V_ERROR);
        us = te_rounding_str(r, TE_V_ERROR_ULP);
        if (xs == NULL || es == NULL || us == NULL)
            tr_internal_error(t, "out of memory");
    } else {
        xs = malloc(DEC_MAX);
        es = malloc(DEC_MAX);
        us = malloc(DEC_MAX);
        if (xs == NULL || es == NULL || us == NULL) {
            tr_internal_error(t, "out of memory");
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

    if (t->j != NULL)
        rounding_json(t, r, &s, xs, es, us, &dec_line, &expl, flags);
    else
        rounding_text(t, r, &s, xs, es, us, &dec_line, &expl, flags);
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
void
tr_show_alignment(trace_ctx *t, const te_addend *a, const te_addend *b,
               te_alignment *al)
{
    char why[512];
    cli_buf shifted;
    bool ok = te_align(a, b, al, why, sizeof why);

    if (!ok)
        tr_internal_error(t, "%s", why);
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
void
tr_alignment_context(const te_alignment *al, const te_addend *a, const te_addend *b,
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
 * A step's heading; a product.
 *--------------------------------------------------------------------------*/
void
tr_step_heading(trace_ctx *t, const char *fmt, ...) CLI_PRINTF(2, 3);

void
tr_step_heading(trace_ctx *t, const char *fmt, ...)
{
    va_list ap;

    cli_buf_printf(t->b, "\n%s", tr_sgr(t, SGR_BOLD));
    va_start(ap, fmt);
    cli_buf_vprintf(t->b, fmt, ap);
    va_end(ap);
    cli_buf_printf(t->b, "%s\n", tr_sgr(t, SGR_RESET));
}

void
tr_show_product(trace_ctx *t, const te_opnd *oa, const te_opnd *ob,
             te_addend *p)
{
    xnum *sg = malloc(2 * sizeof *sg);
    int64_t fb = (int64_t)oa->f->frac_bits, top, lsb0;
    cli_buf s1, s2, s3;

    if (sg == NULL) {
        tr_internal_error(t, "out of memory");
        return;
    }
    if (!te_product(oa, ob, p, &sg[0], &sg[1], &top)) {
        tr_internal_error(t, "a product is too wide to show");
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
