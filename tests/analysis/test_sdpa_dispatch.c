/* test_sdpa_dispatch.c -- the PyTorch 2.11 SDPA backend rule against what
   the H200 ran: every case of the dispatch grid (the backend
   torch._fused_sdp_choice returned and the kernels the profiler saw) and
   every pinned backend of the 25 backend dumps (their kernels); the
   expected kernel variant is read off the recorded kernel names.  And
   the split count of cuDNN's decode engine against the grid.x of every
   recorded decode launch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sdpa_dispatch_pt211_h200.h"
#include "analysis/tensor.h"
#include "tests/support/suite.h"

#define BK_DIR SRCDIR "/tests/data/gpu/backends/"
#define CU_DIR SRCDIR "/tests/data/gpu/cudnn/"

static json_t *
load(const char *path)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (j == NULL)
        ck_abort_msg("%s: %s (line %d)", path, err.text, err.line);
    return j;
}

static long long
geti(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    ck_assert_msg(json_is_integer(v), "field %s: expected an integer", k);
    return (long long)json_integer_value(v);
}

static bool
has(json_t *kernels, const char *s)
{
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        if (json_is_string(k) && strstr(json_string_value(k), s) != NULL)
            return true;
    }
    return false;
}

static const char *
find(json_t *kernels, const char *s)
{
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        if (json_is_string(k) && strstr(json_string_value(k), s) != NULL)
            return json_string_value(k);
    }
    return NULL;
}

/* The kernel variant (as the header names it) read off the kernel names
   the profiler recorded for BACKEND; "" when they show none. */
static void
variant_from_kernels(json_t *kernels, const char *backend, char *v,
                     size_t size)
{
    const char *k;
    v[0] = '\0';
    if (strcmp(backend, "cudnn") == 0
        && (k = find(kernels, "cudnn_generated_fort_native_sdpa_")) != NULL) {
        const char *s = strstr(k, "native_sdpa_") + strlen("native_sdpa_");
        const char *e = strstr(s, "_cga");
        char buf[160];
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *cut;
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        cut = strrchr(buf, '_'); /* the warp layout, e.g. _4x1x1 */
        if (cut != NULL)
            *cut = '\0';
        snprintf(v, size, "%.70s%s", buf,
                 has(kernels, "lean_reduction_kernel") ? " + lean_reduction"
                                                       : "");
    } else if (strcmp(backend, "flash") == 0
               && (k = find(kernels, "Flash_fwd_kernel_traits<")) != NULL) {
        const char *kk = find(kernels, "flash_fwd_splitkv_kernel<");
        const char *t;
        if (kk == NULL)
            kk = find(kernels, "flash_fwd_kernel<");
        if (kk == NULL)
            return;
        t = strstr(kk, "Flash_fwd_kernel_traits<")
            + strlen("Flash_fwd_kernel_traits<");
        snprintf(v, size, "%s hdim %d",
                 strstr(kk, "splitkv") ? "flash_fwd_splitkv_kernel"
                                       : "flash_fwd_kernel",
                 atoi(t));
    } else if (strcmp(backend, "efficient") == 0
               && (k = find(kernels, "fmha_cutlassF_")) != NULL) {
        const char *s = strstr(k, "fmha_cutlassF_");
        size_t n = strcspn(s, "(");
        snprintf(v, size, "%.*s", (int)n, s);
    } else if (strcmp(backend, "math") == 0
               && has(kernels, "softmax_warp_forward<float")) {
        if (has(kernels, "gemv"))
            snprintf(v, size, "fp32 gemv+softmax");
        else if (has(kernels, "gemm_f32f32"))
            snprintf(v, size, "fp32 gemm+softmax");
    }
}

