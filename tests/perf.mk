# tests/perf.mk -- tests of the vectorised and fast paths against the scalar ones
