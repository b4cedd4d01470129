/* st_io.c -- the minimal safetensors writer of mma_probe (see st_io.h). */

#include "st_io.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
st_dtype_size(const char *dtype)
{
    if (strcmp(dtype, "U8") == 0 || strcmp(dtype, "I8") == 0)
        return 1;
    if (strcmp(dtype, "U16") == 0 || strcmp(dtype, "I16") == 0
        || strcmp(dtype, "F16") == 0 || strcmp(dtype, "BF16") == 0)
        return 2;
    if (strcmp(dtype, "U32") == 0 || strcmp(dtype, "I32") == 0
        || strcmp(dtype, "F32") == 0)
        return 4;
    if (strcmp(dtype, "U64") == 0 || strcmp(dtype, "I64") == 0
        || strcmp(dtype, "F64") == 0)
        return 8;
    return 0;
}

static int
grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need)
        nc *= 2;
    char *nb = (char *)realloc(*buf, nc);
    if (!nb)
        return -1;
    *buf = nb;
    *cap = nc;
    return 0;
}

void
st_appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || grow(buf, cap, *len + (size_t)n + 1) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(*buf + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

void
st_json_string(char **buf, size_t *len, size_t *cap, const char *s)
{
    st_appendf(buf, len, cap, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            st_appendf(buf, len, cap, "\\%c", ch);
        else if (ch < 0x20)
            st_appendf(buf, len, cap, "\\u%04x", ch);
        else
            st_appendf(buf, len, cap, "%c", ch);
    }
    st_appendf(buf, len, cap, "\"");
}

void
st_init(st_file *f)
{
    memset(f, 0, sizeof *f);
}

int
st_add(st_file *f, const char *name, const char *dtype, int ndim,
       const uint64_t *shape, const void *data)
{
    st_tensor *t;
    uint64_t count = 1;
    size_t es = st_dtype_size(dtype);
    if (es == 0 || ndim < 0 || ndim > ST_MAXDIM || strlen(name) >= ST_NAMELEN)
        return -1;
    if (f->n == f->cap) {
        size_t nc = f->cap ? 2 * f->cap : 16;
        st_tensor *nt = (st_tensor *)realloc(f->t, nc * sizeof *nt);
        if (!nt)
            return -1;
        f->t = nt;
        f->cap = nc;
    }
    t = &f->t[f->n];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    strcpy(t->dtype, dtype);
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        count *= shape[i];
    }
    t->begin = f->n ? f->t[f->n - 1].end : 0;
    t->end = t->begin + count * es;
    t->data = data;
    f->n++;
    return 0;
}

static char *
dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int
st_meta(st_file *f, const char *key, const char *value)
{
    char **nm = (char **)realloc(f->meta, (f->nmeta + 1) * 2 * sizeof *nm);
    if (!nm)
        return -1;
    f->meta = nm;
    nm[2 * f->nmeta] = dup(key);
    nm[2 * f->nmeta + 1] = dup(value);
    if (!nm[2 * f->nmeta] || !nm[2 * f->nmeta + 1])
        return -1;
    f->nmeta++;
    return 0;
}

int
st_write(const st_file *f, const char *path)
{
    char *h = NULL;
    size_t len = 0, cap = 0;
    unsigned char lenbuf[8];
    FILE *fp;
    int rc = 0;
    st_appendf(&h, &len, &cap, "{");
    if (f->nmeta) {
        st_appendf(&h, &len, &cap, "\"__metadata__\":{");
        for (size_t i = 0; i < f->nmeta; i++) {
            if (i)
                st_appendf(&h, &len, &cap, ",");
            st_json_string(&h, &len, &cap, f->meta[2 * i]);
            st_appendf(&h, &len, &cap, ":");
            st_json_string(&h, &len, &cap, f->meta[2 * i + 1]);
        }
        st_appendf(&h, &len, &cap, "}");
    }
    for (size_t i = 0; i < f->n; i++) {
        const st_tensor *t = &f->t[i];
        if (i || f->nmeta)
            st_appendf(&h, &len, &cap, ",");
        st_json_string(&h, &len, &cap, t->name);
        st_appendf(&h, &len, &cap, ":{\"dtype\":\"%s\",\"shape\":[", t->dtype);
        for (int d = 0; d < t->ndim; d++)
            st_appendf(&h, &len, &cap, "%s%llu", d ? "," : "",
                       (unsigned long long)t->shape[d]);
        st_appendf(&h, &len, &cap, "],\"data_offsets\":[%llu,%llu]}",
                   (unsigned long long)t->begin, (unsigned long long)t->end);
    }
    st_appendf(&h, &len, &cap, "}");
    while (len % 8)
        st_appendf(&h, &len, &cap, " ");
    if (!h)
        return -1;
    for (int i = 0; i < 8; i++)
        lenbuf[i] = (unsigned char)((uint64_t)len >> (8 * i));
    fp = fopen(path, "wb");
    if (!fp) {
        free(h);
        return -1;
    }
    if (fwrite(lenbuf, 1, 8, fp) != 8 || fwrite(h, 1, len, fp) != len)
        rc = -1;
    /* Data, little-endian (the host is assumed little-endian, as every
     * machine these probes run on is). */
    for (size_t i = 0; i < f->n && rc == 0; i++) {
        size_t nb = (size_t)(f->t[i].end - f->t[i].begin);
        if (nb && fwrite(f->t[i].data, 1, nb, fp) != nb)
            rc = -1;
    }
    if (fclose(fp) != 0)
        rc = -1;
    free(h);
    return rc;
}

void
st_free(st_file *f)
{
    for (size_t i = 0; i < 2 * f->nmeta; i++)
        free(f->meta[i]);
    free(f->meta);
    free(f->t);
    memset(f, 0, sizeof *f);
}
