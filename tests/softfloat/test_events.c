/* test_events.c -- rounding events: the paper's traces (T1, T2, T3), one
   event per operation with its operands and op code, the special fields
   (SR draw, FTZ, DAZ, overflow, subnormal, exact), and, on random
   operations, the identity result - exact = error and the guard, round and
   sticky bits recomputed from the exact value */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

/*----------------------------------------------------------------------------
 * A sink that records events.
 *--------------------------------------------------------------------------*/
#define CAP_MAX 4

typedef struct
{
    unsigned n;
    sf_event ev[CAP_MAX];
} capture;

static void
capture_fn(void *user, const sf_event *ev)
{
    capture *c = user;
    if (c->n < CAP_MAX)
        c->ev[c->n] = *ev;
    c->n++;
}

/* An env of preset BASE with the sink attached and the capture emptied. */
static capture cap;
static const sf_event_sink sink = {capture_fn, &cap};

static sf_env
env_with_sink(sf_env base)
{
    base.events = &sink;
    memset(&cap, 0, sizeof cap);
    return base;
}

static const sf_env ieee = SF_ENV_IEEE;

/*----------------------------------------------------------------------------
 * Values, decoded here: (-1)^neg * sig * 2^exp.
 *--------------------------------------------------------------------------*/
typedef struct
{
    bool neg;
    u128 sig;
    int32_t exp;
} value;

/* Widths of the formats, written here (not read from the descriptors). */
typedef struct
{
    const sf_format *f;
    unsigned e_bits, m_bits, pad;
    bool fn; /* E4M3: no Inf, only S.1111.111 is NaN */
} fmt_info;

static const fmt_info fmts[] = {
    {&sf_format_bf16, 8, 7, 0, false}, {&sf_format_f16, 5, 10, 0, false},
    {&sf_format_f32, 8, 23, 0, false}, {&sf_format_tf32, 8, 10, 13, false},
    {&sf_format_e4m3, 4, 3, 0, true},  {&sf_format_e5m2, 5, 2, 0, false}};
#define N_FMTS ((int)(sizeof fmts / sizeof fmts[0]))

static const fmt_info *
info_of(const sf_format *f)
{
    for (int i = 0; i < N_FMTS; i++)
        if (fmts[i].f == f)
            return &fmts[i];
    return NULL;
}

/* Finite value of BITS in format I (false for Inf and NaN). */
static bool
decode(const fmt_info *in, uint64_t bits, value *v)
{
    uint64_t fr = (bits >> in->pad) & ((UINT64_C(1) << in->m_bits) - 1);
    uint64_t ex =
        (bits >> (in->pad + in->m_bits)) & ((UINT64_C(1) << in->e_bits) - 1);
    uint64_t all = (UINT64_C(1) << in->e_bits) - 1;
    int bias = (1 << (in->e_bits - 1)) - 1;

    v->neg = (bits >> (in->pad + in->m_bits + in->e_bits)) & 1;
    if (ex == all && (!in->fn || fr == (UINT64_C(1) << in->m_bits) - 1))
        return false;
    if (ex == 0) {
        v->sig = fr;
        v->exp = 1 - bias - (int32_t)in->m_bits;
    } else {
        v->sig = fr | (UINT64_C(1) << in->m_bits);
        v->exp = (int32_t)ex - bias - (int32_t)in->m_bits;
    }
    return true;
}

static value
from_dyadic(const sf_dyadic *d)
{
    value v;
    v.neg = d->sign;
    v.sig = ((u128)d->hi << 64) | d->lo;
    v.exp = d->exp;
    return v;
}

static int
bit_length(u128 a)
{
    int n = 0;
    while (a) {
        n++;
        a >>= 1;
    }
    return n;
}

/* Whether V equals (-1)^neg * sig * 2^exp as a number (zeros of any sign
   are equal). */
static bool
value_is(value v, bool neg, u128 sig, int32_t exp)
{
    while (v.sig && !(v.sig & 1)) {
        v.sig >>= 1;
        v.exp++;
    }
    while (sig && !(sig & 1)) {
        sig >>= 1;
        exp++;
    }
    if (v.sig == 0 || sig == 0)
        return v.sig == sig;
    return v.neg == neg && v.sig == sig && v.exp == exp;
}

/* R - X == E exactly?  1 yes, 0 no, -1 not checkable here (the values do
   not fit a common 126-bit window). */
static int
difference_is(value r, value x, value e)
{
    int32_t base = INT32_MAX;
    value *all[3] = {&r, &x, &e};
    i128 s[3];

    for (int i = 0; i < 3; i++) {
        while (all[i]->sig && !(all[i]->sig & 1)) { /* odd significands */
            all[i]->sig >>= 1;
            all[i]->exp++;
        }
        if (all[i]->sig && all[i]->exp < base)
            base = all[i]->exp;
    }
    if (base == INT32_MAX)
        return 1;
    for (int i = 0; i < 3; i++) {
        u128 m = all[i]->sig;
        if (m) {
            int64_t sh = (int64_t)all[i]->exp - base;
            if (sh + bit_length(m) > 125)
                return -1;
            m <<= sh;
        }
        s[i] = all[i]->neg ? -(i128)m : (i128)m;
    }
    return s[0] - s[1] == s[2];
}

