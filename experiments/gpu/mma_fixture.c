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
 * vectors beyond the sample on which the readings of bfma_model.h
 * disagree among themselves (those that decide the all-tiny corner; up to
 * SELECT_MAX, the ones separating BFMA_FLOOR133 from BFMA_PLAIN first),
 * taken from the whole mma run, with .a, .b, .c, .index and .d_mma only.
 *
 * The JSON manifest repeats the probe runs' manifests and lists the tags
 * of the directed vectors. */

#define SELECT_MAX 256

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfma_model.h"
#include "probe_vectors.h"
#include "st_io.h"

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

static unsigned long long
manifest_hash(const char *manifest, const char *name)
{
    char key[160];
    const char *p;
    snprintf(key, sizeof key, "\"name\": \"%s\"", name);
    p = manifest ? strstr(manifest, key) : NULL;
    if (!p || !(p = strstr(p, "\"input_fnv1a\": \"")))
        return 0;
    return strtoull(p + 16, NULL, 16);
}

/* The _select group of a random set: indices from n0 on (up to nsrc)
 * where the model readings disagree.  Returns the number of vectors. */
static long
add_select(st_file *out, char **js, size_t *jl, size_t *jc, int fmt, int set,
           uint64_t seed, long n0, const uint32_t *dmma, long nsrc)
{
    long *pick = (long *)malloc(SELECT_MAX * sizeof *pick), n = 0;
    int k = pv_set_k(set);
    uint64_t shape[2];
    uint16_t *a, *b;
    uint32_t *c, *idx, *dd;
    char name[ST_NAMELEN];
    pv_vec v;
    /* Two passes: first B != C, then A != B. */
    for (int pass = 0; pass < 2; pass++)
        for (long j = n0; j < nsrc && n < SELECT_MAX; j++) {
            uint32_t r[BFMA_NREADING];
            int want;
            pv_random(set, fmt, seed, (uint64_t)j, &v);
            for (int z = 0; z < BFMA_NREADING; z++)
                r[z] = bfma_chain(fmt, v.a, v.b, v.c, k, z);
            want = pass == 0 ? r[BFMA_FLOOR133] != r[BFMA_PLAIN]
                             : r[BFMA_FLOOR133] == r[BFMA_PLAIN]
                                   && r[BFMA_ZC_MINUS126] != r[BFMA_FLOOR133];
            if (want)
                pick[n++] = j;
        }
    if (n == 0) {
        free(pick);
        return 0;
    }
    a = (uint16_t *)malloc((size_t)n * (size_t)k * 2);
    b = (uint16_t *)malloc((size_t)n * (size_t)k * 2);
    c = (uint32_t *)malloc((size_t)n * 4);
    idx = (uint32_t *)malloc((size_t)n * 4);
    dd = (uint32_t *)malloc((size_t)n * 4);
    for (long j = 0; j < n; j++) {
        pv_random(set, fmt, seed, (uint64_t)pick[j], &v);
        memcpy(a + j * k, v.a, (size_t)k * 2);
        memcpy(b + j * k, v.b, (size_t)k * 2);
        c[j] = v.c;
        idx[j] = (uint32_t)pick[j];
        dd[j] = dmma[pick[j]];
    }
    shape[0] = (uint64_t)n;
    shape[1] = (uint64_t)k;
#define ADDS(suffix, dt, nd, ptr)                                             \
    do {                                                                      \
        snprintf(name, sizeof name, "%s.%s_select.%s", pv_fmt_name(fmt),      \
                 pv_set_name(set), suffix);                                   \
        if (st_add(out, name, dt, nd, shape, ptr))                            \
            die("st_add");                                                    \
    } while (0)
    ADDS("a", "U16", 2, a);
    ADDS("b", "U16", 2, b);
    ADDS("c", "U32", 1, c);
    ADDS("index", "U32", 1, idx);
    ADDS("d_mma", "U32", 1, dd);
#undef ADDS
    st_appendf(js, jl, jc,
               ",\n    {\"fmt\": \"%s\", \"set\": \"%s_select\", \"k\": %d, "
               "\"n\": %ld, \"kind\": \"selected from the mma run, indices "
               ">= %ld where the model readings disagree (only d_mma)\"}",
               pv_fmt_name(fmt), pv_set_name(set), k, n, n0);
    free(pick);
    return n;
}

