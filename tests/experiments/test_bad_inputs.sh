# test_bad_inputs.sh -- bf16emu attn, mma and diff on hostile inputs: every
# file of the malformed corpus tests/data/bad (exit 2, the reader's message
# after the option and the file, nothing on stdout, no output file), NaN
# and Inf inside the inputs, empty tensors, N = 1, d and K that are not
# multiples of 16, rows that see no key, and shapes that do not fit in
# memory
#
# test_attn.sh already covers the generated inputs (N = d = 1, fa2 with
# d = 5, causal rows without keys, NaN in Q, an empty Q, the memory
# estimate); here the same cases come from files, for K and V as well, and
# the expected values are derived in the comments from the inputs: keys
# with equal scores give every key the weight 1, one key gives O = V, and
# the documented handling of a row without keys (doc/attention.md).
#
# The input files are written here with printf; elements of the output
# files are read with tests/experiments/attn_inputs ($ATTN_INPUTS), JSON
# with $JSONQ.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_attn_inputs

BAD=$srcdir/tests/data/bad
in=$tmp/in
o=$tmp/o
mkdir "$in" "$o" || exit 99

# ---------------------------------------------------------------------
# Writing safetensors files: st_begin FILE; st_add NAME DTYPE SHAPE
# [VALUE...]; st_end.  DTYPE is BF16 or F32, SHAPE "2, 3" ("" for a
# scalar), the VALUEs bit patterns (the last one repeats to fill the
# shape; none gives zeros).  st FILE DTYPE SHAPE VALUE... writes a file of
# one tensor.
# ---------------------------------------------------------------------
# le BYTES VALUE: appends VALUE as BYTES little-endian bytes to $_fmt, as
# printf escapes (no subshell: the files are written with few processes)
le()
{
    _n=$1 _v=$2
    while [ "$_n" -gt 0 ]; do
        _b=$((_v & 255))
        _fmt="$_fmt\\$((_b >> 6 & 7))$((_b >> 3 & 7))$((_b & 7))"
        _v=$((_v >> 8))
        _n=$((_n - 1))
    done
}

st_begin()
{
    _st_file=$1 _st_head='' _st_off=0
    : >"$_st_file.data"
}

