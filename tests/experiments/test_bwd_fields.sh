#!/bin/sh
# test_bwd_fields.sh -- the tiled backward as the bwd_* fields of a
# description: --describe writes them and --kernel reads them back; the
# fields, not the preset that "bwd" names, give the bits (cudnn's fields
# under "bwd": "fa2" are cudnn's backward); a description without them
# takes the preset of "bwd"; one changed field runs another valid backward
# (fa2 with bwd_dq "reverse", with cuDNN's delta); unknown
# values and combinations the engine cannot run are refused (exit 2, the
# field named).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_attn_inputs

o=$tmp/o
k=$tmp/k
mkdir "$o" "$k" || exit 99
shape="--gen normal --seed 3 --heads 2 --nq 200 --nk 300 --d 64 --causal"

expect_field()
{
    file=$1
    name=$2
    want=$3
    if "$JSONQ" "$file" "$name" >"$tmp/v" 2>&1 && [ "$(cat "$tmp/v")" = "$want" ]
    then
        pass
    else
        fail "$file: $name is '$(cat "$tmp/v")', expected '$want'"
    fi
}

# bits of description FILE (or --policy NAME) into OUT
bits()
{
    out=$1
    shift
    run attn $shape "$@" --backward --no-exact --out "$out"
    expect_rc 0
}

# ---------------------------------------------------------------------
# --describe writes the fields: fa2's and cudnn's rows.
# ---------------------------------------------------------------------
for pol in fa2 cudnn; do
    run attn --policy "$pol" --describe
    expect_rc 0
    cp "$tmp/out" "$k/$pol.json"
done
expect_field "$k/fa2.json" bwd_keys m-block-min
expect_field "$k/fa2.json" bwd_delta dot-do-o
expect_field "$k/fa2.json" bwd_p scale-log2
expect_field "$k/fa2.json" bwd_ds p-dp
expect_field "$k/fa2.json" bwd_dq buffers
expect_field "$k/fa2.json" bwd_dkv mma
expect_field "$k/fa2.json" bwd_out in
expect_field "$k/cudnn.json" bwd_delta cudnn
expect_field "$k/cudnn.json" bwd_p log2e-fma
expect_field "$k/cudnn.json" bwd_ds p-dp-scale
expect_field "$k/cudnn.json" bwd_dq reverse

# ---------------------------------------------------------------------
# The fields give the bits: cudnn's description under "bwd": "fa2" (its
# fields kept) is cudnn's backward; without its bwd_* fields, the preset
# of "bwd": "cudnn" is too.
# ---------------------------------------------------------------------
bits "$o/cudnn.safetensors" --policy cudnn
sed 's/"bwd": "cudnn"/"bwd": "fa2"/' "$k/cudnn.json" >"$k/c-fa2.json"
bits "$o/c-fa2.safetensors" --kernel "$k/c-fa2.json"
expect_same "$o/cudnn.safetensors" "$o/c-fa2.safetensors" o lse delta dq dk dv
sed -e '/"bwd_[a-z]*": /d' -e 's/"rowsum_col_warps": \([0-9]*\),/"rowsum_col_warps": \1/' \
    "$k/cudnn.json" >"$k/c-old.json"
if grep -q '"bwd_dq"' "$k/c-old.json"; then
    fail "c-old.json still holds bwd_dq"
else
    pass
fi
run attn --kernel "$k/c-old.json" --describe
expect_rc 0
if cmp -s "$tmp/out" "$k/cudnn.json"; then
    pass
else
    fail "a cudnn description without the bwd_* fields does not take cudnn's"
fi
bits "$o/c-old.safetensors" --kernel "$k/c-old.json"
expect_same "$o/cudnn.safetensors" "$o/c-old.safetensors" o lse delta dq dk dv

# ---------------------------------------------------------------------
# One field changed, another valid backward.  fa2 with dQ added over the
# key tiles in one buffer, the last tile first (both with FP32 outputs,
# bwd_out "f32", so that the order shows): the description reads back;
# O, LSE, delta, dK and dV are the same, dQ is not.  fa2 with cuDNN's
# delta: O, LSE and dV (which takes no delta) are fa2's, delta is not.
# ---------------------------------------------------------------------
sed 's/"bwd_out": "in"/"bwd_out": "f32"/' "$k/fa2.json" >"$k/f-out.json"
sed 's/"bwd_dq": "buffers"/"bwd_dq": "reverse"/' "$k/f-out.json" >"$k/f-rev.json"
run attn --kernel "$k/f-rev.json" --describe
expect_rc 0
cp "$tmp/out" "$k/f-rev2.json"
expect_field "$k/f-rev2.json" bwd_dq reverse
expect_field "$k/f-rev2.json" bwd_out f32
if cmp -s "$k/f-rev.json" "$k/f-rev2.json"; then
    pass
else
    fail "f-rev.json does not describe itself"
fi
bits "$o/f-out.safetensors" --kernel "$k/f-out.json"
bits "$o/f-rev.safetensors" --kernel "$k/f-rev.json"
expect_same "$o/f-out.safetensors" "$o/f-rev.safetensors" o lse delta dk dv
expect_differ()
{
    if "$ATTN_INPUTS" same "$1" "$2" "$3" >/dev/null; then
        fail "$1 and $2: the same $3"
    else
        pass
    fi
}
expect_differ "$o/f-out.safetensors" "$o/f-rev.safetensors" dq
bits "$o/fa2.safetensors" --policy fa2
sed 's/"bwd_delta": "dot-do-o"/"bwd_delta": "cudnn"/' "$k/fa2.json" \
    >"$k/f-delta.json"
bits "$o/f-delta.safetensors" --kernel "$k/f-delta.json"
expect_same "$o/fa2.safetensors" "$o/f-delta.safetensors" o lse dv
expect_differ "$o/fa2.safetensors" "$o/f-delta.safetensors" delta

# ---------------------------------------------------------------------
# Refused: an unknown value (the allowed ones listed) and combinations the
# tiled backward cannot run.
# ---------------------------------------------------------------------
badk()
{
    file=$2
    expect_error "$1" attn --gen normal --kernel "$file" --backward \
        --out "$o/x.safetensors"
    if [ -e "$o/x.safetensors" ]; then
        fail "$file: an output written"
        rm -f "$o/x.safetensors"
    else
        pass
    fi
}
sed 's/"bwd_dq": "buffers"/"bwd_dq": "sideways"/' "$k/fa2.json" >"$k/b1.json"
badk "field 'bwd_dq': expected one of chain, buffers, reverse, through, bf16-add" \
    "$k/b1.json"
sed 's/"bwd_operand": "in"/"bwd_operand": "f32"/' "$k/fa2.json" >"$k/b2.json"
badk "field 'bwd_operand': f32 goes with bwd_dq and bwd_dkv \"chain\"" \
    "$k/b2.json"
sed 's/"bwd_p": "scale-log2"/"bwd_p": "bf16-ops"/' "$k/fa2.json" >"$k/b3.json"
badk "field 'bwd_p': bf16-ops (bwd_p or bwd_ds) needs bwd_operand bf16" \
    "$k/b3.json"
sed 's/"bwd_p": "scale-log2"/"bwd_p": "sub"/' "$k/fa2.json" >"$k/b4.json"
badk "field 'bwd_p': sub, bf16-ops and expf-in need scaled scores" \
    "$k/b4.json"
sed 's/"bwd_dp": "f32"/"bwd_dp": "f16"/' "$k/fa2.json" >"$k/b5.json"
badk "field 'bwd_dp': expected f32 or bf16" "$k/b5.json"

finish
