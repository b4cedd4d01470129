/* test_special.c -- the hand-written special cases of tests/data/special.tv
   (NaN propagation, infinities, signed zeros, overflow and underflow in
   every mode, ties, RNA, round to odd, FTZ/DAZ/saturation, the FP8 and
   TF32 encodings), one Check loop iteration per row */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

#define TABLE SRCDIR "/tests/data/special.tv"

/*----------------------------------------------------------------------------
 * The table, read once by main before the suite runs.
 *--------------------------------------------------------------------------*/
typedef struct
{
    unsigned line;
    char text[160];
} row;

static row *rows;
static int n_rows;
static const char *load_error;

static void
load_table(void)
{
    FILE *fp = fopen(TABLE, "r");
    char buf[512];
    unsigned line = 0;
    int cap = 0;

    if (fp == NULL) {
        load_error = "cannot open " TABLE;
        return;
    }
    while (fgets(buf, sizeof buf, fp) != NULL) {
        char *p = buf, *end;
        line++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        end = p + strcspn(p, "\r\n");
        *end = '\0';
        if (strlen(p) >= sizeof rows[0].text) {
            load_error = "a row is too long";
            break;
        }
        if (n_rows == cap) {
            row *grown;
            cap = cap ? 2 * cap : 256;
            grown = realloc(rows, (size_t)cap * sizeof *rows);
            if (grown == NULL) {
                load_error = "out of memory";
                break;
            }
            rows = grown;
        }
        rows[n_rows].line = line;
        strcpy(rows[n_rows].text, p);
        n_rows++;
    }
    fclose(fp);
}

/*----------------------------------------------------------------------------
 * Parsing one row (names written here, independent of the library's
 * name tables).
 *--------------------------------------------------------------------------*/
static const struct
{
    const char *name;
    const sf_format *f;
} fmt_names[] = {{"bf16", &sf_format_bf16}, {"f16", &sf_format_f16},
                 {"f32", &sf_format_f32},   {"tf32", &sf_format_tf32},
                 {"e4m3", &sf_format_e4m3}, {"e5m2", &sf_format_e5m2}};
#define N_FMT_NAMES (sizeof fmt_names / sizeof fmt_names[0])

static const sf_format *
fmt_prefix(const char *s, size_t n)
{
    for (size_t i = 0; i < N_FMT_NAMES; i++)
        if (strlen(fmt_names[i].name) == n
            && strncmp(s, fmt_names[i].name, n) == 0)
            return fmt_names[i].f;
    return NULL;
}

static int
parse_rm(const char *s)
{
    static const struct
    {
        const char *name;
        sf_round rm;
    } t[] = {{"rne", SF_RNE}, {"rtz", SF_RTZ}, {"rdn", SF_RDN},
             {"rup", SF_RUP}, {"rna", SF_RNA}, {"rod", SF_ROD}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(s, t[i].name) == 0)
            return (int)t[i].rm;
    return -1;
}

/* "vioux" with '.' for clear; -1 if malformed. */
static int
parse_flags(const char *s)
{
    static const char letters[5] = {'v', 'i', 'o', 'u', 'x'};
    static const unsigned bits[5] = {SF_FLAG_INVALID, SF_FLAG_DIVZERO,
                                     SF_FLAG_OVERFLOW, SF_FLAG_UNDERFLOW,
                                     SF_FLAG_INEXACT};
    unsigned f = 0;

    if (strlen(s) != 5)
        return -1;
    for (int i = 0; i < 5; i++) {
        if (s[i] == letters[i])
            f |= bits[i];
        else if (s[i] != '.')
            return -1;
    }
    return (int)f;
}

static bool
parse_hex(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x;

    if (*s == '\0')
        return false;
    x = strtoull(s, &end, 16);
    *v = (uint64_t)x;
    return *end == '\0';
}

/* Splits S in place at any character of SEP into at most MAX fields;
   returns the number of fields. */
static int
split(char *s, const char *sep, char **field, int max)
{
    int n = 0;

    for (;;) {
        s += strspn(s, sep);
        if (*s == '\0' || n == max)
            return n;
        field[n++] = s;
        s += strcspn(s, sep);
        if (*s == '\0')
            return n;
        *s++ = '\0';
    }
}

