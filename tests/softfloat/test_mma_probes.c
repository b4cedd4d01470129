/* test_mma_probes.c -- directed probes of the accumulation models: the
   P1-P7 tensor-core feature probes for sm90 and sm80, special values,
   Arm BFDOT rules, the rounding events of a fused block */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"

#define K_MAX 64

/* One directed case: K BF16 products and an FP32 C through a preset. */
typedef struct
{
    const char *what;
    unsigned k;
    uint16_t a[K_MAX], b[K_MAX];
    uint32_t c;
    uint32_t expected;
} probe;

static uint32_t
run_probe(const sf_mma_model *m, const probe *p)
{
    sf_env env = SF_ENV_IEEE;
    return (uint32_t)sf_mma_dot(m, &sf_format_bf16, p->a, 1, &sf_format_bf16,
                                p->b, 1, p->k, p->c, &env);
}

/* Runs the N cases through preset NAME (or model M when NAME is NULL);
   returns the number of mismatches, printing each. */
static unsigned
run_table(const char *name, const sf_mma_model *m, const probe *cases,
          size_t n)
{
    unsigned bad = 0;

    if (name != NULL)
        m = sf_mma_preset_by_name(name);
    ck_assert_ptr_nonnull(m);
    for (size_t i = 0; i < n; i++) {
        uint32_t z = run_probe(m, &cases[i]);
        if (z != cases[i].expected) {
            bad++;
            printf("%s %s: c=%08x a[0..%u]=", m->name, cases[i].what,
                   (unsigned)cases[i].c, cases[i].k - 1);
            for (unsigned t = 0; t < cases[i].k && t < 4; t++)
                printf("%04x ", (unsigned)cases[i].a[t]);
            printf("b=");
            for (unsigned t = 0; t < cases[i].k && t < 4; t++)
                printf("%04x ", (unsigned)cases[i].b[t]);
            printf("expected %08x got %08x\n", (unsigned)cases[i].expected,
                   (unsigned)z);
        }
    }
    return bad;
}

/* BF16 constants */
#define ONE 0x3F80
#define TWO 0x4000
#define HALF 0x3F00
#define P2M24 0x3380       /* 2^-24 */
#define P2M23_P2M24 0x3440 /* 2^-23 + 2^-24 */
#define ONE_M8 0x3F7F      /* 1 - 2^-8 */
#define SUB_MIN 0x0001     /* 2^-133 */
#define P2P7 0x4300        /* 2^7 */

/* P1-P6 of the GPU notes' probe table (values computed there from the
   published models): the sm90 results, then the Ampere column for sm80. */
static const probe p1_p6_sm90[] = {
    {"P1 subnormal input", 1, {SUB_MIN}, {P2P7}, 0, 0x00800000},
    {"P2 exact product", 1, {ONE_M8}, {ONE_M8}, 0, 0x3F7E0100},
    {"P3 two extra bits",
     4,
     {HALF, HALF, HALF, HALF},
     {P2M24, P2M24, P2M24, P2M24},
     0x3F800000,
     0x3F800001},
    {"P4 RZ", 2, {ONE, ONE}, {TWO, P2M23_P2M24}, 0, 0x40000000},
    {"P4 RZ negated", 2, {0xBF80, 0xBF80}, {TWO, P2M23_P2M24}, 0, 0xC0000000},
    {"P5 guard bit", 1, {ONE}, {ONE}, 0xBF7FFFFF, 0x33800000},
    {"P6 two guard bits",
     3,
     {P2M24, P2M24, P2M24},
     {ONE, HALF, HALF},
     0x3F800000,
     0x3F800001},
};

#define N_P1_P6 (sizeof p1_p6_sm90 / sizeof p1_p6_sm90[0])

static const uint32_t p1_p6_sm80_expected[N_P1_P6] = {
    0x00800000, 0x3F7E0100, 0x3F800000, 0x40000000,
    0xC0000000, 0x33800000, 0x3F800000};

