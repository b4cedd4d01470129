/* sf_sqrt -- square root, rounded once */
#include "internal.h"

/* floor(sqrt(n)) for n < 2^64, bit by bit. */
static uint64_t
isqrt64(uint64_t n, bool *rem)
{
    uint64_t root = 0, bit = (uint64_t)1 << 62;

    while (bit > n)
        bit >>= 2;
    while (bit != 0) {
        if (n >= root + bit) {
            n -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    *rem = n != 0;
    return root;
}

uint64_t
sf_sqrt(const sf_format *f, uint64_t a, sf_round rm, sf_env *env)
{
    s_unpacked ua;
    s_opctx ctx = {SF_OP_SQRT, 1, {f, NULL, NULL}, {a, 0, 0}, false};
    uint64_t z;
    unsigned before = env->flags;

    s_unpack(f, a, env, &ua);
    ctx.daz = ua.daz;
    if (ua.cls == S_FINITE && !ua.sign) {
        /* sig normalised to [2^60, 2^62) with an even exponent; the root
           of sig * 2^exp is isqrt(sig) * 2^(exp/2), isqrt in [2^30, 2^31) */
        int n = s_clz64(ua.sig) - 2;
        uint64_t sig = ua.sig << n;
        int32_t exp = ua.exp - n;
        bool rem;
        uint64_t root;
        if (exp & 1) {
            sig >>= 1;
            exp += 1;
        }
        root = isqrt64(sig, &rem);
        if (rem) { /* make room for the tail: 2^(fb+3) <= root */
            return s_round_pack(f, false, exp / 2 - 16,
                                (s_u128)root << 16, true, rm, env, &ctx);
        }
        return s_round_pack(f, false, exp / 2, root, false, rm, env, &ctx);
    }
    if (ua.cls == S_NAN) {
        z = s_propagate_nan(f, &a, 1, env);
    } else if (ua.sign && ua.cls != S_ZERO) {
        z = s_invalid(f, env); /* sqrt(x < 0) */
    } else {
        z = a; /* +-0, +Inf */
        if (ua.daz)
            z = s_pack_zero(f, ua.sign);
    }
    s_event_special(f, z, env->flags & ~before, rm, env, &ctx);
    return z;
}
