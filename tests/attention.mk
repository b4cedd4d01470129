# tests/attention.mk -- tests of the reference flash attention (attention/):
# configuration, forward, FA2 model, the policies bit for bit against
# re-implementations, rounding bias (T11, T12), backward, the
# correctly rounded log; the exhaustive log check for make check-exhaustive.

attention_test_ldadd = tests/support/libtestsupport.la libbf16emu.la \
	$(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)
attention_test_cflags = $(AM_CFLAGS) $(CHECK_CFLAGS) $(MPFR_CFLAGS)
attention_test_common = tests/attention/fa_test.h tests/attention/fa_test.c

attention_tests = \
	tests/attention/test_config \
	tests/attention/test_forward \
	tests/attention/test_fa2 \
	tests/attention/test_kernel \
	tests/attention/test_policies \
	tests/attention/test_bias \
	tests/attention/test_backward \
	tests/attention/test_log \
	tests/attention/test_cudamath \
	tests/attention/test_isa

check_PROGRAMS += $(attention_tests)
TESTS += $(attention_tests)

tests_attention_test_config_SOURCES = tests/attention/test_config.c \
	$(attention_test_common)
tests_attention_test_config_CFLAGS = $(attention_test_cflags)
tests_attention_test_config_LDADD = $(attention_test_ldadd)

tests_attention_test_forward_SOURCES = tests/attention/test_forward.c \
	$(attention_test_common)
tests_attention_test_forward_CFLAGS = $(attention_test_cflags)
tests_attention_test_forward_LDADD = $(attention_test_ldadd)

tests_attention_test_fa2_SOURCES = tests/attention/test_fa2.c \
	$(attention_test_common)
tests_attention_test_fa2_CFLAGS = $(attention_test_cflags)
tests_attention_test_fa2_LDADD = $(attention_test_ldadd)

tests_attention_test_kernel_SOURCES = tests/attention/test_kernel.c \
	$(attention_test_common)
tests_attention_test_kernel_CFLAGS = $(attention_test_cflags)
tests_attention_test_kernel_LDADD = $(attention_test_ldadd)

tests_attention_test_policies_SOURCES = tests/attention/test_policies.c \
	$(attention_test_common)
tests_attention_test_policies_CFLAGS = $(attention_test_cflags)
tests_attention_test_policies_LDADD = $(attention_test_ldadd)

tests_attention_test_bias_SOURCES = tests/attention/test_bias.c \
	$(attention_test_common)
tests_attention_test_bias_CFLAGS = $(attention_test_cflags)
tests_attention_test_bias_LDADD = $(attention_test_ldadd)

tests_attention_test_backward_SOURCES = tests/attention/test_backward.c \
	$(attention_test_common)
tests_attention_test_backward_CFLAGS = $(attention_test_cflags)
tests_attention_test_backward_LDADD = $(attention_test_ldadd)

tests_attention_test_log_SOURCES = tests/attention/test_log.c
tests_attention_test_log_CFLAGS = $(attention_test_cflags)
tests_attention_test_log_LDADD = $(attention_test_ldadd)

tests_attention_test_isa_SOURCES = tests/attention/test_isa.c \
	$(attention_test_common)
tests_attention_test_isa_CFLAGS = $(attention_test_cflags)
tests_attention_test_isa_LDADD = $(attention_test_ldadd)

# make check-exhaustive only: fa_logf_cr against MPFR on every positive
# binary32 (OpenMP-parallel).
EXHAUSTIVE_TESTS += tests/attention/exh_logf
tests_attention_exh_logf_SOURCES = tests/attention/exh_logf.c
tests_attention_exh_logf_CFLAGS = $(AM_CFLAGS) $(MPFR_CFLAGS) $(OPENMP_CFLAGS)
tests_attention_exh_logf_LDFLAGS = $(OPENMP_CFLAGS)
tests_attention_exh_logf_LDADD = libbf16emu.la $(MPFR_LIBS) $(LIBM)

tests_attention_test_cudamath_SOURCES = tests/attention/test_cudamath.c \
	$(attention_test_common)
tests_attention_test_cudamath_CFLAGS = $(attention_test_cflags)
tests_attention_test_cudamath_LDADD = $(attention_test_ldadd)