START_TEST(test_p1_p6)
{
    probe p1_p6_sm80[N_P1_P6];
    unsigned bad = run_table("sm90", NULL, p1_p6_sm90, N_P1_P6);

    bad += run_table("sm100", NULL, p1_p6_sm90, N_P1_P6);
    memcpy(p1_p6_sm80, p1_p6_sm90, sizeof p1_p6_sm80);
    for (size_t i = 0; i < N_P1_P6; i++)
        p1_p6_sm80[i].expected = p1_p6_sm80_expected[i];
    bad += run_table("sm80", NULL, p1_p6_sm80, N_P1_P6);
    ck_assert_msg(bad == 0, "%u probe mismatches", bad);
}
END_TEST

/* P7: 1*1 at index 0 and 2^-23*1 at index k-1 of a K=32 dot product, c =
   1 + 2^-23: 0x40000001 while both products share a block (k <= 16 on
   sm90, k <= 8 on sm80), else 0x40000000. */
START_TEST(test_p7)
{
    static const char *const names[2] = {"sm90", "sm80"};
    static const unsigned block[2] = {16, 8};
    unsigned bad = 0;

    for (unsigned w = 0; w < 2; w++) {
        for (unsigned k = 2; k <= 32; k++) {
            probe p;
            memset(&p, 0, sizeof p);
            p.what = "P7 block size";
            p.k = 32;
            p.a[0] = ONE;
            p.b[0] = ONE;
            p.a[k - 1] = 0x3400; /* 2^-23 */
            p.b[k - 1] = ONE;
            p.c = 0x3F800001;
            p.expected = k <= block[w] ? 0x40000001 : 0x40000000;
            if (run_table(names[w], NULL, &p, 1) != 0) {
                printf("  (k = %u)\n", k);
                bad++;
            }
        }
    }
    ck_assert_msg(bad == 0, "%u P7 mismatches", bad);
}
END_TEST

/* Specials and range of the NVIDIA presets (published-model behaviour,
   expectations worked out by hand). */
START_TEST(test_nvidia_specials)
{
    const probe cases[] = {
        {"NaN input", 2, {0x7FC1, ONE}, {ONE, ONE}, 0, 0x7FFFFFFF},
        {"NaN C", 1, {ONE}, {ONE}, 0xFFC00001, 0x7FFFFFFF},
        {"Inf - Inf", 2, {0x7F80, 0xFF80}, {ONE, ONE}, 0, 0x7FFFFFFF},
        {"Inf * 0", 1, {0x7F80}, {0}, 0, 0x7FFFFFFF},
        {"Inf", 2, {0xFF80, ONE}, {ONE, ONE}, 0x3F800000, 0xFF800000},
        {"overflow to Inf", 2, {0x7F7F, 0x7F7F}, {ONE, ONE}, 0, 0x7F800000},
        {"zero sum of -0",
         2,
         {0x8000, 0x8000},
         {ONE, ONE},
         0x80000000,
         0x00000000},
        {"cancellation", 2, {ONE, 0xBF80}, {ONE, ONE}, 0, 0x00000000},
        {"subnormal output", 1, {SUB_MIN}, {HALF}, 0, 0x00008000},
        /* three products 1.5*2^-151; Hopper ignores the zero C and clamps
           emax >= -133: exact 1.125 * 2^-149 -> RZ 2^-149 */
        {"tiny, emax floor -133",
         3,
         {0x19C0, 0x19C0, 0x19C0},
         {0x1A00, 0x1A00, 0x1A00},
         0,
         0x00000001},
        /* a negative sum that rounds to zero is +0 */
        {"tiny negative to +0", 1, {0x8001}, {0x3580}, 0, 0x00000000},
    };
    sf_mma_model zc_model, ieee_ovf;
    const probe zc_case[] = {
        /* with a zero C in the max (MMA-Sim) the grid is 2^-151 and each
           product loses its half: 0.75*2^-149 -> 0 */
        {"tiny, zero C in max",
         3,
         {0x19C0, 0x19C0, 0x19C0},
         {0x1A00, 0x1A00, 0x1A00},
         0,
         0x00000000},
    };
    const probe ieee_case[] = {
        {"overflow, IEEE RZ", 2, {0x7F7F, 0x7F7F}, {ONE, ONE}, 0, 0x7F7FFFFF},
    };
    unsigned bad =
        run_table("sm90", NULL, cases, sizeof cases / sizeof cases[0]);

    zc_model = *sf_mma_preset_by_name("sm90");
    zc_model.name = "sm90-zero-c";
    zc_model.zero_c_in_max = true;
    zc_model.emax_floor = SF_MMA_NO_FLOOR;
    bad += run_table(NULL, &zc_model, zc_case, 1);
    ieee_ovf = *sf_mma_preset_by_name("sm90");
    ieee_ovf.name = "sm90-ovf-ieee";
    ieee_ovf.overflow = SF_MMA_OVF_IEEE;
    bad += run_table(NULL, &ieee_ovf, ieee_case, 1);
    ck_assert_msg(bad == 0, "%u mismatches", bad);
}
END_TEST