/* Applies "env=a,b,..." to ENV; false on an unknown word. */
static bool
parse_env(const char *s, sf_env *env)
{
    char buf[96];
    char *words[8];
    int n;

    if (strncmp(s, "env=", 4) != 0 || strlen(s + 4) >= sizeof buf)
        return false;
    strcpy(buf, s + 4);
    n = split(buf, ",", words, 8);
    for (int i = 0; i < n; i++) {
        const char *tok = words[i];
        if (strcmp(tok, "ftz") == 0)
            env->ftz = true;
        else if (strcmp(tok, "daz") == 0)
            env->daz = true;
        else if (strcmp(tok, "sat") == 0)
            env->saturate = true;
        else if (strcmp(tok, "before") == 0)
            env->tininess_after = false;
        else if (strcmp(tok, "x86") == 0)
            env->default_nan = SF_DNAN_NEGATIVE;
        else if (strcmp(tok, "allones") == 0)
            env->default_nan = SF_DNAN_ALL_ONES;
        else if (strcmp(tok, "dnan") == 0)
            env->nan_rule = SF_NAN_DEFAULT;
        else if (strcmp(tok, "snanfirst") == 0)
            env->nan_rule = SF_NAN_SNAN_FIRST;
        else
            return false;
    }
    return true;
}

enum
{
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_SQRT,
    OP_FMA,
    OP_CONVERT
};

typedef struct
{
    const sf_format *f;  /* operand format */
    const sf_format *to; /* result format (conversions) */
    int op;
    unsigned n_in;
    sf_round rm;
    uint64_t in[3];
    uint64_t want;
    unsigned want_flags;
    sf_env env;
} test_case;

/* NULL on success, else what is wrong with the row. */
static const char *
parse_row(const char *text, test_case *c)
{
    char buf[160];
    char *tok[10];
    int n, rm, fl;
    const char *us;
    static const struct
    {
        const char *name;
        int op;
        unsigned n_in;
    } ops[] = {{"add", OP_ADD, 2}, {"sub", OP_SUB, 2},   {"mul", OP_MUL, 2},
               {"div", OP_DIV, 2}, {"sqrt", OP_SQRT, 1}, {"fma", OP_FMA, 3}};

    strcpy(buf, text);
    n = split(buf, " \t", tok, 10);
    if (n < 4)
        return "too few fields";
    us = strchr(tok[0], '_');
    if (us == NULL
        || (c->f = fmt_prefix(tok[0], (size_t)(us - tok[0]))) == NULL)
        return "unknown format";
    c->to = c->f;
    c->op = -1;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(us + 1, ops[i].name) == 0) {
            c->op = ops[i].op;
            c->n_in = ops[i].n_in;
        }
    if (c->op < 0 && strncmp(us + 1, "to_", 3) == 0) {
        c->to = fmt_prefix(us + 4, strlen(us + 4));
        if (c->to == NULL)
            return "unknown target format";
        c->op = OP_CONVERT;
        c->n_in = 1;
    }
    if (c->op < 0)
        return "unknown operation";
    if ((rm = parse_rm(tok[1])) < 0)
        return "unknown rounding mode";
    c->rm = (sf_round)rm;
    if (n != (int)c->n_in + 4 && n != (int)c->n_in + 5)
        return "wrong number of fields";
    for (unsigned i = 0; i < c->n_in; i++)
        if (!parse_hex(tok[2 + i], &c->in[i]))
            return "bad operand";
    if (!parse_hex(tok[2 + c->n_in], &c->want))
        return "bad expected value";
    if ((fl = parse_flags(tok[3 + c->n_in])) < 0)
        return "bad flags";
    c->want_flags = (unsigned)fl;
    c->env = (sf_env)SF_ENV_IEEE;
    if (n == (int)c->n_in + 5 && !parse_env(tok[4 + c->n_in], &c->env))
        return "bad env";
    return NULL;
}

