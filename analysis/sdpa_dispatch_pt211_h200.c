/* sdpa_dispatch_pt211_h200.c -- PyTorch 2.11's SDPA backend choice on a
   CUDA device, as measured on an H200 (the rule: the header) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "analysis/sdpa_dispatch_pt211_h200.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

sdpa_case
sdpa_case_default(void)
{
    sdpa_case c;
    memset(&c, 0, sizeof c);
    c.rank = 4;
    c.batch = 1;
    c.heads = 1;
    c.kv_heads = 1;
    c.dtype = SDPA_DT_BF16;
    c.mask = SDPA_MASK_NONE;
    c.enabled = SDPA_EN_ALL;
    c.sm_major = 9;
    c.sm_minor = 0;
    c.cudnn_version = 91900;
    return c;
}

const char *
sdpa_backend_name(sdpa_backend b)
{
    switch (b) {
    case SDPA_BACKEND_MATH:
        return "math";
    case SDPA_BACKEND_FLASH:
        return "flash";
    case SDPA_BACKEND_EFFICIENT:
        return "efficient";
    case SDPA_BACKEND_CUDNN:
        return "cudnn";
    case SDPA_BACKEND_ERROR:
    default:
        return "error";
    }
}

const char *
sdpa_backend_description(sdpa_backend b)
{
    switch (b) {
    case SDPA_BACKEND_CUDNN:
        return "cudnn";
    case SDPA_BACKEND_FLASH:
        return "fa2";
    case SDPA_BACKEND_EFFICIENT:
        return "efficient";
    case SDPA_BACKEND_MATH:
        return "math";
    default:
        return NULL;
    }
}

static const char *
dtype_name(sdpa_dtype t)
{
    return t == SDPA_DT_BF16 ? "bf16" : t == SDPA_DT_F16 ? "f16" : "f32";
}

static int64_t
value_dim(const sdpa_case *c)
{
    return c->dv > 0 ? c->dv : c->d;
}

/* Compute capability within [lo_major.lo_minor, hi_major.hi_minor]. */
static bool
sm_in(const sdpa_case *c, int lo_major, int lo_minor, int hi_major,
      int hi_minor)
{
    int v = c->sm_major * 10 + c->sm_minor;
    return v >= lo_major * 10 + lo_minor && v <= hi_major * 10 + hi_minor;
}

#define FAIL(...)                                                             \
    do {                                                                      \
        if (why != NULL && size > 0)                                          \
            snprintf(why, size, __VA_ARGS__);                                 \
        return false;                                                         \
    } while (0)

/* The checks every fused backend makes on dense inputs: nonzero lengths,
   unit last-dimension stride, equal batch (one batch size is given, so
   always), and the heads: with GQA (where the backend has it) the query
   heads a multiple of the key/value heads, else all equal. */
static bool
dense_checks(const sdpa_case *c, bool gqa_ok, char *why, unsigned size)
{
    if (c->nq <= 0 || c->nk <= 0)
        FAIL("a zero sequence length");
    if (c->last_dim_strided)
        FAIL("an input's last dimension is not contiguous");
    if (c->enable_gqa && gqa_ok) {
        if (c->kv_heads <= 0 || c->heads % c->kv_heads != 0)
            FAIL("%lld query heads are not a multiple of %lld key/value "
                 "heads",
                 (long long)c->heads, (long long)c->kv_heads);
        return true;
    }
    if (c->heads != c->kv_heads)
        FAIL("%lld query heads and %lld key/value heads%s",
             (long long)c->heads, (long long)c->kv_heads,
             c->enable_gqa ? " (no grouped-query support)"
                           : " without enable_gqa");
    return true;
}

