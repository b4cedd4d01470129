/* test_config.c -- the configuration of the reference attention: names and
   parsing, defaults, every error string of fa_config_check and
   fa_capture_check, output formats, the scale, working-memory sizes */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "attention/attention.h"
#include "tests/attention/fa_test.h"
#include "tests/support/suite.h"

static fa_config
small(fa_policy p)
{
    fa_config c = fa_config_default(p);

    c.shape = (fa_shape){2, 3, 40, 50, 64};
    return c;
}

START_TEST(test_names)
{
    static const char *const pol[] = {"paper-eq4", "repo", "fa2",
                                      "fp32",      "efficient", "math"};
    static const char *const fix[] = {"none", "beta", "beta-v2", "eps",
                                      "always"};
    static const char *const abl[] = {"fp32-pv",      "fp32-o",  "delta-dpp",
                                      "delta-fp32-o", "untiled", "fp32-p",
                                      "fp32-ocast"};

    for (int i = 0; i < 6; i++) {
        ck_assert_str_eq(fa_policy_name((fa_policy)i), pol[i]);
        ck_assert_int_eq(fa_policy_parse(pol[i]), i);
    }
    ck_assert_int_eq(FA_POLICY_PAPER_EQ4, 0);
    ck_assert_int_eq(FA_POLICY_FP32, 3);
    ck_assert_int_eq(FA_POLICY_MATH, 5);
    ck_assert_ptr_null(fa_policy_name((fa_policy)6));
    ck_assert_int_eq(fa_policy_parse("FP32"), -1);
    ck_assert_int_eq(fa_policy_parse("fp32 "), -1);
    ck_assert_int_eq(fa_policy_parse(""), -1);
    ck_assert_int_eq(fa_policy_parse(NULL), -1);
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(fa_fix_name((fa_fix_kind)i), fix[i]);
        ck_assert_int_eq(fa_fix_parse(fix[i]), i);
    }
    ck_assert_ptr_null(fa_fix_name((fa_fix_kind)5));
    ck_assert_int_eq(fa_fix_parse("beta_v2"), -1);
    ck_assert_int_eq(fa_fix_parse(NULL), -1);
    ck_assert_str_eq(fa_order_name(FA_ORDER_FORWARD), "forward");
    ck_assert_str_eq(fa_order_name(FA_ORDER_REVERSE), "reverse");
    ck_assert_ptr_null(fa_order_name((fa_kv_order)2));
    ck_assert_int_eq(fa_order_parse("reverse"), FA_ORDER_REVERSE);
    ck_assert_int_eq(fa_order_parse("forward"), FA_ORDER_FORWARD);
    ck_assert_int_eq(fa_order_parse("backward"), -1);
    ck_assert_int_eq(fa_order_parse(NULL), -1);
    for (int i = 0; i < 7; i++) {
        ck_assert_str_eq(fa_ablation_name(1u << i), abl[i]);
        ck_assert_int_eq(fa_ablations_parse(abl[i]), 1L << i);
    }
    ck_assert_ptr_null(fa_ablation_name(0));
    ck_assert_ptr_null(fa_ablation_name(3));
    ck_assert_ptr_null(fa_ablation_name(1u << 7));
    ck_assert_int_eq(FA_ABL_FP32_PV, 1);
    ck_assert_int_eq(FA_ABL_UNTILED, 16);
    ck_assert_int_eq(fa_ablations_parse("fp32-pv,untiled"),
                     FA_ABL_FP32_PV | FA_ABL_UNTILED);
    ck_assert_int_eq(fa_ablations_parse("untiled,fp32-pv,untiled"),
                     FA_ABL_FP32_PV | FA_ABL_UNTILED);
    ck_assert_int_eq(
        fa_ablations_parse("fp32-pv,fp32-o,delta-dpp,delta-fp32-o,untiled"),
        31);
    ck_assert_int_eq(fa_ablations_parse(""), 0);
    ck_assert_int_eq(fa_ablations_parse("none"), 0);
    ck_assert_int_eq(fa_ablations_parse("fp32-pv,"), -1);
    ck_assert_int_eq(fa_ablations_parse(",fp32-pv"), -1);
    ck_assert_int_eq(fa_ablations_parse("fp32-pv,,untiled"), -1);
    ck_assert_int_eq(fa_ablations_parse("fp32"), -1);
    ck_assert_int_eq(fa_ablations_parse("fp32-pv,none"), -1);
    ck_assert_int_eq(fa_ablations_parse("FP32-PV"), -1);
    ck_assert_int_eq(fa_ablations_parse(NULL), -1);
}
END_TEST

