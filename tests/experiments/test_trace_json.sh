# test_trace_json.sh -- bf16emu trace --json: every output parses as one
# JSON object, and its fields carry the T1/T2/T3 facts (derived by hand in
# test_trace.sh)
#
# The documents are parsed by tests/experiments/jsonq (jansson), named by
# $JSONQ; without it (jansson not found at configure time) the test is
# skipped.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

if [ -z "${JSONQ:-}" ] || [ ! -x "$JSONQ" ]; then
    echo "SKIP: no JSON parser (configure found no jansson)"
    exit 77
fi

T1="f32:0xC01A0E2E bf16:0xC013"
T2="-2.40625 -2.296875"
T3="-0.85546875 -0x1p-11 -0.0859375"

# expect_json PATH VALUE: the value at PATH in the last output.
expect_json()
{
    got=$("$JSONQ" "$tmp/out" "$1" 2>"$tmp/jerr")
    jrc=$?
    if [ "$jrc" -eq 0 ] && [ "$got" = "$2" ]; then
        pass
    else
        fail "JSON $1 = '$got' (jsonq exit $jrc: $(cat "$tmp/jerr")), expected '$2'"
    fi
}

# expect_json_doc: the last output parses, as one object.
expect_json_doc()
{
    got=$("$JSONQ" "$tmp/out" . 2>"$tmp/jerr")
    case $got in
    "{"*"}") pass ;;
    *) fail "not one JSON object: $(cat "$tmp/jerr")" ;;
    esac
}

for mode in rne rtz rna rod rdn rup sr; do
    for ops in "$T1" "$T2" "$T3"; do
        for extra in "" "--explain"; do
            run trace --json $extra --mode $mode --acc-mode $mode \
                --seed 6 $ops
            expect_rc 0
            expect_json_doc
            expect_json command trace
            expect_json final.rounding.mode $mode
        done
    done
done

# T1: the paper's example
run trace --json $T1
expect_rc 0
expect_json op accumulate
expect_json acc f32
expect_json out bf16
expect_json mode rne
expect_json env.preset ieee
expect_json env.seed null
expect_json operands.0.value.bits 0xC01A0E2E
expect_json operands.0.value.value -2.407115459442138671875
expect_json operands.1.value.format bf16
expect_json operands.1.value.bits 0xC013
expect_json operands.1.input bits
expect_json steps "[2]"
expect_json steps.0.kind init
expect_json steps.0.acc.bits 0xC01A0E2E
expect_json steps.1.kind add
expect_json steps.1.conversion.to.bits 0xC0130000
expect_json steps.1.conversion.exact true
expect_json steps.1.alignment.exponent_difference 0
expect_json steps.1.alignment.shift 0
expect_json steps.1.alignment.aligned_larger 1.00110100000111000101110
expect_json steps.1.alignment.aligned_smaller 1.00100110000000000000000
expect_json steps.1.alignment.sum_magnitude 10.01011010000111000101110
expect_json steps.1.alignment.carry_out 1
expect_json steps.1.alignment.normalisation_shift 1
expect_json steps.1.rounding.direction exact
expect_json steps.1.rounding.result.bits 0xC0968717
expect_json steps.1.rounding.error 0
expect_json final.value.bits 0xC0968717
expect_json final.rounding.exact -4.703990459442138671875
expect_json final.rounding.ulp_exp -5
expect_json final.rounding.kept 1.0010110
expect_json final.rounding.kept_fraction 0010110
expect_json final.rounding.lsb 0
expect_json final.rounding.guard 1
expect_json final.rounding.round 0
expect_json final.rounding.sticky 1
expect_json final.rounding.sticky_bits 00011100010111
expect_json final.rounding.discarded 1000011100010111
expect_json final.rounding.discarded_ulps 0.5276947021484375
expect_json final.rounding.tie false
expect_json final.rounding.direction up
expect_json final.rounding.result.bits 0xC097
expect_json final.rounding.result.value -4.71875
expect_json final.rounding.result.significand 1.0010111
expect_json final.rounding.error -0.014759540557861328125
expect_json final.rounding.error_ulps -0.4723052978515625
expect_json final.rounding.flags ....x
expect_json summary.result.bits 0xC097
expect_json summary.exact_sum -4.703990459442138671875
expect_json summary.error -0.014759540557861328125
expect_json summary.error_ulps -0.4723052978515625
expect_json summary.ulp_exp -5
# every operand is exact in f32: the sum as typed is the same
expect_json summary.operands_exact true
expect_json summary.typed_sum -4.703990459442138671875
expect_json summary.typed_error -0.014759540557861328125
expect_json summary.typed_error_ulps -0.4723052978515625
expect_json summary.roundings 2
expect_json summary.inexact_roundings 1

# The sums of the operands as read and as typed (derived in test_trace.sh):
# 0.1 and 0.2 read into bf16 as 0x3DCD and 0x3E4D, sum 0.30029296875;
# result 0x3E9A = 0.30078125, ulp 2^-9.
run trace --json --acc bf16 0.1 0.2
expect_rc 0
expect_json_doc
expect_json summary.result.bits 0x3E9A
expect_json summary.exact_sum 0.30029296875
expect_json summary.error 0.00048828125
expect_json summary.error_ulps 0.25
expect_json summary.ulp_exp -9
expect_json summary.operands_exact false
expect_json summary.typed_sum 0.3
expect_json summary.typed_error 0.00078125
expect_json summary.typed_error_ulps 0.4
# an f32 pattern read into bf16: its conversion is inexact
run trace --json --acc bf16 f32:0x3DCCCCCD 1
expect_json summary.exact_sum 1.10009765625
expect_json summary.operands_exact false
expect_json summary.typed_sum 1.100000001490116119384765625
expect_json summary.typed_error 0.001562498509883880615234375
expect_json summary.typed_error_ulps 0.19999980926513671875
# input errors that cancel: equal sums, yet not every operand was exact
run trace --json --acc bf16 0.1 -0.1
expect_json summary.exact_sum 0
expect_json summary.typed_sum 0
expect_json summary.operands_exact false

