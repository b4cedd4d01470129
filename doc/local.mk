# doc/local.mk -- documentation, and the library tour as a test

# The tour in README.md, compiled and run by make check.  It includes
# <softfloat.h> the way an installed user does (pkg-config adds
# -I$(includedir)/bf16emu), hence the extra -I.
check_PROGRAMS += doc/examples/tour
TESTS += doc/examples/tour doc/examples/readme-sync.sh
doc_examples_tour_SOURCES = doc/examples/tour.c
doc_examples_tour_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/softfloat
doc_examples_tour_LDADD = softfloat/libsoftfloat.la

EXTRA_DIST += doc/HACKING.md doc/semantics.md doc/verification.md \
	doc/performance.md doc/mma-models.md doc/gpu-measurements.md \
	doc/gpu-crosscheck.md \
	doc/examples/readme-sync.sh
