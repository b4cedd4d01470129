/* test_sdpa_math.c -- the "math" description's backward and decode
   (Nq = 1) orders against PyTorch 2.11's math SDPA backend on an H200
   (experiments/gpu/probes/sdpa_math_more.py; tests/data/gpu/backends/math):

   - dQ, dK, dV of 13 dumps (the three backends dumps with a backward and
     ten math_bwd_*), from q, k, v and do alone;
   - the backward's FP32 stages dP and dS of three of them;
   - O of four decode launches crafted so that the gemv kernels' order of
     summation shows in BF16 (and does not match one FFMA chain);
   - the description's gemv rows against S and P V of 30 decode shapes,
     evaluated here from the rows' numbers (not by the engine).

   Bit-equality counts per dump; a mismatch prints the first differing
   element in hex. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ex2_table.h"
#include "analysis/tensor.h"
#include "attention/attention.h"
#include "attention/kernel.h"
#include "tests/analysis/sdpa_dump.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define BK SRCDIR "/tests/data/gpu/backends/"
#define MT BK "math/"


typedef struct
{
    size_t nq, nk, d, launch_bh;
    bool causal, fp16;
    double scale; /* 0: the default */
} dump_shape;

static dump_shape
manifest(const char *dir, const char *name)
{
    char path[1024];
    json_error_t jerr;
    json_t *j, *s, *l, *sc;
    dump_shape r;

    snprintf(path, sizeof path, "%s%s.json", dir, name);
    j = json_load_file(path, 0, &jerr);
    ck_assert_msg(j != NULL, "%s: %s", path, jerr.text);
    s = json_object_get(j, "shape");
    l = json_object_get(j, "launch_shape");
    r.nq = (size_t)json_integer_value(json_object_get(s, "nq"));
    r.nk = (size_t)json_integer_value(json_object_get(s, "nk"));
    r.d = (size_t)json_integer_value(json_object_get(s, "d"));
    r.launch_bh = (size_t)(json_integer_value(json_object_get(l, "batch"))
                           * json_integer_value(json_object_get(l, "heads")));
    r.causal = json_is_true(json_object_get(j, "causal"));
    r.fp16 = strcmp(json_string_value(json_object_get(j, "dtype")),
                    "float16")
             == 0;
    sc = json_object_get(j, "scale");
    r.scale = json_is_number(sc) ? json_number_value(sc) : 0.0;
    json_decref(j);
    return r;
}

static fa_config
math_config(const dump_shape *sh, const ex2_model *ex)
{
    fa_config cfg = fa_config_default((fa_policy)fa_policy_parse("math"));
    cfg.shape.batch = 1;
    cfg.shape.heads = 1;
    cfg.shape.nq = sh->nq;
    cfg.shape.nk = sh->nk;
    cfg.shape.d = sh->d;
    cfg.causal = sh->causal;
    cfg.scale = (float)sh->scale;
    cfg.exp = &ex->model;
    cfg.input = sh->fp16 ? &sf_format_f16 : &sf_format_bf16;
    cfg.launch_bh = sh->launch_bh;
    return cfg;
}

static uint16_t
to16(uint32_t x, bool fp16)
{
    sf_env e = SF_ENV_IEEE;
    return fp16 ? sf_f32_to_f16((sf_f32){x}, SF_RNE, &e).bits
                : (uint16_t)(x >> 16);
}

/* Counts the 16-bit outputs OUT (FP32 patterns) equal to the dump's
   tensor G; prints the first that differs. */
static size_t
count16(const char *name, const char *what, const uint32_t *out,
        const tensor *g, size_t n, size_t cols, bool fp16)
{
    size_t eq = 0;
    bool shown = false;

    for (size_t i = 0; i < n; i++) {
        uint16_t em = to16(out[i], fp16);
        uint16_t gv = (uint16_t)tensor_get_bits(g, i);
        if (em == gv)
            eq++;
        else if (!shown) {
            printf("%s: %s[%zu][%zu] gpu 0x%04X emulator 0x%04X\n", name,
                   what, i / cols, i % cols, gv, em);
            shown = true;
        }
    }
    return eq;
}

