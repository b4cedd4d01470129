#!/bin/sh
# test_diff.sh -- bf16emu diff against the committed H200 flash-attention
# dumps (PyTorch SDPA, flash backend; and experiments/gpu/fa_dump.cu, our
# own FA2-style kernel, with every intermediate stage): the counts of
# bit-equal elements of every stage, the first divergent stage and the
# trace of differing O elements, the exit status, --tolerance, the mask
# and the fix from the manifest, --json, the emulator against its own
# output file, and every error (exit 2, a message naming the file and the
# field, nothing on stdout)
#
# The counts are hardware measurements: the GPU's O, dQ, dK, dV are
# reproduced bit for bit by the fa2 policy with the measured exp model
# (ex2-sm90); its LSE is not (the kernel's lg2.approx is not modelled bit
# for bit, doc/gpu-measurements.md), and the counts below record how many
# LSE elements agree all the same.  Damaged copies of a dump are written
# by tests/experiments/diff_inputs ($DIFF_INPUTS); JSON output is parsed
# by $JSONQ.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${DIFF_INPUTS:=./tests/experiments/diff_inputs}"
: "${JSONQ:=./tests/experiments/jsonq}"
need_built "$DIFF_INPUTS" "$JSONQ"

G=$srcdir/tests/data/gpu
D=$G/sdpa_h200_d64.safetensors
C=$G/sdpa_h200_d64_causal.safetensors
need_data "$D" "$C"

# expect_json PATH VALUE: the value at PATH in the last output.
# bad MESSAGE ARGS...: exit 2, nothing on stdout, MESSAGE on stderr.
bad()
{
    _m=$1
    shift
    expect_error "$_m" diff "$@"
}

ALL="32768 elements, 32768 bit-equal (100.000%), 0 differ"

# ---------------------------------------------------------------------
# The other committed dumps (repeated maxima and a causal sink with
# negative-mean V, and d = 128 with 64-key blocks): O and the backward
# from the dump's own O and LSE are bit-equal with the H200.
# ---------------------------------------------------------------------
for name in sdpa_h200_d64_repmax sdpa_h200_d64_sink_causal sdpa_h200_d128; do
    run diff --policy fa2 --dump "$G/$name.safetensors" --stage o,dq,dk,dv \
        --no-exact
    expect_rc 0
    expect_line "result: 4 stages compared, all bit-equal"
    expect_no_stderr
done
# sdpa_h200_d128 keeps head 2 of its launch (heads_from), the one head
# whose O tells the exp model and the division apart: a correctly
# rounded exp, or O = RN(acc / l) instead of acc * RN(1 / l), changes an
# O element.
run diff --policy fa2 --dump "$G/sdpa_h200_d128.safetensors" --stage o \
    --exp cr --no-exact
expect_rc 1
expect_line "  the file keeps 1 of the launch's 4 heads: 2"
run attn --policy fa2 --describe
sed 's/"normalize": "reciprocal"/"normalize": "divide"/' "$tmp/out" \
    >"$tmp/fa2-divide.json"
run diff --kernel "$tmp/fa2-divide.json" --dump "$G/sdpa_h200_d128.safetensors" \
    --stage o --no-exact
expect_rc 1

