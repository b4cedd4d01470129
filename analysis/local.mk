# analysis/local.mk -- the analysis layer of libbf16emu: tensors and
# tensor files (.safetensors, .npy, tensor-core vector text), the exact
# attention reference (MPFR), signed-error and bias statistics, row
# classification, the gradient error analyzers, generated attention inputs
# and the bias of one experiment point with its stage attribution.  A
# convenience library, linked into libbf16emu.la (Makefile.am) with MPFR,
# GMP, jansson and zlib.

noinst_LTLIBRARIES += analysis/libanalysis.la
analysis_libanalysis_la_SOURCES = \
	analysis/tensor.h analysis/tensor_internal.h \
	analysis/tensor.c analysis/safetensors.c analysis/npy.c \
	analysis/tcvec.c analysis/user_tensor.h analysis/user_tensor.c \
	analysis/attn_exact.h analysis/attn_exact.c \
	analysis/attn_mask.h analysis/attn_mask.c \
	analysis/kernel_json.h analysis/kernel_json.c \
	analysis/compare.h analysis/compare.c \
	analysis/diff_engine.h analysis/diff_engine.c \
	analysis/bias.h analysis/bias.c \
	analysis/rows.h analysis/rows.c \
	analysis/scan.h analysis/scan.c \
	analysis/scan_groups.h analysis/scan_groups.c \
	analysis/gradient.h analysis/gradient.c \
	analysis/gz_table.h analysis/gz_table.c analysis/bits_internal.h \
	analysis/ex2_table.h analysis/ex2_table.c \
	analysis/lg2_table.h analysis/lg2_table.c \
	analysis/rcp_table.h analysis/rcp_table.c \
	analysis/gen.h analysis/gen.c \
	analysis/fixgen.h analysis/fixgen.c \
	analysis/dump_inputs.h analysis/dump_inputs.c \
	analysis/dump_outputs.h analysis/dump_outputs.c analysis/dump_local.h \
	analysis/dump_manifest.h analysis/dump_manifest.c \
	analysis/point.h analysis/point.c \
	analysis/exact_decimal.h analysis/exact_decimal.c \
	analysis/sdpa_dispatch_pt211_h200.h analysis/sdpa_dispatch_pt211_h200.c \
	analysis/launch.h analysis/launch.c \
	analysis/invariance.h analysis/invariance.c \
	analysis/trace_engine.h analysis/trace_engine.c
analysis_libanalysis_la_CPPFLAGS = $(AM_CPPFLAGS) \
	-DBF16EMU_PKGDATADIR='"$(pkgdatadir)"'
analysis_libanalysis_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) \
	$(MPFR_CFLAGS) $(ZLIB_CFLAGS)
pkginclude_HEADERS += analysis/tensor.h analysis/user_tensor.h \
	analysis/attn_exact.h analysis/attn_mask.h analysis/kernel_json.h \
	analysis/compare.h \
	analysis/bias.h analysis/rows.h analysis/gradient.h \
	analysis/ex2_table.h analysis/lg2_table.h analysis/rcp_table.h \
	analysis/gen.h analysis/fixgen.h analysis/dump_inputs.h \
	analysis/dump_outputs.h analysis/dump_manifest.h \
	analysis/point.h analysis/exact_decimal.h \
	analysis/sdpa_dispatch_pt211_h200.h analysis/launch.h \
	analysis/invariance.h

# The measured exp2 of the H200 (experiments/gpu/probes/ex2_probe.cu,
# packed by experiments/gpu/probes/pack_ex2_table.py): the ex2-sm90 exp
# model's tables; its log2 (experiments/gpu/probes/lg2_probe.cu): the
# lg2-sm90 log model's tables; its reciprocal
# (experiments/gpu/probes/rcp_probe.cu, packed by
# experiments/gpu/probes/pack_rcp_table.py): the rcp-sm90 model's table.
dist_pkgdata_DATA = analysis/data/ex2-sm90.bin.gz \
	analysis/data/lg2-sm90.bin.gz analysis/data/rcp-sm90.bin.gz

# The Check programs of the analysis library, each run by make check.
analysis_tests = \
	tests/analysis/test_tensor_io \
	tests/analysis/test_dump_outputs \
	tests/analysis/test_fixgen \
	tests/analysis/test_attn_exact \
	tests/analysis/test_bias \
	tests/analysis/test_compare \
	tests/analysis/test_kernel_json \
	tests/analysis/test_rows \
	tests/analysis/test_gradient \
	tests/analysis/test_scan \
	tests/analysis/test_point \
	tests/analysis/test_ex2_table \
	tests/analysis/test_lg2_table \
	tests/analysis/test_sdpa_ext \
	tests/analysis/test_cudnn_lean \
	tests/analysis/test_sdpa_em \
	tests/analysis/test_sdpa_math \
	tests/analysis/test_trace_engine \
	tests/analysis/test_exact_decimal \
	tests/analysis/test_user_tensor \
	tests/analysis/test_sdpa_dispatch \
	tests/analysis/test_invariance
