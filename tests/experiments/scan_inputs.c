/* scan_inputs -- captures for test_scan.sh: a synthetic layer whose heads
   have repeated maxima or not (with the counts computed here, in integer
   arithmetic), the H200 FLASH dump as a second layer (inputs its
   manifest describes regenerated), and damaged
   variants */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dump_inputs.h"
#include "analysis/tensor.h"
#include "attention/attention.h"

/*
 * usage: scan_inputs DIR H200DUMP
 *
 * Writes into DIR
 *   cap.safetensors      layer 0 (synthetic, [B, N, H, d] = [1, 64, 3,
 *                        64]) and layer 1 (H200DUMP's q, k, v, o, lse, do
 *                        renamed L1.s0.*), manifest in the metadata;
 *   missing.safetensors  the same without L0.s0.v;
 *   sharda/shardb.safetensors  layer 0 split over two shards, K with d
 *                        = 32 in shard b;
 *   nan.safetensors      layer 0 with one NaN in Q of head 1;
 *   eager.safetensors    layer 0 with backend "math" in the manifest;
 * and prints "L0 H rep N" for each synthetic head: the rows whose maximum
 * score repeats, from the integer scores.
 *
 * Head 0: four keys equal to the all-ones vector, Q in {0, 1} (most rows
 * have their maximum on those four), V all negative.  Head 1: Q and K in
 * {-2..2}, V of both signs.  Head 2: Q and K in {-8..8}, V of both signs.
 * O and LSE are the fa2 emulation's (the capture's kernel).
 */

enum
{
    H = 3,
    N = 64,
    D = 64
};

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint32_t
next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static uint16_t
bf16_of_int(int v)
{
    float f = (float)v;
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

static uint16_t
bf16_of_float(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16); /* truncation: any BF16 value will do */
}

/* BHND arrays of the synthetic layer. */
static uint16_t q[H * N * D], k[H * N * D], v[H * N * D], dout[H * N * D];
static int qi[H * N * D], ki[H * N * D];
static uint32_t o32[H * N * D], lse[H * N];

static void
make_layer(void)
{
    for (size_t h = 0; h < H; h++)
        for (size_t i = 0; i < N * D; i++) {
            size_t at = h * N * D + i, row = i / D;
            int a, b;
            if (h == 0) {
                a = (int)(next32() % 2);
                b = row < 4 ? 1 : (int)(next32() % 3) - 1;
            } else if (h == 1) {
                a = (int)(next32() % 5) - 2;
                b = (int)(next32() % 5) - 2;
            } else {
                a = (int)(next32() % 17) - 8;
                b = (int)(next32() % 17) - 8;
            }
            qi[at] = a;
            ki[at] = b;
            q[at] = bf16_of_int(a);
            k[at] = bf16_of_int(b);
            {
                float u = (float)(next32() % 65536) / 65536.0f;
                v[at] = bf16_of_float(h == 0 ? -(1.0f + u) : 2.0f * u - 1.0f);
                dout[at] = bf16_of_float((float)(next32() % 65536) / 65536.0f
                                         - 0.25f);
            }
        }
    {
        fa_config cfg = fa_config_default(FA_POLICY_FA2);
        sf_env env = SF_ENV_IEEE;
        cfg.shape.batch = 1;
        cfg.shape.heads = H;
        cfg.shape.nq = N;
        cfg.shape.nk = N;
        cfg.shape.d = D;
        if (fa_forward(&cfg, q, k, v, o32, lse, NULL, &env) != 0) {
            fprintf(stderr, "scan_inputs: fa_forward failed\n");
            exit(1);
        }
    }
}

static int
fail(const char *what, const char *why)
{
    fprintf(stderr, "scan_inputs: %s: %s\n", what, why);
    return 1;
}

/* A [1, N, H, d] tensor (BNHD) from a BHND array of BF16 bits, with
   d = DD (<= D: the first DD features). */
