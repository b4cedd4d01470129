/* test_sdpa_em.c -- the "efficient" and "math" descriptions against what
   PyTorch 2.11's memory-efficient and math SDPA backends computed on an
   H200: O (and the efficient LSE) of every dump of tests/data/gpu/backends,
   the math backend's FP32 stages (S, P, P V) of two cases, the efficient
   kernel's P~V accumulation probe, and CUDA's accurate logf on measured
   vectors; the efficient backward's dQ, dK, dV on the dumps that hold
   them, and O, LSE, dQ, dK, dV of the efficient-only dumps of
   tests/data/gpu/backends/efficient (several key and query blocks, FP16,
   causal with Nq != Nk, top-left aligned).  Bit-equality counts per dump;
   a mismatch prints the first differing element in hex. */
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

#include "analysis/ex2_table.h"
#include "analysis/tensor.h"
#include "attention/attention.h"
#include "tests/analysis/sdpa_dump.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define BK SRCDIR "/tests/data/gpu/backends/"

/* The BF16 and FP16 forward dumps of sdpa_backends.py. */
static const char *const dumps[] = {
    "d128_bwd_normal",         "d128_causal_normal",
    "d128_causal_repmax4_fp16", "d128_causal_sink",
    "d128_normal",             "d128_normal_fp16",
    "d128_nq64_nk129_repmax2", "d128_repmax4",
    "d128_sink",               "d64_bwd_normal",
    "d64_bwd_sink_causal",     "d64_causal_normal",
    "d64_causal_repmax8",      "d64_causal_sink",
    "d64_normal",              "d64_normal_fp16",
    "d64_nq100_nk200",         "d64_repmax4",
    "d64_sink",                "d64_sink_fp16",
    "decode_d128_nk256",       "decode_d64_nk512",
    "decode_d64_nk512_fp16",   "decode_d64_nk512_sink"};
#define N_DUMPS (sizeof dumps / sizeof dumps[0])


typedef struct
{
    size_t nq, nk, d;
    bool causal, fp16;
    bool top_left; /* "causal_alignment": "top-left ..." */
} dump_shape;

static dump_shape
manifest(const char *name)
{
    char path[1024];
    json_error_t jerr;
    json_t *j, *s, *al;
    dump_shape r;

    snprintf(path, sizeof path, BK "%s.json", name);
    j = json_load_file(path, 0, &jerr);
    ck_assert_msg(j != NULL, "%s: %s", path, jerr.text);
    s = json_object_get(j, "shape");
    r.nq = (size_t)json_integer_value(json_object_get(s, "nq"));
    r.nk = (size_t)json_integer_value(json_object_get(s, "nk"));
    r.d = (size_t)json_integer_value(json_object_get(s, "d"));
    r.causal = json_is_true(json_object_get(j, "causal"));
    al = json_object_get(j, "causal_alignment");
    r.top_left = json_is_string(al)
                 && strncmp(json_string_value(al), "top-left", 8) == 0;
    r.fp16 = strcmp(json_string_value(json_object_get(j, "dtype")),
                    "float16")
             == 0;
    json_decref(j);
    return r;
}

/* POLICY's configuration for one head of the dump SH, exp model EX. */
static fa_config
dump_config(const char *policy, const dump_shape *sh, const ex2_model *ex)
{
    fa_config cfg = fa_config_default((fa_policy)fa_policy_parse(policy));

    cfg.shape.batch = 1;
    cfg.shape.heads = 1;
    cfg.shape.nq = sh->nq;
    cfg.shape.nk = sh->nk;
    cfg.shape.d = sh->d;
    cfg.causal = sh->causal;
    cfg.causal_top_left = sh->top_left;
    cfg.exp = &ex->model;
    cfg.input = sh->fp16 ? &sf_format_f16 : &sf_format_bf16;
    return cfg;
}

/* One dump under POLICY: returns the O elements equal to the dump's
   PREFIX o (PREFIX "efficient.", "math." or "") and (efficient) the LSE
   rows equal to PREFIX lse in *LSE_EQ; the first mismatch is printed. */
