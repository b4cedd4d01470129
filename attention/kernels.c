/* kernels -- the named kernel descriptions (each with its evidence), the
   names of the enumerated fields, the description's check and its tiles */
#include <config.h>

#include <string.h>

#include "attention/kernel.h"
#include "softfloat/mma.h"

/*----------------------------------------------------------------------------
 * The named descriptions.
 *--------------------------------------------------------------------------*/
static const fa_kernel kernels[] = {
    /* fa2: FlashAttention-2 as PyTorch 2.11's flash backend runs it on an
       H200 (sm90, BF16, UNFUSE_FMA, no dropout), flash_fwd_kernel.h,
       softmax.h, flash_bwd_kernel.h.  Forward tiles per head dimension
       (d padded to a multiple of 32): flash_fwd_launch_template.h, the
       non-sm8x branches without dropout, with the H200's shared memory
       (227 KiB per block, 228 KiB per SM: d = 224 takes 128 x 64, d = 256
       64 x 64); split-KV tiles run_mha_fwd_splitkv_dispatch (kBlockM 64,
       kBlockN 256 / 128 / 64).  Backward tiles: d <= 64 128 x 128, else
       64 x 128 (flash_bwd_launch_template.h for d = 64, 128; the rows
       above 128 are not checked).  Measured: O bit for bit against the
       flash kernel on every dump in tests/data/gpu (d = 64, 128, split
       count 1); LSE where the GPU's __logf and the correctly rounded log
       agree.  P~ and O are the kernel's Element type, the inputs'
       format (cvt.rn.bf16x2 or cvt.rn.f16x2; FP16 MMA inputs with FP32
       accumulation in the sm90 model). */
    {"fa2",
     32,
     8,
     {{32, 128, 128, 128, 128, 64, 256},
      {64, 128, 128, 128, 128, 64, 256},
      {96, 128, 64, 64, 128, 64, 128},
      {128, 128, 64, 64, 128, 64, 128},
      {160, 128, 32, 64, 128, 64, 64},
      {192, 128, 64, 64, 128, 64, 64},
      {224, 128, 64, 64, 128, 64, 64},
      {256, 64, 64, 64, 128, 64, 64}},
     true,
     true,
     "sm90",
     "sm90",
     "sm90",
     "sm90",
     "sm90",
     "sm90",
     "sm90",
     FA_FMT_F32,
     false,
     FA_FMT_F32,
     FA_MASK_NEG_INF,
     FA_MASK_NEG_INF,
     FA_VISIT_BLOCK,
     false,
     FA_FIRST_INIT,
     true,
     FA_ARG_SCALE_SUB,
     FA_ALPHA_SUB_SCALE,
     FA_FMT_F32,
     FA_FMT_IN,
     true,
     FA_ROWSUM_QUAD,
     true,
     false,
     FA_FMT_F32,
     FA_ACC_CHAIN,
     FA_FMT_F32,
     FA_NORM_RECIPROCAL,
     FA_FMT_IN,
     FA_LSE_FMA_SCALE,
     FA_FMT_F32,
     FA_KLOG_CR,
     true,
     1,
     FA_COMBINE_FA2,
     FA_CEXP_CR,
     FA_KLOG_CR,
     FA_BWD_FA2,
     true},
    /* paper-eq4: the paper's abstraction (Algorithm 1, Eq. 4): every dot
       product one FP32 chain, BF16 where the paper writes lp (S, S - m
       rounded once, P~, O~ after each block, O); untiled forward; the
       backward is the fp32 backward (paper-notes section 1). */
    {"paper-eq4",
     1,
     1,
     {{4096, 0, 0, 64, 0, 0, 0}},
     false,
     false,
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     FA_FMT_F32,
     true,
     FA_FMT_BF16,
     FA_MASK_NEG_INF,
     FA_MASK_NEG_INF,
     FA_VISIT_VISIBLE,
     false,
     FA_FIRST_INIT,
     false,
     FA_ARG_SUB_ONCE,
     FA_ALPHA_SUB,
     FA_FMT_F32,
     FA_FMT_BF16,
     false,
     FA_ROWSUM_SEQUENTIAL,
     false,
     false,
     FA_FMT_F32,
     FA_ACC_CHAIN,
     FA_FMT_BF16,
     FA_NORM_DIVIDE,
     FA_FMT_BF16,
     FA_LSE_ADD,
     FA_FMT_F32,
     FA_KLOG_CR,
     false,
     1,
     FA_COMBINE_FA2,
     FA_CEXP_CR,
     FA_KLOG_CR,
     FA_BWD_CHAIN,
     false},
    /* repo: the released PyTorch re-implementation (paper-notes section
       1.4), one rounding per PyTorch op on BF16 tensors: buckets of
       512 x 512, the mask fill -finfo(bf16).max, m, l and oc in BF16,
       oc.mul_().add_(), the clamp of the block sum at 1e-10, LSE =
       log(l) + m in BF16. */
    {"repo",
     1,
     1,
     {{4096, 512, 512, 0, 0, 0, 0}},
     false,
     false,
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     FA_FMT_BF16,
     true,
     FA_FMT_BF16,
     FA_MASK_BF16_LOWEST,
     FA_MASK_BF16_LOWEST,
     FA_VISIT_BLOCK,
     true,
     FA_FIRST_UPDATE,
     false,
     FA_ARG_SUB_ROUND,
     FA_ALPHA_SUB_ROUND,
     FA_FMT_BF16,
     FA_FMT_BF16,
     false,
     FA_ROWSUM_SEQUENTIAL,
     false,
     true,
     FA_FMT_BF16,
     FA_ACC_SEPARATE,
     FA_FMT_BF16,
     FA_NORM_DIVIDE,
     FA_FMT_BF16,
     FA_LSE_ADD,
     FA_FMT_BF16,
     FA_KLOG_CR,
     false,
     1,
     FA_COMBINE_FA2,
     FA_CEXP_CR,
     FA_KLOG_CR,
     FA_BWD_REPO,
     false},
    /* fp32: everything FP32 (the paper's hp), untiled forward. */
    {"fp32",
     1,
     1,
     {{4096, 0, 0, 64, 0, 0, 0}},
     false,
     false,
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     "fma-chain",
     FA_FMT_F32,
     true,
     FA_FMT_F32,
     FA_MASK_NEG_INF,
     FA_MASK_NEG_INF,
     FA_VISIT_VISIBLE,
     false,
     FA_FIRST_INIT,
     false,
     FA_ARG_SUB,
     FA_ALPHA_SUB,
     FA_FMT_F32,
     FA_FMT_F32,
     false,
     FA_ROWSUM_SEQUENTIAL,
     false,
     false,
     FA_FMT_F32,
     FA_ACC_CHAIN,
     FA_FMT_F32,
     FA_NORM_DIVIDE,
     FA_FMT_F32,
     FA_LSE_ADD,
     FA_FMT_F32,
     FA_KLOG_CR,
     false,
     1,
     FA_COMBINE_FA2,
     FA_CEXP_CR,
     FA_KLOG_CR,
     FA_BWD_CHAIN,
     false},
};