static int
bnhd(tensor *t, const uint16_t *src, size_t dd)
{
    uint64_t shape[4] = {1, N, H, dd};
    tensor_error err;

    if (tensor_alloc(t, TENSOR_BF16, 4, shape, &err) != TENSOR_OK)
        return fail("alloc", err.message);
    for (size_t h = 0; h < H; h++)
        for (size_t n = 0; n < N; n++)
            for (size_t c = 0; c < dd; c++)
                tensor_set_bits(t, (n * H + h) * dd + c,
                                src[(h * N + n) * D + c]);
    return 0;
}

static const char *MAN_FMT =
    "{\"format\": \"bf16emu-capture\", \"version\": 1, \"backend\": "
    "\"%s\", \"calls\": [{\"layer\": 0, \"step\": 0, \"name\": "
    "\"synthetic\", \"causal\": false, \"scale\": null, \"layout\": "
    "\"bnhd\", \"dtype\": \"bfloat16\"}%s]}";
static const char *L1_CALL =
    ", {\"layer\": 1, \"step\": 0, \"name\": \"h200\", \"causal\": false, "
    "\"scale\": null, \"layout\": \"bhnd\", \"dtype\": \"bfloat16\", "
    "\"backend\": \"flash\"}";

/* Writes layer 0 (without tensor SKIP, "" for none; K with d = KD) plus,
   when L1 is non-NULL, its tensors, to PATH. */
static int
write_cap(const char *path, const char *skip, size_t kd, const char *backend,
          const tensor_file *l1, bool nan_q, bool with_o)
{
    tensor_named list[16];
    size_t n = 0;
    tensor tq = TENSOR_INIT, tk = TENSOR_INIT, tv = TENSOR_INIT,
           to = TENSOR_INIT, tl = TENSOR_INIT, td = TENSOR_INIT;
    uint16_t o16[H * N * D];
    uint64_t lshape[3] = {1, H, N};
    tensor_error err;
    char man[2048];
    tensor_meta meta;
    static char names[16][32];
    int rc = 0;

    for (size_t i = 0; i < H * N * D; i++)
        o16[i] = (uint16_t)(o32[i] >> 16);
    if (bnhd(&tq, q, D) || bnhd(&tk, k, kd) || bnhd(&tv, v, D)
        || bnhd(&to, o16, D) || bnhd(&td, dout, D))
        return 1;
    if (nan_q)
        tensor_set_bits(&tq, (5 * H + 1) * D + 3, 0x7FC0);
    if (tensor_alloc(&tl, TENSOR_F32, 3, lshape, &err) != TENSOR_OK)
        return fail("alloc", err.message);
    for (size_t i = 0; i < H * N; i++)
        tensor_set_bits(&tl, i, lse[i]);
    {
        const char *nm[6] = {"q", "k", "v", "o", "lse", "do"};
        tensor *tt[6] = {&tq, &tk, &tv, &to, &tl, &td};
        for (size_t i = 0; i < 6; i++) {
            if (strcmp(nm[i], skip) == 0 || (!with_o && i != 1 && i != 2))
                continue;
            snprintf(names[n], sizeof names[n], "L0.s0.%s", nm[i]);
            list[n].name = names[n];
            list[n].tensor = *tt[i];
            n++;
        }
    }
    if (l1 != NULL)
        for (size_t i = 0; i < l1->n_tensors; i++) {
            const char *nm = l1->tensors[i].name;
            if (strcmp(nm, "q") && strcmp(nm, "k") && strcmp(nm, "v")
                && strcmp(nm, "o") && strcmp(nm, "lse") && strcmp(nm, "do"))
                continue;
            snprintf(names[n], sizeof names[n], "L1.s0.%s", nm);
            list[n].name = names[n];
            list[n].tensor = l1->tensors[i].tensor;
            n++;
        }
    snprintf(man, sizeof man, MAN_FMT, backend, l1 != NULL ? L1_CALL : "");
    meta.key = "manifest";
    meta.value = man;
    if (safetensors_write(path, list, n, &meta, 1, true, &err) != TENSOR_OK)
        rc = fail(path, err.message);
    tensor_free(&tq);
    tensor_free(&tk);
    tensor_free(&tv);
    tensor_free(&to);
    tensor_free(&tl);
    tensor_free(&td);
    return rc;
}

