/* launch -- the launch rules: PyTorch 2.11's split-KV dispatch rule for
   the flash forward (set_params_splitkv and num_splits_heuristic of its
   vendored FlashAttention-2 flash_api.cpp), evaluated as it is there (the
   wave efficiencies in float, the 85 % test in double), and each kernel
   description's choice among the rules */
#include <config.h>

#include <math.h>

#include "launch.h"
#include "sdpa_dispatch_pt211_h200.h"

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

unsigned
ax_launch_splits(const fa_kernel *k, const ax_launch *l, const char **rule)
{
    const fa_kernel_tiles *t = k != NULL ? fa_kernel_tiles_for(k, l->d) : NULL;
    size_t heads = l->heads, nq = l->nq;

    /* fewer rows than the description's min_nq run the one it names */
    if (k != NULL && l->nq < k->min_nq && k->below_min_nq[0] != '\0'
        && fa_kernel_by_name(k->below_min_nq) != NULL)
        k = fa_kernel_by_name(k->below_min_nq);
    if (k != NULL && k->combine == FA_COMBINE_FLEX_DECODE) {
        *rule = "flex_decoding's programs (inductor: 2 floor(SMs / (B "
                "Hkv)))";
        return (unsigned)fa_flex_decode_splits(
            l->sms, l->batch * (l->kv_heads != 0 ? l->kv_heads : l->heads));
    }
    if (k != NULL && k->combine == FA_COMBINE_LEAN) {
        sdpa_case sc = sdpa_case_default();
        sc.batch = (int64_t)l->batch;
        sc.heads = (int64_t)l->heads;
        sc.kv_heads = (int64_t)(l->kv_heads != 0 ? l->kv_heads : l->heads);
        sc.enable_gqa = sc.kv_heads != sc.heads;
        sc.nq = (int64_t)l->nq;
        sc.nk = (int64_t)l->nk;
        sc.d = (int64_t)l->d;
        sc.dtype = l->f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
        *rule = l->nq == 1 ? "cuDNN's decode grid (PyTorch 2.11, H200)"
                           : "cuDNN's prefill kernel does not split";
        return l->nq == 1 ? sdpa_cudnn_decode_splits_pt211_h200(&sc) : 1;
    }
    if (t == NULL || t->br_split == 0 || t->bc_split == 0) {
        *rule = "the kernel does not split";
        return 1;
    }
    /* flash_api.cpp: one query row with grouped heads runs the group's
       query heads as rows of their KV head */
    if (nq == 1 && l->kv_heads != 0 && l->kv_heads < l->heads
        && l->heads % l->kv_heads == 0 && l->d % 8 == 0) {
        nq = l->heads / l->kv_heads;
        heads = l->kv_heads;
    }
    *rule = nq != l->nq ? "PyTorch 2.11's flash heuristic (grouped heads "
                          "as rows)"
                        : "PyTorch 2.11's flash heuristic";
    return pt211_num_splits(l->batch, heads, nq, l->nk, l->d,
                            l->sms != 0 ? l->sms : FA_H200_SMS);
}

bool
ax_launch_sms_modelled(const fa_kernel *k, const ax_launch *l)
{
    unsigned sms = l->sms != 0 ? l->sms : FA_H200_SMS;

    return sms == FA_H200_SMS || k == NULL || k->combine != FA_COMBINE_LEAN
           || l->nq != 1;
}