/* Arm BFDOT with FEAT_EBF16 off: products and sums rounded to odd, FZ and
   FIZ, default NaN, overflow to Inf (expectations from those rules). */
START_TEST(test_arm_bfdot)
{
    const probe cases[] = {
        /* 1 + 2^-24 is a tie: round to odd gives 1 + 2^-23 */
        {"odd sum of products", 2, {ONE, P2M24}, {ONE, ONE}, 0, 0x3F800001},
        /* two roundings: (1 + 2^-24 -> 1 + 2^-23) - 1 = 2^-23 */
        {"unfused", 2, {ONE, P2M24}, {ONE, ONE}, 0xBF800000, 0x34000000},
        {"odd accumulation", 2, {P2M24, 0}, {ONE, 0}, 0x3F800000, 0x3F800001},
        {"exact stays even", 2, {0x3480, 0}, {ONE, 0}, 0x3F800000, 0x3F800002},
        {"denormal input", 2, {SUB_MIN, 0}, {ONE, 0}, 0x00000001, 0x00000000},
        {"denormal product flushed, sign kept",
         2,
         {0x8080, 0x8000},
         {HALF, ONE},
         0x80000000,
         0x80000000},
        {"default NaN", 2, {0x7FC1, ONE}, {ONE, ONE}, 0x3F800000, 0x7FC00000},
        {"default NaN from C",
         2,
         {ONE, ONE},
         {ONE, ONE},
         0xFFC00123,
         0x7FC00000},
        {"Inf - Inf", 2, {0x7F80, 0xFF80}, {ONE, ONE}, 0, 0x7FC00000},
        {"product overflow", 2, {0x7F7F, 0}, {0x7F7F, 0}, 0, 0x7F800000},
        {"sum overflow", 2, {0x7F7F, 0x7F7F}, {ONE, ONE}, 0, 0x7F800000},
        {"negative overflow", 2, {0xFF7F, 0xFF7F}, {ONE, ONE}, 0, 0xFF800000},
    };
    const probe ebf[] = {
        /* fused pair 1 + 2^-24 rounds (RNE) to 1, then + (-1) = +0 */
        {"fused pair", 2, {ONE, P2M24}, {ONE, ONE}, 0xBF800000, 0x00000000},
        {"fused pair odd",
         2,
         {ONE, 0x3390},
         {ONE, ONE},
         0x00000000,
         0x3F800001}, /* 1 + 1.125*2^-24 -> 1 + 2^-23 */
        {"default NaN", 2, {0x7FC1, ONE}, {ONE, ONE}, 0x3F800000, 0x7FC00000},
    };
    unsigned bad =
        run_table("arm-bfdot", NULL, cases, sizeof cases / sizeof cases[0]);
    bad += run_table("arm-ebf16", NULL, ebf, sizeof ebf / sizeof ebf[0]);
    ck_assert_msg(bad == 0, "%u mismatches", bad);
}
END_TEST

/* Sequential and compensated models on small hand-checked sums. */
/* Zero sums under IEEE zero rules and round-down: zeros of one sign keep
   that sign, mixed zeros and exact cancellation give -0 (as sf_fma and
   sf_add do), whatever the model's kind.  (Kahan's summation is left out:
   its compensation step computes +0 - +0 = -0 under round-down, so its
   IEEE result for +0 terms is -0.) */