static bool
can_cudnn(const sdpa_case *c, char *why, unsigned size)
{
    int64_t dv = value_dim(c);
    int64_t limit;
    bool sm90_10x =
        (c->sm_major == 9 && c->sm_minor == 0) || c->sm_major == 10;
    if (!(c->enabled & SDPA_EN_CUDNN))
        FAIL("disabled");
    if (c->cudnn_version < 90000)
        FAIL("cuDNN older than 9.0.0");
    if (c->dropout > 0.0 && c->cudnn_version > 91100
        && c->cudnn_version < 91400)
        FAIL("dropout with cuDNN 9.11 to 9.13");
    if (c->rank != 4)
        FAIL("inputs not 4-dimensional");
    if (c->deterministic && !c->deterministic_warn_only)
        FAIL("deterministic algorithms requested");
    if (c->dtype == SDPA_DT_F32)
        FAIL("dtype f32 (needs f16 or bf16)");
    if (c->mask != SDPA_MASK_NONE && c->mask_requires_grad)
        FAIL("attn_mask requires grad");
    if (!sm_in(c, 8, 0, 12, 1))
        FAIL("sm %d.%d outside sm80..sm121", c->sm_major, c->sm_minor);
    if (!dense_checks(c, true, why, size))
        return false;
    limit = sm90_10x ? 256 : 128;
    if (c->d > limit || dv > limit)
        FAIL("head dim %lld above %lld", (long long)(c->d > dv ? c->d : dv),
             (long long)limit);
    if (c->d % 8 != 0 || dv % 8 != 0)
        FAIL("head dim %lld not a multiple of 8",
             (long long)(c->d % 8 != 0 ? c->d : dv));
    if (c->nk == 1)
        FAIL("one key");
    if (c->dropout > 0.0 && c->nq == 1)
        FAIL("one query row with dropout");
    return true;
}

static bool
can_flash(const sdpa_case *c, char *why, unsigned size)
{
    int64_t dv = value_dim(c);
    if (!(c->enabled & SDPA_EN_FLASH))
        FAIL("disabled");
    if (c->rank != 4)
        FAIL("inputs not 4-dimensional");
    if (c->mask != SDPA_MASK_NONE)
        FAIL("attn_mask given");
    if (dv != c->d || c->d > 256)
        FAIL("head dims %lld/%lld (need equal, at most 256)", (long long)c->d,
             (long long)dv);
    if (!sm_in(c, 8, 0, 12, 1))
        FAIL("sm %d.%d outside sm80..sm121", c->sm_major, c->sm_minor);
    if (c->requires_grad && (sm_in(c, 8, 6, 8, 9) || sm_in(c, 12, 0, 12, 1))
        && !(c->d <= 192 || (c->dropout <= 0.0 && c->d > 224)))
        FAIL("training with head dim %lld on sm%d%d", (long long)c->d,
             c->sm_major, c->sm_minor);
    if (c->causal && c->nq != c->nk)
        FAIL("is_causal with %lld query and %lld key rows", (long long)c->nq,
             (long long)c->nk);
    if (c->dtype == SDPA_DT_F32)
        FAIL("dtype f32 (needs f16 or bf16)");
    return dense_checks(c, true, why, size);
}

static bool
can_efficient(const sdpa_case *c, char *why, unsigned size)
{
    int64_t dv = value_dim(c);
    int64_t align;
    if (!(c->enabled & SDPA_EN_EFFICIENT))
        FAIL("disabled");
    if (!sm_in(c, 5, 0, 12, 1))
        FAIL("sm %d.%d outside sm50..sm121", c->sm_major, c->sm_minor);
    if (c->rank != 4)
        FAIL("inputs not 4-dimensional");
    /* the GEMM alignment: 128 bits on tensor cores, at least 4 elements
       from sm80 on */
    if (c->dtype == SDPA_DT_F32)
        align = c->sm_major >= 8 ? 4 : 1;
    else
        align = 8;
    if (c->d <= 0 || dv <= 0 || c->d % align != 0 || dv % align != 0)
        FAIL("head dim %lld not a multiple of %lld",
             (long long)(c->d % align != 0 ? c->d : dv), (long long)align);
    if (!dense_checks(c, false, why, size))
        return false;
    if (c->dtype == SDPA_DT_BF16 && c->sm_major < 8)
        FAIL("bf16 before sm80");
    return true;
}

