/* check_model.c -- compares the tensor-core probe's D bits with the
 * block-FMA model of bfma_model.c, under its three readings of the
 * all-tiny corner (columns A, B, C: zero C at -126; zero C left out and
 * emax clamped to >= -133; no clamp).
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfma_model.h"
#include "probe_vectors.h"
#include "st_io.h"

/*----------------------------------------------------------------------
 * Published vectors
 *----------------------------------------------------------------------*/

static pv_vec *
read_pub_text(const char *dir, long *n, uint32_t **dpub)
{
    char path[1024];
    FILE *fa, *fb, *fc, *fd;
    pv_vec *v = NULL;
    long cap = 0;
    *n = 0;
    *dpub = NULL;
    snprintf(path, sizeof path, "%s/a_H200_bf16.txt", dir);
    fa = fopen(path, "r");
    snprintf(path, sizeof path, "%s/b_H200_bf16.txt", dir);
    fb = fopen(path, "r");
    snprintf(path, sizeof path, "%s/c_H200_fp32.txt", dir);
    fc = fopen(path, "r");
    snprintf(path, sizeof path, "%s/d_H200_fp32.txt", dir);
    fd = fopen(path, "r");
    if (!fa || !fb || !fc || !fd) {
        fprintf(stderr, "check_model: cannot open the files in %s\n", dir);
        exit(1);
    }
    for (;;) {
        unsigned x;
        char cs[64], ds[64];
        pv_vec t;
        int ok = 1;
        memset(&t, 0, sizeof t);
        for (int i = 0; i < 16 && ok; i++) {
            ok = fscanf(fa, "%x", &x) == 1;
            t.a[i] = (uint16_t)(x >> 16);
        }
        for (int i = 0; i < 16 && ok; i++) {
            ok = fscanf(fb, "%x", &x) == 1;
            t.b[i] = (uint16_t)(x >> 16);
        }
        if (!ok || fscanf(fc, "%63s", cs) != 1 || fscanf(fd, "%63s", ds) != 1)
            break;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8192;
            v = (pv_vec *)realloc(v, (size_t)cap * sizeof *v);
            *dpub = (uint32_t *)realloc(*dpub, (size_t)cap * 4);
        }
        t.c = (uint32_t)strtoul(cs, NULL, 2);
        (*dpub)[*n] = (uint32_t)strtoul(ds, NULL, 2);
        v[(*n)++] = t;
    }
    fclose(fa);
    fclose(fb);
    fclose(fc);
    fclose(fd);
    return v;
}

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
    fclose(fp);
}

/*----------------------------------------------------------------------
 * Comparison
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

/* The manifest's input hash of tensor name, or 0 when absent. */
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

