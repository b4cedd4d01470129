/* st_io.h -- a minimal safetensors writer and reader for the GPU probes.
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

#define ST_MAXDIM 4
#define ST_NAMELEN 96

typedef struct
{
    char name[ST_NAMELEN];
    char dtype[8]; /* "U16", "U32", ... */
    int ndim;
    uint64_t shape[ST_MAXDIM];
    uint64_t begin, end; /* byte offsets in the data buffer */
    const void *data;    /* writer: caller's data; reader: in the file image */
} st_tensor;

typedef struct
{
    st_tensor *t;
    size_t n, cap;
    char **meta; /* key, value, key, value, ... (copies) */
    size_t nmeta;
    unsigned char *image; /* reader: the whole file */
    size_t image_len;
} st_file;

/* Writer.  st_add keeps a pointer to data (no copy) until st_write. */
void st_init(st_file *f);
int st_add(st_file *f, const char *name, const char *dtype, int ndim,
           const uint64_t *shape, const void *data);
int st_meta(st_file *f, const char *key, const char *value);
/* Writes the file; returns 0 or -1 (errno set by stdio). */
int st_write(const st_file *f, const char *path);
void st_free(st_file *f);

/* Reader: loads and parses path; returns 0, or -1 with a message in err. */
int st_read(st_file *f, const char *path, char *err, size_t errlen);
/* The tensor called name, or NULL. */
const st_tensor *st_find(const st_file *f, const char *name);
/* The metadata value of key, or NULL. */
const char *st_meta_get(const st_file *f, const char *key);

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
