/* fuzz_common.h -- shared by the fuzz targets: the input as a file, checks
   of the tensors and error reports that the readers return */
#ifndef BF16EMU_TESTS_FUZZ_COMMON_H
#define BF16EMU_TESTS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/tensor.h"

/* The entry point of every target: libFuzzer calls it with each input, and
   tests/fuzz/replay.c with each file of the target's corpus.  Returns 0;
   a failed check aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The name of a regular file that holds exactly DATA[0..SIZE).  One file
   per process (a memfd reached through /proc/self/fd where the system has
   them, else a temporary file removed at exit), rewritten by each call; the
   name stays valid until the next call.  Aborts when the file cannot be
   written. */
const char *fuzz_file(const uint8_t *data, size_t size);

/* Where fuzz_fail writes: a file descriptor, 2 unless the replay driver
   sends stderr elsewhere. */
extern int fuzz_report_fd;

/* The name of the input being run, for fuzz_fail's message; NULL under
   libFuzzer (which names the input itself). */
extern const char *fuzz_input_name;

/* Writes "fuzz check failed: FILE:LINE: WHAT" (and the input's name) to
   fuzz_report_fd and aborts. */
void fuzz_fail(const char *file, int line, const char *what);

#define FUZZ_CHECK(c) ((c) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #c))

/* A tensor a reader returned: a valid dtype, at most TENSOR_MAX_DIMS
   dimensions, zeros past ndim, n_elems the product of the shape, n_bytes
   n_elems times the element size, data NULL exactly when n_bytes is 0.
   Reads every byte of the data (so that a short allocation is caught by
   the sanitizers or valgrind). */
void fuzz_check_tensor(const tensor *t);

/* T is empty: what TENSOR_INIT gives. */
void fuzz_check_empty(const tensor *t);

/* RC is a failure, and ERR says so: the same code, a known status name,
   a message that begins with "PATH: ", fits the buffer and holds only
   printable ASCII (so it is one line, and prints safely; PATH must be
   printable ASCII too). */
void fuzz_check_error(int rc, const tensor_error *err, const char *path);

/* Whether A and B have the same dtype, shape and bytes. */
bool fuzz_same_tensor(const tensor *a, const tensor *b);

/* The value of the hexadecimal digit C (either case), or -1.  For the
   targets' own reference parsers, which must not share code with the
   parsers under test. */
int fuzz_hex_digit(unsigned char c);

/* The little-endian number in P[0..N), N <= 8. */
uint64_t fuzz_load_le(const uint8_t *p, size_t n);

#endif
