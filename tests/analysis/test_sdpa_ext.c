/* test_sdpa_ext.c -- the extended H200 SDPA dumps (tests/data/gpu/sdpa_ext:
   split-KV, decode, FP16, d = 16 ... 256 with 192 and 224, causal with
   NQ != NK; made by experiments/gpu/sdpa_sweep.py --set extended) checked
   at the level of their manifests: each manifest's launch shape, dtype,
   kernels, grids and split count agree with each other and with the
   tensors of its safetensors file, the backward's dQ buffer count with
   its dq_dk_dv kernel's grid (ceil(SMs / (B H)) in deterministic mode,
   one KV block per thread block otherwise), and the LSE holds +Inf
   exactly on the rows the kernel's bottom-right causal mask leaves
   empty.  Where the manifest describes the inputs (inputs_gen) instead
   of storing them, the description covers the whole launch and the
   inputs are regenerated (analysis/dump_inputs.h).  The emulator
   is not run on them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dump_inputs.h"
#include "analysis/dump_outputs.h"
#include "analysis/tensor.h"
#include "tests/support/suite.h"

#define DIR SRCDIR "/tests/data/gpu/sdpa_ext/"

static const char *const fixtures[] = {
    "bwd_det_d128_b2h22_causal",
    "bwd_det_d128_h44_nk512_mirror_fp16",
    "bwd_det_d32_h132_nk384_mirror",
    "bwd_det_d32_h66_nk512_fp16",
    "bwd_det_d64_h66_nk384",
    "bwd_det_d64_h66_nk384_mirror",
    "bwd_nondet_d64_h4_nk384_mirror",
    "bwd_nondet_d64_h4_nk512",
    "causal_d128_nq64_nk192",
    "causal_d256_nq128_nk64",
    "causal_d32_nq128_nk64_fp16",
    "causal_d32_nq64_nk256",
    "causal_d64_nq128_nk256",
    "causal_d64_nq192_nk320",
    "causal_d64_nq256_nk128",
    "causal_d96_nq100_nk300_fp16",
    "d160_causal",
    "d192_normal",
    "d224_causal",
    "d256_normal",
    "d32_normal",
    "d32_repmax8",
    "d32_sink_causal",
    "d96_normal",
    "d96_repmax4",
    "decode_d128_nk512_b2",
    "decode_d128_nk512_fp16",
    "decode_d16_nk16384",
    "decode_d192_nk192",
    "decode_d256_nk384_fp16_repmax",
    "decode_d32_nk1024_fp16",
    "decode_d32_nk4096",
    "decode_d64_nk1024",
    "decode_d64_nk1024_fp16_sink",
    "decode_d64_nk2048",
    "decode_d64_nk512",
    "fp16_d128_normal_causal",
    "fp16_d192_normal",
    "fp16_d32_sink",
    "fp16_d64_normal",
    "fp16_d64_repmax8",
    "fp16_d64_sink",
    "fp16_d64_sink_causal",
    "split_d128_s2",
    "split_d128_s4_fp16",
    "split_d128_s4_repmax",
    "split_d128_s6",
    "split_d16_s40",
    "split_d192_s6",
    "split_d224_s4",
    "split_d256_s2",
    "split_d256_s4",
    "split_d256_s4_fp16_sink",
    "split_d32_s2",
    "split_d32_s4_sink",
    "split_d64_h20_s2",
    "split_d64_s2",
    "split_d64_s2_fp16",
    "split_d64_s3",
    "split_d64_s4_causal",
    "split_d64_s5",
    "split_d8_s128",
};
#define NFIX (sizeof fixtures / sizeof fixtures[0])

static json_int_t
int_at(const char *name, json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    ck_assert_msg(json_is_integer(v), "%s: manifest: %s: expected an integer",
                  name, key);
    return json_integer_value(v);
}

/* The launch of the kernel whose name contains WHAT (NULL: none). */
static json_t *
launch(json_t *launches, const char *what)
{
    size_t i;
    json_t *l;

    json_array_foreach(launches, i, l)
    {
        const char *n = json_string_value(json_object_get(l, "name"));
        if (n != NULL && strstr(n, what) != NULL)
            return l;
    }
    return NULL;
}

static bool
kernel_seen(json_t *kernels, const char *what)
{
    size_t i;
    json_t *k;

    json_array_foreach(kernels, i, k)
    {
        const char *n = json_string_value(k);
        if (n != NULL && strstr(n, what) != NULL)
            return true;
    }
    return false;
}

