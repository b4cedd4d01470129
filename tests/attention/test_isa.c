/* test_isa.c -- the forward and the backward give the same bits and flags
   on every instruction-set path the CPU has (env.isa: portable C, AVX2,
   AVX-512) as on the portable one: every policy, random and adversarial
   inputs (exact ties of the row max, an attention sink, infinities and
   NaNs), causal with Nq != Nk, split-KV, decode steps (Nk ragged,
   specials, FP16), FP16 inputs, ragged tiles, the flex description; the
   portable forward with an event sink as without one */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "softfloat/softfloat.h"
#include "tests/attention/fa_test.h"
#include "tests/support/suite.h"

/* How the inputs of a case are made. */
typedef enum
{
    GEN_RANDOM,  /* uniform Q, K in (-2, 2), normal V */
    GEN_TIES,    /* small integers: many exact ties of the row max, P~ = 1
                    several times per row and block */
    GEN_SINK,    /* key 0 a strong sink, the other scores far below */
    GEN_SPECIAL, /* random with a few Inf, NaN, huge and subnormal
                    elements */
    GEN_RANGE,   /* random with one element in about 3000 tiny,
                    subnormal or zero (in V also huge) */
} gen_kind;

/* Options of a case. */
enum
{
    BWD = 1,    /* the backward too (BF16 inputs only) */
    CAUSAL = 2, /* causal, bottom-right aligned */
    F16 = 4,    /* FP16 inputs */
    FLEX = 8,   /* the flex description in place of the policy's */
    BC = BWD | CAUSAL,
    FC = F16 | CAUSAL
};

typedef struct
{
    const char *name;
    fa_policy policy;
    fa_shape shape;
    size_t splits; /* 0: none */
    gen_kind gen;
    unsigned opt; /* BWD, CAUSAL, F16, FLEX */
} isa_case;

/* Element I of a BF16 or FP16 (F16) input from the double X. */
static uint16_t
in_bits(double x, bool f16)
{
    sf_env env = SF_ENV_IEEE;

    if (!f16)
        return ft_bf16(x);
    return sf_f32_to_f16((sf_f32){ft_f32_bits(x)}, SF_RNE, &env).bits;
}

/* The inputs of role 'q', 'k' or 'v' (N elements, rows of ROWLEN). */
static void
fill(const isa_case *c, tst_rng *rng, uint16_t *x, size_t n, size_t rowlen,
     char role)
{
    bool is_v = role == 'v';

    for (size_t i = 0; i < n; i++) {
        double u = ft_unit(rng);
        double val;
        switch (c->gen) {
        case GEN_TIES:
            val = is_v ? (double)tst_rand_below(rng, 9) - 4.0
                       : (double)tst_rand_below(rng, 3) - 1.0;
            break;
        case GEN_SINK:
            /* every query near +1 in its first dimension, every 97th key
               (key 0 first) 8 there: scores of about 8 against |s| < 1 */
            if (!is_v && i % rowlen == 0)
                val = role == 'q'              ? 1 + 0.25 * u
                      : (i / rowlen) % 97 == 0 ? 8.0
                                               : 0.5 * u - 0.25;
            else
                val = is_v ? 4 * u - 2 : 0.5 * u - 0.25;
            break;
        default:
            val = is_v ? 6 * u - 3 : 4 * u - 2;
            break;
        }
        x[i] = in_bits(val, (c->opt & F16) != 0);
    }
    if (c->gen == GEN_RANGE)
        /* tiny and subnormal (huge ones only in V: in Q or K one score
           would take the whole softmax) */
        for (size_t t = 0; t < n / 3000 + 1; t++) {
            static const uint16_t sp[] = {0x0800, 0x8001, 0x1F80,
                                          0x0000, 0x6000, 0xE100};
            x[tst_rand_below(rng, n)] = sp[tst_rand_below(rng, is_v ? 6 : 4)];
        }
    if (c->gen == GEN_SPECIAL && !(c->opt & F16))
        for (size_t t = 0; t < n / 97 + 1; t++) {
            static const uint16_t sp[] = {0x7F80, 0xFF80, 0x7FC1, 0x7F7F,
                                          0xFF7F, 0x0001, 0x8040, 0x0000};
            x[tst_rand_below(rng, n)] = sp[tst_rand_below(rng, 8)];
        }
}