/*----------------------------------------------------------------------------
 * The backward.
 *--------------------------------------------------------------------------*/
static const struct
{
    const char *dir, *name;
} bwd_dumps[] = {
    {BK, "d64_bwd_normal"},
    {BK, "d64_bwd_sink_causal"},
    {BK, "d128_bwd_normal"},
    {MT, "math_bwd_d64_n128"},
    {MT, "math_bwd_d64_n128_causal"},
    {MT, "math_bwd_d128_n128"},
    {MT, "math_bwd_d128_n128_causal"},
    {MT, "math_bwd_d64_nq100_nk200"},
    {MT, "math_bwd_d64_nq48_nk12"},
    {MT, "math_bwd_d64_n128_fp16"},
    {MT, "math_bwd_d64_n128_sink_causal"},
    {MT, "math_bwd_d64_n512"},
    {MT, "math_bwd_d128_nq256_nk1024"},
};
#define N_BWD (sizeof bwd_dumps / sizeof bwd_dumps[0])

/* The backward of one dump: dQ, dK, dV bit-equal counts into EQ and N
   (of the rows the dump keeps, manifest: outputs_kept); with DP and DS
   (Nq x Nk each) the captures as well.  Returns whether the emulator's
   whole dQ, dK and dV have the hashes of the GPU's. */
static bool
run_backward(const char *dir, const char *name, const ex2_model *ex,
             size_t eq[3], size_t n[3], uint32_t *dp, uint32_t *ds)
{
    static const char *const grads[] = {"dq", "dk", "dv"};
    dump_shape sh = manifest(dir, name);
    tensor_dtype dt = sh.fp16 ? TENSOR_F16 : TENSOR_BF16;
    fa_config cfg = math_config(&sh, ex);
    sf_env env = SF_ENV_IEEE;
    char path[1024], key[64];
    tensor q, k, v, gdo;
    size_t nqd = sh.nq * sh.d, nkd = sh.nk * sh.d;
    uint32_t *out[3];
    uint16_t *em;
    fa_capture cap;
    bool hash_eq = true;

    env.isa = tst_isa(); /* BF16EMU_ISA: the path under test */
    snprintf(path, sizeof path, "%s%s.safetensors", dir, name);
    read_qkv(path, dt, &q, &k, &v);
    read_t(path, "do", dt, &gdo);
    out[0] = calloc(nqd, 4);
    out[1] = calloc(nkd, 4);
    out[2] = calloc(nkd, 4);
    ck_assert(out[0] && out[1] && out[2]);
    memset(&cap, 0, sizeof cap);
    cap.dp = dp;
    cap.ds = ds;
    /* no O, no LSE: autograd takes P from the forward */
    ck_assert_msg(fa_backward(&cfg, (uint16_t *)(void *)q.data,
                              (uint16_t *)(void *)k.data,
                              (uint16_t *)(void *)v.data, NULL, NULL,
                              (uint16_t *)(void *)gdo.data, NULL, out[0],
                              out[1], out[2], &cap, &env)
                      == 0,
                  "%s: fa_backward failed", name);
    em = malloc((nqd > nkd ? nqd : nkd) * sizeof *em);
    ck_assert(em != NULL);
    for (size_t g = 0; g < 3; g++) {
        size_t whole = g == 0 ? nqd : nkd;
        out_cmp c;
        for (size_t i = 0; i < whole; i++)
            em[i] = to16(out[g][i], sh.fp16);
        snprintf(key, sizeof key, "math.%s", grads[g]);
        c = cmp_out16(name, path, key, dt, em, whole, sh.d);
        eq[g] = c.eq;
        n[g] = c.n;
        hash_eq = hash_eq && c.hash_eq;
        free(out[g]);
    }
    printf("%-30s math", name);
    for (size_t g = 0; g < 3; g++)
        printf("  %s %zu/%zu", grads[g], eq[g], n[g]);
    printf("\n");
    free(em);
    free_qkv(&q, &k, &v);
    tensor_free(&gdo);
    return hash_eq;
}

