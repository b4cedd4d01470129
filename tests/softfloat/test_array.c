/* test_array.c -- the array calls (sf_<fmt>_<op>_array, sf_convert_array)
   on every path the CPU has (env.isa forces each), bit for bit against
   the scalar operations element by element, flags and SR counter
   included, on random, structured and edge operands, in every mode under
   several environments, for lengths around the vector width, in place
   and with an event sink */
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

/* The paths this CPU runs. */
static int n_paths;
static sf_isa paths[SF_N_ISA];

static void
find_paths(void)
{
    n_paths = tst_find_paths(paths);
}

static const sf_format *const fmts[3] = {&sf_format_bf16, &sf_format_f16,
                                         &sf_format_f32};

/* The array call on arrays of uint16_t or uint32_t bits. */
static void
array_op(const sf_format *f, int op, const void *a, const void *b,
         const void *c, void *out, size_t n, sf_round rm, sf_env *env)
{
#define ARR(fmt, T)                                                           \
    if (f == &sf_format_##fmt) {                                              \
        switch (op) {                                                         \
        case TST_OP_ADD:                                                      \
            sf_##fmt##_add_array(a, b, out, n, rm, env);                      \
            return;                                                           \
        case TST_OP_SUB:                                                      \
            sf_##fmt##_sub_array(a, b, out, n, rm, env);                      \
            return;                                                           \
        case TST_OP_MUL:                                                      \
            sf_##fmt##_mul_array(a, b, out, n, rm, env);                      \
            return;                                                           \
        default:                                                              \
            sf_##fmt##_fma_array(a, b, c, out, n, rm, env);                   \
            return;                                                           \
        }                                                                     \
    }
    ARR(bf16, sf_bf16)
    ARR(f16, sf_f16)
    ARR(f32, sf_f32)
#undef ARR
}

/*----------------------------------------------------------------------------
 * Operands: mostly normal values with exponents near a per-array centre
 * (sums that align, cancel and carry), some far apart, some near the ends
 * of the range, and with probability SPECIAL / 64 anything at all.
 *--------------------------------------------------------------------------*/
static uint64_t
operand(const sf_format *f, tst_rng *rng, int64_t center, int spread,
        unsigned special)
{
    int64_t top = ((int64_t)1 << f->exp_bits) - 2, e;
    uint64_t sign = (tst_rand64(rng) & 1) ? f->sign_mask : 0;

    if (tst_rand_below(rng, 64) < special)
        return tst_rand64(rng) & (((uint64_t)1 << f->storage_bits) - 1);
    e = center + (int64_t)tst_rand_below(rng, 2 * (uint64_t)spread + 1)
        - spread;
    e = e < 1 ? 1 : e > top ? top : e;
    return sign | ((uint64_t)e << f->frac_bits) | tst_rand_frac(f, rng);
}

#define MAXN 300
static uint32_t A[MAXN], B[MAXN], C[MAXN], OUT[MAXN], WANT[MAXN];
static unsigned long n_checked, n_bad;

/* Fills A, B, C with N operands of kind KIND. */
static void
fill(const sf_format *f, int op, int kind, size_t n, tst_rng *rng)
{
    int64_t top = ((int64_t)1 << f->exp_bits) - 2, bias = f->bias;
    int64_t center = 1 + (int64_t)tst_rand_below(rng, (uint64_t)top);
    unsigned special = kind == 0 ? 0 : (unsigned)tst_rand_below(rng, 4);
    int fb = (int)f->frac_bits;

    for (size_t i = 0; i < n; i++) {
        uint64_t a, b, c;
        switch (kind) {
        case 0: /* all normal, close exponents (the vector steps) */
        case 1:
            a = operand(f, rng, center, 2, special);
            b = operand(f, rng,
                        op == TST_OP_MUL || op == TST_OP_FMA ? bias : center,
                        fb + 3, special);
            c = operand(f, rng, center, fb + 3, special);
            break;
        case 2: /* anywhere */
            a = operand(f, rng, top / 2, (int)top / 2, special);
            b = operand(f, rng, top / 2, (int)top / 2, special);
            c = operand(f, rng, top / 2, (int)top / 2, special);
            break;
        case 3: /* near overflow and near the bottom of the normal range */
            center = tst_rand64(rng) & 1 ? top : 1;
            a = operand(f, rng, center, 3, special);
            b = operand(f, rng,
                        op == TST_OP_MUL || op == TST_OP_FMA
                            ? (center == 1 ? bias - 2 : bias + 1)
                            : center,
                        3, special);
            c = operand(f, rng, center, 3, special);
            break;
        default: /* cancellation: b = -a (+ a few ulps), c = -(a b) */
        {
            sf_env e = SF_ENV_IEEE;
            a = operand(f, rng, center, 2, special);
            b = a ^ f->sign_mask;
            if (tst_rand64(rng) & 1)
                b += tst_rand_below(rng, 4);
            if (op == TST_OP_SUB)
                b ^= f->sign_mask;
            c = sf_mul(f, a, b, SF_RNE, &e) ^ f->sign_mask;
            if (tst_rand64(rng) & 1)
                c += tst_rand_below(rng, 3);
            break;
        }
        }
        tst_put(A, f, i, a);
        tst_put(B, f, i, b);
        tst_put(C, f, i, c);
    }
}

