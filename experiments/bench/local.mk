# experiments/bench/local.mk -- benchmarks (make bench); not run by make check

# The table of doc/performance.md: the emulator against native float
# arithmetic, MPFR, VCVTNEPS2BF16, a float GEMM (a plain loop, and
# OpenBLAS's sgemm on one thread when configure found it) and a float
# attention.
# Linked statically (libtool -static), so library calls are direct calls
# as in a program that embeds the library.
EXTRA_PROGRAMS += experiments/bench/bench
experiments_bench_bench_SOURCES = experiments/bench/bench.c \
	experiments/bench/bench.h experiments/bench/bench_ops.c \
	experiments/bench/bench_convert.c experiments/bench/bench_gemm.c \
	experiments/bench/bench_exh.c experiments/bench/bench_sweep.c \
	experiments/bench/bench_scan.c experiments/bench/bench_flex.c
experiments_bench_bench_CFLAGS = $(AM_CFLAGS) $(MPFR_CFLAGS) $(OPENMP_CFLAGS) \
	$(OPENBLAS_CFLAGS) -DBENCH_SRCDIR='"$(abs_top_srcdir)"'
experiments_bench_bench_LDFLAGS = -static $(OPENMP_CFLAGS)
experiments_bench_bench_LDADD = ref/libref.la libbf16emu.la $(MPFR_LIBS) \
	$(OPENBLAS_LIBS) $(LIBM)

# The event hook with no sink, against a library built without the hook:
# the same sources compiled into each program, so the macro is the only
# difference (no shared-library call overhead on either side).
EXTRA_PROGRAMS += experiments/bench/bench_events \
	experiments/bench/bench_events_nohook
experiments_bench_bench_events_SOURCES = \
	experiments/bench/bench_events.c $(softfloat_libsoftfloat_la_SOURCES)
experiments_bench_bench_events_CPPFLAGS = $(AM_CPPFLAGS)
experiments_bench_bench_events_LDADD = $(LIBM)
experiments_bench_bench_events_nohook_SOURCES = \
	experiments/bench/bench_events.c $(softfloat_libsoftfloat_la_SOURCES)
experiments_bench_bench_events_nohook_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSF_NO_EVENT_HOOK
experiments_bench_bench_events_nohook_LDADD = $(LIBM)
EXTRA_DIST += experiments/bench/run-events.sh

BENCH_BINARIES = experiments/bench/bench experiments/bench/bench_events \
	experiments/bench/bench_events_nohook

# BENCH_FLAGS: more options for the program (--quick, --rounds N, or the
# parts to run: scalar events convert gemm attn flex exhaustive sweep
# scan arrays).
BENCH_FLAGS =

bench: $(BENCH_BINARIES) experiments/bf16emu
	@echo "bench: `LC_ALL=C date -u '+%Y-%m-%d %H:%M UTC'`;" \
	  "`sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1`;" \
	  "`$(CC) --version | head -1`"
	./experiments/bench/bench --events experiments/bench/bench_events \
	  experiments/bench/bench_events_nohook \
	  --sweep experiments/bf16emu $(BENCH_FLAGS)

CLEANFILES += $(BENCH_BINARIES)

.PHONY: bench
