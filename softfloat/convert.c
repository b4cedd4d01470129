/* sf_convert -- conversion between any two formats, rounded once */
#include "s_fast.h"

uint64_t
s_convert(const sf_format *to, const sf_format *from, uint64_t a,
          sf_round rm, sf_env *env, s_opctx *ctx)
{
    s_unpacked u;
    uint64_t z;
    unsigned before = env->flags;

    s_unpack(from, a, env, &u);
    ctx->daz = u.daz;
    switch (u.cls) {
    case S_FINITE:
        return s_round_pack(to, u.sign, u.exp, u.sig, false, rm, env, ctx);
    case S_NAN:
        z = s_convert_nan(to, from, a, env);
        break;
    case S_INF:
        /* saturating: the largest finite value (as NVIDIA's .satfinite
           conversions return on an H200, E5M2 included); otherwise Inf,
           or the NaN of a format without Inf */
        z = env->saturate ? s_pack_max(to, u.sign) : s_pack_inf(to, u.sign);
        break;
    case S_ZERO:
    default:
        z = s_pack_zero(to, u.sign);
        break;
    }
    s_event_special(to, z, env->flags & ~before, rm, env, ctx);
    return z;
}

uint64_t
sf_convert(const sf_format *to, const sf_format *from, uint64_t a,
           sf_round rm, sf_env *env)
{
    s_opctx ctx = {SF_OP_CONVERT, 1, {from, NULL, NULL}, {a, 0, 0}, false};
    uint64_t z = s_fast_convert_any(to, from, a, rm, env);

    return z != S_FAST_NONE ? z : s_convert(to, from, a, rm, env, &ctx);
}
