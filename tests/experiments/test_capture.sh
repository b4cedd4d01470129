# test_capture.sh -- bf16emu scan and diff on a capture of a trained GPT
# (tests/data/gpu/capture_gpt6_r128: experiments/gpu/train_gpt.py on an
# H200, the final step, per layer the heads 0 and 7, the first 128
# positions; and capture_gpt6_s0_l1h0, one head at step 0).  The expected repeated-maxima counts are the manifest's
# "repeated_max_rows_expected", counted on the GPU machine from the
# captured Q and K with exact integer sums (capture.repeated_max_rows), not
# by bf16emu; every O element must be the GPU's bits under fa2.  Then a
# grouped-query capture of a transformers Llama (tests/data/gpu/hf).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq

cap=$srcdir/tests/data/gpu/capture_gpt6_r128.safetensors
s=10945

# The expected counts, from the manifest (layer -> head -> rows).
"$JSONQ" "${cap%.safetensors}.json" \
    repeated_max_rows_expected.0.0 repeated_max_rows_expected.0.7 \
    repeated_max_rows_expected.1.0 repeated_max_rows_expected.1.7 \
    repeated_max_rows_expected.2.0 repeated_max_rows_expected.2.7 \
    repeated_max_rows_expected.3.0 repeated_max_rows_expected.3.7 \
    repeated_max_rows_expected.4.0 repeated_max_rows_expected.4.7 \
    repeated_max_rows_expected.5.0 repeated_max_rows_expected.5.7 \
    >"$tmp/expect" || { echo "cannot read the expected counts"; exit 99; }
[ "$(wc -l <"$tmp/expect")" -eq 12 ] || exit 99

run scan --quiet --json --threads 2 "$cap"
expect_rc 0
args=
i=0
for layer in 0 1 2 3 4 5; do
    for head in 0 7; do
        want=$(sed -n "$((i + 1))p" "$tmp/expect")
        args="$args heads.$i.layer $layer heads.$i.head $head"
        args="$args heads.$i.steps 1 heads.$i.rows 128"
        args="$args heads.$i.rows_repeated_max $want"
        args="$args heads.$i.o_match 8192 heads.$i.o_elements 8192"
        i=$((i + 1))
    done
done
# shellcheck disable=SC2086
expect_jsons $args
# Eq. 2-3 needs dO, which the capture has: every row is summed.
expect_jsons heads.0.eq23.rows 128 heads.11.eq23.rows 128 \
    heads.0.eq23.steps.0.step 10945

# Step 0, layer 1, head 0, the first 128 positions: five O elements of
# row 24 come out one BF16 ulp off with a correctly rounded exp; with the
# H200's ex2.approx (what scan uses for fa2) all 8192 are the GPU's.
s0=$srcdir/tests/data/gpu/capture_gpt6_s0_l1h0.safetensors
run scan --quiet --json "$s0"
expect_rc 0
expect_jsons exp ex2-sm90 heads.0.layer 1 heads.0.head 0 heads.0.steps 1 \
    heads.0.o_match 8192 heads.0.o_elements 8192

# The same capture through diff, settings from the manifest alone: the
# H200's O of one head pair, bit for bit.
run diff --dump "$cap" --q "$cap:L3.s$s.q" --k "$cap:L3.s$s.k" \
    --v "$cap:L3.s$s.v" --o "$cap:L3.s$s.o" --no-exact --stage o
expect_rc 0
expect_out_has "causal yes (manifest)"
expect_out_has "layout bhnd (manifest)"
expect_out_has "16384 elements, 16384 bit-equal (100.000%), 0 differ"

# One call picked by --call: keys and settings from the manifest's calls
# entry, no --q/--k/... list; O and LSE are the H200's bits.
run diff --dump "$cap" --call "L3.s$s" --no-exact
expect_rc 0
expect_out_has "causal yes (manifest)"
expect_out_has "16384 elements, 16384 bit-equal (100.000%), 0 differ"
expect_out_has "256 elements, 256 bit-equal (100.000%), 0 differ"
expect_out_has "result: 2 stages compared, all bit-equal"
run diff --dump "$cap" --call "L3.s1" --no-exact
expect_rc 2
expect_err_has "--call L3.s1: $cap holds no tensor \"L3.s1.q\""
expect_no_stdout
run diff --call "L3.s$s" --no-exact
expect_rc 2
expect_err_has "--call L3.s$s: expected --dump CAPTURE"

# Its LSE in every layer: CUDA's __logf (fa2's lg2 log) gives the H200's
# bits in every row (a correctly rounded log misses some).
for l in 0 1 2 3 4 5; do
    run diff --dump "$cap" --q "$cap:L$l.s$s.q" --k "$cap:L$l.s$s.k" \
        --v "$cap:L$l.s$s.v" --o "$cap:L$l.s$s.o" --lse "$cap:L$l.s$s.lse" \
        --no-exact --stage o,lse
    expect_rc 0
    expect_out_has "256 elements, 256 bit-equal (100.000%), 0 differ"
done

