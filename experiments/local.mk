# experiments/local.mk -- the bf16emu command-line tool, its man page and
# its tests

bin_PROGRAMS += experiments/bf16emu
experiments_bf16emu_SOURCES = \
	experiments/bf16emu.c \
	experiments/cli.c experiments/cli_error.c experiments/cli.h \
	experiments/cli_mpi.c experiments/cli_mpi.h \
	experiments/trace.c experiments/trace_local.h experiments/trace_report.c \
	experiments/trace_summary.c experiments/trace_help.c \
	experiments/mma.c \
	experiments/attn.c experiments/attn_local.h experiments/attn_report.c \
	experiments/attn_help.c experiments/attn_input.c experiments/attn_run.c \
	experiments/attn_options.c \
	experiments/diff.c experiments/diff_local.h experiments/diff_dump.c \
	experiments/diff_report.c experiments/diff_help.c experiments/diff_config.c \
	experiments/fa_cli.c experiments/fa_cli.h \
	experiments/fa_kernel_json.c experiments/fa_kernel_json.h \
	experiments/sdpa_policy.c experiments/sdpa_policy.h \
	experiments/grid.c experiments/grid.h \
	experiments/plot.c experiments/plot.h \
	experiments/sweep.c experiments/sweep_local.h experiments/sweep_help.c \
	experiments/sweep_output.c experiments/sweep_plot.c experiments/sweep_run.c \
	experiments/sweep_mpi.c experiments/sweep_merge.c \
	experiments/reproduce.c experiments/reproduce_local.h \
	experiments/reproduce_help.c experiments/reproduce_progress.c \
	experiments/reproduce_exact.c experiments/reproduce_bias.c \
	experiments/reproduce_summary.c \
	experiments/ls.c \
	experiments/scan.c experiments/scan_local.h experiments/scan_report.c \
	experiments/scan_manifest.c experiments/scan_shard.c \
	experiments/scan_help.c \
	experiments/invariance.c experiments/invariance_local.h \
	experiments/invariance_report.c
experiments_bf16emu_CFLAGS = $(AM_CFLAGS) $(MPFR_CFLAGS) $(OPENMP_CFLAGS) \
	$(JANSSON_CFLAGS) \
	-DBF16EMU_PKGDATADIR='"$(pkgdatadir)"'
experiments_bf16emu_LDFLAGS = $(OPENMP_CFLAGS)
experiments_bf16emu_LDADD = libbf16emu.la $(MPFR_LIBS) \
	$(JANSSON_LIBS) $(LIBM)

if HAVE_MPI
experiments_bf16emu_CFLAGS += $(MPI_CFLAGS)
experiments_bf16emu_LDADD += $(MPI_LIBS)
MPIRUN_FOR_TESTS = $(MPIRUN)
else
MPIRUN_FOR_TESTS =
endif

dist_man_MANS += doc/man/bf16emu.1

# The gnuplot scripts of sweep and reproduce (found in the source tree,
# else here, else through BF16EMU_PLOTS).
plotsdir = $(pkgdatadir)/plots
dist_plots_DATA = \
	experiments/plots/sweep-bias.gp \
	experiments/plots/eq4-trace.gp \
	experiments/plots/fig5a.gp \
	experiments/plots/fig6.gp \
	experiments/plots/t12.gp \
	experiments/plots/scan-heat.gp \
	experiments/plots/scan-bias.gp \
	experiments/plots/invariance.gp

# The CLI tests are shell scripts; they find the built program, its
# version, the JSON checker and the mma, attn and diff input writers through the
# environment.
AM_TESTS_ENVIRONMENT = \
	BF16EMU='$(abs_top_builddir)/experiments/bf16emu'; \
	BF16EMU_VERSION='$(PACKAGE_VERSION)'; \
	JSONQ='$(abs_top_builddir)/tests/experiments/jsonq'; \
	MMA_INPUTS='$(abs_top_builddir)/tests/experiments/mma_inputs'; \
	ATTN_INPUTS='$(abs_top_builddir)/tests/experiments/attn_inputs'; \
	DIFF_INPUTS='$(abs_top_builddir)/tests/experiments/diff_inputs'; \
	USER_INPUTS='$(abs_top_builddir)/tests/experiments/user_inputs'; \
	SCAN_INPUTS='$(abs_top_builddir)/tests/experiments/scan_inputs'; \
	MPIRUN='$(MPIRUN_FOR_TESTS)'; \
	export BF16EMU BF16EMU_VERSION JSONQ MMA_INPUTS ATTN_INPUTS DIFF_INPUTS \
	  USER_INPUTS SCAN_INPUTS MPIRUN;