static void
describe(const sdpa_case *c, char *s, size_t size)
{
    snprintf(s, size,
             "rank %d, B %lld, H %lld, Hkv %lld, nq %lld, nk %lld, d %lld, "
             "%s, causal %d, mask %s%s, dropout %g, gqa %d, requires_grad "
             "%d, deterministic %d, enabled {%s%s%s%s}, sm %d.%d, cudnn %ld",
             c->rank, (long long)c->batch, (long long)c->heads,
             (long long)c->kv_heads, (long long)c->nq, (long long)c->nk,
             (long long)c->d,
             c->dtype == SDPA_DT_BF16  ? "bf16"
             : c->dtype == SDPA_DT_F16 ? "f16"
                                       : "f32",
             c->causal,
             c->mask == SDPA_MASK_NONE   ? "none"
             : c->mask == SDPA_MASK_BOOL ? "bool"
                                         : "float",
             c->mask_requires_grad ? " (requires grad)" : "", c->dropout,
             c->enable_gqa, c->requires_grad, c->deterministic,
             c->enabled & SDPA_EN_CUDNN ? " cudnn" : "",
             c->enabled & SDPA_EN_FLASH ? " flash" : "",
             c->enabled & SDPA_EN_EFFICIENT ? " efficient" : "",
             c->enabled & SDPA_EN_MATH ? " math" : "", c->sm_major,
             c->sm_minor, c->cudnn_version);
}

static void
set_cc(sdpa_case *c, json_t *top)
{
    const char *cc = json_string_value(json_object_get(top, "cc"));
    ck_assert_msg(cc != NULL, "field cc: expected a string");
    ck_assert_int_eq(sscanf(cc, "%d.%d", &c->sm_major, &c->sm_minor), 2);
    c->cudnn_version = (long)geti(top, "cudnn");
}

static sdpa_dtype
dtype_of(const char *s)
{
    if (strcmp(s, "bf16") == 0 || strcmp(s, "bfloat16") == 0)
        return SDPA_DT_BF16;
    if (strcmp(s, "fp16") == 0 || strcmp(s, "float16") == 0)
        return SDPA_DT_F16;
    ck_assert_msg(strcmp(s, "fp32") == 0, "dtype %s: unknown", s);
    return SDPA_DT_F32;
}

/* Compares one case; returns 1 on a mismatch (after printing it). */
static int
check_case(const char *label, const sdpa_case *c, const char *want_backend,
           const char *want_variant)
{
    sdpa_choice ch;
    char desc[512];
    sdpa_choose_pt211_h200(c, &ch);
    if (strcmp(sdpa_backend_name(ch.backend), want_backend) == 0
        && (want_variant[0] == '\0' || strcmp(ch.variant, want_variant) == 0))
        return 0;
    describe(c, desc, sizeof desc);
    printf("%s: %s\n  measured: %s [%s]\n  rule:     %s [%s] (%s)\n", label,
           desc, want_backend, want_variant, sdpa_backend_name(ch.backend),
           ch.variant, ch.reason);
    return 1;
}

