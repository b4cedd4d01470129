/* suite.h -- building and running the Check suite of a test program */
#ifndef BF16EMU_TESTS_SUITE_H
#define BF16EMU_TESTS_SUITE_H

#include <check.h>

/* Creates the tcase NAME, adds it to S and returns it, ready for tests.
   TIMEOUT is in seconds; 0 keeps Check's default. */
TCase *tst_add_tcase(Suite *s, const char *name, double timeout);

/* The main of a test program: runs every test of S (verbosity from
   CK_VERBOSITY, CK_NORMAL by default) with stdout line-buffered, so that
   vectors printed by a forked test survive it, then frees the runner.
   Returns EXIT_SUCCESS when no test failed, else EXIT_FAILURE. */
int tst_run_suite(Suite *s);

#endif
