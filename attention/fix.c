/* fix -- the repeated-maximum fix of the online softmax (paper section 4,
   Algorithm 1, and the released code's STABLE branch) and the KV-block
   ranges of the FA2 kernel */
#include <config.h>

#include "attention/fa_local.h"

/* X rounded to the format the policy holds its scores in. */
static uint32_t
to_score(const fa_plan *pl, uint32_t x, sf_env *env)
{
    return fa_round(pl->k.score, x, env);
}

uint32_t
fa_fix_max(const fa_plan *pl, const uint32_t *s, size_t n, uint32_t r,
           sf_env *env)
{
    bool repeated = false;
    size_t count = 0;

    if (pl->fix == FA_FIX_NONE || fa_is_nan(r) || r == FA_F32_NEG_INF)
        return r;
    switch (pl->fix) {
    case FA_FIX_BETA:
    case FA_FIX_EPS: {
        /* the released code: S >= max - tol, the threshold rounded to the
           score format (for BF16 scores of |max| >= 1/2 it is max itself:
           an exact-equality test) */
        uint32_t thr = to_score(pl, fa_sub(r, pl->tol, env), env);
        for (size_t t = 0; t < n && count < 2; t++)
            if (fa_le(thr, s[t]))
                count++;
        repeated = count > 1;
        break;
    }
    case FA_FIX_BETA_V2: /* v2 Algorithm 1: S == r_m */
        for (size_t t = 0; t < n && count < 2; t++)
            if (fa_eq(s[t], r))
                count++;
        repeated = count > 1;
        break;
    default: /* always */
        repeated = true;
        break;
    }
    if (!repeated)
        return r;
    if (pl->fix == FA_FIX_EPS)
        return to_score(pl, fa_add(r, pl->eps, env), env);
    if (fa_lt(FA_F32_ZERO, r)) /* r > 0: beta r */
        return to_score(pl, fa_mul(r, pl->beta, env), env);
    if (fa_lt(r, FA_F32_ZERO)) /* r < 0: 0 */
        return FA_F32_ZERO;
    /* r = 0: covered by neither branch of the paper's rule */
    if (pl->zero_max == FA_ZERO_MAX_SHIFT)
        return to_score(pl, pl->eps_zero, env);
    return r;
}

size_t
fa_fwd_blocks(const fa_plan *pl, size_t mb, size_t br, size_t bc)
{
    long long num, n;
    size_t nblk = (pl->nk + bc - 1) / bc;

    if (!pl->causal || !pl->k.causal_skip)
        return nblk;
    /* n_block_max = ceil_div((m_block + 1) kBlockM + shift, kBlockN)
       (shift Nk - Nq bottom-right, 0 top-left), with C's truncating
       division as the kernel has it */
    num = (long long)((mb + 1) * br) + pl->causal_shift;
    n = (num + (long long)bc - 1) / (long long)bc;
    if (n <= 0)
        return 0;
    return (size_t)n < nblk ? (size_t)n : nblk;
}

size_t
fa_bwd_first_mblock(const fa_plan *pl, size_t nb)
{
    long long num, m;

    if (!pl->causal || !pl->k.causal_skip)
        return 0;
    /* m_block_min = max(0, (n_block kBlockN - shift) / kBlockM) */
    num = (long long)(nb * pl->bc_bwd) - pl->causal_shift;
    m = num / (long long)pl->br_bwd;
    return m < 0 ? 0 : (size_t)m;
}
