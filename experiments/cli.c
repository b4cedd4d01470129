/* cli.c -- shared helpers of the bf16emu subcommands: options, numbers,
   output buffers, JSON and colour (the error messages: cli_error.c) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* isatty, fileno */
#endif

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "experiments/cli.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

const char cli_format_list[] = "bf16, f16, f32, tf32, e4m3, e5m2";

const char *
cli_version(void)
{
    return PACKAGE_VERSION;
}

/*----------------------------------------------------------------------------
 * Options.
 *--------------------------------------------------------------------------*/
/* Whether S begins with PREFIX (ASCII letters in either case). */
static bool
has_prefix_nocase(const char *s, const char *prefix, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)prefix[i])
            || s[i] == '\0')
            return false;
    return true;
}

void
cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv)
{
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->next = 1;
    p->operands_only = false;
    p->opt_name = NULL;
}

/* Whether ARG (starting with '-') is a negative number rather than an
   option: "-2.5", "-.5", "-0x1p-3", "-inf", "-nan". */
static bool
looks_negative_number(const char *arg)
{
    unsigned char c = (unsigned char)arg[1];

    return isdigit(c) || c == '.' || c == 'i' || c == 'I' || c == 'n'
           || c == 'N';
}

static const cli_option *
find_option(const cli_option *opts, const char *name, size_t len)
{
    for (; opts->name != NULL; opts++)
        if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
            return opts;
    return NULL;
}

int
cli_parser_next(cli_parser *p, const cli_option *opts, const char **value)
{
    for (;;) {
        const char *arg, *name, *eq;
        const cli_option *o;
        size_t len;

        *value = NULL;
        p->opt_name = NULL;
        if (p->next >= p->argc)
            return CLI_ARG_END;
        arg = p->argv[p->next++];
        if (p->operands_only || arg[0] != '-' || arg[1] == '\0') {
            *value = arg;
            return CLI_ARG_OPERAND;
        }
        if (strcmp(arg, "--") == 0) {
            p->operands_only = true;
            continue;
        }
        p->opt_name = arg;
        if (arg[1] != '-') {
            if (looks_negative_number(arg)) {
                *value = arg;
                return CLI_ARG_OPERAND;
            }
            if (strcmp(arg, "-h") == 0
                && (o = find_option(opts, "help", 4)) != NULL)
                return o->id;
            cli_error(p->cmd, "unknown option '%s' (see 'bf16emu %s --help')",
                      arg, p->cmd);
            return CLI_ARG_ERROR;
        }
        name = arg + 2;
        eq = strchr(name, '=');
        len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        o = find_option(opts, name, len);
        if (o == NULL) {
            cli_error(p->cmd,
                      "unknown option '--%.*s' (see 'bf16emu %s "
                      "--help')",
                      (int)len, name, p->cmd);
            return CLI_ARG_ERROR;
        }
        if (!o->has_arg) {
            if (eq != NULL) {
                cli_error(p->cmd, "option '--%s' takes no value (got '%s')",
                          o->name, eq + 1);
                return CLI_ARG_ERROR;
            }
            return o->id;
        }
        if (eq != NULL) {
            *value = eq + 1;
        } else if (p->next < p->argc) {
            *value = p->argv[p->next++];
        } else {
            cli_error(p->cmd,
                      "option '--%s' needs a value (see 'bf16emu %s "
                      "--help')",
                      o->name, p->cmd);
            return CLI_ARG_ERROR;
        }
        return o->id;
    }
}

/*----------------------------------------------------------------------------
 * Format and rounding-mode names: the one place where the names users type
 * are read.  Case does not matter.  Formats: the softfloat names (bf16,
 * f16, fp16, f32, fp32, tf32, e4m3, fp8e4m3, e5m2, fp8e5m2, f64, fp64),
 * the safetensors dtype names (BF16, F16, F32, F64, F8_E4M3, F8_E5M2), and
 * the PyTorch dtype names, with or without "torch.": bfloat16, float16,
 * half, float32, float, float64, double, float8_e4m3fn, float8_e5m2.
 * Modes: rne, rtz, rdn, rup, rna, rod, sr, and the PTX names rn, rz, rm,
 * rp (rne, rtz, rdn, rup).
 *--------------------------------------------------------------------------*/
