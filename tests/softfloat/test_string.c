/* test_string -- sf_from_string, sf_to_string, sf_dyadic_to_string */
#include <check.h>
#include <gmp.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define MASK_FLAGS (SF_FLAG_INEXACT | SF_FLAG_UNDERFLOW | SF_FLAG_OVERFLOW)

/*----------------------------------------------------------------------------
 * Helpers.
 *--------------------------------------------------------------------------*/
static const sf_format *
fmt_named(const char *name)
{
    const sf_format *f = sf_format_by_name(name);
    ck_assert_msg(f != NULL, "unknown format %s", name);
    return f;
}

/* Parses S in F with RM (SATURATE as given); returns the bits, sets *FLAGS
   and *END_OFF. */
static uint64_t
parse(const sf_format *f, const char *s, sf_round rm, bool saturate,
      unsigned *flags, long *end_off)
{
    sf_env env = SF_ENV_IEEE;
    const char *end = NULL;
    uint64_t z;

    env.saturate = saturate;
    z = sf_from_string(f, s, &end, rm, &env);
    *flags = env.flags;
    *end_off = end == NULL ? -1 : (long)(end - s);
    return z;
}

static void
print_string_case(const sf_format *f, sf_round rm, const char *s,
                  uint64_t expected, unsigned exp_flags, uint64_t got,
                  unsigned got_flags)
{
    char fe[6], fg[6];
    int w = (int)(f->storage_bits + 3) / 4;

    printf(
        "%s_from_string %s \"%.200s%s\" %0*llx %s got %0*llx %s  seed %llu\n",
        f->name, sf_round_name(rm), s, strlen(s) > 200 ? "..." : "", w,
        (unsigned long long)expected, sf_flags_str(exp_flags, fe), w,
        (unsigned long long)got, sf_flags_str(got_flags, fg),
        (unsigned long long)tst_seed());
    fflush(stdout);
}

/*----------------------------------------------------------------------------
 * special: hand-written tables.
 *--------------------------------------------------------------------------*/
#define END_ALL (-1) /* the whole string is consumed */
#define RNE SF_RNE
#define RTZ SF_RTZ
#define RDN SF_RDN
#define RUP SF_RUP
#define RNA SF_RNA
#define ROD SF_ROD
#define FX SF_FLAG_INEXACT
#define FU (SF_FLAG_UNDERFLOW | SF_FLAG_INEXACT)
#define FO (SF_FLAG_OVERFLOW | SF_FLAG_INEXACT)

typedef struct
{
    const char *fmt;
    const char *s;
    sf_round rm;
    bool sat;
    uint64_t bits;
    unsigned flags;
    long end;
} parse_case;

/* 2^-134, half the smallest BF16 subnormal (exact). */
#define BF16_HALF_MIN_SUB                                                     \
    "4.591774807899560578002877098524397178979162331140966880893561352650"    \
    "067419745028018951416015625e-41"

