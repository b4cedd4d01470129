# test_mma.sh -- bf16emu mma: the sm90 model against the H200 fixture,
# batched integer problems whose exact result is known by construction,
# the comparison report on a reference with known differences, and every
# error (exit 2, a message naming the file or option, and no output file
# left behind)
#
# The inputs are written by tests/experiments/mma_inputs ($MMA_INPUTS):
# the fixture's vectors regrouped as batches of 1 x K by K x 1 products
# (the device results are the expectation), and integer problems (entries
# in [-7, 7], exact in every input format and every model; D computed in
# integers by the helper).  JSON output is parsed by $JSONQ.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${MMA_INPUTS:=./tests/experiments/mma_inputs}"
: "${JSONQ:=./tests/experiments/jsonq}"
need_built "$MMA_INPUTS" "$JSONQ"

fixture=${BF16EMU_MMA_H200:-$srcdir/tests/data/gpu/mma_h200.safetensors}
manifest=$srcdir/tests/data/gpu/mma_h200.json
in=$tmp/in
o=$tmp/o
mkdir "$in" "$o" || exit 99
"$MMA_INPUTS" exact "$in" || exit 99
"$MMA_INPUTS" fixture "$fixture" "$in" >"$tmp/groups" || exit 99
E=$in/exact.safetensors

# expect_json PATH VALUE: the value at PATH in the last output.
# expect_no_files: the output folder is empty (no output, no temporary).
# ---------------------------------------------------------------------
# Hardware: sm90 against the H200 results, every vector of the fixture
# (mma.sync for all, wgmma with A from shared memory and from registers
# where measured).  The number of vectors comes from the manifest.
# ---------------------------------------------------------------------
total=0
total_w=0
while read -r f n nw; do
    run mma --json --model sm90 --a "$f:A" --b "$f:B" --c "$f:C" \
        --compare "$f:d_mma"
    expect_rc 0
    expect_json model sm90
    expect_json compare.elements "$n"
    expect_json compare.equal "$n"
    expect_json compare.differ 0
    total=$((total + n))
    [ "$nw" -gt 0 ] || continue
    for d in d_wgmma_ss d_wgmma_rs; do
        run mma --json --model sm90 --a "$f:Aw" --b "$f:Bw" --c "$f:Cw" \
            --compare "$f:$d"
        expect_rc 0
        expect_json compare.equal "$nw"
        expect_json compare.differ 0
    done
    total_w=$((total_w + nw))
done <"$tmp/groups"
ctx="fixture totals"
vectors=$("$JSONQ" "$manifest" vectors)
if [ "$total" -eq "$vectors" ] && [ "$total" -gt 0 ]; then
    pass
else
    fail "$total vectors checked, the manifest has $vectors"
fi
# the wgmma sets leave out wide_select and tiny_select (12 + 256)
if [ "$total_w" -eq $((vectors - 12 - 256)) ]; then
    pass
else
    fail "$total_w wgmma vectors checked, expected $((vectors - 268))"
fi

H=$in/bf16_k16.safetensors
run mma --model sm90 --a "$H:A" --b "$H:B" --c "$H:C" \
    --compare "$H:d_mma"
expect_rc 0
expect_line 'result: all 10999 elements bit-equal'
expect_line '  A  '"$H"':A  BF16 [10999, 1, 16]'
expect_line '  D  F32 [10999, 1, 1], not written'
expect_line '  batch [10999]: 10999 products of [1 x 16] by [16 x 1]'

# the comparison can fail: sm80 (blocks of 8, F = 24) is not an H200
run mma --json --model sm80 --a "$H:A" --b "$H:B" --c "$H:C" \
    --compare "$H:d_mma"
expect_rc 1
differ=$(jq compare.differ)
if [ "${differ:-0}" -gt 0 ]; then pass; else fail "sm80 matched the H200"; fi

# scalar and AVX-512 paths: the same bits (byte-identical files)
run mma --model sm90 --a "$H:A" --b "$H:B" --c "$H:C" --path scalar \
    --out "$o/scalar.safetensors"
