# attention/local.mk -- the attention layer of libbf16emu: the reference
# flash attention on the emulator (uses softfloat/ only; no MPFR, no I/O).
# A convenience library, linked into libbf16emu.la (Makefile.am).

noinst_LTLIBRARIES += attention/libattention.la
attention_libattention_la_SOURCES = attention/attention.h \
	attention/fa_local.h attention/fwd_local.h attention/kernel.h \
	attention/kernels.c attention/kernels_cudnn.c \
	attention/config.c attention/fix.c attention/forward.c \
	attention/forward_tile.c attention/forward_combine.c \
	attention/backward.c attention/backward_math.c \
	attention/backward_flex.c attention/log.c \
	attention/exp.c attention/cuda_math.c \
	attention/kernels_sdpa_em.c attention/rcp.c attention/gqa.c \
	attention/block_sparse.c attention/kernels_flex.c
pkginclude_HEADERS += attention/attention.h attention/kernel.h

EXTRA_DIST += doc/attention.md
