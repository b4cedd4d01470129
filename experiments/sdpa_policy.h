/* sdpa_policy.h -- --policy sdpa of bf16emu attn and diff: the kernel
   description of the backend PyTorch 2.11 runs on an H200 for a call
   (analysis/sdpa_dispatch_pt211_h200.h), and --policy NAME for the named
   descriptions of the SDPA backends ("cudnn", later "efficient" and
   "math") */
#ifndef BF16EMU_EXPERIMENTS_SDPA_POLICY_H
#define BF16EMU_EXPERIMENTS_SDPA_POLICY_H

#include <stdbool.h>

#include "analysis/sdpa_dispatch_pt211_h200.h"
#include "attention/attention.h"
#include "experiments/fa_cli.h"

/* --policy V when V names no fa_policy: a named description (cudnn, ...)
   into *K, or "sdpa" (*SDPA set).  Returns false (nothing reported) when
   V is neither. */
bool sdpa_policy_named(const char *v, const fa_kernel **k, bool *sdpa);

/* --sdpa-backends LIST: a comma list of cudnn, flash, efficient, math
   (the backends left enabled, as torch.backends.cuda.enable_*_sdp) into
   *FLAGS (SDPA_EN_*).  Reports an error under CMD and returns false when
   LIST is refused. */
bool sdpa_policy_parse_backends(const char *cmd, const char *v,
                                unsigned *flags);

/* The call PyTorch sees under --policy sdpa, as far as attn and diff
   describe it alike: sdpa_case_default with the launch L's batch, heads
   and KV heads (cuDNN's decode splits depend on them), grouped-query
   attention when NHKV != NH, the shape NQ, NK, D, FP16 when F16 (else
   BF16) and CAUSAL.  The caller adds the mask, the gradient and the
   enabled backends. */
sdpa_case sdpa_policy_case(const fa_cli_launch *l, size_t nh, size_t nhkv,
                           size_t nq, size_t nk, size_t d, bool f16,
                           bool causal);

/* The description of the backend PyTorch 2.11 picks for C: *K, the
   choice in *CH, *SPLIT_AUTO true when the choice is the flash backend
   (whose split count then follows PyTorch's heuristic), *SPLITS the split
   count of cuDNN's decode engine when it runs the lean reduction
   (CH->splits, from C's keys, batch and heads: sdpa_cudnn_decode_splits_
   pt211_h200; doc/notes/gpu-crosscheck-log.md, "cuDNN model": O measured
   bit-equal, its LSE not), else 0 (the description's).  Reports under CMD and
   returns false when the call raises in PyTorch or the chosen backend has
   no description. */
bool sdpa_policy_pick(const char *cmd, const sdpa_case *c,
                      const fa_kernel **k, sdpa_choice *ch, bool *split_auto,
                      unsigned *splits);

/* The one-line note on stderr: "bf16emu CMD: --policy sdpa: BACKEND
   (VARIANT), description NAME: REASON". */
void sdpa_policy_note(const char *cmd, const sdpa_choice *ch,
                      const fa_kernel *k);

/* Where the chosen backend aligns is_causal's mask when NQ != NK: 1
   top-left (memory-efficient, math: SDPA's tril; cuDNN for one query row,
   measured), 0 bottom-right (the flash kernels), -1 not measured (cuDNN
   with more than one query row).  Reports under CMD and returns false
   for -1, asking for --causal-align; else sets *TOP_LEFT and notes it on
   stderr. */
bool sdpa_policy_causal_align(const char *cmd, const sdpa_choice *ch,
                              int64_t nq, int64_t nk, bool *top_left);

#endif
