/* fuzz_cli -- fuzz target: the command-line number and option parsers of
   experiments/cli.c, against the C library's conversions, the rounding
   order of the directed modes, and jansson */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "experiments/cli.h"
#include "tests/fuzz/fuzz_common.h"

/*
 * Input: byte 0 picks the target format (of bf16, f16, f32, tf32, e4m3,
 * e5m2, f64) and the rounding mode of cli_parse_number, byte 1 the size
 * of its message buffer (1 to 256) and the finite switch of
 * cli_parse_double; the rest is up to MAX_ARGS strings separated by NUL
 * bytes.  The parsers print their complaints on stderr (run libFuzzer with
 * -close_fd_mask=2).  Checked, for each string:
 *
 * - cli_parse_number writes no byte of its message buffer past the size
 *   given and always ends the message; a decimal or hex-float is accepted
 *   in every mode or in none, the results of RDN and RUP bracket those of
 *   RNE, RNA, RTZ and ROD (each is one of the two) and are equal exactly
 *   when the text was exact; with RNE it equals strtod (f64) and strtof
 *   (f32) wherever both read the whole text, and it prints (shortest,
 *   exact and hex) and parses back to the same bits;
 * - cli_parse_double agrees with cli_parse_number for f64;
 * - cli_parse_u64 and cli_parse_bytes accept exactly what their contracts
 *   describe, with the value the reference computes here;
 * - cli_parse_format and cli_parse_mode agree with the softfloat lookups
 *   after the aliases (PyTorch dtype names, PTX rounding names, any case)
 *   are mapped by a table of this file;
 * - the JSON writer escapes the string (as a key and a value) into a
 *   document that jansson reads back to the same string, whenever the
 *   string is valid UTF-8;
 * - ulp distances between the parsed values are symmetric, zero exactly
 *   for equal values, and fall in buckets whose bounds hold them;
 *
 * and the option parser walks the strings as an argument vector without
 * reading past it.
 */

#define MAX_ARGS 16
#define WHY_MAX 256

static const sf_format *const formats[7] = {
    &sf_format_bf16, &sf_format_f16,  &sf_format_f32, &sf_format_tf32,
    &sf_format_e4m3, &sf_format_e5m2, &sf_format_f64,
};

static uint64_t
storage_mask(const sf_format *f)
{
    return f->storage_bits >= 64 ? UINT64_MAX
                                 : ((uint64_t)1 << f->storage_bits) - 1;
}

/*----------------------------------------------------------------------------
 * Numbers.
 *--------------------------------------------------------------------------*/
/* cli_parse_number with a message buffer of WHY_N bytes inside a larger
   one whose tail must stay untouched. */
static bool
parse_guarded(const char *s, const sf_format *target, sf_round rm,
              cli_number *num, size_t why_n)
{
    char why[WHY_MAX + 32];
    bool ok;

    memset(why, 0xA5, sizeof why);
    ok = cli_parse_number(s, target, rm, num, why, why_n);
    for (size_t i = why_n; i < sizeof why; i++)
        FUZZ_CHECK((unsigned char)why[i] == 0xA5);
    if (!ok) {
        FUZZ_CHECK(memchr(why, '\0', why_n) != NULL);
        FUZZ_CHECK(why_n == 1 || why[0] != '\0');
    }
    return ok;
}

/* Parses S back after printing BITS of F in STYLE. */
static void
check_print_parse(const sf_format *f, uint64_t bits, sf_print_style style)
{
    char buf[1200];
    const char *end;
    sf_env env = SF_ENV_IEEE;
    size_t len = sf_to_string(f, bits, style, buf, sizeof buf);
    uint64_t back;

    FUZZ_CHECK(len < sizeof buf);
    FUZZ_CHECK(strlen(buf) == len);
    back = sf_from_string(f, buf, &end, SF_RNE, &env);
    FUZZ_CHECK(*end == '\0');
    FUZZ_CHECK(back == bits);
}

/* Whether S starts with white space, which strtod and strtof skip (the
   host comparison is made on texts without it only). */
static bool
leading_space(const char *s)
{
    return s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\v'
           || s[0] == '\f' || s[0] == '\r';
}