START_TEST(test_dispatch_grid)
{
    json_t *top = load(BK_DIR "dispatch_h200.json");
    json_t *cases = json_object_get(top, "cases");
    json_t *row;
    size_t i;
    int bad = 0, n = 0, nvar = 0;
    ck_assert(json_is_array(cases));
    json_array_foreach(cases, i, row)
    {
        sdpa_case c = sdpa_case_default();
        const char *mask = json_string_value(json_object_get(row, "mask"));
        const char *choice =
            json_string_value(json_object_get(row, "fused_sdp_choice"));
        json_t *off = json_object_get(row, "off");
        json_t *x;
        size_t j;
        char want[96], label[64];
        set_cc(&c, top);
        c.rank = (int)geti(row, "rank");
        c.batch = geti(row, "batch");
        c.heads = geti(row, "heads");
        c.kv_heads = geti(row, "kv_heads");
        c.nq = geti(row, "nq");
        c.nk = geti(row, "nk");
        c.d = geti(row, "d");
        c.dtype = dtype_of(json_string_value(json_object_get(row, "dtype")));
        c.causal = json_is_true(json_object_get(row, "causal"));
        c.dropout = json_number_value(json_object_get(row, "dropout"));
        c.enable_gqa = json_is_true(json_object_get(row, "gqa"));
        c.requires_grad = json_is_true(json_object_get(row, "requires_grad"));
        c.deterministic = json_is_true(json_object_get(row, "deterministic"));
        if (mask != NULL) {
            c.mask = strncmp(mask, "bool", 4) == 0 ? SDPA_MASK_BOOL
                                                   : SDPA_MASK_FLOAT;
            c.mask_requires_grad = strstr(mask, "grad") != NULL;
        }
        json_array_foreach(off, j, x)
        {
            const char *b = json_string_value(x);
            c.enabled &=
                ~(unsigned)(strcmp(b, "cudnn") == 0       ? SDPA_EN_CUDNN
                            : strcmp(b, "flash") == 0     ? SDPA_EN_FLASH
                            : strcmp(b, "efficient") == 0 ? SDPA_EN_EFFICIENT
                                                          : SDPA_EN_MATH);
        }
        ck_assert_msg(choice != NULL, "case %zu: no fused_sdp_choice", i);
        if (strncmp(choice, "raised", 6) == 0)
            choice = "error";
        want[0] = '\0';
        x = json_object_get(row, "kernels");
        if (json_is_array(x)) {
            const char *seen =
                json_string_value(json_object_get(row, "backend_seen"));
            /* the recorded run agrees with the recorded choice */
            ck_assert_msg(seen != NULL && strcmp(seen, choice) == 0,
                          "grid case %zu: ran %s, chose %s", i,
                          seen ? seen : "nothing", choice);
            variant_from_kernels(x, choice, want, sizeof want);
            ck_assert_msg(want[0] != '\0',
                          "grid case %zu: no %s kernel among those recorded",
                          i, choice);
            nvar++;
        }
        snprintf(label, sizeof label, "grid case %zu", i);
        bad += check_case(label, &c, choice, want);
        n++;
    }
    printf("dispatch grid: %d cases (%d with kernels), %d mismatches\n", n,
           nvar, bad);
    ck_assert_int_ge(n, 114);
    ck_assert_int_eq(bad, 0);
    json_decref(top);
}
END_TEST

START_TEST(test_pinned_dumps)
{
    DIR *dir = opendir(BK_DIR);
    struct dirent *e;
    int bad = 0, n = 0, files = 0;
    ck_assert_msg(dir != NULL, "%s: cannot open", BK_DIR);
    while ((e = readdir(dir)) != NULL) {
        char path[1024];
        json_t *m, *ls, *bes, *be;
        const char *name;
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0
            || strstr(e->d_name, "_h200") != NULL)
            continue;
        snprintf(path, sizeof path, "%s%s", BK_DIR, e->d_name);
        m = load(path);
        ls = json_object_get(m, "launch_shape");
        bes = json_object_get(m, "backends");
        files++;
        json_object_foreach(bes, name, be)
        {
            sdpa_case c = sdpa_case_default();
            json_t *k = json_object_get(be, "forward_kernels");
            char want[96], label[160];
            ck_assert_msg(json_is_array(k), "%s: %s has no kernels", e->d_name,
                          name);
            set_cc(&c, m);
            c.batch = geti(ls, "batch");
            c.heads = c.kv_heads = geti(ls, "heads");
            c.nq = geti(ls, "nq");
            c.nk = geti(ls, "nk");
            c.d = geti(ls, "d");
            c.dtype = dtype_of(json_string_value(json_object_get(m, "dtype")));
            c.causal = json_is_true(json_object_get(m, "causal"));
            c.deterministic = strcmp(name, "cudnn") != 0;
            c.enabled = strcmp(name, "cudnn") == 0       ? SDPA_EN_CUDNN
                        : strcmp(name, "flash") == 0     ? SDPA_EN_FLASH
                        : strcmp(name, "efficient") == 0 ? SDPA_EN_EFFICIENT
                                                         : SDPA_EN_MATH;
            variant_from_kernels(k, name, want, sizeof want);
            ck_assert_msg(want[0] != '\0', "%s: no %s kernel recorded",
                          e->d_name, name);
            snprintf(label, sizeof label, "%.100s, %s pinned", e->d_name,
                     name);
            bad += check_case(label, &c, name, want);
            n++;
        }
        json_decref(m);
    }
    closedir(dir);
    printf("pinned dumps: %d files, %d backend runs, %d mismatches\n", files,
           n, bad);
    ck_assert_int_eq(files, 25);
    ck_assert_int_eq(n, 100);
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* One recorded decode launch of cuDNN: the engine's grid (-1 where not
   recorded), whether lean_reduction_kernel ran (-1: not recorded) and the
   variant read off the kernel names ("" when not recorded). */