static const parse_case parse_cases[] = {
    /* the paper's numbers */
    {"bf16", "-2.40625", RNE, false, 0xC01A, 0, END_ALL},
    {"bf16", "-0x1.c5cp-11", RNE, false, 0xBA63, FX, END_ALL},
    {"bf16", "-0x1.c5cp-11", RTZ, false, 0xBA62, FX, END_ALL},
    {"bf16", "-0x1.c5cp-11", RDN, false, 0xBA63, FX, END_ALL},
    {"bf16", "-0x1.c5cp-11", RUP, false, 0xBA62, FX, END_ALL},
    {"bf16", "-0x1.c5cp-11", RNA, false, 0xBA63, FX, END_ALL},
    {"bf16", "-0x1.c5cp-11", ROD, false, 0xBA63, FX, END_ALL},
    {"f16", "-0x1.c5cp-11", RNE, false, 0x9317, 0, END_ALL},
    /* 1 + 2^-8: halfway between 1 and 1 + 2^-7 */
    {"bf16", "1.00390625", RNE, false, 0x3F80, FX, END_ALL},
    {"bf16", "1.00390625", RNA, false, 0x3F81, FX, END_ALL},
    {"bf16", "1.00390625", RTZ, false, 0x3F80, FX, END_ALL},
    {"bf16", "1.00390625", RUP, false, 0x3F81, FX, END_ALL},
    {"bf16", "1.00390625", RDN, false, 0x3F80, FX, END_ALL},
    {"bf16", "1.00390625", ROD, false, 0x3F81, FX, END_ALL},
    {"bf16", "-1.00390625", RNE, false, 0xBF80, FX, END_ALL},
    {"bf16", "-1.00390625", RNA, false, 0xBF81, FX, END_ALL},
    {"bf16", "-1.00390625", RTZ, false, 0xBF80, FX, END_ALL},
    {"bf16", "-1.00390625", RUP, false, 0xBF80, FX, END_ALL},
    {"bf16", "-1.00390625", RDN, false, 0xBF81, FX, END_ALL},
    {"bf16", "-1.00390625", ROD, false, 0xBF81, FX, END_ALL},
    {"bf16", "1.0039062500000000000000000000000000001", RNE, false, 0x3F81, FX,
     END_ALL},
    {"bf16", "1.0039062500000000000000000000000000001", RTZ, false, 0x3F80, FX,
     END_ALL},
    {"bf16", "1.0039062499999999999999999999999999999", RNE, false, 0x3F80, FX,
     END_ALL},
    {"bf16", "1.0039062499999999999999999999999999999", RNA, false, 0x3F80, FX,
     END_ALL},
    {"bf16", "1.0039062499999999999999999999999999999", RUP, false, 0x3F81, FX,
     END_ALL},
    {"bf16", "100390625e-8", RNE, false, 0x3F80, FX, END_ALL},
    {"bf16", "0.000100390625E4", RNA, false, 0x3F81, FX, END_ALL},
    {"bf16", "0x1.01p0", RNE, false, 0x3F80, FX, END_ALL},
    {"bf16", "0x1.01p0", RNA, false, 0x3F81, FX, END_ALL},
    {"bf16", "0x1.008p0", RUP, false, 0x3F81, FX, END_ALL},
    {"bf16", "0x1.008p0", RNA, false, 0x3F80, FX, END_ALL},
    {"bf16", "0x1.010000000000000000000000000000000000000000000p0", RNE, false,
     0x3F80, FX, END_ALL},
    {"bf16", "0x1.010000000000000000000000000000000000000000001p0", RNE, false,
     0x3F81, FX, END_ALL},
    {"bf16", "0x1.00ffffffffffffffffffffffffffffffffffffffffffffp0", RNA,
     false, 0x3F80, FX, END_ALL},
    {"bf16", "0x00000000000000000000000000000000000000001.01p0", RNE, false,
     0x3F80, FX, END_ALL},
    /* 0x101 * 16^40 * 2^-168 = 1 + 2^-8 */
    {"bf16", "0x1010000000000000000000000000000000000000000p-168", RNA, false,
     0x3F81, FX, END_ALL},
    /* 0x101 * 16^-40 * 2^168 = 2^16 (1 + 2^-8) */
    {"bf16", "0x.0000000000000000000000000000000000000101p+168", RNE, false,
     0x4780, FX, END_ALL},
    /* exact values */
    {"bf16", "1", RNE, false, 0x3F80, 0, END_ALL},
    {"bf16", "-0.5", RNE, false, 0xBF00, 0, END_ALL},
    {"bf16", "3", RTZ, false, 0x4040, 0, END_ALL},
    {"bf16", "+1e0", RNE, false, 0x3F80, 0, END_ALL},
    {"bf16", "65536", RNE, false, 0x4780, 0, END_ALL},
    {"tf32", "1.00048828125", RNE, false, 0x3F800000, FX, END_ALL},
    {"tf32", "1.00048828125", RNA, false, 0x3F802000, FX, END_ALL},
    {"tf32", "1.0009765625", RNE, false, 0x3F802000, 0, END_ALL},
    /* huge and tiny exponents */
    {"bf16", "1e100000", RNE, false, 0x7F80, FO, END_ALL},
    {"bf16", "1e100000", RTZ, false, 0x7F7F, FO, END_ALL},
    {"bf16", "1e100000", RUP, false, 0x7F80, FO, END_ALL},
    {"bf16", "1e100000", RDN, false, 0x7F7F, FO, END_ALL},
    {"bf16", "1e100000", RNA, false, 0x7F80, FO, END_ALL},
    {"bf16", "1e100000", ROD, false, 0x7F7F, FO, END_ALL},
    {"bf16", "-1e100000", RDN, false, 0xFF80, FO, END_ALL},
    {"bf16", "-1e100000", RUP, false, 0xFF7F, FO, END_ALL},
    {"bf16", "1e100000", RNE, true, 0x7F7F, FO, END_ALL},
    {"bf16", "1e-100000", RNE, false, 0x0000, FU, END_ALL},
    {"bf16", "1e-100000", RUP, false, 0x0001, FU, END_ALL},
    {"bf16", "1e-100000", RTZ, false, 0x0000, FU, END_ALL},
    {"bf16", "1e-100000", RDN, false, 0x0000, FU, END_ALL},
    {"bf16", "1e-100000", RNA, false, 0x0000, FU, END_ALL},
    {"bf16", "1e-100000", ROD, false, 0x0001, FU, END_ALL},
    {"bf16", "-1e-100000", RDN, false, 0x8001, FU, END_ALL},
    {"bf16", "-1e-100000", RNE, false, 0x8000, FU, END_ALL},
    {"f32", "1e-99999999999999999999999999999", RNE, false, 0, FU, END_ALL},
    {"f32", "1e-99999999999999999999999999999", RUP, false, 1, FU, END_ALL},
    {"f32", "1e+99999999999999999999999999999", RNE, false, 0x7F800000, FO,
     END_ALL},
    {"f32", "0.0000000000000000000000000000000000000000000000000000001e55",
     RNE, false, 0x3F800000, 0, END_ALL},
    {"f32", "10000000000000000000000000000000000000000000000000000000e-54",
     RNE, false, 0x41200000, 0, END_ALL},
    {"bf16", "0x1p99999999999999999999", RNE, false, 0x7F80, FO, END_ALL},
    {"bf16", "0x1p-99999999999999999999", RNE, false, 0, FU, END_ALL},
    {"bf16", "0x1p-99999999999999999999", RUP, false, 1, FU, END_ALL},
    {"bf16", "-0x1p-99999999", RDN, false, 0x8001, FU, END_ALL},
    {"bf16", "-0x1p-99999999", ROD, false, 0x8001, FU, END_ALL},
    {"bf16", "0e99999999999999999999", RNE, false, 0, 0, END_ALL},
    {"bf16", "-0.000e-5", RNE, false, 0x8000, 0, END_ALL},
    {"bf16", "-0", RUP, false, 0x8000, 0, END_ALL},
    {"bf16", "-0x0p+0", RNE, false, 0x8000, 0, END_ALL},
    /* BF16 subnormal boundary: 2^-134 is a tie between 0 and 2^-133 */
    {"bf16", BF16_HALF_MIN_SUB, RNE, false, 0x0000, FU, END_ALL},
    {"bf16", BF16_HALF_MIN_SUB, RNA, false, 0x0001, FU, END_ALL},
    {"bf16", BF16_HALF_MIN_SUB, RTZ, false, 0x0000, FU, END_ALL},
    {"bf16",
     "4.5917748078995605780028770985243971789791623311409668808935613"
     "52650067419745028018951416015625000000000001e-41",
     RNE, false, 0x0001, FU, END_ALL},
    {"bf16",
     "4.5917748078995605780028770985243971789791623311409668808935613"
     "52650067419745028018951416015624999999999999e-41",
     RNE, false, 0x0000, FU, END_ALL},
    {"bf16",
     "4.5917748078995605780028770985243971789791623311409668808935613"
     "52650067419745028018951416015624999999999999e-41",
     RNA, false, 0x0000, FU, END_ALL},
    {"bf16", "0x1p-133", RNE, false, 0x0001, 0, END_ALL},
    {"bf16", "0x1p-134", RNE, false, 0x0000, FU, END_ALL},
    {"bf16", "0x1.00000000000000000000000000000000000000001p-134", RNE, false,
     0x0001, FU, END_ALL},
    /* tininess after rounding just below 2^-126 */
    {"bf16", "0x1.ffp-127", RNE, false, 0x0080, FX, END_ALL},
    {"bf16", "0x1.ffp-127", RTZ, false, 0x007F, FU, END_ALL},
    {"bf16", "0x1.ffp-127", RUP, false, 0x0080, FX, END_ALL},
    {"bf16", "0x1.ffp-127", RDN, false, 0x007F, FU, END_ALL},
    {"bf16", "0x1.fep-127", RNE, false, 0x0080, FU, END_ALL},
    {"bf16", "0x1.fep-127", RTZ, false, 0x007F, FU, END_ALL},
    /* BF16 overflow threshold: max + ulp/2 = (2 - 2^-8) 2^127 is a tie */
    {"bf16", "338953138925153547590470800371487866880", RNE, false, 0x7F7F, 0,
     END_ALL},
    {"bf16", "339617752923046005526922703901628039168", RNE, false, 0x7F80, FO,
     END_ALL},
    {"bf16", "339617752923046005526922703901628039168", RNA, false, 0x7F80, FO,
     END_ALL},
    {"bf16", "339617752923046005526922703901628039168", RTZ, false, 0x7F7F, FX,
     END_ALL},
    {"bf16", "339617752923046005526922703901628039167.99999", RNE, false,
     0x7F7F, FX, END_ALL},
    /* FP16 */
    {"f16", "65504", RNE, false, 0x7BFF, 0, END_ALL},
    {"f16", "65519.99", RNE, false, 0x7BFF, FX, END_ALL},
    {"f16", "65520", RNE, false, 0x7C00, FO, END_ALL},
    {"f16", "65520", RTZ, false, 0x7BFF, FX, END_ALL},
    {"f16", "-65520", RUP, false, 0xFBFF, FX, END_ALL},
    {"f16", "0x1p-24", RNE, false, 0x0001, 0, END_ALL},
    {"f16", "5.9604644775390625e-8", RNE, false, 0x0001, 0, END_ALL},
    {"f16", "0x1p-25", RNE, false, 0x0000, FU, END_ALL},
    {"f16", "0x1.000001p-25", RNE, false, 0x0001, FU, END_ALL},
    {"f16", "6.103515625e-05", RNE, false, 0x0400, 0, END_ALL},
    {"f16", "0.333333333333333333333333333333333333333333333333", RNE, false,
     0x3555, FX, END_ALL},
    /* FP32 */
    {"f32", "0.1", RNE, false, 0x3DCCCCCD, FX, END_ALL},
    {"f32", "0.1", RTZ, false, 0x3DCCCCCC, FX, END_ALL},
    {"f32", "1e-45", RNE, false, 0x00000001, FU, END_ALL},
    {"f32", "3.4028235e38", RNE, false, 0x7F7FFFFF, FX, END_ALL},
    {"f32", "340282356779733661637539395458142568448", RNE, false, 0x7F800000,
     FO, END_ALL},
    {"f32", "340282356779733661637539395458142568447", RNE, false, 0x7F7FFFFF,
     FX, END_ALL},
    {"f32", "340282366920938463463374607431768211456", RTZ, false, 0x7F7FFFFF,
     FO, END_ALL},
    {"f32", "1.17549435e-38", RNE, false, 0x00800000, FX, END_ALL},
    {"f32", "16777217", RNE, false, 0x4B800000, FX, END_ALL},
    {"f32", "16777219", RNE, false, 0x4B800002, FX, END_ALL},
    {"f32", "1e20", RNE, false, 0x60AD78EC, FX, END_ALL},
    {"f32", "1e21", RNE, false, 0x6258D727, FX, END_ALL},
    /* E4M3 (no Inf) and E5M2 */
    {"e4m3", "448", RNE, false, 0x7E, 0, END_ALL},
    {"e4m3", "464", RNE, false, 0x7E, FX, END_ALL},
    {"e4m3", "465", RNE, false, 0x7F, FO, END_ALL},
    {"e4m3", "465", RNE, true, 0x7E, FO, END_ALL},
    {"e4m3", "1e10", RTZ, false, 0x7E, FO, END_ALL},
    {"e4m3", "inf", RNE, false, 0x7F, 0, END_ALL},
    {"e4m3", "-inf", RNE, false, 0xFF, 0, END_ALL},
    {"e4m3", "inf", RNE, true, 0x7E, 0, END_ALL},
    {"e4m3", "-infinity", RNE, true, 0xFE, 0, END_ALL},
    {"e4m3", "nan", RNE, false, 0x7F, 0, END_ALL},
    {"e4m3", "-nan(0x3)", RNE, false, 0xFF, 0, END_ALL},
    {"e4m3", "snan", RNE, false, 0x7F, 0, END_ALL},
    {"e4m3", "0.001953125", RNE, false, 0x01, 0, END_ALL},
    {"e4m3", "-0.0009765625", RNE, false, 0x80, FU, END_ALL},
    {"e5m2", "57344", RNE, false, 0x7B, 0, END_ALL},
    {"e5m2", "61440", RNE, false, 0x7C, FO, END_ALL},
    {"e5m2", "61439", RNE, false, 0x7B, FX, END_ALL},
    {"e5m2", "inf", RNE, false, 0x7C, 0, END_ALL},
    {"e5m2", "nan", RNE, false, 0x7E, 0, END_ALL},
    {"e5m2", "snan", RNE, false, 0x7D, 0, END_ALL},
    {"e5m2", "snan(0x2)", RNE, false, 0x7D, 0, END_ALL},
    {"e5m2", "nan(0x1)", RNE, false, 0x7F, 0, END_ALL},
    {"e5m2", "0x1p-16", RNE, false, 0x01, 0, END_ALL},
    /* NaNs and payloads */
    {"bf16", "nan", RNE, false, 0x7FC0, 0, END_ALL},
    {"bf16", "-nan", RNE, false, 0xFFC0, 0, END_ALL},
    {"bf16", "NaN", RNE, false, 0x7FC0, 0, END_ALL},
    {"bf16", "snan", RNE, false, 0x7F81, 0, END_ALL},
    {"bf16", "SNaN(0x1F)", RNE, false, 0x7F9F, 0, END_ALL},
    {"bf16", "nan(0x1f)", RNE, false, 0x7FDF, 0, END_ALL},
    {"bf16", "nan(12)", RNE, false, 0x7FCC, 0, END_ALL},
    {"bf16", "nan()", RNE, false, 0x7FC0, 0, END_ALL},
    {"bf16", "nan(", RNE, false, 0x7FC0, 0, 3},
    {"bf16", "nan(0x)", RNE, false, 0x7FC0, 0, 3},
    {"bf16", "nan(1", RNE, false, 0x7FC0, 0, 3},
    {"bf16", "nanx", RNE, false, 0x7FC0, 0, 3},
    {"f32", "snan(123)", RNE, false, 0x7F80007B, 0, END_ALL},
    {"f32", "-snan(0x400000)", RNE, false, 0xFF800001, 0, END_ALL},
    {"f32", "nan(0xffffffffffffffffffff)", RNE, false, 0x7FFFFFFF, 0, END_ALL},
    {"f32", "-NAN(0x123456)", RNE, false, 0xFFD23456, 0, END_ALL},
    {"f16", "snan(0)", RNE, false, 0x7C01, 0, END_ALL},
    {"tf32", "nan(0x1)", RNE, false, 0x7FC02000, 0, END_ALL},
    /* infinities */
    {"bf16", "inf", RNE, false, 0x7F80, 0, END_ALL},
    {"bf16", "INFINITY", RTZ, false, 0x7F80, 0, END_ALL},
    {"bf16", "infinit", RNE, false, 0x7F80, 0, 3},
    {"bf16", "-Inf", RNE, false, 0xFF80, 0, END_ALL},
    {"bf16", "+inF", RNE, false, 0x7F80, 0, END_ALL},
    {"f32", "-infinityx", RNE, false, 0xFF800000, 0, 9},
    /* syntax: errors give +0 and end = s; partial numbers stop early */
    {"bf16", "", RNE, false, 0, 0, 0},
    {"bf16", "-", RNE, false, 0, 0, 0},
    {"bf16", "+", RNE, false, 0, 0, 0},
    {"bf16", ".", RNE, false, 0, 0, 0},
    {"bf16", "-.", RNE, false, 0, 0, 0},
    {"bf16", "e5", RNE, false, 0, 0, 0},
    {"bf16", "abc", RNE, false, 0, 0, 0},
    {"bf16", " 1", RNE, false, 0, 0, 0},
    {"bf16", "\t1", RNE, false, 0, 0, 0},
    {"bf16", "-.e1", RNE, false, 0, 0, 0},
    {"bf16", "in", RNE, false, 0, 0, 0},
    {"bf16", "-na", RNE, false, 0, 0, 0},
    {"bf16", "+-1", RNE, false, 0, 0, 0},
    {"bf16", "0x", RNE, false, 0, 0, 1},
    {"bf16", "-0x", RNE, false, 0x8000, 0, 2},
    {"bf16", "0x.p1", RNE, false, 0, 0, 1},
    {"bf16", "0xg", RNE, false, 0, 0, 1},
    {"bf16", "1e", RNE, false, 0x3F80, 0, 1},
    {"bf16", "1e+", RNE, false, 0x3F80, 0, 1},
    {"bf16", "1E-x", RNE, false, 0x3F80, 0, 1},
    {"bf16", "1.5e-x", RNE, false, 0x3FC0, 0, 3},
    {"bf16", "0x1p", RNE, false, 0x3F80, 0, 3},
    {"bf16", "0x1p-", RNE, false, 0x3F80, 0, 3},
    {"bf16", "0x1.8p1x", RNE, false, 0x4040, 0, 7},
    {"bf16", ".5", RNE, false, 0x3F00, 0, END_ALL},
    {"bf16", "5.", RNE, false, 0x40A0, 0, END_ALL},
    {"bf16", "0x.8p1", RNE, false, 0x3F80, 0, END_ALL},
    {"bf16", "0X1P+2", RNE, false, 0x4080, 0, END_ALL},
    {"bf16", "0x1.8", RNE, false, 0x3FC0, 0, END_ALL},
    {"bf16", "0xA", RNE, false, 0x4120, 0, END_ALL},
    {"bf16", "1_000", RNE, false, 0x3F80, 0, 1},
    {"bf16", "1.2.3", RNE, false, 0x3F9A, FX, 3},
    {"bf16", "1 ", RNE, false, 0x3F80, 0, 1},
    {"bf16", "12e1e1", RNE, false, 0x42F0, 0, 4},
};

