/* test_mma_row.c -- the one-row BF16 GEMMs (sf_mma_gemm and sf_mma_gemm_nt
   with one row of A, the decode step's products) on every path the CPU
   has, against one sf_mma_dot per element, bits and flags: the AVX2 and
   AVX-512 paths compute chunks of columns on the host's binary32 unit
   without a range check and throw a chunk away when the host raised a
   flag other than inexact, and the portable path (BF16EMU_ISA=scalar)
   computes on the same unit after a range check in integers, so the
   cases put out-of-range, subnormal,
   Inf and NaN inputs, overflowing and underflowing products and special
   accumulators in some chunks and not in others */
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

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_MXCSR 1
#else
#define HAVE_MXCSR 0
#endif

#define MAX_N 1100
#define MAX_K 260

static uint16_t a[MAX_K], b[MAX_K * MAX_N], bt[MAX_N * MAX_K];
static uint32_t c[MAX_N], d_ref[MAX_N], d_gemm[MAX_N], d_nt[MAX_N];

/* The paths: the CPU's best, AVX2, portable. */
static const sf_isa isas[] = {SF_ISA_AUTO, SF_ISA_AVX2, SF_ISA_SCALAR};

/* The kinds of element planted in B (or A, or C). */
enum
{
    P_NONE,
    P_SUBNORMAL, /* B: 0x0001 .. 0x007F */
    P_TINY,      /* B: exponent -126 .. -64 */
    P_HUGE,      /* B: exponent 64 .. 127 */
    P_INF,
    P_NAN,
    P_C_SPECIAL, /* C: Inf or NaN in one column */
    P_C_HUGE,    /* C far above the products: they scale below 2^-126 */
    P_KINDS
};

/* Runs the problem (N columns, K, C or not) on every path against the
   dot products; returns the mismatches (printing the first few). */
static unsigned long
check_problem(const sf_mma_model *m, const sf_format *f, size_t n, size_t k,
              bool with_c, bool alias, const char *what, unsigned *printed)
{
    unsigned long bad = 0;
    sf_env es = SF_ENV_NVIDIA;

    for (size_t t = 0; t < k; t++)
        for (size_t j = 0; j < n; j++)
            bt[j * k + t] = b[t * n + j];
    for (size_t j = 0; j < n; j++)
        d_ref[j] = (uint32_t)sf_mma_dot(m, f, a, 1, f, b + j, (ptrdiff_t)n, k,
                                        with_c ? c[j] : 0, &es);
    for (size_t p = 0; p < sizeof isas / sizeof isas[0]; p++) {
        sf_env eg = SF_ENV_NVIDIA, en = SF_ENV_NVIDIA;
        const uint32_t *cg = NULL, *cn = NULL;
        eg.isa = en.isa = isas[p];
        if (with_c && alias) {
            /* D is C */
            memcpy(d_gemm, c, n * sizeof *c);
            memcpy(d_nt, c, n * sizeof *c);
            cg = d_gemm;
            cn = d_nt;
        } else if (with_c) {
            cg = cn = c;
        }
        ck_assert_int_ge(sf_mma_gemm(m, 1, n, k, f, a, f, b, cg, d_gemm,
                                     SF_MMA_PATH_AUTO, &eg),
                         0);
        ck_assert_int_ge(sf_mma_gemm_nt(m, 1, n, k, f, a, f, bt, cn, d_nt,
                                        SF_MMA_PATH_AUTO, &en),
                         0);
        for (size_t j = 0; j < n; j++)
            if (d_gemm[j] != d_ref[j] || d_nt[j] != d_ref[j]) {
                bad++;
                if ((*printed)++ < TST_MAX_PRINT)
                    printf("%s %s isa %s N=%zu K=%zu column %zu: c %08x "
                           "dots %08x gemm %08x nt %08x\n",
                           what, m->name, sf_isa_name(isas[p]), n, k, j,
                           with_c ? (unsigned)c[j] : 0u, (unsigned)d_ref[j],
                           (unsigned)d_gemm[j], (unsigned)d_nt[j]);
            }
        if (eg.flags != es.flags || en.flags != es.flags) {
            char fs[6], fg[6], fn[6];
            bad++;
            if ((*printed)++ < TST_MAX_PRINT)
                printf("%s %s isa %s N=%zu K=%zu: flags dots %s gemm %s nt "
                       "%s\n",
                       what, m->name, sf_isa_name(isas[p]), n, k,
                       sf_flags_str(es.flags, fs), sf_flags_str(eg.flags, fg),
                       sf_flags_str(en.flags, fn));
        }
    }
    return bad;
}

