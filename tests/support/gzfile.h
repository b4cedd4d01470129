/* gzfile.h -- gzip-compressed scratch files for the table reader tests */
#ifndef BF16EMU_TESTS_GZFILE_H
#define BF16EMU_TESTS_GZFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Writes BYTES (N) gzip-compressed to a new file in the current folder,
   named PREFIX, the process id and a unique suffix; its name goes into
   NAME (LEN bytes).  False when the file cannot be made or written. */
bool tst_write_gz(char *name, size_t len, const char *prefix,
                  const unsigned char *bytes, size_t n);

#endif
