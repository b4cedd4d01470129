/* test_mma_amx.c -- the amx preset against TDPBF16PS (Intel AMX-BF16).

   A standalone program (no test framework): on a CPU and OS with
   AMX-TILE and AMX-BF16 it asks the kernel for the tile-data state
   (arch_prctl ARCH_REQ_XCOMP_PERM), configures three tiles (C 16x16 FP32,
   A 16x32 BF16, B 16 rows of 16 BF16 pairs), runs TDPBF16PS on random and
   special operands, one or two instructions chained through C, and
   compares every element with sf_mma_dot under the amx preset.  It also
   reports how many elements the single-chain reading of the instruction
   (one FMA chain through C, even element first) would match.  Exit status
   0 when everything matches or when skipped (the reason is printed), 1 on
   a mismatch.

   Outside the build: cc -std=c11 -O2 -I<top> test_mma_amx.c
   <top>/softfloat/ *.c <top>/softfloat/mma/ *.c -o test_mma_amx */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* syscall */
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"

#if defined(__x86_64__) && defined(__linux__)                                 \
    && ((defined(__clang__) && __clang_major__ >= 12)                         \
        || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define AMX_BUILD 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define AMX_BUILD 0
#endif

#define ROWS 16
#define PAIRS 16      /* BF16 pairs in a 64-byte tile row */
#define K (2 * PAIRS) /* products per instruction */
#define REPS 2000
#define MAX_PRINT 10

/* A small local generator (xorshift64*), fixed seed. */
static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* BF16 operands near 2^base, with zeros, subnormals, Inf, NaN, huge and
   tiny values. */
static uint16_t
gen_bf16(uint64_t *s, int base)
{
    uint64_t x = rnd(s);
    unsigned cls = (unsigned)(x % 100);
    uint16_t sign = (uint16_t)(((x >> 8) & 1u) << 15);
    uint16_t frac = (uint16_t)((x >> 9) & 0x7Fu);
    int e;

    if (cls < 60)
        e = base + (int)((x >> 16) % 17) - 8;
    else if (cls < 70)
        e = (int)((x >> 16) % 254) - 126;
    else if (cls < 76)
        return (uint16_t)(sign | (frac ? frac : 1u));
    else if (cls < 84)
        return sign;
    else if (cls < 86)
        return (uint16_t)(sign | 0x7F80u);
    else if (cls < 88)
        return (uint16_t)(sign | 0x7F80u | (frac ? frac : 1u));
    else if (cls < 94)
        e = 123 + (int)((x >> 16) % 5);
    else
        e = -66 + (int)((x >> 16) % 7);
    if (e < -126)
        e = -126;
    if (e > 127)
        e = 127;
    return (uint16_t)(sign | (uint16_t)((e + 127) << 7) | frac);
}

static uint32_t
gen_f32(uint64_t *s, int base)
{
    uint64_t x = rnd(s);
    unsigned cls = (unsigned)(x % 100);
    uint32_t sign = (uint32_t)((x >> 8) & 1u) << 31;
    uint32_t frac = (uint32_t)((x >> 9) & 0x7FFFFFu);
    int e;

    if (cls < 60)
        e = 2 * base + (int)((x >> 40) % 33) - 16;
    else if (cls < 68)
        return sign | frac;
    else if (cls < 78)
        return sign;
    else if (cls < 80)
        return sign | 0x7F800000u;
    else if (cls < 82)
        return sign | 0x7F800000u | (frac ? frac : 1u);
    else
        e = (int)((x >> 40) % 254) - 126;
    return sign | (uint32_t)(e + 127) << 23 | frac;
}

#if AMX_BUILD

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* NULL when TDPBF16PS can run, else why not. */
static const char *
amx_missing(void)
{
    unsigned eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;

    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return "no CPUID leaf 1";
    if (!(ecx & (1u << 27)))
        return "the OS has not enabled XSAVE (OSXSAVE clear)";
    if (__get_cpuid_max(0, NULL) < 7)
        return "no CPUID leaf 7";
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(edx & (1u << 24)))
        return "no AMX-TILE (CPUID.(7,0):EDX bit 24)";
    if (!(edx & (1u << 22)))
        return "no AMX-BF16 (CPUID.(7,0):EDX bit 22)";
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
        return "the kernel refused the AMX tile-data permission";
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0u));
    (void)xcr0_hi;
    if ((xcr0_lo & (3u << 17)) != (3u << 17))
        return "the OS does not enable the tile state in XCR0";
    return NULL;
}

