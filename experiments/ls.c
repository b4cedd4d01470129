/* ls.c -- bf16emu ls: the keys, dtypes, shapes and byte sizes of tensor
   files, and a summary of their manifests */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "analysis/tensor.h"
#include "experiments/cli.h"

#define CMD "ls"

/*
 * What is listed.  Each FILE is a .safetensors or a .npy file, told apart
 * as every reader of the project does (the extension, else the .npy
 * magic).  Only headers are read: the listing of a file of any size is
 * immediate, and a file whose header is malformed is refused with the
 * reader's message (exit 2, nothing on stdout), as attn, diff and mma
 * would refuse it.
 *
 * The manifest of a dump (what produced it: GPU, driver, library versions,
 * kernel, shapes, seeds) is the JSON text of the safetensors metadata
 * entry "manifest", else a JSON file next to FILE with the extension
 * replaced by ".json" (the GPU dumpers write both).  Its top-level fields
 * are summarised: scalars as they are, small arrays and objects of
 * scalars inline, larger ones by their size.  A manifest that is not a
 * JSON object is reported as such; it does not make the listing fail.
 */

#define MAX_INLINE 8    /* array or object members shown inline */
#define MAX_TEXT 100    /* bytes of a string shown */

typedef struct
{
    const char *path;
    tensor_listing l;
    json_t *manifest;      /* the parsed manifest object, or NULL */
    const char *man_from;  /* "__metadata__", or the sidecar's path */
    char *sidecar;         /* the sidecar's path (malloc'ed), or NULL */
    const char *man_error; /* why a manifest present was not used */
} ls_file;

/*----------------------------------------------------------------------------
 * Text helpers.
 *--------------------------------------------------------------------------*/
/* S with control bytes written as \xNN, cut after MAX bytes with "...". */
static void
put_text(cli_buf *b, const char *s, size_t max)
{
    size_t n = strlen(s);

    for (size_t i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            cli_buf_printf(b, "\\x%02X", c);
        else
            cli_buf_putc(b, (char)c);
    }
    if (n > max)
        cli_buf_printf(b, "... (%zu bytes)", n);
}

static bool
is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static void
put_scalar(cli_buf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        put_text(b, json_string_value(v), MAX_TEXT);
        break;
    case JSON_INTEGER:
        cli_buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        cli_buf_printf(b, "%.17g", json_real_value(v));
        break;
    case JSON_TRUE:
        cli_buf_puts(b, "true");
        break;
    case JSON_FALSE:
        cli_buf_puts(b, "false");
        break;
    default:
        cli_buf_puts(b, "null");
        break;
    }
}

/* One manifest value in a line: scalars as they are, up to MAX_INLINE
   scalars of an array or object inline, else the count. */
static void
put_summary(cli_buf *b, const json_t *v)
{
    if (is_scalar(v)) {
        put_scalar(b, v);
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        bool inline_ok = n <= MAX_INLINE;
        for (size_t i = 0; i < n && inline_ok; i++)
            inline_ok = is_scalar(json_array_get(v, i))
                        && !json_is_string(json_array_get(v, i));
        if (!inline_ok) {
            cli_buf_printf(b, "[%zu item%s]", n, n == 1 ? "" : "s");
            return;
        }
        cli_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                cli_buf_puts(b, ", ");
            put_scalar(b, json_array_get(v, i));
        }
        cli_buf_putc(b, ']');
    } else {
        size_t n = json_object_size(v), i = 0;
        bool inline_ok = n <= MAX_INLINE;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            inline_ok = inline_ok && is_scalar(x);
        }
        if (!inline_ok) {
            cli_buf_printf(b, "{%zu field%s}", n, n == 1 ? "" : "s");
            return;
        }
        cli_buf_putc(b, '{');
        json_object_foreach((json_t *)v, k, x)
        {
            if (i++ > 0)
                cli_buf_puts(b, ", ");
            put_text(b, k, MAX_TEXT);
            cli_buf_puts(b, ": ");
            put_scalar(b, x);
        }
        cli_buf_putc(b, '}');
    }
}

/*----------------------------------------------------------------------------
 * Reading.
 *--------------------------------------------------------------------------*/
/* PATH with its extension (after the last '.' of the last component)
   replaced by ".json"; NULL when it has none or memory is short. */
