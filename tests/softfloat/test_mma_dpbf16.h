/* test_mma_dpbf16.h -- VDPBF16PS on the host and a generator of its
   operands, shared by test_mma_avx512bf16 and exh_mma_avx512bf16 */
#ifndef BF16EMU_TESTS_MMA_DPBF16_H
#define BF16EMU_TESTS_MMA_DPBF16_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "softfloat/mma.h"
#include "softfloat/softfloat.h"
#include "tests/support/support.h"

#if defined(HAVE_AVX512BF16_COMPILER) && defined(__x86_64__)                  \
    && defined(__GNUC__)
#define DP_HW 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define DP_HW 0
#endif

#if DP_HW
/* NULL when the CPU and the OS can run VDPBF16PS on zmm registers, else
   why not: AVX512F (CPUID.(7,0):EBX bit 16), AVX512_BF16 (CPUID.(7,1):EAX
   bit 5), XSAVE enabled and XCR0 saving the opmask and zmm state. */
static inline const char *
dp_hw_missing(void)
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
    if (!(ebx & (1u << 16)))
        return "no AVX512F";
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    if (!(eax & (1u << 5)))
        return "no AVX512_BF16";
    return NULL;
}

/* out[i] = VDPBF16PS lane i: c[i] (FP32) with the BF16 pairs a[i], b[i]
   (element 2i in the low half of each 32-bit word). */
__attribute__((target("avx512bf16,avx512f"))) static inline void
dp_hw16(const uint32_t *c, const uint32_t *a, const uint32_t *b, uint32_t *out)
{
    __m512 vc, r;
    __m512bh va, vb;

    memcpy(&vc, c, sizeof vc);
    memcpy(&va, a, sizeof va);
    memcpy(&vb, b, sizeof vb);
    r = _mm512_dpbf16_ps(vc, va, vb);
    memcpy(out, &r, sizeof r);
}
#else
static inline const char *
dp_hw_missing(void)
{
#if !defined(__x86_64__)
    return "not an x86-64 host";
#else
    return "the compiler cannot target AVX512-BF16";
#endif
}
#endif

/* A BF16 operand: mostly normal numbers with exponents near BASE (so that
   sums cancel and products land near the FTZ threshold when BASE is about
   -63), and every special class. */
static inline uint16_t
dp_gen_bf16(tst_rng *r, int base)
{
    uint64_t x = tst_rand64(r);
    unsigned cls = (unsigned)(x % 100);
    uint16_t sign = (uint16_t)((x >> 8) & 1u) << 15;
    uint16_t frac = (uint16_t)((x >> 9) & 0x7Fu);
    int e;

    if (cls < 55) {
        e = base + (int)((x >> 16) % 17) - 8;
    } else if (cls < 65) {
        e = (int)((x >> 16) % 254) - 126;
    } else if (cls < 73) {
        return (uint16_t)(sign | (frac ? frac : 1u)); /* subnormal */
    } else if (cls < 81) {
        return sign; /* +-0 */
    } else if (cls < 84) {
        return (uint16_t)(sign | 0x7F80u); /* +-Inf */
    } else if (cls < 87) {
        return (uint16_t)(sign | 0x7F80u | (frac ? frac : 1u)); /* NaN */
    } else if (cls < 93) {
        e = 123 + (int)((x >> 16) % 5); /* near overflow */
    } else {
        e = -66 + (int)((x >> 16) % 7); /* products near 2^-126 */
    }
    if (e < -126)
        e = -126;
    if (e > 127)
        e = 127;
    return (uint16_t)(sign | (uint16_t)((e + 127) << 7) | frac);
}

/* An FP32 accumulator in the same spirit, near 2^(2 BASE) by default. */
static inline uint32_t
dp_gen_f32(tst_rng *r, int base)
{
    uint64_t x = tst_rand64(r);
    unsigned cls = (unsigned)(x % 100);
    uint32_t sign = (uint32_t)((x >> 8) & 1u) << 31;
    uint32_t frac = (uint32_t)((x >> 9) & 0x7FFFFFu);
    int e;

    if (cls < 55) {
        e = 2 * base + (int)((x >> 40) % 33) - 16;
    } else if (cls < 63) {
        e = (int)((x >> 40) % 254) - 126;
    } else if (cls < 71) {
        return sign | (frac ? frac : 1u);
    } else if (cls < 80) {
        return sign;
    } else if (cls < 83) {
        return sign | 0x7F800000u;
    } else if (cls < 86) {
        return sign | 0x7F800000u | (frac ? frac : 1u);
    } else if (cls < 92) {
        e = 125 + (int)((x >> 40) % 3);
    } else {
        e = -127 + (int)((x >> 40) % 4);
    }
    if (e < -126)
        return sign | frac; /* subnormal or zero */
    if (e > 127)
        e = 127;
    return sign | (uint32_t)(e + 127) << 23 | frac;
}

/* Sixteen lanes of operands. */
static inline void
dp_gen16(tst_rng *r, uint32_t *c, uint32_t *a, uint32_t *b)
{
    for (unsigned i = 0; i < 16; i++) {
        int base = (int)(tst_rand64(r) % 8) == 0
                       ? -63
                       : (int)(tst_rand64(r) % 41) - 20;
        uint16_t a0 = dp_gen_bf16(r, base), a1 = dp_gen_bf16(r, base);
        uint16_t b0 = dp_gen_bf16(r, base), b1 = dp_gen_bf16(r, base);
        a[i] = (uint32_t)a1 << 16 | a0;
        b[i] = (uint32_t)b1 << 16 | b0;
        c[i] = dp_gen_f32(r, base);
    }
}

/* The model of one lane. */
static inline uint32_t
dp_model(const sf_mma_model *m, uint32_t c, uint32_t a, uint32_t b)
{
    uint64_t av[2] = {a & 0xFFFFu, a >> 16}, bv[2] = {b & 0xFFFFu, b >> 16};
    sf_env env = SF_ENV_AVX512BF16;

    return (uint32_t)sf_mma_block(m, &sf_format_bf16, av, &sf_format_bf16, bv,
                                  2, c, &env);
}

static inline void
dp_print(uint32_t c, uint32_t a, uint32_t b, uint32_t hw, uint32_t model)
{
    printf("vdpbf16ps c=%08x a=%08x b=%08x (pairs hi:lo) hw=%08x model=%08x\n",
           (unsigned)c, (unsigned)a, (unsigned)b, (unsigned)hw,
           (unsigned)model);
}

#endif /* BF16EMU_TESTS_MMA_DPBF16_H */
