/* test_cudnn_lean.c -- the cudnn description's decode path against
   crafted inputs run through cuDNN's decode engine on the H200
   (tests/data/gpu/cudnn/lean_probe_h200.safetensors;
   doc/notes/gpu-crosscheck-log.md, "cuDNN model"): Q = e_0 and K's
   column 0 the scores, V's column 0 ones.
   The order probe (scale RN32(ln 2): P~ = 2^score) puts 1 and two 2^-24
   in a row: the LSE says whether the two met before the 1.  Bit-equality
   counts per case; a mismatch prints the first differing row in hex. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ex2_table.h"
#include "analysis/lg2_table.h"
#include "analysis/rcp_table.h"
#include "analysis/tensor.h"
#include "attention/attention.h"
#include "attention/kernel.h"
#include "tests/support/suite.h"
#include "tests/support/tables.h"

#define LSE_NK256 129
#define LSE_NK513 127
#define LSE_NK600 262
#define FIX SRCDIR "/tests/data/gpu/cudnn/lean_probe_h200.safetensors"

#define NEG_BF16 0xC680u /* -16384: P~ and the split's weight 0 */
#define ONE_BF16 0x3F80u
#define M24_BF16 0xC1C0u /* -24 */

/* The BF16 score of key J in row R. */
typedef uint16_t (*kernel_scores_fn)(const void *ctx, size_t r, size_t j);

typedef struct
{
    ax_ex2_table ex;
    fa_exp2_table exr;
    fa_exp_model exm;
    ax_lg2_table lg;
    fa_lg2_table lgr;
    fa_log_model lgm;
    ax_rcp_table rc;
    fa_rcp_model rcm;
} models;

static void
models_load(models *m)
{
    char err[1024];
    ck_assert_msg(
        ax_ex2_table_load(tst_ex2_table_path(), &m->ex, err, sizeof err) == 0,
        "%s", err);
    ax_ex2_model(&m->ex, false, &m->exr, &m->exm);
    ck_assert_msg(
        ax_lg2_table_load(tst_lg2_table_path(), &m->lg, err, sizeof err) == 0,
        "%s", err);
    ax_lg2_model(&m->lg, false, &m->lgr, &m->lgm);
    ck_assert_msg(
        ax_rcp_table_load(tst_rcp_table_path(), &m->rc, err, sizeof err) == 0,
        "%s", err);
    ax_rcp_model(&m->rc, &m->rcm);
}

static void
models_free(models *m)
{
    ax_ex2_table_free(&m->ex);
    ax_lg2_table_free(&m->lg);
    ax_rcp_table_free(&m->rc);
}

static void
read_t(const char *key, tensor_dtype dt, tensor *t)
{
    tensor_error err;
    *t = (tensor)TENSOR_INIT;
    ck_assert_msg(safetensors_read(FIX, key, dt, t, &err) == 0, "%s: %s: %s",
                  FIX, key, err.message);
}

/* Runs H decode rows of NK keys (row h's score of key j: SCORE(h, j)),
   d = 64, SPLITS splits, softmax SCALE (0: 1/8); returns the rows whose
   LSE equals GPU's (and in *O_EQ those whose O[0] equals GO's, when GO is
   not NULL). */
