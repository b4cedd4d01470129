/* sf_add -- sum of two values of one format, rounded once */
#include "s_fast.h"

uint64_t
s_add_sub(const sf_format *f, uint64_t a, uint64_t b, bool subtract,
          sf_round rm, sf_env *env)
{
    s_unpacked ua, ub;
    s_opctx ctx = {subtract ? SF_OP_SUB : SF_OP_ADD, 2, {f, f, NULL},
                   {a, b, 0}, false};
    uint64_t z;
    bool sign_b, sign;
    int32_t exp;
    s_u128 sig;
    bool tail;

    s_unpack(f, a, env, &ua);
    s_unpack(f, b, env, &ub);
    ctx.daz = ua.daz || ub.daz;
    sign_b = ub.sign != subtract;
    if (ua.cls == S_FINITE && ub.cls == S_FINITE) {
        if (s_add_exact(ua.sign, ua.sig, ua.exp, sign_b, ub.sig, ub.exp,
                        &sign, &exp, &sig, &tail))
            return s_round_pack(f, sign, exp, sig, tail, rm, env, &ctx);
        /* x + (-x) = +0, -0 when rounding toward negative */
        z = s_pack_zero(f, rm == SF_RDN);
    } else if (ua.cls == S_NAN || ub.cls == S_NAN) {
        uint64_t ops[2] = {a, b};
        unsigned before = env->flags;
        z = s_propagate_nan(f, ops, 2, env);
        s_event_special(f, z, env->flags & ~before, rm, env, &ctx);
        return z;
    } else if (ua.cls == S_INF) {
        if (ub.cls == S_INF && ua.sign != sign_b) {
            z = s_invalid(f, env); /* Inf - Inf */
            s_event_special(f, z, SF_FLAG_INVALID, rm, env, &ctx);
            return z;
        }
        z = s_pack_inf(f, ua.sign);
    } else if (ub.cls == S_INF) {
        z = s_pack_inf(f, sign_b);
    } else if (ua.cls == S_ZERO && ub.cls == S_ZERO) {
        /* (+0) + (+0) = +0, (-0) + (-0) = -0, else +0 (-0 in RDN) */
        z = s_pack_zero(f, ua.sign == sign_b ? ua.sign : rm == SF_RDN);
    } else if (ua.cls == S_ZERO) {
        return s_round_pack(f, sign_b, ub.exp, ub.sig, false, rm, env, &ctx);
    } else {
        return s_round_pack(f, ua.sign, ua.exp, ua.sig, false, rm, env,
                            &ctx);
    }
    s_event_special(f, z, 0, rm, env, &ctx);
    return z;
}

uint64_t
sf_add(const sf_format *f, uint64_t a, uint64_t b, sf_round rm, sf_env *env)
{
    uint64_t z = s_fast_add_any(f, a, b, false, rm, env);

    return z != S_FAST_NONE ? z : s_add_sub(f, a, b, false, rm, env);
}
