/* test_mma_tcvalid.c -- the sm90 preset against the published H200 and H100
   tensor-core vectors (one BF16 16-term block plus an FP32 C each) */
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

#define N_VEC 5000
#define N_TERMS 16
#define LINE_MAX_LEN 1024

/* The data directory: $BF16EMU_TC_VALIDATION, else the shared copy next
   to the source tree. */
static const char *
data_dir(void)
{
    const char *e = getenv("BF16EMU_TC_VALIDATION");
    return e != NULL && *e != '\0' ? e : SRCDIR "/../shared/tc-validation";
}

typedef struct
{
    uint64_t a[N_VEC][N_TERMS], b[N_VEC][N_TERMS];
    uint64_t c[N_VEC], d[N_VEC];
    size_t n;
} tc_set;

static int
hex_digit(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* One line of N_TERMS hex words (FP32 patterns holding a BF16 in the top
   half) into OUT as BF16 bits; false on a malformed line. */
static bool
parse_hex_line(const char *s, uint64_t *out)
{
    for (unsigned t = 0; t < N_TERMS; t++) {
        uint32_t w = 0;
        unsigned nd = 0;
        while (*s == ' ' || *s == '\t')
            s++;
        for (int v; (v = hex_digit((unsigned char)*s)) >= 0; s++, nd++)
            w = w << 4 | (uint32_t)v;
        if (nd == 0 || nd > 8 || (w & 0xFFFFu) != 0)
            return false;
        out[t] = w >> 16;
    }
    return true;
}

/* A line of exactly 32 '0'/'1' characters. */
static bool
parse_bin_line(const char *s, uint64_t *out)
{
    uint32_t w = 0;
    for (unsigned i = 0; i < 32; i++) {
        if (s[i] != '0' && s[i] != '1')
            return false;
        w = w << 1 | (uint32_t)(s[i] - '0');
    }
    *out = w;
    return s[32] == '\0' || s[32] == '\n' || s[32] == '\r' || s[32] == ' ';
}

/* Reads <dir>/<gpu>-bf16/{a,b}_<gpu>_bf16.txt and {c,d}_<gpu>_fp32.txt;
   returns the number of complete vectors (0 on any error). */
static size_t
load_set(const char *gpu, tc_set *set)
{
    static const char *const kinds[4] = {"a", "b", "c", "d"};
    size_t counts[4] = {0, 0, 0, 0};

    for (unsigned f = 0; f < 4; f++) {
        char path[4096], line[LINE_MAX_LEN];
        FILE *fp;
        snprintf(path, sizeof path, "%s/%s-bf16/%s_%s_%s.txt", data_dir(), gpu,
                 kinds[f], gpu, f < 2 ? "bf16" : "fp32");
        fp = fopen(path, "r");
        if (fp == NULL) {
            printf("tcvalid: cannot open %s\n", path);
            return 0;
        }
        while (counts[f] < N_VEC && fgets(line, sizeof line, fp) != NULL) {
            size_t i = counts[f];
            bool ok;
            if (line[0] == '\n' || line[0] == '\0')
                continue;
            ok = f == 0   ? parse_hex_line(line, set->a[i])
                 : f == 1 ? parse_hex_line(line, set->b[i])
                 : f == 2 ? parse_bin_line(line, &set->c[i])
                          : parse_bin_line(line, &set->d[i]);
            if (!ok) {
                printf("tcvalid: %s line %zu malformed\n", path, i + 1);
                fclose(fp);
                return 0;
            }
            counts[f]++;
        }
        fclose(fp);
    }
    if (counts[0] != counts[1] || counts[0] != counts[2]
        || counts[0] != counts[3])
        return 0;
    set->n = counts[0];
    return set->n;
}

/* Number of vectors of SET model M reproduces; prints up to PRINT
   mismatches. */
static size_t
count_matches(const sf_mma_model *m, const tc_set *set, unsigned print)
{
    size_t ok = 0;
    unsigned printed = 0;

    for (size_t i = 0; i < set->n; i++) {
        sf_env env = SF_ENV_NVIDIA;
        uint64_t z =
            sf_mma_block(m, &sf_format_bf16, set->a[i], &sf_format_bf16,
                         set->b[i], N_TERMS, set->c[i], &env);
        if (z == set->d[i]) {
            ok++;
        } else if (printed < print) {
            printed++;
            printf("%s vector %zu: a=", m->name, i + 1);
            for (unsigned t = 0; t < N_TERMS; t++)
                printf("%04x%s", (unsigned)set->a[i][t],
                       t + 1 < N_TERMS ? "," : "");
            printf(" b=");
            for (unsigned t = 0; t < N_TERMS; t++)
                printf("%04x%s", (unsigned)set->b[i][t],
                       t + 1 < N_TERMS ? "," : "");
            printf(" c=%08x expected %08x got %08x\n", (unsigned)set->c[i],
                   (unsigned)set->d[i], (unsigned)z);
        }
    }
    return ok;
}

static void
check_gpu(const char *gpu)
{
    static tc_set set;
    const sf_mma_model *sm90 = sf_mma_preset_by_name("sm90");
    sf_mma_model f24, f26;
    size_t n, ok, ok24, ok26;

    ck_assert_ptr_nonnull(sm90);
    n = load_set(gpu, &set);
    ck_assert_msg(n == N_VEC, "%s: read %zu complete vectors, expected %d",
                  gpu, n, N_VEC);
    ok = count_matches(sm90, &set, 10);
    f24 = *sm90;
    f24.frac_bits = 24;
    f24.name = "sm90-F24";
    f26 = *sm90;
    f26.frac_bits = 26;
    f26.name = "sm90-F26";
    ok24 = count_matches(&f24, &set, 0);
    ok26 = count_matches(&f26, &set, 0);
    printf("tcvalid %s: sm90 (n=16, F=25, RZ) %zu/%zu; sensitivity: F=24 "
           "%zu/%zu, F=26 %zu/%zu\n",
           gpu, ok, n, ok24, n, ok26, n);
    ck_assert_msg(ok == n, "%s: sm90 matches %zu of %zu vectors", gpu, ok, n);
    /* the data separate neighbouring models, so the check can fail */
    ck_assert_msg(ok24 < n && ok26 < n,
                  "%s: F=24 or F=26 also matches every vector", gpu);
}

START_TEST(test_h200)
{
    check_gpu("H200");
}
END_TEST

START_TEST(test_h100)
{
    check_gpu("H100");
}
END_TEST

static Suite *
tcvalid_suite(void)
{
    Suite *s = suite_create("mma_tcvalid");
    TCase *tc = tst_add_tcase(s, "published vectors", 120);

    tcase_add_test(tc, test_h200);
    tcase_add_test(tc, test_h100);
    return s;
}

int
main(void)
{
    char path[4096];
    FILE *fp;

    snprintf(path, sizeof path, "%s/H200-bf16/a_H200_bf16.txt", data_dir());
    fp = fopen(path, "r");
    if (fp == NULL) {
        printf("test_mma_tcvalid: skipped: no tensor-core vectors at %s "
               "(set BF16EMU_TC_VALIDATION)\n",
               data_dir());
        return 77;
    }
    fclose(fp);
    return tst_run_suite(tcvalid_suite());
}