st_add()
{
    _name=$1 _dt=$2 _shape=$3
    shift 3
    _es=2
    [ "$_dt" = F32 ] && _es=4
    _count=1
    _ifs=$IFS
    IFS=', '
    for _d in $_shape; do
        _count=$((_count * _d))
    done
    IFS=$_ifs
    _nb=$((_count * _es))
    _st_head="$_st_head${_st_head:+,}\"$_name\":{\"dtype\":\"$_dt\""
    _st_head="$_st_head,\"shape\":[$_shape]"
    _st_head="$_st_head,\"data_offsets\":[$_st_off,$((_st_off + _nb))]}"
    _st_off=$((_st_off + _nb))
    if [ $# -eq 0 ]; then
        head -c "$_nb" /dev/zero >>"$_st_file.data"
        return
    fi
    _i=0 _last=0 _fmt=
    while [ $_i -lt $_count ]; do
        if [ $# -gt 0 ]; then
            _last=$1
            shift
        fi
        le $_es "$_last"
        _i=$((_i + 1))
        if [ ${#_fmt} -gt 2000 ]; then
            # shellcheck disable=SC2059
            printf "$_fmt" >>"$_st_file.data"
            _fmt=
        fi
    done
    # shellcheck disable=SC2059
    printf "$_fmt" >>"$_st_file.data"
}

st_end()
{
    _h="{$_st_head}"
    while [ $((${#_h} % 8)) -ne 0 ]; do
        _h="$_h "
    done
    _fmt=
    le 8 ${#_h}
    {
        # shellcheck disable=SC2059
        printf "$_fmt"
        printf '%s' "$_h"
        cat "$_st_file.data"
    } >"$_st_file"
    rm -f "$_st_file.data"
}

st()
{
    st_begin "$1"
    shift
    st_add t "$@"
    st_end
}

# ---------------------------------------------------------------------
# Checks.
# ---------------------------------------------------------------------
# expect_no_files: the output folder is empty (no output, no temporary).
expect_no_files()
{
    _left=
    for _x in "$o"/* "$o"/.[!.]* "$o"/..?*; do
        [ -e "$_x" ] && _left="$_left ${_x##*/}"
    done
    if [ -z "$_left" ]; then
        pass
    else
        fail "files left behind:$_left"
        rm -f "$o"/* "$o"/.[!.]*
    fi
}

# bad CMD MESSAGE ARGS...: exit 2, nothing on stdout, MESSAGE on stderr,
# no file in $o.
bad()
{
    _c=$1 _m=$2
    shift 2
    expect_error "$_m" "$_c" "$@"
    expect_no_files
}

# class BITS: the FP32 pattern BITS as n (NaN), + (+Inf), - (-Inf), 0 (a
# zero) or f (another finite value).
class()
{
    _e=$(($1 & 0x7F800000)) _m=$(($1 & 0x007FFFFF))
    if [ $_e -eq $((0x7F800000)) ]; then
        if [ $_m -ne 0 ]; then
            echo n
        elif [ $(($1 & 0x80000000)) -ne 0 ]; then
            echo -
        else
            echo +
        fi
    elif [ $(($1 & 0x7FFFFFFF)) -eq 0 ]; then
        echo 0
    else
        echo f
    fi
}

# expect_elem FILE NAME I BITS: element I of tensor NAME is BITS.
expect_elem()
{
    got=$("$ATTN_INPUTS" get "$1" "$2" "$3" 2>&1)
    if [ "$got" = "$4" ]; then
        pass
    else
        fail "$2[$3] of $1 is $got, expected $4"
    fi
}

# expect_class FILE NAME I CLASS: element I of tensor NAME (FP32) is of
# CLASS (see class).
expect_class()
{
    got=$("$ATTN_INPUTS" get "$1" "$2" "$3" 2>&1)
    case $got in
    0x*) got=$(class "$got") ;;
    esac
    if [ "$got" = "$4" ]; then
        pass
    else
        fail "$2[$3] of $1 is of class $got, expected $4"
    fi
}

# diff_own_dump NAME Q K V DO [OPTION...]: attn (fa2, the measured exp,
# backward, the OPTIONs) writes a dump of every stage from the files
# Q K V DO of $in; bf16emu diff (with the OPTIONs) reads it back and finds
# every stage bit-equal.  The output of diff is left for more checks.
diff_own_dump()
{
    _dump=$in/dump_$1.safetensors
    _q=$2 _k=$3 _v=$4 _do=$5
    shift 5
    run attn --q "$in/$_q.safetensors" --k "$in/$_k.safetensors" \
        --v "$in/$_v.safetensors" "$@" --policy fa2 --exp ex2-sm90 \
        --backward --do "$in/$_do.safetensors" --no-exact --out "$_dump"
    expect_rc 0
    run diff --dump "$_dump" "$@"
    expect_rc 0
    expect_line "result: 5 stages compared, all bit-equal"
}

# repeat N TEXT: N copies of TEXT separated by blanks
repeat()
{
    _r=
    _k=0
    while [ $_k -lt "$1" ]; do
        _r="$_r $2"
        _k=$((_k + 1))
    done
    echo "$_r"
}

POLICIES="paper-eq4 repo fa2 fp32"

# ---------------------------------------------------------------------
# The malformed corpus: each .safetensors and .npy file of tests/data/bad
# through one subcommand, in turn mma (as A), attn (as Q) and, for
# safetensors files, diff (as the dump).  The message is the reader's
# (tests/data/bad/EXPECTED) after the option and the file.  attn reads
# BF16, so the .npy files of other dtypes whose data is wrong are refused
# for their dtype first.
# ---------------------------------------------------------------------
st "$in/b.safetensors" BF16 "16, 1" 0x3F80
st "$in/k.safetensors" BF16 "1, 2, 6, 8" 0x3E80 0xBF80 0x3F00 0x3D00
st "$in/v.safetensors" BF16 "1, 2, 6, 8" 0x4040 0xBE00 0x3F80 0x4100
n_bad=0
while IFS='	' read -r f _status sub; do
    case $f in
    '#'* | '' | a_* | b_* | c_* | d_*) continue ;;
    esac
    n_bad=$((n_bad + 1))
    P=$BAD/$f
    turn=$((n_bad % 3))
    case $f in
    *.npy) turn=$((n_bad % 2)) ;;
    esac
    case $turn in
    0)
        bad mma "bf16emu mma: --a: $P: $sub" --model sm90 --a "$P" \
            --b "$in/b.safetensors" --out "$o/d.npy"
        ;;
    1)
        case $f in
        npy_truncated_data.npy)
            sub="dtype F32 (expected BF16; pass --dtype bf16"
            ;;
        npy_scalar_no_data.npy)
            sub="dtype F64 (expected BF16; pass --dtype bf16"
            ;;
        esac
        bad attn "bf16emu attn: --q: $P: $sub" --q "$P" \
            --k "$in/k.safetensors" --v "$in/v.safetensors" \
            --out "$o/a.safetensors"
        ;;
    2) bad diff "bf16emu diff: --dump: $P: $sub" --dump "$P" ;;
    esac
done <"$BAD/EXPECTED"
ctx="the malformed corpus"
if [ $n_bad -ge 70 ]; then pass; else fail "only $n_bad files in $BAD"; fi

# A key that is not in the file: the message lists the keys it has, for
# attn, mma and diff alike (the order of their data).
st_begin "$in/qkvo.safetensors"
st_add q BF16 "1, 1, 2, 8"
st_add k BF16 "1, 1, 2, 8"
st_add v BF16 "1, 1, 2, 8"
st_add o BF16 "1, 1, 2, 8"
st_end
F=$in/qkvo.safetensors
bad attn "bf16emu attn: --q: $F: no tensor \"Q\" in the file; it holds q, k, v, o (names are case-sensitive: \"q\")" \
    --q "$F:Q" --k "$F:k" --v "$F:v" --out "$o/a.safetensors"
bad mma "bf16emu mma: --b: $F: no tensor \"B\" in the file; it holds q, k, v, o" \
    --model sm90 --a "$F:q" --b "$F:B" --out "$o/d.npy"
bad diff "bf16emu diff: $F: do: missing (expected a tensor \"do\" for the backward stages)" \
    --dump "$F" --stage dq
expect_err_has "; the dump holds q, k, v, o"
# and a .npy file given where a dump is expected is named as one
bad diff "bf16emu diff: --dump: $BAD/st_is_npy.safetensors: not a .safetensors file (it looks like a .npy file;" \
    --dump "$BAD/st_is_npy.safetensors"

# ---------------------------------------------------------------------
# NaN and Inf inside the inputs.
# ---------------------------------------------------------------------
# attn, every policy: Q [1, 2, 4, 8], K and V [1, 2, 6, 8].  A NaN as
# element 1 of K (head 0, key 0) makes every score of head 0's rows with
# key 0 NaN, so all of head 0's O (elements 0-31) is NaN and head 1's
# (32-63) finite.  -Inf as element 1 of V (head 0, key 0, column 1) enters
# column 1 of every row of head 0 with a positive weight: elements 1, 9,
# 17, 25 are -Inf, the others finite.  The exact reference leaves out the
# head with the non-finite input.
st "$in/q.safetensors" BF16 "1, 2, 4, 8" 0x3F80 0x3E00 0xBF00 0x4000 0x3C00
st "$in/knan.safetensors" BF16 "1, 2, 6, 8" 0x3E80 0x7FC1 0x3F00 0x3D00
st "$in/vinf.safetensors" BF16 "1, 2, 6, 8" 0x4040 0xFF80 0x3F80 0x4100
for pol in $POLICIES; do
    run attn --json --q "$in/q.safetensors" --k "$in/knan.safetensors" \
        --v "$in/v.safetensors" --policy "$pol" --out "$o/nan.safetensors"
    expect_rc 0
    expect_err_only "bf16emu attn: cost "
    expect_jsons inputs.k.nonfinite 1 exact.heads_nonfinite 1 \
        errors.o.skipped 32 errors.o.count 32
    expect_class "$o/nan.safetensors" o 0 n
    expect_class "$o/nan.safetensors" o 31 n
    expect_class "$o/nan.safetensors" o 32 f
    # LSE of head 0: NaN, except under fa2, whose kernel gives +Inf for a
    # row sum that is 0 or NaN (doc/attention.md, fa2's LSE)
    lse=n
    [ "$pol" = fa2 ] && lse=+
    expect_class "$o/nan.safetensors" lse 3 $lse
    run attn --json --q "$in/q.safetensors" --k "$in/k.safetensors" \
        --v "$in/vinf.safetensors" --policy "$pol" --out "$o/inf.safetensors"
    expect_rc 0
    expect_jsons inputs.v.nonfinite 1 exact.heads_nonfinite 1
    expect_class "$o/inf.safetensors" o 1 -
    expect_class "$o/inf.safetensors" o 25 -
    expect_class "$o/inf.safetensors" o 24 f
    rm -f "$o"/*
done

# diff on attn's own output with those inputs (fa2 and the measured exp,
# forward and backward): every stage bit-equal, NaNs included
diff_own_dump nan q knan vinf q
expect_out_has "elements without a finite exact value left out"
expect_no_stderr

# mma, every preset that takes BF16 (but kahan), one batch of five
# [1 x 16] by [16 x 1] products: +Inf times ones gives +Inf; a NaN in A
# gives NaN; +Inf against a 0 in B gives NaN; C = +Inf with finite
# products gives +Inf; and 3 * -2.5 + C = 0.5 (the other products 0)
# gives -7.  The reference holds these values (NaN as 0x7FC00000); the
# comparison puts two NaNs at distance 0 whatever their payloads, so
# every distance must be 0 (the exit status is 1 where a payload
# differs).  kahan is left out: once acc is infinite its compensation
# (t - acc) - y is Inf - Inf, so its definition gives NaN.
ones=$(repeat 15 0x3F80)
zeros=$(repeat 15 0x0000)
ones14=$(repeat 14 0x3F80)
# shellcheck disable=SC2086
st "$in/sa.safetensors" BF16 "5, 1, 16" 0x7F80 $ones 0x3F80 0x7FC1 \
    $ones14 0x7F80 $ones 0x3F80 $ones 0x4040 $zeros
# shellcheck disable=SC2086
st "$in/sb.safetensors" BF16 "5, 16, 1" 0x3F80 $ones 0x3F80 $ones \
    0x0000 $ones 0x3F80 $ones 0xC020 $ones
st "$in/sc.safetensors" F32 "5, 1, 1" 0 0 0 0x7F800000 0x3F000000
st "$in/sref.safetensors" F32 "5, 1, 1" 0x7F800000 0x7FC00000 0x7FC00000 \
    0x7F800000 0xC0E00000
BF16_PRESETS="sm80 sm90 sm100 avx512bf16 amx arm-bfdot arm-ebf16 fma-chain
    exact mul-add pairwise fma-chain-bf16acc"
for m in $BF16_PRESETS; do
    run mma --json --model "$m" --a "$in/sa.safetensors" \
        --b "$in/sb.safetensors" --c "$in/sc.safetensors" \
        --compare "$in/sref.safetensors"
    if [ "$rc" -le 1 ]; then pass; else fail "exit status $rc"; fi
    expect_jsons compare.elements 5 compare.nan_vs_number 0 \
        compare.max_distance 0
done

# ---------------------------------------------------------------------
# Empty tensors.
# ---------------------------------------------------------------------
st "$in/k0.safetensors" BF16 "1, 2, 0, 8"
st "$in/q_d0.safetensors" BF16 "1, 2, 4, 0"
st "$in/k_d0.safetensors" BF16 "1, 2, 6, 0"
bad attn "--k $in/k0.safetensors: shape: [1, 2, 0, 8] has no elements" \
    --q "$in/q.safetensors" --k "$in/k0.safetensors" --v "$in/k0.safetensors"
bad attn "--v $in/k0.safetensors: shape: [1, 2, 0, 8] has no elements" \
    --q "$in/q.safetensors" --k "$in/k.safetensors" --v "$in/k0.safetensors"
bad attn "--q $in/q_d0.safetensors: shape: [1, 2, 4, 0] has no elements" \
    --q "$in/q_d0.safetensors" --k "$in/k_d0.safetensors" \
    --v "$in/k_d0.safetensors" --out "$o/e.safetensors"

# mma: K = 0 gives D = C; M = 0, N = 0 and an empty batch give an empty D
# (written, with its shape)
st "$in/a_k0.safetensors" BF16 "2, 0"
st "$in/b_k0.safetensors" BF16 "0, 3"
st "$in/c23.safetensors" F32 "2, 3" 0x3F800000 0x40000000 0xC0400000 \
    0x00000001 0x80000000 0x7F7FFFFF
run mma --model sm90 --a "$in/a_k0.safetensors" --b "$in/b_k0.safetensors" \
    --c "$in/c23.safetensors" --compare "$in/c23.safetensors"
expect_rc 0
expect_line "result: all 6 elements bit-equal"
st "$in/a.safetensors" BF16 "1, 16" 0x3F80
st "$in/a_m0.safetensors" BF16 "0, 16"
st "$in/b_n0.safetensors" BF16 "16, 0"
st "$in/a_b0.safetensors" BF16 "0, 1, 16"
for case in "a_m0 b (0, 1)" "a b_n0 (1, 0)" "a_b0 b (0, 1, 1)"; do
    # shellcheck disable=SC2086
    set -- $case
    shape=$(echo "$case" | sed 's/^[^(]*//')
    run mma --model sm90 --a "$in/$1.safetensors" --b "$in/$2.safetensors" \
        --out "$o/d.npy"
    expect_rc 0
    ctx="mma $case: the written D"
    if grep -a -F -e "'shape': $shape" "$o/d.npy" >/dev/null 2>&1; then
        pass
    else
        fail "$o/d.npy has no shape $shape"
    fi
    rm -f "$o"/*
done

# diff: an empty q, or no keys
st_begin "$in/dump_q0.safetensors"
st_add q BF16 "1, 2, 0, 8"
st_add k BF16 "1, 2, 6, 8"
st_add v BF16 "1, 2, 6, 8"
st_add o BF16 "1, 2, 0, 8"
st_add lse F32 "1, 2, 0"
st_end
bad diff "q: shape [1, 2, 0, 8] (expected [B, H, Nq, d], [H, Nq, d] or [Nq, d], every dimension at least 1)" \
    --dump "$in/dump_q0.safetensors"
st_begin "$in/dump_k0.safetensors"
st_add q BF16 "1, 2, 4, 8" 0x3F80
st_add k BF16 "1, 2, 0, 8"
st_add v BF16 "1, 2, 0, 8"
st_add o BF16 "1, 2, 4, 8"
st_add lse F32 "1, 2, 4"
st_end
bad diff "shape: nk must be at least 1" --dump "$in/dump_k0.safetensors" \
    --no-causal --scale 1

# ---------------------------------------------------------------------
# N = 1.  One key: its weight is exp(0) / exp(0) = 1 in every policy, so
# every row of O is V's row exactly (BF16 values, exact in FP32).
# ---------------------------------------------------------------------
V1="0x3F80 0xC0A0 0x3E40 0x4140 0xBD80"
O1=$(for x in $V1; do printf '0x%04X0000 ' $((x)); done)
st "$in/q3.safetensors" BF16 "1, 1, 3, 5" 0x3F00 0xC000 0x3E80 0x4080 0x3F80
st "$in/k1.safetensors" BF16 "1, 1, 1, 5" 0xBF80 0x3F00 0x4000 0x3E00 0x3F80
# shellcheck disable=SC2086
st "$in/v1.safetensors" BF16 "1, 1, 1, 5" $V1
st_begin "$in/want_n1.safetensors"
# shellcheck disable=SC2086
st_add o F32 "3, 5" $O1 $O1 $O1
st_end
for pol in $POLICIES; do
    run attn --q "$in/q3.safetensors" --k "$in/k1.safetensors" \
        --v "$in/v1.safetensors" --policy "$pol" --out "$o/n1.safetensors"
    expect_rc 0
    expect_same "$o/n1.safetensors" "$in/want_n1.safetensors" o
    rm -f "$o"/*
done
# Nq = Nk = 1, forward and backward: diff reproduces attn's dump
diff_own_dump n1 k1 k1 v1 v1
# mma with M = N = K = 1: 3 * -2.5 + 0.5 = -7
st "$in/a1.safetensors" BF16 "1, 1" 0x4040
st "$in/b1.safetensors" BF16 "1, 1" 0xC020
st "$in/c1.safetensors" F32 "1, 1" 0x3F000000
st "$in/ref1.safetensors" F32 "1, 1" 0xC0E00000
for m in sm90 avx512bf16 arm-bfdot fma-chain kahan; do
    run mma --model "$m" --a "$in/a1.safetensors" --b "$in/b1.safetensors" \
        --c "$in/c1.safetensors" --compare "$in/ref1.safetensors"
    expect_rc 0
done

# ---------------------------------------------------------------------
# d (attn) and K (mma) not multiples of 16.  Four keys with equal rows
# have equal scores: each gets the weight 1 (exp(0)) and the row sum is 4
# in every policy, so O[i, c] is the mean of V's column c.  With V[j, c] =
# (c mod 3) + j for j = 0..3 that is (c mod 3) + 1.5, exact in BF16.  d =
# 17 under every policy, d = 5 under fa2 (whose tiles depend on d).
# ---------------------------------------------------------------------
# bf16_int N: the BF16 pattern of N = 0..5; mean N: (N + 1.5) as FP32
bf16_int()
{
    case $1 in
    0) r=0x0000 ;;
    1) r=0x3F80 ;;
    2) r=0x4000 ;;
    3) r=0x4040 ;;
    4) r=0x4080 ;;
    *) r=0x40A0 ;;
    esac
}
mean()
{
    case $1 in
    0) r=0x3FC00000 ;;
    1) r=0x40200000 ;;
    *) r=0x40600000 ;;
    esac
}
for d in 17 5; do
    vals=
    means=
    krow=
    for j in 0 1 2 3; do
        c=0
        while [ $c -lt $d ]; do
            bf16_int $((c % 3 + j))
            vals="$vals $r"
            if [ $j -eq 0 ]; then
                bf16_int $((c % 4))
                krow="$krow $r"
            fi
            c=$((c + 1))
        done
    done
    c=0
    while [ $c -lt $d ]; do
        mean $((c % 3))
        means="$means $r"
        c=$((c + 1))
    done
    # shellcheck disable=SC2086
    st "$in/kd.safetensors" BF16 "1, 1, 4, $d" $krow $krow $krow $krow
    # shellcheck disable=SC2086
    st "$in/vd.safetensors" BF16 "1, 1, 4, $d" $vals
    st "$in/qd.safetensors" BF16 "1, 1, 3, $d" 0x3F80 0xBE00 0x4000 0x3C00
    st_begin "$in/want_d.safetensors"
    # shellcheck disable=SC2086
    st_add o F32 "3, $d" $means $means $means
    st_end
    pols=$POLICIES
    [ $d -eq 5 ] && pols=fa2
    for pol in $pols; do
        run attn --q "$in/qd.safetensors" --k "$in/kd.safetensors" \
            --v "$in/vd.safetensors" --policy "$pol" --out "$o/d.safetensors"
        expect_rc 0
        expect_same "$o/d.safetensors" "$in/want_d.safetensors" o
        rm -f "$o"/*
    done
    [ $d -eq 17 ] || continue
    # diff reproduces attn's dump with d = 17 (fa2, backward)
    diff_own_dump d17 qd vd vd qd
done
# mma: K = 33 (two blocks of 16 and a remainder), ones: D = 33
st "$in/ak.safetensors" BF16 "1, 33" 0x3F80
st "$in/bk.safetensors" BF16 "33, 1" 0x3F80
st "$in/ref33.safetensors" F32 "1, 1" 0x42040000
for m in $BF16_PRESETS kahan; do
    run mma --model "$m" --a "$in/ak.safetensors" --b "$in/bk.safetensors" \
        --compare "$in/ref33.safetensors"
    expect_rc 0
done

# ---------------------------------------------------------------------
# Rows that see no key: causal, Nq = 6 > Nk = 4, so rows 0 and 1 are
# masked out entirely.  doc/attention.md: fp32 and paper-eq4 give O = 0
# and LSE = -Inf, fa2 O = 0 and LSE = +Inf, repo (whose mask is
# -finfo(bf16).max) weight 1 on every key, so O = the mean of V (the V of
# the section above: (c mod 3) + 1.5) and a finite LSE.  Masked entries
# hold 0 in dS, so those rows of dQ are 0.
# ---------------------------------------------------------------------
st "$in/qm.safetensors" BF16 "1, 1, 6, 4" 0x3F80 0x3E00 0xBF00 0x4000
st "$in/km.safetensors" BF16 "1, 1, 4, 4" 0x3F00 0xBE80 0x4000 0x3F80
vals=
for j in 0 1 2 3; do
    for c in 0 1 2 3; do
        bf16_int $((c % 3 + j))
        vals="$vals $r"
    done
done
# shellcheck disable=SC2086
st "$in/vm.safetensors" BF16 "1, 1, 4, 4" $vals
for pol in $POLICIES; do
    run attn --json --q "$in/qm.safetensors" --k "$in/km.safetensors" \
        --v "$in/vm.safetensors" --causal --policy "$pol" --backward \
        --do "$in/qm.safetensors" --out "$o/m.safetensors"
    expect_rc 0
    expect_jsons errors.lse.skipped 2
    expect_elem "$o/m.safetensors" dq 6 0x00000000
    case $pol in
    repo)
        expect_elem "$o/m.safetensors" o 1 0x40200000
        expect_elem "$o/m.safetensors" o 6 0x40600000
        expect_class "$o/m.safetensors" lse 1 f
        ;;
    fa2)
        expect_elem "$o/m.safetensors" o 1 0x00000000
        expect_elem "$o/m.safetensors" o 6 0x00000000
        expect_elem "$o/m.safetensors" lse 1 0x7F800000
        ;;
    *)
        expect_elem "$o/m.safetensors" o 1 0x00000000
        expect_elem "$o/m.safetensors" o 6 0x00000000
        expect_elem "$o/m.safetensors" lse 1 0xFF800000
        ;;
    esac
    rm -f "$o"/*
done
diff_own_dump masked qm km vm qm --causal

# ---------------------------------------------------------------------
# Shapes that do not fit in memory: refused before anything is computed
# or written.
# ---------------------------------------------------------------------
# attn: 64 Ki queries and keys from files (128 KiB each): the P capture
# alone is 2^32 FP32 values, 16 GiB, past the default limit (at most
# 8 GiB); and input files larger than --max-memory
st "$in/q64k.safetensors" BF16 "1, 1, 65536, 1"
bad attn "B 1, H 1, Nq 65536, Nk 65536, d 1 needs about" \
    --q "$in/q64k.safetensors" --k "$in/q64k.safetensors" \
    --v "$in/q64k.safetensors" --capture p --out "$o/big.safetensors"
expect_err_has "more than the limit of"
bad attn "the input files hold" --q "$in/q.safetensors" \
    --k "$in/k.safetensors" --v "$in/v.safetensors" --max-memory 300 \
    --out "$o/big.safetensors"
# mma: A [2^20, 1] by B [1, 2^20] (2 MiB each) makes D 2^40 FP32 values,
# past the 2^40-byte tensor limit
st "$in/a1m.safetensors" BF16 "1048576, 1"
st "$in/b1m.safetensors" BF16 "1, 1048576"
bad mma "cannot allocate D [1048576, 1048576]" --model sm90 \
    --a "$in/a1m.safetensors" --b "$in/b1m.safetensors" --out "$o/big.npy"
rm -f "$in"/*1m.safetensors "$in"/q64k.safetensors

finish
