/* test_minmax.c -- IEEE 754-2019 minimum, maximum, minimumNumber and
   maximumNumber (section 9.6), generic and typed, on all pairs of a value
   set per format (every encoding of the 8-bit formats), under five NaN
   policies: result bits and the invalid flag */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"
#include "tests/support/valueset.h"

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
total_key(const vs_fmt *fi, uint64_t a)
{
    int64_t mag = (int64_t)(a & (vs_sign_bit(fi) - 1));
    return (a & vs_sign_bit(fi)) ? -mag - 1 : mag;
}

static uint64_t
quieted(const vs_fmt *fi, uint64_t a)
{
    if (fi->fn) /* the only NaN, S.1111.111 */
        return (a & vs_sign_bit(fi))
               | (vs_field_mask(fi->e_bits + fi->m_bits) << fi->pad);
    return a | (UINT64_C(1) << (fi->m_bits - 1 + fi->pad));
}

static uint64_t
default_nan(const vs_fmt *fi, const sf_env *env)
{
    uint64_t frac;

    if (fi->fn || env->default_nan == SF_DNAN_ALL_ONES)
        frac = vs_field_mask(fi->m_bits);
    else
        frac = UINT64_C(1) << (fi->m_bits - 1);
    return vs_make(fi, env->default_nan == SF_DNAN_NEGATIVE,
                   vs_field_mask(fi->e_bits), frac);
}

/* The NaN result for operands a, b (at least one a NaN). */
static uint64_t
nan_result(const vs_fmt *fi, const sf_env *env, uint64_t a, uint64_t b)
{
    bool na = vs_is_nan(vs_classify(fi, a));
    bool sa = vs_classify(fi, a) == VS_SNAN,
         sb = vs_classify(fi, b) == VS_SNAN;

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
oracle(int op, const vs_fmt *fi, const sf_env *env, uint64_t a, uint64_t b,
       unsigned *flags)
{
    vs_class ca = vs_classify(fi, a), cb = vs_classify(fi, b);
    bool na = vs_is_nan(ca), nb = vs_is_nan(cb);
    bool want_max = op == M_MAX || op == M_MAX_NUM;
    bool number = op == M_MIN_NUM || op == M_MAX_NUM;

    *flags = (ca == VS_SNAN || cb == VS_SNAN) ? (unsigned)SF_FLAG_INVALID : 0u;
    if (na || nb) {
        if (number && !(na && nb))
            return na ? b : a;
        return nan_result(fi, env, a, b);
    }
    if (want_max)
        return total_key(fi, a) >= total_key(fi, b) ? a : b;
    return total_key(fi, a) <= total_key(fi, b) ? a : b;
}

/*----------------------------------------------------------------------------
 * The operations under test, generic and typed.
 *--------------------------------------------------------------------------*/
/* Indexed by M_*. */
static uint64_t (*const generic_mms[N_MM])(const sf_format *, uint64_t,
                                           uint64_t, sf_env *) = {
    sf_minimum, sf_maximum, sf_minimum_number, sf_maximum_number};

#define TYPED_MM(fmt, T, W)                                                   \
    static uint64_t mm_##fmt(int op, uint64_t a, uint64_t b, sf_env *e)       \
    {                                                                         \
        static T (*const fn[N_MM])(T, T, sf_env *) = {                        \
            sf_##fmt##_minimum, sf_##fmt##_maximum,                           \
            sf_##fmt##_minimum_number, sf_##fmt##_maximum_number};            \
        return fn[op]((T){(W)a}, (T){(W)b}, e).bits;                          \
    }

TYPED_MM(bf16, sf_bf16, uint16_t)
TYPED_MM(f16, sf_f16, uint16_t)
TYPED_MM(f32, sf_f32, uint32_t)
TYPED_MM(tf32, sf_tf32, uint32_t)
TYPED_MM(e4m3, sf_e4m3, uint8_t)
TYPED_MM(e5m2, sf_e5m2, uint8_t)

/* In the order of vs_fmts. */
typedef uint64_t (*typed_mm_fn)(int, uint64_t, uint64_t, sf_env *);
static const typed_mm_fn typed_mms[VS_N_FMTS] = {mm_bf16, mm_f16,  mm_f32,
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
    const vs_fmt *fi = &vs_fmts[fmt_index];
    const sf_format *f = fi->f;
    policy pol = get_policy(_i % N_POLICIES);
    static uint64_t set[VS_SET_MAX];
    unsigned long n_checks = 0, bad = 0, oracle_bad = 0;
    unsigned printed = 0;
    tst_rng r;
    size_t n;

    tst_rng_init(&r, 0x3300u + (unsigned)fmt_index);
    n = vs_build_set(fi, set, &r);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            uint64_t a = set[i], b = set[j];
            bool nans =
                vs_is_nan(vs_classify(fi, a)) || vs_is_nan(vs_classify(fi, b));

            for (int op = 0; op < N_MM; op++) {
                unsigned wf;
                uint64_t want = oracle(op, fi, &pol.env, a, b, &wf);

                /* cross-check the choice between two different numbers
                   with host doubles */
                if (!nans) {
                    double x = vs_host_value(fi, a, false),
                           y = vs_host_value(fi, b, false);
                    if (x != y) {
                        bool take_a =
                            (op == M_MIN || op == M_MIN_NUM) ? x < y : x > y;
                        oracle_bad += want != (take_a ? a : b);
                    }
                }
                for (int typed = 0; typed < 2; typed++) {
                    sf_env env = pol.env;
                    uint64_t got = typed ? typed_mms[fmt_index](op, a, b, &env)
                                         : generic_mms[op](f, a, b, &env);
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

int
main(void)
{
    Suite *s = suite_create("minmax");

    tcase_add_loop_test(tst_add_tcase(s, "pairs", 120), test_pairs, 0,
                        VS_N_FMTS * N_POLICIES);
    return tst_run_suite(s);
}
