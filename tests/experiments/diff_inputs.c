/* diff_inputs -- damaged copies of a GPU dump for the bf16emu diff tests */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tensor.h"

/*
 * usage: diff_inputs drop FILE NAME OUT
 *        diff_inputs manifest FILE TEXT OUT
 *        diff_inputs set FILE NAME INDEX BITS OUT
 *
 * drop: OUT is FILE without its tensor NAME (metadata kept).
 * manifest: OUT is FILE with the metadata entry "manifest" set to TEXT
 * (TEXT "-" removes it).
 * set: OUT is FILE with element INDEX (C order) of tensor NAME replaced
 * by the bit pattern BITS (hex).
 * Exit status 0, or 1 with a message on stderr.
 */

static int
fail(const char *what, const char *why)
{
    fprintf(stderr, "diff_inputs: %s: %s\n", what, why);
    return 1;
}

int
main(int argc, char **argv)
{
    tensor_file f = TENSOR_FILE_INIT;
    tensor_error err;
    tensor_named *list;
    tensor_meta *meta;
    size_t n = 0, nm = 0;
    const char *out;
    int rc = 0;

    if (argc < 5
        || !((strcmp(argv[1], "drop") == 0 && argc == 5)
             || (strcmp(argv[1], "manifest") == 0 && argc == 5)
             || (strcmp(argv[1], "set") == 0 && argc == 7))) {
        fputs("usage: diff_inputs drop FILE NAME OUT\n"
              "       diff_inputs manifest FILE TEXT OUT\n"
              "       diff_inputs set FILE NAME INDEX BITS OUT\n",
              stderr);
        return 2;
    }
    out = argv[argc - 1];
    if (safetensors_read_all(argv[2], TENSOR_ANY, &f, &err) != TENSOR_OK)
        return fail(argv[2], err.message);
    list = calloc(f.n_tensors + 1, sizeof *list);
    meta = calloc(f.n_meta + 1, sizeof *meta);
    if (list == NULL || meta == NULL) {
        rc = fail(argv[2], "out of memory");
        goto done;
    }
    for (size_t i = 0; i < f.n_tensors; i++) {
        if (strcmp(argv[1], "drop") == 0
            && strcmp(f.tensors[i].name, argv[3]) == 0)
            continue;
        if (strcmp(argv[1], "set") == 0
            && strcmp(f.tensors[i].name, argv[3]) == 0)
            tensor_set_bits(&f.tensors[i].tensor, strtoull(argv[4], NULL, 10),
                            strtoull(argv[5], NULL, 16));
        list[n++] = f.tensors[i];
    }
    for (size_t i = 0; i < f.n_meta; i++)
        if (strcmp(f.meta[i].key, "manifest") != 0
            || strcmp(argv[1], "manifest") != 0)
            meta[nm++] = f.meta[i];
    if (strcmp(argv[1], "manifest") == 0 && strcmp(argv[3], "-") != 0) {
        meta[nm].key = "manifest";
        meta[nm++].value = argv[3];
    }
    if (safetensors_write(out, list, n, meta, nm, true, &err) != TENSOR_OK)
        rc = fail(out, err.message);
done:
    free(list);
    free(meta);
    tensor_file_free(&f);
    return rc;
}
