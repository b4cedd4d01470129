/* exh_mma_amx.c -- the amx preset against TDPBF16PS on many tiles (every
   element of every tile compared bit for bit).

   Usage: exh_mma_amx [TILES]   the directed tiles of test_mma_amx, then
   TILES random tiles (default 40000, i.e. 1.02 * 10^7 tile elements, each
   a dot product of 32 BF16 pairs per instruction plus an FP32 C) in
   chunks of 64 tiles, each chunk with its own random stream
   (BF16EMU_TEST_SEED as in make check), the value distributions in turn;
   one tile in four chains two to four instructions through C.  Runs the
   chunks in parallel with OpenMP when built with it; the results do not
   depend on the number of threads.  Prints the counts per distribution,
   the first mismatches as vectors and the wall time.  Exit status 0 when
   all match, 1 on a mismatch, 77 when skipped (no AMX-BF16 or no
   permission for the tile data; the reason is printed). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* syscall, clock_gettime */
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/softfloat/test_mma_amx.h"

#define CHUNK 64ul
#define MAX_DIRECTED 1024

/* The instructions of random tile I (1 for three tiles in four). */
static unsigned
tile_inst(unsigned long i)
{
    return i % 4 != 3 ? 1 : 2 + (unsigned)(i / 4 % (AMX_MAX_INST - 1));
}

/* Random tiles [FIRST, FIRST + COUNT) of chunk S; adds the elements and
   mismatches per distribution to N and BAD. */
static void
run_chunk(const sf_mma_model *m, unsigned long s, unsigned long first,
          unsigned long count, unsigned long *n, unsigned long *bad,
          unsigned long *printed)
{
    amx_tiles *t = malloc(sizeof *t);
    tst_rng r;

    if (t == NULL) {
        fprintf(stderr, "exh_mma_amx: out of memory\n");
        exit(2);
    }
    tst_rng_init(&r, 0xE7A3u + s);
    for (unsigned long i = first; i < first + count; i++) {
        amx_dist d = (amx_dist)(i % AMX_N_DIST);
        unsigned n_inst = tile_inst(i);
        char what[64];
        unsigned long b;
        snprintf(what, sizeof what, "random %s tile %lu", amx_dist_name(d), i);
        amx_rand_tiles(&r, d, n_inst, t);
        b = amx_check_tiles(m, t, what, printed, NULL, NULL);
#ifdef _OPENMP
#pragma omp atomic
#endif
        bad[d] += b;
#ifdef _OPENMP
#pragma omp atomic
#endif
        n[d] += AMX_M * AMX_N;
    }
    free(t);
}

/* The directed tiles of test_mma_amx (one instruction); returns the
   mismatches and adds the elements to *N. */
static unsigned long
run_directed(const sf_mma_model *m, unsigned long *n, unsigned long *printed)
{
    static amx_vec v[MAX_DIRECTED];
    static amx_tiles t;
    size_t nv = amx_directed(v, MAX_DIRECTED);
    unsigned long bad = 0;

    if (nv > MAX_DIRECTED) {
        fprintf(stderr, "exh_mma_amx: %zu directed vectors\n", nv);
        exit(2);
    }
    for (size_t i = 0; i < nv; i += AMX_M) {
        size_t len = nv - i < AMX_M ? nv - i : AMX_M;
        amx_pack_directed(&t, v + i, len);
        bad += amx_check_tiles(m, &t, "directed", printed, NULL, NULL);
        *n += AMX_M * AMX_N;
    }
    return bad;
}

int
main(int argc, char **argv)
{
    unsigned long tiles = argc > 1 ? strtoul(argv[1], NULL, 0) : 40000ul;
    unsigned long chunks = (tiles + CHUNK - 1) / CHUNK;
    unsigned long n[AMX_N_DIST] = {0}, bad[AMX_N_DIST] = {0};
    unsigned long printed = 0, n_dir = 0, bad_dir, n_all, bad_all;
    const sf_mma_model *m = sf_mma_preset_by_name("amx");
    const char *why = amx_missing();
    struct timespec t0, t1;
    double secs;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (why != NULL) {
        printf("exh_mma_amx: skipped: %s\n", why);
        return 77;
    }
    if (m == NULL) {
        printf("exh_mma_amx: no amx preset\n");
        return 1;
    }
    if (tst_seed() != 1)
        printf("exh_mma_amx: seed %llu\n", (unsigned long long)tst_seed());
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bad_dir = run_directed(m, &n_dir, &printed);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (unsigned long s = 0; s < chunks; s++) {
        unsigned long first = s * CHUNK;
        unsigned long len = first + CHUNK <= tiles ? CHUNK : tiles - first;
        run_chunk(m, s, first, len, n, bad, &printed);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec)
           + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    n_all = n_dir;
    bad_all = bad_dir;
    printf("exh_mma_amx: directed: %lu tile elements, %lu mismatches\n", n_dir,
           bad_dir);
    for (unsigned d = 0; d < AMX_N_DIST; d++) {
        printf("exh_mma_amx: %-6s: %lu tile elements, %lu mismatches\n",
               amx_dist_name((amx_dist)d), n[d], bad[d]);
        n_all += n[d];
        bad_all += bad[d];
    }
    printf("exh_mma_amx: %lu random tiles, %lu tile elements in all, %lu "
           "mismatches, %.1f s\n",
           tiles, n_all, bad_all, secs);
    return bad_all == 0 ? 0 : 1;
}