/* Counts differing elements of A and B (N of them), printing the first
   few as "case isa what[index] got hex want hex". */
static size_t
diff(const char *cname, const char *isa, const char *what, const uint32_t *got,
     const uint32_t *want, size_t n)
{
    size_t bad = 0;

    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 4)
            printf("%s %s %s[%zu] got %08X want %08X\n", cname, isa, what, i,
                   (unsigned)got[i], (unsigned)want[i]);
    return bad;
}

typedef struct
{
    uint32_t *o, *lse, *delta, *dq, *dk, *dv;
    uint32_t fflags, bflags; /* the flags of each pass */
} isa_out;

static void
out_alloc(isa_out *r, const fa_config *cfg)
{
    r->o = ft_alloc(ft_nq_d(cfg), 4);
    r->lse = ft_alloc(ft_rows(cfg), 4);
    r->delta = ft_alloc(ft_rows(cfg), 4);
    r->dq = ft_alloc(ft_nq_d(cfg), 4);
    r->dk = ft_alloc(ft_nk_d(cfg), 4);
    r->dv = ft_alloc(ft_nk_d(cfg), 4);
}

static void
out_free(isa_out *r)
{
    FT_FREE(r->o, r->lse, r->delta, r->dq, r->dk, r->dv);
}

/* The forward (and backward) of C under path ISA.  The backward takes the
   portable forward's O and LSE (REF; NULL: this run's own). */
static void
run_isa(const isa_case *c, const fa_config *cfg, const uint16_t *q,
        const uint16_t *k, const uint16_t *v, const uint16_t *dout, sf_isa isa,
        const isa_out *ref, isa_out *r)
{
    sf_env env = SF_ENV_IEEE;

    env.isa = (int)isa;
    ck_assert_int_eq(fa_forward(cfg, q, k, v, r->o, r->lse, NULL, &env), 0);
    r->fflags = (uint32_t)env.flags;
    if (!(c->opt & BWD))
        return;
    {
        sf_env benv = SF_ENV_IEEE;
        benv.isa = (int)isa;
        ck_assert_int_eq(fa_backward(cfg, q, k, v, ref != NULL ? ref->o : r->o,
                                     ref != NULL ? ref->lse : r->lse, dout,
                                     r->delta, r->dq, r->dk, r->dv, NULL,
                                     &benv),
                         0);
        r->bflags = (uint32_t)benv.flags;
    }
}

