/* steps -- the rounded steps of the accumulation models: FMA, product,
   sum, storage rounding, with each model's NaN, zero and overflow rules */
#include "softfloat/mma/mma_local.h"
#include "softfloat/s_fma.h"

void
s_mma_enter(const sf_mma_model *m, sf_env *env, s_mma_saved *saved)
{
    saved->daz = env->daz;
    saved->ftz = env->ftz;
    saved->tininess_after = env->tininess_after;
    saved->saturate = env->saturate;
    saved->nan_rule = env->nan_rule;
    saved->default_nan = env->default_nan;
    env->daz = m->daz;
    env->ftz = m->ftz;
    env->tininess_after = m->tininess_after;
    env->saturate = m->overflow == SF_MMA_OVF_SAT;
    env->nan_rule = m->nan == SF_MMA_NAN_FIRST ? SF_NAN_FIRST : SF_NAN_DEFAULT;
    env->default_nan = m->default_nan;
}

void
s_mma_leave(sf_env *env, const s_mma_saved *saved)
{
    env->daz = saved->daz;
    env->ftz = saved->ftz;
    env->tininess_after = saved->tininess_after;
    env->saturate = saved->saturate;
    env->nan_rule = saved->nan_rule;
    env->default_nan = saved->default_nan;
}

/*----------------------------------------------------------------------------
 * Rounding with the model's overflow and zero rules.  s_round_pack gives
 * the largest finite value for an overflow under RZ, RDN/RUP toward zero
 * and round to odd; SF_MMA_OVF_INF turns that into Inf.  Under
 * SF_MMA_ZERO_POS a result that rounds to zero is +0.  A forwarding sink
 * corrects the event so that it reports the value actually returned.
 *--------------------------------------------------------------------------*/
typedef struct
{
    const sf_event_sink *next;
    const sf_format *f;
    bool ovf_inf, zero_pos;
} s_fwd;

static void
forward_fix(void *user, const sf_event *ev)
{
    const s_fwd *x = user;
    sf_event e = *ev;

    if (x->ovf_inf && e.overflow && !e.error_infinite) {
        e.result = s_pack_inf(x->f, e.exact.sign);
        e.error_infinite = true;
        e.dir = 1;
        s_dyadic_set(&e.error, e.exact.sign, 0, 0, false);
    }
    if (x->zero_pos && (e.result & ~x->f->sign_mask) == 0)
        e.result = 0;
    x->next->fn(x->next->user, &e);
}

uint64_t
s_mma_round(const sf_mma_model *m, const sf_format *f, bool sign, int32_t exp,
            s_u128 sig, bool tail, sf_round rm, sf_env *env,
            const s_opctx *ctx)
{
    const sf_event_sink *sink = env->events;
    bool ovf_inf = m->overflow == SF_MMA_OVF_INF && rm != SF_RNE
                   && rm != SF_RNA && rm != SF_SR;
    bool zero_pos = m->zero == SF_MMA_ZERO_POS && sign;
    unsigned before;
    uint64_t z;
    s_fwd fwd;
    sf_event_sink wrap;

    if (!ovf_inf && !zero_pos)
        return s_round_pack(f, sign, exp, sig, tail, rm, env, ctx);
    before = env->flags;
    env->flags = 0;
    if (sink != NULL) {
        fwd.next = sink;
        fwd.f = f;
        fwd.ovf_inf = ovf_inf;
        fwd.zero_pos = zero_pos;
        wrap.fn = forward_fix;
        wrap.user = &fwd;
        env->events = &wrap;
    }
    z = s_round_pack(f, sign, exp, sig, tail, rm, env, ctx);
    env->events = sink;
    if (ovf_inf && (env->flags & SF_FLAG_OVERFLOW) && !sf_is_inf(f, z))
        z = s_pack_inf(f, sign);
    if (zero_pos && (z & ~f->sign_mask) == 0)
        z = 0; /* a result rounded to zero is +0 */
    env->flags |= before;
    return z;
}

