/* test_cvt_h200.c -- the emulator's narrowing conversions against the
   H200's (tests/data/gpu/cvt_h200.json: per-chunk hashes of cvt.rn/rz
   .bf16/.f16/.tf32, .relu, x2 and satfinite FP8 results over all 2^32
   FP32 inputs, recorded by experiments/gpu/probes/cvt_probe.cu).

   make check recomputes the emulator's hashes for the chunks that hold
   the special cases (zeros and subnormals of both signs, the largest
   values, infinities and NaNs); exh_cvt_h200 (the same program built for
   make check-exhaustive) or BF16EMU_CVT_ALL=1 checks every chunk of every
   conversion.  A chunk whose hash differs is reported with its input
   range and the emulator's first results there, so it can be replayed on
   the GPU with cvt_probe. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/gpu/probes/cvt_rules.h"

static const char *
fixture_path(void)
{
    const char *e = getenv("BF16EMU_CVT_H200");
    if (e != NULL && *e != '\0')
        return e;
    return SRCDIR "/tests/data/gpu/cvt_h200.json";
}

static json_t *
load_fixture(void)
{
    json_error_t err;
    json_t *root = json_load_file(fixture_path(), 0, &err);
    ck_assert_msg(root != NULL, "%s: line %d: %s", fixture_path(), err.line,
                  err.text);
    return root;
}

/* The hardware's hash of chunk C of conversion CONV (a fixture entry). */
static uint64_t
gpu_hash(json_t *conv, unsigned c)
{
    json_t *arr = json_object_get(conv, "gpu_chunk_hashes");
    const char *s = json_string_value(json_array_get(arr, c));
    ck_assert_msg(s != NULL, "chunk %u: no hash", c);
    return strtoull(s, NULL, 16);
}

/* Returns the number of chunks whose hashes differ. */
static unsigned
check_chunks(json_t *conv, const cvt_rule *r, const unsigned *chunks,
             size_t n)
{
    unsigned bad = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) reduction(+ : bad)
#endif
    for (size_t i = 0; i < n; i++) {
        uint64_t parts[CVT_NPART];
        unsigned c = chunks[i];
        for (unsigned p = 0; p < CVT_NPART; p++)
            parts[p] = cvt_part_hash(r, c, p);
        uint64_t want = gpu_hash(conv, c);
        uint64_t got = cvt_combine(parts);
        if (got != want) {
            bad++;
#ifdef _OPENMP
#pragma omp critical
#endif
            {
                printf("%s (%s): chunk %u [%08x, %08x]: emulator hash "
                       "%016" PRIx64 ", H200 %016" PRIx64 "\n",
                       r->key, r->ptx, c, c << CVT_CHUNK_BITS,
                       ((c + 1) << CVT_CHUNK_BITS) - 1, got, want);
                printf("  the emulator there: ");
                for (uint32_t k = 0; k < 4; k++) {
                    uint32_t x = (c << CVT_CHUNK_BITS) + k;
                    printf("%08x->%0*x ", x, 2 * (int)r->bytes,
                           cvt_emulate(r, x));
                }
                printf("\n");
            }
        }
    }
    return bad;
}

static void
run(bool all)
{
    json_t *root = load_fixture();
    json_t *convs = json_object_get(root, "conversions");
    static const unsigned sample[] = {0, 127, 128, 255};
    unsigned every[CVT_NCHUNK];
    size_t i, nconv = json_array_size(convs), checked = 0, bad = 0;

    for (i = 0; i < CVT_NCHUNK; i++)
        every[i] = (unsigned)i;
    ck_assert_msg(nconv == CVT_NRULES, "%s: %zu conversions, expected %d",
                  fixture_path(), nconv, CVT_NRULES);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "chunk_bits")),
                     CVT_CHUNK_BITS);
    for (i = 0; i < nconv; i++) {
        json_t *conv = json_array_get(convs, i);
        const char *key = json_string_value(json_object_get(conv, "key"));
        const cvt_rule *r = key ? cvt_rule_by_key(key) : NULL;
        ck_assert_msg(r != NULL, "%s: unknown conversion %s", fixture_path(),
                      key ? key : "(none)");
        ck_assert_uint_eq(
            json_array_size(json_object_get(conv, "gpu_chunk_hashes")),
            CVT_NCHUNK);
        size_t n = all ? CVT_NCHUNK : sizeof sample / sizeof sample[0];
        unsigned b = check_chunks(conv, r, all ? every : sample, n);
        printf("%-14s %-30s %zu chunks (%zu inputs), %u differ\n", r->key,
               r->ptx, n, n << CVT_CHUNK_BITS, b);
        checked += n;
        bad += b;
    }
    json_decref(root);
    ck_assert_msg(bad == 0, "%zu of %zu chunks differ from the H200", bad,
                  checked);
}

START_TEST(test_sample_chunks)
{
    const char *e = getenv("BF16EMU_CVT_ALL");
#ifdef CVT_ALL_CHUNKS
    run(true);
    (void)e;
#else
    run(e != NULL && strcmp(e, "1") == 0);
#endif
}
END_TEST

/* The rules themselves on hand-picked inputs (what the chunks hold):
   round to nearest even, relu, the x2 packing order, saturation, the TF32
   NaN rule. */
START_TEST(test_rules)
{
    const cvt_rule *bf = cvt_rule_by_key("bf16_rn");
    const cvt_rule *relu = cvt_rule_by_key("bf16_rn_relu");
    const cvt_rule *x2 = cvt_rule_by_key("bf16x2_rn");
    const cvt_rule *e5 = cvt_rule_by_key("e5m2x2_rn_sat");
    const cvt_rule *tf = cvt_rule_by_key("tf32_rna");
    ck_assert_ptr_nonnull(bf);
    ck_assert_uint_eq(cvt_emulate(bf, 0x3f808000u), 0x3f80); /* tie, even */
    ck_assert_uint_eq(cvt_emulate(bf, 0x3f818000u), 0x3f82); /* tie, odd */
    ck_assert_uint_eq(cvt_emulate(bf, 0x7fc00001u), 0x7fff); /* NaN */
    ck_assert_uint_eq(cvt_emulate(relu, 0xbf800000u), 0x0000);
    ck_assert_uint_eq(cvt_emulate_packed(x2, 0x3f800000u), 0x3f80bf80u);
    ck_assert_uint_eq(cvt_emulate(e5, 0x7f800000u), 0x7b);
    ck_assert_uint_eq(cvt_emulate(tf, 0x7f801fffu), 0x7f800000u);
    ck_assert_uint_eq(cvt_emulate(tf, 0x3f801000u), 0x3f802000u);
    ck_assert_ptr_null(cvt_rule_by_key("nope"));
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("cvt_h200");
    TCase *tc = tcase_create("h200");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, test_rules);
    tcase_add_test(tc, test_sample_chunks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
