/* kernels -- the named kernel descriptions (each with its evidence), the
   names of the enumerated fields, the description's check and its tiles */
#include <config.h>

#include <string.h>

#include "attention/fa_local.h"
#include "attention/kernel.h"
#include "softfloat/mma.h"

/*----------------------------------------------------------------------------
 * The named descriptions.
 *--------------------------------------------------------------------------*/
static const fa_kernel kernels[] = {
    /* fa2: FlashAttention-2 as PyTorch 2.11's flash backend runs it on an
       H200 (sm90, BF16, UNFUSE_FMA, no dropout, no fast
       math), flash_fwd_kernel.h,
       softmax.h, flash_bwd_kernel.h.  The kernel instance per head
       dimension: PyTorch's head_size_rounded, d rounded up to 32 up to
       128 and to 64 above, so the kernels run are 32, 64, 96, 128, 192
       and 256 (the H200 dumps name Flash_fwd_kernel_traits<192, ...> and
       Flash_bwd_kernel_traits<192, ...> for d = 160); each row below is
       one instance (d_max = kHeadDim).  Forward tiles:
       flash_fwd_launch_template.h, the non-sm8x branches without dropout,
       with the H200's shared memory (227 KiB per block, 228 KiB per SM:
       d = 256 64 x 64; the H200 dumps at d = 192 and 224 name
       Flash_fwd_kernel_traits<192, 128, 64, 8> and <256, 64, 64, 4>, and
       a 128-key forward tile in the 192 row changes O); split-KV tiles
       run_mha_fwd_splitkv_dispatch (kBlockM 64, kBlockN 256 / 128 / 64).
       Backward tiles: flash_bwd_launch_template.h with 227 KiB per
       block, no dropout: d = 32, 64 128 x 128; 96, 128 64 x 128; 192,
       256 64 x 64.
       Measured (doc/attention.md): O bit for bit against the flash kernel on
       every non-split and decode dump in tests/data/gpu and
       tests/data/gpu/sdpa_ext (d = 16 to 256, BF16 and FP16); split-KV too,
       its combine through CUDA's accurate expf and logf (combine_exp
       "cuda-expf", combine_log "cuda-logf"); LSE bit for bit on every
       dump with log "lg2" (CUDA's __logf, the lg2-sm90 model).  P~ and O are the
       kernel's Element type, the inputs' format (cvt.rn.bf16x2 or
       cvt.rn.f16x2; FP16 MMA inputs with FP32 accumulation in the sm90 model).
       dQ, dK, dV bit for bit (from the dump's O and LSE) on every
       deterministic backward dump, BF16 and FP16, d = 32 to 256. */
    {
        .name = "fa2",
        .d_round = 32,
        .n_tiles = 6,
        .tiles = {{32, 128, 128, 128, 128, 64, 256},
                  {64, 128, 128, 128, 128, 64, 256},
                  {96, 128, 64, 64, 128, 64, 128},
                  {128, 128, 64, 64, 128, 64, 128},
                  {192, 128, 64, 64, 64, 64, 64},
                  {256, 64, 64, 64, 64, 64, 64}},
        .kv_reverse = true,
        .causal_skip = true,
        FA_MMA_PRESET("sm90"),
        .score_dot = FA_FMT_F32,
        .score_scaled = false,
        .score = FA_FMT_F32,
        .mask = FA_MASK_NEG_INF,
        .m_init = FA_MASK_NEG_INF,
        .visit = FA_VISIT_BLOCK,
        .fix_all_keys = false,
        .first = FA_FIRST_INIT,
        .exp_base2 = true,
        .exp_arg = FA_ARG_SCALE_SUB,
        .alpha_arg = FA_ALPHA_SUB_SCALE,
        .alpha = FA_FMT_F32,
        .p = FA_FMT_IN,
        .rowsum_fp32_p = true,
        .rowsum = FA_ROWSUM_QUAD,
        .rowsum_fma = true,
        .rowsum_clamp = false,
        .l = FA_FMT_F32,
        .acc_update = FA_ACC_CHAIN,
        .acc = FA_FMT_F32,
        .normalize = FA_NORM_RECIPROCAL,
        .o = FA_FMT_IN,
        .lse = FA_LSE_FMA_SCALE,
        .lse_fmt = FA_FMT_F32,
        .log = FA_KLOG_LG2,
        .empty_lse_pos = true,
        .splits = 1,
        .combine = FA_COMBINE_FA2,
        .combine_exp = FA_CEXP_EXPF,
        .combine_log = FA_KLOG_CUDA,
        .bwd = FA_BWD_FA2,
        .bwd_reverse_q = true,
        FA_BWD_PRESET_FA2,
        .dq_buffers = FA_DQB_SMS,
        .exp_model = FA_KEXP_EX2_SM90,
        .gqa_dkv = FA_GQA_IN_SUM,
    },
    /* paper-eq4: the paper's abstraction (Algorithm 1, Eq. 4): every dot
       product one FP32 chain, BF16 where the paper writes lp (S, S - m
       rounded once, P~, O~ after each block, O); untiled forward; the
       backward is the fp32 backward (paper-notes section 1). */
    {
        .name = "paper-eq4",
        .d_round = 1,
        .n_tiles = 1,
        .tiles = {{4096, 0, 0, 64, 0, 0, 0}},
        .kv_reverse = false,
        .causal_skip = false,
        FA_MMA_PRESET("fma-chain"),
        .score_dot = FA_FMT_F32,
        .score_scaled = true,
        .score = FA_FMT_BF16,
        .mask = FA_MASK_NEG_INF,
        .m_init = FA_MASK_NEG_INF,
        .visit = FA_VISIT_VISIBLE,
        .fix_all_keys = false,
        .first = FA_FIRST_INIT,
        .exp_base2 = false,
        .exp_arg = FA_ARG_SUB_ONCE,
        .alpha_arg = FA_ALPHA_SUB,
        .alpha = FA_FMT_F32,
        .p = FA_FMT_BF16,
        .rowsum_fp32_p = false,
        .rowsum = FA_ROWSUM_SEQUENTIAL,
        .rowsum_fma = false,
        .rowsum_clamp = false,
        .l = FA_FMT_F32,
        .acc_update = FA_ACC_CHAIN,
        .acc = FA_FMT_BF16,
        .normalize = FA_NORM_DIVIDE,
        .o = FA_FMT_BF16,
        .lse = FA_LSE_ADD,
        .lse_fmt = FA_FMT_F32,
        .log = FA_KLOG_CR,
        .empty_lse_pos = false,
        .splits = 1,
        .combine = FA_COMBINE_FA2,
        .combine_exp = FA_CEXP_CR,
        .combine_log = FA_KLOG_CR,
        .bwd = FA_BWD_CHAIN,
        .bwd_reverse_q = false,
        FA_BWD_PRESET_CHAIN,
        .exp_model = FA_KEXP_CR,
    },
    /* repo: the released PyTorch re-implementation (paper-notes section
       1.4), one rounding per PyTorch op on BF16 tensors: buckets of
       512 x 512, the mask fill -finfo(bf16).max, m, l and oc in BF16,
       oc.mul_().add_(), the clamp of the block sum at 1e-10, LSE =
       log(l) + m in BF16. */
    {
        .name = "repo",
        .d_round = 1,
        .n_tiles = 1,
        .tiles = {{4096, 512, 512, 0, 0, 0, 0}},
        .kv_reverse = false,
        .causal_skip = false,
        FA_MMA_PRESET("fma-chain"),
        .score_dot = FA_FMT_BF16,
        .score_scaled = true,
        .score = FA_FMT_BF16,
        .mask = FA_MASK_BF16_LOWEST,
        .m_init = FA_MASK_BF16_LOWEST,
        .visit = FA_VISIT_BLOCK,
        .fix_all_keys = true,
        .first = FA_FIRST_UPDATE,
        .exp_base2 = false,
        .exp_arg = FA_ARG_SUB_ROUND,
        .alpha_arg = FA_ALPHA_SUB_ROUND,
        .alpha = FA_FMT_BF16,
        .p = FA_FMT_BF16,
        .rowsum_fp32_p = false,
        .rowsum = FA_ROWSUM_SEQUENTIAL,
        .rowsum_fma = false,
        .rowsum_clamp = true,
        .l = FA_FMT_BF16,
        .acc_update = FA_ACC_SEPARATE,
        .acc = FA_FMT_BF16,
        .normalize = FA_NORM_DIVIDE,
        .o = FA_FMT_BF16,
        .lse = FA_LSE_ADD,
        .lse_fmt = FA_FMT_BF16,
        .log = FA_KLOG_CR,
        .empty_lse_pos = false,
        .splits = 1,
        .combine = FA_COMBINE_FA2,
        .combine_exp = FA_CEXP_CR,
        .combine_log = FA_KLOG_CR,
        .bwd = FA_BWD_REPO,
        .bwd_reverse_q = false,
        FA_BWD_PRESET_REPO,
        .exp_model = FA_KEXP_CR,
    },
    /* fp32: everything FP32 (the paper's hp), untiled forward. */
    {
        .name = "fp32",
        .d_round = 1,
        .n_tiles = 1,
        .tiles = {{4096, 0, 0, 64, 0, 0, 0}},
        .kv_reverse = false,
        .causal_skip = false,
        FA_MMA_PRESET("fma-chain"),
        .score_dot = FA_FMT_F32,
        .score_scaled = true,
        .score = FA_FMT_F32,
        .mask = FA_MASK_NEG_INF,
        .m_init = FA_MASK_NEG_INF,
        .visit = FA_VISIT_VISIBLE,
        .fix_all_keys = false,
        .first = FA_FIRST_INIT,
        .exp_base2 = false,
        .exp_arg = FA_ARG_SUB,
        .alpha_arg = FA_ALPHA_SUB,
        .alpha = FA_FMT_F32,
        .p = FA_FMT_F32,
        .rowsum_fp32_p = false,
        .rowsum = FA_ROWSUM_SEQUENTIAL,
        .rowsum_fma = false,
        .rowsum_clamp = false,
        .l = FA_FMT_F32,
        .acc_update = FA_ACC_CHAIN,
        .acc = FA_FMT_F32,
        .normalize = FA_NORM_DIVIDE,
        .o = FA_FMT_F32,
        .lse = FA_LSE_ADD,
        .lse_fmt = FA_FMT_F32,
        .log = FA_KLOG_CR,
        .empty_lse_pos = false,
        .splits = 1,
        .combine = FA_COMBINE_FA2,
        .combine_exp = FA_CEXP_CR,
        .combine_log = FA_KLOG_CR,
        .bwd = FA_BWD_CHAIN,
        .bwd_reverse_q = false,
        FA_BWD_PRESET_CHAIN,
        .exp_model = FA_KEXP_CR,
    },
};