/* Bit POS of A (0 outside [0, 127]). */
static unsigned
bit_of(u128 a, int64_t pos)
{
    return (pos >= 0 && pos <= 127) ? (unsigned)(a >> pos) & 1u : 0u;
}

/* Any bit of A below position POS. */
static bool
any_below(u128 a, int64_t pos)
{
    if (pos <= 0)
        return false;
    if (pos >= 128)
        return a != 0;
    return (a & (((u128)1 << pos) - 1)) != 0;
}

/*----------------------------------------------------------------------------
 * The paper's traces.
 *--------------------------------------------------------------------------*/
/* An f32 of the paper's range (normal) as sig * 2^exp, by integer code. */
static value
f32_value(uint32_t bits)
{
    value v;
    v.neg = bits >> 31;
    v.sig = (bits & 0x7FFFFFu) | 0x800000u;
    v.exp = (int32_t)((bits >> 23) & 0xFFu) - 127 - 23;
    return v;
}

/* The FP32 sum of two same-sign, same-exponent normal f32s, exactly:
   (sa + sb) * 2^e. */
static value
f32_exact_sum(uint32_t a, uint32_t b)
{
    value va = f32_value(a), vb = f32_value(b), s;
    s.neg = va.neg;
    s.sig = va.sig + vb.sig;
    s.exp = va.exp;
    return s;
}

static bool
is_zero_dyadic(const sf_dyadic *d)
{
    return d->hi == 0 && d->lo == 0 && !d->tail;
}

/* Checks the event of an exact f32 add of a and b (as in T1's first step)
   and returns the number of problems (printed). */
static unsigned
check_exact_add(uint32_t a, uint32_t b, uint32_t want)
{
    sf_env env = env_with_sink(ieee);
    sf_f32 x = {a}, y = {b};
    uint32_t z = sf_f32_add(x, y, SF_RNE, &env).bits;
    value s = f32_exact_sum(a, b);
    const sf_event *ev = &cap.ev[0];
    unsigned bad = 0;

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            bad++;                                                            \
            printf("%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
        }                                                                     \
    } while (0)

    EXPECT(z == want);
    EXPECT(cap.n == 1);
    EXPECT(ev->op == SF_OP_ADD && ev->mode == SF_RNE);
    EXPECT(ev->fmt == &sf_format_f32 && ev->n_in == 2);
    EXPECT(ev->in_fmt[0] == &sf_format_f32 && ev->in_fmt[1] == &sf_format_f32);
    EXPECT(ev->in[0] == a && ev->in[1] == b);
    EXPECT(ev->result == want);
    EXPECT(ev->dir == 0 && ev->flags == 0 && env.flags == 0);
    EXPECT(is_zero_dyadic(&ev->error) && !ev->error_infinite);
    EXPECT(!ev->exact.tail);
    EXPECT(value_is(from_dyadic(&ev->exact), s.neg, s.sig, s.exp));
    EXPECT(sf_event_error_ulps(ev) == 0.0);
    return bad;
}

/* Checks the event of f32 -> bf16 RNE of X: result WANT; the expected
   guard, round, sticky, tie and direction; returns the problems. */
static unsigned
check_to_bf16(uint32_t x, uint16_t want, unsigned g, unsigned rb, unsigned st,
              bool tie, int dir, double err_value, double err_ulps)
{
    sf_env env = env_with_sink(ieee);
    sf_f32 a = {x};
    uint16_t z = sf_f32_to_bf16(a, SF_RNE, &env).bits;
    const sf_event *ev = &cap.ev[0];
    value xv = f32_value(x);
    int32_t e = (int32_t)((x >> 23) & 0xFFu) - 127; /* |x| in [2^e, 2^e+1) */
    uint32_t low = x & 0xFFFFu;
    /* the error by integer arithmetic on the bit patterns: the discarded
       16 bits are worth low * 2^(e-23); rounding up in magnitude adds
       (2^16 - low) of those units, rounding down removes low */
    u128 err_units = dir > 0 ? 0x10000u - low : low;
    bool err_neg = dir > 0 ? (x >> 31) != 0 : (x >> 31) == 0;
    unsigned bad = 0;

    EXPECT(z == want);
    EXPECT(cap.n == 1);
    EXPECT(ev->op == SF_OP_CONVERT && ev->mode == SF_RNE);
    EXPECT(ev->fmt == &sf_format_bf16 && ev->n_in == 1);
    EXPECT(ev->in_fmt[0] == &sf_format_f32 && ev->in[0] == x);
    EXPECT(ev->result == want);
    EXPECT(value_is(from_dyadic(&ev->exact), xv.neg, xv.sig, xv.exp)
           && !ev->exact.tail);
    EXPECT(ev->ulp_exp == e - 7);
    EXPECT(ev->lsb == ((x >> 16) & 1u));
    EXPECT(ev->guard == g && ev->round == rb && ev->sticky == st);
    EXPECT(ev->tie == tie && ev->dir == dir);
    EXPECT(ev->flags == SF_FLAG_INEXACT && env.flags == SF_FLAG_INEXACT);
    EXPECT(!ev->tiny && !ev->subnormal && !ev->ftz && !ev->daz && !ev->overflow
           && !ev->error_infinite);
    EXPECT(!ev->error.tail);
    EXPECT(value_is(from_dyadic(&ev->error), err_neg, err_units, e - 23));
    EXPECT(sf_dyadic_to_double(&ev->error) == err_value);
    EXPECT(sf_event_error_ulps(ev) == err_ulps);
    {
        /* the kept significand: floor(|exact| / 2^ulp_exp), from the
           event's exact value; its low 7 bits are the kept fraction */
        value ex = from_dyadic(&ev->exact);
        int64_t sh = (int64_t)ev->ulp_exp - ex.exp;
        u128 kept = sh >= 128 ? 0 : sh >= 0 ? ex.sig >> sh : ex.sig << -sh;
        EXPECT(kept == ((x >> 16) & 0x7Fu) + 0x80u);
    }
    return bad;
}

