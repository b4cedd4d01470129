#!/bin/sh
# test_mask_dumps.sh -- attention masks against real hardware:
# tests/data/gpu/mask (experiments/gpu/sdpa_gqa_mask.py on an H100 with
# PyTorch 2.11 and cuDNN 9.19; each file keeps some (batch, head) pairs
# of a launch and the call's whole attn_mask).  Boolean masks (padding,
# causal and padding, windows, random, rows with no key) and additive
# ones (ALiBi in BF16 and FP16), scales that are and are not powers of
# two, several KV blocks, grouped heads and one query row, on every
# backend that took them: cuDNN (its bias added to the scaled scores
# before the log2 domain, a False entry as -65504), the memory-efficient
# kernel (added after its scale; -inf) and math (added to the product of
# the prescaled Q and K; -inf).  Every stage must be the GPU's bits but
# where the GPU did not repeat itself; flash refuses masks and so does
# the fa2 description.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq
need_gpu_data mask mask_padding.safetensors
M=$gpu_data

# check NAME BACKEND STAGES [EQUAL TOTAL STAGE-INDEX]: diff of the
# backend's outputs in dump NAME under its own description; every element
# of each stage bit-equal, or (EQUAL TOTAL) for stage STAGE-INDEX.
check()
{
    check_stages "$M/$1.safetensors" "$2" "$2" "$3" "$4" "$5" "$6"
}

# forward and backward
for name in mask_padding mask_causal_padding mask_window32 mask_alibi \
    mask_random mask_all_masked_rows mask_causal_padding_fp16 \
    mask_alibi_d128 mask_alibi_scale01 mask_alibi_fp16_d128 \
    mask_padding_d128 mask_random_scale01_fp16 mask_window128_n512_d128 \
    mask_all_masked_rows_fp16 mask_all_masked_rows_d128; do
    check "$name" cudnn o,lse,dq,dk,dv
    check "$name" efficient o,lse,dq,dk,dv
    check "$name" math o,dq,dk,dv
done
# cuDNN's dQ over 4 KV tiles: the GPU's own two runs differ in 5 of
# 32,768 elements (the manifest's "repeat"); the emulator is one of its
# orders and differs from the stored run in 2
check mask_padding_n512_scale03 cudnn o,lse,dq,dk,dv 32766 32768 2
check mask_padding_n512_scale03 efficient o,lse,dq,dk,dv
check mask_padding_n512_scale03 math o,dq,dk,dv
# one query row (cuDNN's decode engine and its lean reduction over 2,048
# keys, the launch's split count)
for name in mask_decode_padding_nk512 mask_decode_alibi_nk2048; do
    check "$name" cudnn o,lse
    check "$name" efficient o,lse
    check "$name" math o
done
# grouped heads with a mask (efficient refuses enable_gqa)
for name in mask_gqa_padding_g2 mask_gqa_alibi_g4_d128; do
    check "$name" cudnn o,lse,dq,dk,dv
    check "$name" math o,dq,dk,dv
done

# PyTorch's dispatch with a mask (tests/data/gpu/mask/dispatch*.json):
# cuDNN by default; with cuDNN off (deterministic algorithms), flash
# refuses the mask and the memory-efficient kernel runs it, or math for
# grouped heads (efficient refuses enable_gqa); bit-equal either way
f=$M/mask_padding.safetensors
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:efficient.o" \
    --policy sdpa --sdpa-backends flash,efficient,math --stage o --no-exact \
    --json
expect_rc 0
expect_err_has "--policy sdpa: efficient (fmha_cutlassF_bf16_aligned_64x64_rf_sm80), description efficient: cudnn: disabled; flash: attn_mask given"
expect_stage "sdpa, no cudnn" 0 o 8192 8192
f=$M/mask_gqa_padding_g2.safetensors
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:math.o" \
    --policy sdpa --sdpa-backends flash,efficient,math --stage o --no-exact \
    --json
