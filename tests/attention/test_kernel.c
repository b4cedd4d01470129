/* test_kernel.c -- kernel descriptions: the named ones pass their check
   and give the policies' bits through the description path, the check
   names the field it refuses, FA2's tiles for every head dimension (from
   flash_fwd_launch_template.h), and the split-KV forward bit for bit
   against a re-implementation: each split as a non-split pass over its
   keys (O before the BF16 rounding, its LSE), then the combine kernel's
   steps written out (its threads' LSE layout, the butterfly sum, the
   FFMA chain over the splits); decode and short causal queries within a
   bound of the exact result */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "tests/attention/fa_test.h"
#include "tests/support/suite.h"

/* The named descriptions pass their check; each policy's default
   configuration and the configuration of its description give the same
   bits, forward and backward. */
START_TEST(test_named)
{
    static const char *const names[] = {"fa2", "paper-eq4", "repo", "fp32"};
    tst_rng rng;

    tst_rng_init(&rng, 301);
    for (size_t i = 0; i < 4; i++) {
        const fa_kernel *k = fa_kernel_by_name(names[i]);
        fa_config a, b;
        size_t nq = 37, nk = 70, d = 40;
        uint16_t *q = ft_alloc(nq * d, 2), *kk = ft_alloc(nk * d, 2),
                 *v = ft_alloc(nk * d, 2), *dout = ft_alloc(nq * d, 2);
        uint32_t *o[2], *lse[2], *g[2][4];

        ck_assert_ptr_nonnull(k);
        ck_assert_ptr_null(fa_kernel_check(k));
        ck_assert_ptr_eq(fa_kernel_at(i), k);
        a = fa_config_default((fa_policy)fa_policy_parse(names[i]));
        b = fa_config_kernel_default(k);
        ck_assert_ptr_eq(fa_config_kernel(&a), k);
        a.shape = b.shape = (fa_shape){1, 1, nq, nk, d};
        a.causal = b.causal = true;
        ft_fill_uniform(&rng, q, nq * d, -2, 2);
        ft_fill_uniform(&rng, kk, nk * d, -2, 2);
        ft_fill_normal(&rng, v, nk * d, 0, 1);
        ft_fill_normal(&rng, dout, nq * d, 0, 1);
        for (int t = 0; t < 2; t++) {
            sf_env env = SF_ENV_IEEE;
            o[t] = ft_alloc(nq * d, 4);
            lse[t] = ft_alloc(nq, 4);
            g[t][0] = ft_alloc(nq, 4);
            g[t][1] = ft_alloc(nq * d, 4);
            g[t][2] = ft_alloc(nk * d, 4);
            g[t][3] = ft_alloc(nk * d, 4);
            ck_assert_int_eq(
                fa_forward(t ? &b : &a, q, kk, v, o[t], lse[t], NULL, &env),
                0);
            ck_assert_int_eq(fa_backward(t ? &b : &a, q, kk, v, o[t], lse[t],
                                         dout, g[t][0], g[t][1], g[t][2],
                                         g[t][3], NULL, &env),
                             0);
        }
        ck_assert_uint_eq(ft_count_diff(o[0], o[1], nq * d), 0);
        ck_assert_uint_eq(ft_count_diff(lse[0], lse[1], nq), 0);
        ck_assert_uint_eq(ft_count_diff(g[0][1], g[1][1], nq * d), 0);
        ck_assert_uint_eq(ft_count_diff(g[0][2], g[1][2], nk * d), 0);
        for (int t = 0; t < 2; t++) {
            free(o[t]);
            free(lse[t]);
            for (int x = 0; x < 4; x++)
                free(g[t][x]);
        }
        free(q);
        free(kk);
        free(v);
        free(dout);
    }
    ck_assert_ptr_null(fa_kernel_by_name("no-such-kernel"));
    /* after the policies' four, the SDPA backends' descriptions: each
       passes its check and is found by its name */
    {
        size_t n = 4;
        for (; fa_kernel_at(n) != NULL; n++) {
            ck_assert_ptr_null(fa_kernel_check(fa_kernel_at(n)));
            ck_assert_ptr_eq(fa_kernel_by_name(fa_kernel_at(n)->name),
                             fa_kernel_at(n));
        }
        ck_assert_uint_ge(n, 7);
        ck_assert_ptr_nonnull(fa_kernel_by_name("cudnn"));
        ck_assert_ptr_nonnull(fa_kernel_by_name("efficient"));
        ck_assert_ptr_nonnull(fa_kernel_by_name("math"));
    }
}
END_TEST