START_TEST(test_defaults)
{
    for (int p = 0; p < 4; p++) {
        fa_config c = fa_config_default((fa_policy)p);
        const sf_mma_model *m =
            sf_mma_preset_by_name(p == FA_POLICY_FA2 ? "sm90" : "fma-chain");
        ck_assert_int_eq((fa_policy)fa_policy_parse(c.kernel->name), p);
        ck_assert(!c.causal);
        ck_assert(c.scale == 0.0f);
        ck_assert_uint_eq(c.br, 0);
        ck_assert_uint_eq(c.bc, 0);
        ck_assert_uint_eq(c.br_bwd, 0);
        ck_assert_uint_eq(c.bc_bwd, 0);
        ck_assert_uint_eq(c.dq_splits, 0);
        ck_assert_uint_eq(c.sms, 0);
        ck_assert_int_eq(c.order, p == FA_POLICY_FA2 ? FA_ORDER_REVERSE
                                                     : FA_ORDER_FORWARD);
        ck_assert_int_eq(c.fix.kind, FA_FIX_NONE);
        ck_assert(c.fix.beta == 2.0 && c.fix.tol == 1e-3 && c.fix.eps == 0x1p-5
                  && c.fix.eps_zero == 0x1p-5);
        ck_assert_int_eq(c.fix.zero_max, FA_ZERO_MAX_KEEP);
        ck_assert_uint_eq(c.ablations, 0);
        ck_assert_ptr_eq(c.exp, fa_exp_model_by_name("cr"));
        ck_assert_ptr_nonnull(m);
        ck_assert_ptr_eq(c.mma_qk, m);
        ck_assert_ptr_eq(c.mma_pv, m);
        ck_assert_ptr_eq(c.mma_bwd, m);
        /* the defaults lack only a shape */
        ck_assert_str_eq(fa_config_check(&c),
                         "shape: batch must be at least 1");
        c.shape = (fa_shape){1, 1, 1, 1, 1};
        ck_assert_ptr_null(fa_config_check(&c));
    }
    for (int f = 0; f < 5; f++) {
        fa_fix x = fa_fix_default((fa_fix_kind)f);
        ck_assert_int_eq(x.kind, f);
        ck_assert(x.beta == (f == FA_FIX_BETA_V2 ? 7.0 : 2.0));
        ck_assert(x.tol == 1e-3 && x.eps == 0x1p-5 && x.eps_zero == 0x1p-5);
        ck_assert_int_eq(x.zero_max, FA_ZERO_MAX_KEEP);
    }
}
END_TEST

/* One configuration and the string fa_config_check must return. */
typedef struct
{
    fa_config c;
    const char *why;
} bad_case;

static void
expect(fa_config c, const char *why)
{
    const char *got = fa_config_check(&c);

    if (why == NULL) {
        ck_assert_msg(got == NULL, "unexpected: %s", got ? got : "");
        return;
    }
    ck_assert_msg(got != NULL && strcmp(got, why) == 0,
                  "expected \"%s\" got \"%s\"", why, got ? got : "(null)");
    ck_assert_uint_eq(fa_workspace_bytes(&c), 0);
    ck_assert_uint_eq(fa_scale_bits(&c), 0);
}

