/* gzfile.c -- gzip-compressed scratch files for the table reader tests */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/support/gzfile.h"

bool
tst_write_gz(char *name, size_t len, const char *prefix,
             const unsigned char *bytes, size_t n)
{
    gzFile g;
    int fd;
    bool ok;

    snprintf(name, len, "%s_%ld_XXXXXX", prefix, (long)getpid());
    fd = mkstemp(name);
    if (fd < 0)
        return false;
    g = gzdopen(fd, "wb");
    if (g == NULL) {
        close(fd);
        return false;
    }
    ok = n == 0 || gzwrite(g, bytes, (unsigned)n) == (int)n;
    return gzclose(g) == Z_OK && ok;
}
