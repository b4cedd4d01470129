/* fuzz_common.c -- shared by the fuzz targets: the input as a file, checks
   of the tensors and error reports that the readers return */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_common.h"

int fuzz_report_fd = 2;
const char *fuzz_input_name;

void
fuzz_fail(const char *file, int line, const char *what)
{
    fflush(stderr);
    dprintf(fuzz_report_fd, "fuzz check failed: %s:%d: %s\n", file, line,
            what);
    if (fuzz_input_name != NULL)
        dprintf(fuzz_report_fd, "fuzz check failed on the input %s\n",
                fuzz_input_name);
    abort();
}

/*----------------------------------------------------------------------------
 * The input as a file.
 *--------------------------------------------------------------------------*/
static int file_fd = -1;
static char file_name[4096];
static bool file_is_temp;

static void
remove_temp(void)
{
    if (file_is_temp)
        (void)unlink(file_name);
}

/* A memfd named through /proc/self/fd, if the system has both. */
static bool
open_memfd(void)
{
#if defined(MFD_CLOEXEC)
    int fd = memfd_create("bf16emu-fuzz", MFD_CLOEXEC), probe;

    if (fd < 0)
        return false;
    snprintf(file_name, sizeof file_name, "/proc/self/fd/%d", fd);
    probe = open(file_name, O_RDONLY | O_CLOEXEC);
    if (probe < 0) {
        close(fd);
        return false;
    }
    close(probe);
    file_fd = fd;
    return true;
#else
    return false;
#endif
}

static void
open_file(void)
{
    const char *dir = getenv("TMPDIR");

    if (open_memfd())
        return;
    snprintf(file_name, sizeof file_name, "%s/bf16emu-fuzz.XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    file_fd = mkstemp(file_name);
    if (file_fd < 0) {
        fprintf(stderr, "fuzz: cannot create %s: %s\n", file_name,
                strerror(errno));
        abort();
    }
    file_is_temp = true;
    atexit(remove_temp);
}

const char *
fuzz_file(const uint8_t *data, size_t size)
{
    size_t done = 0;

    if (file_fd < 0)
        open_file();
    if (ftruncate(file_fd, 0) != 0) {
        fprintf(stderr, "fuzz: cannot truncate %s: %s\n", file_name,
                strerror(errno));
        abort();
    }
    while (done < size) {
        ssize_t w = pwrite(file_fd, data + done, size - done, (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "fuzz: cannot write %s: %s\n", file_name,
                    strerror(errno));
            abort();
        }
        done += (size_t)w;
    }
    return file_name;
}

/*----------------------------------------------------------------------------
 * Checks.
 *--------------------------------------------------------------------------*/
/* Where the sums of the data go, so that the loops that read it stay. */
static volatile unsigned fuzz_sink;

void
fuzz_check_tensor(const tensor *t)
{
    size_t esize = tensor_dtype_size(t->dtype);
    uint64_t n = 1;
    unsigned sum = 0;

    FUZZ_CHECK(t->dtype != TENSOR_ANY && esize != 0);
    FUZZ_CHECK(tensor_dtype_name(t->dtype) != NULL);
    FUZZ_CHECK(t->ndim <= TENSOR_MAX_DIMS);
    for (unsigned i = 0; i < TENSOR_MAX_DIMS; i++) {
        if (i >= t->ndim) {
            FUZZ_CHECK(t->shape[i] == 0);
            continue;
        }
        /* no product of the nonzero dimensions overflows */
        FUZZ_CHECK(t->shape[i] == 0 || n <= UINT64_MAX / t->shape[i]);
        n *= t->shape[i];
    }
    FUZZ_CHECK(t->n_elems == n);
    FUZZ_CHECK(n <= TENSOR_MAX_BYTES / esize);
    FUZZ_CHECK((uint64_t)t->n_bytes == n * esize);
    FUZZ_CHECK((t->data == NULL) == (t->n_bytes == 0));
    for (size_t i = 0; i < t->n_bytes; i++)
        sum += t->data[i];
    /* element access agrees with the bytes: the first and last elements */
    if (n > 0) {
        uint64_t first = 0, last = 0;
        for (size_t b = esize; b-- > 0;) {
            first = first << 8 | t->data[b];
            last = last << 8 | t->data[t->n_bytes - esize + b];
        }
        FUZZ_CHECK(tensor_get_bits(t, 0) == first);
        FUZZ_CHECK(tensor_get_bits(t, n - 1) == last);
    }
    FUZZ_CHECK(tensor_get_bits(t, n) == 0);
    fuzz_sink += sum;
}

void
fuzz_check_empty(const tensor *t)
{
    FUZZ_CHECK(t->dtype == TENSOR_ANY);
    FUZZ_CHECK(t->ndim == 0);
    FUZZ_CHECK(t->n_elems == 0);
    FUZZ_CHECK(t->n_bytes == 0);
    FUZZ_CHECK(t->data == NULL);
    for (unsigned i = 0; i < TENSOR_MAX_DIMS; i++)
        FUZZ_CHECK(t->shape[i] == 0);
}

void
fuzz_check_error(int rc, const tensor_error *err, const char *path)
{
    size_t n = strlen(path);
    const char *nul = memchr(err->message, '\0', sizeof err->message);

    FUZZ_CHECK(rc != TENSOR_OK);
    FUZZ_CHECK(tensor_status_name(rc) != NULL);
    FUZZ_CHECK(err->code == rc);
    FUZZ_CHECK(nul != NULL);
    FUZZ_CHECK(strncmp(err->message, path, n) == 0);
    FUZZ_CHECK(err->message[n] == ':' && err->message[n + 1] == ' ');
    FUZZ_CHECK(err->message[n + 2] != '\0');
    /* printable ASCII only: one line, and no byte of the file that a
       terminal would act on (the readers escape such bytes as \xNN) */
    for (const char *c = err->message; *c != '\0'; c++)
        FUZZ_CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
}

bool
fuzz_same_tensor(const tensor *a, const tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->n_elems != b->n_elems
        || a->n_bytes != b->n_bytes)
        return false;
    for (unsigned i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return a->n_bytes == 0 || memcmp(a->data, b->data, a->n_bytes) == 0;
}

uint64_t
fuzz_load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;

    while (n-- > 0)
        v = v << 8 | p[n];
    return v;
}

int
fuzz_hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