START_TEST(test_paper_t1)
{
    unsigned bad = 0;

    /* The paper's trace: FP32 accumulator 0xC01A0E2E (-2.40625 plus a
       residual of -3630 * 2^-22) + BF16 -2.296875 (0xC013, widened to
       0xC0130000) = 0xC0968717 exactly; RNE to BF16: kept fraction
       0010110, guard 1, round 0 (bit 14 of 0x8717), sticky 1, so up in
       magnitude to 0xC097 = -4.71875, error -(2^16 - 0x8717) * 2^-21 =
       -30953 * 2^-21 = -0.014759540557861328125 (the paper's
       -0.014759540557861328), -30953/2^16 ulp of 2^-5. */
    ck_assert(ldexp(-30953.0, -21) == -0.014759540557861328);
    bad += check_exact_add(0xC01A0E2Eu, 0xC0130000u, 0xC0968717u);
    bad += check_to_bf16(0xC0968717u, 0xC097, 1, 0, 1, false, +1,
                         -0.014759540557861328, -30953.0 / 65536.0);
    ck_assert_msg(bad == 0, "T1: %u problems (printed above)", bad);
}
END_TEST

START_TEST(test_paper_t2)
{
    unsigned bad = 0;

    /* Without the residual: -2.40625 + -2.296875 = -4.703125 = 0xC0968000
       exactly, a tie; RNE keeps the even 0xC096 = -4.6875: down in
       magnitude, error +2^-6 = +0.015625 = +1/2 ulp. */
    bad += check_exact_add(0xC01A0000u, 0xC0130000u, 0xC0968000u);
    bad +=
        check_to_bf16(0xC0968000u, 0xC096, 1, 0, 0, true, -1, 0.015625, 0.5);
    ck_assert_msg(bad == 0, "T2: %u problems (printed above)", bad);
}
END_TEST

START_TEST(test_paper_t3)
{
    unsigned bad = 0;

    /* Truncation case: -0.85546875 (0xBF5B) + -0.0859375 (0xBDB0) =
       -0.94140625 (0xBF710000) exactly; plus a residual of -2^-11
       (0xBA000000): -0.94189453125 = 0xBF712000 exactly; RNE to BF16:
       guard 0, round 0, sticky 1 (bit 13), down to 0xBF71, error
       +2^-11 = +0.00048828125 = +1/8 ulp of 2^-8. */
    {
        sf_env env = SF_ENV_IEEE;
        sf_f32 a = {0xBF5B0000u}, b = {0xBDB00000u}, r = {0xBA000000u};
        sf_f32 s = sf_f32_add(a, b, SF_RNE, &env);
        if (s.bits != 0xBF710000u || env.flags != 0) {
            bad++;
            printf("T3: 0xBF5B0000 + 0xBDB00000 = %08x, flags %u\n",
                   (unsigned)s.bits, env.flags);
        }
        s = sf_f32_add(s, r, SF_RNE, &env);
        if (s.bits != 0xBF712000u || env.flags != 0) {
            bad++;
            printf("T3: + 0xBA000000 = %08x, flags %u\n", (unsigned)s.bits,
                   env.flags);
        }
    }
    bad += check_to_bf16(0xBF712000u, 0xBF71, 0, 0, 1, false, -1,
                         0.00048828125, 0.125);
    ck_assert_msg(bad == 0, "T3: %u problems (printed above)", bad);
}
END_TEST

/*----------------------------------------------------------------------------
 * One event per operation, with the op code and operands.
 *--------------------------------------------------------------------------*/
/* Lines of detail left to print (the counts are always exact). */
static unsigned print_budget = 4 * TST_MAX_PRINT;

/* Checks the common fields of the single event of the last operation. */
static unsigned
check_one_event(const sf_env *env, const char *what, int op, sf_round rm,
                const sf_format *fmt, unsigned n_in,
                const sf_format *const *in_fmt, const uint64_t *in,
                uint64_t result)
{
    const sf_event *ev = &cap.ev[0];
    unsigned bad = 0;

    if (cap.n != 1) {
        if (print_budget > 0) {
            print_budget--;
            printf("%s: %u events, expected 1\n", what, cap.n);
        }
        return 1;
    }
#undef EXPECT
#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            bad++;                                                            \
            if (print_budget > 0) {                                           \
                print_budget--;                                               \
                printf("%s: %s\n", what, #cond);                              \
            }                                                                 \
        }                                                                     \
    } while (0)
    EXPECT(ev->op == op);
    EXPECT(ev->mode == rm);
    EXPECT(ev->fmt == fmt);
    EXPECT(ev->n_in == n_in);
    for (unsigned i = 0; i < n_in && i < 3; i++) {
        EXPECT(ev->in_fmt[i] == in_fmt[i]);
        EXPECT(ev->in[i] == in[i]);
    }
    EXPECT(ev->result == result);
    EXPECT(ev->flags == env->flags);
    EXPECT(ev->dir >= -1 && ev->dir <= 1);
    return bad != 0;
}

