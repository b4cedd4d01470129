/* test_fma -- sf_fma against the MPFR oracle, all six modes */
#include <check.h>
#include <stdio.h>

#include "tests/support/opcheck.h"

#define ROWX(fmt, rm, a, b, c, z, fl, before, sat)                            \
    {                                                                         \
        fmt, NULL, OPC_ARITH, SF_OP_FMA, SF_##rm, {a, b, c}, z, fl, before,   \
            sat                                                               \
    }
#define FMA(fmt, rm, a, b, c, z, fl)                                          \
    ROWX(fmt, rm, a, b, c, z, fl, false, false)
#define FMA_BEFORE(fmt, rm, a, b, c, z, fl)                                   \
    ROWX(fmt, rm, a, b, c, z, fl, true, false)

/* Hand-written: 0 * Inf with and without NaN addends, NaN order, signed
   zeros, single rounding, no intermediate overflow, tiny products. */
static const opc_row rows[] = {
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0x3f80, 0x4000, 0),
    /* 0 * Inf is invalid even when c is a quiet NaN (which is returned) */
    FMA("bf16", RNE, 0x0000, 0x7f80, 0x7fc0, 0x7fc0, FV),
    FMA("bf16", RNE, 0x7f80, 0x0000, 0x7fc3, 0x7fc3, FV),
    FMA("bf16", RNE, 0x0000, 0x7f80, 0x3f80, 0x7fc0, FV),
    FMA("bf16", RNE, 0x7f80, 0x3f80, 0xff80, 0x7fc0, FV),
    FMA("bf16", RNE, 0x7f80, 0x3f80, 0x7f80, 0x7f80, 0),
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0xff80, 0xff80, 0),
    FMA("bf16", RNE, 0x7fc1, 0x7fa1, 0x3f80, 0x7fc1, FV),
    FMA("bf16", RNE, 0x3f80, 0x7fa1, 0x7fc2, 0x7fe1, FV),
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0x7fa2, 0x7fe2, FV),
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0xffc2, 0xffc2, 0),
    /* signed zeros */
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0xbf80, 0x0000, 0),
    FMA("bf16", RDN, 0x3f80, 0x3f80, 0xbf80, 0x8000, 0),
    FMA("bf16", RNE, 0x0000, 0x3f80, 0x8000, 0x0000, 0),
    FMA("bf16", RDN, 0x0000, 0x3f80, 0x8000, 0x8000, 0),
    FMA("bf16", RNE, 0x8000, 0x3f80, 0x8000, 0x8000, 0),
    FMA("bf16", RUP, 0x8000, 0x3f80, 0x8000, 0x8000, 0),
    FMA("bf16", RNE, 0x0000, 0x3f80, 0x3f80, 0x3f80, 0),
    FMA("bf16", RNE, 0x0001, 0x8001, 0x0000, 0x8000, FU | FX),
    /* (1 + 2^-7)^2 - 1 = 2^-6 (1 + 2^-8): one rounding, a tie */
    FMA("bf16", RNE, 0x3f81, 0x3f81, 0xbf80, 0x3c80, FX),
    FMA("bf16", RNA, 0x3f81, 0x3f81, 0xbf80, 0x3c81, FX),
    FMA("bf16", ROD, 0x3f81, 0x3f81, 0xbf80, 0x3c81, FX),
    FMA("bf16", RTZ, 0x3f81, 0x3f81, 0xbf80, 0x3c80, FX),
    /* no intermediate overflow: 2 * max - max = max */
    FMA("bf16", RNE, 0x7f7f, 0x4000, 0xff7f, 0x7f7f, 0),
    FMA("bf16", RNE, 0x7f7f, 0x4000, 0x0000, 0x7f80, FO | FX),
    FMA("bf16", RTZ, 0x7f7f, 0x4000, 0x0000, 0x7f7f, FO | FX),
    /* tiny products */
    FMA("bf16", RNE, 0x0001, 0x3f00, 0x0000, 0x0000, FU | FX),
    FMA("bf16", RNE, 0x0001, 0x3f00, 0x0001, 0x0002, FU | FX),
    FMA("bf16", RTZ, 0x0001, 0x3f00, 0x0001, 0x0001, FU | FX),
    FMA("bf16", RNE, 0x1ee0, 0x2112, 0x0000, 0x0080, FX),
    FMA_BEFORE("bf16", RNE, 0x1ee0, 0x2112, 0x0000, 0x0080, FU | FX),
    /* the addend decides the sticky bit */
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0x3b80, 0x3f80, FX),
    FMA("bf16", RNE, 0x3f80, 0x3f80, 0x3b81, 0x3f81, FX),
    FMA("f32", RNE, 0x3f800001, 0x3f800001, 0xbf800000, 0x34800000, FX),
    FMA("f32", RNA, 0x3f800001, 0x3f800001, 0xbf800000, 0x34800001, FX),
    FMA("f32", RNE, 0x7f7fffff, 0x40000000, 0xff7fffff, 0x7f7fffff, 0),
    FMA("f16", RNE, 0x7c00, 0x0000, 0x3c00, 0x7e00, FV),
    FMA("e4m3", RNE, 0x7e, 0x40, 0x00, 0x7f, FO | FX),
    FMA("e4m3", RNE, 0x7e, 0x40, 0xfe, 0x7e, 0),
    FMA("e5m2", RNE, 0x7c, 0x00, 0x7e, 0x7e, FV),
};

