/* sf_minimum, sf_maximum, sf_minimum_number, sf_maximum_number -- IEEE
   754-2019 section 9.6 */
#include "internal.h"

/* -1, 0, +1 for a < b, a == b (same encoding), a > b, ordering -0 < +0;
   neither is a NaN. */
static int
total_cmp(const sf_format *f, uint64_t a, uint64_t b)
{
    int64_t ka = (int64_t)(a & ~f->sign_mask);
    int64_t kb = (int64_t)(b & ~f->sign_mask);
    /* -0 -> -1 so that it sorts below +0 */
    ka = s_sign(f, a) ? -ka - 1 : ka;
    kb = s_sign(f, b) ? -kb - 1 : kb;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
}

static uint64_t
pick(const sf_format *f, uint64_t a, uint64_t b, bool want_max,
     bool number, sf_env *env)
{
    bool na = sf_is_nan(f, a), nb = sf_is_nan(f, b);

    if (na || nb) {
        uint64_t ops[2] = {a, b};
        if (number && !(na && nb)) {
            /* the number wins; a signalling NaN still signals */
            if (sf_is_snan(f, na ? a : b))
                env->flags |= SF_FLAG_INVALID;
            return na ? b : a;
        }
        return s_propagate_nan(f, ops, 2, env);
    }
    if (want_max)
        return total_cmp(f, a, b) >= 0 ? a : b;
    return total_cmp(f, a, b) <= 0 ? a : b;
}

uint64_t
sf_minimum(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return pick(f, a, b, false, false, env);
}

uint64_t
sf_maximum(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return pick(f, a, b, true, false, env);
}

uint64_t
sf_minimum_number(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return pick(f, a, b, false, true, env);
}

uint64_t
sf_maximum_number(const sf_format *f, uint64_t a, uint64_t b, sf_env *env)
{
    return pick(f, a, b, true, true, env);
}