#define N_KERNELS (sizeof kernels / sizeof kernels[0])

const fa_kernel *
fa_kernel_at(size_t i)
{
    size_t n = 0;

    /* then the backends' descriptions: kernels_cudnn.c, kernels_sdpa_em.c */
    if (i < N_KERNELS)
        return &kernels[i];
    i -= N_KERNELS;
    while (fa_kernel_sdpa_at(n) != NULL)
        n++;
    if (i < n)
        return fa_kernel_sdpa_at(i);
    i -= n;
    if (i < fa_kernels_sdpa_em_count)
        return &fa_kernels_sdpa_em[i];
    i -= fa_kernels_sdpa_em_count;
    return i < fa_kernels_flex_count ? &fa_kernels_flex[i] : NULL;
}

const fa_kernel *
fa_kernel_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; fa_kernel_at(i) != NULL; i++)
        if (strcmp(fa_kernel_at(i)->name, name) == 0)
            return fa_kernel_at(i);
    return NULL;
}

fa_kernel_exp
fa_kernel_exp_legacy(const fa_kernel *k)
{
    bool gpu = k->rowsum == FA_ROWSUM_QUAD || k->rowsum == FA_ROWSUM_QUAD_BLOCK
               || k->exp_arg == FA_ARG_LOG2E_SUB
               || k->exp_fn == FA_EXPFN_CUDA;

    return gpu ? FA_KEXP_EX2_SM90 : FA_KEXP_CR;
}

