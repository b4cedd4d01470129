/* test_minmax.c -- IEEE 754-2019 minimum, maximum, minimumNumber and
   maximumNumber (section 9.6), generic and typed, on all pairs of a value
   set per format (every encoding of the 8-bit formats), under five NaN
   policies: result bits and the invalid flag */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softfloat/softfloat.h"
#include "tests/support/support.h"

/*----------------------------------------------------------------------------
 * Formats, described here (widths from the standards, not read from the
 * library's descriptors), and the value sets.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const sf_format *f;
    unsigned e_bits, m_bits, pad;
    bool fn; /* OCP E4M3: no Inf, only S.1111.111 is NaN */
} fmt_info;

static const fmt_info fmts[] = {
    {&sf_format_bf16, 8, 7, 0, false}, {&sf_format_f16, 5, 10, 0, false},
    {&sf_format_f32, 8, 23, 0, false}, {&sf_format_tf32, 8, 10, 13, false},
    {&sf_format_e4m3, 4, 3, 0, true},  {&sf_format_e5m2, 5, 2, 0, false}};
#define N_FMTS ((int)(sizeof fmts / sizeof fmts[0]))

#define SET_MAX 512

static uint64_t
field_mask(unsigned n)
{
    return (UINT64_C(1) << n) - 1;
}

static uint64_t
sign_bit(const fmt_info *fi)
{
    return UINT64_C(1) << (fi->e_bits + fi->m_bits + fi->pad);
}

static uint64_t
make(const fmt_info *fi, bool neg, uint64_t bexp, uint64_t frac)
{
    return (neg ? sign_bit(fi) : 0) | (bexp << (fi->m_bits + fi->pad))
           | (frac << fi->pad);
}

typedef enum
{
    C_ZERO,
    C_SUB,
    C_NORMAL,
    C_INF,
    C_QNAN,
    C_SNAN
} vclass;

static vclass
classify(const fmt_info *fi, uint64_t a)
{
    uint64_t fr = (a >> fi->pad) & field_mask(fi->m_bits);
    uint64_t ex = (a >> (fi->pad + fi->m_bits)) & field_mask(fi->e_bits);
    uint64_t top = field_mask(fi->e_bits);

    if (fi->fn) {
        if (ex == top && fr == field_mask(fi->m_bits))
            return C_QNAN;
    } else if (ex == top) {
        if (fr == 0)
            return C_INF;
        return (fr >> (fi->m_bits - 1)) ? C_QNAN : C_SNAN;
    }
    if (ex == 0)
        return fr == 0 ? C_ZERO : C_SUB;
    return C_NORMAL;
}

static bool
is_nan(vclass c)
{
    return c == C_QNAN || c == C_SNAN;
}

/* Every encoding for the 8-bit formats; else the specials and edges of
   both signs (zeros, smallest and largest subnormals, smallest normal, 1
   and its neighbours, 2, largest finite and its neighbour, Inf, quiet and
   signalling NaNs with several payloads) and random encodings. */
static size_t
build_set(const fmt_info *fi, uint64_t *out, tst_rng *r)
{
    unsigned w = 1 + fi->e_bits + fi->m_bits;
    uint64_t mf = field_mask(fi->m_bits), top = field_mask(fi->e_bits);
    uint64_t bias = field_mask(fi->e_bits - 1), q = UINT64_C(1)
                                                    << (fi->m_bits - 1);
    size_t n = 0;

    if (w <= 8) {
        for (uint64_t a = 0; a < (UINT64_C(1) << w); a++)
            out[n++] = a << fi->pad;
        return n;
    }
    for (int s = 0; s < 2; s++) {
        bool neg = s != 0;
        const uint64_t edges[][2] = {
            {0, 0},         {0, 1},        {0, mf},       {0, mf >> 1},
            {1, 0},         {1, 1},        {bias, 0},     {bias, 1},
            {bias - 1, mf}, {bias + 1, 0}, {top - 1, mf}, {top - 1, mf - 1},
            {top, 0},       {top, q},      {top, q | 1},  {top, mf},
            {top, 1},       {top, q - 1},  {top, q >> 1}, {bias, mf >> 1}};
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            out[n++] = make(fi, neg, edges[i][0], edges[i][1]);
    }
    while (n < SET_MAX) {
        uint64_t x = tst_rand64(r) >> (64 - w);
        if (n % 4 == 0) /* a neighbour of an earlier value */
            x = (out[tst_rand_below(r, n)] >> fi->pad)
                + (uint64_t)tst_rand_below(r, 3) - 1;
        out[n++] = (x & field_mask(w)) << fi->pad;
    }
    return n;
}