/*----------------------------------------------------------------------------
 * Special values.
 *--------------------------------------------------------------------------*/
/* The NaN result when an operand is a NaN: FIRST (format FF, bits FV) is
   the first NaN operand in the model's order; ANY_SNAN whether any
   operand is signalling. */
static uint64_t
nan_result(const sf_mma_model *m, const sf_format *ff, uint64_t fv,
           bool any_snan, sf_env *env)
{
    if (any_snan)
        env->flags |= SF_FLAG_INVALID;
    if (m->nan == SF_MMA_NAN_FIRST)
        return s_convert_nan(m->acc, ff, fv, env);
    return sf_default_nan_bits(m->acc, env);
}

uint64_t
s_mma_nan_result(const sf_mma_model *m, const sf_format *ff, uint64_t fv,
                 bool any_snan, sf_env *env)
{
    return nan_result(m, ff, fv, any_snan, env);
}

/* Sign of an exact zero sum: ALL_ZERO when every term was a zero, NEG_ALL
   when all those zeros were negative, MIXED when their signs differed. */
bool
s_mma_zero_sign(const sf_mma_model *m, sf_round rm, bool all_zero,
                bool neg_all)
{
    if (m->zero == SF_MMA_ZERO_POS)
        return false;
    /* every term a zero of one sign: that sign; mixed zeros or an exact
       cancellation: +0, -0 under SF_RDN */
    if (all_zero)
        return neg_all;
    return rm == SF_RDN;
}

/*----------------------------------------------------------------------------
 * One FMA step: acc' = round(a * b + acc), the core of sf_fma with the
 * model's rounding, NaN and zero rules.
 *--------------------------------------------------------------------------*/
static uint64_t
fma_round(const void *user, const sf_format *f, bool sign, int32_t exp,
          s_u128 sig, bool tail, sf_round rm, sf_env *env, const s_opctx *ctx)
{
    return s_mma_round(user, f, sign, exp, sig, tail, rm, env, ctx);
}

/* the first NaN in the order a, b, acc (of format F) */
static uint64_t
fma_nan(const void *user, const sf_format *f, const uint64_t *ops,
        const s_unpacked *u, sf_env *env)
{
    uint64_t first = u[0].cls == S_NAN   ? ops[0]
                     : u[1].cls == S_NAN ? ops[1]
                                         : ops[2];

    return nan_result(user, f, first, u[0].snan || u[1].snan || u[2].snan,
                      env);
}

static bool
fma_zero_sign(const void *user, sf_round rm, bool all_zero, bool neg_all)
{
    return s_mma_zero_sign(user, rm, all_zero, neg_all);
}

uint64_t
s_mma_fma(const sf_mma_model *m, const sf_format *fa, uint64_t a,
          const sf_format *fb, uint64_t b, uint64_t c, sf_env *env)
{
    const s_fma_policy policy = {.op = SF_OP_MMA_FMA,
                                 .fmt = {fa, fb, m->acc},
                                 .rm = m->rm,
                                 .user = m,
                                 .round = fma_round,
                                 .nan = fma_nan,
                                 .zero_sign = fma_zero_sign};

    return s_fma_core(&policy, a, b, c, env);
}

/*----------------------------------------------------------------------------
 * A product rounded to the accumulator format.
 *--------------------------------------------------------------------------*/
