# test_sweep_mpi.sh -- bf16emu sweep under mpirun: 3 ranks on this machine
# (loopback only, oversubscribed) write the same bytes as one process;
# --resume and --shard are refused under mpirun.  Skipped when bf16emu is
# built without MPI or mpirun is missing.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_mpirun

G="--policy paper-eq4 --fix none,beta --repeat 1,2 --n 32 --d 16 --trials 2 \
--v-mean -1,1 --stages on --quiet --no-plot"

run sweep $G --out "$tmp/one" --threads 1
expect_rc 0
ctx="mpirun -np 3"
ASAN_OPTIONS=$MPI_ASAN "$MPIRUN" --oversubscribe -x ASAN_OPTIONS -np 3 \
    "$BF16EMU" sweep $G --out "$tmp/mpi" \
    --threads 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc 0
for f in sweep.csv sweep-meta.txt sweep.json grid.txt; do
    if cmp -s "$tmp/one/$f" "$tmp/mpi/$f"; then
        pass
    else
        fail "$f differs from the single-process run"
    fi
done
ASAN_OPTIONS=$MPI_ASAN "$MPIRUN" --oversubscribe -x ASAN_OPTIONS -np 2 \
    "$BF16EMU" sweep $G --out "$tmp/mpi" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
ctx="mpirun over an existing output"
expect_rc 2
expect_err_has "sweep.csv exists (--force replaces it)"
ASAN_OPTIONS=$MPI_ASAN "$MPIRUN" --oversubscribe -x ASAN_OPTIONS -np 2 \
    "$BF16EMU" sweep $G --out "$tmp/m2" \
    --shard 0/2 >"$tmp/out" 2>"$tmp/err"
rc=$?
ctx="mpirun with --shard"
expect_rc 2
expect_err_has "--resume and --shard are not available"

finish