static size_t
run_dump(const char *name, const char *policy, const char *prefix,
         const ex2_model *ex, size_t *o_n, size_t *lse_eq, size_t *lse_n,
         fa_capture *cap, dump_shape *shp)
{
    char path[1024], key[64];
    tensor q, k, v, go, gl;
    dump_shape sh = manifest(name);
    tensor_dtype dt = sh.fp16 ? TENSOR_F16 : TENSOR_BF16;
    fa_config cfg = dump_config(policy, &sh, ex);
    sf_env env = SF_ENV_IEEE;
    uint32_t *o, *lse;
    uint16_t *qb, *kb, *vb;
    size_t eq = 0, nel = sh.nq * sh.d;
    bool shown = false;

    env.isa = tst_isa(); /* BF16EMU_ISA: the path under test */
    snprintf(path, sizeof path, BK "%s.safetensors", name);
    read_qkv(path, dt, &q, &k, &v);
    snprintf(key, sizeof key, "%so", prefix);
    read_t(path, key, dt, &go);
    qb = (uint16_t *)(void *)q.data;
    kb = (uint16_t *)(void *)k.data;
    vb = (uint16_t *)(void *)v.data;
    o = calloc(nel, 4);
    lse = calloc(sh.nq, 4);
    ck_assert(o != NULL && lse != NULL);
    ck_assert_msg(fa_forward(&cfg, qb, kb, vb, o, lse, cap, &env) == 0,
                  "%s: fa_forward failed", name);
    for (size_t i = 0; i < nel; i++) {
        sf_env e2 = SF_ENV_IEEE;
        uint16_t em = sh.fp16
                          ? sf_f32_to_f16((sf_f32){o[i]}, SF_RNE, &e2).bits
                          : (uint16_t)(o[i] >> 16);
        uint16_t g = (uint16_t)tensor_get_bits(&go, i);
        if (em == g)
            eq++;
        else if (!shown) {
            printf("%s %s: O[%zu][%zu] gpu 0x%04X emulator 0x%04X\n", name,
                   policy, i / sh.d, i % sh.d, g, em);
            shown = true;
        }
    }
    *o_n = nel;
    *lse_eq = *lse_n = 0;
    if (strcmp(policy, "efficient") == 0) {
        snprintf(key, sizeof key, "%slse", prefix);
        read_t(path, key, TENSOR_F32, &gl);
        shown = false;
        for (size_t i = 0; i < sh.nq; i++) {
            uint32_t g = u32_at(&gl, i);
            if (g == lse[i])
                (*lse_eq)++;
            else if (!shown) {
                printf("%s %s: LSE[%zu] gpu 0x%08X emulator 0x%08X\n", name,
                       policy, i, g, lse[i]);
                shown = true;
            }
        }
        *lse_n = sh.nq;
        tensor_free(&gl);
    }
    printf("%-26s %-9s O %zu/%zu", name, policy, eq, nel);
    if (*lse_n)
        printf("  LSE %zu/%zu", *lse_eq, *lse_n);
    printf("\n");
    free(o);
    free(lse);
    free_qkv(&q, &k, &v);
    tensor_free(&go);
    if (shp)
        *shp = sh;
    return eq;
}

static void
check_policy(const char *policy)
{
    ex2_model ex;
    size_t o_eq = 0, o_n = 0, l_eq = 0, l_n = 0;

    ex2_load(&ex);
    for (size_t i = 0; i < N_DUMPS; i++) {
        size_t on, le, ln;
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%s.", policy);
        o_eq += run_dump(dumps[i], policy, prefix, &ex, &on, &le, &ln, NULL,
                         NULL);
        o_n += on;
        l_eq += le;
        l_n += ln;
    }
    printf("%s: O %zu/%zu bit-equal, LSE %zu/%zu\n", policy, o_eq, o_n, l_eq,
           l_n);
    ck_assert_msg(o_eq == o_n && l_eq == l_n,
                  "%s: O %zu/%zu, LSE %zu/%zu bit-equal", policy, o_eq, o_n,
                  l_eq, l_n);
    ax_ex2_table_free(&ex.tab);
}

START_TEST(test_efficient_dumps)
{
    check_policy("efficient");
}
END_TEST