# ---------------------------------------------------------------------
# fa_dump: our kernel on the H200 (mma.sync, ex2.approx, cvt.rn), in the
# fa2 policy's order of operations, dumps S, m and l after each KV block,
# P~, the accumulator after each KV block, O and LSE; every stage is
# bit-equal with the emulator (exp ex2-sm90): two KV blocks, a causal
# sink with partial blocks, and three blocks of repeated maxima with the
# beta fix (from the manifest) at d = 128.
# ---------------------------------------------------------------------
FD=$G/fa_h200_d64.safetensors
for name in fa_h200_d64 fa_h200_d64_ffma fa_h200_d64_sink_causal \
    fa_h200_d128_repmax_beta; do
    run diff --dump "$G/$name.safetensors" --no-exact
    expect_rc 0
    expect_line "result: 7 stages compared, all bit-equal"
    expect_line "first divergent stage: none"
    for st in s m p l acc o lse; do
        expect_line "  $st: bit-equal"
    done
    expect_no_stderr
    case $name in
    fa_h200_d64)
        expect_line "  B 1, H 1, Nq 64, Nk 256, d 64; policy fa2, exp ex2-sm90 (the description's default), causal no (manifest)"
        expect_line "  kernel stages: tiles 64 x 128, 2 KV blocks, visited in reverse"
        expect_line "stage acc (f32 [1, 1, 64, 2, 64], dump F32):"
        expect_line "stage p (bf16 [1, 1, 64, 256], dump BF16):"
        expect_line "  fa2 row sums: product, then addition (manifest)"
        ;;
    fa_h200_d64_ffma)
        expect_no_line "  fa2 row sums: product, then addition (manifest)"
        ;;
    fa_h200_d128_repmax_beta)
        expect_line "  fix beta (manifest)"
        expect_line "  kernel stages: tiles 32 x 64, 3 KV blocks, visited in reverse"
        ;;
    esac
done
# Without the fix the scores still agree, the running max no longer.
run diff --dump "$G/fa_h200_d128_repmax_beta.safetensors" --no-exact \
    --fix none
expect_rc 1
expect_line "  s: bit-equal"
expect_line "first divergent stage: m"
run diff --dump "$G/fa_h200_d64_sink_causal.safetensors" --no-exact \
    --no-causal
expect_rc 1
expect_line "first divergent stage: s"

# The same kernel and inputs dumped twice: with each row-sum partial's
# rescale and its first addition of the next KV block as one FFMA
# (fa_dump --rowsum-ffma, what PyTorch's build of the FA2 kernel does) and
# without (a product, then an addition; the manifest says so).  The fa2
# policy models both (fa_config.fa2_rowsum_fma); with the wrong one, S, m,
# P~ and the accumulator still agree and l is the first stage that
# differs (3 of 128 values, 1 ulp), then through 1/l one LSE.
run diff --dump "$G/fa_h200_d64_ffma.safetensors" --no-exact \
    --fa2-rowsum separate
expect_rc 1
expect_line "  fa2 row sums: product, then addition (--fa2-rowsum)"
expect_line "first divergent stage: l"
expect_line "  128 elements, 125 bit-equal (97.656%), 3 differ"
expect_line "    [0, 0, 15, 1]: gpu 0x41FE74FD 31.807123, emulator 0x41FE74FC 31.807121, distance 1"
expect_line "  acc: bit-equal"
expect_line "  o: bit-equal"
expect_line "  lse: 1 of 64 elements differ"
expect_line "result: 2 of 7 stages differ"
run diff --dump "$G/fa_h200_d64.safetensors" --no-exact --fa2-rowsum fma
expect_rc 1
expect_line "first divergent stage: l"
run diff --dump "$G/fa_h200_d64.safetensors" --fa2-rowsum both
expect_rc 2
expect_err_has "--fa2-rowsum 'both': expected fma or separate"

# The flash kernel itself: head 7, query rows 384..511 of a 14-head,
# 1024-key SDPA dump (non-causal, so each row is computed as in the whole
# problem).  Its O element [24, 21] is 1 BF16 ulp off without the row-sum
# FFMA, and bit-equal with it (the default); the report names the
# launch's head (the manifest's heads_from).
run diff --dump "$G/sdpa_h200_d64_n1024_h7_rows.safetensors" --stage o \
    --no-exact
expect_rc 0
expect_line "  8192 elements, 8192 bit-equal (100.000%), 0 differ"
run diff --dump "$G/sdpa_h200_d64_n1024_h7_rows.safetensors" --stage o \
    --no-exact --fa2-rowsum separate
expect_rc 1
expect_line "  8192 elements, 8191 bit-equal (99.988%), 1 differ"
expect_line "    [0, 7, 24, 21]: gpu 0x3D9C 0.076171875, emulator 0x3D9D 0.076660156, distance 1"

