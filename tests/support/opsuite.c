/* opsuite.c -- the Check suite of the softfloat-versus-oracle tests */
#include "opsuite.h"
#include "suite.h"

/* The program's suite, set once by opc_suite before the tests run (Check
   forks after that, or runs them in this process). */
static const opc_suite_def *the_def;

START_TEST(test_row)
{
    char msg[512];

    ck_assert_msg(opc_check_row(&the_def->rows[_i], msg, sizeof msg), "%s",
                  msg);
}
END_TEST

/* _i: OPC_STRUCTURED .. OPC_EXHAUSTIVE */
START_TEST(test_part)
{
    const opc_part *p = &the_def->parts[_i];
    opc_report r;

    opc_report_init(&r);
    p->run(the_def->op, &r);
    opc_report_print(&r, p->label);
    ck_assert_msg(r.n_bad == 0, "%s: %lu of %lu cases differ", p->label,
                  r.n_bad, r.n_checked);
}
END_TEST

Suite *
opc_suite(const opc_suite_def *d)
{
    static const char *const tcase_names[OPC_N_PARTS] = {
        "structured", "random", "exhaustive"};
    Suite *s = suite_create(d->name);
    int k;

    the_def = d;
    tcase_add_loop_test(tst_add_tcase(s, "special", 0), test_row, 0,
                        (int)d->n_rows);
    for (k = 0; k < OPC_N_PARTS; k++)
        if (d->parts[k].run != NULL)
            tcase_add_loop_test(tst_add_tcase(s, tcase_names[k], 600),
                                test_part, k, k + 1);
    return s;
}

const sf_format *const opc_std_formats[OPC_N_STD_FORMATS] = {
    &sf_format_bf16, &sf_format_f16, &sf_format_f32, &sf_format_tf32};

uint64_t
opc_std_random_count(const sf_format *f)
{
    return (f == &sf_format_bf16 || f == &sf_format_f32) ? 1000000 : 200000;
}

void
opc_std_structured(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;
    unsigned i;

    for (i = 0; i < OPC_N_STD_FORMATS; i++)
        opc_test_structured(opc_std_formats[i], op, &env, 100 + i, r);
    env.tininess_after = false;
    opc_test_structured(&sf_format_bf16, op, &env, 110, r);
    opc_test_structured(&sf_format_f32, op, &env, 111, r);
}

void
opc_std_random(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;
    unsigned long m = tst_multiplier();
    unsigned i;

    for (i = 0; i < OPC_N_STD_FORMATS; i++) {
        const sf_format *f = opc_std_formats[i];
        opc_test_random(f, op, opc_std_random_count(f) * m, 200 + i, &env, r);
    }
    env.tininess_after = false;
    opc_test_random(&sf_format_bf16, op, 200000 * m, 210, &env, r);
    opc_test_random(&sf_format_f32, op, 200000 * m, 211, &env, r);
}

void
opc_fp8_pairs_core(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;

    env.saturate = false;
    opc_test_all(&sf_format_e5m2, op, &env, 300, r);
    opc_test_all(&sf_format_e4m3, op, &env, 301, r);
    env.saturate = true;
    opc_test_all(&sf_format_e4m3, op, &env, 302, r);
}

void
opc_std_fp8_pairs(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;

    opc_fp8_pairs_core(op, r);
    env.saturate = true;
    opc_test_all(&sf_format_e5m2, op, &env, 303, r);
    env.saturate = false;
    env.tininess_after = false;
    opc_test_all(&sf_format_e5m2, op, &env, 304, r);
    opc_test_all(&sf_format_e4m3, op, &env, 305, r);
}