START_TEST(test_math_dumps)
{
    check_policy("math");
}
END_TEST

/* The efficient backward: dQ, dK, dV of the dumps that hold them
   (efficient.dq, .dk, .dv, and do), from the dump's q, k, v, do and its
   own efficient.o and efficient.lse. */
static const char *const bwd_dumps[] = {"d128_bwd_normal", "d64_bwd_normal",
                                        "d64_bwd_sink_causal"};

static uint16_t
to16(uint32_t x, bool fp16)
{
    sf_env e = SF_ENV_IEEE;
    return fp16 ? sf_f32_to_f16((sf_f32){x}, SF_RNE, &e).bits
                : (uint16_t)(x >> 16);
}

/* The efficient backward of dump NAME: dQ, dK, dV from its q, k, v, do
   and its own PREFIX o and PREFIX lse against PREFIX dq, dk, dv.  Returns
   the elements bit-equal, their number in *N (of the rows the dump keeps:
   manifest outputs_kept); *HASH_BAD counts the gradients whose whole
   tensor has another hash than the GPU's. */
static size_t
bwd_dump(const char *name, const char *prefix, const ex2_model *ex,
         size_t *n_all, size_t *hash_bad)
{
    static const char *const grads[] = {"dq", "dk", "dv"};
    dump_shape sh = manifest(name);
    tensor_dtype dt = sh.fp16 ? TENSOR_F16 : TENSOR_BF16;
    fa_config cfg = dump_config("efficient", &sh, ex);
    sf_env env = SF_ENV_IEEE;
    char path[1024], key[64];
    tensor q, k, v, go, gl, gdo;
    size_t nq = sh.nq * sh.d, nk = sh.nk * sh.d, all_eq = 0;
    uint32_t *o, *lse, *out[3];
    uint16_t *em;

    env.isa = tst_isa(); /* BF16EMU_ISA: the path under test */
    *n_all = 0;
    snprintf(path, sizeof path, BK "%s.safetensors", name);
    read_qkv(path, dt, &q, &k, &v);
    read_t(path, "do", dt, &gdo);
    snprintf(key, sizeof key, "%so", prefix);
    read_t(path, key, dt, &go);
    snprintf(key, sizeof key, "%slse", prefix);
    read_t(path, key, TENSOR_F32, &gl);
    o = calloc(nq, 4);
    lse = calloc(sh.nq, 4);
    out[0] = calloc(nq, 4);
    out[1] = calloc(nk, 4);
    out[2] = calloc(nk, 4);
    ck_assert(o && lse && out[0] && out[1] && out[2]);
    for (size_t i = 0; i < nq; i++) {
        uint32_t b = (uint32_t)tensor_get_bits(&go, i);
        if (sh.fp16) {
            sf_env e2 = SF_ENV_IEEE;
            o[i] = sf_f16_to_f32((sf_f16){(uint16_t)b}, SF_RNE, &e2).bits;
        } else
            o[i] = b << 16;
    }
    for (size_t i = 0; i < sh.nq; i++)
        lse[i] = u32_at(&gl, i);
    ck_assert_msg(fa_backward(&cfg, (uint16_t *)(void *)q.data,
                              (uint16_t *)(void *)k.data,
                              (uint16_t *)(void *)v.data, o, lse,
                              (uint16_t *)(void *)gdo.data, NULL, out[0],
                              out[1], out[2], NULL, &env)
                      == 0,
                  "%s: fa_backward failed", name);
    em = malloc((nq > nk ? nq : nk) * sizeof *em);
    ck_assert(em != NULL);
    {
        size_t eqs[3], ns[3];
        for (size_t g = 0; g < 3; g++) {
            size_t whole = g == 0 ? nq : nk;
            out_cmp c;
            for (size_t i = 0; i < whole; i++)
                em[i] = to16(out[g][i], sh.fp16);
            snprintf(key, sizeof key, "%s%s", prefix, grads[g]);
            c = cmp_out16(name, path, key, dt, em, whole, sh.d);
            eqs[g] = c.eq;
            ns[g] = c.n;
            if (!c.hash_eq)
                (*hash_bad)++;
            all_eq += c.eq;
            *n_all += c.n;
            free(out[g]);
        }
        printf("%-26s efficient", name);
        for (size_t g = 0; g < 3; g++)
            printf("  %s %zu/%zu", grads[g], eqs[g], ns[g]);
        printf("\n");
    }
    free(em);
    free(o);
    free(lse);
    free_qkv(&q, &k, &v);
    tensor_free(&go);
    tensor_free(&gl);
    tensor_free(&gdo);
    return all_eq;
}

