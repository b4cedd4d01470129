# analysis/local.mk -- libanalysis: tensors and tensor files (.safetensors,
# .npy, tensor-core vector text), exact references and analyzers.

lib_LTLIBRARIES += analysis/libanalysis.la
analysis_libanalysis_la_SOURCES = \
	analysis/tensor.h analysis/tensor_internal.h \
	analysis/tensor.c analysis/safetensors.c analysis/npy.c \
	analysis/tcvec.c
analysis_libanalysis_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
analysis_libanalysis_la_LIBADD = softfloat/libsoftfloat.la $(JANSSON_LIBS)
analysis_libanalysis_la_LDFLAGS = -version-info 0:0:0
pkginclude_HEADERS += analysis/tensor.h

check_PROGRAMS += tests/analysis/test_tensor_io
TESTS += tests/analysis/test_tensor_io
tests_analysis_test_tensor_io_SOURCES = tests/analysis/test_tensor_io.c
tests_analysis_test_tensor_io_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_tensor_io_LDADD = analysis/libanalysis.la \
	softfloat/libsoftfloat.la $(CHECK_LIBS)

# The malformed corpus (with its table EXPECTED and the script that wrote
# both) and the good fixtures.
EXTRA_DIST += tests/data/bad tests/data/tensors \
	tests/data/make-bad-corpus.py
