/* test_fast.c -- the fast paths of softfloat/s_fast.h (add, sub, mul, fma
   of BF16, FP16 and FP32, FP32 -> BF16 conversion) and the AVX-512 path of
   sf_convert_array, bit for bit against the generic operations, flags and
   SR counter included, on random, structured and edge operands in every
   mode under several environments */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "tests/support/pathcheck.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

static const sf_format *const fmts[6] = {&sf_format_bf16, &sf_format_f16,
                                         &sf_format_f32,  &sf_format_tf32,
                                         &sf_format_e4m3, &sf_format_e5m2};

/* The typed operation (the wrappers inline the fast paths). */
static uint64_t
typed_op(const sf_format *f, int op, uint64_t a, uint64_t b, uint64_t c,
         sf_round rm, sf_env *env)
{
#define TYPED(fmt, T, W)                                                      \
    if (f == &sf_format_##fmt) {                                              \
        T x = {(W)a}, y = {(W)b}, z = {(W)c};                                 \
        switch (op) {                                                         \
        case TST_OP_ADD:                                                      \
            return sf_##fmt##_add(x, y, rm, env).bits;                        \
        case TST_OP_SUB:                                                      \
            return sf_##fmt##_sub(x, y, rm, env).bits;                        \
        case TST_OP_MUL:                                                      \
            return sf_##fmt##_mul(x, y, rm, env).bits;                        \
        default:                                                              \
            return sf_##fmt##_fma(x, y, z, rm, env).bits;                     \
        }                                                                     \
    }
    TYPED(bf16, sf_bf16, uint16_t)
    TYPED(f16, sf_f16, uint16_t)
    TYPED(f32, sf_f32, uint32_t)
    TYPED(tf32, sf_tf32, uint32_t)
    TYPED(e4m3, sf_e4m3, uint8_t)
    TYPED(e5m2, sf_e5m2, uint8_t)
#undef TYPED
    return 0;
}

static unsigned long n_checked, n_failed;

static void
report(const char *what, const sf_format *f, sf_round rm, const uint64_t *in,
       unsigned n_in, uint64_t want, unsigned fw, uint64_t got, unsigned fg,
       int env_i)
{
    if (n_failed++ < TST_MAX_PRINT) {
        printf("fast path differs (%s, env %d):\n", what, env_i);
        tst_print_case(what, f, rm, in, n_in, want, fw, got, fg);
    }
}

/* One operation through the typed wrapper and the generic entry (both
   may take the fast path) against the generic path. */
static void
check_op(const sf_format *f, int op, uint64_t a, uint64_t b, uint64_t c,
         tst_rng *rng)
{
    uint64_t in[3] = {a, b, c};
    unsigned n_in = op == TST_OP_FMA ? 3 : 2;

    for (int k = 0; k < TST_N_ENVS; k++) {
        for (int m = 0; m < 7; m++) {
            sf_env ref = tst_env_at(k), t, g;
            uint64_t want, got_t, got_g;
            ref.flags = (unsigned)tst_rand64(rng) & 31;
            ref.sr_seed = 99;
            t = g = ref;
            ref.events = &tst_quiet;
            want = tst_generic_op(f, op, a, b, c, tst_modes[m], &ref);
            got_t = typed_op(f, op, a, b, c, tst_modes[m], &t);
            got_g = tst_generic_op(f, op, a, b, c, tst_modes[m], &g);
            n_checked += 2;
            if (got_t != want || t.flags != ref.flags
                || t.sr_counter != ref.sr_counter)
                report(tst_op_names[op], f, tst_modes[m], in, n_in, want,
                       ref.flags, got_t, t.flags, k);
            if (got_g != want || g.flags != ref.flags
                || g.sr_counter != ref.sr_counter)
                report(tst_op_names[op], f, tst_modes[m], in, n_in, want,
                       ref.flags, got_g, g.flags, k);
        }
    }
}

/*----------------------------------------------------------------------------
 * Operands.
 *--------------------------------------------------------------------------*/
