# test_cli.sh -- bf16emu: dispatch, --help, --version, and the errors of
# bad usage and bad input (exit 2, nothing on stdout, a message on stderr
# naming the argument or option and what was expected)

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

# --version prints the configured version ($BF16EMU_VERSION from make).
run --version
expect_rc 0
if [ -n "${BF16EMU_VERSION:-}" ]; then
    expect_line "bf16emu $BF16EMU_VERSION"
else
    expect_out_has "bf16emu "
fi

# --version --json: the CPU features found and the path of each kernel
run --version --json
expect_rc 0
expect_out_has '"avx2": '
expect_out_has '"avx512bf16": '
expect_out_has '"amx-bf16": '
expect_out_has '"gemm": '
expect_out_has '"convert": '
expect_out_has '"attention": '
# BF16EMU_ISA=scalar caps every kernel at portable C
BF16EMU_ISA=scalar
export BF16EMU_ISA
run --version --json
expect_rc 0
expect_out_has '"requested": "scalar"'
expect_out_has '"gemm": "scalar"'
expect_out_has '"attention": "scalar"'
unset BF16EMU_ISA

run --help
expect_rc 0
expect_line 'usage: bf16emu SUBCOMMAND [options] [operands]'
# every subcommand is available: no empty "planned" heading
expect_no_line 'planned, not yet available:'
expect_line '  ls         keys, dtypes, shapes and sizes of tensor files'
expect_line '  trace      an accumulation or one operation, bit by bit'
expect_line '  reproduce  the paper'"'"'s reproduction targets into results/'
run help
expect_rc 0
expect_line 'usage: bf16emu SUBCOMMAND [options] [operands]'
run help trace
expect_rc 0
expect_line 'usage: bf16emu trace [options] X1 [X2 ...]'
run trace --help
expect_rc 0
expect_line 'usage: bf16emu trace [options] X1 [X2 ...]'
expect_no_stderr
run trace -h
expect_rc 0
expect_line 'usage: bf16emu trace [options] X1 [X2 ...]'

# usage errors: exit 2, stdout empty, stderr says what was wrong

bad 'usage: bf16emu SUBCOMMAND'
bad "bf16emu: --version takes only --json (got '--xml')" --version --xml
# BF16EMU_ISA: an unknown name, and a path this CPU lacks (when it does)
BF16EMU_ISA=avx3
export BF16EMU_ISA
bad "bf16emu: BF16EMU_ISA 'avx3': unknown path (expected auto, scalar, avx2, avx512 or neon)" \
    trace 1
unset BF16EMU_ISA
run --version --json
if grep -q '"cpu": "avx512"' "$tmp/out"; then
    echo "note: this CPU has every path; the refusal of a missing one is not run"
else
    BF16EMU_ISA=avx512
    export BF16EMU_ISA
    bad "bf16emu: BF16EMU_ISA 'avx512': this CPU (or its operating system) lacks that path" \
        trace 1
    unset BF16EMU_ISA
fi
# the other family's path: NEON on x86-64, AVX2 on AArch64
if grep -q '"cpu": "neon"' "$tmp/out"; then other=avx2; else other=neon; fi
BF16EMU_ISA=$other
export BF16EMU_ISA
bad "bf16emu: BF16EMU_ISA '$other': this CPU (or its operating system) lacks that path" \
    trace 1
unset BF16EMU_ISA
bad "bf16emu: unknown subcommand 'frobnicate' (see 'bf16emu --help')" \
    frobnicate
bad "bf16emu: unknown option '--bogus'" --bogus
bad "bf16emu merge: expected --out DIR and one or more shard directories" merge
bad "bf16emu: unknown subcommand 'nope'" help nope
bad "bf16emu trace: unknown option '--bogus' (see 'bf16emu trace --help')" \
    trace --bogus 1
bad "bf16emu trace: unknown option '-x'" trace -x 1
bad "bf16emu trace: option '--acc' needs a value" trace 1 --acc
bad "bf16emu trace: option '--json' takes no value (got '1')" \
    trace --json=1 1
bad "bf16emu trace: --acc 'f128': unknown format (expected one of bf16, f16, f32, tf32, e4m3, e5m2, or a PyTorch name such as bfloat16 or torch.float16)" \
    trace --acc f128 1
bad "bf16emu trace: --acc 'f64': f64 is for conversions only" \
    trace --acc=f64 1
bad "bf16emu trace: --out 'bf8': unknown format" trace --out bf8 1
bad "bf16emu trace: --mode 'rx': unknown rounding mode (expected rne, rtz, rdn, rup, rna, rod or sr, or the PTX names rn, rz, rm, rp)" \
    trace --mode rx 1
bad "bf16emu trace: --acc-mode 'x': unknown rounding mode" \
    trace --acc-mode x 1
bad "bf16emu trace: --in-mode 'x': unknown rounding mode" \
    trace --in-mode x 1
