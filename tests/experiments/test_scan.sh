# test_scan.sh -- bf16emu scan on a capture of two layers: a synthetic one
# whose heads have repeated maxima or not (the expected counts come from
# the integer scores that scan_inputs computes), and the H200 FLASH dump
# (a real kernel's O, which the fa2 emulation must reproduce bit for bit);
# --json fields, the same output for 1 and 2 threads, the kernel by name
# (--policy, any built-in description) or file (--kernel), a cuDNN
# capture, --csv and --plot, and the bad inputs (exit 2, nothing
# written).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
: "${SCAN_INPUTS:=./tests/experiments/scan_inputs}"
need_built "$JSONQ" "$SCAN_INPUTS"

d=$tmp/d
mkdir "$d" || exit 99
h200=$srcdir/tests/data/gpu/sdpa_h200_d64_repmax.safetensors
"$SCAN_INPUTS" "$d" "$h200" >"$d/expect" || exit 99
rep0=$(awk '$2 == 0 { print $4 }' "$d/expect")
rep1=$(awk '$2 == 1 { print $4 }' "$d/expect")
rep2=$(awk '$2 == 2 { print $4 }' "$d/expect")

# The counts: synthetic heads (scores are integers over 8, so the fix's
# tolerance 1e-3 finds no more than exact equality), then the H200 layer
# (generated with 4 equal keys at the maximum of every row).
run scan --quiet --json --threads 1 "$d/cap.safetensors"
expect_rc 0
cp "$tmp/out" "$d/t1.json"
expect_jsons heads.0.layer 0 heads.0.head 0 \
    heads.0.rows 64 heads.0.rows_repeated_max "$rep0" \
    heads.0.rows_near_max "$rep0" heads.0.rows_p1_ge2 "$rep0" \
    heads.0.rows_p1_ge2_fix 0 \
    heads.1.rows_repeated_max "$rep1" heads.1.rows_near_max "$rep1" \
    heads.2.rows_repeated_max "$rep2" heads.2.rows_near_max "$rep2" \
    heads.0.v_features 64 heads.0.v_features_one_sign 64 \
    heads.1.v_features_one_sign 0 \
    heads.0.risk 1 heads.0.rank 1 heads.2.risk 0 \
    heads.3.layer 1 heads.3.rows 128 heads.3.rows_repeated_max 128 \
    heads.3.rows_p1_ge2 128 \
    heads.3.o_match 8192 heads.3.o_elements 8192 \
    heads.6.o_match 8192 heads.6.lse_elements 128 \
    heads.0.o_match 4096 ranking.0.layer 0 ranking.0.head 0 \
    heads.0.o_bias_ulps.emulated.n 4096 heads.0.delta_bias.emulated.n 64
# The counts must differ between the heads, or the test shows nothing.
[ "$rep0" -eq 64 ] && [ "$rep1" -gt 0 ] && [ "$rep1" -lt 64 ] \
    && [ "$rep2" -eq 0 ] && pass || fail "counts $rep0 $rep1 $rep2"

# A causal H200 dump through --manifest (its own manifest has no calls):
# the fa2 emulation reproduces the GPU's O; the binary64 reference finds
# the same rows as the exact one, here and on the synthetic layer.
cat >"$d/causal.json" <<'JSON'
{"calls": [{"layer": 3, "step": 7, "prefix": "", "causal": true,
            "scale": null, "layout": "bhnd", "dtype": "bfloat16",
            "backend": "flash"}]}
JSON
causal=$srcdir/tests/data/gpu/sdpa_h200_d64_sink_causal.safetensors
for ref in exact binary64; do
    run scan --quiet --json --reference $ref --manifest "$d/causal.json" \
        "$causal"
    expect_rc 0
    "$JSONQ" "$tmp/out" heads.0.layer heads.0.steps heads.0.o_match \
        heads.0.o_elements heads.3.o_match heads.0.rows \
        heads.0.rows_repeated_max heads.0.rows_near_max \
        heads.0.rows_p1_ge2 heads.0.rows_sink heads.2.rows_p1_ge2 \
        >"$d/causal.$ref" || fail "jsonq"
    run scan --quiet --json --reference $ref "$d/cap.safetensors"
    "$JSONQ" "$tmp/out" heads.0.rows_repeated_max heads.1.rows_repeated_max \
        heads.2.rows_repeated_max heads.1.rows_sink reference \
        >"$d/syn.$ref" || fail "jsonq"
done
printf '3\n1\n8192\n8192\n8192\n128\n' >"$d/causal.want"
head -6 "$d/causal.exact" | cmp -s - "$d/causal.want" && pass \
    || { ctx=causal; fail "$(tr '\n' ' ' <"$d/causal.exact")"; }
cmp -s "$d/causal.exact" "$d/causal.binary64" && pass \
    || { ctx=binary64; fail "causal counts differ"; }
