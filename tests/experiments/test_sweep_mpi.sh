# test_sweep_mpi.sh -- bf16emu sweep under mpirun: 3 ranks on this machine
# (loopback only, oversubscribed) write the same bytes as one process;
# --resume and --shard are refused under mpirun.  Skipped when bf16emu is
# built without MPI or mpirun is missing.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

if [ -z "${MPIRUN:-}" ] || [ ! -x "$MPIRUN" ]; then
    echo "SKIP: bf16emu built without MPI, or no mpirun"
    exit 77
fi
# Open MPI refuses root unless told; keep it on this machine's loopback
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl=self,tcp
OMPI_MCA_btl_tcp_if_include=lo
OMPI_MCA_oob_tcp_if_include=lo
OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl \
    OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include \
    OMPI_MCA_rmaps_base_oversubscribe
# Under the sanitizer build, LeakSanitizer reports what Open MPI allocates
# in MPI_Init and never frees (in plugins it has unloaded by exit, so the
# reports cannot even name them): leak checking is off for the ranks only.
# The same code paths without MPI are leak-checked by test_sweep.sh.
MPI_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

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
