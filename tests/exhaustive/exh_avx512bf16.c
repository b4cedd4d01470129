/* exh_avx512bf16.c -- sf_f32_to_bf16 under SF_ENV_AVX512BF16 against
   VCVTNEPS2BF16 on all 2^32 binary32 inputs.

   Usage: exh_avx512bf16 [FIRST LAST]   high halves FIRST..LAST (default
   0..0xFFFF, i.e. every input).  Prints the count, the mismatches (the
   first few as vectors) and the wall time.  Exit status 0 when all match
   or when the test is skipped (no hardware or compiler support; the reason
   is printed), 1 on a mismatch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "softfloat/softfloat.h"
#include "tests/support/support.h"

#if defined(HAVE_AVX512BF16_COMPILER) && defined(__x86_64__)                  \
    && defined(__GNUC__)
#define BF16_HW 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define BF16_HW 0
#endif

#if BF16_HW

/* NULL when the CPU and the OS can run VCVTNEPS2BF16 on zmm registers,
   else why not (see test_avx512bf16.c). */
static const char *
hw_missing(void)
{
    unsigned eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;

    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return "no CPUID leaf 1";
    if (!(ecx & (1u << 27)))
        return "the OS has not enabled XSAVE (OSXSAVE clear)";
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0u));
    (void)xcr0_hi;
    if ((xcr0_lo & 0xE6u) != 0xE6u)
        return "the OS does not save the AVX-512 register state";
    if (__get_cpuid_max(0, NULL) < 7)
        return "no CPUID leaf 7";
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(ebx & (1u << 16)) || !(ebx & (1u << 31)))
        return "no AVX512F/AVX512VL";
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    if (!(eax & (1u << 5)))
        return "no AVX512_BF16";
    return NULL;
}

__attribute__((target("avx512bf16,avx512vl,avx512f"))) static void
hw_cvt16(const uint32_t *in, uint16_t *out)
{
    __m512 v;
    __m256bh r;

    memcpy(&v, in, sizeof v);
    r = _mm512_cvtneps_pbh(v);
    memcpy(out, &r, 16 * sizeof *out);
}

/* All 2^16 inputs with high half HI; returns the mismatches and prints the
   first few (shared count *PRINTED). */
static unsigned long
check_block(uint32_t hi, unsigned *printed)
{
    uint32_t in[256];
    uint16_t hw[256];
    unsigned long bad = 0;

    for (uint32_t base = 0; base < 0x10000u; base += 256) {
        for (unsigned k = 0; k < 256; k++)
            in[k] = hi << 16 | (base + k);
        for (unsigned k = 0; k < 256; k += 16)
            hw_cvt16(in + k, hw + k);
        for (unsigned k = 0; k < 256; k++) {
            sf_env env = SF_ENV_AVX512BF16;
            sf_f32 x = {in[k]};
            uint16_t got = sf_f32_to_bf16(x, SF_RNE, &env).bits;

            if (got != hw[k]) {
                bad++;
#ifdef _OPENMP
#pragma omp critical(exh_print)
#endif
                {
                    if (*printed < TST_MAX_PRINT) {
                        uint64_t op = in[k];
                        (*printed)++;
                        tst_print_case("to_bf16", &sf_format_f32, SF_RNE, &op,
                                       1, hw[k], 0, got, 0);
                    }
                }
            }
        }
    }
    return bad;
}

#endif /* BF16_HW */

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
    unsigned long first = 0, last = 0xFFFF;

    if (argc == 3) {
        first = strtoul(argv[1], NULL, 0);
        last = strtoul(argv[2], NULL, 0);
    }
    if (argc != 1 && argc != 3) {
        fprintf(stderr, "usage: %s [FIRST LAST]\n", argv[0]);
        return 2;
    }
    if (first > last || last > 0xFFFF) {
        fprintf(stderr, "%s: need 0 <= FIRST <= LAST <= 0xFFFF\n", argv[0]);
        return 2;
    }
#if BF16_HW
    {
        const char *why = hw_missing();
        unsigned long bad = 0;
        unsigned printed = 0;
        double t0, t1;
        long i;

        if (why != NULL) {
            printf("exh_avx512bf16: skipped: %s\n", why);
            return EXIT_SUCCESS;
        }
        printf("exh_avx512bf16: high halves 0x%04lx..0x%04lx, env "
               "SF_ENV_AVX512BF16, RNE, flags not compared\n",
               first, last);
        fflush(stdout);
        t0 = now();
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : bad)
#endif
        for (i = (long)first; i <= (long)last; i++)
            bad += check_block((uint32_t)i, &printed);
        t1 = now();
        printf("exh_avx512bf16: %llu conversions, %lu mismatches, "
               "%.1f s wall",
               (unsigned long long)(last - first + 1) << 16, bad, t1 - t0);
#ifdef _OPENMP
        printf(", %d threads", omp_get_max_threads());
#endif
        printf("\n");
        return bad == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
#else
    (void)now;
#if !defined(__x86_64__)
    printf("exh_avx512bf16: skipped: not an x86-64 host\n");
#else
    printf("exh_avx512bf16: skipped: the compiler cannot target "
           "AVX512-BF16 (HAVE_AVX512BF16_COMPILER undefined)\n");
#endif
    return EXIT_SUCCESS;
#endif
}