/* Host conversions of S; false when they do not read the whole text. */
static bool
host_double(const char *s, double *v)
{
    char *end;

    if (leading_space(s))
        return false;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0';
}

static bool
host_float(const char *s, float *v)
{
    char *end;

    if (leading_space(s))
        return false;
    errno = 0;
    *v = strtof(s, &end);
    return end != s && *end == '\0';
}

static void
check_number(const char *s, const sf_format *target, sf_round rm, size_t why_n,
             cli_number *out, bool *out_ok)
{
    static const sf_round modes[6] = {SF_RNE, SF_RTZ, SF_RDN,
                                      SF_RUP, SF_RNA, SF_ROD};
    cli_number num, m[6];
    bool ok = parse_guarded(s, target, rm, &num, why_n), any_nan = false;
    double lo, hi;

    *out_ok = ok;
    *out = num;
    if (!ok)
        return;
    FUZZ_CHECK(num.fmt != NULL);
    FUZZ_CHECK(num.text == s);
    FUZZ_CHECK((num.bits & ~storage_mask(num.fmt)) == 0);
    if (num.prefixed) {
        FUZZ_CHECK(num.fmt->pad_bits == 0
                   || (num.bits & (((uint64_t)1 << num.fmt->pad_bits) - 1))
                          == 0);
        return;
    }
    FUZZ_CHECK(num.fmt == target);
    FUZZ_CHECK(num.inexact == ((num.flags & SF_FLAG_INEXACT) != 0));

    /* every deterministic mode accepts the text; RDN and RUP bracket */
    for (int i = 0; i < 6; i++) {
        FUZZ_CHECK(parse_guarded(s, target, modes[i], &m[i], WHY_MAX));
        FUZZ_CHECK(!m[i].prefixed && m[i].fmt == target);
        any_nan = any_nan || sf_is_nan(target, m[i].bits);
    }
    if (!any_nan) {
        uint64_t dn = m[2].bits, up = m[3].bits;
        lo = sf_to_double(target, dn);
        hi = sf_to_double(target, up);
        FUZZ_CHECK(lo <= hi);
        FUZZ_CHECK((dn == up) == !m[0].inexact);
        for (int i = 0; i < 6; i++) {
            FUZZ_CHECK(m[i].bits == dn || m[i].bits == up);
            FUZZ_CHECK(m[i].inexact == m[0].inexact);
        }
        /* round to odd: an inexact result has an odd last bit (in the
           IEEE formats, whose largest finite value is odd too) */
        if (m[0].inexact && target->specials == SF_SPECIALS_IEEE)
            FUZZ_CHECK((m[5].bits >> target->pad_bits & 1) == 1);
    }

    /* RNE against the C library */
    if (target == &sf_format_f64) {
        double h;
        uint64_t hb;
        if (host_double(s, &h)) {
            memcpy(&hb, &h, sizeof hb);
            if (h != h)
                FUZZ_CHECK(sf_is_nan(target, m[0].bits));
            else
                FUZZ_CHECK(hb == m[0].bits);
        }
    } else if (target == &sf_format_f32) {
        float h;
        uint32_t hb;
        if (host_float(s, &h)) {
            memcpy(&hb, &h, sizeof hb);
            if (h != h)
                FUZZ_CHECK(sf_is_nan(target, m[0].bits));
            else
                FUZZ_CHECK(hb == m[0].bits);
        }
    }

    /* printing and parsing back */
    if (!sf_is_nan(target, m[0].bits)) {
        check_print_parse(target, m[0].bits, SF_PRINT_SHORTEST);
        check_print_parse(target, m[0].bits, SF_PRINT_EXACT);
        check_print_parse(target, m[0].bits, SF_PRINT_HEX);
    }
}

static void
check_double(const char *s, bool finite)
{
    cli_number num;
    char why[WHY_MAX];
    bool ref =
        cli_parse_number(s, &sf_format_f64, SF_RNE, &num, why, sizeof why);
    double v = 0.0, want = 0.0;
    bool ok = cli_parse_double("fuzz", "--x", s, finite, &v);

    if (ref)
        want = sf_to_double(num.fmt, num.bits);
    if (ref && finite && !isfinite(want))
        ref = false;
    FUZZ_CHECK(ok == ref);
    if (ok && want == want)
        FUZZ_CHECK(memcmp(&v, &want, sizeof v) == 0);
    if (ok && want != want)
        FUZZ_CHECK(v != v);
}