static const struct
{
    const char *alias, *name;
} format_aliases[] = {
    {"bfloat16", "bf16"},   {"float16", "f16"},        {"half", "f16"},
    {"float32", "f32"},     {"float", "f32"},          {"float64", "f64"},
    {"double", "f64"},      {"float8_e4m3fn", "e4m3"}, {"f8_e4m3", "e4m3"},
    {"float8_e5m2", "e5m2"}, {"f8_e5m2", "e5m2"},
};

static const struct
{
    const char *alias, *name;
} mode_aliases[] = {
    {"rn", "rne"},
    {"rz", "rtz"},
    {"rm", "rdn"},
    {"rp", "rup"},
};

/* NAME in lower case into BUF (N bytes), without a leading "torch." when
   TORCH; false when it does not fit. */
static bool
lower_name(char *buf, size_t n, const char *name, bool torch)
{
    size_t i;

    if (torch && has_prefix_nocase(name, "torch.", 6))
        name += 6;
    for (i = 0; name[i] != '\0'; i++) {
        if (i + 1 >= n)
            return false;
        buf[i] = (char)tolower((unsigned char)name[i]);
    }
    buf[i] = '\0';
    return true;
}

const sf_format *
cli_format_by_name(const char *name)
{
    char low[32];

    if (name == NULL || !lower_name(low, sizeof low, name, true))
        return NULL;
    for (size_t i = 0; i < sizeof format_aliases / sizeof format_aliases[0];
         i++)
        if (strcmp(low, format_aliases[i].alias) == 0)
            return sf_format_by_name(format_aliases[i].name);
    return sf_format_by_name(low);
}

int
cli_mode_by_name(const char *name)
{
    char low[16];

    if (name == NULL || !lower_name(low, sizeof low, name, false))
        return -1;
    for (size_t i = 0; i < sizeof mode_aliases / sizeof mode_aliases[0]; i++)
        if (strcmp(low, mode_aliases[i].alias) == 0)
            return sf_round_by_name(mode_aliases[i].name);
    return sf_round_by_name(low);
}

/* A hint for a format name that is close to one we know but is another
   format; "" when there is none. */
static const char *
format_hint(const char *name)
{
    char low[32];

    if (!lower_name(low, sizeof low, name, true))
        return "";
    if (strcmp(low, "float8_e4m3fnuz") == 0
        || strcmp(low, "float8_e5m2fnuz") == 0)
        return "; the fnuz FP8 types have another bias and NaN encoding "
               "than OCP e4m3 and e5m2, and are not emulated";
    if ((strncmp(low, "int", 3) == 0 && isdigit((unsigned char)low[3]))
        || (strncmp(low, "uint", 4) == 0 && isdigit((unsigned char)low[4]))
        || strcmp(low, "bool") == 0 || strcmp(low, "long") == 0)
        return "; integer types are not floating-point formats";
    return "";
}

bool
cli_parse_format(const char *cmd, const char *opt, const char *value,
                 bool arithmetic, const sf_format **fmt)
{
    const sf_format *f = cli_format_by_name(value);

    if (f == NULL) {
        cli_error(cmd,
                  "%s '%s': unknown format (expected one of %s%s, or a "
                  "PyTorch name such as bfloat16 or torch.float16%s)",
                  opt, value, cli_format_list, arithmetic ? "" : ", f64",
                  format_hint(value));
        return false;
    }
    if (arithmetic && f == &sf_format_f64) {
        cli_error(cmd,
                  "%s '%s': f64 is for conversions only (expected one "
                  "of %s)",
                  opt, value, cli_format_list);
        return false;
    }
    *fmt = f;
    return true;
}