/* The check refuses each inconsistent description, naming the field. */
START_TEST(test_check)
{
    const fa_kernel *fa2 = fa_kernel_by_name("fa2");
    fa_kernel k;

    k = *fa2;
    k.splits = 0;
    ck_assert_str_eq(fa_kernel_check(&k), "splits: expected 1 to 128");
    k.splits = 129;
    ck_assert_str_eq(fa_kernel_check(&k), "splits: expected 1 to 128");
    k = *fa2;
    k.tiles[3].d_max = 64;
    ck_assert_str_eq(fa_kernel_check(&k),
                     "tiles: d_max must be positive and increasing");
    k = *fa2;
    strcpy(k.mma_pv, "sm91");
    ck_assert_str_eq(
        fa_kernel_check(&k),
        "mma: an unknown preset, or one without an FP32 accumulator");
    k = *fa2;
    k.score_scaled = true;
    ck_assert_str_eq(fa_kernel_check(&k),
                     "exp_arg: scale-sub and scale-fma need unscaled scores "
                     "and exp_base2");
    k = *fa2;
    k.p = (fa_fmt)7;
    ck_assert_str_eq(fa_kernel_check(&k), "format: unknown value");
    k = *fa2;
    k.d_round = 0;
    ck_assert_str_eq(fa_kernel_check(&k), "d_round: expected 1 to 256");
    ck_assert_ptr_null(fa_kernel_enum_names("splits"));
    ck_assert_str_eq(fa_kernel_enum_names("exp_arg")[FA_ARG_SCALE_SUB],
                     "scale-sub");
}
END_TEST

/* Every named description's bwd_* fields are the preset of its bwd (so a
   description without them reads back as it was), and the check refuses
   the combinations the tiled backward cannot run. */
START_TEST(test_bwd_fields)
{
    const fa_kernel *fa2 = fa_kernel_by_name("fa2");
    fa_kernel k;

    for (size_t n = 0; fa_kernel_at(n) != NULL; n++) {
        const fa_kernel *named = fa_kernel_at(n);
        k = *named;
        fa_kernel_bwd_preset(&k);
        ck_assert_msg(k.bwd_keys == named->bwd_keys
                          && k.bwd_delta == named->bwd_delta
                          && k.bwd_p == named->bwd_p
                          && k.bwd_dp == named->bwd_dp
                          && k.bwd_ds == named->bwd_ds
                          && k.bwd_operand == named->bwd_operand
                          && k.bwd_dq == named->bwd_dq
                          && k.bwd_dkv == named->bwd_dkv
                          && k.bwd_out == named->bwd_out,
                      "%s: bwd_* fields other than the preset of its bwd",
                      named->name);
    }
    ck_assert(fa_kernel_bwd_tiled(fa2));
    ck_assert(!fa_kernel_bwd_tiled(fa_kernel_by_name("math")));
    k = *fa2;
    k.bwd_dq = FA_BDQ_REVERSE;
    ck_assert_ptr_null(fa_kernel_check(&k));
    k = *fa2;
    k.bwd_operand = FA_FMT_F32;
    ck_assert_str_eq(fa_kernel_check(&k),
                     "bwd_operand: f32 goes with bwd_dq and bwd_dkv "
                     "\"chain\", and they with it");
    k = *fa2;
    k.bwd_ds = FA_BDS_BF16_OPS;
    ck_assert_str_eq(fa_kernel_check(&k), "bwd_p: bf16-ops (bwd_p or bwd_ds) "
                                          "needs bwd_operand bf16");
    k = *fa2;
    k.bwd_p = FA_BP_EXPF_IN;
    ck_assert_str_eq(fa_kernel_check(&k),
                     "bwd_p: sub, bf16-ops and expf-in need scaled scores");
    k = *fa_kernel_by_name("fp32");
    k.bwd_p = FA_BP_SCALE_LOG2;
    ck_assert_str_eq(fa_kernel_check(&k),
                     "bwd_p: scale-log2 and log2e-fma need unscaled scores "
                     "(exp_arg scale-sub or scale-fma)");
    k = *fa2;
    k.bwd_dq = (fa_bwd_dq)9;
    ck_assert_str_eq(fa_kernel_check(&k),
                     "kernel: an enumerated field out of range");
    ck_assert_str_eq(fa_kernel_enum_names("bwd_dq")[FA_BDQ_BUFFERS],
                     "buffers");
}
END_TEST