/* The tile configuration (palette 1): tmm0 = C, tmm1 = A, tmm2 = B. */
typedef struct
{
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* C (16 x 16 FP32) += A_j * B_j for j < n_inst, each A_j 16 x 32 BF16
   (row-major), each B_j 16 rows of 16 pairs (pair n of row k = B[2k][n],
   B[2k+1][n]). */
__attribute__((target("amx-tile,amx-bf16"))) static void
amx_run(uint32_t c[ROWS][16], uint16_t a[][ROWS][K],
        uint16_t b[][PAIRS][2 * 16], unsigned n_inst)
{
    tile_config cfg;

    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (unsigned t = 0; t < 3; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    __asm__ volatile("" ::: "memory");
    _tile_loadconfig(&cfg);
    _tile_loadd(0, c, 64);
    for (unsigned j = 0; j < n_inst; j++) {
        __asm__ volatile("" ::: "memory");
        _tile_loadd(1, a[j], 64);
        _tile_loadd(2, b[j], 64);
        _tile_dpbf16ps(0, 1, 2);
    }
    _tile_stored(0, c, 64);
    __asm__ volatile("" ::: "memory");
    _tile_release();
}

int
main(void)
{
    static uint16_t a[2][ROWS][K], b[2][PAIRS][2 * 16];
    static uint16_t bcol[16][2 * K]; /* B column n as K products */
    static uint16_t arow[ROWS][2 * K];
    uint32_t c[ROWS][16], c0[ROWS][16];
    const sf_mma_model *m = sf_mma_preset_by_name("amx");
    sf_mma_model alt;
    const char *why;
    unsigned long n = 0, bad = 0, alt_ok = 0;
    unsigned printed = 0;
    uint64_t s = 0x9E3779B97F4A7C15ull;

    setvbuf(stdout, NULL, _IOLBF, 0);
    why = amx_missing();
    if (why != NULL) {
        printf("test_mma_amx: skipped: %s\n", why);
        return 0;
    }
    /* the single-chain reading: C += even, C += odd, pair after pair */
    alt = *m;
    alt.name = "amx-single-chain";
    alt.kind = SF_MMA_FMA_CHAIN;
    alt.n = 0;
    for (unsigned rep = 0; rep < REPS; rep++) {
        unsigned n_inst = 1 + rep % 2;
        int base = (int)(rnd(&s) % 21) - 10;
        if (rep % 8 == 7)
            base = -63;
        for (unsigned j = 0; j < n_inst; j++) {
            for (unsigned r = 0; r < ROWS; r++)
                for (unsigned t = 0; t < K; t++)
                    a[j][r][t] = arow[r][j * K + t] = gen_bf16(&s, base);
            for (unsigned k = 0; k < PAIRS; k++)
                for (unsigned col = 0; col < 16; col++)
                    for (unsigned e = 0; e < 2; e++)
                        b[j][k][2 * col + e] = bcol[col][j * K + 2 * k + e] =
                            gen_bf16(&s, base);
        }
        for (unsigned r = 0; r < ROWS; r++)
            for (unsigned col = 0; col < 16; col++)
                c0[r][col] = c[r][col] = gen_f32(&s, base);
        amx_run(c, a, b, n_inst);
        for (unsigned r = 0; r < ROWS; r++)
            for (unsigned col = 0; col < 16; col++) {
                sf_env env = SF_ENV_AVX512BF16;
                uint32_t z = (uint32_t)sf_mma_dot(
                    m, &sf_format_bf16, arow[r], 1, &sf_format_bf16, bcol[col],
                    1, n_inst * K, c0[r][col], &env);
                uint32_t y = (uint32_t)sf_mma_dot(
                    &alt, &sf_format_bf16, arow[r], 1, &sf_format_bf16,
                    bcol[col], 1, n_inst * K, c0[r][col], &env);
                n++;
                alt_ok += y == c[r][col];
                if (z != c[r][col]) {
                    bad++;
                    if (printed++ < MAX_PRINT) {
                        printf("tdpbf16ps K=%u C=%08x hw=%08x model=%08x a=",
                               n_inst * K, (unsigned)c0[r][col],
                               (unsigned)c[r][col], (unsigned)z);
                        for (unsigned t = 0; t < n_inst * K; t++)
                            printf("%04x", (unsigned)arow[r][t]);
                        printf(" b=");
                        for (unsigned t = 0; t < n_inst * K; t++)
                            printf("%04x", (unsigned)bcol[col][t]);
                        printf("\n");
                    }
                }
            }
    }
    printf("test_mma_amx: %lu elements, %lu mismatches (single-chain "
           "reading: %lu/%lu match)\n",
           n, bad, alt_ok, n);
    return bad == 0 ? 0 : 1;
}

#else /* !AMX_BUILD */

int
main(void)
{
    uint64_t s = 1;
    (void)gen_bf16(&s, 0);
    (void)gen_f32(&s, 0);
    printf("test_mma_amx: skipped: built without AMX support (needs "
           "x86-64 Linux and GCC >= 11 or Clang >= 12)\n");
    return 0;
}

#endif /* AMX_BUILD */
