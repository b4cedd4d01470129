#!/bin/sh
# test_fa2_backward.sh -- the fa2 backward against the H200 (PyTorch 2.11's
# flash backward in its deterministic mode, tests/data/gpu/sdpa_ext), fed
# each dump's own O and LSE: dQ, dK and dV bit for bit for FP16 inputs
# (compared in FP16) and for d = 160, 192, 224 and 256 (the 192 and 256
# kernels, 64 x 64 backward tiles), through diff and through attn
# --backward --o --lse; 128-key backward tiles give other dQ bits at
# d = 192 and 256, 128-key forward tiles other O at d = 192; the dQ
# buffers of the deterministic backward (the manifest's count bit for bit
# on mirrored KV blocks, one buffer not; the rule on the whole launch, not
# on one head) and the non-deterministic backward's dQ, which no run
# reproduces; and bad input: --dq-buffers out of range, a manifest's
# dq_buffers out of range, --splits 0, more splits than KV blocks, a --kernel file with an
# unknown or a missing field, BF16 and F16 mixed (exit 2, the option or
# field named, nothing written).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
: "${DIFF_INPUTS:=./tests/experiments/diff_inputs}"
: "${ATTN_INPUTS:=./tests/experiments/attn_inputs}"
need_built "$JSONQ"
ext=$srcdir/tests/data/gpu/sdpa_ext
o=$tmp/o
k=$tmp/k
mkdir "$o" "$k" || exit 99

# ---------------------------------------------------------------------
# diff: the backward stages of every FP16 dump and of d = 160 to 256.
# ---------------------------------------------------------------------
while read -r name fmt; do
    run diff --dump "$ext/$name.safetensors" --stage dq,dk,dv --no-exact \
        --json
    expect_rc 0
    expect_jsons stages.0.stage dq stages.0.format "$fmt" stages.0.differ 0 \
        stages.1.stage dk stages.1.format "$fmt" stages.1.differ 0 \
        stages.2.stage dv stages.2.format "$fmt" stages.2.differ 0
done <<'END'
fp16_d64_normal f16
fp16_d64_repmax8 f16
fp16_d64_sink f16
fp16_d64_sink_causal f16
fp16_d32_sink f16
fp16_d128_normal_causal f16
causal_d32_nq128_nk64_fp16 f16
d160_causal bf16
d256_normal bf16
d192_normal bf16
d224_causal bf16
fp16_d192_normal f16
END

# The tiles are evidence: with the backward's KV blocks of 128 keys at
# d = 256 (dQ one chain over 128 keys instead of two 64-key chains added
# in FP32), 3 dQ elements of the whole tensor differ by one ulp (measured
# on the whole dump); dK and dV do not change (the query blocks stay 64
# rows).  The dumps keep 35 of the 128 rows of each gradient (manifest:
# outputs_kept), where none of the 3 falls: the hash of the whole dQ
# differs, those of dK and dV do not.
run attn --policy fa2 --describe
expect_rc 0
cp "$tmp/out" "$k/fa2.json"
sed 's/"bc_bwd": 64/"bc_bwd": 128/' "$k/fa2.json" >"$k/fa2-bc128.json"
run diff --dump "$ext/d256_normal.safetensors" --stage dq,dk,dv \
    --kernel "$k/fa2-bc128.json" --no-exact --json
expect_rc 1
expect_jsons stages.0.differ 0 stages.1.differ 0 stages.2.differ 0 \
    stages.0.kept.hash_equal false stages.1.kept.hash_equal true \
    stages.2.kept.hash_equal true
# and at d = 192 (the same 192 kernel row): 1 dQ element in BF16, 17 in
# FP16 of the whole tensors; in the kept rows none and 2
run diff --dump "$ext/d192_normal.safetensors" --stage dq,dk,dv \
    --kernel "$k/fa2-bc128.json" --no-exact --json
expect_rc 1
expect_jsons stages.0.differ 0 stages.1.differ 0 stages.2.differ 0 \
    stages.0.kept.hash_equal false stages.1.kept.hash_equal true \
    stages.2.kept.hash_equal true
run diff --dump "$ext/fp16_d192_normal.safetensors" --stage dq,dk,dv \
    --kernel "$k/fa2-bc128.json" --no-exact --json
