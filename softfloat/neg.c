/* sf_neg -- flip the sign bit (no flags, NaN payload kept) */
#include "internal.h"

uint64_t
sf_neg(const sf_format *f, uint64_t a)
{
    return a ^ f->sign_mask;
}