/* One element of kind P at a random place of B (or C). */
static void
plant(tst_rng *r, unsigned p, size_t n, size_t k)
{
    uint64_t x = tst_rand64(r);
    size_t at = (size_t)(x % (n * k)), col = (size_t)(x % n);
    uint16_t sign = (uint16_t)((x >> 40) & 1u) << 15;

    switch (p) {
    case P_SUBNORMAL:
        b[at] = (uint16_t)(sign | (1u + (x >> 20) % 0x7Fu));
        break;
    case P_TINY:
        b[at] = (uint16_t)(sign | (uint16_t)((1 + (x >> 20) % 63) << 7));
        break;
    case P_HUGE:
        b[at] =
            (uint16_t)(sign | (uint16_t)((191 + (x >> 20) % 63) << 7) | 0x7Fu);
        break;
    case P_INF:
        b[at] = (uint16_t)(sign | 0x7F80u);
        break;
    case P_NAN:
        b[at] = (uint16_t)(sign | 0x7F80u | (1u + (x >> 20) % 0x7Fu));
        break;
    case P_C_SPECIAL:
        c[col] = (x >> 21) & 1u ? 0x7FC00001u : 0xFF800000u;
        break;
    case P_C_HUGE:
        c[col] = 0x7E000000u | (uint32_t)((x >> 20) & 0x7FFFFFu);
        break;
    default:
        break;
    }
}

/* Random problems: N up to 1100 (up to nine chunks of 128 columns), K
   up to 260, neither a multiple of 16 in most; inputs in the path's range
   (wide or near one exponent), with a planted element in most, C or
   none, C aliasing D in some. */
START_TEST(test_random)
{
    static const char *const names[] = {"sm90", "sm100", "sm80"};
    unsigned long bad = 0, problems = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x7120u);
    for (size_t w = 0; w < 3; w++) {
        const sf_mma_model *m = sf_mma_preset_by_name(names[w]);
        for (unsigned rep = 0; rep < 30 * tst_multiplier(); rep++) {
            size_t n = rep % 3 == 0 ? 1 + tst_rand64(&r) % MAX_N
                                    : 1 + tst_rand64(&r) % 300;
            size_t k = rep % 5 == 0 ? 128 : 1 + tst_rand64(&r) % MAX_K;
            int base = (int)(tst_rand64(&r) % 41) - 20;
            bool wide = rep % 4 == 0;
            int lo = wide ? -63 : base - 4, hi = wide ? 63 : base + 4;
            unsigned p = rep % P_KINDS;
            bool with_c = rep % 3 != 1;
            tst_row_problem(&r, lo, hi, base, n, k, a, b, c);
            if (p == P_C_SPECIAL || p == P_C_HUGE)
                with_c = true;
            for (unsigned q = 0; q < 1 + rep % 3; q++)
                plant(&r, p, n, k);
            bad += check_problem(m, &sf_format_bf16, n, k, with_c,
                                 rep % 2 == 0, "random", &printed);
            problems++;
        }
    }
    printf("one row, random: %lu problems, %lu mismatches\n", problems, bad);
    ck_assert_msg(bad == 0, "one row random: %lu mismatches", bad);
}
END_TEST

