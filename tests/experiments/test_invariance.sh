#!/bin/sh
# test_invariance.sh -- bf16emu invariance against real hardware:
# tests/data/gpu/invariance (experiments/gpu/invariance_batch.py on an
# H100 with PyTorch 2.11 and cuDNN 9.19) holds one call placed as entry 0
# of batches of 1, 2, 3, 4, 8, 16, 32 and 64 (decode and prefill, BF16
# and FP16, grouped heads), run under FLASH, cuDNN, PyTorch's default,
# memory-efficient and math, with the classes of batch sizes that gave
# entry 0 bit-identical O and one O per class.  The predicted classes
# must be the GPU's, backend by backend; the class outputs must be the
# GPU's bits (cuDNN's decode engine: a known gap of a few elements near
# zero, asserted as measured so that a change of it shows).  Then the
# options, the refusals and determinism over threads.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq
need_gpu_data invariance dec_d64_nk4096_h16.safetensors
G=$gpu_data

# decode: FA2's split count (PyTorch's heuristic on the launch's B H)
# and cuDNN's decode grid move with the batch; the memory-efficient
# kernel does not split (it refuses enable_gqa on the GPU).  The math
# backend's cuBLAS gemv kernels are measured for other launches only:
# left out, never guessed.  NAME CUDNN-DIFFER EFFICIENT-CHECKED
while read -r name cudnn eff; do
    run invariance "$G/$name.safetensors" --json
    # exit 1 where a stored class output differs
    if [ "$cudnn" -gt 0 ]; then expect_rc 1; else expect_rc 0; fi
    expect_jsons observed.0.backend flash observed.0.partition_equal true \
        observed.0.differ 0 \
        observed.1.backend cudnn observed.1.partition_equal true \
        observed.1.differ "$cudnn" \
        observed.2.backend default observed.2.partition_equal true \
        observed.2.differ "$cudnn" \
        observed.3.backend efficient observed.3.checked "$eff" \
        observed.4.backend math observed.4.checked false
    if [ "$eff" = true ]; then
        expect_jsons observed.3.partition_equal true observed.3.differ 0
    fi
done <<EOF
dec_d64_nk4096_h16 0 true
dec_d64_nk4096_h16_fp16 0 true
dec_d128_nk16384_h8 0 true
dec_d64_nk8192_h32_fp16 0 true
dec_gqa_d128_nk4096_h32_kv8 0 false
EOF

# prefill (causal, 1,024 rows; the file keeps 64 rows of each class
# output): FA2 splits at batch 1 to 4, no other backend moves; every
# backend bit-equal
for name in pre_d64_n1024_h2_causal pre_d64_n1024_h2_causal_fp16; do
    run invariance "$G/$name.safetensors" --json
    expect_rc 0
    for i in 0 1 2 3 4; do
        expect_jsons "observed.$i.partition_equal" true \
            "observed.$i.differ" 0
    done
done

# decode steps against one prefill (causal, 512 rows, the file keeps
# 128 rows of each class output): each row as one step over its cache.
# FA2's steps never split here (one key block) but its prefill does at
# batch 1 to 8; PyTorch's default sends the first steps (under 256 keys)
# to FLASH and the later ones to cuDNN; cuDNN alone refuses a step over
# one key on the GPU.  The partition is exact for every backend; the
# stored outputs for all but the default's decode steps (cuDNN's decode
# engine, the gap above).
run invariance "$G/steps_d64_n512_h2_causal.safetensors" --json
expect_rc 1
expect_jsons observed.0.partition_equal true observed.0.differ 0 \
    observed.1.partition_equal true observed.1.differ 0 \
    observed.2.partition_equal true observed.2.differ 843 \
    observed.3.partition_equal true observed.3.differ 0 \
    observed.4.checked false

# the backward (causal, 512 rows, 4 heads; deterministic kernels; the
# file keeps 64 rows of each O class and FLASH's dQ, dK, dV classes
# whole): FA2's forward splits 2 ways up to batch 4, then its dQ
# buffers ceil(132 / 4B) move dQ at batch 16 and 32 while O does not,
# and batch 64 (one buffer) gives batch 8's bits again; the other
# backends never move.  The forward's classes are compared by O alone
# (a launch's class also holds the gradients)
run invariance "$G/bwd_d64_n512_h4_causal.safetensors" --json
expect_rc 0
expect_jsons observed.0.backend flash observed.0.partition_equal true \
    observed.0.differ 0 observed.0.bwd_partition_equal true \
    observed.0.bwd_compared 1572864 observed.0.bwd_differ 0
for i in 1 2 3 4; do
    expect_jsons "observed.$i.partition_equal" true "observed.$i.differ" 0 \
        "observed.$i.bwd_partition_equal" true "observed.$i.bwd_compared" 0