START_TEST(test_zero_sign_rdn)
{
    static const char *const kinds[] = {"fma-chain", "mul-add", "exact",
                                        "pairwise", "amx"};
    static const struct
    {
        uint16_t a, b;
        uint32_t c, want;
    } cases[] = {
        {0x0000, 0x3F80, 0x00000000, 0x00000000}, /* +0*1 + +0 */
        {0x8000, 0x3F80, 0x80000000, 0x80000000}, /* -0*1 + -0 */
        {0x8000, 0x3F80, 0x00000000, 0x80000000}, /* -0*1 + +0 */
        {0x3F80, 0xBF80, 0x3F800000, 0x80000000}, /* 1*-1 + 1 */
    };
    unsigned bad = 0;

    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const sf_mma_model *base = sf_mma_preset_by_name(kinds[i]);
        ck_assert_ptr_nonnull(base);
        sf_mma_model m = *base;
        m.rm = SF_RDN;
        m.zero = SF_MMA_ZERO_IEEE;
        m.daz = m.ftz = false;
        for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
            uint64_t a = cases[j].a, b = cases[j].b;
            sf_env env = SF_ENV_IEEE;
            uint64_t d = sf_mma_block(&m, &sf_format_bf16, &a, &sf_format_bf16,
                                      &b, 1, cases[j].c, &env);
            if ((uint32_t)d != cases[j].want) {
                printf("%s rdn: a %04x b %04x c %08x: got %08x, want "
                       "%08x\n",
                       kinds[i], cases[j].a, cases[j].b, cases[j].c,
                       (unsigned)d, cases[j].want);
                bad++;
            }
        }
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_sequential)
{
    /* 1 + 2^-24 + 2^-24: a chain rounds each step (RNE ties to 1), the
       exact sum is 1 + 2^-23; Kahan recovers it; pairwise adds the two
       small terms first. */
    const probe three = {"1 + 2^-24 + 2^-24", 3, {ONE, P2M24, P2M24},
                         {ONE, ONE, ONE},     0, 0};
    static const struct
    {
        const char *name;
        uint32_t expected;
    } want[] = {
        {"fma-chain", 0x3F800000}, {"mul-add", 0x3F800000},
        {"exact", 0x3F800001},     {"kahan", 0x3F800001},
        {"pairwise", 0x3F800000},  {"fma-chain-bf16acc", 0x3F800000},
    };
    /* pairwise over 4: (1 + 2^-24) + (2^-24 + 2^-24) = 1 + 2^-23 */
    const probe four = {
        "1 + 3 * 2^-24 pairwise", 4, {ONE, P2M24, P2M24, P2M24},
        {ONE, ONE, ONE, ONE},     0, 0};
    unsigned bad = 0;

    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        probe p = three;
        p.expected = want[i].expected;
        bad += run_table(want[i].name, NULL, &p, 1);
    }
    {
        probe p = four;
        p.expected = 0x3F800001; /* (1 + 2^-24 -> 1) + 2^-23 */
        bad += run_table("pairwise", NULL, &p, 1);
    }
    {
        /* BF16-stored accumulator: 1 + 2^-8 rounds (RNE, tie) to 1 */
        probe p = {"bf16 store", 2, {ONE, 0x3B80}, {ONE, ONE}, 0, 0x3F800000};
        bad += run_table("fma-chain-bf16acc", NULL, &p, 1);
        p.expected = 0x3F808000;
        bad += run_table("fma-chain", NULL, &p, 1);
    }
    ck_assert_msg(bad == 0, "%u mismatches", bad);
}
END_TEST

/* Events of P3 on sm80: four alignment events (each 2^-25 truncated to 0
   on the grid 2^-24), then one block rounding. */
typedef struct
{
    unsigned align, block, other;
    bool align_ok;
} ev_count;

static void
count_event(void *user, const sf_event *ev)
{
    ev_count *n = user;

    if (ev->op == SF_OP_MMA_ALIGN) {
        n->align++;
        if (!(ev->fmt == NULL && ev->ulp_exp == -24 && ev->result == 0
              && ev->dir == -1 && ev->guard == 1 && ev->round == 0
              && ev->sticky == 0 && ev->in[2] == n->align - 1))
            n->align_ok = false;
    } else if (ev->op == SF_OP_MMA_BLOCK) {
        n->block++;
    } else {
        n->other++;
    }
}

