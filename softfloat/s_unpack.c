/* s_unpack -- split a bit pattern into class, sign and exact significand */
#include "internal.h"

void
s_unpack(const sf_format *f, uint64_t a, const sf_env *env, s_unpacked *u)
{
    unsigned field = s_exp_field(f, a);
    uint64_t frac = s_frac(f, a);
    unsigned all_ones = (1u << f->exp_bits) - 1;

    u->sign = s_sign(f, a);
    u->snan = false;
    u->daz = false;
    u->exp = 0;
    u->sig = 0;
    if (field == all_ones) {
        if (f->specials == SF_SPECIALS_IEEE) {
            if (frac == 0) {
                u->cls = S_INF;
            } else {
                u->cls = S_NAN;
                u->snan = (a & f->quiet_mask) == 0;
            }
            return;
        }
        if (frac == (f->frac_mask >> f->pad_bits)) {
            u->cls = S_NAN; /* FN: S.1111.111, quiet */
            return;
        }
    }
    if (field == 0) {
        if (frac == 0 || env->daz) {
            u->cls = S_ZERO;
            u->daz = frac != 0;
            return;
        }
        /* subnormal: frac * 2^(emin - frac_bits) */
        u->cls = S_FINITE;
        u->sig = frac;
        u->exp = f->emin - (int32_t)f->frac_bits;
        return;
    }
    u->cls = S_FINITE;
    u->sig = frac | ((uint64_t)1 << f->frac_bits);
    u->exp = (int32_t)field - f->bias - (int32_t)f->frac_bits;
}

uint64_t
s_pack_inf(const sf_format *f, bool sign)
{
    if (f->specials == SF_SPECIALS_FN) /* no Inf: the NaN, sign kept */
        return (sign ? f->sign_mask : 0) | f->exp_mask | f->frac_mask;
    return (sign ? f->sign_mask : 0) | f->exp_mask;
}

uint64_t
s_pack_max(const sf_format *f, bool sign)
{
    return s_pack(f, sign, (uint64_t)(f->emax + f->bias), f->max_frac);
}