START_TEST(test_check_strings)
{
    fa_config c;
    sf_mma_model bad_model;
    fa_exp_model bad_exp = {"x", FA_EXP_FN, NULL, NULL, NULL};
    sf_mma_model f16acc;

    ck_assert_str_eq(fa_config_check(NULL), "config: NULL");
    c = small(FA_POLICY_FP32);
    expect(c, NULL);
    for (int i = 0; i < 5; i++) {
        static const char *const dims[5] = {"batch", "heads", "nq", "nk",
                                            "d"};
        size_t *dim[5] = {&c.shape.batch, &c.shape.heads, &c.shape.nq,
                          &c.shape.nk, &c.shape.d};
        char why[64];

        c = small(FA_POLICY_FP32);
        *dim[i] = 0;
        snprintf(why, sizeof why, "shape: %s must be at least 1", dims[i]);
        expect(c, why);
    }
    c.shape.d = 4097;
    expect(c, "shape: d above FA_MAX_HEAD_DIM (4096)");
    c.shape.d = 4096;
    expect(c, NULL);
    c = small(FA_POLICY_FP32);
    c.kernel = fa_kernel_of_policy((fa_policy)6);
    expect(c, "kernel: none (fa_config_default or fa_config_kernel_default "
              "sets one)");
    c = small(FA_POLICY_FA2);
    c.shape.d = 257;
    expect(c, "shape: fa2 needs d <= 256, the FA2 kernel's largest head "
              "dimension");
    c.shape.d = 256;
    expect(c, NULL);
    /* size products */
    c = small(FA_POLICY_FP32);
    c.shape = (fa_shape){1, 1, (size_t)1 << 32, (size_t)1 << 30, 1};
    expect(c, "shape: B*H*Nq*Nk elements overflow size_t");
    c.shape = (fa_shape){(size_t)1 << 20, (size_t)1 << 20, (size_t)1 << 20,
                         (size_t)1 << 8, 1};
    expect(c, "shape: B*H*Nq*Nk elements overflow size_t");
    c.shape = (fa_shape){1, 1, (size_t)1 << 52, 1, 4096};
    expect(c, "shape: B*H*N*d elements overflow size_t");
    c = small(FA_POLICY_FA2);
    c.shape = (fa_shape){1, 1, (size_t)1 << 40, 1, 256};
    c.ablations = FA_ABL_UNTILED;
    c.dq_splits = 65536;
    /* one KV block: one dQ buffer can be nonzero, one is held */
    expect(c, NULL);
    /* 2^40 rows x 2^15 buffers (of 2^15 KV blocks) x 256 */
    c.ablations = 0;
    c.shape = (fa_shape){1, 1, (size_t)1 << 40, (size_t)1 << 19, 256};
    c.br_bwd = (size_t)1 << 40;
    c.bc_bwd = 16;
    expect(c, "shape: the working memory size overflows size_t");
    c.dq_splits = 65537;
    expect(c, "dq_splits: more than 65536");
    c.dq_splits = 0;
    c.sms = 100001;
    expect(c, "sms: more than 100000");
    /* scale */
    c = small(FA_POLICY_FP32);
    c.scale = -0.5f;
    expect(c, "scale: must be finite and positive, or 0 for 1/sqrt(d)");
    c.scale = INFINITY;
    expect(c, "scale: must be finite and positive, or 0 for 1/sqrt(d)");
    c.scale = NAN;
    expect(c, "scale: must be finite and positive, or 0 for 1/sqrt(d)");
    c.scale = 0x1p-149f;
    expect(c, NULL);
    c = small(FA_POLICY_FP32);
    c.order = (fa_kv_order)2;
    expect(c, "order: unknown value");
    c = small(FA_POLICY_FP32);
    c.ablations = 128;
    expect(c, "ablations: unknown bit set");
    c.ablations = 31;
    expect(c, NULL);
    /* fix */
    c = small(FA_POLICY_FP32);
    c.fix.kind = (fa_fix_kind)5;
    expect(c, "fix: unknown kind");
    for (int k = FA_FIX_BETA; k <= FA_FIX_ALWAYS; k++) {
        if (k == FA_FIX_EPS)
            continue;
        c = small(FA_POLICY_FP32);
        c.fix = fa_fix_default((fa_fix_kind)k);
        expect(c, NULL);
        c.fix.beta = 1.0;
        expect(c, "fix: beta must be finite and greater than 1");
        c.fix.beta = NAN;
        expect(c, "fix: beta must be finite and greater than 1");
        c.fix.beta = INFINITY;
        expect(c, "fix: beta must be finite and greater than 1");
        c.fix.beta = 2;
        c.fix.zero_max = (fa_zero_max)2;
        expect(c, "fix: unknown zero_max rule");
        c.fix.zero_max = FA_ZERO_MAX_SHIFT;
        c.fix.eps_zero = 0;
        expect(c, "fix: eps_zero must be finite and positive");
        c.fix.eps_zero = INFINITY;
        expect(c, "fix: eps_zero must be finite and positive");
        c.fix.eps_zero = 0.25;
        expect(c, NULL);
    }
    c = small(FA_POLICY_FP32);
    c.fix = fa_fix_default(FA_FIX_BETA);
    c.fix.tol = -1e-3;
    expect(c, "fix: tol must be finite and at least 0");
    c.fix.tol = NAN;
    expect(c, "fix: tol must be finite and at least 0");
    c.fix.tol = 0;
    expect(c, NULL);
    c = small(FA_POLICY_FP32);
    c.fix = fa_fix_default(FA_FIX_EPS);
    c.fix.tol = INFINITY;
    expect(c, "fix: tol must be finite and at least 0");
    c.fix.tol = 1e-3;
    c.fix.eps = 0;
    expect(c, "fix: eps must be finite and positive");
    c.fix.eps = -1;
    expect(c, "fix: eps must be finite and positive");
    /* a variant ignores the parameters of the others */
    c = small(FA_POLICY_FP32);
    c.fix.beta = 0.5;
    c.fix.eps = -1;
    c.fix.tol = -1;
    expect(c, NULL);
    /* exp model */
    c = small(FA_POLICY_FP32);
    c.exp = &bad_exp;
    expect(c, "exp: the model fails fa_exp_model_check");
    c.exp = NULL;
    expect(c, NULL);
    /* accumulation models */
    bad_model = *sf_mma_preset_by_name("sm90");
    bad_model.frac_bits = 99;
    ck_assert_ptr_nonnull(sf_mma_model_check(&bad_model));
    f16acc = *sf_mma_preset_by_name("fma-chain");
    f16acc.acc = &sf_format_f16;
    ck_assert_ptr_null(sf_mma_model_check(&f16acc));
    c = small(FA_POLICY_FA2);
    c.mma_qk = &bad_model;
    expect(c, "mma_qk: the model fails sf_mma_model_check");
    c.mma_qk = &f16acc;
    expect(c, "mma_qk: the accumulator must be FP32");
    c = small(FA_POLICY_FA2);
    c.mma_pv = &bad_model;
    expect(c, "mma_pv: the model fails sf_mma_model_check");
    c.mma_pv = &f16acc;
    expect(c, "mma_pv: the accumulator must be FP32");
    c = small(FA_POLICY_FA2);
    c.mma_bwd = &bad_model;
    expect(c, "mma_bwd: the model fails sf_mma_model_check");
    c.mma_bwd = &f16acc;
    expect(c, "mma_bwd: the accumulator must be FP32");
    c.mma_qk = c.mma_pv = c.mma_bwd = NULL;
    expect(c, NULL);
    /* fa2 tiles */
    c = small(FA_POLICY_FA2);
    c.bc = 24;
    expect(c, "tiles: fa2 needs bc, br_bwd and bc_bwd multiples of 16 (the "
              "MMA k-slices)");
    c.bc = 32;
    c.br_bwd = 8;
    expect(c, "tiles: fa2 needs bc, br_bwd and bc_bwd multiples of 16 (the "
              "MMA k-slices)");
    c.br_bwd = 0;
    c.bc_bwd = 40;
    expect(c, "tiles: fa2 needs bc, br_bwd and bc_bwd multiples of 16 (the "
              "MMA k-slices)");
    c.bc_bwd = 48;
    c.br = 3; /* any query tile */
    expect(c, NULL);
    c = small(FA_POLICY_FP32);
    c.bc = 7;
    c.br = 5;
    expect(c, NULL);
}
END_TEST