START_TEST(test_events)
{
    uint64_t a[4] = {HALF, HALF, HALF, HALF};
    uint64_t b[4] = {P2M24, P2M24, P2M24, P2M24};
    ev_count n = {0, 0, 0, true};
    sf_event_sink sink = {count_event, &n};
    sf_env env = SF_ENV_IEEE;
    uint64_t z;

    env.events = &sink;
    z = sf_mma_block(sf_mma_preset_by_name("sm80"), &sf_format_bf16, a,
                     &sf_format_bf16, b, 4, 0x3F800000, &env);
    ck_assert_uint_eq(z, 0x3F800000);
    ck_assert_uint_eq(n.align, 4);
    ck_assert_uint_eq(n.block, 1);
    ck_assert_uint_eq(n.other, 0);
    ck_assert_msg(n.align_ok, "alignment event fields");
    ck_assert_msg(env.flags & SF_FLAG_INEXACT, "inexact not raised");
    ck_assert_msg(env.events == &sink && !env.daz && !env.ftz,
                  "env not restored");
}
END_TEST

START_TEST(test_presets)
{
    static const char *const contract[] = {
        "sm70", "sm80",      "sm90",      "sm100",     "avx512bf16",
        "amx",  "arm-bfdot", "arm-ebf16", "fma-chain", "exact"};
    unsigned bad = 0;

    for (size_t i = 0; i < sizeof contract / sizeof contract[0]; i++)
        if (sf_mma_preset_by_name(contract[i]) == NULL) {
            printf("missing preset %s\n", contract[i]);
            bad++;
        }
    for (size_t i = 0; i < sf_mma_preset_count(); i++) {
        const char *why = sf_mma_model_check(sf_mma_preset(i));
        if (why != NULL) {
            printf("preset %s: %s\n", sf_mma_preset(i)->name, why);
            bad++;
        }
    }
    ck_assert_ptr_null(sf_mma_preset_by_name("sm91"));
    ck_assert_str_eq(sf_mma_preset_for("sm90", &sf_format_e4m3)->name,
                     "sm90-fp8");
    ck_assert_str_eq(sf_mma_preset_for("sm90", &sf_format_tf32)->name,
                     "sm90-tf32");
    ck_assert_str_eq(sf_mma_preset_for("sm90", &sf_format_bf16)->name, "sm90");
    ck_assert_ptr_null(sf_mma_preset_for("sm70", &sf_format_bf16));
    ck_assert_msg(bad == 0, "%u preset problems", bad);
}
END_TEST

/* The TF32 and FP8 variants of sm90, by hand: with F = 13 the FP8 model
   drops a C of 2^-14 next to products of 1 (F = 25 would keep it). */
START_TEST(test_other_inputs)
{
    const sf_mma_model *fp8 = sf_mma_preset_for("sm90", &sf_format_e4m3);
    const sf_mma_model *tf32 = sf_mma_preset_for("sm90", &sf_format_tf32);
    uint8_t a8[32], b8[32];
    uint32_t at[1] = {0x3F802000}, bt[1] = {0x3F802000};
    sf_env env = SF_ENV_NVIDIA;

    memset(a8, 0x38, sizeof a8); /* e4m3 1.0 */
    memset(b8, 0x38, sizeof b8);
    ck_assert_uint_eq(sf_mma_dot(fp8, &sf_format_e4m3, a8, 1, &sf_format_e4m3,
                                 b8, 1, 32, 0x38800000, &env),
                      0x42000000);
    ck_assert_uint_eq(sf_mma_dot(sf_mma_preset_by_name("sm90"),
                                 &sf_format_e4m3, a8, 1, &sf_format_e4m3, b8,
                                 1, 32, 0x38800000, &env),
                      0x42000010);
    /* (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20, exact in FP32 */
    ck_assert_uint_eq(sf_mma_dot(tf32, &sf_format_tf32, at, 1, &sf_format_tf32,
                                 bt, 1, 1, 0, &env),
                      0x3F804008);
}
END_TEST

static Suite *
probes_suite(void)
{
    Suite *s = suite_create("mma_probes");
    TCase *tc = tst_add_tcase(s, "directed", 0);

    tcase_add_test(tc, test_presets);
    tcase_add_test(tc, test_p1_p6);
    tcase_add_test(tc, test_p7);
    tcase_add_test(tc, test_nvidia_specials);
    tcase_add_test(tc, test_arm_bfdot);
    tcase_add_test(tc, test_sequential);
    tcase_add_test(tc, test_zero_sign_rdn);
    tcase_add_test(tc, test_events);
    tcase_add_test(tc, test_other_inputs);
    return s;
}

int
main(void)
{
    return tst_run_suite(probes_suite());
}
