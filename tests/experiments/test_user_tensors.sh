#!/bin/sh
# test_user_tensors.sh -- tensors as users save them, read by the one
# reader that attn, diff and mma share (analysis/user_tensor.h): PyTorch
# manifests with a list shape or a subset of the launch's heads; .npy
# files; [N, d], [H, N, d] and [B, N, H, d] tensors; F32 holding BF16
# values (t.float().numpy()) and int16 bit patterns (t.view(torch.int16));
# no silent default for the mask, the scale, the layout or the dtype.
#
# The reference results are the committed H200 dumps (PyTorch SDPA, flash
# backend), which bf16emu diff reproduces bit for bit in their native form
# (test_diff.sh): every rewritten form below must give the same counts.
# The rewritten files are written by tests/experiments/user_inputs
# ($USER_INPUTS) from the dump's own tensors.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${USER_INPUTS:=./tests/experiments/user_inputs}"
: "${MMA_INPUTS:=./tests/experiments/mma_inputs}"
: "${JSONQ:=./tests/experiments/jsonq}"
need_built "$USER_INPUTS" "$MMA_INPUTS" "$JSONQ"

C=$srcdir/tests/data/gpu/sdpa_h200_d64_causal.safetensors
need_data "$C"

U=$USER_INPUTS
in=$tmp/in
o=$tmp/o
mkdir "$in" "$o" || exit 99


O_ALL="  32768 elements, 32768 bit-equal (100.000%), 0 differ"
CAUSAL='"causal": true, "scale": "1/sqrt(d) (PyTorch default)"'

# ---------------------------------------------------------------------
# diff: a manifest with PyTorch's t.shape, a list [B, H, N, d]
# ---------------------------------------------------------------------
ctx="list shape"
L=$in/list.safetensors
"$U" st "$L" "{\"shape\": [1, 4, 128, 64], $CAUSAL}" \
    q="$C:q:keep:bhnd" k="$C:k:keep:bhnd" v="$C:v:keep:bhnd" \
    o="$C:o:keep:bhnd" || exit 99
run diff --dump "$L" --stage o --no-exact
expect_rc 0
expect_line "$O_ALL"
expect_out_has "B 1, H 4, Nq 128, Nk 128, d 64; policy fa2, exp ex2-sm90 (the description's default), causal yes (manifest)"
"$U" st "$L" "{\"shape\": [1, 4, 128], $CAUSAL}" q="$C:q:keep:bhnd" \
    k="$C:k:keep:bhnd" v="$C:v:keep:bhnd" o="$C:o:keep:bhnd" || exit 99
bad "$L: manifest: shape: a list of 3 numbers (expected [B, H, N, d]" \
    diff --dump "$L" --stage o --no-exact

# ---------------------------------------------------------------------
# diff: a file that keeps some heads of the launch (heads 1 and 2 of 4)
# ---------------------------------------------------------------------
ctx="head subset"
S=$in/sub.safetensors
"$U" st "$S" \
    "{\"shape\": {\"batch\": 1, \"heads\": 4, \"nq\": 128, \"nk\": 128, \"d\": 64}, \"heads_kept\": [1, 2], $CAUSAL}" \
    q="$C:q:keep:h1-3" k="$C:k:keep:h1-3" v="$C:v:keep:h1-3" \
    o="$C:o:keep:h1-3" do="$C:do:keep:h1-3" lse="$C:lse:keep:h1-3" \
    dq="$C:dq:keep:h1-3" dk="$C:dk:keep:h1-3" dv="$C:dv:keep:h1-3" ||
    exit 99
run diff --dump "$S" --stage o,dq,dk,dv --no-exact
expect_rc 0
expect_line "  the file keeps 2 of the launch's 4 heads: 1 2"
expect_line "  16384 elements, 16384 bit-equal (100.000%), 0 differ"
expect_line "result: 4 stages compared, all bit-equal"
run diff --dump "$S" --stage o --no-exact --json
expect_rc 0
expect_json launch_heads 4
expect_json heads_kept.1 2
# the same without "heads_kept": accepted, and said that it is unknown
"$U" st "$S" "{\"shape\": [1, 28, 128, 64], $CAUSAL}" \
    q="$C:q:keep:h1-3" k="$C:k:keep:h1-3" v="$C:v:keep:h1-3" \
    o="$C:o:keep:h1-3" || exit 99
run diff --dump "$S" --stage o --no-exact
expect_rc 0
expect_line "  the file keeps 2 of the launch's 28 heads (which ones: not in the manifest)"
# more heads in the file than in the launch: refused
"$U" st "$S" "{\"shape\": [1, 1, 128, 64], $CAUSAL}" \
    q="$C:q:keep:h1-3" k="$C:k:keep:h1-3" v="$C:v:keep:h1-3" \
    o="$C:o:keep:h1-3" || exit 99
