/* sf_from_i32, sf_from_i64 -- conversion from signed integers */
#include "internal.h"

uint64_t
sf_from_i64(const sf_format *f, int64_t v, sf_round rm, sf_env *env)
{
    s_opctx ctx = {SF_OP_FROM_INT, 1, {NULL, NULL, NULL},
                   {(uint64_t)v, 0, 0}, false};
    /* |v| in unsigned arithmetic, INT64_MIN included */
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    if (mag == 0) {
        s_event_special(f, 0, 0, rm, env, &ctx);
        return 0;
    }
    return s_round_pack(f, v < 0, 0, mag, false, rm, env, &ctx);
}

uint64_t
sf_from_i32(const sf_format *f, int32_t v, sf_round rm, sf_env *env)
{
    return sf_from_i64(f, v, rm, env);
}
