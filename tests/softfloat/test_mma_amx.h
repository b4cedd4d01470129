/* test_mma_amx.h -- TDPBF16PS (Intel AMX-BF16) on the host with its
   run-time check, the tile operands (directed and random) and the amx
   preset per tile element, shared by test_mma_amx and exh_mma_amx.

   The instructions are written as bytes in inline assembly, so the
   program builds with any GCC or Clang for x86-64 whatever the assembler
   knows; elsewhere amx_missing says why not and nothing runs.  A program
   that includes this header defines _GNU_SOURCE before any system header
   (for syscall). */
#ifndef BF16EMU_TESTS_MMA_AMX_H
#define BF16EMU_TESTS_MMA_AMX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"
#include "tests/support/support.h"

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
#define AMX_HW 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define AMX_HW 0
#endif

#define AMX_M 16       /* rows of C and of A */
#define AMX_N 16       /* FP32 columns of C */
#define AMX_K 32       /* BF16 products per element and instruction */
#define AMX_MAX_INST 4 /* instructions chained through C */
#define AMX_ROW_BYTES 64

/* The operands of 1..AMX_MAX_INST instructions chained through C.  A
   tile j is row-major: a[j][m][t] is A[m][32 j + t].  B tile j holds 16
   rows of 16 BF16 pairs: b[j][p][2 n + e] is B[32 j + 2 p + e][n].  Tile
   element (m, n) is the dot product of row m of A and column n of B,
   K = 32 n_inst products, plus c[m][n]. */
typedef struct
{
    _Alignas(64) uint16_t a[AMX_MAX_INST][AMX_M][AMX_K];
    _Alignas(64) uint16_t b[AMX_MAX_INST][AMX_K / 2][2 * AMX_N];
    _Alignas(64) uint32_t c[AMX_M][AMX_N];
    unsigned n_inst;
} amx_tiles;

/* Row M of A and column N of B as K = 32 n_inst consecutive elements. */
static inline void
amx_row(const amx_tiles *t, unsigned m, uint16_t *out)
{
    for (unsigned j = 0; j < t->n_inst; j++)
        memcpy(out + j * AMX_K, t->a[j][m], sizeof t->a[j][m]);
}

static inline void
amx_col(const amx_tiles *t, unsigned n, uint16_t *out)
{
    for (unsigned j = 0; j < t->n_inst; j++)
        for (unsigned p = 0; p < AMX_K / 2; p++) {
            out[j * AMX_K + 2 * p] = t->b[j][p][2 * n];
            out[j * AMX_K + 2 * p + 1] = t->b[j][p][2 * n + 1];
        }
}

static inline void
amx_set_row(amx_tiles *t, unsigned j, unsigned m, const uint16_t *v)
{
    memcpy(t->a[j][m], v, sizeof t->a[j][m]);
}

static inline void
amx_set_col(amx_tiles *t, unsigned j, unsigned n, const uint16_t *v)
{
    for (unsigned p = 0; p < AMX_K / 2; p++) {
        t->b[j][p][2 * n] = v[2 * p];
        t->b[j][p][2 * n + 1] = v[2 * p + 1];
    }
}

/*----------------------------------------------------------------------------
 * The hardware.
 *--------------------------------------------------------------------------*/
#if AMX_HW

#define AMX_ARCH_GET_XCOMP_PERM 0x1022
#define AMX_ARCH_REQ_XCOMP_PERM 0x1023
#define AMX_XFEATURE_XTILEDATA 18

/* NULL when TDPBF16PS can run here on 16 x 64-byte tiles, else why not:
   AMX-TILE and AMX-BF16 (CPUID.(7,0):EDX bits 24 and 22), the tile state
   enabled in XCR0 (bits 17 and 18), palette 1 with at least 3 tiles of
   16 rows of 64 bytes (CPUID leaf 0x1D), a TMUL unit taking K = 16 rows
   and N = 64 bytes (leaf 0x1E), and the kernel's permission for the
   tile data (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18;
   Linux 5.16 and later). */