/* Small integers (exact products and sums) in every chunk but one of 128
   columns; that chunk (the second) holds an input the host cannot take,
   so the fast computation of it raises a host flag and is thrown away.
   CASE 0: the other chunks exact, the bad chunk's only product with a
   subnormal exact in the model (its host product is rounded: the thrown
   away chunk's inexact flag must not count); 1: the first chunk inexact
   too (its flag must survive the bad chunk); 2: an Inf in the bad chunk;
   3: no bad chunk, all exact (no flag); 4: the last chunk ragged. */
START_TEST(test_chunks)
{
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    unsigned long bad = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x7121u);
    for (int cs = 0; cs < 5; cs++) {
        size_t n = cs == 4 ? 3 * 128 + 37 : 3 * 128, k = 64;
        for (size_t t = 0; t < k; t++)
            a[t] = (uint16_t)(0x3F80u + ((tst_rand64(&r) % 4) << 7));
        for (size_t i = 0; i < n * k; i++)
            /* 1, 2, 4, 8 with either sign */
            b[i] = (uint16_t)((0x3F80u + ((tst_rand64(&r) % 4) << 7))
                              | (tst_rand64(&r) % 2) << 15);
        for (size_t j = 0; j < n; j++)
            c[j] = 0x40000000u; /* 2 */
        if (cs != 3) {
            /* column 130: a[0] x subnormal alone (the others zero) */
            for (size_t t = 0; t < k; t++)
                b[t * n + 130] = 0;
            b[0 * n + 130] = cs == 2 ? 0x7F80u : 0x0003u;
            a[0] = 0x3FC1u; /* 1.5078125: the host's product rounds */
            c[130] = 0;
        }
        if (cs == 1)
            /* column 5 of the first chunk: 2^-40 against 2: inexact */
            b[1 * n + 5] = 0x2B80u;
        bad += check_problem(m, &sf_format_bf16, n, k, true, cs % 2 == 1,
                             "chunks", &printed);
    }
    ck_assert_msg(bad == 0, "one row chunks: %lu mismatches", bad);
}
END_TEST

/* Directed: the largest block sums (sixteen products of 0x3FFF or -0x3FFF
   and C near 2, whose total leaves 32 bits), products at the edges of
   the binary32 range, blocks whose grid lies below 2^-126, the decode
   step's shapes (scores of 1000 keys at
   d = 128, P~V of 64 keys at d = 128 and 256 from C), FP16 inputs. */
