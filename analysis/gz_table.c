/* gz_table.c -- pieces shared by the readers of the measured H200 tables */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/gz_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

const char *
gzt_default_path(const char *given, const char *in_tree, const char *installed)
{
    struct stat st;

    if (given != NULL && *given != '\0')
        return given;
    if (stat(in_tree, &st) == 0)
        return in_tree;
    return installed;
}

int
gzt_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
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

uint64_t
gzt_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}