static size_t
run_rows(const models *m, const kernel_scores_fn score, const void *ctx,
         size_t h, size_t nk, size_t splits, float scale, const tensor *gl,
         const tensor *go, size_t *o_eq, const char *name)
{
    const size_t d = 64;
    fa_config cfg = fa_config_kernel_default(fa_kernel_by_name("cudnn"));
    uint16_t *q = calloc(h * d, 2), *k = calloc(h * nk * d, 2),
             *v = calloc(h * nk * d, 2);
    uint32_t *o = calloc(h * d, 4), *lse = calloc(h, 4);
    sf_env env = SF_ENV_IEEE;
    size_t eq = 0, oe = 0;
    bool shown = false;

    ck_assert(q != NULL && k != NULL && v != NULL && o != NULL
              && lse != NULL);
    cfg.shape.batch = 1;
    cfg.shape.heads = h;
    cfg.shape.nq = 1;
    cfg.shape.nk = nk;
    cfg.shape.d = d;
    cfg.scale = scale;
    cfg.exp = &m->exm;
    cfg.log = &m->lgm;
    cfg.rcp = &m->rcm;
    cfg.splits = splits;
    for (size_t r = 0; r < h; r++) {
        q[r * d] = ONE_BF16;
        for (size_t j = 0; j < nk; j++) {
            k[(r * nk + j) * d] = score(ctx, r, j);
            v[(r * nk + j) * d] = ONE_BF16;
        }
    }
    ck_assert_msg(fa_forward(&cfg, q, k, v, o, lse, NULL, &env) == 0,
                  "%s: fa_forward failed", name);
    for (size_t r = 0; r < h; r++) {
        uint32_t g = (uint32_t)tensor_get_bits(gl, r);
        if (g == lse[r])
            eq++;
        else if (!shown) {
            printf("%s: LSE[%zu] gpu 0x%08X emulator 0x%08X\n", name, r, g,
                   lse[r]);
            shown = true;
        }
        if (go != NULL
            && (uint16_t)tensor_get_bits(go, r) == (uint16_t)(o[r * d] >> 16))
            oe++;
    }
    if (o_eq != NULL)
        *o_eq = oe;
    printf("%-16s LSE %zu/%zu", name, eq, h);
    if (go != NULL)
        printf("  O[0] %zu/%zu", oe, h);
    printf("\n");
    free(q);
    free(k);
    free(v);
    free(o);
    free(lse);
    return eq;
}

/* "zero" cases: row h has its first h + 1 keys at 0, the rest dead. */
static uint16_t
zero_score(const void *ctx, size_t r, size_t j)
{
    (void)ctx;
    return j <= r ? 0 : NEG_BF16;
}

static uint16_t
tensor_score(const void *ctx, size_t r, size_t j)
{
    const tensor *t = ctx;
    return (uint16_t)tensor_get_bits(t, r * t->shape[1] + j);
}

typedef struct
{
    const uint16_t (*rows)[3];
} order_ctx;

static uint16_t
order_score(const void *ctx, size_t r, size_t j)
{
    const order_ctx *c = ctx;
    if (j == c->rows[r][0])
        return 0;
    if (j == c->rows[r][1] || j == c->rows[r][2])
        return M24_BF16;
    return NEG_BF16;
}

START_TEST(test_zero_rows)
{
    /* L = h + 1 (integers, exact in any order and split): the lean
       reduction's log and LSE formula alone */
    static const struct
    {
        const char *name;
        size_t nk, splits;
    } cases[] = {{"zero4096", 4096, 8}, {"zero1024", 1024, 8},
                 {"zero512", 512, 1}};
    models m;

    models_load(&m);
    for (size_t c = 0; c < 3; c++) {
        char key[64];
        tensor gl;
        snprintf(key, sizeof key, "%s.lse", cases[c].name);
        read_t(key, TENSOR_F32, &gl);
        size_t h = (size_t)gl.n_elems;
        size_t eq = run_rows(&m, zero_score, NULL, h, cases[c].nk,
                             cases[c].splits, 0.0f, &gl, NULL, NULL,
                             cases[c].name);
        ck_assert_msg(eq == h, "%s: LSE %zu/%zu bit-equal", cases[c].name,
                      eq, h);
        tensor_free(&gl);
    }
    models_free(&m);
}
END_TEST

