# tests/gpu.mk -- the emulator against dumps measured on real GPUs (committed
# fixtures under tests/data/gpu/), so CPU-only CI checks hardware agreement.

check_PROGRAMS += tests/softfloat/test_mma_h200
TESTS += tests/softfloat/test_mma_h200
tests_softfloat_test_mma_h200_SOURCES = tests/softfloat/test_mma_h200.c
tests_softfloat_test_mma_h200_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_h200_LDADD = tests/support/libtestsupport.la \
	softfloat/libsoftfloat.la $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)

# The H200's narrowing conversions (cvt.rn/rz .bf16/.f16/.tf32, .relu, the
# x2 forms, satfinite FP8) over all 2^32 FP32 inputs, as per-chunk hashes;
# a sample of chunks in make check, every chunk in make check-exhaustive.
check_PROGRAMS += tests/softfloat/test_cvt_h200
TESTS += tests/softfloat/test_cvt_h200
tests_softfloat_test_cvt_h200_SOURCES = tests/softfloat/test_cvt_h200.c \
	experiments/gpu/cvt_rules.c experiments/gpu/cvt_rules.h
tests_softfloat_test_cvt_h200_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(JANSSON_CFLAGS) $(OPENMP_CFLAGS)
tests_softfloat_test_cvt_h200_LDFLAGS = $(OPENMP_CFLAGS)
tests_softfloat_test_cvt_h200_LDADD = softfloat/libsoftfloat.la \
	$(CHECK_LIBS) $(JANSSON_LIBS)

EXHAUSTIVE_TESTS += tests/exhaustive/exh_cvt_h200
tests_exhaustive_exh_cvt_h200_SOURCES = \
	$(tests_softfloat_test_cvt_h200_SOURCES)
tests_exhaustive_exh_cvt_h200_CPPFLAGS = $(AM_CPPFLAGS) -DCVT_ALL_CHUNKS=1
tests_exhaustive_exh_cvt_h200_CFLAGS = \
	$(tests_softfloat_test_cvt_h200_CFLAGS)
tests_exhaustive_exh_cvt_h200_LDFLAGS = $(OPENMP_CFLAGS)
tests_exhaustive_exh_cvt_h200_LDADD = \
	$(tests_softfloat_test_cvt_h200_LDADD)
EXTRA_DIST += tests/data/gpu/cvt_h200.json

# PyTorch SDPA (flash backend) dumps from an H200 (experiments/gpu/
# dump_sdpa.py); bf16emu diff checks the fa2 policy against them.
EXTRA_DIST += experiments/gpu/dump_sdpa.py \
	tests/data/gpu/sdpa_h200_d64.safetensors \
	tests/data/gpu/sdpa_h200_d64.json \
	tests/data/gpu/sdpa_h200_d64_causal.safetensors \
	tests/data/gpu/sdpa_h200_d64_causal.json \
	tests/data/gpu/sdpa_h200_d64_repmax.safetensors \
	tests/data/gpu/sdpa_h200_d64_repmax.json \
	tests/data/gpu/sdpa_h200_d64_sink_causal.safetensors \
	tests/data/gpu/sdpa_h200_d64_sink_causal.json \
	tests/data/gpu/sdpa_h200_d128.safetensors \
	tests/data/gpu/sdpa_h200_d128.json