START_TEST(test_math_backward)
{
    ex2_model ex;
    size_t all_eq = 0, all_n = 0, hash_bad = 0;

    ex2_load(&ex);
    for (size_t i = 0; i < N_BWD; i++) {
        size_t eq[3], n[3];
        if (!run_backward(bwd_dumps[i].dir, bwd_dumps[i].name, &ex, eq, n,
                          NULL, NULL))
            hash_bad++;
        for (int g = 0; g < 3; g++) {
            all_eq += eq[g];
            all_n += n[g];
        }
    }
    printf("math backward: dQ, dK, dV %zu/%zu (stored elements) bit-equal; "
           "%zu dumps with a differing whole-tensor hash\n",
           all_eq, all_n, hash_bad);
    ck_assert_msg(all_eq == all_n && hash_bad == 0,
                  "math backward: %zu/%zu bit-equal, %zu hashes differ",
                  all_eq, all_n, hash_bad);
    ax_ex2_table_free(&ex.tab);
}
END_TEST

/* dP = dO V^T and dS (the softmax backward's output) against the
   device's FP32 tensors. */
START_TEST(test_math_backward_stages)
{
    static const char *const cases[] = {"math_bwd_d64_nq100_nk200",
                                        "math_bwd_d128_n128_causal",
                                        "math_bwd_d64_nq48_nk12"};
    ex2_model ex;

    ex2_load(&ex);
    for (size_t c = 0; c < 3; c++) {
        dump_shape sh = manifest(MT, cases[c]);
        size_t ns = sh.nq * sh.nk, eq[3], n[3], bad[2] = {0, 0};
        uint32_t *dp = calloc(ns, 4), *ds = calloc(ns, 4);
        tensor g[2];
        char key[96];

        ck_assert(dp && ds);
        run_backward(MT, cases[c], &ex, eq, n, dp, ds);
        snprintf(key, sizeof key, "%s.dp", cases[c]);
        read_t(MT "math_stages_h200.safetensors", key, TENSOR_F32, &g[0]);
        snprintf(key, sizeof key, "%s.ds", cases[c]);
        read_t(MT "math_stages_h200.safetensors", key, TENSOR_F32, &g[1]);
        for (size_t x = 0; x < ns; x++) {
            const uint32_t *em[2] = {dp, ds};
            for (int s = 0; s < 2; s++)
                if (em[s][x] != u32_at(&g[s], x) && bad[s]++ == 0)
                    printf("%s %s[%zu][%zu] gpu 0x%08X emulator 0x%08X\n",
                           cases[c], s == 0 ? "dP" : "dS", x / sh.nk,
                           x % sh.nk, u32_at(&g[s], x), em[s][x]);
        }
        printf("%s: dP %zu/%zu dS %zu/%zu bit-equal\n", cases[c],
               ns - bad[0], ns, ns - bad[1], ns);
        ck_assert_msg(bad[0] == 0 && bad[1] == 0, "%s: dP %zu, dS %zu differ",
                      cases[c], bad[0], bad[1]);
        tensor_free(&g[0]);
        tensor_free(&g[1]);
        free(dp);
        free(ds);
    }
    ax_ex2_table_free(&ex.tab);
}
END_TEST

/*----------------------------------------------------------------------------
 * Decode.
 *--------------------------------------------------------------------------*/
/* O of a decode dump with the launch's batch x heads LAUNCH_BH (the gemv
   rows), or 1 (no row: the chains); returns the elements equal. */
