/* cvt_rules.c -- the GPU's narrowing conversions as the emulator models
   them (measured on all 2^32 inputs by cvt_probe.cu; see README.md) */
#include "cvt_rules.h"

#include <string.h>

const cvt_rule cvt_rules[CVT_NRULES] = {
    {"bf16_rn", "cvt.rn.bf16.f32", "sf_convert RNE, NVIDIA env",
     &sf_format_bf16, SF_RNE, false, false, false, false, 2},
    {"bf16_rz", "cvt.rz.bf16.f32", "sf_convert RTZ, NVIDIA env",
     &sf_format_bf16, SF_RTZ, false, false, false, false, 2},
    {"bf16_rn_relu", "cvt.rn.relu.bf16.f32",
     "sf_convert RNE, NVIDIA env; negative results -> +0", &sf_format_bf16,
     SF_RNE, true, false, false, false, 2},
    {"bf16x2_rn", "cvt.rn.bf16x2.f32",
     "sf_convert RNE, NVIDIA env, per half", &sf_format_bf16, SF_RNE, false,
     true, false, false, 2},
    {"f16_rn", "cvt.rn.f16.f32", "sf_convert RNE, NVIDIA env",
     &sf_format_f16, SF_RNE, false, false, false, false, 2},
    {"f16_rz", "cvt.rz.f16.f32", "sf_convert RTZ, NVIDIA env",
     &sf_format_f16, SF_RTZ, false, false, false, false, 2},
    {"f16_rn_relu", "cvt.rn.relu.f16.f32",
     "sf_convert RNE, NVIDIA env; negative results -> +0", &sf_format_f16,
     SF_RNE, true, false, false, false, 2},
    {"f16x2_rn", "cvt.rn.f16x2.f32", "sf_convert RNE, NVIDIA env, per half",
     &sf_format_f16, SF_RNE, false, true, false, false, 2},
    {"e4m3x2_rn_sat", "cvt.rn.satfinite.e4m3x2.f32",
     "sf_convert RNE, NVIDIA env, saturate, per half", &sf_format_e4m3,
     SF_RNE, false, true, true, false, 1},
    {"e5m2x2_rn_sat", "cvt.rn.satfinite.e5m2x2.f32",
     "sf_convert RNE, NVIDIA env, saturate, per half", &sf_format_e5m2,
     SF_RNE, false, true, true, false, 1},
    {"tf32_rna", "cvt.rna.tf32.f32",
     "sf_convert RNA, NVIDIA env; a NaN keeps its bits with the low 13 "
     "cleared (x & 0xFFFFE000)",
     &sf_format_tf32, SF_RNA, false, false, false, true, 4},
    {"tf32_rn", "cvt.rn.tf32.f32", "sf_convert RNE, NVIDIA env",
     &sf_format_tf32, SF_RNE, false, false, false, false, 4},
    {"tf32_rz", "cvt.rz.tf32.f32", "sf_convert RTZ, NVIDIA env",
     &sf_format_tf32, SF_RTZ, false, false, false, false, 4},
};

const cvt_rule *
cvt_rule_by_key(const char *key)
{
    for (size_t i = 0; i < CVT_NRULES; i++)
        if (strcmp(cvt_rules[i].key, key) == 0)
            return &cvt_rules[i];
    return NULL;
}

uint32_t
cvt_emulate(const cvt_rule *r, uint32_t x)
{
    sf_env env = SF_ENV_NVIDIA;
    uint32_t z;

    if (r->nan_trunc && sf_is_nan(&sf_format_f32, x))
        return x & 0xFFFFE000u;
    env.saturate = r->sat;
    z = (uint32_t)sf_convert(r->fmt, &sf_format_f32, x, r->rm, &env);
    if (r->relu && !sf_is_nan(r->fmt, z) && (z & r->fmt->sign_mask))
        z = 0;
    return z;
}

uint32_t
cvt_emulate_packed(const cvt_rule *r, uint32_t x)
{
    if (!r->pair)
        return cvt_emulate(r, x);
    return (cvt_emulate(r, x) << (8 * r->bytes)) |
           cvt_emulate(r, x ^ 0x80000000u);
}

uint64_t
cvt_part_hash(const cvt_rule *r, unsigned chunk, unsigned part)
{
    uint32_t x = ((uint32_t)chunk << CVT_CHUNK_BITS) |
                 ((uint32_t)part << CVT_PART_BITS);
    uint64_t h = CVT_FNV_BASIS;
    for (uint32_t i = 0; i < (1u << CVT_PART_BITS); i++)
        h = cvt_fnv_feed(h, cvt_emulate(r, x + i), r->bytes);
    return h;
}

uint64_t
cvt_combine(const uint64_t *parts)
{
    uint64_t h = CVT_FNV_BASIS;
    for (unsigned k = 0; k < CVT_NPART; k++)
        h = cvt_fnv_feed(cvt_fnv_feed(h, (uint32_t)parts[k], 4),
                         (uint32_t)(parts[k] >> 32), 4);
    return h;
}