/*----------------------------------------------------------------------------
 * Names of the enumerated fields.
 *--------------------------------------------------------------------------*/
static const char *const fmt_names[] = {"f32", "bf16", "f16", "in", NULL};
static const char *const arg_names[] = {
    "sub", "sub-round", "sub-once", "scale-sub", "scale-fma", "log2e-sub",
    NULL};
static const char *const alpha_names[] = {"sub", "sub-round", "sub-scale",
                                          "scale-sub", "log2e-sub", NULL};
static const char *const visit_names[] = {"visible", "block", NULL};
static const char *const rowsum_names[] = {"sequential", "quad", "quad-block",
                                           "warps", "warp32",
                                           "quad-reduce", NULL};
static const char *const acc_names[] = {"chain", "separate", "warps",
                                        NULL};
static const char *const first_names[] = {"init", "update", NULL};
static const char *const norm_names[] = {"divide", "reciprocal", "p-divide",
                                         "reciprocal-approx", NULL};
static const char *const lse_names[] = {"add", "fma-scale", "fma-ln2",
                                        "log2e-div", "log2-ln2", NULL};
static const char *const log_names[] = {"cr", "lg2", "cuda-logf",
                                         "cuda-log2f-ftz", NULL};
static const char *const expfn_names[] = {"model", "cuda-expf", NULL};
static const char *const mask_names[] = {"-inf", "bf16-lowest", NULL};
static const char *const combine_names[] = {"fa2", "lean", "flex-decode",
                                            NULL};
