#!/bin/sh
# test_cudnn_model.sh -- the cudnn description against cuDNN on the H200
#
# Every dump of tests/data/gpu/backends (cuDNN's O and LSE beside the
# other backends', on the same inputs) and of tests/data/gpu/cudnn (cuDNN
# alone, and PyTorch's default choice) is diffed with the cudnn
# description; the test asserts the number of bit-equal elements of O and
# LSE per dump, as measured (doc/notes/gpu-crosscheck-log.md, "cuDNN
# model").  A count that moves either way fails and prints the first differing
# element in hex.  Then --policy sdpa: the backend PyTorch 2.11 picks,
# the note on stderr, --sdpa-backends, and the refusals.

. "${srcdir:-.}/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
B=${srcdir:-.}/tests/data/gpu/backends
C=${srcdir:-.}/tests/data/gpu/cudnn
need_data "$B/d64_normal.safetensors" "$C/mb_d64_nq256_nk1024.safetensors"

# jq PATH: the value at PATH of the last output.

# The 24 backend dumps, and decode_d128_nk256_gen (the launch of
# decode_d128_nk256 dumped again on generated inputs, where the cudnn
# description misses 39 of O's 128 elements: a known gap, asserted so
# that a change of it shows): NAME O-EQUAL O-TOTAL LSE-EQUAL LSE-TOTAL.
while read -r name oe on le ln; do
    f=$B/$name.safetensors
    run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
        --lse "$f:cudnn.lse" --policy cudnn --stage o,lse --splits 1 \
        --no-exact --json
    expect_stage "$name" 0 o "$oe" "$on"
    expect_stage "$name" 1 lse "$le" "$ln"
done <<'END'
d128_bwd_normal 8192 8192 64 64
d128_causal_normal 16384 16384 128 128
d128_causal_repmax4_fp16 16384 16384 128 128
d128_causal_sink 16384 16384 128 128
d128_normal 8192 8192 64 64
d128_normal_fp16 8192 8192 64 64
d128_nq64_nk129_repmax2 8192 8192 64 64
d128_repmax4 8192 8192 64 64
d128_sink 8192 8192 64 64
d64_bwd_normal 4096 4096 64 64
d64_bwd_sink_causal 4096 4096 64 64
d64_causal_normal 8192 8192 128 128
d64_causal_repmax8 8192 8192 128 128
d64_causal_sink 8192 8192 128 128
d64_normal 4096 4096 64 64
d64_normal_fp16 4096 4096 64 64
d64_nq100_nk200 6400 6400 100 100
d64_repmax4 4096 4096 64 64
d64_sink 4096 4096 64 64
d64_sink_fp16 4096 4096 64 64
decode_d128_nk256 128 128 1 1
decode_d128_nk256_gen 89 128 1 1
decode_d64_nk512 64 64 1 1
decode_d64_nk512_fp16 64 64 1 1
decode_d64_nk512_sink 64 64 1 1
END

# cuDNN pinned ("backend": "cudnn"): no option, the manifest decides,
# cuDNN's decode engine with the lean reduction included (S splits of
# the launch's shape, split s on the tiles s, s + S, ...; combine
# "lean").  O is exact; the LSE (decode_lse lg2-fma) is not reproducible
# on the GPU itself (doc/notes/gpu-crosscheck-log.md), so a row may
# stay 1 ulp off (none here since the reduction's single pass).  The
# files keep one head of each launch (the manifest's heads_from), chosen
# where half the split count changes O bits; the split count is the
# launch's (launch_shape).
while read -r name oe on le ln; do
    run diff --dump "$C/$name.safetensors" --stage o,lse --no-exact --json
    expect_stage "$name" 0 o "$oe" "$on"
    expect_stage "$name" 1 lse "$le" "$ln"
done <<'END'
mb_d64_nq256_nk1024 16384 16384 256 256
mb_d128_causal_512 65536 65536 512 512
mb_d64_fp16_nq128_nk768 8192 8192 128 128
dec_d64_nk1024 64 64 1 1
dec_d64_nk4096 64 64 1 1
dec_d128_nk2048 128 128 1 1
dec_d128_nk600 128 128 1 1
dec_d64_nk1000_sink 64 64 1 1
dec_d64_nk1024_fp16 64 64 1 1
lean_d64_nk513 64 64 1 1
lean_d64_nk600 64 64 1 1
lean_d128_nk700 128 128 1 1
lean_d64_nk1000 64 64 1 1
lean_d64_nk1024 64 64 1 1
lean_d64_nk1536 64 64 1 1
END

# The kept heads still tell the split count and the partition apart:
# half the launch's splits, one split, and the flash kernel's
# description each change O bits.
while read -r name s; do
    for alt in "--splits $((s / 2))" "--splits 1" "--policy fa2 --splits auto"
    do
        # shellcheck disable=SC2086
        run diff --dump "$C/$name.safetensors" --stage o --no-exact --json \
            $alt
        o=$(jq stages.0.equal)
        [ "$(jq stages.0.elements)" -gt "${o:-0}" ] 2>/dev/null && pass \
            || fail "$name $alt: O $o of $(jq stages.0.elements) bit-equal," \
                "expected some to differ"
    done
done <<'END'
dec_d64_nk1024 8
lean_d64_nk513 4
lean_d64_nk600 4
lean_d128_nk700 4
lean_d64_nk1000 4
lean_d64_nk1024 8
lean_d64_nk1536 8
END

