/* sf_sub -- difference of two values of one format, rounded once */
#include "internal.h"

uint64_t
sf_sub(const sf_format *f, uint64_t a, uint64_t b, sf_round rm, sf_env *env)
{
    return s_add_sub(f, a, b, true, rm, env);
}
