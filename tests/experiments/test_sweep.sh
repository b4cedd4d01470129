# test_sweep.sh -- bf16emu sweep and merge: the sign of the repeated-
# maximum bias and its removal by the fix, stage attribution, the same
# bytes for any thread count, for shards merged in any order and after an
# interrupted run resumed, the plot files, and every error (exit 2, a
# message naming what was wrong, nothing overwritten)

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq

# csv_get FILE INDEX COLUMN: the field COLUMN of the row of point INDEX
# (the column names on line 1).
csv_get()
{
    awk -F, -v idx="$2" -v col="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == idx { print $(c[col]); found = 1 }
        END { if (!found || !(col in c)) exit 1 }' "$1"
}

# expect_awk EXPR VALUE...: the awk condition EXPR on v1, v2, ... holds.
expect_awk()
{
    e=$1
    shift
    if awk -v v1="$1" -v v2="${2:-0}" -v v3="${3:-0}" \
        "BEGIN { exit !($e) }"; then
        pass
    else
        fail "condition '$e' fails for v1=$1 v2=${2:-} v3=${3:-}"
    fi
}

expect_same_file()
{
    if cmp -s "$1" "$2"; then
        pass
    else
        fail "$1 and $2 differ"
        diff "$1" "$2" | head -10
    fi
}

G="--policy paper-eq4 --fix none,beta --repeat 2 --n 128 --d 64 --trials 1 \
--heads 2 --v-std 0.4 --v-mean -1.5,1.5 --quiet --no-plot"

# ---- help, the default grid
run sweep --help
expect_rc 0
expect_out_has "usage: bf16emu sweep"
run sweep --dry-run
expect_rc 0
expect_line "54 points (shard 0/1)"
expect_line "53 fix=beta repeat=4 v-mean=2"
run sweep --print-grid
expect_rc 0
expect_line "v-mean = -2,-1.5,-1,-0.5,0,0.5,1,1.5,2"
expect_line "trials = 8"
# numbers without an exponent where one is not needed
expect_line "gap-max = 30"
run sweep --print-grid --sink 10000,-0.00025,1e-5 --gap-min 0.1:0.3:0.1
expect_line "sink = 10000,-0.00025,1e-05"
expect_line "gap-min = 0.1,0.2,0.3"

# ---- a small sweep with stage attribution
run sweep $G --stages on --out "$tmp/a" --threads 1
expect_rc 0
expect_no_stdout
n=$(wc -l <"$tmp/a/sweep.csv")
expect_awk 'v1 == 5' "$n"
run sweep $G --stages on --out "$tmp/a" --threads 1
expect_rc 2
expect_err_has "sweep.csv exists (--resume continues it, --force starts again)"
# point 0: fix none, V mean -1.5; point 1: none, +1.5; point 2: beta, -1.5
m0=$(csv_get "$tmp/a/sweep.csv" 0 o_mean_ulp)
t0=$(csv_get "$tmp/a/sweep.csv" 0 o_t)
m1=$(csv_get "$tmp/a/sweep.csv" 1 o_mean_ulp)
t1=$(csv_get "$tmp/a/sweep.csv" 1 o_t)
m2=$(csv_get "$tmp/a/sweep.csv" 2 o_mean_ulp)
p2=$(csv_get "$tmp/a/sweep.csv" 0 frac_p2)
f2=$(csv_get "$tmp/a/sweep.csv" 2 frac_p1)
ctx="paper-eq4 repeated maxima: negative bias for negative V"
expect_awk 'v1 < -0.05 && v2 < -5' "$m0" "$t0"
ctx="paper-eq4 repeated maxima: positive bias for positive V"
expect_awk 'v1 > 0.05 && v2 > 5' "$m1" "$t1"
ctx="the fix: at least 5 times smaller"
expect_awk 'v2 * v2 * 25 < v1 * v1' "$m0" "$m2"
ctx="every row has two P~ == 1 without the fix, none with it"
expect_awk 'v1 == 1 && v2 == 0' "$p2" "$f2"
ctx="stage attribution: the O~ cast (Eq. 4) carries most of the bias"
s=$(csv_get "$tmp/a/sweep.csv" 0 share_o_pv_cast)
a=$(csv_get "$tmp/a/sweep.csv" 0 share_o_all)
expect_awk 'v1 > 0.5 && v2 > 0.9 && v2 < 1.1' "$s" "$a"
run sweep $G --stages on --out "$tmp/a" --force --threads 1
expect_rc 0
"$JSONQ" "$tmp/a/sweep.json" points points.0.policy points.3.fix \
    points.0.index >"$tmp/out" 2>"$tmp/err"
