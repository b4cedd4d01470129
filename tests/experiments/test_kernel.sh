#!/bin/sh
# test_kernel.sh -- kernel descriptions on the command line: attn
# --describe for every policy, the description read back with --kernel
# gives the policy's bits on several shapes (forward and backward, causal,
# split-KV), every malformed description refused (exit 2, the file and
# the field named, nothing written), --splits and --splits auto (PyTorch
# 2.11's rule: the single-split shapes of the GPU dumps, and shapes
# computed by hand), and diff --kernel / --splits on a GPU dump.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_attn_inputs
gpu=$srcdir/tests/data/gpu

o=$tmp/o
k=$tmp/k
mkdir "$o" "$k" || exit 99

# ---------------------------------------------------------------------
# --describe, then --kernel: the same bits as --policy.
# ---------------------------------------------------------------------
for pol in fa2 paper-eq4 repo fp32; do
    run attn --policy "$pol" --describe
    expect_rc 0
    expect_no_stderr
    cp "$tmp/out" "$k/$pol.json"
    if "$JSONQ" "$k/$pol.json" name >"$tmp/name" 2>&1 \
        && [ "$(cat "$tmp/name")" = "$pol" ]; then
        pass
    else
        fail "--describe of $pol: name is '$(cat "$tmp/name")'"
    fi
    # the description of a description is itself
    run attn --kernel "$k/$pol.json" --describe
    expect_rc 0
    if cmp -s "$tmp/out" "$k/$pol.json"; then
        pass
    else
        fail "--kernel $pol.json --describe differs from --policy $pol"
    fi
    for shape in "--nq 12 --nk 20 --d 8" "--nq 130 --nk 300 --d 40 --causal" \
        "--nq 3 --nk 700 --d 96"; do
        run attn --gen normal --seed 5 --batch 2 --heads 2 $shape \
            --policy "$pol" --backward --no-exact --out "$o/a.safetensors"
        expect_rc 0
        run attn --gen normal --seed 5 --batch 2 --heads 2 $shape \
            --kernel "$k/$pol.json" --backward --no-exact \
            --out "$o/b.safetensors"
        expect_rc 0
        expect_same "$o/a.safetensors" "$o/b.safetensors" o lse delta dq dk dv
        rm -f "$o/a.safetensors" "$o/b.safetensors"
    done
done
# split-KV through the description
run attn --gen normal --seed 2 --nq 5 --nk 1000 --d 64 --policy fa2 \
    --splits 3 --no-exact --out "$o/a.safetensors"
expect_rc 0
run attn --gen normal --seed 2 --nq 5 --nk 1000 --d 64 \
    --kernel "$k/fa2.json" --splits 3 --no-exact --out "$o/b.safetensors"
expect_rc 0
expect_same "$o/a.safetensors" "$o/b.safetensors" o lse
rm -f "$o/a.safetensors" "$o/b.safetensors"
# a changed field changes bits: the row sum without its FFMA
sed 's/"rowsum_fma": true/"rowsum_fma": false/' "$k/fa2.json" >"$k/sep.json"
run attn --gen normal --seed 4 --heads 16 --nq 128 --nk 512 --d 64 \
    --kernel "$k/sep.json" --no-exact --json
expect_rc 0
expect_jsons policy fa2
run attn --gen normal --seed 4 --heads 16 --nq 128 --nk 512 --d 64 \
    --kernel "$k/sep.json" --no-exact --out "$o/a.safetensors"
run attn --gen normal --seed 4 --heads 16 --nq 128 --nk 512 --d 64 \
    --policy fa2 --no-exact --out "$o/b.safetensors"
if "$ATTN_INPUTS" same "$o/a.safetensors" "$o/b.safetensors" o lse \
    >/dev/null 2>&1; then
    fail "rowsum_fma false gave the bits of rowsum_fma true"
else
    pass
fi
rm -f "$o/a.safetensors" "$o/b.safetensors"

jq_o() { "$JSONQ" "$tmp/out" stages.0.differ 2>/dev/null; }

