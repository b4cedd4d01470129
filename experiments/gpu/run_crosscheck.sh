#!/bin/sh
# run_crosscheck.sh -- the GPU half of the FlashAttention cross-check
# (doc/gpu-crosscheck.md), in one go on a machine with an H200
#
# usage: run_crosscheck.sh OUTDIR FA_DUMP BF16EMU [PART ...]
#
# FA_DUMP is experiments/gpu/fa_dump built for sm_90a (compiled here when
# the file given does not run), BF16EMU the bf16emu program (a static
# build travels well).  Run from the top of the source tree: the exp
# model is read from analysis/data/ex2-sm90.bin.gz.  PARTs (default all):
#
#   fa        fa_dump on the cases below, every stage diffed against the
#             fa2 policy (OUTDIR/fa/NAME.diff.json)
#   fixtures  the small fa_dump cases committed under tests/data/gpu/
#             (OUTDIR/fixtures)
#   sdpa      PyTorch SDPA (flash backend) on the cases of sdpa_sweep.py:
#             O and LSE diffed against fa2 (the "_bias" cases with the exact
#             reference), and fa_dump run on the same inputs, its O compared
#             with the flash kernel's, as the fa2 policy has it (plain) and
#             with the variants --rowsum-ffma (ffma), --recip approx (rcp)
#             and both (ffma_rcp)
#   trace     the N = 1024 case d64_n1024_normal_s1 through fa_dump with
#             every stage, variants plain, ffma and rcp, diffed stage by
#             stage
#
# Big dumps are deleted once diffed; reports, logs and manifests stay.
# SDPA_DIFF=0 skips the diffs of the SDPA dumps (only fa_dump runs on them).
# The last lines printed are a summary (crosscheck_table.py).
set -u
OUT=$1
FA=$2
BF=$3
shift 3
PARTS=${*:-fa fixtures sdpa trace}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BF16EMU_EX2_TABLE:=analysis/data/ex2-sm90.bin.gz}"
export BF16EMU_EX2_TABLE
mkdir -p "$OUT"

DRV=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null |
    head -1)
{
    date -u
    nvidia-smi
    nvcc --version
    python3 -c 'import torch; print("torch", torch.__version__, "cuda",
torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
} >"$OUT/env.txt" 2>&1

if ! "$FA" --help 2>&1 | grep -q usage; then
    echo "fa_dump given does not run; compiling it"
    nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
        -Xcompiler -ffp-contract=off -fmad=false -o "$OUT/fa_dump" \
        "$HERE/fa_dump.cu" "$HERE/st_io.c" || exit 1
    FA=$OUT/fa_dump
fi

# variant NAME: fa_dump's options for a variant.
variant()
{
    case $1 in
    plain) echo "" ;;
    ffma) echo "--rowsum-ffma" ;;
    rcp) echo "--recip approx" ;;
    ffma_rcp) echo "--rowsum-ffma --recip approx" ;;
    esac
}

# fa DIR NAME OPTIONS...: one fa_dump case and its diff (every stage).
fa()
{
    dir=$1
    name=$2
    shift 2
    f=$dir/$name.safetensors
    "$FA" --out "$f" --driver "$DRV" "$@" >"$dir/$name.log" 2>&1
    rc=$?
    "$BF" diff --policy fa2 --dump "$f" --no-exact --json \
        >"$dir/$name.diff.json" 2>"$dir/$name.diff.err"
    echo "fa_dump $name: rc $rc, diff rc $?"
}

V_NEG="--v-mean -1.5 --v-std 0.4"