rc=$?
ctx="sweep.json"
expect_rc 0
expect_line "[4]"
expect_line "paper-eq4"
expect_line "beta"
expect_line "0"

# ---- the same bytes for 1 and 2 threads
run sweep $G --stages on --out "$tmp/b" --threads 2
expect_rc 0
ctx="threads 1 and 2"
expect_same_file "$tmp/a/sweep.csv" "$tmp/b/sweep.csv"
expect_same_file "$tmp/a/sweep.json" "$tmp/b/sweep.json"

# ---- shards, merged in any order
for i in 0 1 2; do
    run sweep $G --stages on --out "$tmp/s$i" --shard $i/3
    expect_rc 0
done
run merge --out "$tmp/m" --no-plot "$tmp/s2" "$tmp/s0" "$tmp/s1"
expect_rc 0
ctx="3 shards merged"
expect_same_file "$tmp/a/sweep.csv" "$tmp/m/sweep.csv"
expect_same_file "$tmp/a/sweep.json" "$tmp/m/sweep.json"
expect_same_file "$tmp/a/sweep-meta.txt" "$tmp/m/sweep-meta.txt"
run merge --out "$tmp/mj" --no-plot --json "$tmp/s1" "$tmp/s0" "$tmp/s2"
expect_rc 0
ctx="merge --json prints sweep.json"
expect_same_file "$tmp/a/sweep.json" "$tmp/out"
run merge --out "$tmp/m2" --no-plot "$tmp/s0" "$tmp/s2"
expect_rc 2
expect_err_has "point 1 is missing (shard 1/3 not given or not finished)"
run merge --out "$tmp/m2" --no-plot "$tmp/s0" "$tmp/s0" "$tmp/s1"
expect_rc 2
expect_err_has "given twice"
run merge --out "$tmp/m" --no-plot "$tmp/s0" "$tmp/s1" "$tmp/s2"
expect_rc 2
expect_err_has "exists (--force replaces it)"
run sweep $G --stages off --out "$tmp/s9" --shard 1/3
run merge --out "$tmp/m3" --no-plot "$tmp/s0" "$tmp/s9" "$tmp/s2"
expect_rc 2
expect_err_has "another grid"

# ---- resume after an interruption (a complete row and half of the next)
mkdir "$tmp/r"
cp "$tmp/a/grid.txt" "$tmp/r/grid.txt"
cp "$tmp/a/sweep-meta.txt" "$tmp/r/sweep-meta.txt"
head -n 2 "$tmp/a/sweep.csv" >"$tmp/r/sweep.csv"
sed -n 3p "$tmp/a/sweep.csv" | cut -c1-40 | tr -d '\n' >>"$tmp/r/sweep.csv"
run sweep $G --stages on --out "$tmp/r" --resume
expect_rc 0
ctx="resumed"
expect_same_file "$tmp/a/sweep.csv" "$tmp/r/sweep.csv"
expect_same_file "$tmp/a/sweep.json" "$tmp/r/sweep.json"
run sweep $G --stages off --out "$tmp/r" --resume
expect_rc 2
expect_err_has "written by another grid, seed, shard or version"
cp "$tmp/r/sweep.csv" "$tmp/r.keep"
ctx="a refused resume leaves the file"
expect_same_file "$tmp/r.keep" "$tmp/r/sweep.csv"

