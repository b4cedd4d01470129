/* check_model.c -- compares the tensor-core probe's D bits with the sm90
 * block-FMA model of softfloat/mma.h under the three readings of the
 * all-tiny corner of probe_tools.h (columns A, B, C: zero C at -126; zero C
 * left out and emax clamped to >= -133; no clamp).
 *
 * Usage:
 *   check_model [-v] DIR          DIR holds <instr>.safetensors from
 *                                 mma_probe; prints match counts per set
 *                                 and every mismatching directed vector
 *                                 (-v: the first random ones too)
 *   check_model --pub-dir PUBDIR [--pub-export FILE] [DIR]
 *                                 reads the published H200 vectors
 *                                 (text files); exports them for
 *                                 mma_probe --pub, and with DIR compares
 *                                 the probe's results on them */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tensor.h"
#include "experiments/gpu/probe_vectors.h"
#include "experiments/gpu/probe_tools.h"

#define NINSTR 3
static const char *const instrs[NINSTR] = {"mma", "wgmma_ss", "wgmma_rs"};

/*----------------------------------------------------------------------
 * Published vectors
 *----------------------------------------------------------------------*/

/* The published H200 set of DIR as vectors (*N of them) and their D; NULL
 * (message printed) on error. */
static pv_vec *
read_pub(const char *dir, long *n, uint32_t **dpub)
{
    tcvec_set s = TCVEC_SET_INIT;
    tensor_error err;
    pv_vec *v;

    if (tcvec_read_set(dir, "H200", &s, &err) != TENSOR_OK) {
        fprintf(stderr, "check_model: %s\n", err.message);
        return NULL;
    }
    *n = (long)s.c.n_elems;
    v = calloc((size_t)*n + 1, sizeof *v);
    *dpub = calloc((size_t)*n + 1, sizeof **dpub);
    if (v == NULL || *dpub == NULL) {
        fprintf(stderr, "check_model: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < *n; i++) {
        for (int k = 0; k < TCVEC_K; k++) {
            uint64_t at = (uint64_t)i * TCVEC_K + (uint64_t)k;
            v[i].a[k] = (uint16_t)tensor_get_bits(&s.a, at);
            v[i].b[k] = (uint16_t)tensor_get_bits(&s.b, at);
        }
        v[i].c = (uint32_t)tensor_get_bits(&s.c, (uint64_t)i);
        (*dpub)[i] = (uint32_t)tensor_get_bits(&s.d, (uint64_t)i);
    }
    tcvec_set_free(&s);
    return v;
}

/* The input file of mma_probe --pub: "PVPUB1\0\0", a 32-bit count, then
 * per vector 16 a, 16 b (16 bits each) and c (32 bits), little-endian. */
static void
write_pub(const char *path, const pv_vec *v, long n)
{
    FILE *fp = fopen(path, "wb");
    uint32_t cnt = (uint32_t)n;
    if (!fp) {
        fprintf(stderr, "check_model: cannot write %s\n", path);
        exit(1);
    }
    fwrite("PVPUB1\0\0", 1, 8, fp);
    fwrite(&cnt, 4, 1, fp);
    for (long i = 0; i < n; i++) {
        fwrite(v[i].a, 2, 16, fp);
        fwrite(v[i].b, 2, 16, fp);
        fwrite(&v[i].c, 4, 1, fp);
    }
    if (fclose(fp) != 0) {
        fprintf(stderr, "check_model: cannot write %s\n", path);
        exit(1);
    }
}

/*----------------------------------------------------------------------
 * The probe's files
 *----------------------------------------------------------------------*/

static void
show_vec(const pv_vec *v, int k)
{
    printf("      a:");
    for (int i = 0; i < k; i++)
        if (v->a[i] || v->b[i])
            printf(" [%d]%04x*%04x", i, v->a[i], v->b[i]);
    printf("  c=%08x\n", v->c);
}

/* Compares one tensor of D bits with the readings; returns 1 when its
 * inputs differ from the regenerated ones, else 0. */
static int
check_tensor(const tc_readings *rd, const char *name, const tensor *t,
             const char *manifest, const pv_vec *pub, const uint32_t *dpub,
             long npub, int verbose)
{
    static const uint64_t seed = 20261130;
    char fmtname[16], setname[64];
    const char *p1 = strchr(name, '.'), *p2;
    long n = t->ndim == 1 ? (long)t->shape[0] : 0, m[3] = {0, 0, 0};
    long shown = 0, pubm = 0;
    int fmt, set, k, is_pub;
    pv_vec *dir_v = NULL, v;
    uint64_t h = PV_FNV_INIT;
    unsigned long long mh;
    int status = 0;

    if (!p1 || !(p2 = strchr(p1 + 1, '.')))
        return 0;
    snprintf(fmtname, sizeof fmtname, "%.*s", (int)(p2 - p1 - 1), p1 + 1);
    snprintf(setname, sizeof setname, "%s", p2 + 1);
    fmt = pv_fmt_from_name(fmtname);
    is_pub = strcmp(setname, "pub_h200") == 0;
    set = pv_set_from_name(setname);
    if (fmt < 0 || (set < 0 && !is_pub))
        return 0;
    if (is_pub && !pub) {
        printf("%-26s (needs --pub-dir)\n", name);
        return 0;
    }
    if (is_pub && n > npub)
        n = npub;
    k = is_pub ? 16 : pv_set_k(set);
    if (!is_pub && !pv_set_random(set)) {
        dir_v = malloc((size_t)n * sizeof *dir_v + 1);
        if (dir_v == NULL) {
            fprintf(stderr, "check_model: out of memory\n");
            exit(1);
        }
        if ((long)pv_directed(set, fmt, dir_v, (size_t)n) != n) {
            printf("%s: directed set size differs\n", name);
            status = 1;
        }
    }
    for (long i = 0; i < n; i++) {
        uint32_t md[TC_NREADING],
            d = (uint32_t)tensor_get_bits(t, (uint64_t)i);
        if (is_pub)
            v = pub[i];
        else if (dir_v)
            v = dir_v[i];
        else
            pv_random(set, fmt, seed, (uint64_t)i, &v);
        h = pv_hash(h, &v, k);
        for (int z = 0; z < TC_NREADING; z++) {
            md[z] = tc_chain(rd, z, fmt, v.a, v.b, v.c, k);
            m[z] += md[z] == d;
        }
        if (is_pub)
            pubm += dpub[i] == d;
        if ((md[0] != d || md[1] != d || md[2] != d)
            && (dir_v || (verbose && shown < 10))) {
            if (!shown)
                printf("  mismatches of %s:\n", name);
            shown++;
            printf("    #%ld %-40s hw=%08x A=%08x B=%08x C=%08x\n", i,
                   dir_v ? v.tag : "", d, md[0], md[1], md[2]);
            show_vec(&v, k);
        }
    }
    mh = tc_manifest_hash(manifest, name);
    printf("%-26s %8ld %8ld %8ld %8ld  %s", name, n, m[0], m[1], m[2],
           mh == 0   ? "no hash"
           : mh == h ? "inputs ok"
                     : "INPUT HASH DIFFERS");
    if (is_pub)
        printf(", equal to published D: %ld", pubm);
    printf("\n");
    if (mh != h)
        status = 1;
    free(dir_v);
    return status;
}

/* How often the wgmma paths agree with mma on the vectors they share. */
static void
agreement(const tensor_file *fs, const int *okf)
{
    if (!okf[0])
        return;
    for (size_t t = 0; t < fs[0].n_tensors; t++) {
        const char *name0 = fs[0].tensors[t].name;
        const tensor *t0 = &fs[0].tensors[t].tensor;
        const char *suffix = strchr(name0, '.');
        if (suffix == NULL || t0->ndim != 1)
            continue;
        for (int ii = 1; ii < NINSTR; ii++) {
            char name[160];
            const tensor *t1;
            long n, diff = 0;
            if (!okf[ii])
                continue;
            snprintf(name, sizeof name, "%s%s", instrs[ii], suffix);
            t1 = tc_find_tensor(&fs[ii], name);
            if (!t1 || t1->ndim != 1)
                continue;
            n = (long)(t0->shape[0] < t1->shape[0] ? t0->shape[0]
                                                   : t1->shape[0]);
            for (long i = 0; i < n; i++)
                diff += tensor_get_bits(t0, (uint64_t)i)
                        != tensor_get_bits(t1, (uint64_t)i);
            printf("agreement mma vs %-8s %-18s %7ld shared, %ld differ\n",
                   instrs[ii], suffix + 1, n, diff);
        }
    }
}

int
main(int argc, char **argv)
{
    const char *dir = NULL, *pubdir = NULL, *pubout = NULL;
    int verbose = 0, status = 0;
    long npub = 0;
    uint32_t *dpub = NULL;
    pv_vec *pub = NULL;
    tc_readings rd;
    tensor_file fs[NINSTR];
    int okf[NINSTR];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--pub-dir") == 0 && i + 1 < argc)
            pubdir = argv[++i];
        else if (strcmp(argv[i], "--pub-export") == 0 && i + 1 < argc)
            pubout = argv[++i];
        else if (argv[i][0] != '-')
            dir = argv[i];
        else {
            fprintf(stderr, "usage: check_model [-v] [--pub-dir D "
                            "[--pub-export F]] [DIR]\n");
            return 2;
        }
    }
    if (!tc_readings_init(&rd)) {
        fprintf(stderr, "check_model: the library has no sm90 preset\n");
        return 1;
    }
    if (pubdir) {
        long m[TC_NREADING] = {0, 0, 0};
        pub = read_pub(pubdir, &npub, &dpub);
        if (pub == NULL)
            return 1;
        for (long i = 0; i < npub; i++)
            for (int z = 0; z < TC_NREADING; z++)
                m[z] +=
                    tc_chain(&rd, z, PV_BF16, pub[i].a, pub[i].b, pub[i].c, 16)
                    == dpub[i];
        printf("published H200 vectors: %ld; model A/B/C matches the "
               "published D: %ld/%ld/%ld\n",
               npub, m[0], m[1], m[2]);
        if (pubout)
            write_pub(pubout, pub, npub);
    }
    if (!dir) {
        free(pub);
        free(dpub);
        return 0;
    }

    printf("%-26s %8s %8s %8s %8s  %s\n", "tensor", "n", "model A", "model B",
           "model C", "notes");
    for (int ii = 0; ii < NINSTR; ii++) {
        char path[1024];
        tensor_error err;
        const tensor_file empty = TENSOR_FILE_INIT;
        fs[ii] = empty;
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, instrs[ii]);
        okf[ii] =
            safetensors_read_all(path, TENSOR_ANY, &fs[ii], &err) == TENSOR_OK;
        if (!okf[ii]) {
            printf("%s: %s\n", instrs[ii], err.message);
            continue;
        }
        for (size_t t = 0; t < fs[ii].n_tensors; t++)
            status |= check_tensor(
                &rd, fs[ii].tensors[t].name, &fs[ii].tensors[t].tensor,
                tc_find_meta(&fs[ii], "manifest"), pub, dpub, npub, verbose);
    }
    agreement(fs, okf);
    for (int ii = 0; ii < NINSTR; ii++)
        tensor_file_free(&fs[ii]);
    free(pub);
    free(dpub);
    return status;
}
