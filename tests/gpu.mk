# tests/gpu.mk -- the emulator against dumps measured on real GPUs (committed
# fixtures under tests/data/gpu/), so CPU-only CI checks hardware agreement.

check_PROGRAMS += tests/softfloat/test_mma_h200
TESTS += tests/softfloat/test_mma_h200
tests_softfloat_test_mma_h200_SOURCES = tests/softfloat/test_mma_h200.c
tests_softfloat_test_mma_h200_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_softfloat_test_mma_h200_LDADD = tests/support/libtestsupport.la \
	libbf16emu.la $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)

# The H200's narrowing conversions (cvt.rn/rz .bf16/.f16/.tf32, .relu, the
# x2 forms, satfinite FP8) over all 2^32 FP32 inputs, as per-chunk hashes;
# a sample of chunks in make check, every chunk in make check-exhaustive.
check_PROGRAMS += tests/softfloat/test_cvt_h200
TESTS += tests/softfloat/test_cvt_h200
tests_softfloat_test_cvt_h200_SOURCES = tests/softfloat/test_cvt_h200.c \
	experiments/gpu/probes/cvt_rules.c experiments/gpu/probes/cvt_rules.h
tests_softfloat_test_cvt_h200_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	$(JANSSON_CFLAGS) $(OPENMP_CFLAGS)
tests_softfloat_test_cvt_h200_LDFLAGS = $(OPENMP_CFLAGS)
tests_softfloat_test_cvt_h200_LDADD = libbf16emu.la $(CHECK_LIBS) \
	$(JANSSON_LIBS)

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
# dump_sdpa.py; the _rows file is a slice of one head and 128 query rows
# of a 14-head, 1024-key dump, slice_heads.py; d128 keeps head 2 of four,
# trim_dump.py); bf16emu diff checks the fa2 policy against them.
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
	tests/data/gpu/sdpa_h200_d128.json \
	tests/data/gpu/sdpa_h200_d64_n1024_h7_rows.safetensors \
	tests/data/gpu/sdpa_h200_d64_n1024_h7_rows.json

# Dumps of experiments/gpu/fa_dump.cu (our FA2-style kernel on the H200)
# with every intermediate stage (S, m, l, P~, the accumulator per KV block,
# O, LSE); test_diff.sh compares each stage with the fa2 policy.
EXTRA_DIST += \
	tests/data/gpu/fa_h200_d64.safetensors \
	tests/data/gpu/fa_h200_d64.json \
	tests/data/gpu/fa_h200_d64_ffma.safetensors \
	tests/data/gpu/fa_h200_d64_ffma.json \
	tests/data/gpu/fa_h200_d64_sink_causal.safetensors \
	tests/data/gpu/fa_h200_d64_sink_causal.json \
	tests/data/gpu/fa_h200_d128_repmax_beta.safetensors \
	tests/data/gpu/fa_h200_d128_repmax_beta.json

# PyTorch's four SDPA backends on the same inputs (experiments/gpu/
# sdpa_backends.py), the dispatch grid (probes/sdpa_dispatch_grid.py) and
# the crafted-input probes (probes/sdpa_probes.py), all from the H200.
EXTRA_DIST += tests/data/gpu/backends experiments/gpu/sdpa_backends.py \
	experiments/gpu/probes/sdpa_dispatch_grid.py \
	experiments/gpu/probes/sdpa_probes.py

# The extended flash-backend dumps (more head dimensions, causal shapes,
# FP16, the deterministic backward) that test_chain.sh, test_kernel.sh,
# test_fa2_backward.sh and test_scan.sh read; sdpa_ext_table.py tabulates
# the emulator against every one of them.
EXTRA_DIST += tests/data/gpu/sdpa_ext \
	experiments/gpu/probes/sdpa_ext_table.py

# cuDNN alone (experiments/gpu/probes/cudnn_dumps.py): the decode engine
# with its lean reduction, longer KV sequences, and PyTorch's default choice;
# test_cudnn_model.sh diffs them with the cudnn description.
EXTRA_DIST += tests/data/gpu/cudnn experiments/gpu/probes/cudnn_dumps.py
# cuDNN's backward and d = 192, 256
# (experiments/gpu/probes/cudnn_bwd_probe.py, sliced by split_cudnn_bwd.py
# into tests/data/gpu/cudnn/bwd_*):
# test_cudnn_bwd.sh diffs them with the cudnn description.
EXTRA_DIST += experiments/gpu/probes/cudnn_bwd_probe.py \
	experiments/gpu/probes/split_cudnn_bwd.py
# The decode engine's LSE over repeated launches (decode_repro.*;
# test_cudnn_lean's test_repro_orders).
EXTRA_DIST += experiments/gpu/probes/cudnn_repro_probe.py \
	experiments/gpu/probes/cudnn_orders_check.py
# Crafted decode inputs, the row-sum order probe and the FP16 reciprocal
# probe (lean_probe_h200, fp16_rcp_probe), and the rcp.approx probe whose
# table is analysis/data/rcp-sm90.bin.gz.
EXTRA_DIST += experiments/gpu/probes/cudnn_lean_probe.py \
	experiments/gpu/probes/cudnn_order_probe.py \
	experiments/gpu/probes/rcp_probe.cu \
	experiments/gpu/probes/pack_rcp_table.py \
	experiments/gpu/probes/cudnn_triple_probe.py
# The decode engine's split count over batch, heads, keys, head dim and
# dtype (grids from the profiler; its run on the H200 is
# tests/data/gpu/cudnn/decode_splits_h200.json, read by
# test_sdpa_dispatch).
EXTRA_DIST += experiments/gpu/probes/cudnn_split_probe.py

# Grouped-query heads (group sizes 2, 4, 8 and MQA; prefill with the
# backward, decode) and masked calls on every backend that took them, on an
# H100 (experiments/gpu/sdpa_gqa_mask.py); test_gqa_dumps.sh and
# test_mask_dumps.sh read them.
EXTRA_DIST += tests/data/gpu/gqa tests/data/gpu/mask \
	experiments/gpu/sdpa_gqa_mask.py
# One call as entry 0 of batches of 1 to 64 under each backend, with the
# GPU's classes of identical outputs (experiments/gpu/
# invariance_batch.py); test_invariance.sh reads them.
EXTRA_DIST += tests/data/gpu/invariance experiments/gpu/invariance_batch.py
# FlexAttention under torch.compile (Triton's kernels, the generated
# code read for the description) on an H100 (experiments/gpu/
# flex_dump.py); test_flex_dumps.sh reads them.
EXTRA_DIST += tests/data/gpu/flex experiments/gpu/flex_dump.py \
	experiments/gpu/flex_fixture.py \
	experiments/gpu/probes/flex_capture_decode.py
# The SASS of cuDNN's decode engine, as it ran (read, never stored).
EXTRA_DIST += experiments/gpu/probes/cudnn_decode_sass.sh
# JAX's cuDNN attention beside PyTorch's (experiments/gpu/jax_cudnn.py).
EXTRA_DIST += tests/data/gpu/jax experiments/gpu/jax_cudnn.py
# The Python package on real PyTorch tensors beside SDPA (doc/python.md).
EXTRA_DIST += experiments/gpu/torch_check.py