START_TEST(test_order_rows)
{
    /* the decode engine's row-sum tree: per thread (keys 8n + 2q + c)
       two 64-key spans of each tile, then (s0 + s1) + (s2 + s3) */
    static const struct
    {
        const char *name;
        size_t nk, a;
    } cases[] = {{"order.t128_a0", 128, 0},
                 {"order.t128_a127", 128, 127},
                 {"order.t256_a0", 256, 0}};
    models m;
    const float ln2 = 0.693147182464599609375f; /* RN32(ln 2) */

    models_load(&m);
    for (size_t c = 0; c < 3; c++) {
        char key[64];
        tensor gl;
        uint16_t (*rows)[3];
        size_t n = 0;
        order_ctx ctx;

        snprintf(key, sizeof key, "%s.lse", cases[c].name);
        read_t(key, TENSOR_F32, &gl);
        rows = calloc((size_t)gl.n_elems, sizeof *rows);
        ck_assert(rows != NULL);
        if (cases[c].nk == 128) {
            /* every pair I < J of the other keys, ascending */
            for (size_t i = 0; i < 128; i++)
                for (size_t j = i + 1; j < 128; j++)
                    if (i != cases[c].a && j != cases[c].a) {
                        rows[n][0] = (uint16_t)cases[c].a;
                        rows[n][1] = (uint16_t)i;
                        rows[n][2] = (uint16_t)j;
                        n++;
                    }
        } else {
            for (size_t i = 1; i < 128; i++)
                for (size_t j = 128; j < 256; j++) {
                    rows[n][0] = 0;
                    rows[n][1] = (uint16_t)i;
                    rows[n][2] = (uint16_t)j;
                    n++;
                }
        }
        ck_assert_uint_eq(n, gl.n_elems);
        ctx.rows = (const uint16_t(*)[3])rows;
        size_t eq = run_rows(&m, order_score, &ctx, n, cases[c].nk, 1, ln2,
                             &gl, NULL, NULL, cases[c].name);
        ck_assert_msg(eq == n, "%s: LSE %zu/%zu bit-equal", cases[c].name,
                      eq, n);
        free(rows);
        tensor_free(&gl);
    }
    models_free(&m);
}
END_TEST

START_TEST(test_crafted_rows)
{
    /* nine families of crafted scores (cudnn_lean_probe.py); O[0] is
       exact, the LSE not yet: the counts as measured */
    static const struct
    {
        const char *name;
        size_t nk, splits, lse_eq;
    } cases[] = {{"nk256", 256, 1, LSE_NK256},
                 {"nk513", 513, 4, LSE_NK513},
                 {"nk600", 600, 4, LSE_NK600}};
    models m;

    models_load(&m);
    for (size_t c = 0; c < 3; c++) {
        char key[64];
        tensor ts, gl, go;
        size_t oe;

        snprintf(key, sizeof key, "%s.scores", cases[c].name);
        read_t(key, TENSOR_BF16, &ts);
        snprintf(key, sizeof key, "%s.lse", cases[c].name);
        read_t(key, TENSOR_F32, &gl);
        snprintf(key, sizeof key, "%s.o0", cases[c].name);
        read_t(key, TENSOR_BF16, &go);
        size_t h = (size_t)gl.n_elems;
        ck_assert_uint_eq(ts.shape[1], cases[c].nk);
        size_t eq = run_rows(&m, tensor_score, &ts, h, cases[c].nk,
                             cases[c].splits, 0.0f, &gl, &go, &oe,
                             cases[c].name);
        ck_assert_msg(eq == cases[c].lse_eq && oe == h,
                      "%s: LSE %zu/%zu bit-equal (expected %zu), O[0] "
                      "%zu/%zu",
                      cases[c].name, eq, h, cases[c].lse_eq, oe, h);
        tensor_free(&ts);
        tensor_free(&gl);
        tensor_free(&go);
    }
    models_free(&m);
}
END_TEST

