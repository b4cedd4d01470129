#!/bin/sh
# run-events.sh -- the rounding-event hook with no sink vs no hook at all.
# Usage: run-events.sh HOOK_BINARY NOHOOK_BINARY [ROUNDS]
# Runs the two builds alternately ROUNDS times (default 5) on one core and
# prints, per operation, the median ns/op of each and their ratio.
set -eu
hook=$1
nohook=$2
rounds=${3:-5}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
i=0
while [ "$i" -lt "$rounds" ]; do
    $pin "$hook" hook >>"$tmp"
    $pin "$nohook" nohook >>"$tmp"
    i=$((i + 1))
done
awk '
{ v[$1 " " $2, ++n[$1 " " $2]] = $3; ops[$2] = 1 }
function median(key,   k, m, t, i, j) {
    m = n[key]
    for (i = 1; i <= m; i++) t[i] = v[key, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
        if (t[j] < t[i]) { k = t[i]; t[i] = t[j]; t[j] = k }
    return (m % 2) ? t[(m + 1) / 2] : (t[m / 2] + t[m / 2 + 1]) / 2
}
END {
    printf "%-10s %14s %14s %8s\n", "op", "hook ns/op", "no-hook ns/op", "ratio"
    for (op in ops) {
        h = median("hook " op); x = median("nohook " op)
        printf "%-10s %14.3f %14.3f %8.3f\n", op, h, x, h / x
    }
}' "$tmp"