int
main(int argc, char **argv)
{
    const char *dir, *outst, *outjs, *driver = "";
    st_file in[NINSTR], out;
    char path[1024], err[256];
    char *js = NULL;
    size_t jl = 0, jc = 0;
    uint64_t seed = 20261130;
    long total = 0;
    int ai = 1;
    if (argc > 2 && strcmp(argv[1], "--driver") == 0) {
        driver = argv[2];
        ai = 3;
    }
    if (argc - ai != 3)
        die("usage: mma_fixture [--driver STR] DIR OUT.safetensors OUT.json");
    dir = argv[ai];
    outst = argv[ai + 1];
    outjs = argv[ai + 2];
    for (int i = 0; i < NINSTR; i++) {
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, instrs[i]);
        if (st_read(&in[i], path, err, sizeof err))
            die(err);
        if (!st_meta_get(&in[i], "seed")
            || strtoull(st_meta_get(&in[i], "seed"), NULL, 10) != seed)
            die("unexpected seed");
    }
    st_init(&out);
    st_appendf(
        &js, &jl, &jc,
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
    st_json_string(&js, &jl, &jc, driver);
    st_appendf(&js, &jl, &jc, ",\n  \"seed\": %llu,\n  \"sets\": [",
               (unsigned long long)seed);

    for (int fmt = 0; fmt < PV_NFMT; fmt++)
        for (int set = 0; set < PV_NSET; set++) {
            const uint32_t *d[NINSTR];
            long nsrc[NINSTR], n, nmin = -1;
            int k = pv_set_k(set);
            pv_vec *dirv = NULL, v;
            uint16_t *a, *b;
            uint32_t *c, *idx, *dd[NINSTR];
            uint64_t shape[2], hfix = PV_FNV_INIT;
            char name[ST_NAMELEN];
            for (int i = 0; i < NINSTR; i++) {
                const st_tensor *t;
                uint64_t h = PV_FNV_INIT;
                snprintf(name, sizeof name, "%s.%s.%s", instrs[i],
                         pv_fmt_name(fmt), pv_set_name(set));
                t = st_find(&in[i], name);
                if (!t)
                    die("missing tensor");
                d[i] = (const uint32_t *)t->data;
                nsrc[i] = (long)t->shape[0];
                if (nmin < 0 || nsrc[i] < nmin)
                    nmin = nsrc[i];
                /* The probe's inputs must be the ones regenerated
                 * here. */
                if (pv_set_random(set)) {
                    for (long j = 0; j < nsrc[i]; j++) {
                        pv_random(set, fmt, seed, (uint64_t)j, &v);
                        h = pv_hash(h, &v, k);
                    }
                } else {
                    pv_vec *tmp =
                        (pv_vec *)malloc((size_t)nsrc[i] * sizeof *tmp);
                    pv_directed(set, fmt, tmp, (size_t)nsrc[i]);
                    for (long j = 0; j < nsrc[i]; j++)
                        h = pv_hash(h, &tmp[j], k);
                    free(tmp);
                }
                if (h
                    != manifest_hash(st_meta_get(&in[i], "manifest"), name)) {
                    fprintf(stderr, "%s: ", name);
                    die("input hash differs");
                }
            }
            if (pv_set_random(set)) {
                n = quota(fmt, set);
                if (n > nmin)
                    n = nmin;
            } else {
                n = (long)pv_directed(set, fmt, NULL, 0);
                if (n != nmin)
                    die("directed set size differs");
                dirv = (pv_vec *)malloc((size_t)n * sizeof *dirv);
                pv_directed(set, fmt, dirv, (size_t)n);
            }
            a = (uint16_t *)malloc((size_t)n * (size_t)k * 2);
            b = (uint16_t *)malloc((size_t)n * (size_t)k * 2);
            c = (uint32_t *)malloc((size_t)n * 4);
            idx = (uint32_t *)malloc((size_t)n * 4);
            for (int i = 0; i < NINSTR; i++)
                dd[i] = (uint32_t *)malloc((size_t)n * 4);
            for (long j = 0; j < n; j++) {
                if (dirv)
                    v = dirv[j];
                else
                    pv_random(set, fmt, seed, (uint64_t)j, &v);
                memcpy(a + j * k, v.a, (size_t)k * 2);
                memcpy(b + j * k, v.b, (size_t)k * 2);
                c[j] = v.c;
                idx[j] = (uint32_t)j;
                for (int i = 0; i < NINSTR; i++)
                    dd[i][j] = d[i][j];
                hfix = pv_hash(hfix, &v, k);
            }
            shape[0] = (uint64_t)n;
            shape[1] = (uint64_t)k;
#define ADD(suffix, dt, nd, ptr)                                              \
    do {                                                                      \
        snprintf(name, sizeof name, "%s.%s.%s", pv_fmt_name(fmt),             \
                 pv_set_name(set), suffix);                                   \
        if (st_add(&out, name, dt, nd, shape, ptr))                           \
            die("st_add");                                                    \
    } while (0)
            ADD("a", "U16", 2, a);
            ADD("b", "U16", 2, b);
            ADD("c", "U32", 1, c);
            ADD("index", "U32", 1, idx);
            ADD("d_mma", "U32", 1, dd[0]);
            ADD("d_wgmma_ss", "U32", 1, dd[1]);
            ADD("d_wgmma_rs", "U32", 1, dd[2]);
#undef ADD
            st_appendf(
                &js, &jl, &jc,
                "%s\n    {\"fmt\": \"%s\", \"set\": \"%s\", \"k\": %d, "
                "\"n\": %ld, \"kind\": \"%s\", \"probe_n\": {\"mma\": "
                "%ld, \"wgmma_ss\": %ld, \"wgmma_rs\": %ld}, "
                "\"input_fnv1a\": \"%016llx\"",
                total ? "," : "", pv_fmt_name(fmt), pv_set_name(set), k, n,
                dirv ? "directed, all vectors" : "random, indices 0..n-1",
                nsrc[0], nsrc[1], nsrc[2], (unsigned long long)hfix);
            if (dirv) {
                st_appendf(&js, &jl, &jc, ",\n     \"tags\": [");
                for (long j = 0; j < n; j++) {
                    st_appendf(&js, &jl, &jc, "%s", j ? ", " : "");
                    st_json_string(&js, &jl, &jc, dirv[j].tag);
                }
                st_appendf(&js, &jl, &jc, "]");
            }
            st_appendf(&js, &jl, &jc, "}");
            total += n;
            free(dirv);
            /* The buffers stay alive until st_write. */
            if (pv_set_random(set))
                total += add_select(&out, &js, &jl, &jc, fmt, set, seed, n,
                                    d[0], nsrc[0]);
        }
    st_appendf(&js, &jl, &jc,
               "\n  ],\n  \"vectors\": %ld,\n  \"probe_runs\": {", total);
    for (int i = 0; i < NINSTR; i++) {
        st_appendf(&js, &jl, &jc, "%s\n    \"%s\": %s", i ? "," : "",
                   instrs[i], st_meta_get(&in[i], "manifest"));
        while (jl && (js[jl - 1] == '\n' || js[jl - 1] == ' '))
            js[--jl] = 0;
    }
    st_appendf(&js, &jl, &jc, "\n  }\n}\n");

    st_meta(&out, "content",
            "tensor-core block-FMA results, see mma_h200.json");
    st_meta(&out, "gpu", st_meta_get(&in[0], "gpu"));
    st_meta(&out, "driver", driver);
    st_meta(&out, "date_utc", st_meta_get(&in[0], "date_utc"));
    st_meta(&out, "seed", st_meta_get(&in[0], "seed"));
    if (st_write(&out, outst))
        die("cannot write the safetensors file");
    {
        FILE *fp = fopen(outjs, "w");
        if (!fp || fwrite(js, 1, jl, fp) != jl || fclose(fp) != 0)
            die("cannot write the manifest");
    }
    printf("mma_fixture: %ld vectors, %zu tensors\n", total, out.n);
    return 0;
}