/* cli_parse_u64: decimal digits, or 0x/0X and hex digits, below 2^64. */
static void
check_u64(const char *s)
{
    const char *p = s;
    unsigned base = 10;
    bool syntax = true, big = false;
    uint64_t ref = 0, v = 0;
    bool ok;

    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    syntax = *p != '\0';
    for (; *p != '\0' && syntax; p++) {
        int d = base == 16 ? fuzz_hex_digit((unsigned char)*p) : -1;
        if (base == 10)
            d = *p >= '0' && *p <= '9' ? *p - '0' : -1;
        if (d < 0) {
            syntax = false;
            break;
        }
        if (ref > (UINT64_MAX - (uint64_t)d) / base)
            big = true;
        ref = ref * base + (uint64_t)d;
    }
    ok = cli_parse_u64("fuzz", "--n", s, &v);
    FUZZ_CHECK(ok == (syntax && !big));
    if (ok)
        FUZZ_CHECK(v == ref);
}

/* cli_parse_bytes: digits, then optionally K, M, G or T (either case), an
   'i' and a 'B'; at most 2^64 - 1 bytes. */
static void
check_bytes(const char *s)
{
    static const char suffixes[] = "KMGTkmgt";
    const char *p = s;
    bool syntax, big = false;
    uint64_t x = 0, v = 0;
    unsigned shift = 0;
    bool ok;

    syntax = *p >= '0' && *p <= '9';
    for (; *p >= '0' && *p <= '9'; p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            big = true;
        x = x * 10 + d;
    }
    if (syntax && *p != '\0') {
        const char *q = strchr(suffixes, *p);
        if (q == NULL) {
            syntax = false;
        } else {
            shift = 10 * (unsigned)((q - suffixes) % 4 + 1);
            p++;
            if (*p == 'i')
                p++;
            if (*p == 'B')
                p++;
            syntax = *p == '\0';
        }
    }
    if (!big && shift > 0 && x > (UINT64_MAX >> shift))
        big = true;
    ok = cli_parse_bytes("fuzz", "--max-memory", s, &v);
    FUZZ_CHECK(ok == (syntax && !big));
    if (ok)
        FUZZ_CHECK(v == x << shift);
}

/* The names users may type, written out here independently of cli.c:
   the format or mode each stands for (after lower-casing, and for formats
   after dropping a leading "torch."). */
static const char *const format_alias[][2] = {
    {"bfloat16", "bf16"}, {"float16", "f16"},        {"half", "f16"},
    {"float32", "f32"},   {"float", "f32"},          {"float64", "f64"},
    {"double", "f64"},    {"float8_e4m3fn", "e4m3"}, {"float8_e5m2", "e5m2"},
    {"f8_e4m3", "e4m3"},  {"f8_e5m2", "e5m2"},
};
static const char *const mode_alias[][2] = {
    {"rn", "rne"}, {"rz", "rtz"}, {"rm", "rdn"}, {"rp", "rup"}};

/* S lower-cased into BUF (N bytes), without "torch." when TORCH; NULL
   when it does not fit. */