# ---- errors
run sweep --v-mean 1:0:1
expect_rc 2
expect_err_has "v-mean: '1:0:1' is not a range"
run sweep --policy bogus
expect_rc 2
expect_err_has "policy: 'bogus' is not known (expected paper-eq4, repo, fa2 (or flash), fp32, cudnn, efficient or math)"
run sweep --n 0
expect_rc 2
expect_err_has "n: 0 is out of range (1 .. 65536, an integer)"
run sweep --repeat 1.5
expect_rc 2
expect_err_has "repeat: 1.5 is out of range"
run sweep --shard 3/3
expect_rc 2
expect_err_has "--shard 3/3: expected I/N with 0 <= I < N"
run sweep --trials 0
expect_rc 2
expect_err_has "trials: '0' is not an integer in 1 .. 1000000"
run sweep --resume --force
expect_rc 2
expect_err_has "--resume and --force exclude each other"
run sweep --policy fa2 --d 512 --dry-run
expect_rc 2
expect_err_has "point 0 (policy fa2, n 64, d 512, bc 0, br 0, repeat 1): shape: fa2 needs d <= 256"
printf 'policy = fa2\nbogus = 1\n' >"$tmp/g1"
run sweep --grid "$tmp/g1" --dry-run
expect_rc 2
expect_err_has "--grid $tmp/g1: line 2: unknown key 'bogus'"
printf 'policy fa2\n' >"$tmp/g2"
run sweep --grid "$tmp/g2" --dry-run
expect_rc 2
expect_err_has "line 1: expected 'key = value'"
run sweep --grid "$tmp/none" --dry-run
expect_rc 2
expect_err_has "cannot read"
printf '# a grid\npolicy = fa2 # FA2\n\nv-mean = -1:1:1\n' >"$tmp/g3"
run sweep --grid "$tmp/g3" --dry-run
expect_rc 0
expect_line "18 points (shard 0/1)"
run sweep --grid "$tmp/g3" --fix none --repeat 2 --dry-run
expect_rc 0
expect_line "3 points (shard 0/1)"
run sweep --v-mean '-1,,2'
expect_rc 2
expect_err_has "v-mean: an empty value"
run sweep --ablate fp32-pv+bogus
expect_rc 2
expect_err_has "ablate: 'fp32-pv+bogus' is not known"
run sweep --v-dist laplace,student-t,uniform --v-nu 2 --dry-run
expect_rc 2
expect_err_has "v-nu: 2 is out of range (3 .. 64, an integer)"

# ---- other V distributions run
run sweep --policy fa2 --fix none --repeat 2 --n 64 --d 16 --trials 1 \
    --heads 1 --v-dist uniform,laplace,student-t --v-mean -1 --v-shift 0.5 \
    --qk sink --sink 6 --stages off --out "$tmp/v" --quiet --no-plot
expect_rc 0
n=$(wc -l <"$tmp/v/sweep.csv")
expect_awk 'v1 == 4' "$n"

# ---- the plot (PNG 1000 x 600 and SVG), when gnuplot is installed
if command -v gnuplot >/dev/null 2>&1; then
    run sweep $G --stages off --out "$tmp/p" --plot
    expect_rc 0
    ctx="plot files"
    for f in bias-vmean.png bias-vmean.svg bias-vmean.dat \
        delta-vmean.png delta-vmean.svg delta-vmean.dat bias-fix.png \
        delta-fix.png; do
        if [ -s "$tmp/p/$f" ]; then pass; else fail "$f missing or empty"; fi
    done
    wh=$(od -A n -t u1 -j 16 -N 8 "$tmp/p/bias-vmean.png" | tr -s ' ')
    expect_awk 'v1 == " 0 0 3 232 0 0 2 88"' "$wh"
    if grep -q 'width="1000"' "$tmp/p/bias-vmean.svg"; then
        pass
    else
        fail "the SVG is not 1000 wide"
    fi
    if grep -q '"fix=none"' "$tmp/p/bias-vmean.dat"; then
        pass
    else
        fail "the plot data has no series fix=none"
    fi
else
    echo "gnuplot not installed: the plot checks are skipped"
fi

finish
