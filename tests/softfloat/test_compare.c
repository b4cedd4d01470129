/* test_compare.c -- sf_compare and the quiet and signalling predicates
   (eq, lt, le, eq_signaling, lt_quiet, le_quiet, unordered), generic and
   typed, on all pairs of a value set per format (every encoding of the
   8-bit formats), results and the invalid flag, with and without DAZ */
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
#include "tests/support/suite.h"
#include "tests/support/support.h"
#include "tests/support/valueset.h"

/*----------------------------------------------------------------------------
 * The oracles.
 *--------------------------------------------------------------------------*/
/* Integer order of a non-NaN encoding: sign-magnitude to a signed key,
   both zeros (and, under DAZ, subnormals) mapping to 0. */
static int64_t
order_key(const vs_fmt *fi, uint64_t a, bool daz)
{
    int64_t mag = (int64_t)(a & (vs_sign_bit(fi) - 1));
    if (daz && vs_classify(fi, a) == VS_SUB)
        mag = 0;
    return (a & vs_sign_bit(fi)) ? -mag : mag;
}

static sf_cmp
oracle_cmp(const vs_fmt *fi, uint64_t a, uint64_t b, bool daz)
{
    int64_t ka, kb;

    if (vs_is_nan(vs_classify(fi, a)) || vs_is_nan(vs_classify(fi, b)))
        return SF_CMP_UN;
    ka = order_key(fi, a, daz);
    kb = order_key(fi, b, daz);
    return ka < kb ? SF_CMP_LT : ka > kb ? SF_CMP_GT : SF_CMP_EQ;
}

static sf_cmp
host_cmp(double x, double y)
{
    if (isunordered(x, y))
        return SF_CMP_UN;
    if (isless(x, y))
        return SF_CMP_LT;
    if (isgreater(x, y))
        return SF_CMP_GT;
    return SF_CMP_EQ;
}

/*----------------------------------------------------------------------------
 * The predicates under test, generic and typed, behind one signature.
 *--------------------------------------------------------------------------*/
enum
{
    P_EQ,
    P_LT,
    P_LE,
    P_EQ_SIG,
    P_LT_QUIET,
    P_LE_QUIET,
    P_UNORD,
    N_PRED
};

static const char *const pred_names[N_PRED] = {
    "eq", "lt", "le", "eq_signaling", "lt_quiet", "le_quiet", "unordered"};
/* Signalling predicates raise invalid for any NaN operand. */
static const bool pred_signals[N_PRED] = {false, true,  true, true,
                                          false, false, false};

static bool
pred_oracle(int p, sf_cmp c)
{
    switch (p) {
    case P_EQ:
    case P_EQ_SIG:
        return c == SF_CMP_EQ;
    case P_LT:
    case P_LT_QUIET:
        return c == SF_CMP_LT;
    case P_LE:
    case P_LE_QUIET:
        return c == SF_CMP_LT || c == SF_CMP_EQ;
    case P_UNORD:
    default:
        return c == SF_CMP_UN;
    }
}

/* Indexed by P_*. */
static bool (*const generic_preds[N_PRED])(const sf_format *, uint64_t,
                                           uint64_t, sf_env *) = {
    sf_eq,       sf_lt,       sf_le,       sf_eq_signaling,
    sf_lt_quiet, sf_le_quiet, sf_unordered};

