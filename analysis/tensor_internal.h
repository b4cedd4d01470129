/* tensor_internal.h -- helpers shared by the tensor file readers and
   writers: error messages, whole-file and positioned reads, atomic
   output */
#ifndef BF16EMU_ANALYSIS_TENSOR_INTERNAL_H
#define BF16EMU_ANALYSIS_TENSOR_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "analysis/tensor.h"

#if defined(__GNUC__)
#define TIO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TIO_PRINTF(f, a)
#endif

/* Fills ERR (when not NULL) with CODE and "PATH: FIELD: MESSAGE", leaving
   out "PATH: " or "FIELD: " when that argument is NULL, and returns
   CODE. */
int tio_fail(tensor_error *err, int code, const char *path, const char *field,
             const char *fmt, ...) TIO_PRINTF(5, 6);

/* Clears ERR (when not NULL) and returns TENSOR_OK. */
int tio_ok(tensor_error *err);

/* Fills ERR with E_IO and "PATH: WHAT: strerror(ERRNUM)"; returns E_IO. */
int tio_fail_errno(tensor_error *err, const char *path, const char *what,
                   int errnum);

/* Writes S[0..LEN) into BUF (SIZE > 0) between double quotes, with '"',
   '\\' and bytes outside printable ASCII escaped as \xNN, cut with "..."
   after about 60 characters.  Returns BUF. */
char *tio_quote(char *buf, size_t size, const char *s, size_t len);
#define TIO_QUOTE_SIZE 96
/* The string S escaped as by tio_quote, without the quotes and without the
   60-character limit (cut with "..." only where BUF is full). */
char *tio_escape(char *buf, size_t size, const char *s);

/* Writes "[d0, d1, ...]" (or "(d0, d1, )" style when PY is true: a Python
   tuple) into BUF of SIZE bytes; returns BUF. */
char *tio_shape_str(char *buf, size_t size, unsigned ndim,
                    const uint64_t *shape, bool py);
#define TIO_SHAPE_SIZE 256

/* Multiplies out SHAPE[0..NDIM) and the element size ESIZE: *N_ELEMS and
   *N_BYTES.  Returns false when a product overflows 64 bits or the byte
   count exceeds TENSOR_MAX_BYTES (the outputs are then meaningless). */
bool tio_shape_bytes(unsigned ndim, const uint64_t *shape, size_t esize,
                     uint64_t *n_elems, uint64_t *n_bytes);

/* Opens PATH for reading: *FD and its size *SIZE (a regular file). */
int tio_open_read(const char *path, int *fd, uint64_t *size,
                  tensor_error *err);

/* Reads exactly N bytes at OFFSET of FD into BUF; FIELD names what is read
   in the message of a short read. */
int tio_pread(int fd, uint64_t offset, void *buf, size_t n, const char *path,
              const char *field, tensor_error *err);

/* Reads the whole of PATH (at most MAX bytes, else E_LIMIT) into a
   malloc'ed buffer *BUF of *LEN bytes plus a terminating NUL. */
int tio_read_all(const char *path, size_t max, char **buf, size_t *len,
                 tensor_error *err);

/* Atomic output: a temporary file next to PATH that becomes PATH on
   commit. */
typedef struct
{
    const char *path;
    char *tmp_path;
    int fd;
    bool force;
} tio_out;

/* Checks that PATH does not exist (unless FORCE) and creates the
   temporary file. */
int tio_out_open(tio_out *o, const char *path, bool force, tensor_error *err);

/* Appends BUF[0..N) to the temporary file. */
int tio_out_write(tio_out *o, const void *buf, size_t n, tensor_error *err);

/* Flushes the temporary file to disk and moves it to PATH: with link()
   when FORCE is false, so that a PATH created meanwhile is never replaced,
   else with rename().  On error the temporary file is removed. */
int tio_out_commit(tio_out *o, tensor_error *err);

/* Closes and removes the temporary file. */
void tio_out_abort(tio_out *o);

/* What the first N bytes HEAD of a file of SIZE bytes look like, for
   messages about a file of the wrong type: "a .npy file", "a .safetensors
   file", "a zip archive (...)", "a Python pickle", "a gzip file", "an HDF5
   file", "a GGUF file", "a JSON text", "a text file"; NULL when nothing is
   recognised.  N should be at least TIO_SNIFF_SIZE where the file has
   that many bytes. */
const char *tio_sniff(const unsigned char *head, size_t n, uint64_t size);
#define TIO_SNIFF_SIZE 64

/* The dtype of a safetensors dtype string, or TENSOR_ANY. */
tensor_dtype tio_dtype_by_st_name(const char *name);

#endif