static inline const char *
amx_missing(void)
{
    unsigned eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;
    unsigned long perm = 0;

    if (__get_cpuid_max(0, NULL) < 0x1E)
        return "no CPUID leaf 0x1E (no AMX)";
    __cpuid_count(1, 0, eax, ebx, ecx, edx);
    if (!(ecx & (1u << 27)))
        return "the OS has not enabled XSAVE (OSXSAVE clear)";
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(edx & (1u << 24)))
        return "no AMX-TILE (CPUID.(7,0):EDX bit 24)";
    if (!(edx & (1u << 22)))
        return "no AMX-BF16 (CPUID.(7,0):EDX bit 22)";
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0u));
    (void)xcr0_hi;
    if ((xcr0_lo & (3u << 17)) != (3u << 17))
        return "the OS does not enable the tile state in XCR0";
    __cpuid_count(0x1D, 0, eax, ebx, ecx, edx);
    if (eax < 1)
        return "no tile palette 1 (CPUID.(1DH,0):EAX)";
    __cpuid_count(0x1D, 1, eax, ebx, ecx, edx);
    if ((ebx & 0xFFFFu) < AMX_ROW_BYTES || (ebx >> 16) < 3
        || (ecx & 0xFFFFu) < AMX_M)
        return "palette 1 has no three tiles of 16 rows of 64 bytes";
    __cpuid_count(0x1E, 0, eax, ebx, ecx, edx);
    if ((ebx & 0xFFu) < AMX_K / 2 || ((ebx >> 8) & 0xFFFFu) < AMX_ROW_BYTES)
        return "the TMUL unit takes fewer than 16 rows or 64 bytes";
    if (syscall(SYS_arch_prctl, AMX_ARCH_REQ_XCOMP_PERM,
                AMX_XFEATURE_XTILEDATA)
        != 0)
        return "the kernel refused the AMX tile-data permission "
               "(arch_prctl ARCH_REQ_XCOMP_PERM)";
    if (syscall(SYS_arch_prctl, AMX_ARCH_GET_XCOMP_PERM, &perm) != 0
        || !(perm & (1ul << AMX_XFEATURE_XTILEDATA)))
        return "the kernel did not grant the AMX tile-data permission";
    return NULL;
}

