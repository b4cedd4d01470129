# analysis/local.mk -- libanalysis: tensors and tensor files (.safetensors,
# .npy, tensor-core vector text), the exact attention reference (MPFR),
# signed-error and bias statistics.

lib_LTLIBRARIES += analysis/libanalysis.la
analysis_libanalysis_la_SOURCES = \
	analysis/tensor.h analysis/tensor_internal.h \
	analysis/tensor.c analysis/safetensors.c analysis/npy.c \
	analysis/tcvec.c \
	analysis/attn_exact.h analysis/attn_exact.c \
	analysis/bias.h analysis/bias.c
analysis_libanalysis_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) \
	$(MPFR_CFLAGS)
analysis_libanalysis_la_LIBADD = attention/libattention.la \
	softfloat/libsoftfloat.la $(JANSSON_LIBS) $(MPFR_LIBS) $(LIBM)
analysis_libanalysis_la_LDFLAGS = -version-info 0:0:0
pkginclude_HEADERS += analysis/tensor.h analysis/attn_exact.h \
	analysis/bias.h

check_PROGRAMS += tests/analysis/test_tensor_io
TESTS += tests/analysis/test_tensor_io
tests_analysis_test_tensor_io_SOURCES = tests/analysis/test_tensor_io.c
tests_analysis_test_tensor_io_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_tensor_io_LDADD = analysis/libanalysis.la \
	softfloat/libsoftfloat.la $(CHECK_LIBS)

# The exact reference and the bias statistics.
ANALYSIS_TEST_FLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(MPFR_CFLAGS)
ANALYSIS_TEST_LIBS = analysis/libanalysis.la attention/libattention.la \
	softfloat/libsoftfloat.la tests/support/libtestsupport.la \
	$(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)

check_PROGRAMS += tests/analysis/test_attn_exact tests/analysis/test_bias
TESTS += tests/analysis/test_attn_exact tests/analysis/test_bias
tests_analysis_test_attn_exact_SOURCES = tests/analysis/test_attn_exact.c
tests_analysis_test_attn_exact_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_attn_exact_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_attn_exact_LDFLAGS = $(OPENMP_CFLAGS)
tests_analysis_test_bias_SOURCES = tests/analysis/test_bias.c
tests_analysis_test_bias_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_bias_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_bias_LDFLAGS = $(OPENMP_CFLAGS)

# The malformed corpus (with its table EXPECTED and the script that wrote
# both) and the good fixtures; the reference's documentation.
EXTRA_DIST += tests/data/bad tests/data/tensors \
	tests/data/make-bad-corpus.py doc/exact.md
