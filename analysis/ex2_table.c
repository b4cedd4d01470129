/* ex2_table.c -- read the measured ex2 tables (ex2-sm90.bin.gz) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/ex2_table.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#ifndef BF16EMU_PKGDATADIR
#define BF16EMU_PKGDATADIR "/usr/local/share/bf16emu"
#endif
#ifndef SRCDIR
#define SRCDIR "."
#endif

#define EX2_MAGIC "BF16EX2"
#define EX2_VERSION 1u
#define EX2_MAX_BITS 24u

const char *
ax_ex2_table_default_path(void)
{
    static const char *const in_tree = SRCDIR "/analysis/data/ex2-sm90.bin.gz";
    static const char *const installed =
        BF16EMU_PKGDATADIR "/ex2-sm90.bin.gz";
    const char *dir = getenv("BF16EMU_EX2_TABLE");
    struct stat st;

    if (dir != NULL && *dir != '\0')
        return dir;
    if (stat(in_tree, &st) == 0)
        return in_tree;
    return installed;
}

static int
fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (err == NULL || errlen == 0)
        return -1;
    n = snprintf(err, errlen, "%s: ", path);
    if (n < 0 || (size_t)n >= errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t
le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t
fnv1a_words(const uint32_t *w, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < 4; k++) {
            h ^= (w[i] >> (8 * k)) & 0xFF;
            h *= 1099511628211ull;
        }
    return h;
}

/* Reads exactly N bytes; false at a short read. */
static bool
read_all(gzFile g, unsigned char *buf, size_t n)
{
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(g, buf, chunk);
        if (got <= 0)
            return false;
        buf += got;
        n -= (size_t)got;
    }
    return true;
}

/* Rebuilds one table from its first entry and COUNT - 1 byte steps. */
static bool
read_table(gzFile g, uint32_t first, uint32_t *t, size_t count)
{
    unsigned char buf[65536];
    size_t i = 1;

    t[0] = first;
    while (i < count) {
        size_t n = count - i < sizeof buf ? count - i : sizeof buf;
        if (!read_all(g, buf, n))
            return false;
        for (size_t j = 0; j < n; j++, i++)
            t[i] = t[i - 1] + buf[j];
    }
    return true;
}

int
ax_ex2_table_load(const char *path, ax_ex2_table *t, char *err,
                  size_t errlen)
{
    unsigned char hdr[40];
    uint64_t hash_n, hash_p;
    uint32_t version, bits;
    gzFile g;
    int rc = -1;

    memset(t, 0, sizeof *t);
    g = gzopen(path, "rb");
    if (g == NULL)
        return fail(err, errlen, path, "cannot open the file");
    if (!read_all(g, hdr, sizeof hdr)) {
        fail(err, errlen, path, "header: the file ends before 40 bytes");
        goto out;
    }
    if (memcmp(hdr, EX2_MAGIC, 8) != 0) {
        fail(err, errlen, path, "magic: expected \"BF16EX2\"");
        goto out;
    }
    version = le32(hdr + 8);
    bits = le32(hdr + 12);
    if (version != EX2_VERSION) {
        fail(err, errlen, path, "version: expected 1, found %u", version);
        goto out;
    }
    if (bits < 1 || bits > EX2_MAX_BITS) {
        fail(err, errlen, path, "grid bits: expected 1..%u, found %u",
             EX2_MAX_BITS, bits);
        goto out;
    }
    hash_n = (uint64_t)le32(hdr + 24) | (uint64_t)le32(hdr + 28) << 32;
    hash_p = (uint64_t)le32(hdr + 32) | (uint64_t)le32(hdr + 36) << 32;
    t->frac_bits = bits;
    t->count = (size_t)1 << bits;
    t->neg = malloc(t->count * sizeof *t->neg);
    t->pos = malloc(t->count * sizeof *t->pos);
    if (t->neg == NULL || t->pos == NULL) {
        fail(err, errlen, path, "tables: out of memory for 2^%u entries",
             bits);
        goto out;
    }
    if (!read_table(g, le32(hdr + 16), t->neg, t->count) ||
        !read_table(g, le32(hdr + 20), t->pos, t->count)) {
        fail(err, errlen, path, "steps: the file ends before 2 x (2^%u - 1) "
                                "bytes of steps",
             bits);
        goto out;
    }
    if (gzgetc(g) != -1) {
        fail(err, errlen, path, "steps: data after the second table");
        goto out;
    }
    if (fnv1a_words(t->neg, t->count) != hash_n ||
        fnv1a_words(t->pos, t->count) != hash_p) {
        fail(err, errlen, path, "hash: the tables do not match the hashes "
                                "in the header (damaged file)");
        goto out;
    }
    rc = 0;
out:
    gzclose(g);
    if (rc != 0)
        ax_ex2_table_free(t);
    return rc;
}

void
ax_ex2_table_free(ax_ex2_table *t)
{
    free(t->neg);
    free(t->pos);
    memset(t, 0, sizeof *t);
}

void
ax_ex2_model(const ax_ex2_table *t, bool ftz, fa_exp2_table *tab,
             fa_exp_model *model)
{
    memset(tab, 0, sizeof *tab);
    memset(model, 0, sizeof *model);
    tab->frac_bits = t->frac_bits;
    tab->values = t->neg;
    tab->pos_values = t->pos;
    tab->ftz = ftz;
    tab->square_below = !ftz;
    model->name = ftz ? "ex2-sm90-ftz" : "ex2-sm90";
    model->kind = FA_EXP_TABLE;
    model->table = tab;
}
