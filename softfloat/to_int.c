/* sf_to_i32, sf_to_i64 -- conversion to signed integers */
#include "internal.h"

/* Round A to an integer in [lo, hi] (lo = -2^(bits-1)); NaN, Inf and out
   of range give invalid and lo. */
static int64_t
to_int(const sf_format *f, uint64_t a, int bits, sf_round rm, sf_env *env)
{
    s_unpacked u;
    s_opctx ctx = {SF_OP_TO_INT, 1, {f, NULL, NULL}, {a, 0, 0}, false};
    uint64_t limit = (uint64_t)1 << (bits - 1); /* |lo| */
    int64_t lo = bits == 64 ? INT64_MIN : -(int64_t)limit;
    s_rounded r = {0, 0, 0, 0, 0, 0, false};
    uint64_t rnd;
    unsigned flags;
    int64_t z;

    s_unpack(f, a, env, &u);
    ctx.daz = u.daz;
    if (u.cls == S_ZERO) {
        s_event_special(NULL, 0, 0, rm, env, &ctx);
        return 0;
    }
    if (u.cls != S_FINITE
        || !s_round_to_integer(u.sign, u.exp, u.sig, rm, env, &r, &rnd)
        || r.kept > (u.sign ? limit : limit - 1)) {
        env->flags |= SF_FLAG_INVALID;
        if (u.cls == S_FINITE)
            s_event_integer(NULL, u.sign, u.exp, u.sig, &r, rnd,
                            (uint64_t)lo, SF_FLAG_INVALID, rm, env, &ctx);
        else
            s_event_special(NULL, (uint64_t)lo, SF_FLAG_INVALID, rm, env,
                            &ctx);
        return lo;
    }
    /* r.kept <= 2^63: negate in unsigned arithmetic */
    z = u.sign ? (int64_t)(0 - r.kept) : (int64_t)r.kept;
    flags = r.dir != 0 ? SF_FLAG_INEXACT : 0;
    env->flags |= flags;
    s_event_integer(NULL, u.sign, u.exp, u.sig, &r, rnd, (uint64_t)z, flags,
                    rm, env, &ctx);
    return z;
}

int32_t
sf_to_i32(const sf_format *f, uint64_t a, sf_round rm, sf_env *env)
{
    return (int32_t)to_int(f, a, 32, rm, env);
}

int64_t
sf_to_i64(const sf_format *f, uint64_t a, sf_round rm, sf_env *env)
{
    return to_int(f, a, 64, rm, env);
}