static uint64_t
pack(const sf_format *f, bool sign, uint64_t field, uint64_t frac)
{
    unsigned fb = f->frac_bits + f->pad_bits;

    return (sign ? f->sign_mask : 0) | ((field << fb) & f->exp_mask)
           | ((frac << f->pad_bits) & f->frac_mask);
}

static uint64_t
field_of(const sf_format *f, uint64_t a)
{
    return (a & f->exp_mask) >> (f->frac_bits + f->pad_bits);
}

static uint64_t
all_ones_field(const sf_format *f)
{
    return ((uint64_t)1 << f->exp_bits) - 1;
}

/* A field in [1, all ones - 1] within SPREAD of CENTER (clamped), or
   anything at random with probability 1/16 (zero, subnormal, Inf, NaN). */
static uint64_t
field_near(const sf_format *f, tst_rng *rng, int64_t center, int spread)
{
    int64_t top = (int64_t)all_ones_field(f) - 1, e;

    if (tst_rand_below(rng, 16) == 0)
        return tst_rand_below(rng, all_ones_field(f) + 1);
    e = center + (int64_t)tst_rand_below(rng, 2 * (uint64_t)spread + 1)
        - spread;
    return (uint64_t)(e < 1 ? 1 : e > top ? top : e);
}

static uint64_t
rand_value(const sf_format *f, tst_rng *rng, int64_t center, int spread)
{
    return pack(f, tst_rand64(rng) & 1, field_near(f, rng, center, spread),
                tst_rand_frac(f, rng));
}

/* The operands of one case of kind KIND. */
static void
make_case(const sf_format *f, int op, int kind, tst_rng *rng, uint64_t *a,
          uint64_t *b, uint64_t *c)
{
    int64_t emax = (int64_t)all_ones_field(f) - 1;
    int64_t bias = f->bias, ea;
    int fb = (int)f->frac_bits;
    uint64_t ones = (((uint64_t)1 << f->storage_bits) - 1);

    switch (kind) {
    case 0: /* any bits */
        *a = tst_rand64(rng) & ones;
        *b = tst_rand64(rng) & ones;
        *c = tst_rand64(rng) & ones;
        return;
    case 1: /* close exponents: alignment, cancellation, carries, ties */
        *a = rand_value(f, rng,
                        (int64_t)tst_rand_below(rng, (uint64_t)emax) + 1, 0);
        ea = (int64_t)field_of(f, *a);
        *b = rand_value(f, rng, op == TST_OP_MUL ? bias : ea, fb + 4);
        *c = rand_value(f, rng, ea, fb + 4);
        break;
    case 2: /* far exponents: the jammed operand, around the window */
        *a = rand_value(f, rng, emax / 2 + 1, (int)emax / 2);
        ea = (int64_t)field_of(f, *a);
        *b = rand_value(f, rng, ea - (int64_t)tst_rand_below(rng, 70), 0);
        *c = rand_value(f, rng, ea - (int64_t)tst_rand_below(rng, 70), 0);
        if (tst_rand64(rng) & 1) {
            uint64_t t = *a;
            *a = *b;
            *b = t;
        }
        break;
    case 3: /* near overflow */
        *a = rand_value(f, rng, emax, 2);
        *b = rand_value(f, rng,
                        op == TST_OP_MUL || op == TST_OP_FMA ? bias : emax,
                        op == TST_OP_ADD || op == TST_OP_SUB ? 3 : 2);
        *c = rand_value(f, rng, emax, 3);
        break;
    case 4: /* near the normal range's bottom and below */
        *a = rand_value(f, rng, 1, 3);
        *b = rand_value(f, rng,
                        op == TST_OP_MUL || op == TST_OP_FMA ? bias : 1, 3);
        *c = rand_value(f, rng, 1, 3);
        if (op == TST_OP_MUL || op == TST_OP_FMA) /* products around 2^emin */
            *a = rand_value(f, rng, (int64_t)tst_rand_below(rng, 8) + 1, 0);
        break;
    default: { /* exact and near cancellation: b = -(a + small), c = -ab */
        sf_env e = SF_ENV_IEEE;
        *a = rand_value(f, rng, emax / 2, (int)emax / 2 - 1);
        *b = *a ^ f->sign_mask;
        if (tst_rand64(rng) & 1)
            *b += (tst_rand_below(rng, 5) << f->pad_bits);
        *c = sf_mul(f, *a, *b, (sf_round)tst_rand_below(rng, 6), &e)
             ^ f->sign_mask;
        if (op == TST_OP_FMA && (tst_rand64(rng) & 1))
            *c += (tst_rand_below(rng, 3) << f->pad_bits);
        if (op == TST_OP_SUB)
            *b ^= f->sign_mask;
        break;
    }
    }
    *a &= ones;
    *b &= ones;
    *c &= ones;
}

