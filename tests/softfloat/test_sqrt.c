/* test_sqrt -- sf_sqrt against the MPFR oracle, all six modes */
#include "tests/support/opsuite.h"
#include "tests/support/suite.h"

#define SQRT(fmt, rm, a, z, fl)                                               \
    OPC_ARITH_ROW(fmt, SF_OP_SQRT, rm, a, 0, 0, z, fl, false, false)

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

/* Every bf16, f16 and fp8 input: bf16, f16, e5m2, e4m3 (streams 300 ..
   303), saturating e4m3 (304), tininess before rounding in bf16 and f16
   (305, 306). */
static void
all_inputs(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;

    opc_test_all(&sf_format_bf16, op, &env, 300, r);
    opc_test_all(&sf_format_f16, op, &env, 301, r);
    opc_test_all(&sf_format_e5m2, op, &env, 302, r);
    opc_test_all(&sf_format_e4m3, op, &env, 303, r);
    env.saturate = true;
    opc_test_all(&sf_format_e4m3, op, &env, 304, r);
    env.saturate = false;
    env.tininess_after = false;
    opc_test_all(&sf_format_bf16, op, &env, 305, r);
    opc_test_all(&sf_format_f16, op, &env, 306, r);
}

static const opc_suite_def def =
    OPC_STD_SUITE("sqrt", SF_OP_SQRT, rows, "all bf16, f16 and fp8 inputs",
                  all_inputs);

int
main(void)
{
    return tst_run_suite(opc_suite(&def));
}