/*----------------------------------------------------------------------------
 * The oracle, from the standard's wording (IEEE 754-2019, 9.6):
 *   minimum(x, y) is x if x < y, y if y < x, and a quiet NaN if either
 *   operand is a NaN (the NaN as 6.2 says for any operation: here by the
 *   env's NaN rule); -0 < +0 for this operation; maximum likewise.
 *   minimumNumber(x, y) is x if x < y, y if y < x, and the number if one
 *   operand is a number and the other a NaN; -0 < +0; if both are NaNs a
 *   quiet NaN (6.2).  A signalling NaN operand signals invalid, but unless
 *   both operands are NaNs it is otherwise ignored: the number is returned.
 *   maximumNumber likewise.
 * No other flag is ever raised.  The operations work on encodings and
 * ignore DAZ (doc/semantics.md), which the Arm preset (DAZ on) checks.
 *--------------------------------------------------------------------------*/
/* Total order of non-NaN encodings with -0 < +0. */
static int64_t
total_key(const fmt_info *fi, uint64_t a)
{
    int64_t mag = (int64_t)(a & (sign_bit(fi) - 1));
    return (a & sign_bit(fi)) ? -mag - 1 : mag;
}

static uint64_t
quieted(const fmt_info *fi, uint64_t a)
{
    if (fi->fn) /* the only NaN, S.1111.111 */
        return (a & sign_bit(fi))
               | (field_mask(fi->e_bits + fi->m_bits) << fi->pad);
    return a | (UINT64_C(1) << (fi->m_bits - 1 + fi->pad));
}

static uint64_t
default_nan(const fmt_info *fi, const sf_env *env)
{
    uint64_t frac;

    if (fi->fn || env->default_nan == SF_DNAN_ALL_ONES)
        frac = field_mask(fi->m_bits);
    else
        frac = UINT64_C(1) << (fi->m_bits - 1);
    return make(fi, env->default_nan == SF_DNAN_NEGATIVE,
                field_mask(fi->e_bits), frac);
}

/* The NaN result for operands a, b (at least one a NaN). */
static uint64_t
nan_result(const fmt_info *fi, const sf_env *env, uint64_t a, uint64_t b)
{
    bool na = is_nan(classify(fi, a));
    bool sa = classify(fi, a) == C_SNAN, sb = classify(fi, b) == C_SNAN;

    switch (env->nan_rule) {
    case SF_NAN_DEFAULT:
        return default_nan(fi, env);
    case SF_NAN_SNAN_FIRST:
        if (sa)
            return quieted(fi, a);
        if (sb)
            return quieted(fi, b);
        return quieted(fi, na ? a : b);
    case SF_NAN_FIRST:
    default:
        return quieted(fi, na ? a : b);
    }
}

enum
{
    M_MIN,
    M_MAX,
    M_MIN_NUM,
    M_MAX_NUM,
    N_MM
};
static const char *const mm_names[N_MM] = {"minimum", "maximum",
                                           "minimum_number", "maximum_number"};

static uint64_t
oracle(int op, const fmt_info *fi, const sf_env *env, uint64_t a, uint64_t b,
       unsigned *flags)
{
    vclass ca = classify(fi, a), cb = classify(fi, b);
    bool na = is_nan(ca), nb = is_nan(cb);
    bool want_max = op == M_MAX || op == M_MAX_NUM;
    bool number = op == M_MIN_NUM || op == M_MAX_NUM;

    *flags = (ca == C_SNAN || cb == C_SNAN) ? (unsigned)SF_FLAG_INVALID : 0u;
    if (na || nb) {
        if (number && !(na && nb))
            return na ? b : a;
        return nan_result(fi, env, a, b);
    }
    if (want_max)
        return total_key(fi, a) >= total_key(fi, b) ? a : b;
    return total_key(fi, a) <= total_key(fi, b) ? a : b;
}

/* The value as a host double, decoded with ldexp (non-NaN only). */
static double
host_value(const fmt_info *fi, uint64_t a)
{
    uint64_t fr = (a >> fi->pad) & field_mask(fi->m_bits);
    uint64_t ex = (a >> (fi->pad + fi->m_bits)) & field_mask(fi->e_bits);
    int bias = (int)field_mask(fi->e_bits - 1);
    double v;

    if (classify(fi, a) == C_INF)
        v = INFINITY;
    else if (ex == 0)
        v = ldexp((double)fr, 1 - bias - (int)fi->m_bits);
    else
        v = ldexp((double)(fr | (UINT64_C(1) << fi->m_bits)),
                  (int)ex - bias - (int)fi->m_bits);
    return (a & sign_bit(fi)) ? -v : v;
}

/*----------------------------------------------------------------------------
 * The operations under test, generic and typed.
 *--------------------------------------------------------------------------*/
static uint64_t
mm_generic(int op, const sf_format *f, uint64_t a, uint64_t b, sf_env *e)
{
    switch (op) {
    case M_MIN:
        return sf_minimum(f, a, b, e);
    case M_MAX:
        return sf_maximum(f, a, b, e);
    case M_MIN_NUM:
        return sf_minimum_number(f, a, b, e);
    case M_MAX_NUM:
    default:
        return sf_maximum_number(f, a, b, e);
    }
}