int
main(int argc, char **argv)
{
    static const char *const instrs[3] = {"mma", "wgmma_ss", "wgmma_rs"};
    const char *dir = NULL, *pubdir = NULL, *pubout = NULL;
    int verbose = 0, status = 0;
    uint64_t seed = 20261130;
    long npub = 0;
    uint32_t *dpub = NULL;
    pv_vec *pub = NULL;
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
    if (pubdir) {
        long m[3] = {0, 0, 0};
        pub = read_pub_text(pubdir, &npub, &dpub);
        for (long i = 0; i < npub; i++)
            for (int z = 0; z < 3; z++)
                m[z] +=
                    bfma_chain(PV_BF16, pub[i].a, pub[i].b, pub[i].c, 16, z)
                    == dpub[i];
        printf("published H200 vectors: %ld; model A/B/C matches the "
               "published D: %ld/%ld/%ld\n",
               npub, m[0], m[1], m[2]);
        if (pubout)
            write_pub(pubout, pub, npub);
    }
    if (!dir)
        return 0;

    printf("%-26s %8s %8s %8s %8s  %s\n", "tensor", "n", "model A", "model B",
           "model C", "notes");
    for (int ii = 0; ii < 3; ii++) {
        char path[1024], err[256];
        st_file f;
        const char *manifest;
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, instrs[ii]);
        if (st_read(&f, path, err, sizeof err)) {
            printf("%s: %s\n", instrs[ii], err);
            st_free(&f);
            continue;
        }
        manifest = st_meta_get(&f, "manifest");
        for (size_t t = 0; t < f.n; t++) {
            const st_tensor *ts = &f.t[t];
            char fmtname[16], setname[64];
            const char *p1 = strchr(ts->name, '.'), *p2;
            const uint32_t *d = (const uint32_t *)ts->data;
            long n = (long)ts->shape[0], m[3] = {0, 0, 0}, shown = 0;
            int fmt, set, k, is_pub;
            pv_vec *dir_v = NULL, v;
            uint64_t h = PV_FNV_INIT;
            unsigned long long mh;
            if (!p1 || !(p2 = strchr(p1 + 1, '.')))
                continue;
            snprintf(fmtname, sizeof fmtname, "%.*s", (int)(p2 - p1 - 1),
                     p1 + 1);
            snprintf(setname, sizeof setname, "%s", p2 + 1);
            fmt = pv_fmt_from_name(fmtname);
            is_pub = strcmp(setname, "pub_h200") == 0;
            set = pv_set_from_name(setname);
            if (fmt < 0 || (set < 0 && !is_pub))
                continue;
            if (is_pub && !pub) {
                printf("%-26s (needs --pub-dir)\n", ts->name);
                continue;
            }
            k = is_pub ? 16 : pv_set_k(set);
            if (!is_pub && !pv_set_random(set)) {
                dir_v = (pv_vec *)malloc((size_t)n * sizeof *dir_v);
                if ((long)pv_directed(set, fmt, dir_v, (size_t)n) != n) {
                    printf("%s: directed set size differs\n", ts->name);
                    status = 1;
                }
            }
            {
                long pubm = 0;
                for (long i = 0; i < n; i++) {
                    uint32_t md[3];
                    if (is_pub)
                        v = pub[i];
                    else if (dir_v)
                        v = dir_v[i];
                    else
                        pv_random(set, fmt, seed, (uint64_t)i, &v);
                    h = pv_hash(h, &v, k);
                    for (int z = 0; z < 3; z++) {
                        md[z] = bfma_chain(fmt, v.a, v.b, v.c, k, z);
                        m[z] += md[z] == d[i];
                    }
                    if (is_pub)
                        pubm += dpub[i] == d[i];
                    if ((md[0] != d[i] || md[1] != d[i] || md[2] != d[i])
                        && (dir_v || (verbose && shown < 10))) {
                        if (!shown)
                            printf("  mismatches of %s:\n", ts->name);
                        shown++;
                        printf("    #%ld %-40s hw=%08x A=%08x B=%08x C=%08x\n",
                               i, dir_v ? v.tag : "", d[i], md[0], md[1],
                               md[2]);
                        show_vec(&v, k);
                    }
                }
                mh = manifest_hash(manifest, ts->name);
                printf("%-26s %8ld %8ld %8ld %8ld  %s%s", ts->name, n, m[0],
                       m[1], m[2],
                       mh == 0   ? "no hash"
                       : mh == h ? "inputs ok"
                                 : "INPUT HASH DIFFERS",
                       "");
                if (is_pub)
                    printf(", equal to published D: %ld", pubm);
                printf("\n");
                if (mh != h)
                    status = 1;
            }
            free(dir_v);
        }
        st_free(&f);
    }
    /* Agreement between the instructions on the vectors they share. */
    {
        st_file fs[3];
        char path[1024], err[256];
        int okf[3];
        for (int ii = 0; ii < 3; ii++) {
            snprintf(path, sizeof path, "%s/%s.safetensors", dir, instrs[ii]);
            okf[ii] = st_read(&fs[ii], path, err, sizeof err) == 0;
        }
        if (okf[0])
            for (size_t t = 0; t < fs[0].n; t++) {
                const st_tensor *t0 = &fs[0].t[t];
                const char *suffix = strchr(t0->name, '.');
                for (int ii = 1; ii < 3; ii++) {
                    char name[ST_NAMELEN];
                    const st_tensor *t1;
                    long n, diff = 0;
                    if (!okf[ii])
                        continue;
                    snprintf(name, sizeof name, "%s%s", instrs[ii], suffix);
                    t1 = st_find(&fs[ii], name);
                    if (!t1)
                        continue;
                    n = (long)(t0->shape[0] < t1->shape[0] ? t0->shape[0]
                                                           : t1->shape[0]);
                    for (long i = 0; i < n; i++)
                        diff += ((const uint32_t *)t0->data)[i]
                                != ((const uint32_t *)t1->data)[i];
                    printf("agreement mma vs %-8s %-18s %7ld shared, %ld "
                           "differ\n",
                           instrs[ii], suffix + 1, n, diff);
                }
            }
        for (int ii = 0; ii < 3; ii++)
            st_free(&fs[ii]);
    }
    free(pub);
    free(dpub);
    return status;
}
