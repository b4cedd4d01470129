/* test_mma_gemm.c -- sf_mma_gemm: each path (portable, AVX2, AVX-512)
   against one sf_mma_dot per element (bits and flags) on random, edge
   and directed inputs, the choice of path under env->isa, and the GEMM
   against blocks chained by hand through sf_mma_block */
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
#include "tests/support/support.h"

#define MAX_M 6
#define MAX_N 40
#define MAX_K 130

static uint16_t buf_a[MAX_M * MAX_K], buf_b[MAX_K * MAX_N];
static uint32_t buf_c[MAX_M * MAX_N], d_scalar[MAX_M * MAX_N],
    d_vec[MAX_M * MAX_N];

/* A value of F (BF16 or FP16) near 2^base, or an edge value. */
static uint16_t
gen_in(tst_rng *r, const sf_format *f, int base, bool specials)
{
    uint64_t x = tst_rand64(r);
    unsigned cls = (unsigned)(x % 100);
    uint64_t sign = (x >> 8) & 1u ? f->sign_mask : 0;
    uint64_t frac = (x >> 9) & (f->frac_mask >> f->pad_bits);
    unsigned emaxf = (1u << f->exp_bits) - 1;
    int e;

    if (cls < 60) {
        e = base + (int)((x >> 32) % 13) - 6;
    } else if (cls < 68) {
        e = (int)((x >> 32) % (unsigned)(f->emax - f->emin + 1)) + f->emin;
    } else if (cls < 76) {
        return (uint16_t)(sign | (frac ? frac : 1u)); /* subnormal */
    } else if (cls < 84) {
        return (uint16_t)sign;
    } else if (cls < 88 && specials) {
        return (uint16_t)(sign | f->exp_mask
                          | ((x >> 40) & 1u ? (frac ? frac : 1u) : 0u));
    } else if (cls < 94) {
        e = f->emax - (int)((x >> 32) % 3);
    } else {
        e = f->emin + (int)((x >> 32) % 3);
    }
    if (e < f->emin)
        e = f->emin;
    if (e > f->emax)
        e = f->emax;
    (void)emaxf;
    return (uint16_t)(sign | ((uint64_t)(e + f->bias) << f->frac_bits) | frac);
}

static uint32_t
gen_c(tst_rng *r, int base, bool specials)
{
    uint64_t x = tst_rand64(r);
    unsigned cls = (unsigned)(x % 100);
    uint32_t sign = (uint32_t)((x >> 8) & 1u) << 31;
    uint32_t frac = (uint32_t)((x >> 9) & 0x7FFFFFu);
    int e;

    if (cls < 60)
        e = base + (int)((x >> 40) % 31) - 15;
    else if (cls < 68)
        return sign | frac;
    else if (cls < 78)
        return sign;
    else if (cls < 81 && specials)
        return sign | 0x7F800000u | ((x >> 50) & 1u ? frac | 1u : 0u);
    else
        e = (int)((x >> 40) % 254) - 126;
    if (e < -126)
        e = -126;
    if (e > 127)
        e = 127;
    return sign | (uint32_t)(e + 127) << 23 | frac;
}

/* Fills A, B, C for an M x N x K problem; some products cancel exactly. */
static void
gen_problem(tst_rng *r, const sf_format *f, size_t m, size_t n, size_t k,
            bool specials)
{
    int base = (int)(tst_rand64(r) % 9) - 4;

    if (tst_rand64(r) % 6 == 0)
        base = f == &sf_format_bf16 ? -63 : -7; /* products near emin */
    for (size_t i = 0; i < m * k; i++)
        buf_a[i] = gen_in(r, f, base, specials);
    for (size_t i = 0; i < k * n; i++)
        buf_b[i] = gen_in(r, f, base, specials);
    for (size_t i = 0; i < m * n; i++)
        buf_c[i] = gen_c(r, 2 * base, specials);
    /* exact cancellation: a[i][k+1] b[k+1][j] = -a[i][k] b[k][j] */
    if (k >= 2 && tst_rand64(r) % 3 == 0) {
        for (size_t kk = 0; kk + 1 < k; kk += 2) {
            for (size_t i = 0; i < m; i++)
                buf_a[i * k + kk + 1] = buf_a[i * k + kk];
            for (size_t j = 0; j < n; j++)
                buf_b[(kk + 1) * n + j] =
                    (uint16_t)(buf_b[kk * n + j] ^ f->sign_mask);
        }
    }
}

