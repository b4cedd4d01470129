/* st_io.h -- a minimal safetensors writer for the GPU probe (mma_probe.cu,
 * built by nvcc on the GPU machine with no other part of the project).
 * The CPU-side tools read its files with analysis/tensor.h.
 *
 * File format: an 8-byte little-endian header length L, L bytes of JSON
 * (padded with spaces to a multiple of 8), then the data buffer.  The JSON
 * maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}
 * (offsets relative to the data buffer) and may hold "__metadata__", a map
 * of string to string.  Tensors here are little-endian U16 or U32 arrays;
 * the writer stores them in the order they were added, without gaps. */

#ifndef BF16EMU_ST_IO_H
#define BF16EMU_ST_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_MAXDIM 6
#define ST_NAMELEN 96

typedef struct
{
    char name[ST_NAMELEN];
    char dtype[8]; /* "U16", "U32", ... */
    int ndim;
    uint64_t shape[ST_MAXDIM];
    uint64_t begin, end; /* byte offsets in the data buffer */
    const void *data;    /* the caller's data */
} st_tensor;

typedef struct
{
    st_tensor *t;
    size_t n, cap;
    char **meta; /* key, value, key, value, ... (copies) */
    size_t nmeta;
} st_file;

/* st_add keeps a pointer to data (no copy) until st_write. */
void st_init(st_file *f);
int st_add(st_file *f, const char *name, const char *dtype, int ndim,
           const uint64_t *shape, const void *data);
int st_meta(st_file *f, const char *key, const char *value);
/* Writes the file; returns 0 or -1 (errno set by stdio). */
int st_write(const st_file *f, const char *path);
void st_free(st_file *f);

/* Size in bytes of one element of dtype (0 if unknown). */
size_t st_dtype_size(const char *dtype);

/* Appends s to the buffer as a JSON string literal (with quotes). */
void st_json_string(char **buf, size_t *len, size_t *cap, const char *s);
/* printf-style append to a growing buffer. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void
st_appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
