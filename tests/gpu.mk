# tests/gpu.mk -- the emulator against dumps measured on real GPUs (committed
# fixtures under tests/data/gpu/), so CPU-only CI checks hardware agreement.

check_PROGRAMS += tests/softfloat/test_mma_h200
TESTS += tests/softfloat/test_mma_h200
tests_softfloat_test_mma_h200_SOURCES = tests/softfloat/test_mma_h200.c
tests_softfloat_test_mma_h200_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_h200_LDADD = tests/support/libtestsupport.la \
	softfloat/libsoftfloat.la $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)