static void
expect_shape(const char *name, const char *path, const char *key,
             tensor_dtype dt, unsigned ndim, const uint64_t *shape,
             tensor *out)
{
    tensor_error terr;
    dump_kept k = DUMP_KEPT_INIT;
    const uint64_t *got;

    /* an output the dump keeps in part (outputs_kept): its whole shape */
    ck_assert_msg((strcmp(key, "q") == 0 || strcmp(key, "k") == 0
                           || strcmp(key, "v") == 0 || strcmp(key, "do") == 0
                       ? dump_input_read(path, key, dt, out, &terr)
                       : dump_output_read(path, key, dt, out, &k, &terr))
                      == 0,
                  "%s: %s: %s", name, key, terr.message);
    got = k.kept ? k.shape : out->shape;
    ck_assert_uint_eq(k.kept ? k.ndim : out->ndim, ndim);
    for (unsigned i = 0; i < ndim; i++)
        ck_assert_msg(got[i] == shape[i],
                      "%s: %s: dim %u is %llu, "
                      "the manifest says %llu",
                      name, key, i, (unsigned long long)got[i],
                      (unsigned long long)shape[i]);
    dump_kept_free(&k);
}

START_TEST(test_manifests)
{
    const char *name = fixtures[_i];
    char path[512], jpath[512];
    json_error_t jerr;

    snprintf(jpath, sizeof jpath, DIR "%s.json", name);
    snprintf(path, sizeof path, DIR "%s.safetensors", name);
    json_t *m = json_load_file(jpath, 0, &jerr);
    ck_assert_msg(m != NULL, "%s: %s", jpath, jerr.text);
    ck_assert_str_eq(json_string_value(json_object_get(m, "producer")),
                     "experiments/gpu/dump_sdpa.py");
    ck_assert_str_eq(json_string_value(json_object_get(m, "gpu")),
                     "NVIDIA H200");
    ck_assert_str_eq(json_string_value(json_object_get(m, "backend")),
                     "flash");
    const char *dts = json_string_value(json_object_get(m, "dtype"));
    ck_assert_ptr_nonnull(dts);
    bool fp16 = strcmp(dts, "float16") == 0;
    ck_assert_msg(fp16 || strcmp(dts, "bfloat16") == 0, "%s: dtype %s", name,
                  dts);
    json_t *ls = json_object_get(m, "launch_shape");
    json_t *sh = json_object_get(m, "shape");
    json_int_t b = int_at(name, ls, "batch"), h = int_at(name, ls, "heads");
    json_int_t nq = int_at(name, ls, "nq"), nk = int_at(name, ls, "nk");
    json_int_t d = int_at(name, ls, "d");
    ck_assert(b >= 1 && h >= 1 && nq >= 1 && nk >= 1 && d >= 8);
    /* one head of the launch kept */
    ck_assert_int_eq(int_at(name, sh, "batch"), 1);
    ck_assert_int_eq(int_at(name, sh, "heads"), 1);
    ck_assert_int_eq(int_at(name, sh, "nq"), nq);
    ck_assert_int_eq(int_at(name, sh, "nk"), nk);
    ck_assert_int_eq(int_at(name, sh, "d"), d);

    /* the split count: the kernels seen, the grids and the heuristic */
    json_int_t splits = int_at(name, m, "splits");
    ck_assert_int_ge(splits, 1);
    ck_assert_int_eq(int_at(name, m, "splits_predicted"), splits);
    json_t *kern = json_object_get(m, "forward_kernels");
    json_t *lau = json_object_get(m, "forward_launches");
    ck_assert(json_is_array(kern) && json_is_array(lau));
    bool split_k = kernel_seen(kern, "flash_fwd_splitkv_kernel");
    bool comb_k = kernel_seen(kern, "flash_fwd_splitkv_combine_kernel");
    bool one_k = kernel_seen(kern, "flash_fwd_kernel");
    ck_assert_msg(split_k == (splits > 1) && comb_k == (splits > 1)
                      && one_k == (splits == 1),
                  "%s: %lld splits, kernels split %d combine %d one-pass %d",
                  name, (long long)splits, split_k, comb_k, one_k);
    json_t *l = launch(lau, splits > 1 ? "flash_fwd_splitkv_kernel"
                                       : "flash_fwd_kernel");
    ck_assert_ptr_nonnull(l);
    json_t *grid = json_object_get(l, "grid");
    ck_assert_uint_eq(json_array_size(grid), 3);
    json_int_t gx = json_integer_value(json_array_get(grid, 0));
    json_int_t gy = json_integer_value(json_array_get(grid, 1));
    json_int_t gz = json_integer_value(json_array_get(grid, 2));
    /* query blocks of 64 or 128 rows */
    ck_assert(gx == (nq + 63) / 64 || gx == (nq + 127) / 128);
    if (splits > 1) {
        ck_assert_int_eq(gy, splits);
        ck_assert_int_eq(gz, b * h);
    } else {
        ck_assert_int_eq(gy, b);
        ck_assert_int_eq(gz, h);
    }

    /* tensors */
    tensor_dtype in = fp16 ? TENSOR_F16 : TENSOR_BF16;
    uint64_t qs[4] = {1, 1, (uint64_t)nq, (uint64_t)d};
    uint64_t ks[4] = {1, 1, (uint64_t)nk, (uint64_t)d};
    uint64_t rs[3] = {1, 1, (uint64_t)nq};
    tensor t = TENSOR_INIT, lse = TENSOR_INIT;
    expect_shape(name, path, "q", in, 4, qs, &t);
    tensor_free(&t);
    expect_shape(name, path, "k", in, 4, ks, &t);
    tensor_free(&t);
    expect_shape(name, path, "v", in, 4, ks, &t);
    tensor_free(&t);
    expect_shape(name, path, "o", in, 4, qs, &t);
    tensor_free(&t);
    json_t *bop = json_object_get(m, "backward_op");
    json_t *tens = json_object_get(m, "tensors");
    /* inputs the manifest describes instead of storing them
       (inputs_gen): the whole launch's tensors, [B, H, N, d] */
    json_t *gen = json_object_get(json_object_get(m, "inputs_gen"), "tensors");
    size_t n_gen = json_object_size(gen);
    for (size_t i = 0; i < 4 && gen != NULL; i++) {
        static const char *const in_names[4] = {"q", "k", "v", "do"};
        json_t *g = json_object_get(gen, in_names[i]);
        json_t *gs = json_object_get(g, "shape");
        json_int_t want[4] = {b, h, i == 1 || i == 2 ? nk : nq, d};
        if (g == NULL)
            continue;
        ck_assert_ptr_null(json_object_get(tens, in_names[i]));
        ck_assert_uint_eq(json_array_size(gs), 4);
        for (size_t j = 0; j < 4; j++)
            ck_assert_msg(json_integer_value(json_array_get(gs, j)) == want[j],
                          "%s: inputs_gen.tensors.%s.shape[%zu]", name,
                          in_names[i], j);
    }
    if (json_is_string(bop)) {
        expect_shape(name, path, "do", in, 4, qs, &t);
        tensor_free(&t);
        expect_shape(name, path, "dq", in, 4, qs, &t);
        tensor_free(&t);
        expect_shape(name, path, "dk", in, 4, ks, &t);
        tensor_free(&t);
        expect_shape(name, path, "dv", in, 4, ks, &t);
        tensor_free(&t);
        ck_assert_uint_eq(json_object_size(tens) + n_gen, 9);
        /* the dQ buffers (dumps that record the backward's launches) */
        json_t *bl = json_object_get(m, "backward_launches");
        if (json_is_array(bl)) {
            bool det = json_is_true(json_object_get(m, "deterministic"));
            json_int_t sms = int_at(name, m, "sms");
            json_int_t nbuf = int_at(name, m, "dq_buffers");
            json_t *k = launch(bl, "flash_bwd_dq_dk_dv_loop_seqk_parallel");
            ck_assert_ptr_nonnull(k);
            json_t *g = json_object_get(k, "grid");
            json_int_t g0 = json_integer_value(json_array_get(g, 0));
            ck_assert_int_eq(json_integer_value(json_array_get(g, 1)), b);
            ck_assert_int_eq(json_integer_value(json_array_get(g, 2)), h);
            ck_assert_int_eq(sms, 132);
            ck_assert_int_eq(int_at(name, m, "dq_buffers_predicted"), nbuf);
            if (det) {
                ck_assert_int_eq(g0, nbuf);
                ck_assert_int_eq(nbuf, (sms + b * h - 1) / (b * h));
            } else {
                /* a thread block per KV block of 128 keys (d <= 128) */
                ck_assert_int_eq(nbuf, 1);
                ck_assert(d <= 128);
                ck_assert_int_eq(g0, (nk + 127) / 128);
            }
            ck_assert(kernel_seen(json_object_get(m, "backward_kernels"),
                                  det ? "flash_bwd_dot_do_o_kernel<false"
                                      : "flash_bwd_dot_do_o_kernel<true"));
        }
    } else {
        ck_assert(json_is_null(bop));
        ck_assert_ptr_null(json_object_get(tens, "dq"));
        ck_assert_ptr_null(json_object_get(gen, "do"));
        ck_assert_uint_eq(json_object_size(tens) + n_gen, 5);
    }
    expect_shape(name, path, "lse", TENSOR_F32, 3, rs, &lse);

    /* LSE: +Inf exactly on the rows the mask leaves without a key
       (causal: key j masked for query i when j > i + nk - nq) */
    bool causal = json_is_true(json_object_get(m, "causal"));
    json_int_t empty = causal && nq > nk ? nq - nk : 0, inf = 0;
    /* (of an LSE kept in part, outputs_kept: the kept rows) */
    dump_kept lk = DUMP_KEPT_INIT;
    tensor_error lerr;
    ck_assert_msg(dump_output_kept(path, "lse", &lk, &lerr) == 0, "%s: %s",
                  name, lerr.message);
    json_int_t n_lse = (json_int_t)lse.shape[2], empty_kept = 0;
    for (json_int_t r = 0; r < empty; r++)
        empty_kept += dump_kept_has_row(&lk, (uint64_t)r);
    for (json_int_t j = 0; j < n_lse; j++) {
        json_int_t r = (json_int_t)dump_kept_row(&lk, (uint64_t)j);
        uint32_t x = (uint32_t)tensor_get_bits(&lse, (uint64_t)j);
        ck_assert_msg((x & 0x7FFFFFFFu) <= 0x7F800000u,
                      "%s: lse[%lld] = %08x (NaN)", name, (long long)r, x);
        if (x == 0x7F800000u) {
            ck_assert_msg(r < empty, "%s: lse[%lld] = +Inf", name,
                          (long long)r);
            inf++;
        } else {
            ck_assert_msg((x & 0x7F800000u) != 0x7F800000u,
                          "%s: lse[%lld] "
                          "= %08x",
                          name, (long long)r, x);
        }
    }
    ck_assert_int_eq(inf, empty_kept);
    dump_kept_free(&lk);
    tensor_free(&lse);
    json_decref(m);
}
END_TEST