static const isa_case cases[] = {
    {"fa2-random", FA_POLICY_FA2, {1, 2, 150, 300, 64}, 0, GEN_RANDOM, BWD},
    {"fa2-ties", FA_POLICY_FA2, {1, 1, 96, 256, 64}, 0, GEN_TIES, BWD},
    {"fa2-sink", FA_POLICY_FA2, {1, 1, 130, 200, 128}, 0, GEN_SINK, BWD},
    {"fa2-special", FA_POLICY_FA2, {1, 1, 70, 90, 64}, 0, GEN_SPECIAL, BWD},
    {"fa2-causal", FA_POLICY_FA2, {2, 1, 99, 260, 128}, 0, GEN_RANDOM, BC},
    {"fa2-split", FA_POLICY_FA2, {1, 2, 64, 700, 64}, 3, GEN_RANDOM, 0},
    {"fa2-split-c", FA_POLICY_FA2, {1, 1, 40, 600, 128}, 4, GEN_TIES, CAUSAL},
    {"fa2-decode", FA_POLICY_FA2, {1, 3, 1, 1000, 128}, 0, GEN_RANDOM, BWD},
    /* one query row: the GEMMs of one row (B decoded by the kernel), Nk
       not a multiple of the key block, Inf and NaN in the blocks, FP16,
       ties; a few causal rows take the one-row P~V of partly masked
       blocks */
    {"fa2-decode-sp", FA_POLICY_FA2, {1, 2, 1, 333, 128}, 0, GEN_SPECIAL, BWD},
    /* the one-row GEMMs on the host's binary32 unit: K's rows read
       directly, d = 64, 128, 256, Nk not a multiple of 16; elements
       outside that path's range in a few blocks */
    {"fa2-dec-d64", FA_POLICY_FA2, {1, 2, 1, 1001, 64}, 0, GEN_RANDOM, 0},
    {"fa2-dec-d256", FA_POLICY_FA2, {1, 2, 1, 203, 256}, 0, GEN_RANDOM, 0},
    {"fa2-dec-range", FA_POLICY_FA2, {1, 3, 1, 777, 128}, 0, GEN_RANGE, 0},
    {"fa2-dec-r64", FA_POLICY_FA2, {1, 2, 1, 250, 64}, 0, GEN_RANGE, 0},
    {"fa2-dec-f16", FA_POLICY_FA2, {1, 2, 1, 1000, 128}, 0, GEN_RANDOM, F16},
    {"fa2-decode-ties", FA_POLICY_FA2, {1, 1, 1, 517, 64}, 0, GEN_TIES, BWD},
    {"fa2-few-causal", FA_POLICY_FA2, {1, 2, 5, 333, 128}, 0, GEN_RANDOM, BC},
    {"fa2-f16", FA_POLICY_FA2, {1, 1, 100, 200, 64}, 0, GEN_RANDOM, F16},
    {"fa2-f16-ties", FA_POLICY_FA2, {1, 1, 64, 160, 64}, 0, GEN_TIES, FC},
    {"fp32-random", FA_POLICY_FP32, {1, 1, 70, 130, 32}, 0, GEN_RANDOM, BC},
    {"eq4-ties", FA_POLICY_PAPER_EQ4, {1, 1, 64, 100, 32}, 0, GEN_TIES, BWD},
    {"repo-sink", FA_POLICY_REPO, {1, 1, 60, 120, 32}, 0, GEN_SINK, BC},
    /* flex: without events a row's scores are scaled through the array
       product, -0 and NaN mended after it; with events one at a time
       (Inf and NaN scores, ties, causal, FP16, decode) */
    {"flex-special", FA_POLICY_FA2, {1, 1, 70, 300, 64}, 0, GEN_SPECIAL,
     FLEX | BWD},
    {"flex-ties-c", FA_POLICY_FA2, {1, 2, 130, 260, 64}, 0, GEN_TIES,
     FLEX | BC},
    {"flex-f16", FA_POLICY_FA2, {1, 1, 100, 200, 128}, 0, GEN_RANGE,
     FLEX | F16},
    {"flex-dec-sp", FA_POLICY_FA2, {1, 2, 1, 333, 64}, 0, GEN_SPECIAL, FLEX},
};

/* An event sink that counts the events. */
static void
count_event(void *user, const sf_event *ev)
{
    (void)ev;
    (*(size_t *)user)++;
}

