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
#include "ref/avx512bf16.h"
#include "tests/support/support.h"

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
            ref_avx512bf16_cvt16(in + k, hw + k);
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
    const char *why = ref_avx512bf16_missing();
    unsigned long bad = 0;
    unsigned printed = 0;
    double t0, t1;
    long i;

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