bool
cli_parse_mode(const char *cmd, const char *opt, const char *value,
               sf_round *rm)
{
    int m = cli_mode_by_name(value);

    if (m < 0) {
        cli_error(cmd,
                  "%s '%s': unknown rounding mode (expected rne, rtz, "
                  "rdn, rup, rna, rod or sr, or the PTX names rn, rz, rm, "
                  "rp)",
                  opt, value);
        return false;
    }
    *rm = (sf_round)m;
    return true;
}

bool
cli_parse_u64(const char *cmd, const char *opt, const char *value, uint64_t *v)
{
    const char *s = value;
    unsigned base = 10;
    uint64_t x = 0;

    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (*s == '\0')
        goto bad;
    for (; *s != '\0'; s++) {
        unsigned d;
        unsigned char c = (unsigned char)*s;
        if (isdigit(c))
            d = (unsigned)(c - '0');
        else if (base == 16 && isxdigit(c))
            d = (unsigned)(tolower(c) - 'a' + 10);
        else
            goto bad;
        if (x > (UINT64_MAX - d) / base) {
            cli_error(cmd,
                      "%s '%s': too large (expected an integer below "
                      "2^64)",
                      opt, value);
            return false;
        }
        x = x * base + d;
    }
    *v = x;
    return true;
bad:
    cli_error(cmd,
              "%s '%s': not a non-negative integer (expected decimal "
              "digits or 0x and hex digits)",
              opt, value);
    return false;
}

bool
cli_parse_threads(const char *cmd, const char *value, long *threads)
{
    uint64_t n;

    if (!cli_parse_u64(cmd, "--threads", value, &n))
        return false;
    if (n < 1 || n > 1024) {
        cli_error(cmd, "--threads %s: expected 1 .. 1024", value);
        return false;
    }
    *threads = (long)n;
    return true;
}

bool
cli_parse_double(const char *cmd, const char *opt, const char *value,
                 bool finite, double *v)
{
    cli_number num;
    char why[256];
    double x;

    if (!cli_parse_number(value, &sf_format_f64, SF_RNE, &num, why,
                          sizeof why)) {
        cli_error(cmd, "%s '%s': %s", opt, value, why);
        return false;
    }
    x = sf_to_double(num.fmt, num.bits);
    if (finite && (x != x || x - x != 0.0)) {
        cli_error(cmd, "%s '%s': expected a finite number", opt, value);
        return false;
    }
    *v = x;
    return true;
}

bool
cli_parse_bytes(const char *cmd, const char *opt, const char *value,
                uint64_t *v)
{
    static const char suffixes[] = "KMGT";
    const char *s = value, *p;
    uint64_t x = 0;
    unsigned shift = 0;

    if (!isdigit((unsigned char)*s))
        goto bad;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            goto big;
        x = x * 10 + d;
    }
    if (*s != '\0') {
        p = strchr(suffixes, toupper((unsigned char)*s));
        if (p == NULL)
            goto bad;
        shift = 10 * (unsigned)(p - suffixes + 1);
        s++;
        if (*s == 'i')
            s++;
        if (*s == 'B')
            s++;
        if (*s != '\0')
            goto bad;
    }
    if (shift > 0 && x > (UINT64_MAX >> shift))
        goto big;
    *v = x << shift;
    return true;
big:
    cli_error(cmd, "%s '%s': too large (expected at most 2^64 - 1 bytes)", opt,
              value);
    return false;
bad:
    cli_error(cmd,
              "%s '%s': not a byte count (expected digits with an "
              "optional K, M, G or T suffix, e.g. 512M or 8G)",
              opt, value);
    return false;
}

/*----------------------------------------------------------------------------
 * The instruction-set cap of the run (BF16EMU_ISA).
 *--------------------------------------------------------------------------*/
static int run_isa = SF_ISA_AUTO;

