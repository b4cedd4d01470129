/* mma_fixture.c -- builds the committed tensor-core fixture from the
 * results of mma_probe.
 *
 * Usage: mma_fixture [--driver STR] DIR OUT.safetensors OUT.json
 *
 * DIR holds mma.safetensors, wgmma_ss.safetensors and wgmma_rs.safetensors
 * as mma_probe writes them.  The inputs are regenerated with
 * probe_vectors.c (and checked against the input hashes the probe
 * recorded); every directed vector and the first vectors of each random
 * set go into the fixture with their inputs and the D bits of each
 * instruction path.  Tensors, for fmt in {bf16, f16} and each set:
 *
 *   <fmt>.<set>.a            U16 [n, K]  a bits
 *   <fmt>.<set>.b            U16 [n, K]  b bits
 *   <fmt>.<set>.c            U32 [n]     c bits
 *   <fmt>.<set>.index        U32 [n]     index of the vector in its set
 *   <fmt>.<set>.d_mma        U32 [n]     D from mma.sync
 *   <fmt>.<set>.d_wgmma_ss   U32 [n]     D from wgmma, A and B in smem
 *   <fmt>.<set>.d_wgmma_rs   U32 [n]     D from wgmma, A in registers
 *
 * For each random set a second group, <fmt>.<set>_select, holds the
 * vectors beyond the sample on which the readings of probe_tools.h disagree
 * among themselves (those that decide the all-tiny corner; up to
 * SELECT_MAX, the ones separating TC_FLOOR133 from TC_PLAIN first),
 * taken from the whole mma run, with .a, .b, .c, .index and .d_mma only.
 *
 * The JSON manifest repeats the probe runs' manifests and lists the tags
 * of the directed vectors.  Both files are written atomically and
 * replace existing ones. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#endif

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tensor.h"
#include "experiments/gpu/probe_vectors.h"
#include "experiments/gpu/probe_tools.h"

#define SELECT_MAX 256
#define NAMELEN 96

#define NINSTR 3
static const char *const instrs[NINSTR] = {"mma", "wgmma_ss", "wgmma_rs"};

/* Vectors of each random set in the fixture, per format. */
static long
quota(int fmt, int set)
{
    static const long bf16[PV_NSET] = {0,    0,    0,    0,    0,   0,  2000,
                                       3000, 1000, 1000, 2000, 600, 300};
    static const long f16[PV_NSET] = {0,   0,   0,   0,   0,   0,  600,
                                      800, 300, 300, 300, 200, 100};
    return fmt == PV_BF16 ? bf16[set] : f16[set];
}

static void
die(const char *msg)
{
    fprintf(stderr, "mma_fixture: %s\n", msg);
    exit(1);
}

static void *
xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL)
        die("out of memory");
    return p;
}

/*----------------------------------------------------------------------
 * The fixture's tensors
 *----------------------------------------------------------------------*/

/* The fixture's tensors, in the order they are added (each entry is
 * allocated on its own, so pointers to it stay valid). */
typedef struct
{
    char name[NAMELEN];
    tensor t;
} fx_entry;

typedef struct
{
    fx_entry **e;
    size_t n, cap;
} fx_list;

/* Adds the tensor NAME (printf-style) of DTYPE and shape [N] or [N, K]
 * (K > 0) and returns it, zero-filled. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static tensor *
fx_add(fx_list *l, tensor_dtype dtype, uint64_t n, uint64_t k,
       const char *name, ...)
{
    uint64_t shape[2] = {n, k};
    tensor_error err;
    va_list ap;
    fx_entry *x;

    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 64;
        fx_entry **ne = realloc(l->e, nc * sizeof *ne);
        if (ne == NULL)
            die("out of memory");
        l->e = ne;
        l->cap = nc;
    }
    x = xcalloc(1, sizeof *x);
    l->e[l->n++] = x;
    va_start(ap, name);
    vsnprintf(x->name, sizeof x->name, name, ap);
    va_end(ap);
    x->t = (tensor)TENSOR_INIT;
    if (tensor_alloc(&x->t, dtype, k ? 2 : 1, shape, &err) != TENSOR_OK)
        die(err.message);
    return &x->t;
}

/* The five tensors of one group (a, b, c, index; D added by the caller)
 * from the vectors V[0..N) with indices IDX. */