static const char *const cexp_names[] = {"cr", "libm", "model",
                                         "cuda-expf", NULL};
static const char *const bwd_names[] = {"chain", "fa2",  "repo", "efficient",
                                         "math",  "cudnn", "flex", NULL};
static const char *const dqb_names[] = {"one", "sms", NULL};
static const char *const bkeys_names[] = {"visible", "all", "m-block-min",
                                          NULL};
static const char *const bdelta_names[] = {"mma", "bf16-sum", "dot-do-o",
                                           "cudnn", "efficient", NULL};
static const char *const bp_names[] = {"sub", "bf16-ops", "scale-log2",
                                       "log2e-fma", "expf-in", NULL};
static const char *const bds_names[] = {"p-dp", "p-dp-scale", "dp-p-scale",
                                        "bf16-ops", NULL};
static const char *const bdq_names[] = {"chain", "buffers", "reverse",
                                        "through", "bf16-add", NULL};
static const char *const bdkv_names[] = {"chain", "mma", "bf16-add", NULL};
static const char *const dlse_names[] = {"same", "lg2-fma", NULL};
static const char *const kexp_names[] = {"cr", "libm", "ex2-sm90",
                                         "ex2-sm90-ftz", NULL};
static const char *const gqa_names[] = {"none", "in-sum", "fp32-sum",
                                         "chain", NULL};
static const char *const bias_names[] = {"none", "add", "log2", NULL};
static const char *const bfill_names[] = {"-inf", "-65504", NULL};
static const char *const mlse_names[] = {"empty", "zero", NULL};

