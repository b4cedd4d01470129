/* splits_pytorch211.h -- the split count PyTorch 2.11's flash backend
   (FlashAttention-2, flash_api.cpp) chooses for a forward launch: its
   num_splits_heuristic on the launch shape.  A property of that PyTorch
   version, not of the kernel: bf16emu attn and diff --splits auto. */
#ifndef BF16EMU_EXPERIMENTS_SPLITS_PYTORCH211_H
#define BF16EMU_EXPERIMENTS_SPLITS_PYTORCH211_H

#include <stddef.h>

/* The number of splits (1 to 128) for B, H, Nq, Nk, head dimension D
   (at most 256) on a GPU of SMS multiprocessors (132 on an H200):
   block_n = 256 (d <= 64), 128 (d <= 128), else 64; num_n_blocks =
   ceil(Nk / block_n); num_m_blocks = ceil(Nq / 64); then
   num_splits_heuristic(B H num_m_blocks, 2 SMS, num_n_blocks, 128). */
unsigned pt211_num_splits(size_t b, size_t h, size_t nq, size_t nk, size_t d,
                          unsigned sms);

#endif