bad "$S: manifest: shape.heads: 1 (expected 2, as the tensors have it, or more" \
    diff --dump "$S" --stage o --no-exact --layout bhnd

# ---------------------------------------------------------------------
# diff: --q FILE[:KEY] ..., .npy files, [B, N, H, d], [H, N, d], [N, d],
# F32 holding BF16 values, int16 bit patterns
# ---------------------------------------------------------------------
ctx="diff --q"
for t in q k v o; do
    "$U" npy "$C" $t f32 bnhd "$in/${t}_f32_bnhd.npy" || exit 99
    "$U" npy "$C" $t i16 bnhd "$in/${t}_i16_bnhd.npy" || exit 99
    "$U" npy "$C" $t keep hnd "$in/${t}_hnd.npy" || exit 99
    "$U" npy "$C" $t keep nd "$in/${t}_nd.npy" || exit 99
done
"$U" npy "$C" q f32bad bnhd "$in/q_bad.npy" || exit 99
"$U" npy "$C" lse keep nd "$in/lse_nd.npy" || exit 99
set -- --q "$in/q_f32_bnhd.npy" --k "$in/k_f32_bnhd.npy" \
    --v "$in/v_f32_bnhd.npy" --o "$in/o_f32_bnhd.npy" --stage o --no-exact
run diff "$@" --dtype bf16 --layout bnhd --causal --scale 0.125
expect_rc 0
expect_line "$O_ALL"
expect_line "  layout bnhd (--layout): [B, N, H, d] read as [B, H, N, d]"
expect_line "  q: F32 values read as BF16 (every one exact)"
bad "pass --layout bhnd or --layout bnhd" diff "$@" --dtype bf16 --causal \
    --scale 0.125
bad "q_f32_bnhd.npy: shape [1, 128, 4, 64] may be [B, H, N, d] or [B, N, H, d]" \
    diff "$@" --dtype bf16 --causal --scale 0.125
bad "$in/q_f32_bnhd.npy: dtype F32 (expected BF16; pass --dtype bf16 to read it as BF16, if its values are BF16 values)" \
    diff "$@" --layout bnhd --causal --scale 0.125
bad "no --dump manifest gives causal; pass --causal or --no-causal" \
    diff "$@" --dtype bf16 --layout bnhd --scale 0.125
bad "no --dump manifest gives scale; pass --scale X (PyTorch's default is 1/sqrt(d) = 0.125 for d = 64)" \
    diff "$@" --dtype bf16 --layout bnhd --causal
bad "$in/q_bad.npy: element 5 [0, 0, 0, 5] is F32 0x" \
    diff --q "$in/q_bad.npy" --k "$in/k_f32_bnhd.npy" \
    --v "$in/v_f32_bnhd.npy" --o "$in/o_f32_bnhd.npy" --stage o \
    --no-exact --dtype bf16 --layout bnhd --causal --scale 0.125
expect_err_has ", not a BF16 value"
# int16 bit patterns ('<i2', t.view(torch.int16)): with --dtype bf16
set -- --q "$in/q_i16_bnhd.npy" --k "$in/k_i16_bnhd.npy" \
    --v "$in/v_i16_bnhd.npy" --o "$in/o_i16_bnhd.npy" --stage o \
    --no-exact --layout bnhd --causal --scale 0.125
run diff "$@" --dtype bf16
expect_rc 0
expect_line "$O_ALL"
expect_line "  q: I16 bit patterns read as BF16"
bad "$in/q_i16_bnhd.npy: dtype I16 holds bit patterns of no stated type (expected BF16; pass --dtype bf16 to read it as BF16)" \
    diff "$@"
# [H, N, d] over the dump's tensors: H 4 and N 128 could be either
# layout; the dump's manifest (heads 4, nq 128) tells which
run diff --dump "$C" --q "$in/q_hnd.npy" --k "$in/k_hnd.npy" \
    --v "$in/v_hnd.npy" --o "$in/o_hnd.npy" --stage o --no-exact --dtype bf16
expect_rc 0
expect_line "$O_ALL"
# [N, d] (head 0): no layout needed; LSE [N]
run diff --q "$in/q_nd.npy" --k "$in/k_nd.npy" --v "$in/v_nd.npy" \
    --o "$in/o_nd.npy" --lse "$in/lse_nd.npy" --stage o --no-exact \
    --causal --scale 0.125 --dtype bf16
expect_rc 0
expect_line "  8192 elements, 8192 bit-equal (100.000%), 0 differ"
# keys named as the user named them
K=$in/keys.safetensors
"$U" st "$K" - query="$C:q:keep:bhnd" key="$C:k:keep:bhnd" \
    value="$C:v:keep:bhnd" out="$C:o:keep:bhnd" || exit 99
