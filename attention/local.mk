# attention/local.mk -- libattention: the reference flash attention on the
# emulator (depends on libsoftfloat only; no MPFR, no I/O).

lib_LTLIBRARIES += attention/libattention.la
attention_libattention_la_SOURCES = attention/attention.h \
	attention/exp.c
attention_libattention_la_LIBADD = softfloat/libsoftfloat.la $(LIBM)
attention_libattention_la_LDFLAGS = -version-info 0:0:0
pkginclude_HEADERS += attention/attention.h
