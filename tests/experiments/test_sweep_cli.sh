# test_sweep_cli.sh -- bf16emu sweep and merge as a user meets them: a
# sweep.csv that CSV readers take (the column names on line 1, the same
# number of fields on every line; the provenance in sweep-meta.txt and
# sweep.json), plots for every swept axis and for delta, with the fixed
# settings in the title and no zero-width intervals, progress lines when
# stderr is not a terminal, the cost estimate and --dry-run, SIGTERM, and
# the errors about --out, --grid and long values (exit 2, nothing
# written or overwritten)

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

# check COND MESSAGE: one check, failing with MESSAGE unless the shell
# condition COND (a string for eval) holds.
check()
{
    if eval "$1"; then pass; else fail "$2"; fi
}

# A small grid: 2 x 2 points, 2 heads each.
G="--policy paper-eq4 --fix none,beta --repeat 2 --n 32 --d 16 --trials 1 \
--heads 2 --v-mean -1,1 --stages off --no-plot --threads 1"

# ---- sweep.csv: plain CSV; the provenance beside it
run sweep $G --quiet --out "$tmp/a"
ctx="plain CSV"
expect_rc 0
first=$(head -n 1 "$tmp/a/sweep.csv" | cut -c1-20)
check '[ "$first" = "index,policy,fix,abl" ]' \
    "line 1 is '$first', expected the column names"
