/* classify.c -- class predicates on bit patterns (no flags) */
#include "internal.h"

static bool
exp_all_ones(const sf_format *f, uint64_t a)
{
    return (a & f->exp_mask) == f->exp_mask;
}

bool
sf_is_nan(const sf_format *f, uint64_t a)
{
    if (f->specials == SF_SPECIALS_FN)
        return exp_all_ones(f, a) && (a & f->frac_mask) == f->frac_mask;
    return exp_all_ones(f, a) && (a & f->frac_mask) != 0;
}

bool
sf_is_snan(const sf_format *f, uint64_t a)
{
    /* FN formats have a single NaN encoding, which is quiet. */
    return f->specials == SF_SPECIALS_IEEE && sf_is_nan(f, a)
           && (a & f->quiet_mask) == 0;
}

bool
sf_is_inf(const sf_format *f, uint64_t a)
{
    return f->specials == SF_SPECIALS_IEEE && exp_all_ones(f, a)
           && (a & f->frac_mask) == 0;
}

bool
sf_is_zero(const sf_format *f, uint64_t a)
{
    return (a & ~f->sign_mask) == 0;
}

bool
sf_is_subnormal(const sf_format *f, uint64_t a)
{
    return (a & f->exp_mask) == 0 && (a & f->frac_mask) != 0;
}

bool
sf_is_finite(const sf_format *f, uint64_t a)
{
    return !sf_is_nan(f, a) && !sf_is_inf(f, a);
}

bool
sf_sign(const sf_format *f, uint64_t a)
{
    return (a & f->sign_mask) != 0;
}
