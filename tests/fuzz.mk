# tests/fuzz.mk -- robustness: libFuzzer targets (make fuzz), the replay of
# their corpora and the CLI on malformed and extreme inputs (make check),
# and make check-valgrind
#
# Five targets, each one LLVMFuzzerTestOneInput in tests/fuzz/fuzz_NAME.c:
# safetensors and npy (the tensor file readers), tcvec (the tensor-core
# vector text reader), cli (the number and option parsers of
# experiments/cli.c, with cli_error.c) and grid (the sweep grid parser,
# experiments/grid.c).
# Their corpora are tests/fuzz/corpus/NAME.
#
# make check: tests/fuzz/replay_NAME runs the target on every file of its
# corpus with the normal compiler and flags (so the sanitizer build
# replays them under ASan and UBSan).
#
# make fuzz: builds tests/fuzz/bin/fuzz_NAME with $(FUZZ_CC) (clang) and
# -fsanitize=fuzzer,address,undefined, from its own objects in
# tests/fuzz/bin/obj (the normal build is not touched).  Skips with a
# message when $(FUZZ_CC) is missing or cannot link libFuzzer.
# make fuzz-run: runs each target for $(FUZZ_TIME) seconds, new inputs in
# tests/fuzz/bin/corpus-NAME.  make fuzz-merge: adds to the committed
# corpora what those runs found that covers new code (-merge=1).
#
# make check-valgrind: the CLI tests (tests/experiments/test_*.sh, with
# bf16emu run under valgrind memcheck), the replay programs and
# test_tensor_io under valgrind; fails on any memcheck error or definite
# or indirect leak.  Not part of make check.

FUZZ_TARGETS = safetensors npy tcvec cli grid

# --- the replay programs (make check) ------------------------------------
FUZZ_REPLAY = tests/fuzz/replay_safetensors tests/fuzz/replay_npy \
	tests/fuzz/replay_tcvec tests/fuzz/replay_cli tests/fuzz/replay_grid
check_PROGRAMS += $(FUZZ_REPLAY)
TESTS += $(FUZZ_REPLAY)

FUZZ_REPLAY_SRC = tests/fuzz/replay.c tests/fuzz/fuzz_common.c \
	tests/fuzz/fuzz_common.h
FUZZ_REPLAY_LIBS = libbf16emu.la

tests_fuzz_replay_safetensors_SOURCES = $(FUZZ_REPLAY_SRC) \
	tests/fuzz/fuzz_safetensors.c
tests_fuzz_replay_safetensors_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFUZZ_NAME='"safetensors"'
tests_fuzz_replay_safetensors_LDADD = $(FUZZ_REPLAY_LIBS)

tests_fuzz_replay_npy_SOURCES = $(FUZZ_REPLAY_SRC) tests/fuzz/fuzz_npy.c
tests_fuzz_replay_npy_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"npy"'
tests_fuzz_replay_npy_LDADD = $(FUZZ_REPLAY_LIBS)

tests_fuzz_replay_tcvec_SOURCES = $(FUZZ_REPLAY_SRC) \
	tests/fuzz/fuzz_tcvec.c
tests_fuzz_replay_tcvec_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"tcvec"'
tests_fuzz_replay_tcvec_LDADD = $(FUZZ_REPLAY_LIBS)

# cli.c is compiled in (it is part of the program, not of a library); the
# parsers' complaints on stderr are sent to /dev/null (FUZZ_QUIET)
tests_fuzz_replay_cli_SOURCES = $(FUZZ_REPLAY_SRC) tests/fuzz/fuzz_cli.c \
	experiments/cli.c experiments/cli_error.c experiments/cli.h
tests_fuzz_replay_cli_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"cli"' \
	-DFUZZ_QUIET
tests_fuzz_replay_cli_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_replay_cli_LDADD = $(FUZZ_REPLAY_LIBS) $(JANSSON_LIBS) $(LIBM)

tests_fuzz_replay_grid_SOURCES = $(FUZZ_REPLAY_SRC) tests/fuzz/fuzz_grid.c \
	experiments/grid.c experiments/grid.h
