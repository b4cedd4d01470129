#!/bin/sh
# test_flex_dumps.sh -- FlexAttention against real hardware:
# tests/data/gpu/flex (experiments/gpu/flex_dump.py on an H100 with
# PyTorch 2.11 and Triton 3.6: torch.compile(flex_attention), the Triton
# kernel triton_tem_fused_flex_attention; each file keeps head 0 of its
# launch and, for a mask other than causal, the mask_mod's values as
# attn_mask).  Causal (the diagonal block first, then the full blocks),
# no block mask with 300 keys (every block bounds-checked), a 128-key
# window, a prefix-LM mask, eight documents and ALiBi (the score_mod's
# values as an additive FP16 attn_mask, exact: power-of-two slopes) and
# tanh soft-capping at 30 (the manifest's "softcap"; libdevice's tanhf):
# O and LSE must be the
# GPU's bits under the flex description.  The same files differ under
# cuDNN's description and under flex with the full blocks' exponent in
# the partial ones, so these checks can fail.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
if [ ! -x "$JSONQ" ]; then
    echo "SKIP: $JSONQ not built"
    exit 77
fi
need_gpu_data flex flex_causal_d64.safetensors
X=$gpu_data

# forward and backward (flex_backwards.py.jinja's kernels: the delta
# reduction, then dQ per query block and dK, dV per KV block over the
# block mask's lists); FP16 at d 128 with the delta kernel's XBLOCK 1
# (the manifest's grid); MQA, four FP16 query heads over one KV head,
# dK and dV one accumulator through the group; kernel_options BLOCK_M =
# BLOCK_N = 64 (the manifest's: the forward's tiles 64 x 64); no block
# mask with 512 keys (one partial block whose true mask folds away: the
# full blocks' exponent)
for name in flex_causal_d64 flex_full_n300 flex_window128 flex_prefix128 \
    flex_doc8 flex_alibi flex_softcap30 flex_window128_fp16_d128 \
    flex_mqa_fp16 flex_causal_b64x64 flex_full_d64; do
    check_stages "$X/$name.safetensors" flex flex o,lse,dq,dk,dv
done

# flex_decoding (fewer than 128 query rows; kernel.h, combine
# "flex-decode"): no block mask (program 0 of 66 takes every key), FP16
# with 16 rows of 1,000 keys (132 programs); a prefix-LM mask whose rows
# fall in 16 of 66 programs (one looped reduction merges them); a window
# over 8 query heads of 2 KV heads (132 programs: two chunks of 66); the
# same at 8 rows (BLOCK_M 32, 16,384 outputs: another looped
# configuration), forward only
for name in flex_dec_nq1 flex_dec_full_nq16_fp16 flex_dec_prefix_h4 \
    flex_dec_win_g4; do
    check_stages "$X/$name.safetensors" flex flex o,lse,dq,dk,dv
done
check_stages "$X/flex_dec_win_nq8_g4_fp16_d128.safetensors" flex flex o,lse
# forward only: a window over 3 heads (88 programs, 2 floor(132 / 3):
# one chunk, the looped reduction over 88); a window over 16 query heads
# of 2 KV heads (132 programs in two chunks, 1,024 values of O per
# program, 2,048 merge outputs: XBLOCK 16); no block mask with 100 rows
# (BLOCK_M 128: one query block holds every row)
for name in flex_dec_win_h3 flex_dec_win_h16_kv2 flex_dec_full_nq100; do
    check_stages "$X/$name.safetensors" flex flex o,lse
done
# one row (1 head) over 264 programs, forward only: L by one persistent
# inner reduction (four contiguous programs a thread, 128 threads), O by
# three chunks of 88 whose sums a second stage adds over 2 lanes and 2
# warps; under cuDNN's description O moves
F=$X/flex_dec_win_h1.safetensors
check_stages "$F" flex flex o,lse
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" --policy cudnn \
    --stage o,lse --no-exact --json
expect_rc 1
# the two warps side by side along the keys (rowsum_col_warps 2, also
# at BLOCK_M 32): as one warp's row sum, O and LSE move
"$BF16EMU" attn --policy flex-decode --describe >"$tmp/kd.json"
sed 's/"rowsum_col_warps": 2/"rowsum_col_warps": 0/' "$tmp/kd.json" \
    >"$tmp/kd1.json"
F=$X/flex_dec_win_nq8_g4_fp16_d128.safetensors
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" \
    --kernel "$tmp/kd1.json" --stage o,lse --no-exact --json
expect_rc 1
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" \
    --kernel "$tmp/kd.json" --stage o,lse --no-exact --json
expect_rc 0
# 16 programs (16 heads): rows over several programs merge by
# persistent reductions whose configuration inductor picks by timing;
# the manifest's recorded kernels (grid and block) give it: L over 2
# programs of 64 threads (XBLOCK 8: 8 lanes and 2 warps along the 16
# programs), O over 1,024 (XBLOCK 1: 16 lanes, the layout's other lanes
# and warp repeating them)
F=$X/flex_dec_win_h16.safetensors
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" --stage o,lse \
    --no-exact --json