/* The models the vector path covers, with their input formats. */
typedef struct
{
    sf_mma_model m;
    const sf_format *f;
} variant;

/* Variants of sm90, in order: a field of -1 keeps the preset's value;
   ZERO_C 1 also lifts the emax floor. */
static const struct
{
    const char *name;
    int frac_bits, n;
    bool daz, ovf_ieee;
    int zero_c;
} sm90_variants[] = {
    {"sm90+daz", -1, -1, true, false, -1},
    {"sm90+zero-c", -1, -1, false, false, 1},
    {"sm90+ovf-ieee", -1, -1, false, true, 0},
    {"F0n5", 0, 5, false, false, -1},
    {"F40n64", 40, 64, false, false, -1},
    {"n1", -1, 1, false, false, -1},
    /* the largest F whose products fit 32-bit lanes, with a block sum
       that does not (n = 16) and one that does (n = 2); and F = 30 */
    {"F29n16", 29, -1, false, false, -1},
    {"F29n2", 29, 2, false, false, -1},
    {"F30n8", 30, 8, false, false, -1},
};

static size_t
make_variants(variant *v)
{
    size_t n = 0;
    const sf_format *fmts[2] = {&sf_format_bf16, &sf_format_f16};

    for (unsigned fi = 0; fi < 2; fi++) {
        static const char *const names[] = {"sm80", "sm90", "sm100"};
        for (size_t i = 0; i < 3; i++) {
            v[n].m = *sf_mma_preset_by_name(names[i]);
            v[n++].f = fmts[fi];
        }
        for (size_t i = 0; i < sizeof sm90_variants / sizeof sm90_variants[0];
             i++) {
            sf_mma_model *m = &v[n].m;
            *m = *sf_mma_preset_by_name("sm90");
            m->name = sm90_variants[i].name;
            if (sm90_variants[i].frac_bits >= 0)
                m->frac_bits = sm90_variants[i].frac_bits;
            if (sm90_variants[i].n >= 0)
                m->n = (unsigned)sm90_variants[i].n;
            if (sm90_variants[i].daz)
                m->daz = true;
            if (sm90_variants[i].ovf_ieee)
                m->overflow = SF_MMA_OVF_IEEE;
            if (sm90_variants[i].zero_c >= 0)
                m->zero_c_in_max = sm90_variants[i].zero_c != 0;
            if (sm90_variants[i].zero_c > 0)
                m->emax_floor = SF_MMA_NO_FLOOR;
            v[n++].f = fmts[fi];
        }
    }
    v[n].m = *sf_mma_preset_by_name("sm70");
    v[n++].f = &sf_format_f16;
    return n;
}

/* D and the flags of one dot product per element through sf_mma_dot:
   the one-block code, which the tiled paths do not use. */
static void
gemm_by_dots(const sf_mma_model *m, const sf_format *f, size_t rows,
             size_t cols, size_t k, const uint32_t *c, uint32_t *d,
             sf_env *env)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            d[i * cols + j] = (uint32_t)sf_mma_dot(
                m, f, buf_a + i * k, 1, f, buf_b + j, (ptrdiff_t)cols, k,
                c != NULL ? c[i * cols + j] : 0, env);
}

/* The paths under test: the portable tiled path, the portable binary32
   path (SF_MMA_PATH_AUTO under the scalar cap: BF16 blocks on the host's
   float unit, FP16 and out-of-range rows on the tiled path; it reports
   SF_MMA_PATH_SCALAR) and each vector path the CPU has. */
typedef struct
{
    sf_mma_path path;
    const char *name;
    bool (*available)(void);
    sf_isa isa;          /* env.isa of the call */
    sf_mma_path reports; /* what sf_mma_gemm returns */
} path_case;

static bool
always(void)
{
    return true;
}

static const path_case paths[] = {
    {SF_MMA_PATH_SCALAR, "scalar", always, SF_ISA_AUTO, SF_MMA_PATH_SCALAR},
    {SF_MMA_PATH_AUTO, "binary32", always, SF_ISA_SCALAR, SF_MMA_PATH_SCALAR},
    {SF_MMA_PATH_AVX2, "avx2", sf_mma_gemm_avx2_available, SF_ISA_AUTO,
     SF_MMA_PATH_AVX2},
    {SF_MMA_PATH_AVX512, "avx512", sf_mma_gemm_avx512_available, SF_ISA_AUTO,
     SF_MMA_PATH_AVX512},
};

