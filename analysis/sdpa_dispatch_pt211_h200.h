/* sdpa_dispatch_pt211_h200.h -- which backend PyTorch 2.11's
   scaled_dot_product_attention runs on a CUDA device, and which kernel,
   as measured on an H200 (sm_90, CUDA 13.0, cuDNN 9.19.0) */
#ifndef BF16EMU_ANALYSIS_SDPA_DISPATCH_PT211_H200_H
#define BF16EMU_ANALYSIS_SDPA_DISPATCH_PT211_H200_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*----------------------------------------------------------------------------
 * The rule (doc/gpu-crosscheck.md, "SDPA backends and PyTorch's choice").
 *
 * PyTorch tries the backends in a priority order and takes the first whose
 * constraints all hold; math needs nothing but its enable flag.  The order
 * is cuDNN, flash, memory-efficient, math where cuDNN is preferred (a
 * runtime cuDNN newer than 9.15.0 on an sm_9x or sm_10x device), else
 * flash, memory-efficient, math, cuDNN.  The constraints mirror PyTorch
 * 2.11 as it behaved on the H200 (tests/data/gpu/backends/
 * dispatch_h200.json); where that build differs from later sources
 * (no 1/16 dropout grid and no 65535 batch/heads limit for cuDNN, no GQA
 * for the memory-efficient backend) the measurement wins.  The kernel
 * variant is the name the profiler showed, shortened; for shapes between
 * measured points it is the nearest rule, marked in the doc.
 *--------------------------------------------------------------------------*/

typedef enum sdpa_backend
{
    SDPA_BACKEND_ERROR = -1, /* no backend: every enabled one ruled out */
    SDPA_BACKEND_MATH = 0,
    SDPA_BACKEND_FLASH = 1,
    SDPA_BACKEND_EFFICIENT = 2,
    SDPA_BACKEND_CUDNN = 3
} sdpa_backend;

typedef enum sdpa_dtype
{
    SDPA_DT_BF16,
    SDPA_DT_F16,
    SDPA_DT_F32
} sdpa_dtype;

typedef enum sdpa_mask
{
    SDPA_MASK_NONE,
    SDPA_MASK_BOOL,  /* attn_mask of dtype bool */
    SDPA_MASK_FLOAT, /* an additive attn_mask */
} sdpa_mask;

/* The enable flags of torch.backends.cuda (enable_*_sdp). */
enum
{
    SDPA_EN_MATH = 1u << 0,
    SDPA_EN_FLASH = 1u << 1,
    SDPA_EN_EFFICIENT = 1u << 2,
    SDPA_EN_CUDNN = 1u << 3,
    SDPA_EN_ALL = 0xFu
};

/* One call of F.scaled_dot_product_attention. */
typedef struct sdpa_case
{
    int rank;         /* 4 ([B, H, N, d]) or 3 ([B*H, N, d]) */
    int64_t batch;    /* B */
    int64_t heads;    /* query heads */
    int64_t kv_heads; /* key and value heads */
    int64_t nq, nk;   /* sequence lengths */
    int64_t d;        /* head dimension of Q and K */
    int64_t dv;       /* head dimension of V (0: d) */
    sdpa_dtype dtype; /* of Q, K and V alike */
    bool causal;      /* is_causal */
    sdpa_mask mask;   /* attn_mask, assumed of a broadcastable shape */
    bool mask_requires_grad;
    double dropout; /* dropout_p */
    bool enable_gqa;
    bool requires_grad; /* an input requires grad and grad mode is on */
    bool deterministic; /* torch.use_deterministic_algorithms(True) */
    bool deterministic_warn_only;
    bool last_dim_strided;  /* some input's last dimension has stride != 1 */
    unsigned enabled;       /* SDPA_EN_* flags; SDPA_EN_ALL by default */
    int sm_major, sm_minor; /* compute capability (9, 0 for the H200) */
    long cudnn_version;     /* runtime cuDNN, e.g. 91900 */
} sdpa_case;

/* The answer: the backend, its kernel and why. */
typedef struct sdpa_choice
{
    sdpa_backend backend;
    /* The forward kernel: for cuDNN the engine name without its prefix and
       launch suffix (sm90_flash_fprop_wgmma_f16_knob_7_64x128x64), with
       " + lean_reduction" when a reduction kernel follows; for flash
       "flash_fwd_kernel hdim H" or "flash_fwd_splitkv_kernel hdim H"; for
       efficient the CUTLASS kernel name (fmha_cutlassF_bf16_aligned_
       64x64_rf_sm80); for math "fp32 gemm+softmax" or, with one query
       row, "fp32 gemv+softmax"; empty for an error. */
    char variant[96];
    /* cuDNN's KV split count: for the decode engine (one query row) S,
       its grid.x up to d = 128 (sdpa_cudnn_decode_splits_pt211_h200),
       with " + lean_reduction" in the variant when S > 1; 1 for cuDNN's
       other kernels; 0 for the other backends. */
    unsigned splits;
    /* A short sentence: the constraint that ruled out each backend tried
       before the chosen one (or every one, for an error). */
    char reason[320];
} sdpa_choice;

/* A case with PyTorch's defaults: rank 4, one batch, one head, every
   backend enabled, BF16, no mask, sm_90 and cuDNN 9.19.0; the shapes
   are left 0. */
sdpa_case sdpa_case_default(void);

/* Fills OUT with the choice for C.  Returns OUT->backend. */
sdpa_backend sdpa_choose_pt211_h200(const sdpa_case *c, sdpa_choice *out);

/* The launch grid of cuDNN's decode engine for C (one query row; the
   rule and its measured boundaries: the source): GRID[0] the CTAs along
   the keys (the split count; 1 for knob 3 up to 256 keys and for
   is_causal, knob 6), GRID[1] the CTAs per batch element along the heads
   (with knob 35 each key/value head's group of query heads in tiles of
   16 rows), GRID[2] the batch.  For more than one query row all three
   are 0. */
void sdpa_cudnn_decode_grid_pt211_h200(const sdpa_case *c, int64_t grid[3]);

/* The key split count S of cuDNN's decode engine for C (sm80_flash_
   fprop_wmma_f16_knob_35_16x128x{64,128,256}): the grid.x of
   sdpa_cudnn_decode_grid_pt211_h200 for head dims up to 128, half of it
   above (the x256 engine launches 2 S CTAs per row; taken here as S key
   splits whose CTAs pair up, not measured); lean_reduction_kernel follows
   when S > 1.  1 for any other case. */
unsigned sdpa_cudnn_decode_splits_pt211_h200(const sdpa_case *c);

/* "math", "flash", "efficient", "cudnn", "error". */
const char *sdpa_backend_name(sdpa_backend b);

/* The name of the kernel description that models backend B
   (fa_kernel_by_name): "cudnn", "fa2", "efficient", "math"; NULL for
   SDPA_BACKEND_ERROR. */
const char *sdpa_backend_description(sdpa_backend b);

/* Whether one backend's constraints hold for C (its enable flag
   included); WHY (may be NULL, SIZE bytes) gets the first failing
   constraint, or "" when it holds. */
bool sdpa_can_use_pt211_h200(sdpa_backend b, const sdpa_case *c, char *why,
                             unsigned size);

#ifdef __cplusplus
}
#endif

#endif