/* Shard a: everything of layer 0 but K and V; shard b: K (d = 32), V. */
static int
write_shards(const char *dir)
{
    char pa[4096], pb[4096];
    tensor_named list[4];
    tensor tq = TENSOR_INIT, tk = TENSOR_INIT, tv = TENSOR_INIT,
           to = TENSOR_INIT;
    uint16_t o16[H * N * D];
    tensor_meta meta;
    tensor_error err;
    char man[2048];

    for (size_t i = 0; i < H * N * D; i++)
        o16[i] = (uint16_t)(o32[i] >> 16);
    if (bnhd(&tq, q, D) || bnhd(&tk, k, 32) || bnhd(&tv, v, D)
        || bnhd(&to, o16, D))
        return 1;
    snprintf(man, sizeof man, MAN_FMT, "flash", "");
    meta.key = "manifest";
    meta.value = man;
    snprintf(pa, sizeof pa, "%s/sharda.safetensors", dir);
    snprintf(pb, sizeof pb, "%s/shardb.safetensors", dir);
    list[0].name = "L0.s0.q";
    list[0].tensor = tq;
    list[1].name = "L0.s0.o";
    list[1].tensor = to;
    if (safetensors_write(pa, list, 2, &meta, 1, true, &err) != TENSOR_OK)
        return fail(pa, err.message);
    list[0].name = "L0.s0.k";
    list[0].tensor = tk;
    list[1].name = "L0.s0.v";
    list[1].tensor = tv;
    if (safetensors_write(pb, list, 2, &meta, 1, true, &err) != TENSOR_OK)
        return fail(pb, err.message);
    tensor_free(&tq);
    tensor_free(&tk);
    tensor_free(&tv);
    tensor_free(&to);
    return 0;
}

int
main(int argc, char **argv)
{
    tensor_file l1 = TENSOR_FILE_INIT;
    tensor_error err;
    char path[4096];

    if (argc != 3)
        return fail("usage", "scan_inputs DIR H200DUMP");
    make_layer();
    if (dump_read_all(argv[2], TENSOR_ANY, &l1, &err) != TENSOR_OK)
        return fail(argv[2], err.message);
    snprintf(path, sizeof path, "%s/cap.safetensors", argv[1]);
    if (write_cap(path, "", D, "flash", &l1, false, true))
        return 1;
    snprintf(path, sizeof path, "%s/missing.safetensors", argv[1]);
    if (write_cap(path, "v", D, "flash", NULL, false, true))
        return 1;
    snprintf(path, sizeof path, "%s/nan.safetensors", argv[1]);
    if (write_cap(path, "", D, "flash", NULL, true, true))
        return 1;
    snprintf(path, sizeof path, "%s/eager.safetensors", argv[1]);
    if (write_cap(path, "", D, "math", NULL, false, true))
        return 1;
    if (write_shards(argv[1]))
        return 1;
    tensor_file_free(&l1);

    /* The expected counts: integer scores, rows whose maximum repeats. */
    for (size_t h = 0; h < H; h++) {
        unsigned rep = 0;
        for (size_t i = 0; i < N; i++) {
            long best = 0;
            unsigned cnt = 0;
            for (size_t j = 0; j < N; j++) {
                long s = 0;
                for (size_t c = 0; c < D; c++)
                    s += (long)qi[(h * N + i) * D + c]
                         * ki[(h * N + j) * D + c];
                if (j == 0 || s > best) {
                    best = s;
                    cnt = 1;
                } else if (s == best) {
                    cnt++;
                }
            }
            rep += cnt >= 2;
        }
        printf("L0 %zu rep %u\n", h, rep);
    }
    return 0;
}