bool
cli_isa_init(void)
{
    const char *v = getenv("BF16EMU_ISA");
    int isa;

    if (v == NULL || v[0] == '\0')
        return true;
    isa = sf_isa_by_name(v);
    if (isa < 0) {
        cli_error(NULL,
                  "BF16EMU_ISA '%s': unknown path (expected auto, scalar, "
                  "avx2, avx512 or neon)",
                  v);
        return false;
    }
    if (!sf_isa_supported((sf_isa)isa)) {
        cli_error(NULL,
                  "BF16EMU_ISA '%s': this CPU (or its operating system) "
                  "lacks that path (the best it has is %s)",
                  v, sf_isa_name(sf_isa_cpu()));
        return false;
    }
    run_isa = isa;
    return true;
}

int
cli_isa(void)
{
    return run_isa;
}

sf_env
cli_env_ieee(void)
{
    sf_env env = SF_ENV_IEEE;

    env.isa = run_isa;
    return env;
}

bool
cli_parse_env(const char *cmd, const char *opt, const char *value, sf_env *env)
{
    static const sf_env ieee = SF_ENV_IEEE, x86 = SF_ENV_X86,
                        avx = SF_ENV_AVX512BF16, nvidia = SF_ENV_NVIDIA,
                        bfdot = SF_ENV_ARM_BFDOT;

    if (strcmp(value, "ieee") == 0)
        *env = ieee;
    else if (strcmp(value, "x86") == 0)
        *env = x86;
    else if (strcmp(value, "avx512bf16") == 0)
        *env = avx;
    else if (strcmp(value, "nvidia") == 0)
        *env = nvidia;
    else if (strcmp(value, "arm-bfdot") == 0)
        *env = bfdot;
    else {
        cli_error(cmd,
                  "%s '%s': unknown environment (expected ieee, x86, "
                  "avx512bf16, nvidia or arm-bfdot)",
                  opt, value);
        return false;
    }
    env->isa = run_isa;
    return true;
}

/*----------------------------------------------------------------------------
 * Numbers.
 *--------------------------------------------------------------------------*/
static void
capture_event(void *user, const sf_event *ev)
{
    *(sf_event *)user = *ev;
}

static bool
parse_bits(const char *text, const char *colon, cli_number *num, char *why,
           size_t n)
{
    char name[32];
    size_t len = (size_t)(colon - text), i;
    const char *s = colon + 1;
    const sf_format *f;
    uint64_t x = 0, limit;

    if (len == 0 || len >= sizeof name) {
        snprintf(why, n,
                 "bad format prefix (expected FORMAT:0xBITS with "
                 "FORMAT one of %s, f64)",
                 cli_format_list);
        return false;
    }
    for (i = 0; i < len; i++)
        name[i] = (char)tolower((unsigned char)text[i]);
    name[len] = '\0';
    f = cli_format_by_name(name);
    if (f == NULL) {
        snprintf(why, n,
                 "unknown format prefix '%s' (expected one of %s, "
                 "f64)",
                 name, cli_format_list);
        return false;
    }
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || s[2] == '\0') {
        snprintf(why, n,
                 "expected a bit pattern 0x followed by hex digits "
                 "after '%s:' (e.g. bf16:0xC013)",
                 name);
        return false;
    }
    limit = f->storage_bits >= 64 ? UINT64_MAX
                                  : (((uint64_t)1 << f->storage_bits) - 1);
    for (s += 2; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        unsigned d;
        if (!isxdigit(c)) {
            snprintf(why, n,
                     "'%c' is not a hex digit (expected %s:0x and "
                     "at most %u hex digits)",
                     c, name, f->storage_bits / 4);
            return false;
        }
        d = isdigit(c) ? (unsigned)(c - '0')
                       : (unsigned)(tolower(c) - 'a' + 10);
        if (x > (limit >> 4) || ((x << 4) | d) > limit) {
            snprintf(why, n,
                     "the bit pattern does not fit the %u bits of "
                     "%s",
                     f->storage_bits, f->name);
            return false;
        }
        x = (x << 4) | d;
    }
    if (f->pad_bits > 0 && (x & (((uint64_t)1 << f->pad_bits) - 1)) != 0) {
        snprintf(why, n,
                 "the low %u bits of a %s pattern must be zero (it "
                 "is stored in %u bits with %u fraction bits)",
                 f->pad_bits, f->name, f->storage_bits, f->frac_bits);
        return false;
    }
    num->fmt = f;
    num->bits = x;
    num->prefixed = true;
    return true;
}

