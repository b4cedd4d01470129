# test_attn.sh -- bf16emu attn: every policy on generated inputs (output
# file keys, dtypes, shapes and formats; --json), determinism, the same
# results from inputs read back from files in every layout, the size of
# the fp32 policy's errors, the sign of the paper's repeated-maximum bias
# and its removal by the fix, traces, edge cases, and every error (exit 2,
# a message naming what was wrong, nothing on stdout, no file left)
#
# Input files are written by tests/experiments/attn_inputs ($ATTN_INPUTS),
# which also reads headers and elements of the output files; JSON output
# is parsed by $JSONQ.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_attn_inputs

o=$tmp/o
in=$tmp/in
mkdir "$o" "$in" || exit 99
"$ATTN_INPUTS" bad "$in" || exit 99
X=$in/bad.safetensors

# expect_num WHAT CONDITION X [Y]: the awk condition on x (and y) holds.
expect_num()
{
    if awk -v x="$3" -v y="${4:-0}" "BEGIN { exit !($2) }" </dev/null; then
        pass
    else
        fail "$1: expected $2 with x = '$3' y = '${4:-}'"
    fi
}

# read_header FILE: keep what 'attn_inputs header FILE' prints;
# expect_header LINE: it has the line LINE.
read_header()
{
    hfile=$1
    "$ATTN_INPUTS" header "$1" >"$tmp/header" 2>&1
}

expect_header()
{
    if grep -F -x -e "$1" "$tmp/header" >/dev/null; then
        pass
    else
        fail "$hfile: no header line '$1'; the header is:"
        sed 's/^/    /' "$tmp/header"
    fi
}

# bad MESSAGE ARGS...: exit 2, MESSAGE on stderr, nothing on stdout, no
# file in $o.
bad()
{
    _m=$1
    shift
    expect_error "$_m" attn "$@"
    expect_no_files
}

SMALL="--batch 2 --heads 2 --nq 12 --nk 20 --d 8"

# ---------------------------------------------------------------------
# Every policy: the output file and the JSON report.
# ---------------------------------------------------------------------
for pol in paper-eq4 repo fa2 fp32; do
    f=$o/$pol.safetensors
    run attn --json --gen normal --seed 3 $SMALL --policy "$pol" --causal \
        --backward --capture s,p,m,l,obar,dp,ds --out "$f" --threads 2
    expect_rc 0
    expect_err_only "bf16emu attn: cost 3.07e+04: B x H x Nq x Nk x d = 2 x 2 x 12 x 20 x 8, x 4 with --backward; runs the forward and the backward, then the exact reference (MPFR at 256 bits"
    expect_jsons command attn policy "$pol" backward true shape.nq 12 \
        inputs.source generated inputs.generator.name normal \
        inputs.q.shape.3 8 exact.run true errors.o.count 384 \
        errors.lse.count 48 errors.delta.count 48 errors.dq.count 384 \
        errors.dk.count 640 errors.dv.count 640 rows.count 48 out.file "$f"
    # counts of each sign add up to the count
    n=$(($(jq errors.o.neg) + $(jq errors.o.zero) + $(jq errors.o.pos)))
    expect_num "o sign counts" "x == 384" "$n"
    # the outputs, captures and inputs, with their shapes and dtypes; the
    # formats are those fa_output_format documents for each policy
    fmt=bf16
    [ "$pol" = fp32 ] && fmt=f32
    read_header "$f"
    kv=$(jq tiles.kv_blocks)
    for line in "o F32 [2, 2, 12, 8]" "lse F32 [2, 2, 12]" \
        "delta F32 [2, 2, 12]" "dq F32 [2, 2, 12, 8]" \
        "dk F32 [2, 2, 20, 8]" "dv F32 [2, 2, 20, 8]" \
        "s F32 [2, 2, 12, 20]" "p F32 [2, 2, 12, 20]" \
        "m F32 [2, 2, 12, $kv]" "l F32 [2, 2, 12, $kv]" \
        "obar F32 [2, 2, 12, 8]" "dp F32 [2, 2, 12, 20]" \
        "ds F32 [2, 2, 12, 20]" "q BF16 [2, 2, 12, 8]" \
        "k BF16 [2, 2, 20, 8]" "v BF16 [2, 2, 20, 8]" \
        "do BF16 [2, 2, 12, 8]"; do
        expect_header "tensor $line"
    done
    expect_header "meta policy $pol"
    expect_header "meta format.o $fmt"
    expect_header "meta format.q bf16"
    expect_header "meta causal true"
    expect_header "meta gen.seed 3"
