/* neon_row -- the one-row BF16 GEMMs (sf_mma_gemm and sf_mma_gemm_nt with
   one row of A, the decode step's products) on AArch64, where the
   portable path runs its generic vectors as NEON code, against one
   sf_mma_dot per column: the bits of every result and the flags, for the
   truncating fused models sm80, sm90 and sm100.  Inputs: random rows
   near one exponent or across the path's whole range, zeros, and in
   most problems a planted element at or just past the path's range
   limits (exponent -63 and -64, 63 and 64), subnormal, Inf or NaN, often
   beside an element of A at the same end of the range, so that some
   groups of keys leave the fast path and others do not, and a wrong
   range check shows in the bits.
   Built for AArch64 and run under an emulator by test_neon.sh; libc only
   (no Check).  Exit 0: no difference; 1: differences (hex vectors
   printed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"
#include "tests/support/support.h"

#define MAX_N 600
#define MAX_K 260

static uint16_t a[MAX_K], b[MAX_K * MAX_N], bt[MAX_N * MAX_K];
static uint32_t c[MAX_N], d_ref[MAX_N], d_gemm[MAX_N], d_nt[MAX_N];

/* Elements at the edges of the path's range and beyond it: the largest
   and smallest magnitudes inside (exponents 63 and -63), the nearest
   ones outside (64 and -64), a subnormal, Inf and NaN. */
static const uint16_t edges[] = {0x5F7F, 0x5F00, 0x5F80, 0x6000, 0x2000,
                                 0x207F, 0x1FFF, 0x1F80, 0x0001, 0x007F,
                                 0x7F80, 0x7FC1};

static unsigned long
check(const sf_mma_model *m, size_t n, size_t k, bool with_c, unsigned rep)
{
    const sf_format *f = &sf_format_bf16;
    unsigned long bad = 0;
    sf_env es = SF_ENV_NVIDIA, eg = SF_ENV_NVIDIA, en = SF_ENV_NVIDIA;
    const uint32_t *cc = with_c ? c : NULL;

    /* the portable path on any host (the only one on AArch64) */
    eg.isa = en.isa = SF_ISA_SCALAR;

    for (size_t t = 0; t < k; t++)
        for (size_t j = 0; j < n; j++)
            bt[j * k + t] = b[t * n + j];
    for (size_t j = 0; j < n; j++)
        d_ref[j] = (uint32_t)sf_mma_dot(m, f, a, 1, f, b + j, (ptrdiff_t)n, k,
                                        with_c ? c[j] : 0, &es);
    if (sf_mma_gemm(m, 1, n, k, f, a, f, b, cc, d_gemm, SF_MMA_PATH_AUTO, &eg)
            < 0
        || sf_mma_gemm_nt(m, 1, n, k, f, a, f, bt, cc, d_nt,
                          SF_MMA_PATH_AUTO, &en)
               < 0) {
        printf("neon_row: %s N=%zu K=%zu: a GEMM refused its arguments\n",
               m->name, n, k);
        return 1;
    }
    for (size_t j = 0; j < n; j++)
        if (d_gemm[j] != d_ref[j] || d_nt[j] != d_ref[j]) {
            if (bad++ < TST_MAX_PRINT)
                printf("neon_row: %s problem %u N=%zu K=%zu column %zu: c "
                       "%08x dots %08x gemm %08x nt %08x\n",
                       m->name, rep, n, k, j, with_c ? (unsigned)c[j] : 0u,
                       (unsigned)d_ref[j], (unsigned)d_gemm[j],
                       (unsigned)d_nt[j]);
        }
    if (eg.flags != es.flags || en.flags != es.flags) {
        bad++;
        printf("neon_row: %s problem %u N=%zu K=%zu: flags dots %02x gemm "
               "%02x nt %02x\n",
               m->name, rep, n, k, es.flags, eg.flags, en.flags);
    }
    return bad;
}

int
main(void)
{
    static const char *const names[] = {"sm90", "sm100", "sm80"};
    unsigned long bad = 0, problems = 0;
    tst_rng r;

    tst_rng_init(&r, 0x4E52u);
    for (size_t w = 0; w < 3; w++) {
        const sf_mma_model *m = sf_mma_preset_by_name(names[w]);
        for (unsigned rep = 0; rep < 60; rep++) {
            size_t n = rep % 4 == 0 ? 1 + tst_rand64(&r) % MAX_N
                                    : 16 + tst_rand64(&r) % 100;
            size_t k = rep % 3 == 0 || rep % 6 == 5
                           ? 128
                           : 1 + tst_rand64(&r) % MAX_K;
            /* every sixth problem near exponent -38 (products near
               2^-76, below a subnormal's with 2^63) */
            int base = rep % 6 == 5 ? -38 : (int)(tst_rand64(&r) % 41) - 20;
            bool wide = rep % 4 == 1;
            int lo = wide ? -63 : base - 4, hi = wide ? 63 : base + 4;
            bool with_c = rep % 3 != 1;
            tst_row_problem(&r, lo, hi, base, n, k, a, b, c);
            /* edge elements in B, each somewhere (not in every problem) */
            for (unsigned q = 0; rep % 5 != 0 && q < 1 + rep % 4; q++) {
                uint64_t x = tst_rand64(&r);
                uint16_t e = edges[x % (sizeof edges / sizeof edges[0])];
                size_t at = (size_t)(x >> 8) % (n * k);
                b[at] = (uint16_t)(e | ((x >> 40) & 1u) << 15);
                /* A's element of that row at the same end of the range:
                   a product past the limits leaves binary32's normal
                   range */
                if ((x >> 41) & 1u)
                    a[at / n] = (uint16_t)((e >= 0x5F00 ? 0x5F7Fu : 0x2000u)
                                           | ((x >> 42) & 1u) << 15);
            }
            /* near -38: three subnormal elements of B, each alone in
               its row, times 2^63 from A (products 2^-70 .. 2^-63) */
            for (unsigned q = 0; rep % 6 == 5 && q < 3; q++) {
                uint64_t x = tst_rand64(&r);
                size_t t = (size_t)(x % k), j = (size_t)(x >> 16) % n;
                memset(b + t * n, 0, n * sizeof *b);
                b[t * n + j] = (uint16_t)((1u + (x >> 40) % 0x7Fu)
                                          | ((x >> 50) & 1u) << 15);
                a[t] = (uint16_t)(0x5F00u | (x >> 52) % 0x80u);
            }
            bad += check(m, n, k, with_c, rep);
            problems++;
        }
    }
    printf("neon_row: %lu problems of sm80, sm90 and sm100, %lu "
           "mismatches\n",
           problems, bad);
    return bad == 0 ? 0 : 1;
}
