/* test_mma_h200.c -- the sm90 preset against the H200 tensor-core fixture
   (tests/data/gpu/mma_h200.safetensors: single-row dot products through
   mma.sync.m16n8k16 and wgmma.m64n8k16, BF16 and FP16, K = 16, 32, 64) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

#define N_PATHS 3
#define N_MODELS 4
#define MAX_SETS 64

static const char *const path_names[N_PATHS] = {"d_mma", "d_wgmma_ss",
                                                "d_wgmma_rs"};

static const char *
fixture_path(void)
{
    const char *e = getenv("BF16EMU_MMA_H200");
    if (e != NULL && *e != '\0')
        return e;
    return SRCDIR "/tests/data/gpu/mma_h200.safetensors";
}

/* The file: an 8-byte little-endian header length, a JSON header naming
   each tensor's dtype, shape and byte range, then the data. */
typedef struct
{
    unsigned char *buf;
    size_t size;
    char *header; /* NUL-terminated copy */
    size_t data;  /* offset of the data */
} fixture;

static bool
load_fixture(fixture *fx)
{
    FILE *fp = fopen(fixture_path(), "rb");
    uint64_t hl = 0;
    long len;

    memset(fx, 0, sizeof *fx);
    if (fp == NULL)
        return false;
    if (fseek(fp, 0, SEEK_END) != 0 || (len = ftell(fp)) < 8
        || fseek(fp, 0, SEEK_SET) != 0) {
        fclose(fp);
        return false;
    }
    fx->size = (size_t)len;
    fx->buf = malloc(fx->size);
    if (fx->buf == NULL || fread(fx->buf, 1, fx->size, fp) != fx->size) {
        fclose(fp);
        return false;
    }
    fclose(fp);
    for (unsigned i = 0; i < 8; i++)
        hl |= (uint64_t)fx->buf[i] << (8 * i);
    if (hl > fx->size - 8)
        return false;
    fx->header = malloc((size_t)hl + 1);
    if (fx->header == NULL)
        return false;
    memcpy(fx->header, fx->buf + 8, (size_t)hl);
    fx->header[hl] = '\0';
    fx->data = 8 + (size_t)hl;
    return true;
}

/* The tensor KEY: its element size (2 for U16, 4 for U32), shape (rows,
   cols; cols 1 for a vector) and data; false if absent or malformed. */
typedef struct
{
    unsigned elem;
    size_t rows, cols;
    const unsigned char *p;
} tensor;

static bool
find_tensor(const fixture *fx, const char *key, tensor *t)
{
    char pat[256];
    const char *s, *end, *q;
    unsigned long long o0, o1, d0 = 0, d1 = 1;

    snprintf(pat, sizeof pat, "\"%s\":", key);
    s = strstr(fx->header, pat);
    if (s == NULL)
        return false;
    end = strchr(s, '}');
    if (end == NULL)
        return false;
    q = strstr(s, "\"dtype\"");
    if (q == NULL || q > end)
        return false;
    t->elem = strstr(q, "U16") != NULL && strstr(q, "U16") < end ? 2 : 4;
    q = strstr(s, "\"shape\"");
    if (q == NULL || q > end
        || sscanf(q, "\"shape\":[%llu,%llu]", &d0, &d1) < 1)
        return false;
    if (strchr(q, ']') < strchr(q, ','))
        d1 = 1;
    q = strstr(s, "\"data_offsets\"");
    if (q == NULL || q > end
        || sscanf(q, "\"data_offsets\":[%llu,%llu]", &o0, &o1) != 2)
        return false;
    if (o1 < o0 || fx->data + o1 > fx->size || (o1 - o0) != d0 * d1 * t->elem)
        return false;
    t->rows = (size_t)d0;
    t->cols = (size_t)d1;
    t->p = fx->buf + fx->data + o0;
    return true;
}