/* Long inputs built at run time: PREFIX, N copies of FILL, SUFFIX. */
typedef struct
{
    const char *fmt;
    const char *prefix;
    char fill;
    size_t n;
    const char *suffix;
    sf_round rm;
    uint64_t bits;
    unsigned flags;
} long_case;

static const long_case long_cases[] = {
    {"bf16", "1.00390625", '0', 3000, "1", RNE, 0x3F81, FX},
    {"bf16", "1.00390625", '0', 3000, "", RNE, 0x3F80, FX},
    {"bf16", "1.00390625", '0', 3000, "", RNA, 0x3F81, FX},
    {"bf16", "1.00390624", '9', 3000, "", RNE, 0x3F80, FX},
    {"bf16", "1.00390624", '9', 3000, "", RNA, 0x3F80, FX},
    {"bf16", "1.00390624", '9', 3000, "", RUP, 0x3F81, FX},
    {"bf16", "0.", '0', 3000, "100390625e3001", RNE, 0x3F80, FX},
    {"bf16", "0.", '0', 3000, "100390625000001e3001", RNE, 0x3F81, FX},
    {"bf16", "100390625", '0', 3000, "e-3008", RNE, 0x3F80, FX},
    {"bf16", "100390625", '0', 3000, "1e-3009", RNE, 0x3F81, FX},
    {"bf16", "-1", '0', 5000, "", RNE, 0xFF80, FO},
    {"bf16", "1", '0', 5000, "e-5050", RNE, 0x0000, FU},
    {"bf16", "1", '0', 5000, "e-5020", RNE, 0x1E3D, FX},
    {"f32", "0.", '0', 100000, "1", RUP, 0x00000001, FU},
    {"f32", "0.", '0', 100000, "1e100001", RNE, 0x3F800000, 0},
    {"f32", "1.", '0', 100000, "", RNE, 0x3F800000, 0},
    {"f32", "0x1.", '0', 100000, "1p0", RUP, 0x3F800001, FX},
    {"f32", "0x0.", '0', 100000, "1p400004", RNE, 0x3F800000, 0},
    /* 0.1 written with 10^5 digits of 3s times 0.3 */
    {"f32", "0.", '3', 100000, "e0", RNE, 0x3EAAAAAB, FX},
};

typedef struct
{
    const char *fmt;
    uint64_t bits;
    sf_print_style style;
    const char *text;
} print_case;

#define EXACT SF_PRINT_EXACT
#define SHORT SF_PRINT_SHORTEST
#define HEX SF_PRINT_HEX