# --stage picks stages; JSON names the kernel's tiles and the first
# divergent stage (null when none).
run diff --dump "$FD" --stage acc,l --json
expect_rc 0
expect_json stages "[2]"
expect_json stages.0.stage l
expect_json stages.1.stage acc
expect_json stages.1.equal 8192
expect_json stages.1.worst "[0]"
expect_json kernel.tc 2
expect_json kernel.bc 128
expect_json first_divergent_stage null
expect_json o_trace "[0]"
expect_json exact_reference.run false
expect_json fix none
run diff --dump "$FD" --stage o --exact --json
expect_json stages.0.exact.gpu.n 4096

# Damaged stages: the first divergent stage, and the trace of a changed
# O element back to the KV block and stage where its row diverges.  Row 5
# visits block 1 (keys 128..255) first and block 0 second; l of row 5
# after its second block is flat index 5 * 2 + 1, its score of key 200
# flat index 5 * 256 + 200, O[5, 3] flat index 5 * 64 + 3.
X1=$tmp/x1.safetensors
X2=$tmp/x2.safetensors
"$DIFF_INPUTS" set "$FD" l 11 3F800000 "$X1" || exit 99
"$DIFF_INPUTS" set "$X1" o 323 3F80 "$X2" || exit 99
run diff --dump "$X2" --no-exact
expect_rc 1
expect_line "first divergent stage: l"
expect_line "  o [0, 0, 5, 3]: row first diverges in KV block 0 (visit 1, keys 0..127), stage l"
expect_line "  l: 1 of 128 elements differ"
expect_line "result: 2 of 7 stages differ"
"$DIFF_INPUTS" set "$X2" s 1480 3F800000 "$X1" || exit 99
run diff --dump "$X1" --no-exact --json
expect_json first_divergent_stage s
expect_json o_trace.0.index.2 5
expect_json o_trace.0.block 1
expect_json o_trace.0.visit 0
expect_json o_trace.0.stage s
# O[5, 3] changed alone, and the accumulator of row 6 after its first
# block (flat index (6 * 2 + 0) * 64 + 3).
"$DIFF_INPUTS" set "$FD" o 323 3F80 "$X1" || exit 99
"$DIFF_INPUTS" set "$X1" acc 771 3F800000 "$X2" || exit 99
run diff --dump "$X2" --no-exact
expect_line "  o [0, 0, 5, 3]: every stage of its row agrees; only the normalisation differs"
expect_out_has "    [0, 0, 6, 0, 3]: gpu 0x3F800000 1, emulator "
expect_line "first divergent stage: acc"

# ---------------------------------------------------------------------
# O: bit-equal with the GPU on both dumps (the CPU-only check of the
# hardware agreement).
# ---------------------------------------------------------------------
for f in "$D" "$C"; do
    run diff --policy fa2 --dump "$f" --stage o
    expect_rc 0
    expect_line "  $ALL"
    expect_line "  o: bit-equal"
    expect_line "result: 1 stage compared, all bit-equal"
    expect_out_has "policy fa2, exp ex2-sm90"
    expect_out_has "B 1, H 4, Nq 128, Nk 128, d 64"
    expect_line "  scale 0.125 (FP32 0x3E000000), 1/sqrt(64) correctly rounded to FP32; PyTorch's float(1/sqrt(d)) in double gives the same value"
    expect_no_stderr
done
run diff --dump "$D" --stage o --no-exact
expect_line "  B 1, H 4, Nq 128, Nk 128, d 64; policy fa2, exp ex2-sm90 (the description's default), causal no (manifest)"
expect_line "  exact reference: not run (--no-exact)"
run diff --dump "$C" --stage o --no-exact
expect_line "  B 1, H 4, Nq 128, Nk 128, d 64; policy fa2, exp ex2-sm90 (the description's default), causal yes (manifest)"

# The mask matters: overriding the manifest breaks the agreement.
run diff --dump "$C" --stage o --no-causal --no-exact
expect_rc 1
expect_out_has "causal no (--no-causal)"
expect_no_line "  $ALL"
run diff --dump "$D" --stage o --causal --no-exact
expect_rc 1
expect_no_line "  $ALL"