/* The 64-byte tile configuration of LDTILECFG. */
typedef struct
{
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_tilecfg;

/* LDTILECFG, TILELOADD, TDPBF16PS, TILESTORED, TILERELEASE as bytes:
   tmm0 is C, tmm1 A, tmm2 B; memory operands (%rax,%rdx,1) with the row
   stride in %rdx. */
static inline void
amx_ldtilecfg(const amx_tilecfg *cfg)
{
    __asm__ volatile(".byte 0xc4,0xe2,0x78,0x49,0x00" /* ldtilecfg (%rax) */
                     :
                     : "a"(cfg)
                     : "memory");
}

#define AMX_TILELOADD(modrm, p)                                               \
    __asm__ volatile(".byte 0xc4,0xe2,0x7b,0x4b," modrm ",0x10"               \
                     :                                                        \
                     : "a"(p), "d"((uint64_t)AMX_ROW_BYTES)                   \
                     : "memory")

/* D = C + A_0 B_0 + A_1 B_1 + ... on the hardware: one TDPBF16PS per
   instruction of T, chained through tmm0.  Only when amx_missing() is
   NULL. */
static inline void
amx_hw(const amx_tiles *t, uint32_t d[AMX_M][AMX_N])
{
    _Alignas(64) amx_tilecfg cfg;
    _Alignas(64) uint32_t acc[AMX_M][AMX_N];

    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (unsigned i = 0; i < 3; i++) {
        cfg.colsb[i] = AMX_ROW_BYTES;
        cfg.rows[i] = AMX_M;
    }
    memcpy(acc, t->c, sizeof acc);
    amx_ldtilecfg(&cfg);
    AMX_TILELOADD("0x04", acc); /* tileloadd (%rax,%rdx,1), %tmm0 */
    for (unsigned j = 0; j < t->n_inst; j++) {
        AMX_TILELOADD("0x0c", t->a[j]); /* -> %tmm1 */
        AMX_TILELOADD("0x14", t->b[j]); /* -> %tmm2 */
        /* tdpbf16ps %tmm2, %tmm1, %tmm0 */
        __asm__ volatile(".byte 0xc4,0xe2,0x6a,0x5c,0xc1" ::: "memory");
    }
    /* tilestored %tmm0, (%rax,%rdx,1) */
    __asm__ volatile(".byte 0xc4,0xe2,0x7a,0x4b,0x04,0x10"
                     :
                     : "a"(acc), "d"((uint64_t)AMX_ROW_BYTES)
                     : "memory");
    /* tilerelease */
    __asm__ volatile(".byte 0xc4,0xe2,0x78,0x49,0xc0" ::: "memory");
    memcpy(d, acc, sizeof acc);
}

#else /* !AMX_HW */

static inline const char *
amx_missing(void)
{
    return "not an x86-64 Linux host built with GCC or Clang";
}

static inline void
amx_hw(const amx_tiles *t, uint32_t d[AMX_M][AMX_N])
{
    /* unreachable: amx_missing() is never NULL here */
    (void)t;
    (void)d;
    abort();
}

#endif /* AMX_HW */

/*----------------------------------------------------------------------------
 * The model of one tile element, and a mismatch printed as a vector.
 *--------------------------------------------------------------------------*/
static inline uint32_t
amx_model(const sf_mma_model *m, const uint16_t *a, const uint16_t *b,
          unsigned k, uint32_t c)
{
    sf_env env = SF_ENV_AVX512BF16;

    return (uint32_t)sf_mma_dot(m, &sf_format_bf16, a, 1, &sf_format_bf16, b,
                                1, k, c, &env);
}

/* "amx_tdpbf16ps WHAT K=.. c=.. hw=.. model=..", then A's row and B's
   column as BF16 hex words in index order. */
static inline void
amx_print(const char *what, unsigned k, const uint16_t *a, const uint16_t *b,
          uint32_t c, uint32_t hw, uint32_t model)
{
    printf("amx_tdpbf16ps %s K=%u c=%08x hw=%08x model=%08x\n  a=", what, k,
           (unsigned)c, (unsigned)hw, (unsigned)model);
    for (unsigned t = 0; t < k; t++)
        printf("%s%04x", t ? " " : "", (unsigned)a[t]);
    printf("\n  b=");
    for (unsigned t = 0; t < k; t++)
        printf("%s%04x", t ? " " : "", (unsigned)b[t]);
    printf("\n");
}

/* Runs T on the hardware and compares every element with model M;
   returns the mismatches and prints the first while *PRINTED <
   TST_MAX_PRINT (WHAT names the tile).  With ALT (may be NULL), *ALT_OK
   counts the elements on which model ALT matches too. */
static inline unsigned long
amx_check_tiles(const sf_mma_model *m, const amx_tiles *t, const char *what,
                unsigned long *printed, const sf_mma_model *alt,
                unsigned long *alt_ok)
{
    uint16_t a[AMX_MAX_INST * AMX_K], b[AMX_MAX_INST * AMX_K];
    uint32_t d[AMX_M][AMX_N];
    unsigned k = t->n_inst * AMX_K;
    unsigned long bad = 0;

    amx_hw(t, d);
    for (unsigned i = 0; i < AMX_M; i++) {
        amx_row(t, i, a);
        for (unsigned j = 0; j < AMX_N; j++) {
            uint32_t z;
            amx_col(t, j, b);
            z = amx_model(m, a, b, k, t->c[i][j]);
            if (alt != NULL)
                *alt_ok += amx_model(alt, a, b, k, t->c[i][j]) == d[i][j];
            if (z != d[i][j]) {
                bad++;
                if (tst_print_slot(printed)) {
                    char where[96];
                    snprintf(where, sizeof where, "%s [%u][%u]", what, i, j);
#ifdef _OPENMP
#pragma omp critical(amx_print)
#endif
                    amx_print(where, k, a, b, t->c[i][j], d[i][j], z);
                }
            }
        }
    }
    return bad;
}

/*----------------------------------------------------------------------------
 * Directed vectors: one element each (K = 32 products and C).
 *--------------------------------------------------------------------------*/
typedef struct
{
    uint16_t a[AMX_K], b[AMX_K];
    uint32_t c;
} amx_vec;

#define AMX_ONE 0x3F80u  /* 1.0 */
#define AMX_HALF 0x3F00u /* 0.5 */
#define AMX_BMAX 0x7F7Fu /* the largest finite BF16 */
#define AMX_FMAX 0x7F7FFFFFu

/* BF16 and FP32 bits of (-1)^S * 2^E * (1 + F / 2^fraction bits), E a
   normal exponent. */
static inline uint16_t
amx_bf(unsigned s, int e, unsigned f)
{
    return (uint16_t)(s << 15 | (unsigned)(e + 127) << 7 | (f & 0x7Fu));
}

static inline uint32_t
amx_f32(unsigned s, int e, uint32_t f)
{
    return (uint32_t)s << 31 | (uint32_t)(e + 127) << 23 | (f & 0x7FFFFFu);
}

/* A vector builder that counts past the capacity. */
typedef struct
{
    amx_vec *v;
    size_t n, cap;
    amx_vec spare; /* written past the capacity, never read */
} amx_list;

/* Appends a vector with every product zero (+0 * +0) and C, and returns
   it (the spare when the list is full). */
static inline amx_vec *
amx_add(amx_list *l, uint32_t c)
{
    amx_vec *v = l->n < l->cap ? &l->v[l->n] : &l->spare;

    l->n++;
    memset(v, 0, sizeof *v);
    v->c = c;
    return v;
}

/* Sets product T to A * B (BF16 bits). */
static inline void
amx_put(amx_vec *v, unsigned t, unsigned a, unsigned b)
{
    v->a[t] = (uint16_t)a;
    v->b[t] = (uint16_t)b;
}

/* The directed vectors: NaN propagation and priority, infinities,
   invalid products, subnormal inputs (DAZ) and outputs (FTZ), signed
   zeros, cancellation within and across the two chains, carries and
   ties, large exponent spread, C dominance and overflow.  Writes at most
   CAP to OUT (OUT may be NULL when CAP is 0) and returns how many there
   are. */
static inline size_t
amx_directed(amx_vec *out, size_t cap)
{
    static const unsigned pos[] = {0, 1, 2, 3, 14, 17, 30, 31};
    static const uint16_t nans[] = {0x7FC1, 0xFFC2, 0x7F81, 0xFFA5};
    static const uint32_t cnans[] = {0x7FC00005, 0xFFC00007, 0x7F800009,
                                     0xFFA0000B};
    static const uint16_t subs[] = {0x0001, 0x007F, 0x8040};
    static const uint32_t csubs[] = {0x00000001, 0x007FFFFF, 0x80400000};
    amx_list l = {out, 0, cap, {{0}, {0}, 0}};
    amx_vec *v;

    /* one NaN in A or B at each of several positions, all other products
       1 * 1, C = 1 */
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        for (size_t j = 0; j < sizeof nans / sizeof nans[0]; j++)
            for (unsigned in_b = 0; in_b < 2; in_b++) {
                v = amx_add(&l, 0x3F800000);
                for (unsigned t = 0; t < AMX_K; t++)
                    amx_put(v, t, AMX_ONE, AMX_ONE);
                if (in_b)
                    v->b[pos[i]] = nans[j];
                else
                    v->a[pos[i]] = nans[j];
            }
    /* two NaNs: which one comes out (even/odd chain, A before B) */
    for (unsigned p = 0; p < 4; p++)
        for (unsigned q = 0; q < 4; q++) {
            if (p == q)
                continue;
            v = amx_add(&l, 0x3F800000);
            amx_put(v, p, 0x7FC1, AMX_ONE);
            amx_put(v, q, AMX_ONE, 0xFF82);
            v = amx_add(&l, 0x3F800000);
            amx_put(v, p, 0xFF83, AMX_ONE);
            amx_put(v, q, 0x7F84, AMX_ONE);
        }
    /* NaN in C, alone and with a NaN product */
    for (size_t j = 0; j < sizeof cnans / sizeof cnans[0]; j++) {
        v = amx_add(&l, cnans[j]);
        amx_put(v, 0, AMX_ONE, AMX_ONE);
        v = amx_add(&l, cnans[j]);
        amx_put(v, 0, 0x7FC6, AMX_ONE);
        v = amx_add(&l, cnans[j]);
        amx_put(v, 1, AMX_ONE, 0xFF87);
        v = amx_add(&l, cnans[j]);
        amx_put(v, 3, 0x7F80, 0x0000); /* Inf * 0 with a NaN C */
    }
    /* infinities */
    for (unsigned s = 0; s < 2; s++) {
        uint16_t inf = (uint16_t)(0x7F80u | s << 15);
        uint32_t cinf = 0x7F800000u | (uint32_t)s << 31;
        for (unsigned p = 0; p < 4; p++) {
            v = amx_add(&l, 0x3F800000); /* Inf * 1 */
            amx_put(v, p, inf, AMX_ONE);
            v = amx_add(&l, 0x3F800000); /* Inf * 0 */
            amx_put(v, p, inf, 0x0000);
            v = amx_add(&l, 0x3F800000); /* 0 * Inf */
            amx_put(v, p, 0x8000, inf);
            v = amx_add(&l, 0x3F800000); /* Inf * subnormal: 0 under DAZ */
            amx_put(v, p, inf, subs[p % 3]);
        }
        v = amx_add(&l, 0); /* Inf - Inf across the chains */
        amx_put(v, 0, inf, AMX_ONE);
        amx_put(v, 1, inf ^ 0x8000u, AMX_ONE);
        v = amx_add(&l, 0); /* Inf - Inf in one chain */
        amx_put(v, 0, inf, AMX_ONE);
        amx_put(v, 2, inf ^ 0x8000u, AMX_ONE);
        v = amx_add(&l, 0); /* Inf + Inf in both chains */
        amx_put(v, 0, inf, AMX_ONE);
        amx_put(v, 1, inf, AMX_ONE);
        v = amx_add(&l, cinf); /* Inf C, finite products */
        amx_put(v, 0, AMX_BMAX, AMX_BMAX);
        v = amx_add(&l, cinf); /* Inf C plus an Inf product */
        amx_put(v, 5, inf, AMX_ONE);
        v = amx_add(&l, cinf); /* Inf C minus an Inf product */
        amx_put(v, 5, inf ^ 0x8000u, AMX_ONE);
    }
    /* subnormal inputs (DAZ): times a large value, with several C */
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        for (unsigned p = 0; p < 2; p++) {
            static const uint32_t cs[] = {0x00000000, 0x80000000, 0x3F800000,
                                          0x0D800000};
            for (size_t j = 0; j < sizeof cs / sizeof cs[0]; j++) {
                v = amx_add(&l, cs[j]);
                amx_put(v, p, subs[i], amx_bf(0, 120, 0));
                v = amx_add(&l, cs[j]);
                amx_put(v, p, amx_bf(1, 126, 0x40), subs[i]);
                amx_put(v, p + 2, amx_bf(0, -60, 3), amx_bf(0, -60, 5));
            }
        }
    /* subnormal C (DAZ), with zero, tiny and cancelling products */
    for (size_t i = 0; i < sizeof csubs / sizeof csubs[0]; i++) {
        v = amx_add(&l, csubs[i]);
        v = amx_add(&l, csubs[i]);
        amx_put(v, 0, amx_bf(0, -63, 0), amx_bf(0, -62, 0));
        v = amx_add(&l, csubs[i]);
        amx_put(v, 1, amx_bf(1, -70, 0x11), amx_bf(0, -60, 0x22));
        v = amx_add(&l, csubs[i]);
        amx_put(v, 0, AMX_ONE, AMX_ONE);
        amx_put(v, 2, AMX_ONE, 0xBF80);
    }
    /* subnormal results (FTZ): products of 2^-127 .. 2^-133 alone, two
       in one chain, one in each chain, and next to a C of 2^-126 */
    for (int e = -127; e >= -133; e--)
        for (unsigned s = 0; s < 2; s++) {
            uint16_t x = amx_bf(s, e + 63, 0x15);
            uint16_t y = amx_bf(0, -63, 0);
            v = amx_add(&l, 0);
            amx_put(v, 0, x, y);
            v = amx_add(&l, 0x80000000);
            amx_put(v, 0, x, y);
            amx_put(v, 2, x, y);
            v = amx_add(&l, 0);
            amx_put(v, 0, x, y);
            amx_put(v, 1, x, y);
            v = amx_add(&l, amx_f32(s ^ 1, -126, 0));
            amx_put(v, 0, x, y);
            v = amx_add(&l, amx_f32(s, -126, 0));
            amx_put(v, 1, x, y);
            v = amx_add(&l, amx_f32(s ^ 1, -125, 1));
            amx_put(v, 0, x, y);
            amx_put(v, 1, x, y);
        }
    /* the FTZ threshold with tininess after rounding: 2^-126 (1 - 2^-24)
       reached through a chain */
    v = amx_add(&l, amx_f32(0, -126, 0));
    amx_put(v, 0, amx_bf(1, -100, 0), amx_bf(0, -50, 0));
    v = amx_add(&l, amx_f32(0, -126, 1));
    amx_put(v, 0, amx_bf(1, -100, 0), amx_bf(0, -49, 0));
    amx_put(v, 1, amx_bf(1, -100, 0), amx_bf(0, -49, 0));
    /* signed zeros: every product a zero of either sign, C +-0 */
    for (unsigned pat = 0; pat < 16; pat++)
        for (unsigned cs = 0; cs < 2; cs++) {
            v = amx_add(&l, (uint32_t)cs << 31);
            amx_put(v, 0, (uint16_t)((pat & 1) << 15), AMX_ONE);
            amx_put(v, 1, AMX_ONE, (uint16_t)((pat & 2) << 14));
            amx_put(v, 2, (uint16_t)((pat & 4) << 13), 0xBF80);
            amx_put(v, 3, 0xBF80, (uint16_t)((pat & 8) << 12));
            for (unsigned t = 4; t < AMX_K; t++)
                amx_put(v, t, (pat & 1) ? 0x8000 : 0x0000, AMX_ONE);
        }
    /* cancellation: to an exact zero within a chain, across the chains,
       against C, and with a lost low part (2^24 + 1 - 2^24) */
    for (unsigned s = 0; s < 2; s++) {
        uint16_t x = amx_bf(s, 3, 0x5A), y = amx_bf(0, -2, 0x21);
        uint32_t cz[] = {0, 0x80000000};
        for (unsigned i = 0; i < 2; i++) {
            v = amx_add(&l, cz[i]);
            amx_put(v, 0, x, y);
            amx_put(v, 2, x ^ 0x8000u, y);
            v = amx_add(&l, cz[i]);
            amx_put(v, 0, x, y);
            amx_put(v, 1, x, y ^ 0x8000u);
        }
        v = amx_add(&l, amx_f32(s ^ 1, 0, 0));
        amx_put(v, 4, amx_bf(s, 0, 0), AMX_ONE);
        v = amx_add(&l, 0); /* (2^24 + 1) - 2^24 in one chain */
        amx_put(v, 0, amx_bf(s, 24, 0), AMX_ONE);
        amx_put(v, 2, amx_bf(s, 0, 0), AMX_ONE);
        amx_put(v, 4, amx_bf(s ^ 1, 24, 0), AMX_ONE);
        v = amx_add(&l, 0); /* the same spread over the two chains */
        amx_put(v, 0, amx_bf(s, 24, 0), AMX_ONE);
        amx_put(v, 1, amx_bf(s, 0, 0), AMX_ONE);
        amx_put(v, 2, amx_bf(s ^ 1, 24, 0), AMX_ONE);
        v = amx_add(&l, amx_f32(s, 0, 0)); /* 1 + (2^30 - 2^30) */
        amx_put(v, 0, amx_bf(s, 30, 0), AMX_ONE);
        amx_put(v, 1, amx_bf(s ^ 1, 30, 0), AMX_ONE);
        v = amx_add(&l, amx_f32(s, 24, 1)); /* near-cancellation */
        amx_put(v, 0, amx_bf(s ^ 1, 12, 0), amx_bf(0, 12, 0));
        amx_put(v, 1, amx_bf(s ^ 1, 0, 0x40), AMX_ONE);
    }
    /* carries and ties: 32 products just under 4, ties to even at C = 1
       and C = 1 + 2^-23, a carry into the next binade */
    v = amx_add(&l, 0x3FFFFFFF);
    for (unsigned t = 0; t < AMX_K; t++)
        amx_put(v, t, 0x3FFF, 0x3FFF);
    v = amx_add(&l, 0xBFFFFFFF);
    for (unsigned t = 0; t < AMX_K; t++)
        amx_put(v, t, 0xBFFF, 0x3FFF);
    for (unsigned q = 0; q < 2; q++) {
        v = amx_add(&l, amx_f32(0, 0, q)); /* 1 (+ 2^-23) + 2^-24 */
        amx_put(v, 0, amx_bf(0, -12, 0), amx_bf(0, -12, 0));
        v = amx_add(&l, amx_f32(0, 0, q)); /* two halves in one chain */
        amx_put(v, 0, amx_bf(0, -12, 0), amx_bf(0, -12, 0));
        amx_put(v, 2, amx_bf(0, -12, 0), amx_bf(0, -12, 0));
        v = amx_add(&l, amx_f32(0, 0, q)); /* one half in each chain */
        amx_put(v, 0, amx_bf(0, -12, 0), amx_bf(0, -12, 0));
        amx_put(v, 1, amx_bf(0, -12, 0), amx_bf(0, -12, 0));
        v = amx_add(&l, amx_f32(0, 0, q)); /* a tie and a bit more */
        amx_put(v, 0, amx_bf(0, -12, 0), amx_bf(0, -12, 0));
        amx_put(v, 1, amx_bf(0, -40, 0), amx_bf(0, -10, 0));
    }
    v = amx_add(&l, 0x3F7FFFFF); /* (1 - 2^-24) + 2^-25 -> 1 */
    amx_put(v, 0, amx_bf(0, -13, 0), amx_bf(0, -12, 0));
    v = amx_add(&l, 0x4B7FFFFF); /* 2^24 - 1 + 1 */
    amx_put(v, 0, AMX_ONE, AMX_ONE);
    amx_put(v, 1, AMX_HALF, AMX_HALF);
    /* large exponent spread */
    for (unsigned s = 0; s < 2; s++) {
        v = amx_add(&l, 0); /* 2^100 + 2^-100 - 2^100 in one chain */
        amx_put(v, 0, amx_bf(s, 50, 0), amx_bf(0, 50, 0));
        amx_put(v, 2, amx_bf(0, -50, 0), amx_bf(0, -50, 0));
        amx_put(v, 4, amx_bf(s ^ 1, 50, 0), amx_bf(0, 50, 0));
        v = amx_add(&l, 0); /* the same over the two chains */
        amx_put(v, 0, amx_bf(s, 50, 0), amx_bf(0, 50, 0));
        amx_put(v, 1, amx_bf(0, -50, 0), amx_bf(0, -50, 0));
        amx_put(v, 2, amx_bf(s ^ 1, 50, 0), amx_bf(0, 50, 0));
        v = amx_add(&l, amx_f32(0, -100, 0x123)); /* C far below */
        amx_put(v, 0, amx_bf(s, 127, 0x11), amx_bf(0, -27, 0x22));
        amx_put(v, 1, amx_bf(s ^ 1, 127, 0x11), amx_bf(0, -27, 0x22));
        v = amx_add(&l, amx_f32(s, 127, 0x7FFF)); /* C far above */
        amx_put(v, 0, amx_bf(0, -126, 0x7F), amx_bf(0, -1, 0));
        amx_put(v, 1, amx_bf(1, -63, 0), amx_bf(0, -63, 0));
        v = amx_add(&l, 0); /* every binade once */
        for (unsigned t = 0; t < AMX_K; t++)
            amx_put(v, t, amx_bf((t ^ s) & 1, 8 * (int)t - 126, t),
                    amx_bf(0, 30 - 2 * (int)t, 3 * t));
    }
    /* C dominance: 32 products of 1/2 with C = 2^24 (each product alone
       would be a tie), C = 2^30 and C = -2^24 */
    {
        static const uint32_t cs[] = {0x4B800000, 0x4E800000, 0xCB800000,
                                      0x4B800001};
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            v = amx_add(&l, cs[i]);
            for (unsigned t = 0; t < AMX_K; t++)
                amx_put(v, t, AMX_HALF, AMX_ONE);
            v = amx_add(&l, cs[i]);
            for (unsigned t = 0; t < AMX_K; t++)
                amx_put(v, t, amx_bf(t & 1, -1, t), AMX_ONE);
        }
    }
    /* overflow: in a chain, at the sum of the chains, against C, and in a
       single product */
    for (unsigned s = 0; s < 2; s++) {
        uint16_t mx = (uint16_t)(AMX_BMAX | s << 15);
        v = amx_add(&l, 0);
        amx_put(v, 0, mx, AMX_ONE);
        amx_put(v, 2, mx, AMX_ONE);
        v = amx_add(&l, 0);
        amx_put(v, 0, mx, AMX_ONE);
        amx_put(v, 1, mx, AMX_ONE);
        v = amx_add(&l, 0);
        amx_put(v, 0, mx, AMX_ONE);
        amx_put(v, 2, mx, AMX_ONE);
        amx_put(v, 4, mx ^ 0x8000u, AMX_ONE);
        v = amx_add(&l, AMX_FMAX | (uint32_t)(s ^ 1) << 31);
        amx_put(v, 0, mx, AMX_ONE);
        amx_put(v, 1, mx, AMX_ONE);
        v = amx_add(&l, AMX_FMAX | (uint32_t)s << 31);
        amx_put(v, 0, mx, 0x3F00);
        v = amx_add(&l, 0x3F800000);
        amx_put(v, 7, mx, 0x4000); /* 2 * max: the product overflows */
        v = amx_add(&l, AMX_FMAX | (uint32_t)s << 31);
        amx_put(v, 1, amx_bf(s, 103, 0), AMX_ONE); /* max + 2^103: tie */
    }
    return l.n;
}