typedef struct
{
    long long grid[3];
    int lean;
    char variant[96];
} decode_seen;

/* The rule's decode launch for C against SEEN.  Returns 1 on a mismatch
   (after printing it). */
static int
check_split(const char *label, const sdpa_case *c, const decode_seen *seen)
{
    sdpa_choice ch;
    int64_t g[3];
    char desc[512];
    bool rule_lean, ok;
    int j;
    sdpa_choose_pt211_h200(c, &ch);
    sdpa_cudnn_decode_grid_pt211_h200(c, g);
    rule_lean = strstr(ch.variant, "lean_reduction") != NULL;
    /* splits (the key split count) is grid.x or, above d = 128, half
       of it; the reduction runs iff grid.x > 1 */
    ok = ch.backend == SDPA_BACKEND_CUDNN
         && (long long)g[0] == seen->grid[0]
         && (ch.splits > 1) == (g[0] > 1)
         && (seen->lean < 0 || rule_lean == (seen->lean > 0))
         && (seen->variant[0] == '\0'
             || strcmp(ch.variant, seen->variant) == 0);
    for (j = 0; j < 3; j++)
        ok = ok && (seen->grid[j] < 0 || (long long)g[j] == seen->grid[j]);
    if (ok)
        return 0;
    describe(c, desc, sizeof desc);
    printf("%s: %s\n  measured: grid [%lld, %lld, %lld] (0x%llx), "
           "lean_reduction %s [%s]\n"
           "  rule:     %s, grid [%lld, %lld, %lld], splits %u (0x%x), "
           "lean_reduction %s [%s]\n",
           label, desc, seen->grid[0], seen->grid[1], seen->grid[2],
           (unsigned long long)seen->grid[0],
           seen->lean < 0 ? "not recorded" : seen->lean ? "yes" : "no",
           seen->variant, sdpa_backend_name(ch.backend), (long long)g[0],
           (long long)g[1], (long long)g[2], ch.splits, ch.splits,
           rule_lean ? "yes" : "no", ch.variant);
    return 1;
}

/* The cuDNN engine launch among LAUNCHES ([{name, grid, block}]) into
   SEEN; returns 0 when none is there. */
static int
engine_launch(json_t *launches, decode_seen *seen)
{
    json_t *names = json_array();
    size_t i;
    json_t *l;
    int found = 0, j;
    seen->lean = 0;
    seen->variant[0] = '\0';
    for (j = 0; j < 3; j++)
        seen->grid[j] = -1;
    json_array_foreach(launches, i, l)
    {
        const char *name = json_string_value(json_object_get(l, "name"));
        json_t *g = json_object_get(l, "grid");
        if (name == NULL)
            continue;
        json_array_append_new(names, json_string(name));
        if (strstr(name, "lean_reduction_kernel") != NULL)
            seen->lean = 1;
        if (strstr(name, "flash_fprop") != NULL) {
            ck_assert_msg(json_is_array(g) && json_array_size(g) == 3,
                          "%s: grid: expected [x, y, z]", name);
            for (j = 0; j < 3; j++)
                seen->grid[j] = (long long)json_integer_value(
                    json_array_get(g, (size_t)j));
            found = 1;
        }
    }
    if (found)
        variant_from_kernels(names, "cudnn", seen->variant,
                             sizeof seen->variant);
    json_decref(names);
    return found;
}

/* The decode cases (one query row) of a list of recorded calls in the
   form of dispatch_h200.json (or the split probe's, the same fields):
   those that ran cuDNN's engine. */
