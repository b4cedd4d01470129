/* test_rows.c -- row classification: crafted rows with hand-computed
   counts, sums and classes (ties, near ties, sinks, masked entries,
   all-masked and empty rows, NaN and other invalid entries, the repo's
   fill value), the top-k count against a brute-force search, the tensor
   form and the summaries */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rows.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

static uint32_t
f2b(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The expected fields of a row (doubles compared exactly, NaN equal to
   NaN). */
typedef struct expect
{
    size_t n_invalid, n_masked;
    double max;
    size_t n_max, n_near;
    double gap;
    size_t n_one;
    double l, p_max;
    size_t sink_index, k_mass;
    double k_frac;
    rows_class cls;
} expect;

static bool
same(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void
print_row(const char *name, size_t n, const uint32_t *v)
{
    printf("  %s:", name);
    if (v == NULL)
        printf(" (none)");
    else
        for (size_t j = 0; j < n; j++)
            printf(" %08X", (unsigned)v[j]);
    printf("\n");
}

/* Compares INFO with E; on a difference prints the row as hex and both
   results, and returns false. */
static bool
matches(const char *what, size_t n, const uint32_t *s, const uint32_t *p,
        const rows_info *r, const expect *e)
{
    bool ok = r->n == n && r->n_invalid == e->n_invalid
              && r->n_masked == e->n_masked && same(r->max, e->max)
              && r->n_max == e->n_max && r->n_near == e->n_near
              && same(r->gap, e->gap) && r->n_one == e->n_one
              && same(r->l, e->l) && same(r->p_max, e->p_max)
              && r->sink_index == e->sink_index && r->k_mass == e->k_mass
              && same(r->k_frac, e->k_frac) && r->cls == e->cls;

    if (!ok) {
        printf("rows %s: mismatch\n", what);
        print_row("S", n, s);
        print_row("P", n, p);
        printf("  got      inv %zu msk %zu max %a nmax %zu near %zu gap %a "
               "one %zu l %a pmax %a sink %zu k %zu kf %a %s\n",
               r->n_invalid, r->n_masked, r->max, r->n_max, r->n_near, r->gap,
               r->n_one, r->l, r->p_max, r->sink_index, r->k_mass, r->k_frac,
               rows_class_name(r->cls));
        printf("  expected inv %zu msk %zu max %a nmax %zu near %zu gap %a "
               "one %zu l %a pmax %a sink %zu k %zu kf %a %s\n",
               e->n_invalid, e->n_masked, e->max, e->n_max, e->n_near, e->gap,
               e->n_one, e->l, e->p_max, e->sink_index, e->k_mass, e->k_frac,
               rows_class_name(e->cls));
    }
    return ok;
}

static bool
info_equal(const rows_info *a, const rows_info *b)
{
    return a->n == b->n && a->n_invalid == b->n_invalid
           && a->n_masked == b->n_masked && same(a->max, b->max)
           && a->n_max == b->n_max && a->n_near == b->n_near
           && same(a->gap, b->gap) && a->n_one == b->n_one && same(a->l, b->l)
           && same(a->p_max, b->p_max) && a->sink_index == b->sink_index
           && a->k_mass == b->k_mass && same(a->k_frac, b->k_frac)
           && a->cls == b->cls;
}

/* Classifies the row from FP32 bits and, converted, from doubles; both
   must match E. */
static void
check_row(const char *what, size_t n, const float *sf, const float *pf,
          const rows_options *opt, const expect *e)
{
    uint32_t s[16], p[16];
    double sd[16], pd[16], work[16];
    rows_info r;
    bool ok;

    ck_assert(n <= 16);
    for (size_t j = 0; j < n; j++) {
        if (sf) {
            s[j] = f2b(sf[j]);
            sd[j] = sf[j];
        }
        if (pf) {
            p[j] = f2b(pf[j]);
            pd[j] = pf[j];
        }
    }
    ck_assert_int_eq(
        rows_classify(n, sf ? s : NULL, pf ? p : NULL, opt, work, &r),
        ROWS_OK);
    ok = matches(what, n, sf ? s : NULL, pf ? p : NULL, &r, e);
    ck_assert_int_eq(
        rows_classify_d(n, sf ? sd : NULL, pf ? pd : NULL, opt, work, &r),
        ROWS_OK);
    ok = matches(what, n, sf ? s : NULL, pf ? p : NULL, &r, e) && ok;
    ck_assert_msg(ok, "row %s", what);
}

/*----------------------------------------------------------------------------
 * Crafted rows.
 *--------------------------------------------------------------------------*/
START_TEST(test_single_and_sink)
{
    /* P~ = 1, 1/2, 1/8, 3/8: l = 2, p_max = 1/2 (a sink at the default
       threshold, exactly); sorted 1, 1/2, 3/8, 1/8, partial sums 1, 3/2,
       15/8 >= 0.9 * 2: k = 3 */
    static const float s[4] = {1.0f, 0.5f, -2.0f, 0.25f};
    static const float p[4] = {1.0f, 0.5f, 0.125f, 0.375f};
    expect e = {0, 0, 1.0, 1, 1, 0.5, 1, 2.0, 0.5, 0, 3, 0.75, ROWS_SINK};
    rows_options o = rows_options_default();

    check_row("single/sink", 4, s, p, NULL, &e);
    /* a higher sink threshold: the same row is a plain single max */
    o.sink = 0.75;
    e.cls = ROWS_SINGLE;
    check_row("single", 4, s, p, &o, &e);
    /* mass 1/2: partial sums 1 >= 1 at once */
    o.mass = 0.5;
    e.k_mass = 1;
    e.k_frac = 0.25;
    check_row("single mass 1/2", 4, s, p, &o, &e);
}
END_TEST

START_TEST(test_repeated)
{
    /* two maxima, one masked key: visible 3, P~ 1, 1, 1/4, l = 9/4;
       target 0.9 * 9/4 = 2.025: partial sums 1, 2, 9/4: k = 3 */
    static const float s[4] = {2.0f, 2.0f, 1.0f, -INFINITY};
    static const float p[4] = {1.0f, 1.0f, 0.25f, 0.0f};
    expect e = {0,    1,          2.0, 2, 2,   1.0,          2,
                2.25, 1.0 / 2.25, 0,   3, 1.0, ROWS_REPEATED};

    check_row("repeated", 4, s, p, NULL, &e);

    /* the maximum three times, no P~: P~ derived, 1 at each maximum; the
       other key has exp(-30) (below 2^-43), so k needs all three maxima */
    {
        static const float s3[5] = {-1.5f, -1.5f, -31.5f, -1.5f, -INFINITY};
        rows_info r;
        uint32_t b[5];
        double work[5];

        for (int j = 0; j < 5; j++)
            b[j] = f2b(s3[j]);
        ck_assert_int_eq(rows_classify(5, b, NULL, NULL, work, &r), ROWS_OK);
        ck_assert_uint_eq(r.n_masked, 1);
        ck_assert_uint_eq(r.n_max, 3);
        ck_assert_uint_eq(r.n_one, 3);
        ck_assert_uint_eq(r.n_near, 3);
        ck_assert(r.max == -1.5 && r.gap == 30.0);
        ck_assert(r.l > 3.0 && r.l < 3.0 + 0x1p-43);
        ck_assert(r.p_max > 1.0 / 3.0 - 0x1p-43 && r.p_max <= 1.0 / 3.0);
        ck_assert_uint_eq(r.sink_index, 0);
        ck_assert_uint_eq(r.k_mass, 3);
        ck_assert(r.k_frac == 0.75);
        ck_assert_int_eq(r.cls, ROWS_REPEATED);
    }

    /* with the fix: S still repeats its max, but P~ < 1 (exp(-3) rounded
       to BF16: 0x3D4C = 51/1024) -- repeated, no P~ == 1 */
    {
        static const float s2[3] = {3.0f, 3.0f, 0.0f};
        sf_env env = SF_ENV_IEEE;
        sf_bf16 qb = sf_bf16_from_double(exp(-3.0), SF_RNE, &env);
        float q = (float)sf_bf16_to_double(qb);
        float p2[3];
        expect e2 = {0, 0, 3.0, 2, 2, 3.0, 0, 0, 0, 0, 3, 1.0, ROWS_REPEATED};

        ck_assert_uint_eq(qb.bits, 0x3D4C);
        ck_assert(q == 0.0498046875f);
        p2[0] = q;
        p2[1] = q;
        p2[2] = 0.0009765625f; /* 2^-10 */
        /* l = 2q + 2^-10 exactly; the top two reach 0.9 l? 2q = 0.099609375
           and 0.9 l = 0.0905273..., so k = 2 */
        e2.l = 2.0 * 0.0498046875 + 0.0009765625;
        e2.p_max = 0.0498046875 / e2.l;
        e2.k_mass = 2;
        e2.k_frac = 2.0 / 3.0;
        check_row("repeated, fixed", 3, s2, p2, NULL, &e2);
    }

    /* P~ only: the key values are P~ themselves */
    {
        static const float p3[3] = {1.0f, 0.5f, 1.0f};
        /* l = 5/2; 0.9 l = 9/4 needs all three */
        expect e3 = {0,   0,   1.0, 2, 2,   0.5,          2,
                     2.5, 0.4, 0,   3, 1.0, ROWS_REPEATED};
        check_row("repeated, P only", 3, NULL, p3, NULL, &e3);
    }
}
END_TEST

START_TEST(test_near)
{
    /* 0.4995f = 0x3EFFBE77 is above 0.5 - 1e-3 = 0.499: a near tie with
       the default tolerance, not with tol = 0 */
    static const float s[3] = {0.25f, 0.5f, 0.4995f};
    static const float p[3] = {0.5f, 1.0f, 0.5f}; /* as a BF16 run gives */
    /* l = 2; sorted 1, 1/2, 1/2 reach 0.9 l = 1.8 at k = 3 */
    expect e = {0,   0, 0.5, 1,   2,        0.5 - (double)0.4995f, 1, 2.0,
                0.5, 1, 3,   1.0, ROWS_NEAR};
    rows_options o = rows_options_default();

    check_row("near", 3, s, p, NULL, &e);
    o.tol = 0;
    e.n_near = 1;
    e.cls = ROWS_SINK; /* p_max = 1/2 */
    check_row("near, tol 0", 3, s, p, &o, &e);
    /* exactly at the threshold counts: max - tol = 0.375 exactly */
    o.tol = 0.125;
    e.n_near = 2;
    e.cls = ROWS_NEAR;
    {
        static const float s2[3] = {0.25f, 0.5f, 0.375f};
        e.gap = 0.125;
        check_row("near, at tol", 3, s2, p, &o, &e);
    }
}
END_TEST

START_TEST(test_masked_and_empty)
{
    static const float s[3] = {-INFINITY, -INFINITY, -INFINITY};
    static const float p[3] = {0.0f, 0.0f, 0.0f};
    expect e = {0,   3,   -INFINITY, 0, 0,   NAN,        0,
                0.0, NAN, 0,         0, NAN, ROWS_MASKED};
    rows_info r;

    check_row("all masked", 3, s, p, NULL, &e);
    check_row("all masked, S only", 3, s, NULL, NULL, &e);
    e.n_masked = 0;
    check_row("empty", 0, s, p, NULL, &e);
    ck_assert_int_eq(rows_classify(0, NULL, NULL, NULL, NULL, &r), ROWS_OK);
    ck_assert_int_eq(r.cls, ROWS_MASKED);

    /* P~ given but all 0 while the scores are visible: classified by S,
       no probabilities */
    {
        static const float s2[2] = {1.0f, 1.0f};
        expect e2 = {0,   0,   1.0, 2, 2,   INFINITY,     0,
                     0.0, NAN, 0,   0, NAN, ROWS_REPEATED};
        check_row("l = 0", 2, s2, p, NULL, &e2);
    }

    /* the repo's fill value -3.39e38 (BF16 0xFF7F widened): a fully masked
       tile looks like a repeated maximum (paper-notes T8) unless
       mask_below says it is masked */
    {
        float fill = (float)sf_to_double(&sf_format_bf16, 0xFF7F);
        float s3[4], p3[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        rows_options o = rows_options_default();
        expect e3 = {0,   0,    0, 4, 4,   INFINITY,     4,
                     4.0, 0.25, 0, 4, 1.0, ROWS_REPEATED};
        expect e4 = {0,   4,   -INFINITY, 0, 0,   NAN,        0,
                     0.0, NAN, 0,         0, NAN, ROWS_MASKED};

        ck_assert(fill < -3.389e38f && fill > -3.39e38f);
        for (int j = 0; j < 4; j++)
            s3[j] = fill;
        e3.max = fill;
        check_row("repo fill", 4, s3, p3, NULL, &e3);
        o.mask_below = -3.3e38;
        check_row("repo fill, masked", 4, s3, p3, &o, &e4);
    }
}
END_TEST

START_TEST(test_invalid)
{
    static const float s_nan[3] = {1.0f, NAN, 0.5f};
    static const float s_inf[3] = {1.0f, INFINITY, 0.5f};
    static const float s_ok[3] = {1.0f, 0.75f, 0.5f};
    static const float p_nan[3] = {1.0f, 0.5f, NAN};
    static const float p_neg[3] = {1.0f, -0.5f, 0.25f};
    static const float p_inf[3] = {1.0f, 0.5f, INFINITY};
    static const float p_minf[3] = {-INFINITY, 0.5f, 1.0f};
    static const float p_ok[3] = {1.0f, 0.5f, 0.25f};
    expect e = {1, 0, NAN, 0, 0, NAN, 0, NAN, NAN, 0, 0, NAN, ROWS_INVALID};

    check_row("NaN score", 3, s_nan, p_ok, NULL, &e);
    check_row("NaN score, S only", 3, s_nan, NULL, NULL, &e);
    check_row("+Inf score", 3, s_inf, NULL, NULL, &e);
    check_row("NaN P", 3, s_ok, p_nan, NULL, &e);
    check_row("NaN P, P only", 3, NULL, p_nan, NULL, &e);
    check_row("negative P", 3, s_ok, p_neg, NULL, &e);
    check_row("+Inf P", 3, NULL, p_inf, NULL, &e);
    check_row("-Inf P", 3, NULL, p_minf, NULL, &e);
    /* a NaN on both sides of one entry is one invalid entry; a masked
       entry next to a NaN is still counted as masked */
    {
        static const float s2[3] = {NAN, -INFINITY, 1.0f};
        static const float p2[3] = {NAN, 0.0f, 1.0f};
        e.n_masked = 1;
        check_row("NaN and masked", 3, s2, p2, NULL, &e);
    }
}
END_TEST

START_TEST(test_options)
{
    rows_options o = rows_options_default();
    uint32_t s[2] = {0x3F800000u, 0x3F000000u};
    rows_info r;

    ck_assert(rows_options_check(&o) == NULL);
    ck_assert(o.tol == 1e-3 && o.sink == 0.5 && o.mass == 0.9);
    ck_assert(o.mask_below == -INFINITY);
    o.tol = -1;
    ck_assert(rows_options_check(&o) != NULL);
    ck_assert_int_eq(rows_classify(2, s, NULL, &o, NULL, &r), ROWS_EINVAL);
    o = rows_options_default();
    o.tol = INFINITY;
    ck_assert(rows_options_check(&o) != NULL);
    o = rows_options_default();
    o.sink = 0;
    ck_assert(rows_options_check(&o) != NULL);
    o.sink = 1.5;
    ck_assert(rows_options_check(&o) != NULL);
    o = rows_options_default();
    o.mass = NAN;
    ck_assert(rows_options_check(&o) != NULL);
    o.mass = 1;
    ck_assert(rows_options_check(&o) == NULL);
    o.mask_below = NAN;
    ck_assert(rows_options_check(&o) != NULL);
    ck_assert(rows_options_check(NULL) != NULL);
    ck_assert_int_eq(rows_classify(2, NULL, NULL, NULL, NULL, &r),
                     ROWS_EINVAL);
    ck_assert_int_eq(rows_classify(2, s, NULL, NULL, NULL, NULL), ROWS_EINVAL);
    /* no work array: no top-k count; P~ = 1, exp(-1/2) give p_max =
       1 / (1 + 0.607) > 1/2 */
    ck_assert_int_eq(rows_classify(2, s, NULL, NULL, NULL, &r), ROWS_OK);
    ck_assert_uint_eq(r.k_mass, 0);
    ck_assert(isnan(r.k_frac));
    ck_assert(r.p_max > 0.62 && r.p_max < 0.623);
    ck_assert_int_eq(r.cls, ROWS_SINK);
    for (int c = 0; c < ROWS_N_CLASSES; c++)
        ck_assert(rows_class_name((rows_class)c) != NULL);
    ck_assert(rows_class_name((rows_class)ROWS_N_CLASSES) == NULL);
    ck_assert_str_eq(rows_class_name(ROWS_REPEATED), "repeated");
}
END_TEST

/*----------------------------------------------------------------------------
 * The top-k count against a brute-force search: P~ = integers / 1024, so
 * every sum is exact, and mass 3/4, so the target is exact too; k is the
 * smallest count whose best subset reaches 3/4 of the total, found by
 * repeatedly taking the largest remaining entry.
 *--------------------------------------------------------------------------*/
START_TEST(test_top_k_brute)
{
    tst_rng rng;
    unsigned long cases = 300 * tst_multiplier();
    unsigned long bad = 0;
    rows_options o = rows_options_default();

    o.mass = 0.75;
    tst_rng_init(&rng, 71);
    for (unsigned long c = 0; c < cases; c++) {
        size_t n = 1 + (size_t)tst_rand_below(&rng, 40);
        uint32_t p[40];
        int64_t iv[40];
        bool used[40] = {false};
        int64_t total = 0, part = 0;
        size_t k = 0, imax = 0;
        double work[40];
        rows_info r;

        for (size_t j = 0; j < n; j++) {
            /* many ties and zeros: values 0 .. 1024 in coarse steps */
            iv[j] = (int64_t)tst_rand_below(&rng, 9) * 128;
            p[j] = f2b((float)iv[j] / 1024.0f);
            total += iv[j];
            if (iv[j] > iv[imax])
                imax = j;
        }
        while (total > 0 && 4 * part < 3 * total) {
            size_t best = n;
            for (size_t j = 0; j < n; j++)
                if (!used[j] && (best == n || iv[j] > iv[best]))
                    best = j;
            used[best] = true;
            part += iv[best];
            k++;
        }
        ck_assert_int_eq(rows_classify(n, NULL, p, &o, work, &r), ROWS_OK);
        if (r.k_mass != k || (total > 0 && r.sink_index != imax)
            || r.l != (double)total / 1024.0) {
            if (bad++ < TST_MAX_PRINT) {
                printf("top-k: expected k %zu sink %zu, got k %zu sink %zu\n",
                       k, imax, r.k_mass, r.sink_index);
                print_row("P", n, p);
            }
        }
    }
    ck_assert_msg(bad == 0, "%lu of %lu rows wrong", bad, cases);
}
END_TEST

/*----------------------------------------------------------------------------
 * The tensor form and the summaries.
 *--------------------------------------------------------------------------*/
START_TEST(test_tensor_and_summary)
{
    /* 5 rows of 4: repeated, single (sink), masked, invalid, near */
    static const float s[20] = {
        2.0f,      2.0f,      1.0f,      -INFINITY, /* repeated, 2 maxima */
        1.0f,      0.5f,      -2.0f,     0.25f,     /* sink (p_max 1/2) */
        -INFINITY, -INFINITY, -INFINITY, -INFINITY, /* masked */
        1.0f,      NAN,       0.0f,      0.0f,      /* invalid */
        0.5f,      0.4995f,   0.25f,     -INFINITY  /* near */
    };
    static const float p[20] = {1.0f,   1.0f,  0.25f, 0.0f, 1.0f, 0.5f, 0.125f,
                                0.375f, 0,     0,     0,    0,    1.0f, 0.5f,
                                0.25f,  0.25f, 1.0f,  0.5f, 0.5f, 0};
    static const rows_class want[5] = {ROWS_REPEATED, ROWS_SINK, ROWS_MASKED,
                                       ROWS_INVALID, ROWS_NEAR};
    uint32_t sb[20], pb[20];
    double sd[20], pd[20], work[4];
    rows_info info[5], info_d[5], one;
    rows_summary sum, sum_d, a, b;
    rows_fractions f;

    for (int j = 0; j < 20; j++) {
        sb[j] = f2b(s[j]);
        pb[j] = f2b(p[j]);
        sd[j] = s[j];
        pd[j] = p[j];
    }
    rows_summary_init(&sum);
    rows_summary_init(&sum_d);
    ck_assert_int_eq(
        rows_classify_tensor(5, 4, sb, pb, NULL, work, info, &sum), ROWS_OK);
    ck_assert_int_eq(
        rows_classify_tensor_d(5, 4, sd, pd, NULL, work, info_d, &sum_d),
        ROWS_OK);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(info[i].cls, want[i]);
        ck_assert_int_eq(info_d[i].cls, want[i]);
        ck_assert_int_eq(
            rows_classify(4, sb + 4 * i, pb + 4 * i, NULL, work, &one),
            ROWS_OK);
        ck_assert(info_equal(&one, &info[i]));
        ck_assert(info_equal(&info_d[i], &info[i]));
    }
    ck_assert_uint_eq(sum.rows, 5);
    for (int c = 0; c < ROWS_N_CLASSES; c++) {
        ck_assert_uint_eq(sum.by_class[c], c == ROWS_SINGLE ? 0 : 1);
        ck_assert_uint_eq(sum_d.by_class[c], sum.by_class[c]);
    }
    /* n_max: 2, 1, 0, 0, 1 */
    ck_assert_uint_eq(sum.hist_n_max[0], 2);
    ck_assert_uint_eq(sum.hist_n_max[1], 2);
    ck_assert_uint_eq(sum.hist_n_max[2], 1);
    ck_assert_uint_eq(sum.max_n_max, 2);
    ck_assert_uint_eq(sum.one_ge2, 1);
    ck_assert_uint_eq(sum.near_ge2, 2);
    /* p_max: 1/2.25, 1/2, 1/2 (near row: l = 2); the sink count holds the
       near row too */
    ck_assert_uint_eq(sum.n_prob, 3);
    ck_assert_uint_eq(sum.sink, 2);
    ck_assert(sum.max_p_max == 0.5);
    ck_assert(sum.sum_p_max == 1.0 / 2.25 + 0.5 + 0.5);
    /* k: 3 of 3, 3 of 4, 3 of 3 */
    ck_assert_uint_eq(sum.n_k, 3);
    ck_assert(sum.sum_k_mass == 9.0);
    rows_summary_fractions(&sum, &f);
    ck_assert(f.by_class[ROWS_REPEATED] == 0.2);
    ck_assert(f.by_class[ROWS_SINGLE] == 0.0);
    ck_assert(f.one_ge2 == 0.2 && f.near_ge2 == 0.4 && f.sink == 0.4);
    ck_assert(f.mean_p_max == (1.0 / 2.25 + 0.5 + 0.5) / 3.0);
    ck_assert(f.mean_k_mass == 3.0);
    ck_assert(f.mean_k_frac == (1.0 + 0.75 + 1.0) / 3.0);

    /* merging two halves gives the whole */
    rows_summary_init(&a);
    rows_summary_init(&b);
    ck_assert_int_eq(rows_classify_tensor(2, 4, sb, pb, NULL, work, NULL, &a),
                     ROWS_OK);
    ck_assert_int_eq(
        rows_classify_tensor(3, 4, sb + 8, pb + 8, NULL, work, NULL, &b),
        ROWS_OK);
    rows_summary_merge(&a, &b);
    ck_assert(memcmp(a.by_class, sum.by_class, sizeof a.by_class) == 0);
    ck_assert(memcmp(a.hist_n_max, sum.hist_n_max, sizeof a.hist_n_max) == 0);
    ck_assert(a.rows == sum.rows && a.one_ge2 == sum.one_ge2
              && a.near_ge2 == sum.near_ge2 && a.sink == sum.sink
              && a.n_prob == sum.n_prob && a.n_k == sum.n_k
              && a.max_n_max == sum.max_n_max);
    ck_assert(a.max_p_max == sum.max_p_max);
    ck_assert(a.sum_k_mass == sum.sum_k_mass);
    ck_assert_double_eq_tol(a.sum_p_max, sum.sum_p_max, 1e-15);

    /* empty summary: NaN fractions */
    rows_summary_init(&a);
    rows_summary_fractions(&a, &f);
    ck_assert(isnan(f.by_class[0]) && isnan(f.mean_p_max)
              && isnan(f.mean_k_frac));

    /* no data */
    ck_assert_int_eq(
        rows_classify_tensor(5, 4, NULL, NULL, NULL, work, info, &sum),
        ROWS_EINVAL);
}
END_TEST

/* The n_max histogram's last bucket and a wide row of ties. */
START_TEST(test_many_ties)
{
    uint32_t s[12];
    rows_summary sum;
    rows_info r;
    double work[12];

    for (int j = 0; j < 12; j++)
        s[j] = j % 6 == 5 ? f2b(-1.0f) : f2b(0.0f); /* 10 zeros */
    rows_summary_init(&sum);
    ck_assert_int_eq(
        rows_classify_tensor(1, 12, s, NULL, NULL, work, &r, &sum), ROWS_OK);
    ck_assert_uint_eq(r.n_max, 10);
    ck_assert_uint_eq(r.n_one, 10);
    ck_assert(r.max == 0.0 && r.gap == 1.0);
    ck_assert_int_eq(r.cls, ROWS_REPEATED);
    ck_assert_uint_eq(sum.hist_n_max[ROWS_HIST - 1], 1);
    ck_assert_uint_eq(sum.max_n_max, 10);
    /* 10 ones and two exp(-1): 9 < 0.9 l = 9 + 1.8 exp(-1) < 10, so
       k = 10 */
    ck_assert_uint_eq(r.k_mass, 10);
}
END_TEST

static Suite *
rows_suite(void)
{
    Suite *s = suite_create("rows");
    TCase *tc;

    tc = tst_add_tcase(s, "crafted", 30);
    tcase_add_test(tc, test_single_and_sink);
    tcase_add_test(tc, test_repeated);
    tcase_add_test(tc, test_near);
    tcase_add_test(tc, test_masked_and_empty);
    tcase_add_test(tc, test_invalid);
    tcase_add_test(tc, test_options);
    tc = tst_add_tcase(s, "random", 60);
    tcase_add_test(tc, test_top_k_brute);
    tc = tst_add_tcase(s, "summary", 30);
    tcase_add_test(tc, test_tensor_and_summary);
    tcase_add_test(tc, test_many_ties);
    return s;
}

int
main(void)
{
    return tst_run_suite(rows_suite());
}
