/* s_round_integer -- rounding to an integer quantum, and its event */
#include "internal.h"

bool
s_round_to_integer(bool sign, int32_t exp, uint64_t sig, sf_round rm,
                   sf_env *env, s_rounded *r, uint64_t *rnd)
{
    int n = s_clz64(sig);
    int32_t e = exp + 63 - n; /* |x| in [2^e, 2^(e+1)) */
    s_u128 s = (s_u128)sig << (64 + n);

    *rnd = 0;
    /* At e = 63 every value of these formats (p <= 53) is an integer, so
       nothing is rounded and kept < 2^64 cannot carry out. */
    if (e >= 64)
        return false;
    if (rm == SF_SR)
        *rnd = s_sr_draw(env);
    s_round_at(sign, e, s, false, 0, rm, *rnd, r);
    return true;
}

void
s_event_integer(const sf_format *f, bool sign, int32_t exp, uint64_t sig,
                const s_rounded *r, uint64_t rnd, uint64_t result,
                unsigned flags, sf_round rm, sf_env *env, const s_opctx *ctx)
{
    sf_event ev;
    int n = s_clz64(sig);

    if (!S_EVENTS_ON(env))
        return;
    s_event_begin(&ev, f, rm, ctx);
    s_dyadic_set(&ev.exact, sign, exp - n - 64, (s_u128)sig << (64 + n),
                 false);
    ev.ulp_exp = 0;
    s_event_rounded(&ev, r);
    ev.dir = r->dir;
    ev.result = result;
    ev.flags = flags;
    ev.sr_random = rnd;
    ev.error_infinite = (flags & SF_FLAG_INVALID) != 0;
    if (ev.error_infinite)
        s_dyadic_set(&ev.error, false, 0, 0, false);
    else
        s_dyadic_error(sign, r->kept, 0, (s_u128)sig, exp, false,
                       &ev.error);
    env->events->fn(env->events->user, &ev);
}
