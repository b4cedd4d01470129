# ref/local.mk -- independent references that the tests check the library
# against and that make bench times it against: VCVTNEPS2BF16 with its
# run-time check, and an integer rounding routine that takes nothing from
# softfloat/ but the names of the rounding modes.  Not installed; linked
# into tests/support/libtestsupport.la and experiments/bench/bench.
noinst_LTLIBRARIES += ref/libref.la
ref_libref_la_SOURCES = ref/avx512bf16.h ref/avx512bf16.c \
	ref/round.h ref/round.c