static size_t
decode_o(const char *name, const ex2_model *ex, size_t launch_bh, size_t *n)
{
    dump_shape sh = manifest(MT, name);
    fa_config cfg = math_config(&sh, ex);
    sf_env env = SF_ENV_IEEE;
    char path[1024];
    tensor q, k, v, go;
    uint32_t *o, lse;
    size_t eq;

    env.isa = tst_isa(); /* BF16EMU_ISA: the path under test */
    cfg.launch_bh = launch_bh;
    snprintf(path, sizeof path, MT "%s.safetensors", name);
    read_qkv(path, TENSOR_BF16, &q, &k, &v);
    read_t(path, "math.o", TENSOR_BF16, &go);
    o = calloc(sh.d, 4);
    ck_assert(o != NULL);
    ck_assert_msg(fa_forward(&cfg, (uint16_t *)(void *)q.data,
                             (uint16_t *)(void *)k.data,
                             (uint16_t *)(void *)v.data, o, &lse, NULL, &env)
                      == 0,
                  "%s: fa_forward failed", name);
    eq = count16(name, launch_bh == 1 ? "O (chains)" : "O", o, &go, sh.d,
                 sh.d, false);
    *n = sh.d;
    free(o);
    free_qkv(&q, &k, &v);
    tensor_free(&go);
    return eq;
}

START_TEST(test_math_decode_order)
{
    static const char *const cases[] = {
        "decode_order_s_d64_nk512", "decode_order_pv_d64_nk512",
        "decode_order_s_d128_nk256", "decode_order_pv_d128_nk256"};
    ex2_model ex;

    ex2_load(&ex);
    for (size_t c = 0; c < 4; c++) {
        size_t n, eq = decode_o(cases[c], &ex, 16, &n);
        size_t eq1 = decode_o(cases[c], &ex, 1, &n);
        printf("%s: O %zu/%zu bit-equal with the gemv orders, %zu/%zu with "
               "one FFMA chain\n",
               cases[c], eq, n, eq1, n);
        ck_assert_msg(eq == n, "%s: O %zu/%zu bit-equal", cases[c], eq, n);
        /* the crafted inputs tell the orders apart */
        ck_assert_msg(eq1 < n / 2, "%s: the chains give %zu/%zu", cases[c],
                      eq1, n);
    }
    ax_ex2_table_free(&ex.tab);
}
END_TEST

/* One dot product in the gemv order G, written out from its definition
   (kernel.h): lane t takes runs of chunk elements at chunk (t + lanes i),
   each lane an FMA chain from +0; then the butterfly or the sequential
   sum.  A[i] and B[i] are FP32 patterns. */
static uint32_t
ref_gemv(const fa_gemv_order *g, const uint32_t *a, const uint32_t *b,
         size_t n)
{
    sf_env e = SF_ENV_IEEE;
    uint32_t lane[128] = {0}, tmp[128];
    size_t w = g->lanes;

    for (size_t t = 0; t < w; t++) {
        sf_f32 acc = {0};
        for (size_t i = 0; i < n; i++)
            if ((i / g->chunk) % w == t)
                acc = sf_f32_fma((sf_f32){a[i]}, (sf_f32){b[i]}, acc, SF_RNE,
                                 &e);
        lane[t] = acc.bits;
    }
    if (g->combine == FA_GEMV_SEQUENTIAL) {
        sf_f32 s = {lane[0]};
        for (size_t t = 1; t < w; t++)
            s = sf_f32_add(s, (sf_f32){lane[t]}, SF_RNE, &e);
        return s.bits;
    }
    for (size_t off = w / 2; off >= 1; off /= 2) {
        for (size_t t = 0; t < w; t++)
            tmp[t] = sf_f32_add((sf_f32){lane[t]}, (sf_f32){lane[t ^ off]},
                                SF_RNE, &e)
                         .bits;
        memcpy(lane, tmp, w * sizeof lane[0]);
    }
    return lane[0];
}

static uint32_t
mul32(uint32_t a, uint32_t b)
{
    sf_env e = SF_ENV_IEEE;
    return sf_f32_mul((sf_f32){a}, (sf_f32){b}, SF_RNE, &e).bits;
}

