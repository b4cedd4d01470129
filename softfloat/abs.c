/* sf_abs -- clear the sign bit (no flags, NaN payload kept) */
#include "internal.h"

uint64_t
sf_abs(const sf_format *f, uint64_t a)
{
    return a & ~f->sign_mask;
}