check_PROGRAMS += $(analysis_tests)
TESTS += $(analysis_tests)

tests_analysis_test_tensor_io_SOURCES = tests/analysis/test_tensor_io.c
tests_analysis_test_tensor_io_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_tensor_io_LDADD = libbf16emu.la $(CHECK_LIBS)

# The exact reference and the bias statistics.
ANALYSIS_TEST_FLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(MPFR_CFLAGS)
# The test support library comes first: its objects call libbf16emu,
# which a linker with --as-needed would otherwise have dropped already.
ANALYSIS_TEST_LIBS = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)

# The fixture input generator against known vectors.
# The outputs a dump keeps in part (outputs_kept): the whole-tensor hash
# against trim_dump.py's, and where each kept element belongs.
tests_analysis_test_dump_outputs_SOURCES = tests/analysis/test_dump_outputs.c
tests_analysis_test_dump_outputs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_dump_outputs_LDADD = libbf16emu.la $(CHECK_LIBS)

tests_analysis_test_fixgen_SOURCES = tests/analysis/test_fixgen.c
tests_analysis_test_fixgen_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_fixgen_LDADD = libbf16emu.la $(CHECK_LIBS)

tests_analysis_test_attn_exact_SOURCES = tests/analysis/test_attn_exact.c
tests_analysis_test_attn_exact_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_attn_exact_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_attn_exact_LDFLAGS = $(OPENMP_CFLAGS)
tests_analysis_test_bias_SOURCES = tests/analysis/test_bias.c
tests_analysis_test_bias_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_bias_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_bias_LDFLAGS = $(OPENMP_CFLAGS)

# The comparison of two arrays and descriptions as JSON text.
tests_analysis_test_compare_SOURCES = tests/analysis/test_compare.c
tests_analysis_test_compare_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_compare_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_compare_LDFLAGS = $(OPENMP_CFLAGS)
tests_analysis_test_kernel_json_SOURCES = tests/analysis/test_kernel_json.c
tests_analysis_test_kernel_json_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_kernel_json_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_kernel_json_LDFLAGS = $(OPENMP_CFLAGS)

# Row classification and the gradient error (LAPACKE, when configure found
# it, is the SVD test's second oracle; the library does not use it).
ROWS_GRADIENT_TEST_LIBS = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_rows_SOURCES = tests/analysis/test_rows.c
tests_analysis_test_rows_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_rows_LDADD = $(ROWS_GRADIENT_TEST_LIBS)
tests_analysis_test_rows_LDFLAGS = $(OPENMP_CFLAGS)
tests_analysis_test_gradient_SOURCES = tests/analysis/test_gradient.c
tests_analysis_test_gradient_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_gradient_LDADD = $(ROWS_GRADIENT_TEST_LIBS) \
	$(LAPACKE_LIBS)
tests_analysis_test_gradient_LDFLAGS = $(OPENMP_CFLAGS)

# The dW_Q error's spectrum of scan (matrices of known singular values).
tests_analysis_test_scan_SOURCES = tests/analysis/test_scan.c
tests_analysis_test_scan_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_scan_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_scan_LDFLAGS = $(OPENMP_CFLAGS)

# Generated inputs and experiment points (stage attribution).
tests_analysis_test_point_SOURCES = tests/analysis/test_point.c
tests_analysis_test_point_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_point_LDADD = $(ANALYSIS_TEST_LIBS)
tests_analysis_test_point_LDFLAGS = $(OPENMP_CFLAGS)

# The ex2-sm90 exp model against sampled H200 outputs, and its loader.
tests_analysis_test_ex2_table_SOURCES = tests/analysis/test_ex2_table.c
tests_analysis_test_ex2_table_CFLAGS = $(ANALYSIS_TEST_FLAGS) $(ZLIB_CFLAGS)
tests_analysis_test_ex2_table_LDADD = $(ANALYSIS_TEST_LIBS) $(ZLIB_LIBS)
EXTRA_DIST += tests/data/gpu/ex2_h200.safetensors \
	tests/data/gpu/ex2_h200.json

# The lg2-sm90 log model against sampled H200 outputs, its loader, and the
# LSE of the flash kernel (fma(m, scale, __logf(l))) on the SDPA dumps.
tests_analysis_test_lg2_table_SOURCES = tests/analysis/test_lg2_table.c
tests_analysis_test_lg2_table_CFLAGS = $(ANALYSIS_TEST_FLAGS) $(ZLIB_CFLAGS)
tests_analysis_test_lg2_table_LDADD = $(ANALYSIS_TEST_LIBS) $(ZLIB_LIBS)
EXTRA_DIST += tests/data/gpu/lg2_h200.safetensors \
	tests/data/gpu/lg2_h200.json