static int
splits_of_cases(const char *path, int *n)
{
    json_t *top = load(path);
    json_t *cases = json_object_get(top, "cases");
    json_t *row;
    size_t i;
    int bad = 0;
    ck_assert_msg(json_is_array(cases), "%s: cases: expected a list", path);
    json_array_foreach(cases, i, row)
    {
        sdpa_case c = sdpa_case_default();
        json_t *ls = json_object_get(row, "launches");
        decode_seen seen;
        char label[160];
        if (geti(row, "nq") != 1 || !json_is_array(ls)
            || !engine_launch(ls, &seen))
            continue;
        set_cc(&c, top);
        c.batch = geti(row, "batch");
        c.heads = geti(row, "heads");
        c.kv_heads = geti(row, "kv_heads");
        c.nq = 1;
        c.nk = geti(row, "nk");
        c.d = geti(row, "d");
        c.dtype = dtype_of(json_string_value(json_object_get(row, "dtype")));
        c.causal = json_is_true(json_object_get(row, "causal"));
        c.enable_gqa = json_is_true(json_object_get(row, "gqa"));
        c.enabled = SDPA_EN_CUDNN;
        snprintf(label, sizeof label, "%.120s case %zu", path, i);
        bad += check_split(label, &c, &seen);
        (*n)++;
    }
    json_decref(top);
    return bad;
}

