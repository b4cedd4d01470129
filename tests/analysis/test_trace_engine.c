/* test_trace_engine.c -- the arithmetic behind bf16emu trace on cases
   worked out by hand: the paper's addition (f32 0xC01A0E2E + bf16 0xC013,
   then to BF16), a product with a carry-out, a quotient's window, and the
   sums of an accumulation's operands */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/exact_decimal.h"
#include "analysis/trace_engine.h"
#include "tests/support/suite.h"

/* Q's exact decimal text is WANT. */
static void
check_mpq(const mpq_t q, const char *want)
{
    char *got = xdec_rational(q);

    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
}

/* An environment whose events go to C. */
static sf_env
capture_env(te_capture *c, sf_event_sink *sink)
{
    sf_env env = SF_ENV_IEEE;

    sink->fn = te_capture_event;
    sink->user = c;
    env.events = sink;
    c->count = 0;
    return env;
}

/* T1: acc = f32 0xC01A0E2E = -(1.00110100000111000101110)_2 * 2 and
   x2 = f32 0xC0130000 = -(1.0010011)_2 * 2: the same exponent, the same
   sign; the significands add to (10.01011010000111000101110)_2, a
   carry-out: normalised, exponent 2, no bit shifted out. */
START_TEST(test_align_t1)
{
    static te_opnd oa, ob;
    static te_addend a, b;
    static te_alignment al;
    char why[256];
    mpq_t q;

    te_decode(&sf_format_f32, 0xC01A0E2E, false, &oa);
    te_decode(&sf_format_f32, 0xC0130000, false, &ob);
    ck_assert_int_eq(oa.k, TE_FINITE);
    ck_assert_int_eq(oa.e, 1);
    ck_assert_uint_eq(oa.sig, 0x9A0E2E);
    te_addend_from_opnd(&a, "acc", &oa);
    te_addend_from_opnd(&b, "x2", &ob);
    ck_assert_int_eq(a.last, 1 - 23);
    ck_assert(te_align(&a, &b, &al, why, sizeof why));
    ck_assert(!al.any_zero && !al.subtract && !al.swapped);
    ck_assert_int_eq(al.diff, 0);
    ck_assert_uint_eq(al.carry, 1);
    ck_assert_int_eq(al.norm, 1);
    ck_assert_int_eq(al.exp_result, 2);
    ck_assert_int_eq(al.n_shifted, 0);
    ck_assert(al.sum.sign);
    ck_assert_int_eq(xn_top(&al.sum), 2);
    mpq_init(q);
    xn_to_mpq(&al.sum, q);
    check_mpq(q, "-4.703990459442138671875");
    mpq_clear(q);
}
END_TEST

/* T1's final rounding: f32 0xC0968717 to BF16 (ulp 2^-5) in rne:
   1.0010110 | 1 | 0 | 00011100010111, guard 1, round 0, sticky 1; the
   discarded part is 0x8717 / 2^16 = 0.5276947021484375 ulp; up in
   magnitude to 0xC097 = -4.71875, error -0.014759540557861328125 =
   -0.4723052978515625 ulp. */
START_TEST(test_rounding_t1)
{
    static te_opnd o;
    static xnum x;
    static te_rounding r;
    te_capture c;
    sf_event_sink sink;
    sf_env env = capture_env(&c, &sink);
    te_ulp_bits u;
    char why[256], *str;
    uint64_t z;

    te_decode(&sf_format_f32, 0xC0968717, false, &o);
    te_opnd_value(&o, &x);
    z = sf_convert(&sf_format_bf16, &sf_format_f32, 0xC0968717, SF_RNE,
                   &env);
    ck_assert_uint_eq(z, 0xC097);
    ck_assert_int_eq(c.count, 1);
    ck_assert(te_rounding_setup(&r, "t1", &sf_format_bf16, SF_RNE, &c.ev,
                                &x, why, sizeof why));
    ck_assert(!r.special);
    ck_assert(te_ulp_bits_get(&r, &u, why, sizeof why));
    ck_assert_uint_eq(u.lsb, 0);
    ck_assert_uint_eq(u.g, 1);
    ck_assert_uint_eq(u.r, 0);
    ck_assert_uint_eq(u.s, 1);
    ck_assert_uint_eq(u.sr_f, UINT64_C(0x8717) << 48);
    ck_assert_int_eq(te_expected_dir(&r, &u), 1);
    str = te_rounding_str(&r, TE_V_DISCARDED);
    ck_assert_str_eq(str, "0.5276947021484375");
    free(str);
    str = te_rounding_str(&r, TE_V_ERROR);
    ck_assert_str_eq(str, "-0.014759540557861328125");
    free(str);
    str = te_rounding_str(&r, TE_V_ERROR_ULP);
    ck_assert_str_eq(str, "-0.4723052978515625");
    free(str);
    /* the rule of rtz on the same bits: down */
    r.mode = SF_RTZ;
    ck_assert_int_eq(te_expected_dir(&r, &u), -1);
    /* an exact value that is not the event's is refused */
    x.bit[0] ^= 1u;
    ck_assert(!te_rounding_setup(&r, "t1", &sf_format_bf16, SF_RNE, &c.ev,
                                 &x, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "differs from the rounding event"));
}
END_TEST

