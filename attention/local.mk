# attention/local.mk -- libattention: the reference flash attention on the
# emulator (depends on libsoftfloat only; no MPFR, no I/O).

lib_LTLIBRARIES += attention/libattention.la
attention_libattention_la_SOURCES = attention/attention.h \
	attention/fa_local.h attention/kernel.h \
	attention/kernels.c attention/kernels_cudnn.c \
	attention/config.c attention/fix.c attention/forward.c \
	attention/backward.c attention/backward_math.c attention/log.c \
	attention/exp.c attention/cuda_math.c \
	attention/kernels_sdpa_em.c attention/rcp.c attention/gqa.c
attention_libattention_la_LIBADD = softfloat/libsoftfloat.la $(LIBM)
attention_libattention_la_LDFLAGS = -version-info 0:0:0
pkginclude_HEADERS += attention/attention.h attention/kernel.h

EXTRA_DIST += doc/attention.md
