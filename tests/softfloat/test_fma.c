/* test_fma -- sf_fma against the MPFR oracle, all six modes */
#include <string.h>

#include "tests/support/opsuite.h"
#include "tests/support/suite.h"

#define FMA(fmt, rm, a, b, c, z, fl)                                          \
    OPC_ARITH_ROW(fmt, SF_OP_FMA, rm, a, b, c, z, fl, false, false)
#define FMA_BEFORE(fmt, rm, a, b, c, z, fl)                                   \
    OPC_ARITH_ROW(fmt, SF_OP_FMA, rm, a, b, c, z, fl, true, false)

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

static const opc_suite_def def =
    OPC_STD_SUITE("fma", SF_OP_FMA, rows, "fp8 pairs with random addends",
                  opc_fp8_pairs_core);

/* a b + (+-0), the first step of every FMA chain from 0: a and b random
   (mostly finite, specials now and then, products across the whole
   range: rounding, overflow, underflow, exact zeros), the addend's sign
   at random; each standard format, all six modes, against the oracle. */
static void
gen_zero_addend(uint64_t idx, tst_rng *rng, const void *ctx, opc_case *c)
{
    const sf_format *f = ctx;

    (void)idx;
    memset(c, 0, sizeof *c);
    c->kind = OPC_ARITH;
    c->op = SF_OP_FMA;
    c->f = f;
    opc_random_operands(f, SF_OP_MUL, rng, c->in);
    c->in[2] = (tst_rand64(rng) & 1) != 0 ? f->sign_mask : 0;
}

START_TEST(test_zero_addend)
{
    sf_env env = SF_ENV_IEEE;
    opc_report r;

    opc_report_init(&r);
    for (unsigned i = 0; i < OPC_N_STD_FORMATS; i++)
        opc_run_cases(gen_zero_addend, opc_std_formats[i],
                      200000 * tst_multiplier(), 400 + i, &env, false, &r);
    opc_report_print(&r, "fma with a zero addend");
    ck_assert_msg(r.n_bad == 0, "fma with a zero addend: %lu of %lu differ",
                  r.n_bad, r.n_checked);
}
END_TEST

int
main(void)
{
    Suite *s = opc_suite(&def);

    tcase_add_test(tst_add_tcase(s, "zero addend", 600), test_zero_addend);
    return tst_run_suite(s);
}
