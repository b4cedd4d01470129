#!/bin/sh
# test_cudnn_bwd.sh -- the cudnn description's backward (bwd "cudnn") and
# its d = 192, 256 rows against cuDNN 9.19 on the H200
#
# The dumps of experiments/gpu/probes/cudnn_bwd_probe.py
# (tests/data/gpu/cudnn/bwd_*: random inputs, the order probes ord_* and
# the delta probes del_*; the manifest pins cuDNN, so diff runs --policy
# sdpa with cuDNN alone) and the three backend dumps with cuDNN's
# gradients are diffed with the description; the test asserts the number
# of bit-equal elements of dQ, dK and dV per dump, as measured
# (doc/notes/gpu-crosscheck-log.md, "cuDNN backward").  A count that
# moves either way fails and prints the first differing element in hex.

. "${srcdir:-.}/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
B=${srcdir:-.}/tests/data/gpu/backends
C=${srcdir:-.}/tests/data/gpu/cudnn
need_data "$B/d64_bwd_normal.safetensors" "$C/bwd_rand_d64_n256.safetensors"


# NAME DQ DK DV TOTAL-DQ TOTAL-KV WHOLE-DQ WHOLE-KV: the bit-equal and
# stored elements, and for a gradient the dump keeps in part (rand_*,
# big_*, ord_*, del_*: outputs_kept, experiments/gpu/trim_dump.py --rows)
# the whole tensor's elements, whose hash must be the GPU's ("-": stored
# whole; rand_d64_nq128_nk1024 and ord_d64_nq64_nk1024 keep their dQ
# whole for the elements that differ)
while read -r name q k v nq nk wq wk; do
    run diff --dump "$C/bwd_$name.safetensors" --stage dq,dk,dv --no-exact \
        --json
    expect_err_has "--policy sdpa: cudnn ("
    expect_stage "$name" 0 dq "$q" "$nq"
    expect_stage "$name" 1 dk "$k" "$nk"
    expect_stage "$name" 2 dv "$v" "$nk"
    expect_kept "$name" 0 dq "$wq"
    expect_kept "$name" 1 dk "$wk"
    expect_kept "$name" 2 dv "$wk"
done <<'END'
rand_d64_n256 2496 2496 2496 2496 2496 16384 16384
rand_d64_n512_causal 3008 3008 3008 3008 3008 32768 32768
rand_d128_n256 4992 4992 4992 4992 4992 32768 32768
rand_d64_n256_sink 2496 2496 2496 2496 2496 16384 16384
rand_d64_n256_repmax4 2496 2496 2496 2496 2496 16384 16384
rand_d64_nq128_nk1024 8191 4032 4032 8192 4032 - 65536
rand_d128_nq192_nk320 4736 5248 5248 4736 5248 24576 40960
rand_d64_n256_fp16 2496 2496 2496 2496 2496 16384 16384
rand_d128_n256_causal_sink 4992 4992 4992 4992 4992 32768 32768
ord_d64_n64 4224 4224 4224 4224 4224 8192 8192
ord_d64_n256 2496 2496 2496 2496 2496 16384 16384
ord_d128_n64 8448 8448 8448 8448 8448 16384 16384
ord_d128_n256 4992 4992 4992 4992 4992 32768 32768
ord_d64_nq64_nk1024 4009 4032 4032 4096 4032 - 65536
del_d64_a 8448 8448 8448 8448 8448 16384 16384
del_d64_b 8448 8448 8448 8448 8448 16384 16384
del_d128_a 4480 4480 4480 4480 4480 16384 16384
big_d192_bwd 7488 7488 7488 7488 7488 49152 49152
big_d256_bwd 9984 9984 9984 9984 9984 65536 65536
END

# d = 192 and 256: PyTorch 2.11 picks cuDNN (64x128x192, 64x128x256);
# the same forward, O and LSE.
while read -r name oe on le ln; do
    run diff --dump "$C/bwd_$name.safetensors" --stage o,lse --no-exact \
        --json
    expect_err_has "sm90_flash_fprop_wgmma_f16_knob_7_64x128x"
    expect_stage "$name" 0 o "$oe" "$on"
    expect_stage "$name" 1 lse "$le" "$ln"
done <<'END'
big_d192_bwd 49152 49152 256 256
big_d256_bwd 65536 65536 256 256
END

# The backend dumps (cuDNN's gradients beside the other backends').
for name in d64_bwd_normal d64_bwd_sink_causal d128_bwd_normal; do
    f=$B/$name.safetensors
    n=4096
    [ "$name" = d128_bwd_normal ] && n=8192
    run diff --dump "$f" --q "$f:q" --k "$f:k" --v "$f:v" --do "$f:do" \
        --o "$f:cudnn.o" --lse "$f:cudnn.lse" --dq "$f:cudnn.dq" \
        --dk "$f:cudnn.dk" --dv "$f:cudnn.dv" --policy cudnn \
        --stage dq,dk,dv --splits 1 --no-exact --json
    expect_stage "$name" 0 dq $n $n
    expect_stage "$name" 1 dk $n $n
    expect_stage "$name" 2 dv $n $n
done

# The description names the scheme; --describe and back gives the same.
run attn --policy cudnn --describe
expect_rc 0
cp "$tmp/out" "$tmp/cudnn.json"
[ "$(jq bwd)" = cudnn ] && [ "$(jq bwd_query_order)" = forward ] \
    && [ "$(jq tiles.2.d_max)" = 256 ] && [ "$(jq tiles.2.bc_bwd)" = 128 ] \
    && pass || fail "describe: bwd $(jq bwd) $(jq bwd_query_order)" \
        "tiles.2 $(jq tiles.2.d_max) $(jq tiles.2.bc_bwd)"
run diff --dump "$C/bwd_rand_d128_n256.safetensors" --kernel "$tmp/cudnn.json" \
    --stage dq,dk,dv --no-exact --json
expect_stage "rand_d128_n256 --kernel" 0 dq 4992 4992
expect_stage "rand_d128_n256 --kernel" 1 dk 4992 4992
expect_kept "rand_d128_n256 --kernel" 0 dq 32768
expect_kept "rand_d128_n256 --kernel" 1 dk 32768

# attn --policy sdpa at d = 192 and 256 runs cuDNN's description.
for d in 192 256; do
    run attn --gen normal --nq 64 --nk 128 --d $d --policy sdpa --no-exact
    expect_rc 0
    expect_err_has "sm90_flash_fprop_wgmma_f16_knob_7_64x128x$d), description cudnn"
done

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