/* Operand sets per format: a normal, a tie-ish value, zero, Inf, qNaN,
   sNaN (E4M3: its NaN). */
static void
operands(const fmt_info *fi, uint64_t out[6])
{
    uint64_t one = ((UINT64_C(1) << (fi->e_bits - 1)) - 1)
                   << (fi->m_bits + fi->pad);
    uint64_t expm = ((UINT64_C(1) << fi->e_bits) - 1)
                    << (fi->m_bits + fi->pad);
    uint64_t quiet = UINT64_C(1) << (fi->m_bits - 1 + fi->pad);

    out[0] = one | (UINT64_C(5) << fi->pad);                 /* 1 + tiny */
    out[1] = (one + (UINT64_C(1) << (fi->m_bits + fi->pad))) /* 2 + ... */
             | ((UINT64_C(3) << fi->pad));
    out[2] = 0;
    out[3] = fi->fn ? (expm | (quiet * 2 - (UINT64_C(1) << fi->pad)))
                    : expm; /* Inf (E4M3: NaN) */
    out[4] = expm | quiet;  /* qNaN */
    out[5] = fi->fn ? (expm | (quiet * 2 - (UINT64_C(1) << fi->pad)))
                    : (expm | (UINT64_C(1) << fi->pad)); /* sNaN */
}

START_TEST(test_every_kind)
{
    unsigned bad = 0, n = 0;
    char what[96];

    for (int fi = 0; fi < N_FMTS; fi++) {
        const sf_format *f = fmts[fi].f;
        const sf_format *ff[3] = {f, f, f};
        uint64_t v[6];

        operands(&fmts[fi], v);
        for (int m = 0; m < SF_N_ROUND; m++) {
            sf_round rm = (sf_round)m;
            for (int i = 0; i < 6; i++) {
                for (int j = 0; j < 6; j++) {
                    uint64_t in[3] = {v[i], v[j], v[(i + j) % 6]};
                    uint64_t z;
                    sf_env env;
                    static const int bin_ops[4] = {SF_OP_ADD, SF_OP_SUB,
                                                   SF_OP_MUL, SF_OP_DIV};

                    for (int k = 0; k < 4; k++) {
                        env = env_with_sink(ieee);
                        switch (bin_ops[k]) {
                        case SF_OP_ADD:
                            z = sf_add(f, in[0], in[1], rm, &env);
                            break;
                        case SF_OP_SUB:
                            z = sf_sub(f, in[0], in[1], rm, &env);
                            break;
                        case SF_OP_MUL:
                            z = sf_mul(f, in[0], in[1], rm, &env);
                            break;
                        default:
                            z = sf_div(f, in[0], in[1], rm, &env);
                            break;
                        }
                        snprintf(what, sizeof what, "%s op %d %s %llx %llx",
                                 f->name, bin_ops[k], sf_round_name(rm),
                                 (unsigned long long)in[0],
                                 (unsigned long long)in[1]);
                        bad += check_one_event(&env, what, bin_ops[k], rm, f,
                                               2, ff, in, z);
                        n++;
                    }
                    env = env_with_sink(ieee);
                    z = sf_fma(f, in[0], in[1], in[2], rm, &env);
                    snprintf(
                        what, sizeof what, "%s fma %s %llx %llx %llx", f->name,
                        sf_round_name(rm), (unsigned long long)in[0],
                        (unsigned long long)in[1], (unsigned long long)in[2]);
                    bad += check_one_event(&env, what, SF_OP_FMA, rm, f, 3, ff,
                                           in, z);
                    n++;
                }
                {
                    uint64_t in[1] = {v[i]};
                    uint64_t z;
                    sf_env env = env_with_sink(ieee);

                    z = sf_sqrt(f, in[0], rm, &env);
                    snprintf(what, sizeof what, "%s sqrt %s %llx", f->name,
                             sf_round_name(rm), (unsigned long long)in[0]);
                    bad += check_one_event(&env, what, SF_OP_SQRT, rm, f, 1,
                                           ff, in, z);
                    env = env_with_sink(ieee);
                    z = sf_round_to_int(f, in[0], rm, true, &env);
                    snprintf(what, sizeof what, "%s round_to_int %s %llx",
                             f->name, sf_round_name(rm),
                             (unsigned long long)in[0]);
                    bad += check_one_event(&env, what, SF_OP_ROUND_INT, rm, f,
                                           1, ff, in, z);
                    n += 2;
                    for (int t = 0; t < N_FMTS; t++) {
                        const sf_format *to = fmts[t].f;
                        env = env_with_sink(ieee);
                        z = sf_convert(to, f, in[0], rm, &env);
                        snprintf(what, sizeof what, "%s to %s %s %llx",
                                 f->name, to->name, sf_round_name(rm),
                                 (unsigned long long)in[0]);
                        bad += check_one_event(&env, what, SF_OP_CONVERT, rm,
                                               to, 1, ff, in, z);
                        n++;
                    }
                    {
                        const sf_format *none[1] = {NULL};
                        int64_t zi;
                        env = env_with_sink(ieee);
                        zi = sf_to_i32(f, in[0], rm, &env);
                        snprintf(what, sizeof what, "%s to_i32 %s %llx",
                                 f->name, sf_round_name(rm),
                                 (unsigned long long)in[0]);
                        bad += check_one_event(&env, what, SF_OP_TO_INT, rm,
                                               NULL, 1, ff, in, (uint64_t)zi);
                        env = env_with_sink(ieee);
                        zi = sf_to_i64(f, in[0], rm, &env);
                        snprintf(what, sizeof what, "%s to_i64 %s %llx",
                                 f->name, sf_round_name(rm),
                                 (unsigned long long)in[0]);
                        bad += check_one_event(&env, what, SF_OP_TO_INT, rm,
                                               NULL, 1, ff, in, (uint64_t)zi);
                        n += 2;
                        (void)none;
                    }
                }
            }
            {
                static const int64_t ints[] = {0, 1, -7, 1000003,
                                               INT64_C(-9007199254740993)};
                const sf_format *none[1] = {NULL};
                for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
                    uint64_t in[1] = {(uint64_t)ints[i]};
                    sf_env env = env_with_sink(ieee);
                    uint64_t z = sf_from_i64(f, ints[i], rm, &env);
                    snprintf(what, sizeof what, "%s from_i64 %s %lld", f->name,
                             sf_round_name(rm), (long long)ints[i]);
                    bad += check_one_event(&env, what, SF_OP_FROM_INT, rm, f,
                                           1, none, in, z);
                    env = env_with_sink(ieee);
                    z = sf_from_i32(f, (int32_t)ints[i], rm, &env);
                    in[0] = (uint64_t)(int64_t)(int32_t)ints[i];
                    snprintf(what, sizeof what, "%s from_i32 %s %d", f->name,
                             sf_round_name(rm), (int)(int32_t)ints[i]);
                    bad += check_one_event(&env, what, SF_OP_FROM_INT, rm, f,
                                           1, none, in, z);
                    n += 2;
                }
            }
            {
                static const char *const txt[] = {"0",        "0.1", "-1e9",
                                                  "0x1.8p-3", "nan", "inf"};
                for (size_t i = 0; i < sizeof txt / sizeof txt[0]; i++) {
                    sf_env env = env_with_sink(ieee);
                    uint64_t z = sf_from_string(f, txt[i], NULL, rm, &env);
                    snprintf(what, sizeof what, "%s from_string %s \"%s\"",
                             f->name, sf_round_name(rm), txt[i]);
                    bad += check_one_event(&env, what, SF_OP_FROM_STRING, rm,
                                           f, 0, NULL, NULL, z);
                    n++;
                }
            }
        }
    }
    ck_assert_msg(bad == 0, "%u of %u operations gave a wrong event", bad, n);
}
END_TEST