START_TEST(test_paths)
{
    const isa_case *c = &cases[_i];
    fa_config cfg = fa_config_default(c->policy);
    tst_rng rng;
    uint16_t *q, *k, *v, *dout;
    isa_out ref, got;
    size_t bad = 0, paths = 0;

    if (c->opt & FLEX)
        cfg.kernel = fa_kernel_by_name("flex");
    ck_assert_msg(cfg.kernel != NULL, "%s: no kernel", c->name);
    cfg.shape = c->shape;
    cfg.causal = (c->opt & CAUSAL) != 0;
    cfg.splits = c->splits;
    if (c->opt & F16)
        cfg.input = &sf_format_f16;
    if (c->gen == GEN_TIES && c->policy == FA_POLICY_FA2
        && !(c->opt & (F16 | FLEX)))
        cfg.fix = fa_fix_default(FA_FIX_BETA);
    ck_assert_msg(fa_config_check(&cfg) == NULL, "%s: %s", c->name,
                  fa_config_check(&cfg));
    tst_rng_init(&rng, 0x15A0 + (uint64_t)_i);
    q = ft_alloc(ft_nq_d(&cfg), 2);
    k = ft_alloc(ft_nk_d(&cfg), 2);
    v = ft_alloc(ft_nk_d(&cfg), 2);
    dout = ft_alloc(ft_nq_d(&cfg), 2);
    fill(c, &rng, q, ft_nq_d(&cfg), c->shape.d, 'q');
    fill(c, &rng, k, ft_nk_d(&cfg), c->shape.d, 'k');
    fill(c, &rng, v, ft_nk_d(&cfg), c->shape.d, 'v');
    for (size_t i = 0; i < ft_nq_d(&cfg); i++)
        dout[i] = ft_bf16(2 * ft_unit(&rng) - 1);
    out_alloc(&ref, &cfg);
    out_alloc(&got, &cfg);
    run_isa(c, &cfg, q, k, v, dout, SF_ISA_SCALAR, NULL, &ref);
    {
        /* with an event sink the softmax keeps the order of one key at a
           time (without one it takes a row's exps in one loop): the same
           O, LSE and flags */
        size_t nev = 0;
        sf_event_sink sink = {count_event, &nev};
        sf_env env = SF_ENV_IEEE;
        env.isa = SF_ISA_SCALAR;
        env.events = &sink;
        ck_assert_int_eq(fa_forward(&cfg, q, k, v, got.o, got.lse, NULL, &env),
                         0);
        got.fflags = (uint32_t)env.flags;
        ck_assert(nev > 0);
        bad += diff(c->name, "events", "o", got.o, ref.o, ft_nq_d(&cfg));
        bad += diff(c->name, "events", "lse", got.lse, ref.lse, ft_rows(&cfg));
        bad += diff(c->name, "events", "forward flags", &got.fflags,
                    &ref.fflags, 1);
    }
    for (int isa = SF_ISA_SCALAR + 1; isa < SF_N_ISA; isa++) {
        const char *name = sf_isa_name((sf_isa)isa);
        if (!sf_isa_supported((sf_isa)isa))
            continue;
        paths++;
        run_isa(c, &cfg, q, k, v, dout, (sf_isa)isa, &ref, &got);
        bad += diff(c->name, name, "o", got.o, ref.o, ft_nq_d(&cfg));
        bad += diff(c->name, name, "lse", got.lse, ref.lse, ft_rows(&cfg));
        bad +=
            diff(c->name, name, "forward flags", &got.fflags, &ref.fflags, 1);
        if (!(c->opt & BWD))
            continue;
        bad +=
            diff(c->name, name, "delta", got.delta, ref.delta, ft_rows(&cfg));
        bad += diff(c->name, name, "dq", got.dq, ref.dq, ft_nq_d(&cfg));
        bad += diff(c->name, name, "dk", got.dk, ref.dk, ft_nk_d(&cfg));
        bad += diff(c->name, name, "dv", got.dv, ref.dv, ft_nk_d(&cfg));
        bad +=
            diff(c->name, name, "backward flags", &got.bflags, &ref.bflags, 1);
    }
    if (paths == 0)
        printf("%s: no vector path on this CPU, nothing to compare\n",
               c->name);
    ck_assert_msg(bad == 0,
                  "%s: %zu elements differ from the portable path without "
                  "events",
                  c->name, bad);
    out_free(&ref);
    out_free(&got);
    free(q);
    free(k);
    free(v);
    free(dout);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_isa");
    TCase *tc = tst_add_tcase(s, "isa", 120);

    tcase_add_loop_test(tc, test_paths, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    return tst_run_suite(s);
}