/* Path P against one dot product per element, bits and flags, on random
   and edge inputs of every covered variant. */
static void
check_path(const path_case *p)
{
    variant v[32];
    size_t nv = make_variants(v);
    unsigned long n = 0, bad = 0, problems = 0;
    unsigned printed = 0;
    tst_rng r;

    if (!p->available()) {
        printf("test_mma_gemm: %s path skipped: the CPU lacks it\n", p->name);
        return;
    }
    tst_rng_init(&r, 0x6E33u);
    for (size_t w = 0; w < nv; w++) {
        for (unsigned rep = 0; rep < 60 * tst_multiplier(); rep++) {
            /* one row in a third of the problems: the kernels that
               decode B themselves */
            size_t m0 = 1 + tst_rand64(&r) % MAX_M, m = rep % 3 ? m0 : 1;
            size_t nn = 1 + tst_rand64(&r) % MAX_N;
            size_t k = tst_rand64(&r) % MAX_K;
            bool specials = rep % 4 == 3;
            bool with_c = rep % 5 != 0;
            sf_env es = SF_ENV_NVIDIA, ev = SF_ENV_NVIDIA;
            int pv;

            ck_assert_msg(sf_mma_gemm_covers(&v[w].m, v[w].f, v[w].f),
                          "%s not covered", v[w].m.name);
            gen_problem(&r, v[w].f, m, nn, k, specials);
            gemm_by_dots(&v[w].m, v[w].f, m, nn, k, with_c ? buf_c : NULL,
                         d_scalar, &es);
            ev.isa = p->isa;
            pv = sf_mma_gemm(&v[w].m, m, nn, k, v[w].f, buf_a, v[w].f, buf_b,
                             with_c ? buf_c : NULL, d_vec, p->path, &ev);
            ck_assert_int_eq(pv, p->reports);
            problems++;
            for (size_t i = 0; i < m * nn; i++) {
                n++;
                if (d_scalar[i] != d_vec[i]) {
                    bad++;
                    if (printed++ < TST_MAX_PRINT)
                        printf("%s %s %s M=%zu N=%zu K=%zu element %zu: "
                               "c=%08x dots=%08x %s=%08x\n",
                               p->name, v[w].m.name, v[w].f->name, m, nn, k, i,
                               with_c ? (unsigned)buf_c[i] : 0u,
                               (unsigned)d_scalar[i], p->name,
                               (unsigned)d_vec[i]);
                }
            }
            if (es.flags != ev.flags) {
                char fs[6], fv[6];
                bad++;
                if (printed++ < TST_MAX_PRINT)
                    printf("%s %s %s M=%zu N=%zu K=%zu: flags dots %s %s "
                           "%s\n",
                           p->name, v[w].m.name, v[w].f->name, m, nn, k,
                           sf_flags_str(es.flags, fs), p->name,
                           sf_flags_str(ev.flags, fv));
            }
        }
    }
    printf("gemm %s vs dots: %lu problems, %lu elements, %lu mismatches\n",
           p->name, problems, n, bad);
    ck_assert_msg(bad == 0, "%s: %lu mismatches", p->name, bad);
}

START_TEST(test_path_vs_dots)
{
    check_path(&paths[_i]);
}
END_TEST

/* Every preset (its first documented input format): GEMM elements equal
   sf_mma_block chained by hand over ascending slices of n. */
static const sf_format *
first_format(const sf_mma_model *m)
{
    if (m->in_formats & SF_MMA_IN_BF16)
        return &sf_format_bf16;
    if (m->in_formats & SF_MMA_IN_F16)
        return &sf_format_f16;
    return NULL; /* TF32 and FP8 presets: not 16-bit inputs */
}