START_TEST(test_ops)
{
    /* _i: the format */
    const sf_format *f = fmts[_i];
    unsigned long n = 3000 * tst_multiplier();
    tst_rng rng;

    n_failed = n_checked = 0;
    tst_rng_init(&rng, 0xFA57000u + (uint64_t)_i);
    for (int op = 0; op < TST_N_OPS; op++)
        for (int kind = 0; kind < 6; kind++)
            for (unsigned long i = 0; i < n; i++) {
                uint64_t a, b, c;
                make_case(f, op, kind, &rng, &a, &b, &c);
                check_op(f, op, a, b, c, &rng);
            }
    printf("%s: %lu results compared, %lu differ\n", f->name, n_checked,
           n_failed);
    ck_assert_uint_eq(n_failed, 0);
}
END_TEST

/* Every BF16 pair with a leading operand from a fixed sample (every
   binade, both signs, the edges), add, sub and mul, RNE and RTZ, IEEE. */
START_TEST(test_bf16_pairs)
{
    static const uint16_t edges[] = {0x0080, 0x0081, 0x00ff, 0x0100, 0x7f7f,
                                     0x7f00, 0x7e80, 0x3f80, 0x3fff, 0x8080,
                                     0xff7f, 0xbf80, 0x0001, 0x7f80, 0x7fc0};
    unsigned long bad = 0;

    n_failed = n_checked = 0;
    for (unsigned i = 0; i < 64 + sizeof edges / sizeof edges[0]; i++) {
        uint16_t a = i < 64 ? (uint16_t)(i * 1021u + 3u) : edges[i - 64];
        for (uint32_t b = 0; b < 65536; b++) {
            for (int op = 0; op < 3; op++) {
                for (int m = 0; m < 2; m++) {
                    sf_env ref = SF_ENV_IEEE, t = SF_ENV_IEEE;
                    uint64_t want, got;
                    ref.events = &tst_quiet;
                    want = tst_generic_op(&sf_format_bf16, op, a, b, 0,
                                          tst_modes[m], &ref);
                    got = typed_op(&sf_format_bf16, op, a, b, 0, tst_modes[m],
                                   &t);
                    n_checked++;
                    if (got != want || t.flags != ref.flags) {
                        uint64_t in[2] = {a, b};
                        report(tst_op_names[op], &sf_format_bf16, tst_modes[m],
                               in, 2, want, ref.flags, got, t.flags, 0);
                        bad++;
                    }
                }
            }
        }
    }
    printf("bf16 pairs: %lu results compared, %lu differ\n", n_checked, bad);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * FP32 -> BF16: sf_f32_to_bf16, sf_convert and sf_convert_array against
 * the generic conversion one element at a time.
 *--------------------------------------------------------------------------*/
/* An FP32 element: mostly normal values of every binade; with
   probability SPECIAL / 64 one of the values outside the fast subset or
   on its edge (zeros, subnormals, the smallest normal, the largest
   finite values and those that round to Inf in one mode or another,
   infinities, tst_quiet and signalling NaNs). */
static uint32_t
f32_elem(tst_rng *rng, unsigned special)
{
    static const uint32_t edge[] = {
        0x00000000, 0x00000001, 0x007fffff, 0x00800000, 0x00800001, 0x007f8000,
        0x007f7fff, 0x00ff8000, 0x7f7f7fff, 0x7f7f8000, 0x7f7f8001, 0x7f7fffff,
        0x7f7f0000, 0x7f7f0001, 0x7f800000, 0x7fc00000, 0x7f800001, 0x7fffffff,
        0x7f000000, 0x3f808000, 0x3f818000, 0x3f80ffff};
    uint64_t r = tst_rand64(rng);
    uint32_t sign = (uint32_t)(r >> 63) << 31;

    if (tst_rand_below(rng, 64) < special)
        return sign | edge[tst_rand_below(rng, sizeof edge / sizeof edge[0])];
    return sign | (uint32_t)((1 + (r >> 24) % 254) << 23)
           | (uint32_t)(r & 0x7fffff);
}

START_TEST(test_convert)
{
    enum
    {
        MAXN = 4096 + 37
    };
    static uint32_t in[MAXN];
    static uint16_t out[MAXN], want[MAXN];
    unsigned long rounds = 300 * tst_multiplier(), bad = 0, checked = 0;
    tst_rng rng;

    n_failed = 0;
    tst_rng_init(&rng, 0xC0E7u);
    for (unsigned long r = 0; r < rounds; r++) {
        size_t n = r % 10 == 0 ? MAXN - tst_rand_below(&rng, 40)
                               : tst_rand_below(&rng, 200);
        /* no specials at all in some arrays, so whole arrays go through
           the vector loop */
        unsigned special =
            (unsigned)(r % 4 == 0 ? 0 : tst_rand_below(&rng, 6));
        for (size_t i = 0; i < n; i++)
            in[i] = f32_elem(&rng, special);
        if (r % 8 == 3) /* exact conversions only: inexact stays clear */
            for (size_t i = 0; i < n; i++)
                in[i] &= 0xffff0000u;
        for (int k = 0; k < TST_N_ENVS; k++) {
            for (int m = 0; m < 7; m++) {
                sf_env ref = tst_env_at(k), arr, one;
                ref.flags = (unsigned)tst_rand64(&rng) & 31;
                ref.sr_seed = 5;
                arr = one = ref;
                ref.events = &tst_quiet;
                for (size_t i = 0; i < n; i++)
                    want[i] =
                        (uint16_t)sf_convert(&sf_format_bf16, &sf_format_f32,
                                             in[i], tst_modes[m], &ref);
                sf_convert_array(&sf_format_bf16, &sf_format_f32, in, out, n,
                                 tst_modes[m], &arr);
                checked += n;
                for (size_t i = 0; i < n; i++) {
                    if (out[i] != want[i]) {
                        uint64_t x = in[i];
                        if (bad++ < TST_MAX_PRINT) {
                            printf("sf_convert_array element %zu of %zu, "
                                   "env %d:\n",
                                   i, n, k);
                            tst_print_case("to_bf16", &sf_format_f32,
                                           tst_modes[m], &x, 1, want[i], 0,
                                           out[i], 0);
                        }
                    }
                }
                if (arr.flags != ref.flags
                    || arr.sr_counter != ref.sr_counter) {
                    if (bad++ < TST_MAX_PRINT)
                        printf("sf_convert_array flags %02x, want %02x "
                               "(n %zu, %s, env %d)\n",
                               arr.flags, ref.flags, n,
                               sf_round_name(tst_modes[m]), k);
                }
                /* the scalar forms, element by element, on a sample */
                for (size_t i = 0; i < n; i += 7) {
                    sf_env g = one, h = one, e = one;
                    uint64_t x = in[i], w;
                    uint64_t t, c;
                    e.events = &tst_quiet;
                    w = sf_convert(&sf_format_bf16, &sf_format_f32, x,
                                   tst_modes[m], &e);
                    t = sf_f32_to_bf16((sf_f32){in[i]}, tst_modes[m], &g).bits;
                    c = sf_convert(&sf_format_bf16, &sf_format_f32, x,
                                   tst_modes[m], &h);
                    checked += 2;
                    if (t != w || g.flags != e.flags) {
                        bad++;
                        report("to_bf16", &sf_format_f32, tst_modes[m], &x, 1,
                               w, e.flags, t, g.flags, k);
                    }
                    if (c != w || h.flags != e.flags) {
                        bad++;
                        report("to_bf16", &sf_format_f32, tst_modes[m], &x, 1,
                               w, e.flags, c, h.flags, k);
                    }
                }
            }
        }
    }
    printf("f32 -> bf16: %lu results compared, %lu differ\n", checked, bad);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* The other conversions of sf_convert_array (the element loop) and the
   element sizes 1, 2 and 4 bytes. */
START_TEST(test_convert_other)
{
    static const sf_format *const fs[6] = {&sf_format_bf16, &sf_format_f16,
                                           &sf_format_f32,  &sf_format_tf32,
                                           &sf_format_e4m3, &sf_format_e5m2};
    unsigned char in[64 * 4], out[64 * 4];
    unsigned long bad = 0;
    tst_rng rng;

    tst_rng_init(&rng, 0xC0E8u);
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++) {
            const sf_format *from = fs[i], *to = fs[j];
            unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;
            size_t n = 64;
            sf_env arr = SF_ENV_IEEE, ref = SF_ENV_IEEE;
            for (size_t k = 0; k < n * bi; k++)
                in[k] = (unsigned char)tst_rand64(&rng);
            if (from == &sf_format_tf32) /* clear the padding bits */
                for (size_t k = 0; k < n; k++)
                    in[k * 4] = 0, in[k * 4 + 1] &= 0xe0;
            sf_convert_array(to, from, in, out, n, SF_RNE, &arr);
            for (size_t k = 0; k < n; k++) {
                uint64_t x = 0, y = 0, w;
                memcpy(&x, in + k * bi, bi); /* little-endian host */
                memcpy(&y, out + k * bo, bo);
                w = sf_convert(to, from, x, SF_RNE, &ref);
                if (w != y && bad++ < TST_MAX_PRINT)
                    printf("sf_convert_array %s -> %s: %llx gives %llx, "
                           "sf_convert %llx\n",
                           from->name, to->name, (unsigned long long)x,
                           (unsigned long long)y, (unsigned long long)w);
            }
            if (arr.flags != ref.flags && bad++ < TST_MAX_PRINT)
                printf("sf_convert_array %s -> %s: flags %02x, want %02x\n",
                       from->name, to->name, arr.flags, ref.flags);
        }
    }
    ck_assert_uint_eq(bad, 0);
}
END_TEST