/* Packs directed vectors V[0..N) (N <= 16) into T (one instruction):
   vector i is row i of A, column i of B and C[i][i]; element (i, j) for
   i != j crosses row i with column j, with C from vector (i + 2 j) mod N.
   Unused rows and columns repeat the vectors. */
static inline void
amx_pack_directed(amx_tiles *t, const amx_vec *v, size_t n)
{
    t->n_inst = 1;
    for (unsigned i = 0; i < AMX_M; i++) {
        amx_set_row(t, 0, i, v[i % n].a);
        amx_set_col(t, 0, i, v[i % n].b);
    }
    for (unsigned i = 0; i < AMX_M; i++)
        for (unsigned j = 0; j < AMX_N; j++)
            t->c[i][j] = i == j ? v[i % n].c : v[(i + 2 * j) % n].c;
}

/*----------------------------------------------------------------------------
 * Random tiles.  Each tile draws its rows of A, columns of B and C from
 * one value distribution.
 *--------------------------------------------------------------------------*/
typedef enum
{
    AMX_NORMAL, /* normal numbers near 2^base per row and column */
    AMX_MIXED,  /* the same with zeros, subnormals, Inf and NaN */
    AMX_CANCEL, /* even and odd products nearly cancel, pair by pair */
    AMX_TINY,   /* products near 2^-126: DAZ, FTZ, the threshold */
    AMX_WIDE,   /* exponents over the whole range: overflow, absorption */
    AMX_CDOM,   /* C far above the products */
    AMX_ATTN,   /* P~ in [0, 1] (many exact 1s and 0s) times V near -1/2 */
    AMX_N_DIST
} amx_dist;

