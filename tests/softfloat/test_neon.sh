#!/bin/sh
# test_neon.sh -- the AArch64 NEON paths of sf_convert_array (FP32 <-> BF16)
# and of sf_bf16_add_array and sf_bf16_sub_array
# bit for bit against sf_convert, sf_add and sf_sub, and the one-row BF16
# GEMMs (whose generic vectors become NEON code) against sf_mma_dot: the
# library and tests/softfloat/neon_convert.c and neon_row.c
# cross-compiled for AArch64 and run under qemu-aarch64 (the portable
# path is checked there too).  Skipped (77)
# without aarch64-linux-gnu-gcc or qemu-aarch64 (Debian:
# gcc-aarch64-linux-gnu, qemu-user).  Arguments go to neon_convert ("all"
# for every FP32 input: make check-exhaustive).
# AARCH64_CC and QEMU_AARCH64 name other tools.
srcdir=${srcdir:-.}
cc=${AARCH64_CC:-aarch64-linux-gnu-gcc}
qemu=${QEMU_AARCH64:-qemu-aarch64}

for tool in "$cc" "$qemu"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_neon.sh: $tool not found: skipped"
        exit 77
    fi
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# the library's sources: the C files under softfloat/ (the matrix-unit
# models, softfloat/mma/, for neon_row)
build()
{
    out=$1
    shift
    if ! "$cc" -std=c11 -O2 -Wall -Wextra -Wconversion -Wshadow \
        -ffp-contract=off -static -I"$srcdir" -o "$tmp/$out" \
        "$@" "$srcdir/tests/support/support.c" -lm 2>"$tmp/cc.log"; then
        cat "$tmp/cc.log"
        echo "test_neon.sh: FAIL: cross-compiling $out with $cc"
        exit 1
    fi
    if test -s "$tmp/cc.log"; then
        cat "$tmp/cc.log"
        echo "test_neon.sh: FAIL: warnings from $cc ($out)"
        exit 1
    fi
}
build neon_convert "$srcdir"/softfloat/*.c \
    "$srcdir/tests/support/pathcheck.c" "$srcdir/tests/softfloat/neon_convert.c"
if test $# -eq 0; then
    build neon_row "$srcdir"/softfloat/*.c "$srcdir"/softfloat/mma/*.c \
        "$srcdir/tests/softfloat/neon_row.c"
    "$qemu" "$tmp/neon_row" || exit 1
fi
"$qemu" "$tmp/neon_convert" "$@"