expect_rc 1
expect_jsons stages.0.differ 2 stages.1.differ 0 stages.2.differ 0 \
    stages.0.kept.hash_equal false stages.1.kept.hash_equal true \
    stages.2.kept.hash_equal true
# The forward's KV blocks are evidence too: 128 keys (the d <= 128 tile)
# in the 192 row's one-pass forward instead of the 64 that
# Flash_fwd_kernel_traits<192, 128, 64, 8> runs change O and LSE.
sed '/"d_max": 192/,/}/s/"bc": 64/"bc": 128/' "$k/fa2.json" \
    >"$k/fa2-fwd-bc128.json"
run diff --dump "$ext/d192_normal.safetensors" --stage o,lse \
    --kernel "$k/fa2-fwd-bc128.json" --no-exact --json
expect_rc 1
expect_jsons stages.0.differ 4740 stages.1.differ 16

# ---------------------------------------------------------------------
# attn --backward on FP16 files with the GPU's O and LSE: its dQ, dK, dV
# (F32 holding FP16 values) equal the emulator's of diff, so the GPU's.
# ---------------------------------------------------------------------
for name in fp16_d64_sink_causal fp16_d128_normal_causal; do
    f=$ext/$name.safetensors
    run attn --q "$f:q" --k "$f:k" --v "$f:v" --do "$f:do" --o "$f:o" \
        --lse "$f:lse" --causal --backward --policy fa2 --exp ex2-sm90 \
        --no-exact --out "$o/x.safetensors"
    expect_rc 0
    run diff --dump "$f" --dq "$o/x.safetensors:dq" \
        --dk "$o/x.safetensors:dk" --dv "$o/x.safetensors:dv" \
        --stage dq,dk,dv --no-exact --json
    expect_rc 0
    expect_jsons stages.0.format f16 stages.0.gpu_dtype F32 \
        stages.0.differ 0 stages.1.differ 0 stages.2.differ 0
    rm -f "$o/x.safetensors"
done

# ---------------------------------------------------------------------
# The dQ buffers.  The deterministic backward spreads dQ over
# G = ceil(132 / (B H)) buffers (KV block n into buffer n mod G; the
# manifest's dq_buffers, read from the dq_dk_dv kernel's grid).  With
# mirrored KV blocks (dump_sdpa.py --gen mirror) the order in which the
# blocks' contributions meet decides half of dQ: the manifest's G gives
# the H200's bits, one buffer (the KV blocks in ascending order) and the
# rule on the kept head alone (B H = 1: 132 buffers) do not.
# ---------------------------------------------------------------------
while read -r name bufs one; do
    run diff --dump "$ext/$name.safetensors" --stage dq,dk,dv --no-exact \
        --json
    expect_rc 0
    expect_jsons dq_buffers "$bufs" dq_buffers_from manifest \
        stages.0.differ 0 stages.1.differ 0 stages.2.differ 0
    for opt in 1 auto; do
        run diff --dump "$ext/$name.safetensors" --stage dq --dq-buffers $opt \
            --no-exact --json
        expect_rc 1
        expect_jsons stages.0.differ "$one"
    done
    expect_jsons dq_buffers 132 dq_buffers_from "--dq-buffers auto"
done <<'END'
bwd_det_d64_h66_nk384_mirror 2 3476
bwd_det_d128_h44_nk512_mirror_fp16 3 1546
END
# 132 heads: one buffer, the KV blocks in ascending order (two buffers
# would differ)
f=$ext/bwd_det_d32_h132_nk384_mirror.safetensors
run diff --dump "$f" --stage dq --no-exact --json
expect_rc 0
expect_jsons dq_buffers 1 stages.0.differ 0
run diff --dump "$f" --stage dq --dq-buffers 2 --no-exact --json
expect_rc 1
expect_jsons dq_buffers 2 dq_buffers_from --dq-buffers stages.0.differ 1765
# normal inputs with more KV blocks than buffers (FP16; causal, batch 2)
for name in bwd_det_d64_h66_nk384 bwd_det_d32_h66_nk512_fp16 \
    bwd_det_d128_b2h22_causal; do
    run diff --dump "$ext/$name.safetensors" --stage dq,dk,dv --no-exact \
        --json
    expect_rc 0
    expect_jsons stages.0.differ 0 stages.1.differ 0 stages.2.differ 0