static inline const char *
amx_dist_name(amx_dist d)
{
    static const char *const names[AMX_N_DIST] = {
        "normal", "mixed", "cancel", "tiny", "wide", "cdom", "attn"};
    return (unsigned)d < AMX_N_DIST ? names[d] : "?";
}

/* A BF16 value (-1)^s 2^e (1 + random fraction), e clamped to the normal
   range; the sign is random when S > 1. */
static inline uint16_t
amx_rand_bf(tst_rng *r, unsigned s, int e)
{
    uint64_t x = tst_rand64(r);
    if (s > 1)
        s = (unsigned)(x >> 63);
    if (e < -126)
        e = -126;
    if (e > 127)
        e = 127;
    return amx_bf(s, e, (unsigned)x);
}

static inline uint32_t
amx_rand_f32(tst_rng *r, unsigned s, int e)
{
    uint64_t x = tst_rand64(r);
    if (s > 1)
        s = (unsigned)(x >> 63);
    if (e < -126)
        return (uint32_t)s << 31 | ((uint32_t)x & 0x7FFFFFu); /* subnormal */
    if (e > 127)
        e = 127;
    return amx_f32(s, e, (uint32_t)(x >> 8));
}

/* A special BF16 operand, or 0xFFFF for none: zero, subnormal, Inf or
   NaN with the given chances in 1/4096. */
