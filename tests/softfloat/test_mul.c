/* test_mul -- sf_mul against the MPFR oracle, all six modes */
#include "tests/support/opsuite.h"
#include "tests/support/suite.h"

#define MUL(fmt, rm, a, b, z, fl)                                             \
    OPC_ARITH_ROW(fmt, SF_OP_MUL, rm, a, b, 0, z, fl, false, false)
#define MUL_BEFORE(fmt, rm, a, b, z, fl)                                      \
    OPC_ARITH_ROW(fmt, SF_OP_MUL, rm, a, b, 0, z, fl, true, false)
#define MUL_SAT(fmt, rm, a, b, z, fl)                                         \
    OPC_ARITH_ROW(fmt, SF_OP_MUL, rm, a, b, 0, z, fl, false, true)

/* Hand-written: zeros, infinities, NaNs, overflow in every mode, underflow
   and tininess before/after rounding, ties in the subnormal range. */
static const opc_row rows[] = {
    MUL("bf16", RNE, 0x3f80, 0x3f80, 0x3f80, 0),
    MUL("bf16", RNE, 0x0000, 0x7f80, 0x7fc0, FV),
    MUL("bf16", RNE, 0x7f80, 0x8000, 0x7fc0, FV),
    MUL("bf16", RNE, 0x8000, 0x3f80, 0x8000, 0),
    MUL("bf16", RDN, 0x8000, 0xbf80, 0x0000, 0),
    MUL("bf16", RNE, 0x7f80, 0xbf80, 0xff80, 0),
    MUL("bf16", RNE, 0x7fc1, 0x7fa2, 0x7fc1, FV),
    MUL("bf16", RNE, 0x3f80, 0xffa2, 0xffe2, FV),
    MUL("bf16", RNE, 0x0000, 0xffc2, 0xffc2, 0),
    /* overflow in each mode */
    MUL("bf16", RNE, 0x7f7f, 0x4000, 0x7f80, FO | FX),
    MUL("bf16", RNA, 0x7f7f, 0x4000, 0x7f80, FO | FX),
    MUL("bf16", RTZ, 0x7f7f, 0x4000, 0x7f7f, FO | FX),
    MUL("bf16", RDN, 0x7f7f, 0x4000, 0x7f7f, FO | FX),
    MUL("bf16", RUP, 0x7f7f, 0x4000, 0x7f80, FO | FX),
    MUL("bf16", ROD, 0x7f7f, 0x4000, 0x7f7f, FO | FX),
    MUL("bf16", RNE, 0xff7f, 0x4000, 0xff80, FO | FX),
    MUL("bf16", RUP, 0xff7f, 0x4000, 0xff7f, FO | FX),
    MUL("bf16", RDN, 0xff7f, 0x4000, 0xff80, FO | FX),
    /* exact subnormal products raise nothing */
    MUL("bf16", RNE, 0x0080, 0x3f00, 0x0040, 0),
    MUL("bf16", RNE, 0x0002, 0x3f00, 0x0001, 0),
    /* half the smallest subnormal: a tie with zero */
    MUL("bf16", RNE, 0x0001, 0x3f00, 0x0000, FU | FX),
    MUL("bf16", RNA, 0x0001, 0x3f00, 0x0001, FU | FX),
    MUL("bf16", ROD, 0x0001, 0x3f00, 0x0001, FU | FX),
    MUL("bf16", RUP, 0x0001, 0x3f00, 0x0001, FU | FX),
    MUL("bf16", RDN, 0x0001, 0x3f00, 0x0000, FU | FX),
    MUL("bf16", RTZ, 0x0001, 0x3f00, 0x0000, FU | FX),
    MUL("bf16", RNE, 0x8001, 0x3f00, 0x8000, FU | FX),
    MUL("bf16", RDN, 0x8001, 0x3f00, 0x8001, FU | FX),
    MUL("bf16", ROD, 0x8001, 0x3f00, 0x8001, FU | FX),
    /* 1.5 * 2^-133: a tie between two subnormals */
    MUL("bf16", RNE, 0x0003, 0x3f00, 0x0002, FU | FX),
    MUL("bf16", RNA, 0x0003, 0x3f00, 0x0002, FU | FX),
    MUL("bf16", RTZ, 0x0003, 0x3f00, 0x0001, FU | FX),
    MUL("bf16", ROD, 0x0003, 0x3f00, 0x0001, FU | FX),
    /* 2^-126 * (1 - 2^-9): tiny before rounding, not after (RNE, RNA,
       RUP); tiny both ways when the result stays below 2^-126 */
    MUL("bf16", RNE, 0x1ee0, 0x2112, 0x0080, FX),
    MUL("bf16", RNA, 0x1ee0, 0x2112, 0x0080, FX),
    MUL("bf16", RUP, 0x1ee0, 0x2112, 0x0080, FX),
    MUL("bf16", RTZ, 0x1ee0, 0x2112, 0x007f, FU | FX),
    MUL("bf16", ROD, 0x1ee0, 0x2112, 0x007f, FU | FX),
    MUL_BEFORE("bf16", RNE, 0x1ee0, 0x2112, 0x0080, FU | FX),
    MUL_BEFORE("bf16", RUP, 0x1ee0, 0x2112, 0x0080, FU | FX),
    MUL("f16", RNE, 0x1fe0, 0x2010, 0x0400, FX),
    MUL_BEFORE("f16", RNE, 0x1fe0, 0x2010, 0x0400, FU | FX),
    MUL("f16", RTZ, 0x1fe0, 0x2010, 0x03ff, FU | FX),
    /* binary32 */
    MUL("f32", RNE, 0x3f800001, 0x3f800001, 0x3f800002, FX),
    MUL("f32", RUP, 0x3f800001, 0x3f800001, 0x3f800003, FX),
    MUL("f32", ROD, 0x3f800001, 0x3f800001, 0x3f800003, FX),
    MUL("f32", RNE, 0x00800000, 0x3f000000, 0x00400000, 0),
    MUL("f32", RNE, 0x7f800000, 0x00000000, 0x7fc00000, FV),
    MUL("f32", RNE, 0x7f7fffff, 0x3f800001, 0x7f800000, FO | FX),
    MUL("f32", RTZ, 0x7f7fffff, 0x3f800001, 0x7f7fffff, FO | FX),
    MUL("tf32", RNE, 0x3f802000, 0x3f802000, 0x3f804000, FX),
    MUL("tf32", RUP, 0x3f802000, 0x3f802000, 0x3f806000, FX),
    /* E4M3: overflow is NaN, or 448 when saturating */
    MUL("e4m3", RNE, 0x7e, 0x40, 0x7f, FO | FX),
    MUL("e4m3", RTZ, 0x7e, 0x40, 0x7e, FO | FX),
    MUL_SAT("e4m3", RNE, 0x7e, 0x40, 0x7e, FO | FX),
    MUL_SAT("e4m3", RUP, 0xfe, 0x40, 0xfe, FO | FX),
    MUL("e4m3", RNE, 0x7f, 0x00, 0x7f, 0),
    MUL("e4m3", RNE, 0x01, 0x30, 0x00, FU | FX),
    MUL("e5m2", RNE, 0x7b, 0x40, 0x7c, FO | FX),
    MUL("e5m2", RNE, 0x7c, 0x00, 0x7e, FV),
    MUL_SAT("e5m2", RNE, 0x7b, 0x40, 0x7b, FO | FX),
};

static const opc_suite_def def = OPC_STD_SUITE(
    "mul", SF_OP_MUL, rows, "fp8 all pairs", opc_std_fp8_pairs);

int
main(void)
{
    return tst_run_suite(opc_suite(&def));
}
