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
X=$srcdir/tests/data/gpu/flex
if [ ! -r "$X/flex_causal_d64.safetensors" ]; then
    echo "SKIP: tests/data/gpu/flex missing"
    exit 77
fi

for name in flex_causal_d64 flex_full_n300 flex_window128 flex_prefix128 \
    flex_doc8 flex_alibi flex_softcap30; do
    check_stages "$X/$name.safetensors" flex flex o,lse
done

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

# what is not modelled is refused: the backward, and fewer than 128
# query rows (PyTorch runs flex_decoding)
F=$X/flex_causal_d64.safetensors
run diff --dump "$F" --o "$F:flex.o" --lse "$F:flex.lse" --dq "$F:flex.dq" \
    --policy flex --no-exact
expect_rc 2
expect_err_has "no modelled backward"
# a gradient named on the command line is compared or refused, never
# dropped: here its stage lacks the LSE
run diff --dump "$F" --o "$F:flex.o" --dq "$F:flex.dq" --policy flex \
    --no-exact
expect_rc 2
expect_err_has "lse: missing"
run attn --policy flex --gen normal --heads 1 --nq 64 --nk 256 --d 64 \
    --no-exact
expect_rc 2
expect_err_has "flex_decoding"
run attn --policy flex --gen normal --heads 1 --nq 128 --nk 128 --d 64 \
    --backward --no-exact
expect_rc 2
expect_err_has "no modelled backward"

finish
