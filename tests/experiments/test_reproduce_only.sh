# test_reproduce_only.sh -- bf16emu reproduce --only: a run of some
# targets merges into the summary.md already in the directory (the other
# targets' rows, files and sections kept, the run column and the runs
# table say where each row comes from), also into one of the earlier
# format without the run column; bad --only lists (exit 2, nothing
# written); progress on stderr, one line per step when stderr is not a
# terminal, a bar when it is.  Only the cheap targets run (T1-T3, T7, T8,
# T11: well under a second each).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

# row ID FILE: the table row of target ID in FILE
row() { grep "^| $1 |" "$2"; }

# --- bad lists: exit 2, a message naming --only, nothing written --------
run reproduce --only "" --out "$tmp/bad"
expect_rc 2
expect_err_has "bf16emu reproduce: --only: an empty list (expected target names separated by commas, from T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13)"
expect_no_stdout
ctx="--only '' writes nothing"
if [ -e "$tmp/bad" ]; then fail "$tmp/bad was created"; else pass; fi

run reproduce --only T1, --out "$tmp/bad"
expect_rc 2
expect_err_has "--only 'T1,': an empty target name"
run reproduce --only ,T1 --out "$tmp/bad"
expect_rc 2
expect_err_has "--only ',T1': an empty target name"
run reproduce --only T1,T99 --out "$tmp/bad"
expect_rc 2
expect_err_has "--only: unknown target 'T99' (expected one of T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13)"
expect_no_stdout
ctx="bad --only lists write nothing"
if [ -e "$tmp/bad" ]; then fail "$tmp/bad was created"; else pass; fi

# --- progress: one line per step on a stderr that is not a terminal -----
run reproduce --only T1,T8 --out "$tmp/m" --no-plot
expect_rc 0
expect_line "bf16emu reproduce: T1 PASS, T8 PASS"
expect_err_has "bf16emu reproduce: T1, T8 (full samples, "
ctx="progress lines"
n=$(grep -c -E '^bf16emu reproduce: \[ [12]/2\] T(1|8) PASS \([0-9]+\.[0-9] s\); elapsed [0-9]+ s, ETA [0-9]+ s$' "$tmp/err")
if [ "$n" -eq 2 ]; then pass; else
    fail "$n progress lines for T1 and T8, expected 2:"
    sed 's/^/    |/' "$tmp/err"
fi
run reproduce --only T1 --out "$tmp/m" --no-plot --no-progress
expect_rc 0
expect_no_stderr
run reproduce --only T1 --out "$tmp/m" --no-plot --no-progress --progress
expect_rc 0
expect_err_has "bf16emu reproduce: [ 1/1] T1 PASS"

# on a terminal: a bar redrawn in place, ended by the total
if command -v script >/dev/null 2>&1; then
    ctx="progress bar on a terminal"
    script -qec "\"$BF16EMU\" reproduce --only T1,T8 --out \"$tmp/tty\" --no-plot >/dev/null" \
        /dev/null >"$tmp/tty.txt" 2>&1 </dev/null
    if grep -q '2/2 targets, done in' "$tmp/tty.txt" \
        && tr '\r' '\n' <"$tmp/tty.txt" | grep -q '^\[#*\.*\] 0/2 targets'; then
        pass
    else
        fail "no bar:"
        sed 's/^/    |/' "$tmp/tty.txt"
    fi
fi

# --- merge: --only keeps the other targets -------------------------------
rm -rf "$tmp/m"
run reproduce --only T1,T2,T3,T8 --out "$tmp/m" --no-plot --no-progress
expect_rc 0
cp "$tmp/m/summary.md" "$tmp/first.md"
cp "$tmp/m/eq4-trace.dat" "$tmp/first.dat"
ctx="a first run of T1-T3, T8"
if [ "$(row T8 "$tmp/first.md" | sed 's/.*| \([^|]*\) |$/\1/')" = 1 ]; then
    pass
else
    fail "T8's row does not say run 1: $(row T8 "$tmp/first.md")"
fi

