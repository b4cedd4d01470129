# tests/perf.mk -- tests of the vectorised and fast paths against the scalar ones

# The fast paths of softfloat/s_fast.h and the AVX-512 path of
# sf_convert_array against the generic operations, bit for bit with flags.
# (The AVX-512 GEMM path against the scalar one is in tests/mma.mk,
# test_mma_gemm; every BF16 pair through add, sub and mul, fast paths
# included, is checked against an independent reference by
# tests/exhaustive/exh_bf16_binary in make check-exhaustive.)
perf_tests = tests/softfloat/test_fast tests/softfloat/test_array \
	tests/softfloat/test_convert_blocks
check_PROGRAMS += $(perf_tests)
TESTS += $(perf_tests)

tests_softfloat_test_fast_SOURCES = tests/softfloat/test_fast.c
tests_softfloat_test_fast_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_fast_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) $(LIBM)

# The array calls (sf_<fmt>_<op>_array, sf_convert_array) on every path
# the CPU has, forced through env.isa, against the scalar operations.
tests_softfloat_test_array_SOURCES = tests/softfloat/test_array.c
tests_softfloat_test_array_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_array_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) $(LIBM)

# sf_convert_array from FP32 on blocks mixing zeros, subnormals, Inf,
# NaNs, overflow and ties into normal data, every path, mode and several
# environments, lane by lane against sf_convert (flags of one special
# lane alone) and FP32 to BF16 against VCVTNEPS2BF16 where the CPU has it.
tests_softfloat_test_convert_blocks_SOURCES = \
	tests/softfloat/test_convert_blocks.c
tests_softfloat_test_convert_blocks_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_convert_blocks_LDADD = tests/support/libtestsupport.la \
	softfloat/libsoftfloat.la $(CHECK_LIBS) $(LIBM)

# make check-exhaustive only: every BF16 pair through the add, sub and
# mul arrays on every path (add and sub in every mode but SR), against
# the scalar operations (OpenMP).
EXHAUSTIVE_TESTS += tests/exhaustive/exh_bf16_array
tests_exhaustive_exh_bf16_array_SOURCES = tests/exhaustive/exh_bf16_array.c \
	tests/exhaustive/exh_paths.h
tests_exhaustive_exh_bf16_array_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_exhaustive_exh_bf16_array_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_bf16_array_LDADD = libbf16emu.la

# make check-exhaustive only: every binary32 input through
# sf_convert_array to BF16 and FP16 on every path, in runs of 64, under
# several modes and environments, against sf_convert (OpenMP).
EXHAUSTIVE_TESTS += tests/exhaustive/exh_convert_array
tests_exhaustive_exh_convert_array_SOURCES = \
	tests/exhaustive/exh_convert_array.c tests/exhaustive/exh_paths.h
tests_exhaustive_exh_convert_array_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_exhaustive_exh_convert_array_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_convert_array_LDADD = softfloat/libsoftfloat.la

# The AArch64 NEON paths (sf_convert_array FP32 <-> BF16, the BF16 add and
# sub arrays, the one-row GEMMs' generic vectors): the library
# and tests/softfloat/neon_convert.c and neon_row.c cross-compiled and run under
# qemu-aarch64; skipped (77) without aarch64-linux-gnu-gcc or qemu-aarch64.
# make check-exhaustive runs it with "all": every FP32 input, six modes.
TESTS += tests/softfloat/test_neon.sh
EXHAUSTIVE_SH_TESTS += tests/softfloat/test_neon.sh
EXTRA_DIST += tests/softfloat/test_neon.sh tests/softfloat/neon_convert.c \
	tests/softfloat/neon_row.c