# RTZ on T1 truncates
run trace --json --mode rtz $T1
expect_json final.rounding.direction down
expect_json final.rounding.result.bits 0xC096
expect_json final.rounding.error 0.016490459442138671875
expect_json final.rounding.error_ulps 0.5276947021484375

# T2: the tie, by mode
run trace --json $T2
expect_json steps.1.rounding.result.bits 0xC0968000
expect_json final.rounding.tie true
expect_json final.rounding.sticky_bits "(none)"
expect_json final.rounding.result.bits 0xC096
expect_json final.rounding.error 0.015625
expect_json final.rounding.error_ulps 0.5
expect_json operands.0.input number
expect_json operands.0.inexact false
run trace --json --mode rna $T2
expect_json final.rounding.result.bits 0xC097
expect_json final.rounding.error -0.015625
run trace --json --mode rod $T2
expect_json final.rounding.result.bits 0xC097

# T3: no carry, guard 0
run trace --json $T3
expect_json steps "[3]"
expect_json steps.1.alignment.exponent_difference 10
expect_json steps.1.alignment.shifted_out 0000000000
expect_json steps.1.alignment.shifted_out_count 10
expect_json steps.1.alignment.carry_out 0
expect_json steps.2.alignment.exponent_difference 3
expect_json steps.2.rounding.result.bits 0xBF712000
expect_json final.rounding.kept_fraction 1110001
expect_json final.rounding.guard 0
expect_json final.rounding.sticky 1
expect_json final.rounding.result.bits 0xBF71
expect_json final.rounding.error 0.00048828125
expect_json final.rounding.error_ulps 0.125
run trace --json --mode rod $T3
expect_json final.rounding.lsb 1
expect_json final.rounding.result.bits 0xBF71
run trace --json --mode rdn $T3
expect_json final.rounding.result.bits 0xBF72
expect_json final.rounding.error -0.00341796875

# SR: the threshold F is the discarded fraction (hand-derived), the draw is
# reported, and the direction is "up" exactly when draw < F.
sr_check()
{
    # sr_check SEED OPERANDS THRESHOLD P_UP EXPECTED_BITS
    run trace --json --mode sr --acc-mode sr --seed "$1" $2
    expect_rc 0
    expect_json env.seed "$1"
    expect_json final.rounding.sr.threshold "$3"
    expect_json final.rounding.sr.p_up "$4"
    expect_json final.rounding.result.bits "$5"
    draw=$("$JSONQ" "$tmp/out" final.rounding.sr.draw)
    dir=$("$JSONQ" "$tmp/out" final.rounding.direction)
    case $draw in
    0x[0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F]) pass ;;
    *) fail "bad draw '$draw'" ;;
    esac
    # same-width upper-case hex: string order is numeric order
    if expr "x$draw" \< "x$3" >/dev/null; then want=up; else want=down; fi
    if [ "$dir" = "$want" ]; then
        pass
    else
        fail "draw $draw vs threshold $3 should round $want, got $dir"
    fi
    cp "$tmp/out" "$tmp/first"
    run trace --json --mode sr --acc-mode sr --seed "$1" $2
    expect_same_as "$tmp/first"
}
sr_check 1 "$T1" 0x8717000000000000 0.5276947021484375 0xC096
sr_check 6 "$T1" 0x8717000000000000 0.5276947021484375 0xC097
sr_check 1 "$T2" 0x8000000000000000 0.5 0xC096
sr_check 6 "$T2" 0x8000000000000000 0.5 0xC097
sr_check 1 "$T3" 0x2000000000000000 0.125 0xBF71
sr_check 6 "$T3" 0x2000000000000000 0.125 0xBF72

# --explain adds the paragraph
run trace --json --explain $T1
expect_json_doc
got=$("$JSONQ" "$tmp/out" final.rounding.explanation)
case $got in
*"Round-to-nearest therefore rounds away from zero (up in magnitude)."*)
    pass ;;
*) fail "explanation: $got" ;;
esac

# inexact input: a field in JSON
run trace --json 0.1 1
expect_json operands.0.inexact true
expect_json operands.0.value.bits 0x3DCCCCCD
expect_json operands.0.in_mode rne
run trace --json --acc bf16 $T1
expect_json steps.0.conversion.exact false
expect_json steps.0.conversion.to.bits 0xC01A
expect_json steps.0.conversion.error 0.000865459442138671875

# --op
run trace --json --op div --fmt bf16 1 3
expect_rc 0
expect_json op div
expect_json fmt bf16
expect_json steps.0.rounding.result.bits 0x3EAB
expect_json steps.0.rounding.direction up
# (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14: 14 fraction bits 00000100000001
run trace --json --op fma bf16:0x3F81 bf16:0x3F81 bf16:0xBF80
expect_json steps.0.product.significand_product 01.00000100000001
expect_json steps.0.rounding.tie true
expect_json steps.0.rounding.result.bits 0x3C80
run trace --json --op add inf -inf
expect_rc 0
expect_json_doc
expect_json steps.0.rounding.rounded false
expect_json steps.0.rounding.error null
expect_json steps.0.rounding.flags v....

# errors still go to stderr only
run trace --json 1 abc
expect_rc 2
expect_no_stdout
expect_err_has "operand 2 'abc': not a number"

finish