static void
fx_add_inputs(fx_list *l, const char *group, const pv_vec *v,
              const uint32_t *idx, long n, int k)
{
    tensor *a = fx_add(l, TENSOR_U16, (uint64_t)n, (uint64_t)k, "%s.a", group);
    tensor *b = fx_add(l, TENSOR_U16, (uint64_t)n, (uint64_t)k, "%s.b", group);
    tensor *c = fx_add(l, TENSOR_U32, (uint64_t)n, 0, "%s.c", group);
    tensor *ix = fx_add(l, TENSOR_U32, (uint64_t)n, 0, "%s.index", group);

    for (long j = 0; j < n; j++) {
        for (int t = 0; t < k; t++) {
            uint64_t at = (uint64_t)j * (uint64_t)k + (uint64_t)t;
            tensor_set_bits(a, at, v[j].a[t]);
            tensor_set_bits(b, at, v[j].b[t]);
        }
        tensor_set_bits(c, (uint64_t)j, v[j].c);
        tensor_set_bits(ix, (uint64_t)j, idx[j]);
    }
}

/* Appends S to FP as a JSON string literal. */
static void
json_put_string(FILE *fp, const char *s)
{
    json_t *js = json_string(s);
    char *text = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;

    if (text == NULL)
        die("a string is not valid UTF-8");
    fputs(text, fp);
    free(text);
    json_decref(js);
}

/* Writes LEN bytes of TEXT to PATH through a temporary file and a
 * rename. */
static void
write_atomic(const char *path, const char *text, size_t len)
{
    char tmp[1100];
    FILE *fp;

    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fp = fopen(tmp, "wb");
    if (!fp || fwrite(text, 1, len, fp) != len || fclose(fp) != 0
        || rename(tmp, path) != 0) {
        remove(tmp);
        die("cannot write the manifest");
    }
}

/*----------------------------------------------------------------------
 * The groups
 *----------------------------------------------------------------------*/

/* The _select group of a random set: indices from n0 on (up to nsrc)
 * where the model readings disagree.  Returns the number of vectors. */
static long
add_select(const tc_readings *rd, fx_list *out, FILE *js, int fmt, int set,
           uint64_t seed, long n0, const tensor *dmma, long nsrc)
{
    long pick[SELECT_MAX], n = 0;
    int k = pv_set_k(set);
    pv_vec *v;
    uint32_t *idx;
    tensor *dd;
    char group[NAMELEN];

    /* Two passes: first B != C, then A != B. */
    for (int pass = 0; pass < 2; pass++)
        for (long j = n0; j < nsrc && n < SELECT_MAX; j++) {
            uint32_t r[TC_NREADING];
            pv_vec x;
            int want;
            pv_random(set, fmt, seed, (uint64_t)j, &x);
            for (int z = 0; z < TC_NREADING; z++)
                r[z] = tc_chain(rd, z, fmt, x.a, x.b, x.c, k);
            want = pass == 0 ? r[TC_FLOOR133] != r[TC_PLAIN]
                             : r[TC_FLOOR133] == r[TC_PLAIN]
                                   && r[TC_ZC_MINUS126] != r[TC_FLOOR133];
            if (want)
                pick[n++] = j;
        }
    if (n == 0)
        return 0;
    v = xcalloc((size_t)n, sizeof *v);
    idx = xcalloc((size_t)n, sizeof *idx);
    for (long j = 0; j < n; j++) {
        pv_random(set, fmt, seed, (uint64_t)pick[j], &v[j]);
        idx[j] = (uint32_t)pick[j];
    }
    snprintf(group, sizeof group, "%s.%s_select", pv_fmt_name(fmt),
             pv_set_name(set));
    fx_add_inputs(out, group, v, idx, n, k);
    dd = fx_add(out, TENSOR_U32, (uint64_t)n, 0, "%s.d_mma", group);
    for (long j = 0; j < n; j++)
        tensor_set_bits(dd, (uint64_t)j,
                        tensor_get_bits(dmma, (uint64_t)pick[j]));
    fprintf(js,
            ",\n    {\"fmt\": \"%s\", \"set\": \"%s_select\", \"k\": %d, "
            "\"n\": %ld, \"kind\": \"selected from the mma run, indices "
            ">= %ld where the model readings disagree (only d_mma)\"}",
            pv_fmt_name(fmt), pv_set_name(set), k, n, n0);
    free(v);
    free(idx);
    return n;
}

/* The group of one set: its vectors from every instruction path, after
 * checking the probe's input hashes.  Returns the vectors added. */
