/* replay.c -- runs a fuzz target on every file of its corpus, without
   libFuzzer: make check runs it (under ASan and UBSan in the sanitizer
   build, under valgrind in make check-valgrind) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_common.h"

/*
 * usage: replay_NAME [-q] [FILE_OR_DIR...]
 *
 * Built once per target with FUZZ_NAME (e.g. "safetensors") defined.
 * Without operands it replays SRCDIR/tests/fuzz/corpus/FUZZ_NAME.  A folder
 * is replayed file by file in name order (names starting with '.' are
 * left out); a file alone.  Each input is copied into a buffer of exactly
 * its size, so that a read past its end is caught.  Prints the number of
 * inputs and bytes; exit status 0, or 1 when a file cannot be read or the
 * corpus is empty.  A failed check in the target aborts.
 *
 * -q sends the target's own stderr output (the CLI parsers print their
 * complaints) to /dev/null; sanitizer reports and failed checks still
 * reach the original stderr.  FUZZ_QUIET defined at build time makes -q
 * the default.  A failed check, and a sanitizer's report, name the input.
 */

#ifndef SRCDIR
#define SRCDIR "."
#endif
#ifndef FUZZ_NAME
#error "FUZZ_NAME must name the target"
#endif

/* Present in the sanitizer runtimes; absent (NULL) otherwise. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));
void __sanitizer_set_death_callback(void (*callback)(void))
    __attribute__((weak));

static unsigned long n_inputs;
static unsigned long long n_bytes;

static int
replay_file(const char *path)
{
    struct stat st;
    unsigned char *buf;
    size_t done = 0;
    int fd = open(path, O_RDONLY);

    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stdout, "replay: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    /* malloc(0) may return NULL: one byte more, not part of the input */
    buf = malloc((size_t)st.st_size > 0 ? (size_t)st.st_size : 1);
    if (buf == NULL) {
        fprintf(stdout, "replay: %s: out of memory\n", path);
        close(fd);
        return 1;
    }
    while (done < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + done, (size_t)st.st_size - done);
        if (r <= 0) {
            fprintf(stdout, "replay: %s: cannot read\n", path);
            free(buf);
            close(fd);
            return 1;
        }
        done += (size_t)r;
    }
    close(fd);
    fuzz_input_name = path;
    LLVMFuzzerTestOneInput(buf, done);
    fuzz_input_name = NULL;
    free(buf);
    n_inputs++;
    n_bytes += done;
    return 0;
}

static int
skip_hidden(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static int
replay_path(const char *path)
{
    struct dirent **list;
    struct stat st;
    int n, rc = 0;

    if (stat(path, &st) != 0) {
        fprintf(stdout, "replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    n = scandir(path, &list, skip_hidden, alphasort);
    if (n < 0) {
        fprintf(stdout, "replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        size_t len = strlen(path) + strlen(list[i]->d_name) + 2;
        char *p = malloc(len);
        if (p == NULL) {
            rc = 1;
        } else {
            snprintf(p, len, "%s/%s", path, list[i]->d_name);
            rc |= replay_file(p);
            free(p);
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

/* Names the input after a sanitizer's report. */
static void
name_input(void)
{
    if (fuzz_input_name != NULL)
        dprintf(fuzz_report_fd, "replay: the input was %s\n", fuzz_input_name);
}

/* Sends stderr to /dev/null, and the sanitizers' reports and the failed
   checks to a copy of the original stderr. */
static void
quiet_stderr(void)
{
    int null = open("/dev/null", O_WRONLY), saved;

    if (null < 0)
        return;
    fflush(stderr);
    saved = dup(2);
    if (saved < 0) {
        close(null);
        return;
    }
    if (__sanitizer_set_report_fd != NULL)
        __sanitizer_set_report_fd((void *)(intptr_t)saved);
    fuzz_report_fd = saved;
    dup2(null, 2);
    close(null);
}

int
main(int argc, char **argv)
{
    const char *dflt = SRCDIR "/tests/fuzz/corpus/" FUZZ_NAME;
    int first = 1, rc = 0;
#ifdef FUZZ_QUIET
    int quiet = 1;
#else
    int quiet = 0;
#endif

    if (argc > 1 && strcmp(argv[1], "-q") == 0) {
        quiet = 1;
        first = 2;
    }
    if (quiet)
        quiet_stderr();
    if (__sanitizer_set_death_callback != NULL)
        __sanitizer_set_death_callback(name_input);
    if (first >= argc)
        rc = replay_path(dflt);
    for (int i = first; i < argc; i++)
        rc |= replay_path(argv[i]);
    printf("replay %s: %lu inputs, %llu bytes\n", FUZZ_NAME, n_inputs,
           n_bytes);
    if (n_inputs == 0) {
        printf("replay %s: no inputs (expected a corpus in %s)\n", FUZZ_NAME,
               first >= argc ? dflt : "the operands");
        rc = 1;
    }
    return rc;
}