/* sf_from_double: op SF_OP_FROM_DOUBLE, the operand is the double's bits
   and its in_fmt is NULL (softfloat.h: "NULL for integer, double,
   text"). */
START_TEST(test_from_double_event)
{
    unsigned bad = 0, n = 0;
    char what[96];

    for (int fi = 0; fi < N_FMTS; fi++) {
        const sf_format *f = fmts[fi].f;
        for (int m = 0; m < SF_N_ROUND; m++) {
            sf_round rm = (sf_round)m;
            {
                static const double dbl[] = {0.0, 1.0, -0.1, 1e300, 3e-310};
                const sf_format *none[1] = {NULL};
                for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++) {
                    uint64_t in[1];
                    sf_env env = env_with_sink(ieee);
                    uint64_t z = sf_from_double(f, dbl[i], rm, &env);
                    memcpy(in, &dbl[i], sizeof in[0]);
                    snprintf(what, sizeof what, "%s from_double %s %a",
                             f->name, sf_round_name(rm), dbl[i]);
                    bad += check_one_event(&env, what, SF_OP_FROM_DOUBLE, rm,
                                           f, 1, none, in, z);
                    n++;
                }
            }
        }
    }
    ck_assert_msg(bad == 0, "%u of %u sf_from_double events wrong", bad, n);
}
END_TEST

/* The typed wrappers report the same events; no sink, no events (and no
   crash). */