uint64_t
s_mma_mul(const sf_mma_model *m, const sf_format *fa, uint64_t a,
          const sf_format *fb, uint64_t b, sf_env *env)
{
    const sf_format *fc = m->acc;
    s_unpacked ua, ub;
    s_opctx ctx = {SF_OP_MMA_MUL, 2, {fa, fb, NULL}, {a, b, 0}, false};
    unsigned before = env->flags;
    uint64_t z;
    bool sign_p;

    s_unpack(fa, a, env, &ua);
    s_unpack(fb, b, env, &ub);
    ctx.daz = ua.daz || ub.daz;
    sign_p = ua.sign != ub.sign;
    if (ua.cls == S_FINITE && ub.cls == S_FINITE)
        return s_mma_round(m, fc, sign_p, ua.exp + ub.exp,
                           (s_u128)ua.sig * ub.sig, false, m->rm, env, &ctx);
    if (ua.cls == S_NAN || ub.cls == S_NAN)
        z = nan_result(m, ua.cls == S_NAN ? fa : fb, ua.cls == S_NAN ? a : b,
                       ua.snan || ub.snan, env);
    else if ((ua.cls == S_INF && ub.cls == S_ZERO)
             || (ua.cls == S_ZERO && ub.cls == S_INF))
        z = s_invalid(fc, env);
    else if (ua.cls == S_INF || ub.cls == S_INF)
        z = s_pack_inf(fc, sign_p);
    else
        z = s_pack_zero(fc, sign_p);
    s_event_special(fc, z, env->flags & ~before, m->rm, env, &ctx);
    return z;
}

/*----------------------------------------------------------------------------
 * A sum in the accumulator format: round(x + y).
 *--------------------------------------------------------------------------*/
uint64_t
s_mma_add(const sf_mma_model *m, uint64_t x, uint64_t y, sf_env *env)
{
    const sf_format *f = m->acc;
    s_unpacked ux, uy;
    s_opctx ctx = {SF_OP_MMA_ADD, 2, {f, f, NULL}, {x, y, 0}, false};
    unsigned before = env->flags;
    uint64_t z;

    s_unpack(f, x, env, &ux);
    s_unpack(f, y, env, &uy);
    ctx.daz = ux.daz || uy.daz;
    if (ux.cls == S_FINITE && uy.cls == S_FINITE) {
        bool sign, tail;
        int32_t exp;
        s_u128 sig;
        if (s_add_exact(ux.sign, ux.sig, ux.exp, uy.sign, uy.sig, uy.exp,
                        &sign, &exp, &sig, &tail))
            return s_mma_round(m, f, sign, exp, sig, tail, m->rm, env, &ctx);
        z = s_pack_zero(f, s_mma_zero_sign(m, m->rm, false, false));
    } else if (ux.cls == S_FINITE && uy.cls == S_ZERO) {
        return s_mma_round(m, f, ux.sign, ux.exp, ux.sig, false, m->rm, env,
                           &ctx);
    } else if (ux.cls == S_ZERO && uy.cls == S_FINITE) {
        return s_mma_round(m, f, uy.sign, uy.exp, uy.sig, false, m->rm, env,
                           &ctx);
    } else if (ux.cls == S_NAN || uy.cls == S_NAN) {
        z = nan_result(m, f, ux.cls == S_NAN ? x : y, ux.snan || uy.snan, env);
    } else if (ux.cls == S_INF && uy.cls == S_INF && ux.sign != uy.sign) {
        z = s_invalid(f, env);
    } else if (ux.cls == S_INF || uy.cls == S_INF) {
        z = s_pack_inf(f, ux.cls == S_INF ? ux.sign : uy.sign);
    } else {
        bool same = ux.sign == uy.sign;
        z = s_pack_zero(f, s_mma_zero_sign(m, m->rm, same, same && ux.sign));
    }
    s_event_special(f, z, env->flags & ~before, m->rm, env, &ctx);
    return z;
}

/*----------------------------------------------------------------------------
 * The accumulator rounded to its storage format and widened back (exact).
 *--------------------------------------------------------------------------*/
uint64_t
s_mma_store(const sf_mma_model *m, uint64_t acc, sf_env *env)
{
    s_opctx ctx = {
        SF_OP_MMA_STORE, 1, {m->acc, NULL, NULL}, {acc, 0, 0}, false};
    sf_env plain = SF_ENV_IEEE;
    uint64_t s;

    if (m->store == NULL)
        return acc;
    s = s_convert(m->store, m->acc, acc, m->store_rm, env, &ctx);
    /* widening is exact; a NaN keeps its (quiet) payload */
    return sf_convert(m->acc, m->store, s, SF_RNE, &plain);
}
