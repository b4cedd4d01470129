/* lg2_table.c -- read the measured lg2 tables (lg2-sm90.bin.gz) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/lg2_table.h"

#include "analysis/gz_table.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LG2_MAGIC "BF16LG2"
#define LG2_VERSION 1u
#define LG2_HEADER 44u
#define LG2_COUNT ((size_t)1 << FA_LG2_MBITS)
/* no real file holds more (the header's N is checked against this) */
#define LG2_MAX_CORR LG2_COUNT
/* 2^23 entries need far less than this, compressed */
#define LG2_MAX_BYTES ((size_t)1 << 28)

const char *
ax_lg2_table_default_path(const char *given)
{
    return GZT_DEFAULT_PATH(given, "lg2-sm90.bin.gz");
}

/* The whole decompressed file into *BUF (*N bytes); false when it cannot
   be read or is larger than LG2_MAX_BYTES. */
static bool
slurp(gzFile g, unsigned char **buf, size_t *n)
{
    size_t cap = (size_t)1 << 20, len = 0;
    unsigned char *b = malloc(cap);

    if (b == NULL)
        return false;
    for (;;) {
        int got;
        if (len == cap) {
            unsigned char *nb;
            if (cap >= LG2_MAX_BYTES) {
                free(b);
                return false;
            }
            nb = realloc(b, cap * 2);
            if (nb == NULL) {
                free(b);
                return false;
            }
            b = nb;
            cap *= 2;
        }
        got = gzread(g, b + len, (unsigned)(cap - len));
        if (got < 0) {
            free(b);
            return false;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    *buf = b;
    *n = len;
    return true;
}

/* One LEB128 varint at *P (before END); false past END or beyond 64
   bits. */
static bool
varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned sh = 0; sh < 64; sh += 7) {
        unsigned char c;
        if (*p >= end)
            return false;
        c = *(*p)++;
        r |= (uint64_t)(c & 0x7F) << sh;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static int64_t
unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A base entry in units of 2^-54, truncated toward zero (as the probe
   wrote the corrections). */
static int64_t
base54(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return (int64_t)ldexp((double)f, FA_LG2_GBITS);
}

/* Checks the 44-byte header of the unpacked file BUF (N bytes): magic,
   version, bit widths and the count of corrections, which goes to *NC;
   the hashes of the two tables go to *HB and *HC. */
static int
lg2_header(const unsigned char *buf, size_t n, const char *path, uint64_t *nc,
           uint64_t *hb, uint64_t *hc, char *err, size_t errlen)
{
    if (n < LG2_HEADER)
        return gzt_fail(err, errlen, path,
                        "header: the file ends before %u bytes", LG2_HEADER);
    if (memcmp(buf, LG2_MAGIC, 8) != 0)
        return gzt_fail(err, errlen, path, "magic: expected \"BF16LG2\"");
    if (gzt_le(buf + 8, 4) != LG2_VERSION)
        return gzt_fail(err, errlen, path, "version: expected 1, found %u",
                        (unsigned)gzt_le(buf + 8, 4));
    if (gzt_le(buf + 12, 4) != FA_LG2_MBITS
        || gzt_le(buf + 16, 4) != FA_LG2_GBITS)
        return gzt_fail(err, errlen, path,
                        "bits: expected 23 mantissa and 54 "
                        "correction bits, found %u and %u",
                        (unsigned)gzt_le(buf + 12, 4),
                        (unsigned)gzt_le(buf + 16, 4));
    *nc = gzt_le(buf + 20, 4);
    if (*nc > LG2_MAX_CORR)
        return gzt_fail(err, errlen, path,
                        "corrections: expected at most 2^23, "
                        "found %llu",
                        (unsigned long long)*nc);
    *hb = gzt_le(buf + 24, 8);
    *hc = gzt_le(buf + 32, 8);
    return 0;
}

/* Allocates T's tables for NC corrections. */
static int
lg2_alloc(ax_lg2_table *t, uint64_t nc, const char *path, char *err,
          size_t errlen)
{
    t->ncorr = (size_t)nc;
    t->base = malloc(LG2_COUNT * sizeof *t->base);
    t->corr_i = malloc((t->ncorr ? t->ncorr : 1) * sizeof *t->corr_i);
    t->corr_g = malloc((t->ncorr ? t->ncorr : 1) * sizeof *t->corr_g);
    t->index = malloc(FA_LG2_INDEX_WORDS * sizeof *t->index);
    if (t->base == NULL || t->corr_i == NULL || t->corr_g == NULL
        || t->index == NULL)
        return gzt_fail(err, errlen, path, "tables: out of memory");
    return 0;
}

/* Decodes the body from *P to END: the base table as second differences
   (base[0] given, then 2^23 - 1 zigzag varints), then the corrections as
   pairs (index step, correction - base in units of 2^-54); nothing may
   follow the last pair. */
static int
lg2_body(ax_lg2_table *t, uint32_t base0, const unsigned char *p,
         const unsigned char *end, const char *path, char *err, size_t errlen)
{
    int64_t d = 0;
    uint32_t idx = 0;

    t->base[0] = base0;
    for (size_t i = 1; i < LG2_COUNT; i++) {
        uint64_t v;
        if (!varint(&p, end, &v))
            return gzt_fail(err, errlen, path,
                            "base: the file ends before 2^23 - 1 "
                            "steps");
        d += unzigzag(v);
        t->base[i] = (uint32_t)((int64_t)t->base[i - 1] + d);
    }
    for (size_t k = 0; k < t->ncorr; k++) {
        uint64_t a, v;
        if (!varint(&p, end, &a) || !varint(&p, end, &v))
            return gzt_fail(err, errlen, path,
                            "corrections: the file ends before "
                            "%zu entries",
                            t->ncorr);
        if (a > LG2_COUNT - 1 - idx || (k > 0 && a == 0))
            return gzt_fail(err, errlen, path,
                            "corrections: entry %zu: expected an "
                            "ascending index below 2^23",
                            k);
        idx += (uint32_t)a;
        t->corr_i[k] = idx;
        t->corr_g[k] = base54(t->base[idx]) + unzigzag(v);
    }
    if (p != end)
        return gzt_fail(err, errlen, path,
                        "corrections: data after the last entry");
    return 0;
}

/* Checks the FNV-1a hashes of the decoded tables against the header's HB
   (base) and HC (corrections). */
static int
lg2_hashes(const ax_lg2_table *t, uint64_t hb, uint64_t hc, const char *path,
           char *err, size_t errlen)
{
    uint64_t h;

    h = GZT_FNV_OFFSET;
    for (size_t i = 0; i < LG2_COUNT; i++)
        h = gzt_fnv(h, t->base[i], 4);
    if (h != hb)
        return gzt_fail(err, errlen, path,
                        "hash: the base table does not match the "
                        "hash in the header (damaged file)");
    h = GZT_FNV_OFFSET;
    for (size_t k = 0; k < t->ncorr; k++) {
        h = gzt_fnv(h, t->corr_i[k], 4);
        h = gzt_fnv(h, (uint64_t)t->corr_g[k], 8);
    }
    if (h != hc)
        return gzt_fail(err, errlen, path,
                        "hash: the corrections do not match the "
                        "hash in the header (damaged file)");
    return 0;
}

/* Builds the corrections' index, then checks the corrections and the
   index together (the index is built from ascending indices below 2^23,
   which lg2_body made sure of). */
static int
lg2_index(ax_lg2_table *t, const char *path, char *err, size_t errlen)
{
    fa_lg2_table ft = {t->base, t->ncorr, t->corr_i, t->corr_g, false,
                       t->index};
    const char *why;

    fa_lg2_table_index(&ft, t->index);
    why = fa_lg2_table_check(&ft);
    if (why != NULL)
        return gzt_fail(err, errlen, path, "corrections: %s", why);
    return 0;
}

int
ax_lg2_table_load(const char *path, ax_lg2_table *t, char *err, size_t errlen)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    uint64_t hb = 0, hc = 0, nc = 0;
    gzFile g;
    int rc;

    memset(t, 0, sizeof *t);
    g = gzopen(path, "rb");
    if (g == NULL)
        return gzt_fail(err, errlen, path, "cannot open the file");
    if (!slurp(g, &buf, &n)) {
        gzclose(g);
        return gzt_fail(err, errlen, path,
                        "cannot read the file (damaged, or "
                        "larger than 256 MiB unpacked)");
    }
    gzclose(g);
    rc = lg2_header(buf, n, path, &nc, &hb, &hc, err, errlen);
    if (rc == 0)
        rc = lg2_alloc(t, nc, path, err, errlen);
    if (rc == 0)
        rc = lg2_body(t, (uint32_t)gzt_le(buf + 40, 4), buf + 44, buf + n,
                      path, err, errlen);
    if (rc == 0)
        rc = lg2_hashes(t, hb, hc, path, err, errlen);
    if (rc == 0)
        rc = lg2_index(t, path, err, errlen);
    free(buf);
    if (rc != 0)
        ax_lg2_table_free(t);
    return rc;
}

void
ax_lg2_table_free(ax_lg2_table *t)
{
    free(t->base);
    free(t->corr_i);
    free(t->corr_g);
    free(t->index);
    memset(t, 0, sizeof *t);
}

void
ax_lg2_model(const ax_lg2_table *t, bool ftz, fa_lg2_table *tab,
             fa_log_model *model)
{
    memset(tab, 0, sizeof *tab);
    memset(model, 0, sizeof *model);
    tab->base = t->base;
    tab->ncorr = t->ncorr;
    tab->corr_i = t->corr_i;
    tab->corr_g = t->corr_g;
    tab->index = t->index;
    tab->ftz = ftz;
    model->name = ftz ? "lg2-sm90-ftz" : "lg2-sm90";
    model->kind = FA_LOG_LG2;
    model->table = tab;
}
