# tests/support.mk -- libtestsupport: seeded PRNG, failure printer, the MPFR
# oracle, the library-versus-oracle loops and suites, the Check runner, the
# value sets, the exact decimal texts, gzip scratch files, the paths of the
# measured tables, shared by the test programs; with ref/ (the
# VCVTNEPS2BF16 wrapper and the integer reference rounding) linked in
check_LTLIBRARIES += tests/support/libtestsupport.la
tests_support_libtestsupport_la_SOURCES = \
	tests/support/support.h tests/support/support.c \
	tests/support/oracle.h tests/support/oracle.c \
	tests/support/opcheck.h tests/support/opcheck.c \
	tests/support/opsuite.h tests/support/opsuite.c \
	tests/support/suite.h tests/support/suite.c \
	tests/support/valueset.h tests/support/valueset.c \
	tests/support/decimal.h tests/support/decimal.c \
	tests/support/gzfile.h tests/support/gzfile.c \
	tests/support/tables.h tests/support/tables.c \
	tests/support/pathcheck.h tests/support/pathcheck.c
tests_support_libtestsupport_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(MPFR_CFLAGS) $(OPENMP_CFLAGS) $(ZLIB_CFLAGS)
tests_support_libtestsupport_la_LIBADD = ref/libref.la $(MPFR_LIBS) \
	$(ZLIB_LIBS)