expect_rc 0
expect_stage flex_dec_win_h16 0 o 64 64
expect_stage flex_dec_win_h16 1 lse 1 1
# without a launch (attn: no manifest) the configuration is not known
run attn --policy flex --gen normal --heads 16 --nq 1 --nk 1024 --d 64 \
    --causal
expect_rc 2
expect_err_has "only the launch tells it"

# Triton's tl.dot on Hopper (wgmma, FP32 accumulator) is the sm90 model:
# D = A B + C for 64 x K by K x 64 tiles, K 16 and 64, BF16 and FP16,
# normal and widely spread exponents (tl_dot.safetensors, flex_dump.py's
# probe)
D=$X/tl_dot.safetensors
for t in bf16_k16_normal bf16_k16_spread bf16_k64_normal bf16_k64_spread \
    fp16_k16_normal fp16_k16_spread fp16_k64_normal fp16_k64_spread; do
    run mma --model sm90 --a "$D:$t.a" --b "$D:$t.b" --c "$D:$t.c" \
        --compare "$D:$t.d" --json
    expect_rc 0
done
# and not a plain FMA chain
run mma --model fma-chain --a "$D:bf16_k64_spread.a" \
    --b "$D:bf16_k64_spread.b" --c "$D:bf16_k64_spread.c" \
    --compare "$D:bf16_k64_spread.d" --json
expect_rc 1

# another kernel's arithmetic on the same inputs: not the GPU's bits
F=$X/flex_causal_d64.safetensors
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" --policy cudnn \
    --stage o,lse --no-exact --json
expect_rc 1
# the partial blocks' exponent as the full blocks form it (one FMA):
# the masked rows move
"$BF16EMU" attn --policy flex --describe >"$tmp/k.json"
sed 's/"exp_arg_partial": "scale-sub"/"exp_arg_partial": "scale-fma"/' \
    "$tmp/k.json" >"$tmp/kfma.json"
F=$X/flex_window128.safetensors
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" \
    --kernel "$tmp/kfma.json" --stage o,lse --no-exact --json
expect_rc 1
# the description through --kernel is the same kernel
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" \
    --kernel "$tmp/k.json" --stage o,lse --no-exact --json
expect_rc 0

# another cap moves the bits; a description without soft-capping refuses
F=$X/flex_softcap30.safetensors
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" --policy flex \
    --softcap 31 --stage o,lse --no-exact --json
expect_rc 1
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" --policy cudnn \
    --stage o,lse --no-exact
expect_rc 2
expect_err_has "softcap: the description takes no soft-capping"

# a GPT trained with FlexAttention and captured (capture.py's
# flex_attention; train_gpt_flex.py, 400 steps): layer 0 causal, layer 1
# a 128-key sliding window (the block mask's values as attn_mask) with
# soft-capping at 20; every head, all five outputs, by --call alone
F=$X/capture_gpt_flex.safetensors
for call in L0.s400 L1.s400; do
    run diff --dump "$F" --call "$call" --stage o,lse,dq,dk,dv --no-exact \
        --json
    expect_rc 0
    for i in 0 1 2 3 4; do
        n=$("$JSONQ" "$tmp/out" "stages.$i.elements")
        expect_stage "capture_gpt_flex $call" "$i" "stage $i" "$n" "$n"
    done
done
# scan measures against the exact reference, which has no tanh
run scan "$F"
expect_rc 2
expect_err_has "soft-capping: the exact reference has no tanh"

# a FlexAttention dump ("backend": "flex") selects the description itself
F=$X/flex_window128_fp16_d128.safetensors
run diff --dump "$F" --q "$F:q" --k "$F:k" --v "$F:v" --o "$F:flex.o" \
    --lse "$F:flex.lse" --do "$F:do" --dq "$F:flex.dq" --stage o,lse,dq \
    --no-exact
expect_rc 0
expect_out_has "policy flex"

# the backward's choices are visible in the bits: the delta kernel's
# other XBLOCK (8 columns a thread in place of 2) moves dQ, not dV; the
# group's dK and dV summed per head (gqa_dkv "in-sum") in place of one
# accumulator through the group moves dK
F=$X/flex_window128_fp16_d128.safetensors
run diff --dump "$F" --q "$F:q" --k "$F:k" --v "$F:v" --o "$F:flex.o" \
    --lse "$F:flex.lse" --do "$F:do" --dq "$F:flex.dq" --dv "$F:flex.dv" \
    --policy flex --delta-xblock 8 --stage dq,dv --no-exact --json