START_TEST(test_efficient_backward)
{
    ex2_model ex;
    size_t all_eq = 0, all_n = 0, hash_bad = 0;

    ex2_load(&ex);
    for (size_t di = 0; di < sizeof bwd_dumps / sizeof bwd_dumps[0]; di++) {
        size_t n;
        all_eq += bwd_dump(bwd_dumps[di], "efficient.", &ex, &n, &hash_bad);
        all_n += n;
    }
    printf("efficient backward: dQ, dK, dV %zu/%zu bit-equal, %zu "
           "whole-tensor hashes differ\n",
           all_eq, all_n, hash_bad);
    ck_assert_msg(all_eq == all_n && hash_bad == 0,
                  "efficient backward: %zu/%zu bit-equal, %zu hashes differ",
                  all_eq, all_n, hash_bad);
    ax_ex2_table_free(&ex.tab);
}
END_TEST

/* The efficient-only dumps (dump_sdpa.py --backend efficient, head 0;
   keys o, lse, dq, dk, dv): several 64- or 128-key blocks in both
   directions (deterministic backward: one key split), FP16, a ragged
   shape, causal square and with Nq != Nk (SDPA's is_causal: top-left
   aligned). */
static const char *const eff_dumps[] = {
    "efficient/eff_d64_n256",
    "efficient/eff_d64_nq128_nk1024",
    "efficient/eff_d128_nq256_nk512",
    "efficient/eff_d64_causal_n384",
    "efficient/eff_d64_causal_nq128_nk320",
    "efficient/eff_d64_causal_nq320_nk128",
    "efficient/eff_d64_nq100_nk200",
    "efficient/eff_d64_n256_fp16",
    "efficient/eff_d128_n256_fp16",
    "efficient/eff_d64_causal_nq192_nk448_fp16",
    "efficient/eff_d128_causal_nq200_nk300",
    "efficient/eff_d64_sink_nq256_nk512",
    "efficient/eff_d128_causal_nq384_nk128_fp16"};

START_TEST(test_efficient_blocks)
{
    ex2_model ex;
    size_t o_eq = 0, o_n = 0, l_eq = 0, l_n = 0, g_eq = 0, g_n = 0;
    size_t hash_bad = 0;

    ex2_load(&ex);
    for (size_t i = 0; i < sizeof eff_dumps / sizeof eff_dumps[0]; i++) {
        size_t on, le, ln, gn;
        o_eq += run_dump(eff_dumps[i], "efficient", "", &ex, &on, &le, &ln,
                         NULL, NULL);
        o_n += on;
        l_eq += le;
        l_n += ln;
        g_eq += bwd_dump(eff_dumps[i], "", &ex, &gn, &hash_bad);
        g_n += gn;
    }
    printf("efficient-only dumps: O %zu/%zu, LSE %zu/%zu, dQ dK dV %zu/%zu "
           "(stored elements) bit-equal, %zu whole-tensor hashes differ\n",
           o_eq, o_n, l_eq, l_n, g_eq, g_n, hash_bad);
    ck_assert_msg(o_eq == o_n && l_eq == l_n && g_eq == g_n && hash_bad == 0,
                  "efficient-only dumps: O %zu/%zu, LSE %zu/%zu, grads "
                  "%zu/%zu bit-equal, %zu hashes differ",
                  o_eq, o_n, l_eq, l_n, g_eq, g_n, hash_bad);
    ax_ex2_table_free(&ex.tab);
}
END_TEST

/* The math backend's FP32 stages: S = Q'K'^T (unmasked entries), P (the
   softmax's output, what P V takes) and P V, from the engine's captures. */