static const print_case print_cases[] = {
    {"bf16", 0xC097, EXACT, "-4.71875"},
    {"bf16", 0xC097, SHORT, "-4.72"},
    {"bf16", 0xC097, HEX, "-0x1.2ep+2"},
    {"bf16", 0xC01A, EXACT, "-2.40625"},
    {"bf16", 0x3DCD, SHORT, "0.1"},
    {"bf16", 0x3DCD, EXACT, "0.10009765625"},
    {"bf16", 0x3DCD, HEX, "0x1.9ap-4"},
    {"bf16", 0x4B80, EXACT, "16777216"},
    {"bf16", 0x3F80, SHORT, "1"},
    {"bf16", 0x0001, HEX, "0x1p-133"},
    {"bf16", 0x0003, HEX, "0x1.8p-132"},
    {"f32", 0x00000001, EXACT,
     "1.4012984643248170709237295832899161312802619418765157717570682838897"
     "9108268586060148663818836212158203125e-45"},
    {"f32", 0x00000001, SHORT, "1e-45"},
    {"f32", 0x00000001, HEX, "0x1p-149"},
    {"f32", 0x3DCCCCCD, SHORT, "0.1"},
    {"f32", 0x3DCCCCCD, EXACT, "0.100000001490116119384765625"},
    {"f32", 0x3DCCCCCD, HEX, "0x1.99999ap-4"},
    {"f32", 0x7F7FFFFF, SHORT, "3.4028235e+38"},
    {"f32", 0x7F7FFFFF, EXACT, "3.4028234663852885981170418348451692544e+38"},
    {"f32", 0x7F7FFFFF, HEX, "0x1.fffffep+127"},
    {"f32", 0x00800000, SHORT, "1.1754944e-38"},
    {"f32", 0x3F800000, EXACT, "1"},
    {"f32", 0x3F800000, HEX, "0x1p+0"},
    {"f32", 0x37800000, EXACT, "0.0000152587890625"},
    {"f32", 0x37000000, EXACT, "7.62939453125e-06"},
    {"f32", 0x60AD78EC, EXACT, "100000002004087734272"},
    {"f32", 0x60AD78EC, SHORT, "100000000000000000000"},
    {"f32", 0x6258D727, EXACT, "1.00000002004087734272e+21"},
    {"f32", 0x6258D727, SHORT, "1e+21"},
    {"f32", 0x4B800000, SHORT, "16777216"},
    {"f32", 0x3EAAAAAB, SHORT, "0.33333334"},
    {"f32", 0x00000000, EXACT, "0"},
    {"f32", 0x80000000, SHORT, "-0"},
    {"f32", 0x00000000, HEX, "0x0p+0"},
    {"f32", 0x80000000, HEX, "-0x0p+0"},
    {"f32", 0x7F800000, EXACT, "inf"},
    {"f32", 0xFF800000, HEX, "-inf"},
    {"f32", 0x7FC00000, SHORT, "nan"},
    {"f32", 0xFFC00000, EXACT, "-nan"},
    {"f32", 0x7FC0001F, EXACT, "nan(0x1f)"},
    {"f32", 0x7F800001, HEX, "snan(0x1)"},
    {"f32", 0xFFBFFFFF, SHORT, "-snan(0x3fffff)"},
    {"f16", 0x0001, EXACT, "5.9604644775390625e-08"},
    {"f16", 0x0001, SHORT, "6e-08"},
    {"f16", 0x0001, HEX, "0x1p-24"},
    {"f16", 0x7BFF, SHORT, "65500"},
    {"f16", 0x3555, SHORT, "0.3333"},
    {"f16", 0x7E00, EXACT, "nan"},
    {"e4m3", 0x7E, EXACT, "448"},
    {"e4m3", 0x7E, SHORT, "450"},
    {"e4m3", 0x7F, EXACT, "nan"},
    {"e4m3", 0xFF, HEX, "-nan"},
    {"e4m3", 0x01, HEX, "0x1p-9"},
    {"e5m2", 0x7B, EXACT, "57344"},
    {"e5m2", 0x7D, EXACT, "snan(0x1)"},
    {"e5m2", 0xFC, EXACT, "-inf"},
    {"tf32", 0x3F802000, SHORT, "1.001"},
    {"tf32", 0x3F802000, HEX, "0x1.004p+0"},
};

typedef struct
{
    sf_dyadic d;
    const char *text;
} dyadic_case;

static const dyadic_case dyadic_cases[] = {
    {{true, false, -5, 0, 151}, "-4.71875"},
    /* a tail: the value lies in (W 2^e, (W + 1) 2^e); only the digits
       shared by all of it are written: (4.71875, 4.75) -> 4.7..., (0,
       0.5) and (0.25, 0.5) -> 0..., (9, 10) -> 9..., and the 128-bit
       window of 1/3 (W = 0x5555...5 2^-128, between 0.3{38}235... and
       0.3{38}529...) -> 38 threes; (2^128 - 1, 2^128) -> the integer
       2^128 - 1 and "..." */
    {{true, true, -5, 0, 151}, "-4.7..."},
    {{false, true, -1, 0, 0}, "0..."},
    {{false, true, -2, 0, 1}, "0..."},
    {{false, true, 0, 0, 9}, "9..."},
    {{false, true, -128, 0x5555555555555555u, 0x5555555555555555u},
     "0.33333333333333333333333333333333333333..."},
    {{false, true, 0, ~(uint64_t)0, ~(uint64_t)0},
     "3.40282366920938463463374607431768211455e+38..."},
    {{false, false, 100, 0, 1}, "1.267650600228229401496703205376e+30"},
    {{false, false, 0, 1, 0}, "18446744073709551616"},
    {{false, false, 20, 0, 95367431640625u}, "100000000000000000000"},
    {{false, false, 21, 0, 476837158203125u}, "1e+21"},
    {{false, false, -16, 0, 1}, "0.0000152587890625"},
    {{false, false, -17, 0, 1}, "7.62939453125e-06"},
    {{false, false, -20, 0, 0x100000}, "1"},
    {{false, false, -1, 0, 5}, "2.5"},
    {{true, false, 0, 0, 0}, "-0"},
    {{false, true, -10, 0, 0}, "0..."},
    {{false, false, 100000, 0, 3}, "0x1.8p+100001"},
    {{true, true, -100000, 0, 1}, "-0x1p-100000..."},
};

/* 2^-1074, every digit. */
static const char pow2_m1074[] =
    "4.9406564584124654417656879286822137236505980261432476442558568250067"
    "55072702087518652998363616359923797965646954457177309266567103559397"
    "96398774796010781878126300713190311404527845817167848982103688718636"
    "05699873072305000638740915356498438731247339727316961514003171538539"
    "80741262385655911710266585566867681870395603106249319452715914924553"
    "29305456544401127480129709999541931989409080416563324524757147869014"
    "72678015935523861155013480352649347201937902681071074917033322268447"
    "53335720832431936092382893458368060106011506169809753078342277318329"
    "24790498252473077637592724787465608477820373446969953364701797267771"
    "7585125660551199131504891101451037862738167250955837389733598993664"
    "809941164205702637090279242767544565229087538682506419718265533447265"
    "625e-324";