START_TEST(test_gemm_vs_blocks)
{
    unsigned long n = 0, bad = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0xB10Cu);
    for (size_t p = 0; p < sf_mma_preset_count(); p++) {
        const sf_mma_model *m = sf_mma_preset(p);
        const sf_format *f = first_format(m);
        if (f == NULL)
            continue;
        for (unsigned rep = 0; rep < 12; rep++) {
            size_t rows = 1 + tst_rand64(&r) % 3;
            size_t cols = 1 + tst_rand64(&r) % 9;
            size_t k = tst_rand64(&r) % MAX_K;
            size_t step = m->n == 0 ? (k == 0 ? 1 : k) : m->n;
            sf_env env = SF_ENV_IEEE;

            gen_problem(&r, f, rows, cols, k, rep % 3 == 2);
            sf_mma_gemm(m, rows, cols, k, f, buf_a, f, buf_b, buf_c, d_scalar,
                        SF_MMA_PATH_AUTO, &env);
            for (size_t i = 0; i < rows; i++)
                for (size_t j = 0; j < cols; j++) {
                    uint64_t acc = buf_c[i * cols + j];
                    for (size_t k0 = 0; k0 < k; k0 += step) {
                        uint64_t a[MAX_K], b[MAX_K];
                        size_t len = k - k0 < step ? k - k0 : step;
                        sf_env e2 = SF_ENV_IEEE;
                        for (size_t t = 0; t < len; t++) {
                            a[t] = buf_a[i * k + k0 + t];
                            b[t] = buf_b[(k0 + t) * cols + j];
                        }
                        acc = sf_mma_block(m, f, a, f, b, len, acc, &e2);
                    }
                    n++;
                    if (acc != d_scalar[i * cols + j]) {
                        bad++;
                        if (printed++ < TST_MAX_PRINT)
                            printf("%s K=%zu element (%zu,%zu): gemm=%08x "
                                   "blocks=%08x\n",
                                   m->name, k, i, j,
                                   (unsigned)d_scalar[i * cols + j],
                                   (unsigned)acc);
                    }
                }
        }
    }
    printf("gemm vs chained blocks: %lu elements, %lu mismatches\n", n, bad);
    ck_assert_msg(bad == 0, "%lu mismatches", bad);
}
END_TEST

/* Directed blocks for every path: a block that overflows to Inf and a
   later block that starts from it; products that are all subnormal;
   pairs that cancel exactly, beside a C of +-2^-24; a single negative
   product of the smallest BF16 subnormal. */
START_TEST(test_directed)
{
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    enum
    {
        K = 40,
        N = 19
    };
    static uint16_t a[4 * K], b[K * N];
    uint32_t c[4 * N], ref[4 * N], got[4 * N];
    unsigned long bad = 0;

    for (size_t j = 0; j < N; j++)
        for (size_t t = 0; t < K; t++) {
            /* row 0: 2^127 * 1.5 * 2^0 ... overflows in the first block */
            a[0 * K + t] = 0x7F40;
            b[t * N + j] = (uint16_t)(t < 16 ? 0x3FC0 : 0x3F80 + j);
            /* row 1: subnormals times b: every product below FP32's
               normal range */
            a[1 * K + t] = (uint16_t)(0x0001 + t);
            /* row 2: 2b - 2b in pairs (t >= 16: b depends on j only) */
            a[2 * K + t] = (uint16_t)(t % 2 ? 0xC000 : 0x4000);
            /* row 3: -2^-133 times b in the first block, zeros after */
            a[3 * K + t] = (uint16_t)(t == 0 ? 0x8001 : 0);
        }
    for (size_t j = 0; j < N; j++) {
        c[0 * N + j] = 0;
        c[1 * N + j] = (uint32_t)j;
        c[2 * N + j] = j % 2 ? 0x33800000u : 0xB3800000u; /* +-2^-24 */
        c[3 * N + j] = 0;
    }
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        sf_env er = SF_ENV_NVIDIA, eg = SF_ENV_NVIDIA;
        if (!paths[p].available()) {
            printf("test_mma_gemm: directed %s skipped: the CPU lacks it\n",
                   paths[p].name);
            continue;
        }
        memcpy(buf_a, a, sizeof a);
        memcpy(buf_b, b, sizeof b);
        gemm_by_dots(m, &sf_format_bf16, 4, N, K, c, ref, &er);
        eg.isa = paths[p].isa;
        ck_assert_int_eq(sf_mma_gemm(m, 4, N, K, &sf_format_bf16, a,
                                     &sf_format_bf16, b, c, got, paths[p].path,
                                     &eg),
                         paths[p].reports);
        for (size_t i = 0; i < 4 * N; i++)
            if (ref[i] != got[i] && bad++ < TST_MAX_PRINT)
                printf("directed %s element (%zu,%zu): dots=%08x got=%08x\n",
                       paths[p].name, i / N, i % N, (unsigned)ref[i],
                       (unsigned)got[i]);
        if (er.flags != eg.flags && bad++ < TST_MAX_PRINT) {
            char f1[6], f2[6];
            printf("directed %s: flags dots %s got %s\n", paths[p].name,
                   sf_flags_str(er.flags, f1), sf_flags_str(eg.flags, f2));
        }
    }
    /* the first row overflowed: +Inf (the NVIDIA rule), kept as Inf */
    ck_assert_uint_eq(ref[0], 0x7F800000u);
    ck_assert_msg(bad == 0, "%lu mismatches", bad);
}
END_TEST

