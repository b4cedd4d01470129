/* s_nan -- NaN propagation, default NaNs and invalid operations */
#include "internal.h"

uint64_t
sf_default_nan_bits(const sf_format *f, const sf_env *env)
{
    bool neg = env->default_nan == SF_DNAN_NEGATIVE;
    uint64_t frac;

    if (f->specials == SF_SPECIALS_FN || env->default_nan == SF_DNAN_ALL_ONES)
        frac = f->frac_mask;
    else
        frac = f->quiet_mask;
    return (neg ? f->sign_mask : 0) | f->exp_mask | frac;
}

static uint64_t
quiet(const sf_format *f, uint64_t a)
{
    if (f->specials == SF_SPECIALS_FN)
        return a | f->exp_mask | f->frac_mask;
    return a | f->quiet_mask;
}

uint64_t
s_invalid(const sf_format *f, sf_env *env)
{
    env->flags |= SF_FLAG_INVALID;
    return sf_default_nan_bits(f, env);
}

uint64_t
s_propagate_nan(const sf_format *f, const uint64_t *a, unsigned n,
                sf_env *env)
{
    int first_nan = -1, first_snan = -1;

    for (unsigned i = 0; i < n; i++) {
        if (first_snan < 0 && sf_is_snan(f, a[i]))
            first_snan = (int)i;
        if (first_nan < 0 && sf_is_nan(f, a[i]))
            first_nan = (int)i;
    }
    SF_ASSERT_DEBUG(first_nan >= 0);
    if (first_snan >= 0)
        env->flags |= SF_FLAG_INVALID;
    switch (env->nan_rule) {
    case SF_NAN_DEFAULT:
        return sf_default_nan_bits(f, env);
    case SF_NAN_SNAN_FIRST:
        if (first_snan >= 0)
            return quiet(f, a[first_snan]);
        return quiet(f, a[first_nan]);
    case SF_NAN_FIRST:
    default:
        return quiet(f, a[first_nan]);
    }
}

uint64_t
s_convert_nan(const sf_format *to, const sf_format *from, uint64_t a,
              sf_env *env)
{
    bool sign = s_sign(from, a);
    uint64_t payload = s_frac(from, a);

    if (sf_is_snan(from, a))
        env->flags |= SF_FLAG_INVALID;
    if (env->nan_rule == SF_NAN_DEFAULT)
        return sf_default_nan_bits(to, env);
    if (to->specials == SF_SPECIALS_FN)
        return (sign ? to->sign_mask : 0) | to->exp_mask | to->frac_mask;
    /* keep the payload's top bits: it is left-aligned in the fraction */
    if (to->frac_bits >= from->frac_bits)
        payload <<= to->frac_bits - from->frac_bits;
    else
        payload >>= from->frac_bits - to->frac_bits;
    return (sign ? to->sign_mask : 0) | to->exp_mask
           | (payload << to->pad_bits) | to->quiet_mask;
}