static char *
sidecar_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    size_t stem;
    char *p;

    if (dot == NULL || (slash != NULL && dot < slash) || dot == path
        || (slash != NULL && dot == slash + 1))
        return NULL;
    if (strcmp(dot, ".json") == 0)
        return NULL;
    stem = (size_t)(dot - path);
    p = malloc(stem + 6);
    if (p != NULL) {
        memcpy(p, path, stem);
        memcpy(p + stem, ".json", 6);
    }
    return p;
}

static json_t *
parse_object(const char *text, size_t len, const char **why)
{
    json_error_t e;
    json_t *v = json_loadb(text, len, 0, &e);

    if (v == NULL) {
        *why = "not valid JSON";
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        *why = "not a JSON object";
        return NULL;
    }
    return v;
}

/* The manifest of F: the metadata entry "manifest", else the sidecar. */
static void
find_manifest(ls_file *f)
{
    struct stat st;

    for (size_t i = 0; i < f->l.n_meta; i++)
        if (strcmp(f->l.meta[i].key, "manifest") == 0) {
            const char *v = f->l.meta[i].value;
            f->man_from = "__metadata__";
            f->manifest = parse_object(v, strlen(v), &f->man_error);
            return;
        }
    f->sidecar = sidecar_path(f->path);
    if (f->sidecar == NULL || stat(f->sidecar, &st) != 0
        || !S_ISREG(st.st_mode)) {
        free(f->sidecar);
        f->sidecar = NULL;
        return;
    }
    f->man_from = f->sidecar;
    if (st.st_size > 64 * 1024 * 1024) {
        f->man_error = "larger than 64 MiB";
        return;
    }
    {
        size_t len;
        char *text = cli_read_all(f->sidecar, &len);
        if (text == NULL) {
            f->man_error = "cannot be read";
            return;
        }
        f->manifest = parse_object(text, len, &f->man_error);
        free(text);
    }
}

/*----------------------------------------------------------------------------
 * Text output.
 *--------------------------------------------------------------------------*/
static const char *
dtype_label(char *buf, size_t n, const ls_file *f, const tensor_entry *t)
{
    const char *name = tensor_dtype_name(t->dtype);

    if (f->l.kind == TENSOR_KIND_NPY)
        snprintf(buf, n, "%s ('%s')", t->dtype == TENSOR_ANY ? "raw" : name,
                 f->l.npy_descr);
    else
        snprintf(buf, n, "%s", name);
    return buf;
}

static void
text_file(cli_buf *b, const ls_file *f)
{
    const tensor_listing *l = &f->l;
    size_t wk = 3, wd = 5, ws = 5;
    char d[64], sh[256];

    put_text(b, f->path, SIZE_MAX);
    if (l->kind == TENSOR_KIND_NPY)
        cli_buf_printf(b,
                       ": .npy %u.0, one array%s, %" PRIu64
                       " bytes (header %" PRIu64 ")\n",
                       l->npy_version,
                       l->npy_fortran ? " in Fortran order" : "",
                       l->file_size, l->data_offset);
    else
        cli_buf_printf(b,
                       ": .safetensors, %zu tensor%s, %" PRIu64
                       " bytes (header %" PRIu64 ")\n",
                       l->n_tensors, l->n_tensors == 1 ? "" : "s",
                       l->file_size, l->data_offset);
    for (size_t i = 0; i < l->n_tensors; i++) {
        const tensor_entry *t = &l->tensors[i];
        size_t nk = strlen(t->name);
        if (nk > wk)
            wk = nk < 40 ? nk : 40;
        if (strlen(dtype_label(d, sizeof d, f, t)) > wd)
            wd = strlen(d);
        if (strlen(cli_shape_str(sh, sizeof sh, t->ndim, t->shape)) > ws)
            ws = strlen(sh);
    }
    if (l->n_tensors > 0)
        cli_buf_printf(b, "  %-*s  %-*s  %-*s  %s\n", (int)wk, "key",
                       (int)wd, "dtype", (int)ws, "shape", "bytes");
    for (size_t i = 0; i < l->n_tensors; i++) {
        const tensor_entry *t = &l->tensors[i];
        cli_buf name;
        cli_buf_init(&name);
        put_text(&name, l->kind == TENSOR_KIND_NPY ? "-" : t->name, 60);
        cli_buf_printf(b, "  %-*s  %-*s  %-*s  %" PRIu64 "\n", (int)wk,
                       name.p != NULL ? name.p : "", (int)wd,
                       dtype_label(d, sizeof d, f, t), (int)ws,
                       cli_shape_str(sh, sizeof sh, t->ndim, t->shape),
                       t->n_bytes);
        b->failed = b->failed || name.failed;
        cli_buf_free(&name);
    }
    {
        size_t n_other = 0;
        for (size_t i = 0; i < l->n_meta; i++)
            n_other += strcmp(l->meta[i].key, "manifest") != 0;
        if (n_other > 0) {
            cli_buf_puts(b, "  metadata:\n");
            for (size_t i = 0; i < l->n_meta; i++) {
                if (strcmp(l->meta[i].key, "manifest") == 0)
                    continue;
                cli_buf_puts(b, "    ");
                put_text(b, l->meta[i].key, 60);
                cli_buf_puts(b, ": ");
                put_text(b, l->meta[i].value, MAX_TEXT);
                cli_buf_putc(b, '\n');
            }
        }
    }
    if (f->man_from == NULL)
        return;
    cli_buf_puts(b, "  manifest (");
    if (f->man_from == f->sidecar)
        put_text(b, f->man_from, SIZE_MAX);
    else
        cli_buf_puts(b, "__metadata__ \"manifest\"");
    if (f->manifest == NULL) {
        cli_buf_printf(b, "): %s\n", f->man_error);
        return;
    }
    cli_buf_puts(b, "):\n");
    {
        const char *k;
        json_t *v;
        size_t wf = 0;
        json_object_foreach(f->manifest, k, v)
        {
            size_t nk = strlen(k) < 24 ? strlen(k) : 24;
            wf = nk > wf ? nk : wf;
        }
        json_object_foreach(f->manifest, k, v)
        {
            size_t start = b->len, nk;
            cli_buf_puts(b, "    ");
            put_text(b, k, 60);
            nk = b->len - start - 4;
            cli_buf_putc(b, ':');
            for (size_t s = nk; s < wf + 1; s++)
                cli_buf_putc(b, ' ');
            cli_buf_putc(b, ' ');
            put_summary(b, v);
            cli_buf_putc(b, '\n');
        }
    }
}

