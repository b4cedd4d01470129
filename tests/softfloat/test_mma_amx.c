/* test_mma_amx.c -- the amx preset against TDPBF16PS (Intel AMX-BF16) on
   this CPU: directed tile elements (NaN, Inf, DAZ, FTZ, signed zeros,
   cancellation, carries, exponent spread, C dominance, overflow), 10^5
   random tile elements over seven value distributions, and two to four
   instructions chained through C.  Every element of every tile is
   compared bit for bit.  Without AMX-BF16, or without the kernel's
   permission for the tile data, the program exits 77 (skipped) and says
   why. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* syscall */
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/softfloat/test_mma_amx.h"
#include "tests/support/suite.h"

#define N_RANDOM 100000ul /* tile elements */
#define N_CHAIN_TILES 160
#define MAX_DIRECTED 1024

static const sf_mma_model *
amx_preset(void)
{
    const sf_mma_model *m = sf_mma_preset_by_name("amx");
    ck_assert_ptr_nonnull(m);
    return m;
}

/* Every directed vector on the diagonal of a tile (16 at a time, the
   other elements crossing them), then pairs of them chained through C
   as two instructions (K = 64). */
START_TEST(test_directed)
{
    static amx_vec v[MAX_DIRECTED];
    static amx_tiles t;
    const sf_mma_model *m = amx_preset();
    sf_mma_model alt = amx_single_chain(m);
    size_t n = amx_directed(v, MAX_DIRECTED);
    unsigned long bad = 0, printed = 0, elems = 0, alt_ok = 0;

    ck_assert_msg(n <= MAX_DIRECTED, "%zu directed vectors", n);
    for (size_t i = 0; i < n; i += AMX_M) {
        char what[64];
        size_t len = n - i < AMX_M ? n - i : AMX_M;
        snprintf(what, sizeof what, "directed %zu..%zu", i, i + len - 1);
        amx_pack_directed(&t, v + i, len);
        bad += amx_check_tiles(m, &t, what, &printed, &alt, &alt_ok);
        elems += AMX_M * AMX_N;
    }
    for (size_t i = 0; i < n; i += AMX_M) {
        char what[64];
        t.n_inst = 2;
        for (unsigned r = 0; r < AMX_M; r++) {
            const amx_vec *x = &v[(i + r) % n];
            const amx_vec *y = &v[((i + r) * 7 + 3) % n];
            amx_set_row(&t, 0, r, x->a);
            amx_set_col(&t, 0, r, x->b);
            amx_set_row(&t, 1, r, y->a);
            amx_set_col(&t, 1, r, y->b);
            for (unsigned c = 0; c < AMX_N; c++)
                t.c[r][c] = v[(i + r + 5 * c) % n].c;
        }
        snprintf(what, sizeof what, "directed pairs from %zu", i);
        bad += amx_check_tiles(m, &t, what, &printed, &alt, &alt_ok);
        elems += AMX_M * AMX_N;
    }
    printf("amx directed: %zu vectors, %lu tile elements, %lu mismatches "
           "(single-chain reading matches %lu)\n",
           n, elems, bad, alt_ok);
    ck_assert_msg(bad == 0, "%lu of %lu directed tile elements differ", bad,
                  elems);
}
END_TEST

/* Random tiles (one instruction, K = 32), the distributions in turn. */
START_TEST(test_random)
{
    static amx_tiles t;
    const sf_mma_model *m = amx_preset();
    sf_mma_model alt = amx_single_chain(m);
    unsigned long tiles =
        (N_RANDOM * tst_multiplier() + AMX_M * AMX_N - 1) / (AMX_M * AMX_N);
    unsigned long bad[AMX_N_DIST] = {0}, n[AMX_N_DIST] = {0};
    unsigned long printed = 0, alt_ok = 0, total_bad = 0;
    tst_rng r;

    tst_rng_init(&r, 0xA3C5u);
    for (unsigned long i = 0; i < tiles; i++) {
        amx_dist d = (amx_dist)(i % AMX_N_DIST);
        char what[64];
        snprintf(what, sizeof what, "random %s tile %lu", amx_dist_name(d), i);
        amx_rand_tiles(&r, d, 1, &t);
        bad[d] += amx_check_tiles(m, &t, what, &printed, &alt, &alt_ok);
        n[d] += AMX_M * AMX_N;
    }
    for (unsigned d = 0; d < AMX_N_DIST; d++) {
        printf("amx random %-6s: %lu tile elements, %lu mismatches\n",
               amx_dist_name((amx_dist)d), n[d], bad[d]);
        total_bad += bad[d];
    }
    printf("amx random: %lu tiles, single-chain reading matches %lu of "
           "%lu\n",
           tiles, alt_ok, tiles * AMX_M * AMX_N);
    ck_assert_msg(total_bad == 0, "%lu of %lu random tile elements differ",
                  total_bad, tiles * AMX_M * AMX_N);
}
END_TEST

/* Two to four instructions chained through C (K = 64 .. 128). */
START_TEST(test_chain)
{
    static amx_tiles t;
    const sf_mma_model *m = amx_preset();
    unsigned long bad = 0, printed = 0, elems = 0;
    tst_rng r;

    tst_rng_init(&r, 0xC4A1u);
    for (unsigned long i = 0; i < N_CHAIN_TILES; i++) {
        amx_dist d = (amx_dist)(i % AMX_N_DIST);
        unsigned n_inst = 2 + (unsigned)(i / AMX_N_DIST % (AMX_MAX_INST - 1));
        char what[64];
        snprintf(what, sizeof what, "chain %s tile %lu", amx_dist_name(d), i);
        amx_rand_tiles(&r, d, n_inst, &t);
        bad += amx_check_tiles(m, &t, what, &printed, NULL, NULL);
        elems += AMX_M * AMX_N;
    }
    printf("amx chains: %d tiles, %lu tile elements, %lu mismatches\n",
           N_CHAIN_TILES, elems, bad);
    ck_assert_msg(bad == 0, "%lu of %lu chained tile elements differ", bad,
                  elems);
}
END_TEST

int
main(void)
{
    const char *why = amx_missing();
    Suite *s;
    TCase *tc;

    if (why != NULL) {
        printf("test_mma_amx: skipped: %s\n", why);
        return 77;
    }
    s = suite_create("mma_amx");
    tc = tst_add_tcase(s, "tdpbf16ps", 300);
    tcase_add_test(tc, test_directed);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_chain);
    return tst_run_suite(s);
}
