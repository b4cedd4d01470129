/* native.c -- the one boundary with the host's binary64 */
#include <string.h>

#include "internal.h"

uint64_t
sf_from_double(const sf_format *f, double x, sf_round rm, sf_env *env)
{
    uint64_t bits;

    memcpy(&bits, &x, sizeof bits);
    {
        s_opctx ctx = {SF_OP_FROM_DOUBLE, 1, {NULL, NULL, NULL},
                       {bits, 0, 0}, false};
        return s_convert(f, &sf_format_f64, bits, rm, env, &ctx);
    }
}

double
sf_to_double(const sf_format *f, uint64_t a)
{
    sf_env env = SF_ENV_IEEE; /* exact: no flags can arise but sNaN's */
    uint64_t bits = sf_convert(&sf_format_f64, f, a, SF_RNE, &env);
    double x;

    if (sf_is_snan(f, a)) /* keep signalling NaNs signalling */
        bits &= ~sf_format_f64.quiet_mask;
    if (sf_is_nan(f, a) && (bits & sf_format_f64.frac_mask) == 0)
        bits |= 1;
    memcpy(&x, &bits, sizeof x);
    return x;
}

double
sf_dyadic_to_double(const sf_dyadic *d)
{
    sf_env env = SF_ENV_IEEE;
    s_u128 sig = ((s_u128)d->hi << 64) | d->lo;
    uint64_t bits;
    double x;

    if (sig == 0)
        return d->sign ? -0.0 : 0.0;
    if (d->tail) { /* make room so the tail lies below the round bit */
        int n = s_clz128(sig);
        if (n > 0)
            sig = (sig << n) | 1; /* tail as the lowest (sticky) bit */
        bits = s_round_pack(&sf_format_f64, d->sign, d->exp - n, sig, false,
                            SF_RNE, &env, NULL);
    } else {
        bits = s_round_pack(&sf_format_f64, d->sign, d->exp, sig, false,
                            SF_RNE, &env, NULL);
    }
    memcpy(&x, &bits, sizeof x);
    return x;
}

double
sf_event_error_ulps(const sf_event *ev)
{
    sf_dyadic d = ev->error;

    if (ev->error_infinite)
        return ev->error.sign ? -__builtin_inf() : __builtin_inf();
    d.exp -= ev->ulp_exp;
    return sf_dyadic_to_double(&d);
}
