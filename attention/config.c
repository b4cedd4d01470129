/* config -- the configuration of the reference attention: defaults, names,
   checks, the resolved plan, output formats and working-memory sizes */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention/fa_local.h"

/*----------------------------------------------------------------------------
 * Names.
 *--------------------------------------------------------------------------*/
static const char *const policy_names[] = {"paper-eq4", "repo", "fa2",
                                           "fp32", "efficient", "math"};
static const char *const fix_names[] = {"none", "beta", "beta-v2", "eps",
                                        "always"};
static const char *const order_names[] = {"forward", "reverse"};
static const char *const ablation_names[] = {
    "fp32-pv", "fp32-o", "delta-dpp", "delta-fp32-o",
    "untiled", "fp32-p", "fp32-ocast"};
#define N_POLICIES (sizeof policy_names / sizeof policy_names[0])
#define N_FIXES (sizeof fix_names / sizeof fix_names[0])
#define N_ORDERS (sizeof order_names / sizeof order_names[0])
#define N_ABLATIONS (sizeof ablation_names / sizeof ablation_names[0])
#define ABL_ALL ((1u << N_ABLATIONS) - 1u)

static int
find_name(const char *const *names, size_t n, const char *name)
{
    if (name == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

const char *
fa_policy_name(fa_policy p)
{
    return (unsigned)p < N_POLICIES ? policy_names[p] : NULL;
}

int
fa_policy_parse(const char *name)
{
    return find_name(policy_names, N_POLICIES, name);
}

const char *
fa_fix_name(fa_fix_kind f)
{
    return (unsigned)f < N_FIXES ? fix_names[f] : NULL;
}

int
fa_fix_parse(const char *name)
{
    return find_name(fix_names, N_FIXES, name);
}

const char *
fa_order_name(fa_kv_order o)
{
    return (unsigned)o < N_ORDERS ? order_names[o] : NULL;
}

int
fa_order_parse(const char *name)
{
    return find_name(order_names, N_ORDERS, name);
}

const char *
fa_ablation_name(unsigned one_bit)
{
    for (size_t i = 0; i < N_ABLATIONS; i++)
        if (one_bit == 1u << i)
            return ablation_names[i];
    return NULL;
}

long
fa_ablations_parse(const char *list)
{
    unsigned bits = 0;
    const char *p = list;

    if (list == NULL)
        return -1;
    if (*list == '\0' || strcmp(list, "none") == 0)
        return 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        size_t i;

        for (i = 0; i < N_ABLATIONS; i++)
            if (strlen(ablation_names[i]) == len
                && strncmp(ablation_names[i], p, len) == 0)
                break;
        if (i == N_ABLATIONS)
            return -1; /* unknown or empty element */
        bits |= 1u << i;
        if (comma == NULL)
            return (long)bits;
        p = comma + 1;
    }
}

/*----------------------------------------------------------------------------
 * Defaults.
 *--------------------------------------------------------------------------*/
fa_fix
fa_fix_default(fa_fix_kind kind)
{
    fa_fix f;

    f.kind = kind;
    f.beta = kind == FA_FIX_BETA_V2 ? 7.0 : 2.0;
    f.tol = 1e-3;
    f.eps = 0x1p-5;
    f.zero_max = FA_ZERO_MAX_KEEP;
    f.eps_zero = 0x1p-5;
    return f;
}

fa_config
fa_config_kernel_default(const fa_kernel *k)
{
    fa_config c;

    memset(&c, 0, sizeof c);
    c.kernel = k;
    c.causal = false;
    c.scale = 0.0f;
    c.fix = fa_fix_default(FA_FIX_NONE);
    c.ablations = 0;
    c.exp = fa_exp_model_by_name("cr");
    c.dq_splits = 0;
    c.splits = 0;
    c.sms = 0;
    if (k != NULL) {
        c.order = k->kv_reverse ? FA_ORDER_REVERSE : FA_ORDER_FORWARD;
        c.mma_qk = sf_mma_preset_by_name(k->mma_s);
        c.mma_pv = sf_mma_preset_by_name(k->mma_pv);
        /* one model for every product of the backward, when the
           description has one */
        if (strcmp(k->mma_dp, k->mma_dq) == 0
            && strcmp(k->mma_dp, k->mma_dk) == 0
            && strcmp(k->mma_dp, k->mma_dv) == 0
            && strcmp(k->mma_dp, k->mma_delta) == 0)
            c.mma_bwd = sf_mma_preset_by_name(k->mma_dp);
        c.fa2_rowsum_fma = k->rowsum_fma;
    }
    return c;
}

const fa_kernel *
fa_kernel_of_policy(fa_policy policy)
{
    return fa_kernel_by_name(fa_policy_name(policy));
}

fa_config
fa_config_default(fa_policy policy)
{
    return fa_config_kernel_default(fa_kernel_of_policy(policy));
}

const fa_kernel *
fa_config_kernel(const fa_config *cfg)
{
    const fa_kernel *k;

    if (cfg == NULL)
        return NULL;
    k = cfg->kernel;
    /* a launch of fewer rows than the description's min_nq runs the
       description it names (FlexAttention's flex_decoding) */
    if (k != NULL && cfg->shape.nq != 0 && cfg->shape.nq < k->min_nq
        && k->below_min_nq[0] != '\0'
        && memchr(k->below_min_nq, '\0', sizeof k->below_min_nq) != NULL
        && fa_kernel_by_name(k->below_min_nq) != NULL)
        return fa_kernel_by_name(k->below_min_nq);
    return k;
}

static size_t
pow2_at_least(size_t x)
{
    size_t p = 1;
    while (p < x)
        p *= 2;
    return p;
}

#define MERGE_REFUSED                                                         \
    "flex-decode: a row's keys fall in several programs, and inductor's "     \
    "reductions that merge them are not modelled for this launch: "

/* One output (one row's L): inductor's reduction of the S programs is an
   inner one, persistent up to 1,024 (choices.py: the INNER hint's
   threshold) and never split below 8,192, in one configuration
   (triton_heuristics.py: XBLOCK 1, R0_BLOCK the power of two P of S,
   P / 128 warps); Triton's layout gives each of the 32 x warps threads
   P / (32 warps) = 4 contiguous programs (one 128-bit load), masked as
   one when 4 divides S. */
static const char *
merge_rule_inner(size_t s, fa_flex_merge *m)
{
    size_t p = pow2_at_least(s);

    if (p < 256 || p > 1024)
        return MERGE_REFUSED "one row is an inner reduction, modelled over "
                             "129 to 1,024 programs (another layout below)";
    if (s % 4 != 0)
        return MERGE_REFUSED "one row is an inner reduction, modelled when "
                             "4 divides the programs (a mask inside a "
                             "thread's four programs, not recorded)";
    m->persistent = true;
    m->fused = true;
    m->spt = 4;
    m->jw = 32;
    m->warps = (unsigned)(p / 128);
    m->r0 = m->jw * m->warps;
    m->chunks = 1;
    m->c_jw = 1;
    m->c_warps = 1;
    return NULL;
}

/* The second stage of a split reduction over SPLIT = 3 chunks of XNUMEL
   outputs each (ir.py _multilayer_second_step_hint): a persistent
   reduction over P = 4 (the chunks padded), in one configuration
   (triton_heuristics.py): up to 512 outputs the OUTER_TINY hint, XBLOCK
   = min(2 (256 / P), the outputs' power of two); more, the OUTER hint,
   XBLOCK 128; XBLOCK P / 128 warps within 2 .. 16.  Triton's layout
   with the outputs contiguous (min(4, elements per thread) of them a
   thread, the lanes and then the warps along them first) leaves C_JW
   lanes and C_WARPS warps along the chunks. */
static const char *
merge_rule_chunks(size_t split, size_t xnumel, fa_flex_merge *m)
{
    size_t p = pow2_at_least(split), xp = pow2_at_least(xnumel);
    size_t xb, warps, spt, tpw_x, wpc_x, lanes_r, warps_r;

    if (xnumel % 16 != 0)
        return MERGE_REFUSED "a split reduction's second stage over outputs "
                             "that 16 does not divide (another layout, not "
                             "recorded)";
    xb = xnumel > 512 ? 128 : 2 * (256 / p) < xp ? 2 * (256 / p) : xp;
    warps = xb * p / 128;
    warps = pow2_at_least(warps < 2 ? 2 : warps > 16 ? 16 : warps);
    spt = xb * p / (32 * warps);
    spt = spt < 1 ? 1 : spt > 4 ? 4 : spt;
    tpw_x = xb / spt < 32 ? xb / spt : 32;
    lanes_r = 32 / tpw_x;
    wpc_x = xb / (spt * tpw_x) < warps ? xb / (spt * tpw_x) : warps;
    wpc_x = wpc_x < 1 ? 1 : wpc_x;
    warps_r = warps / wpc_x;
    if (lanes_r * warps_r > p)
        return MERGE_REFUSED "a split reduction's second stage whose lanes "
                             "repeat the chunks (another layout, not "
                             "recorded)";
    m->c_jw = (unsigned)lanes_r;
    m->c_warps = (unsigned)warps_r;
    return NULL;
}

const char *
fa_flex_merge_persistent(size_t s, size_t xnumel, size_t programs,
                         size_t threads, fa_flex_merge *m)
{
    size_t r0 = pow2_at_least(s), xblock, warps, spt, tpw_x, wpc_x, jw, wr;

    memset(m, 0, sizeof *m);
    if (s > 64 || xnumel <= 1 || programs == 0 || threads < 32
        || threads % 32 != 0)
        return MERGE_REFUSED "a persistent reduction of several outputs "
                             "over 64 programs or fewer, with its launch "
                             "known";
    xblock = pow2_at_least((xnumel + programs - 1) / programs);
    warps = threads / 32;
    if ((warps & (warps - 1)) != 0 || xblock * r0 > 4 * threads)
        return MERGE_REFUSED "a persistent reduction whose threads hold "
                             "several programs each (not recorded)";
    /* sizePerThread along the outputs, then lanes and warps along them
       first (order [0, 1]) */
    spt = xblock * r0 / threads;
    spt = spt < 1 ? 1 : spt;
    tpw_x = xblock / spt < 32 ? xblock / spt : 32;
    wpc_x = xblock / (spt * tpw_x) < warps ? xblock / (spt * tpw_x) : warps;
    jw = 32 / tpw_x;
    wr = warps / wpc_x;
    /* a layout wider than the tile repeats it: the lanes and warps that
       hold the same programs do not add */
    if (jw >= r0) {
        jw = r0;
        wr = 1;
    } else if (jw * wr > r0) {
        wr = r0 / jw;
    }
    if (jw * wr != r0)
        return MERGE_REFUSED "a persistent layout that does not tile the "
                             "reduction";
    m->persistent = true;
    m->chunks = 1;
    m->r0 = (unsigned)r0;
    m->jw = (unsigned)jw;
    m->warps = (unsigned)wr;
    /* each lane's one product rounded, the first addition not fused
       with it (fusing it moves 2 of the 64 LSE rows of the 32-program
       recording) */
    m->fused = false;
    m->c_jw = 1;
    m->c_warps = 1;
    return NULL;
}

const char *
fa_flex_merge_rule(size_t s, size_t xnumel, fa_flex_merge *m)
{
    size_t split, bs, x1, xp, xblock, r0, warps, spt, tpw_x, wpc_x;

    memset(m, 0, sizeof *m);
    /* inductor (ir.py Reduction.num_splits, choices.py): one output is an
       inner reduction; 8448 outputs or more (2 x 32 x 132 SMs) or 32
       programs or fewer take the default hint, whose configurations it
       autotunes; up to 64 programs a persistent reduction */
    if (xnumel <= 1)
        return merge_rule_inner(s, m);
    if (xnumel >= 8448)
        return MERGE_REFUSED "8,448 outputs or more take the default hint, "
                             "whose configuration inductor autotunes by "
                             "timing on the GPU";
    if (s <= 64)
        return MERGE_REFUSED "64 programs or fewer merge by persistent "
                             "reductions, whose configuration inductor "
                             "picks by timing on the GPU: only the launch "
                             "tells it (a manifest's kernels.forward grid "
                             "and block, fa_config.flex_merge_programs)";
    /* the outer hint: ceil(S / 128) chunks of ceil(S / chunks), each
       chunk's stage looped over xnumel x chunks outputs in one
       configuration (triton_heuristics.py outer_config_opt) */
    split = (s + 127) / 128;
    bs = (s + split - 1) / split;
    if (split > 3)
        /* four chunks and more were not recorded */
        return MERGE_REFUSED "more than 384 programs (four chunks or more, "
                             "not recorded)";
    x1 = xnumel * split;
    xp = pow2_at_least(x1);
    if (xp <= 1024) {
        xblock = xp / 128 < 2 ? 2 : xp / 128 > 8 ? 8 : xp / 128;
        r0 = pow2_at_least(bs) < 64 ? pow2_at_least(bs) : 64;
    } else if (xp <= 32768) {
        xblock = 16;
        r0 = 32;
    } else {
        return MERGE_REFUSED "more outputs than modelled";
    }
    warps = xblock * r0 / 128;
    warps = pow2_at_least(warps < 2 ? 2 : warps > 16 ? 16 : warps);
    /* Triton's layout with the outputs contiguous (order [0, 1]):
       sizePerThread along them min(4, elements per thread), then lanes
       and warps along them first; a chunked stage reads chunk x /
       xnumel, which breaks that contiguity unless XBLOCK divides
       xnumel */
    if (split > 1 && xnumel % xblock != 0)
        return MERGE_REFUSED "a chunked reduction whose rows XBLOCK does not "
                             "divide (another layout, not recorded)";
    spt = xblock * r0 / (32 * warps);
    spt = spt < 1 ? 1 : spt > 4 ? 4 : spt;
    tpw_x = xblock / spt < 32 ? xblock / spt : 32;
    wpc_x = xblock / (spt * tpw_x) < warps ? xblock / (spt * tpw_x) : warps;
    m->persistent = false;
    m->chunks = (unsigned)split;
    m->r0 = (unsigned)r0;
    m->jw = (unsigned)(32 / tpw_x);
    m->warps = (unsigned)(warps / wpc_x);
    if (m->jw * m->warps != m->r0)
        return MERGE_REFUSED "a layout that does not tile the reduction";
    /* two chunks' sums are one addition in any order */
    m->c_jw = (unsigned)split;
    m->c_warps = 1;
    return split > 2 ? merge_rule_chunks(split, xnumel, m) : NULL;
}

size_t
fa_flex_decode_splits(size_t sms, size_t bhkv)
{
    size_t s = (sms != 0 ? sms : FA_H200_SMS) / (bhkv != 0 ? bhkv : 1) * 2;
    return s != 0 ? s : 1;
}

/*----------------------------------------------------------------------------
 * The scale.
 *--------------------------------------------------------------------------*/
/* RN_f32(1/sqrt(D)), correctly rounded.  The double 1/sqrt(d) is within
   two double ulps of the exact value, so the correct FP32 result is its
   float rounding or a neighbour; the midpoint between two neighbours
   w = W 2^E (W < 2^25, an odd integer) lies below 1/sqrt(d) exactly
   when W^2 d < 2^(-2E), which integers decide (W^2 d < 2^63 for
   d <= 4096). */
static uint32_t
inv_sqrt_f32(size_t d)
{
    float f = (float)(1.0 / sqrt((double)d));
    uint32_t x = sf_host_float_bits(f);

    /* Move X until the midpoints on both sides bracket 1/sqrt(d). */
    for (int step = 0; step < 4; step++) {
        int moved = 0;
        for (int side = 0; side < 2; side++) {
            /* midpoint of x and x-1 (side 0) or x and x+1 (side 1) */
            uint32_t lo = side == 0 ? x - 1 : x;
            uint32_t e_field = (lo >> 23) & 0xFF;
            uint64_t sig = (lo & 0x7FFFFF) | (e_field ? 0x800000u : 0u);
            int e = (int)(e_field ? e_field : 1) - 127 - 23;
            /* midpoint = (2 sig + 1) 2^(e - 1); if lo's successor changes
               binade the formula still holds (sig + 1/2 ulp). */
            uint64_t w = 2 * sig + 1;
            int ew = e - 1; /* midpoint = w 2^ew, ew < 0 */
            /* w^2 d < 2^(-2 ew) <=> midpoint < 1/sqrt(d); w < 2^26 and
               d <= 4096 keep w^2 d below 2^64, and -2 ew <= 62 for a
               midpoint near 1/sqrt(d) >= 2^-6. */
            uint64_t lhs = w * w * (uint64_t)d;
            uint64_t rhs = (uint64_t)1 << (-2 * ew);
            bool mid_below = lhs < rhs;
            if (side == 0 && !mid_below) {
                x--; /* 1/sqrt(d) is below the lower midpoint */
                moved = 1;
            } else if (side == 1 && mid_below) {
                x++; /* above the upper midpoint */
                moved = 1;
            }
            if (moved)
                break;
        }
        if (!moved)
            break;
    }
    return x;
}

/*----------------------------------------------------------------------------
 * The plan.
 *--------------------------------------------------------------------------*/
static const char *
model_check(const sf_mma_model *m, const char *not_usable,
            const char *not_fp32)
{
    if (m == NULL)
        return NULL;
    if (sf_mma_model_check(m) != NULL)
        return not_usable;
    if (m->acc != &sf_format_f32)
        return not_fp32;
    return NULL;
}

static size_t
clamp_tile(size_t t, size_t n)
{
    return t == 0 || t > n ? n : t;
}

/* D as an FP32 value (correctly rounded). */
static uint32_t
f32_of_double(double x)
{
    sf_env env = SF_ENV_IEEE;

    return (uint32_t)sf_from_double(&sf_format_f32, x, SF_RNE, &env);
}

#define LG2_UNUSABLE                                                          \
    "log: the lg2 model in cfg->log is not a usable lg2 table model"

/* Whether CFG's description takes a log from a table model (cfg->log
   set, the description's log or combine log "lg2"). */
static bool
uses_lg2_table(const fa_config *cfg)
{
    const fa_kernel *kern = fa_config_kernel(cfg);

    return kern != NULL && cfg->log != NULL
           && (kern->log == FA_KLOG_LG2 || kern->combine_log == FA_KLOG_LG2);
}

/* The table's arrays are there (fa_lg2_table_check also reads every
   correction). */
static bool
lg2_table_shape_ok(const fa_lg2_table *t)
{
    return t != NULL && t->base != NULL
           && (t->ncorr == 0 || (t->corr_i != NULL && t->corr_g != NULL));
}

/* FlexAttention's launch fields of PL (min_nq, the soft-cap, the block
   mask's blocks) from CFG and the description KERN with its tiles BR x
   BC before clamping; NULL, or the reason the launch is refused. */
static const char *
plan_flex(const fa_config *cfg, const fa_kernel *kern, size_t br, size_t bc,
          fa_plan *pl)
{
    if (cfg->shape.nq < kern->min_nq)
        return "shape: fewer query rows than the description's min_nq "
               "(FlexAttention runs its flex_decoding kernel below 128 "
               "rows, which is not modelled)";
    pl->softcap = cfg->softcap != 0.0;
    if (pl->softcap
        && (!kern->softcap_tanhf || !kern->score_log2
            || !(cfg->softcap > 0.0) || !isfinite(cfg->softcap)))
        return "softcap: the description takes no soft-capping "
               "(softcap_tanhf), or the cap is not a positive number";
    if (pl->softcap) {
        pl->cap = f32_of_double(cfg->softcap);
        pl->cap_rcp = f32_of_double(1.0 / cfg->softcap);
    }
    pl->sparse_q = pl->sparse_kv = 0;
    if (kern->block_sparse) {
        /* no block mask for a call with neither mask nor causal */
        bool bm = cfg->mask != NULL || cfg->causal;
        pl->sparse_q = cfg->sparse_q != 0 ? cfg->sparse_q : bm ? 128 : 0;
        pl->sparse_kv = cfg->sparse_kv != 0 ? cfg->sparse_kv : bm ? 128 : 0;
        if ((pl->sparse_q != 0 && pl->sparse_q % br != 0)
            || (pl->sparse_kv != 0 && pl->sparse_kv % bc != 0))
            return "block_sparse: the block mask's block sizes must be "
                   "multiples of the tiles br and bc";
    }
    return NULL;
}

/* flex-decode's two merges of SPLITS programs into PL (merge_l over the
   launch's ROWS, merge_o over ROWS x D): the configuration inductor
   timed where the launch gives it (persistent reductions), else its
   rule; where neither is known, merge_unknown says why and the merges
   pass only a program's own values (rows of one program's keys). */
static void
flex_decode_merges(const fa_config *cfg, size_t splits, size_t rows,
                   size_t d, fa_plan *pl)
{
    if (splits <= 64 && rows > 1 && cfg->flex_merge_programs[0] != 0
        && cfg->flex_merge_programs[1] != 0) {
        pl->merge_unknown = fa_flex_merge_persistent(
            splits, rows, cfg->flex_merge_programs[0],
            cfg->flex_merge_threads[0], &pl->merge_l);
        if (pl->merge_unknown == NULL)
            pl->merge_unknown = fa_flex_merge_persistent(
                splits, rows * d, cfg->flex_merge_programs[1],
                cfg->flex_merge_threads[1], &pl->merge_o);
    } else {
        pl->merge_unknown = fa_flex_merge_rule(splits, rows, &pl->merge_l);
        if (pl->merge_unknown == NULL)
            pl->merge_unknown =
                fa_flex_merge_rule(splits, rows * d, &pl->merge_o);
    }
    if (pl->merge_unknown != NULL) {
        pl->merge_l = (fa_flex_merge){false, 64, 32, 2, 1, false, 0, 1, 1};
        pl->merge_o = pl->merge_l;
    }
}

/* The shape of CFG (not NULL) and its description: each size at least 1,
   d within the description's tiles, and the arrays' element and byte
   counts within size_t; NULL, or the reason it is refused. */
static const char *
plan_check_shape(const fa_config *cfg)
{
    const fa_shape *sh = &cfg->shape;
    const fa_kernel *kern;
    const char *why;
    bool ovf = false;
    size_t n;

    if (sh->batch == 0)
        return "shape: batch must be at least 1";
    if (sh->heads == 0)
        return "shape: heads must be at least 1";
    if (sh->nq == 0)
        return "shape: nq must be at least 1";
    if (sh->nk == 0)
        return "shape: nk must be at least 1";
    if (sh->d == 0)
        return "shape: d must be at least 1";
    if (sh->d > FA_MAX_HEAD_DIM)
        return "shape: d above FA_MAX_HEAD_DIM (4096)";
    if (cfg->kernel == NULL)
        return "kernel: none (fa_config_default or fa_config_kernel_default "
               "sets one)";
    kern = fa_config_kernel(cfg);
    why = fa_kernel_check(kern);
    if (why != NULL)
        return why;
    if (fa_kernel_tiles_for(kern, sh->d) == NULL)
        return kern->d_round > 1
                   ? "shape: fa2 needs d <= 256, the FA2 kernel's largest "
                     "head dimension"
                   : "shape: d above the kernel's largest head dimension";
    /* Every array of the interface and of the working memory is indexed
       by size_t: B H Nq Nk, B H N d and their byte sizes must fit. */
    n = fa_mul_size(
        fa_mul_size(fa_mul_size(sh->batch, sh->heads, &ovf), sh->nq, &ovf),
        sh->nk, &ovf);
    (void)fa_mul_size(n, 4 * sizeof(uint32_t), &ovf);
    if (ovf)
        return "shape: B*H*Nq*Nk elements overflow size_t";
    n = fa_mul_size(
        fa_mul_size(sh->batch, sh->heads, &ovf),
        fa_mul_size(sh->nq > sh->nk ? sh->nq : sh->nk, sh->d, &ovf), &ovf);
    (void)fa_mul_size(n, 4 * sizeof(uint32_t), &ovf);
    if (ovf)
        return "shape: B*H*N*d elements overflow size_t";
    return NULL;
}

/* The scale, order, ablations and fix of CFG: known values, parameters
   in range; NULL, or the reason they are refused. */
static const char *
plan_check_params(const fa_config *cfg)
{
    if (!(cfg->scale >= 0.0f) || isinf(cfg->scale))
        return "scale: must be finite and positive, or 0 for 1/sqrt(d)";
    if ((unsigned)cfg->order >= N_ORDERS)
        return "order: unknown value";
    if ((cfg->ablations & ~ABL_ALL) != 0)
        return "ablations: unknown bit set";
    if ((unsigned)cfg->fix.kind >= N_FIXES)
        return "fix: unknown kind";
    if (cfg->fix.kind == FA_FIX_BETA || cfg->fix.kind == FA_FIX_BETA_V2
        || cfg->fix.kind == FA_FIX_ALWAYS) {
        if (!(cfg->fix.beta > 1.0) || isinf(cfg->fix.beta))
            return "fix: beta must be finite and greater than 1";
        if ((unsigned)cfg->fix.zero_max > FA_ZERO_MAX_SHIFT)
            return "fix: unknown zero_max rule";
        if (cfg->fix.zero_max == FA_ZERO_MAX_SHIFT
            && (!(cfg->fix.eps_zero > 0.0) || isinf(cfg->fix.eps_zero)))
            return "fix: eps_zero must be finite and positive";
    }
    if ((cfg->fix.kind == FA_FIX_BETA || cfg->fix.kind == FA_FIX_EPS)
        && (!(cfg->fix.tol >= 0.0) || isinf(cfg->fix.tol)))
        return "fix: tol must be finite and at least 0";
    if (cfg->fix.kind == FA_FIX_EPS
        && (!(cfg->fix.eps > 0.0) || isinf(cfg->fix.eps)))
        return "fix: eps must be finite and positive";
    return NULL;
}

/* The exp and MMA models of CFG and its launch limits (dQ buffers, SMs,
   splits); NULL, or the reason they are refused. */
static const char *
plan_check_models(const fa_config *cfg)
{
    const char *why;

    if (fa_exp_model_check(cfg->exp) != NULL)
        return "exp: the model fails fa_exp_model_check";
    why =
        model_check(cfg->mma_qk, "mma_qk: the model fails sf_mma_model_check",
                    "mma_qk: the accumulator must be FP32");
    if (why == NULL)
        why = model_check(cfg->mma_pv,
                          "mma_pv: the model fails sf_mma_model_check",
                          "mma_pv: the accumulator must be FP32");
    if (why == NULL)
        why = model_check(cfg->mma_bwd,
                          "mma_bwd: the model fails sf_mma_model_check",
                          "mma_bwd: the accumulator must be FP32");
    if (why != NULL)
        return why;
    if (cfg->dq_splits > 65536)
        return "dq_splits: more than 65536";
    if (cfg->sms > 100000)
        return "sms: more than 100000";
    if (cfg->splits > 128
        && fa_config_kernel(cfg)->combine != FA_COMBINE_FLEX_DECODE)
        return "splits: more than 128 (the FA2 combine kernel's limit)";
    if (cfg->splits > 65536)
        return "splits: more than 65536";
    return NULL;
}

/* The attention mask M against the description KERN: how it enters the
   scores, and the value of a masked-out boolean element in PL; NULL, or
   the reason it is refused. */
static const char *
plan_mask(const fa_attn_mask *m, const fa_kernel *kern, fa_plan *pl)
{
    if (kern->bias_add == FA_BIAS_NONE)
        return "mask: the description takes no attention mask "
               "(bias_add \"none\")";
    if (kern->bias_add == FA_BIAS_ADD && !kern->score_scaled
        && !kern->score_prescale)
        return "mask: bias_add \"add\" needs scaled scores "
               "(score_scaled or score_prescale)";
    if (kern->bias_add == FA_BIAS_LOG2
        && (kern->score_scaled || kern->score_prescale))
        return "mask: bias_add \"log2\" needs unscaled scores "
               "(score_scaled false)";
    if (m->data == NULL || (unsigned)m->type > FA_AMASK_F16)
        return "mask: no data, or an unknown element type";
    if (kern->bool_fill == FA_BFILL_NEG_65504)
        pl->mask_false = pl->in_fmt == FA_FMT_F16
                             ? 0xC77FE000u  /* -65504 */
                             : 0xC7800000u; /* RN_bf16(-65504) */
    return NULL;
}

/* PL cleared, then its shape, the input format, the description KERN,
   the causal alignment, the models of exp, log and rcp, and the mask's
   fill; NULL, or the reason the input, log table or mask is refused. */
static const char *
plan_inputs(const fa_config *cfg, const fa_kernel *kern, fa_plan *pl)
{
    const fa_shape *sh = &cfg->shape;

    memset(pl, 0, sizeof *pl);
    pl->batch = sh->batch;
    pl->heads = sh->heads;
    pl->nq = sh->nq;
    pl->nk = sh->nk;
    pl->d = sh->d;
    if (cfg->input != NULL && cfg->input != &sf_format_bf16
        && cfg->input != &sf_format_f16)
        return "input: expected BF16 or FP16 (sf_format_bf16, "
               "sf_format_f16)";
    /* no model: the lg2 log is evaluated correctly rounded (the library
       reads no table; the command line always passes one in).  The
       table's entries (millions) are checked by fa_config_check, once:
       here, on every forward and backward, only its shape. */
    if (uses_lg2_table(cfg) && (cfg->log->kind != FA_LOG_LG2
                                || !lg2_table_shape_ok(cfg->log->table)))
        return LG2_UNUSABLE;
    pl->k = *kern;
    pl->causal = cfg->causal;
    pl->causal_shift = cfg->causal_top_left
                           ? 0
                           : (long long)sh->nk - (long long)sh->nq;
    pl->order = cfg->order;
    pl->abl = cfg->ablations;
    pl->exp = cfg->exp;
    pl->logm = cfg->log;
    pl->rcpm = cfg->rcp;
    pl->in = cfg->input == &sf_format_f16 ? &sf_format_f16 : &sf_format_bf16;
    pl->in_fmt = pl->in == &sf_format_f16 ? FA_FMT_F16 : FA_FMT_BF16;
    pl->mask = cfg->mask;
    pl->mask_false = FA_F32_NEG_INF;
    return cfg->mask != NULL ? plan_mask(cfg->mask, kern, pl) : NULL;
}

/* PL's formats ("in" resolved to the inputs'), the configuration's
   row-sum FMA and KV order, the MMA models, then the ablations as
   changes of the description. */
static void
plan_formats(const fa_config *cfg, const fa_kernel *kern, fa_plan *pl)
{
    /* the description's "in" formats are the inputs' */
    fa_fmt *f[] = {&pl->k.score_dot, &pl->k.score,  &pl->k.alpha,
                   &pl->k.p,         &pl->k.l,      &pl->k.acc,
                   &pl->k.o,         &pl->k.lse_fmt};

    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (*f[i] == FA_FMT_IN)
            *f[i] = pl->in_fmt;
    pl->k.rowsum_fma = cfg->fa2_rowsum_fma;
    pl->k.kv_reverse = cfg->order == FA_ORDER_REVERSE;
    pl->mqk =
        cfg->mma_qk != NULL ? cfg->mma_qk : sf_mma_preset_by_name(kern->mma_s);
    pl->mpv = cfg->mma_pv != NULL ? cfg->mma_pv
                                  : sf_mma_preset_by_name(kern->mma_pv);
    pl->mdp = sf_mma_preset_by_name(kern->mma_dp);
    pl->mdq = sf_mma_preset_by_name(kern->mma_dq);
    pl->mdk = sf_mma_preset_by_name(kern->mma_dk);
    pl->mdv = sf_mma_preset_by_name(kern->mma_dv);
    pl->mdelta = sf_mma_preset_by_name(kern->mma_delta);
    pl->mchain = sf_mma_preset_by_name("fma-chain");
    if (cfg->mma_bwd != NULL)
        pl->mdp = pl->mdq = pl->mdk = pl->mdv = pl->mdelta = cfg->mma_bwd;

    /* The ablations, as changes of the description. */
    if (cfg->ablations & (FA_ABL_FP32_PV | FA_ABL_FP32_O))
        pl->k.acc = FA_FMT_F32;
    if (cfg->ablations & (FA_ABL_FP32_O | FA_ABL_FP32_OCAST))
        pl->k.o = FA_FMT_F32;
    if ((cfg->ablations & FA_ABL_FP32_P) && pl->k.acc_update == FA_ACC_CHAIN) {
        /* P~ fed to the chain in FP32, without the roundings of its
           argument */
        pl->k.p = FA_FMT_F32;
        if (pl->k.exp_arg == FA_ARG_SUB_ONCE
            || pl->k.exp_arg == FA_ARG_SUB_ROUND)
            pl->k.exp_arg = FA_ARG_SUB;
    }
}

/* The tiles of PL: 0 in the description KT is N (forward) or the
   forward's tile (backward); the configuration's nonzero tiles override.
   *BR, *BC: the forward's tiles before clamping; *SPLITS: the split
   count asked for (0: the kernel's rule).  NULL, or the reason the
   tiles are refused. */
static const char *
plan_tiles(const fa_config *cfg, const fa_kernel_tiles *kt, size_t *br_out,
           size_t *bc_out, size_t *splits_out, fa_plan *pl)
{
    const fa_shape *sh = &cfg->shape;
    size_t br = cfg->br != 0 ? cfg->br : kt->br;
    size_t bc = cfg->bc != 0 ? cfg->bc : kt->bc;
    size_t brb = cfg->br_bwd != 0 ? cfg->br_bwd : kt->br_bwd;
    size_t bcb = cfg->bc_bwd != 0 ? cfg->bc_bwd : kt->bc_bwd;
    size_t splits = cfg->splits != 0 ? cfg->splits : pl->k.splits;

    if (brb == 0)
        brb = br;
    if (bcb == 0)
        bcb = bc;
    if (splits > 1) {
        /* the split kernel's own tiles */
        if (cfg->br == 0 && kt->br_split != 0)
            br = kt->br_split;
        if (cfg->bc == 0 && kt->bc_split != 0)
            bc = kt->bc_split;
    }
    if (pl->k.rowsum == FA_ROWSUM_QUAD
        || pl->k.rowsum == FA_ROWSUM_QUAD_BLOCK
        || pl->k.rowsum == FA_ROWSUM_QUAD_REDUCE
        || (fa_kernel_bwd_tiled(&pl->k)
            && pl->k.bwd_keys == FA_BKEYS_M_BLOCK))
        if (bc % 16 != 0 || bcb % 16 != 0 || brb % 16 != 0)
            return "tiles: fa2 needs bc, br_bwd and bc_bwd multiples "
                   "of 16 (the MMA k-slices)";
    if (cfg->ablations & FA_ABL_UNTILED) {
        br = brb = sh->nq;
        bc = bcb = sh->nk;
    }
    pl->br = clamp_tile(br, sh->nq);
    pl->bc = clamp_tile(bc, sh->nk);
    pl->br_bwd = clamp_tile(brb, sh->nq);
    pl->bc_bwd = clamp_tile(bcb, sh->nk);
    if (fa_kernel_bwd_tiled(&pl->k) && pl->k.bwd_dkv == FA_BDKV_CHAIN)
        pl->bc_bwd = sh->nk; /* one chain over all keys */
    pl->tc = (sh->nk + pl->bc - 1) / pl->bc;
    *br_out = br;
    *bc_out = bc;
    *splits_out = splits;
    return NULL;
}

/* flex_decoding's programs per query block, from the launch: its batch x
   KV heads and the GPU's multiprocessors (SPLITS: the count asked for,
   0 for the rule), its warps along the keys and its merges, in PL. */
static void
plan_flex_decode(const fa_config *cfg, size_t splits, fa_plan *pl)
{
    const fa_shape *sh = &cfg->shape;
    size_t g = cfg->launch_group > 1 ? cfg->launch_group
               : cfg->gqa_group > 1  ? cfg->gqa_group
                                     : 1;
    size_t bh = cfg->launch_bh != 0 ? cfg->launch_bh : sh->batch * sh->heads;
    size_t bm = 16;

    if (cfg->splits == 0)
        splits = fa_flex_decode_splits(cfg->sms, bh / g);
    /* BLOCK_M = max(16, next power of two of Nq G); Triton's mma layout
       of the [BLOCK_M, 64] scores puts the two warps side by side along
       the keys until BLOCK_M / 16 reaches 64 / 8 */
    while (bm < sh->nq * g)
        bm *= 2;
    pl->col_warps = bm < 128 && pl->k.rowsum_col_warps > 1
                        ? pl->k.rowsum_col_warps
                        : 1;
    pl->splits = splits;
    pl->blocks_per_split = 0;
    flex_decode_merges(cfg, splits, bh * sh->nq, sh->d, pl);
}

/* The split-KV of PL other than flex-decode's: SPLITS (0: one) split
   programs of ceil(Tc / SPLITS) KV blocks each; NULL, or the reason the
   split count is refused. */
static const char *
plan_splits(size_t splits, fa_plan *pl)
{
    if (splits == 0)
        splits = 1;
    if (splits > 1 && pl->k.rowsum != FA_ROWSUM_QUAD
        && pl->k.rowsum != FA_ROWSUM_QUAD_BLOCK)
        return "splits: split-KV needs a kernel with the quad row sum "
               "(the FA2 split kernel)";
    if (splits > pl->tc)
        return "splits: more splits than KV blocks";
    pl->splits = splits;
    pl->blocks_per_split = (pl->tc + splits - 1) / splits;
    return NULL;
}

/* The dQ buffers: the configuration's count, or the description's rule
   on the launch; the loop runs min(count, backward KV blocks) of them
   (the rest stay +0: adding +0 changes no sum that starts from +0, so no
   bit). */
static void
plan_dq_buffers(const fa_config *cfg, const fa_kernel *kern, fa_plan *pl)
{
    const fa_shape *sh = &cfg->shape;
    size_t nbuf = cfg->dq_splits;
    size_t tb = (sh->nk + pl->bc_bwd - 1) / pl->bc_bwd;

    if (nbuf == 0) {
        size_t sms = cfg->sms != 0 ? cfg->sms : FA_H200_SMS;
        /* no overflow: the shape is checked, launch_bh < 2^63 */
        size_t bh = cfg->launch_bh != 0 ? cfg->launch_bh
                                        : sh->batch * sh->heads;
        nbuf = kern->dq_buffers == FA_DQB_SMS ? (sms + bh - 1) / bh : 1;
    }
    pl->dq_buffers = nbuf;
    pl->dq_splits = nbuf < tb ? nbuf : tb;
}

/* The scale of PL in its forms (FP32, times log2 e, its square root),
   whether the scores are in the log2 domain, and the single-query GEMV
   rows of the description KERN for the launch. */
static void
plan_scale(const fa_config *cfg, const fa_kernel *kern, fa_plan *pl)
{
    const fa_shape *sh = &cfg->shape;
    uint32_t s = cfg->scale != 0.0f ? sf_host_float_bits(cfg->scale)
                                    : inv_sqrt_f32(sh->d);
    /* The kernel's float(softmax_scale * M_LOG2E): a double product,
       then one rounding to FP32. */
    float sf = sf_host_float(s);
    double sd = (double)sf * 1.4426950408889634074;

    pl->scale = s;
    pl->scale_log2 = f32_of_double(sd);
    pl->log2_domain = !kern->score_log2 && cfg->mask != NULL
                      && kern->bias_add == FA_BIAS_LOG2;
    if (kern->score_log2)
        /* scaled scores, the exponent's factor RN32(log2 e) */
        pl->scale_log2 = FA_F32_LOG2E;
    else if (pl->log2_domain)
        /* the scores are in the log2 domain, scaled */
        pl->scale_log2 = FA_F32_ONE;
    /* PyTorch's math backend: sqrt of the FP64 scale (1/sqrt(d) in
       FP64 by default), rounded to FP32 when it multiplies an FP32
       tensor */
    pl->sqrt_scale = f32_of_double(sqrt(
        cfg->scale != 0.0f ? (double)sf : 1.0 / sqrt((double)sh->d)));
    memset(&pl->gemv_s, 0, sizeof pl->gemv_s);
    memset(&pl->gemv_pv, 0, sizeof pl->gemv_pv);
    if (sh->nq == 1) {
        size_t bh = cfg->launch_bh != 0 ? cfg->launch_bh
                                        : sh->batch * sh->heads;
        const fa_gemv_row *gr = fa_kernel_gemv_for(kern, sh->d, sh->nk, bh);
        if (gr != NULL) {
            pl->gemv_s = gr->s;
            pl->gemv_pv = gr->pv;
        }
    }
}

/* decode_log2_scores: the forward of one query row from
   decode_wide_min_nk keys holds its scores in the log2 domain, t =
   RN32(RN32(S scale) RN32(log2 e)) (the forward forms them; without a
   mask), its softmax there (sl2 = 1) and the fix's parameters in its
   units; PL changed only where this applies (then true).  The forward's plan only: the
   backward keeps the description's. */
bool
fa_plan_decode_log2(const fa_config *cfg, fa_plan *pl)
{
    const fa_kernel *k = &pl->k;
    sf_env env = SF_ENV_IEEE;

    /* with a mask, bias_add "log2" already puts the scores there */
    if (!k->decode_log2_scores || pl->nq != 1 || k->decode_wide_min_nk == 0
        || pl->nk < k->decode_wide_min_nk || cfg->mask != NULL
        || pl->log2_domain || k->score_log2 || k->score_scaled)
        return false;
    pl->scale_log2 = FA_F32_ONE;
    pl->tol = fa_mul(f32_of_double(cfg->fix.tol), FA_F32_LOG2E, &env);
    pl->eps = fa_mul(f32_of_double(cfg->fix.eps), FA_F32_LOG2E, &env);
    pl->eps_zero =
        fa_mul(f32_of_double(cfg->fix.eps_zero), FA_F32_LOG2E, &env);
    return true;
}

/* The fix's parameters of PL in FP32, in the units of the scores the
   description KERN holds (after plan_scale). */
static void
plan_fix(const fa_config *cfg, const fa_kernel *kern, fa_plan *pl)
{
    sf_env env = SF_ENV_IEEE;

    pl->fix = cfg->fix.kind;
    pl->zero_max = cfg->fix.zero_max;
    pl->beta = f32_of_double(cfg->fix.beta);
    pl->tol = f32_of_double(cfg->fix.tol);
    pl->eps = f32_of_double(cfg->fix.eps);
    pl->eps_zero = f32_of_double(cfg->fix.eps_zero);
    if (pl->log2_domain) {
        /* scores in the log2 domain: x in scaled units is
           RN(x RN(log2 e)) there */
        pl->tol = fa_mul(pl->tol, FA_F32_LOG2E, &env);
        pl->eps = fa_mul(pl->eps, FA_F32_LOG2E, &env);
        pl->eps_zero = fa_mul(pl->eps_zero, FA_F32_LOG2E, &env);
    } else if (!kern->score_scaled && !kern->score_log2) {
        /* fa2 holds S unscaled: a shift of x in scaled units is
           x / scale in its units. */
        pl->tol = fa_div(pl->tol, pl->scale, &env);
        pl->eps = fa_div(pl->eps, pl->scale, &env);
        pl->eps_zero = fa_div(pl->eps_zero, pl->scale, &env);
    }
}

/* The working memory of PL within size_t, and for flex-decode with no
   known merge, whether a merge would combine several programs' values;
   NULL, or the reason the plan is refused. */
static const char *
plan_check_memory(const fa_plan *pl)
{
    const char *why = NULL;
    size_t *list;
    unsigned char *part;
    long *owner;

    if (fa_forward_bytes(pl) == SIZE_MAX || fa_backward_bytes(pl) == SIZE_MAX)
        return "shape: the working memory size overflows size_t";
    if (pl->k.combine != FA_COMBINE_FLEX_DECODE || pl->merge_unknown == NULL)
        return NULL;
    list = malloc(pl->tc * sizeof *list);
    part = malloc(2 * pl->tc);
    owner = malloc(pl->tc * sizeof *owner);
    why = list == NULL || part == NULL || owner == NULL
              ? "flex-decode: out of memory"
          : fa_flex_decode_spans(pl, list, part, part + pl->tc, owner)
              ? pl->merge_unknown
              : NULL;
    free(list);
    free(part);
    free(owner);
    return why;
}

const char *
fa_plan_init(const fa_config *cfg, fa_plan *pl)
{
    const fa_kernel *kern;
    const char *why;
    size_t br, bc, splits;

    if (cfg == NULL)
        return "config: NULL";
    if ((why = plan_check_shape(cfg)) != NULL
        || (why = plan_check_params(cfg)) != NULL
        || (why = plan_check_models(cfg)) != NULL)
        return why;
    kern = fa_config_kernel(cfg);
    if ((why = plan_inputs(cfg, kern, pl)) != NULL)
        return why;
    plan_formats(cfg, kern, pl);
    why = plan_tiles(cfg, fa_kernel_tiles_for(kern, cfg->shape.d), &br, &bc,
                     &splits, pl);
    if (why == NULL)
        why = plan_flex(cfg, kern, br, bc, pl);
    if (why != NULL)
        return why;
    if (pl->k.combine == FA_COMBINE_FLEX_DECODE)
        plan_flex_decode(cfg, splits, pl);
    else if ((why = plan_splits(splits, pl)) != NULL)
        return why;
    plan_dq_buffers(cfg, kern, pl);
    plan_scale(cfg, kern, pl);
    plan_fix(cfg, kern, pl);
    return plan_check_memory(pl);
}

const char *
fa_config_check(const fa_config *cfg)
{
    fa_plan pl;
    const char *why = fa_plan_init(cfg, &pl);

    if (why == NULL && uses_lg2_table(cfg)
        && fa_lg2_table_check(cfg->log->table) != NULL)
        return LG2_UNUSABLE;
    return why;
}

const char *
fa_plan_capture_check(const fa_plan *pl, const fa_capture *cap)
{
    if (cap != NULL && pl->splits > 1
        && (cap->m != NULL || cap->l != NULL || cap->obar != NULL))
        return "capture: m, l and obar are not defined for split-KV";
    if (cap == NULL || !cap->trace)
        return NULL;
    if (cap->events == NULL || cap->events->fn == NULL)
        return "capture: trace set without an event sink";
    if (cap->trace_b >= pl->batch || cap->trace_h >= pl->heads
        || cap->trace_row >= pl->nq || cap->trace_col >= pl->d)
        return "capture: the traced element is out of range";
    return NULL;
}

const char *
fa_capture_check(const fa_config *cfg, const fa_capture *cap)
{
    fa_plan pl;
    const char *why = fa_plan_init(cfg, &pl);

    return why != NULL ? why : fa_plan_capture_check(&pl, cap);
}

uint32_t
fa_scale_bits(const fa_config *cfg)
{
    fa_plan pl;

    return fa_plan_init(cfg, &pl) == NULL ? pl.scale : 0;
}

int
fa_config_tiles(const fa_config *cfg, size_t *br, size_t *bc, size_t *tc,
                size_t *splits)
{
    fa_plan pl;

    if (fa_plan_init(cfg, &pl) != NULL)
        return -1;
    if (br != NULL)
        *br = pl.br;
    if (bc != NULL)
        *bc = pl.bc;
    if (tc != NULL)
        *tc = pl.tc;
    if (splits != NULL)
        *splits = pl.splits;
    return 0;
}

size_t
fa_config_dq_buffers(const fa_config *cfg)
{
    fa_plan pl;

    return fa_plan_init(cfg, &pl) == NULL ? pl.dq_buffers : 0;
}

uint32_t
fa_scale_log2_bits(const fa_config *cfg)
{
    fa_plan pl;

    return fa_plan_init(cfg, &pl) == NULL ? pl.scale_log2 : 0;
}

/*----------------------------------------------------------------------------
 * Working memory.
 *--------------------------------------------------------------------------*/
size_t
fa_mul_size(size_t a, size_t b, bool *ovf)
{
    if (a != 0 && b > SIZE_MAX / a) {
        *ovf = true;
        return SIZE_MAX;
    }
    return a * b;
}

void *
fa_ws_take(fa_ws *ws, size_t n, size_t size)
{
    size_t bytes = fa_mul_size(n, size, &ws->overflow);
    size_t start = ws->used;
    void *p;

    /* 64-byte aligned pieces */
    if (bytes > SIZE_MAX - 63 || start > SIZE_MAX - 63 - bytes) {
        ws->overflow = true;
        return NULL;
    }
    ws->used = start + ((bytes + 63) & ~(size_t)63);
    if (ws->base == NULL || ws->overflow)
        return NULL;
    p = ws->base + start;
    return p;
}

size_t
fa_workspace_bytes(const fa_config *cfg)
{
    fa_plan pl;
    size_t f, b;

    if (fa_plan_init(cfg, &pl) != NULL)
        return 0;
    f = fa_forward_bytes(&pl);
    b = fa_backward_bytes(&pl);
    return f > b ? f : b;
}

/*----------------------------------------------------------------------------
 * Output formats.
 *--------------------------------------------------------------------------*/
const sf_format *
fa_output_format(const fa_config *cfg, const char *name)
{
    static const char *const names[] = {"o",    "lse", "delta", "dq", "dk",
                                        "dv",   "s",   "p",     "m",  "l",
                                        "obar", "dp",  "ds"};
    const sf_format *f32 = &sf_format_f32;
    fa_plan pl;
    const fa_kernel *k;
    bool tiled;
    int i;

    if (cfg == NULL || fa_config_kernel(cfg) == NULL)
        return NULL;
    i = find_name(names, sizeof names / sizeof names[0], name);
    if (i < 0)
        return NULL;
    if (fa_plan_init(cfg, &pl) != NULL) {
        /* the formats do not depend on the shape: ask with a small one */
        fa_config c = *cfg;
        c.shape.batch = c.shape.heads = c.shape.nq = c.shape.nk = 1;
        c.shape.d = 64;
        c.br = c.bc = c.br_bwd = c.bc_bwd = 0;
        c.splits = 0;
        if (fa_plan_init(&c, &pl) != NULL)
            return NULL;
    }
    k = &pl.k;
    tiled = fa_kernel_bwd_tiled(k);
    switch (i) {
    case 0: /* o */
        return fa_fmt_format(k->o);
    case 1: /* lse */
        return fa_fmt_format(k->lse_fmt);
    case 9: /* l */
        return fa_fmt_format(k->l);
    case 2: /* delta */
        return tiled && k->bwd_delta == FA_BDELTA_BF16_SUM ? &sf_format_bf16
                                                            : f32;
    case 11: /* dp */
        return tiled ? fa_fmt_format(k->bwd_dp) : f32;
    case 12: /* ds */
        return tiled && k->bwd_ds == FA_BDS_BF16_OPS ? &sf_format_bf16 : f32;
    case 3: /* dq */
    case 4: /* dk */
    case 5: /* dv */
        /* the tiled backward's bwd_out ("in": the inputs' format); math:
           the inputs' format; flex: BF16 */
        if (tiled)
            return fa_fmt_format(k->bwd_out == FA_FMT_IN ? pl.in_fmt
                                                         : k->bwd_out);
        return k->bwd == FA_BWD_MATH ? fa_fmt_format(pl.in_fmt)
                                     : &sf_format_bf16;
    case 6: /* s */
    case 8: /* m */
        return fa_fmt_format(k->score);
    case 7: /* p */
        return fa_fmt_format(k->p);
    default: /* obar */
        return fa_fmt_format(k->acc);
    }
}

/*----------------------------------------------------------------------------
 * Formats.
 *--------------------------------------------------------------------------*/
const sf_format *
fa_fmt_format(fa_fmt f)
{
    switch (f) {
    case FA_FMT_BF16:
        return &sf_format_bf16;
    case FA_FMT_F16:
        return &sf_format_f16;
    default:
        return &sf_format_f32;
    }
}

uint32_t
fa_round(fa_fmt f, uint32_t x, sf_env *env)
{
    switch (f) {
    case FA_FMT_BF16:
        return fa_rbf(x, env);
    case FA_FMT_F16: {
        sf_f16 h = sf_f32_to_f16((sf_f32){x}, SF_RNE, env);
        return sf_f16_to_f32(h, SF_RNE, env).bits;
    }
    default:
        return x;
    }
}

uint32_t
fa_sub_once(fa_fmt f, uint32_t x, uint32_t y, sf_env *env)
{
    switch (f) {
    case FA_FMT_BF16:
        return fa_bf16_sub(x, y, env);
    case FA_FMT_F16: {
        /* x, y on the FP16 grid: the exact difference rounded once */
        sf_env q = *env;
        sf_f16 a = sf_f32_to_f16((sf_f32){x}, SF_RNE, &q);
        sf_f16 b = sf_f32_to_f16((sf_f32){y}, SF_RNE, &q);
        return sf_f16_to_f32(sf_f16_sub(a, b, SF_RNE, env), SF_RNE, env).bits;
    }
    default:
        return fa_sub(x, y, env);
    }
}

uint32_t
fa_mask_bits(fa_mask_fill m)
{
    return m == FA_MASK_BF16_LOWEST ? FA_F32_BF16_NEG_MAX : FA_F32_NEG_INF;
}

uint32_t
fa_bias_score(const fa_plan *pl, uint32_t s, uint32_t b, sf_env *env)
{
    if (pl->k.score_log2) {
        /* FlexAttention: qk *= SM_SCALE, the soft-cap, then the
           score_mod's addition (a mask_mod's -inf alike) */
        uint32_t t = fa_mul(s, pl->scale, env);
        if (pl->softcap)
            t = fa_mul(fa_cuda_tanhf_ftz(pl->exp, pl->rcpm,
                                         fa_mul(t, pl->cap_rcp, env)),
                       pl->cap, env);
        /* t + (+0) is t (and +0 for -0), exactly and without a flag:
           the common case of no score_mod, off the general add path */
        if (b == FA_F32_ZERO && !fa_is_nan(t))
            return t == FA_F32_SIGN ? FA_F32_ZERO : t;
        return fa_add(t, b, env);
    }
    if (pl->log2_domain)
        return fa_mul(fa_fma(s, pl->scale, b, env), FA_F32_LOG2E, env);
    return fa_add(s, b, env);
}

const char *
fa_config_backward_refusal(const fa_config *cfg, size_t group)
{
    fa_plan pl;
    const char *why = fa_plan_init(cfg, &pl);

    if (why != NULL)
        return why;
    if (group > 1 && pl.k.gqa_dkv == FA_GQA_NONE)
        return "grouped-query heads: the description has no rule for the "
               "sum of dK and dV over a group (gqa_dkv \"none\")";
    if (cfg->gqa_group > 1 && pl.k.gqa_dkv != FA_GQA_CHAIN)
        return "gqa_group: the description's gqa_dkv is not \"chain\" (its "
               "backward runs each query head against repeated K and V)";
    if (cfg->gqa_group > 1 && pl.heads % cfg->gqa_group != 0)
        return "gqa_group: the heads are not a multiple of the group";
    if (pl.k.gqa_dkv == FA_GQA_CHAIN && pl.k.bwd != FA_BWD_FLEX)
        return "gqa_dkv \"chain\": only FlexAttention's backward (bwd "
               "\"flex\") walks a group's heads";
    if (pl.k.bwd == FA_BWD_FLEX
        && ((pl.sparse_q != 0 && pl.sparse_q % 128 != 0)
            || (pl.sparse_kv != 0 && pl.sparse_kv % 128 != 0)))
        return "FlexAttention's backward: block mask blocks other than "
               "multiples of 128 rows and keys (its programs' BLOCK_M2 and "
               "BLOCK_N1) are not modelled";
    if (pl.k.bwd == FA_BWD_FLEX && pl.d > 512)
        return "FlexAttention's backward: head dimensions above 512 are "
               "not modelled";
    return NULL;
}