/* A hex-float must have its binary exponent: "0xC013" alone is almost
   always a bit pattern missing its format prefix. */
static bool
hex_without_exponent(const char *text)
{
    const char *s = text;

    if (*s == '+' || *s == '-')
        s++;
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return false;
    return strchr(s, 'p') == NULL && strchr(s, 'P') == NULL;
}

bool
cli_parse_number(const char *text, const sf_format *target, sf_round in_mode,
                 cli_number *num, char *why, size_t n)
{
    const char *colon = strchr(text, ':');
    sf_env env = SF_ENV_IEEE;
    sf_event_sink sink;
    const char *end;

    memset(num, 0, sizeof *num);
    num->text = text;
    if (colon != NULL)
        return parse_bits(text, colon, num, why, n);
    if (text[0] == '\0') {
        snprintf(why, n, "empty (expected a number)");
        return false;
    }
    if (hex_without_exponent(text)) {
        snprintf(why, n,
                 "a hex-float needs a binary exponent (e.g. "
                 "-0x1.34p+1); a bit pattern needs a format prefix (e.g. "
                 "bf16:0xC013)");
        return false;
    }
    sink.fn = capture_event;
    sink.user = &num->ev;
    env.events = &sink;
    num->bits = sf_from_string(target, text, &end, in_mode, &env);
    if (end == text) {
        snprintf(why, n,
                 "not a number (expected a decimal such as "
                 "-2.40625, a hex-float such as -0x1.34p+1, inf, nan, or "
                 "FORMAT:0xBITS such as bf16:0xC013)");
        return false;
    }
    if (*end != '\0') {
        snprintf(why, n,
                 "unexpected '%s' after the number (expected a "
                 "decimal, a hex-float or FORMAT:0xBITS)",
                 end);
        return false;
    }
    num->fmt = target;
    num->flags = env.flags;
    num->inexact = (env.flags & SF_FLAG_INEXACT) != 0;
    return true;
}

/*----------------------------------------------------------------------------
 * Text buffer.
 *--------------------------------------------------------------------------*/