run diff --q "$K:query" --k "$K:key" --v "$K:value" --o "$K:out" \
    --stage o --no-exact --causal --scale 0.125 --layout bhnd
expect_rc 0
expect_line "$O_ALL"
# an option over the manifest wins, and the report says so
run diff --dump "$C" --stage o --no-exact --no-causal --scale 0.1
expect_rc 1
expect_line "  note: --no-causal overrides the file's causal: true"
expect_line "  note: --scale overrides the file's scale 0.125 (FP32 0x3E000000)"
run diff --dump "$C" --stage o --no-exact --causal --scale 0.125
expect_rc 0
expect_no_line "  note: --scale overrides the file's scale 0.125 (FP32 0x3E000000)"
bad "--dtype 'f16': FP16 inputs are read from F16 tensors" diff --dump "$C" --dtype f16
bad "--layout 'bhdn': expected bhnd ([B, H, N, d]) or bnhd ([B, N, H, d])" \
    diff --dump "$C" --layout bhdn

# ---------------------------------------------------------------------
# attn: the same inputs in every form give the same bits
# ---------------------------------------------------------------------
ctx="attn"
run attn --q "$C:q" --k "$C:k" --v "$C:v" --causal --policy fa2 \
    --exp ex2-sm90 --no-exact --out "$o/ref.safetensors"
expect_rc 0
run attn --q "$in/q_f32_bnhd.npy" --k "$in/k_f32_bnhd.npy" \
    --v "$in/v_f32_bnhd.npy" --dtype bf16 --layout bnhd --causal \
    --policy fa2 --exp ex2-sm90 --no-exact --out "$o/f32.safetensors"
expect_rc 0
expect_out_has "(F32 values read as BF16 (every one exact)) (read as [B, N, H, d], layout bnhd: --layout)"
run diff --dump "$C" --o "$o/f32.safetensors:o" --stage o --no-exact
expect_rc 0
expect_line "$O_ALL"
# the output file holds the inputs as read: byte for byte the same
if cmp -s "$o/ref.safetensors" "$o/f32.safetensors"; then
    pass
else
    fail "F32 [B, N, H, d] inputs give another output file than BF16 ones"
fi
run diff --dump "$C" --o "$o/ref.safetensors:o" --stage o --no-exact
expect_rc 0
expect_line "$O_ALL"
bad "--q: $in/q_f32_bnhd.npy: dtype F32 (expected BF16; pass --dtype bf16" \
    attn --q "$in/q_f32_bnhd.npy" --k "$in/k_f32_bnhd.npy" \
    --v "$in/v_f32_bnhd.npy" --layout bnhd --no-exact
bad "--q: $in/q_i16_bnhd.npy: dtype I16 holds bit patterns of no stated type" \
    attn --q "$in/q_i16_bnhd.npy" --k "$in/k_i16_bnhd.npy" \
    --v "$in/v_i16_bnhd.npy" --layout bnhd --no-exact
bad "--q $in/q_i16_bnhd.npy: shape [1, 128, 4, 64] with K [1, 128, 4, 64] reads as [B, H, N, d] (128 query heads over 128 key/value heads, Nq 4, Nk 4) or as [B, N, H, d] (4 query heads over 4, Nq 128, Nk 128)" \
    attn --q "$in/q_i16_bnhd.npy" --k "$in/k_i16_bnhd.npy" \
    --v "$in/v_i16_bnhd.npy" --dtype bf16 --no-exact
# the dump's manifest (heads 4, nq 128) told the layout above; a file
# without one does not
bad "--q $K:query: shape [1, 4, 128, 64] with K [1, 4, 128, 64] reads as [B, H, N, d] (4 query heads over 4 key/value heads, Nq 128, Nk 128) or as [B, N, H, d] (128 query heads over 128, Nq 4, Nk 4), and neither the file nor the shapes tell which; pass --layout bhnd or --layout bnhd" \
    attn --q "$K:query" --k "$K:key" --v "$K:value" --no-exact
run attn --q "$K:query" --k "$K:key" --v "$K:value" --causal --policy fa2 \
    --exp ex2-sm90 --no-exact --layout bhnd --out "$o/keys.safetensors"
expect_rc 0
if cmp -s "$o/ref.safetensors" "$o/keys.safetensors"; then
    pass
else
    fail "inputs under other keys give another output file"
fi
bad "--q: $in/q_bad.npy: element 5 [0, 0, 0, 5] is F32 0x" \
    attn --q "$in/q_bad.npy" --k "$in/k_f32_bnhd.npy" \
    --v "$in/v_f32_bnhd.npy" --dtype bf16 --layout bnhd --no-exact

