/* suite.c -- building and running the Check suite of a test program */
#include <stdio.h>
#include <stdlib.h>

#include "suite.h"

TCase *
tst_add_tcase(Suite *s, const char *name, double timeout)
{
    TCase *tc = tcase_create(name);

    if (timeout > 0)
        tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

int
tst_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    setvbuf(stdout, NULL, _IOLBF, 0);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
