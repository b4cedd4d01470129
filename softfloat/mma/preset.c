/* preset -- the named accumulation models (contract names) */
#include <string.h>

#include "softfloat/mma/mma_local.h"

#define IN_BF16_F16 (SF_MMA_IN_BF16 | SF_MMA_IN_F16)
#define IN_ALL                                                                \
    (SF_MMA_IN_BF16 | SF_MMA_IN_F16 | SF_MMA_IN_TF32 | SF_MMA_IN_E4M3         \
     | SF_MMA_IN_E5M2 | SF_MMA_IN_F32)

/* NVIDIA tensor cores (doc/mma-models.md): one fused block per n
   products, every term truncated to F bits below the block's maximum
   unnormalised exponent, RZ to FP32, subnormals kept, canonical NaN,
   overflow to Inf, +0 for every zero result.  The all-tiny corner: Hopper
   ignores a zero C and clamps emax >= -133 (measured on an H200); the
   other architectures keep the published simulator's rule (a zero C
   takes part with exponent -126). */
#define NVIDIA(nm, nn, ff, in) NVIDIA_X(nm, nn, ff, in, true, SF_MMA_NO_FLOOR)
#define HOPPER(nm, nn, ff, in) NVIDIA_X(nm, nn, ff, in, false, -133)
#define NVIDIA_X(nm, nn, ff, in, zc, floor)                                   \
    {                                                                         \
        .name = nm, .kind = SF_MMA_FUSED, .n = nn, .frac_bits = ff,           \
        .align = SF_MMA_ALIGN_TRUNC, .rm = SF_RTZ, .acc = &sf_format_f32,     \
        .daz = false, .ftz = false, .tininess_after = true,                   \
        .c_in_block = true, .zero_c_in_max = zc, .emax_floor = floor,         \
        .nan = SF_MMA_NAN_DEFAULT, .default_nan = SF_DNAN_ALL_ONES,           \
        .overflow = SF_MMA_OVF_INF, .zero = SF_MMA_ZERO_POS,                  \
        .descending = false, .lanes = 1, .store = NULL, .store_rm = SF_RNE,   \
        .in_formats = in                                                      \
    }

/* Sequential FP32 models with IEEE behaviour, RNE. */
#define SEQ(nm, kd, st)                                                       \
    {                                                                         \
        .name = nm, .kind = kd, .n = 0, .frac_bits = SF_MMA_F_EXACT,          \
        .align = SF_MMA_ALIGN_TRUNC, .rm = SF_RNE, .acc = &sf_format_f32,     \
        .daz = false, .ftz = false, .tininess_after = true,                   \
        .c_in_block = true, .zero_c_in_max = false,                           \
        .emax_floor = SF_MMA_NO_FLOOR, .nan = SF_MMA_NAN_FIRST,               \
        .default_nan = SF_DNAN_POSITIVE, .overflow = SF_MMA_OVF_IEEE,         \
        .zero = SF_MMA_ZERO_IEEE, .descending = false, .lanes = 1,            \
        .store = st, .store_rm = SF_RNE, .in_formats = IN_ALL                 \
    }

/* The x86 BF16 dot products (VDPBF16PS, TDPBF16PS): FP32 FMAs with DAZ,
   FTZ and RNE, tininess after rounding, the first NaN operand quieted and
   the x86 default NaN, IEEE overflow and zero signs. */
#define X86_BF16(nm, kd, nn, desc, ln)                                        \
    {                                                                         \
        .name = nm, .kind = kd, .n = nn, .frac_bits = SF_MMA_F_EXACT,         \
        .align = SF_MMA_ALIGN_TRUNC, .rm = SF_RNE, .acc = &sf_format_f32,     \
        .daz = true, .ftz = true, .tininess_after = true, .c_in_block = true, \
        .zero_c_in_max = false, .emax_floor = SF_MMA_NO_FLOOR,                \
        .nan = SF_MMA_NAN_FIRST, .default_nan = SF_DNAN_NEGATIVE,             \
        .overflow = SF_MMA_OVF_IEEE, .zero = SF_MMA_ZERO_IEEE,                \
        .descending = desc, .lanes = ln, .store = NULL, .store_rm = SF_RNE,   \
        .in_formats = SF_MMA_IN_BF16                                          \
    }

