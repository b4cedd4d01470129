/* splits_pytorch211 -- PyTorch 2.11's split-KV dispatch rule for the
   flash forward (set_params_splitkv and num_splits_heuristic of its
   vendored FlashAttention-2 flash_api.cpp), evaluated as it is there: the
   wave efficiencies in float, the 85 % test in double */
#include <config.h>

#include <math.h>

#include "experiments/splits_pytorch211.h"

static long
ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

/* num_splits_heuristic: 1 when the blocks nearly fill the SMs; else the
   smallest eligible split count whose wave efficiency reaches 85 % of
   the best (a count is eligible when it changes the blocks per split). */
static unsigned
heuristic(long bhm, long sms, long n_blocks, long max_splits)
{
    float eff[129], best = 0.0f;

    if ((float)bhm >= 0.8f * (float)sms)
        return 1;
    if (max_splits > sms)
        max_splits = sms;
    if (max_splits > n_blocks)
        max_splits = n_blocks;
    if (max_splits > 128)
        max_splits = 128;
    for (long s = 1; s <= max_splits; s++) {
        int ok = s == 1 || ceil_div(n_blocks, s) != ceil_div(n_blocks, s - 1);
        if (!ok) {
            eff[s] = 0.0f;
            continue;
        }
        {
            float waves = (float)(bhm * s) / (float)sms;
            float e = waves / ceilf(waves);
            if (e > best)
                best = e;
            eff[s] = e;
        }
    }
    for (long s = 1; s <= max_splits; s++) {
        int ok = s == 1 || ceil_div(n_blocks, s) != ceil_div(n_blocks, s - 1);
        if (ok && (double)eff[s] >= 0.85 * (double)best)
            return (unsigned)s;
    }
    return 1;
}

unsigned
pt211_num_splits(size_t b, size_t h, size_t nq, size_t nk, size_t d,
                 unsigned sms)
{
    long block_n = d <= 64 ? 256 : d <= 128 ? 128 : 64;
    long n_blocks = ceil_div((long)nk, block_n);
    long m_blocks = ceil_div((long)nq, 64);

    return heuristic((long)(b * h) * m_blocks, 2L * (long)sms, n_blocks, 128);
}
