# tests/exp.mk -- tests of the exp models of the reference attention: the
# correctly rounded exp and exp2, the table model and the model dispatch
# against MPFR (make check), and every binary32 input of exp and exp2
# (make check-exhaustive).

EXP_TEST_SOURCES = tests/attention/exp_ref.h tests/attention/exp_ref.c

check_PROGRAMS += tests/attention/test_exp
TESTS += tests/attention/test_exp
tests_attention_test_exp_SOURCES = tests/attention/test_exp.c \
	$(EXP_TEST_SOURCES)
tests_attention_test_exp_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(MPFR_CFLAGS)
tests_attention_test_exp_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) \
	$(MPFR_LIBS) $(LIBM)

# make check-exhaustive only; OpenMP-parallel.  Arguments (by hand):
# [--mpfr-all] [FIRST LAST] -- see the program's header.
EXHAUSTIVE_TESTS += tests/exhaustive/exh_exp
tests_exhaustive_exh_exp_SOURCES = tests/exhaustive/exh_exp.c \
	$(EXP_TEST_SOURCES)
tests_exhaustive_exh_exp_CFLAGS = $(AM_CFLAGS) $(MPFR_CFLAGS) $(OPENMP_CFLAGS)
tests_exhaustive_exh_exp_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_exp_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(MPFR_LIBS) $(LIBM)

# The page that documents the exp models and these tests.
EXTRA_DIST += doc/exp-models.md