/* FA2's forward tiles for every head dimension PyTorch's flash accepts:
   flash_fwd_launch_template.h on an H200 (no dropout; 227 KiB of shared
   memory per block, 228 KiB per SM), d padded to a multiple of 32 up to
   128 and of 64 above (PyTorch's head_size_rounded: the H200 runs the
   192 kernel for d = 160); the split kernel 64 x (256, 128 or 64). */
START_TEST(test_tiles)
{
    static const size_t want[8][4] = {{32, 128, 128, 256}, {64, 128, 128, 256},
                                      {96, 128, 64, 128},  {128, 128, 64, 128},
                                      {192, 128, 64, 64},  {192, 128, 64, 64},
                                      {256, 64, 64, 64},   {256, 64, 64, 64}};

    for (size_t d = 1; d <= 256; d++) {
        size_t row = (d + 31) / 32 - 1, br, bc, tc, sp;
        fa_config c = fa_config_default(FA_POLICY_FA2);
        c.shape = (fa_shape){1, 1, 4096, 4096, d};
        ck_assert_int_eq(fa_config_tiles(&c, &br, &bc, &tc, &sp), 0);
        if (br != want[row][1] || bc != want[row][2])
            printf("d %zu: %zu x %zu\n", d, br, bc);
        ck_assert_uint_eq(br, want[row][1]);
        ck_assert_uint_eq(bc, want[row][2]);
        ck_assert_uint_eq(tc, 4096 / want[row][2]);
        ck_assert_uint_eq(sp, 1);
        c.splits = 2;
        ck_assert_int_eq(fa_config_tiles(&c, &br, &bc, &tc, &sp), 0);
        ck_assert_uint_eq(br, 64);
        ck_assert_uint_eq(bc, want[row][3]);
        ck_assert_uint_eq(sp, 2);
    }
    {
        fa_config c = fa_config_default(FA_POLICY_FA2);
        c.shape = (fa_shape){1, 1, 64, 256, 257};
        ck_assert_int_eq(fa_config_tiles(&c, NULL, NULL, NULL, NULL), -1);
        c.shape.d = 64;
        c.splits = 2; /* one KV block of 256 */
        ck_assert_str_eq(fa_config_check(&c),
                         "splits: more splits than KV blocks");
        c.splits = 129;
        ck_assert_str_eq(
            fa_config_check(&c),
            "splits: more than 128 (the FA2 combine kernel's limit)");
    }
}
END_TEST

