/* rcp_table.c -- read the measured rcp table (rcp-sm90.bin.gz) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/rcp_table.h"

#include "analysis/gz_table.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define RCP_MAGIC "BF16RCP1"
#define RCP_COUNT ((size_t)1 << 23)

const char *
ax_rcp_table_default_path(const char *given)
{
    return GZT_DEFAULT_PATH(given, "rcp-sm90.bin.gz");
}

int
ax_rcp_table_load(const char *path, ax_rcp_table *t, char *err,
                  size_t errlen)
{
    gzFile g;
    char magic[8];
    unsigned char extra;
    int8_t *d;
    size_t len = 0;

    t->delta = NULL;
    g = gzopen(path, "rb");
    if (g == NULL)
        return gzt_fail(err, errlen, path, "cannot open");
    d = malloc(RCP_COUNT);
    if (d == NULL) {
        gzclose(g);
        return gzt_fail(err, errlen, path, "out of memory");
    }
    if (gzread(g, magic, sizeof magic) != (int)sizeof magic
        || memcmp(magic, RCP_MAGIC, sizeof magic) != 0) {
        gzclose(g);
        free(d);
        return gzt_fail(err, errlen, path,
                        "expected the magic " RCP_MAGIC " (gzip)");
    }
    while (len < RCP_COUNT) {
        int got = gzread(g, d + len, (unsigned)(RCP_COUNT - len));
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    if (len != RCP_COUNT || gzread(g, &extra, 1) != 0) {
        gzclose(g);
        free(d);
        return gzt_fail(err, errlen, path,
                        "expected exactly 8388608 table bytes after the "
                        "magic");
    }
    gzclose(g);
    for (size_t i = 0; i < RCP_COUNT; i++)
        if (d[i] < -1 || d[i] > 1) {
            int v = d[i];
            free(d);
            return gzt_fail(err, errlen, path,
                            "entry %zu: expected -1, 0 or 1, got %d", i, v);
        }
    t->delta = d;
    return 0;
}

void
ax_rcp_table_free(ax_rcp_table *t)
{
    free(t->delta);
    t->delta = NULL;
}

void
ax_rcp_model(const ax_rcp_table *t, fa_rcp_model *model)
{
    model->name = "rcp-sm90";
    model->delta = t->delta;
}