tests_fuzz_replay_grid_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"grid"'
tests_fuzz_replay_grid_LDADD = libbf16emu.la $(LIBM)

EXTRA_DIST += tests/fuzz/corpus tests/fuzz/make-seeds.py \
	tests/fuzz/safetensors.dict tests/fuzz/npy.dict tests/fuzz/cli.dict \
	tests/fuzz/grid.dict

# --- the CLI on malformed and extreme inputs ---------------------------------
# (the environment, $BF16EMU, $ATTN_INPUTS and $JSONQ, comes from
# experiments/local.mk's AM_TESTS_ENVIRONMENT)
TESTS += tests/experiments/test_bad_inputs.sh
EXTRA_DIST += tests/experiments/test_bad_inputs.sh

# --- make fuzz -------------------------------------------------------------
FUZZ_CC = clang
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_DIR = tests/fuzz/bin
# what the targets link besides softfloat/ and attention/ (all of their
# libraries' sources)
FUZZ_ANALYSIS_FILES = analysis/tensor.c analysis/safetensors.c \
	analysis/npy.c analysis/tcvec.c analysis/gen.c
FUZZ_DEPS_H = softfloat/softfloat.h softfloat/internal.h \
	attention/attention.h attention/fa_local.h analysis/gen.h \
	analysis/tensor.h analysis/tensor_internal.h experiments/cli.h \
	experiments/grid.h tests/fuzz/fuzz_common.h
FUZZ_COMPILE = $(FUZZ_CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) \
	$(CPPFLAGS) $(PROJECT_CFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SANITIZE) \
	$(JANSSON_CFLAGS)
FUZZ_TIME = 60
FUZZ_RUN_FLAGS = -timeout=20 -rss_limit_mb=2048 -print_final_stats=1