static long
add_set(const tc_readings *rd, const tensor_file *in, fx_list *out, FILE *js,
        int fmt, int set, uint64_t seed, long total)
{
    const tensor *d[NINSTR];
    long nsrc[NINSTR], n, nmin = -1;
    int k = pv_set_k(set);
    pv_vec *v;
    uint32_t *idx;
    uint64_t hfix = PV_FNV_INIT;
    char name[NAMELEN], group[NAMELEN];

    for (int i = 0; i < NINSTR; i++) {
        uint64_t h = PV_FNV_INIT;
        pv_vec x;
        snprintf(name, sizeof name, "%s.%s.%s", instrs[i], pv_fmt_name(fmt),
                 pv_set_name(set));
        d[i] = tc_find_tensor(&in[i], name);
        if (!d[i] || d[i]->ndim != 1)
            die("missing tensor");
        nsrc[i] = (long)d[i]->shape[0];
        if (nmin < 0 || nsrc[i] < nmin)
            nmin = nsrc[i];
        /* The probe's inputs must be the ones regenerated here. */
        if (pv_set_random(set)) {
            for (long j = 0; j < nsrc[i]; j++) {
                pv_random(set, fmt, seed, (uint64_t)j, &x);
                h = pv_hash(h, &x, k);
            }
        } else {
            pv_vec *tmp = xcalloc((size_t)nsrc[i], sizeof *tmp);
            pv_directed(set, fmt, tmp, (size_t)nsrc[i]);
            for (long j = 0; j < nsrc[i]; j++)
                h = pv_hash(h, &tmp[j], k);
            free(tmp);
        }
        if (h != tc_manifest_hash(tc_find_meta(&in[i], "manifest"), name)) {
            fprintf(stderr, "%s: ", name);
            die("input hash differs");
        }
    }
    if (pv_set_random(set)) {
        n = quota(fmt, set);
        if (n > nmin)
            n = nmin;
        v = xcalloc((size_t)n, sizeof *v);
        for (long j = 0; j < n; j++)
            pv_random(set, fmt, seed, (uint64_t)j, &v[j]);
    } else {
        n = (long)pv_directed(set, fmt, NULL, 0);
        if (n != nmin)
            die("directed set size differs");
        v = xcalloc((size_t)n, sizeof *v);
        pv_directed(set, fmt, v, (size_t)n);
    }
    idx = xcalloc((size_t)n, sizeof *idx);
    for (long j = 0; j < n; j++) {
        idx[j] = (uint32_t)j;
        hfix = pv_hash(hfix, &v[j], k);
    }
    snprintf(group, sizeof group, "%s.%s", pv_fmt_name(fmt), pv_set_name(set));
    fx_add_inputs(out, group, v, idx, n, k);
    for (int i = 0; i < NINSTR; i++) {
        tensor *dd = fx_add(out, TENSOR_U32, (uint64_t)n, 0, "%s.d_%s", group,
                            instrs[i]);
        for (long j = 0; j < n; j++)
            tensor_set_bits(dd, (uint64_t)j,
                            tensor_get_bits(d[i], (uint64_t)j));
    }
    fprintf(js,
            "%s\n    {\"fmt\": \"%s\", \"set\": \"%s\", \"k\": %d, "
            "\"n\": %ld, \"kind\": \"%s\", \"probe_n\": {\"mma\": "
            "%ld, \"wgmma_ss\": %ld, \"wgmma_rs\": %ld}, "
            "\"input_fnv1a\": \"%016llx\"",
            total ? "," : "", pv_fmt_name(fmt), pv_set_name(set), k, n,
            pv_set_random(set) ? "random, indices 0..n-1"
                               : "directed, all vectors",
            nsrc[0], nsrc[1], nsrc[2], (unsigned long long)hfix);
    if (!pv_set_random(set)) {
        fprintf(js, ",\n     \"tags\": [");
        for (long j = 0; j < n; j++) {
            fputs(j ? ", " : "", js);
            json_put_string(js, v[j].tag);
        }
        fprintf(js, "]");
    }
    fprintf(js, "}");
    free(v);
    free(idx);
    if (pv_set_random(set))
        n += add_select(rd, out, js, fmt, set, seed, n, d[0], nsrc[0]);
    return n;
}