static void
sink_fn(void *user, const sf_event *ev)
{
    (void)user;
    (void)ev;
}

START_TEST(test_capture_check)
{
    fa_config c = small(FA_POLICY_FP32);
    sf_event_sink sink = {sink_fn, NULL}, nosink = {NULL, NULL};
    fa_capture cap;
    uint32_t o[1], lse[1];
    uint16_t x[1] = {0};
    sf_env env = SF_ENV_IEEE;

    memset(&cap, 0, sizeof cap);
    ck_assert_ptr_null(fa_capture_check(&c, NULL));
    ck_assert_ptr_null(fa_capture_check(&c, &cap));
    cap.trace = true;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "capture: trace set without an event sink");
    cap.events = &nosink;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "capture: trace set without an event sink");
    cap.events = &sink;
    ck_assert_ptr_null(fa_capture_check(&c, &cap));
    cap.trace_b = 1;
    cap.trace_h = 2;
    cap.trace_row = 39;
    cap.trace_col = 63;
    ck_assert_ptr_null(fa_capture_check(&c, &cap));
    cap.trace_b = 2;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "capture: the traced element is out of range");
    cap.trace_b = 1;
    cap.trace_h = 3;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "capture: the traced element is out of range");
    cap.trace_h = 2;
    cap.trace_row = 40;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "capture: the traced element is out of range");
    cap.trace_row = 39;
    cap.trace_col = 64;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "capture: the traced element is out of range");
    c.shape.batch = 0;
    ck_assert_str_eq(fa_capture_check(&c, &cap),
                     "shape: batch must be at least 1");
    /* the entry points refuse what the checks refuse */
    c = small(FA_POLICY_FP32);
    c.shape = (fa_shape){1, 1, 1, 1, 1};
    cap.trace_b = cap.trace_h = cap.trace_row = 0;
    cap.trace_col = 1;
    ck_assert_int_eq(fa_forward(&c, x, x, x, o, lse, &cap, &env), -1);
    ck_assert_int_eq(
        fa_backward(&c, x, x, x, o, lse, x, o, o, o, o, &cap, &env), -1);
    c.shape.d = 0;
    ck_assert_int_eq(fa_forward(&c, x, x, x, o, lse, NULL, &env), -1);
    ck_assert_int_eq(
        fa_backward(&c, x, x, x, o, lse, x, o, o, o, o, NULL, &env), -1);
    c.shape.d = 1;
    ck_assert_int_eq(fa_forward(&c, x, x, x, o, lse, NULL, &env), 0);
    ck_assert_int_eq(fa_forward(&c, x, NULL, x, o, lse, NULL, &env), -1);
    ck_assert_int_eq(fa_forward(&c, x, x, x, o, lse, NULL, NULL), -1);
}
END_TEST