START_TEST(test_special)
{
    char msg[512];

    ck_assert_msg(opc_check_row(&rows[_i], msg, sizeof msg), "%s", msg);
}
END_TEST

static const sf_format *const formats[] = {&sf_format_bf16, &sf_format_f16,
                                           &sf_format_f32, &sf_format_tf32};

START_TEST(test_structured)
{
    sf_env env = SF_ENV_IEEE;
    opc_report r;
    unsigned i;

    opc_report_init(&r);
    for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
        opc_test_structured(formats[i], SF_OP_FMA, &env, 100 + i, &r);
    env.tininess_after = false;
    opc_test_structured(&sf_format_bf16, SF_OP_FMA, &env, 110, &r);
    opc_test_structured(&sf_format_f32, SF_OP_FMA, &env, 111, &r);
    opc_report_print(&r, "fma structured");
    ck_assert_msg(r.n_bad == 0, "%lu of %lu structured cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

START_TEST(test_random)
{
    sf_env env = SF_ENV_IEEE;
    unsigned long m = tst_multiplier();
    opc_report r;
    unsigned i;

    opc_report_init(&r);
    for (i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        const sf_format *f = formats[i];
        uint64_t n =
            (f == &sf_format_bf16 || f == &sf_format_f32) ? 1000000 : 200000;
        opc_test_random(f, SF_OP_FMA, n * m, 200 + i, &env, &r);
    }
    env.tininess_after = false;
    opc_test_random(&sf_format_bf16, SF_OP_FMA, 200000 * m, 210, &env, &r);
    opc_test_random(&sf_format_f32, SF_OP_FMA, 200000 * m, 211, &env, &r);
    opc_report_print(&r, "fma random");
    ck_assert_msg(r.n_bad == 0, "%lu of %lu random cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

START_TEST(test_exhaustive)
{
    sf_env env = SF_ENV_IEEE;
    opc_report r;

    opc_report_init(&r);
    env.saturate = false;
    opc_test_all(&sf_format_e5m2, SF_OP_FMA, &env, 300, &r);
    opc_test_all(&sf_format_e4m3, SF_OP_FMA, &env, 301, &r);
    env.saturate = true;
    opc_test_all(&sf_format_e4m3, SF_OP_FMA, &env, 302, &r);
    opc_report_print(&r, "fma fp8 pairs with random addends");
    ck_assert_msg(r.n_bad == 0, "%lu of %lu cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

static Suite *
fma_suite(void)
{
    Suite *s = suite_create("fma");
    TCase *tc;

    tc = tcase_create("special");
    tcase_add_loop_test(tc, test_special, 0,
                        (int)(sizeof rows / sizeof rows[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("structured");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_structured);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    tc = tcase_create("exhaustive");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_exhaustive);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(fma_suite());
    int n_failed;

    srunner_run_all(sr, CK_NORMAL);
    n_failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return n_failed == 0 ? 0 : 1;
}