/* With a sink, sf_convert_array reports one event per element, in order,
   as sf_convert does. */
typedef struct
{
    unsigned n;
    uint64_t in[8];
} ev_log;

static void
log_event(void *user, const sf_event *ev)
{
    ev_log *l = user;

    if (l->n < 8)
        l->in[l->n] = ev->in[0];
    l->n++;
}

START_TEST(test_convert_events)
{
    uint32_t in[5] = {0x3f801234, 0x7f800000, 0x00000001, 0x40490fdb, 0};
    uint16_t out[5];
    ev_log log = {0, {0}};
    sf_event_sink sink = {log_event, &log};
    sf_env env = SF_ENV_IEEE;

    env.events = &sink;
    sf_convert_array(&sf_format_bf16, &sf_format_f32, in, out, 5, SF_RNE,
                     &env);
    ck_assert_uint_eq(log.n, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(log.in[i], in[i]);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("fast");
    TCase *tc = tst_add_tcase(s, "ops", 300);

    tcase_add_loop_test(tc, test_ops, 0, 6);
    tc = tst_add_tcase(s, "bf16", 300);
    tcase_add_test(tc, test_bf16_pairs);
    tc = tst_add_tcase(s, "convert", 300);
    tcase_add_test(tc, test_convert);
    tcase_add_test(tc, test_convert_other);
    tcase_add_test(tc, test_convert_events);
    return tst_run_suite(s);
}
