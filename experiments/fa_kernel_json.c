/* fa_kernel_json -- attention kernel descriptions to and from JSON files
   for the CLI: the text is analysis/kernel_json's, the file and the
   messages are the tool's */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_json.h"
#include "experiments/cli.h"
#include "experiments/fa_kernel_json.h"

char *
fa_kernel_json(const fa_kernel *k)
{
    return kj_to_json(k);
}

/* The whole of the file PATH, NUL-terminated and malloc'd; NULL with
   errno set when it cannot be read. */
static char *
read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL, *t;
    size_t len = 0, cap = 0, n;
    int e;

    if (f == NULL)
        return NULL;
    do {
        if (cap - len < 4096) {
            cap = cap ? 2 * cap : 8192;
            if ((t = realloc(text, cap + 1)) == NULL) {
                e = ENOMEM;
                goto fail;
            }
            text = t;
        }
        n = fread(text + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        e = errno != 0 ? errno : EIO;
        goto fail;
    }
    fclose(f);
    text[len] = '\0';
    return text;
fail:
    free(text);
    fclose(f);
    errno = e;
    return NULL;
}

bool
fa_kernel_load(const char *cmd, const char *opt, const char *path,
               fa_kernel *k)
{
    char *text = read_text(path);
    bool ok;

    if (text == NULL) {
        /* the words of jansson's own file reader */
        cli_error(cmd,
                  "%s '%s': line -1: unable to open %s: %s (expected a "
                  "kernel description as written by --describe)",
                  opt, path, path, strerror(errno));
        return false;
    }
    ok = fa_kernel_parse(cmd, opt, path, text, k);
    free(text);
    return ok;
}

bool
fa_kernel_parse(const char *cmd, const char *opt, const char *label,
                const char *text, fa_kernel *k)
{
    char msg[8192];

    if (kj_parse(text, opt, label, k, msg, sizeof msg) != 0) {
        cli_error(cmd, "%s", msg);
        return false;
    }
    return true;
}
