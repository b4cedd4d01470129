/* sf_fma -- a*b + c with a single rounding */
#include "s_fast.h"
#include "s_fma.h"

/* The IEEE policy of sf_fma: one format, s_round_pack, ENV's NaN rule,
   and an exact zero sum is -0 when both terms are -0, else only under
   SF_RDN. */
static uint64_t
fma_round(const void *user, const sf_format *f, bool sign, int32_t exp,
          s_u128 sig, bool tail, sf_round rm, sf_env *env, const s_opctx *ctx)
{
    (void)user;
    return s_round_pack(f, sign, exp, sig, tail, rm, env, ctx);
}

static uint64_t
fma_nan(const void *user, const sf_format *f, const uint64_t *ops,
        const s_unpacked *u, sf_env *env)
{
    (void)user;
    (void)u;
    return s_propagate_nan(f, ops, 3, env);
}

static bool
fma_zero_sign(const void *user, sf_round rm, bool all_zero, bool neg_all)
{
    (void)user;
    return all_zero ? neg_all : rm == SF_RDN;
}

uint64_t
s_fma(const sf_format *f, uint64_t a, uint64_t b, uint64_t c, sf_round rm,
      sf_env *env)
{
    const s_fma_policy policy = {.op = SF_OP_FMA,
                                 .fmt = {f, f, f},
                                 .rm = rm,
                                 .user = NULL,
                                 .round = fma_round,
                                 .nan = fma_nan,
                                 .zero_sign = fma_zero_sign};

    return s_fma_core(&policy, a, b, c, env);
}

uint64_t
sf_fma(const sf_format *f, uint64_t a, uint64_t b, uint64_t c, sf_round rm,
       sf_env *env)
{
    uint64_t z = s_fast_fma_any(f, a, b, c, rm, env);

    return z != S_FAST_NONE ? z : s_fma(f, a, b, c, rm, env);
}