for part in $PARTS; do
    case $part in
    fa)
        D=$OUT/fa
        mkdir -p "$D"
        fa "$D" d64_n256_normal --heads 4 --nq 256 --seed 1
        fa "$D" d64_n512_normal_causal --heads 4 --nq 512 --causal --seed 2
        fa "$D" d64_nq384_nk640_normal --heads 2 --nq 384 --nk 640 --seed 3
        fa "$D" d64_nq300_nk333_normal_causal --heads 2 --nq 300 --nk 333 \
            --causal --seed 4
        fa "$D" d64_n512_sink --heads 4 --nq 512 --gen sink --seed 5 $V_NEG
        fa "$D" d64_n512_sink_causal --heads 4 --nq 512 --gen sink --causal \
            --seed 6 $V_NEG
        fa "$D" d64_n512_repmax4 --heads 4 --nq 512 --gen repeated-max \
            --repeat 4 --seed 7 $V_NEG
        fa "$D" d64_n512_repmax8_causal --heads 4 --nq 512 \
            --gen repeated-max --repeat 8 --causal --seed 8
        fa "$D" d64_n512_repmax4_beta --heads 4 --nq 512 --gen repeated-max \
            --repeat 4 --fix beta --seed 9 $V_NEG
        fa "$D" d64_n512_sink_causal_beta --heads 4 --nq 512 --gen sink \
            --causal --fix beta --seed 10
        fa "$D" d64_nq640_nk256_normal_causal --heads 2 --nq 640 --nk 256 \
            --causal --seed 11
        fa "$D" d64_n1024_normal --heads 1 --nq 1024 --seed 12
        fa "$D" d128_n256_normal --d 128 --heads 4 --nq 256 --seed 13
        fa "$D" d128_n256_normal_causal --d 128 --heads 4 --nq 256 --causal \
            --seed 14
        fa "$D" d128_nq200_nk333_normal --d 128 --heads 2 --nq 200 --nk 333 \
            --seed 15
        fa "$D" d128_n256_sink --d 128 --heads 4 --nq 256 --gen sink \
            --seed 16 $V_NEG
        fa "$D" d128_n384_sink_causal --d 128 --heads 4 --nq 384 --gen sink \
            --causal --seed 17
        fa "$D" d128_n256_repmax4 --d 128 --heads 4 --nq 256 \
            --gen repeated-max --repeat 4 --seed 18
        fa "$D" d128_n256_repmax4_causal_beta --d 128 --heads 4 --nq 256 \
            --gen repeated-max --repeat 4 --causal --fix beta --seed 19
        fa "$D" d128_n512_repmax8 --d 128 --heads 2 --nq 512 \
            --gen repeated-max --repeat 8 --seed 20 $V_NEG
        fa "$D" d128_nq128_nk1024_normal --d 128 --heads 2 --nq 128 \
            --nk 1024 --seed 21
        fa "$D" d128_n1024_normal_causal --d 128 --heads 1 --nq 1024 \
            --causal --seed 22
        rm -f "$D"/*.safetensors
        ;;
    fixtures)
        D=$OUT/fixtures
        mkdir -p "$D"
        fa "$D" fa_h200_d64 --heads 1 --nq 64 --nk 256 --seed 101
        fa "$D" fa_h200_d64_ffma --heads 1 --nq 64 --nk 256 --seed 101 \
            --rowsum-ffma
        fa "$D" fa_h200_d64_sink_causal --heads 1 --nq 64 --nk 200 \
            --gen sink --causal --seed 102 $V_NEG
        fa "$D" fa_h200_d128_repmax_beta --d 128 --heads 1 --nq 32 --nk 160 \
            --gen repeated-max --repeat 4 --fix beta --seed 103 $V_NEG
        ;;
    sdpa)
        D=$OUT/sdpa
        mkdir -p "$D"
        python3 "$HERE/sdpa_sweep.py" "$D" >"$D/sweep.log" 2>&1
        echo "sdpa_sweep: rc $?"
        for f in "$D"/*.safetensors; do
            name=$(basename "$f" .safetensors)
            ex=--no-exact
            case $name in *_bias) ex=--exact ;; esac
            [ "${SDPA_DIFF:-1}" = 0 ] ||
                "$BF" diff --policy fa2 --dump "$f" --stage o,lse $ex --json \
                    >"$D/$name.diff.json" 2>"$D/$name.diff.err"
            c=
            grep -q '"causal": true' "$D/$name.json" && c=--causal
            for v in plain ffma rcp ffma_rcp; do
                "$FA" --inputs "$f" --compare "$f" --no-stages --no-check $c \
                    $(variant $v) \
                    --driver "$DRV" --out "$D/$name.fa_$v.safetensors" \
                    >"$D/$name.fa_$v.log" 2>&1
            done
            echo "sdpa $name: diffed"
            case $name in
            d64_n1024_normal_s1) ;;
            *) rm -f "$f" ;;
            esac
            rm -f "$D/$name".fa_*.safetensors
        done
        ;;
    trace)
        D=$OUT/trace
        S=$OUT/sdpa/d64_n1024_normal_s1.safetensors
        mkdir -p "$D"
        [ -r "$S" ] ||
            python3 "$HERE/sdpa_sweep.py" "$OUT/sdpa" d64_n1024_normal_s1 \
                >"$D/sweep.log" 2>&1
        for v in plain ffma rcp; do
            "$FA" --inputs "$S" --compare "$S" $(variant $v) --driver "$DRV" \
                --out "$D/fa_$v.safetensors" >"$D/fa_$v.log" 2>&1
            "$BF" diff --policy fa2 --dump "$D/fa_$v.safetensors" \
                --no-exact >"$D/fa_$v.diff.txt" 2>&1
            "$BF" diff --policy fa2 --dump "$D/fa_$v.safetensors" \
                --no-exact --json >"$D/fa_$v.diff.json" 2>&1
            echo "trace $v: done"
        done
        rm -f "$D"/*.safetensors "$S"
        ;;
    *)
        echo "run_crosscheck.sh: unknown part '$part'" >&2
        exit 2
        ;;
    esac
done
python3 "$HERE/crosscheck_table.py" "$OUT" | tee "$OUT/summary.md"
