/* sf_round_to_int -- roundToIntegral and roundToIntegralExact */
#include "internal.h"

uint64_t
sf_round_to_int(const sf_format *f, uint64_t a, sf_round rm, bool exact,
                sf_env *env)
{
    s_unpacked u;
    s_opctx ctx = {SF_OP_ROUND_INT, 1, {f, NULL, NULL}, {a, 0, 0}, false};
    s_rounded r;
    uint64_t z, rnd;
    unsigned flags, before = env->flags;

    s_unpack(f, a, env, &u);
    ctx.daz = u.daz;
    if (u.cls == S_FINITE && u.exp < 0) {
        /* |a| < 2^(p-1) here, so the rounding cannot fail */
        s_round_to_integer(u.sign, u.exp, u.sig, rm, env, &r, &rnd);
        z = r.kept == 0 ? s_pack_zero(f, u.sign)
                        : s_pack_exact(f, u.sign, 0, r.kept);
        flags = (exact && r.dir != 0) ? SF_FLAG_INEXACT : 0;
        env->flags |= flags;
        s_event_integer(f, u.sign, u.exp, u.sig, &r, rnd, z, flags, rm, env,
                        &ctx);
        return z;
    }
    if (u.cls == S_NAN)
        z = s_propagate_nan(f, &a, 1, env);
    else if (u.cls == S_ZERO)
        z = s_pack_zero(f, u.sign);
    else
        z = a; /* integral already, or Inf */
    s_event_special(f, z, env->flags & ~before, rm, env, &ctx);
    return z;
}
