# softfloat/mma/local.mk -- accumulation and matrix-unit models (part of
# softfloat/libsoftfloat.la: libc only, no I/O, no globals)
softfloat_libsoftfloat_la_SOURCES += \
	softfloat/mma/mma_local.h \
	softfloat/mma/steps.c softfloat/mma/fused.c softfloat/mma/block.c \
	softfloat/mma/preset.c softfloat/mma/gemm.c \
	softfloat/mma/gemm_fast.c softfloat/mma/gemm_avx2.c \
	softfloat/mma/gemm_avx512.c softfloat/mma/s_gemm_block.h \
	softfloat/mma/s_gemm_lanes.h \
	softfloat/mma/gemm_chain.c \
	softfloat/mma/gemm_chain_fmaf.c softfloat/mma/gemm_row_c.c
pkginclude_HEADERS += softfloat/mma.h