# ---------------------------------------------------------------------
# LSE: fa2's log is CUDA's __logf through the measured lg2.approx, and
# every row agrees.  With the correctly rounded log instead (the
# description's "log": "cr"), 412 of 512 (non-causal) and 433 of 512
# (causal) agree; the others are 1 ulp apart (non-causal) or up to 3 FP32
# ulps (causal, rows whose LSE is near 0).
# ---------------------------------------------------------------------
for f in "$D" "$C"; do
    run diff --dump "$f" --stage lse --no-exact
    expect_rc 0
    expect_line "  512 elements, 512 bit-equal (100.000%), 0 differ"
    expect_line "  lse: bit-equal"
done
"$BF16EMU" attn --policy fa2 --describe |
    sed 's/"log": "lg2"/"log": "cr"/' >"$tmp/fa2-cr.json"
CR="--kernel $tmp/fa2-cr.json"
run diff --dump "$D" --stage lse --no-exact $CR
expect_rc 1
expect_line "  512 elements, 412 bit-equal (80.469%), 100 differ"
expect_line "  lse: 100 of 512 elements differ"
expect_line "result: 1 of 1 stage differs"
run diff --dump "$C" --stage lse --no-exact $CR
expect_rc 1
expect_line "  512 elements, 433 bit-equal (84.570%), 79 differ"
expect_out_has "    [0, 0, 1]: gpu 0xBE81A559 -0.25321463, emulator 0xBE81A55C -0.25321472, distance 3"

# --tolerance makes a stage pass when every distance is within it.
run diff --dump "$D" --stage lse --no-exact --tolerance 1 $CR
expect_rc 0
expect_line "  lse: within 1 ulp (max distance 1)"
expect_line "result: 1 stage compared, all within tolerance"
run diff --dump "$C" --stage lse --no-exact --tolerance 2 $CR
expect_rc 1
expect_line "  lse: 1 of 512 elements beyond 2 ulps"
run diff --dump "$C" --stage lse --no-exact --tolerance 3 $CR
expect_rc 0

# ---------------------------------------------------------------------
# Backward from the dump's O and LSE: dQ, dK, dV bit-equal on both.
# With the correctly rounded exp instead of the measured ex2 they are
# not (the counts show that the exp model is what makes them agree).
# ---------------------------------------------------------------------
for f in "$D" "$C"; do
    run diff --dump "$f" --stage dq,dk,dv --no-exact
    expect_rc 0
    expect_line "  dq: bit-equal"
    expect_line "  dk: bit-equal"
    expect_line "  dv: bit-equal"
    expect_line "result: 3 stages compared, all bit-equal"
    expect_out_has "backward stages from the dump's q, k, v, do, o and lse"
done
run diff --dump "$D" --stage dq,dk,dv --no-exact --exp cr
expect_rc 1
expect_line "  32768 elements, 32731 bit-equal (99.887%), 37 differ"
expect_line "  32768 elements, 32748 bit-equal (99.939%), 20 differ"
expect_line "result: 2 of 3 stages differ"
run diff --dump "$C" --stage o,dq,dk --no-exact --exp cr
expect_rc 1
expect_line "  32768 elements, 32767 bit-equal (99.997%), 1 differ"
expect_line "  32768 elements, 32764 bit-equal (99.988%), 4 differ"
expect_line "  32768 elements, 32761 bit-equal (99.979%), 7 differ"

# ---------------------------------------------------------------------
# Every stage (the default) with the exact reference, as JSON.
# ---------------------------------------------------------------------
run diff --dump "$D" --json
expect_rc 0
expect_json command diff
expect_json causal false
expect_json causal_from manifest
expect_json scale.bits 0x3E000000
expect_json exact_reference.run true
expect_json stages "[5]"
expect_json stages.0.stage o
expect_json stages.0.format bf16
expect_json stages.0.equal 32768
expect_json stages.0.pass true
expect_json stages.1.stage lse
expect_json stages.1.format f32
expect_json stages.1.equal 512
expect_json stages.1.max_distance 0
expect_json stages.1.pass true
expect_json stages.1.exact.gpu.n 512
expect_json stages.4.stage dv
expect_json stages.4.equal 32768
expect_json pass true
# Equal bits give equal errors against the exact values (every stage).
for s in 0 1 2 3 4; do
    a=$("$JSONQ" "$tmp/out" stages.$s.exact.gpu.mean)
    b=$("$JSONQ" "$tmp/out" stages.$s.exact.emulator.mean)
    if [ -n "$a" ] && [ "$a" = "$b" ]; then pass; else
        fail "stage $s: gpu mean '$a', emulator mean '$b'"
    fi
