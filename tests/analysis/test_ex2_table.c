/* test_ex2_table.c -- the ex2-sm90 exp model (analysis/data/ex2-sm90.bin.gz
   through ax_ex2_model and the attention layer's table rule) against outputs
   of the H200's ex2.approx.f32 and ex2.approx.ftz.f32
   (tests/data/gpu/ex2_h200.safetensors: 2^15 sampled inputs, three in four
   x <= 0, a quarter of those in [-150, -120] where the results are
   subnormal), and the loader against damaged files. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ex2_table.h"
#include "analysis/tensor.h"
#include "attention/attention.h"
#include "tests/support/gzfile.h"
#include "tests/support/suite.h"
#include "tests/support/tables.h"

static const char *
samples_path(void)
{
    return SRCDIR "/tests/data/gpu/ex2_h200.safetensors";
}

static uint32_t
u32_at(const tensor *t, uint64_t i)
{
    return (uint32_t)tensor_get_bits(t, i);
}

static bool
is_nan(uint32_t x)
{
    return (x & 0x7FFFFFFFu) > 0x7F800000u;
}

/* Every sample of one variant; returns the number of mismatches. */
static unsigned
check_variant(const ax_ex2_table *tab, bool ftz, const tensor *xs,
              const tensor *ys, unsigned *n_sub)
{
    fa_exp2_table t;
    fa_exp_model m;
    unsigned bad = 0;

    ax_ex2_model(tab, ftz, &t, &m);
    ck_assert_ptr_null(fa_exp_model_check(&m));
    ck_assert_str_eq(m.name, ftz ? "ex2-sm90-ftz" : "ex2-sm90");
    for (uint64_t i = 0; i < xs->n_elems; i++) {
        uint32_t x = u32_at(xs, i), hw = u32_at(ys, i);
        uint32_t got = fa_exp_eval(&m, true, x);
        bool ok = is_nan(hw) ? is_nan(got) : got == hw;
        if ((hw & 0x7F800000u) == 0 && (hw & 0x7FFFFFu) != 0)
            (*n_sub)++;
        if (!ok && bad++ < 10)
            printf("%s: x %08x: H200 %08x, model %08x\n",
                   ftz ? "ex2.approx.ftz.f32" : "ex2.approx.f32", x, hw,
                   got);
    }
    return bad;
}

START_TEST(test_against_h200)
{
    ax_ex2_table tab;
    tensor_file f;
    tensor_error terr;
    char err[512];
    const tensor *xs = NULL, *y = NULL, *yf = NULL;
    unsigned bad, sub = 0, subf = 0;

    ck_assert_msg(
        ax_ex2_table_load(tst_ex2_table_path(), &tab, err, sizeof err) == 0,
        "%s", err);
    ck_assert_uint_eq(tab.frac_bits, 23);
    ck_assert_msg(safetensors_read_all(samples_path(), TENSOR_U32, &f,
                                       &terr) == 0,
                  "%s", terr.message);
    for (size_t i = 0; i < f.n_tensors; i++) {
        if (strcmp(f.tensors[i].name, "ex2.x") == 0)
            xs = &f.tensors[i].tensor;
        else if (strcmp(f.tensors[i].name, "ex2.approx") == 0)
            y = &f.tensors[i].tensor;
        else if (strcmp(f.tensors[i].name, "ex2.approx_ftz") == 0)
            yf = &f.tensors[i].tensor;
    }
    ck_assert_msg(xs && y && yf, "%s: ex2.x, ex2.approx, ex2.approx_ftz",
                  samples_path());
    ck_assert_uint_eq(xs->n_elems, 32768);
    bad = check_variant(&tab, false, xs, y, &sub);
    bad += check_variant(&tab, true, xs, yf, &subf);
    printf("ex2-sm90: %llu samples x 2 variants against the H200, %u "
           "mismatches (%u subnormal results of ex2.approx.f32)\n",
           (unsigned long long)xs->n_elems, bad, sub);
    /* the samples must reach the square-of-half rule */
    ck_assert_uint_gt(sub, 1000);
    ck_assert_uint_eq(subf, 0);
    ck_assert_uint_eq(bad, 0);
    tensor_file_free(&f);
    ax_ex2_table_free(&tab);
}
END_TEST

static void
expect_error(const unsigned char *bytes, size_t n, const char *what)
{
    char name[64], err[512];
    ax_ex2_table t;

    ck_assert(tst_write_gz(name, sizeof name, "ex2_bad", bytes, n));
    ck_assert_int_eq(ax_ex2_table_load(name, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, what) != NULL && strstr(err, name) == err,
                  "for %s: got \"%s\"", what, err);
    ck_assert_ptr_null(t.neg);
    ck_assert_ptr_null(t.pos);
    unlink(name);
}

static void
put32(unsigned char *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

START_TEST(test_damaged)
{
    /* a valid 1-bit file: N = {a, a + 1}, P = {b, b + 2} */
    unsigned char ok[42] = "BF16EX2";
    uint32_t n[2] = {0x3F000000u, 0x3F000001u};
    uint32_t p[2] = {0x3F800000u, 0x3F800002u};
    uint64_t h[2] = {1469598103934665603ull, 1469598103934665603ull};
    char name[64], err[512];
    ax_ex2_table t;

    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            for (int b = 0; b < 4; b++) {
                h[k] ^= ((k ? p : n)[j] >> (8 * b)) & 0xFF;
                h[k] *= 1099511628211ull;
            }
    put32(ok + 8, 1);
    put32(ok + 12, 1);
    put32(ok + 16, n[0]);
    put32(ok + 20, p[0]);
    put32(ok + 24, (uint32_t)h[0]);
    put32(ok + 28, (uint32_t)(h[0] >> 32));
    put32(ok + 32, (uint32_t)h[1]);
    put32(ok + 36, (uint32_t)(h[1] >> 32));
    ok[40] = 1;
    ok[41] = 2;
    ck_assert(tst_write_gz(name, sizeof name, "ex2_bad", ok, sizeof ok));
    ck_assert_msg(ax_ex2_table_load(name, &t, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_uint_eq(t.count, 2);
    ck_assert_uint_eq(t.neg[1], n[1]);
    ck_assert_uint_eq(t.pos[1], p[1]);
    ax_ex2_table_free(&t);
    unlink(name);

    unsigned char bad[43];
    memcpy(bad, ok, sizeof ok);
    expect_error(bad, 20, "header: the file ends before 40 bytes");
    bad[0] = 'X';
    expect_error(bad, sizeof ok, "magic");
    memcpy(bad, ok, sizeof ok);
    put32(bad + 8, 2);
    expect_error(bad, sizeof ok, "version: expected 1, found 2");
    memcpy(bad, ok, sizeof ok);
    put32(bad + 12, 30);
    expect_error(bad, sizeof ok, "grid bits: expected 1..24, found 30");
    memcpy(bad, ok, sizeof ok);
    expect_error(bad, 41, "steps: the file ends");
    bad[42] = 0;
    expect_error(bad, 43, "steps: data after the second table");
    memcpy(bad, ok, sizeof ok);
    bad[41] = 3;
    expect_error(bad, sizeof ok, "hash: the tables do not match");
    ck_assert_int_eq(ax_ex2_table_load("no/such/file.gz", &t, err,
                                       sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "no/such/file.gz: cannot open") == err, "%s",
                  err);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ex2_table");
    TCase *tc = tst_add_tcase(s, "ex2_table", 120);

    tcase_add_test(tc, test_against_h200);
    tcase_add_test(tc, test_damaged);
    return tst_run_suite(s);
}
