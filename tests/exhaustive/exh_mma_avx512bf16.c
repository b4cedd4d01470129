/* exh_mma_avx512bf16.c -- the avx512bf16 preset against VDPBF16PS on many
   random instructions (all 16 lanes compared bit for bit).

   Usage: exh_mma_avx512bf16 [COUNT]   COUNT instructions (default 10^7,
   i.e. 1.6 * 10^8 lanes), in chunks of 65536 each with its own random
   stream (BF16EMU_TEST_SEED as in make check).  Prints the count, the
   mismatches (the first few as vectors) and the wall time.  Exit status 0
   when all match or when skipped (no hardware or compiler support; the
   reason is printed), 1 on a mismatch. */
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

#include "tests/softfloat/test_mma_dpbf16.h"

#define CHUNK 65536ul

#if DP_HW
/* One chunk of instructions from stream S; returns the mismatches. */
static unsigned long
run_chunk(const sf_mma_model *m, unsigned long s, unsigned long count,
          unsigned long *printed)
{
    unsigned long bad = 0;
    tst_rng r;

    tst_rng_init(&r, 0xE7A5u + s);
    for (unsigned long v = 0; v < count; v++) {
        uint32_t c[16], a[16], b[16], hw[16];
        dp_gen16(&r, c, a, b);
        dp_hw16(c, a, b, hw);
        for (unsigned i = 0; i < 16; i++) {
            uint32_t z = dp_model(m, c[i], a[i], b[i]);
            if (z != hw[i]) {
                bad++;
                if (tst_print_slot(printed)) {
#ifdef _OPENMP
#pragma omp critical
#endif
                    dp_print(c[i], a[i], b[i], hw[i], z);
                }
            }
        }
    }
    return bad;
}
#endif

int
main(int argc, char **argv)
{
    unsigned long count = argc > 1 ? strtoul(argv[1], NULL, 0) : 10000000ul;
    const char *why = dp_hw_missing();
#if DP_HW
    const sf_mma_model *m = sf_mma_preset_by_name("avx512bf16");
    unsigned long chunks = (count + CHUNK - 1) / CHUNK, bad = 0, printed = 0;
    struct timespec t0, t1;
    double secs;
#endif

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (why != NULL) {
        printf("exh_mma_avx512bf16: skipped: %s\n", why);
        return 0;
    }
#if DP_HW
    clock_gettime(CLOCK_MONOTONIC, &t0);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : bad)
#endif
    for (unsigned long s = 0; s < chunks; s++) {
        unsigned long len =
            s + 1 < chunks ? CHUNK : count - (chunks - 1) * CHUNK;
        bad += run_chunk(m, s, len, &printed);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec)
           + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("exh_mma_avx512bf16: %lu instructions (%lu lanes), %lu "
           "mismatches, %.1f s\n",
           count, count * 16, bad, secs);
    return bad == 0 ? 0 : 1;
#endif
}