/*----------------------------------------------------------------------------
 * JSON output.
 *--------------------------------------------------------------------------*/
/* A JSON value as it is (depth limited by the writer). */
static void
json_value(cli_json *j, const char *key, const json_t *v)
{
    const char *k;
    json_t *x;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        cli_json_object_begin(j, key);
        json_object_foreach((json_t *)v, k, x)
        {
            json_value(j, k, x);
        }
        cli_json_object_end(j);
        break;
    case JSON_ARRAY:
        cli_json_array_begin(j, key);
        for (size_t i = 0; i < json_array_size(v); i++)
            json_value(j, NULL, json_array_get(v, i));
        cli_json_array_end(j);
        break;
    case JSON_STRING:
        cli_json_string(j, key, json_string_value(v));
        break;
    case JSON_INTEGER:
        cli_json_int(j, key, (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        cli_json_double(j, key, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        cli_json_bool(j, key, json_is_true(v));
        break;
    default:
        cli_json_null(j, key);
        break;
    }
}

static void
json_file(cli_json *j, const ls_file *f)
{
    const tensor_listing *l = &f->l;

    cli_json_object_begin(j, NULL);
    cli_json_string(j, "path", f->path);
    cli_json_string(j, "format",
                    l->kind == TENSOR_KIND_NPY ? "npy" : "safetensors");
    cli_json_int(j, "bytes", (long long)l->file_size);
    cli_json_int(j, "header_bytes", (long long)l->data_offset);
    if (l->kind == TENSOR_KIND_NPY) {
        char ver[16];
        snprintf(ver, sizeof ver, "%u.0", l->npy_version);
        cli_json_string(j, "npy_version", ver);
        cli_json_string(j, "descr", l->npy_descr);
        cli_json_bool(j, "fortran_order", l->npy_fortran);
    }
    cli_json_array_begin(j, "tensors");
    for (size_t i = 0; i < l->n_tensors; i++) {
        const tensor_entry *t = &l->tensors[i];
        cli_json_object_begin(j, NULL);
        if (l->kind == TENSOR_KIND_NPY)
            cli_json_null(j, "key");
        else
            cli_json_string(j, "key", t->name);
        if (t->dtype == TENSOR_ANY)
            cli_json_null(j, "dtype");
        else
            cli_json_string(j, "dtype", tensor_dtype_name(t->dtype));
        cli_json_shape(j, "shape", t->ndim, t->shape);
        cli_json_int(j, "elements", (long long)t->n_elems);
        cli_json_int(j, "bytes", (long long)t->n_bytes);
        cli_json_int(j, "offset", (long long)t->offset);
        cli_json_object_end(j);
    }
    cli_json_array_end(j);
    cli_json_object_begin(j, "metadata");
    for (size_t i = 0; i < l->n_meta; i++)
        if (strcmp(l->meta[i].key, "manifest") != 0 || f->manifest == NULL)
            cli_json_string(j, l->meta[i].key, l->meta[i].value);
    cli_json_object_end(j);
    if (f->man_from == NULL) {
        cli_json_null(j, "manifest");
    } else {
        cli_json_object_begin(j, "manifest");
        cli_json_string(j, "from", f->man_from);
        if (f->manifest != NULL)
            json_value(j, "fields", f->manifest);
        else
            cli_json_string(j, "error", f->man_error);
        cli_json_object_end(j);
    }
    cli_json_object_end(j);
}

/*----------------------------------------------------------------------------
 * The command.
 *--------------------------------------------------------------------------*/
void
ls_help(FILE *out)
{
    fputs("usage: bf16emu ls [--json] FILE...\n"
          "\n"
          "Lists what each tensor file holds, from its header alone: for a "
          ".safetensors\n"
          "file every key with its dtype, shape and size in bytes, and its "
          "metadata;\n"
          "for a .npy file its dtype (as the file's 'descr'), shape, size "
          "and version.\n"
          "A dump's manifest -- the metadata entry \"manifest\", else FILE "
          "with its\n"
          "extension replaced by .json -- is summarised field by field.  "
          "Files are\n"
          "told apart by their extension, else by their content; a file "
          "that is not\n"
          "one of the two, or whose header is malformed, is named with the "
          "reason.\n"
          "\n"
          "options:\n"
          "  --json               one JSON object: {\"files\": [{path, "
          "format, bytes,\n"
          "                       header_bytes, tensors: [{key, dtype, "
          "shape, elements,\n"
          "                       bytes, offset}], metadata, manifest}]}\n"
          "  -h, --help           this text\n"
          "\n"
          "Exit status: 0 ok, 2 bad usage or a file that cannot be listed "
          "(nothing on\n"
          "stdout then).\n",
          out);
}

int
ls_main(int argc, char **argv)
{
    static const cli_option opts[] = {
        {"help", false, 0}, {"json", false, 1}, {NULL, false, 0}};
    bool json = false;
    cli_parser p;
    const char *v;
    int id, rc = CLI_EXIT_OK;
    ls_file *files;
    size_t n = 0;
    cli_buf out;

    files = calloc((size_t)(argc > 0 ? argc : 1), sizeof *files);
    if (files == NULL)
        return cli_error(CMD, "out of memory");
    cli_parser_init(&p, CMD, argc, argv);
    while ((id = cli_parser_next(&p, opts, &v)) != CLI_ARG_END) {
        if (id == CLI_ARG_ERROR) {
            free(files);
            return CLI_EXIT_USAGE;
        }
        if (id == 0) {
            free(files);
            ls_help(stdout);
            return CLI_EXIT_OK;
        }
        if (id == 1)
            json = true;
        else
            files[n++].path = v;
    }
    if (n == 0) {
        free(files);
        return cli_error(CMD, "expected one or more FILEs (see 'bf16emu ls "
                              "--help')");
    }
    for (size_t i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        tensor_error err;
        if (files[i].path[0] == '\0') {
            rc = cli_error(CMD, "operand %zu: empty file name", i + 1);
            break;
        }
        if (tensor_file_list(files[i].path, &files[i].l, &err)
            != TENSOR_OK) {
            rc = cli_error(CMD, "%s", err.message);
            break;
        }
        find_manifest(&files[i]);
    }
    if (rc == CLI_EXIT_OK) {
        cli_buf_init(&out);
        if (json) {
            cli_json j;
            cli_json_init(&j, &out);
            cli_json_object_begin(&j, NULL);
            cli_json_array_begin(&j, "files");
            for (size_t i = 0; i < n; i++)
                json_file(&j, &files[i]);
            cli_json_array_end(&j);
            cli_json_object_end(&j);
            cli_json_finish(&j);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (i > 0)
                    cli_buf_putc(&out, '\n');
                text_file(&out, &files[i]);
            }
        }
        cli_report_emit(CMD, &out, &rc);
    }
    for (size_t i = 0; i < n; i++) {
        tensor_listing_free(&files[i].l);
        json_decref(files[i].manifest);
        free(files[i].sidecar);
    }
    free(files);
    return rc;
}