# Objects are rebuilt when missing or older than their source or than any
# of $(FUZZ_DEPS_H).  The check for libFuzzer links a one-line target.
fuzz: config.h
	@if (command -v $(FUZZ_CC)) >/dev/null 2>&1; then :; else \
	  echo "make fuzz: skipped: no $(FUZZ_CC) (give FUZZ_CC=clang-NN)"; \
	  exit 0; \
	fi; \
	mkdir -p $(FUZZ_DIR)/obj || exit 1; \
	c=$(FUZZ_DIR)/conftest; \
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	  '{ (void)d; (void)n; return 0; }' >$$c.c; \
	if $(FUZZ_CC) $(FUZZ_SANITIZE) -fsanitize=fuzzer $$c.c -o $$c \
	  >$$c.log 2>&1; then rm -f $$c $$c.c $$c.log; else \
	  echo "make fuzz: skipped: $(FUZZ_CC) cannot link" \
	    "-fsanitize=fuzzer,address,undefined (libFuzzer is missing;" \
	    "see $$c.log)"; \
	  exit 0; \
	fi; \
	newest=$(FUZZ_DIR)/obj/.headers; \
	for h in $(FUZZ_DEPS_H); do \
	  if test ! -f $$newest || test $(srcdir)/$$h -nt $$newest; then \
	    rm -f $(FUZZ_DIR)/obj/*.o; touch $$newest; break; \
	  fi; \
	done; \
	lib=; cliobj=; gridobj=; \
	for s in $(softfloat_libsoftfloat_la_SOURCES) \
	    $(attention_libattention_la_SOURCES) \
	    $(FUZZ_ANALYSIS_FILES) tests/fuzz/fuzz_common.c \
	    experiments/cli.c experiments/cli_error.c experiments/grid.c; do \
	  case $$s in *.c) ;; *) continue ;; esac; \
	  o=$(FUZZ_DIR)/obj/`echo $$s | sed 's|/|_|g; s|\.c$$|.o|'`; \
	  if test ! -f $$o || test $(srcdir)/$$s -nt $$o; then \
	    echo "  FUZZCC   $$s"; \
	    $(FUZZ_COMPILE) -fsanitize=fuzzer-no-link -c $(srcdir)/$$s \
	      -o $$o || exit 1; \
	  fi; \
	  case $$s in experiments/cli.c | experiments/cli_error.c) \
	    cliobj="$$cliobj $$o" ;; \
	  experiments/grid.c) gridobj=$$o ;; *) lib="$$lib $$o" ;; esac; \
	done; \
	for t in $(FUZZ_TARGETS); do \
	  o=$(FUZZ_DIR)/obj/fuzz_$$t.o; \
	  if test ! -f $$o || test $(srcdir)/tests/fuzz/fuzz_$$t.c -nt $$o; \
	  then \
	    echo "  FUZZCC   tests/fuzz/fuzz_$$t.c"; \
	    $(FUZZ_COMPILE) -fsanitize=fuzzer-no-link \
	      -c $(srcdir)/tests/fuzz/fuzz_$$t.c -o $$o || exit 1; \
	  fi; \
	  case $$t in cli) extra=$$cliobj ;; grid) extra=$$gridobj ;; \
	  *) extra= ;; esac; \
	  echo "  FUZZLD   $(FUZZ_DIR)/fuzz_$$t"; \
	  $(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SANITIZE) -fsanitize=fuzzer \
	    $$o $$extra $$lib $(JANSSON_LIBS) $(LIBM) \
	    -o $(FUZZ_DIR)/fuzz_$$t || exit 1; \
	done; \
	echo "make fuzz: built $(FUZZ_DIR)/fuzz_{`echo $(FUZZ_TARGETS) | \
	  tr ' ' ,`} (run them with make fuzz-run)"

# One target after the other, $(FUZZ_TIME) seconds each; the committed
# corpus, tests/data/bad and tests/data/tensors are read as seeds.
fuzz-run: fuzz
	@for t in $(FUZZ_TARGETS); do \
	  test -x $(FUZZ_DIR)/fuzz_$$t || exit 0; \
	  mkdir -p $(FUZZ_DIR)/corpus-$$t $(FUZZ_DIR)/crash-$$t || exit 1; \
	  seeds=; flags=; \
	  case $$t in \
	  safetensors|npy) seeds="$(srcdir)/tests/data/bad \
	    $(srcdir)/tests/data/tensors" ;; \
	  tcvec) seeds="$(srcdir)/tests/data/bad \
	    $(srcdir)/tests/data/tensors/tcvec" ;; \
	  cli) flags=-close_fd_mask=2 ;; \
	  esac; \
	  if test -f $(srcdir)/tests/fuzz/$$t.dict; then \
	    flags="$$flags -dict=$(srcdir)/tests/fuzz/$$t.dict"; fi; \
	  echo "make fuzz-run: fuzz_$$t for $(FUZZ_TIME) s"; \
	  $(FUZZ_DIR)/fuzz_$$t $(FUZZ_RUN_FLAGS) $$flags \
	    -max_total_time=$(FUZZ_TIME) \
	    -artifact_prefix=$(FUZZ_DIR)/crash-$$t/ \
	    $(FUZZ_DIR)/corpus-$$t $(srcdir)/tests/fuzz/corpus/$$t $$seeds \
	    || exit 1; \
	done

# Adds to tests/fuzz/corpus/NAME the inputs of the runs that reach code
# the corpus does not (the source tree changes).
fuzz-merge: fuzz
	@for t in $(FUZZ_TARGETS); do \
	  test -x $(FUZZ_DIR)/fuzz_$$t || exit 0; \
	  test -d $(FUZZ_DIR)/corpus-$$t || continue; \
	  flags=; test $$t = cli && flags=-close_fd_mask=2; \
	  $(FUZZ_DIR)/fuzz_$$t -merge=1 $$flags \
	    $(srcdir)/tests/fuzz/corpus/$$t $(FUZZ_DIR)/corpus-$$t || exit 1; \
	done

clean-local: clean-fuzz
clean-fuzz:
	-rm -rf $(FUZZ_DIR) tests/fuzz/valgrind-logs tests/fuzz/valgrind-bf16emu

# --- make check-valgrind -----------------------------------------------------
VALGRIND = valgrind
VALGRIND_FLAGS = --error-exitcode=86 --leak-check=full \
	--show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect \
	--log-file=$(abs_top_builddir)/tests/fuzz/valgrind-logs/%p.log
# The shell tests (empty: every tests/experiments/test_*.sh) less
# VALGRIND_SKIP, and the programs whose inputs come from files.  Left out
# by default: test_reproduce.sh (its reproduce --quick, the whole
# reproduction, takes over 40 minutes under memcheck) and
# the MPI tests test_sweep_mpi.sh, test_scan_mpi.sh and
# test_invariance_mpi.sh (Open MPI itself reports uninitialised bytes in
# its TCP sends and leaks the blocks of the plugins it unloads; the
# sweep, scan and invariance code is checked by test_sweep.sh,
# test_scan_shard.sh, test_scan_x.sh and test_invariance.sh).
VALGRIND_SH_TESTS =
VALGRIND_SKIP = tests/experiments/test_reproduce.sh \
	tests/experiments/test_sweep_mpi.sh tests/experiments/test_scan_mpi.sh \
	tests/experiments/test_invariance_mpi.sh
VALGRIND_CHECKED = $(FUZZ_REPLAY) tests/analysis/test_tensor_io

tests/fuzz/valgrind-bf16emu: Makefile
	$(AM_V_GEN)mkdir -p tests/fuzz && { \
	  echo '#!/bin/sh'; \
	  echo '# bf16emu under valgrind memcheck (make check-valgrind)'; \
	  echo 'exec $(SHELL) $(abs_top_builddir)/libtool --mode=execute' \
	    '$(VALGRIND) $(VALGRIND_FLAGS)' \
	    '$(abs_top_builddir)/experiments/bf16emu "$$@"'; \
	} >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@

check-valgrind: all tests/fuzz/valgrind-bf16emu
	@if ($(VALGRIND) --version) >/dev/null 2>&1; then :; else \
	  echo "check-valgrind: skipped: no $(VALGRIND)"; exit 0; \
	fi; \
	case " $(CFLAGS) $(LDFLAGS) " in *-fsanitize=*) \
	  echo "check-valgrind: skipped: this build uses -fsanitize," \
	    "which valgrind cannot run (configure without" \
	    "--enable-sanitizers)"; \
	  exit 0 ;; \
	esac; \
	logs=tests/fuzz/valgrind-logs; \
	rm -rf $$logs && mkdir -p $$logs || exit 1; \
	scripts="$(VALGRIND_SH_TESTS)"; \
	test -n "$$scripts" || \
	  scripts=`cd $(srcdir) && ls tests/experiments/test_*.sh`; \
	kept=; \
	for t in $$scripts; do \
	  case " $(VALGRIND_SKIP) " in *" $$t "*) ;; *) kept="$$kept $$t" ;; \
	  esac; \
	done; \
	scripts=$$kept; \
	start=`date +%s`; status=0; \
	$(MAKE) $(AM_MAKEFLAGS) check \
	  TESTS="$$scripts $(VALGRIND_CHECKED)" \
	  LOG_COMPILER="$(LIBTOOL) --mode=execute $(VALGRIND) \
	    $(VALGRIND_FLAGS)" \
	  TESTS_ENVIRONMENT="BF16EMU=$(abs_top_builddir)/tests/fuzz/valgrind-bf16emu; export BF16EMU; CK_FORK=no; export CK_FORK;" \
	  || status=$$?; \
	end=`date +%s`; \
	n=`ls $$logs | wc -l`; \
	bad=`grep -l -E 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]' $$logs/*.log 2>/dev/null`; \
	for f in $$bad; do echo "check-valgrind: errors in $$f:"; \
	  sed 's/^/    /' $$f; done; \
	echo "check-valgrind: $$n valgrind runs in `expr $$end - $$start` s;" \
	  "`echo $$bad | wc -w` with errors (logs in $$logs)"; \
	test -z "$$bad" && test $$status -eq 0

.PHONY: fuzz fuzz-run fuzz-merge clean-fuzz check-valgrind