START_TEST(test_math_stages)
{
    static const char *const cases[] = {"d64_nq100_nk200",
                                        "d128_causal_normal"};
    ex2_model ex;

    ex2_load(&ex);
    for (size_t c = 0; c < 2; c++) {
        dump_shape sh = manifest(cases[c]);
        size_t ns = sh.nq * sh.nk, on, le, ln, bad[3] = {0, 0, 0}, n[3] = {0};
        uint32_t *s = calloc(ns, 4), *p = calloc(ns, 4),
                 *ob = calloc(sh.nq * sh.d, 4);
        fa_capture cap;
        tensor gs, gp, go;
        char key[64];

        ck_assert(s && p && ob);
        memset(&cap, 0, sizeof cap);
        cap.s = s;
        cap.p = p;
        cap.obar = ob;
        run_dump(cases[c], "math", "math.", &ex, &on, &le, &ln, &cap, NULL);
        snprintf(key, sizeof key, "%s.s", cases[c]);
        read_t(BK "math_stages_h200.safetensors", key, TENSOR_F32, &gs);
        snprintf(key, sizeof key, "%s.p", cases[c]);
        read_t(BK "math_stages_h200.safetensors", key, TENSOR_F32, &gp);
        snprintf(key, sizeof key, "%s.o32", cases[c]);
        read_t(BK "math_stages_h200.safetensors", key, TENSOR_F32, &go);
        for (size_t i = 0; i < sh.nq; i++)
            for (size_t j = 0; j < sh.nk; j++) {
                size_t x = i * sh.nk + j;
                if (!(sh.causal && j > i)) {
                    n[0]++;
                    if (s[x] != u32_at(&gs, x) && bad[0]++ == 0)
                        printf("%s S[%zu][%zu] gpu 0x%08X emulator 0x%08X\n",
                               cases[c], i, j, u32_at(&gs, x), s[x]);
                }
                n[1]++;
                if (p[x] != u32_at(&gp, x) && bad[1]++ == 0)
                    printf("%s P[%zu][%zu] gpu 0x%08X emulator 0x%08X\n",
                           cases[c], i, j, u32_at(&gp, x), p[x]);
            }
        for (size_t x = 0; x < sh.nq * sh.d; x++) {
            n[2]++;
            if (ob[x] != u32_at(&go, x) && bad[2]++ == 0)
                printf("%s PV[%zu][%zu] gpu 0x%08X emulator 0x%08X\n",
                       cases[c], x / sh.d, x % sh.d, u32_at(&go, x), ob[x]);
        }
        printf("%s math stages: S %zu/%zu P %zu/%zu PV %zu/%zu bit-equal\n",
               cases[c], n[0] - bad[0], n[0], n[1] - bad[1], n[1],
               n[2] - bad[2], n[2]);
        ck_assert_msg(bad[0] == 0 && bad[1] == 0 && bad[2] == 0,
                      "%s: S %zu, P %zu, PV %zu differ", cases[c], bad[0],
                      bad[1], bad[2]);
        free(s);
        free(p);
        free(ob);
        tensor_free(&gs);
        tensor_free(&gp);
        tensor_free(&go);
    }
    ax_ex2_table_free(&ex.tab);
}
END_TEST

/* The P~V probe of sdpa_probes.py (Q = 0: every P~ = 1; per column
   +2^e, -2^e and up to three 1s among N keys): the efficient kernel's
   O[0][col] = RN_bf16(RN32(acc RN32(1/N))), acc the chain of the column
   through the description's P~V model in ascending key order. */
