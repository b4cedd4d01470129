# softfloat/local.mk -- the emulation layer of libbf16emu: the C library
# only (libm for fmaf), no I/O, no globals.  A convenience library, linked
# into libbf16emu.la (Makefile.am).
noinst_LTLIBRARIES += softfloat/libsoftfloat.la
softfloat_libsoftfloat_la_SOURCES = \
	softfloat/internal.h \
	softfloat/format.c softfloat/env.c softfloat/isa.c softfloat/classify.c \
	softfloat/s_unpack.c softfloat/s_nan.c softfloat/s_round_pack.c \
	softfloat/s_round_integer.c softfloat/s_add_exact.c \
	softfloat/add.c softfloat/sub.c softfloat/mul.c softfloat/div.c \
	softfloat/sqrt.c softfloat/fma.c softfloat/neg.c softfloat/abs.c \
	softfloat/minmax.c softfloat/compare.c softfloat/round_to_int.c \
	softfloat/convert.c softfloat/convert_array.c \
	softfloat/array_add.c softfloat/array_sub.c softfloat/array_mul.c \
	softfloat/array_fma.c softfloat/s_array.h softfloat/s_lanes.h \
	softfloat/s_lanes_all.h \
	softfloat/to_int.c softfloat/from_int.c \
	softfloat/native.c softfloat/typed.c \
	softfloat/from_string.c softfloat/to_string.c \
	softfloat/s_bignum.c softfloat/s_bignum.h softfloat/s_fma.h \
	softfloat/s_fast.h softfloat/s_add16.h
pkginclude_HEADERS += softfloat/softfloat.h softfloat/softfloat_inline.h
