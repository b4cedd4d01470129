# doc/local.mk -- documentation, and the library tour as a test

# The tour in README.md, compiled and run by make check.  It includes
# <softfloat.h> the way an installed user does (pkg-config adds
# -I$(includedir)/bf16emu), hence the extra -I.
check_PROGRAMS += doc/examples/tour
TESTS += doc/examples/tour doc/examples/readme-sync.sh
doc_examples_tour_SOURCES = doc/examples/tour.c
doc_examples_tour_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/softfloat
doc_examples_tour_LDADD = libbf16emu.la

EXTRA_DIST += doc/HACKING.md doc/semantics.md doc/verification.md doc/python.md doc/flex.md \
	doc/performance.md doc/mma-models.md doc/gpu-measurements.md \
	doc/gpu-crosscheck.md \
	doc/notes/performance-runs.md doc/notes/gpu-crosscheck-log.md \
	doc/examples/readme-sync.sh

EXTRA_DIST += doc/reproduce.md doc/img/sweep-bias-vmean.png \
	doc/img/t12-bias.png

# make doc-images: regenerates the plots README.md shows (the default
# sweep and the T12 plot of reproduce) into doc/img/ of the source tree.
doc-images: experiments/bf16emu$(EXEEXT)
	rm -rf doc-images.tmp
	./experiments/bf16emu sweep --out doc-images.tmp/sweep --quiet --plot
	./experiments/bf16emu reproduce --only T12 --out doc-images.tmp/r
	$(MKDIR_P) $(srcdir)/doc/img
	cp doc-images.tmp/sweep/bias-vmean.png \
	  $(srcdir)/doc/img/sweep-bias-vmean.png
	cp doc-images.tmp/r/t12-bias.png $(srcdir)/doc/img/t12-bias.png
	rm -rf doc-images.tmp

.PHONY: doc-images