expect_rc 0
expect_line '  path scalar, flags v.oux'
# same_path PATH ISA WHAT: --path PATH writes the scalar path's bytes; on
# a CPU without ISA, a note that WHAT is not compared
same_path()
{
    run mma --model sm90 --a "$H:A" --b "$H:B" --c "$H:C" --path "$1" \
        --out "$o/$1.safetensors"
    if [ "$rc" -eq 2 ] && grep -q "lacks $2" "$tmp/err"; then
        echo "note: no $2 here, the $3 is not compared"
    else
        expect_rc 0
        expect_line "  path $1, flags v.oux"
        if cmp -s "$o/scalar.safetensors" "$o/$1.safetensors"; then
            pass
        else
            fail "the scalar and $2 outputs differ"
        fi
    fi
}
same_path avx512 AVX-512 "vector path"
same_path avx2 AVX2 "AVX2 path"
# BF16EMU_ISA caps the automatic path, and refuses a forced path above it
BF16EMU_ISA=scalar
export BF16EMU_ISA
run mma --json --model sm90 --a "$H:A" --b "$H:B" --c "$H:C" \
    --out "$o/capped.safetensors"
expect_rc 0
expect_json path scalar
run mma --model sm90 --a "$H:A" --b "$H:B" --c "$H:C" --path avx2 \
    --out "$o/x.safetensors"
expect_rc 2
if grep -q 'lacks AVX2' "$tmp/err"; then
    pass
else
    expect_err_has "bf16emu mma: --path avx2: BF16EMU_ISA=scalar caps the run below it"