# The FP16 reciprocal probe (cudnn_lean_probe.py): Q and K of
# d64_normal_fp16, V with one nonzero key per column, chosen so that 1/l
# one ulp away from RN32(1/l) changes an FP16 O element: only the
# rcp.approx model (normalize "reciprocal-approx", rcp-sm90) gives all
# (RN32(1/l): 16364).
f=$C/fp16_rcp_probe.safetensors
run diff --dump "$f" --policy cudnn --splits 1 --stage o,lse --no-exact --json
expect_stage fp16_rcp_probe 0 o 16384 16384
expect_stage fp16_rcp_probe 1 lse 256 256

# PyTorch's defaults ("backend": "default", no LSE): --policy sdpa from
# the manifest picks cuDNN and passes.
for name in mb_d64_default_nq128_nk512 dec_d64_nk1024_default; do
    run diff --dump "$C/$name.safetensors" --stage o --no-exact --json
    expect_rc 0
    expect_err_has "--policy sdpa: cudnn ("
    [ "$(jq policy)" = cudnn ] && pass || fail "policy $(jq policy)"
done
expect_err_has "+ lean_reduction), description cudnn"

# --describe and back: the same bits.
run attn --policy cudnn --describe
expect_rc 0
cp "$tmp/out" "$tmp/cudnn.json"
[ "$(jq name)" = cudnn ] && [ "$(jq rowsum)" = quad-block ] \
    && [ "$(jq lse)" = fma-ln2 ] && [ "$(jq alpha_arg)" = scale-sub ] \
    && [ "$(jq combine)" = lean ] && pass \
    || fail "describe: $(jq name) $(jq rowsum) $(jq lse) $(jq alpha_arg)" \
        "$(jq combine)"
f=$B/d64_normal.safetensors
run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --o "$f:cudnn.o" \
    --lse "$f:cudnn.lse" --kernel "$tmp/cudnn.json" --stage o,lse \
    --splits 1 --no-exact --json
expect_stage "d64_normal --kernel" 0 o 4096 4096
expect_stage "d64_normal --kernel" 1 lse 64 64

# is_causal with Nq != Nk: the chosen backend's alignment (top-left for
# cuDNN's one-row decode, memory-efficient and math), noted on stderr; not
# measured for cuDNN with more rows: exit 2 unless --causal-align.
o=$tmp/causal.safetensors
run attn --gen normal --nq 1 --nk 600 --d 64 --causal --policy sdpa \
    --no-exact --out "$o"
expect_rc 0
expect_err_has "the causal mask aligned top-left (cudnn's is_causal"
run attn --gen normal --nq 64 --nk 128 --d 64 --causal --policy sdpa \
    --sdpa-backends efficient --no-exact
expect_rc 0
expect_err_has "the causal mask aligned top-left (efficient's is_causal"
rm -f "$o"
run attn --gen normal --nq 64 --nk 128 --d 64 --causal --policy sdpa \
    --no-exact --out "$o"
expect_rc 2
expect_err_has "give --causal-align top-left or bottom-right"
[ ! -e "$o" ] && pass || fail "$o written after exit 2"
run attn --gen normal --nq 64 --nk 128 --d 64 --causal --policy sdpa \
    --causal-align bottom-right --no-exact
expect_rc 0

# attn --policy sdpa: the choice and why on stderr.
run attn --gen normal --nq 64 --nk 256 --d 64 --policy sdpa --no-exact
expect_rc 0
expect_err_has "--policy sdpa: cudnn (sm90_flash_fprop_wgmma_f16_knob_7_64x128x64), description cudnn"
run attn --gen normal --nq 64 --nk 256 --d 64 --policy sdpa \
    --sdpa-backends flash,math --no-exact
expect_rc 0
expect_err_has "--policy sdpa: flash (flash_fwd_kernel hdim 64), description fa2"
run attn --gen normal --nq 1 --nk 1024 --d 64 --policy sdpa --no-exact
expect_rc 0
expect_err_has "lean_reduction), description cudnn"
# the decode engine's split count, as its grid.x on the H200 (the
# dispatch grid, the dumps' manifests, the crafted-row launches): HEADS
# NK S
while read -r h nk sp; do
    run attn --gen normal --nq 1 --heads "$h" --nk "$nk" --d 64 \
        --policy sdpa --no-exact --json
    [ "$(jq tiles.splits)" = "$sp" ] && pass \
        || fail "H $h, Nk $nk: splits $(jq tiles.splits), expected $sp"
done <<'END'
1 513 4
1 1000 4
1 1023 8
1 1024 8
1 1536 8
1 4096 32
32 4096 8
64 2048 4
135 1024 1
END
# one split: the engine alone, no lean reduction
expect_err_has "--policy sdpa: cudnn (sm80_flash_fprop_wmma_f16_knob_35_16x128x64), description cudnn"
# a backend without a description yet: exit 2, saying so
for be in efficient math; do
    if "$BF16EMU" attn --policy "$be" --describe >/dev/null 2>&1; then
        continue
    fi
    run attn --gen normal --nq 64 --nk 256 --d 64 --policy sdpa \
        --sdpa-backends "$be" --no-exact
    expect_rc 2
    expect_err_has "there is no description '$be' yet"
done
run attn --gen normal --policy sdpa --sdpa-backends flash,cuda
expect_rc 2
expect_err_has "--sdpa-backends 'flash,cuda': unknown backend 'cuda'"
run attn --gen normal --policy fa2 --sdpa-backends flash
expect_rc 2
expect_err_has "--sdpa-backends applies to --policy sdpa"
run attn --policy sdpa --describe
expect_rc 2

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