START_TEST(test_rcp_model)
{
    /* d64_normal_fp16's row 51: l = 0x419D50DA; the H200's rcp.approx
       gives 0x3D504B5C (its O[51][24] 0xA4AA needs it), RN32(1/l) is
       0x3D504B5B; 1 and a power of two stay exact; a subnormal input
       and a NULL model give RN32(1/x) */
    models m;

    models_load(&m);
    ck_assert_uint_eq(fa_rcp_eval(&m.rcm, 0x419D50DAu), 0x3D504B5Cu);
    ck_assert_uint_eq(fa_rcp_eval(NULL, 0x419D50DAu), 0x3D504B5Bu);
    ck_assert_uint_eq(fa_rcp_eval(&m.rcm, 0x3F800000u), 0x3F800000u);
    ck_assert_uint_eq(fa_rcp_eval(&m.rcm, 0x41800000u), 0x3D800000u);
    ck_assert_uint_eq(fa_rcp_eval(&m.rcm, 0x00000001u), 0x7F800000u);
    models_free(&m);
}
END_TEST

START_TEST(test_rcp_table_refused)
{
    /* a file that is not the table: refused with a message */
    char path[512], err[1024];
    const char *tmp = getenv("TMPDIR");
    ax_rcp_table t;
    int fd;
    FILE *f;

    snprintf(path, sizeof path, "%s/test_cudnn_lean.XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    fd = mkstemp(path);

    ck_assert(fd >= 0);
    f = fdopen(fd, "wb");
    ck_assert(f != NULL);
    fputs("BF16RCP1 too short", f);
    fclose(f);
    ck_assert_int_eq(ax_rcp_table_load(path, &t, err, sizeof err), -1);
    ck_assert_ptr_null(t.delta);
    ck_assert_ptr_nonnull(strstr(err, "8388608"));
    remove(path);
}
END_TEST
/* The decode engine's LSE is not reproducible: with the same inputs its
   four warps' sums meet in an order that changes from launch to launch
   (experiments/gpu/probes/cudnn_repro_probe.py;
   doc/notes/gpu-crosscheck-log.md, "cuDNN model").  REPRO keeps 4 heads
   of Nk = 512 (one CTA per head) with the 192 LSE values each took
   over 24 launches of 8 copies.  The emulator, run with each of the 24
   fixed orders of decode_span_order, must give exactly the GPU's set
   where the GPU gave two values, and the counts of heads whose GPU
   values all lie in the emulator's set are as measured. */
#define REPRO SRCDIR "/tests/data/gpu/cudnn/decode_repro.safetensors"
#define REPRO_HEADS 4
#define REPRO_COVERED 4

static void
read_r(const char *key, tensor_dtype dt, tensor *t)
{
    tensor_error err;
    *t = (tensor)TENSOR_INIT;
    ck_assert_msg(safetensors_read(REPRO, key, dt, t, &err) == 0, "%s: %s: %s",
                  REPRO, key, err.message);
}

/* Adds V to the set S of N values (at most CAP); returns the new N. */
static size_t
set_add(uint32_t *s, size_t n, size_t cap, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == v)
            return n;
    ck_assert(n < cap);
    s[n] = v;
    return n + 1;
}