START_TEST(test_typed_and_no_sink)
{
    unsigned bad = 0;
    sf_env env = env_with_sink(ieee);
    sf_bf16 a = {0x3F81}, b = {0x3B80};
    sf_bf16 z = sf_bf16_add(a, b, SF_RNE, &env);
    tst_rng r;

    if (cap.n != 1 || cap.ev[0].op != SF_OP_ADD
        || cap.ev[0].fmt != &sf_format_bf16 || cap.ev[0].result != z.bits
        || cap.ev[0].in[0] != 0x3F81 || cap.ev[0].in[1] != 0x3B80
        || !cap.ev[0].tie || cap.ev[0].dir != 1 || z.bits != 0x3F82)
        bad++;
    tst_rng_init(&r, 0xE0u);
    memset(&cap, 0, sizeof cap);
    for (int i = 0; i < 100000; i++) {
        sf_env plain = SF_ENV_IEEE;
        sf_f32 x = {(uint32_t)tst_rand64(&r)}, y = {(uint32_t)tst_rand64(&r)};
        sf_round rm = (sf_round)(i % SF_N_ROUND);
        (void)sf_f32_add(x, y, rm, &plain);
        (void)sf_f32_fma(x, y, x, rm, &plain);
        (void)sf_f32_sqrt(x, rm, &plain);
        (void)sf_f32_to_bf16(x, rm, &plain);
        (void)sf_f32_to_e4m3(x, rm, &plain);
        (void)sf_f32_to_i32(x, rm, &plain);
    }
    ck_assert_msg(bad == 0 && cap.n == 0,
                  "typed wrapper event wrong (%u) or events without a sink "
                  "(%u)",
                  bad, cap.n);
}
END_TEST

/*----------------------------------------------------------------------------
 * Special fields.
 *--------------------------------------------------------------------------*/
START_TEST(test_fields)
{
    unsigned bad = 0;
    const char *what;
    const sf_event *ev = &cap.ev[0];

    {
        /* SR: the event carries the draw sf_sr_random(seed, counter) */
        sf_env env = env_with_sink(ieee);
        sf_f32 a = {0x3F801234u};
        env.sr_seed = 555;
        env.sr_counter = 17;
        (void)sf_f32_to_bf16(a, SF_SR, &env);
        what = "sr";
        EXPECT(cap.n == 1 && ev->mode == SF_SR);
        EXPECT(ev->sr_random == sf_sr_random(555, 17));
        EXPECT(env.sr_counter == 18);
        EXPECT((ev->dir > 0) == (ev->sr_random < (UINT64_C(0x1234) << 48)));
    }
    {
        /* FTZ: 2^-126 * 0.5 = 2^-127, exact but tiny: flushed to +0 with
           underflow and inexact; the error is -2^-127 */
        sf_env env = env_with_sink(ieee);
        sf_f32 a = {0x00800000u}, b = {0x3F000000u};
        env.ftz = true;
        what = "ftz";
        EXPECT(sf_f32_mul(a, b, SF_RNE, &env).bits == 0);
        EXPECT(cap.n == 1 && ev->ftz && ev->tiny && !ev->subnormal);
        EXPECT(ev->flags == (SF_FLAG_UNDERFLOW | SF_FLAG_INEXACT));
        EXPECT(env.flags == ev->flags);
        EXPECT(ev->result == 0 && ev->dir == -1);
        EXPECT(value_is(from_dyadic(&ev->error), true, 1, -127));
        env = env_with_sink(ieee);
        env.ftz = true;
        a.bits = 0x80800000u;
        EXPECT(sf_f32_mul(a, b, SF_RUP, &env).bits == 0x80000000u);
        EXPECT(cap.n == 1 && ev->ftz && ev->result == 0x80000000u);
    }
    {
        /* DAZ: 2^-149 + 1 reads as 0 + 1 = 1 exactly */
        sf_env env = env_with_sink(ieee);
        sf_f32 a = {0x00000001u}, b = {0x3F800000u};
        env.daz = true;
        what = "daz";
        EXPECT(sf_f32_add(a, b, SF_RNE, &env).bits == 0x3F800000u);
        EXPECT(cap.n == 1 && ev->daz && !ev->ftz && ev->dir == 0);
        EXPECT(ev->flags == 0 && env.flags == 0);
        env = env_with_sink(ieee);
        (void)sf_f32_add(a, b, SF_RNE, &env);
        EXPECT(cap.n == 1 && !ev->daz && ev->dir == -1);
    }
    {
        /* overflow: max * 2 in RNE is +Inf, error infinite; in RTZ the
           largest finite value, error max - 2 max = -max exactly */
        sf_env env = env_with_sink(ieee);
        sf_f32 a = {0x7F7FFFFFu}, b = {0x40000000u};
        what = "overflow";
        EXPECT(sf_f32_mul(a, b, SF_RNE, &env).bits == 0x7F800000u);
        EXPECT(cap.n == 1 && ev->overflow && ev->error_infinite);
        EXPECT(ev->flags == (SF_FLAG_OVERFLOW | SF_FLAG_INEXACT));
        EXPECT(ev->dir == 1);
        EXPECT(isinf(sf_event_error_ulps(ev)) && sf_event_error_ulps(ev) > 0);
        env = env_with_sink(ieee);
        EXPECT(sf_f32_mul(a, b, SF_RTZ, &env).bits == 0x7F7FFFFFu);
        EXPECT(cap.n == 1 && ev->overflow && !ev->error_infinite);
        EXPECT(ev->dir == -1 && !ev->error.tail);
        EXPECT(value_is(from_dyadic(&ev->error), true, 0xFFFFFF, 104));
        env = env_with_sink(ieee);
        a.bits = 0xFF7FFFFFu;
        EXPECT(sf_f32_mul(a, b, SF_RUP, &env).bits == 0xFF7FFFFFu);
        EXPECT(cap.n == 1 && ev->overflow && !ev->error_infinite);
        /* E4M3: overflow gives its NaN, an infinite error */
        env = env_with_sink(ieee);
        {
            sf_f32 big = {0x44000000u}; /* 512 */
            EXPECT(sf_f32_to_e4m3(big, SF_RNE, &env).bits == 0x7F);
            EXPECT(cap.n == 1 && ev->overflow && ev->error_infinite);
        }
    }
    {
        /* subnormal results: exact (no flags) and inexact (tie to even) */
        sf_env env = env_with_sink(ieee);
        sf_f32 a = {0x00800000u}, b = {0x3F000000u}, c = {0x00800001u};
        what = "subnormal";
        EXPECT(sf_f32_mul(a, b, SF_RNE, &env).bits == 0x00400000u);
        EXPECT(cap.n == 1 && ev->subnormal && ev->tiny && ev->dir == 0);
        EXPECT(ev->flags == 0 && is_zero_dyadic(&ev->error));
        EXPECT(ev->ulp_exp == -149);
        env = env_with_sink(ieee);
        EXPECT(sf_f32_mul(c, b, SF_RNE, &env).bits == 0x00400000u);
        EXPECT(cap.n == 1 && ev->subnormal && ev->tiny && ev->tie);
        EXPECT(ev->dir == -1);
        EXPECT(ev->flags == (SF_FLAG_UNDERFLOW | SF_FLAG_INEXACT));
        EXPECT(value_is(from_dyadic(&ev->error), true, 1, -150));
        EXPECT(sf_event_error_ulps(ev) == -0.5);
    }
    {
        /* exact, zero, Inf and NaN results: direction 0, zero error;
           Inf and NaN results have an infinite error */
        sf_env env = env_with_sink(ieee);
        sf_f32 one = {0x3F800000u}, mone = {0xBF800000u};
        sf_f32 inf = {0x7F800000u}, qnan = {0x7FC00000u};
        what = "exact";
        EXPECT(sf_f32_add(one, one, SF_RNE, &env).bits == 0x40000000u);
        EXPECT(cap.n == 1 && ev->dir == 0 && is_zero_dyadic(&ev->error));
        EXPECT(!ev->error_infinite && ev->flags == 0);
        EXPECT(sf_event_error_ulps(ev) == 0.0);
        env = env_with_sink(ieee);
        EXPECT(sf_f32_add(one, mone, SF_RNE, &env).bits == 0);
        EXPECT(cap.n == 1 && ev->dir == 0 && is_zero_dyadic(&ev->error));
        EXPECT(!ev->error_infinite);
        env = env_with_sink(ieee);
        EXPECT(sf_f32_add(inf, one, SF_RNE, &env).bits == 0x7F800000u);
        EXPECT(cap.n == 1 && ev->dir == 0 && ev->error_infinite);
        env = env_with_sink(ieee);
        EXPECT(sf_f32_mul(qnan, one, SF_RNE, &env).bits == 0x7FC00000u);
        EXPECT(cap.n == 1 && ev->dir == 0 && ev->error_infinite);
        EXPECT(ev->flags == 0);
        env = env_with_sink(ieee);
        EXPECT(sf_f32_mul(inf, (sf_f32){0}, SF_RNE, &env).bits == 0x7FC00000u);
        EXPECT(cap.n == 1 && ev->dir == 0 && ev->error_infinite);
        EXPECT(ev->flags == SF_FLAG_INVALID);
    }
    ck_assert_msg(bad == 0, "%u event field problems (printed above)", bad);
}
END_TEST

