/* launch.h -- the rules by which a GPU launch decides what a kernel
   computes: the split count of the key blocks (PyTorch 2.11's heuristic
   for its flash backend, cuDNN's decode grid as measured on sm90) and
   the cuBLAS gemv kernel of the math backend's decode.  A kernel is a
   description; these rules pick its launch-dependent fields from the
   launch (B, H, the multiprocessors), which a file's own shape does not
   give. */
#ifndef BF16EMU_ANALYSIS_LAUNCH_H
#define BF16EMU_ANALYSIS_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A GPU launch of one attention call: its whole batch and heads, where a
   file may keep one batch entry and a few heads. */
typedef struct ax_launch
{
    size_t batch, heads, kv_heads; /* kv_heads: K's and V's (GQA); 0: heads */
    size_t nq, nk, d;
    bool f16;         /* FP16 inputs (else BF16) */
    unsigned sms;     /* multiprocessors; 0: 132 (H100, H200) */
    const char *from; /* where it came from: "--launch", "manifest", ... */
} ax_launch;

/* The split count (1 to 128) PyTorch 2.11's flash backend (its vendored
   FlashAttention-2, flash_api.cpp) chooses for a forward launch of B, H,
   NQ, NK, head dimension D (at most 256) on SMS multiprocessors:
   block_n = 256 (d <= 64), 128 (d <= 128), else 64; num_n_blocks =
   ceil(Nk / block_n); num_m_blocks = ceil(Nq / 64); then
   num_splits_heuristic(B H num_m_blocks, 2 SMS, num_n_blocks, 128), the
   wave efficiencies in float and the 85 % test in double, as there. */
unsigned pt211_num_splits(size_t b, size_t h, size_t nq, size_t nk, size_t d,
                          unsigned sms);

/* The split count of K's own rule for launch L, and in *RULE (a static
   string) the rule's name: cuDNN's decode grid for a description with
   the "lean" combine (one query row; 1 otherwise: cuDNN's prefill
   kernels do not split), PyTorch 2.11's flash heuristic for one with
   split-KV tiles (grouped heads with one query row: the group's query
   heads as the rows, as the flash backend reshapes them), else 1. */
unsigned ax_launch_splits(const fa_kernel *k, const ax_launch *l,
                          const char **rule);

/* Whether the split rule of K for L is measured for L's multiprocessor
   count: cuDNN's decode grid only on 132 (the H100's and H200's); the
   flash heuristic reads the count as PyTorch does, so any. */
bool ax_launch_sms_modelled(const fa_kernel *k, const ax_launch *l);

#ifdef __cplusplus
}
#endif

#endif
