#!/bin/sh
# test_front_door.sh -- one kernel, one set of bits, whichever door it is
# asked through.  A kernel named with --policy, the same kernel read back
# from its --describe output with --kernel, and diff's run of it on attn's
# own output file must give identical bits (O, LSE, dQ, dK, dV) for every
# built-in description: every default that changes bits (the exp model
# first) is the description's, stated once.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq

# The built-in descriptions: every name --describe knows.
KERNELS="paper-eq4 repo fa2 fp32 cudnn efficient math"

# jv PATH: the value at PATH of the last output.
jv() { "$JSONQ" "$tmp/out" "$1" 2>/dev/null; }

GEN="--gen normal --seed 11 --batch 1 --heads 2 --nq 40 --nk 200 --d 64"

for name in $KERNELS; do
    ctx="describe $name"
    # --describe states the exp model
    run attn --policy "$name" --describe
    expect_rc 0
    cp "$tmp/out" "$tmp/$name.json"
    expect_out_has '"exp_model": "'

    for causal in "" "--causal"; do
        tag=$name${causal:+-causal}
        # --policy NAME
        run attn $GEN $causal --backward --policy "$name" --no-exact \
            --out "$tmp/p-$tag.safetensors"
        expect_rc 0
        # --kernel of its --describe output
        run attn $GEN $causal --backward --kernel "$tmp/$name.json" \
            --no-exact --out "$tmp/k-$tag.safetensors"
        expect_rc 0
        # diff --policy NAME on attn's file, and diff --kernel on the
        # --kernel run's: every stage bit-equal
        run diff --dump "$tmp/p-$tag.safetensors" --policy "$name" \
            --no-exact
        expect_rc 0
        expect_line "result: 5 stages compared, all bit-equal"
        run diff --dump "$tmp/k-$tag.safetensors" \
            --kernel "$tmp/$name.json" --no-exact
        expect_rc 0
        expect_line "result: 5 stages compared, all bit-equal"
        # no option: diff runs the description the file records
        run diff --dump "$tmp/p-$tag.safetensors" --no-exact
        expect_rc 0
        expect_out_has "; policy $name (the file's description), exp "
        expect_line "result: 5 stages compared, all bit-equal"
        run diff --dump "$tmp/k-$tag.safetensors" --no-exact
        expect_rc 0
        expect_line "result: 5 stages compared, all bit-equal"
        # --policy's inputs, --kernel's outputs: the same bits
        p=$tmp/p-$tag.safetensors
        k=$tmp/k-$tag.safetensors
        run diff --q "$p:q" --k "$p:k" --v "$p:v" --do "$p:do" \
            --o "$k:o" --lse "$k:lse" --dq "$k:dq" --dk "$k:dk" \
            --dv "$k:dv" --policy "$name" ${causal:---no-causal} --scale 0.125 \
            --no-exact
        expect_rc 0
        expect_line "result: 5 stages compared, all bit-equal"
    done
done

# A file made with ablations diff cannot apply is refused by name.
run attn $GEN --policy fa2 --ablate fp32-pv --no-exact --out "$tmp/abl.safetensors"
expect_rc 0
run diff --dump "$tmp/abl.safetensors" --no-exact
expect_rc 2
expect_err_has "metadata \"ablations\": the file was made with --ablate fp32-pv"

# The exp model's default is the description's, and every header says so.
run attn $GEN --policy cudnn --no-exact
expect_out_has "attn: cudnn forward, fix none, exp ex2-sm90 (the description's default)"
run attn $GEN --policy cudnn --exp cr --no-exact
expect_out_has "attn: cudnn forward, fix none, exp cr (--exp)"
run attn $GEN --policy paper-eq4 --no-exact
expect_out_has "exp cr (the description's default)"