START_TEST(test_efficient_pv_probe)
{
    const fa_kernel *kd = fa_kernel_by_name("efficient");
    const sf_mma_model *m = sf_mma_preset_by_name(kd->mma_pv);
    static const size_t ns[] = {256, 512};
    const char *path = BK "probes_h200.safetensors";

    ck_assert(m != NULL);
    for (size_t c = 0; c < 2; c++) {
        size_t nk = ns[c], bad = 0, ncol;
        char key[64];
        tensor spec, got;
        uint16_t *p = malloc(nk * 2), *vc = malloc(nk * 2);
        sf_env env = SF_ENV_IEEE;
        uint32_t inv = sf_f32_div((sf_f32){0x3F800000u},
                                  sf_f32_from_i32((int32_t)nk, SF_RNE, &env),
                                  SF_RNE, &env)
                           .bits;

        snprintf(key, sizeof key, "acc.%zu.spec", nk);
        read_t(path, key, TENSOR_I32, &spec);
        snprintf(key, sizeof key, "acc.%zu.efficient", nk);
        read_t(path, key, TENSOR_F32, &got);
        ncol = (size_t)spec.shape[0];
        for (size_t t = 0; t < nk; t++)
            p[t] = 0x3F80; /* BF16 1 */
        for (size_t col = 0; col < ncol; col++) {
            int32_t sp[6];
            uint32_t acc, o;
            for (int f = 0; f < 6; f++)
                sp[f] = (int32_t)tensor_get_bits(&spec, col * 6 + (size_t)f);
            memset(vc, 0, nk * 2);
            vc[sp[1]] = (uint16_t)((uint32_t)(127 + sp[0]) << 7);
            vc[sp[2]] = (uint16_t)(0x8000u | (uint32_t)(127 + sp[0]) << 7);
            for (int f = 3; f < 6; f++)
                if (sp[f] >= 0)
                    vc[sp[f]] = 0x3F80;
            acc = 0;
            for (size_t b = 0; b < nk; b += 64)
                acc = (uint32_t)sf_mma_dot(m, &sf_format_bf16, p + b, 1,
                                           &sf_format_bf16, vc + b, 1, 64,
                                           acc, &env);
            o = (uint32_t)sf_f32_to_bf16(
                    sf_f32_mul((sf_f32){acc}, (sf_f32){inv}, SF_RNE, &env),
                    SF_RNE, &env)
                    .bits
                << 16;
            if (o != u32_at(&got, col) && bad++ == 0)
                printf("acc.%zu col %zu (e %d a %d b %d c %d %d %d): gpu "
                       "0x%08X emulator 0x%08X\n",
                       nk, col, sp[0], sp[1], sp[2], sp[3], sp[4], sp[5],
                       u32_at(&got, col), o);
        }
        printf("P~V probe N = %zu: %zu/%zu columns bit-equal (%s)\n", nk,
               ncol - bad, ncol, kd->mma_pv);
        ck_assert_msg(bad == 0, "P~V probe N = %zu: %zu columns differ", nk,
                      bad);
        tensor_free(&spec);
        tensor_free(&got);
        free(p);
        free(vc);
    }
}
END_TEST

/* CUDA's accurate logf against the H200 (experiments/gpu/probes/
   cuda_logf_probe.cu, packed by pack_logf_vectors.py). */
START_TEST(test_cuda_logf)
{
    const char *path = SRCDIR "/tests/data/gpu/cuda_logf_h200.safetensors";
    tensor x, y;
    size_t bad = 0;

    read_t(path, "x", TENSOR_I32, &x);
    read_t(path, "logf", TENSOR_I32, &y);
    for (size_t i = 0; i < x.n_elems; i++) {
        uint32_t xi = u32_at(&x, i), yi = u32_at(&y, i);
        uint32_t m = fa_cuda_logf(xi);
        if (m != yi && bad++ < 4)
            printf("logf(0x%08X): gpu 0x%08X fa_cuda_logf 0x%08X\n", xi, yi,
                   m);
    }
    printf("logf: %zu/%zu vectors bit-equal\n", (size_t)x.n_elems - bad,
           (size_t)x.n_elems);
    ck_assert_msg(bad == 0, "logf: %zu of %zu differ", bad,
                  (size_t)x.n_elems);
    tensor_free(&x);
    tensor_free(&y);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("sdpa_em");
    TCase *tc = tst_add_tcase(s, "h200", 120);

    tcase_add_test(tc, test_efficient_dumps);
    tcase_add_test(tc, test_efficient_backward);
    tcase_add_test(tc, test_efficient_blocks);
    tcase_add_test(tc, test_math_dumps);
    tcase_add_test(tc, test_math_stages);
    tcase_add_test(tc, test_efficient_pv_probe);
    tcase_add_test(tc, test_cuda_logf);
    return tst_run_suite(s);
}
