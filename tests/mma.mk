# tests/mma.mk -- the accumulation and matrix-unit models: published
# tensor-core vectors, directed probes, the CPU dot-product instructions,
# the GEMM paths

mma_test_ldadd = tests/support/libtestsupport.la libbf16emu.la \
	$(CHECK_LIBS) $(LIBM)

mma_tests = \
	tests/softfloat/test_mma_tcvalid \
	tests/softfloat/test_mma_probes \
	tests/softfloat/test_mma_avx512bf16 \
	tests/softfloat/test_mma_amx \
	tests/softfloat/test_mma_gemm \
	tests/softfloat/test_mma_row \
	tests/softfloat/test_mma_chain \
	tests/softfloat/test_mma_chain_fmaf

check_PROGRAMS += $(mma_tests)
TESTS += $(mma_tests)

tests_softfloat_test_mma_tcvalid_SOURCES = tests/softfloat/test_mma_tcvalid.c
tests_softfloat_test_mma_tcvalid_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_tcvalid_LDADD = $(mma_test_ldadd)

tests_softfloat_test_mma_probes_SOURCES = tests/softfloat/test_mma_probes.c
tests_softfloat_test_mma_probes_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_probes_LDADD = $(mma_test_ldadd)

tests_softfloat_test_mma_avx512bf16_SOURCES = \
	tests/softfloat/test_mma_avx512bf16.c tests/softfloat/test_mma_dpbf16.h
tests_softfloat_test_mma_avx512bf16_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_avx512bf16_LDADD = $(mma_test_ldadd)

tests_softfloat_test_mma_gemm_SOURCES = tests/softfloat/test_mma_gemm.c
tests_softfloat_test_mma_gemm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_gemm_LDADD = $(mma_test_ldadd)

tests_softfloat_test_mma_row_SOURCES = tests/softfloat/test_mma_row.c
tests_softfloat_test_mma_row_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_row_LDADD = $(mma_test_ldadd)

tests_softfloat_test_mma_chain_SOURCES = tests/softfloat/test_mma_chain.c
tests_softfloat_test_mma_chain_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_chain_LDADD = $(mma_test_ldadd)

# defines its own fmaf, which the library's call binds to
tests_softfloat_test_mma_chain_fmaf_SOURCES = \
	tests/softfloat/test_mma_chain_fmaf.c
tests_softfloat_test_mma_chain_fmaf_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_chain_fmaf_LDADD = $(mma_test_ldadd)

# tests/softfloat/test_mma_h200.c (sm90 against the H200 fixture) is
# built by tests/gpu.mk.

# TDPBF16PS runs only on a CPU with AMX-BF16 under a kernel that grants the
# tile data (exit 77, skipped, elsewhere).  Static binaries of both AMX
# programs, to copy to such a host:
#   rm -f tests/softfloat/test_mma_amx tests/exhaustive/exh_mma_amx
#   make LDFLAGS=-all-static tests/softfloat/test_mma_amx \
#       tests/exhaustive/exh_mma_amx
tests_softfloat_test_mma_amx_SOURCES = tests/softfloat/test_mma_amx.c \
	tests/softfloat/test_mma_amx.h
tests_softfloat_test_mma_amx_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_amx_LDADD = $(mma_test_ldadd)

# make check-exhaustive only (EXTRA_PROGRAMS: not built by make or make
# check).
EXHAUSTIVE_TESTS += tests/exhaustive/exh_mma_avx512bf16
tests_exhaustive_exh_mma_avx512bf16_SOURCES = \
	tests/exhaustive/exh_mma_avx512bf16.c tests/softfloat/test_mma_dpbf16.h
tests_exhaustive_exh_mma_avx512bf16_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_exhaustive_exh_mma_avx512bf16_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_mma_avx512bf16_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(LIBM)

EXHAUSTIVE_TESTS += tests/exhaustive/exh_mma_amx
tests_exhaustive_exh_mma_amx_SOURCES = tests/exhaustive/exh_mma_amx.c \
	tests/softfloat/test_mma_amx.h
tests_exhaustive_exh_mma_amx_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_exhaustive_exh_mma_amx_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_mma_amx_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(LIBM)
