/* gz_table.h -- pieces shared by the readers of the measured H200 tables
   (ex2-sm90.bin.gz, lg2-sm90.bin.gz, rcp-sm90.bin.gz): where the file is,
   error messages, little-endian fields and the FNV-1a hashes in the
   headers */
#ifndef BF16EMU_ANALYSIS_GZ_TABLE_H
#define BF16EMU_ANALYSIS_GZ_TABLE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GZT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GZT_PRINTF(f, a)
#endif

/* Where the tables are: the source tree (SRCDIR/analysis/data) when built
   there, else the installed data folder. */
#ifndef BF16EMU_PKGDATADIR
#define BF16EMU_PKGDATADIR "/usr/local/share/bf16emu"
#endif
#ifndef SRCDIR
#define SRCDIR "."
#endif

/* The FNV-1a 64-bit offset basis. */
#define GZT_FNV_OFFSET 1469598103934665603ull

/* GIVEN when not NULL and not empty (the caller's choice), else IN_TREE
   when it exists, else INSTALLED. */
const char *gzt_default_path(const char *given, const char *in_tree,
                             const char *installed);

/* gzt_default_path for the table file NAME (a string literal). */
#define GZT_DEFAULT_PATH(given, name)                                         \
    gzt_default_path((given), SRCDIR "/analysis/data/" name,                  \
                     BF16EMU_PKGDATADIR "/" name)

/* Fills ERR (when not NULL and ERRLEN > 0) with "PATH: " and the message;
   returns -1. */
int gzt_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
    GZT_PRINTF(4, 5);

/* The N-byte (N <= 8) little-endian unsigned integer at P. */
uint64_t gzt_le(const unsigned char *p, int n);

/* H advanced by FNV-1a over the N low bytes of V, least significant
   first (inline: the readers hash tens of millions of words). */
static inline uint64_t
gzt_fnv(uint64_t h, uint64_t v, int n)
{
    for (int k = 0; k < n; k++) {
        h ^= (v >> (8 * k)) & 0xFF;
        h *= 1099511628211ull;
    }
    return h;
}

#endif