#define N_KERNELS (sizeof kernels / sizeof kernels[0])

const fa_kernel *
fa_kernel_at(size_t i)
{
    return i < N_KERNELS ? &kernels[i] : NULL;
}

const fa_kernel *
fa_kernel_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < N_KERNELS; i++)
        if (strcmp(kernels[i].name, name) == 0)
            return &kernels[i];
    return NULL;
}

/*----------------------------------------------------------------------------
 * Names of the enumerated fields.
 *--------------------------------------------------------------------------*/
static const char *const fmt_names[] = {"f32", "bf16", "f16", "in", NULL};
static const char *const arg_names[] = {"sub", "sub-round", "sub-once",
                                        "scale-sub", "scale-fma", NULL};
static const char *const alpha_names[] = {"sub", "sub-round", "sub-scale",
                                          NULL};
static const char *const visit_names[] = {"visible", "block", NULL};
static const char *const rowsum_names[] = {"sequential", "quad", NULL};
static const char *const acc_names[] = {"chain", "separate", NULL};
static const char *const first_names[] = {"init", "update", NULL};
static const char *const norm_names[] = {"divide", "reciprocal", NULL};
static const char *const lse_names[] = {"add", "fma-scale", NULL};
static const char *const log_names[] = {"cr", "lg2", NULL};
static const char *const mask_names[] = {"-inf", "bf16-lowest", NULL};
static const char *const combine_names[] = {"fa2", NULL};
static const char *const cexp_names[] = {"cr", "libm", "model", NULL};
static const char *const bwd_names[] = {"chain", "fa2", "repo", NULL};

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
    {"bwd", bwd_names},
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

const char *
fa_kernel_check(const fa_kernel *k)
{
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
    if ((unsigned)k->exp_arg > FA_ARG_SCALE_FMA
        || (unsigned)k->alpha_arg > FA_ALPHA_SUB_SCALE
        || (unsigned)k->visit > FA_VISIT_BLOCK
        || (unsigned)k->rowsum > FA_ROWSUM_QUAD
        || (unsigned)k->acc_update > FA_ACC_SEPARATE
        || (unsigned)k->first > FA_FIRST_UPDATE
        || (unsigned)k->normalize > FA_NORM_RECIPROCAL
        || (unsigned)k->lse > FA_LSE_FMA_SCALE
        || (unsigned)k->log > FA_KLOG_LG2
        || (unsigned)k->combine_log > FA_KLOG_LG2
        || (unsigned)k->mask > FA_MASK_BF16_LOWEST
        || (unsigned)k->m_init > FA_MASK_BF16_LOWEST
        || (unsigned)k->combine > FA_COMBINE_FA2
        || (unsigned)k->combine_exp > FA_CEXP_MODEL
        || (unsigned)k->bwd > FA_BWD_REPO)
        return "kernel: an enumerated field out of range";
    if ((k->exp_arg == FA_ARG_SCALE_SUB || k->exp_arg == FA_ARG_SCALE_FMA)
        != (k->alpha_arg == FA_ALPHA_SUB_SCALE))
        return "exp_arg: scale-sub and scale-fma go with alpha_arg "
               "sub-scale";
    if ((k->exp_arg == FA_ARG_SCALE_SUB || k->exp_arg == FA_ARG_SCALE_FMA)
        && (k->score_scaled || !k->exp_base2))
        return "exp_arg: scale-sub and scale-fma need unscaled scores and "
               "exp_base2";
    if (k->lse == FA_LSE_FMA_SCALE && k->score_scaled)
        return "lse: fma-scale needs unscaled scores (score_scaled false)";
    if (!k->score_scaled
        && !(k->exp_arg == FA_ARG_SCALE_SUB || k->exp_arg == FA_ARG_SCALE_FMA))
        return "score_scaled: unscaled scores need exp_arg scale-sub or "
               "scale-fma";
    if (k->splits == 0 || k->splits > 128)
        return "splits: expected 1 to 128";
    if (k->bwd == FA_BWD_FA2 && k->exp_arg != FA_ARG_SCALE_SUB
        && k->exp_arg != FA_ARG_SCALE_FMA)
        return "bwd: fa2 needs unscaled scores (exp_arg scale-sub or "
               "scale-fma)";
    if (k->bwd != FA_BWD_FA2 && !k->score_scaled)
        return "bwd: chain and repo need scaled scores";
    return NULL;
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