done
# the chain through attn: its own O and LSE (2 splits), then the backward
# with the launch's two buffers
f=$ext/bwd_det_d64_h66_nk384_mirror.safetensors
run attn --q "$f:q" --k "$f:k" --v "$f:v" --do "$f:do" --backward \
    --policy fa2 --splits 2 --dq-buffers 2 --no-exact --json \
    --out "$o/x.safetensors"
expect_rc 0
expect_jsons tiles.splits 2 tiles.dq_buffers 2
run diff --dump "$f" --o "$o/x.safetensors:o" --lse "$o/x.safetensors:lse" \
    --dq "$o/x.safetensors:dq" --dk "$o/x.safetensors:dk" \
    --dv "$o/x.safetensors:dv" --stage o,lse,dq,dk,dv --no-exact --json
expect_rc 0
expect_jsons stages.0.differ 0 stages.1.differ 0 stages.2.differ 0 \
    stages.3.differ 0 stages.4.differ 0
rm -f "$o/x.safetensors"
# auto is the rule on the whole launch, not on one head: two copies of
# the kept head with 4 multiprocessors give ceil(4 / 2) = 2 buffers
# (attn and diff compute head by head)
"$ATTN_INPUTS" heads "$f" 2 "$tmp/h1.safetensors" || exit 99
"$DIFF_INPUTS" manifest "$tmp/h1.safetensors" \
    '{"causal": false, "scale": "1/sqrt(d) (PyTorch default)"}' \
    "$tmp/h2.safetensors" || exit 99
run attn --q "$tmp/h2.safetensors:q" --k "$tmp/h2.safetensors:k" \
    --v "$tmp/h2.safetensors:v" --do "$tmp/h2.safetensors:do" \
    --o "$tmp/h2.safetensors:o" --lse "$tmp/h2.safetensors:lse" --backward \
    --policy fa2 --sms 4 --no-exact --json --out "$tmp/x2.safetensors"
expect_rc 0
expect_jsons tiles.dq_buffers 2
run diff --dump "$tmp/h2.safetensors" --dq "$tmp/x2.safetensors:dq" \
    --stage dq --sms 4 --no-exact --json
expect_rc 0
expect_jsons stages.0.differ 0
run diff --dump "$tmp/h2.safetensors" --stage dq,dk,dv --sms 4 \
    --no-exact --json
expect_rc 0
expect_jsons dq_buffers 2 dq_buffers_from default stages.0.differ 0 \
    stages.1.differ 0 stages.2.differ 0
run diff --dump "$tmp/h2.safetensors" --stage dq --sms 6 \
    --no-exact --json
expect_rc 1
expect_jsons dq_buffers 3 stages.0.differ 6952
# The non-deterministic backward: one buffer that the KV blocks' thread
# blocks add into with atomicAdd, in an order no launch fixes.  On the
# mirrored inputs the H200 gave 20 different dQ in 20 runs (the
# manifest's backward_repro), so no emulator is bit-equal to it: the
# ascending order misses 1067 elements of the dump's run; dK and dV are
# each one thread block's and bit-equal.
run diff --dump "$ext/bwd_nondet_d64_h4_nk384_mirror.safetensors" \
    --stage dq,dk,dv --no-exact --json
expect_rc 1
expect_jsons dq_buffers 1 stages.0.differ 1067 stages.1.differ 0 \
    stages.2.differ 0
"$JSONQ" "$ext/bwd_nondet_d64_h4_nk384_mirror.json" \
    backward_repro.runs backward_repro.dq_distinct \
    backward_repro.dk_distinct >"$tmp/jgot" 2>&1
if [ "$(tr '\n' ' ' <"$tmp/jgot")" = "20 20 1 " ]; then pass; else
    fail "backward_repro: $(cat "$tmp/jgot")"
fi

# ---------------------------------------------------------------------
# Bad input.
# ---------------------------------------------------------------------
f16=$ext/fp16_d64_sink.safetensors
b16=$ext/split_d64_s2.safetensors
b128=$ext/causal_d64_nq128_nk256.safetensors # BF16, Q [1, 1, 128, 64]