# A Llama with grouped-query heads (tests/data/gpu/hf/llama_gqa: 8 query
# heads over 2 KV heads, d = 32, FP32 q and k cast by BF16 autocast,
# scale 32**-0.5 as given, cuDNN on an H100): each call's O and LSE are
# the GPU's bits under the cudnn description, the scale rounded to FP32;
# so are dQ and dK, dV of the 2 KV heads (gqa_dkv "in-sum": each query
# head's gradient in BF16, a group's added in FP32 and rounded once).
gqa=$srcdir/tests/data/gpu/hf/llama_gqa.safetensors
for c in L0.s0 L1.s0; do
    run diff --dump "$gqa" --call "$c" --no-exact
    expect_rc 0
    expect_out_has "B 2, H 8, Nq 64, Nk 64, d 32; policy cudnn"
    expect_out_has "scale 0.17677669 (FP32 0x3E3504F3), from the manifest"
    expect_out_has "32768 elements, 32768 bit-equal (100.000%), 0 differ"
    expect_out_has "1024 elements, 1024 bit-equal (100.000%), 0 differ"
    expect_out_has "stage dk (bf16 [2, 2, 64, 32], dump BF16):"
    expect_out_has "8192 elements, 8192 bit-equal (100.000%), 0 differ"
    expect_line "result: 5 stages compared, all bit-equal"
done

# scan on the grouped capture: each query head against its KV head (8
# over 2), the scale given as a double rounded to FP32 as the kernel
# takes it; the emulated O is the captured O in every one of the 16
# (layer, head) cells (match 1.000)
run scan --policy cudnn "$gqa"
expect_rc 0
expect_out_has "scan: 2 calls, 16 (layer, head) cells; policy cudnn, exp ex2-sm90"
n16=$(awk '$1 ~ /^[01]$/ && NF == 18 && $16 == "1.000"' "$tmp/out" | wc -l)
if [ "$n16" -eq 16 ]; then pass; else
    fail "scan of the grouped capture: $n16 of 16 cells with match 1.000"; fi

# A GPT-2 in FP16 (tests/data/gpu/hf/gpt2_fp16, cuDNN on an H100): every
# stage of each call bit-equal, and scan measures FP16 calls (errors in
# FP16 ulps) with the emulated O equal to the captured O in every cell.
g16=$srcdir/tests/data/gpu/hf/gpt2_fp16.safetensors
for c in L0.s0 L1.s0; do
    run diff --dump "$g16" --call "$c" --no-exact
    expect_rc 0
    expect_out_has "stage o (f16 [2, 4, 64, 64], dump F16):"
    expect_line "result: 5 stages compared, all bit-equal"
done
run scan --policy cudnn "$g16"
expect_rc 0
expect_out_has "in ulps of the call's format (BF16, or FP16 for FP16 calls)"
n8=$(awk '$1 ~ /^[01]$/ && NF == 18 && $16 == "1.000"' "$tmp/out" | wc -l)
if [ "$n8" -eq 8 ]; then pass; else
    fail "scan of the FP16 capture: $n8 of 8 cells with match 1.000"; fi

# Masked models as transformers builds them (tests/data/gpu/hf, cuDNN on
# an H100): a Llama with grouped heads and a padded batch (a boolean
# causal-and-padding mask), a Mistral with a 32-token window, a BERT with
# a padding mask.  Every call's every stage is bit-equal with the call's
# own mask applied.
for m in llama_gqa_padded mistral_window bert_padded; do
    f=$srcdir/tests/data/gpu/hf/$m.safetensors
    [ -r "$f" ] || continue
    for c in L0.s0 L1.s0; do
        run diff --dump "$f" --call "$c" --no-exact
        expect_rc 0
        expect_out_has "attn_mask: $f: $c.attn_mask, bool, applied as the description's bias_add \"log2\""
        expect_line "result: 5 stages compared, all bit-equal"
    done
    # scan applies each call's mask too: the emulated O is the captured O
    # in every (layer, head) cell
    run scan --policy cudnn "$f"
    expect_rc 0
    nc=$(awk '$1 ~ /^[01]$/ && NF == 18' "$tmp/out" | wc -l)
    nm=$(awk '$1 ~ /^[01]$/ && NF == 18 && $16 == "1.000"' "$tmp/out" | wc -l)
    if [ "$nc" -gt 0 ] && [ "$nm" -eq "$nc" ]; then pass; else
        fail "scan of $m: $nm of $nc cells with match 1.000"; fi
done

# A mask in one call of a capture: that call runs with it (the entry's
# "attn_mask" and its tensor), the others as before.  The copy adds
# L1.s0.attn_mask (U8, every key taking part) and its entry to the Llama
# capture.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$gqa" "$tmp/masked.safetensors" <<'PYEOF' || exit 99
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    hdr = json.loads(f.read(n))
    data = f.read()
man = json.loads(hdr["__metadata__"]["manifest"])
for c in man["calls"]:
    if c["layer"] == 1:
        c["attn_mask"] = {"dtype": "U8", "shape": [2, 1, 64, 64],
                          "kind": "bool"}
hdr["__metadata__"]["manifest"] = json.dumps(man)
mask = bytes([1]) * (2 * 64 * 64)
hdr["L1.s0.attn_mask"] = {"dtype": "U8", "shape": [2, 1, 64, 64],
                          "data_offsets": [len(data), len(data) + len(mask)]}
h = json.dumps(hdr).encode()
h += b" " * (-len(h) % 8)
with open(dst, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data + mask)
PYEOF
    run diff --dump "$tmp/masked.safetensors" --call L0.s0 --no-exact
    expect_rc 0
    expect_line "result: 5 stages compared, all bit-equal"
    # the call's mask is applied (cuDNN's masked arithmetic: the bias
    # added to RN(S scale) before the log2 domain, which at this scale,
    # 32^-0.5, is not the unmasked kernel's RN(S RN(scale log2 e)) even
    # where the mask hides nothing, so the captured unmasked O differs)
    run diff --dump "$tmp/masked.safetensors" --call L1.s0 --no-exact
    expect_rc 1
    expect_out_has "attn_mask: $tmp/masked.safetensors: L1.s0.attn_mask, bool, applied as the description's bias_add \"log2\" (a False entry: -65504); 0 entries hide a key, 0 rows see none"
fi

finish
