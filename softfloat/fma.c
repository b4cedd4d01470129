/* sf_fma -- a*b + c with a single rounding */
#include "internal.h"

uint64_t
sf_fma(const sf_format *f, uint64_t a, uint64_t b, uint64_t c, sf_round rm,
       sf_env *env)
{
    s_unpacked ua, ub, uc;
    s_opctx ctx = {SF_OP_FMA, 3, {f, f, f}, {a, b, c}, false};
    uint64_t z;
    unsigned before = env->flags;
    bool sign_p, inf_times_zero;

    s_unpack(f, a, env, &ua);
    s_unpack(f, b, env, &ub);
    s_unpack(f, c, env, &uc);
    ctx.daz = ua.daz || ub.daz || uc.daz;
    sign_p = ua.sign != ub.sign;
    inf_times_zero = (ua.cls == S_INF && ub.cls == S_ZERO)
                     || (ua.cls == S_ZERO && ub.cls == S_INF);
    if (ua.cls == S_FINITE && ub.cls == S_FINITE) {
        s_u128 p = (s_u128)ua.sig * ub.sig;
        int32_t ep = ua.exp + ub.exp;
        if (uc.cls == S_FINITE) {
            bool sign, tail;
            int32_t exp;
            s_u128 sig;
            if (s_add_exact(sign_p, p, ep, uc.sign, uc.sig, uc.exp, &sign,
                            &exp, &sig, &tail))
                return s_round_pack(f, sign, exp, sig, tail, rm, env, &ctx);
            z = s_pack_zero(f, rm == SF_RDN); /* exact cancellation */
            s_event_special(f, z, 0, rm, env, &ctx);
            return z;
        }
        if (uc.cls == S_ZERO)
            return s_round_pack(f, sign_p, ep, p, false, rm, env, &ctx);
    }
    if (ua.cls == S_NAN || ub.cls == S_NAN || uc.cls == S_NAN) {
        uint64_t ops[3] = {a, b, c};
        z = s_propagate_nan(f, ops, 3, env);
        if (inf_times_zero) /* 0 * Inf + qNaN is invalid too (as x86) */
            env->flags |= SF_FLAG_INVALID;
    } else if (inf_times_zero) {
        z = s_invalid(f, env);
    } else if (ua.cls == S_INF || ub.cls == S_INF) {
        if (uc.cls == S_INF && uc.sign != sign_p)
            z = s_invalid(f, env); /* Inf - Inf */
        else
            z = s_pack_inf(f, sign_p);
    } else if (uc.cls == S_INF) {
        z = s_pack_inf(f, uc.sign);
    } else if (uc.cls == S_ZERO) {
        /* zero product plus zero */
        z = s_pack_zero(f, sign_p == uc.sign ? sign_p : rm == SF_RDN);
    } else {
        /* zero product plus finite c: c, through the rounding for FTZ */
        return s_round_pack(f, uc.sign, uc.exp, uc.sig, false, rm, env,
                            &ctx);
    }
    s_event_special(f, z, env->flags & ~before, rm, env, &ctx);
    return z;
}