bad "bf16emu trace: --seed 'abc': not a non-negative integer" \
    trace --seed abc 1
bad "bf16emu trace: --seed '18446744073709551616': too large" \
    trace --seed 18446744073709551616 1
bad "bf16emu trace: --env 'riscv': unknown environment (expected ieee, x86, avx512bf16, nvidia or arm-bfdot)" \
    trace --env riscv 1
bad "bf16emu trace: --color 'sometimes': expected auto, always or never" \
    trace --color sometimes 1
bad "bf16emu trace: --op 'pow': unknown operation" trace --op pow 1 2
bad "bf16emu trace: no operands" trace
bad "bf16emu trace: --op fma takes 3 operands, got 2" trace --op fma 1 2
bad "bf16emu trace: --op sqrt takes 1 operand, got 2" trace --op sqrt 1 2
bad "bf16emu trace: --acc and --acc-mode apply to accumulations, not to --op mul" \
    trace --op mul --acc f32 1 2
bad "bf16emu trace: --out applies to accumulations and --op convert, not to --op add" \
    trace --op add --out f32 1 2
bad "bf16emu trace: --fmt applies to --op" trace --fmt bf16 1 2
bad "bf16emu trace: operand 1 'f64:0x3FF0000000000000': f64 operands are for --op convert only" \
    trace --op mul f64:0x3FF0000000000000 1

# bad numbers: the message names the operand and what was expected
bad "bf16emu trace: operand 2 'abc': not a number (expected a decimal such as -2.40625, a hex-float such as -0x1.34p+1, inf, nan, or FORMAT:0xBITS such as bf16:0xC013)" \
    trace 1 abc
bad "bf16emu trace: operand 1 '1.5x': unexpected 'x' after the number" \
    trace 1.5x
bad "bf16emu trace: operand 1 '0xC013': a hex-float needs a binary exponent" \
    trace 0xC013
bad "bf16emu trace: operand 1 'bf16:0x1C013': the bit pattern does not fit the 16 bits of bf16" \
    trace bf16:0x1C013
bad "bf16emu trace: operand 1 'e4m3:0x100': the bit pattern does not fit the 8 bits of e4m3" \
    trace e4m3:0x100
bad "bf16emu trace: operand 1 'f16:0x10000': the bit pattern does not fit the 16 bits of f16" \
    trace f16:0x10000
bad "bf16emu trace: operand 1 'f32:0x100000000': the bit pattern does not fit the 32 bits of f32" \
    trace f32:0x100000000
bad "bf16emu trace: operand 1 'tf32:0x3F800001': the low 13 bits of a tf32 pattern must be zero" \
    trace tf32:0x3F800001
bad "bf16emu trace: operand 1 'bf16:C013': expected a bit pattern 0x followed by hex digits after 'bf16:'" \
    trace bf16:C013
bad "bf16emu trace: operand 1 'bf16:0xC01G': 'G' is not a hex digit" \
    trace bf16:0xC01G
bad "bf16emu trace: operand 1 'fp4:0x1': unknown format prefix 'fp4'" \
    trace fp4:0x1
bad "bf16emu trace: operand 2 '': empty" trace 1 ''
bad "bf16emu trace: operand 1 'abc'" trace --json abc

# valid edge cases of the number syntax
run trace tf32:0x3F802000 e5m2:0x3C e4m3:0x38 f16:0x3C00
expect_rc 0
expect_line 'x1   tf32:0x3F802000    1.0009765625'
expect_line 'x2   e5m2:0x3C          1'
expect_line 'x3   e4m3:0x38          1'
expect_line 'x4   f16:0x3C00         1'
run trace BF16:0xc013
expect_rc 0
expect_line 'x1   bf16:0xC013        -2.296875'
run trace -- -1 -inf
expect_rc 0
expect_line '  result       bf16:0xFF80 = -inf'

# ---------------------------------------------------------------------
# The names users type for formats and rounding modes: PTX rounding names
# and PyTorch dtype names, in any case, for every option and operand
# prefix that takes one.  Each alias must give the same output as the
# project's own name.
# ---------------------------------------------------------------------
# same_as_canonical "ALIAS ARGS" "CANONICAL ARGS": both run, exit 0, and
# print the same thing
same_as_canonical()
{
    # shellcheck disable=SC2086
    "$BF16EMU" $2 >"$tmp/want" 2>&1
    # shellcheck disable=SC2086
    run $1
    expect_rc 0
    expect_same_as "$tmp/want"
}
for pair in "rn rne" "rz rtz" "rm rdn" "rp rup" "RN rne" "Rz rtz" "RNE rne" \
    "Rna rna"; do
    set -- $pair
    same_as_canonical "trace --mode $1 0.1 0.2" "trace --mode $2 0.1 0.2"
    same_as_canonical "trace --acc-mode $1 --acc bf16 0.1 0.2 0.3" \
        "trace --acc-mode $2 --acc bf16 0.1 0.2 0.3"
    same_as_canonical "trace --in-mode $1 0.1" "trace --in-mode $2 0.1"