START_TEST(test_math_gemv_rows)
{
    static const unsigned ds[] = {32, 64, 96, 128, 256};
    static const unsigned nks[] = {64, 128, 256, 512, 1024, 2048};
    const fa_kernel *kd = fa_kernel_by_name("math");
    const char *path = MT "decode_gemv_h200.safetensors";
    size_t rows_s = 0, rows_pv = 0, none = 0;

    ck_assert_ptr_nonnull(kd);
    for (size_t di = 0; di < 5; di++)
        for (size_t ni = 0; ni < 6; ni++) {
            unsigned d = ds[di], nk = nks[ni];
            const fa_gemv_row *row = NULL;
            char key[64], pre[32];
            tensor q, k, s, p, v, pv;
            uint32_t sq, a[256], b[2048], pb[2048];
            /* RN32(sqrt(scale)): PyTorch's square root in FP64 of the FP64
               default scale 1/sqrt(d) */
            float sqf = (float)sqrt(1.0 / sqrt((double)d));

            for (size_t g = 0; g < kd->n_gemv; g++) {
                const fa_gemv_row *r = &kd->gemv[g];
                if (d >= r->d_min && d <= r->d_max && nk >= r->nk_min
                    && nk <= r->nk_max && 16 >= r->bh_min && 16 <= r->bh_max) {
                    row = r;
                    break;
                }
            }
            ck_assert_msg(row != NULL, "d %u nk %u: no gemv row", d, nk);
            memcpy(&sq, &sqf, sizeof sq);
            snprintf(pre, sizeof pre, "d%u_nk%u_b2h8", d, nk);
#define RD(T, NAME, DT)                                                       \
    snprintf(key, sizeof key, "%s/%s", pre, NAME);                            \
    read_t(path, key, DT, &T)
            RD(q, "q", TENSOR_BF16);
            RD(k, "k16", TENSOR_BF16);
            RD(s, "s16", TENSOR_F32);
            RD(p, "p", TENSOR_F32);
            RD(v, "v4", TENSOR_BF16);
            RD(pv, "pv4", TENSOR_F32);
#undef RD
            if (row->s.lanes != 0) {
                size_t bad = 0;
                for (unsigned c = 0; c < d; c++)
                    a[c] = mul32(u32_at(&q, c) << 16, sq);
                for (unsigned j = 0; j < 16; j++) {
                    uint32_t x;
                    for (unsigned c = 0; c < d; c++)
                        b[c] = mul32(u32_at(&k, j * d + c) << 16, sq);
                    x = ref_gemv(&row->s, a, b, d);
                    if (x != u32_at(&s, j) && bad++ == 0)
                        printf("%s S[%u]: gpu 0x%08X row 0x%08X\n", pre, j,
                               u32_at(&s, j), x);
                }
                ck_assert_msg(bad == 0, "%s: S %zu of 16 differ", pre, bad);
                rows_s++;
            } else
                none++;
            if (row->pv.lanes != 0) {
                size_t bad = 0;
                for (unsigned j = 0; j < nk; j++)
                    pb[j] = u32_at(&p, j);
                for (unsigned c = 0; c < 4; c++) {
                    uint32_t x;
                    for (unsigned j = 0; j < nk; j++)
                        b[j] = u32_at(&v, j * 4 + c) << 16;
                    x = ref_gemv(&row->pv, pb, b, nk);
                    if (x != u32_at(&pv, c) && bad++ == 0)
                        printf("%s PV[%u]: gpu 0x%08X row 0x%08X\n", pre, c,
                               u32_at(&pv, c), x);
                }
                ck_assert_msg(bad == 0, "%s: P V %zu of 4 differ", pre, bad);
                rows_pv++;
            } else
                none++;
            tensor_free(&q);
            tensor_free(&k);
            tensor_free(&s);
            tensor_free(&p);
            tensor_free(&v);
            tensor_free(&pv);
        }
    printf("gemv rows: S on %zu shapes, P V on %zu, %zu products without a "
           "fitted order\n",
           rows_s, rows_pv, none);
    ck_assert_uint_eq(rows_s + rows_pv + none, 60);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("sdpa_math");
    TCase *tc = tst_add_tcase(s, "h200", 240);

    tcase_add_test(tc, test_math_backward);
    tcase_add_test(tc, test_math_backward_stages);
    tcase_add_test(tc, test_math_decode_order);
    tcase_add_test(tc, test_math_gemv_rows);
    return tst_run_suite(s);
}
