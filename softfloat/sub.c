/* sf_sub -- difference of two values of one format, rounded once */
#include "s_fast.h"

uint64_t
sf_sub(const sf_format *f, uint64_t a, uint64_t b, sf_round rm, sf_env *env)
{
    uint64_t z = s_fast_add_any(f, a, b, true, rm, env);

    return z != S_FAST_NONE ? z : s_add_sub(f, a, b, true, rm, env);
}