done
run diff --dump "$C" --stage lse --json --no-exact $CR
expect_json causal true
expect_json stages.0.equal 433
expect_json stages.0.worst.0.index.2 1
expect_json stages.0.worst.0.distance 3
expect_json exact_reference.run false
expect_json stages.0.exact null

# ---------------------------------------------------------------------
# The emulator against its own output file (F32 patterns of BF16 values,
# no manifest): every stage bit-equal.
# ---------------------------------------------------------------------
A=$tmp/a.safetensors
run attn --gen normal --heads 2 --nq 16 --nk 24 --d 8 --policy fa2 \
    --exp ex2-sm90 --causal --backward --no-exact --out "$A"
expect_rc 0
run diff --dump "$A" --causal --no-exact
expect_rc 0
expect_line "result: 5 stages compared, all bit-equal"
expect_out_has "causal yes (--causal)"
# bf16emu's own files say causal and scale in their metadata; an option
# over them wins, and the report says so.
run diff --dump "$A" --no-exact
expect_rc 0
expect_out_has "causal yes (the file's metadata)"
expect_out_has "from the file's metadata"
run diff --dump "$A" --no-causal --no-exact
expect_rc 1
expect_out_has "causal no (--no-causal)"
expect_line "  note: --no-causal overrides the file's causal: true"

# ---------------------------------------------------------------------
# README.md's example (the block after "<!-- diff-h200 -->"), run again
# from the source tree: the output must match, except the command line.
# ---------------------------------------------------------------------
if readme_has diff-h200; then
    readme_block diff-h200 | grep -v -e '^\$ ' >"$tmp/readme"
    bf=$(cd "$(dirname "$BF16EMU")" && echo "$(pwd)/$(basename "$BF16EMU")")
    (
        cd "$srcdir" &&
            "$bf" diff --policy fa2 \
                --dump tests/data/gpu/sdpa_h200_d64.safetensors --stage o,lse
    ) >"$tmp/ran" 2>&1
    expect_readme diff-h200
else
    readme_missing diff-h200
fi

# ---------------------------------------------------------------------
# Errors.
# ---------------------------------------------------------------------
X=$tmp/x.safetensors
bad "$tmp/none.safetensors" --dump "$tmp/none.safetensors"
bad "missing --dump FILE" --stage o
bad "--policy 'fa3': unknown policy (expected paper-eq4, repo, fa2 or flash, fp32, cudnn, efficient, math or sdpa)" \
    --policy fa3 --dump "$D"
bad "--stage 'o,foo': unknown stage 'foo'" --dump "$D" --stage o,foo
bad "--exp 'fast': unknown exp model" --dump "$D" --exp fast
bad "--causal and --no-causal contradict each other" --dump "$D" --causal \
    --no-causal
bad "unexpected operand" "$D"
bad "--fix 'sometimes': unknown fix (expected none, beta, beta-v2, eps or always)" \
    --dump "$D" --fix sometimes
bad "the stages s, m, p, l and acc are compared under --policy fa2 only" \
    --dump "$FD" --policy fp32 --stage acc
# Under another policy the default leaves the kernel stages out.
run diff --dump "$FD" --policy fp32 --exp cr --no-exact
expect_out_has "stage o (f32"
expect_no_line "stage acc (f32 [1, 1, 64, 2, 64], dump F32):"
"$DIFF_INPUTS" drop "$FD" acc "$X" || exit 99
bad "$X: acc: missing (expected a tensor \"acc\")" --dump "$X" --stage acc
"$DIFF_INPUTS" manifest "$FD" '{"fix": "sometimes"}' "$X" || exit 99
bad "$X: manifest: fix: \"sometimes\" (expected none, beta, beta-v2, eps or always)" \
    --dump "$X"