# The command-line tests (scripts; distributed with their helpers below).
experiments_sh_tests = \
	tests/experiments/test_cli.sh \
	tests/experiments/test_trace.sh \
	tests/experiments/test_trace_json.sh \
	tests/experiments/test_trace_exact.sh \
	tests/experiments/test_mma.sh \
	tests/experiments/test_attn.sh \
	tests/experiments/test_diff.sh \
	tests/experiments/test_kernel.sh \
	tests/experiments/test_bwd_fields.sh \
	tests/experiments/test_front_door.sh \
	tests/experiments/test_gqa_dumps.sh \
	tests/experiments/test_invariance.sh \
	tests/experiments/test_mask_dumps.sh \
	tests/experiments/test_flex_dumps.sh \
	tests/experiments/test_fa2_backward.sh \
	tests/experiments/test_cudnn_model.sh \
	tests/experiments/test_cudnn_bwd.sh \
	tests/experiments/test_chain.sh \
	tests/experiments/test_user_tensors.sh \
	tests/experiments/test_trim_dump.sh \
	tests/experiments/test_outputs_kept.sh \
	tests/experiments/test_fixgen_py.sh \
	tests/experiments/test_inputs_gen.sh \
	tests/experiments/test_sweep.sh \
	tests/experiments/test_sweep_cli.sh \
	tests/experiments/test_sweep_mpi.sh \
	tests/experiments/test_reproduce.sh \
	tests/experiments/test_ls.sh \
	tests/experiments/test_scan.sh \
	tests/experiments/test_capture.sh \
	tests/experiments/test_scan_shard.sh \
	tests/experiments/test_scan_x.sh \
	tests/experiments/test_scan_mpi.sh \
	tests/experiments/test_invariance_mpi.sh \
	tests/experiments/test_reproduce_only.sh
TESTS += $(experiments_sh_tests)

# Every exact decimal of trace --json against MPFR and GMP.
check_PROGRAMS += tests/experiments/test_trace_decimals
TESTS += tests/experiments/test_trace_decimals
tests_experiments_test_trace_decimals_SOURCES = \
	tests/experiments/test_trace_decimals.c
tests_experiments_test_trace_decimals_CFLAGS = $(AM_CFLAGS) \
	$(JANSSON_CFLAGS) $(MPFR_CFLAGS)
tests_experiments_test_trace_decimals_LDADD = \
	tests/support/libtestsupport.la libbf16emu.la \
	$(JANSSON_LIBS) $(MPFR_LIBS)

# jsonq parses the --json output with jansson.
check_PROGRAMS += tests/experiments/jsonq
tests_experiments_jsonq_SOURCES = tests/experiments/jsonq.c
tests_experiments_jsonq_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_experiments_jsonq_LDADD = $(JANSSON_LIBS)

# mma_inputs writes the inputs of test_mma.sh: the H200 fixture reshaped
# into batched A, B, C, D, and integer problems with exact results.
check_PROGRAMS += tests/experiments/mma_inputs
tests_experiments_mma_inputs_SOURCES = tests/experiments/mma_inputs.c
tests_experiments_mma_inputs_LDADD = libbf16emu.la

# attn_inputs rewrites generated attention inputs in other layouts, writes
# malformed ones, and reads output headers for test_attn.sh.
check_PROGRAMS += tests/experiments/attn_inputs
tests_experiments_attn_inputs_SOURCES = tests/experiments/attn_inputs.c
tests_experiments_attn_inputs_LDADD = libbf16emu.la

# user_inputs writes tensors as users save them (.npy, F32 holding BF16,
# int16 bit patterns, [B, N, H, d], head subsets) for test_user_tensors.sh.
check_PROGRAMS += tests/experiments/user_inputs
tests_experiments_user_inputs_SOURCES = tests/experiments/user_inputs.c
tests_experiments_user_inputs_LDADD = libbf16emu.la

# scan_inputs writes the captures of test_scan.sh: a synthetic layer with
# and without repeated maxima, the H200 dump as a second layer, damaged
# variants; it prints the expected counts.
check_PROGRAMS += tests/experiments/scan_inputs
tests_experiments_scan_inputs_SOURCES = tests/experiments/scan_inputs.c
tests_experiments_scan_inputs_LDADD = libbf16emu.la $(LIBM)

# diff_inputs writes damaged copies of a GPU dump for test_diff.sh.
check_PROGRAMS += tests/experiments/diff_inputs
tests_experiments_diff_inputs_SOURCES = tests/experiments/diff_inputs.c
tests_experiments_diff_inputs_LDADD = libbf16emu.la

EXTRA_DIST += \
	tests/experiments/lib.sh \
	tests/experiments/st_write.py \
	tests/experiments/gqa_oracle.py \
	$(experiments_sh_tests) \
	tests/data/gpu/capture_gpt6_r128.safetensors \
	tests/data/gpu/capture_gpt6_r128.json \
	tests/data/gpu/capture_gpt6_s0_l1h0.safetensors \
	tests/data/gpu/capture_gpt6_s0_l1h0.json \
	tests/data/gpu/capture_gpt6u_x_r128.safetensors \
	tests/data/gpu/capture_gpt6u_x_r128.json \
	tests/data/gpu/hf \
	experiments/gpu/capture.py \
	experiments/gpu/fixgen.py \
	experiments/gpu/regen_dump.py \
	experiments/gpu/train_gpt.py \
	tests/experiments/t1_rne.txt \
	tests/experiments/jsonq.c \
	tests/experiments/mma_inputs.c \
	tests/experiments/attn_inputs.c \
	tests/experiments/diff_inputs.c \
	tests/experiments/user_inputs.c \
	tests/experiments/scan_inputs.c \
	doc/real-models.md doc/invariance.md doc/img/invariance-decode.png