START_TEST(test_decode_splits)
{
    static const char *const dumps[] = {
        /* cuDNN pinned, one query row: their manifests' launches */
        CU_DIR "dec_d64_nk1024.json",       CU_DIR "dec_d64_nk4096.json",
        CU_DIR "dec_d128_nk2048.json",      CU_DIR "dec_d128_nk600.json",
        CU_DIR "dec_d64_nk1000_sink.json",  CU_DIR "dec_d64_nk1024_fp16.json",
        CU_DIR "dec_d64_nk1024_default.json", CU_DIR "lean_d64_nk513.json",
        CU_DIR "lean_d64_nk600.json",       CU_DIR "lean_d128_nk700.json",
        CU_DIR "lean_d64_nk1000.json",      CU_DIR "lean_d64_nk1024.json",
        CU_DIR "lean_d64_nk1536.json",      BK_DIR "decode_d128_nk256.json",
        BK_DIR "decode_d64_nk512.json",     BK_DIR "decode_d64_nk512_fp16.json",
        BK_DIR "decode_d64_nk512_sink.json"};
    tensor_listing l = TENSOR_LISTING_INIT;
    tensor_error err;
    json_t *pm = NULL, *pc, *pv;
    const char *pname;
    int bad = 0, n = 0, nprobe = 0, nsplit = 0;
    size_t i;

    bad += splits_of_cases(BK_DIR "dispatch_h200.json", &n);
    /* the split probe: 212 shapes, every one a decode launch of cuDNN */
    bad += splits_of_cases(CU_DIR "decode_splits_h200.json", &nsplit);
    for (i = 0; i < sizeof dumps / sizeof dumps[0]; i++) {
        json_t *m = load(dumps[i]);
        json_t *ls = json_object_get(m, "launch_shape");
        json_t *la = json_object_get(m, "forward_launches");
        sdpa_case c = sdpa_case_default();
        decode_seen seen;
        if (la == NULL) /* a backend dump: cuDNN's run */
            la = json_object_get(
                json_object_get(json_object_get(m, "backends"), "cudnn"),
                "forward_launches");
        ck_assert_msg(engine_launch(la, &seen) && geti(ls, "nq") == 1,
                      "%s: expected a decode launch of cuDNN's engine",
                      dumps[i]);
        set_cc(&c, m);
        c.batch = geti(ls, "batch");
        c.heads = c.kv_heads = geti(ls, "heads");
        c.nq = 1;
        c.nk = geti(ls, "nk");
        c.d = geti(ls, "d");
        c.dtype = dtype_of(json_string_value(json_object_get(m, "dtype")));
        c.causal = json_is_true(json_object_get(m, "causal"));
        c.enabled = SDPA_EN_CUDNN;
        bad += check_split(dumps[i], &c, &seen);
        n++;
        json_decref(m);
    }
    /* the crafted decode rows: launches of 27 or 32 heads, the grid.x
       the probe saw ("splits_seen") */
    ck_assert_int_eq(safetensors_list(CU_DIR "lean_probe_h200.safetensors",
                                      &l, &err),
                     0);
    for (i = 0; i < l.n_meta; i++)
        if (strcmp(l.meta[i].key, "manifest") == 0)
            pm = json_loads(l.meta[i].value, 0, NULL);
    ck_assert_msg(pm != NULL, "lean_probe_h200: no manifest");
    pc = json_object_get(pm, "cases");
    json_object_foreach(pc, pname, pv)
    {
        sdpa_case c = sdpa_case_default();
        decode_seen seen = {{-1, -1, -1}, -1, ""};
        char label[96];
        if (json_object_get(pv, "splits_seen") == NULL)
            continue;
        seen.grid[0] = geti(pv, "splits_seen");
        c.heads = c.kv_heads = geti(pv, "launch_heads");
        c.nq = 1;
        c.nk = geti(pv, "nk");
        c.d = geti(pv, "d");
        c.enabled = SDPA_EN_CUDNN;
        snprintf(label, sizeof label, "lean_probe_h200 %.40s", pname);
        bad += check_split(label, &c, &seen);
        nprobe++;
    }
    json_decref(pm);
    tensor_listing_free(&l);
    printf("decode splits: %d recorded launches, %d split-probe launches, "
           "%d crafted-row launches, %d mismatches\n",
           n, nsplit, nprobe, bad);
    ck_assert_int_ge(n, 44);
    ck_assert_int_eq(nsplit, 212);
    ck_assert_int_ge(nprobe, 6);
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* The rule on hand-made cases that the grid does not hold (from the
   constraints, not measured): no enabled backend, an old cuDNN, sm80. */
START_TEST(test_constructed)
{
    sdpa_case c = sdpa_case_default();
    sdpa_choice ch;
    c.nq = c.nk = 128;
    c.d = 64;
    c.enabled = 0;
    ck_assert_int_eq(sdpa_choose_pt211_h200(&c, &ch), SDPA_BACKEND_ERROR);
    c.enabled = SDPA_EN_ALL;
    c.cudnn_version = 91000; /* not preferred: flash first */
    ck_assert_int_eq(sdpa_choose_pt211_h200(&c, &ch), SDPA_BACKEND_FLASH);
    c.cudnn_version = 91900;
    c.sm_major = 8; /* sm80: flash first */
    ck_assert_int_eq(sdpa_choose_pt211_h200(&c, &ch), SDPA_BACKEND_FLASH);
    c.enabled = SDPA_EN_CUDNN | SDPA_EN_EFFICIENT;
    ck_assert_int_eq(sdpa_choose_pt211_h200(&c, &ch), SDPA_BACKEND_EFFICIENT);
    ck_assert_msg(strstr(ch.reason, "flash: disabled") != NULL, "reason: %s",
                  ch.reason);
    c.enabled = SDPA_EN_CUDNN;
    ck_assert_int_eq(sdpa_choose_pt211_h200(&c, &ch), SDPA_BACKEND_CUDNN);
    /* the decode launches of 135 and 270 heads that the crafted-row probe
       ran before it chunked its heads (doc/notes/gpu-crosscheck-log.md,
       "Crafted decode rows", kept as a note, not a file): the engine's
       grid [1, H] and no lean_reduction_kernel at every Nk up to 4096 */
    c.nq = 1;
    for (int h = 135; h <= 270; h += 135)
        for (int64_t nk = 513; nk <= 4096; nk *= 2) {
            c.heads = c.kv_heads = h;
            c.nk = nk;
            ck_assert_int_eq(sdpa_choose_pt211_h200(&c, &ch),
                             SDPA_BACKEND_CUDNN);
            ck_assert_msg(ch.splits == 1
                              && strstr(ch.variant, "lean_reduction") == NULL,
                          "H %d, Nk %lld: splits %u (0x%x), %s", h,
                          (long long)nk, ch.splits, ch.splits, ch.variant);
        }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("sdpa_dispatch");
    TCase *tc = tst_add_tcase(s, "pt211_h200", 60);
    tcase_add_test(tc, test_dispatch_grid);
    tcase_add_test(tc, test_pinned_dumps);
    tcase_add_test(tc, test_decode_splits);
    tcase_add_test(tc, test_constructed);
    return tst_run_suite(s);
}