"$DIFF_INPUTS" manifest "$FD" '{"fix": 2}' "$X" || exit 99
bad "$X: manifest: fix: expected a string" --dump "$X"

"$DIFF_INPUTS" drop "$D" do "$X" || exit 99
bad "$X: do: missing (expected a tensor \"do\" for the backward stages)" \
    --dump "$X" --stage dq
run diff --dump "$X" --no-exact
expect_rc 0
expect_line "result: 2 stages compared, all bit-equal"
"$DIFF_INPUTS" drop "$D" q "$X" || exit 99
bad "$X: q: missing (expected a tensor \"q\")" --dump "$X" --stage o
# the message lists the tensors the dump holds (all but q)
expect_err_has "; the dump holds "
ctx="the dump's tensors are listed without q"
for t in k v do o lse dq dk dv; do
    if grep -q -E "holds (.*, )?$t(,|\$)" "$tmp/err"; then pass; else
        fail "no $t in: $(cat "$tmp/err")"
    fi
done
if grep -q -E "holds (.*, )?q(,|\$)" "$tmp/err"; then fail "q listed"; else
    pass
fi

# A file of another type given as the dump: said so, with the option
printf '\223NUMPY\001\000\066\000%s\n' \
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" \
    >"$tmp/X.npy"
head -c 8 /dev/zero >>"$tmp/X.npy"
bad "bf16emu diff: --dump: $tmp/X.npy: not a .safetensors file (it looks like a .npy file;" \
    --dump "$tmp/X.npy"

"$DIFF_INPUTS" manifest "$D" '{"q": [1, ' "$X" || exit 99
bad "$X: manifest: malformed JSON at byte 10: " \
    --dump "$X"
"$DIFF_INPUTS" manifest "$D" '[1]' "$X" || exit 99
bad "$X: manifest: not a JSON object" --dump "$X"
"$DIFF_INPUTS" manifest "$D" '{"causal": 1}' "$X" || exit 99
bad "$X: manifest: causal: expected true or false" --dump "$X"
"$DIFF_INPUTS" manifest "$D" \
    '{"shape": {"batch": 1, "heads": 4, "nq": 64, "nk": 128, "d": 64}}' \
    "$X" || exit 99
bad "$X: manifest: shape.nq: 64 (expected 128, as the tensors have it)" \
    --dump "$X"
"$DIFF_INPUTS" manifest "$D" '{"scale": "0.1 per head"}' "$X" || exit 99
bad "$X: manifest: scale: \"0.1 per head\"" --dump "$X" --layout bhnd \
    --no-causal
run diff --dump "$X" --stage o --scale 0.125 --no-exact --layout bhnd \
    --no-causal
expect_rc 0

# No silent defaults: a causal dump without its manifest was compared as
# non-causal (440,612 of 1,048,576 O elements "differed" on a user's
# dump); now the mask, the scale and the layout must be given.
"$DIFF_INPUTS" manifest "$C" - "$X" || exit 99
bad "no manifest gives causal; pass --causal or --no-causal" --dump "$X" \
    --stage o --no-exact --layout bhnd --scale 0.125
bad "no manifest gives scale; pass --scale X" --dump "$X" --stage o \
    --no-exact --layout bhnd --causal
bad "$X: q: shape [1, 4, 128, 64] may be [B, H, N, d] or [B, N, H, d]" \
    --dump "$X" --stage o --no-exact --causal --scale 0.125
bad "pass --layout bhnd or --layout bnhd" --dump "$X" --stage o \
    --no-exact --causal --scale 0.125
run diff --dump "$X" --stage o --no-exact --causal --scale 0.125 \
    --layout bhnd
expect_rc 0
expect_out_has "causal yes (--causal)"
expect_line "  layout bhnd (--layout)"

"$DIFF_INPUTS" set "$A" o 3 3F800001 "$X" || exit 99
bad "$X: o: element 3 is F32 0x3F800001, not a bf16 value" --dump "$X" \
    --causal