#define TYPED_PRED(fmt, T, W)                                                 \
    static bool pred_##fmt(int p, uint64_t a, uint64_t b, sf_env *e)          \
    {                                                                         \
        static bool (*const fn[N_PRED])(T, T, sf_env *) = {                   \
            sf_##fmt##_eq,       sf_##fmt##_lt,       sf_##fmt##_le,          \
            sf_##fmt##_eq_signaling, sf_##fmt##_lt_quiet,                     \
            sf_##fmt##_le_quiet, sf_##fmt##_unordered};                       \
        return fn[p]((T){(W)a}, (T){(W)b}, e);                                \
    }

TYPED_PRED(bf16, sf_bf16, uint16_t)
TYPED_PRED(f16, sf_f16, uint16_t)
TYPED_PRED(f32, sf_f32, uint32_t)
TYPED_PRED(tf32, sf_tf32, uint32_t)
TYPED_PRED(e4m3, sf_e4m3, uint8_t)
TYPED_PRED(e5m2, sf_e5m2, uint8_t)

/* In the order of vs_fmts. */
typedef bool (*typed_pred_fn)(int, uint64_t, uint64_t, sf_env *);
static const typed_pred_fn typed_preds[VS_N_FMTS] = {
    pred_bf16, pred_f16, pred_f32, pred_tf32, pred_e4m3, pred_e5m2};

/*----------------------------------------------------------------------------
 * The test: every pair, every predicate, generic and typed; with DAZ off
 * (loop index even) and on (odd).
 *--------------------------------------------------------------------------*/
typedef struct
{
    unsigned long n, bad, oracle_bad;
    unsigned printed;
} tally;

static void
record_failure(tally *t, const vs_fmt *fi, const char *what, bool daz,
               uint64_t a, uint64_t b, int want, unsigned want_flags, int got,
               unsigned got_flags)
{
    uint64_t in[2] = {a, b};

    t->bad++;
    if (t->printed++ >= TST_MAX_PRINT)
        return;
    printf("%s%s: expected %d got %d\n", what, daz ? " (daz)" : "", want, got);
    tst_print_case(what, fi->f, SF_RNE, in, 2, (uint64_t)want, want_flags,
                   (uint64_t)got, got_flags);
}

START_TEST(test_pairs)
{
    const vs_fmt *fi = &vs_fmts[_i / 2];
    const sf_format *f = fi->f;
    bool daz = (_i % 2) != 0;
    static uint64_t set[VS_SET_MAX];
    tally t = {0, 0, 0, 0};
    tst_rng r;
    size_t n;

    tst_rng_init(&r, 0xC0000u + (unsigned)(_i / 2));
    n = vs_build_set(fi, set, &r);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            uint64_t a = set[i], b = set[j];
            vs_class ca = vs_classify(fi, a), cb = vs_classify(fi, b);
            bool any_nan = vs_is_nan(ca) || vs_is_nan(cb);
            bool any_snan = ca == VS_SNAN || cb == VS_SNAN;
            sf_cmp want = oracle_cmp(fi, a, b, daz);
            sf_cmp via_host =
                host_cmp(vs_host_value(fi, a, daz), vs_host_value(fi, b, daz));
            sf_cmp via_lib_double;

            /* the two oracles must agree (and with the library's exact
               conversion to double, DAZ off) */
            if (via_host != want)
                t.oracle_bad++;
            if (!daz) {
                via_lib_double =
                    host_cmp(sf_to_double(f, a), sf_to_double(f, b));
                if (via_lib_double != want)
                    t.oracle_bad++;
            }
            for (int sig = 0; sig < 2; sig++) {
                sf_env env = SF_ENV_IEEE;
                unsigned wf = (any_snan || (sig && any_nan))
                                  ? (unsigned)SF_FLAG_INVALID
                                  : 0u;
                sf_cmp got;
                env.daz = daz;
                got = sf_compare(f, a, b, sig != 0, &env);
                t.n++;
                if (got != want || env.flags != wf)
                    record_failure(
                        &t, fi, sig ? "compare_signaling" : "compare_quiet",
                        daz, a, b, (int)want, wf, (int)got, env.flags);
            }
            for (int p = 0; p < N_PRED; p++) {
                bool w = pred_oracle(p, want), g;
                unsigned wf = (any_snan || (pred_signals[p] && any_nan))
                                  ? (unsigned)SF_FLAG_INVALID
                                  : 0u;
                sf_env env = SF_ENV_IEEE;

                env.daz = daz;
                g = generic_preds[p](f, a, b, &env);
                t.n++;
                if (g != w || env.flags != wf)
                    record_failure(&t, fi, pred_names[p], daz, a, b, w, wf, g,
                                   env.flags);
                env = (sf_env)SF_ENV_IEEE;
                env.daz = daz;
                g = typed_preds[_i / 2](p, a, b, &env);
                t.n++;
                if (g != w || env.flags != wf)
                    record_failure(&t, fi, pred_names[p], daz, a, b, w, wf, g,
                                   env.flags);
            }
        }
    }
    printf("compare %s%s: %zu values, %lu checks, %lu mismatches\n", f->name,
           daz ? " daz" : "", n, t.n, t.bad);
    ck_assert_msg(t.oracle_bad == 0, "%s: the oracles disagree %lu times",
                  f->name, t.oracle_bad);
    ck_assert_msg(t.bad == 0, "%s%s: %lu of %lu comparisons wrong", f->name,
                  daz ? " (daz)" : "", t.bad, t.n);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("compare");

    tcase_add_loop_test(tst_add_tcase(s, "pairs", 120), test_pairs, 0,
                        2 * VS_N_FMTS);
    return tst_run_suite(s);
}