START_TEST(test_special)
{
    size_t i;
    unsigned n_bad = 0, n = 0;
    char buf[4096];

    for (i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
        const parse_case *c = &parse_cases[i];
        const sf_format *f = fmt_named(c->fmt);
        unsigned flags;
        long end, want_end = c->end == END_ALL ? (long)strlen(c->s) : c->end;
        uint64_t z = parse(f, c->s, c->rm, c->sat, &flags, &end);

        n++;
        if (z != c->bits || flags != c->flags || end != want_end) {
            if (n_bad++ < TST_MAX_PRINT) {
                print_string_case(f, c->rm, c->s, c->bits, c->flags, z, flags);
                printf("    end %ld (want %ld)%s\n", end, want_end,
                       c->sat ? " saturate" : "");
            }
        }
    }

    for (i = 0; i < sizeof long_cases / sizeof long_cases[0]; i++) {
        const long_case *c = &long_cases[i];
        const sf_format *f = fmt_named(c->fmt);
        size_t lp = strlen(c->prefix), ls = strlen(c->suffix);
        char *s = malloc(lp + c->n + ls + 1);
        unsigned flags;
        long end;
        uint64_t z;

        ck_assert_ptr_nonnull(s);
        memcpy(s, c->prefix, lp);
        memset(s + lp, c->fill, c->n);
        memcpy(s + lp + c->n, c->suffix, ls + 1);
        z = parse(f, s, c->rm, false, &flags, &end);
        n++;
        if (z != c->bits || flags != c->flags || end != (long)strlen(s)) {
            if (n_bad++ < TST_MAX_PRINT) {
                print_string_case(f, c->rm, s, c->bits, c->flags, z, flags);
                printf("    long case %zu, end %ld\n", i, end);
            }
        }
        free(s);
    }

    for (i = 0; i < sizeof print_cases / sizeof print_cases[0]; i++) {
        const print_case *c = &print_cases[i];
        const sf_format *f = fmt_named(c->fmt);
        size_t len = sf_to_string(f, c->bits, c->style, buf, sizeof buf);

        n++;
        if (strcmp(buf, c->text) != 0 || len != strlen(c->text)) {
            if (n_bad++ < TST_MAX_PRINT)
                printf("%s_to_string style %d %llx: \"%s\" (len %zu), "
                       "want \"%s\"\n",
                       f->name, (int)c->style, (unsigned long long)c->bits,
                       buf, len, c->text);
        }
    }

    for (i = 0; i < sizeof dyadic_cases / sizeof dyadic_cases[0]; i++) {
        const dyadic_case *c = &dyadic_cases[i];
        size_t len = sf_dyadic_to_string(&c->d, buf, sizeof buf);

        n++;
        if (strcmp(buf, c->text) != 0 || len != strlen(c->text)) {
            if (n_bad++ < TST_MAX_PRINT)
                printf("dyadic_to_string case %zu: \"%s\", want \"%s\"\n", i,
                       buf, c->text);
        }
    }
    {
        sf_dyadic d = {false, false, -1074, 0, 1};
        size_t len = sf_dyadic_to_string(&d, buf, sizeof buf);
        n++;
        if (strcmp(buf, pow2_m1074) != 0 || len != strlen(pow2_m1074)) {
            if (n_bad++ < TST_MAX_PRINT)
                printf("dyadic_to_string 2^-1074: \"%s\"\n", buf);
        }
    }

    /* snprintf-like truncation */
    {
        const sf_format *f = &sf_format_bf16;
        char small[4];
        size_t len = sf_to_string(f, 0xC097, EXACT, small, sizeof small);
        ck_assert_uint_eq(len, 8);
        ck_assert_str_eq(small, "-4.");
        len = sf_to_string(f, 0xC097, HEX, NULL, 0);
        ck_assert_uint_eq(len, 10);
        small[0] = 'x';
        len = sf_to_string(f, 0xC097, SHORT, small, 1);
        ck_assert_uint_eq(len, 5);
        ck_assert_str_eq(small, "");
        sf_dyadic d = {true, true, -5, 0, 151};
        len = sf_dyadic_to_string(&d, small, 3);
        ck_assert_uint_eq(len, 7);
        ck_assert_str_eq(small, "-4");
    }

    /* END may be NULL; SR draws once per rounding and none for specials */
    {
        sf_env env = SF_ENV_IEEE;
        uint64_t z =
            sf_from_string(&sf_format_bf16, "1.00390625", NULL, SF_SR, &env);
        ck_assert(z == 0x3F80 || z == 0x3F81);
        ck_assert_uint_eq(env.flags, SF_FLAG_INEXACT);
        ck_assert_uint_eq(env.sr_counter, 1);
        (void)sf_from_string(&sf_format_bf16, "nan", NULL, SF_SR, &env);
        (void)sf_from_string(&sf_format_bf16, "0.0", NULL, SF_SR, &env);
        ck_assert_uint_eq(env.sr_counter, 1);
    }

    ck_assert_msg(n_bad == 0, "%u of %u special cases failed", n_bad, n);
}
END_TEST

/*----------------------------------------------------------------------------
 * The MPFR side: format parameters and bits of an MPFR value.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const sf_format *f;
    mpfr_prec_t prec;
    mpfr_exp_t emin, emax; /* MPFR convention: x = 0.1b... * 2^e */
    int e10_lo, e10_hi;    /* decimal exponents the generator spans */
} fmt_info;

static fmt_info
info_for(const sf_format *f)
{
    fmt_info fi;
    fi.f = f;
    fi.prec = (mpfr_prec_t)f->frac_bits + 1;
    fi.emin = (mpfr_exp_t)f->emin - (mpfr_exp_t)f->frac_bits + 1;
    fi.emax = (mpfr_exp_t)f->emax + 1;
    /* from below half the smallest subnormal to above the largest */
    fi.e10_lo = (int)((fi.emin - 3) * 30103 / 100000) - 1;
    fi.e10_hi = (int)((fi.emax + 2) * 30103 / 100000) + 1;
    return fi;
}

/* Bits of the MPFR value X, which is a value of F (integer code). */
static uint64_t
bits_of_mpfr(const sf_format *f, mpfr_t x)
{
    uint64_t sign = mpfr_signbit(x) ? f->sign_mask : 0, m, frac;
    mpz_t z;
    mpfr_exp_t e;
    int len;
    long top;

    if (mpfr_nan_p(x))
        return f->exp_mask | f->frac_mask;
    if (mpfr_inf_p(x))
        return sign | f->exp_mask;
    if (mpfr_zero_p(x))
        return sign;
    mpz_init(z);
    e = mpfr_get_z_2exp(z, x);
    mpz_abs(z, z);
    while (mpz_even_p(z)) {
        mpz_fdiv_q_2exp(z, z, 1);
        e++;
    }
    m = mpz_get_ui(z);
    mpz_clear(z);
    len = 64 - __builtin_clzll(m);
    top = (long)e + len - 1; /* x in [2^top, 2^(top+1)) */
    if (top >= f->emin) {
        int sh = (int)f->frac_bits - (len - 1);
        uint64_t exp_field = (uint64_t)(top + f->bias);
        frac = (m << sh) & (((uint64_t)1 << f->frac_bits) - 1);
        return sign | (exp_field << (f->frac_bits + f->pad_bits))
               | (frac << f->pad_bits);
    }
    /* subnormal: m * 2^e in units of 2^(emin - frac_bits) */
    frac = m << (e - (f->emin - (long)f->frac_bits));
    return sign | (frac << f->pad_bits);
}

static mpfr_rnd_t
mpfr_mode(sf_round rm)
{
    switch (rm) {
    case SF_RTZ:
        return MPFR_RNDZ;
    case SF_RDN:
        return MPFR_RNDD;
    case SF_RUP:
        return MPFR_RNDU;
    default:
        return MPFR_RNDN;
    }
}

/* The emulated rounding of the decimal text S to FI in MPFR mode RND
   (not RNA): bits in *OUT, IEEE flags returned. */
static unsigned
mpfr_round_text(const fmt_info *fi, const char *s, mpfr_rnd_t rnd,
                uint64_t *out)
{
    mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
    mpfr_t x, y, two_emin;
    unsigned flags = 0;
    bool tiny;
    int t;

    mpfr_inits2(fi->prec, x, y, (mpfr_ptr)0);
    mpfr_init2(two_emin, 2);

    /* rounding with an unbounded exponent: tininess after rounding */
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_strtofr(y, s, NULL, 10, rnd);
    mpfr_set_ui_2exp(two_emin, 1, fi->f->emin, MPFR_RNDN);
    tiny = !mpfr_zero_p(y) && mpfr_cmpabs(y, two_emin) < 0;

    /* the format: exponent range, then subnormal precision */
    mpfr_set_emin(fi->emin);
    mpfr_set_emax(fi->emax);
    mpfr_clear_flags();
    t = mpfr_strtofr(x, s, NULL, 10, rnd);
    t = mpfr_check_range(x, t, rnd);
    t = mpfr_subnormalize(x, t, rnd);
    if (t != 0)
        flags |= SF_FLAG_INEXACT;
    if (mpfr_overflow_p())
        flags |= SF_FLAG_OVERFLOW;
    /* MPFR's own underflow flag is raised for exact subnormals too: IEEE
       underflow is tiny (after rounding) and inexact */
    if (tiny && t != 0)
        flags |= SF_FLAG_UNDERFLOW;
    mpfr_set_emin(old_min);
    mpfr_set_emax(old_max);

    *out = bits_of_mpfr(fi->f, x);
    mpfr_clears(x, y, two_emin, (mpfr_ptr)0);
    return flags;
}

/* Expected bits and flags of the text S in FI with mode RM, from MPFR.
   roundTiesToAway (which mpfr_strtofr lacks) is RNE except at an exact
   midpoint of the two neighbours, where it takes the one away from 0.
   Round to odd is RTZ with the last bit set when inexact; its flags are
   RTZ's (both overflow only from 2^(emax+1) on, and both are tiny exactly
   below 2^emin). */
