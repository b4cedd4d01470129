# tests/mma.mk -- the accumulation and matrix-unit models: published
# tensor-core vectors, directed probes, the CPU dot-product instructions,
# the GEMM paths

mma_test_ldadd = tests/support/libtestsupport.la softfloat/libsoftfloat.la \
	$(CHECK_LIBS) $(LIBM)

mma_tests = \
	tests/softfloat/test_mma_tcvalid

check_PROGRAMS += $(mma_tests)
TESTS += $(mma_tests)

tests_softfloat_test_mma_tcvalid_SOURCES = tests/softfloat/test_mma_tcvalid.c
tests_softfloat_test_mma_tcvalid_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_tcvalid_LDADD = $(mma_test_ldadd)