head -4 "$d/syn.exact" >"$d/syn.e4"
head -4 "$d/syn.binary64" >"$d/syn.b4"
cmp -s "$d/syn.e4" "$d/syn.b4" && pass \
    || { ctx=binary64; fail "synthetic counts differ"; }
[ "$(sed -n 5p "$d/syn.binary64")" = binary64 ] && pass \
    || { ctx=binary64; fail "reference field"; }

# heads_kept names the model's heads; rows_kept with a causal mask is
# refused (the mask needs the rows' positions).
cat >"$d/kept.json" <<'JSON'
{"calls": [{"layer": 2, "step": 0, "prefix": "", "causal": false,
            "scale": null, "layout": "bhnd", "dtype": "bfloat16",
            "backend": "flash", "heads_kept": [9, 4, 7, 5]}]}
JSON
run scan --quiet --json --reference binary64 --manifest "$d/kept.json" "$h200"
expect_rc 0
expect_jsons heads.0.head 4 heads.1.head 5 heads.2.head 7 heads.3.head 9 \
    heads.3.rows_repeated_max 128
sed 's/"causal": false/"causal": true/; s/"heads_kept": \[9, 4, 7, 5\]/"rows_kept": [0, 1]/' \
    "$d/kept.json" >"$d/rows.json"
run scan --quiet --manifest "$d/rows.json" "$h200"
expect_rc 2
expect_err_has "'rows_kept' with a causal mask"
sed 's/\[9, 4, 7, 5\]/[9, 4, 7]/' "$d/kept.json" >"$d/kept3.json"
run scan --quiet --manifest "$d/kept3.json" "$h200"
expect_rc 2
expect_err_has "4 heads, but the manifest's heads_kept lists 3"
expect_no_stdout

# Causal with Nq = 64 < Nk = 192 (d = 128: three KV blocks of 64): the
# alignment must be stated.  Random normal inputs have no repeated
# maximum, yet most rows see P~ == 1 in more than one block (where the
# running maximum grew); those are not the trigger and are not counted.
ext=$srcdir/tests/data/gpu/sdpa_ext/causal_d128_nq64_nk192.safetensors
sed 's/"causal": false/"causal": true/; s/, "heads_kept": \[9, 4, 7, 5\]//' \
    "$d/kept.json" >"$d/ext.json"
run scan --quiet --manifest "$d/ext.json" "$ext"
expect_rc 2
expect_err_has "causal with Nq = 64 != Nk = 192"
sed 's/"backend": "flash"/"backend": "flash", "causal_alignment": "bottom-right"/' \
    "$d/ext.json" >"$d/ext2.json"
run scan --quiet --json --reference binary64 --manifest "$d/ext2.json" "$ext"
expect_rc 0
expect_jsons heads.0.rows 64 heads.0.rows_repeated_max 0 \
    heads.0.rows_p1_ge2 0
p1=$("$JSONQ" "$tmp/out" heads.0.p1_entries)
[ "$p1" -gt 64 ] && pass || { ctx=blocks; fail "p1_entries $p1"; }

# Threads: the same bytes.
run scan --quiet --json --threads 2 "$d/cap.safetensors"
expect_rc 0
expect_same_as "$d/t1.json"

# Under a BF16 accumulator (repo) the fix shrinks the bias of O and of
# delta on the repeated-max head 0 (values of this fixed capture).
run scan --quiet --json --policy repo "$d/eager.safetensors"
expect_rc 0
"$JSONQ" "$tmp/out" heads.0.o_bias_ulps.emulated.mean \
    heads.0.o_bias_ulps.fix.mean heads.0.delta_bias.emulated.mean \
    heads.0.delta_bias.fix.mean >"$d/bias" || fail "jsonq"
awk 'function a(x) { return x < 0 ? -x : x }
     { v[NR] = $1 }
     END { exit !(a(v[2]) < a(v[1]) && a(v[4]) < a(v[3])) }' "$d/bias" \
    && pass || { ctx=bias; fail "fix not smaller: $(tr '\n' ' ' <"$d/bias")"; }

# --policy takes every built-in description's name, and flash, PyTorch's
# name of fa2 (the same run, named fa2); the exp model and log are the
# description's (cudnn: ex2-sm90, its own LSE rule, so its LSE is not
# fa2's on this capture).
run scan --quiet --json --reference binary64 --policy fa2 "$d/cap.safetensors"
expect_rc 0
cp "$tmp/out" "$d/fa2.json"
run scan --quiet --json --reference binary64 --policy flash \
    "$d/cap.safetensors"
expect_rc 0
expect_same_as "$d/fa2.json"
run scan --quiet --reference binary64 --policy flash "$d/cap.safetensors"
expect_rc 0
expect_out_has "policy fa2, exp ex2-sm90, fix beta"
run scan --quiet --json --reference binary64 --policy cudnn \
    "$d/cap.safetensors"
expect_rc 0
cp "$tmp/out" "$d/cudnn.json"
expect_jsons policy cudnn exp ex2-sm90 heads.3.rows 128 \
    heads.3.lse_elements 128