static unsigned
expected_text(const fmt_info *fi, const char *s, sf_round rm, uint64_t *out)
{
    unsigned flags;
    uint64_t z_bits, a_bits;
    mpfr_t w, lo, hi, mid;
    int tw;
    bool tie;

    if (rm == SF_ROD) {
        flags = mpfr_round_text(fi, s, MPFR_RNDZ, out);
        if ((flags & SF_FLAG_INEXACT) != 0)
            *out |= (uint64_t)1 << fi->f->pad_bits;
        return flags;
    }
    if (rm != SF_RNA)
        return mpfr_round_text(fi, s, mpfr_mode(rm), out);
    flags = mpfr_round_text(fi, s, MPFR_RNDN, out);
    if ((flags & SF_FLAG_INEXACT) == 0 || (flags & SF_FLAG_OVERFLOW) != 0)
        return flags; /* no tie; at the overflow tie both give Inf */
    (void)mpfr_round_text(fi, s, MPFR_RNDZ, &z_bits);
    (void)mpfr_round_text(fi, s, MPFR_RNDA, &a_bits);
    if ((a_bits & ~fi->f->sign_mask) == fi->f->exp_mask)
        return flags; /* away is Inf: the tie, if any, is the overflow tie */
    mpfr_inits2(64, w, lo, hi, mid, (mpfr_ptr)0);
    {
        /* lo, hi from their bits with integer code */
        const sf_format *f = fi->f;
        uint64_t b[2] = {z_bits, a_bits};
        mpfr_ptr v[2] = {lo, hi};
        int i;
        for (i = 0; i < 2; i++) {
            uint64_t frac = (b[i] & f->frac_mask) >> f->pad_bits;
            uint64_t ef = (b[i] & f->exp_mask) >> (f->frac_bits + f->pad_bits);
            long e = ef == 0 ? f->emin - (long)f->frac_bits
                             : (long)ef - f->bias - (long)f->frac_bits;
            uint64_t sig = ef == 0 ? frac : frac | (uint64_t)1 << f->frac_bits;
            mpfr_set_ui_2exp(v[i], sig, e, MPFR_RNDN);
        }
        mpfr_add(mid, lo, hi, MPFR_RNDN);
        mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
    }
    {
        mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
        mpfr_set_emin(mpfr_get_emin_min());
        mpfr_set_emax(mpfr_get_emax_max());
        tw = mpfr_strtofr(w, s, NULL, 10, MPFR_RNDN);
        mpfr_set_emin(old_min);
        mpfr_set_emax(old_max);
    }
    mpfr_abs(w, w, MPFR_RNDN);
    tie = tw == 0 && mpfr_equal_p(w, mid);
    mpfr_clears(w, lo, hi, mid, (mpfr_ptr)0);
    if (tie)
        *out = a_bits;
    return flags;
}

/*----------------------------------------------------------------------------
 * mpfr: random decimal text against MPFR.
 *--------------------------------------------------------------------------*/
/* Random decimal text: 1-40 significant digits, leading digit's exponent
   in [lo, hi], in one of several layouts. */
static void
gen_random_decimal(tst_rng *r, const fmt_info *fi, char *s, size_t cap)
{
    char dig[48];
    int nd = 1 + (int)tst_rand_below(r, 40), i, e10, layout;
    size_t len = 0;

    dig[0] = (char)('1' + tst_rand_below(r, 9));
    for (i = 1; i < nd; i++)
        dig[i] = (char)('0' + tst_rand_below(r, 10));
    if (nd > 2 && tst_rand_below(r, 8) == 0)
        for (i = 1 + (int)tst_rand_below(r, (uint64_t)nd - 1); i < nd; i++)
            dig[i] = '0';
    dig[nd] = '\0';
    e10 = fi->e10_lo
          + (int)tst_rand_below(r, (uint64_t)(fi->e10_hi - fi->e10_lo + 1));
    if (tst_rand_below(r, 2))
        s[len++] = '-';
    else if (tst_rand_below(r, 8) == 0)
        s[len++] = '+';
    layout = (int)tst_rand_below(r, 4);
    if (layout == 2 && (e10 < -25 || e10 > 25))
        layout = 0;
    switch (layout) {
    case 0: /* d.ddde+X */
        len += (size_t)snprintf(s + len, cap - len, "%c%s%s%c%d", dig[0],
                                nd > 1 ? "." : "", dig + 1,
                                tst_rand_below(r, 2) ? 'e' : 'E', e10);
        break;
    case 1: /* ddddeX */
        len += (size_t)snprintf(s + len, cap - len, "%se%s%d", dig,
                                e10 - nd + 1 >= 0 && tst_rand_below(r, 2) ? "+"
                                                                          : "",
                                e10 - nd + 1);
        break;
    case 2: /* positional */
        if (e10 < 0) {
            len += (size_t)snprintf(s + len, cap - len, "0.");
            for (i = 0; i < -e10 - 1; i++)
                s[len++] = '0';
            len += (size_t)snprintf(s + len, cap - len, "%s", dig);
        } else {
            for (i = 0; i <= e10 || i < nd; i++) {
                if (i == e10 + 1)
                    s[len++] = '.';
                s[len++] = i < nd ? dig[i] : '0';
            }
            s[len] = '\0';
        }
        break;
    default: /* 000.000ddd e X, leading zeros */
    {
        int z = (int)tst_rand_below(r, 5);
        len += (size_t)snprintf(s + len, cap - len, "000.");
        for (i = 0; i < z; i++)
            s[len++] = '0';
        len += (size_t)snprintf(s + len, cap - len, "%se%d", dig, e10 + 1 + z);
        break;
    }
    }
    (void)len;
}

/* Exact decimal digits of m * 2^e into DIG (mpz), with *K: value =
   DIG * 10^k. */
static void
exact_decimal(uint64_t m, long e, char *dig, size_t cap, long *k)
{
    mpz_t z;

    mpz_init_set_ui(z, m);
    if (e >= 0) {
        mpz_mul_2exp(z, z, (mp_bitcnt_t)e);
        *k = 0;
    } else {
        mpz_t p;
        mpz_init(p);
        mpz_ui_pow_ui(p, 5, (unsigned long)-e);
        mpz_mul(z, z, p);
        mpz_clear(p);
        *k = e;
    }
    ck_assert(mpz_sizeinbase(z, 10) + 2 < cap);
    mpz_get_str(dig, 10, z);
    mpz_clear(z);
}

/* Text near a rounding boundary of FI: a value or a midpoint, exact or
   nudged just below or above by a trailing digit. */
static void
gen_near_boundary(tst_rng *r, const fmt_info *fi, char *s, size_t cap)
{
    const sf_format *f = fi->f;
    uint64_t exp_top = ((uint64_t)1 << f->exp_bits) - 1;
    uint64_t ef = tst_rand_below(r, exp_top); /* finite */
    uint64_t frac = tst_rand64(r) & (((uint64_t)1 << f->frac_bits) - 1);
    uint64_t sig = ef == 0 ? frac : frac | (uint64_t)1 << f->frac_bits;
    long e = ef == 0 ? f->emin - (long)f->frac_bits
                     : (long)ef - f->bias - (long)f->frac_bits;
    char dig[400];
    long k;
    size_t nd, len = 0;
    int kind = (int)tst_rand_below(r, 3), nudge = (int)tst_rand_below(r, 4);

    if (sig == 0)
        sig = 1;
    if (kind > 0) {
        /* the midpoint above (2 sig + 1) 2^(e-1), or below */
        sig = kind == 1 ? 2 * sig + 1 : 2 * sig - 1;
        e -= 1;
    }
    exact_decimal(sig, e, dig, sizeof dig - 40, &k);
    nd = strlen(dig);
    if (nudge == 1 && nd > 1) {
        /* truncate: at or just below */
        size_t t = 1 + (size_t)tst_rand_below(r, nd - 1);
        k += (long)(nd - t);
        nd = t;
        dig[nd] = '\0';
    } else if (nudge == 2) {
        /* just above: append 0...01 */
        int z = (int)tst_rand_below(r, 30), i;
        for (i = 0; i < z; i++)
            dig[nd++] = '0';
        dig[nd++] = '1';
        dig[nd] = '\0';
        k -= z + 1;
    } else if (nudge == 3) {
        /* just below: (D - 1) followed by 9s */
        int z = 1 + (int)tst_rand_below(r, 30), i;
        size_t j = nd;
        while (j-- > 0 && dig[j] == '0')
            dig[j] = '9';
        dig[j]--;
        for (i = 0; i < z; i++)
            dig[nd++] = '9';
        dig[nd] = '\0';
        k -= z;
    }
    if (tst_rand_below(r, 2))
        s[len++] = '-';
    /* a leading 0 from D - 1 is harmless */
    snprintf(s + len, cap - len, "%se%ld", dig, k);
}

