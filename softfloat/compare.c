/* sf_compare -- IEEE comparisons, quiet and signalling */
#include "internal.h"

/* A total order key on non-NaN encodings: sign-magnitude to two's
   complement, with both zeros mapped to 0. */
static int64_t
order_key(const sf_format *f, uint64_t a)
{
    int64_t mag = (int64_t)(a & ~f->sign_mask);
    return s_sign(f, a) ? -mag : mag;
}

sf_cmp
sf_compare(const sf_format *f, uint64_t a, uint64_t b, bool signaling,
           sf_env *env)
{
    int64_t ka, kb;

    if (sf_is_nan(f, a) || sf_is_nan(f, b)) {
        if (signaling || sf_is_snan(f, a) || sf_is_snan(f, b))
            env->flags |= SF_FLAG_INVALID;
        return SF_CMP_UN;
    }
    if (env->daz) { /* subnormal operands compare as zero */
        if (sf_is_subnormal(f, a))
            a &= f->sign_mask;
        if (sf_is_subnormal(f, b))
            b &= f->sign_mask;
    }
    ka = order_key(f, a);
    kb = order_key(f, b);
    return ka < kb ? SF_CMP_LT : ka > kb ? SF_CMP_GT : SF_CMP_EQ;
}

bool
sf_eq(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return sf_compare(f, a, b, false, env) == SF_CMP_EQ;
}

bool
sf_lt(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return sf_compare(f, a, b, true, env) == SF_CMP_LT;
}

bool
sf_le(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    sf_cmp c = sf_compare(f, a, b, true, env);
    return c == SF_CMP_LT || c == SF_CMP_EQ;
}

bool
sf_eq_signaling(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return sf_compare(f, a, b, true, env) == SF_CMP_EQ;
}

bool
sf_lt_quiet(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return sf_compare(f, a, b, false, env) == SF_CMP_LT;
}

bool
sf_le_quiet(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    sf_cmp c = sf_compare(f, a, b, false, env);
    return c == SF_CMP_LT || c == SF_CMP_EQ;
}

bool
sf_unordered(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return sf_compare(f, a, b, false, env) == SF_CMP_UN;
}