static const char *
ref_lower(char *buf, size_t n, const char *s, bool torch)
{
    size_t len;

    if (torch && strlen(s) >= 6) {
        char head[7];
        for (int i = 0; i < 6; i++)
            head[i] = (char)tolower((unsigned char)s[i]);
        head[6] = '\0';
        if (strcmp(head, "torch.") == 0)
            s += 6;
    }
    len = strlen(s);
    if (len >= n)
        return NULL;
    for (size_t i = 0; i <= len; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    return buf;
}

static const sf_format *
ref_format(const char *s)
{
    char buf[64];
    const char *low = ref_lower(buf, sizeof buf, s, true);

    if (low == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof format_alias / sizeof format_alias[0]; i++)
        if (strcmp(low, format_alias[i][0]) == 0)
            return sf_format_by_name(format_alias[i][1]);
    return sf_format_by_name(low);
}

static int
ref_mode(const char *s)
{
    char buf[64];
    const char *low = ref_lower(buf, sizeof buf, s, false);

    if (low == NULL)
        return -1;
    for (size_t i = 0; i < sizeof mode_alias / sizeof mode_alias[0]; i++)
        if (strcmp(low, mode_alias[i][0]) == 0)
            return sf_round_by_name(mode_alias[i][1]);
    return sf_round_by_name(low);
}

static void
check_names(const char *s)
{
    const sf_format *f = NULL, *want = ref_format(s);
    sf_round rm = SF_RNE;
    sf_env env;
    cli_color_when when;
    bool ok;

    FUZZ_CHECK(cli_format_by_name(s) == want);
    FUZZ_CHECK(cli_mode_by_name(s) == ref_mode(s));
    ok = cli_parse_format("fuzz", "--format", s, false, &f);
    FUZZ_CHECK(ok == (want != NULL));
    FUZZ_CHECK(!ok || f == want);
    ok = cli_parse_format("fuzz", "--format", s, true, &f);
    FUZZ_CHECK(ok == (want != NULL && want != &sf_format_f64));
    ok = cli_parse_mode("fuzz", "--mode", s, &rm);
    FUZZ_CHECK(ok == (ref_mode(s) >= 0));
    FUZZ_CHECK(!ok || (int)rm == ref_mode(s));
    (void)cli_parse_env("fuzz", "--env", s, &env);
    ok = cli_parse_color("fuzz", "--color", s, &when);
    FUZZ_CHECK(ok
               == (strcmp(s, "auto") == 0 || strcmp(s, "always") == 0
                   || strcmp(s, "never") == 0));
}

/*----------------------------------------------------------------------------
 * JSON.
 *--------------------------------------------------------------------------*/
static void
check_json(const char *s)
{
    cli_buf b;
    cli_json j;
    json_t *valid = json_string(s), *root, *v;
    json_error_t e;

    cli_buf_init(&b);
    cli_json_init(&j, &b);
    cli_json_object_begin(&j, NULL);
    cli_json_string(&j, "value", s);
    cli_json_object_begin(&j, "keyed");
    cli_json_int(&j, s, -7);
    cli_json_object_end(&j);
    cli_json_array_begin(&j, "list");
    cli_json_string(&j, NULL, s);
    cli_json_double(&j, NULL, 0.1);
    cli_json_double(&j, NULL, HUGE_VAL);
    cli_json_null(&j, NULL);
    cli_json_array_end(&j);
    cli_json_object_end(&j);
    cli_json_finish(&j);
    FUZZ_CHECK(!b.failed && b.p != NULL && strlen(b.p) == b.len);
    if (valid != NULL) {
        root = json_loadb(b.p, b.len, 0, &e);
        FUZZ_CHECK(root != NULL);
        v = json_object_get(root, "value");
        FUZZ_CHECK(json_is_string(v) && json_equal(v, valid));
        v = json_object_get(json_object_get(root, "keyed"), s);
        FUZZ_CHECK(json_is_integer(v) && json_integer_value(v) == -7);
        v = json_object_get(root, "list");
        FUZZ_CHECK(json_is_array(v) && json_array_size(v) == 4);
        FUZZ_CHECK(json_equal(json_array_get(v, 0), valid));
        FUZZ_CHECK(json_is_null(json_array_get(v, 2)));
        json_decref(root);
        json_decref(valid);
    }
    cli_buf_free(&b);
}

/* Nesting past CLI_JSON_MAX_DEPTH marks the buffer as failed. */
static void
check_json_depth(void)
{
    cli_buf b;
    cli_json j;

    cli_buf_init(&b);
    cli_json_init(&j, &b);
    for (int i = 0; i < CLI_JSON_MAX_DEPTH + 2; i++)
        cli_json_array_begin(&j, NULL);
    for (int i = 0; i < CLI_JSON_MAX_DEPTH + 4; i++)
        cli_json_array_end(&j);
    FUZZ_CHECK(b.failed);
    cli_buf_free(&b);
}

/*----------------------------------------------------------------------------
 * Options and distances.
 *--------------------------------------------------------------------------*/
static void
check_parser(int argc, char **argv)
{
    static const cli_option opts[] = {
        {"out", true, 0}, {"force", false, 1}, {"help", false, 2},
        {"n", true, 3},   {NULL, false, 0},
    };
    cli_parser p;
    const char *v;

    cli_parser_init(&p, "fuzz", argc, argv);
    for (int steps = 0;; steps++) {
        int id = cli_parser_next(&p, opts, &v);
        bool inside = false;
        FUZZ_CHECK(steps < argc);
        if (id == CLI_ARG_END || id == CLI_ARG_ERROR)
            break;
        if (id == CLI_ARG_OPERAND) {
            FUZZ_CHECK(v != NULL);
        } else {
            FUZZ_CHECK(id >= 0 && id <= 3);
            FUZZ_CHECK((v != NULL) == opts[id].has_arg);
        }
        for (int k = 1; k < argc && v != NULL; k++)
            inside =
                inside || (v >= argv[k] && v <= argv[k] + strlen(argv[k]));
        FUZZ_CHECK(v == NULL || inside);
    }
}

/* X and Y are the same value: equal bits, both NaN, or both zero. */
static bool
same_value(const sf_format *f, uint64_t x, uint64_t y)
{
    return x == y || (sf_is_nan(f, x) && sf_is_nan(f, y))
           || (sf_is_zero(f, x) && sf_is_zero(f, y));
}

static void
check_distance(const sf_format *f, uint64_t x, uint64_t y)
{
    uint64_t d = cmp_ulp_distance(f, x, y), lo, hi;
    unsigned b = cmp_dist_bucket(d);
    char label[64];

    FUZZ_CHECK(d == cmp_ulp_distance(f, y, x));
    FUZZ_CHECK((d == 0) == same_value(f, x, y));
    FUZZ_CHECK((d == CMP_DIST_INF) == (sf_is_nan(f, x) != sf_is_nan(f, y)));
    FUZZ_CHECK(b < CMP_DIST_BUCKETS);
    FUZZ_CHECK((b == CMP_DIST_BUCKET_INF) == (d == CMP_DIST_INF));
    if (d != CMP_DIST_INF && d != 0) {
        cmp_dist_bucket_bounds(b, &lo, &hi);
        FUZZ_CHECK(lo <= d && d <= hi);
    }
    FUZZ_CHECK(cmp_dist_bucket_label(label, sizeof label, b) == label);
    FUZZ_CHECK(label[0] != '\0');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const sf_format *target;
    sf_round rm;
    size_t why_n, n;
    bool finite;
    char *text, *argv[MAX_ARGS + 2];
    cli_number nums[MAX_ARGS];
    bool parsed[MAX_ARGS];
    int argc = 1;

    if (size < 2)
        return 0;
    target = formats[data[0] % 7];
    rm = (sf_round)(data[0] / 7 % SF_N_ROUND);
    finite = (data[0] / 49) % 2 == 1;
    why_n = 1 + data[1] % WHY_MAX;
    n = size - 2;
    /* the strings, in a buffer of exactly their size */
    text = malloc(n + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data + 2, n);
    text[n] = '\0';
    argv[0] = (char *)"fuzz";
    for (size_t i = 0; argc <= MAX_ARGS;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
        if (i > n)
            break;
    }
    argv[argc] = NULL;

    for (int k = 1; k < argc; k++) {
        const char *s = argv[k];
        check_number(s, target, rm, why_n, &nums[k - 1], &parsed[k - 1]);
        check_double(s, finite);
        check_u64(s);
        check_bytes(s);
        check_names(s);
        check_json(s);
    }
    check_json_depth();
    check_parser(argc, argv);
    /* distances between values of one format (f64 included: -Inf to +Inf
       is 0xFFE0000000000000 steps) */
    for (int a = 0; a + 1 < argc; a++)
        for (int c = 0; c + 1 < argc; c++) {
            const sf_format *f = nums[a].fmt;
            if (!parsed[a] || !parsed[c] || nums[c].fmt != f)
                continue;
            check_distance(f, nums[a].bits, nums[c].bits);
        }
    free(text);
    return 0;
}