expect_rc 0
expect_err_has "--policy sdpa: math (fp32 gemm+softmax), description math: cudnn: disabled; flash: attn_mask given; efficient: 4 query heads and 2 key/value heads (no grouped-query support)"
expect_stage "sdpa, grouped, no cudnn" 0 o 16384 16384
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
    --policy sdpa --stage o --no-exact --json
expect_rc 0
expect_err_has "--policy sdpa: cudnn"
expect_stage "sdpa" 0 o 16384 16384

# the header says how the mask entered
f=$M/mask_all_masked_rows.safetensors
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
    --policy cudnn --stage o --no-exact
expect_rc 0
expect_out_has "attn_mask: $f: attn_mask, bool, applied as the description's bias_add \"log2\" (a False entry: -65504); 640 entries hide a key, 5 rows see none"

# the exact reference applies the mask as its meaning: the rows with no
# key have no finite exact LSE (5 left out), cuDNN's finite O there is
# an error against O = 0
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
    --lse "$f:cudnn.lse" --policy cudnn --stage o,lse
expect_rc 0
expect_out_has "exact reference: MPFR, 256 bits, direct"
expect_out_has "    5 elements without a finite exact value left out"

# flash takes no mask: fa2 refuses it, naming the backends that do
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
    --policy fa2 --stage o --no-exact
expect_rc 2
expect_no_stdout
expect_err_has "takes none (bias_add \"none\"; PyTorch's flash backend refuses masks)"

# a mask that does not broadcast to the launch, and a manifest that names
# a mask the file does not hold, stop with exit 2
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
    --mask "$M/mask_window128_n512_d128.safetensors:attn_mask" \
    --policy cudnn --stage o --no-exact
expect_rc 2
expect_no_stdout
expect_err_has "does not broadcast to the launch's [B, H, Nq, Nk] = [2, 4, 128, 128]"

# attn --mask: batch entry 1's rows of the all-masked-rows mask as a
# [128, 128] U8 .npy; attn's O is the GPU's (cuDNN), the mask goes into
# --out, and diff of that file applies it (without it, diff would run
# the call unmasked)
if command -v python3 >/dev/null 2>&1; then
    python3 - "$f" "$tmp/m.npy" <<'PYEOF' || exit 99
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
d = open(src, "rb").read()
n = struct.unpack("<Q", d[:8])[0]
e = json.loads(d[8:8 + n])["attn_mask"]
a, b = e["data_offsets"]
nq, nk = e["shape"][2], e["shape"][3]
rows = d[8 + n + a:8 + n + b][nq * nk:2 * nq * nk]
hdr = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d, %d), }" % (
    nq, nk)
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
open(dst, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr))
                      + hdr.encode() + rows)
PYEOF
    run attn --q "$f:q" --k "$f:k" --v "$f:v" --mask "$tmp/m.npy" \
        --policy cudnn --out "$tmp/a.safetensors"
    expect_rc 0
    expect_out_has "attn_mask: $tmp/m.npy, bool, applied as the description's bias_add \"log2\" (a False entry: -65504); 640 entries hide a key, 5 rows see none"
    run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" \
        --o "$tmp/a.safetensors:o" --mask "$tmp/m.npy" --policy cudnn \
        --stage o --no-exact --json
    expect_rc 0
    expect_stage "attn --mask" 0 o 8192 8192
    run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
        --mask "$tmp/m.npy" --policy cudnn --stage o --no-exact --json
    expect_rc 0
    expect_stage "diff --mask" 0 o 8192 8192
    run diff --dump "$tmp/a.safetensors" --no-exact
    expect_rc 0
    expect_out_has "attn_mask: $tmp/a.safetensors: attn_mask, bool"
    run attn --q "$f:q" --k "$f:k" --v "$f:v" --mask "$tmp/m.npy" \
        --policy fa2
    expect_rc 2
    expect_no_stdout
    expect_err_has "--mask: the description 'fa2' takes no attention mask"
fi

echo "test_mask_dumps: $n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