done

# several KV blocks: the m and l captures have one column per block (fa2:
# Bc 128 for d <= 64; repo: 512; --bc given)
for args in "--policy fa2 --nk 300:3" "--policy repo --nk 600:2" \
    "--policy paper-eq4 --nk 20 --bc 7:3" "--policy fp32 --nk 9 --bc 4:3" \
    "--policy fa2 --nk 40 --ablate untiled:1"; do
    run attn --json --gen normal --nq 5 --d 8 ${args%:*} --capture m,l,p \
        --out "$o/tc.safetensors" --no-exact --force
    expect_rc 0
    expect_jsons tiles.kv_blocks "${args#*:}"
    read_header "$o/tc.safetensors"
    expect_header "tensor m F32 [1, 1, 5, ${args#*:}]"
    expect_header "tensor l F32 [1, 1, 5, ${args#*:}]"
done
rm -f "$o"/*

# the text report of one of them
run attn --gen normal $SMALL --policy fa2 --no-exact --threads 1
expect_rc 0
expect_line "attn: fa2 forward, fix none, exp ex2-sm90 (the description's default)"
expect_line '  Q   generated  BF16 [2, 2, 12, 8]'
expect_line '  tiles 12 x 20, 1 KV block, order reverse; ablations none'
expect_line 'exact reference: not run (--no-exact)'

# ---------------------------------------------------------------------
# The cost and --dry-run.
# ---------------------------------------------------------------------
# before computing, one line on stderr: the work B H Nq Nk d and the
# parts that run
expect_err_only "bf16emu attn: cost 7.68e+03: B x H x Nq x Nk x d = 2 x 2 x 12 x 20 x 8; runs the forward; the exact reference not run (--no-exact)"
# --dry-run on the shape of a run of hours (3.5e13 units): the header,
# the memory estimate and the cost on stdout, exit 0 at once, nothing
# written
run attn --gen normal --heads 64 --nq 65536 --d 128 --policy fa2 \
    --dry-run --out "$o/dry.safetensors"
expect_rc 0
expect_no_stderr
expect_line "attn: fa2 forward, fix none, exp ex2-sm90 (the description's default)"
expect_line '  Q   generated  BF16 [1, 64, 65536, 128]'
expect_line '  B 1, H 64, Nq 65536, Nk 65536, d 128; scale 0.088388346 (f32:0x3DB504F3), no mask'
expect_line '  tiles 128 x 64, 1024 KV blocks, order reverse; ablations none'
expect_line '  splits 1 (default: not split (no --launch))'
expect_out_has '  memory about '
expect_line "  out $o/dry.safetensors: not written (--dry-run)"
expect_line "cost 3.52e+13: B x H x Nq x Nk x d = 1 x 64 x 65536 x 65536 x 128; runs the forward; the exact reference not run (B*H*Nq*Nk*d (x4 with --backward) is above 2^26; give --exact to run it anyway)"
expect_line 'dry run: nothing computed'
expect_no_files
# with the backward and the exact reference: x 4, and the reference's
# time on one core; a run above the memory limit is only noted
run attn --gen normal $SMALL --backward --dry-run --max-memory 1K
expect_rc 0
expect_line "cost 3.07e+04: B x H x Nq x Nk x d = 2 x 2 x 12 x 20 x 8, x 4 with --backward; runs the forward and the backward, then the exact reference (MPFR at 256 bits, the same units at about 0.3 us each: 0.0092 s of one core)"
expect_out_has ": above the limit, the run would be refused"
run attn --json --gen normal $SMALL --backward --dry-run --out "$o/dry.safetensors"
expect_rc 0
expect_jsons dry_run true cost.work 30720 exact.run true errors null \
    flags null inputs.do.shape.2 12
expect_no_files

# ---------------------------------------------------------------------
# Determinism: the same seed gives the same file, whatever the thread
# count; another seed gives other inputs.
# ---------------------------------------------------------------------
for t in 1 2; do
    run attn --gen sink --seed 7 $SMALL --backward --no-exact --threads $t \
        --capture p --out "$o/det$t.safetensors"
    expect_rc 0
done
run attn --gen sink --seed 7 $SMALL --backward --no-exact --threads 2 \
    --capture p --out "$o/det3.safetensors"
expect_rc 0
run attn --gen sink --seed 8 $SMALL --backward --no-exact --threads 2 \
    --capture p --out "$o/det4.safetensors"
expect_rc 0
ctx="determinism"
if cmp -s "$o/det1.safetensors" "$o/det2.safetensors" \
    && cmp -s "$o/det2.safetensors" "$o/det3.safetensors"; then
    pass
else
    fail "runs with seed 7 wrote different files"
fi
if "$ATTN_INPUTS" same "$o/det1.safetensors" "$o/det4.safetensors" q \
    >/dev/null; then
    fail "seeds 7 and 8 generated the same Q"
else
    pass
fi
rm -f "$o"/*

# ---------------------------------------------------------------------
# Inputs from files: the generated inputs written back in other layouts
# and containers give the same bits as the generated run.
# ---------------------------------------------------------------------
G=$o/gen.safetensors
run attn --gen repeated-max --seed 5 --batch 1 --heads 2 --nq 9 --nk 14 \
    --d 6 --backward --causal --policy repo --out "$G" --threads 2 --no-exact
expect_rc 0
"$ATTN_INPUTS" split "$G" "$in/g" || exit 99
A=$in/g/all.safetensors
H=$in/g/h.safetensors
for form in all npy h u16; do
    case $form in
    all) set -- --q "$A:Q" --k "$A:K" --v "$A:V" --do "$A:dO" ;;
    npy) set -- --q "$in/g/q.npy" --k "$in/g/k.npy" --v "$in/g/v.npy" \
        --do "$in/g/do.npy" --dtype bf16 ;;
    h) set -- --q "$H:Q" --k "$H:K" --v "$H:V" --do "$H:dO" ;;
    u16) set -- --q "$A:Qu" --k "$A:K" --v "$A:V" --do "$A:dO" --dtype bf16 ;;
    esac
    run attn "$@" --backward --causal --policy repo --no-exact \
        --out "$o/$form.safetensors" --threads 1
    expect_rc 0
    expect_same "$G" "$o/$form.safetensors" o lse delta dq dk dv q k v do
done
read_header "$o/all.safetensors"
expect_header "meta inputs files"
read_header "$o/h.safetensors"
expect_header "tensor o F32 [2, 9, 6]"
expect_header "tensor lse F32 [2, 9]"
run attn --q "$A:Q" --k "$A:K" --v "$A:V" --policy repo --no-exact
expect_rc 0
expect_line "  Q   $A:Q  BF16 [1, 2, 9, 6]"
# rank 2: [N, d]
run attn --gen normal --seed 2 --nq 5 --nk 7 --d 3 --policy fp32 \
    --out "$o/n1.safetensors" --no-exact
expect_rc 0
"$ATTN_INPUTS" split "$o/n1.safetensors" "$in/n" || exit 99
N2=$in/n/n.safetensors
run attn --q "$N2:Q" --k "$N2:K" --v "$N2:V" --policy fp32 --no-exact \
    --out "$o/n2.safetensors"
expect_rc 0
expect_same "$o/n1.safetensors" "$o/n2.safetensors" o lse
read_header "$o/n2.safetensors"
expect_header "tensor o F32 [5, 3]"
rm -f "$o"/*

# ---------------------------------------------------------------------
# FP16 inputs.  A description whose formats are the inputs' ("in") or
# FP32 is defined for them (fa2 writes O in FP16, and says so); one that
# fixes BF16 intermediates or outputs (paper-eq4: "score", "p", "acc",
# "o"; repo: every format and its BF16 backward) is not: exit 2, naming
# the description, the fields and what to pass.  attn and diff alike.
# ---------------------------------------------------------------------
# f16_npy FILE ROWS COLS: a '<f2' .npy array of small FP16 values (1,
# -0.5, 0.25, 2, 0, -1.5, 0.5, -0.25, 1.5 in turn)
f16_npy()
{
    _h="{'descr': '<f2', 'fortran_order': False, 'shape': ($2, $3), }"
    while [ $(((${#_h} + 11) % 64)) -ne 0 ]; do _h="$_h "; done
    {
        printf '\223NUMPY\001\000'
        printf "\\$(printf %03o $(((${#_h} + 1) % 256)))"
        printf "\\$(printf %03o $(((${#_h} + 1) / 256)))"
        printf '%s\n' "$_h"
        _i=0
        while [ $_i -lt $(($2 * $3)) ]; do
            case $((_i % 9)) in
            0) printf '\000\074' ;; 1) printf '\000\270' ;;
            2) printf '\000\064' ;; 3) printf '\000\100' ;;
            4) printf '\000\000' ;; 5) printf '\000\276' ;;
            6) printf '\000\070' ;; 7) printf '\000\264' ;;
            8) printf '\000\076' ;;
            esac
            _i=$((_i + 1))
        done
    } >"$1"
}
f16_npy "$in/q16.npy" 4 8
f16_npy "$in/k16.npy" 6 8
f16_npy "$in/o16.npy" 4 8
F16="--q $in/q16.npy --k $in/k16.npy --v $in/k16.npy"
ALT="pass BF16 inputs, or a description whose formats are the inputs' (\"in\") or FP32: --policy fa2, fp32, cudnn, efficient, math, flex or flex-decode"
bad "--policy paper-eq4: the inputs are F16, but the description fixes BF16 intermediates or outputs (\"score\", \"p\", \"acc\", \"o\": \"bf16\"), so it is defined for BF16 inputs only" \
    $F16 --policy paper-eq4 --out "$o/f16.safetensors"
expect_err_has "$ALT"
bad "--policy repo: the inputs are F16, but the description fixes BF16 intermediates or outputs (\"score_dot\", \"score\", \"alpha\", \"p\", \"l\", \"acc\", \"o\", \"lse_format\": \"bf16\"; \"bwd\": \"repo\")" \
    $F16 --policy repo
expect_err_has "$ALT"
run attn --policy paper-eq4 --describe
cp "$tmp/out" "$in/eq4.json"
bad "--kernel (description paper-eq4): the inputs are F16" $F16 \
    --kernel "$in/eq4.json"
run diff $F16 --o "$in/o16.npy" --policy paper-eq4 --scale 0.25 --no-causal
expect_rc 2
expect_no_stdout
expect_err_has "bf16emu diff: --policy paper-eq4: the inputs are F16, but the description fixes BF16 intermediates or outputs"
# defined: O in the inputs' format (fa2), or FP32 (fp32)
run attn $F16 --policy fa2 --out "$o/f16.safetensors"
expect_rc 0
expect_line "  O written in f16 (the description's \"o\": \"in\", the inputs' format)"
read_header "$o/f16.safetensors"
expect_header "meta format.o f16"
run attn --json $F16 --policy fa2
expect_json o_format f16
run attn $F16 --policy fp32
expect_rc 0
expect_line "  O written in f32 (the description's \"o\": \"f32\")"
rm -f "$o"/*

# ---------------------------------------------------------------------
# Accuracy.  fp32 with positive V (mean 2, sd 0.25: no cancellation in
# P~V): an element of O is reached by about Nk + d + 6 roundings (the
# score's dot product, the subtraction, exp, the P~V chain, the row sum,
# the division), each at most half an ulp and of either sign, so its
# error is a sum of small terms of both signs with an RMS of about
# 0.5 sqrt((Nk + d) / 3) = 2.6 ulps for Nk = 64, d = 16: the mean |error|
# stays below 4 ulps, the mean below 0.5 ulp in magnitude, and LSE =
# m + log l (two correct roundings plus l's relative error, small against
# ulp(LSE)) below 2 ulps.  A policy that rounds O to BF16 would be
# 2^16 times larger in FP32 ulps.
# ---------------------------------------------------------------------
run attn --json --gen normal --seed 11 --heads 16 --nq 16 --nk 64 --d 16 \
    --qk-std 0.5 --v-mean 2 --v-std 0.25 --policy fp32 --threads 2
expect_rc 0
expect_jsons errors.o.format f32 errors.o.count 4096 errors.o.nonfinite 0
expect_num "fp32 O mean |error| in ulps" "x < 4" "$(jq errors.o.mean_abs)"
expect_num "fp32 O mean error in ulps" "x < 0.5 && x > -0.5" \
    "$(jq errors.o.mean)"
expect_num "fp32 LSE mean |error| in ulps" "x < 2" "$(jq errors.lse.mean_abs)"

# Errors relative to the row's scale.  In ulps of each element's own
# exact value, an element near 0 (tiny ulp) gives errors of hundreds of
# ulps on plain normal inputs (342 for fa2 at seed 1).  In ulps of the
# row's scale (the format's ulp at the largest |exact| of the row's d
# elements) fa2's O errs by its final rounding to BF16 (at most half an
# ulp of the element, so of the row's largest) plus P~'s rounding to BF16
# in the P~V product (each term's relative error at most 2^-8 and of
# either sign, about 0.2 ulp of the row's scale in RMS here): the largest
# is 0.75 at seed 1 and 0.7 to 1.2 over seeds 1 to 10; asserted: below
# 1.5, mean |error| below 0.5, and, since ulp(row's largest) >= ulp(the
# element), never above the error in ulps of the exact value.  LSE and
# delta (one element a row) have no such measure.
run attn --json --gen normal --seed 1 $SMALL --policy fa2 --threads 2
expect_rc 0
expect_jsons errors.o.row_count 384 errors.o.count 384
r=$(jq errors.o.row_max_abs)
expect_num "fa2 O: max |error| in ulps of the exact value" "x > 100" \
    "$(jq errors.o.max_abs)"
expect_num "fa2 O: max |error| in ulps of the row's scale" \
    'x != "" && x < 1.5' "$r"
expect_num "row's scale: no larger than in ulps of the exact value" \
    'x != "" && x <= y' "$r" "$(jq errors.o.max_abs)"
expect_num "fa2 O: mean |error| in ulps of the row's scale" \
    'x != "" && x < 0.5 && x <= y' "$(jq errors.o.row_mean_abs)" \
    "$(jq errors.o.mean_abs)"
if [ -z "$(jq errors.lse.row_count)" ]; then pass; else
    fail "errors.lse has row_count"
fi
run attn --gen normal --seed 1 $SMALL --policy fa2 --threads 2
expect_rc 0
expect_line "errors relative to the row's scale (computed - exact, in ulps of the format"
expect_line '  output   max|err|  mean|err|'
expect_line '  o          0.7485     0.1581'

# The paper's bias (its Monte Carlo target T12): two keys share the row
# maximum (P~ = 1 twice in every row), V ~ N(-1.5, 0.4) on every key.
# paper-eq4 rounds the P~V sum to BF16 once; the two equal terms make the
# residual of the others a small tail below the BF16 ulp, and rounding to
# nearest then errs in one direction: a negative mean error of O with a
# large |t| (-0.22 ulps, t = -110 at seed 1 over 16384 elements).  The
# beta fix (m = 2 r) makes P~ < 1 and the bias an order of magnitude
# smaller (+0.01 to +0.04 ulps at seeds 1 to 3).  Asserted: mean < 0,
# t < -20, and the fixed mean below a quarter of the unfixed one in size.
# Heads are independent draws of K and V (the rows of one head share V).
T12="--gen repeated-max --seed 1 --heads 128 --nq 4 --nk 256 --d 16
    --v-mean -1.5 --v-std 0.4 --policy paper-eq4 --threads 2"
run attn --json $T12
expect_rc 0
expect_jsons rows.count 512 rows.p_one_repeated 512
m0=$(jq errors.o.mean)
expect_num "paper-eq4 repeated-max: mean error of O" "x < 0" "$m0"
expect_num "paper-eq4 repeated-max: t of O" "x < -20" "$(jq errors.o.t)"
run attn --json $T12 --fix beta
expect_rc 0
expect_json rows.p_one 0
m1=$(jq errors.o.mean)
expect_num "the beta fix shrinks the bias" "4 * (x < 0 ? -x : x) < -y" \
    "$m1" "$m0"

# README.md's example (the block after "<!-- attn-t12 -->"), run again in
# an empty folder: the output must match, except the command lines.
if readme_has attn-t12; then
    readme_block attn-t12 | grep -v -e '^\$ ' -e '^    --' >"$tmp/readme"
    mkdir "$tmp/ex"
    bf=$(cd "$(dirname "$BF16EMU")" && echo "$(pwd)/$(basename "$BF16EMU")")
    (
        cd "$tmp/ex" &&
            "$bf" attn --gen repeated-max --heads 128 --nq 4 --nk 256 \
                --d 16 --v-mean -1.5 --v-std 0.4 --out t12.safetensors
    ) >"$tmp/ran" 2>&1
    expect_readme attn-t12
else
    readme_missing attn-t12
fi

# ---------------------------------------------------------------------
# Traces: the rounding events of one element of O (and dQ).
# ---------------------------------------------------------------------
run attn --json --gen normal --seed 4 --heads 2 --nq 6 --nk 9 --d 4 \
    --trace 0,1,2,3 --trace-max 50 --backward --out "$o/tr.safetensors" \
    --no-exact
expect_rc 0
expect_jsons trace.h 1 trace.forward.element o trace.backward.element dq
n=$(jq trace.forward.listed)
expect_num "forward events listed" "x > 10 && x <= 50" "$n"
# the last event is O's rounding to BF16, and its result is the element
# written to the file (head 1, row 2, column 3: index 24 + 2 * 4 + 3)
last=$((n - 1))
o35=$("$ATTN_INPUTS" get "$o/tr.safetensors" o 35)
expect_jsons "trace.forward.list.$last.op" convert \
    "trace.forward.list.$last.format" bf16 \
    "trace.forward.list.$last.result" "$(echo "$o35" | cut -c1-6)"
expect_num "backward events" "x > 10" "$(jq trace.backward.events)"
run attn --gen normal --seed 4 --heads 2 --nq 6 --nk 9 --d 4 \
    --trace 0,1,2,3 --trace-max 5 --no-exact
expect_rc 0
expect_out_has 'trace: rounding events of O[0, 1, 2, 3] (forward):'
expect_out_has ', the last 5 listed'
rm -f "$o"/*

# ---------------------------------------------------------------------
# Edge cases.
# ---------------------------------------------------------------------
# N = 1 and d = 1 in every policy, with the backward
for pol in paper-eq4 repo fa2 fp32; do
    run attn --json --gen normal --nq 1 --nk 1 --d 1 --backward \
        --policy "$pol"
    expect_rc 0
    expect_json errors.o.count 1
done
# fa2 with d not a multiple of 16
run attn --json --gen normal --nq 20 --nk 40 --d 5 --policy fa2 --backward
expect_rc 0
expect_json errors.dq.count 100
# causal with Nq > Nk: the first Nq - Nk rows see no key; their exact LSE
# is -Inf, left out and counted
run attn --json --gen normal --heads 3 --nq 10 --nk 6 --d 4 --causal \
    --policy fp32 --backward
expect_rc 0
expect_jsons errors.lse.skipped 12 errors.lse.count 18 errors.o.count 120
# NaN and Inf inside Q: computed, counted; that head has no exact
# reference (elements 3 and 10 lie in head 0 of 2)
run attn --json --q "$X:Qnan" --k "$X:K" --v "$X:V" --policy fp32
expect_rc 0
expect_jsons inputs.q.nonfinite 2 exact.heads_nonfinite 1 \
    errors.o.skipped 32 errors.o.count 32
# the exact reference is skipped above 2^26 operations, with a note
run attn --json --gen normal --heads 64 --nq 256 --nk 256 --d 17 \
    --policy fa2 --threads 2
expect_rc 0
expect_jsons exact.run false exact.limit 67108864 errors null
if jq exact.note | grep -F -e '2^26' >/dev/null; then
    pass
else
    fail "no note on the size limit: $(jq exact.note)"
fi

# ---------------------------------------------------------------------
# Errors.
# ---------------------------------------------------------------------
bad "--policy 'fp16': unknown policy (expected paper-eq4, repo, fa2 or flash, fp32, cudnn, efficient, math or sdpa)" \
    --gen normal --policy fp16
bad "--fix 'beta3': unknown fix (expected none, beta, beta-v2, eps or always)" \
    --gen normal --fix beta3
bad "--ablate 'fp32-pv,fp64-o': unknown ablation 'fp64-o'" \
    --gen normal --ablate fp32-pv,fp64-o
bad "--gen 'uniform': unknown generator" --gen uniform
bad "--capture 'p,x': unknown capture 'x'" --gen normal --capture p,x \
    --out "$o/c.safetensors"
bad "--order 'backward': expected forward or reverse" --gen normal \
    --order backward
bad "--zero-max 'drop': expected keep or shift" --gen normal --fix beta \
    --zero-max drop
BF16EMU_EX2_TABLE="$o/no-such-table.gz"
export BF16EMU_EX2_TABLE
bad "--exp ex2-sm90: $o/no-such-table.gz: cannot open the file" \
    --gen normal --exp ex2-sm90
unset BF16EMU_EX2_TABLE
# the measured H200 exp2 under the fa2 policy (the table from the tree)
run attn --gen normal --seed 5 $SMALL --policy fa2 --exp ex2-sm90 --no-exact
expect_rc 0
expect_out_has "exp ex2-sm90"
bad "--exp 'fast': unknown exp model (expected cr, libm, ex2-sm90 or ex2-sm90-ftz)" --gen normal \
    --exp fast
bad "--scale '-1': expected a finite positive number" --gen normal \
    --scale -1
bad "--nq '0': expected at least 1" --gen normal --nq 0
bad "--beta applies to --fix beta, beta-v2 or always (the fix is none)" \
    --gen normal --beta 3
bad "--eps-zero applies to --zero-max shift" --gen normal --fix beta \
    --eps-zero 0.5
bad "--sink applies to --gen sink, not to --gen normal" --gen normal \
    --sink 2
bad "--repeat 9: more keys than Nk = 8" --gen repeated-max --nk 8 \
    --repeat 9
bad "--trace 0,0,4,0: row 4 is out of range (expected below 4)" \
    --gen normal --nq 4 --trace 0,0,4,0
bad "--trace '1,2': expected four indices B,H,ROW,COL" --gen normal \
    --trace 1,2
bad "--capture dp and ds need --backward" --gen normal --capture dp \
    --out "$o/c.safetensors"
bad "--exact and --no-exact contradict each other" --gen normal --exact \
    --no-exact
bad "--trace-max applies to --trace" --gen normal --trace-max 5
bad "the configuration is refused: shape: fa2 needs d <= 256" \
    --gen normal --d 300 --policy fa2
bad "no inputs: give --gen NAME, or --q, --k and --v" --policy fp32
bad "--q: the inputs come from --gen or from files, not both" \
    --gen normal --q "$X:Q"
bad "missing --v (inputs from files need --q, --k and --v)" \
    --q "$X:Q" --k "$X:K"
bad "--seed applies to --gen" --q "$X:Q" --k "$X:K" --v "$X:V" --seed 2
bad "--backward with inputs from files needs --do FILE[:KEY]" \
    --q "$X:Q" --k "$X:K" --v "$X:V" --backward
bad "--do applies to --backward" --q "$X:Q" --k "$X:K" --v "$X:V" \
    --do "$X:dO"
bad "unexpected operand 'x'" --gen normal x

# bad input files: the message names the file, the field and what was
# expected
bad "--q: $X: Qf: dtype F32 (expected BF16; pass --dtype bf16 to read it as BF16, if its values are BF16 values)" \
    --q "$X:Qf" --k "$X:K" --v "$X:V"
bad "--k $X:Kd: shape: [1, 2, 6, 7] does not fit Q $X:Q [1, 2, 4, 8]; expected [1, 2, 6, 8]" \
    --q "$X:Q" --k "$X:Kd" --v "$X:V"
bad "--v $X:Vn: shape: [1, 2, 5, 8] does not fit Q $X:Q [1, 2, 4, 8]; expected [1, 2, 6, 8] (V has the shape of K)" \
    --q "$X:Q" --k "$X:K" --v "$X:Vn"
bad "--k $X:Kb: shape: [2, 2, 6, 8] does not fit Q $X:Q [1, 2, 4, 8]; expected [1, 2, 6, 8]" \
    --q "$X:Q" --k "$X:Kb" --v "$X:V"
bad "--k $X:K3: shape: [2, 6, 8] has 3 dimensions but Q $X:Q has [1, 2, 4, 8]; expected 4" \
    --q "$X:Q" --k "$X:K3" --v "$X:V"
bad "--do $X:Q: shape: [1, 2, 4, 8] does not fit" \
    --q "$X:K" --k "$X:K" --v "$X:V" --backward --do "$X:Q" --layout bhnd
bad "--q $X:Qe: shape: [1, 2, 0, 8] has no elements" \
    --q "$X:Qe" --k "$X:K" --v "$X:V"
bad "--q $X:R1: shape: [8] has 1 dimension; expected [B, H, N, d], [H, N, d] or [N, d]" \
    --q "$X:R1" --k "$X:K" --v "$X:V"
bad "--q: $X: no tensor \"nope\"" --q "$X:nope" --k "$X:K" --v "$X:V"

# too large: refused before allocating, with the estimate
bad "B 1024, H 64, Nq 4096, Nk 4096, d 128 needs about" \
    --gen normal --batch 1024 --heads 64 --nq 4096 --nk 4096 --d 128 \
    --out "$o/big.safetensors"
expect_err_has "more than the limit of"
bad "more than the limit of 1 MiB (--max-memory)" \
    --gen normal --nq 256 --nk 256 --d 64 --max-memory 1M \
    --out "$o/big.safetensors"
bad "--max-memory '12X': not a byte count" --gen normal --max-memory 12X

# the output: never over an input, not over a file without --force
run attn --gen normal --nq 4 --nk 4 --d 4 --out "$o/a.safetensors" \
    --no-exact
expect_rc 0
cp "$o/a.safetensors" "$tmp/a.copy"
run attn --gen normal --seed 2 --nq 4 --nk 4 --d 4 \
    --out "$o/a.safetensors" --no-exact
expect_rc 2
expect_no_stdout
expect_err_has "--out $o/a.safetensors: the file exists (give --force to replace it)"
ctx="the existing output is unchanged"
if cmp -s "$o/a.safetensors" "$tmp/a.copy"; then pass; else fail "changed"; fi
run attn --q "$o/a.safetensors:q" --k "$o/a.safetensors:k" \
    --v "$o/a.safetensors:v" --out "$o/a.safetensors" --force --no-exact
expect_rc 2
expect_err_has "is the input file of --q"
ctx="the input is unchanged"
if cmp -s "$o/a.safetensors" "$tmp/a.copy"; then pass; else fail "changed"; fi
run attn --gen normal --seed 2 --nq 4 --nk 4 --d 4 \
    --out "$o/a.safetensors" --no-exact --force
expect_rc 0
ctx="--force replaced the output"
if cmp -s "$o/a.safetensors" "$tmp/a.copy"; then fail "same"; else pass; fi
rm -f "$o"/*
bad "--out '$o/a.npy': expected a file name ending in .safetensors" \
    --gen normal --out "$o/a.npy"

# help
run attn --help
expect_rc 0
expect_line 'usage: bf16emu attn --gen NAME [--seed N] [shape] [options]'
run help attn
expect_rc 0
expect_line 'usage: bf16emu attn --gen NAME [--seed N] [shape] [options]'

finish