START_TEST(test_directed)
{
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    unsigned long bad = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x7122u);
    for (int sg = 0; sg < 4; sg++) {
        size_t n = 40, k = 48;
        for (size_t t = 0; t < k; t++)
            a[t] = 0x3FFFu;
        for (size_t i = 0; i < n * k; i++)
            b[i] = (uint16_t)(0x3FFFu | (sg & 1 ? 0x8000u : 0u));
        for (size_t j = 0; j < n; j++)
            c[j] = (sg & 2 ? 0x3FFFFFFFu : 0xBFFFFFFFu) - (uint32_t)j;
        bad += check_problem(m, &sf_format_bf16, n, k, true, false, "max sum",
                             &printed);
    }
    for (int e = 0; e < 6; e++) {
        /* products of exponent sums -126 .. -120 and 120 .. 127 */
        static const int ea[6] = {-63, -63, -60, 63, 63, 60};
        static const int eb[6] = {-63, -64, -66, 63, 64, 66};
        size_t n = 50, k = 33;
        for (size_t t = 0; t < k; t++)
            a[t] = tst_bf16_rand(&r, ea[e], ea[e], 5);
        for (size_t i = 0; i < n * k; i++)
            b[i] = tst_bf16_rand(&r, eb[e] - (int)(i % 3), eb[e], 7);
        bad += check_problem(m, &sf_format_bf16, n, k, e % 2 == 0, false,
                             "edges", &printed);
    }
    for (int z = 0; z < 2; z++) {
        /* every operand in range but every product below 2^-101: the
           block's grid 2^q lies below 2^-126 (no C, or C zero or tiny) */
        size_t n = 70, k = 40;
        for (size_t t = 0; t < k; t++)
            a[t] = tst_bf16_rand(&r, -63, -51, 6);
        for (size_t i = 0; i < n * k; i++)
            b[i] = tst_bf16_rand(&r, -63, -51, 6);
        for (size_t j = 0; j < n; j++)
            c[j] = j % 3 == 0 ? 0 : (uint32_t)(j % 3) << 20;
        bad += check_problem(m, &sf_format_bf16, n, k, z == 1, false,
                             "tiny grid", &printed);
    }
    {
        size_t n = 1000, k = 128;
        for (size_t t = 0; t < k; t++)
            a[t] = tst_bf16_rand(&r, -2, 1, 0);
        for (size_t i = 0; i < n * k; i++)
            b[i] = tst_bf16_rand(&r, -3, 1, 0);
        bad += check_problem(m, &sf_format_bf16, n, k, false, false, "scores",
                             &printed);
    }
    for (size_t n = 128; n <= 256; n += 128) {
        size_t k = 64;
        for (size_t t = 0; t < k; t++)
            a[t] = tst_bf16_rand(&r, -9, 0, 0);
        for (size_t i = 0; i < n * k; i++)
            b[i] = tst_bf16_rand(&r, -3, 1, 0);
        for (size_t j = 0; j < n; j++)
            c[j] = 0x41000000u + (uint32_t)(tst_rand64(&r) & 0xFFFFFu);
        bad += check_problem(m, &sf_format_bf16, n, k, true, true, "p~v",
                             &printed);
    }
    {
        size_t n = 77, k = 45;
        for (size_t t = 0; t < k; t++)
            a[t] = (uint16_t)(0x3C00u + tst_rand64(&r) % 0x800u);
        for (size_t i = 0; i < n * k; i++)
            b[i] = (uint16_t)(0x3400u + tst_rand64(&r) % 0x1000u);
        bad += check_problem(m, &sf_format_f16, n, k, true, false, "fp16",
                             &printed);
    }
    ck_assert_msg(bad == 0, "one row directed: %lu mismatches", bad);
}
END_TEST

/* The portable path's block results, computed 16 columns (or keys) at a
   time: results of exponent 126 .. 128 (overflow), the only inexact
   column of a problem being one total that loses its lowest bits in the
   truncation to 24 bits, or one C that loses bits on the grid, in each
   of the column positions of a group; a subnormal C under the host's DAZ
   and FTZ. */