shape=$(awk -F, 'NR == 1 { nf = NF } NF != nf { bad++ }
    END { print NR, nf, bad + 0 }' "$tmp/a/sweep.csv")
check '[ "$shape" = "5 47 0" ]' \
    "lines, fields, lines with another field count: '$shape', expected '5 47 0'"
idx=$(awk -F, 'NR > 1 { printf "%s ", $1 }' "$tmp/a/sweep.csv")
check '[ "$idx" = "0 1 2 3 " ]' "the rows are points '$idx', expected 0 1 2 3"
check '! grep -q "^#" "$tmp/a/sweep.csv"' "a '#' line in sweep.csv"
ctx="sweep-meta.txt"
check 'grep -qx "tool = bf16emu sweep" "$tmp/a/sweep-meta.txt"' "no tool line"
check 'grep -qx "points = 4" "$tmp/a/sweep-meta.txt"' "no 'points = 4'"
check 'grep -qx "shard = 0/1" "$tmp/a/sweep-meta.txt"' "no 'shard = 0/1'"
check 'grep -qx "grid = [0-9a-f]\{16\}" "$tmp/a/sweep-meta.txt"' "no grid hash"
ctx="sweep.json provenance"
check 'grep -q "\"shard\": \"0/1\"" "$tmp/a/sweep.json"' "no shard in sweep.json"
check 'grep -q "\"grid_points\": 4" "$tmp/a/sweep.json"' "no grid_points"

# ---- progress: one line per batch when stderr is not a terminal
run sweep $G --out "$tmp/p1"
ctx="progress lines"
expect_rc 0
n=$(grep -c '^bf16emu sweep: [0-9]*/4 points ([0-9]*%), ' "$tmp/err")
check '[ "$n" -eq 4 ]' "$n progress lines for 4 batches of 1 point, expected 4"
expect_err_has "bf16emu sweep: 4/4 points (100%)"
# the cost, before the run: trials x heads x N^2 x d summed over the points
cost=$(awk 'BEGIN { printf "%.3g", 4 * 1 * 2 * 32 * 32 * 16 }')
expect_err_has "4 points (shard 0/1), trials x heads 1 x 2 per point, threads 1; cost $cost: trials x heads x N^2 x d summed over the points"
run sweep $G --out "$tmp/p2" --no-progress
expect_rc 0
check '! grep -q "points (" "$tmp/err"' "--no-progress printed progress"
run sweep $G --out "$tmp/p3" --quiet
expect_rc 0
expect_no_stderr
run sweep $G --out "$tmp/p4" --quiet --progress
n=$(grep -c '^bf16emu sweep: [0-9]*/4 points' "$tmp/err")
check '[ "$n" -eq 4 ]' "--quiet --progress: $n progress lines, expected 4"
ctx="progress does not change the results"
check 'cmp -s "$tmp/a/sweep.csv" "$tmp/p1/sweep.csv"' "sweep.csv differs"

# ---- --dry-run: the cost, and nothing written
run sweep --n 64,128 --d 16 --trials 3 --heads 2 --v-mean 0 --fix none \
    --repeat 1 --stages off --dry-run --out "$tmp/dry"
expect_rc 0
cost=$(awk 'BEGIN { printf "%.3g", 3 * 2 * 16 * (64 * 64 + 128 * 128) }')
expect_line "cost $cost: trials x heads x N^2 x d summed over the points"
expect_line "2 points (shard 0/1)"
ctx="--dry-run writes nothing"
check '[ ! -e "$tmp/dry" ]' "$tmp/dry was created"
run sweep --n 64 --d 16 --trials 2 --heads 1 --v-mean 0 --fix none \
    --repeat 1 --stages on --dry-run
cost=$(awk 'BEGIN { printf "%.3g", 2 * 64 * 64 * 16 }')
cost6=$(awk 'BEGIN { printf "%.3g", 6 * 2 * 64 * 64 * 16 }')
expect_line "cost $cost6: trials x heads x N^2 x d summed over the points ($cost), x 6 stage variants (--stages on)"

# ---- SIGTERM: the batch in hand is finished, the rows kept, --resume
# continues (one thread: batches of one point; the signal comes while
# the first is computed)
S="--policy paper-eq4 --fix none --repeat 2 --n 256 --d 64 --trials 1 \
--heads 1 --v-mean -1,0,1 --stages off --no-plot --threads 1"
"$BF16EMU" sweep $S --out "$tmp/t" >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while [ $i -lt 1200 ] && ! grep -q 'cost' "$tmp/err"; do
    sleep 0.05
    i=$((i + 1))
done
kill -TERM $pid
wait $pid
rc=$?
ctx="SIGTERM"
expect_rc 143
# the batch in hand (normally the first) is finished, none is begun
k=$(sed -n 's/.*SIGTERM: stopped after the batch in hand, \([0-2]\) of 3 points done.*/\1/p' "$tmp/err")
check '[ -n "$k" ]' "no 'SIGTERM: stopped after the batch in hand, K of 3 points done'"
expect_err_has "with --resume (instead of --force) continues"
shape=$(awk -F, 'NR == 1 { nf = NF } NF != nf { bad++ }
    END { print NR - 1, bad + 0 }' "$tmp/t/sweep.csv")
check '[ "$shape" = "${k:-1} 0" ]' \
    "rows, damaged lines: '$shape', expected '${k:-1} 0'"
check '[ ! -e "$tmp/t/sweep.json" ]' "sweep.json written after SIGTERM"
run sweep $S --out "$tmp/t" --resume --quiet
ctx="resumed after SIGTERM"
expect_rc 0
idx=$(awk -F, 'NR > 1 { printf "%s ", $1 }' "$tmp/t/sweep.csv")
check '[ "$idx" = "0 1 2 " ]' "the rows are points '$idx', expected 0 1 2"

# ---- plots: every swept axis, O and delta; readable
if command -v gnuplot >/dev/null 2>&1; then
    run sweep --policy paper-eq4,fa2 --fix none --repeat 2 --n 32,64 \
        --d 16 --trials 1 --heads 1 --v-std 0.25 --v-mean -1,1 --stages off \
        --threads 1 --quiet --plot --out "$tmp/g"
    ctx="plots of every swept axis"
    expect_rc 0
    for k in policy n vmean; do
        for f in "bias-$k" "delta-$k"; do
            for e in dat png svg; do
                check '[ -s "$tmp/g/$f.$e" ]' "$f.$e missing or empty"
            done
        done
    done
    check '[ ! -e "$tmp/g/bias-fix.dat" ]' "a plot of an axis with one value"
    ctx="plot titles"
    check 'grep -q "v-std 0.25" "$tmp/g/bias-n.svg"' \
        "the fixed v-std is not in the title"
    check 'grep -q "d 16" "$tmp/g/delta-vmean.svg"' \
        "the fixed d is not in the title"
    check 'grep -q "no error bars: an interval needs two or more heads" "$tmp/g/bias-n.svg"' \
        "no note that one head gives no interval"
    ctx="no zero-width intervals"
    zero=$(awk 'NF == 4 && $3 == $4 && $3 != "NaN"' "$tmp/g/bias-n.dat" \
        "$tmp/g/delta-policy.dat" | wc -l)
    check '[ "$zero" -eq 0 ]' "$zero rows with lo == hi"
    nan=$(awk 'NF == 4 && $3 == "NaN" && $4 == "NaN"' "$tmp/g/bias-n.dat" \
        | wc -l)
    check '[ "$nan" -eq 8 ]' "$nan rows without an interval, expected 8"
    check 'grep -qx "\"policy=paper-eq4 v-mean=-1\"" "$tmp/g/bias-n.dat"' \
        "no series per policy and V mean"
    ctx="the x range is padded"
    for f in bias-n:32:64 bias-vmean:-1:1 delta-policy:0:1; do
        r=$(sed -n '1s/.* x range \([^ ]*\) \.\. \([^ ]*\).*/\1 \2/p' \
            "$tmp/g/${f%%:*}.dat")
        lo=${f#*:}
        hi=${lo#*:}
        lo=${lo%:*}
        check 'awk -v r="$r" -v lo="$lo" -v hi="$hi" "BEGIN {
            split(r, x, \" \"); exit !(x[1] < lo && x[2] > hi) }"' \
            "${f%%:*}.dat: x range '$r' does not hold $lo .. $hi with room"
    done
    run sweep --policy paper-eq4 --fix none --repeat 2 --n 32 --d 16 \
        --trials 1 --heads 2 --v-mean -1,1 --stages off --threads 1 --quiet \
        --plot --out "$tmp/h"
    cp "$tmp/g/bias-n.png" "$tmp/h/bias-n.png"
    cp "$tmp/g/delta-n.dat" "$tmp/h/delta-n.dat"
    run sweep --policy paper-eq4 --fix none --repeat 2 --n 32 --d 16 \
        --trials 1 --heads 2 --v-mean -1,1 --stages off --threads 1 --quiet \
        --plot --out "$tmp/h" --force
    ctx="--force: no plot of an axis the grid no longer sweeps"
    expect_rc 0
    check '[ ! -e "$tmp/h/bias-n.png" ] && [ ! -e "$tmp/h/delta-n.dat" ]' \
        "a plot of n is left from an earlier grid"
    ctx="one head: intervals"
    ci=$(awk 'NF == 4 && $3 != "NaN" && $3 < $2 && $2 < $4' \
        "$tmp/h/bias-vmean.dat" | wc -l)
    check '[ "$ci" -eq 2 ]' "$ci rows with lo < mean < hi, expected 2"
    check 'grep -q "error bars: 95% intervals from the spread of the 2 heads" "$tmp/h/bias-vmean.svg"' \
        "the title does not say what the error bars are"
fi

# ---- errors: --out, --grid, merge into an input, long values
: >"$tmp/file"
run sweep $G --out "$tmp/file"
ctx="sweep --out FILE"
expect_rc 2
expect_err_has "bf16emu sweep: --out $tmp/file: exists and is not a directory"
check '[ ! -s "$tmp/file" ]' "$tmp/file was written"
run sweep --grid "$tmp" --dry-run
ctx="sweep --grid DIR"
expect_rc 2
expect_err_has "bf16emu sweep: --grid $tmp: a directory (expected a grid file"
for i in 0 1; do
    "$BF16EMU" sweep $G --quiet --shard $i/2 --out "$tmp/s$i" 2>"$tmp/err"
done
run merge --no-plot --out "$tmp/file" "$tmp/s0" "$tmp/s1"
ctx="merge --out FILE"
expect_rc 2
expect_err_has "bf16emu merge: --out $tmp/file: exists and is not a directory"
cp "$tmp/s0/sweep.csv" "$tmp/s0.csv"
cp "$tmp/s0/sweep-meta.txt" "$tmp/s0.meta"
run merge --no-plot --force --out "$tmp/s0" "$tmp/s0" "$tmp/s1"
ctx="merge --force --out SHARD SHARD ..."
expect_rc 2
expect_err_has "--out $tmp/s0 is the shard directory $tmp/s0; an input is never overwritten, also not with --force"
check 'cmp -s "$tmp/s0.csv" "$tmp/s0/sweep.csv"' "the shard's sweep.csv changed"
check 'cmp -s "$tmp/s0.meta" "$tmp/s0/sweep-meta.txt"' "its sweep-meta.txt changed"
run merge --no-plot --force --out "$tmp/s1/../s1" "$tmp/s0" "$tmp/s1"
expect_rc 2
expect_err_has "is the shard directory $tmp/s1"
run merge --no-plot --out "$tmp/m" "$tmp/s1" "$tmp/s0"
ctx="merged = whole"
expect_rc 0
check 'cmp -s "$tmp/a/sweep.csv" "$tmp/m/sweep.csv"' "sweep.csv differs"
check 'cmp -s "$tmp/a/sweep-meta.txt" "$tmp/m/sweep-meta.txt"' \
    "sweep-meta.txt differs"
long=$(awk 'BEGIN { while (n++ < 100000) printf "7" }')
for opt in --grid --out; do
    run sweep $opt "$long" --dry-run --quiet
    ctx="sweep $opt (100000 bytes): the value is cut in the message"
    expect_rc 2
    expect_err_has " 777777777777777777777777777777777777777777777777777777777777… (100000 bytes)"
    sz=$(wc -c <"$tmp/err")
    check '[ "$sz" -lt 200 ]' "sweep $opt: a message of $sz bytes"
done
run merge --out "$long" "$tmp/s0"
ctx="merge --out (100000 bytes): the value is cut in the message"
expect_rc 2
expect_err_has "--out 777777777777777777777777777777777777777777777777777777777777… (100000 bytes)"
sz=$(wc -c <"$tmp/err")
check '[ "$sz" -lt 200 ]' "merge --out: a message of $sz bytes"

# The policy axis takes every built-in description (cudnn included) and
# PyTorch's name flash, which is fa2 point for point; the exp model of
# each point is its description's (exp "default").
S="--fix none --repeat 2 --v-mean 0 --n 64 --trials 2 --quiet"
run sweep $S --policy fa2 --out "$tmp/pf"
expect_rc 0
run sweep $S --policy flash --out "$tmp/pl"
expect_rc 0
if sed 's/,flash,/,fa2,/' "$tmp/pl/sweep.csv" | cmp -s - "$tmp/pf/sweep.csv"
then pass; else fail "sweep --policy flash differs from fa2"; fi
run sweep $S --policy cudnn,efficient,math --out "$tmp/pc"
expect_rc 0
check 'grep -q "^0,cudnn,none,none,default," "$tmp/pc/sweep.csv"' \
    "sweep --policy cudnn: no cudnn row"
run sweep $S --policy fa3 --out "$tmp/px"
expect_rc 2
expect_err_has "paper-eq4, repo, fa2 (or flash), fp32, cudnn, efficient or math"

finish