/* A and B of different formats (BF16 by FP16 and FP16 by BF16) through
   every path, against one sf_mma_dot per element. */
START_TEST(test_mixed_formats)
{
    const sf_format *fmt[2] = {&sf_format_bf16, &sf_format_f16};
    unsigned long n = 0, bad = 0;
    tst_rng r;

    tst_rng_init(&r, 0x313Bu);
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (!paths[p].available()) {
            printf("test_mma_gemm: mixed formats %s skipped: the CPU lacks "
                   "it\n",
                   paths[p].name);
            continue;
        }
        for (unsigned rep = 0; rep < 80 * tst_multiplier(); rep++) {
            const sf_format *fa = fmt[rep % 2], *fb = fmt[1 - rep % 2];
            sf_mma_model m =
                *sf_mma_preset_by_name(rep % 4 < 2 ? "sm90" : "sm80");
            size_t rows0 = 1 + tst_rand64(&r) % MAX_M,
                   rows = rep % 3 ? rows0 : 1;
            size_t cols = 1 + tst_rand64(&r) % MAX_N;
            size_t k = tst_rand64(&r) % MAX_K;
            int base = (int)(tst_rand64(&r) % 9) - 4;
            sf_env er = SF_ENV_NVIDIA, eg = SF_ENV_NVIDIA;

            if (rep % 8 == 7)
                m.frac_bits = 35; /* the 64-bit kernels */
            for (size_t i = 0; i < rows * k; i++)
                buf_a[i] = gen_in(&r, fa, base, rep % 3 == 2);
            for (size_t i = 0; i < k * cols; i++)
                buf_b[i] = gen_in(&r, fb, base, rep % 3 == 2);
            for (size_t i = 0; i < rows * cols; i++)
                buf_c[i] = gen_c(&r, 2 * base, rep % 3 == 2);
            for (size_t i = 0; i < rows; i++)
                for (size_t j = 0; j < cols; j++)
                    d_scalar[i * cols + j] = (uint32_t)sf_mma_dot(
                        &m, fa, buf_a + i * k, 1, fb, buf_b + j,
                        (ptrdiff_t)cols, k, buf_c[i * cols + j], &er);
            eg.isa = paths[p].isa;
            ck_assert_int_eq(sf_mma_gemm(&m, rows, cols, k, fa, buf_a, fb,
                                         buf_b, buf_c, d_vec, paths[p].path,
                                         &eg),
                             paths[p].reports);
            for (size_t i = 0; i < rows * cols; i++) {
                n++;
                if (d_scalar[i] != d_vec[i] && bad++ < TST_MAX_PRINT)
                    printf("mixed %s %s x %s F=%d K=%zu element %zu: c=%08x "
                           "dots=%08x got=%08x\n",
                           paths[p].name, fa->name, fb->name, m.frac_bits, k,
                           i, (unsigned)buf_c[i], (unsigned)d_scalar[i],
                           (unsigned)d_vec[i]);
            }
            if (er.flags != eg.flags && bad++ < TST_MAX_PRINT) {
                char f1[6], f2[6];
                printf("mixed %s %s x %s K=%zu: flags dots %s got %s\n",
                       paths[p].name, fa->name, fb->name, k,
                       sf_flags_str(er.flags, f1), sf_flags_str(eg.flags, f2));
            }
        }
    }
    printf("gemm mixed formats vs dots: %lu elements, %lu mismatches\n", n,
           bad);
    ck_assert_msg(bad == 0, "%lu mismatches", bad);
}
END_TEST