static void
check_arith(const sf_format *f, int op, size_t n, int k, sf_round rm,
            sf_isa isa, bool in_place, uint64_t flags0)
{
    sf_env ref = tst_env_at(k), arr;
    ref.flags = (unsigned)flags0;
    ref.sr_seed = 77;
    ref.sr_counter = 5;
    arr = ref;
    arr.isa = (int)isa;
    ref.events = &tst_quiet;
    for (size_t i = 0; i < n; i++)
        tst_put(WANT, f, i,
                tst_generic_op(f, op, tst_get(A, f, i), tst_get(B, f, i),
                               tst_get(C, f, i), rm, &ref));
    if (in_place) {
        memcpy(OUT, A, sizeof OUT);
        array_op(f, op, OUT, B, C, OUT, n, rm, &arr);
    } else {
        array_op(f, op, A, B, C, OUT, n, rm, &arr);
    }
    n_checked += n;
    for (size_t i = 0; i < n; i++) {
        if (tst_get(OUT, f, i) != tst_get(WANT, f, i)) {
            if (n_bad++ < TST_MAX_PRINT) {
                uint64_t in[3] = {tst_get(A, f, i), tst_get(B, f, i),
                                  tst_get(C, f, i)};
                printf("%s_%s_array path %s, element %zu of %zu, env %d%s:\n",
                       f->name, tst_op_names[op], sf_isa_name(isa), i, n, k,
                       in_place ? ", in place" : "");
                tst_print_case(tst_op_names[op], f, rm, in,
                               op == TST_OP_FMA ? 3 : 2, tst_get(WANT, f, i),
                               0, tst_get(OUT, f, i), 0);
            }
        }
    }
    if (arr.flags != ref.flags || arr.sr_counter != ref.sr_counter) {
        if (n_bad++ < TST_MAX_PRINT)
            printf("%s_%s_array path %s: flags %02x counter %llu, want %02x "
                   "%llu (n %zu, %s, env %d)\n",
                   f->name, tst_op_names[op], sf_isa_name(isa), arr.flags,
                   (unsigned long long)arr.sr_counter, ref.flags,
                   (unsigned long long)ref.sr_counter, n, sf_round_name(rm),
                   k);
    }
}

