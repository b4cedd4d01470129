# experiments/gpu/local.mk -- the tensor-core probe and its CPU-side tools,
# and the FlashAttention dumper fa_dump
#
# mma_probe (CUDA, sm_90a) is compiled when configure found nvcc; it needs
# a Hopper GPU to run, so make check never runs it.  It is built from its
# own sources alone (probe_vectors.c and the small safetensors writer
# st_io.c), so that it also builds by hand on a GPU machine.  check_model
# and mma_fixture are plain C and always built: they regenerate the
# probe's inputs, compare its results with the sm90 model of
# softfloat/mma.h (probe_tools.c) and write the committed fixture
# tests/data/gpu/mma_h200.{safetensors,json}, reading and writing tensor
# files with analysis/tensor.h.

gpu_tool_sources = \
	experiments/gpu/probe_vectors.c experiments/gpu/probe_vectors.h \
	experiments/gpu/probe_tools.c experiments/gpu/probe_tools.h
gpu_tool_ldadd = libbf16emu.la $(JANSSON_LIBS)

noinst_PROGRAMS += experiments/gpu/check_model experiments/gpu/mma_fixture
experiments_gpu_check_model_SOURCES = experiments/gpu/check_model.c \
	$(gpu_tool_sources)
experiments_gpu_check_model_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
experiments_gpu_check_model_LDADD = $(gpu_tool_ldadd)
experiments_gpu_mma_fixture_SOURCES = experiments/gpu/mma_fixture.c \
	$(gpu_tool_sources)
experiments_gpu_mma_fixture_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
experiments_gpu_mma_fixture_LDADD = $(gpu_tool_ldadd)

EXTRA_DIST += \
	experiments/gpu/README.md \
	experiments/gpu/probes/README.md \
	experiments/gpu/mma_probe.cu \
	experiments/gpu/st_io.c experiments/gpu/st_io.h \
	experiments/gpu/run_probe.sh \
	experiments/gpu/probes/cvt_probe.cu \
	experiments/gpu/probes/probe_cuda.h \
	experiments/gpu/probes/ex2_probe.cu \
	experiments/gpu/probes/lg2_probe.cu \
	experiments/gpu/probes/pack_ex2_table.py \
	experiments/gpu/fa_dump.cu \
	experiments/gpu/run_crosscheck.sh \
	experiments/gpu/sdpa_sweep.py \
	experiments/gpu/crosscheck_table.py \
	experiments/gpu/slice_heads.py \
	experiments/gpu/trim_dump.py \
	tests/data/gpu/mma_h200.safetensors \
	tests/data/gpu/mma_h200.json

if HAVE_NVCC
NVCC_PROBE_FLAGS = -O2 -std=c++17 \
	-gencode=arch=compute_90a,code=sm_90a \
	-Xcompiler -ffp-contract=off

experiments/gpu/mma_probe$(EXEEXT): \
		$(srcdir)/experiments/gpu/mma_probe.cu \
		$(srcdir)/experiments/gpu/probe_vectors.c \
		$(srcdir)/experiments/gpu/probe_vectors.h \
		$(srcdir)/experiments/gpu/st_io.c \
		$(srcdir)/experiments/gpu/st_io.h
	@$(MKDIR_P) experiments/gpu
	$(NVCC) $(NVCC_PROBE_FLAGS) -o $@ \
		$(srcdir)/experiments/gpu/mma_probe.cu \
		$(srcdir)/experiments/gpu/probe_vectors.c \
		$(srcdir)/experiments/gpu/st_io.c

# fa_dump: every rounding is an explicit intrinsic, and -fmad=false keeps
# nvcc from contracting anything else.
experiments/gpu/fa_dump$(EXEEXT): \
		$(srcdir)/experiments/gpu/fa_dump.cu \
		$(srcdir)/experiments/gpu/st_io.c \
		$(srcdir)/experiments/gpu/st_io.h
	@$(MKDIR_P) experiments/gpu
	$(NVCC) $(NVCC_PROBE_FLAGS) -fmad=false -o $@ \
		$(srcdir)/experiments/gpu/fa_dump.cu \
		$(srcdir)/experiments/gpu/st_io.c

all-local: experiments/gpu/mma_probe$(EXEEXT) experiments/gpu/fa_dump$(EXEEXT)
CLEANFILES += experiments/gpu/mma_probe$(EXEEXT) \
	experiments/gpu/fa_dump$(EXEEXT)
endif