static uint32_t
element(const tensor *t, size_t i)
{
    const unsigned char *p = t->p + i * t->elem;
    return t->elem == 2 ? (uint32_t)p[0] | (uint32_t)p[1] << 8
                        : (uint32_t)p[0] | (uint32_t)p[1] << 8
                              | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

START_TEST(test_fixture)
{
    fixture fx;
    sf_mma_model models[N_MODELS];
    static const char *const names[N_MODELS] = {
        "sm90", "zero C in max (MMA-Sim)", "overflow IEEE RZ", "F=24"};
    unsigned long n[N_PATHS] = {0}, ok[N_MODELS][N_PATHS];
    unsigned printed = 0, n_sets = 0;
    const char *h;

    memset(ok, 0, sizeof ok);
    ck_assert_msg(load_fixture(&fx), "cannot read %s", fixture_path());
    for (unsigned i = 0; i < N_MODELS; i++)
        models[i] = *sf_mma_preset_by_name("sm90");
    models[1].zero_c_in_max = true;
    models[1].emax_floor = SF_MMA_NO_FLOOR;
    models[2].overflow = SF_MMA_OVF_IEEE;
    models[3].frac_bits = 24;

    /* every tensor named "<fmt>.<set>.a" starts a set */
    for (h = strstr(fx.header, ".a\":"); h != NULL;
         h = strstr(h + 1, ".a\":")) {
        const char *start = h;
        char prefix[128], key[160];
        tensor ta, tb, tc;
        const sf_format *f;

        while (start > fx.header && start[-1] != '"')
            start--;
        if ((size_t)(h - start) >= sizeof prefix)
            continue;
        memcpy(prefix, start, (size_t)(h - start));
        prefix[h - start] = '\0';
        f = strncmp(prefix, "f16.", 4) == 0 ? &sf_format_f16 : &sf_format_bf16;
        snprintf(key, sizeof key, "%s.a", prefix);
        ck_assert_msg(find_tensor(&fx, key, &ta), "%s", key);
        snprintf(key, sizeof key, "%s.b", prefix);
        ck_assert_msg(find_tensor(&fx, key, &tb), "%s", key);
        snprintf(key, sizeof key, "%s.c", prefix);
        ck_assert_msg(find_tensor(&fx, key, &tc), "%s", key);
        ck_assert(ta.rows == tb.rows && ta.cols == tb.cols
                  && tc.rows == ta.rows && ta.elem == 2 && tb.elem == 2);
        n_sets++;
        for (unsigned p = 0; p < N_PATHS; p++) {
            tensor td;
            snprintf(key, sizeof key, "%s.%s", prefix, path_names[p]);
            if (!find_tensor(&fx, key, &td))
                continue;
            ck_assert(td.rows == ta.rows);
            for (size_t v = 0; v < ta.rows; v++) {
                uint16_t a[64], b[64];
                uint32_t c = element(&tc, v), d = element(&td, v);
                size_t k = ta.cols < 64 ? ta.cols : 64;
                for (size_t t = 0; t < k; t++) {
                    a[t] = (uint16_t)element(&ta, v * ta.cols + t);
                    b[t] = (uint16_t)element(&tb, v * tb.cols + t);
                }
                n[p]++;
                for (unsigned mi = 0; mi < N_MODELS; mi++) {
                    sf_env env = SF_ENV_NVIDIA;
                    uint32_t z = (uint32_t)sf_mma_dot(&models[mi], f, a, 1, f,
                                                      b, 1, k, c, &env);
                    if (z == d) {
                        ok[mi][p]++;
                    } else if (mi == 0 && printed < TST_MAX_PRINT) {
                        printed++;
                        printf("%s[%zu] %s: c=%08x expected %08x got %08x "
                               "a=",
                               prefix, v, path_names[p], (unsigned)c,
                               (unsigned)d, (unsigned)z);
                        for (size_t t = 0; t < k; t++)
                            printf("%04x", (unsigned)a[t]);
                        printf(" b=");
                        for (size_t t = 0; t < k; t++)
                            printf("%04x", (unsigned)b[t]);
                        printf("\n");
                    }
                }
            }
        }
    }
    printf("h200 fixture: %u sets\n", n_sets);
    for (unsigned mi = 0; mi < N_MODELS; mi++)
        printf("  %-26s mma.sync %lu/%lu, wgmma ss %lu/%lu, wgmma rs "
               "%lu/%lu\n",
               names[mi], ok[mi][0], n[0], ok[mi][1], n[1], ok[mi][2], n[2]);
    free(fx.buf);
    free(fx.header);
    ck_assert_msg(n_sets > 0 && n[0] > 0, "no vectors in the fixture");
    for (unsigned p = 0; p < N_PATHS; p++)
        ck_assert_msg(ok[0][p] == n[p], "sm90: %s matches %lu of %lu",
                      path_names[p], ok[0][p], n[p]);
    for (unsigned mi = 1; mi < N_MODELS; mi++)
        ck_assert_msg(ok[mi][0] < n[0], "%s matches every vector too",
                      names[mi]);
}
END_TEST

int
main(void)
{
    FILE *fp = fopen(fixture_path(), "rb");
    Suite *s;

    if (fp == NULL) {
        printf("test_mma_h200: skipped: no fixture at %s\n", fixture_path());
        return 77;
    }
    fclose(fp);
    s = suite_create("mma_h200");
    tcase_add_test(tst_add_tcase(s, "fixture", 120), test_fixture);
    return tst_run_suite(s);
}