START_TEST(test_output_formats)
{
    static const char *const names[] = {"o",    "lse", "delta", "dq", "dk",
                                        "dv",   "s",   "p",     "m",  "l",
                                        "obar", "dp",  "ds"};
    /* expected formats, 'b' BF16 'f' FP32, per policy (paper-eq4, repo,
       fa2, fp32), no ablation */
    static const char *const want[] = {"bbbf", "fbff", "fbff", "fbbf", "fbbf",
                                       "fbbf", "bbff", "bbbf", "bbff", "fbff",
                                       "bbff", "fbff", "fbff"};
    for (int p = 0; p < 4; p++) {
        fa_config c = small((fa_policy)p);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            const sf_format *f = fa_output_format(&c, names[i]);
            const sf_format *e =
                want[i][p] == 'b' ? &sf_format_bf16 : &sf_format_f32;
            ck_assert_msg(f == e, "%s %s", fa_policy_name((fa_policy)p),
                          names[i]);
        }
        c.ablations = FA_ABL_FP32_O;
        ck_assert_ptr_eq(fa_output_format(&c, "o"), &sf_format_f32);
        ck_assert_ptr_eq(fa_output_format(&c, "obar"), &sf_format_f32);
        c.ablations = FA_ABL_FP32_PV;
        ck_assert_ptr_eq(fa_output_format(&c, "o"), p == FA_POLICY_FP32
                                                        ? &sf_format_f32
                                                        : &sf_format_bf16);
        ck_assert_ptr_eq(fa_output_format(&c, "obar"), &sf_format_f32);
        ck_assert_ptr_null(fa_output_format(&c, "O"));
        ck_assert_ptr_null(fa_output_format(&c, ""));
        ck_assert_ptr_null(fa_output_format(&c, NULL));
    }
    ck_assert_ptr_null(fa_output_format(NULL, "o"));
}
END_TEST

/* The scale: 1/sqrt(d) correctly rounded (against MPFR) for every d, the
   kernel's scale_log2, and the table of gpu-notes for d = 64, 128. */