bool
sdpa_can_use_pt211_h200(sdpa_backend b, const sdpa_case *c, char *why,
                        unsigned size)
{
    if (why != NULL && size > 0)
        why[0] = '\0';
    switch (b) {
    case SDPA_BACKEND_CUDNN:
        return can_cudnn(c, why, size);
    case SDPA_BACKEND_FLASH:
        return can_flash(c, why, size);
    case SDPA_BACKEND_EFFICIENT:
        return can_efficient(c, why, size);
    case SDPA_BACKEND_MATH:
        if (!(c->enabled & SDPA_EN_MATH))
            FAIL("disabled");
        return true;
    case SDPA_BACKEND_ERROR:
    default:
        FAIL("not a backend");
    }
}

/* FlashAttention-2's split count for the forward (its
   num_splits_heuristic, with twice the SM count as PyTorch passes it):
   1 for the one-pass kernel. */
static int
flash_splits(const sdpa_case *c, int64_t hdim)
{
    const int64_t num_sms = 2 * 132;
    int64_t nq = c->nq, heads = c->heads;
    int64_t block_n = hdim <= 64 ? 256 : (hdim <= 128 ? 128 : 64);
    int64_t n_blocks, bhm, max_splits, s, best_s = 1;
    double eff[129], best = 0.0;
    if (c->dropout > 0.0)
        return 1; /* no split-KV kernel with dropout */
    /* one query row with grouped heads: the query groups become rows */
    if (nq == 1 && c->enable_gqa && c->kv_heads > 0 && c->heads > c->kv_heads
        && c->d % 8 == 0) {
        nq = c->heads / c->kv_heads;
        heads = c->kv_heads;
    }
    n_blocks = (c->nk + block_n - 1) / block_n;
    bhm = c->batch * heads * ((nq + 63) / 64);
    if ((double)bhm >= 0.8 * (double)num_sms)
        return 1;
    max_splits = 128;
    if (max_splits > num_sms)
        max_splits = num_sms;
    if (max_splits > n_blocks)
        max_splits = n_blocks;
    for (s = 1; s <= max_splits; s++) {
        bool eligible =
            s == 1 || (n_blocks + s - 1) / s != (n_blocks + s - 2) / (s - 1);
        eff[s] = 0.0;
        if (eligible) {
            double waves = (double)(bhm * s) / (double)num_sms;
            eff[s] = waves / ceil(waves);
        }
        if (eff[s] > best)
            best = eff[s];
    }
    for (s = 1; s <= max_splits; s++) {
        bool eligible =
            s == 1 || (n_blocks + s - 1) / s != (n_blocks + s - 2) / (s - 1);
        if (eligible && eff[s] >= 0.85 * best) {
            best_s = s;
            break;
        }
    }
    return (int)best_s;
}