# ---------------------------------------------------------------------
# Grouped-query heads: Q [1, 8, 64, 32] with K and V [1, 2, 64, 32] as
# .npy bit patterns.  Both readings are possible (8 query heads over 2 KV
# heads, or 64 heads of 8 queries over 2 keys): no guess, both named.
# With --layout bhnd each query head h reads KV head h / 4: the same bits
# as a run of that head alone against that KV head.
# ---------------------------------------------------------------------
: "${USER_INPUTS:=./tests/experiments/user_inputs}"
if [ -x "$USER_INPUTS" ]; then
    U=$USER_INPUTS
    g=$tmp/gqa
    mkdir "$g" || exit 99
    run attn --gen normal --seed 4 --heads 8 --nq 64 --d 32 --policy fa2 \
        --no-exact --out "$g/src.safetensors"
    expect_rc 0
    "$U" npy "$g/src.safetensors" q u16 bhnd "$g/q.npy" || exit 99
    "$U" npy "$g/src.safetensors" k u16 h0-2 "$g/k.npy" || exit 99
    "$U" npy "$g/src.safetensors" v u16 h0-2 "$g/v.npy" || exit 99
    run attn --q "$g/q.npy" --k "$g/k.npy" --v "$g/v.npy" --dtype bf16 \
        --policy fa2 --no-exact
    expect_rc 2
    expect_no_stdout
    expect_err_has "reads as [B, H, N, d] (8 query heads over 2 key/value heads, Nq 64, Nk 64) or as [B, N, H, d] (64 query heads over 64, Nq 8, Nk 2)"
    run attn --q "$g/q.npy" --k "$g/k.npy" --v "$g/v.npy" --dtype bf16 \
        --layout bhnd --policy fa2 --no-exact --out "$g/gqa.safetensors"
    expect_rc 0
    expect_line "  grouped-query heads: 8 query heads over 2 key/value heads (query head h reads KV head h / 4)"
    expect_line "  B 1, H 8, Nq 64, Nk 64, d 32; scale 0.17677669 (f32:0x3E3504F3), no mask"
    # diff reads the grouped file and agrees with attn
    run diff --dump "$g/gqa.safetensors" --policy fa2 --no-exact
    expect_rc 0
    expect_line "result: 2 stages compared, all bit-equal"
    for h in 0 3 4 7; do
        kv=$((h / 4))
        "$U" npy "$g/src.safetensors" q u16 "h$h-$((h + 1))" "$g/q$h.npy" \
            || exit 99
        "$U" npy "$g/src.safetensors" k u16 "h$kv-$((kv + 1))" \
            "$g/k$h.npy" || exit 99
        "$U" npy "$g/src.safetensors" v u16 "h$kv-$((kv + 1))" \
            "$g/v$h.npy" || exit 99
        "$U" npy "$g/gqa.safetensors" o keep "h$h-$((h + 1))" "$g/o$h.npy" \
            || exit 99
        run diff --q "$g/q$h.npy" --k "$g/k$h.npy" --v "$g/v$h.npy" \
            --o "$g/o$h.npy" --dtype bf16 --layout bhnd --policy fa2 \
            --no-causal --scale 0x1.6a09e6p-3 --stage o --no-exact
        expect_rc 0
        expect_line "result: 1 stage compared, all bit-equal"
    done
    # the backward of grouped heads: math sums the group's FP32
    # gradients ("fp32-sum", bit-equal on the GPU dumps of
    # test_gqa_dumps), and for fa2 ("in-sum") each KV head's dK and dV
    # are the group's per-head values of the expanded call, added in FP32
    # in head order and rounded once, as gqa_oracle.py computes them
    run attn --q "$g/q.npy" --k "$g/k.npy" --v "$g/v.npy" --dtype bf16 \
        --layout bhnd --policy math --backward --do "$g/q.npy" --no-exact
    expect_rc 0
    expect_out_has "grouped-query heads: 8 query heads over 2 key/value heads"
    if command -v python3 >/dev/null 2>&1; then
        O=$srcdir/tests/experiments/gqa_oracle.py
        b=$g/bwd
        mkdir "$b" || exit 99
        run attn --gen normal --seed 6 --heads 8 --nq 48 --nk 80 --d 32 \
            --backward --policy fa2 --no-exact --out "$b/src.safetensors"
        expect_rc 0
        python3 "$O" split "$b/src.safetensors" 4 "$b" || exit 99
        for G in x ""; do
            run attn --q "$b/q.npy" --k "$b/k$G.npy" --v "$b/v$G.npy" \
                --do "$b/do.npy" --dtype bf16 --layout bhnd --backward \
                --policy fa2 --no-exact --out "$b/out$G.safetensors"
            expect_rc 0
        done
        ctx="gqa_oracle.py check"
        if python3 "$O" check "$b/outx.safetensors" "$b/out.safetensors" 4 \
            >"$tmp/oracle" 2>&1; then
            pass
        else
            fail "grouped dK, dV differ from the oracle: $(cat "$tmp/oracle")"
        fi
        # diff of the grouped file: every stage, dK and dV per KV head
        run diff --dump "$b/out.safetensors" --no-exact
        expect_rc 0
        expect_line "result: 5 stages compared, all bit-equal"
    fi
fi

