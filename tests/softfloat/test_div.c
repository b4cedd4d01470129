/* test_div -- sf_div against the MPFR oracle, all six modes */
#include <check.h>
#include <stdio.h>

#include "tests/support/opcheck.h"

#define ROWX(fmt, rm, a, b, c, z, fl, before, sat)                            \
    {                                                                         \
        fmt, NULL, OPC_ARITH, SF_OP_DIV, SF_##rm, {a, b, c}, z, fl, before,   \
            sat                                                               \
    }
#define DIV(fmt, rm, a, b, z, fl) ROWX(fmt, rm, a, b, 0, z, fl, false, false)
#define DIV_SAT(fmt, rm, a, b, z, fl)                                         \
    ROWX(fmt, rm, a, b, 0, z, fl, false, true)

/* Hand-written: division by zero, invalid quotients, NaNs, 1/3 in every
   mode, overflow and underflow. */
static const opc_row rows[] = {
    DIV("bf16", RNE, 0x3f80, 0x0000, 0x7f80, FI),
    DIV("bf16", RNE, 0xbf80, 0x0000, 0xff80, FI),
    DIV("bf16", RNE, 0x3f80, 0x8000, 0xff80, FI),
    DIV("bf16", RNE, 0x0001, 0x8000, 0xff80, FI),
    DIV("bf16", RNE, 0x7f80, 0x0000, 0x7f80, 0),
    DIV("bf16", RNE, 0x0000, 0x0000, 0x7fc0, FV),
    DIV("bf16", RNE, 0x8000, 0x0000, 0x7fc0, FV),
    DIV("bf16", RNE, 0x7f80, 0xff80, 0x7fc0, FV),
    DIV("bf16", RNE, 0x0000, 0x7f80, 0x0000, 0),
    DIV("bf16", RNE, 0x8000, 0x3f80, 0x8000, 0),
    DIV("bf16", RNE, 0x3f80, 0xff80, 0x8000, 0),
    DIV("bf16", RNE, 0x7fc1, 0x0000, 0x7fc1, 0),
    DIV("bf16", RNE, 0x0000, 0x7fa1, 0x7fe1, FV),
    DIV("bf16", RNE, 0x7fc1, 0x7fa1, 0x7fc1, FV),
    /* 1/3 */
    DIV("bf16", RNE, 0x3f80, 0x4040, 0x3eab, FX),
    DIV("bf16", RNA, 0x3f80, 0x4040, 0x3eab, FX),
    DIV("bf16", RTZ, 0x3f80, 0x4040, 0x3eaa, FX),
    DIV("bf16", RDN, 0x3f80, 0x4040, 0x3eaa, FX),
    DIV("bf16", RUP, 0x3f80, 0x4040, 0x3eab, FX),
    DIV("bf16", ROD, 0x3f80, 0x4040, 0x3eab, FX),
    DIV("bf16", RDN, 0xbf80, 0x4040, 0xbeab, FX),
    DIV("bf16", RNE, 0x7f7f, 0x3f00, 0x7f80, FO | FX),
    DIV("bf16", RTZ, 0x7f7f, 0x3f00, 0x7f7f, FO | FX),
    DIV("bf16", RNE, 0x0080, 0x4000, 0x0040, 0),
    DIV("bf16", RNE, 0x0001, 0x4000, 0x0000, FU | FX),
    DIV("bf16", RUP, 0x0001, 0x4000, 0x0001, FU | FX),
    DIV("bf16", RNE, 0x0001, 0x7f7f, 0x0000, FU | FX),
    DIV("bf16", RUP, 0x0001, 0x7f7f, 0x0001, FU | FX),
    DIV("f32", RNE, 0x3f800000, 0x40400000, 0x3eaaaaab, FX),
    DIV("f32", RTZ, 0x3f800000, 0x40400000, 0x3eaaaaaa, FX),
    DIV("f32", ROD, 0x3f800000, 0x40400000, 0x3eaaaaab, FX),
    DIV("f32", RNE, 0x3f800000, 0x00000000, 0x7f800000, FI),
    DIV("f16", RNE, 0x3c00, 0x0000, 0x7c00, FI),
    DIV("f16", RNE, 0x7bff, 0x3800, 0x7c00, FO | FX),
    /* E4M3 has no infinity: x/0 is its NaN (sign of the infinity) */
    DIV("e4m3", RNE, 0x38, 0x00, 0x7f, FI),
    DIV("e4m3", RNE, 0xb8, 0x00, 0xff, FI),
    DIV("e4m3", RNE, 0x38, 0x80, 0xff, FI),
    DIV("e4m3", RNE, 0x00, 0x00, 0x7f, FV),
    DIV_SAT("e4m3", RNE, 0x38, 0x00, 0x7f, FI),
    DIV("e4m3", RNE, 0x7e, 0x30, 0x7f, FO | FX),
    DIV("e4m3", RTZ, 0x7e, 0x30, 0x7e, FO | FX),
    DIV_SAT("e4m3", RNE, 0x7e, 0x30, 0x7e, FO | FX),
    DIV("e5m2", RNE, 0x3c, 0x00, 0x7c, FI),
    DIV("e5m2", RNE, 0x7c, 0x7c, 0x7e, FV),
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
        opc_test_structured(formats[i], SF_OP_DIV, &env, 100 + i, &r);
    env.tininess_after = false;
    opc_test_structured(&sf_format_bf16, SF_OP_DIV, &env, 110, &r);
    opc_test_structured(&sf_format_f32, SF_OP_DIV, &env, 111, &r);
    opc_report_print(&r, "div structured");
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
        opc_test_random(f, SF_OP_DIV, n * m, 200 + i, &env, &r);
    }
    env.tininess_after = false;
    opc_test_random(&sf_format_bf16, SF_OP_DIV, 200000 * m, 210, &env, &r);
    opc_test_random(&sf_format_f32, SF_OP_DIV, 200000 * m, 211, &env, &r);
    opc_report_print(&r, "div random");
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
    opc_test_all(&sf_format_e5m2, SF_OP_DIV, &env, 300, &r);
    opc_test_all(&sf_format_e4m3, SF_OP_DIV, &env, 301, &r);
    env.saturate = true;
    opc_test_all(&sf_format_e4m3, SF_OP_DIV, &env, 302, &r);
    opc_test_all(&sf_format_e5m2, SF_OP_DIV, &env, 303, &r);
    env.saturate = false;
    env.tininess_after = false;
    opc_test_all(&sf_format_e5m2, SF_OP_DIV, &env, 304, &r);
    opc_test_all(&sf_format_e4m3, SF_OP_DIV, &env, 305, &r);
    opc_report_print(&r, "div fp8 all pairs");
    ck_assert_msg(r.n_bad == 0, "%lu of %lu cases differ", r.n_bad,
                  r.n_checked);
}
END_TEST

static Suite *
div_suite(void)
{
    Suite *s = suite_create("div");
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
    SRunner *sr = srunner_create(div_suite());
    int n_failed;

    srunner_run_all(sr, CK_NORMAL);
    n_failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return n_failed == 0 ? 0 : 1;
}
