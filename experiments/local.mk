# experiments/local.mk -- the bf16emu command-line tool, its man page and
# its tests

bin_PROGRAMS += experiments/bf16emu
experiments_bf16emu_SOURCES = \
	experiments/bf16emu.c \
	experiments/cli.c experiments/cli.h \
	experiments/trace.c
experiments_bf16emu_LDADD = softfloat/libsoftfloat.la

dist_man_MANS += doc/man/bf16emu.1

# The CLI tests are shell scripts; they find the built program, its
# version and the JSON checker through the environment.
AM_TESTS_ENVIRONMENT = \
	BF16EMU='$(abs_top_builddir)/experiments/bf16emu'; \
	BF16EMU_VERSION='$(PACKAGE_VERSION)'; \
	JSONQ='$(abs_top_builddir)/tests/experiments/jsonq'; \
	export BF16EMU BF16EMU_VERSION JSONQ;

TESTS += \
	tests/experiments/test_cli.sh \
	tests/experiments/test_trace.sh \
	tests/experiments/test_trace_json.sh

# jsonq parses the --json output with jansson.
check_PROGRAMS += tests/experiments/jsonq
tests_experiments_jsonq_SOURCES = tests/experiments/jsonq.c
tests_experiments_jsonq_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_experiments_jsonq_LDADD = $(JANSSON_LIBS)

EXTRA_DIST += \
	tests/experiments/lib.sh \
	tests/experiments/test_cli.sh \
	tests/experiments/test_trace.sh \
	tests/experiments/test_trace_json.sh \
	tests/experiments/t1_rne.txt \
	tests/experiments/jsonq.c
