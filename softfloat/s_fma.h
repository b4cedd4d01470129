/* s_fma.h -- the one fused multiply-add core, a * b + c rounded once,
   shared by sf_fma and the FMA step of the accumulation models */
#ifndef BF16EMU_SOFTFLOAT_S_FMA_H
#define BF16EMU_SOFTFLOAT_S_FMA_H

#include "internal.h"

/*----------------------------------------------------------------------------
 * What differs between the users of the core: the operand formats, the
 * event op code, the rounding mode and three hooks, which get USER (the
 * model, say) and never the policy itself.  The result has the format of
 * c (fmt[2]).  A caller builds its policy as a local constant and the
 * core is inlined into it, so the hooks become direct calls.
 *--------------------------------------------------------------------------*/
typedef struct
{
    int op;                  /* op code of the rounding events */
    const sf_format *fmt[3]; /* formats of a, b and c (= the result's) */
    sf_round rm;
    const void *user;
    /* Rounds (-1)^sign * (sig + tail) * 2^exp, sig != 0, to F with mode
       RM (the contract of s_round_pack). */
    uint64_t (*round)(const void *user, const sf_format *f, bool sign,
                      int32_t exp, s_u128 sig, bool tail, sf_round rm,
                      sf_env *env, const s_opctx *ctx);
    /* The result when an operand is a NaN, with the invalid flag of a
       signalling one: OPS are a, b, c, U the same unpacked, F the format
       of the first NaN among them. */
    uint64_t (*nan)(const void *user, const sf_format *f, const uint64_t *ops,
                    const s_unpacked *u, sf_env *env);
    /* The sign of an exact zero sum under RM: ALL_ZERO when the product
       and c are both zeros, NEG_ALL when both are negative zeros. */
    bool (*zero_sign)(const void *user, sf_round rm, bool all_zero,
                      bool neg_all);
} s_fma_policy;

/* a * b + c under policy P.  Finite operands: the exact sum is rounded
   once through P->round; an exact zero takes P->zero_sign.  A zero product
   plus a finite c is c through P->round (so that FTZ applies).  NaNs:
   P->nan, plus invalid when the product is Inf * 0.  Inf * 0 and Inf - Inf
   are invalid (the default NaN).  Every result that needs no rounding is
   reported as a special event. */
static inline uint64_t
s_fma_core(const s_fma_policy *p, uint64_t a, uint64_t b, uint64_t c,
           sf_env *env)
{
    const sf_format *fc = p->fmt[2];
    s_unpacked u[3];
    s_opctx ctx = {p->op, 3, {p->fmt[0], p->fmt[1], fc}, {a, b, c}, false};
    unsigned before = env->flags;
    uint64_t z;
    bool sign_p, inf_zero;

    s_unpack(p->fmt[0], a, env, &u[0]);
    s_unpack(p->fmt[1], b, env, &u[1]);
    s_unpack(fc, c, env, &u[2]);
    ctx.daz = u[0].daz || u[1].daz || u[2].daz;
    sign_p = u[0].sign != u[1].sign;
    inf_zero = (u[0].cls == S_INF && u[1].cls == S_ZERO)
               || (u[0].cls == S_ZERO && u[1].cls == S_INF);
    if (u[0].cls == S_FINITE && u[1].cls == S_FINITE) {
        s_u128 prod = (s_u128)u[0].sig * u[1].sig;
        int32_t ep = u[0].exp + u[1].exp;
        if (u[2].cls == S_FINITE) {
            bool sign, tail;
            int32_t exp;
            s_u128 sig;
            if (s_add_exact(sign_p, prod, ep, u[2].sign, u[2].sig, u[2].exp,
                            &sign, &exp, &sig, &tail))
                return p->round(p->user, fc, sign, exp, sig, tail, p->rm, env,
                                &ctx);
            /* exact cancellation */
            z = s_pack_zero(fc, p->zero_sign(p->user, p->rm, false, false));
            s_event_special(fc, z, 0, p->rm, env, &ctx);
            return z;
        }
        if (u[2].cls == S_ZERO)
            return p->round(p->user, fc, sign_p, ep, prod, false, p->rm, env,
                            &ctx);
    }
    if (u[0].cls == S_NAN || u[1].cls == S_NAN || u[2].cls == S_NAN) {
        uint64_t ops[3] = {a, b, c};
        unsigned i = u[0].cls == S_NAN ? 0 : u[1].cls == S_NAN ? 1 : 2;
        z = p->nan(p->user, p->fmt[i], ops, u, env);
        if (inf_zero) /* 0 * Inf + qNaN is invalid too (as x86) */
            env->flags |= SF_FLAG_INVALID;
    } else if (inf_zero) {
        z = s_invalid(fc, env);
    } else if (u[0].cls == S_INF || u[1].cls == S_INF) {
        if (u[2].cls == S_INF && u[2].sign != sign_p)
            z = s_invalid(fc, env); /* Inf - Inf */
        else
            z = s_pack_inf(fc, sign_p);
    } else if (u[2].cls == S_INF) {
        z = s_pack_inf(fc, u[2].sign);
    } else if (u[2].cls == S_ZERO) {
        /* zero product plus zero */
        bool same = sign_p == u[2].sign;
        z = s_pack_zero(fc,
                        p->zero_sign(p->user, p->rm, same, same && sign_p));
    } else {
        /* zero product plus finite c: c, through the rounding for FTZ */
        return p->round(p->user, fc, u[2].sign, u[2].exp, u[2].sig, false,
                        p->rm, env, &ctx);
    }
    s_event_special(fc, z, env->flags & ~before, p->rm, env, &ctx);
    return z;
}

#endif /* BF16EMU_SOFTFLOAT_S_FMA_H */