/* bf16 1.5 * 3: significands 0xC0 * 0xC0 = 0x9000, top bit 15 = 2 * 7 + 1
   (a carry-out); exponents 0 + 1, last weight 1 - 14 = -13, leading
   weight 2; the value 4.5. */
START_TEST(test_product)
{
    static te_opnd oa, ob;
    static te_addend p;
    static xnum sa, sb;
    int64_t top;
    mpq_t q;

    te_decode(&sf_format_bf16, 0x3FC0, false, &oa);
    te_decode(&sf_format_bf16, 0x4040, false, &ob);
    ck_assert(te_product(&oa, &ob, &p, &sa, &sb, &top));
    ck_assert_int_eq(top, 15);
    ck_assert_int_eq(p.last, -13);
    ck_assert_int_eq(p.lead, 2);
    ck_assert(!p.zero && !p.x.sign);
    mpq_init(q);
    xn_to_mpq(&p.x, q);
    check_mpq(q, "4.5");
    mpq_clear(q);
    /* a zero factor: a signed zero, no top bit */
    te_decode(&sf_format_bf16, 0x8000, false, &ob);
    ck_assert(te_product(&oa, &ob, &p, &sa, &sb, &top));
    ck_assert(p.zero && p.x.sign);
    ck_assert_int_eq(top, XN_NONE);
}
END_TEST

/* bf16 1 / 3: the event's window bounds 1/3 (v0 * 3 < 1 < v1 * 3); a
   window one unit lower does not. */
START_TEST(test_quotient)
{
    static te_opnd oa, ob;
    te_capture c;
    sf_event_sink sink;
    sf_env env = capture_env(&c, &sink);

    sf_div(&sf_format_bf16, 0x3F80, 0x4040, SF_RNE, &env);
    ck_assert_int_eq(c.count, 1);
    ck_assert(c.ev.exact.tail);
    te_decode(&sf_format_bf16, 0x3F80, false, &oa);
    te_decode(&sf_format_bf16, 0x4040, false, &ob);
    ck_assert_int_eq(te_check_quotient(&c.ev, &oa, &ob, false), 0);
    c.ev.exact.lo -= 2;
    ck_assert_int_eq(te_check_quotient(&c.ev, &oa, &ob, false), 1);
}
END_TEST

/* "0.1" and "0.2" read into f32 (rne): 0x3DCCCCCD = 13421773 * 2^-27 and
   0x3E4CCCCD = 13421773 * 2^-26; their sum 40265319 * 2^-27 =
   0.300000004470348358154296875, typed 0.3.  A bit pattern is its own
   value; an infinity has none. */
START_TEST(test_sums)
{
    static const uint64_t read[2] = {0x3DCCCCCD, 0x3E4CCCCD};
    te_typed typed[2] = {{"0.1", false, &sf_format_f32, 0x3DCCCCCD},
                         {"0.2", false, &sf_format_f32, 0x3E4CCCCD}};
    te_typed inf = {"bf16:0x7F80", true, &sf_format_bf16, 0x7F80};
    te_typed half = {"bf16:0x3F00", true, &sf_format_bf16, 0x3F00};
    mpq_t r, t;
    bool all_exact = true;

    mpq_inits(r, t, NULL);
    ck_assert(te_operand_sums(&sf_format_f32, 2, read, typed, r, t,
                              &all_exact));
    ck_assert(!all_exact);
    check_mpq(r, "0.300000004470348358154296875");
    check_mpq(t, "0.3");
    ck_assert(te_typed_value(&half, t));
    check_mpq(t, "0.5");
    ck_assert(!te_typed_value(&inf, t));
    mpq_clears(r, t, NULL);
}
END_TEST

static Suite *
trace_engine_suite(void)
{
    Suite *s = suite_create("trace_engine");
    TCase *tc = tst_add_tcase(s, "hand", 0);

    tcase_add_test(tc, test_align_t1);
    tcase_add_test(tc, test_rounding_t1);
    tcase_add_test(tc, test_product);
    tcase_add_test(tc, test_quotient);
    tcase_add_test(tc, test_sums);
    return s;
}

int
main(void)
{
    return tst_run_suite(trace_engine_suite());
}
