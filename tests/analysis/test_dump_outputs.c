/* test_dump_outputs.c -- analysis/dump_outputs.h: the hash of a whole
   tensor against experiments/gpu/trim_dump.py's (an independent Python
   implementation over the file's bytes), for a BF16 and an F32 tensor of
   committed H200 dumps, and the place of each stored element of a tensor
   kept in part in the whole tensor (rows written out by hand) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/dump_outputs.h"

#define DIR SRCDIR "/tests/data/gpu/sdpa_ext/"

/* The hashes trim_dump.py computes from the whole stored tensors (the
   bytes as 16-bit little-endian words): d32_normal's dk (BF16
   [1, 1, 128, 32]) and causal_d256_nq128_nk64's lse (F32 [1, 1, 128]). */
START_TEST(test_hash_files)
{
    static const struct
    {
        const char *file, *key;
        uint64_t hash;
    } cases[] = {{DIR "d32_normal.safetensors", "dk", 0x07f525cbb7d1c45fu},
                 {DIR "causal_d256_nq128_nk64.safetensors", "lse",
                  0xaf160f3c62e407a4u}};
    for (size_t c = 0; c < 2; c++) {
        tensor t = TENSOR_INIT;
        dump_kept k = DUMP_KEPT_INIT;
        tensor_error err;
        uint64_t h, h2;
        ck_assert_msg(dump_output_read(cases[c].file, cases[c].key, TENSOR_ANY,
                                       &t, &k, &err)
                          == TENSOR_OK,
                      "%s", err.message);
        ck_assert(!k.kept);
        h = dump_hash_tensor(&t);
        if (t.dtype == TENSOR_F32) {
            uint32_t *b = malloc(t.n_elems * sizeof *b);
            ck_assert(b != NULL);
            for (uint64_t i = 0; i < t.n_elems; i++)
                b[i] = (uint32_t)tensor_get_bits(&t, i);
            h2 = dump_hash32(b, (size_t)t.n_elems);
            free(b);
        } else {
            uint16_t *b = malloc(t.n_elems * sizeof *b);
            ck_assert(b != NULL);
            for (uint64_t i = 0; i < t.n_elems; i++)
                b[i] = (uint16_t)tensor_get_bits(&t, i);
            h2 = dump_hash16(b, (size_t)t.n_elems);
            free(b);
        }
        ck_assert_msg(h == cases[c].hash && h2 == cases[c].hash,
                      "%s %s: hash 0x%016" PRIx64 " / 0x%016" PRIx64
                      ", expected 0x%016" PRIx64,
                      cases[c].file, cases[c].key, h, h2, cases[c].hash);
        tensor_free(&t);
    }
}
END_TEST

/* One element changed, anywhere, changes the hash (every element of a
   small tensor, each of its 16 bits). */
START_TEST(test_hash_sensitive)
{
    uint16_t b[64];
    uint64_t h0;
    for (size_t i = 0; i < 64; i++)
        b[i] = (uint16_t)(i * 40503u);
    h0 = dump_hash16(b, 64);
    for (size_t i = 0; i < 64; i++)
        for (unsigned bit = 0; bit < 16; bit++) {
            b[i] ^= (uint16_t)(1u << bit);
            ck_assert_msg(dump_hash16(b, 64) != h0,
                          "element %zu bit %u: hash unchanged", i, bit);
            b[i] ^= (uint16_t)(1u << bit);
        }
    /* the length is in the hash: a trailing zero element counts */
    b[63] = 0;
    ck_assert(dump_hash16(b, 63) != dump_hash16(b, 64));
}
END_TEST

/* Rows [0, 2), [5, 6), [8, 10) of a [2, 1, 10, 3] tensor: stored element
   i of [2, 1, 5, 3] is at (bh, row, c) of the whole. */
START_TEST(test_index)
{
    uint64_t ranges[3][2] = {{0, 2}, {5, 6}, {8, 10}};
    static const uint64_t rows[5] = {0, 1, 5, 8, 9};
    dump_kept k = {true, 4, {2, 1, 10, 3}, 3, ranges, 5, 0};
    tensor t = TENSOR_INIT;
    uint64_t shape[4] = {2, 1, 5, 3};

    ck_assert_int_eq(tensor_alloc(&t, TENSOR_BF16, 4, shape, NULL), TENSOR_OK);
    for (uint64_t bh = 0; bh < 2; bh++)
        for (uint64_t j = 0; j < 5; j++)
            for (uint64_t c = 0; c < 3; c++) {
                uint64_t i = (bh * 5 + j) * 3 + c;
                ck_assert_uint_eq(dump_kept_index(&k, &t, i),
                                  (bh * 10 + rows[j]) * 3 + c);
            }
    for (uint64_t r = 0; r < 10; r++)
        ck_assert(dump_kept_has_row(&k, r)
                  == (r < 2 || r == 5 || r == 8 || r == 9));
    ck_assert_uint_eq(dump_kept_row(&k, 2), 5);
    tensor_free(&t);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("dump_outputs");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_hash_files);
    tcase_add_test(tc, test_hash_sensitive);
    tcase_add_test(tc, test_index);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
