# test_reproduce.sh -- bf16emu reproduce --quick: every target PASS, the
# summary table, the CSVs, the plot data and (with gnuplot) the plots; a
# rerun of two targets merged into the finished summary; the errors (exit
# 2, nothing written).  test_reproduce_only.sh has the rest of --only.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

run reproduce --help
expect_rc 0
expect_out_has "usage: bf16emu reproduce"

run reproduce --quick --out "$tmp/r" --threads 2
expect_rc 0
expect_out_has "T1 PASS, T2 PASS, T3 PASS, T4 PASS, T5 PASS, T6 PASS, T7 PASS, T8 PASS, T9 PASS, T10 PASS, T11 PASS, T12 PASS, T13 PASS"
ctx="summary.md"
n=$(grep -c '^| T[0-9]* | .* | PASS | 1 |$' "$tmp/r/summary.md")
if [ "$n" -eq 13 ]; then pass; else fail "$n PASS rows, expected 13"; fi
if grep -q '13 of 13 targets PASS' "$tmp/r/summary.md"; then
    pass
else
    fail "no '13 of 13 targets PASS' line"
fi
for f in t9-ablations.csv t12-bias.csv t12-bias.dat eq4-trace.dat \
    fig5a-cumulative.dat fig6-prefix.dat sweep/sweep.csv sweep/sweep.json; do
    if [ -s "$tmp/r/$f" ]; then pass; else fail "$f missing or empty"; fi
done
if command -v gnuplot >/dev/null 2>&1; then
    for f in eq4-trace fig5a-cumulative fig6-prefix t12-bias \
        sweep/bias-vmean; do
        for e in png svg; do
            if [ -s "$tmp/r/$f.$e" ]; then
                pass
            else
                fail "$f.$e missing or empty"
            fi
        done
    done
fi
# the Eq. 4 numbers, as the paper gives them
if grep -q 'BF16 0xC097 (-4.71875), error -0.014759540557861328' \
    "$tmp/r/summary.md"; then
    pass
else
    fail "T1's numbers are not in the summary"
fi

# one target; a rerun into the same directory is merged into the
# finished summary: the other targets' rows and files stay
cp "$tmp/r/summary.md" "$tmp/full.md"
cp "$tmp/r/t12-bias.csv" "$tmp/t12.csv"
run reproduce --only T1,T8 --out "$tmp/r" --no-plot
expect_rc 0
expect_line "bf16emu reproduce: T1 PASS, T8 PASS"
expect_out_has "run 2 merged into the earlier summary: kept T2-T7, T9-T13 and the sweep from run 1"
ctx="--only T1,T8 after the full run"
if grep -q '13 of 13 targets PASS' "$tmp/r/summary.md"; then
    pass
else
    fail "no '13 of 13 targets PASS' line after the merge"
fi
for t in T2 T7 T9 T12 T13; do
    if [ "$(grep "^| $t |" "$tmp/r/summary.md")" = \
        "$(grep "^| $t |" "$tmp/full.md")" ]; then
        pass
    else
        fail "$t's row changed"
    fi
done
if cmp -s "$tmp/t12.csv" "$tmp/r/t12-bias.csv" \
    && grep -q -x '## T12, T13: Monte-Carlo bias of O' "$tmp/r/summary.md" \
    && [ -s "$tmp/r/sweep/sweep.csv" ]; then
    pass
else
    fail "T12's file or section, or the sweep, was not kept"
fi

# --json
: "${JSONQ:=./tests/experiments/jsonq}"
run reproduce --only T2,T3 --out "$tmp/r" --no-plot --json
expect_rc 0
"$JSONQ" "$tmp/out" targets.0.id targets.1.pass passed run >"$tmp/j" 2>&1
if [ "$(tr '\n' ' ' <"$tmp/j")" = "T2 true 2 2 " ]; then
    pass
else
    fail "JSON: $(cat "$tmp/j")"
fi

# errors
run reproduce --only T14
expect_rc 2
expect_err_has "--only: unknown target 'T14' (expected one of T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13)"
mkdir "$tmp/foreign"
echo "my notes" >"$tmp/foreign/summary.md"
run reproduce --only T1 --out "$tmp/foreign"
expect_rc 2
expect_err_has "holds a summary.md not written by bf16emu reproduce"
ctx="a refused run leaves the file"
if [ "$(cat "$tmp/foreign/summary.md")" = "my notes" ]; then
    pass
else
    fail "summary.md was overwritten"
fi
run reproduce --threads 0
expect_rc 2
expect_err_has "--threads 0: expected 1 .. 1024"

finish