# ---------------------------------------------------------------------
# The causal alignment: a memory-efficient dump of SDPA's is_causal with
# Nq != Nk (the manifest's "causal_alignment": "top-left ...") is
# bit-equal under its own alignment; --causal-align bottom-right (the
# flash kernel's mask) is not.
# ---------------------------------------------------------------------
T=$G/backends/efficient/eff_d64_causal_nq128_nk320.safetensors
run diff --dump "$T" --policy efficient --stage o,lse,dq --no-exact
expect_rc 0
expect_out_has "causal yes (manifest)"
expect_line "  causal mask top-left aligned (key j masked for query i when j > i; manifest)"
expect_out_has "8192 elements, 8192 bit-equal (100.000%), 0 differ"
expect_out_has "128 elements, 128 bit-equal (100.000%), 0 differ"
run diff --dump "$T" --policy efficient --stage o --no-exact \
    --causal-align bottom-right
expect_rc 1
expect_out_has "8192 elements, 7 bit-equal (0.085%), 8185 differ"
bad "--causal-align: \"diagonal\" (expected top-left or bottom-right)" \
    --dump "$T" --causal-align diagonal
# the manifest's alignment replaced by one of the same length
sed 's/top-left (key/middle!! (key/' "$T" >"$tmp/align.safetensors"
bad "$tmp/align.safetensors: manifest: causal_alignment: expected a string starting \"top-left\" or \"bottom-right\", or null" \
    --dump "$tmp/align.safetensors" --policy efficient

# bf16emu attn --causal-align top-left writes "causal_alignment" into the
# file's metadata; diff reads it back (every stage bit-equal)
run attn --gen normal --nq 40 --nk 72 --d 16 --policy efficient --causal \
    --causal-align top-left --backward --out "$tmp/tl.safetensors"
expect_rc 0
run diff --dump "$tmp/tl.safetensors" --policy efficient --no-exact
expect_rc 0
expect_line "  causal mask top-left aligned (key j masked for query i when j > i; the file's metadata)"
expect_out_has "  640 elements, 640 bit-equal (100.000%), 0 differ"
expect_out_has "  1152 elements, 1152 bit-equal (100.000%), 0 differ"
if grep -e "differ" "$tmp/out" | grep -v -e " 0 differ" >/dev/null; then
    fail "a stage differs"
else
    pass
fi
run attn --nq 8 --d 16 --causal --causal-align sideways
expect_rc 2
expect_err_has "--causal-align: \"sideways\" (expected top-left or bottom-right)"
# ---------------------------------------------------------------------
# The math backend (tests/data/gpu/backends/math): its backward needs
# neither o nor lse; a decode dump's launch_shape selects the gemv orders
# (without it the FFMA chains run and O differs).
# ---------------------------------------------------------------------
M=$G/backends/math/math_bwd_d64_nq48_nk12.safetensors
run diff --dump "$M" --policy math --dq "$M:math.dq" --dk "$M:math.dk" \
    --dv "$M:math.dv" --stage dq,dk,dv --no-exact
expect_rc 0
expect_line "result: 3 stages compared, all bit-equal"
S=$G/backends/math/decode_order_s_d64_nk512.safetensors
run diff --dump "$S" --policy math --o "$S:math.o" --stage o --no-exact
expect_rc 0
expect_line "result: 1 stage compared, all bit-equal"
"$DIFF_INPUTS" manifest "$S" '{"causal": false, "scale": 0.25}' "$X" ||
    exit 99
run diff --dump "$X" --policy math --o "$X:math.o" --stage o --no-exact \
    --layout bhnd
expect_rc 1
expect_out_has "64 elements, 0 bit-equal"
"$DIFF_INPUTS" manifest "$S" \
    '{"causal": false, "scale": 0.25, "launch_shape": {"batch": 2, "heads": 8}}' \
    "$X" || exit 99
run diff --dump "$X" --policy math --o "$X:math.o" --stage o --no-exact \
    --layout bhnd
expect_rc 0
"$DIFF_INPUTS" manifest "$S" '{"launch_shape": {"batch": 0, "heads": 8}}' \
    "$X" || exit 99
bad "$X: manifest: launch_shape.batch: expected a positive integer" \
    --dump "$X" --policy math --o "$X:math.o"

finish