# ---------------------------------------------------------------------
# Malformed descriptions: exit 2, the file and the field named.
# ---------------------------------------------------------------------
badk()
{
    expect_error "$1" attn --gen normal --kernel "$2" --out "$o/x.safetensors"
    expect_no_files
}
f=$k/fa2.json
sed 's/"visit": "block",/"visit": "block", "colour": 3,/' "$f" >"$k/b1.json"
badk "--kernel '$k/b1.json': field 'colour': unknown field" "$k/b1.json"
grep -v '"rowsum_clamp"' "$f" >"$k/b2.json"
badk "--kernel '$k/b2.json': field 'rowsum_clamp': missing" "$k/b2.json"
sed 's/"exp_arg": "scale-sub"/"exp_arg": "scale-add"/' "$f" >"$k/b3.json"
badk "--kernel '$k/b3.json': field 'exp_arg': expected one of sub, sub-round, sub-once, scale-sub, scale-fma" "$k/b3.json"
sed 's/"splits": 1/"splits": 0/' "$f" >"$k/b4.json"
badk "--kernel '$k/b4.json': field 'splits': expected 1 to 128" "$k/b4.json"
sed 's/"s": "sm90"/"s": "sm91"/' "$f" >"$k/b5.json"
badk "--kernel '$k/b5.json': field 'mma': an unknown preset" "$k/b5.json"
sed 's/"decode_span_order": "tree"/"decode_span_order": "0113"/' "$f" >"$k/b5o.json"
badk "--kernel '$k/b5o.json': field 'decode_span_order': expected \"tree\" or a permutation" "$k/b5o.json"
sed 's/"score_scaled": false/"score_scaled": "no"/' "$f" >"$k/b6.json"
badk "--kernel '$k/b6.json': field 'score_scaled': expected true or false" "$k/b6.json"
sed '0,/"bc": 128,/s/"bc": 128,/"bc": 128, "bk": 1,/' "$f" >"$k/b7.json"
badk "--kernel '$k/b7.json': field 'tiles[0].bk': unknown field" "$k/b7.json"
sed 's/"score_scaled": false/"score_scaled": true/' "$f" >"$k/b8.json"
badk "--kernel '$k/b8.json': field 'exp_arg': scale-sub and scale-fma need unscaled scores" "$k/b8.json"
printf '{"name": "x",' >"$k/b9.json"
badk "--kernel '$k/b9.json': line 1:" "$k/b9.json"
badk "--kernel '$k/none.json': line -1: unable to open" "$k/none.json"
run attn --gen normal --kernel "$f" --policy fa2
expect_rc 2
expect_err_has "--kernel '$f' and --policy: expected one of them"

# ---------------------------------------------------------------------
# --splits
# ---------------------------------------------------------------------
bads()
{
    _m=$1
    shift
    expect_error "$_m" attn "$@" --out "$o/x.safetensors"
    expect_no_files
}
bads "--splits 0: expected 1 to 128" --gen normal --policy fa2 --splits 0
bads "--splits 129: expected 1 to 128" --gen normal --policy fa2 --splits 129
bads "--splits 'x': " --gen normal --policy fa2 --splits x
bads "--splits 3: more splits than KV blocks" --gen normal --policy fa2 \
    --nk 512 --splits 3
bads "split-KV needs a kernel with the quad row sum" --gen normal \
    --policy fp32 --splits 2
bads "--capture: m, l and obar are not defined with --splits above 1" \
    --gen normal --policy fa2 --nk 1024 --splits 2 --capture m
bads "--sms 0: expected 1 to 100000" --gen normal --policy fa2 --sms 0

