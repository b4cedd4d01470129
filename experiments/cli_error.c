/* cli_error.c -- the error messages of the bf16emu subcommands: cli_error
   and the formatting of its conversions, which keeps a message on one line
   and cuts long echoes of the arguments */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "experiments/cli.h"

/*----------------------------------------------------------------------------
 * Errors.
 *
 * cli_error formats its message itself, one conversion at a time, so that
 * it can treat the strings it is given: control bytes are written as \xNN
 * (a message stays one line), and a string that lies inside the argument
 * vector noted by cli_note_args (an option value or an operand as typed)
 * and is longer than CLI_ECHO_MAX bytes is cut there and followed by
 * "... (N bytes)".
 *--------------------------------------------------------------------------*/
#define CLI_ECHO_MAX 60

static int echo_argc;
static char **echo_argv;

void
cli_note_args(int argc, char **argv)
{
    echo_argc = argc;
    echo_argv = argv;
}

/* Whether S points into one of the noted arguments. */
static bool
is_echo(const char *s)
{
    for (int i = 0; i < echo_argc; i++) {
        const char *a = echo_argv[i];
        if (a != NULL && s >= a && s <= a + strlen(a))
            return true;
    }
    return false;
}

static void
put_escaped(cli_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            cli_buf_printf(b, "\\x%02X", c);
        else
            cli_buf_putc(b, (char)c);
    }
}

/* The string S of N bytes as a message shows it (see above), padded to
   WIDTH (on the right when LEFT). */
static void
put_string(cli_buf *b, const char *s, size_t n, int width, bool left)
{
    cli_buf t;
    size_t shown = n;

    cli_buf_init(&t);
    if (n > CLI_ECHO_MAX && is_echo(s)) {
        shown = CLI_ECHO_MAX;
        /* not inside a UTF-8 sequence */
        while (shown > 0 && ((unsigned char)s[shown] & 0xC0) == 0x80)
            shown--;
    }
    put_escaped(&t, s, shown);
    if (shown < n)
        cli_buf_printf(&t, "\xe2\x80\xa6 (%zu bytes)", n);
    if (!left)
        for (size_t k = t.len; k < (size_t)(width > 0 ? width : 0); k++)
            cli_buf_putc(b, ' ');
    if (t.len > 0)
        cli_buf_put_mem(b, t.p, t.len);
    if (left)
        for (size_t k = t.len; k < (size_t)(width > 0 ? width : 0); k++)
            cli_buf_putc(b, ' ');
    b->failed = b->failed || t.failed;
    cli_buf_free(&t);
}

/* A conversion of a message's format: its text from START ('%') to CONV,
   the flags (FLAGS_LEN bytes at FLAGS), the width (0: none) and
   precision (-1: none), both already taken from the arguments where '*'
   gives them, and the length modifier. */
typedef enum
{
    L_NONE,
    L_HH,
    L_H,
    L_L,
    L_LL,
    L_Z,
    L_T,
    L_J,
    L_BIG
} len_mod;

typedef struct
{
    const char *start, *flags;
    int flags_len, width, prec;
    bool left;
    len_mod lm;
    char conv; /* '\0': the format ended inside the conversion */
} conversion;

/* A width or precision at *P: digits, or '*' read from AP. */
static int
take_number(const char **p, va_list *ap)
{
    int n = 0;

    if (**p == '*') {
        (*p)++;
        return va_arg(*ap, int);
    }
    while (isdigit((unsigned char)**p))
        n = n * 10 + (*(*p)++ - '0');
    return n;
}

/* The length modifier at *P, stepped over. */
static len_mod
take_length(const char **p)
{
    const char *q = *p;

    if (q[0] == 'h' && q[1] == 'h') {
        *p += 2;
        return L_HH;
    }
    if (q[0] == 'l' && q[1] == 'l') {
        *p += 2;
        return L_LL;
    }
    if (*q == 'h' || *q == 'l' || *q == 'z' || *q == 't' || *q == 'j'
        || *q == 'L') {
        (*p)++;
        return *q == 'h'   ? L_H
               : *q == 'l' ? L_L
               : *q == 'z' ? L_Z
               : *q == 't' ? L_T
               : *q == 'j' ? L_J
                           : L_BIG;
    }
    return L_NONE;
}

/* Parses the conversion at P (its '%', not "%%") into C, taking the
   widths and precisions given by '*' from AP; returns the text after
   it. */
static const char *
parse_conversion(const char *p, conversion *c, va_list *ap)
{
    c->start = p++;
    c->left = false;
    c->flags = p;
    while (*p != '\0' && strchr("-+ #0", *p) != NULL)
        c->left = c->left || *p++ == '-';
    c->flags_len = (int)(p - c->flags);
    c->width = take_number(&p, ap);
    if (c->width < 0) {
        c->left = true;
        c->width = -c->width;
    }
    c->prec = -1;
    if (*p == '.') {
        p++;
        c->prec = take_number(&p, ap);
    }
    c->lm = take_length(&p);
    c->conv = *p;
    return c->conv != '\0' ? p + 1 : p;
}

/* The printf spec of C rebuilt from its parts (a width or precision
   given by '*' written out) into SPEC of N bytes. */
