/* test_kernel_json.c -- descriptions to and from JSON text
   (analysis/kernel_json.h): every built-in description read back from
   its text to the same text and the same bytes of each field that
   changes bits; the messages of bad text (JSON, an object, unknown,
   missing and ill-typed fields, fa_kernel_check's refusal), each naming
   the option, the label and the field */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/kernel_json.h"
#include "attention/attention.h"
#include "tests/support/suite.h"
#include "tests/support/support.h"

START_TEST(test_round_trip)
{
    for (size_t i = 0; fa_kernel_at(i) != NULL; i++) {
        const fa_kernel *k = fa_kernel_at(i);
        char msg[512], *text = kj_to_json(k), *again;
        fa_kernel r;
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(kj_parse(text, "--kernel", "x.json", &r, msg, sizeof msg)
                          == 0,
                      "%s: %s", k->name, msg);
        ck_assert_str_eq(msg, "");
        ck_assert_str_eq(r.name, k->name);
        ck_assert_int_eq(r.p, k->p);
        ck_assert_int_eq(r.exp_model, k->exp_model);
        ck_assert_uint_eq(r.n_tiles, k->n_tiles);
        ck_assert_int_eq(r.bias_add, k->bias_add);
        again = kj_to_json(&r);
        ck_assert_ptr_nonnull(again);
        ck_assert_str_eq(again, text);
        free(again);
        free(text);
    }
}
END_TEST

/* The message kj_parse gives for TEXT (it must refuse it). */
static void
refused(const char *text, const char *want)
{
    char msg[512];
    fa_kernel k;

    ck_assert_int_eq(kj_parse(text, "kernel", "dict", &k, msg, sizeof msg),
                     -1);
    ck_assert_msg(strstr(msg, want) != NULL, "got \"%s\", expected \"%s\"",
                  msg, want);
    ck_assert_ptr_null(strchr(msg, '\n'));
}

/* fa2's text with OLD replaced by NEW (both must be there once). */
static char *
fa2_with(const char *old, const char *new)
{
    char *text = kj_to_json(fa_kernel_by_name("fa2")), *at, *r;

    ck_assert_ptr_nonnull(text);
    at = strstr(text, old);
    ck_assert_ptr_nonnull(at);
    r = malloc(strlen(text) + strlen(new) + 1);
    ck_assert_ptr_nonnull(r);
    memcpy(r, text, (size_t)(at - text));
    strcpy(r + (at - text), new);
    strcat(r, at + strlen(old));
    free(text);
    return r;
}

START_TEST(test_messages)
{
    char *t;

    refused("{", "kernel 'dict': line 1: ");
    refused("{", "(expected a kernel description as written by "
                 "--describe)");
    refused("[1]", "kernel 'dict': expected a JSON object");
    refused("{\"name\": \"x\"}", "kernel 'dict': field 'd_round': missing");
    t = fa2_with("\"name\": \"fa2\"", "\"name\": \"fa2\", \"bogus\": 1");
    refused(t, "field 'bogus': unknown field");
    free(t);
    t = fa2_with("\"p\": \"in\"", "\"p\": \"f8\"");
    refused(t, "field 'p': expected one of f32, bf16, f16, in");
    free(t);
    t = fa2_with("\"causal_skip\": true", "\"causal_skip\": 1");
    refused(t, "field 'causal_skip': expected true or false");
    free(t);
    t = fa2_with("\"mma\": {\n    \"s\": \"sm90\"",
                 "\"mma\": {\n    \"s\": \"\"");
    refused(t, "field 'mma.s': expected an MMA preset name");
    free(t);
}
END_TEST

static Suite *
kernel_json_suite(void)
{
    Suite *s = suite_create("kernel_json");
    TCase *tc = tst_add_tcase(s, "text", 30);

    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_messages);
    return s;
}

int
main(void)
{
    return tst_run_suite(kernel_json_suite());
}