# ---------------------------------------------------------------------
# NumPy users: F32 inputs rounded to BF16 with --round-to (to nearest
# even).  The files hold BF16 values widened, element 5 of each with its
# lowest bit set: rounding restores the BF16 value (0x...0001 rounds
# down), so the run equals the run on the original BF16 inputs.
# ---------------------------------------------------------------------
if [ -x "$USER_INPUTS" ]; then
    r=$tmp/round
    mkdir "$r" || exit 99
    run attn --gen normal --seed 8 --heads 2 --nq 16 --d 16 --policy fa2 \
        --no-exact --out "$r/src.safetensors"
    expect_rc 0
    for t in q k v; do
        "$USER_INPUTS" npy "$r/src.safetensors" $t f32bad bhnd "$r/$t.npy" \
            || exit 99
    done
    run attn --q "$r/q.npy" --k "$r/k.npy" --v "$r/v.npy" --dtype bf16 \
        --layout bhnd --policy fa2 --no-exact
    expect_rc 2
    expect_err_has "not a BF16 value (every element must be one to be read as BF16); to round F32 values to BF16 (to nearest, ties to even, as torch's .to(torch.bfloat16)), pass --round-to bf16"
    run attn --q "$r/q.npy" --k "$r/k.npy" --v "$r/v.npy" --round-to bf16 \
        --layout bhnd --policy fa2 --no-exact --out "$r/rounded.safetensors"
    expect_rc 0
    expect_out_has "(F32 values rounded to BF16 (to nearest, ties to even): 1 of 512 changed)"
    run diff --dump "$r/src.safetensors" --o "$r/rounded.safetensors:o" \
        --lse "$r/rounded.safetensors:lse" --no-exact
    expect_rc 0
    expect_line "result: 2 stages compared, all bit-equal"
    run attn --q "$r/q.npy" --k "$r/k.npy" --v "$r/v.npy" --round-to e4m3 \
        --no-exact
    expect_rc 2
    expect_err_has "--round-to 'e4m3': expected bf16 or f16"
fi

# ---------------------------------------------------------------------
# The launch decides the split count, by the rule of the kernel run.
# ---------------------------------------------------------------------
DEC="--gen normal --seed 2 --heads 1 --nq 1 --nk 4096 --d 128 --no-exact"
run attn $DEC --policy fa2 --splits auto
expect_rc 0
expect_out_has "splits 32 (--splits auto: PyTorch 2.11's flash heuristic on the launch B 1, H 1 (the tensors))"
run attn $DEC --policy fa2 --launch 64,32
expect_rc 0
expect_out_has "splits 1 (the launch's rule: PyTorch 2.11's flash heuristic on the launch B 64, H 32 (--launch))"
run attn $DEC --policy cudnn --splits auto
expect_rc 0
expect_out_has "(--splits auto: cuDNN's decode grid (PyTorch 2.11, H200) on the launch B 1, H 1 (the tensors))"
run attn --gen normal --nq 256 --nk 4096 --d 64 --no-exact --policy cudnn \
    --splits auto
expect_rc 0
expect_out_has "splits 1 (--splits auto: cuDNN's prefill kernel does not split"
run attn $DEC --policy fa2 --launch 2,3,1,99
expect_rc 2
expect_err_has "--launch: Nq 1, Nk 99 but the inputs have Nq 1, Nk 4096"
run attn $DEC --policy fa2 --launch 2x3
expect_rc 2
expect_err_has "--launch '2x3': expected B,H or B,H,Nq,Nk"

# ---------------------------------------------------------------------
# PyTorch's names: --policy flash is fa2, --dtype bfloat16 is bf16.
# ---------------------------------------------------------------------
run attn --gen normal --nq 16 --d 16 --policy flash --no-exact
expect_rc 0
expect_out_has "attn: fa2 forward"
if [ -x "$USER_INPUTS" ]; then
    run attn --q "$g/q.npy" --k "$g/q.npy" --v "$g/q.npy" \
        --dtype bfloat16 --layout bhnd --policy fa2 --no-exact
    expect_rc 0
    run attn --q "$g/q.npy" --k "$g/q.npy" --v "$g/q.npy" \
        --dtype float16 --layout bhnd --policy fa2 --no-exact
    expect_rc 2
    expect_err_has "FP16 inputs are read from F16 tensors"
fi
run attn --gen normal --nq 16 --nk 24 --d 16 --causal --no-exact
expect_out_has "causal, bottom-right aligned"
run attn --gen normal --nq 16 --nk 24 --d 16 --causal \
    --causal-align top-left --no-exact
expect_out_has "causal, top-left aligned (SDPA's is_causal)"
run attn --help
for opt in --layout --dtype "--o FILE" --launch; do
    expect_out_has "  $opt"
done

echo "test_front_door: $n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