START_TEST(test_repro_orders)
{
    enum
    {
        CAP = 32
    };
    const size_t nk = 512, d = 64, h = REPRO_HEADS;
    tensor q, k, v, gl;
    models m;
    uint32_t gset[REPRO_HEADS][CAP], eset[REPRO_HEADS][CAP];
    size_t gn[REPRO_HEADS] = {0}, en[REPRO_HEADS] = {0};
    size_t covered = 0, two = 0;
    fa_kernel kern = *fa_kernel_by_name("cudnn");
    char order[5] = "0123";
    uint32_t *o = calloc(h * d, 4), *lse = calloc(h, 4);

    ck_assert(o != NULL && lse != NULL);
    models_load(&m);
    read_r("nk512.q", TENSOR_BF16, &q);
    read_r("nk512.k", TENSOR_BF16, &k);
    read_r("nk512.v", TENSOR_BF16, &v);
    read_r("nk512.lse256", TENSOR_F32, &gl);
    ck_assert(q.n_elems == h * d && k.n_elems == h * nk * d
              && gl.n_elems % (8 * h) == 0);
    for (uint64_t i = 0; i < gl.n_elems; i++) {
        size_t hh = (size_t)(i % (8 * h)) / 8;
        gn[hh] =
            set_add(gset[hh], gn[hh], CAP, (uint32_t)tensor_get_bits(&gl, i));
    }
    /* every permutation of 0123, in lexicographic order */
    for (int p = 0; p < 24; p++) {
        fa_config cfg;
        sf_env env = SF_ENV_IEEE;
        int idx[4] = {0, 1, 2, 3}, r = p;

        for (int pos = 0; pos < 4; pos++) {
            int f = 1;
            for (int t = 1; t < 4 - pos; t++)
                f *= t;
            int c = r / f;
            r %= f;
            order[pos] = (char)('0' + idx[c]);
            for (int t = c; t < 3 - pos; t++)
                idx[t] = idx[t + 1];
        }
        memcpy(kern.decode_span_order, order, sizeof order);
        ck_assert_ptr_null(fa_kernel_check(&kern));
        cfg = fa_config_kernel_default(&kern);
        cfg.shape.batch = 1;
        cfg.shape.heads = h;
        cfg.shape.nq = 1;
        cfg.shape.nk = nk;
        cfg.shape.d = d;
        cfg.exp = &m.exm;
        cfg.log = &m.lgm;
        cfg.rcp = &m.rcm;
        cfg.splits = 1;
        ck_assert_msg(fa_forward(&cfg, (const uint16_t *)(const void *)q.data,
                                 (const uint16_t *)(const void *)k.data,
                                 (const uint16_t *)(const void *)v.data, o,
                                 lse, NULL, &env)
                          == 0,
                      "order %s: fa_forward failed", order);
        for (size_t hh = 0; hh < h; hh++)
            en[hh] = set_add(eset[hh], en[hh], CAP, lse[hh]);
    }
    for (size_t hh = 0; hh < h; hh++) {
        size_t in = 0;
        for (size_t i = 0; i < gn[hh]; i++)
            for (size_t j = 0; j < en[hh]; j++)
                in += gset[hh][i] == eset[hh][j];
        covered += in == gn[hh];
        if (gn[hh] > 1) {
            two++;
            ck_assert_msg(in == gn[hh] && en[hh] == gn[hh],
                          "head %zu: the GPU gave %zu values (0x%08X ...), "
                          "the emulator's orders %zu (0x%08X ...), %zu "
                          "shared",
                          hh, gn[hh], gset[hh][0], en[hh], eset[hh][0], in);
        }
        if (in != gn[hh])
            printf("decode_repro head %zu: GPU 0x%08X, emulator 0x%08X "
                   "(%zu orders' values)\n",
                   hh, gset[hh][0], eset[hh][0], en[hh]);
    }
    ck_assert_msg(two == 2, "%zu heads with two GPU values, want 2", two);
    ck_assert_msg(covered == REPRO_COVERED,
                  "%zu of %zu heads' GPU values within the orders' set, "
                  "want %d",
                  covered, h, REPRO_COVERED);
    tensor_free(&q);
    tensor_free(&k);
    tensor_free(&v);
    tensor_free(&gl);
    free(o);
    free(lse);
    models_free(&m);
}
END_TEST


int
main(void)
{
    Suite *s = suite_create("cudnn_lean");
    TCase *tc = tst_add_tcase(s, "h200", 300);

    tcase_add_test(tc, test_zero_rows);
    tcase_add_test(tc, test_order_rows);
    tcase_add_test(tc, test_crafted_rows);
    tcase_add_test(tc, test_rcp_model);
    tcase_add_test(tc, test_repro_orders);
    tcase_add_test(tc, test_rcp_table_refused);
    return tst_run_suite(s);
}