# The extended H200 SDPA dumps (split-KV, decode, FP16, other head
# dimensions, causal with NQ != NK): their manifests against their tensors.
tests_analysis_test_sdpa_ext_SOURCES = tests/analysis/test_sdpa_ext.c
tests_analysis_test_sdpa_ext_CFLAGS = $(ANALYSIS_TEST_FLAGS) $(JANSSON_CFLAGS)
tests_analysis_test_sdpa_ext_LDADD = $(ANALYSIS_TEST_LIBS) $(JANSSON_LIBS)
EXTRA_DIST += tests/data/gpu/sdpa_ext

# The efficient and math descriptions against the memory-efficient and
# math SDPA backends' dumps (tests/data/gpu/backends), the math backend's
# FP32 stages and CUDA's logf on the H200.
# The cudnn description's decode path against crafted inputs run on the
# H200 (tests/data/gpu/cudnn/lean_probe_h200.safetensors).
tests_analysis_test_cudnn_lean_SOURCES = tests/analysis/test_cudnn_lean.c
tests_analysis_test_cudnn_lean_CFLAGS = $(ANALYSIS_TEST_FLAGS) $(ZLIB_CFLAGS)
tests_analysis_test_cudnn_lean_LDADD = $(ANALYSIS_TEST_LIBS) $(ZLIB_LIBS)

tests_analysis_test_sdpa_em_SOURCES = tests/analysis/test_sdpa_em.c \
	tests/analysis/sdpa_dump.c tests/analysis/sdpa_dump.h
tests_analysis_test_sdpa_em_CFLAGS = $(ANALYSIS_TEST_FLAGS) $(JANSSON_CFLAGS)
tests_analysis_test_sdpa_em_LDADD = $(ANALYSIS_TEST_LIBS) $(JANSSON_LIBS)

tests_analysis_test_sdpa_math_SOURCES = tests/analysis/test_sdpa_math.c \
	tests/analysis/sdpa_dump.c
tests_analysis_test_sdpa_math_CFLAGS = $(ANALYSIS_TEST_FLAGS) $(JANSSON_CFLAGS)
tests_analysis_test_sdpa_math_LDADD = $(ANALYSIS_TEST_LIBS) $(JANSSON_LIBS) $(LIBM)
EXTRA_DIST += tests/data/gpu/cuda_logf_h200.safetensors \
	tests/data/gpu/cuda_math_h200.json \
	experiments/gpu/probes/cuda_math_probe.cu \
	experiments/gpu/probes/cuda_logf_probe.cu \
	experiments/gpu/probes/sdpa_math_ops.py \
	experiments/gpu/probes/slice_math_stages.py \
	experiments/gpu/probes/pack_logf_vectors.py \
	experiments/gpu/probes/sdpa_math_more.py \
	experiments/gpu/probes/sdpa_bias_table.py

# The malformed corpus (with its table EXPECTED and the script that wrote
# both) and the good fixtures; the reference's documentation.
EXTRA_DIST += tests/data/bad tests/data/tensors \
	tests/data/make-bad-corpus.py doc/exact.md doc/analysis.md

# The arithmetic behind bf16emu trace, on cases worked out by hand.
tests_analysis_test_trace_engine_SOURCES = \
	tests/analysis/test_trace_engine.c
tests_analysis_test_trace_engine_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_trace_engine_LDADD = $(ANALYSIS_TEST_LIBS)

# Exact decimal text against MPFR.
tests_analysis_test_exact_decimal_SOURCES = \
	tests/analysis/test_exact_decimal.c
tests_analysis_test_exact_decimal_CFLAGS = $(ANALYSIS_TEST_FLAGS)
tests_analysis_test_exact_decimal_LDADD = $(ANALYSIS_TEST_LIBS)

tests_analysis_test_user_tensor_SOURCES = tests/analysis/test_user_tensor.c
tests_analysis_test_user_tensor_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_user_tensor_LDADD = libbf16emu.la $(CHECK_LIBS)

# PyTorch 2.11's SDPA backend choice on the H200 against the recorded grid
# and the pinned backend dumps (tests/data/gpu/backends/).
tests_analysis_test_sdpa_dispatch_SOURCES = \
	tests/analysis/test_sdpa_dispatch.c
tests_analysis_test_sdpa_dispatch_CFLAGS = $(ANALYSIS_TEST_FLAGS) \
	$(JANSSON_CFLAGS)
tests_analysis_test_sdpa_dispatch_LDADD = $(ANALYSIS_TEST_LIBS) \
	$(JANSSON_LIBS)

# The invariance engine: classes, distances, batch bounds, and launches
# resolved against the split counts an H100 launched.
tests_analysis_test_invariance_SOURCES = tests/analysis/test_invariance.c
tests_analysis_test_invariance_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_analysis_test_invariance_LDADD = libbf16emu.la $(CHECK_LIBS)