done
run invariance "$G/bwd_d64_n512_h4_causal.safetensors" --policy flash
expect_rc 0
expect_line "  class       A     A     A     A     B     C     D     B"
expect_out_has "dQ buffers 5 -> 3 (the deterministic FA2 backward"
expect_out_has "flash: classes 0 0 0 0 1 1 1 1: predicted exactly"

# head counts of the launch (--head-counts): 4 heads kept of launches of
# 4 and 16 heads; FA2's split count follows B x H, so H 16 at batch 1 is
# H 4 at batch 4 (16 splits; classes are shared across the tables) and
# H 16 at batch 4 splits 4 ways; a launch must
# hold the call's heads, in ascending order
run invariance --gen normal --heads 4 --nq 1 --nk 4096 --d 64 \
    --policy flash --batch 1,4 --head-counts 4,16
expect_rc 0
expect_out_has "flash, 132 SMs, H 16, one call:"
expect_out_has "x 2 head counts x one call); distinct computations: 2"
run invariance --gen normal --heads 4 --nq 1 --nk 4096 --d 64 \
    --policy flash --batch 1,4 --head-counts 4,16 --json
expect_rc 0
expect_jsons launches.2.launch_heads 16 launches.2.splits 16 \
    launches.2.class 0 launches.1.class 0 launches.3.splits 4 \
    launches.3.class 1
run invariance --gen normal --heads 4 --kv-heads 2 --nq 1 --nk 512 --d 64 \
    --policy flash --head-counts 4,7
expect_rc 2
expect_err_has "7 heads cannot hold the call's 4 heads in groups of 2"
run invariance --gen normal --heads 4 --nq 1 --nk 512 --d 64 \
    --policy flash --head-counts 8,4
expect_rc 2
expect_err_has "ascending order"

# masked calls (tests/data/gpu/mask: each file keeps one head of one
# batch entry, its manifest says which; the mask is bound to it): a
# padding mask over 128 keys never splits, so every backend that takes
# a mask is invariant (FLASH takes none: left out of the default list,
# refused when named); an ALiBi bias over 2,048 keys of one query row
# runs cuDNN's decode grid, whose split count 4 -> 1 from batch 16 to 32
# moves O (16, 8 and 4 splits give the same bits here: the bias leaves
# the far keys' exponentials 0)
run invariance "$srcdir/tests/data/gpu/mask/mask_padding.safetensors" \
    --batch 1,2,4,8,16 --json
expect_rc 0
expect_jsons attn_mask.type bool attn_mask.hidden 6528 classes 2 \
    launches.0.backend cudnn launches.5.backend efficient
run invariance "$srcdir/tests/data/gpu/mask/mask_decode_alibi_nk2048.safetensors" \
    --policy cudnn --batch 1,16,32,64
expect_rc 0
expect_line "  class       A     A     B     B"
expect_out_has "batch 16 -> 32: O 33 of 128 elements differ (max 7 ulps), LSE 0 of 1 (max 0 ulps): split count 4 -> 1"
run invariance "$srcdir/tests/data/gpu/mask/mask_random.safetensors" \
    --policy flash
expect_rc 2
expect_err_has "flash, head 0: mask: the description takes no attention mask"
run invariance --gen normal --heads 2 --nq 128 --nk 128 --d 64 \
    --mask "$srcdir/tests/data/gpu/mask/mask_random.safetensors:attn_mask"
expect_rc 2
expect_err_has "does not broadcast to the launch's [B, H, Nq, Nk] = [1, 2, 128, 128]"

# a real model: layer 0's attention call of a GPT (8 heads, 600 tokens,
# experiments/gpu/invariance_gpt.py) alone in batches of 1 to 64; under
# FLASH the batch size changes its output from batch 3 on (the model's
# own generation showed the same: O of layer 0 differed from batch 3
# with q, k, v still equal), under cuDNN and the default never
run invariance "$G/gpt_flash_L0.safetensors" --json
expect_rc 0
expect_jsons observed.0.partition_equal true observed.0.differ 0 \
    observed.1.partition_equal true observed.1.differ 0 \
    observed.2.partition_equal true observed.2.differ 0 \
    launches.2.splits 1 launches.1.splits 3
run invariance "$G/gpt_flash_L0.safetensors" --policy flash
expect_out_has "batch 2 -> 3: "
expect_out_has "split count 3 -> 1 (PyTorch 2.11's flash heuristic)"