#define TYPED_MM(fmt, T, W)                                                   \
    static uint64_t mm_##fmt(int op, uint64_t a, uint64_t b, sf_env *e)       \
    {                                                                         \
        T x, y;                                                               \
        x.bits = (W)a;                                                        \
        y.bits = (W)b;                                                        \
        switch (op) {                                                         \
        case M_MIN:                                                           \
            return sf_##fmt##_minimum(x, y, e).bits;                          \
        case M_MAX:                                                           \
            return sf_##fmt##_maximum(x, y, e).bits;                          \
        case M_MIN_NUM:                                                       \
            return sf_##fmt##_minimum_number(x, y, e).bits;                   \
        case M_MAX_NUM:                                                       \
        default:                                                              \
            return sf_##fmt##_maximum_number(x, y, e).bits;                   \
        }                                                                     \
    }

TYPED_MM(bf16, sf_bf16, uint16_t)
TYPED_MM(f16, sf_f16, uint16_t)
TYPED_MM(f32, sf_f32, uint32_t)
TYPED_MM(tf32, sf_tf32, uint32_t)
TYPED_MM(e4m3, sf_e4m3, uint8_t)
TYPED_MM(e5m2, sf_e5m2, uint8_t)

typedef uint64_t (*typed_mm_fn)(int, uint64_t, uint64_t, sf_env *);
static const typed_mm_fn typed_mms[] = {mm_bf16, mm_f16,  mm_f32,
                                        mm_tf32, mm_e4m3, mm_e5m2};

/*----------------------------------------------------------------------------
 * NaN policies.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const char *name;
    sf_env env;
} policy;

static policy
get_policy(int k)
{
    policy p;

    switch (k) {
    case 0:
        p.name = "ieee";
        p.env = (sf_env)SF_ENV_IEEE;
        break;
    case 1:
        p.name = "x86";
        p.env = (sf_env)SF_ENV_X86;
        break;
    case 2:
        p.name = "snan-first";
        p.env = (sf_env)SF_ENV_IEEE;
        p.env.nan_rule = SF_NAN_SNAN_FIRST;
        break;
    case 3:
        p.name = "nvidia";
        p.env = (sf_env)SF_ENV_NVIDIA;
        break;
    default:
        p.name = "arm-bfdot (daz, ftz)";
        p.env = (sf_env)SF_ENV_ARM_BFDOT;
        break;
    }
    return p;
}
#define N_POLICIES 5

START_TEST(test_pairs)
{
    const int fmt_index = _i / N_POLICIES;
    const fmt_info *fi = &fmts[fmt_index];
    const sf_format *f = fi->f;
    policy pol = get_policy(_i % N_POLICIES);
    static uint64_t set[SET_MAX];
    unsigned long n_checks = 0, bad = 0, oracle_bad = 0;
    unsigned printed = 0;
    tst_rng r;
    size_t n;

    tst_rng_init(&r, 0x3300u + (unsigned)fmt_index);
    n = build_set(fi, set, &r);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            uint64_t a = set[i], b = set[j];
            bool nans = is_nan(classify(fi, a)) || is_nan(classify(fi, b));

            for (int op = 0; op < N_MM; op++) {
                unsigned wf;
                uint64_t want = oracle(op, fi, &pol.env, a, b, &wf);

                /* cross-check the choice between two different numbers
                   with host doubles */
                if (!nans) {
                    double x = host_value(fi, a), y = host_value(fi, b);
                    if (x != y) {
                        bool take_a =
                            (op == M_MIN || op == M_MIN_NUM) ? x < y : x > y;
                        oracle_bad += want != (take_a ? a : b);
                    }
                }
                for (int typed = 0; typed < 2; typed++) {
                    sf_env env = pol.env;
                    uint64_t got = typed ? typed_mms[fmt_index](op, a, b, &env)
                                         : mm_generic(op, f, a, b, &env);
                    n_checks++;
                    if (got != want || env.flags != wf) {
                        bad++;
                        if (printed++ < TST_MAX_PRINT) {
                            uint64_t in[2] = {a, b};
                            printf("(%s%s, env %s)\n", mm_names[op],
                                   typed ? ", typed" : "", pol.name);
                            tst_print_case(mm_names[op], f, SF_RNE, in, 2,
                                           want, wf, got, env.flags);
                        }
                    }
                }
            }
        }
    }
    printf("minmax %s %s: %zu values, %lu checks, %lu mismatches\n", f->name,
           pol.name, n, n_checks, bad);
    ck_assert_msg(oracle_bad == 0,
                  "%s: oracle disagrees with host doubles "
                  "%lu times",
                  f->name, oracle_bad);
    ck_assert_msg(bad == 0, "%s (%s): %lu of %lu results wrong", f->name,
                  pol.name, bad, n_checks);
}
END_TEST

static Suite *
minmax_suite(void)
{
    Suite *s = suite_create("minmax");
    TCase *tc = tcase_create("pairs");

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_pairs, 0, N_FMTS * N_POLICIES);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(minmax_suite());
    int failed;

    /* line-buffered, so that vectors printed by a forked test survive */
    setvbuf(stdout, NULL, _IOLBF, 0);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