done
for pair in "bfloat16 bf16" "torch.bfloat16 bf16" "BFloat16 bf16" \
    "float16 f16" "half f16" "torch.half f16" "TORCH.FLOAT16 f16" \
    "float32 f32" "float f32" "torch.float32 f32" "F32 f32" \
    "float8_e4m3fn e4m3" "torch.float8_e4m3fn e4m3" "F8_E4M3 e4m3" \
    "float8_e5m2 e5m2" "torch.float8_e5m2 e5m2"; do
    set -- $pair
    same_as_canonical "trace --acc $1 1 2" "trace --acc $2 1 2"
    same_as_canonical "trace --out $1 0.1" "trace --out $2 0.1"
    same_as_canonical "trace --op mul --fmt $1 3 5" \
        "trace --op mul --fmt $2 3 5"
done
same_as_canonical "trace --op convert --out float64 0.1" \
    "trace --op convert --out f64 0.1"
same_as_canonical "trace --op convert --out torch.double 0.1" \
    "trace --op convert --out f64 0.1"
# a number's format prefix
same_as_canonical "trace bfloat16:0xC013 torch.bfloat16:0x3F80" \
    "trace bf16:0xC013 bf16:0x3F80"
same_as_canonical "trace --acc f16 half:0x3C00 float16:0x3C00" \
    "trace --acc f16 f16:0x3C00 f16:0x3C00"
# ... which also gives --op its default --fmt
same_as_canonical "trace --op add bfloat16:0x3F80 BFloat16:0x3F81" \
    "trace --op add bf16:0x3F80 bf16:0x3F81"
same_as_canonical "trace --op mul torch.float8_e4m3fn:0x38 e4m3:0x40" \
    "trace --op mul e4m3:0x38 e4m3:0x40"
bad "bf16emu trace: --acc 'float8_e4m3fnuz': unknown format" \
    trace --acc float8_e4m3fnuz 1
expect_err_has "the fnuz FP8 types have another bias and NaN encoding"
bad "bf16emu trace: --acc 'torch.float64': f64 is for conversions only" \
    trace --acc torch.float64 1
bad "bf16emu trace: --mode 'rnd': unknown rounding mode" trace --mode rnd 1
bad "bf16emu trace: operand 1 'torch.int8:0x1': unknown format prefix 'torch.int8'" \
    trace torch.int8:0x1

# ---------------------------------------------------------------------
# A huge value is not echoed whole: at most 60 of its bytes, then the
# ellipsis (U+2026) and its size; control bytes are escaped as \xNN.
# ---------------------------------------------------------------------
big=$(head -c 100000 /dev/zero | tr '\0' 'a')
sixty=$(head -c 60 /dev/zero | tr '\0' 'a')
ell=$(printf '\342\200\246')
# bad_big MESSAGE ARGS...: as bad, with a short context for messages
bad_big()
{
    msg=$1
    shift
    run "$@"
    ctx="a 100000-byte value: $msg"
    expect_rc 2
    expect_no_stdout
    expect_err_has "$msg"
    if [ "$(wc -c <"$tmp/err")" -lt 400 ]; then pass; else
        fail "$(wc -c <"$tmp/err") bytes on stderr"
    fi
}
bad_big "bf16emu trace: --mode '$sixty$ell (100000 bytes)': unknown rounding mode" \
    trace --mode "$big" 1
bad_big "bf16emu trace: --acc '$sixty$ell (100000 bytes)': unknown format" \
    trace --acc="$big" 1
bad_big "bf16emu trace: unknown option '--$sixty$ell (100000 bytes)'" \
    trace "--$big" 1
bad_big "bf16emu trace: --seed '$sixty$ell (100000 bytes)': not a non-negative integer" \
    trace --seed "$big" 1
bad_big "bf16emu trace: operand 1 '$sixty$ell (100000 bytes)': not a number" \
    trace "$big"
bad_big "bf16emu: unknown subcommand '$sixty$ell (100000 bytes)'" "$big"
bad_big "bf16emu mma: --a '$sixty$ell (100001 bytes)': empty key" mma --model sm90 \
    --a "$big:" --b x --out y.npy
# exactly 60 bytes are shown whole
bad "bf16emu trace: --mode '$sixty': unknown rounding mode" \
    trace --mode "$sixty" 1
# control bytes
bad "bf16emu trace: --mode 'r\x01z\x0Ax': unknown rounding mode" \
    trace --mode "$(printf 'r\001z\nx')" 1
ctx="one line on stderr for a value with a newline"
if [ "$(wc -l <"$tmp/err")" -eq 1 ]; then pass; else fail "$(cat "$tmp/err")"; fi

finish