/* cuDNN 9.19's decode engines on the H200 (132 SMs), measured launch by
   launch (tests/data/gpu/cudnn/decode_splits_h200.json, 212 shapes, and
   53 earlier decode launches; doc/notes/gpu-crosscheck-log.md, "Crafted decode
   rows" item 1).  With Hkv the key/value heads, G = H / Hkv and
   dm = max(d, dv):

   - up to 256 keys knob 3 (64x64), grid [1, H, B]; with is_causal from
     257 keys knob 6 (128x64), grid [1, H, B] and no reduction at any Nk
     (O is V's first row: top-left alignment); otherwise knob 35
     (16x128x{64, 128, 256} for dm <= 64, <= 128, above), grid
     [S', Y, B] with Y = Hkv ceil(G / 16) (a group's query heads in
     tiles of 16 rows: H 32 on 1 key head: 2; 34 on 2: 4; 256 on 16: 16);
   - R = B Y CTA rows.  S = 1 when Nk <= 512 or 2 R > 132 (R 66: 2,
     67: 1); else S is the largest power of two with S <= 64,
     ceil(Nk / S) >= 128 (Nk > 127 S: 1016 keys 4, 1017 8; 2032/2033
     8/16; 4064/4065 16/32; 8128/8129 32/64) and S R < 264 (R 8: 32,
     9: 16; 16/17: 16/8; 32/33: 8/4; 65/66: 4/2);
   - S' = S for dm <= 128, 2 S for dm > 128 when S > 1 (160, 192, 256:
     8 heads at 1017 keys 16, at 4096 keys 64; 33 heads at 4096 keys 8);
     lean_reduction_kernel (grid [1, H, B]) follows iff S' > 1.  The
     split count (the choice's splits) is S: whether the x256 engine's
     2 S CTAs split the keys 2 S ways (64-key tiles?) or pair up over the
     head dim is not measured.

   Pinned by the data: the 512/513 step, every key threshold for S = 8
   to 64 (one head), the cap 64 (one head, up to 131072 keys), the R
   bounds above for S = 2 to 32 (S R is a multiple of 4 for S >= 4, so
   < 264 and <= 260 agree), Y for the G listed, B and H interchangeable
   in R.  Not pinned: the cap with more than one row at Nk > 8128 (the
   rule allows S = 64 up to R = 4); dm > 128 with S = 1 (S' taken 1) or
   at other shapes; knob 6 with GQA, d > 64 or 257 to 512 keys (its Y taken
   H); knob 3 with GQA (Y taken H). */
static int64_t
decode_grid(const sdpa_case *c, int64_t grid[3])
{
    int64_t dv = value_dim(c);
    int64_t dm = c->d > dv ? c->d : dv;
    int64_t hkv = c->enable_gqa ? c->kv_heads : c->heads;
    int64_t y, rows, s = 1;
    grid[0] = grid[1] = grid[2] = 0;
    if (c->nq != 1)
        return 1;
    grid[2] = c->batch;
    grid[0] = 1;
    if (c->nk <= 256 || c->causal || hkv <= 0) {
        grid[1] = c->heads;
        return 1;
    }
    y = hkv * ((c->heads / hkv + 15) / 16);
    rows = c->batch * y;
    grid[1] = y;
    if (c->nk <= 512 || rows <= 0 || 2 * rows > 132)
        return 1;
    while (2 * s <= 64 && 2 * s * rows < 264 && c->nk > 127 * 2 * s)
        s *= 2;
    grid[0] = dm > 128 && s > 1 ? 2 * s : s;
    return s;
}

void
sdpa_cudnn_decode_grid_pt211_h200(const sdpa_case *c, int64_t grid[3])
{
    decode_grid(c, grid);
}

unsigned
sdpa_cudnn_decode_splits_pt211_h200(const sdpa_case *c)
{
    int64_t g[3];
    return (unsigned)decode_grid(c, g);
}