# --splits auto: the GPU dumps ran the non-split kernel (their manifests'
# flash_fwd_kernel), so the rule gives 1 for their launches' shapes
for m in "$gpu"/sdpa_h200_*.json; do
    case $m in *_rows.json) continue ;; esac
    s=shape
    "$JSONQ" "$m" launch_shape.heads >/dev/null 2>&1 && s=launch_shape
    b=$("$JSONQ" "$m" $s.batch) h=$("$JSONQ" "$m" $s.heads)
    nq=$("$JSONQ" "$m" $s.nq) nk=$("$JSONQ" "$m" $s.nk)
    d=$("$JSONQ" "$m" $s.d)
    run attn --gen normal --batch "$b" --heads "$h" --nq "$nq" --nk "$nk" \
        --d "$d" --policy fa2 --splits auto --no-exact --json
    expect_rc 0
    expect_jsons tiles.splits 1
done
# by hand: B H ceil(Nq/64) blocks against 0.8 * 2 * 132 = 211.2; else the
# smallest eligible split count within 85 % of the best wave efficiency
#   1 x 1 x 1024 x 1024, d 128: 16 blocks, 8 KV blocks; eff(s) = 16 s /
#     264 grows to s = 8 -> 8
#   1 x 1 x 1 x 32768, d 64: 1 block, 128 KV blocks of 256; eff(s) =
#     s / 264; the best at 128, and the only eligible count above
#     0.85 * 128 = 108.8 is 128 -> 128
#   4 x 14 x 256 x 512, d 64: 224 blocks >= 211.2 -> 1
#   1 x 8 x 64 x 2048, d 128: 8 blocks, 16 KV blocks; eff(s) = 8 s / 264
#     up to s = 16 (0.485); 0.85 of it needs s >= 13.6, and 14, 15 are not
#     eligible (ceil(16/14) = ceil(16/13) = 2) -> 16
#   --sms 8: 1 x 1 x 64 x 1024, d 64: 1 block, 4 KV blocks, 16 SMs;
#     eff(s) = s / 16 -> 4
while read -r b h nq nk d sms want; do
    run attn --gen normal --batch "$b" --heads "$h" --nq "$nq" --nk "$nk" \
        --d "$d" --policy fa2 --splits auto --sms "$sms" --no-exact --json \
        --max-memory 16G
    expect_rc 0
    expect_jsons tiles.splits "$want"
done <<'END'
1 1 1024 1024 128 132 8
1 1 1 32768 64 132 128
1 8 64 2048 128 132 16
1 1 64 1024 64 8 4
END
run attn --gen normal --batch 4 --heads 14 --nq 256 --nk 512 --d 64 \
    --policy fa2 --splits auto --no-exact --json
expect_rc 0
expect_jsons tiles.splits 1

# ---------------------------------------------------------------------
# diff: --kernel gives --policy's result; --splits on a non-split dump
# ---------------------------------------------------------------------
run diff --dump "$gpu/sdpa_h200_d64.safetensors" --stage o --json
expect_rc 0
expect_jsons policy fa2
run diff --dump "$gpu/sdpa_h200_d64.safetensors" --stage o --json \
    --kernel "$k/fa2.json"
expect_rc 0
expect_jsons policy fa2 stages.0.equal 32768
run diff --dump "$gpu/sdpa_h200_d64.safetensors" --stage o --splits auto \
    --json
expect_rc 0
expect_jsons stages.0.equal 32768
run diff --dump "$gpu/fa_h200_d64.safetensors" --stage o --splits 2
expect_rc 2
expect_err_has "--splits 2: more splits than KV blocks"

