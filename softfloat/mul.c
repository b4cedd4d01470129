/* sf_mul -- product of two values of one format, rounded once */
#include "s_fast.h"

uint64_t
s_mul(const sf_format *f, uint64_t a, uint64_t b, sf_round rm, sf_env *env)
{
    s_unpacked ua, ub;
    s_opctx ctx = {SF_OP_MUL, 2, {f, f, NULL}, {a, b, 0}, false};
    uint64_t z;
    unsigned before = env->flags;
    bool sign;

    s_unpack(f, a, env, &ua);
    s_unpack(f, b, env, &ub);
    ctx.daz = ua.daz || ub.daz;
    sign = ua.sign != ub.sign;
    if (ua.cls == S_FINITE && ub.cls == S_FINITE)
        /* exact product: < 2^(2p) */
        return s_round_pack(f, sign, ua.exp + ub.exp,
                            (s_u128)ua.sig * ub.sig, false, rm, env, &ctx);
    if (ua.cls == S_NAN || ub.cls == S_NAN) {
        uint64_t ops[2] = {a, b};
        z = s_propagate_nan(f, ops, 2, env);
    } else if ((ua.cls == S_INF && ub.cls == S_ZERO)
               || (ua.cls == S_ZERO && ub.cls == S_INF)) {
        z = s_invalid(f, env); /* 0 * Inf */
    } else if (ua.cls == S_INF || ub.cls == S_INF) {
        z = s_pack_inf(f, sign);
    } else {
        z = s_pack_zero(f, sign);
    }
    s_event_special(f, z, env->flags & ~before, rm, env, &ctx);
    return z;
}

uint64_t
sf_mul(const sf_format *f, uint64_t a, uint64_t b, sf_round rm, sf_env *env)
{
    uint64_t z = s_fast_mul_any(f, a, b, rm, env);

    return z != S_FAST_NONE ? z : s_mul(f, a, b, rm, env);
}
