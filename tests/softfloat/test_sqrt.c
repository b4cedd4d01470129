/* test_sqrt -- sf_sqrt against the MPFR oracle, all six modes */
#include <check.h>
#include <stdio.h>

#include "tests/support/opcheck.h"

#define ROWX(fmt, rm, a, b, c, z, fl, before, sat)                            \
    {                                                                         \
        fmt, NULL, OPC_ARITH, SF_OP_SQRT, SF_##rm, {a, b, c}, z, fl, before,  \
            sat                                                               \
    }
#define SQRT(fmt, rm, a, z, fl) ROWX(fmt, rm, a, 0, 0, z, fl, false, false)

/* Hand-written: zeros, negative operands, NaNs, sqrt(2) in every mode,
   the extremes of each format. */
static const opc_row rows[] = {
    SQRT("bf16", RNE, 0x3f80, 0x3f80, 0),
    SQRT("bf16", RNE, 0x4080, 0x4000, 0),
    SQRT("bf16", RNE, 0x0000, 0x0000, 0),
    SQRT("bf16", RDN, 0x8000, 0x8000, 0),
    SQRT("bf16", RNE, 0xbf80, 0x7fc0, FV),
    SQRT("bf16", RNE, 0xff80, 0x7fc0, FV),
    SQRT("bf16", RNE, 0x8001, 0x7fc0, FV),
    SQRT("bf16", RNE, 0x7f80, 0x7f80, 0),
    SQRT("bf16", RNE, 0x7fa0, 0x7fe0, FV),
    SQRT("bf16", RNE, 0xffc1, 0xffc1, 0),
    SQRT("bf16", RNE, 0x4000, 0x3fb5, FX),
    SQRT("bf16", RNA, 0x4000, 0x3fb5, FX),
    SQRT("bf16", RTZ, 0x4000, 0x3fb5, FX),
    SQRT("bf16", RUP, 0x4000, 0x3fb6, FX),
    SQRT("bf16", ROD, 0x4000, 0x3fb5, FX),
    SQRT("bf16", RNE, 0x0001, 0x1e35, FX),
    SQRT("bf16", RNE, 0x7f7f, 0x5f7f, FX),
    SQRT("bf16", RUP, 0x7f7f, 0x5f80, FX),
    SQRT("f32", RNE, 0x40000000, 0x3fb504f3, FX),
    SQRT("f32", RUP, 0x40000000, 0x3fb504f4, FX),
    SQRT("f32", RNE, 0x00000001, 0x1a3504f3, FX),
    SQRT("f16", RNE, 0x7bff, 0x5bff, FX),
    SQRT("f16", RUP, 0x7bff, 0x5c00, FX),
    SQRT("e4m3", RNE, 0x7e, 0x5b, FX),
    SQRT("e4m3", RTZ, 0x7e, 0x5a, FX),
    SQRT("e4m3", RNE, 0x7f, 0x7f, 0),
    SQRT("e4m3", RNE, 0xb8, 0x7f, FV),
    SQRT("e5m2", RNE, 0xfc, 0x7e, FV),
    SQRT("e5m2", RNE, 0x7c, 0x7c, 0),
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
        opc_test_structured(formats[i], SF_OP_SQRT, &env, 100 + i, &r);
    env.tininess_after = false;
    opc_test_structured(&sf_format_bf16, SF_OP_SQRT, &env, 110, &r);
    opc_test_structured(&sf_format_f32, SF_OP_SQRT, &env, 111, &r);
    opc_report_print(&r, "sqrt structured");
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
        opc_test_random(f, SF_OP_SQRT, n * m, 200 + i, &env, &r);
    }
    env.tininess_after = false;
    opc_test_random(&sf_format_bf16, SF_OP_SQRT, 200000 * m, 210, &env, &r);
    opc_test_random(&sf_format_f32, SF_OP_SQRT, 200000 * m, 211, &env, &r);
    opc_report_print(&r, "sqrt random");
    ck_assert_msg(r.n_bad == 0, "%lu of %lu random cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

START_TEST(test_exhaustive)
{
    sf_env env = SF_ENV_IEEE;
    opc_report r;

    opc_report_init(&r);
    opc_test_all(&sf_format_bf16, SF_OP_SQRT, &env, 300, &r);
    opc_test_all(&sf_format_f16, SF_OP_SQRT, &env, 301, &r);
    opc_test_all(&sf_format_e5m2, SF_OP_SQRT, &env, 302, &r);
    opc_test_all(&sf_format_e4m3, SF_OP_SQRT, &env, 303, &r);
    env.saturate = true;
    opc_test_all(&sf_format_e4m3, SF_OP_SQRT, &env, 304, &r);
    env.saturate = false;
    env.tininess_after = false;
    opc_test_all(&sf_format_bf16, SF_OP_SQRT, &env, 305, &r);
    opc_test_all(&sf_format_f16, SF_OP_SQRT, &env, 306, &r);
    opc_report_print(&r, "sqrt all bf16, f16 and fp8 inputs");
    ck_assert_msg(r.n_bad == 0, "%lu of %lu cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

static Suite *
sqrt_suite(void)
{
    Suite *s = suite_create("sqrt");
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
    SRunner *sr = srunner_create(sqrt_suite());
    int n_failed;

    srunner_run_all(sr, CK_NORMAL);
    n_failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return n_failed == 0 ? 0 : 1;
}