/* The split-KV forward of one head against its re-implementation. */
static void
check_split(size_t nq, size_t nk, size_t d, size_t splits, tst_rng *rng)
{
    fa_config c = fa_config_default(FA_POLICY_FA2), cs;
    size_t bc, tc, bps, bad = 0;
    uint16_t *q = ft_alloc(nq * d, 2), *k = ft_alloc(nk * d, 2),
             *v = ft_alloc(nk * d, 2);
    uint32_t *o = ft_alloc(nq * d, 4), *lse = ft_alloc(nq, 4);
    uint32_t *o32 = ft_alloc(nq * d, 4); /* O before its BF16 rounding */
    uint32_t *os = ft_alloc(splits * nq * d, 4),
             *ls = ft_alloc(splits * nq, 4);
    sf_env env = SF_ENV_IEEE;
    size_t dpad = (d + 31) / 32 * 32;
    /* the combine kernel: kBlockM rows per CTA of 128 threads, kMaxSplits
       the power of two it was instantiated for, each row's splits spread
       over kRowsPerLoadTranspose threads, kNLsePerThread each */
    size_t kbm = dpad % 128 == 0 ? 4 : dpad % 64 == 0 ? 8 : 16;
    size_t kmax = splits <= 2    ? 2
                  : splits <= 4  ? 4
                  : splits <= 8  ? 8
                  : splits <= 16 ? 16
                  : splits <= 32 ? 32
                  : splits <= 64 ? 64
                                 : 128;
    size_t rows_per_load = 128 / kbm;
    size_t rpt = rows_per_load < kmax ? rows_per_load : kmax;
    size_t per = (kmax * kbm + 127) / 128;

    c.shape = (fa_shape){1, 1, nq, nk, d};
    c.splits = splits;
    ck_assert_ptr_null(fa_config_check(&c));
    ck_assert_int_eq(fa_config_tiles(&c, NULL, &bc, &tc, NULL), 0);
    bps = (tc + splits - 1) / splits; /* n_blocks_per_split */
    ft_fill_uniform(rng, q, nq * d, -2, 2);
    ft_fill_uniform(rng, k, nk * d, -2, 2);
    ft_fill_normal(rng, v, nk * d, 0.5, 1);
    ck_assert_int_eq(fa_forward(&c, q, k, v, o, lse, NULL, &env), 0);
    cs = c;
    cs.ablations = FA_ABL_FP32_OCAST;
    ck_assert_int_eq(fa_forward(&cs, q, k, v, o32, ls, NULL, &env), 0);

    /* each split: the non-split kernel on its keys, O before its BF16
       rounding (fp32-ocast), 64-row blocks */
    for (size_t s = 0; s < splits; s++) {
        size_t lo = s * bps, hi = lo + bps < tc ? lo + bps : tc;
        if (lo >= hi) {
            /* an empty split: O 0, LSE -Inf */
            for (size_t x = 0; x < nq * d; x++)
                os[s * nq * d + x] = 0;
            for (size_t i = 0; i < nq; i++)
                ls[s * nq + i] = 0xFF800000u;
            continue;
        }
        {
            size_t k0 = lo * bc, k1 = hi * bc < nk ? hi * bc : nk;
            cs = fa_config_default(FA_POLICY_FA2);
            cs.shape = (fa_shape){1, 1, nq, k1 - k0, d};
            cs.br = 64;
            cs.bc = bc;
            cs.ablations = FA_ABL_FP32_OCAST;
            ck_assert_int_eq(fa_forward(&cs, q, k + k0 * d, v + k0 * d,
                                        os + s * nq * d, ls + s * nq, NULL,
                                        &env),
                             0);
        }
    }
    /* the combine */
    for (size_t i = 0; i < nq; i++) {
        float acc[32], lmax = -INFINITY, lse_sum, lse_out, scale[128];
        for (size_t s = 0; s < splits; s++)
            lmax = fmaxf(lmax, tst_f32_of(ls[s * nq + i]));
        if (lmax == -INFINITY)
            lmax = 0.0f;
        for (size_t t = 0; t < rpt; t++)
            for (size_t l = 0; l < per; l++) {
                size_t row = l * rpt + t;
                float x =
                    row < splits ? tst_f32_of(ls[row * nq + i]) : -INFINITY;
                float e =
                    tst_f32_of(fa_cuda_expf(NULL, tst_f32_bits(x - lmax)));
                acc[t] = l == 0 ? e : acc[t] + e;
            }
        for (size_t off = rpt / 2; off >= 1; off /= 2) {
            float nx[32];
            for (size_t t = 0; t < rpt; t++)
                nx[t] = acc[t] + acc[t ^ off];
            memcpy(acc, nx, sizeof nx);
        }
        lse_sum = acc[0];
        lse_out = lse_sum == 0.0f || lse_sum != lse_sum
                      ? INFINITY
                      : tst_f32_of(fa_cuda_logf(tst_f32_bits(lse_sum))) + lmax;
        if (tst_f32_bits(lse_out) != lse[i] && bad++ < 5)
            printf("split %zu: LSE[%zu] %08x, expected %08x\n", splits, i,
                   lse[i], tst_f32_bits(lse_out));
        for (size_t s = 0; s < splits; s++)
            scale[s] = tst_f32_of(fa_cuda_expf(
                NULL, tst_f32_bits(tst_f32_of(ls[s * nq + i]) - lse_out)));
        for (size_t col = 0; col < d; col++) {
            float x = 0.0f;
            uint32_t want;
            for (size_t s = 0; s < splits; s++)
                x = fmaf(scale[s], tst_f32_of(os[(s * nq + i) * d + col]), x);
            if (tst_f32_bits(x) != o32[i * d + col] && bad++ < 5)
                printf("split %zu: O~[%zu][%zu] %08x, expected %08x\n", splits,
                       i, col, o32[i * d + col], tst_f32_bits(x));
            want = (uint32_t)ft_bf16((double)x) << 16;
            if (want != o[i * d + col] && bad++ < 5)
                printf("split %zu: O[%zu][%zu] %08x, expected %08x\n", splits,
                       i, col, o[i * d + col], want);
        }
    }
    ck_assert_uint_eq(bad, 0);
    FT_FREE(q, k, v, o, o32, lse, os, ls);
}