static inline uint16_t
amx_rand_special(tst_rng *r, unsigned p_zero, unsigned p_sub, unsigned p_inf,
                 unsigned p_nan)
{
    uint64_t x = tst_rand64(r);
    unsigned u = (unsigned)(x & 4095u);
    uint16_t s = (uint16_t)((x >> 12) & 1u) << 15;
    uint16_t f = (uint16_t)((x >> 13) & 0x7Fu);

    if (u < p_zero)
        return s;
    u -= p_zero;
    if (u < p_sub)
        return (uint16_t)(s | (f ? f : 1u));
    u -= p_sub;
    if (u < p_inf)
        return (uint16_t)(s | 0x7F80u);
    u -= p_inf;
    if (u < p_nan)
        return (uint16_t)(s | 0x7F80u | (f ? f : 0x40u));
    return 0xFFFF;
}

/* One operand of distribution D near 2^BASE, for A when IS_A (else B);
   for AMX_CANCEL the caller pairs them. */
static inline uint16_t
amx_rand_operand(tst_rng *r, amx_dist d, int base, bool is_a)
{
    uint16_t sp;
    int spread = (int)tst_rand_below(r, 9) - 4;

    switch (d) {
    case AMX_MIXED:
        sp = amx_rand_special(r, 200, 160, 24, 24);
        if (sp != 0xFFFF)
            return sp;
        return amx_rand_bf(r, 2, base + spread);
    case AMX_TINY:
        sp = amx_rand_special(r, 200, 300, 0, 0);
        if (sp != 0xFFFF)
            return sp;
        return amx_rand_bf(r, 2, -63 + (int)tst_rand_below(r, 9) - 4);
    case AMX_WIDE:
        sp = amx_rand_special(r, 60, 60, 16, 16);
        if (sp != 0xFFFF)
            return sp;
        return amx_rand_bf(r, 2, (int)tst_rand_below(r, 254) - 126);
    case AMX_ATTN:
        if (is_a) {
            uint64_t x = tst_rand_below(r, 10);
            if (x < 3)
                return AMX_ONE;
            if (x < 5)
                return 0;
            return amx_rand_bf(r, 0, -(int)tst_rand_below(r, 13));
        }
        return amx_rand_bf(r, tst_rand_below(r, 10) < 7 ? 1 : 0,
                           -1 - (int)tst_rand_below(r, 4));
    case AMX_NORMAL:
    case AMX_CANCEL:
    case AMX_CDOM:
    default:
        return amx_rand_bf(r, 2, base + spread);
    }
}

