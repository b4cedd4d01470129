# tests/string.mk -- sf_from_string / sf_to_string against tables and MPFR
check_PROGRAMS += tests/softfloat/test_string
TESTS += tests/softfloat/test_string
tests_softfloat_test_string_SOURCES = tests/softfloat/test_string.c
tests_softfloat_test_string_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(MPFR_CFLAGS)
tests_softfloat_test_string_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)
