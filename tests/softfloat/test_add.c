/* test_add -- sf_add and sf_sub against the MPFR oracle, all six modes */
#include "tests/support/opsuite.h"
#include "tests/support/suite.h"

#define ADD(fmt, rm, a, b, z, fl)                                             \
    OPC_ARITH_ROW(fmt, SF_OP_ADD, rm, a, b, 0, z, fl, false, false)
#define SUB(fmt, rm, a, b, z, fl)                                             \
    OPC_ARITH_ROW(fmt, SF_OP_SUB, rm, a, b, 0, z, fl, false, false)
#define ADD_SAT(fmt, rm, a, b, z, fl)                                         \
    OPC_ARITH_ROW(fmt, SF_OP_ADD, rm, a, b, 0, z, fl, false, true)

/* Hand-written: signed zeros, infinities, NaN propagation and quieting,
   ties in every mode, overflow per mode, exact subnormal sums. */
static const opc_row rows[] = {
    ADD("bf16", RNE, 0x3f80, 0x3f80, 0x4000, 0),
    ADD("bf16", RNE, 0x3f80, 0xbf80, 0x0000, 0),
    ADD("bf16", RDN, 0x3f80, 0xbf80, 0x8000, 0),
    ADD("bf16", ROD, 0x3f80, 0xbf80, 0x0000, 0),
    ADD("bf16", RNE, 0x8000, 0x8000, 0x8000, 0),
    ADD("bf16", RNE, 0x0000, 0x8000, 0x0000, 0),
    ADD("bf16", RUP, 0x0000, 0x8000, 0x0000, 0),
    ADD("bf16", RDN, 0x0000, 0x8000, 0x8000, 0),
    ADD("bf16", RNE, 0x8000, 0x3f80, 0x3f80, 0),
    ADD("bf16", RNE, 0x7f80, 0xff80, 0x7fc0, FV),
    ADD("bf16", RNE, 0x7f80, 0x7f80, 0x7f80, 0),
    ADD("bf16", RNE, 0xff80, 0x3f80, 0xff80, 0),
    ADD("bf16", RNE, 0x7f7f, 0x7f7f, 0x7f80, FO | FX),
    ADD("bf16", RNA, 0x7f7f, 0x7f7f, 0x7f80, FO | FX),
    ADD("bf16", RTZ, 0x7f7f, 0x7f7f, 0x7f7f, FO | FX),
    ADD("bf16", ROD, 0x7f7f, 0x7f7f, 0x7f7f, FO | FX),
    ADD("bf16", RUP, 0x7f7f, 0x7f7f, 0x7f80, FO | FX),
    ADD("bf16", RDN, 0x7f7f, 0x7f7f, 0x7f7f, FO | FX),
    ADD("bf16", RUP, 0xff7f, 0xff7f, 0xff7f, FO | FX),
    ADD("bf16", RDN, 0xff7f, 0xff7f, 0xff80, FO | FX),
    ADD("bf16", RNE, 0x7fa0, 0x3f80, 0x7fe0, FV),
    ADD("bf16", RNE, 0x3f80, 0xffa1, 0xffe1, FV),
    ADD("bf16", RNE, 0x7fc1, 0xff81, 0x7fc1, FV),
    ADD("bf16", RNE, 0xff81, 0x7fc1, 0xffc1, FV),
    ADD("bf16", RNE, 0x3f80, 0xffc3, 0xffc3, 0),
    ADD("bf16", RNE, 0x7f80, 0x7fc5, 0x7fc5, 0),
    /* 1 + 2^-8: a tie at 8 bits */
    ADD("bf16", RNE, 0x3f80, 0x3b80, 0x3f80, FX),
    ADD("bf16", RNA, 0x3f80, 0x3b80, 0x3f81, FX),
    ADD("bf16", ROD, 0x3f80, 0x3b80, 0x3f81, FX),
    ADD("bf16", RTZ, 0x3f80, 0x3b80, 0x3f80, FX),
    ADD("bf16", RUP, 0x3f80, 0x3b80, 0x3f81, FX),
    ADD("bf16", RDN, 0x3f80, 0x3b80, 0x3f80, FX),
    ADD("bf16", RDN, 0xbf80, 0xbb80, 0xbf81, FX),
    /* 1 + 2^-7 + 2^-8: a tie with an odd last bit */
    ADD("bf16", RNE, 0x3f81, 0x3b80, 0x3f82, FX),
    ADD("bf16", RNA, 0x3f81, 0x3b80, 0x3f82, FX),
    ADD("bf16", ROD, 0x3f81, 0x3b80, 0x3f81, FX),
    /* 1 + 2^-9: below the tie; 1 - 2^-9: needs a round bit */
    ADD("bf16", RNE, 0x3f80, 0x3b00, 0x3f80, FX),
    ADD("bf16", RNA, 0x3f80, 0x3b00, 0x3f80, FX),
    ADD("bf16", ROD, 0x3f80, 0x3b00, 0x3f81, FX),
    ADD("bf16", RNE, 0x3f80, 0xbb00, 0x3f80, FX),
    ADD("bf16", RTZ, 0x3f80, 0xbb00, 0x3f7f, FX),
    /* subnormal sums are exact: no underflow */
    ADD("bf16", RNE, 0x0001, 0x0001, 0x0002, 0),
    ADD("bf16", RNE, 0x0080, 0x8001, 0x007f, 0),
    ADD("bf16", RNE, 0x007f, 0x0001, 0x0080, 0),
    /* a huge and a tiny operand */
    ADD("bf16", RUP, 0x7f7f, 0x0001, 0x7f80, FO | FX),
    ADD("bf16", RNE, 0x7f7f, 0x0001, 0x7f7f, FX),
    ADD("bf16", ROD, 0x3f80, 0x8001, 0x3f7f, FX),
    SUB("bf16", RNE, 0x3f80, 0x3f80, 0x0000, 0),
    SUB("bf16", RDN, 0x3f80, 0x3f80, 0x8000, 0),
    SUB("bf16", RNE, 0x7f80, 0x7f80, 0x7fc0, FV),
    SUB("bf16", RNE, 0x7f80, 0xff80, 0x7f80, 0),
    SUB("bf16", RNE, 0x0000, 0x0000, 0x0000, 0),
    SUB("bf16", RDN, 0x0000, 0x0000, 0x8000, 0),
    SUB("bf16", RNE, 0x8000, 0x0000, 0x8000, 0),
    SUB("bf16", RNE, 0x0000, 0x8000, 0x0000, 0),
    SUB("bf16", RNE, 0x3f80, 0xffc0, 0xffc0, 0),
    SUB("bf16", RNE, 0x3f80, 0x7f81, 0x7fc1, FV),
    /* 2 - 2^-8: a tie just below a binade boundary */
    SUB("bf16", RNE, 0x4000, 0x3b80, 0x4000, FX),
    SUB("bf16", RTZ, 0x4000, 0x3b80, 0x3fff, FX),
    SUB("bf16", ROD, 0x4000, 0x3b80, 0x3fff, FX),
    /* binary32 */
    ADD("f32", RNE, 0x3f800000, 0x33800000, 0x3f800000, FX),
    ADD("f32", RNA, 0x3f800000, 0x33800000, 0x3f800001, FX),
    ADD("f32", ROD, 0x3f800000, 0x33800000, 0x3f800001, FX),
    ADD("f32", RNE, 0x7f7fffff, 0x73000000, 0x7f800000, FO | FX),
    ADD("f32", RTZ, 0x7f7fffff, 0x73000000, 0x7f7fffff, FX),
    ADD("f32", ROD, 0x7f7fffff, 0x73000000, 0x7f7fffff, FX),
    ADD("f32", RNE, 0x7f7fffff, 0x72ffffff, 0x7f7fffff, FX),
    ADD("f32", RNE, 0x00800000, 0x80000001, 0x007fffff, 0),
    ADD("f32", RNE, 0x7f800001, 0x3f800000, 0x7fc00001, FV),
    ADD("f32", RDN, 0x80000000, 0x00000000, 0x80000000, 0),
    /* binary16 */
    ADD("f16", RNE, 0x7bff, 0x7bff, 0x7c00, FO | FX),
    ADD("f16", RTZ, 0x7bff, 0x7bff, 0x7bff, FO | FX),
    ADD("f16", RNE, 0x3c00, 0x1000, 0x3c00, FX),
    ADD("f16", RNA, 0x3c00, 0x1000, 0x3c01, FX),
    ADD("f16", RNE, 0x7c00, 0xfc00, 0x7e00, FV),
    ADD("f16", RNE, 0x7d00, 0x3c00, 0x7f00, FV),
    /* TF32: 11 bits */
    ADD("tf32", RNE, 0x3f800000, 0x3a000000, 0x3f800000, FX),
    ADD("tf32", RNA, 0x3f800000, 0x3a000000, 0x3f802000, FX),
    ADD("tf32", RNE, 0x3f802000, 0x3a000000, 0x3f804000, FX),
    /* OCP E4M3: 448 is the largest value, S.1111.111 the NaN */
    ADD("e4m3", RNE, 0x7e, 0x7e, 0x7f, FO | FX),
    ADD("e4m3", RTZ, 0x7e, 0x7e, 0x7e, FO | FX),
    ADD("e4m3", RNE, 0xfe, 0xfe, 0xff, FO | FX),
    ADD_SAT("e4m3", RNE, 0x7e, 0x7e, 0x7e, FO | FX),
    ADD_SAT("e4m3", RNE, 0xfe, 0xfe, 0xfe, FO | FX),
    /* 448 + 16 = 464: a tie between 448 and the missing 480 */
    ADD("e4m3", RNE, 0x7e, 0x58, 0x7e, FX),
    ADD("e4m3", RNA, 0x7e, 0x58, 0x7f, FO | FX),
    ADD("e4m3", RUP, 0x7e, 0x58, 0x7f, FO | FX),
    ADD("e4m3", ROD, 0x7e, 0x58, 0x7e, FO | FX),
    ADD("e4m3", RTZ, 0x7e, 0x58, 0x7e, FX),
    ADD_SAT("e4m3", RNA, 0x7e, 0x58, 0x7e, FO | FX),
    ADD("e4m3", RNE, 0x7f, 0x38, 0x7f, 0),
    ADD("e4m3", RNE, 0x38, 0xff, 0xff, 0),
    ADD("e4m3", RDN, 0x38, 0xb8, 0x80, 0),
    /* OCP E5M2: IEEE-like */
    ADD("e5m2", RNE, 0x7b, 0x7b, 0x7c, FO | FX),
    ADD("e5m2", RTZ, 0x7b, 0x7b, 0x7b, FO | FX),
    ADD_SAT("e5m2", RNE, 0x7b, 0x7b, 0x7b, FO | FX),
    ADD_SAT("e5m2", RNE, 0x7c, 0x3c, 0x7c, 0),
    ADD("e5m2", RNE, 0x7d, 0x3c, 0x7f, FV),
    ADD("e5m2", RNE, 0x7c, 0xfc, 0x7e, FV),
};

