# python/local.mk -- the Python package bf16emu: python/bf16emu/ (the
# module), python/src/ (its C extension: bf16emu_ext.c and ext_*.c) and
# experiments/gpu/capture.py (copied as bf16emu/capture.py), built by
# python/setup.py with setuptools against the convenience archives of
# libbf16emu's three layers, into python/build/lib of the build tree.
# make install copies the built package to $(bf16emu_pythondir)
# (configure's choice: the interpreter's site folder under the prefix).
# Built only when configure found python3 with NumPy's headers
# (BUILD_PYTHON); tests/python/run_pytest.sh skips (77) otherwise.

PYPKG_FILES = python/setup.py python/src/ext.h python/src/bf16emu_ext.c \
	python/src/ext_common.c python/src/ext_values.c python/src/ext_mma.c \
	python/src/ext_kernels.c python/src/ext_attention.c \
	python/src/ext_diff.c python/src/ext_trace.c \
	python/bf16emu/__init__.py
PYTEST_FILES = tests/python/conftest.py tests/python/test_values.py \
	tests/python/test_arith.py tests/python/test_mma.py \
	tests/python/test_attention.py tests/python/test_attention_backward.py \
	tests/python/test_errors.py tests/python/test_trace.py \
	tests/python/test_capture.py tests/python/test_gpu_dumps.py \
	tests/python/test_readme.py tests/python/test_mask.py \
	tests/python/test_kernel_dict.py tests/python/test_diff.py
EXTRA_DIST += $(PYPKG_FILES) $(PYTEST_FILES) \
	tests/python/run_pytest.sh
TESTS += tests/python/run_pytest.sh

# The Python test finds the interpreter and the built package here
# (BF16EMU_PYTHON empty: the package is not built, the test skips).
AM_TESTS_ENVIRONMENT += \
	BF16EMU_PYTHON='$(BF16EMU_PYTHON_FOR_TESTS)'; \
	BF16EMU_PYTHONPATH='$(abs_top_builddir)/python/build/lib'; \
	export BF16EMU_PYTHON BF16EMU_PYTHONPATH;

if BUILD_PYTHON
BF16EMU_PYTHON_FOR_TESTS = $(PYTHON)
noinst_DATA = python/build/stamp

# setup.py runs in its own folder (read-only in make distcheck) and writes
# only under python/build of the build tree.
python/build/stamp: $(PYPKG_FILES) experiments/gpu/capture.py libbf16emu.la \
	Makefile
	$(AM_V_GEN)$(MKDIR_P) python/build && \
	cd $(srcdir)/python && \
	BF16EMU_SRCDIR='$(abs_top_srcdir)' \
	BF16EMU_BUILDDIR='$(abs_top_builddir)' \
	BF16EMU_VERSION='$(PACKAGE_VERSION)' \
	BF16EMU_CFLAGS='$(WARN_CFLAGS) $(OPENMP_CFLAGS)' \
	BF16EMU_LIBS='$(LDFLAGS) $(JANSSON_LIBS) $(MPFR_LIBS) $(ZLIB_LIBS) $(LIBM)' \
	$(PYTHON) setup.py -q build \
	  --build-base '$(abs_top_builddir)/python/build' \
	  --build-lib '$(abs_top_builddir)/python/build/lib' \
	  --build-temp '$(abs_top_builddir)/python/build/temp' \
	  --force >'$(abs_top_builddir)/python/build/setup.log' 2>&1 || { \
	  cat '$(abs_top_builddir)/python/build/setup.log' >&2; exit 1; } && \
	cd '$(abs_top_builddir)' && touch $@

install-exec-local: python-install
uninstall-local: python-uninstall
python-install: python/build/stamp
	$(MKDIR_P) '$(DESTDIR)$(bf16emu_pythondir)/bf16emu'
	for f in python/build/lib/bf16emu/*.py python/build/lib/bf16emu/*.so; do \
	  $(INSTALL_DATA) "$$f" '$(DESTDIR)$(bf16emu_pythondir)/bf16emu' || exit 1; \
	done
python-uninstall:
	rm -rf '$(DESTDIR)$(bf16emu_pythondir)/bf16emu'
else
BF16EMU_PYTHON_FOR_TESTS =
endif

clean-local: clean-python
clean-python:
	-rm -rf python/build tests/python/__pycache__ tests/python/.pytest_cache

.PHONY: python-install python-uninstall clean-python