START_TEST(test_scale)
{
    fa_config c = small(FA_POLICY_FA2);
    mpfr_t x;
    unsigned bad = 0;

    mpfr_init2(x, 24);
    for (size_t d = 1; d <= FA_MAX_HEAD_DIM; d++) {
        uint32_t want;
        float f;
        c.shape.d = d;
        c.kernel = fa_kernel_of_policy(FA_POLICY_FP32);
        mpfr_set_ui(x, (unsigned long)d, MPFR_RNDN);
        mpfr_rec_sqrt(x, x, MPFR_RNDN); /* one rounding at 24 bits */
        f = mpfr_get_flt(x, MPFR_RNDN); /* exact */
        memcpy(&want, &f, sizeof want);
        if (fa_scale_bits(&c) != want && bad++ < TST_MAX_PRINT)
            printf("scale d=%zu expected %08x got %08x\n", d, (unsigned)want,
                   (unsigned)fa_scale_bits(&c));
    }
    mpfr_clear(x);
    ck_assert_uint_eq(bad, 0);
    c.kernel = fa_kernel_of_policy(FA_POLICY_FA2);
    c.shape.d = 64;
    ck_assert_uint_eq(fa_scale_bits(&c), 0x3E000000u);
    ck_assert_uint_eq(fa_scale_log2_bits(&c), 0x3E38AA3Bu);
    c.shape.d = 128;
    ck_assert_uint_eq(fa_scale_bits(&c), 0x3DB504F3u);
    ck_assert_uint_eq(fa_scale_log2_bits(&c), 0x3E0293EEu);
    c.scale = 0.5f;
    ck_assert_uint_eq(fa_scale_bits(&c), 0x3F000000u);
    /* float(0.5 * log2(e)) */
    ck_assert_uint_eq(fa_scale_log2_bits(&c), 0x3F38AA3Bu);
}
END_TEST

START_TEST(test_workspace)
{
    for (int p = 0; p < 4; p++) {
        fa_config c = small((fa_policy)p);
        size_t a = fa_workspace_bytes(&c), b;
        ck_assert_uint_gt(a, 0);
        /* larger shapes need at least as much */
        c.shape.nk *= 4;
        b = fa_workspace_bytes(&c);
        ck_assert_uint_gt(b, a);
        c.ablations = FA_ABL_UNTILED;
        c.shape = (fa_shape){1, 1, 512, 512, 64};
        a = fa_workspace_bytes(&c);
        c.ablations = 0;
        c.br_bwd = c.br = 16;
        c.bc_bwd = c.bc = 16;
        b = fa_workspace_bytes(&c);
        if (p != FA_POLICY_FP32 && p != FA_POLICY_PAPER_EQ4)
            ck_assert_uint_lt(b, a); /* untiled holds every row */
    }
}
END_TEST

/* The fa2 backward's dQ buffer count on a launch: ceil(SMs / (B H)) for
   the fa2 description ("sms"), the grid.x of the deterministic dq_dk_dv
   kernel that PyTorch 2.11 launched on the H200 for (B, H) in the dumps
   of tests/data/gpu/sdpa_ext (bwd_det_*: 66 heads 2, 2 x 22 and 44
   heads 3, 132 heads 1); one buffer for the other descriptions; the
   configuration's count over the rule. */
START_TEST(test_dq_buffers)
{
    static const struct
    {
        size_t b, h, sms, want;
    } launches[] = {
        {1, 66, 0, 2},   {2, 22, 0, 3},          {1, 44, 0, 3}, {1, 132, 0, 1},
        {1, 1, 0, 132},  {1, 133, 0, 1},         {3, 1, 0, 44}, {1, 4, 0, 33},
        {1, 3, 100, 34}, {1, 1, 100000, 100000},
    };
    for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++) {
        fa_config c = fa_config_default(FA_POLICY_FA2);
        c.shape = (fa_shape){launches[i].b, launches[i].h, 64, 384, 64};
        c.sms = launches[i].sms;
        ck_assert_msg(fa_config_dq_buffers(&c) == launches[i].want,
                      "B %zu H %zu sms %zu: %zu dQ buffers, expected %zu",
                      launches[i].b, launches[i].h, launches[i].sms,
                      fa_config_dq_buffers(&c), launches[i].want);
        c.dq_splits = 5;
        ck_assert_uint_eq(fa_config_dq_buffers(&c), 5);
    }
    ck_assert_int_eq(fa_kernel_by_name("fa2")->dq_buffers, FA_DQB_SMS);
    for (int p = 0; p < 6; p++) {
        fa_config c = fa_config_default((fa_policy)p);
        c.shape = (fa_shape){1, 1, 64, 384, 64};
        ck_assert_uint_eq(fa_config_dq_buffers(&c),
                          p == FA_POLICY_FA2 ? 132 : 1);
    }
    {
        /* an unusable configuration, a description's value out of range */
        fa_config c = fa_config_default(FA_POLICY_FA2);
        fa_kernel k = *fa_kernel_by_name("fa2");
        ck_assert_uint_eq(fa_config_dq_buffers(&c), 0); /* no shape */
        ck_assert_uint_eq(fa_config_dq_buffers(NULL), 0);
        k.dq_buffers = (fa_dq_buffers)2;
        ck_assert_str_eq(fa_kernel_check(&k),
                         "kernel: an enumerated field out of range");
        k.dq_buffers = FA_DQB_ONE;
        c = fa_config_kernel_default(&k);
        c.shape = (fa_shape){1, 1, 64, 384, 64};
        ck_assert_uint_eq(fa_config_dq_buffers(&c), 1);
    }
}
END_TEST

