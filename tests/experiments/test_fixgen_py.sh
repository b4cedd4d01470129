#!/bin/sh
# test_fixgen_py.sh -- experiments/gpu/fixgen.py, the Python side of the
# fixture input generator, passes its self-check: the known vectors that
# tests/analysis/test_fixgen.c checks on the C side (and, where numpy is
# installed, its vectorised path against the plain one)

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
fi
python3 "$srcdir/experiments/gpu/fixgen.py"