lse_fa2=$("$JSONQ" "$d/fa2.json" heads.3.lse_match)
lse_cud=$("$JSONQ" "$d/cudnn.json" heads.3.lse_match)
[ "$lse_cud" -lt "$lse_fa2" ] && pass \
    || { ctx=cudnn; fail "LSE matches: cudnn $lse_cud, fa2 $lse_fa2"; }
run scan --quiet --reference binary64 --policy cudnn "$d/cap.safetensors"
expect_rc 0
expect_out_has "policy cudnn, exp ex2-sm90, fix beta"
# --kernel: a description file, the same bits as its name; not with
# --policy.
run attn --policy cudnn --describe
expect_rc 0
cp "$tmp/out" "$d/cudnn.kernel.json"
run scan --quiet --json --reference binary64 --kernel "$d/cudnn.kernel.json" \
    "$d/cap.safetensors"
expect_rc 0
expect_same_as "$d/cudnn.json"
run scan --quiet --kernel "$d/cudnn.kernel.json" --policy cudnn \
    "$d/cap.safetensors"
expect_rc 2
expect_err_has "and --policy: expected one of them"
expect_no_stdout
# Unknown names (sdpa too: scan runs one kernel) list every name taken.
names="fa2 (or flash), paper-eq4, repo, fp32, cudnn, efficient, math, flex or flex-decode"
run scan --quiet --policy cuddn "$d/cap.safetensors"
expect_rc 2
expect_err_has "--policy 'cuddn': unknown kernel (expected $names)"
expect_no_stdout
run scan --quiet --policy sdpa "$d/cap.safetensors"
expect_rc 2
expect_err_has "--policy sdpa: PyTorch's choice per call is not available"
expect_err_has "(expected $names)"

# A cuDNN capture (the H200's cudnn SDPA forward, the manifest's backend
# "cudnn"): refused without --policy; cudnn reproduces every O and LSE
# element, fa2 does not.
cud=$srcdir/tests/data/gpu/cudnn/bwd_rand_d64_n256.safetensors
cat >"$d/cudnn_call.json" <<'JSON'
{"calls": [{"layer": 0, "step": 0, "prefix": "", "causal": false,
            "scale": null, "layout": "bhnd", "dtype": "bfloat16",
            "backend": "cudnn"}]}
JSON
run scan --quiet --manifest "$d/cudnn_call.json" "$cud"
expect_rc 2
expect_err_has "backend 'cudnn', not FLASH; give --policy or --kernel"
expect_no_stdout
run scan --quiet --json --reference binary64 --policy cudnn \
    --manifest "$d/cudnn_call.json" "$cud"
expect_rc 0
expect_jsons policy cudnn heads.0.o_match 16384 heads.0.o_elements 16384 \
    heads.0.lse_match 256 heads.0.lse_elements 256
run scan --quiet --json --reference binary64 --policy fa2 \
    --manifest "$d/cudnn_call.json" "$cud"
expect_rc 0
om=$("$JSONQ" "$tmp/out" heads.0.o_match)
[ "$om" -lt 16384 ] && pass || { ctx=cudnn; fail "fa2 O matches $om"; }

# The table, --csv and --plot (atomic, refused when present).
run scan --quiet --csv "$d/s.csv" --plot "$d/heat" "$d/cap.safetensors"
expect_rc 0
expect_out_has "highest risk: L0.h0 1.0000"
[ "$(wc -l <"$d/s.csv")" -eq 8 ] && pass || fail "csv rows"
[ -s "$d/heat.dat" ] && pass || fail "no heat.dat"
cp "$d/s.csv" "$d/s.keep"
run scan --quiet --csv "$d/s.csv" "$d/cap.safetensors"
expect_rc 2
expect_err_has "exists (give --force)"
expect_no_stdout
cmp -s "$d/s.csv" "$d/s.keep" && pass || fail "csv overwritten"

# Bad input.
run scan --quiet "$d/missing.safetensors"
expect_rc 2
expect_err_has "tensor 'L0.s0.v' (layer 0 step 0) is in none of the files"
expect_no_stdout
run scan --quiet "$d/sharda.safetensors" "$d/shardb.safetensors"
expect_rc 2
expect_err_has "L0.s0.k [1, 3, 64, 32] does not fit"
run scan --quiet "$d/eager.safetensors"
expect_rc 2
expect_err_has "backend 'math', not FLASH; give --policy"
run scan --quiet "$d/cap.safetensors" "$d/cap.safetensors"
expect_rc 2
expect_err_has "is in both"
run scan --quiet "$h200"
expect_rc 2
expect_err_has "no capture manifest"
# NaN: the head is left out and counted.
run scan --quiet --json "$d/nan.safetensors"
expect_rc 0
expect_jsons heads.1.heads_nonfinite 1 heads.1.nonfinite_elements 1 \
    heads.1.rows 0 heads.0.rows_repeated_max "$rep0"

finish