/*----------------------------------------------------------------------------
 * Random operations: the event must agree with itself and the result.
 *   result - exact == error, exactly (when the exact value has no tail);
 *   lsb, guard, round, sticky, tie recomputed from exact and ulp_exp;
 *   dir != 0 iff inexact is raised, and dir is the sign of error relative
 *   to the result's sign;
 *   |error| <= 1/2 ulp (RNE, RNA) or < 1 ulp (others) without overflow or
 *   FTZ; flags == env flags; result == the returned bits.
 *--------------------------------------------------------------------------*/
static unsigned
check_consistency(const sf_env *env, const char *opname, const sf_format *f,
                  sf_round rm, const uint64_t *in, unsigned n_in, uint64_t z,
                  bool verbose, unsigned long *n_identity)
{
    const sf_event *ev = &cap.ev[0];
    const fmt_info *fi = info_of(f);
    value rv, xv = from_dyadic(&ev->exact), ev_err = from_dyadic(&ev->error);
    unsigned bad = 0;
    int64_t p = (int64_t)ev->ulp_exp - xv.exp; /* the ulp's bit in sig */
    const char *what = opname;

    if (cap.n != 1 || ev->result != z || ev->flags != env->flags) {
        bad++;
        goto out;
    }
    if (ev->error_infinite)
        return 0;
    if (!decode(fi, z, &rv)) {
        bad++;
        goto out;
    }
    EXPECT((ev->dir != 0) == ((ev->flags & SF_FLAG_INEXACT) != 0));
    if (!ev->exact.tail && !ev->error.tail) {
        int d = difference_is(rv, xv, ev_err);
        EXPECT(d != 0);
        *n_identity += d == 1;
    }
    if (ev->dir != 0 && ev_err.sig != 0)
        EXPECT((ev->dir > 0) == (ev_err.neg == xv.neg));
    if (xv.sig != 0) {
        unsigned st = any_below(xv.sig, p - 2) || ev->exact.tail;
        EXPECT(ev->lsb == bit_of(xv.sig, p));
        EXPECT(ev->guard == bit_of(xv.sig, p - 1));
        EXPECT(ev->round == bit_of(xv.sig, p - 2));
        EXPECT(ev->sticky == st);
        EXPECT(ev->tie == (ev->guard && !ev->round && !st));
    }
    if (!ev->overflow && !ev->ftz) {
        double u = fabs(sf_event_error_ulps(ev));
        EXPECT(u <= ((rm == SF_RNE || rm == SF_RNA) ? 0.5 : 1.0));
    }
out:
    if (bad && verbose) {
        char fl[6];
        printf("  event: op %d dir %d g %u r %u s %u tie %d ulp_exp %d "
               "flags %s err %g ulp\n",
               ev->op, ev->dir, ev->guard, ev->round, ev->sticky, ev->tie,
               (int)ev->ulp_exp, sf_flags_str(ev->flags, fl),
               sf_event_error_ulps(ev));
        tst_print_case(opname, f, rm, in, n_in, z, env->flags, ev->result,
                       ev->flags);
    }
    return bad;
}

