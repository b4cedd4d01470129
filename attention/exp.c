/* exp.c -- exp models of the reference attention (first cut: to be
   replaced by the correctly rounded implementation) */
#include <config.h>

#include <math.h>
#include <string.h>

#include "attention/attention.h"

static float
bits_to_float(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static uint32_t
float_to_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

uint32_t
fa_expf_cr(uint32_t x)
{
    return float_to_bits((float)exp((double)bits_to_float(x)));
}

uint32_t
fa_exp2f_cr(uint32_t x)
{
    return float_to_bits((float)exp2((double)bits_to_float(x)));
}

static const fa_exp_model model_cr = {"cr", FA_EXP_CR, NULL, NULL, NULL};
static const fa_exp_model model_libm = {"libm", FA_EXP_LIBM, NULL, NULL, NULL};

const fa_exp_model *
fa_exp_model_by_name(const char *name)
{
    if (strcmp(name, "cr") == 0)
        return &model_cr;
    if (strcmp(name, "libm") == 0)
        return &model_libm;
    return NULL;
}

uint32_t
fa_exp_eval(const fa_exp_model *m, bool base2, uint32_t x)
{
    switch (m->kind) {
    case FA_EXP_LIBM:
        return float_to_bits(base2 ? exp2f(bits_to_float(x))
                                   : expf(bits_to_float(x)));
    case FA_EXP_FN:
        return m->fn(m->user, base2, x);
    default:
        return base2 ? fa_exp2f_cr(x) : fa_expf_cr(x);
    }
}
