/* avx512bf16.h -- VCVTNEPS2BF16, the x86 binary32-to-BF16 conversion that
   the library's SF_ENV_AVX512BF16 is compared with (by the tests) and
   timed against (by make bench) */
#ifndef BF16EMU_REF_AVX512BF16_H
#define BF16EMU_REF_AVX512BF16_H

#include <stdint.h>

/* NULL when VCVTNEPS2BF16 can run on zmm registers here, else why not: a
   build that is not for x86-64 or whose compiler cannot target
   AVX512-BF16; a CPU without AVX512F, AVX512VL or AVX512_BF16
   (CPUID.(EAX=7,ECX=0):EBX bits 16 and 31, CPUID.(EAX=7,ECX=1):EAX bit
   5); an OS that does not save the opmask and zmm state (XCR0 bits 1, 2,
   5, 6, 7). */
const char *ref_avx512bf16_missing(void);

/* Sixteen conversions IN[0..15] -> OUT[0..15] with VCVTNEPS2BF16 (RNE,
   DAZ, FTZ, no flags).  Only when ref_avx512bf16_missing() is NULL. */
void ref_avx512bf16_cvt16(const uint32_t *in, uint16_t *out);

#endif