expect_rc 1
n=$("$JSONQ" "$tmp/out" stages.1.elements)
expect_stage "flex_window128_fp16_d128 --delta-xblock 8" 1 dv "$n" "$n"
if [ "$("$JSONQ" "$tmp/out" stages.0.equal)" -lt "$n" ]; then pass; else
    fail "--delta-xblock 8: dQ still the GPU's"; fi
F=$X/flex_mqa_fp16.safetensors
sed 's/"gqa_dkv": "chain"/"gqa_dkv": "in-sum"/' "$tmp/k.json" >"$tmp/kin.json"
run diff --dump "$F" --q "$F:q" --k "$F:k" --v "$F:v" --o "$F:flex.o" \
    --lse "$F:flex.lse" --do "$F:do" --dk "$F:flex.dk" \
    --kernel "$tmp/kin.json" --stage dk --no-exact --json
expect_rc 1

# what is not modelled is refused: fewer than 128 query rows (PyTorch
# runs flex_decoding) and block masks of blocks under 128 in the backward
F=$X/flex_causal_d64.safetensors
# a gradient named on the command line is compared or refused, never
# dropped: here its stage lacks the LSE
run diff --dump "$F" --o "$F:flex.o" --dq "$F:flex.dq" --policy flex \
    --no-exact
expect_rc 2
expect_err_has "lse: missing"
# fewer than 128 query rows run flex_decoding (the description
# flex-decode), said in the header
run attn --policy flex --gen normal --heads 1 --nq 64 --nk 256 --d 64 \
    --no-exact
expect_rc 0
expect_out_has "flex_decoding: fewer than 128 query rows run the description flex-decode"
# attn runs the same backward: its dQ, dK, dV are the GPU's
run attn --policy flex --q "$F:q" --k "$F:k" --v "$F:v" --do "$F:do" \
    --causal --backward --no-exact --out "$tmp/a.safetensors"
expect_rc 0
run diff --dump "$F" --q "$F:q" --k "$F:k" --v "$F:v" --o "$F:flex.o" \
    --lse "$F:flex.lse" --do "$F:do" --dq "$tmp/a.safetensors:dq" \
    --dk "$tmp/a.safetensors:dk" --dv "$tmp/a.safetensors:dv" --policy flex \
    --stage dq,dk,dv --no-exact --json
expect_rc 0
run attn --policy flex --gen normal --heads 1 --nq 128 --nk 128 --d 64 \
    --causal --backward --trace 0,0,5,3 --no-exact
expect_rc 2
expect_err_has "traces no dQ element"


# capture.py on compiled flex_attention calls
# (experiments/gpu/probes/flex_capture_decode.py on an H100): each call's
# launch is the capture's launch_shape, while the file keeps a few heads
# (2 of 16, one group of 4 of 32 over 8 KV heads, 2 of 3, 1 of 2):
# flex_decoding over 16, 32 and 88 programs (persistent and looped merges,
# configured by the recorded forward kernels) and a prefill, all five
# stages the GPU's bits through `diff --call` with no other input
F=$X/capture_flex_decode.safetensors
for call in L0.s0 L1.s0 L2.s0 L3.s0; do
    run diff --dump "$F" --call $call --stage o,lse,dq,dk,dv --no-exact \
        --json
    expect_rc 0
    for i in 0 1 2 3 4; do
        _e=$("$JSONQ" "$tmp/out" "stages.$i.elements" 2>/dev/null)
        expect_stage "capture $call" $i "stage $i" "$_e" "$_e"
    done
done
# the split count is the launch's (16 programs), not the kept heads'
# or one: with one split O moves
run diff --dump "$F" --call L0.s0 --stage o --splits 1 --no-exact --json
expect_rc 1
# scan applies the same launch rules: every head's O and LSE are the
# capture's
run scan "$F" --json
expect_rc 0
for i in 0 1 2 3 4 5 6 7 8; do
    _m=$("$JSONQ" "$tmp/out" "heads.$i.o_match" 2>/dev/null)
    _n=$("$JSONQ" "$tmp/out" "heads.$i.o_elements" 2>/dev/null)
    if [ -n "$_n" ] && [ "$_m" = "$_n" ]; then pass; else
        fail "scan capture head $i: O $_m of $_n bit-equal"
    fi
done
# the same report on one thread as on two (every captured S and P~
# entry is written: the keys no program visits too)
cp "$tmp/out" "$tmp/scan2.json"
run scan "$F" --json --threads 1
expect_rc 0
expect_same_as "$tmp/scan2.json"
# a call for which torch.compile ran flex_attention's unfused fallback
# (past dynamo's recompile limit: no Triton flex kernel among the
# recorded forward kernels) is refused, not run as the Triton kernel
# (recorded before capture.py skipped such calls)
F=$X/capture_flex_unfused.safetensors
run diff --dump "$F" --call L3.s0 --stage o --no-exact
expect_rc 2
expect_err_has "did not run FlexAttention's Triton kernel"
run scan "$F"
expect_rc 2
expect_err_has "did not run FlexAttention's Triton kernel"

finish
