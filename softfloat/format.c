/* format.c -- the format descriptors; every mask derived from the widths */
#include <string.h>

#include "internal.h"

#define SF_BIT(n) ((uint64_t)1 << (n))
/* Exponent of the largest finite binade: the all-ones exponent field is
   reserved for Inf/NaN in IEEE formats; in FN formats it holds numbers. */
#define SF_EMAX(e, sp)                                                      \
    ((int)(SF_BIT(e) - ((sp) == SF_SPECIALS_IEEE ? 2u : 1u))                \
     - ((int)SF_BIT((e) - 1) - 1))

#define SF_FORMAT_INIT(nm, e, f, pad, sp)                                   \
    {                                                                       \
        .name = nm, .exp_bits = e, .frac_bits = f, .pad_bits = pad,         \
        .storage_bits = 1 + (e) + (f) + (pad), .specials = sp,              \
        .bias = (int)SF_BIT((e) - 1) - 1,                                   \
        .emin = 2 - (int)SF_BIT((e) - 1), .emax = SF_EMAX(e, sp),           \
        .sign_mask = SF_BIT((e) + (f) + (pad)),                             \
        .exp_mask = (SF_BIT(e) - 1) << ((f) + (pad)),                       \
        .frac_mask = (SF_BIT(f) - 1) << (pad),                              \
        .quiet_mask = SF_BIT((f) - 1 + (pad)),                              \
        .max_frac = SF_BIT(f) - ((sp) == SF_SPECIALS_IEEE ? 1u : 2u),       \
    }

const sf_format sf_format_bf16 = SF_FORMAT_INIT(
    "bf16", S_BF16_EXP_BITS, S_BF16_FRAC_BITS, 0, SF_SPECIALS_IEEE);
const sf_format sf_format_f16 = SF_FORMAT_INIT(
    "f16", S_F16_EXP_BITS, S_F16_FRAC_BITS, 0, SF_SPECIALS_IEEE);
const sf_format sf_format_f32 = SF_FORMAT_INIT(
    "f32", S_F32_EXP_BITS, S_F32_FRAC_BITS, 0, SF_SPECIALS_IEEE);
const sf_format sf_format_tf32 = SF_FORMAT_INIT("tf32", 8, 10, 13,
                                                SF_SPECIALS_IEEE);
const sf_format sf_format_e4m3 = SF_FORMAT_INIT("e4m3", 4, 3, 0,
                                                SF_SPECIALS_FN);
const sf_format sf_format_e5m2 = SF_FORMAT_INIT("e5m2", 5, 2, 0,
                                                SF_SPECIALS_IEEE);
const sf_format sf_format_f64 = SF_FORMAT_INIT("f64", 11, 52, 0,
                                               SF_SPECIALS_IEEE);

const sf_format *
sf_format_by_name(const char *name)
{
    static const struct
    {
        const char *name;
        const sf_format *fmt;
    } names[] = {
        {"bf16", &sf_format_bf16}, {"f16", &sf_format_f16},
        {"fp16", &sf_format_f16},  {"f32", &sf_format_f32},
        {"fp32", &sf_format_f32},  {"tf32", &sf_format_tf32},
        {"e4m3", &sf_format_e4m3}, {"fp8e4m3", &sf_format_e4m3},
        {"e5m2", &sf_format_e5m2}, {"fp8e5m2", &sf_format_e5m2},
        {"f64", &sf_format_f64},   {"fp64", &sf_format_f64},
    };
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].fmt;
    return NULL;
}
