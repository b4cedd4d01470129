/* test_bias.c -- the bias statistics: hand-computed moments, t and
   intervals, the edge cases n = 0 and n = 1, merges against one pass (the
   documented bound), event counts from crafted and real rounding events,
   and the binade and operation keys */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bias.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define U 0x1p-53

static void
add_all(bias_cell *c, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bias_cell_add(c, x[i]);
}

/* Every count of two cells equal. */
static void
assert_counts_equal(const bias_cell *a, const bias_cell *b)
{
    ck_assert_uint_eq(a->n, b->n);
    ck_assert_uint_eq(a->neg, b->neg);
    ck_assert_uint_eq(a->zero, b->zero);
    ck_assert_uint_eq(a->pos, b->pos);
    ck_assert_uint_eq(a->nonfinite, b->nonfinite);
    ck_assert_uint_eq(a->events, b->events);
    ck_assert_uint_eq(a->exact, b->exact);
    ck_assert_uint_eq(a->away, b->away);
    ck_assert_uint_eq(a->toward, b->toward);
    ck_assert_uint_eq(a->up, b->up);
    ck_assert_uint_eq(a->down, b->down);
    ck_assert_uint_eq(a->ties, b->ties);
    ck_assert_uint_eq(a->nonties, b->nonties);
    ck_assert_uint_eq(a->ties_away, b->ties_away);
    ck_assert(a->min == b->min && a->max == b->max);
}

/*----------------------------------------------------------------------------
 * Moments and summaries by hand.
 *--------------------------------------------------------------------------*/
START_TEST(test_hand_moments)
{
    /* 1, 2, 3, 4: every Welford step is exact; mean 5/2, m2 5 */
    static const double x[4] = {1, 2, 3, 4};
    bias_cell c;
    bias_summary s;

    bias_cell_init(&c);
    add_all(&c, x, 4);
    ck_assert_uint_eq(c.n, 4);
    ck_assert_double_eq(c.mean, 2.5);
    ck_assert_double_eq(c.m2, 5.0);
    bias_summarize(&c, &s);
    ck_assert(s.valid);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_double_eq(s.mean, 2.5);
    ck_assert_double_eq(s.var, 5.0 / 3.0);
    ck_assert_double_eq(s.sd, sqrt(5.0 / 3.0));
    ck_assert_double_eq(s.se, sqrt(5.0 / 3.0 / 4.0));
    ck_assert_double_eq(s.t, 2.5 / sqrt(5.0 / 12.0));
    ck_assert_double_eq_tol(s.t, 3.872983346207417, 1e-15);
    ck_assert_double_eq(s.ci_lo, 2.5 - 1.959963984540054 * s.se);
    ck_assert_double_eq(s.ci_hi, 2.5 + 1.959963984540054 * s.se);
    ck_assert_double_eq(s.min, 1);
    ck_assert_double_eq(s.max, 4);
    ck_assert_uint_eq(c.pos, 4);
    ck_assert_uint_eq(c.neg + c.zero, 0);
}
END_TEST

START_TEST(test_hand_signs)
{
    /* -0.5, 0, 0.25, -0.25, -0: mean -0.1, m2 = 0.16 + 0.01 + 0.1225 +
       0.0225 + 0.01 = 0.325, var 0.08125 */
    static const double x[5] = {-0.5, 0, 0.25, -0.25, -0.0};
    bias_cell c;
    bias_summary s;

    bias_cell_init(&c);
    add_all(&c, x, 5);
    bias_summarize(&c, &s);
    ck_assert_uint_eq(c.neg, 2);
    ck_assert_uint_eq(c.zero, 2);
    ck_assert_uint_eq(c.pos, 1);
    ck_assert_double_eq_tol(s.mean, -0.1, 4 * U);
    ck_assert_double_eq_tol(c.m2, 0.325, 16 * U);
    ck_assert_double_eq_tol(s.var, 0.08125, 16 * U);
    ck_assert_double_eq_tol(s.t, -0.1 / sqrt(0.08125 / 5), 1e-14);
    ck_assert(s.ci_lo < s.mean && s.mean < s.ci_hi);
    ck_assert_double_eq(s.min, -0.5);
    ck_assert_double_eq(s.max, 0.25);
}
END_TEST

