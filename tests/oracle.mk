# tests/oracle.mk -- softfloat ops against the MPFR oracle (make check) and
# the exhaustive runs (make check-exhaustive)

ORACLE_TEST_LIBS = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)
ORACLE_TEST_FLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(MPFR_CFLAGS)

ORACLE_TESTS = tests/softfloat/test_add \
	tests/softfloat/test_mul \
	tests/softfloat/test_div \
	tests/softfloat/test_sqrt \
	tests/softfloat/test_fma \
	tests/softfloat/test_convert
check_PROGRAMS += $(ORACLE_TESTS)
TESTS += $(ORACLE_TESTS)

tests_softfloat_test_add_SOURCES = tests/softfloat/test_add.c
tests_softfloat_test_add_CFLAGS = $(ORACLE_TEST_FLAGS)
tests_softfloat_test_add_LDADD = $(ORACLE_TEST_LIBS)
tests_softfloat_test_add_LDFLAGS = $(OPENMP_CFLAGS)

tests_softfloat_test_mul_SOURCES = tests/softfloat/test_mul.c
tests_softfloat_test_mul_CFLAGS = $(ORACLE_TEST_FLAGS)
tests_softfloat_test_mul_LDADD = $(ORACLE_TEST_LIBS)
tests_softfloat_test_mul_LDFLAGS = $(OPENMP_CFLAGS)

tests_softfloat_test_div_SOURCES = tests/softfloat/test_div.c
tests_softfloat_test_div_CFLAGS = $(ORACLE_TEST_FLAGS)
tests_softfloat_test_div_LDADD = $(ORACLE_TEST_LIBS)
tests_softfloat_test_div_LDFLAGS = $(OPENMP_CFLAGS)

tests_softfloat_test_sqrt_SOURCES = tests/softfloat/test_sqrt.c
tests_softfloat_test_sqrt_CFLAGS = $(ORACLE_TEST_FLAGS)
tests_softfloat_test_sqrt_LDADD = $(ORACLE_TEST_LIBS)
tests_softfloat_test_sqrt_LDFLAGS = $(OPENMP_CFLAGS)

tests_softfloat_test_fma_SOURCES = tests/softfloat/test_fma.c
tests_softfloat_test_fma_CFLAGS = $(ORACLE_TEST_FLAGS)
tests_softfloat_test_fma_LDADD = $(ORACLE_TEST_LIBS)
tests_softfloat_test_fma_LDFLAGS = $(OPENMP_CFLAGS)

tests_softfloat_test_convert_SOURCES = tests/softfloat/test_convert.c
tests_softfloat_test_convert_CFLAGS = $(ORACLE_TEST_FLAGS)
tests_softfloat_test_convert_LDADD = $(ORACLE_TEST_LIBS)
tests_softfloat_test_convert_LDFLAGS = $(OPENMP_CFLAGS)

# Exhaustive: built and run only by make check-exhaustive (see
# Makefile.am); OpenMP-parallel, several minutes to hours each.
EXHAUSTIVE_TESTS += tests/exhaustive/exh_convert \
	tests/exhaustive/exh_bf16_binary
EXH_FLAGS = $(AM_CFLAGS) $(MPFR_CFLAGS) $(OPENMP_CFLAGS)

tests_exhaustive_exh_convert_SOURCES = tests/exhaustive/exh_convert.c \
	tests/exhaustive/exh_run.h tests/exhaustive/exh_run.c
tests_exhaustive_exh_convert_CFLAGS = $(EXH_FLAGS)
tests_exhaustive_exh_convert_LDADD = $(ORACLE_TEST_LIBS)
tests_exhaustive_exh_convert_LDFLAGS = $(OPENMP_CFLAGS)

tests_exhaustive_exh_bf16_binary_SOURCES = tests/exhaustive/exh_bf16_binary.c \
	tests/exhaustive/exh_run.h tests/exhaustive/exh_run.c
tests_exhaustive_exh_bf16_binary_CFLAGS = $(EXH_FLAGS)
tests_exhaustive_exh_bf16_binary_LDADD = $(ORACLE_TEST_LIBS)
tests_exhaustive_exh_bf16_binary_LDFLAGS = $(OPENMP_CFLAGS)