START_TEST(test_lanes)
{
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    unsigned long bad = 0;
    unsigned printed = 0;
    const size_t n = 40, k = 20;

    for (size_t pos = 0; pos < 4; pos++) {
        size_t col = 3 + 11 * pos; /* 3, 14, 25, 36: each part of a group */
        /* (1 + j/128) 2^126 times 1 .. 4: exponents 126 .. 128, in the
           last block (an overflow before it sends the rest to the
           dots) */
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        for (size_t t = 0; t < 4; t++)
            a[t] = 0x5F00u; /* 2^63 */
        for (size_t j = 0; j < n; j++)
            for (size_t t = 0; t <= (j + pos) % 4; t++)
                b[t * n + j] = (uint16_t)(0x5F00u | (uint16_t)(j * 5 % 128));
        bad += check_problem(m, &sf_format_bf16, n, 16, false, false,
                             "overflow", &printed);
        /* exact everywhere, but column COL is 1 + 2^-24: on sm90's grid
           (2^-25) a 26-bit total whose bit 1 is cut */
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        a[0] = a[1] = 0x3F80u;
        for (size_t j = 0; j < n; j++) {
            b[0 * n + j] = (uint16_t)(0x3F80u + (uint16_t)j);
            b[1 * n + j] = j == col ? 0x3380u : 0;
        }
        bad += check_problem(m, &sf_format_bf16, n, k, false, false,
                             "one inexact total", &printed);
        /* exact products, C exact on the grid, but column COL's C is
           1 + 2^-23 against a product of 2^10: its low bits are cut */
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        a[0] = 0x3F80u;
        for (size_t j = 0; j < n; j++) {
            b[0 * n + j] = 0x4480u; /* 2^10 */
            c[j] = j == col ? 0x3F800001u : 0x3F800000u;
        }
        bad += check_problem(m, &sf_format_bf16, n, k, true, false,
                             "one inexact c", &printed);
    }
#if HAVE_MXCSR
    {
        /* exact products of 2^-60, and column 21's C subnormal (below
           the grid: only lost bits) under the host's DAZ and FTZ */
        unsigned host;
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        a[0] = 0x2180u; /* 2^-60 */
        for (size_t j = 0; j < n; j++) {
            b[0 * n + j] = 0x3F80u;
            c[j] = j == 21 ? 0x00012345u : 0;
        }
        _mm_setcsr(0xFFC0u);
        bad += check_problem(m, &sf_format_bf16, n, k, true, false,
                             "subnormal c, daz", &printed);
        host = _mm_getcsr();
        _mm_setcsr(0x1F80u);
        if ((host & 0xFFC0u) != 0xFFC0u) {
            bad++;
            printf("mxcsr ffc0: %04x after the calls\n", host);
        }
    }
#endif
    ck_assert_msg(bad == 0, "one row lanes: %lu mismatches", bad);
}
END_TEST

/* The caller's MXCSR (rounding, FTZ, DAZ, flags) changes nothing and is
   put back, also after a chunk computed again. */
START_TEST(test_mxcsr)
{
#if HAVE_MXCSR
    static const unsigned states[] = {0x1F80u, 0xFFC0u, 0x7FBFu, 0x5FA0u};
    const sf_mma_model *m = sf_mma_preset_by_name("sm90");
    unsigned long bad = 0;
    unsigned printed = 0;
    tst_rng r;

    tst_rng_init(&r, 0x7123u);
    for (size_t s = 0; s < sizeof states / sizeof states[0]; s++) {
        size_t n = 300, k = 70;
        unsigned host;
        for (size_t t = 0; t < k; t++)
            a[t] = tst_bf16_rand(&r, -5, 5, 7);
        for (size_t i = 0; i < n * k; i++)
            b[i] = tst_bf16_rand(&r, -5, 5, 7);
        b[3 * n + 140] = 0x0005u; /* a subnormal in the second chunk */
        for (size_t j = 0; j < n; j++)
            c[j] = 0x3F800000u + (uint32_t)j;
        _mm_setcsr(states[s]);
        bad += check_problem(m, &sf_format_bf16, n, k, true, false, "mxcsr",
                             &printed);
        host = _mm_getcsr();
        _mm_setcsr(0x1F80u);
        if ((host & 0xFFC0u) != (states[s] & 0xFFC0u)) {
            bad++;
            printf("mxcsr %04x: %04x after the calls\n", states[s], host);
        }
    }
    ck_assert_msg(bad == 0, "one row mxcsr: %lu mismatches", bad);
#endif
}
END_TEST

static Suite *
row_suite(void)
{
    Suite *s = suite_create("mma_row");
    TCase *tc = tst_add_tcase(s, "row", 300);

    tcase_add_test(tc, test_chunks);
    tcase_add_test(tc, test_directed);
    tcase_add_test(tc, test_lanes);
    tcase_add_test(tc, test_mxcsr);
    tcase_add_test(tc, test_random);
    return s;
}

int
main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("one-row paths: %s\n",
           sf_mma_gemm_nt_direct(sf_mma_preset_by_name("sm90"), 1,
                                 &sf_format_bf16, &sf_format_bf16,
                                 SF_MMA_PATH_AUTO, &(sf_env)SF_ENV_NVIDIA)
               ? "binary32 path"
               : "no binary32 path on this CPU");
    return tst_run_suite(row_suite());
}