/* Cases per format at multiplier 1: 3 x 70000 texts, in the five IEEE
   modes and round to odd. */
#define MPFR_TEXTS 70000

START_TEST(test_mpfr)
{
    static const sf_round modes[6] = {SF_RNE, SF_RTZ, SF_RDN,
                                      SF_RUP, SF_RNA, SF_ROD};
    const sf_format *fmts[3] = {&sf_format_bf16, &sf_format_f16,
                                &sf_format_f32};
    unsigned long n_texts = MPFR_TEXTS * tst_multiplier();
    unsigned long n = 0, n_bad = 0, fi_i, i;
    char s[512];
    tst_rng r;

    tst_rng_init(&r, 0x5354524D50465231u);
    for (fi_i = 0; fi_i < 3; fi_i++) {
        fmt_info fi = info_for(fmts[fi_i]);
        for (i = 0; i < n_texts; i++) {
            int m;
            if (tst_rand_below(&r, 4) == 0)
                gen_near_boundary(&r, &fi, s, sizeof s);
            else
                gen_random_decimal(&r, &fi, s, sizeof s);
            for (m = 0; m < 6; m++) {
                uint64_t want, got;
                unsigned want_flags, got_flags;
                long end;

                want_flags = expected_text(&fi, s, modes[m], &want);
                got = parse(fi.f, s, modes[m], false, &got_flags, &end);
                n++;
                if (got != want || (got_flags & MASK_FLAGS) != want_flags
                    || got_flags != want_flags || end != (long)strlen(s)) {
                    if (n_bad++ < TST_MAX_PRINT)
                        print_string_case(fi.f, modes[m], s, want, want_flags,
                                          got, got_flags);
                }
            }
        }
    }
    printf("string mpfr: %lu comparisons, %lu mismatches\n", n, n_bad);
    ck_assert_msg(n_bad == 0, "%lu of %lu MPFR comparisons failed", n_bad, n);
}
END_TEST

/*----------------------------------------------------------------------------
 * roundtrip: text back to bits; EXACT against MPFR's digits.
 *--------------------------------------------------------------------------*/
/* Normalises decimal text ("-12.5e-3", "0.00125") into significant digits
   (no leading or trailing zeros) and the exponent of the first digit.
   Returns false if the text is not of that form. */
static bool
normalise_decimal(const char *s, char *dig, size_t cap, long *e10)
{
    size_t nd = 0;
    long frac_digits = 0, x = 0;
    bool in_frac = false, seen = false;

    if (*s == '-')
        s++;
    for (; *s != '\0' && *s != 'e'; s++) {
        if (*s == '.') {
            if (in_frac)
                return false;
            in_frac = true;
            continue;
        }
        if (*s < '0' || *s > '9')
            return false;
        frac_digits += in_frac;
        if (!seen && *s == '0')
            continue;
        seen = true;
        if (nd + 1 >= cap)
            return false;
        dig[nd++] = *s;
    }
    if (*s == 'e')
        x = strtol(s + 1, NULL, 10);
    if (nd == 0)
        return false;
    /* value = DIG * 10^(x - frac_digits) (leading zeros add nothing) */
    *e10 = (long)nd - 1 + x - frac_digits;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    return true;
}

/* Checks EXACT text of finite non-zero BITS of F against MPFR's digits and
   the notation rule; returns true when it agrees. */
static bool
exact_matches_mpfr(const sf_format *f, uint64_t bits, const char *txt)
{
    uint64_t frac = (bits & f->frac_mask) >> f->pad_bits;
    uint64_t ef = (bits & f->exp_mask) >> (f->frac_bits + f->pad_bits);
    long e = ef == 0 ? f->emin - (long)f->frac_bits
                     : (long)ef - f->bias - (long)f->frac_bits;
    uint64_t sig = ef == 0 ? frac : frac | (uint64_t)1 << f->frac_bits;
    char ours[512], ref[512];
    long e_ours, e_ref;
    mpfr_exp_t me;
    mpfr_t x;
    size_t n;
    bool sci = strchr(txt, 'e') != NULL;

    mpfr_init2(x, 64);
    mpfr_set_ui_2exp(x, sig, e, MPFR_RNDN);
    /* 200 digits exceed every exact expansion here (FP32: at most 112) */
    mpfr_get_str(ref, &me, 10, 200, x, MPFR_RNDN);
    mpfr_clear(x);
    n = strlen(ref);
    while (n > 1 && ref[n - 1] == '0')
        n--;
    ref[n] = '\0';
    e_ref = (long)me - 1;
    if (!normalise_decimal(txt, ours, sizeof ours, &e_ours))
        return false;
    if ((txt[0] == '-') != ((bits & f->sign_mask) != 0))
        return false;
    if (sci != (e_ref < -5 || e_ref > 20))
        return false;
    return strcmp(ours, ref) == 0 && e_ours == e_ref;
}

/* Whether D (ND digits) * 10^k, read by MPFR in RNE for F, gives BITS. */
static bool
mpfr_reads_as(const fmt_info *fi, const char *dig, size_t nd, long k,
              uint64_t bits)
{
    char s[128];
    uint64_t z;

    snprintf(s, sizeof s, "%.*se%ld", (int)nd, dig, k);
    (void)mpfr_round_text(fi, s, MPFR_RNDN, &z);
    return z == bits;
}

/* SHORTEST minimality, independently: no decimal with one digit fewer
   (the two neighbours of the value at that length) reads back, by MPFR.
   TXT is the SHORTEST text of positive finite BITS. */
static bool
shortest_is_minimal(const fmt_info *fi, uint64_t bits, const char *txt)
{
    char ours[64], ex[512], cand[64];
    long e_ours, k;
    size_t nd, nx, i;
    uint64_t frac = (bits & fi->f->frac_mask) >> fi->f->pad_bits;
    uint64_t ef =
        (bits & fi->f->exp_mask) >> (fi->f->frac_bits + fi->f->pad_bits);
    long e = ef == 0 ? fi->f->emin - (long)fi->f->frac_bits
                     : (long)ef - fi->f->bias - (long)fi->f->frac_bits;
    uint64_t sig = ef == 0 ? frac : frac | (uint64_t)1 << fi->f->frac_bits;
    int up;

    if (!normalise_decimal(txt, ours, sizeof ours, &e_ours))
        return false;
    nd = strlen(ours);
    if (nd == 1)
        return true;
    exact_decimal(sig, e, ex, sizeof ex, &k);
    nx = strlen(ex);
    if (nx <= nd - 1)
        return false; /* the exact value itself is shorter */
    for (up = 0; up < 2; up++) {
        /* ex truncated to nd - 1 digits, or that plus one unit */
        size_t n1 = nd - 1;
        long kc = k + (long)(nx - n1);
        memcpy(cand, ex, n1);
        if (up) {
            for (i = n1; i-- > 0 && cand[i] == '9';)
                cand[i] = '0';
            if (i == (size_t)-1) {
                cand[0] = '1';
                kc += (long)n1;
                n1 = 1;
            } else {
                cand[i]++;
            }
        }
        if (mpfr_reads_as(fi, cand, n1, kc, bits))
            return false;
    }
    return true;
}

/* Round trip of one value in all three styles; EXACT optionally against
   MPFR, SHORTEST optionally checked minimal. Returns the number of
   failures (printing at most the first few via *N_PRINTED). */
static unsigned
roundtrip_one(const fmt_info *fi, uint64_t x, bool check_mpfr,
              unsigned long *n_printed)
{
    static const sf_print_style styles[3] = {SF_PRINT_SHORTEST, SF_PRINT_EXACT,
                                             SF_PRINT_HEX};
    const sf_format *f = fi->f;
    char buf[512];
    unsigned bad = 0;
    int st;

    for (st = 0; st < 3; st++) {
        size_t len = sf_to_string(f, x, styles[st], buf, sizeof buf);
        unsigned flags;
        long end;
        uint64_t z = parse(f, buf, SF_RNE, false, &flags, &end);
        bool ok = len == strlen(buf) && z == x && end == (long)len;
        bool finite_nonzero = sf_is_finite(f, x) && !sf_is_zero(f, x);

        if (ok && styles[st] != SF_PRINT_SHORTEST && finite_nonzero)
            ok = (flags & SF_FLAG_INEXACT) == 0;
        if (ok && check_mpfr && finite_nonzero) {
            if (styles[st] == SF_PRINT_EXACT)
                ok = exact_matches_mpfr(f, x, buf);
            else if (styles[st] == SF_PRINT_SHORTEST
                     && f->specials == SF_SPECIALS_IEEE)
                ok = shortest_is_minimal(fi, x & ~f->sign_mask, buf);
        }
        if (!ok) {
            bad++;
            if ((*n_printed)++ < TST_MAX_PRINT) {
                tst_print_case("to_string_roundtrip", f, SF_RNE, &x, 1, x, 0,
                               z, flags);
                printf("    style %d text \"%s\" len %zu end %ld\n", st, buf,
                       len, end);
            }
        }
    }
    return bad;
}