for cmd in attn diff; do
    if [ $cmd = attn ]; then
        set -- attn --gen normal --nq 64 --nk 512 --d 64 --policy fa2 \
            --no-exact --out "$o/x.safetensors"
    else
        set -- diff --dump "$b16" --stage o --no-exact
    fi
    run "$@" --splits 0
    expect_rc 2
    expect_no_stdout
    expect_err_has "bf16emu $cmd: --splits 0: expected 1 to 128"
    expect_no_files
    for v in 0 65537; do
        run "$@" --dq-buffers $v
        expect_rc 2
        expect_no_stdout
        expect_err_has "bf16emu $cmd: --dq-buffers $v: expected 1 to 65536 or auto"
        expect_no_files
    done
    run "$@" --dq-buffers two
    expect_rc 2
    expect_err_has "bf16emu $cmd: --dq-buffers"
    expect_no_files
    # 512 keys in the split kernel's blocks of 256 (d = 64)
    run "$@" --splits 3
    expect_rc 2
    expect_no_stdout
    expect_err_has "bf16emu $cmd: --splits 3: more splits than KV blocks (Nk = 512 in blocks of 256 keys: 2; expected 1 to 2)"
    expect_no_files
done

# a manifest's dq_buffers out of range
for v in 0 1.5 '"two"'; do
    "$DIFF_INPUTS" manifest "$b128" "{\"dq_buffers\": $v}" \
        "$tmp/m.safetensors" || exit 99
    run diff --dump "$tmp/m.safetensors" --stage dq --no-exact
    expect_rc 2
    expect_no_stdout
    expect_err_has "bf16emu diff: $tmp/m.safetensors: manifest: dq_buffers: expected an integer from 1 to 65536 or null"
done

# a description with an unknown field, or without one of its fields
sed 's/^  "name": "fa2",$/  "name": "fa2", "bogus": 1,/' "$k/fa2.json" \
    >"$k/unknown.json"
grep -v '"exp_arg"' "$k/fa2.json" >"$k/missing.json"
sed 's/"br_split": 64,//' "$k/fa2.json" >"$k/missing_tile.json"
while read -r file field what; do
    run attn --gen normal --nq 64 --nk 128 --d 64 --kernel "$k/$file" \
        --no-exact --out "$o/x.safetensors"
    expect_rc 2
    expect_no_stdout
    expect_err_has "bf16emu attn: --kernel '$k/$file': field '$field': $what"
    expect_no_files
    run diff --dump "$f16" --kernel "$k/$file" --no-exact
    expect_rc 2
    expect_no_stdout
    expect_err_has "bf16emu diff: --kernel '$k/$file': field '$field': $what"
done <<'END'
unknown.json bogus unknown field
missing.json exp_arg missing
missing_tile.json tiles[0].br_split missing
END

# BF16 and F16 mixed across Q, K, V, dO (and the backward's O)
run attn --q "$f16:q" --k "$b16:k" --v "$b16:v" --policy fa2 \
    --out "$o/x.safetensors"
expect_rc 2
expect_no_stdout
expect_err_has "--k $b16:k: dtype BF16 but Q $f16:q is F16 (expected one dtype for Q, K, V and dO: BF16 or F16)"
expect_no_files
run attn --q "$f16:q" --k "$f16:k" --v "$f16:v" --do "$b128:q" --backward \
    --policy fa2 --out "$o/x.safetensors"
expect_rc 2
expect_err_has "--do $b128:q: dtype BF16 but Q $f16:q is F16"
expect_no_files
run attn --q "$f16:q" --k "$f16:k" --v "$f16:v" --do "$f16:do" \
    --o "$b128:q" --lse "$f16:lse" --backward --policy fa2 \
    --out "$o/x.safetensors"
expect_rc 2
expect_err_has "--o $b128:q: dtype BF16 but Q is F16 (expected F16 or F32)"
expect_no_files
run diff --dump "$f16" --do "$b128:q" --stage dq --no-exact
expect_rc 2
expect_no_stdout
expect_err_has "bf16emu diff: --do $b128: q: dtype BF16 but q is F16 (expected one dtype for q, k, v and do, BF16 or F16)"
run diff --dump "$b16" --k "$f16:k" --stage o --no-exact
expect_rc 2
expect_err_has "bf16emu diff: --k $f16: k: dtype F16 but q is BF16"

finish
