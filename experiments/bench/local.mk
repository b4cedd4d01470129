# experiments/bench/local.mk -- benchmarks (make bench); not run by make check

# The event hook with no sink, against a library built without the hook:
# the same sources compiled into each program, so the macro is the only
# difference (no shared-library call overhead on either side).
EXTRA_PROGRAMS += experiments/bench/bench_events \
	experiments/bench/bench_events_nohook
experiments_bench_bench_events_SOURCES = \
	experiments/bench/bench_events.c $(softfloat_libsoftfloat_la_SOURCES)
experiments_bench_bench_events_CPPFLAGS = $(AM_CPPFLAGS)
experiments_bench_bench_events_nohook_SOURCES = \
	experiments/bench/bench_events.c $(softfloat_libsoftfloat_la_SOURCES)
experiments_bench_bench_events_nohook_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSF_NO_EVENT_HOOK
EXTRA_DIST += experiments/bench/run-events.sh

BENCH_BINARIES = experiments/bench/bench_events \
	experiments/bench/bench_events_nohook

bench: $(BENCH_BINARIES)
	$(SHELL) $(srcdir)/experiments/bench/run-events.sh \
	  experiments/bench/bench_events experiments/bench/bench_events_nohook

CLEANFILES += $(BENCH_BINARIES)

.PHONY: bench