/* env->isa caps the path; an explicit path above the cap fails. */
START_TEST(test_isa_cap)
{
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    uint16_t a[1] = {0x3F80}, b[1] = {0x4000};
    uint32_t d[1];
    sf_env env = SF_ENV_NVIDIA;
    bool v2 = sf_mma_gemm_avx2_available(),
         v512 = sf_mma_gemm_avx512_available();

    env.isa = SF_ISA_SCALAR;
    ck_assert_int_eq(sf_mma_gemm(m, 1, 1, 1, &sf_format_bf16, a,
                                 &sf_format_bf16, b, NULL, d, SF_MMA_PATH_AUTO,
                                 &env),
                     SF_MMA_PATH_SCALAR);
    ck_assert_uint_eq(d[0], 0x40000000u);
    ck_assert_int_eq(sf_mma_gemm(m, 1, 1, 1, &sf_format_bf16, a,
                                 &sf_format_bf16, b, NULL, d, SF_MMA_PATH_AVX2,
                                 &env),
                     -1);
    env.isa = SF_ISA_AVX2;
    ck_assert_int_eq(sf_mma_gemm_choose(m, &sf_format_bf16, &sf_format_bf16,
                                        SF_MMA_PATH_AUTO, &env),
                     v2 ? SF_MMA_PATH_AVX2 : SF_MMA_PATH_SCALAR);
    ck_assert_int_eq(sf_mma_gemm_choose(m, &sf_format_bf16, &sf_format_bf16,
                                        SF_MMA_PATH_AVX512, &env),
                     -1);
    env.isa = SF_ISA_AUTO;
    ck_assert_int_eq(sf_mma_gemm_choose(m, &sf_format_bf16, &sf_format_bf16,
                                        SF_MMA_PATH_AUTO, &env),
                     v512 && sf_isa_supported(SF_ISA_AVX512)
                         ? SF_MMA_PATH_AVX512
                     : v2 ? SF_MMA_PATH_AVX2
                          : SF_MMA_PATH_SCALAR);
    /* a model the tiled path does not cover: one dot per element */
    ck_assert_int_eq(sf_mma_gemm_choose(sf_mma_preset_by_name("fma-chain"),
                                        &sf_format_bf16, &sf_format_bf16,
                                        SF_MMA_PATH_AVX2, &env),
                     -1);
}
END_TEST

/* D may alias C; C NULL means +0; k = 0 gives C. */
START_TEST(test_edges)
{
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    uint16_t a[2] = {0x3F80, 0x3F80}, b[2] = {0x4000, 0x4000};
    uint32_t cd[1] = {0x3F800000}, d[1];
    sf_env env = SF_ENV_NVIDIA;

    sf_mma_gemm(m, 1, 1, 2, &sf_format_bf16, a, &sf_format_bf16, b, cd, cd,
                SF_MMA_PATH_AUTO, &env);
    ck_assert_uint_eq(cd[0], 0x40A00000); /* 1 + 2 + 2 */
    sf_mma_gemm(m, 1, 1, 2, &sf_format_bf16, a, &sf_format_bf16, b, NULL, d,
                SF_MMA_PATH_SCALAR, &env);
    ck_assert_uint_eq(d[0], 0x40800000);
    cd[0] = 0x80000001;
    sf_mma_gemm(m, 1, 1, 0, &sf_format_bf16, a, &sf_format_bf16, b, cd, d,
                SF_MMA_PATH_SCALAR, &env);
    ck_assert_uint_eq(d[0], 0x80000001);
    /* an event sink keeps the scalar path */
    {
        sf_event_sink sink = {NULL, NULL};
        env.events = &sink;
        ck_assert_int_eq(sf_mma_gemm(m, 1, 1, 0, &sf_format_bf16, a,
                                     &sf_format_bf16, b, cd, d,
                                     SF_MMA_PATH_AVX512, &env),
                         -1);
    }
}
END_TEST

/* One row of BF16 (the AVX2 and AVX-512 paths on the host's binary32
   unit, where the CPU has them, and sf_mma_gemm_nt with B given
   transposed): mostly
   inputs whose products the host computes exactly, with exponents over
   the path's whole range (-63 .. 63) or near one value, a few elements
   outside it (tiny, subnormal, huge, Inf, NaN) in some problems, C of
   any size; K and N not multiples of 16.  Against one dot product per
   element, bits and flags. */
#define ROW_N 70
#define ROW_K 300

static uint16_t
row_in(tst_rng *r, int lo, int hi, unsigned odd)
{
    uint64_t x = tst_rand64(r);
    uint16_t sign = (uint16_t)((x >> 8) & 1u) << 15;
    uint16_t frac = (uint16_t)((x >> 9) & 0x7Fu);
    int e = lo + (int)((x >> 32) % (unsigned)(hi - lo + 1));

    if (x % 16 == 0)
        return sign; /* zero */
    if (odd != 0 && (x >> 20) % odd == 0) {
        static const uint16_t out[] = {0x1F80, 0x0001, 0x0040, 0x6000,
                                       0x7F7F, 0x7F80, 0x7FC1, 0x1FFF,
                                       0x0800, 0x0A55, 0x7000, 0x0080};
        return (uint16_t)(sign | out[(x >> 24) % 12]);
    }
    return (uint16_t)(sign | (uint16_t)((e + 127) << 7) | frac);
}

