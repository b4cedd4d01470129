/* jsonq -- parse a JSON document with jansson and print values by path */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/*
 * usage: jsonq FILE PATH...
 *
 * Parses FILE ("-" for stdin) as one JSON document, then prints the value
 * at each PATH on its own line.  A path is a dot-separated list of object
 * keys and array indices ("steps.1.rounding.guard"); "." alone is the
 * document.  Strings print raw, integers in decimal, true/false/null as
 * words, objects and arrays as "{n}" / "[n]" with n their size.
 *
 * Exit status: 0 all paths found, 1 a path is missing, 2 the document does
 * not parse (or bad usage).
 */

static json_t *
lookup(json_t *v, const char *path)
{
    char buf[512], *save = NULL, *tok;

    if (strcmp(path, ".") == 0)
        return v;
    if (strlen(path) >= sizeof buf)
        return NULL;
    strcpy(buf, path);
    for (tok = strtok_r(buf, ".", &save); tok != NULL && v != NULL;
         tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(v)) {
            char *end;
            unsigned long i = strtoul(tok, &end, 10);
            v = (*end == '\0' && end != tok) ? json_array_get(v, i) : NULL;
        } else if (json_is_object(v)) {
            v = json_object_get(v, tok);
        } else {
            v = NULL;
        }
    }
    return v;
}

static void
print_value(const json_t *v)
{
    if (json_is_string(v))
        printf("%s\n", json_string_value(v));
    else if (json_is_integer(v))
        printf("%" JSON_INTEGER_FORMAT "\n", json_integer_value(v));
    else if (json_is_true(v))
        puts("true");
    else if (json_is_false(v))
        puts("false");
    else if (json_is_null(v))
        puts("null");
    else if (json_is_object(v))
        printf("{%zu}\n", json_object_size(v));
    else if (json_is_array(v))
        printf("[%zu]\n", json_array_size(v));
    else if (json_is_real(v))
        printf("%.17g\n", json_real_value(v));
}

int
main(int argc, char **argv)
{
    json_error_t err;
    json_t *doc;
    int rc = 0;

    if (argc < 3) {
        fputs("usage: jsonq FILE PATH...\n", stderr);
        return 2;
    }
    if (strcmp(argv[1], "-") == 0)
        doc = json_loadf(stdin, JSON_REJECT_DUPLICATES, &err);
    else
        doc = json_load_file(argv[1], JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        fprintf(stderr, "jsonq: %s: line %d column %d: %s\n", argv[1],
                err.line, err.column, err.text);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        json_t *v = lookup(doc, argv[i]);
        if (v == NULL) {
            fprintf(stderr, "jsonq: %s: no value at '%s'\n", argv[1],
                    argv[i]);
            rc = 1;
            continue;
        }
        print_value(v);
    }
    json_decref(doc);
    return rc;
}
