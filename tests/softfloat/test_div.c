/* test_div -- sf_div against the MPFR oracle, all six modes */
#include "tests/support/opsuite.h"
#include "tests/support/suite.h"

#define DIV(fmt, rm, a, b, z, fl)                                             \
    OPC_ARITH_ROW(fmt, SF_OP_DIV, rm, a, b, 0, z, fl, false, false)
#define DIV_SAT(fmt, rm, a, b, z, fl)                                         \
    OPC_ARITH_ROW(fmt, SF_OP_DIV, rm, a, b, 0, z, fl, false, true)

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

static const opc_suite_def def = OPC_STD_SUITE(
    "div", SF_OP_DIV, rows, "fp8 all pairs", opc_std_fp8_pairs);

int
main(void)
{
    return tst_run_suite(opc_suite(&def));
}
