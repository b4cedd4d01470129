/* rcp.c -- the reciprocal of a reciprocal model (fa_rcp_eval) */
#include <config.h>

#include "attention/fa_local.h"

uint32_t
fa_rcp_eval(const fa_rcp_model *m, uint32_t x)
{
    sf_env e = SF_ENV_IEEE;
    uint32_t r = fa_div(FA_F32_ONE, x, &e);
    uint32_t ex = (x >> 23) & 0xFFu, er = (r >> 23) & 0xFFu;

    if (m == NULL || m->delta == NULL || ex == 0 || ex == 0xFFu || er == 0
        || er == 0xFFu)
        return r;
    return (uint32_t)((int64_t)r + m->delta[x & 0x7FFFFFu]);
}