# the text report: the classes, the rule between neighbours, the bound
run invariance "$G/dec_d64_nk4096_h16.safetensors" --policy flash
expect_rc 0
expect_line "  class       A     B     A     C     D     E     E     E"
expect_out_has "batch 1 -> 2: O 328 of 1024 elements differ"
expect_out_has "split count 16 -> 8 (PyTorch 2.11's flash heuristic)"
expect_out_has "invariant from batch 16 up (of those asked)"
expect_out_has "flash: classes 0 1 0 2 3 4 4 4: predicted exactly; the 5 class outputs stored: 0 of 5120 elements differ"
expect_out_has "math: not among the launches asked"

run invariance "$G/dec_d64_nk4096_h16.safetensors" --policy cudnn
expect_rc 0
expect_out_has "split count 4 -> 1 (cuDNN's decode grid (PyTorch 2.11, H200))"
expect_out_has "the 4 class outputs stored: 0 of 4096 elements differ"

# a backend named on the command line that cannot be predicted is
# refused, not left out
run invariance "$G/dec_d64_nk4096_h16.safetensors" --policy math
expect_rc 2
expect_err_has "math's decode runs cuBLAS gemv kernels, measured for some launches only"

# multiprocessor counts: FA2's heuristic reads them; cuDNN's decode grid
# is measured on 132 only
run invariance --gen normal --heads 4 --nq 1 --nk 4096 --d 64 \
    --policy flash --sms 132,114 --batch 1,2
expect_rc 0
expect_out_has "flash, 114 SMs, one call:"
run invariance --gen normal --heads 4 --nq 1 --nk 4096 --d 64 \
    --policy cudnn --sms 114
expect_rc 2
expect_err_has "decode grid is measured on 132 multiprocessors only"

# decode steps against one prefill: PyTorch's choice may change between
# steps (flash for the first keys, cuDNN later) and is followed step by
# step
run invariance --gen normal --heads 1 --nq 128 --nk 128 --d 64 --causal \
    --mode prefill,decode --policy flash,sdpa --batch 1,64 --json
expect_rc 0
expect_jsons "launches.0.mode" prefill "launches.4.mode" decode \
    "launches.6.runs" mixed
run invariance --gen normal --heads 1 --nq 8 --nk 8 --d 64 --mode decode
expect_rc 2
expect_err_has "decode steps need a causal call"

# the backward (deterministic kernels): FA2's dQ buffers follow the
# launch, ceil(132 / (B H)); at most one buffer per key block changes
# bits (four blocks of 128 keys here)
run invariance --gen normal --heads 4 --nq 512 --nk 512 --d 64 --causal \
    --backward --policy flash --batch 8,16,32
expect_rc 0
expect_out_has "dQ buffers 5 -> 3 (the deterministic FA2 backward: ceil(SMs / (B H)))"
expect_out_has "dQ, dK, dV: 1 of 393216 elements differ (max 2 ulps)"
run invariance --gen normal --heads 4 --kv-heads 2 --nq 64 --nk 64 --d 64 \
    --backward --policy flash
expect_rc 2
expect_err_has "the backward is compared for one call of ungrouped heads only"

# determinism: the same report for any thread count
run invariance "$G/pre_d64_n1024_h2_causal.safetensors" --json --threads 1
cp "$tmp/out" "$tmp/t1"
run invariance "$G/pre_d64_n1024_h2_causal.safetensors" --json --threads 2
expect_same_as "$tmp/t1"

# the plot's data (gnuplot may be absent: then only the .dat file)
run invariance "$G/dec_d64_nk4096_h16.safetensors" --policy flash,efficient \
    --plot "$tmp/p"
expect_rc 0
if grep -q "^64 " "$tmp/p.dat"; then pass; else fail "no row 64 in p.dat"; fi

# bad input: exit 2, a clear message
run invariance
expect_rc 2
expect_err_has "give a dump, or --gen normal"
run invariance "$G/dec_d64_nk4096_h16.safetensors" --policy nonsense
expect_rc 2
expect_err_has "--policy: 'nonsense' names no backend or description"
run invariance "$G/dec_d64_nk4096_h16.safetensors" --batch 4,2
expect_rc 2
expect_err_has "--batch: give the batch sizes in ascending order"
run invariance "$G/dec_d64_nk4096_h16.safetensors" --mode sideways
expect_rc 2
expect_err_has "--mode 'sideways': expected prefill, decode or prefill,decode"
run invariance "$G/dec_d64_nk4096_h16.safetensors" --heads 2
expect_rc 2
expect_err_has "go with --gen; a dump gives its own"
run invariance "$srcdir/tests/data/gpu/mask/mask_alibi.safetensors" \
    --policy cudnn --mask /no/such/mask.safetensors
expect_rc 2
expect_err_has "--mask: /no/such/mask.safetensors"
run invariance --gen normal --heads 3 --kv-heads 2 --nq 1 --nk 64 --d 64
expect_rc 2
expect_err_has "the key/value heads must divide the query heads"

finish