/* flex_decoding's merge configurations against those the H100 ran
   (the recorded launches' TTGIR: threads, warps and layouts) */
START_TEST(test_flex_merge_rule)
{
    fa_flex_merge m;

    /* one row over 264 programs: XBLOCK 1, R0_BLOCK 512, 4 warps, four
       contiguous programs a thread */
    ck_assert_ptr_null(fa_flex_merge_rule(264, 1, &m));
    ck_assert(m.persistent && m.fused);
    ck_assert_uint_eq(m.spt, 4);
    ck_assert_uint_eq(m.jw, 32);
    ck_assert_uint_eq(m.warps, 4);
    ck_assert_uint_eq(m.r0, 128);
    ck_assert_uint_eq(m.chunks, 1);
    /* its O: three chunks of 88, each looped (XBLOCK 2, R0_BLOCK 64, the
       lanes and 2 warps along the programs), then the chunks over 2
       lanes and 2 warps (XBLOCK 64, R0_BLOCK 4) */
    ck_assert_ptr_null(fa_flex_merge_rule(264, 64, &m));
    ck_assert(!m.persistent);
    ck_assert_uint_eq(m.spt, 0);
    ck_assert_uint_eq(m.chunks, 3);
    ck_assert_uint_eq(m.r0, 64);
    ck_assert_uint_eq(m.jw, 32);
    ck_assert_uint_eq(m.warps, 2);
    ck_assert_uint_eq(m.c_jw, 2);
    ck_assert_uint_eq(m.c_warps, 2);
    /* 132 programs, 16 query heads: two chunks, XBLOCK 16, R0_BLOCK 32 */
    ck_assert_ptr_null(fa_flex_merge_rule(132, 1024, &m));
    ck_assert_uint_eq(m.chunks, 2);
    ck_assert_uint_eq(m.r0, 32);
    ck_assert_uint_eq(m.jw, 8);
    ck_assert_uint_eq(m.warps, 4);
    /* 88 programs over 3 rows: one looped reduction of R0_BLOCK 64 */
    ck_assert_ptr_null(fa_flex_merge_rule(88, 3, &m));
    ck_assert_uint_eq(m.chunks, 1);
    ck_assert_uint_eq(m.r0, 64);
    /* refused: persistent and autotuned, one row's mask inside a thread,
       four chunks */
    ck_assert_ptr_nonnull(
        strstr(fa_flex_merge_rule(16, 16, &m), "persistent reductions"));
    ck_assert_ptr_nonnull(
        strstr(fa_flex_merge_rule(266, 1, &m), "4 divides the programs"));
    ck_assert_ptr_nonnull(
        strstr(fa_flex_merge_rule(2, 1, &m), "129 to 1,024 programs"));
    ck_assert_ptr_nonnull(
        strstr(fa_flex_merge_rule(400, 64, &m), "four chunks or more"));
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_config");
    TCase *tc = tst_add_tcase(s, "config", 60);

    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_dq_buffers);
    tcase_add_test(tc, test_check_strings);
    tcase_add_test(tc, test_capture_check);
    tcase_add_test(tc, test_output_formats);
    tcase_add_test(tc, test_scale);
    tcase_add_test(tc, test_workspace);
    tcase_add_test(tc, test_flex_merge_rule);
    return tst_run_suite(s);
}