static const struct
{
    const char *field;
    const char *const *names;
} enum_fields[] = {
    {"score_dot", fmt_names},   {"score", fmt_names},
    {"alpha", fmt_names},       {"p", fmt_names},
    {"l", fmt_names},           {"acc", fmt_names},
    {"o", fmt_names},           {"lse_format", fmt_names},
    {"exp_arg", arg_names},     {"alpha_arg", alpha_names},
    {"visit", visit_names},     {"rowsum", rowsum_names},
    {"acc_update", acc_names},  {"first_block", first_names},
    {"normalize", norm_names},  {"lse", lse_names},
    {"log", log_names},         {"combine_log", log_names},
    {"mask", mask_names},       {"m_init", mask_names},
    {"combine", combine_names}, {"combine_exp", cexp_names},
    {"bwd", bwd_names},         {"exp_fn", expfn_names},
    {"dq_buffers", dqb_names},
    {"decode_lse", dlse_names},
    {"decode_acc_update", acc_names},
    {"exp_model", kexp_names},
    {"gqa_dkv", gqa_names},
    {"bias_add", bias_names},
    {"bool_fill", bfill_names},
    {"masked_lse", mlse_names},
    {"bwd_keys", bkeys_names},
    {"bwd_delta", bdelta_names},
    {"bwd_p", bp_names},
    {"bwd_dp", fmt_names},
    {"bwd_ds", bds_names},
    {"bwd_operand", fmt_names},
    {"bwd_dq", bdq_names},
    {"bwd_dkv", bdkv_names},
    {"bwd_out", fmt_names},
};

const char *const *
fa_kernel_enum_names(const char *field)
{
    if (field == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof enum_fields / sizeof enum_fields[0]; i++)
        if (strcmp(enum_fields[i].field, field) == 0)
            return enum_fields[i].names;
    return NULL;
}

/*----------------------------------------------------------------------------
 * Check and tiles.
 *--------------------------------------------------------------------------*/
static bool
fmt_ok(fa_fmt f)
{
    return (unsigned)f <= FA_FMT_IN;
}

static bool
mma_ok(const char *name)
{
    const sf_mma_model *m;

    if (memchr(name, '\0', FA_KERNEL_MMA_MAX) == NULL)
        return false;
    m = sf_mma_preset_by_name(name);
    return m != NULL && m->acc == &sf_format_f32;
}

/* decode_span_order: "" or "tree", or orders separated by '/', each of
   them every one of 0 .. n - 1 once in hex digits (the same n in all, at
   most 16). */
static bool
span_order_ok(const fa_kernel *k)
{
    const char *o = k->decode_span_order;
    const char *end = memchr(o, '\0', sizeof k->decode_span_order);
    size_t n = end != NULL ? (size_t)(end - o) : 0;
    unsigned seen = 0;

    if (end == NULL)
        return false;
    if (n == 0 || strcmp(o, "tree") == 0)
        return true;
    for (size_t a = 0, len = 0; a < n; a += len + 1) {
        const char *slash = memchr(o + a, '/', n - a);
        size_t seg = slash != NULL ? (size_t)(slash - (o + a)) : n - a;
        if (seg == 0 || seg > 16 || (len != 0 && seg != len)
            || (slash != NULL && (size_t)(slash - o) + 1 == n))
            return false;
        len = seg;
        seen = 0;
        for (size_t i = a; i < a + seg; i++) {
            int d = fa_span_digit(o[i]);
            if (d < 0 || (size_t)d >= seg || (seen >> d & 1u))
                return false;
            seen |= 1u << d;
        }
    }
    return true;
}

/* The bwd_* presets, by fa_bwd_scheme (fa_local.h's FA_BWD_PRESET_*). */
static const fa_kernel bwd_presets[] = {
    [FA_BWD_CHAIN] = {FA_BWD_PRESET_CHAIN},
    [FA_BWD_FA2] = {FA_BWD_PRESET_FA2},
    [FA_BWD_REPO] = {FA_BWD_PRESET_REPO},
    [FA_BWD_EFFICIENT] = {FA_BWD_PRESET_EFFICIENT},
    [FA_BWD_MATH] = {FA_BWD_PRESET_CHAIN},
    [FA_BWD_CUDNN] = {FA_BWD_PRESET_CUDNN},
    [FA_BWD_FLEX] = {FA_BWD_PRESET_CHAIN},
};

