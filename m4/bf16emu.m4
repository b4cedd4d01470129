# bf16emu.m4 -- configure checks specific to bf16emu

# BF16EMU_CHECK_INT128
# --------------------
# The emulator keeps exact intermediates in unsigned __int128; stop with a
# clear message when the compiler (in C11 mode) does not provide it.
AC_DEFUN([BF16EMU_CHECK_INT128],
[AC_CACHE_CHECK([whether $CC supports unsigned __int128],
  [bf16emu_cv_int128],
  [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
typedef unsigned __int128 u128;
]], [[
u128 x = (u128)1 << 100;
unsigned long long hi = (unsigned long long)(x >> 64);
return hi == (1ULL << 36) ? 0 : 1;
]])],
    [bf16emu_cv_int128=yes], [bf16emu_cv_int128=no])])
AS_IF([test "x$bf16emu_cv_int128" != xyes],
  [AC_MSG_ERROR([the C compiler '$CC' lacks unsigned __int128, which the
emulator needs for its exact intermediates; use GCC or Clang on a 64-bit
target])])
])

# BF16EMU_CHECK_AVX512BF16_COMPILER
# ---------------------------------
# Defines HAVE_AVX512BF16_COMPILER when the compiler can build a function
# that uses AVX512-BF16 intrinsics through a target attribute, without any
# -m flag on the command line.  Says nothing about the CPU running the
# tests: that is checked at run time.
AC_DEFUN([BF16EMU_CHECK_AVX512BF16_COMPILER],
[AC_CACHE_CHECK([whether $CC can compile AVX512-BF16 intrinsics],
  [bf16emu_cv_avx512bf16_compiler],
  [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
#include <immintrin.h>
__attribute__((target("avx512bf16,avx512vl,avx512f")))
__m128bh
bf16emu_probe(__m256 x)
{
    return _mm256_cvtneps_pbh(x);
}
__attribute__((target("avx512bf16,avx512vl,avx512f")))
__m512
bf16emu_probe_dot(__m512 acc, __m512bh a, __m512bh b)
{
    return _mm512_dpbf16_ps(acc, a, b);
}
]], [[]])],
    [bf16emu_cv_avx512bf16_compiler=yes],
    [bf16emu_cv_avx512bf16_compiler=no])])
AS_IF([test "x$bf16emu_cv_avx512bf16_compiler" = xyes],
  [AC_DEFINE([HAVE_AVX512BF16_COMPILER], [1],
    [Define to 1 if the C compiler can compile AVX512-BF16 intrinsics
     with __attribute__((target("avx512bf16,avx512vl,avx512f"))).])])
])