static void
rebuild_spec(const conversion *c, char *spec, size_t n)
{
    static const char *const lens_names[] = {"",  "hh", "h", "l", "ll",
                                             "z", "t",  "j", "L"};
    int o;

    o = snprintf(spec, n, "%%%.*s%s", c->flags_len, c->flags,
                 c->left ? "-" : "");
    if (c->width > 0)
        o += snprintf(spec + o, n - (size_t)o, "%d", c->width);
    if (c->prec >= 0)
        o += snprintf(spec + o, n - (size_t)o, ".%d", c->prec);
    snprintf(spec + o, n - (size_t)o, "%s%c", lens_names[c->lm], c->conv);
}

/* %d and %i: the argument of C's length from AP, through SPEC. */
static void
put_signed(cli_buf *b, const char *spec, const conversion *c, va_list *ap)
{
    switch (c->lm) {
    case L_L:
        cli_buf_printf(b, spec, va_arg(*ap, long));
        break;
    case L_LL:
        cli_buf_printf(b, spec, va_arg(*ap, long long));
        break;
    case L_Z:
        cli_buf_printf(b, spec, va_arg(*ap, size_t));
        break;
    case L_T:
        cli_buf_printf(b, spec, va_arg(*ap, ptrdiff_t));
        break;
    case L_J:
        cli_buf_printf(b, spec, va_arg(*ap, intmax_t));
        break;
    default:
        cli_buf_printf(b, spec, va_arg(*ap, int));
        break;
    }
}

/* %u, %o, %x and %X: the argument of C's length from AP, through SPEC. */
static void
put_unsigned(cli_buf *b, const char *spec, const conversion *c, va_list *ap)
{
    switch (c->lm) {
    case L_L:
        cli_buf_printf(b, spec, va_arg(*ap, unsigned long));
        break;
    case L_LL:
        cli_buf_printf(b, spec, va_arg(*ap, unsigned long long));
        break;
    case L_Z:
        cli_buf_printf(b, spec, va_arg(*ap, size_t));
        break;
    case L_T:
        cli_buf_printf(b, spec, va_arg(*ap, ptrdiff_t));
        break;
    case L_J:
        cli_buf_printf(b, spec, va_arg(*ap, uintmax_t));
        break;
    default:
        cli_buf_printf(b, spec, va_arg(*ap, unsigned));
        break;
    }
}

/* The conversion C (its text ending at END) with its argument from AP:
   %s through put_string, %c escaped, the others through printf. */
static void
put_conversion(cli_buf *b, const conversion *c, const char *end, va_list *ap)
{
    char spec[64];

    if (c->conv == 's') {
        const char *s = va_arg(*ap, const char *);
        size_t len = 0;
        if (s == NULL)
            s = "(null)";
        while ((c->prec < 0 || len < (size_t)c->prec) && s[len] != '\0')
            len++;
        put_string(b, s, len, c->width, c->left);
        return;
    }
    rebuild_spec(c, spec, sizeof spec);
    switch (c->conv) {
    case 'd':
    case 'i':
        put_signed(b, spec, c, ap);
        break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
        put_unsigned(b, spec, c, ap);
        break;
    case 'c': {
        char ch = (char)va_arg(*ap, int);
        put_escaped(b, &ch, 1);
        break;
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
        if (c->lm == L_BIG)
            cli_buf_printf(b, spec, va_arg(*ap, long double));
        else
            cli_buf_printf(b, spec, va_arg(*ap, double));
        break;
    case 'p':
        cli_buf_printf(b, spec, va_arg(*ap, void *));
        break;
    default:
        /* an unknown conversion: shown as written */
        cli_buf_put_mem(b, c->start, (size_t)(end - c->start));
        break;
    }
}

/* Formats FMT with AP into B: printf's conversions, with the strings of
   %s treated by put_string. */
static void
format_message(cli_buf *b, const char *fmt, va_list args)
{
    const char *p = fmt;
    va_list ap;

    va_copy(ap, args);
    while (*p != '\0') {
        conversion c;

        if (*p != '%') {
            const char *q = strchr(p, '%');
            size_t n = q != NULL ? (size_t)(q - p) : strlen(p);
            cli_buf_put_mem(b, p, n);
            p += n;
            continue;
        }
        if (p[1] == '%') {
            cli_buf_putc(b, '%');
            p += 2;
            continue;
        }
        p = parse_conversion(p, &c, &ap);
        if (c.conv == '\0')
            break;
        put_conversion(b, &c, p, &ap);
    }
    va_end(ap);
}

int
cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    cli_buf b;

    cli_buf_init(&b);
    if (cmd != NULL)
        cli_buf_printf(&b, "bf16emu %s: ", cmd);
    else
        cli_buf_puts(&b, "bf16emu: ");
    va_start(ap, fmt);
    format_message(&b, fmt, ap);
    va_end(ap);
    cli_buf_putc(&b, '\n');
    if (b.failed)
        fputs("bf16emu: out of memory\n", stderr);
    else
        fputs(b.p, stderr);
    cli_buf_free(&b);
    return CLI_EXIT_USAGE;
}