void
fa_kernel_bwd_preset(fa_kernel *k)
{
    size_t i = (size_t)k->bwd;

    if (i >= sizeof bwd_presets / sizeof bwd_presets[0])
        i = FA_BWD_CHAIN;
    k->bwd_keys = bwd_presets[i].bwd_keys;
    k->bwd_delta = bwd_presets[i].bwd_delta;
    k->bwd_p = bwd_presets[i].bwd_p;
    k->bwd_dp = bwd_presets[i].bwd_dp;
    k->bwd_ds = bwd_presets[i].bwd_ds;
    k->bwd_operand = bwd_presets[i].bwd_operand;
    k->bwd_dq = bwd_presets[i].bwd_dq;
    k->bwd_dkv = bwd_presets[i].bwd_dkv;
    k->bwd_out = bwd_presets[i].bwd_out;
}

bool
fa_kernel_bwd_tiled(const fa_kernel *k)
{
    return k->bwd != FA_BWD_MATH && k->bwd != FA_BWD_FLEX;
}

/* The combinations of bwd_* fields the tiled backward runs. */
static const char *
bwd_check(const fa_kernel *k)
{
    bool f32 = k->bwd_operand == FA_FMT_F32;
    bool unscaled_p =
        k->bwd_p == FA_BP_SCALE_LOG2 || k->bwd_p == FA_BP_LOG2E_FMA;

    if (!fa_kernel_bwd_tiled(k))
        return k->bwd == FA_BWD_MATH && !k->score_scaled
                   ? "bwd: math needs scaled scores"
                   : NULL;
    if (f32 != (k->bwd_dq == FA_BDQ_CHAIN)
        || f32 != (k->bwd_dkv == FA_BDKV_CHAIN))
        return "bwd_operand: f32 goes with bwd_dq and bwd_dkv \"chain\", "
               "and they with it";
    if (k->bwd_dp != FA_FMT_F32 && k->bwd_dp != FA_FMT_BF16)
        return "bwd_dp: expected f32 or bf16";
    if ((k->bwd_p == FA_BP_BF16_OPS || k->bwd_ds == FA_BDS_BF16_OPS)
        && k->bwd_operand != FA_FMT_BF16)
        return "bwd_p: bf16-ops (bwd_p or bwd_ds) needs bwd_operand bf16";
    if (k->bwd_p == FA_BP_EXPF_IN && f32)
        return "bwd_p: expf-in needs a 16-bit bwd_operand";
    if (unscaled_p && k->exp_arg != FA_ARG_SCALE_SUB
        && k->exp_arg != FA_ARG_SCALE_FMA)
        return "bwd_p: scale-log2 and log2e-fma need unscaled scores "
               "(exp_arg scale-sub or scale-fma)";
    if (!unscaled_p && !k->score_scaled)
        return "bwd_p: sub, bf16-ops and expf-in need scaled scores";
    return NULL;
}