START_TEST(test_splitkv)
{
    tst_rng rng;

    tst_rng_init(&rng, 302);
    /* 4 blocks of 256 in 3 splits of 2: the last split empty */
    check_split(70, 1000, 64, 3, &rng);
    /* d = 128: 20 blocks of 128, one per split, 32 threads a row */
    check_split(20, 2560, 128, 20, &rng);
    /* d = 96: 16 rows per CTA, 8 threads of 2 splits each */
    check_split(9, 9 * 128 - 5, 96, 9, &rng);
    /* decode: one query, 32 blocks of 256 in 32 splits; d = 40 */
    check_split(1, 8192, 40, 32, &rng);
    /* d = 256: 64-key blocks */
    check_split(3, 640, 256, 7, &rng);
}
END_TEST

/* Decode and short causal queries (bottom-right mask), split and not:
   within 2^-6 max|V| of the exact O and 2^-16 of the exact LSE. */
START_TEST(test_decode_causal)
{
    static const size_t shapes[][4] = {{1, 4096, 64, 16},
                                       {5, 300, 64, 2},
                                       {64, 2000, 128, 8},
                                       {17, 700, 96, 3},
                                       {1, 32768, 64, 128}};
    tst_rng rng;

    tst_rng_init(&rng, 303);
    for (size_t t = 0; t < 5; t++) {
        size_t nq = shapes[t][0], nk = shapes[t][1], d = shapes[t][2];
        uint16_t *q = ft_alloc(nq * d, 2), *k = ft_alloc(nk * d, 2),
                 *v = ft_alloc(nk * d, 2);
        uint32_t *o = ft_alloc(nq * d, 4), *lse = ft_alloc(nq, 4);
        double *ro = ft_alloc(nq * d, 8), *rl = ft_alloc(nq, 8);
        double *bo = ft_alloc(nq * d, 8), *bl = ft_alloc(nq, 8);
        ft_fill_uniform(&rng, q, nq * d, -1, 1);
        ft_fill_uniform(&rng, k, nk * d, -1, 1);
        ft_fill_uniform(&rng, v, nk * d, -1, 1);
        for (int sp = 0; sp < 2; sp++) {
            fa_config c = fa_config_default(FA_POLICY_FA2);
            sf_env env = SF_ENV_IEEE;
            c.shape = (fa_shape){1, 1, nq, nk, d};
            c.causal = true;
            c.splits = sp ? shapes[t][3] : 1;
            ck_assert_int_eq(fa_forward(&c, q, k, v, o, lse, NULL, &env), 0);
            ft_ref_forward(&c, q, k, v, ro, rl, NULL, NULL);
            for (size_t x = 0; x < nq * d; x++)
                bo[x] = 0x1p-6;
            for (size_t x = 0; x < nq; x++)
                bl[x] = 0x1p-16 * (1 + fabs(rl[x]));
            ck_assert_uint_eq(ft_check_close("O", o, ro, bo, nq * d), 0);
            ck_assert_uint_eq(ft_check_close("LSE", lse, rl, bl, nq), 0);
        }
        FT_FREE(q, k, v, o, lse, ro, rl, bo, bl);
    }
}
END_TEST

/* FP16 inputs: P~ and O on the FP16 grid ("in"), O within 2^-8 of the
   exact result for inputs in [-1, 1]; fa2's dQ, dK, dV are FP16 values
   (their bits against the H200 are tests/experiments/test_fa2_backward.sh's);
   a description's "in" is the input format. */