void
cli_buf_init(cli_buf *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

void
cli_buf_free(cli_buf *b)
{
    free(b->p);
    cli_buf_init(b);
}

static bool
buf_reserve(cli_buf *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (b->failed)
        return false;
    need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    p = realloc(b->p, cap);
    if (p == NULL) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void
cli_buf_put_mem(cli_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void
cli_buf_putc(cli_buf *b, char c)
{
    cli_buf_put_mem(b, &c, 1);
}

void
cli_buf_puts(cli_buf *b, const char *s)
{
    cli_buf_put_mem(b, s, strlen(s));
}

void
cli_buf_vprintf(cli_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void
cli_buf_printf(cli_buf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

bool
cli_buf_write(const cli_buf *b, FILE *out)
{
    if (b->failed)
        return false;
    if (b->len > 0 && fwrite(b->p, 1, b->len, out) != b->len)
        return false;
    return fflush(out) == 0;
}

/*----------------------------------------------------------------------------
 * JSON.
 *--------------------------------------------------------------------------*/
void
cli_json_init(cli_json *j, cli_buf *out)
{
    j->out = out;
    j->depth = 0;
    j->has_items[0] = false;
}

static void
json_indent(cli_json *j, int depth)
{
    for (int i = 0; i < depth; i++)
        cli_buf_puts(j->out, "  ");
}

static void
json_escape(cli_buf *b, const char *s)
{
    cli_buf_putc(b, '"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            cli_buf_putc(b, '\\');
            cli_buf_putc(b, (char)c);
        } else if (c == '\n') {
            cli_buf_puts(b, "\\n");
        } else if (c == '\t') {
            cli_buf_puts(b, "\\t");
        } else if (c < 0x20) {
            cli_buf_printf(b, "\\u%04x", c);
        } else {
            cli_buf_putc(b, (char)c);
        }
    }
    cli_buf_putc(b, '"');
}

/* Separator, indentation and key before a value. */
static void
json_item(cli_json *j, const char *key)
{
    if (j->depth > 0) {
        cli_buf_puts(j->out, j->has_items[j->depth] ? ",\n" : "\n");
        j->has_items[j->depth] = true;
        json_indent(j, j->depth);
    }
    if (key != NULL) {
        json_escape(j->out, key);
        cli_buf_puts(j->out, ": ");
    }
}

static void
json_open(cli_json *j, const char *key, char c)
{
    json_item(j, key);
    cli_buf_putc(j->out, c);
    if (j->depth + 1 < CLI_JSON_MAX_DEPTH)
        j->depth++;
    else
        j->out->failed = true;
    j->has_items[j->depth] = false;
}

static void
json_close(cli_json *j, char c)
{
    bool items = j->has_items[j->depth];

    if (j->depth > 0)
        j->depth--;
    if (items) {
        cli_buf_putc(j->out, '\n');
        json_indent(j, j->depth);
    }
    cli_buf_putc(j->out, c);
}

void
cli_json_object_begin(cli_json *j, const char *key)
{
    json_open(j, key, '{');
}

void
cli_json_object_end(cli_json *j)
{
    json_close(j, '}');
}

void
cli_json_array_begin(cli_json *j, const char *key)
{
    json_open(j, key, '[');
}

void
cli_json_array_end(cli_json *j)
{
    json_close(j, ']');
}

void
cli_json_string(cli_json *j, const char *key, const char *s)
{
    json_item(j, key);
    if (s == NULL)
        cli_buf_puts(j->out, "null");
    else
        json_escape(j->out, s);
}

void
cli_json_int(cli_json *j, const char *key, long long v)
{
    json_item(j, key);
    cli_buf_printf(j->out, "%lld", v);
}

void
cli_json_bool(cli_json *j, const char *key, bool v)
{
    json_item(j, key);
    cli_buf_puts(j->out, v ? "true" : "false");
}

void
cli_json_null(cli_json *j, const char *key)
{
    json_item(j, key);
    cli_buf_puts(j->out, "null");
}

void
cli_json_double(cli_json *j, const char *key, double v)
{
    json_item(j, key);
    if (v != v || v - v != 0.0)
        cli_buf_puts(j->out, "null");
    else
        cli_buf_printf(j->out, "%.17g", v);
}

void
cli_json_finish(cli_json *j)
{
    cli_buf_putc(j->out, '\n');
}

/*----------------------------------------------------------------------------
 * Colour.
 *--------------------------------------------------------------------------*/
bool
cli_parse_color(const char *cmd, const char *opt, const char *value,
                cli_color_when *when)
{
    if (strcmp(value, "auto") == 0)
        *when = CLI_COLOR_AUTO;
    else if (strcmp(value, "always") == 0)
        *when = CLI_COLOR_ALWAYS;
    else if (strcmp(value, "never") == 0)
        *when = CLI_COLOR_NEVER;
    else {
        cli_error(cmd, "%s '%s': expected auto, always or never", opt, value);
        return false;
    }
    return true;
}

bool
cli_color_enabled(FILE *stream, cli_color_when when)
{
    const char *no_color;

    if (when != CLI_COLOR_AUTO)
        return when == CLI_COLOR_ALWAYS;
    no_color = getenv("NO_COLOR");
    if (no_color != NULL && no_color[0] != '\0')
        return false;
    return isatty(fileno(stream)) == 1;
}

/*----------------------------------------------------------------------------
 * Small helpers.
 *--------------------------------------------------------------------------*/
uint64_t
cli_sat_mul(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

bool
cli_host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char c;

    memcpy(&c, &one, 1);
    return c == 1;
}

const char *
cli_shape_str(char *buf, size_t n, unsigned ndim, const uint64_t *shape)
{
    size_t o = 0;

    o += (size_t)snprintf(buf, n, "[");
    for (unsigned i = 0; i < ndim && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%" PRIu64, i ? ", " : "",
                              shape[i]);
    if (o < n)
        snprintf(buf + o, n - o, "]");
    return buf;
}

const char *
cli_f32_dec(char *buf, size_t n, uint32_t v)
{
    sf_to_string(&sf_format_f32, v, SF_PRINT_SHORTEST, buf, n);
    return buf;
}

/*----------------------------------------------------------------------------
 * Tensor operands.
 *--------------------------------------------------------------------------*/
bool
cli_split_spec(const char *cmd, cli_operand *o)
{
    const char *colon = strrchr(o->arg, ':');
    struct stat st;

    if (colon == NULL || strchr(colon + 1, '/') != NULL
        || stat(o->arg, &st) == 0) {
        o->path = strdup(o->arg);
        o->key = NULL;
    } else {
        o->path = strndup(o->arg, (size_t)(colon - o->arg));
        o->key = colon + 1;
    }
    if (o->path == NULL) {
        cli_error(cmd, "out of memory");
        return false;
    }
    if (o->path[0] == '\0') {
        cli_error(cmd, "%s '%s': no file name (expected FILE or FILE:KEY)",
                  o->opt, o->arg);
        return false;
    }
    if (o->key != NULL && o->key[0] == '\0') {
        cli_error(cmd,
                  "%s '%s': empty key after ':' (expected FILE or "
                  "FILE:KEY)",
                  o->opt, o->arg);
        return false;
    }
    if (stat(o->path, &st) == 0) {
        o->have_id = true;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    }
    return true;
}

const char *
cli_spec_str(char *buf, size_t n, const cli_operand *o)
{
    if (o->key != NULL)
        snprintf(buf, n, "%s:%s", o->path, o->key);
    else
        snprintf(buf, n, "%s", o->path);
    return buf;
}

bool
cli_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

bool
cli_check_output_file(const char *cmd, const cli_operand *out,
                      const cli_operand *in, size_t n_in, bool force)
{
    for (size_t i = 0; i < n_in; i++) {
        if (in[i].arg == NULL)
            continue;
        if (strcmp(in[i].path, out->path) == 0
            || (in[i].have_id && out->have_id && in[i].dev == out->dev
                && in[i].ino == out->ino)) {
            cli_error(cmd,
                      "--out %s is the input file of %s (%s); an "
                      "input is never overwritten, also not with --force",
                      out->path, in[i].opt, in[i].path);
            return false;
        }
    }
    if (out->have_id && !force) {
        cli_error(cmd,
                  "--out %s: the file exists (give --force to replace "
                  "it)",
                  out->path);
        return false;
    }
    return true;
}

/*----------------------------------------------------------------------------
 * Comparisons and their JSON.
 *--------------------------------------------------------------------------*/
void
cli_json_shape(cli_json *j, const char *key, unsigned ndim,
               const uint64_t *shape)
{
    cli_json_array_begin(j, key);
    for (unsigned i = 0; i < ndim; i++)
        cli_json_int(j, NULL, (long long)shape[i]);
    cli_json_array_end(j);
}

void
cli_json_dist(cli_json *j, const char *key, uint64_t d)
{
    if (d == CMP_DIST_INF)
        cli_json_string(j, key, "inf");
    else
        cli_json_int(j, key, (long long)d);
}

void
cli_json_dist_bucket(cli_json *j, unsigned i, bool inf, uint64_t count)
{
    char buf[64];
    uint64_t lo, hi;

    cli_json_object_begin(j, NULL);
    cli_json_string(j, "bucket",
                    cmp_dist_bucket_label(buf, sizeof buf,
                                          inf ? CMP_DIST_BUCKET_INF : i));
    if (inf) {
        cli_json_null(j, "min");
        cli_json_null(j, "max");
    } else {
        cmp_dist_bucket_bounds(i, &lo, &hi);
        cli_json_int(j, "min", (long long)lo);
        cli_json_int(j, "max", (long long)hi);
    }
    cli_json_int(j, "count", (long long)count);
    cli_json_object_end(j);
}

bool
cli_report_emit(const char *cmd, cli_buf *out, int *rc)
{
    bool ok = false;

    if (out->failed) {
        *rc = cli_error(cmd, "out of memory");
    } else if (!cli_buf_write(out, stdout)) {
        fprintf(stderr, "bf16emu %s: cannot write the report\n", cmd);
        *rc = CLI_EXIT_USAGE;
    } else {
        ok = true;
    }
    cli_buf_free(out);
    return ok;
}

int
cli_take_options(const char *cmd, int argc, char **argv,
                 const cli_option *opts, int help_id, void (*help)(FILE *out),
                 const char *hint,
                 bool (*take)(void *ctx, int id, const char *v), void *ctx)
{
    cli_parser p;
    const char *v;
    int id;

    cli_parser_init(&p, cmd, argc, argv);
    while ((id = cli_parser_next(&p, opts, &v)) != CLI_ARG_END) {
        if (id == CLI_ARG_ERROR)
            return CLI_EXIT_USAGE;
        if (id == CLI_ARG_OPERAND) {
            cli_error(cmd, "unexpected operand '%s' (%s)", v, hint);
            return CLI_EXIT_USAGE;
        }
        if (id == help_id) {
            help(stdout);
            return CLI_EXIT_OK;
        }
        if (!take(ctx, id, v))
            return CLI_EXIT_USAGE;
    }
    return -1;
}

double
cli_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void
cli_progress(const char *cmd, const char *unit, bool tty, uint64_t done,
             uint64_t total, double t0, bool final)
{
    double el = cli_now_s() - t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    int w = 30,
        fill = total ? (int)((double)w * (double)done / (double)total) : w;
    char bar[64];

    if (!tty) {
        if (!final)
            fprintf(stderr,
                    "bf16emu %s: %" PRIu64 "/%" PRIu64
                    " %s (%.0f%%), %.1f s, %.3g %s/s, ETA %.0f s\n",
                    cmd, done, total, unit,
                    total ? 100.0 * (double)done / (double)total : 100.0, el,
                    rate, unit, eta);
        fflush(stderr);
        return;
    }
    for (int i = 0; i < w; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[w] = '\0';
    fprintf(stderr, "\r[%s] %" PRIu64 "/%" PRIu64 " %s  %.2f/s  ETA %.0f s ",
            bar, done, total, unit, rate, eta);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

char *
cli_path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);

    if (p != NULL)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Reads a whole file into a NUL-terminated buffer (*LEN bytes); NULL with
   errno set on failure. */
char *
cli_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;

    if (f == NULL)
        return NULL;
    for (;;) {
        size_t r;
        if (n + 65536 + 1 > cap) {
            char *t;
            cap = cap ? 2 * cap : 65536 * 2;
            t = realloc(buf, cap);
            if (t == NULL) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = t;
        }
        r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        errno = EIO;
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Writes BUF to PATH atomically (a temporary file in the same directory,
   fsync, rename). */
bool
cli_write_atomic(const char *path, const char *buf, size_t n)
{
    size_t tl = strlen(path) + 16;
    char *tmp = malloc(tl);
    int fd;
    bool ok;

    if (tmp == NULL)
        return false;
    snprintf(tmp, tl, "%s.tmp%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        free(tmp);
        return false;
    }
    ok = true;
    for (size_t off = 0; off < n && ok;) {
        ssize_t w = write(fd, buf + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += w > 0 ? (size_t)w : 0;
    }
    ok = ok && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok;
}
