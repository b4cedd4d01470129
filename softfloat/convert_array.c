/* sf_convert_array -- sf_convert over an array: FP32 to BF16, FP16, E4M3
   and E5M2 and BF16 and FP16 to FP32 by the fields (portable, AVX2 and
   AVX-512 paths), every other pair element by element */
#define S_LANES_CONVERT 1
#include "s_array.h"
#include "s_lanes_all.h"

static int
conversion_kind(const sf_format *to, const sf_format *from)
{
    if (from == &sf_format_f32) {
        if (to == &sf_format_bf16)
            return S_CV_F32_BF16;
        if (to == &sf_format_f16)
            return S_CV_F32_F16;
        if (to == &sf_format_e4m3)
            return S_CV_F32_E4M3;
        if (to == &sf_format_e5m2)
            return S_CV_F32_E5M2;
    } else if (to == &sf_format_f32) {
        if (from == &sf_format_bf16)
            return S_CV_BF16_F32;
        if (from == &sf_format_f16)
            return S_CV_F16_F32;
    }
    return S_CV_NONE;
}

/* The portable path, the mode a constant in each loop. */
static void
convert_portable(int kind, const void *in, void *out, size_t n, sf_round rm,
                 sf_env *env)
{
#define CALL(m) s_cv_portable(kind, in, out, 0, n, m, env)
    S_ARR_BY_MODE(CALL, rm);
#undef CALL
}

void
sf_convert_array(const sf_format *to, const sf_format *from, const void *in,
                 void *out, size_t n, sf_round rm, sf_env *env)
{
    int kind = conversion_kind(to, from);

    if (kind == S_CV_NONE) {
        unsigned bi = from->storage_bits / 8, bo = to->storage_bits / 8;
        for (size_t i = 0; i < n; i++)
            s_arr_store(out, i, bo,
                        sf_convert(to, from, s_arr_load(in, i, bi), rm, env));
        return;
    }
    switch (s_arr_isa(rm, env)) {
#if S_ARRAY_VEC
    case SF_ISA_AVX512:
        cv_entry_avx512(kind, in, out, n, rm, env);
        return;
    case SF_ISA_AVX2:
        cv_entry_avx2(kind, in, out, n, rm, env);
        return;
#endif
    default:
        convert_portable(kind, in, out, n, rm, env);
        return;
    }
}