const char *
fa_kernel_check(const fa_kernel *k)
{
    const char *why;

    if (k == NULL)
        return "kernel: NULL";
    if (memchr(k->name, '\0', sizeof k->name) == NULL || k->name[0] == '\0')
        return "name: empty or too long";
    if (k->d_round == 0 || k->d_round > 256)
        return "d_round: expected 1 to 256";
    if (k->n_tiles == 0 || k->n_tiles > FA_KERNEL_MAX_TILES)
        return "tiles: expected 1 to 8 rows";
    for (size_t i = 0; i < k->n_tiles; i++)
        if (k->tiles[i].d_max == 0
            || (i > 0 && k->tiles[i].d_max <= k->tiles[i - 1].d_max))
            return "tiles: d_max must be positive and increasing";
    if (!mma_ok(k->mma_s) || !mma_ok(k->mma_pv) || !mma_ok(k->mma_dp)
        || !mma_ok(k->mma_dq) || !mma_ok(k->mma_dk) || !mma_ok(k->mma_dv)
        || !mma_ok(k->mma_delta))
        return "mma: an unknown preset, or one without an FP32 accumulator";
    if (!fmt_ok(k->score_dot) || !fmt_ok(k->score) || !fmt_ok(k->alpha)
        || !fmt_ok(k->p) || !fmt_ok(k->l) || !fmt_ok(k->acc) || !fmt_ok(k->o)
        || !fmt_ok(k->lse_fmt))
        return "format: unknown value";
    if ((unsigned)k->exp_arg > FA_ARG_LOG2E_SUB
        || (unsigned)k->exp_arg_partial > FA_ARG_LOG2E_SUB
        || (unsigned)k->alpha_arg > FA_ALPHA_LOG2E_SUB
        || (unsigned)k->visit > FA_VISIT_BLOCK
        || (unsigned)k->rowsum > FA_ROWSUM_QUAD_REDUCE
        || (unsigned)k->acc_update > FA_ACC_SEPARATE
        || (unsigned)k->decode_acc_update > FA_ACC_WARPS
        || (unsigned)k->first > FA_FIRST_UPDATE
        || (unsigned)k->normalize > FA_NORM_RCP_APPROX
        || (unsigned)k->lse > FA_LSE_LOG2_LN2
        || (unsigned)k->log > FA_KLOG_CUDA_LOG2_FTZ
        || (unsigned)k->combine_log > FA_KLOG_CUDA
        || (unsigned)k->exp_fn > FA_EXPFN_CUDA
        || (unsigned)k->mask > FA_MASK_BF16_LOWEST
        || (unsigned)k->m_init > FA_MASK_BF16_LOWEST
        || (unsigned)k->combine > FA_COMBINE_FLEX_DECODE
        || (unsigned)k->combine_exp > FA_CEXP_EXPF
        || (unsigned)k->bwd > FA_BWD_FLEX
        || (unsigned)k->dq_buffers > FA_DQB_SMS
        || (unsigned)k->decode_lse > FA_DLSE_LG2_FMA
        || (unsigned)k->exp_model > FA_KEXP_EX2_SM90_FTZ
        || (unsigned)k->gqa_dkv > FA_GQA_CHAIN
        || (unsigned)k->bias_add > FA_BIAS_LOG2
        || (unsigned)k->bool_fill > FA_BFILL_NEG_65504
        || (unsigned)k->masked_lse > FA_MLSE_ZERO
        || (unsigned)k->bwd_keys > FA_BKEYS_M_BLOCK
        || (unsigned)k->bwd_delta > FA_BDELTA_EFFICIENT
        || (unsigned)k->bwd_p > FA_BP_EXPF_IN
        || (unsigned)k->bwd_ds > FA_BDS_BF16_OPS
        || (unsigned)k->bwd_dq > FA_BDQ_BF16_ADD
        || (unsigned)k->bwd_dkv > FA_BDKV_BF16_ADD || !fmt_ok(k->bwd_dp)
        || !fmt_ok(k->bwd_operand) || !fmt_ok(k->bwd_out))
        return "kernel: an enumerated field out of range";
    if ((k->exp_arg == FA_ARG_SCALE_SUB || k->exp_arg == FA_ARG_SCALE_FMA)
        != (k->alpha_arg == FA_ALPHA_SUB_SCALE
            || k->alpha_arg == FA_ALPHA_SCALE_SUB))
        return "exp_arg: scale-sub and scale-fma go with alpha_arg "
               "sub-scale or scale-sub";
    if ((k->exp_arg == FA_ARG_SCALE_SUB || k->exp_arg == FA_ARG_SCALE_FMA)
        && (k->score_scaled || !k->exp_base2))
        return "exp_arg: scale-sub and scale-fma need unscaled scores and "
               "exp_base2";
    if ((k->lse == FA_LSE_FMA_SCALE || k->lse == FA_LSE_FMA_LN2)
        && k->score_scaled)
        return "lse: fma-scale and fma-ln2 need unscaled scores "
               "(score_scaled false)";
    if (!k->score_scaled
        && !(k->exp_arg == FA_ARG_SCALE_SUB || k->exp_arg == FA_ARG_SCALE_FMA))
        return "score_scaled: unscaled scores need exp_arg scale-sub or "
               "scale-fma";
    if (k->splits == 0 || k->splits > 128)
        return "splits: expected 1 to 128";
    if (k->combine == FA_COMBINE_FLEX_DECODE
        && (k->rowsum != FA_ROWSUM_QUAD_REDUCE || !k->block_sparse
            || !k->score_log2 || k->lse != FA_LSE_LOG2_LN2))
        return "combine: flex-decode needs rowsum quad-reduce, block_sparse, "
               "score_log2 and lse log2-ln2";
    if (k->rowsum_col_warps > 8)
        return "rowsum_col_warps: expected 0 to 8";
    if (k->decode_acc_update == FA_ACC_WARPS
        && (k->visit != FA_VISIT_BLOCK || k->decode_rowsum_span_wide == 0
            || k->decode_rowsum_span_wide > 128))
        return "decode_acc_update: warps needs visit block and "
               "decode_rowsum_span_wide 1 to 128";
    if (k->below_min_nq[0] != '\0'
        && (memchr(k->below_min_nq, '\0', sizeof k->below_min_nq) == NULL
            || fa_kernel_by_name(k->below_min_nq) == NULL
            || fa_kernel_by_name(k->below_min_nq)->min_nq != 0))
        return "below_min_nq: not a named description without min_nq";
    if (k->score_log2
        && (k->score_scaled || k->bias_add == FA_BIAS_ADD
            || k->exp_arg != FA_ARG_SCALE_FMA
            || k->alpha_arg != FA_ALPHA_SCALE_SUB))
        return "score_log2: needs score_scaled false, bias_add \"none\" or "
               "\"log2\", exp_arg scale-fma and alpha_arg scale-sub";
    if (k->lse == FA_LSE_LOG2_LN2 && !k->score_log2)
        return "lse: log2-ln2 needs score_log2";
    if ((k->log == FA_KLOG_CUDA_LOG2_FTZ) != (k->lse == FA_LSE_LOG2_LN2))
        return "log: cuda-log2f-ftz (base 2) goes with lse log2-ln2";
    if ((why = bwd_check(k)) != NULL)
        return why;
    if (!span_order_ok(k))
        return "decode_span_order: expected \"tree\" or a permutation of "
               "the spans of a block in hexadecimal digits (\"0123\")";
    return fa_kernel_check_sdpa_em(k);
}

const fa_kernel_tiles *
fa_kernel_tiles_for(const fa_kernel *k, size_t d)
{
    size_t dr;

    if (k == NULL || k->d_round == 0)
        return NULL;
    dr = (d + k->d_round - 1) / k->d_round * k->d_round;
    for (size_t i = 0; i < k->n_tiles && i < FA_KERNEL_MAX_TILES; i++)
        if (dr <= k->tiles[i].d_max)
            return &k->tiles[i];
    return NULL;
}

const fa_gemv_row *
fa_kernel_gemv_for(const fa_kernel *k, size_t d, size_t nk, size_t bh)
{
    for (size_t g = 0; k != NULL && g < k->n_gemv && g < FA_KERNEL_MAX_GEMV;
         g++) {
        const fa_gemv_row *gr = &k->gemv[g];
        if (d >= gr->d_min && d <= gr->d_max && nk >= gr->nk_min
            && nk <= gr->nk_max && bh >= gr->bh_min && bh <= gr->bh_max)
            return gr;
    }
    return NULL;
}