START_TEST(test_arith)
{
    /* _i: format * TST_N_OPS + op */
    const sf_format *f = fmts[_i / TST_N_OPS];
    int op = _i % TST_N_OPS;
    unsigned long rounds = 60 * tst_multiplier();
    tst_rng rng;

    n_checked = n_bad = 0;
    find_paths();
    tst_rng_init(&rng, 0xA77A0u + (uint64_t)_i);
    for (unsigned long r = 0; r < rounds; r++) {
        size_t n = r % 3 == 0 ? MAXN - tst_rand_below(&rng, 20)
                              : tst_rand_below(&rng, 70);
        int kind = (int)(r % 5);
        fill(f, op, kind, n, &rng);
        for (int k = 0; k < TST_N_ENVS; k++)
            for (int m = 0; m < 7; m++)
                for (int p = 0; p < n_paths; p++)
                    check_arith(f, op, n, k, tst_modes[m], paths[p],
                                r % 7 == 1, tst_rand64(&rng) & 31);
    }
    printf("%s_%s_array: %lu results compared on %d paths, %lu differ\n",
           f->name, tst_op_names[op], n_checked, n_paths, n_bad);
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Conversions.
 *--------------------------------------------------------------------------*/
static const sf_format *const cv_to[6] = {&sf_format_bf16, &sf_format_f16,
                                          &sf_format_e4m3, &sf_format_e5m2,
                                          &sf_format_f32,  &sf_format_f32};
static const sf_format *const cv_from[6] = {&sf_format_f32,  &sf_format_f32,
                                            &sf_format_f32,  &sf_format_f32,
                                            &sf_format_bf16, &sf_format_f16};

START_TEST(test_convert)
{
    const sf_format *to = cv_to[_i], *from = cv_from[_i];
    unsigned long rounds = 100 * tst_multiplier();
    tst_rng rng;

    n_checked = n_bad = 0;
    find_paths();
    tst_rng_init(&rng, 0xC0A7u + (uint64_t)_i);
    for (unsigned long r = 0; r < rounds; r++) {
        size_t n = r % 3 == 0 ? MAXN - tst_rand_below(&rng, 20)
                              : tst_rand_below(&rng, 70);
        unsigned special = r % 4 == 0 ? 0 : (unsigned)tst_rand_below(&rng, 6);
        /* the target's exponent range, as FP32 exponents */
        int64_t lo = (int64_t)127 - to->bias - 2;
        int64_t hi = lo + ((int64_t)1 << to->exp_bits) + 2;
        if (to == &sf_format_f32) /* widening: any source value */
            lo = 1, hi = ((int64_t)1 << from->exp_bits) - 2;
        for (size_t i = 0; i < n; i++) {
            uint64_t x;
            if (to == &sf_format_f32 || r % 5 != 0) {
                int64_t c =
                    lo
                    + (int64_t)tst_rand_below(&rng, (uint64_t)(hi - lo + 1));
                x = operand(from, &rng, c, 0, special);
            } else {
                x = operand(from, &rng, 127, 126, special);
            }
            if (from == &sf_format_f32 && to != &sf_format_f32) {
                /* the discarded bits: exact, ties and their neighbours
                   in some arrays */
                unsigned sh = 23 - to->frac_bits;
                uint64_t half = (uint64_t)1 << (sh - 1);
                static const int64_t tails[6] = {0, 0, 1, -1, 0, -1};
                int t = (int)tst_rand_below(&rng, 6);
                if (r % 8 == 3)
                    x &= ~((half << 1) - 1);
                else if (r % 2 == 1 && tst_rand64(&rng) & 1)
                    x = (x & ~((half << 1) - 1))
                        | ((t < 4    ? half
                            : t == 4 ? 0
                                     : (half << 1))
                           + (uint64_t)tails[t])
                              % (half << 1);
            }
            tst_put(A, from, i, x);
        }
        for (int k = 0; k < TST_N_ENVS; k++) {
            for (int m = 0; m < 7; m++) {
                for (int p = 0; p < n_paths; p++) {
                    sf_env ref = tst_env_at(k), arr;
                    ref.flags = (unsigned)tst_rand64(&rng) & 31;
                    ref.sr_seed = 5;
                    arr = ref;
                    arr.isa = (int)paths[p];
                    ref.events = &tst_quiet;
                    for (size_t i = 0; i < n; i++)
                        tst_put(WANT, to, i,
                                sf_convert(to, from, tst_get(A, from, i),
                                           tst_modes[m], &ref));
                    sf_convert_array(to, from, A, OUT, n, tst_modes[m], &arr);
                    n_checked += n;
                    for (size_t i = 0; i < n; i++) {
                        if (tst_get(OUT, to, i) != tst_get(WANT, to, i)
                            && n_bad++ < TST_MAX_PRINT) {
                            uint64_t x = tst_get(A, from, i);
                            printf("sf_convert_array %s -> %s path %s, "
                                   "element %zu of %zu, env %d:\n",
                                   from->name, to->name, sf_isa_name(paths[p]),
                                   i, n, k);
                            tst_print_case("convert", from, tst_modes[m], &x,
                                           1, tst_get(WANT, to, i), 0,
                                           tst_get(OUT, to, i), 0);
                        }
                    }
                    if ((arr.flags != ref.flags
                         || arr.sr_counter != ref.sr_counter)
                        && n_bad++ < TST_MAX_PRINT)
                        printf("sf_convert_array %s -> %s path %s: flags "
                               "%02x, want %02x (n %zu, %s, env %d)\n",
                               from->name, to->name, sf_isa_name(paths[p]),
                               arr.flags, ref.flags, n,
                               sf_round_name(tst_modes[m]), k);
                }
            }
        }
    }
    printf("%s -> %s array: %lu results compared on %d paths, %lu differ\n",
           from->name, to->name, n_checked, n_paths, n_bad);
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

/* Every BF16 and FP16 input widened to FP32 (Inf under saturation, NaNs,
   subnormals under DAZ) on every path, every environment and mode. */
START_TEST(test_widen_all)
{
    const sf_format *from = _i == 0 ? &sf_format_bf16 : &sf_format_f16;
    static uint16_t in[65536];
    static uint32_t out[65536], want[65536];

    n_checked = n_bad = 0;
    find_paths();
    for (uint32_t i = 0; i < 65536; i++)
        in[i] = (uint16_t)i;
    for (int k = 0; k < TST_N_ENVS; k++) {
        for (int m = 0; m < TST_N_MODES; m++) {
            sf_env ref = tst_env_at(k);
            ref.events = &tst_quiet;
            for (uint32_t i = 0; i < 65536; i++)
                want[i] = (uint32_t)sf_convert(&sf_format_f32, from, in[i],
                                               tst_modes[m], &ref);
            for (int p = 0; p < n_paths; p++) {
                sf_env arr = tst_env_at(k);
                arr.isa = (int)paths[p];
                sf_convert_array(&sf_format_f32, from, in, out, 65536,
                                 tst_modes[m], &arr);
                n_checked += 65536;
                for (uint32_t i = 0; i < 65536; i++)
                    if (out[i] != want[i] && n_bad++ < TST_MAX_PRINT)
                        printf("sf_convert_array %s -> f32 path %s, %s, env "
                               "%d: %04x gives %08x, want %08x\n",
                               from->name, sf_isa_name(paths[p]),
                               sf_round_name(tst_modes[m]), k, (unsigned)i,
                               (unsigned)out[i], (unsigned)want[i]);
                if (arr.flags != ref.flags && n_bad++ < TST_MAX_PRINT)
                    printf("sf_convert_array %s -> f32 path %s, %s, env %d: "
                           "flags %02x, want %02x\n",
                           from->name, sf_isa_name(paths[p]),
                           sf_round_name(tst_modes[m]), k, arr.flags,
                           ref.flags);
            }
        }
    }
    printf("%s -> f32, every input: %lu results compared on %d paths, %lu "
           "differ\n",
           from->name, n_checked, n_paths, n_bad);
    ck_assert_uint_eq(n_bad, 0);
}
END_TEST

/*----------------------------------------------------------------------------
 * Events: with a sink, one event per element in ascending order, as n
 * scalar calls make them, on every path.
 *--------------------------------------------------------------------------*/
typedef struct
{
    unsigned n;
    uint64_t in[64];
} ev_log;

static void
log_event(void *user, const sf_event *ev)
{
    ev_log *l = user;

    if (l->n < 64)
        l->in[l->n] = ev->in[0] ^ (ev->in[1] << 16);
    l->n++;
}

START_TEST(test_events)
{
    tst_rng rng;

    find_paths();
    tst_rng_init(&rng, 0xE7E7u);
    for (int p = 0; p < n_paths; p++) {
        uint16_t a[40], b[40], out[40];
        ev_log got = {0, {0}}, want = {0, {0}};
        sf_event_sink sg = {log_event, &got}, sw = {log_event, &want};
        sf_env eg = SF_ENV_IEEE, ew = SF_ENV_IEEE;
        for (int i = 0; i < 40; i++) {
            a[i] = (uint16_t)(0x3f00 + tst_rand_below(&rng, 0x200));
            b[i] = (uint16_t)(0x3f00 + tst_rand_below(&rng, 0x200));
        }
        eg.events = &sg;
        eg.isa = (int)paths[p];
        ew.events = &sw;
        sf_bf16_add_array((const sf_bf16 *)a, (const sf_bf16 *)b,
                          (sf_bf16 *)out, 40, SF_RNE, &eg);
        for (int i = 0; i < 40; i++)
            sf_add(&sf_format_bf16, a[i], b[i], SF_RNE, &ew);
        ck_assert_uint_eq(got.n, 40);
        ck_assert_uint_eq(want.n, 40);
        ck_assert_int_eq(memcmp(got.in, want.in, sizeof got.in), 0);
        ck_assert_uint_eq(eg.flags, ew.flags);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("array");
    TCase *tc = tst_add_tcase(s, "arith", 600);

    tcase_add_loop_test(tc, test_arith, 0, 3 * TST_N_OPS);
    tc = tst_add_tcase(s, "convert", 600);
    tcase_add_loop_test(tc, test_convert, 0, 6);
    tcase_add_loop_test(tc, test_widen_all, 0, 2);
    tcase_add_test(tc, test_events);
    return tst_run_suite(s);
}