# the backward from the GPU's O and LSE (--o, --lse): dQ, dK, dV as the
# H200's; from the emulator's own forward too (its O and LSE are the
# GPU's to the bit)
run attn --q "$C:q" --k "$C:k" --v "$C:v" --do "$C:do" --o "$C:o" \
    --lse "$C:lse" --backward --causal --policy fa2 --exp ex2-sm90 \
    --no-exact --out "$o/bwd_gpu.safetensors"
expect_rc 0
run attn --q "$C:q" --k "$C:k" --v "$C:v" --do "$C:do" --backward \
    --causal --policy fa2 --exp ex2-sm90 --no-exact \
    --out "$o/bwd_own.safetensors" --layout bhnd
expect_rc 0
B=$o/bwd_gpu.safetensors
run diff --dump "$C" --dq "$B:dq" --dk "$B:dk" --dv "$B:dv" \
    --stage dq,dk,dv --no-exact
expect_rc 0
expect_line "result: 3 stages compared, all bit-equal"
B=$o/bwd_own.safetensors
run diff --dump "$C" --dq "$B:dq" --dk "$B:dk" --dv "$B:dv" \
    --stage dq,dk,dv --no-exact
expect_rc 0
expect_line "result: 3 stages compared, all bit-equal"
bad "--o needs --lse too" attn --q "$C:q" --k "$C:k" --v "$C:v" \
    --do "$C:do" --o "$C:o" --backward --causal
bad "--o and --lse are inputs of --backward" attn --q "$C:q" --k "$C:k" \
    --v "$C:v" --o "$C:o" --lse "$C:lse" --causal
bad "--o $C:lse: shape [1, 4, 128] (expected [1, 4, 128, 64], the shape of Q)" \
    attn --q "$C:q" --k "$C:k" --v "$C:v" --do "$C:do" --o "$C:lse" \
    --lse "$C:lse" --backward --causal --no-exact --layout bhnd
bad "--lse $C:o: shape [1, 4, 128, 64] (expected [1, 4, 128], Q's without d)" \
    attn --q "$C:q" --k "$C:k" --v "$C:v" --do "$C:do" --o "$C:o" \
    --lse "$C:o" --backward --causal --no-exact --layout bhnd

# ---------------------------------------------------------------------
# mma: an F32 file never switches the model silently
# ---------------------------------------------------------------------
ctx="mma"
"$MMA_INPUTS" exact "$in" || exit 99
E=$in/exact.safetensors
"$U" npy "$E" A_bf16 f32 bhnd "$in/a_f32.npy" || exit 99
"$U" npy "$E" B_bf16 f32 bhnd "$in/b_f32.npy" || exit 99
"$U" npy "$E" A_bf16 i16 bhnd "$in/a_i16.npy" || exit 99
"$U" npy "$E" B_bf16 i16 bhnd "$in/b_i16.npy" || exit 99
"$U" npy "$E" A_bf16 f32bad bhnd "$in/a_bad.npy" || exit 99
bad "A $in/a_f32.npy is F32 and --model sm90 has no f32 variant: pass --dtype tf32 for its tf32 variant, or --dtype bf16 or --dtype f16 if the values are BF16 or F16 values" \
    mma --model sm90 --a "$in/a_f32.npy" --b "$in/b_f32.npy" --c "$E:C" \
    --compare "$E:D"
run mma --json --model sm90 --dtype bf16 --a "$in/a_f32.npy" \
    --b "$in/b_f32.npy" --c "$E:C" --compare "$E:D"
expect_rc 0
expect_json model sm90
expect_json a.dtype BF16
expect_json a_read "F32 values read as BF16 (every one exact)"
expect_json compare.equal 120
run mma --model sm90 --dtype bf16 --a "$in/a_i16.npy" --b "$in/b_i16.npy" \
    --c "$E:C" --compare "$E:D"
expect_rc 0
expect_out_has "with sm90 (bf16 inputs"
expect_line "     A: I16 bit patterns read as BF16"
bad "--a $in/a_i16.npy: dtype I16 (raw 16-bit patterns); expected BF16 or F16 (give --dtype bf16 or --dtype f16 to read them as such)" \
    mma --model sm90 --a "$in/a_i16.npy" --b "$in/b_i16.npy" --c "$E:C" \
    --compare "$E:D"
bad "--a: $in/a_bad.npy: element 5 [0, 0, 0, 5] is F32 0x" \
    mma --model sm90 --dtype bf16 --a "$in/a_bad.npy" --b "$in/b_f32.npy" \
    --c "$E:C" --compare "$E:D"

finish