static uint64_t
run_case(test_case *c)
{
    const sf_format *f = c->f;
    sf_env *e = &c->env;

    switch (c->op) {
    case OP_ADD:
        return sf_add(f, c->in[0], c->in[1], c->rm, e);
    case OP_SUB:
        return sf_sub(f, c->in[0], c->in[1], c->rm, e);
    case OP_MUL:
        return sf_mul(f, c->in[0], c->in[1], c->rm, e);
    case OP_DIV:
        return sf_div(f, c->in[0], c->in[1], c->rm, e);
    case OP_SQRT:
        return sf_sqrt(f, c->in[0], c->rm, e);
    case OP_FMA:
        return sf_fma(f, c->in[0], c->in[1], c->in[2], c->rm, e);
    case OP_CONVERT:
    default:
        return sf_convert(c->to, f, c->in[0], c->rm, e);
    }
}

/*----------------------------------------------------------------------------
 * Tests.
 *--------------------------------------------------------------------------*/
START_TEST(test_table_loaded)
{
    ck_assert_msg(load_error == NULL, "%s: %s", TABLE,
                  load_error ? load_error : "");
    ck_assert_msg(n_rows >= 150, "%s: only %d rows", TABLE, n_rows);
}
END_TEST

START_TEST(test_row)
{
    const row *r = &rows[_i];
    test_case c;
    const char *err = parse_row(r->text, &c);
    uint64_t got;
    char fw[6], fg[6];

    ck_assert_msg(err == NULL, "special.tv:%u: %s: %s", r->line, err, r->text);
    got = run_case(&c);
    ck_assert_msg(got == c.want && c.env.flags == c.want_flags,
                  "special.tv:%u: %s -> got %llx %s (expected %llx %s)",
                  r->line, r->text, (unsigned long long)got,
                  sf_flags_str(c.env.flags, fg), (unsigned long long)c.want,
                  sf_flags_str(c.want_flags, fw));
}
END_TEST

/* sf_host_float and its kin against host constants written as C99 hex
   floats (the compiler's own reading of the value): the bits copied both
   ways, a NaN's payload and sign kept. */
START_TEST(test_host_bits)
{
    static const struct
    {
        uint32_t bits;
        float f;
    } f32[] = {{0x3F800000u, 1.0f},
               {0x80000000u, -0.0f},
               {0x00000001u, 0x1p-149f},
               {0x007FFFFFu, 0x1.fffffcp-127f},
               {0xFF7FFFFFu, -0x1.fffffep127f},
               {0x7F800000u, INFINITY},
               {0xC0490FDBu, -0x1.921fb6p1f}};
    static const struct
    {
        uint64_t bits;
        double d;
    } f64[] = {{0x3FF0000000000000u, 1.0},
               {0x8000000000000000u, -0.0},
               {0x0000000000000001u, 0x1p-1074},
               {0x7FEFFFFFFFFFFFFFu, 0x1.fffffffffffffp1023},
               {0xBFB999999999999Au, -0.1}};

    for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++) {
        float f = sf_host_float(f32[i].bits);
        ck_assert_msg(memcmp(&f, &f32[i].f, sizeof f) == 0,
                      "sf_host_float(%08" PRIX32 ")", f32[i].bits);
        ck_assert_msg(sf_host_float_bits(f32[i].f) == f32[i].bits,
                      "sf_host_float_bits of %08" PRIX32, f32[i].bits);
    }
    for (size_t i = 0; i < sizeof f64 / sizeof f64[0]; i++) {
        double d = sf_host_double(f64[i].bits);
        ck_assert_msg(memcmp(&d, &f64[i].d, sizeof d) == 0,
                      "sf_host_double(%016" PRIX64 ")", f64[i].bits);
        ck_assert_msg(sf_host_double_bits(f64[i].d) == f64[i].bits,
                      "sf_host_double_bits of %016" PRIX64, f64[i].bits);
    }
    ck_assert_uint_eq(sf_host_float_bits(sf_host_float(0xFFC01234u)),
                      0xFFC01234u);
    ck_assert_uint_eq(sf_host_double_bits(sf_host_double(0x7FF8000000C0FFEEu)),
                      0x7FF8000000C0FFEEu);
}
END_TEST

static Suite *
special_suite(void)
{
    Suite *s = suite_create("special");
    TCase *tc = tst_add_tcase(s, "special", 0);

    tcase_add_test(tc, test_table_loaded);
    tcase_add_test(tc, test_host_bits);
    if (n_rows > 0)
        tcase_add_loop_test(tc, test_row, 0, n_rows);
    return s;
}

int
main(void)
{
    int status;

    load_table();
    status = tst_run_suite(special_suite());
    free(rows);
    return status;
}
