#!/bin/sh
# readme-sync.sh -- README.md must show doc/examples/tour.c verbatim
#
# The tour is the first ```c block of README.md after the line
# "<!-- tour.c -->".
set -eu
top=${srcdir:-.}
readme=$top/README.md
tour=$top/doc/examples/tour.c
tmp=readme-tour.c.tmp
trap 'rm -f "$tmp"' EXIT

awk '
    /^<!-- tour\.c -->$/ { marked = 1; next }
    marked && !inside && /^```c$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
' "$readme" > "$tmp"

if ! test -s "$tmp"; then
    echo "readme-sync: no tour block found in $readme" >&2
    exit 1
fi
if ! diff -u "$tour" "$tmp"; then
    echo "readme-sync: README.md's tour differs from $tour" >&2
    exit 1
fi
echo "readme-sync: README.md shows $tour verbatim"