/* n = 0 and n = 1: the moments that need n >= 2 are NaN and VALID is
   false; zero spread gives t = 0 or +-Inf as documented; non-finite
   errors are only counted. */
START_TEST(test_edge_cases)
{
    bias_cell c;
    bias_summary s;

    bias_cell_init(&c);
    bias_summarize(&c, &s);
    ck_assert(!s.valid && s.n == 0);
    ck_assert(isnan(s.mean) && isnan(s.min) && isnan(s.max));
    ck_assert(isnan(s.var) && isnan(s.sd) && isnan(s.se) && isnan(s.t));
    ck_assert(isnan(s.ci_lo) && isnan(s.ci_hi));

    bias_cell_add(&c, -0.75);
    bias_summarize(&c, &s);
    ck_assert(!s.valid && s.n == 1);
    ck_assert(s.mean == -0.75 && s.min == -0.75 && s.max == -0.75);
    ck_assert(isnan(s.var) && isnan(s.se) && isnan(s.t) && isnan(s.ci_lo));

    bias_cell_add(&c, NAN);
    bias_cell_add(&c, INFINITY);
    bias_cell_add(&c, -INFINITY);
    ck_assert_uint_eq(c.nonfinite, 3);
    ck_assert_uint_eq(c.n, 1);
    ck_assert(c.mean == -0.75);

    bias_cell_add(&c, -0.75);
    bias_summarize(&c, &s);
    ck_assert(s.valid && s.var == 0 && s.se == 0);
    ck_assert(s.t == -INFINITY);
    ck_assert(s.ci_lo == -0.75 && s.ci_hi == -0.75);

    bias_cell_init(&c);
    bias_cell_add(&c, 0);
    bias_cell_add(&c, 0);
    bias_summarize(&c, &s);
    ck_assert(s.valid && s.t == 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Merges.
 *--------------------------------------------------------------------------*/
START_TEST(test_merge_hand)
{
    static const double a[2] = {1, 2}, b[2] = {3, 4};
    bias_cell ca, cb, e, one;

    /* {1, 2} + {3, 4}: d = 2, mean = 1.5 + 2 (2/4) = 2.5, m2 = 0.5 + 0.5 +
       4 (2/4) 2 = 5, all exact */
    bias_cell_init(&ca);
    bias_cell_init(&cb);
    bias_cell_init(&one);
    add_all(&ca, a, 2);
    add_all(&cb, b, 2);
    add_all(&one, a, 2);
    add_all(&one, b, 2);
    bias_cell_merge(&ca, &cb);
    assert_counts_equal(&ca, &one);
    ck_assert_double_eq(ca.mean, 2.5);
    ck_assert_double_eq(ca.m2, 5.0);

    /* empty on either side */
    bias_cell_init(&e);
    bias_cell_merge(&ca, &e);
    ck_assert(ca.n == 4 && ca.mean == 2.5 && ca.m2 == 5.0);
    bias_cell_merge(&e, &ca);
    assert_counts_equal(&e, &one);
    ck_assert(e.mean == 2.5 && e.m2 == 5.0);

    /* a cell merged with itself: twice the stream, m2 doubles (d = 0) */
    bias_cell_merge(&e, &e);
    ck_assert(e.n == 8 && e.pos == 8 && e.mean == 2.5 && e.m2 == 10.0);
}
END_TEST

/* The bound of doc/exact.md for a merge tree over N values with
   maximum |x| MX: one merge of two one-pass cells gives 4(n + 5) u MX and
   32 (n + 4)^2 u MX^2; each further level adds 7 u MX to the mean bound
   and n MX (2 e) + 8 n u MX^2 to the m2 bound, e the mean bound of the
   cells below. */
static void
merge_bounds(size_t n, double mx, int levels, double *tm, double *t2)
{
    double dn = (double)n;
    double e1 = (2 * dn + 6) * U * mx; /* one pass */

    *tm = 4 * (dn + 5) * U * mx;
    *t2 = 32 * (dn + 4) * (dn + 4) * U * mx * mx;
    for (int k = 1; k < levels; k++) {
        double e = e1 + 7 * k * U * mx;
        *tm += 7 * U * mx;
        *t2 += dn * mx * 2 * e + 8 * dn * U * mx * mx;
    }
}

static double
rand_unit(tst_rng *r)
{
    return (double)(tst_rand64(r) >> 11) * 0x1p-53;
}

START_TEST(test_merge_random)
{
    unsigned long reps = 20 * tst_multiplier();
    tst_rng rng;
    size_t n = 1000;
    double *x = malloc(n * sizeof *x);
    int n_bad = 0;

    ck_assert_ptr_nonnull(x);
    tst_rng_init(&rng, 71);
    for (unsigned long rep = 0; rep < reps; rep++) {
        bias_cell one, a, b, c, ab_c, a_bc, bc, ab;
        size_t i1, i2;
        double mx = 0, tm, t2, off = (rep & 1) ? 1e3 : 0;

        /* errors of mixed signs and magnitudes, some with an offset (a
           bias much larger than the spread) */
        for (size_t i = 0; i < n; i++) {
            double u = rand_unit(&rng) - 0.5;
            x[i] = off + ldexp(u, (int)tst_rand_below(&rng, 20) - 10);
            if (tst_rand_below(&rng, 10) == 0)
                x[i] = 0;
            mx = fmax(mx, fabs(x[i]));
        }
        i1 = (size_t)tst_rand_below(&rng, n + 1);
        i2 = i1 + (size_t)tst_rand_below(&rng, n - i1 + 1);
        bias_cell_init(&one);
        add_all(&one, x, n);
        bias_cell_init(&a);
        bias_cell_init(&b);
        bias_cell_init(&c);
        add_all(&a, x, i1);
        add_all(&b, x + i1, i2 - i1);
        add_all(&c, x + i2, n - i2);
        /* (a + b) + c and a + (b + c) */
        ab = a;
        bias_cell_merge(&ab, &b);
        ab_c = ab;
        bias_cell_merge(&ab_c, &c);
        bc = b;
        bias_cell_merge(&bc, &c);
        a_bc = a;
        bias_cell_merge(&a_bc, &bc);
        assert_counts_equal(&ab_c, &one);
        assert_counts_equal(&a_bc, &one);
        merge_bounds(n, mx, 2, &tm, &t2);
        if (fabs(ab_c.mean - one.mean) > tm || fabs(a_bc.mean - one.mean) > tm
            || fabs(ab_c.m2 - one.m2) > t2 || fabs(a_bc.m2 - one.m2) > t2) {
            if (n_bad++ < 5)
                printf("rep %lu split %zu %zu: mean %a %a one pass %a; m2 "
                       "%a %a one pass %a\n",
                       rep, i1, i2, ab_c.mean, a_bc.mean, one.mean, ab_c.m2,
                       a_bc.m2, one.m2);
        }
        /* one merge against one pass */
        merge_bounds(i2, mx, 1, &tm, &t2);
        {
            bias_cell o2;
            bias_cell_init(&o2);
            add_all(&o2, x, i2);
            assert_counts_equal(&ab, &o2);
            if (fabs(ab.mean - o2.mean) > tm || fabs(ab.m2 - o2.m2) > t2)
                n_bad++;
        }
    }
    free(x);
    ck_assert_msg(n_bad == 0, "%d merges outside the documented bound", n_bad);
}
END_TEST

/*----------------------------------------------------------------------------
 * Events.
 *--------------------------------------------------------------------------*/

/* An event with direction DIR, tie TIE, exact value (-1)^neg * lo * 2^exp,
   error ERR_LO * 2^ERR_EXP (sign ERR_NEG) in ulps of 2^ULP_EXP. */
static sf_event
crafted(int op, int dir, bool tie, bool neg, uint64_t lo, int32_t exp,
        bool err_neg, uint64_t err_lo, int32_t err_exp, int32_t ulp_exp)
{
    sf_event ev;

    memset(&ev, 0, sizeof ev);
    ev.op = op;
    ev.dir = dir;
    ev.tie = tie;
    ev.exact.sign = neg;
    ev.exact.lo = lo;
    ev.exact.exp = exp;
    ev.error.sign = err_neg;
    ev.error.lo = err_lo;
    ev.error.exp = err_exp;
    ev.ulp_exp = ulp_exp;
    return ev;
}

START_TEST(test_events_crafted)
{
    /* +0.625 rounded away as a tie (+1/2 ulp), +0.625 toward zero (-1/4),
       exact, -0.625 away (-3/8), -0.625 toward zero as a tie (+1/2) */
    sf_event ev[5] = {
        crafted(SF_OP_ADD, 1, true, false, 5, -3, false, 1, -6, -5),
        crafted(SF_OP_ADD, -1, false, false, 5, -3, true, 1, -7, -5),
        crafted(SF_OP_MUL, 0, false, false, 5, -3, false, 0, 0, -5),
        crafted(SF_OP_ACCUM + 3, 1, false, true, 5, -3, true, 3, -8, -5),
        crafted(200, -1, true, true, 5, -3, false, 1, -6, -5),
    };
    bias_acc *a = malloc(sizeof *a);
    bias_summary s;
    const bias_cell *all;

    ck_assert_ptr_nonnull(a);
    bias_init(a);
    for (int i = 0; i < 5; i++)
        bias_add_event(a, &ev[i]);
    all = &a->all;
    ck_assert_uint_eq(all->events, 5);
    ck_assert_uint_eq(all->exact, 1);
    ck_assert_uint_eq(all->away, 2);
    ck_assert_uint_eq(all->toward, 2);
    /* signed: up = ev 0 (positive, away) and ev 4 (negative, toward) */
    ck_assert_uint_eq(all->up, 2);
    ck_assert_uint_eq(all->down, 2);
    ck_assert_uint_eq(all->ties, 2);
    ck_assert_uint_eq(all->nonties, 2);
    ck_assert_uint_eq(all->ties_away, 1);
    /* the errors in ulps: 0.5, -0.25, 0, -0.375, 0.5 */
    ck_assert_uint_eq(all->n, 5);
    ck_assert_uint_eq(all->pos, 2);
    ck_assert_uint_eq(all->neg, 2);
    ck_assert_uint_eq(all->zero, 1);
    bias_summarize(all, &s);
    ck_assert_double_eq_tol(s.mean, 0.375 / 5, 2 * U);
    ck_assert_double_eq(s.min, -0.375);
    ck_assert_double_eq(s.max, 0.5);
    /* keys: all in the binade of 0.625 (2^-1); by operation */
    ck_assert_int_eq(bias_binade_key(0.625), -1 - BIAS_BINADE_MIN);
    ck_assert_uint_eq(a->by_binade[bias_binade_key(0.625)].events, 5);
    ck_assert_uint_eq(a->by_op[SF_OP_ADD].events, 2);
    ck_assert_uint_eq(a->by_op[SF_OP_ADD].ties_away, 1);
    ck_assert_uint_eq(a->by_op[SF_OP_MUL].exact, 1);
    ck_assert_uint_eq(a->by_op[SF_OP_ACCUM + 3].down, 1);
    ck_assert_uint_eq(a->by_op[BIAS_OP_OTHER].up, 1);

    /* a wide exact value (hi word) and a zero one */
    bias_init(a);
    ev[0].exact.hi = 1;
    ev[0].exact.lo = 0;
    ev[0].exact.exp = -100; /* 2^64 2^-100 = 2^-36 */
    bias_add_event(a, &ev[0]);
    ck_assert_uint_eq(a->by_binade[bias_binade_key(0x1p-36)].events, 1);
    ev[2].exact.lo = 0;
    bias_add_event(a, &ev[2]);
    ck_assert_uint_eq(a->by_binade[BIAS_BIN_ZERO].exact, 1);
    ev[2].op = -1;
    bias_add_event(a, &ev[2]);
    ck_assert_uint_eq(a->by_op[BIAS_OP_OTHER].events, 1);
    free(a);
}
END_TEST

/* Real events: the paper's T1 rounding (0xC0968717 -> 0xC097, away from
   zero, below the exact value, not a tie) and its tie counterfactual T2
   (0xC0968000 -> 0xC096, toward zero, above, a tie). */
static void
keep_event(void *user, const sf_event *ev)
{
    bias_add_event(user, ev);
}

START_TEST(test_events_real)
{
    bias_acc *a = malloc(sizeof *a);
    sf_event_sink sink;
    sf_env env = SF_ENV_IEEE;
    sf_f32 t1 = {0xC0968717u}, t2 = {0xC0968000u}, t3 = {0x40400000u};
    bias_summary s;

    ck_assert_ptr_nonnull(a);
    bias_init(a);
    sink.fn = keep_event;
    sink.user = a;
    env.events = &sink;
    ck_assert_uint_eq(sf_f32_to_bf16(t1, SF_RNE, &env).bits, 0xC097);
    ck_assert_uint_eq(sf_f32_to_bf16(t2, SF_RNE, &env).bits, 0xC096);
    (void)sf_f32_to_bf16(t3, SF_RNE, &env); /* 3.0: exact */
    ck_assert_uint_eq(a->all.events, 3);
    ck_assert_uint_eq(a->all.exact, 1);
    ck_assert_uint_eq(a->all.away, 1);
    ck_assert_uint_eq(a->all.toward, 1);
    ck_assert_uint_eq(a->all.up, 1);
    ck_assert_uint_eq(a->all.down, 1);
    ck_assert_uint_eq(a->all.ties, 1);
    ck_assert_uint_eq(a->all.nonties, 1);
    ck_assert_uint_eq(a->all.ties_away, 0);
    /* errors: -0.4723052978515625 and +0.5 ulp, and 0 */
    bias_summarize(&a->all, &s);
    ck_assert_double_eq(s.min, -0.4723052978515625);
    ck_assert_double_eq(s.max, 0.5);
    ck_assert_uint_eq(a->by_binade[bias_binade_key(-4.7)].events, 2);
    ck_assert_uint_eq(a->by_binade[bias_binade_key(3.0)].exact, 1);
    ck_assert_uint_eq(a->by_op[SF_OP_CONVERT].events, 3);
    free(a);
}
END_TEST

START_TEST(test_keys_and_acc)
{
    bias_acc *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    bias_acc *one = malloc(sizeof *one);
    tst_rng rng;
    uint64_t total = 0;

    ck_assert(a != NULL && b != NULL && one != NULL);
    ck_assert_int_eq(bias_binade_key(1.0), -BIAS_BINADE_MIN);
    ck_assert_int_eq(bias_binade_key(1.999), -BIAS_BINADE_MIN);
    ck_assert_int_eq(bias_binade_key(-3.0), 1 - BIAS_BINADE_MIN);
    ck_assert_int_eq(bias_binade_key(0x1p-160), 0);
    ck_assert_int_eq(bias_binade_key(0x1.fffp-161), BIAS_BIN_BELOW);
    ck_assert_int_eq(bias_binade_key(0x1p-1074), BIAS_BIN_BELOW);
    ck_assert_int_eq(bias_binade_key(0x1.fp140),
                     BIAS_BINADE_MAX - BIAS_BINADE_MIN);
    ck_assert_int_eq(bias_binade_key(0x1p141), BIAS_BIN_ABOVE);
    ck_assert_int_eq(bias_binade_key(0.0), BIAS_BIN_ZERO);
    ck_assert_int_eq(bias_binade_key(-0.0), BIAS_BIN_ZERO);
    ck_assert_int_eq(bias_binade_key(NAN), BIAS_BIN_NONE);
    ck_assert_int_eq(bias_binade_key(-INFINITY), BIAS_BIN_NONE);
    ck_assert_int_eq(bias_op_key(5), 5);
    ck_assert_int_eq(bias_op_key(BIAS_OP_OTHER), BIAS_OP_OTHER);
    ck_assert_int_eq(bias_op_key(1000), BIAS_OP_OTHER);

    /* routing and the merge of accumulators */
    bias_init(a);
    bias_init(b);
    bias_init(one);
    tst_rng_init(&rng, 72);
    for (int i = 0; i < 2000; i++) {
        double ref =
            ldexp(rand_unit(&rng) + 0.5, (int)tst_rand_below(&rng, 400) - 200);
        double err = rand_unit(&rng) - 0.5;
        unsigned op = (unsigned)tst_rand_below(&rng, 80);
        if (i % 7 == 0)
            ref = 0;
        bias_add(i % 3 == 0 ? a : b, err, ref, op);
        bias_add(one, err, ref, op);
    }
    bias_merge(a, b);
    assert_counts_equal(&a->all, &one->all);
    for (int k = 0; k < BIAS_N_BINS; k++) {
        assert_counts_equal(&a->by_binade[k], &one->by_binade[k]);
        total += a->by_binade[k].n;
    }
    ck_assert_uint_eq(total, 2000);
    total = 0;
    for (int k = 0; k < BIAS_N_OPS; k++) {
        assert_counts_equal(&a->by_op[k], &one->by_op[k]);
        total += a->by_op[k].n;
    }
    ck_assert_uint_eq(total, 2000);
    ck_assert_uint_eq(
        a->by_binade[BIAS_BIN_BELOW].n + a->by_binade[BIAS_BIN_ZERO].n,
        one->by_binade[BIAS_BIN_BELOW].n + one->by_binade[BIAS_BIN_ZERO].n);
    ck_assert(a->by_binade[BIAS_BIN_ZERO].n > 0);
    ck_assert(a->by_binade[BIAS_BIN_BELOW].n > 0);
    ck_assert(a->by_op[BIAS_OP_OTHER].n > 0);
    ck_assert_double_eq_tol(a->all.mean, one->all.mean, 1e-15);
    bias_add(a, 0.5, NAN, 3);
    ck_assert_uint_eq(a->by_binade[BIAS_BIN_NONE].n, 1);
    free(a);
    free(b);
    free(one);
}
END_TEST

static Suite *
bias_suite(void)
{
    Suite *s = suite_create("bias");
    TCase *tc;

    tc = tst_add_tcase(s, "moments", 30);
    tcase_add_test(tc, test_hand_moments);
    tcase_add_test(tc, test_hand_signs);
    tcase_add_test(tc, test_edge_cases);
    tc = tst_add_tcase(s, "merge", 60);
    tcase_add_test(tc, test_merge_hand);
    tcase_add_test(tc, test_merge_random);
    tc = tst_add_tcase(s, "events", 30);
    tcase_add_test(tc, test_events_crafted);
    tcase_add_test(tc, test_events_real);
    tcase_add_test(tc, test_keys_and_acc);
    return s;
}

int
main(void)
{
    return tst_run_suite(bias_suite());
}