run reproduce --only T11 --out "$tmp/m" --no-plot --no-progress
expect_rc 0
expect_line "bf16emu reproduce: T11 PASS"
expect_out_has ", run 2 merged into the earlier summary: kept T1-T3, T8 from run 1"
ctx="--only T11 after T1-T3, T8"
for t in T1 T2 T3 T8; do
    if [ "$(row $t "$tmp/m/summary.md")" = "$(row $t "$tmp/first.md")" ]; then
        pass
    else
        fail "$t's row changed: $(row $t "$tmp/m/summary.md")"
    fi
done
case $(row T11 "$tmp/m/summary.md") in
    *"| PASS | 2 |") pass ;;
    *) fail "T11's row: $(row T11 "$tmp/m/summary.md")" ;;
esac
if grep -q '\*\*5 of 5 targets PASS\.\*\*' "$tmp/m/summary.md"; then
    pass
else
    fail "no '5 of 5 targets PASS'"
fi
for h in "## T1-T3: the Eq. 4 trace" "## T11: the Fig. 6 analogue"; do
    if grep -q -x -F "$h" "$tmp/m/summary.md"; then pass; else
        fail "no section '$h'"
    fi
done
if cmp -s "$tmp/first.dat" "$tmp/m/eq4-trace.dat" \
    && [ -s "$tmp/m/fig6-prefix.dat" ]; then
    pass
else
    fail "eq4-trace.dat changed or fig6-prefix.dat missing"
fi
if grep -q '^| 1 | .* | full | T1-T3, T8 | [0-9]* s |$' "$tmp/m/summary.md" \
    && grep -q '^| 2 | .* | full | T11 | [0-9]* s |$' "$tmp/m/summary.md"
then
    pass
else
    fail "the runs table does not list runs 1 and 2"
fi

# a rerun of a kept target replaces its row only
run reproduce --only T8,T2 --out "$tmp/m" --no-plot --no-progress --json
expect_rc 0
expect_jsons run_id 3 run 2 kept.0.id T1 kept.0.run_id 1 kept.1.id T3 \
    kept.2.id T11 kept.2.run_id 2
ctx="--only T8,T2 after runs 1 and 2"
for t in T2 T8; do
    case $(row $t "$tmp/m/summary.md") in
        *"| PASS | 3 |") pass ;;
        *) fail "$t's row: $(row $t "$tmp/m/summary.md")" ;;
    esac
done
if [ "$(row T1 "$tmp/m/summary.md")" = "$(row T1 "$tmp/first.md")" ]; then
    pass
else
    fail "T1's row changed"
fi

# --- merge into a summary.md of the earlier format (no run column) ------
mkdir "$tmp/old"
cat >"$tmp/old/summary.md" <<'EOF'
# bf16emu reproduce: Qiu & Yao, arXiv:2510.04212

bf16emu 0.0.9, 2026-11-30 10:00 UTC, full run, 95 s.  **1 of 1 targets PASS.**

| target | what | expected | obtained | result |
|---|---|---|---|---|
| T12 | an old what | an old expected | k=2: -0.00178 (t -12), kept \| as it was | PASS |

## The bias against the mean of V

the sweep's section, kept

gnuplot is not installed: no plots were drawn (the .dat files are there).
EOF
run reproduce --only T7 --out "$tmp/old" --no-plot --no-progress
expect_rc 0
expect_out_has "run 2 merged into the earlier summary: kept T12 and the sweep from run 1"
ctx="--only T7 into a summary of the earlier format"
case $(row T12 "$tmp/old/summary.md") in
    *"| k=2: -0.00178 (t -12), kept \| as it was | PASS | 1 |") pass ;;
    *) fail "T12's row: $(row T12 "$tmp/old/summary.md")" ;;
esac
case $(row T7 "$tmp/old/summary.md") in
    *"| PASS | 2 |") pass ;;
    *) fail "T7's row: $(row T7 "$tmp/old/summary.md")" ;;
esac
if grep -q -x -F '| 1 | 2026-11-30 10:00 UTC | 0.0.9 | full | T12, sweep | 95 s |' \
    "$tmp/old/summary.md"; then
    pass
else
    fail "run 1 is not described by the earlier summary's first line"
fi
if grep -q -x -F 'the sweep'"'"'s section, kept' "$tmp/old/summary.md" \
    && ! grep -q 'gnuplot is not installed' "$tmp/old/summary.md"; then
    pass
else
    fail "the sweep section was not kept, or the old gnuplot note was"
fi

finish