/* The set covers what it is for: at least 40 dumps, split counts 2 to 16
   and beyond (up to the heuristic's 128), decode, FP16, the head
   dimensions, the backward, deterministic backwards with more KV blocks
   than dQ buffers, a non-deterministic one whose dQ changed between
   runs. */
START_TEST(test_coverage)
{
    bool split_seen[129] = {false}, d_seen[257] = {false};
    unsigned n_fp16 = 0, n_bwd = 0, n_decode = 0, n_causal_rect = 0;
    unsigned n_spread = 0, n_nondet = 0;
    json_error_t jerr;

    ck_assert_uint_ge(NFIX, 40);
    for (size_t i = 0; i < NFIX; i++) {
        char jpath[512];
        snprintf(jpath, sizeof jpath, DIR "%s.json", fixtures[i]);
        json_t *m = json_load_file(jpath, 0, &jerr);
        ck_assert_msg(m != NULL, "%s: %s", jpath, jerr.text);
        json_t *ls = json_object_get(m, "launch_shape");
        json_int_t s = json_integer_value(json_object_get(m, "splits"));
        json_int_t d = json_integer_value(json_object_get(ls, "d"));
        json_int_t nq = json_integer_value(json_object_get(ls, "nq"));
        json_int_t nk = json_integer_value(json_object_get(ls, "nk"));
        if (s >= 1 && s <= 128)
            split_seen[s] = true;
        json_t *nb = json_object_get(m, "dq_buffers");
        json_t *rp = json_object_get(m, "backward_repro");
        if (json_is_integer(nb) && d <= 128) {
            bool det = json_is_true(json_object_get(m, "deterministic"));
            n_spread += det && (nk + 127) / 128 > json_integer_value(nb);
            n_nondet +=
                !det
                && json_integer_value(json_object_get(rp, "dq_distinct")) > 1;
        }
        if (d >= 1 && d <= 256)
            d_seen[d] = true;
        n_fp16 +=
            strcmp(json_string_value(json_object_get(m, "dtype")), "float16")
            == 0;
        n_bwd += json_is_string(json_object_get(m, "backward_op"));
        n_decode += nq == 1;
        n_causal_rect +=
            json_is_true(json_object_get(m, "causal")) && nq != nk;
        json_decref(m);
    }
    static const int want_splits[] = {1, 2, 3, 4, 5, 6, 8, 16, 32, 40, 128};
    for (size_t i = 0; i < sizeof want_splits / sizeof want_splits[0]; i++)
        ck_assert_msg(split_seen[want_splits[i]], "no dump with %d splits",
                      want_splits[i]);
    static const int want_d[] = {8, 16, 32, 64, 96, 128, 160, 192, 224, 256};
    for (size_t i = 0; i < sizeof want_d / sizeof want_d[0]; i++)
        ck_assert_msg(d_seen[want_d[i]], "no dump with d = %d", want_d[i]);
    ck_assert_uint_ge(n_fp16, 8);
    ck_assert_uint_ge(n_bwd, 15);
    ck_assert_uint_ge(n_decode, 6);
    ck_assert_uint_ge(n_causal_rect, 6);
    ck_assert_uint_ge(n_spread, 5);
    ck_assert_uint_ge(n_nondet, 1);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("sdpa_ext");
    TCase *tc = tst_add_tcase(s, "sdpa_ext", 60);

    tcase_add_loop_test(tc, test_manifests, 0, (int)NFIX);
    tcase_add_test(tc, test_coverage);
    return tst_run_suite(s);
}
