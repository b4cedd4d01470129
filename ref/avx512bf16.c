/* avx512bf16.c -- VCVTNEPS2BF16, with the run-time check */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "ref/avx512bf16.h"

#if defined(HAVE_AVX512BF16_COMPILER) && defined(__x86_64__)                  \
    && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

const char *
ref_avx512bf16_missing(void)
{
    unsigned eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;

    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return "no CPUID leaf 1";
    if (!(ecx & (1u << 27)))
        return "the OS has not enabled XSAVE (OSXSAVE clear)";
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0u));
    (void)xcr0_hi;
    if ((xcr0_lo & 0xE6u) != 0xE6u)
        return "the OS does not save the AVX-512 register state";
    if (__get_cpuid_max(0, NULL) < 7)
        return "no CPUID leaf 7";
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(ebx & (1u << 16)) || !(ebx & (1u << 31)))
        return "no AVX512F/AVX512VL";
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    if (!(eax & (1u << 5)))
        return "no AVX512_BF16";
    return NULL;
}

__attribute__((target("avx512bf16,avx512vl,avx512f"))) void
ref_avx512bf16_cvt16(const uint32_t *in, uint16_t *out)
{
    __m512 v;
    __m256bh r;

    memcpy(&v, in, sizeof v);
    r = _mm512_cvtneps_pbh(v);
    memcpy(out, &r, 16 * sizeof *out);
}

#else

const char *
ref_avx512bf16_missing(void)
{
#if !defined(__x86_64__)
    return "not an x86-64 host";
#else
    return "the compiler cannot target AVX512-BF16 "
           "(HAVE_AVX512BF16_COMPILER undefined)";
#endif
}

void
ref_avx512bf16_cvt16(const uint32_t *in, uint16_t *out)
{
    /* unreachable: ref_avx512bf16_missing() is never NULL here */
    (void)in;
    (void)out;
    abort();
}

#endif
