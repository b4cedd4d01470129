/* isa -- which instruction-set paths the running CPU supports, and the
   path a call takes for a requested cap */
#include <strings.h>

#include "internal.h"

static const char *const isa_names[SF_N_ISA] = {"auto", "scalar", "avx2",
                                                "avx512", "neon"};

bool
sf_isa_supported(sf_isa isa)
{
    switch (isa) {
    case SF_ISA_AUTO:
    case SF_ISA_SCALAR:
        return true;
#if defined(__x86_64__) && defined(__GNUC__)
    /* The compiler's run-time library reads CPUID and XCR0 once; a
       feature counts only when the OS saves its register state.
       __builtin_cpu_init returns at once when that is done. */
    case SF_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
               && __builtin_cpu_supports("f16c")
               && __builtin_cpu_supports("bmi2");
    case SF_ISA_AVX512:
        __builtin_cpu_init();
        return sf_isa_supported(SF_ISA_AVX2)
               && __builtin_cpu_supports("avx512f")
               && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512cd")
               && __builtin_cpu_supports("avx512vl")
               && __builtin_cpu_supports("avx512dq");
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
    case SF_ISA_NEON: /* part of every AArch64 CPU */
        return true;
#endif
    default:
        return false;
    }
}

sf_isa
sf_isa_cpu(void)
{
    if (sf_isa_supported(SF_ISA_NEON))
        return SF_ISA_NEON;
    if (sf_isa_supported(SF_ISA_AVX512))
        return SF_ISA_AVX512;
    if (sf_isa_supported(SF_ISA_AVX2))
        return SF_ISA_AVX2;
    return SF_ISA_SCALAR;
}

sf_isa
sf_isa_resolve(int want)
{
    sf_isa best = sf_isa_cpu();

    if (want <= SF_ISA_AUTO || want >= SF_N_ISA)
        return best;
    /* the two families: SF_ISA_NEON, or the x86-64 paths in order */
    if (want == SF_ISA_NEON || best == SF_ISA_NEON)
        return want == (int)best ? best : SF_ISA_SCALAR;
    return (sf_isa)want < best ? (sf_isa)want : best;
}

const char *
sf_isa_name(sf_isa isa)
{
    return (unsigned)isa < SF_N_ISA ? isa_names[isa] : "?";
}

int
sf_isa_by_name(const char *name)
{
    for (int i = 0; i < SF_N_ISA; i++)
        if (name != NULL && strcasecmp(name, isa_names[i]) == 0)
            return i;
    return -1;
}
