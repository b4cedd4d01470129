# tests/hw.mk -- softfloat against the x86 hardware, stochastic rounding,
# rounding events, comparisons, min/max and the hand-written special cases

hw_test_ldadd = tests/support/libtestsupport.la libbf16emu.la \
	$(CHECK_LIBS) $(LIBM)

hw_tests = \
	tests/softfloat/test_x86 \
	tests/softfloat/test_avx512bf16 \
	tests/softfloat/test_sr \
	tests/softfloat/test_events \
	tests/softfloat/test_compare \
	tests/softfloat/test_minmax \
	tests/softfloat/test_special

check_PROGRAMS += $(hw_tests)
TESTS += $(hw_tests)

# The hardware comparison touches the floating-point environment: no
# constant folding under an assumed rounding mode, no builtin replacements.
tests_softfloat_test_x86_SOURCES = tests/softfloat/test_x86.c
tests_softfloat_test_x86_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	-frounding-math -fno-builtin
tests_softfloat_test_x86_LDADD = $(hw_test_ldadd)

tests_softfloat_test_avx512bf16_SOURCES = tests/softfloat/test_avx512bf16.c
tests_softfloat_test_avx512bf16_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_avx512bf16_LDADD = $(hw_test_ldadd)

tests_softfloat_test_sr_SOURCES = tests/softfloat/test_sr.c
tests_softfloat_test_sr_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_sr_LDADD = $(hw_test_ldadd)

tests_softfloat_test_events_SOURCES = tests/softfloat/test_events.c
tests_softfloat_test_events_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_events_LDADD = $(hw_test_ldadd)

tests_softfloat_test_compare_SOURCES = tests/softfloat/test_compare.c
tests_softfloat_test_compare_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_compare_LDADD = $(hw_test_ldadd)

tests_softfloat_test_minmax_SOURCES = tests/softfloat/test_minmax.c
tests_softfloat_test_minmax_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_minmax_LDADD = $(hw_test_ldadd)

tests_softfloat_test_special_SOURCES = tests/softfloat/test_special.c
tests_softfloat_test_special_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_special_LDADD = $(hw_test_ldadd)

EXTRA_DIST += tests/data/special.tv

# make check-exhaustive only (EXTRA_PROGRAMS: not built by make or make
# check).
EXHAUSTIVE_TESTS += tests/exhaustive/exh_avx512bf16
tests_exhaustive_exh_avx512bf16_SOURCES = tests/exhaustive/exh_avx512bf16.c
tests_exhaustive_exh_avx512bf16_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_exhaustive_exh_avx512bf16_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_avx512bf16_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(LIBM)