# ---------------------------------------------------------------------
# The H200's extended SDPA dumps (tests/data/gpu/sdpa_ext, PyTorch 2.11's
# flash backend; each manifest records the split count read from the
# split kernel's grid): the split count auto predicts from the launch
# shape; O and LSE bit for bit with the built-in fa2 and the manifest's
# split count (head dimensions 8 to 256, decode, split-KV through the
# combine's CUDA expf and logf, up to 128 splits: the combine kernels of
# 64 and 128 splits).
# ---------------------------------------------------------------------
ext=$gpu/sdpa_ext
for name in d32_normal d96_repmax4 causal_d256_nq128_nk64 d160_causal \
    decode_d16_nk16384 split_d64_s5 split_d256_s2 split_d64_h20_s2 \
    split_d128_s6 decode_d64_nk2048 split_d16_s40 split_d8_s128 \
    split_d128_s4_fp16 decode_d256_nk384_fp16_repmax; do
    m=$ext/$name.json
    sp=$("$JSONQ" "$m" splits)
    b=$("$JSONQ" "$m" launch_shape.batch) h=$("$JSONQ" "$m" launch_shape.heads)
    nq=$("$JSONQ" "$m" launch_shape.nq) nk=$("$JSONQ" "$m" launch_shape.nk)
    d=$("$JSONQ" "$m" launch_shape.d)
    run attn --gen normal --batch "$b" --heads "$h" --nq "$nq" --nk "$nk" \
        --d "$d" --policy fa2 --splits auto --no-exact --json \
        --max-memory 16G
    expect_rc 0
    expect_jsons tiles.splits "$sp"
    run diff --dump "$ext/$name.safetensors" --stage o,lse --splits "$sp" \
        --policy fa2 --no-exact --json
    expect_rc 0
    expect_jsons stages.0.stage o stages.0.differ 0 \
        stages.1.stage lse stages.1.differ 0
done
# the combine's exp and log: with the correctly rounded ones (the old
# description) the split dumps differ
sed -e 's/"combine_exp": "cuda-expf"/"combine_exp": "cr"/' \
    -e 's/"combine_log": "cuda-logf"/"combine_log": "cr"/' "$k/fa2.json" \
    >"$k/fa2-cr-combine.json"
run diff --dump "$ext/split_d64_s5.safetensors" --stage lse --splits 5 \
    --kernel "$k/fa2-cr-combine.json" --no-exact --json
expect_rc 1
expect_jsons stages.0.differ 2

# without --splits, diff takes the manifest's split count
run diff --dump "$ext/split_d64_s3.safetensors" --stage o --json
expect_rc 0
expect_jsons splits 3 splits_from manifest stages.0.differ 0
run diff --dump "$ext/split_d64_s3.safetensors" --stage o --splits 1 --json
expect_jsons splits 1 splits_from --splits
if [ "$(jq_o)" != 0 ]; then pass; else fail "split_d64_s3 unsplit: O equal"; fi

# FP16 dumps: the dtype from the file, P~ and O in FP16 ("in"), O and LSE
# bit for bit (split and not, decode; split and decode at d = 128, 256)
for name in fp16_d64_normal fp16_d128_normal_causal fp16_d32_sink \
    decode_d32_nk1024_fp16 causal_d96_nq100_nk300_fp16 split_d128_s4_fp16 \
    split_d256_s4_fp16_sink decode_d128_nk512_fp16 \
    decode_d256_nk384_fp16_repmax; do
    m=$ext/${name}.json
    sp=$("$JSONQ" "$m" splits)
    run diff --dump "$ext/$name.safetensors" --stage o,lse --splits "$sp" \
        --policy fa2 --json
    expect_rc 0
    expect_jsons stages.0.format f16 stages.0.gpu_dtype F16 \
        stages.0.differ 0 stages.1.differ 0
done
# mixed BF16 and F16 inputs
f16=$ext/fp16_d64_sink.safetensors
b16=$ext/split_d64_s2.safetensors
run attn --q "$f16:q" --k "$b16:k" --v "$b16:v" --policy fa2 \
    --out "$o/x.safetensors"
expect_rc 2
expect_no_stdout
expect_err_has "--k $b16:k: dtype BF16 but Q $f16:q is F16 (expected one dtype for Q, K, V and dO: BF16 or F16)"
expect_no_files
run attn --q "$f16:q" --k "$f16:k" --v "$f16:v" --policy fa2 --json \
    --out "$o/x.safetensors"
expect_rc 0
expect_jsons inputs.q.dtype F16 exact.run true
read_dt() { "$ATTN_INPUTS" header "$o/x.safetensors" 2>&1; }
if read_dt | grep -q '^tensor q F16'; then pass; else fail "q not written as F16: $(read_dt)"; fi
rm -f "$o/x.safetensors"

finish