int
main(int argc, char **argv)
{
    static const uint64_t seed = 20261130;
    const char *dir, *outst, *outjs, *driver = "";
    tensor_file in[NINSTR];
    fx_list out = {NULL, 0, 0};
    tensor_named *list;
    tensor_meta meta[5];
    tensor_error err;
    char path[1024];
    char *jtext = NULL;
    size_t jlen = 0;
    FILE *js;
    tc_readings rd;
    long total = 0;
    int ai = 1;

    if (argc > 2 && strcmp(argv[1], "--driver") == 0) {
        driver = argv[2];
        ai = 3;
    }
    if (argc - ai != 3)
        die("usage: mma_fixture [--driver STR] DIR OUT.safetensors OUT.json");
    if (!tc_readings_init(&rd))
        die("the library has no sm90 preset");
    dir = argv[ai];
    outst = argv[ai + 1];
    outjs = argv[ai + 2];
    for (int i = 0; i < NINSTR; i++) {
        const tensor_file empty = TENSOR_FILE_INIT;
        const char *s;
        in[i] = empty;
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, instrs[i]);
        if (safetensors_read_all(path, TENSOR_ANY, &in[i], &err) != TENSOR_OK)
            die(err.message);
        s = tc_find_meta(&in[i], "seed");
        if (!s || strtoull(s, NULL, 10) != seed)
            die("unexpected seed");
    }
    js = open_memstream(&jtext, &jlen);
    if (js == NULL)
        die("out of memory");
    fprintf(
        js,
        "{\n  \"description\": \"Tensor-core block-FMA results of an NVIDIA "
        "H200: single-row dot products D = sum_k a[k]*b[k] + c with a in row "
        "0 of A, b in column 0 of B, every other entry zero, chained over K "
        "in ascending k16 slices through the FP32 accumulator. Inputs are "
        "BF16 or FP16 bits, c and D FP32 bits. The vectors come from "
        "experiments/gpu/probe_vectors.c (set, format, seed %llu, index).\",\n"
        "  \"layout\": \"<fmt>.<set>.{a,b} U16 [n,K]; .c, .index, .d_mma, "
        ".d_wgmma_ss, .d_wgmma_rs U32 [n]\",\n"
        "  \"driver\": ",
        (unsigned long long)seed);
    json_put_string(js, driver);
    fprintf(js, ",\n  \"seed\": %llu,\n  \"sets\": [",
            (unsigned long long)seed);
    for (int fmt = 0; fmt < PV_NFMT; fmt++)
        for (int set = 0; set < PV_NSET; set++)
            total += add_set(&rd, in, &out, js, fmt, set, seed, total);
    fprintf(js, "\n  ],\n  \"vectors\": %ld,\n  \"probe_runs\": {", total);
    for (int i = 0; i < NINSTR; i++) {
        const char *m = tc_find_meta(&in[i], "manifest");
        size_t len = m ? strlen(m) : 0;
        /* the manifest without its trailing blank lines */
        while (len && (m[len - 1] == '\n' || m[len - 1] == ' '))
            len--;
        fprintf(js, "%s\n    \"%s\": %.*s", i ? "," : "", instrs[i], (int)len,
                m ? m : "");
    }
    fprintf(js, "\n  }\n}\n");
    if (fclose(js) != 0)
        die("out of memory");

    list = xcalloc(out.n, sizeof *list);
    for (size_t i = 0; i < out.n; i++) {
        list[i].name = out.e[i]->name;
        list[i].tensor = out.e[i]->t;
    }
    meta[0].key = "content";
    meta[0].value = "tensor-core block-FMA results, see mma_h200.json";
    meta[1].key = "gpu";
    meta[2].key = "driver";
    meta[2].value = driver;
    meta[3].key = "date_utc";
    meta[4].key = "seed";
    meta[1].value = tc_find_meta(&in[0], "gpu");
    meta[3].value = tc_find_meta(&in[0], "date_utc");
    meta[4].value = tc_find_meta(&in[0], "seed");
    for (int i = 0; i < 5; i++)
        if (meta[i].value == NULL)
            meta[i].value = "";
    if (safetensors_write(outst, list, out.n, meta, 5, true, &err)
        != TENSOR_OK)
        die(err.message);
    write_atomic(outjs, jtext, jlen);
    printf("mma_fixture: %ld vectors, %zu tensors\n", total, out.n);

    for (size_t i = 0; i < out.n; i++) {
        tensor_free(&out.e[i]->t);
        free(out.e[i]);
    }
    free(out.e);
    free(list);
    free(jtext);
    for (int i = 0; i < NINSTR; i++)
        tensor_file_free(&in[i]);
    return 0;
}