/* C of distribution D for a row near 2^BA and a column near 2^BB. */
static inline uint32_t
amx_rand_c(tst_rng *r, amx_dist d, int ba, int bb)
{
    unsigned u = (unsigned)tst_rand_below(r, 16);
    int e = ba + bb + (int)tst_rand_below(r, 11) - 3;

    switch (d) {
    case AMX_MIXED:
        if (u == 0)
            return 0x7F800000u | (uint32_t)tst_rand_below(r, 2) << 31;
        if (u == 1)
            return 0x7FC00000u | (uint32_t)tst_rand64(r) >> 10;
        if (u == 2)
            return amx_rand_f32(r, 2, -127); /* subnormal */
        break;
    case AMX_TINY:
        if (u < 3)
            return amx_rand_f32(r, 2, -127);
        e = -126 + (int)tst_rand_below(r, 9) - 2;
        break;
    case AMX_WIDE:
        e = (int)tst_rand_below(r, 254) - 126;
        break;
    case AMX_CDOM:
        e = ba + bb + 20 + (int)tst_rand_below(r, 21);
        break;
    case AMX_ATTN:
        e = (int)tst_rand_below(r, 6) - 1;
        return amx_rand_f32(r, tst_rand_below(r, 4) == 0 ? 0 : 1, e);
    case AMX_NORMAL:
    case AMX_CANCEL:
    default:
        break;
    }
    if (u >= 14)
        return (uint32_t)tst_rand_below(r, 2) << 31; /* +-0 */
    return amx_rand_f32(r, 2, e);
}