static const sf_mma_model presets[] = {
    NVIDIA("sm70", 4, 23, SF_MMA_IN_F16),
    NVIDIA("sm80", 8, 24, IN_BF16_F16),
    HOPPER("sm90", 16, 25, IN_BF16_F16),
    /* Hopper mma.sync.m16n8k8 (BF16, FP16): one k8 instruction is one
       fused block of 8 with C; CUTLASS's sm75+ 16-bit GEMMs (the
       memory-efficient attention kernel) chain k8 instructions */
    HOPPER("sm90-k8", 8, 25, IN_BF16_F16),
    HOPPER("sm90-tf32", 8, 25, SF_MMA_IN_TF32),
    HOPPER("sm90-fp8", 32, 13, SF_MMA_IN_E4M3 | SF_MMA_IN_E5M2),
    NVIDIA("sm100", 16, 25, IN_BF16_F16),
    /* VDPBF16PS: per FP32 lane, srcdest += src1.odd * src2.odd, then
       += src1.even * src2.even; the NaN priority (src1 even, src2 even,
       src1 odd, src2 odd, srcdest) follows from the nesting.  A dot
       product over K pairs is K/2 such instructions chained through the
       accumulator. */
    X86_BF16("avx512bf16", SF_MMA_FMA_CHAIN, 2, true, 1),
    /* TDPBF16PS (SDM pseudocode): per output element, the even and the
       odd elements of the K pairs of one instruction (at most 16 pairs:
       a 64-byte tile row) go into two FP32 FMA chains started at 0; then
       srcdest + (even + odd). */
    X86_BF16("amx", SF_MMA_FMA_LANES, 32, false, 2),
    /* BFDOT, FEAT_EBF16 off: acc + (round(a0 b0) + round(a1 b1)), every
       rounding to odd, FZ and FIZ (tininess before rounding), default
       NaN, overflow to Inf. */
    {.name = "arm-bfdot",
     .kind = SF_MMA_PAIRWISE,
     .n = 2,
     .frac_bits = SF_MMA_F_EXACT,
     .align = SF_MMA_ALIGN_TRUNC,
     .rm = SF_ROD,
     .acc = &sf_format_f32,
     .daz = true,
     .ftz = true,
     .tininess_after = false,
     .c_in_block = true,
     .zero_c_in_max = false,
     .emax_floor = SF_MMA_NO_FLOOR,
     .nan = SF_MMA_NAN_DEFAULT,
     .default_nan = SF_DNAN_POSITIVE,
     .overflow = SF_MMA_OVF_INF,
     .zero = SF_MMA_ZERO_IEEE,
     .descending = false,
     .lanes = 1,
     .store = NULL,
     .store_rm = SF_RNE,
     .in_formats = SF_MMA_IN_BF16},
    /* BFDOT with FPCR.EBF = 1 and FPCR defaults: the pair a0 b0 + a1 b1
       exact and rounded once (RNE), then added to acc (RNE); default
       NaN. */
    {.name = "arm-ebf16",
     .kind = SF_MMA_FUSED,
     .n = 2,
     .frac_bits = SF_MMA_F_EXACT,
     .align = SF_MMA_ALIGN_TRUNC,
     .rm = SF_RNE,
     .acc = &sf_format_f32,
     .daz = false,
     .ftz = false,
     .tininess_after = false,
     .c_in_block = false,
     .zero_c_in_max = false,
     .emax_floor = SF_MMA_NO_FLOOR,
     .nan = SF_MMA_NAN_DEFAULT,
     .default_nan = SF_DNAN_POSITIVE,
     .overflow = SF_MMA_OVF_IEEE,
     .zero = SF_MMA_ZERO_IEEE,
     .descending = false,
     .lanes = 1,
     .store = NULL,
     .store_rm = SF_RNE,
     .in_formats = SF_MMA_IN_BF16},
    SEQ("fma-chain", SF_MMA_FMA_CHAIN, NULL),
    SEQ("exact", SF_MMA_EXACT, NULL),
    SEQ("mul-add", SF_MMA_MUL_ADD, NULL),
    SEQ("pairwise", SF_MMA_PAIRWISE, NULL),
    SEQ("kahan", SF_MMA_KAHAN, NULL),
    SEQ("fma-chain-bf16acc", SF_MMA_FMA_CHAIN, &sf_format_bf16),
};

#define N_PRESETS (sizeof presets / sizeof presets[0])

size_t
sf_mma_preset_count(void)
{
    return N_PRESETS;
}

const sf_mma_model *
sf_mma_preset(size_t i)
{
    return i < N_PRESETS ? &presets[i] : NULL;
}

const sf_mma_model *
sf_mma_preset_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

static unsigned
in_bit(const sf_format *f)
{
    if (f == &sf_format_bf16)
        return SF_MMA_IN_BF16;
    if (f == &sf_format_f16)
        return SF_MMA_IN_F16;
    if (f == &sf_format_tf32)
        return SF_MMA_IN_TF32;
    if (f == &sf_format_e4m3)
        return SF_MMA_IN_E4M3;
    if (f == &sf_format_e5m2)
        return SF_MMA_IN_E5M2;
    if (f == &sf_format_f32)
        return SF_MMA_IN_F32;
    return 0;
}

const sf_mma_model *
sf_mma_preset_for(const char *name, const sf_format *in)
{
    const sf_mma_model *base = sf_mma_preset_by_name(name);
    unsigned bit = in_bit(in);
    size_t len;

    if (base == NULL || bit == 0)
        return NULL;
    if (base->in_formats & bit)
        return base;
    len = strlen(name);
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strncmp(presets[i].name, name, len) == 0
            && presets[i].name[len] == '-' && (presets[i].in_formats & bit))
            return &presets[i];
    return NULL;
}