static void
variant_of(sdpa_backend b, const sdpa_case *c, char *v, size_t size)
{
    int64_t dv = value_dim(c);
    int64_t dm = c->d > dv ? c->d : dv;
    switch (b) {
    case SDPA_BACKEND_CUDNN:
        if (c->nq == 1) {
            /* decode: cuDNN's sm80 WMMA engines (seen: knob 3 up to 256
               keys, knob 6 for is_causal from 257, else knob 35 from
               257, a lean-reduction pass after it when the engine splits
               the keys: sdpa_cudnn_decode_grid_pt211_h200) */
            long long dt = dm <= 64 ? 64 : dm <= 128 ? 128 : 256;
            if (c->nk <= 256)
                snprintf(v, size,
                         "sm80_flash_fprop_wmma_f16_knob_3_64x64x%lld", dt);
            else if (c->causal)
                snprintf(v, size,
                         "sm80_flash_fprop_wmma_f16_knob_6_128x64x%lld", dt);
            else
                snprintf(v, size,
                         "sm80_flash_fprop_wmma_f16_knob_35_16x128x%lld%s", dt,
                         sdpa_cudnn_decode_splits_pt211_h200(c) > 1
                             ? " + lean_reduction"
                             : "");
        } else {
            long long dt = (long long)((dm + 63) / 64 * 64);
            snprintf(v, size, "sm90_flash_fprop_wgmma_f16_knob_7_64x128x%lld",
                     dt);
        }
        break;
    case SDPA_BACKEND_FLASH: {
        int64_t p = (c->d + 7) / 8 * 8; /* the head dim padded to 8 */
        int64_t h = p <= 32    ? 32
                    : p <= 64  ? 64
                    : p <= 96  ? 96
                    : p <= 128 ? 128
                    : p <= 160 ? 160
                    : p <= 192 ? 192
                    : p <= 224 ? 224
                               : 256;
        snprintf(v, size, "%s hdim %lld",
                 flash_splits(c, h) > 1 ? "flash_fwd_splitkv_kernel"
                                        : "flash_fwd_kernel",
                 (long long)h);
        break;
    }
    case SDPA_BACKEND_EFFICIENT: {
        const char *tile;
        if (dm <= 64)
            tile = "64x64_rf";
        else if (dm <= 128)
            tile = c->dtype == SDPA_DT_F32 ? "32x128_rf" : "64x128_rf";
        else
            tile = "32x128_gmem";
        snprintf(v, size, "fmha_cutlassF_%s_aligned_%s_sm80",
                 dtype_name(c->dtype), tile);
        break;
    }
    case SDPA_BACKEND_MATH:
        snprintf(v, size, "%s",
                 c->nq == 1 ? "fp32 gemv+softmax" : "fp32 gemm+softmax");
        break;
    case SDPA_BACKEND_ERROR:
    default:
        v[0] = '\0';
        break;
    }
}

sdpa_backend
sdpa_choose_pt211_h200(const sdpa_case *c, sdpa_choice *out)
{
    static const sdpa_backend cudnn_first[4] = {
        SDPA_BACKEND_CUDNN, SDPA_BACKEND_FLASH, SDPA_BACKEND_EFFICIENT,
        SDPA_BACKEND_MATH};
    static const sdpa_backend flash_first[4] = {
        SDPA_BACKEND_FLASH, SDPA_BACKEND_EFFICIENT, SDPA_BACKEND_MATH,
        SDPA_BACKEND_CUDNN};
    const sdpa_backend *order;
    bool prefer_cudnn =
        c->cudnn_version > 91500 && (c->sm_major == 9 || c->sm_major == 10);
    size_t used = 0;
    int i;

    memset(out, 0, sizeof *out);
    out->backend = SDPA_BACKEND_ERROR;
    if (!(c->enabled & SDPA_EN_ALL)) {
        snprintf(out->reason, sizeof out->reason, "every backend disabled");
        return out->backend;
    }
    order = prefer_cudnn ? cudnn_first : flash_first;
    for (i = 0; i < 4; i++) {
        char why[160];
        if (sdpa_can_use_pt211_h200(order[i], c, why, sizeof why)) {
            out->backend = order[i];
            variant_of(order[i], c, out->variant, sizeof out->variant);
            if (order[i] == SDPA_BACKEND_CUDNN)
                out->splits = sdpa_cudnn_decode_splits_pt211_h200(c);
            if (used == 0)
                snprintf(out->reason, sizeof out->reason,
                         "first in the order (%s)",
                         prefer_cudnn ? "cuDNN preferred on this device"
                                      : "flash first");
            return out->backend;
        }
        if (used < sizeof out->reason) {
            int n = snprintf(out->reason + used, sizeof out->reason - used,
                             "%s%s: %s", used ? "; " : "",
                             sdpa_backend_name(order[i]), why);
            if (n > 0)
                used += (size_t)n;
        }
    }
    return out->backend;
}