fi
unset BF16EMU_ISA
rm -f "$o"/*

# ---------------------------------------------------------------------
# Integer problems: every model and input format computes them exactly.
# ---------------------------------------------------------------------
exact_ok()
{
    # exact_ok MODEL VARIANT FMT_A FMT_B: A B + C against D, 0 differ
    run mma --json --model "$1" --a "$E:A_$3" --b "$E:B_$4" --c "$E:C" \
        --compare "$E:D"
    expect_rc 0
    expect_json model "$2"
    expect_json compare.elements 120
    expect_json compare.equal 120
}
exact_ok sm90 sm90 bf16 bf16
exact_ok sm90 sm90 f16 f16
# F32 inputs: sm90 has a tf32 variant and no f32 one; the input type never
# switches the model silently, --dtype says which (tf32 here)
run mma --json --model sm90 --dtype tf32 --a "$E:A_f32" --b "$E:B_f32" \
    --c "$E:C" --compare "$E:D"
expect_rc 0
expect_json model sm90-tf32
expect_json compare.equal 120
exact_ok sm90 sm90-fp8 e4m3 e4m3
exact_ok sm90 sm90-fp8 e5m2 e5m2
exact_ok sm90 sm90-fp8 e4m3 e5m2
exact_ok sm90-fp8 sm90-fp8 e5m2 e4m3
exact_ok sm70 sm70 f16 f16
exact_ok sm80 sm80 bf16 bf16
exact_ok sm100 sm100 f16 f16
exact_ok avx512bf16 avx512bf16 bf16 bf16
exact_ok amx amx bf16 bf16
exact_ok arm-bfdot arm-bfdot bf16 bf16
exact_ok arm-ebf16 arm-ebf16 bf16 bf16
exact_ok fma-chain fma-chain f32 f32
exact_ok fma-chain fma-chain e4m3 e4m3
exact_ok exact exact bf16 bf16
exact_ok mul-add mul-add f16 f16
exact_ok pairwise pairwise bf16 bf16
exact_ok kahan kahan f32 f32
# F32 read as TF32 for a model that takes both
run mma --json --model fma-chain --dtype tf32 --a "$E:A_f32" \
    --b "$E:B_f32" --c "$E:C" --compare "$E:D"
expect_rc 0
expect_json a.format tf32
expect_json compare.equal 120

# the JSON report of one of them
run mma --json --model sm90 --a "$E:A_bf16" --b "$E:B_bf16" --c "$E:C" \
    --out "$o/d.safetensors"
expect_rc 0
expect_json command mma
expect_json preset sm90
expect_json kind fused
expect_json block 16
expect_json a.key A_bf16
expect_json a.dtype BF16
expect_json a.format bf16
expect_json a.shape "[4]"
expect_json a.shape.3 40
expect_json b.shape.2 40
expect_json c.dtype F32
expect_json b_shared false
expect_json batch "[2]"
expect_json batch.0 2
expect_json batch.1 3
expect_json m 4
expect_json k 40
expect_json n 5
expect_json flags .....
expect_json out.file "$o/d.safetensors"
expect_json out.key D
expect_json out.shape.3 5
expect_json compare null
# the written file holds D under the key "D": compare it with the truth
run mma --model exact --a "$E:A_bf16" --b "$E:B_bf16" --c "$E:C" \
    --compare "$o/d.safetensors:D"
expect_rc 0
expect_line 'result: all 120 elements bit-equal'
rm -f "$o"/*

# without C; B shared by the batch; no batch at all; K in three blocks
run mma --model sm90 --a "$E:A_bf16" --b "$E:B_bf16" --compare "$E:D0"
expect_rc 0
expect_line '  C  zeros'
expect_line 'result: all 120 elements bit-equal'
run mma --json --model sm90 --a "$E:A_bf16" --b "$E:Bs_bf16" --c "$E:C" \
    --compare "$E:Ds"
expect_rc 0
expect_json b_shared true
expect_json compare.equal 120
run mma --model sm90 --a "$E:A_bf16" --b "$E:Bs_bf16" --c "$E:C" \
    --compare "$E:Ds"
expect_line '  B  '"$E"':Bs_bf16  BF16 [40, 5], shared by every batch'
run mma --json --model sm90 --a "$E:A2" --b "$E:B2" --c "$E:C2" \
    --compare "$E:D2"
expect_rc 0
expect_json batch "[0]"
expect_json compare.equal 20
run mma --model sm90 --a "$E:A2" --b "$E:B2" --c "$E:C2" --compare "$E:D2"
expect_line '  batch []: 1 product of [4 x 40] by [40 x 5]'

# .npy in and out; <u2 read as BF16 with --dtype; the written .npy is
# byte for byte the one the helper wrote from its integers
run mma --model sm90 --dtype bf16 --a "$in/a_bf16.npy" \
    --b "$in/b_bf16.npy" --c "$in/c.npy" --out "$o/d.npy"
expect_rc 0
expect_line '  D  '"$o"'/d.npy  F32 [2, 3, 4, 5], written'
if cmp -s "$o/d.npy" "$in/d.npy"; then pass; else fail "d.npy differs"; fi
rm -f "$o"/*
# a safetensors file with one tensor needs no key
run mma --model sm90 --a "$in/one.safetensors" --b "$E:B_bf16" \
    --c "$E:C" --compare "$E:D"
expect_rc 0

# --force replaces an existing output; --path scalar and auto agree
run mma --model sm90 --a "$E:A_f16" --b "$E:B_f16" --out "$o/d.npy"
expect_rc 0
run mma --model sm90 --a "$E:A_f16" --b "$E:B_f16" --c "$E:C" \
    --out "$o/d.npy" --force --path scalar
expect_rc 0
expect_line '  path scalar, flags .....'
if cmp -s "$o/d.npy" "$in/d.npy"; then pass; else fail "--force"; fi
rm -f "$o"/*

# ---------------------------------------------------------------------
# A reference with five known differences (see mma_inputs.c): -0 for +0
# at [0,0] row 0 col 0, +1 ulp at [0,1] 2 3, +3 ulps at [1,0] 1 4,
# -700 ulps at [1,2] 3 0, a NaN at [0,2] 0 1.  The output is still
# written, and the exit status is 1.
# ---------------------------------------------------------------------
run mma --model sm90 --a "$E:A_bf16" --b "$E:B_bf16" --c "$E:C" \
    --compare "$E:Dbad" --out "$o/d.npy"
expect_rc 1
expect_no_stderr
expect_line '  120 elements, 115 bit-equal, 5 differ (1 NaN against a number)'
expect_line "$(printf '  %-22s %s' 0 116)"
expect_line "$(printf '  %-22s %s' 1 1)"
expect_line "$(printf '  %-22s %s' 2-3 1)"
expect_line "$(printf '  %-22s %s' 512-1023 1)"
expect_line "$(printf '  %-22s %s' inf 1)"
expect_no_line "$(printf '  %-22s %s' 4-7 0)"
expect_out_has '    batch [0, 2] row 0 col 1: got f32:0x'
expect_out_has 'expected f32:0x7FC00000 nan, distance inf'
expect_out_has '    batch [0, 0] row 0 col 0: got f32:0x00000000 0, expected f32:0x80000000 -0, distance 0'
expect_line 'result: 5 of 120 elements differ'
if cmp -s "$o/d.npy" "$in/d.npy"; then pass; else fail "D not written"; fi
rm -f "$o"/*

run mma --json --model sm90 --a "$E:A_bf16" --b "$E:B_bf16" --c "$E:C" \
    --compare "$E:Dbad"
expect_rc 1
expect_json compare.elements 120
expect_json compare.equal 115
expect_json compare.differ 5
expect_json compare.nan_vs_number 1
expect_json compare.max_distance inf
expect_json compare.histogram "[34]"
expect_json compare.histogram.0.bucket 0
expect_json compare.histogram.0.count 116
expect_json compare.histogram.1.count 1
expect_json compare.histogram.2.bucket 2-3
expect_json compare.histogram.2.count 1
expect_json compare.histogram.10.bucket 512-1023
expect_json compare.histogram.10.min 512
expect_json compare.histogram.10.max 1023
expect_json compare.histogram.10.count 1
expect_json compare.histogram.32.bucket 2147483648-4294967295
expect_json compare.histogram.33.bucket inf
expect_json compare.histogram.33.min null
expect_json compare.histogram.33.count 1
sum=0
i=0
while [ $i -lt 34 ]; do
    sum=$((sum + $(jq compare.histogram.$i.count)))
    i=$((i + 1))
done
ctx="histogram sum"
if [ "$sum" -eq 120 ]; then pass; else fail "the buckets hold $sum"; fi
ctx="the worst elements of the Dbad comparison"
expect_json compare.worst "[5]"
# largest distance first: inf, 700, 3, 1, 0
expect_json compare.worst.0.distance inf
expect_json compare.worst.0.batch.1 2
expect_json compare.worst.0.row 0
expect_json compare.worst.0.col 1
expect_json compare.worst.0.expected.bits 0x7FC00000
expect_json compare.worst.0.expected.value nan
expect_json compare.worst.1.distance 700
expect_json compare.worst.1.batch.0 1
expect_json compare.worst.1.batch.1 2
expect_json compare.worst.1.row 3
expect_json compare.worst.1.col 0
expect_json compare.worst.1.index 115
expect_json compare.worst.2.distance 3
expect_json compare.worst.2.index 69
expect_json compare.worst.3.distance 1
expect_json compare.worst.3.index 33
expect_json compare.worst.3.row 2
expect_json compare.worst.3.col 3
expect_json compare.worst.4.distance 0
expect_json compare.worst.4.got.bits 0x00000000
expect_json compare.worst.4.got.value 0
expect_json compare.worst.4.expected.bits 0x80000000
expect_json compare.worst.4.expected.value -0
# the reported patterns differ by exactly the planted amounts
ctx="worst element patterns"
for w in "1 -700" "2 3" "3 1"; do
    set -- $w
    g=$(jq compare.worst.$1.got.bits)
    e=$(jq compare.worst.$1.expected.bits)
    if [ $((e - g)) -eq "$2" ]; then
        pass
    else
        fail "worst $1: $e - $g is not $2"
    fi
done

# ---------------------------------------------------------------------
# Errors: exit 2, nothing on stdout, the message, no file written.
# ---------------------------------------------------------------------
bad()
{
    # bad MESSAGE ARGS...
    _m=$1
    shift
    expect_error "bf16emu mma: $_m" mma "$@"
    expect_no_files
}
OUT=$o/d.safetensors
AB="--a $E:A_bf16 --b $E:B_bf16"

bad "missing --model (see 'bf16emu mma --help')" $AB --out "$OUT"
bad "missing --a" --model sm90 --b "$E:B_bf16" --out "$OUT"
bad "missing --b" --model sm90 --a "$E:A_bf16" --out "$OUT"
bad "missing --out or --compare" --model sm90 $AB
bad "--model 'sm91': unknown preset (expected one of sm70, sm80, sm90, " \
    --model sm91 $AB --out "$OUT"
bad "option '--model' needs a value" $AB --out "$OUT" --model
bad "unknown option '--bogus'" --model sm90 $AB --out "$OUT" --bogus
bad "unexpected operand 'extra'" --model sm90 $AB --out "$OUT" extra
bad "--dtype 'bf8': unknown input format (expected bf16, f16, e4m3, e5m2, f32 or tf32, or a PyTorch name such as bfloat16)" \
    --model sm90 $AB --out "$OUT" --dtype bf8
bad "--dtype 'torch.float64': unknown input format" \
    --model sm90 $AB --out "$OUT" --dtype torch.float64
# the PyTorch names of --dtype read as the project's own
for pair in "bfloat16 bf16" "torch.bfloat16 bf16" "BF16 bf16"; do
    set -- $pair
    run mma --json --model sm90 --a "$E:A_u16" --b "$E:B_bf16" --dtype "$2" \
        --out "$o/want.npy"
    cp "$tmp/out" "$tmp/want_json"
    run mma --json --model sm90 --a "$E:A_u16" --b "$E:B_bf16" --dtype "$1" \
        --out "$o/got.npy"
    expect_rc 0
    sed "s|$o/got.npy|$o/want.npy|" "$tmp/out" >"$tmp/got_json"
    ctx="mma --dtype $1 as --dtype $2"
    if cmp -s "$tmp/want_json" "$tmp/got_json" \
        && cmp -s "$o/want.npy" "$o/got.npy"; then pass; else
        fail "the output differs from --dtype $2"
        diff "$tmp/want_json" "$tmp/got_json" | head -10
    fi
    rm -f "$o/want.npy" "$o/got.npy"
done
bad "--path 'gpu': expected auto, scalar, avx2 or avx512" \
    --model sm90 $AB --out "$OUT" --path gpu
bad "--path avx512: the AVX-512 path does not cover fma-chain with bf16 inputs" \
    --model fma-chain $AB --out "$OUT" --path avx512

# keys and files
# (a missing key: the message lists the keys the file has, in the order
# of their data, as tests/experiments/mma_inputs.c writes them)
bad "--a: $E: no tensor \"nope\" in the file; it holds A_bf16, B_bf16, A_f16, B_f16, A_e4m3, B_e4m3, A_e5m2, B_e5m2, A_f32, B_f32, Bs_bf16, C, D, D0, Ds, Dbad, A2, B2, C2, D2, Bk32, Bbatch, Cm3, Cn6, A_i32, A_u16" \
    --model sm90 --a "$E:nope" --b "$E:B_bf16" --out "$OUT"
bad "--a: $E: no tensor \"a_bf16\" in the file; it holds A_bf16, " \
    --model sm90 --a "$E:a_bf16" --b "$E:B_bf16" --out "$OUT"
expect_err_has "(names are case-sensitive: \"A_bf16\")"
bad "--b: $E: the file holds 26 tensors (A_bf16, B_bf16, A_f16, " \
    --model sm90 --a "$E:A_bf16" --b "$E" --out "$OUT"
expect_err_has ", A_i32, A_u16); name one"
bad "--c: $in/missing.safetensors: cannot open: No such file or directory" \
    --model sm90 $AB --c "$in/missing.safetensors" --out "$OUT"
printf 'not a tensor file\n' >"$in/junk.safetensors"
bad "--a: $in/junk.safetensors: " \
    --model sm90 --a "$in/junk.safetensors" --b "$E:B_bf16" --out "$OUT"
bad "--a: $in/a_bf16.npy: key \"A\" given, but a .npy file holds one unnamed array" \
    --model sm90 --a "$in/a_bf16.npy:A" --b "$E:B_bf16" --out "$OUT"
bad "--a '$E:': empty key after ':'" --model sm90 --a "$E:" \
    --b "$E:B_bf16" --out "$OUT"

# shapes: K, M, N, batch, the reference, too few dimensions
bad "the inner dimensions differ: A $E:A_bf16 has shape [2, 3, 4, 40] (K = 40, its last dimension), B $E:Bk32 has shape [2, 3, 32, 5] (K = 32, its second to last); expected equal" \
    --model sm90 --a "$E:A_bf16" --b "$E:Bk32" --out "$OUT"
bad "--c $E:Cm3 has shape [2, 3, 3, 5]; expected [2, 3, 4, 5], the shape of D = A B + C for A [2, 3, 4, 40] and B [2, 3, 40, 5]" \
    --model sm90 $AB --c "$E:Cm3" --out "$OUT"
bad "--c $E:Cn6 has shape [2, 3, 4, 6]; expected [2, 3, 4, 5]" \
    --model sm90 $AB --c "$E:Cn6" --out "$OUT"
bad "the batch dimensions differ: A $E:A_bf16 has shape [2, 3, 4, 40] (batch [2, 3]), B $E:Bbatch has shape [3, 2, 40, 5] (batch [3, 2]); expected B with batch [2, 3]" \
    --model sm90 --a "$E:A_bf16" --b "$E:Bbatch" --out "$OUT"
bad "the batch dimensions differ: A $E:A2 has shape [4, 40] (no batch), B $E:B_bf16 has shape [2, 3, 40, 5] (batch [2, 3])" \
    --model sm90 --a "$E:A2" --b "$E:B_bf16" --out "$OUT"
bad "--compare $E:Cn6 has shape [2, 3, 4, 6]; expected [2, 3, 4, 5]" \
    --model sm90 $AB --compare "$E:Cn6" --out "$OUT"
bad "--compare: $E: tensor \"Bs_bf16\" dtype: the file holds BF16, expected F32" \
    --model sm90 $AB --compare "$E:Bs_bf16"

# dtypes and preset/input combinations
bad "--a $E:A_i32: dtype I32; expected BF16, F16, F8_E4M3, F8_E5M2 or F32" \
    --model sm90 --a "$E:A_i32" --b "$E:B_bf16" --out "$OUT"
bad "--a $E:A_u16: dtype U16 (raw 16-bit patterns); expected BF16 or F16 (give --dtype bf16 or --dtype f16" \
    --model sm90 --a "$E:A_u16" --b "$E:B_bf16" --out "$OUT"
bad "--a $in/a_bf16.npy: dtype U16" \
    --model sm90 --a "$in/a_bf16.npy" --b "$in/b_bf16.npy" --out "$OUT"
bad "--c: $E: tensor \"A_bf16\" dtype: the file holds BF16, expected F32" \
    --model sm90 $AB --c "$E:A_bf16" --out "$OUT"
# F16 values that are BF16 values read as BF16 when asked, and said so
run mma --model sm90 --dtype bf16 --a "$E:A_bf16" --b "$E:B_f16" \
    --out "$OUT"
expect_rc 0
expect_line "     B: F16 values read as BF16 (every one exact)"
rm -f "$OUT"
bad "A $E:A_f32 is F32 and --model sm90 has no f32 variant: pass --dtype tf32 for its tf32 variant, or --dtype bf16 or --dtype f16 if the values are BF16 or F16 values" \
    --model sm90 --a "$E:A_f32" --b "$E:B_f32" --out "$OUT"
bad "A $E:A_bf16 is bf16 and B $E:B_f16 is f16: A and B must have one format" \
    --model sm90 --a "$E:A_bf16" --b "$E:B_f16" --out "$OUT"
bad "--model sm70 does not take bf16 inputs (A $E:A_bf16 is BF16); sm70 takes f16" \
    --model sm70 $AB --out "$OUT"
bad "--model sm80 does not take f32 inputs (A $E:A_f32 is F32, read as f32 or tf32); sm80 takes bf16, f16" \
    --model sm80 --a "$E:A_f32" --b "$E:B_f32" --out "$OUT"
bad "--model avx512bf16 does not take e4m3 inputs" \
    --model avx512bf16 --a "$E:A_e4m3" --b "$E:B_e4m3" --out "$OUT"
bad "--model sm90-fp8 does not take tf32 inputs (A $E:A_f32 is F32, read as f32 or tf32); sm90-fp8 takes e4m3, e5m2" \
    --model sm90-fp8 --dtype tf32 --a "$E:A_f32" --b "$E:B_f32" --out "$OUT"
bad "--a $E:Dbad: element " \
    --model sm90 --dtype tf32 --a "$E:Dbad" --b "$E:C" --out "$OUT"
expect_err_has "not a tf32 value (its 13 low bits must be zero; round the input to tf32 first)"

# the output: its type, an input's name, an existing file
bad "--out '$o/d.txt': unknown file type (expected a name ending in .safetensors or .npy)" \
    --model sm90 $AB --out "$o/d.txt"
bad "--out '$o/d.npy:D': a .npy file holds one unnamed array" \
    --model sm90 $AB --out "$o/d.npy:D"
bad "--out $E is the input file of --a ($E); an input is never overwritten, also not with --force" \
    --model sm90 $AB --out "$E:D" --force
bad "--out $in/../in/exact.safetensors is the input file of --a" \
    --model sm90 $AB --out "$in/../in/exact.safetensors"
bad "--out $in/d.npy is the input file of --compare" \
    --model sm90 $AB --c "$E:C" --compare "$in/d.npy" --out "$in/d.npy"
ls -l "$E" "$in/d.npy" >"$tmp/before"
printf 'keep me\n' >"$o/d.safetensors"
run mma --model sm90 $AB --out "$o/d.safetensors"
expect_rc 2
expect_no_stdout
expect_err_has "bf16emu mma: --out $o/d.safetensors: the file exists (give --force to replace it)"
ctx="existing output"
if [ "$(cat "$o/d.safetensors")" = "keep me" ] \
    && [ "$(ls -A "$o")" = d.safetensors ]; then
    pass
else
    fail "the existing output was touched"
fi
ls -l "$E" "$in/d.npy" >"$tmp/after"
if cmp -s "$tmp/before" "$tmp/after"; then
    pass
else
    fail "an input file changed"
fi
rm -f "$o"/*

# JSON: errors still go to stderr only
bad "--model 'x': unknown preset" --json --model x $AB --out "$OUT"

# ---------------------------------------------------------------------
# README.md's example (the block after "<!-- mma-h200 -->"), run again:
# the output must match, except the command lines and the path line
# (which depends on the CPU).
# ---------------------------------------------------------------------
if readme_has mma-h200; then
    readme_block mma-h200 | grep -v -e '^\$ ' -e '^    --' -e '^  path ' \
        >"$tmp/readme"
    mkdir "$tmp/ex"
    abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
    fx=$(abs "$fixture")
    mi=$(abs "$MMA_INPUTS")
    bf=$(abs "$BF16EMU")
    (
        cd "$tmp/ex" &&
            "$mi" fixture "$fx" h200 &&
            "$bf" mma --model sm90 --a h200/bf16_k16.safetensors:A \
                --b h200/bf16_k16.safetensors:B \
                --c h200/bf16_k16.safetensors:C \
                --compare h200/bf16_k16.safetensors:d_mma --out d.safetensors
    ) 2>&1 | grep -v -e '^  path ' >"$tmp/ran"
    expect_readme mma-h200
else
    readme_missing mma-h200
fi

# ---------------------------------------------------------------------
# Help and the command list.
# ---------------------------------------------------------------------
run mma --help
expect_rc 0
expect_line 'usage: bf16emu mma --model PRESET --a FILE[:KEY] --b FILE[:KEY]'
expect_out_has 'presets: sm70, sm80, sm90, sm90-k8, sm90-tf32, sm90-fp8, sm100, '
run help mma
expect_rc 0
expect_line 'usage: bf16emu mma --model PRESET --a FILE[:KEY] --b FILE[:KEY]'
run --help
expect_line '  mma        a matrix-unit model on A, B, C from files'

finish