START_TEST(test_one_row)
{
    static uint16_t a[ROW_K], b[ROW_K * ROW_N], bt[ROW_N * ROW_K];
    static uint32_t c[ROW_N], d_ref[ROW_N], d_gemm[ROW_N], d_nt[ROW_N];
    variant v[32];
    size_t nv = make_variants(v);
    unsigned long n = 0, bad = 0, problems = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x1A0Eu);
    for (size_t w = 0; w < nv; w++) {
        if (v[w].f != &sf_format_bf16)
            continue;
        for (unsigned rep = 0; rep < 40 * tst_multiplier(); rep++) {
            /* one block of one column (in 8 or 16) without C in a quarter
               of them: its sum often exact but for the bits a small
               product loses (the inexact flag from the products alone) */
            bool one = rep % 4 == 1;
            size_t nn =
                one ? 8 * (1 + rep / 4 % 2) : 1 + tst_rand64(&r) % ROW_N;
            size_t k = one ? 1 + tst_rand64(&r) % 16 : tst_rand64(&r) % ROW_K;
            bool wide = one || rep % 2 == 0, with_c = !one && rep % 5 != 0;
            int base = (int)(tst_rand64(&r) % 111) - 60;
            int lo = wide ? -63 : base - 6 < -63 ? -63 : base - 6;
            int hi = wide ? 63 : base + 6;
            /* out-of-range elements: none, or about one in ODD */
            static const unsigned odds[] = {0, 2000, 150, 20};
            unsigned odd = odds[(rep / 4) % 4];
            sf_env es = SF_ENV_NVIDIA, eg = SF_ENV_NVIDIA, en = SF_ENV_NVIDIA;

            /* AVX2 (its binary32 path) and AVX-512, alternately */
            eg.isa = en.isa = rep % 2 ? SF_ISA_AVX2 : SF_ISA_AUTO;
            for (size_t t = 0; t < k; t++)
                a[t] = row_in(&r, lo, hi, odd == 0 ? 0 : 4 * odd);
            if (one || rep % 8 == 3)
                /* sparse */
                for (size_t t = 0; t < k; t++)
                    if (tst_rand64(&r) % 8 != 0)
                        a[t] = 0;
            for (size_t i = 0; i < k * nn; i++)
                b[i] = row_in(&r, lo, hi, odd);
            if (one)
                /* one column that counts; the others exact zeros */
                for (size_t i = 0; i < k * nn; i++)
                    if (i % nn != 0)
                        b[i] = 0;
            for (size_t t = 0; t < k; t++)
                for (size_t j = 0; j < nn; j++)
                    bt[j * k + t] = b[t * nn + j];
            for (size_t j = 0; j < nn; j++)
                c[j] = gen_c(&r, 2 * base, rep % 7 == 3);
            for (size_t j = 0; j < nn; j++)
                d_ref[j] = (uint32_t)sf_mma_dot(
                    &v[w].m, &sf_format_bf16, a, 1, &sf_format_bf16, b + j,
                    (ptrdiff_t)nn, k, with_c ? c[j] : 0, &es);
            ck_assert_int_ge(sf_mma_gemm(&v[w].m, 1, nn, k, &sf_format_bf16, a,
                                         &sf_format_bf16, b, with_c ? c : NULL,
                                         d_gemm, SF_MMA_PATH_AUTO, &eg),
                             0);
            ck_assert_int_ge(sf_mma_gemm_nt(&v[w].m, 1, nn, k, &sf_format_bf16,
                                            a, &sf_format_bf16, bt,
                                            with_c ? c : NULL, d_nt,
                                            SF_MMA_PATH_AUTO, &en),
                             0);
            problems++;
            for (size_t j = 0; j < nn; j++) {
                n++;
                if (d_gemm[j] != d_ref[j] || d_nt[j] != d_ref[j]) {
                    bad++;
                    if (printed++ < TST_MAX_PRINT)
                        printf("one row %s N=%zu K=%zu column %zu: c=%08x "
                               "dots=%08x gemm=%08x nt=%08x\n",
                               v[w].m.name, nn, k, j,
                               with_c ? (unsigned)c[j] : 0u,
                               (unsigned)d_ref[j], (unsigned)d_gemm[j],
                               (unsigned)d_nt[j]);
                }
            }
            if (es.flags != eg.flags || es.flags != en.flags) {
                char fs[6], fg[6], fn[6];
                bad++;
                if (printed++ < TST_MAX_PRINT)
                    printf("one row %s N=%zu K=%zu: flags dots %s gemm %s "
                           "nt %s\n",
                           v[w].m.name, nn, k, sf_flags_str(es.flags, fs),
                           sf_flags_str(eg.flags, fg),
                           sf_flags_str(en.flags, fn));
            }
        }
    }
    /* directed: every pair of values at and beyond the path's range,
       alone in a block, with and without a larger product and C */
    for (size_t w = 0; w < nv; w++) {
        static const uint16_t edge[] = {
            0x2000, 0x207F, 0x5F7F, 0x5F00, 0x1F80, 0x0800, 0x0080, 0x0001,
            0x6000, 0x7F7F, 0x3F80, 0x0000, 0xA000, 0xDF7F, 0x3FFF};
        const size_t ne = sizeof edge / sizeof edge[0];
        if (v[w].f != &sf_format_bf16)
            continue;
        for (size_t i = 0; i < ne * ne * 3; i++) {
            uint16_t aa[2] = {edge[i % ne],
                              (uint16_t)(i / (ne * ne) == 1) ? 0x3F80 : 0};
            uint16_t bb[2] = {edge[i / ne % ne], 0x3F81};
            uint32_t cc = i / (ne * ne) == 2 ? 0x00000001u : 0, dr, dg, dn;
            sf_env es = SF_ENV_NVIDIA, eg = SF_ENV_NVIDIA, en = SF_ENV_NVIDIA;
            eg.isa = en.isa = i % 2 ? SF_ISA_AVX2 : SF_ISA_AUTO;
            dr = (uint32_t)sf_mma_dot(&v[w].m, &sf_format_bf16, aa, 1,
                                      &sf_format_bf16, bb, 1, 2, cc, &es);
            sf_mma_gemm(&v[w].m, 1, 1, 2, &sf_format_bf16, aa, &sf_format_bf16,
                        bb, &cc, &dg, SF_MMA_PATH_AUTO, &eg);
            sf_mma_gemm_nt(&v[w].m, 1, 1, 2, &sf_format_bf16, aa,
                           &sf_format_bf16, bb, &cc, &dn, SF_MMA_PATH_AUTO,
                           &en);
            n++;
            if (dr != dg || dr != dn || es.flags != eg.flags
                || es.flags != en.flags) {
                char fs[6], fg[6], fn[6];
                bad++;
                if (printed++ < TST_MAX_PRINT)
                    printf("one row %s a %04x %04x b %04x %04x c %08x: dots "
                           "%08x %s gemm %08x %s nt %08x %s\n",
                           v[w].m.name, aa[0], aa[1], bb[0], bb[1],
                           (unsigned)cc, (unsigned)dr,
                           sf_flags_str(es.flags, fs), (unsigned)dg,
                           sf_flags_str(eg.flags, fg), (unsigned)dn,
                           sf_flags_str(en.flags, fn));
            }
        }
    }
    printf("gemm one row (%s), and nt: %lu problems, %lu elements, %lu "
           "mismatches\n",
           sf_mma_gemm_nt_direct(&v[0].m, 1, &sf_format_bf16, &sf_format_bf16,
                                 SF_MMA_PATH_AUTO, &(sf_env)SF_ENV_NVIDIA)
               ? "binary32 path"
               : "no binary32 path on this CPU",
           problems, n, bad);
    ck_assert_msg(bad == 0, "one row: %lu mismatches", bad);
}
END_TEST

static Suite *
gemm_suite(void)
{
    Suite *s = suite_create("mma_gemm");
    TCase *tc = tst_add_tcase(s, "gemm", 300);

    tcase_add_test(tc, test_edges);
    tcase_add_test(tc, test_directed);
    tcase_add_test(tc, test_mixed_formats);
    tcase_add_test(tc, test_isa_cap);
    tcase_add_test(tc, test_gemm_vs_blocks);
    tcase_add_test(tc, test_one_row);
    tcase_add_loop_test(tc, test_path_vs_dots, 0,
                        (int)(sizeof paths / sizeof paths[0]));
    return s;
}

int
main(void)
{
    return tst_run_suite(gemm_suite());
}
