/* sf_div -- quotient of two values of one format, rounded once */
#include "internal.h"

uint64_t
sf_div(const sf_format *f, uint64_t a, uint64_t b, sf_round rm, sf_env *env)
{
    s_unpacked ua, ub;
    s_opctx ctx = {SF_OP_DIV, 2, {f, f, NULL}, {a, b, 0}, false};
    uint64_t z;
    unsigned before = env->flags;
    bool sign;

    s_unpack(f, a, env, &ua);
    s_unpack(f, b, env, &ub);
    ctx.daz = ua.daz || ub.daz;
    sign = ua.sign != ub.sign;
    if (ua.cls == S_FINITE && ub.cls == S_FINITE) {
        /* Normalise both significands to [2^52, 2^53); then
           q = floor(sa * 2^63 / sb) lies in (2^62, 2^64) and the remainder
           gives the tail. */
        int na = s_clz64(ua.sig) - 11, nb = s_clz64(ub.sig) - 11;
        s_u128 num = (s_u128)(ua.sig << na) << 63;
        uint64_t den = ub.sig << nb;
        s_u128 quo = num / den;
        bool tail = num % den != 0;
        return s_round_pack(f, sign, ua.exp - na - ub.exp + nb - 63, quo,
                            tail, rm, env, &ctx);
    }
    if (ua.cls == S_NAN || ub.cls == S_NAN) {
        uint64_t ops[2] = {a, b};
        z = s_propagate_nan(f, ops, 2, env);
    } else if ((ua.cls == S_INF && ub.cls == S_INF)
               || (ua.cls == S_ZERO && ub.cls == S_ZERO)) {
        z = s_invalid(f, env); /* Inf/Inf, 0/0 */
    } else if (ua.cls == S_INF) {
        z = s_pack_inf(f, sign);
    } else if (ub.cls == S_ZERO) {
        env->flags |= SF_FLAG_DIVZERO; /* finite / 0 */
        z = s_pack_inf(f, sign);
    } else {
        z = s_pack_zero(f, sign); /* 0 / x, x / Inf */
    }
    s_event_special(f, z, env->flags & ~before, rm, env, &ctx);
    return z;
}