START_TEST(test_fp16)
{
    size_t nq = 40, nk = 300, d = 64;
    fa_config c = fa_config_default(FA_POLICY_FA2);
    uint16_t *q = ft_alloc(nq * d, 2), *k = ft_alloc(nk * d, 2),
             *v = ft_alloc(nk * d, 2);
    uint32_t *o = ft_alloc(nq * d, 4), *lse = ft_alloc(nq, 4),
             *p = ft_alloc(nq * nk, 4), *g = ft_alloc(nk * d, 4);
    double *ro = ft_alloc(nq * d, 8), *bo = ft_alloc(nq * d, 8);
    tst_rng rng;
    fa_capture cap;
    sf_env env = SF_ENV_IEEE;
    size_t bad = 0;

    tst_rng_init(&rng, 304);
    for (size_t i = 0; i < nq * d; i++)
        q[i] = sf_f16_from_double(2 * ft_unit(&rng) - 1, SF_RNE, &env).bits;
    for (size_t i = 0; i < nk * d; i++) {
        k[i] = sf_f16_from_double(2 * ft_unit(&rng) - 1, SF_RNE, &env).bits;
        v[i] = sf_f16_from_double(2 * ft_unit(&rng) - 1, SF_RNE, &env).bits;
    }
    c.shape = (fa_shape){1, 1, nq, nk, d};
    c.causal = true;
    c.input = &sf_format_f16;
    ck_assert_ptr_eq(fa_output_format(&c, "o"), &sf_format_f16);
    ck_assert_ptr_eq(fa_output_format(&c, "p"), &sf_format_f16);
    memset(&cap, 0, sizeof cap);
    cap.p = p;
    ck_assert_int_eq(fa_forward(&c, q, k, v, o, lse, &cap, &env), 0);
    for (size_t i = 0; i < nq * nk; i++) {
        sf_env e2 = SF_ENV_IEEE;
        uint32_t r = sf_f16_to_f32(sf_f32_to_f16((sf_f32){p[i]}, SF_RNE, &e2),
                                   SF_RNE, &e2)
                         .bits;
        bad += r != p[i];
    }
    for (size_t i = 0; i < nq * d; i++) {
        sf_env e2 = SF_ENV_IEEE;
        uint32_t r = sf_f16_to_f32(sf_f32_to_f16((sf_f32){o[i]}, SF_RNE, &e2),
                                   SF_RNE, &e2)
                         .bits;
        bad += r != o[i];
    }
    ck_assert_uint_eq(bad, 0);
    /* the reference in double from the FP16 values */
    for (size_t i = 0; i < nq * d; i++) {
        double acc = 0, l = 0, mx = -INFINITY;
        size_t r = i / d, col = i % d, vis = r + nk - nq + 1;
        double s[300];
        for (size_t j = 0; j < vis; j++) {
            double x = 0;
            for (size_t t = 0; t < d; t++)
                x += sf_f16_to_double((sf_f16){q[r * d + t]})
                     * sf_f16_to_double((sf_f16){k[j * d + t]});
            s[j] = x * 0.125;
            mx = fmax(mx, s[j]);
        }
        for (size_t j = 0; j < vis; j++) {
            double e = exp(s[j] - mx);
            l += e;
            acc += e * sf_f16_to_double((sf_f16){v[j * d + col]});
        }
        ro[i] = acc / l;
        bo[i] = 0x1p-8;
    }
    ck_assert_uint_eq(ft_check_close("O", o, ro, bo, nq * d), 0);
    /* BF16 reading of the same bits is another result */
    c.input = NULL;
    ck_assert_int_eq(fa_forward(&c, q, k, v, g, lse, NULL, &env), 0);
    ck_assert_uint_gt(ft_count_diff(o, g, nq * d), 0);
    c.input = &sf_format_f16;
    ck_assert_ptr_eq(fa_output_format(&c, "dq"), &sf_format_f16);
    ck_assert_ptr_eq(fa_output_format(&c, "dv"), &sf_format_f16);
    ck_assert_int_eq(fa_forward(&c, q, k, v, o, lse, NULL, &env), 0);
    {
        /* dO = Q's bits */
        uint32_t *dq = ft_alloc(nq * d, 4), *dk = ft_alloc(nk * d, 4),
                 *dv = ft_alloc(nk * d, 4), *delta = ft_alloc(nq, 4);
        ck_assert_int_eq(
            fa_backward(&c, q, k, v, o, lse, q, delta, dq, dk, dv, NULL, &env),
            0);
        for (size_t i = 0; i < nq * d + 2 * nk * d; i++) {
            sf_env e2 = SF_ENV_IEEE;
            uint32_t x = i < nq * d            ? dq[i]
                         : i < nq * d + nk * d ? dk[i - nq * d]
                                               : dv[i - nq * d - nk * d];
            uint32_t r = sf_f16_to_f32(sf_f32_to_f16((sf_f32){x}, SF_RNE, &e2),
                                       SF_RNE, &e2)
                             .bits;
            bad += r != x;
        }
        ck_assert_uint_eq(bad, 0);
        free(dq);
        free(dk);
        free(dv);
        free(delta);
    }
    c.input = &sf_format_f32;
    ck_assert_str_eq(fa_config_check(&c),
                     "input: expected BF16 or FP16 (sf_format_bf16, "
                     "sf_format_f16)");
    FT_FREE(q, k, v, o, lse, p, g, ro, bo);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("attention_kernel");
    TCase *tc = tst_add_tcase(s, "kernel", 120);

    tcase_add_test(tc, test_named);
    tcase_add_test(tc, test_check);
    tcase_add_test(tc, test_bwd_fields);
    tcase_add_test(tc, test_tiles);
    tcase_add_test(tc, test_splitkv);
    tcase_add_test(tc, test_decode_causal);
    tcase_add_test(tc, test_fp16);
    return tst_run_suite(s);
}
