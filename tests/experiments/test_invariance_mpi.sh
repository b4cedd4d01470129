#!/bin/sh
# test_invariance_mpi.sh -- bf16emu invariance under mpirun: the distinct
# computations shared among 3 ranks on this machine (loopback only,
# oversubscribed), every run's output sent to every rank, rank 0 alone
# printing: the JSON and text reports are byte for byte those of one
# process, on generated inputs with several head counts and batch sizes,
# with more ranks than computations, and on a committed GPU dump (whose
# recorded classes are checked, exit status included); bad input is
# reported once, by rank 0, with exit 2.  Skipped when bf16emu is built
# without MPI or mpirun is missing.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_mpirun

d=$tmp/d
mkdir "$d" || exit 99
gen="--gen normal --heads 4 --nq 1 --nk 4096 --d 64 --policy flash,cudnn
    --batch 1,2,4,8 --head-counts 4,16 --threads 1"

# one process, then 3 ranks and 7 ranks (10 distinct computations)
# shellcheck disable=SC2086
run invariance $gen --json
expect_rc 0
cp "$tmp/out" "$d/one.json"
# shellcheck disable=SC2086
run invariance $gen
expect_rc 0
cp "$tmp/out" "$d/one.txt"
for np in 3 7; do
    # shellcheck disable=SC2086
    mpi "$np" invariance $gen --json
    expect_rc 0
    expect_same_as "$d/one.json"
done
# shellcheck disable=SC2086
mpi 3 invariance $gen
expect_rc 0
expect_same_as "$d/one.txt"
[ ! -s "$tmp/err" ] && pass || fail "stderr: $(cat "$tmp/err")"

# a GPU dump with the GPU's classes: the same report and exit status (0:
# every stored output reproduced, cuDNN's decode engine and its split
# reduction included)
G=$srcdir/tests/data/gpu/invariance
if [ -r "$G/dec_d64_nk4096_h16_fp16.safetensors" ]; then
    run invariance "$G/dec_d64_nk4096_h16_fp16.safetensors" --json --threads 1
    expect_rc 0
    cp "$tmp/out" "$d/dump.json"
    mpi 3 invariance "$G/dec_d64_nk4096_h16_fp16.safetensors" --json --threads 1
    expect_rc 0
    expect_same_as "$d/dump.json"
fi

# bad input: one message (rank 0's), exit 2, no report
mpi 3 invariance --gen normal --heads 4 --nq 1 --nk 512 --d 64 \
    --policy flash --head-counts 8,4
expect_rc 2
expect_no_stdout
[ "$(grep -c '^bf16emu invariance:' "$tmp/err")" -eq 1 ] && pass \
    || fail "not one message: $(cat "$tmp/err")"

finish