#define ROUNDTRIP_F32 1000000
#define ROUNDTRIP_F32_MPFR 50000

START_TEST(test_roundtrip)
{
    const sf_format *small[5] = {&sf_format_bf16, &sf_format_f16,
                                 &sf_format_e4m3, &sf_format_e5m2,
                                 &sf_format_tf32};
    unsigned long n = 0, n_bad = 0, n_printed = 0, i, k;
    tst_rng r;
    fmt_info f32 = info_for(&sf_format_f32);

    tst_rng_init(&r, 0x5354525254524950u);
    for (k = 0; k < 4; k++) {
        fmt_info fi = info_for(small[k]);
        uint64_t count = (uint64_t)1 << small[k]->storage_bits;
        for (i = 0; i < count; i++) {
            n_bad += roundtrip_one(&fi, i, true, &n_printed);
            n++;
        }
    }
    {
        /* TF32: a random sample of its 2^19 encodings */
        fmt_info fi = info_for(&sf_format_tf32);
        for (i = 0; i < 20000 * tst_multiplier(); i++) {
            uint64_t x = tst_rand64(&r) & 0xFFFFE000u;
            n_bad += roundtrip_one(&fi, x, i < 5000, &n_printed);
            n++;
        }
    }
    for (i = 0; i < ROUNDTRIP_F32 * tst_multiplier(); i++) {
        uint64_t x = tst_rand64(&r) & 0xFFFFFFFFu;
        n_bad += roundtrip_one(&f32, x, i < ROUNDTRIP_F32_MPFR, &n_printed);
        n++;
    }
    /* every FP32 subnormal boundary and binade edge */
    for (i = 0; i < 256; i++) {
        uint64_t e = (uint64_t)i << 23;
        uint64_t edge[4] = {e, e | 1, e | 0x7FFFFF, e | 0x400000};
        for (k = 0; k < 4; k++) {
            n_bad += roundtrip_one(&f32, edge[k], true, &n_printed);
            n_bad +=
                roundtrip_one(&f32, edge[k] | 0x80000000u, false, &n_printed);
            n += 2;
        }
    }
    printf("string roundtrip: %lu values, %lu failures\n", n, n_bad);
    ck_assert_msg(n_bad == 0, "%lu of %lu round trips failed", n_bad, n);
}
END_TEST

/*----------------------------------------------------------------------------
 * sf_dyadic_to_string with a tail, on random windows (W 2^e, (W + 1) 2^e):
 * the expected digits are floor(L / 10^j) for the smallest j at which it
 * equals ceil(U / 10^j) - 1, found with GMP rationals.
 *--------------------------------------------------------------------------*/
/* The notation of D (digits, no leading zero) * 10^k, then "...". */
static void
tail_layout(char *out, bool neg, const char *d, long k)
{
    long nd = (long)strlen(d), e = nd - 1 + k, i;

    if (neg)
        *out++ = '-';
    if (e >= -5 && e <= 20) {
        if (e < 0) {
            *out++ = '0';
            *out++ = '.';
            for (i = 0; i < -e - 1; i++)
                *out++ = '0';
            for (i = 0; i < nd; i++)
                *out++ = d[i];
        } else {
            for (i = 0; i <= e; i++)
                *out++ = i < nd ? d[i] : '0';
            if (e + 1 < nd)
                *out++ = '.';
            for (i = e + 1; i < nd; i++)
                *out++ = d[i];
        }
    } else {
        *out++ = d[0];
        if (nd > 1)
            *out++ = '.';
        for (i = 1; i < nd; i++)
            *out++ = d[i];
        out += sprintf(out, "e%c%02ld", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    strcpy(out, "...");
}

START_TEST(test_dyadic_tail)
{
    tst_rng r;
    unsigned long n = 20000 * tst_multiplier(), bad = 0;
    mpq_t lo, hi, t;
    mpz_t p, a, b;

    tst_rng_init(&r, 0x5354524454414953u);
    mpq_inits(lo, hi, t, NULL);
    mpz_inits(p, a, b, NULL);
    for (unsigned long i = 0; i < n; i++) {
        sf_dyadic d;
        int sh = (int)tst_rand_below(&r, 128);
        int32_t e = (int32_t)tst_rand_below(&r, 1201) - 700;
        char got[400], want[400], *dig;
        long j;

        d.sign = tst_rand64(&r) & 1;
        d.tail = true;
        d.exp = e;
        d.hi = sh >= 64 ? 0 : tst_rand64(&r) >> sh;
        d.lo = sh >= 64 ? tst_rand64(&r) >> (sh - 64) : tst_rand64(&r);
        if (i % 7 == 0)
            d.hi = d.lo = ~(uint64_t)0; /* W + 1 = 2^128 */
        sf_dyadic_to_string(&d, got, sizeof got);
        /* L = W 2^e, U = L + 2^e */
        mpz_set_ui(a, d.hi);
        mpz_mul_2exp(a, a, 64);
        mpz_add_ui(a, a, d.lo);
        mpq_set_z(lo, a);
        mpz_add_ui(a, a, 1);
        mpq_set_z(hi, a);
        if (e >= 0) {
            mpq_mul_2exp(lo, lo, (mp_bitcnt_t)e);
            mpq_mul_2exp(hi, hi, (mp_bitcnt_t)e);
        } else {
            mpq_div_2exp(lo, lo, (mp_bitcnt_t)-e);
            mpq_div_2exp(hi, hi, (mp_bitcnt_t)-e);
        }
        /* from j above U (10^j > U) down while they agree */
        j = ((long)mpz_sizeinbase(mpq_numref(hi), 2)
             - (long)mpz_sizeinbase(mpq_denref(hi), 2) + 1)
                * 30103 / 100000
            + 2;
        for (;; j--) {
            mpz_ui_pow_ui(p, 10, (unsigned long)(j < 0 ? -j : j));
            mpq_set_z(t, p);
            if (j >= 0)
                mpq_inv(t, t);
            mpq_mul(t, t, lo);
            mpz_fdiv_q(a, mpq_numref(t), mpq_denref(t));
            mpq_set_z(t, p);
            if (j >= 0)
                mpq_inv(t, t);
            mpq_mul(t, t, hi);
            mpz_cdiv_q(b, mpq_numref(t), mpq_denref(t));
            mpz_sub_ui(b, b, 1);
            if (mpz_cmp(a, b) != 0)
                break;
        }
        /* T_(j+1)(L) */
        j++;
        mpz_ui_pow_ui(p, 10, (unsigned long)(j < 0 ? -j : j));
        mpq_set_z(t, p);
        if (j >= 0)
            mpq_inv(t, t);
        mpq_mul(t, t, lo);
        mpz_fdiv_q(a, mpq_numref(t), mpq_denref(t));
        if (mpz_sgn(a) == 0) {
            strcpy(want, d.sign ? "-0..." : "0...");
        } else {
            dig = mpz_get_str(NULL, 10, a);
            tail_layout(want, d.sign, dig, j);
            free(dig);
        }
        if (strcmp(got, want) != 0 && bad++ < TST_MAX_PRINT)
            printf("dyadic_to_string tail {%d, 1, %d, 0x%016llx, 0x%016llx}: "
                   "\"%s\", want \"%s\"\n",
                   d.sign, (int)d.exp, (unsigned long long)d.hi,
                   (unsigned long long)d.lo, got, want);
    }
    mpq_clears(lo, hi, t, NULL);
    mpz_clears(p, a, b, NULL);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

static Suite *
string_suite(void)
{
    Suite *s = suite_create("string");
    TCase *tc;

    tc = tst_add_tcase(s, "special", 60);
    tcase_add_test(tc, test_special);

    tc = tst_add_tcase(s, "mpfr", 300);
    tcase_add_test(tc, test_mpfr);

    tc = tst_add_tcase(s, "dyadic_tail", 120);
    tcase_add_test(tc, test_dyadic_tail);

    tc = tst_add_tcase(s, "roundtrip", 300);
    tcase_add_test(tc, test_roundtrip);
    return s;
}

int
main(void)
{
    return tst_run_suite(string_suite());
}
