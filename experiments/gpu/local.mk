# experiments/gpu/local.mk -- the tensor-core probe and its CPU-side tools
#
# mma_probe (CUDA, sm_90a) is compiled when configure found nvcc; it needs
# a Hopper GPU to run, so make check never runs it.  check_model and
# mma_fixture are plain C and always built: they regenerate the probe's
# inputs, compare its results with the block-FMA model and write the
# committed fixture tests/data/gpu/mma_h200.{safetensors,json}.

gpu_common_sources = \
	experiments/gpu/probe_vectors.c experiments/gpu/probe_vectors.h \
	experiments/gpu/st_io.c experiments/gpu/st_io.h \
	experiments/gpu/bfma_model.c experiments/gpu/bfma_model.h

noinst_PROGRAMS += experiments/gpu/check_model experiments/gpu/mma_fixture
experiments_gpu_check_model_SOURCES = experiments/gpu/check_model.c \
	$(gpu_common_sources)
experiments_gpu_mma_fixture_SOURCES = experiments/gpu/mma_fixture.c \
	$(gpu_common_sources)

EXTRA_DIST += \
	experiments/gpu/README.md \
	experiments/gpu/mma_probe.cu \
	experiments/gpu/run_probe.sh \
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

all-local: experiments/gpu/mma_probe$(EXEEXT)
CLEANFILES += experiments/gpu/mma_probe$(EXEEXT)
endif
