/* ex2_table.c -- read the measured ex2 tables (ex2-sm90.bin.gz) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/ex2_table.h"

#include "analysis/gz_table.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define EX2_MAGIC "BF16EX2"
#define EX2_VERSION 1u
#define EX2_MAX_BITS 24u

const char *
ax_ex2_table_default_path(const char *given)
{
    return GZT_DEFAULT_PATH(given, "ex2-sm90.bin.gz");
}

static uint64_t
fnv1a_words(const uint32_t *w, size_t n)
{
    uint64_t h = GZT_FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = gzt_fnv(h, w[i], 4);
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
        return gzt_fail(err, errlen, path, "cannot open the file");
    if (!read_all(g, hdr, sizeof hdr)) {
        gzt_fail(err, errlen, path, "header: the file ends before 40 bytes");
        goto out;
    }
    if (memcmp(hdr, EX2_MAGIC, 8) != 0) {
        gzt_fail(err, errlen, path, "magic: expected \"BF16EX2\"");
        goto out;
    }
    version = (uint32_t)gzt_le(hdr + 8, 4);
    bits = (uint32_t)gzt_le(hdr + 12, 4);
    if (version != EX2_VERSION) {
        gzt_fail(err, errlen, path, "version: expected 1, found %u", version);
        goto out;
    }
    if (bits < 1 || bits > EX2_MAX_BITS) {
        gzt_fail(err, errlen, path, "grid bits: expected 1..%u, found %u",
                 EX2_MAX_BITS, bits);
        goto out;
    }
    hash_n = gzt_le(hdr + 24, 8);
    hash_p = gzt_le(hdr + 32, 8);
    t->frac_bits = bits;
    t->count = (size_t)1 << bits;
    t->neg = malloc(t->count * sizeof *t->neg);
    t->pos = malloc(t->count * sizeof *t->pos);
    if (t->neg == NULL || t->pos == NULL) {
        gzt_fail(err, errlen, path, "tables: out of memory for 2^%u entries",
                 bits);
        goto out;
    }
    if (!read_table(g, (uint32_t)gzt_le(hdr + 16, 4), t->neg, t->count)
        || !read_table(g, (uint32_t)gzt_le(hdr + 20, 4), t->pos, t->count)) {
        gzt_fail(err, errlen, path,
                 "steps: the file ends before 2 x (2^%u - 1) "
                 "bytes of steps",
                 bits);
        goto out;
    }
    if (gzgetc(g) != -1) {
        gzt_fail(err, errlen, path, "steps: data after the second table");
        goto out;
    }
    if (fnv1a_words(t->neg, t->count) != hash_n
        || fnv1a_words(t->pos, t->count) != hash_p) {
        gzt_fail(err, errlen, path,
                 "hash: the tables do not match the hashes "
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