static uint64_t
rand_operand(tst_rng *r, const fmt_info *fi, unsigned k)
{
    unsigned w = 1 + fi->e_bits + fi->m_bits;
    uint64_t x = tst_rand64(r) >> (64 - w);

    if (k % 3 == 1) /* near 1: exponent field 0111..1 or 1000..0 */
        x = (x & ((UINT64_C(1) << fi->m_bits) - 1))
            | ((((UINT64_C(1) << (fi->e_bits - 1)) - 1) + (tst_rand64(r) & 1))
               << fi->m_bits)
            | (x & (UINT64_C(1) << (w - 1)));
    return x << fi->pad;
}

START_TEST(test_random_consistency)
{
    const fmt_info *fi = &fmts[_i];
    const sf_format *f = fi->f;
    const unsigned long n = 20000ul * tst_multiplier();
    unsigned long bad = 0, n_ident = 0, n_ev = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0xE100u + (unsigned)_i);
    for (unsigned long i = 0; i < n; i++) {
        uint64_t in[3];
        sf_round rm = (sf_round)(i % SF_N_ROUND);
        static const char *const names[] = {
            "add", "sub", "mul", "div", "sqrt", "fma", "to_f32", "from_f32"};
        unsigned k;

        for (int j = 0; j < 3; j++)
            in[j] = rand_operand(&r, fi, (unsigned)(i + (unsigned)j));
        for (k = 0; k < 8; k++) {
            sf_env env = env_with_sink(ieee);
            uint64_t z;
            const sf_format *zf = f;
            unsigned n_in = 2, b;

            env.ftz = (i % 11) == 3;
            env.daz = (i % 13) == 5;
            env.tininess_after = (i % 2) == 0;
            env.sr_seed = i;
            switch (k) {
            case 0:
                z = sf_add(f, in[0], in[1], rm, &env);
                break;
            case 1:
                z = sf_sub(f, in[0], in[1], rm, &env);
                break;
            case 2:
                z = sf_mul(f, in[0], in[1], rm, &env);
                break;
            case 3:
                z = sf_div(f, in[0], in[1], rm, &env);
                break;
            case 4:
                z = sf_sqrt(f, in[0], rm, &env);
                n_in = 1;
                break;
            case 5:
                z = sf_fma(f, in[0], in[1], in[2], rm, &env);
                n_in = 3;
                break;
            case 6:
                z = sf_convert(&sf_format_f32, f, in[0], rm, &env);
                zf = &sf_format_f32;
                n_in = 1;
                break;
            default: {
                uint64_t x = (uint32_t)tst_rand64(&r);
                in[0] = x;
                z = sf_convert(f, &sf_format_f32, x, rm, &env);
                n_in = 1;
                break;
            }
            }
            n_ev++;
            b = check_consistency(&env, names[k], zf, rm, in, n_in, z,
                                  printed < TST_MAX_PRINT, &n_ident);
            printed += b != 0;
            bad += b != 0;
        }
    }
    printf("events %s: %lu events, %lu exact identities checked, %lu bad\n",
           f->name, n_ev, n_ident, bad);
    ck_assert_msg(bad == 0, "%s: %lu of %lu events inconsistent", f->name, bad,
                  n_ev);
}
END_TEST

static Suite *
events_suite(void)
{
    Suite *s = suite_create("events");
    TCase *tc;

    tc = tst_add_tcase(s, "paper", 0);
    tcase_add_test(tc, test_paper_t1);
    tcase_add_test(tc, test_paper_t2);
    tcase_add_test(tc, test_paper_t3);
    tc = tst_add_tcase(s, "kinds", 60);
    tcase_add_test(tc, test_every_kind);
    tcase_add_test(tc, test_from_double_event);
    tcase_add_test(tc, test_typed_and_no_sink);
    tcase_add_test(tc, test_fields);
    tc = tst_add_tcase(s, "random", 120);
    tcase_add_loop_test(tc, test_random_consistency, 0, N_FMTS);
    return s;
}

int
main(void)
{
    return tst_run_suite(events_suite());
}