static const int ops[] = {SF_OP_ADD, SF_OP_SUB};

/* Both ops in each standard format (streams 100 + 2i + j), then add with
   tininess before rounding in bf16 (120). */
static void
both_structured(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;
    unsigned i, j;

    (void)op;
    for (i = 0; i < OPC_N_STD_FORMATS; i++)
        for (j = 0; j < 2; j++)
            opc_test_structured(opc_std_formats[i], ops[j], &env,
                                100 + i * 2 + j, r);
    env.tininess_after = false;
    opc_test_structured(&sf_format_bf16, SF_OP_ADD, &env, 120, r);
}

/* Both ops in each standard format (streams 200 + 2i + j). */
static void
both_random(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;
    unsigned long m = tst_multiplier();
    unsigned i, j;

    (void)op;
    for (i = 0; i < OPC_N_STD_FORMATS; i++) {
        const sf_format *f = opc_std_formats[i];
        for (j = 0; j < 2; j++)
            opc_test_random(f, ops[j], opc_std_random_count(f) * m,
                            200 + i * 2 + j, &env, r);
    }
}

/* Every fp8 pair, both ops: e5m2 (streams 300 + j), e4m3 (310 + j),
   saturating e4m3 (320 + j). */
static void
both_fp8_pairs(int op, opc_report *r)
{
    sf_env env = SF_ENV_IEEE;
    unsigned j;

    (void)op;
    for (j = 0; j < 2; j++) {
        env.saturate = false;
        opc_test_all(&sf_format_e5m2, ops[j], &env, 300 + j, r);
        opc_test_all(&sf_format_e4m3, ops[j], &env, 310 + j, r);
        env.saturate = true;
        opc_test_all(&sf_format_e4m3, ops[j], &env, 320 + j, r);
    }
}

/* The parts cover add and sub themselves and ignore the op. */
static const opc_suite_def def = {
    .name = "add",
    .op = SF_OP_ADD,
    .rows = rows,
    .n_rows = sizeof rows / sizeof rows[0],
    .parts = {{"add/sub structured", both_structured},
              {"add/sub random", both_random},
              {"add/sub fp8 all pairs", both_fp8_pairs}}};

int
main(void)
{
    return tst_run_suite(opc_suite(&def));
}