/* Fills T with N_INST instructions of distribution D. */
static inline void
amx_rand_tiles(tst_rng *r, amx_dist d, unsigned n_inst, amx_tiles *t)
{
    int ba[AMX_M], bb[AMX_N];
    uint16_t v[AMX_K];

    t->n_inst = n_inst;
    for (unsigned i = 0; i < AMX_M; i++)
        ba[i] = (int)tst_rand_below(r, 21) - 10;
    for (unsigned j = 0; j < AMX_N; j++)
        bb[j] = (int)tst_rand_below(r, 21) - 10;
    for (unsigned k = 0; k < n_inst; k++) {
        for (unsigned i = 0; i < AMX_M; i++) {
            for (unsigned t2 = 0; t2 < AMX_K; t2++)
                v[t2] = amx_rand_operand(r, d, ba[i], true);
            if (d == AMX_CANCEL) /* pair p: a[2p + 1] = a[2p] or nearly */
                for (unsigned p = 0; p < AMX_K / 2; p++)
                    v[2 * p + 1] =
                        (uint16_t)(v[2 * p] ^ (tst_rand_below(r, 4) == 0));
            amx_set_row(t, k, i, v);
        }
        for (unsigned j = 0; j < AMX_N; j++) {
            for (unsigned t2 = 0; t2 < AMX_K; t2++)
                v[t2] = amx_rand_operand(r, d, bb[j], false);
            if (d == AMX_CANCEL) /* b[2p + 1] = -b[2p], or nearly */
                for (unsigned p = 0; p < AMX_K / 2; p++)
                    v[2 * p + 1] =
                        (uint16_t)(v[2 * p] ^ 0x8000u
                                   ^ (tst_rand_below(r, 4) == 0 ? 1u : 0u));
            amx_set_col(t, k, j, v);
        }
    }
    for (unsigned i = 0; i < AMX_M; i++)
        for (unsigned j = 0; j < AMX_N; j++)
            t->c[i][j] = amx_rand_c(r, d, ba[i], bb[j]);
}

/* The single-chain reading of the instruction (C += even, C += odd, pair
   after pair), for a diagnostic count. */
static inline sf_mma_model
amx_single_chain(const sf_mma_model *m)
{
    sf_mma_model alt = *m;
    alt.name = "amx-single-chain";
    alt.kind = SF_MMA_FMA_CHAIN;
    alt.n = 0;
    alt.lanes = 1;
    return alt;
}

#endif /* BF16EMU_TESTS_MMA_AMX_H */
