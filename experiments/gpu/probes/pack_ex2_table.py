#!/usr/bin/env python3
"""pack_ex2_table.py -- turn ex2_probe's tables into the ex2-sm90 model file.

usage: pack_ex2_table.py EX2_TABLES_BIN_GZ EX2_SUMMARY_JSON OUT

EX2_TABLES_BIN_GZ is ex2_probe's ex2_tables.bin (gzip-compressed): per
variant (ex2, ex2.ftz, lg2, lg2.ftz) two tables, each stored as uint32
differences from the previous entry.  The ex2 tables N (ex2 on the grid
-1 + i 2^-23) and P (ex2 on i 2^-23) are the same for both ex2 variants
(checked here); they are written to OUT, gzip-compressed, as

    8 bytes  magic "BF16EX2\\0"
    4 bytes  format version (1)
    4 bytes  grid bits k (23): the tables hold 2^k entries each
    4 bytes  N[0]              4 bytes  P[0]
    8 bytes  FNV-1a 64 of N    8 bytes  FNV-1a 64 of P   (as uint32 LE bytes)
    2^k - 1 bytes  N[i] - N[i-1], i = 1 .. 2^k - 1
    2^k - 1 bytes  P[i] - P[i-1]

all little-endian.  The FNV hashes are checked against the probe's JSON.
"""
import gzip
import json
import struct
import sys

K = 23
T = 1 << K


def fnv1a(words):
    h = 1469598103934665603
    for b in words.tobytes():
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    import array
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    raw = gzip.open(sys.argv[1]).read()
    a = array.array("I")
    a.frombytes(raw)
    if sys.byteorder != "little":
        a.byteswap()

    def table(index):
        t = array.array("I")
        acc = 0
        for d in a[index * T:(index + 1) * T]:
            acc = (acc + d) & 0xFFFFFFFF
            t.append(acc)
        return t

    n, p, nf, pf = table(0), table(1), table(2), table(3)
    if n != nf or p != pf:
        sys.exit("the .ftz tables differ from the plain ones")
    summary = json.load(open(sys.argv[2]))
    want = summary["variants"][0]["tables"]
    hn, hp = fnv1a(n), fnv1a(p)
    if "%016x" % hn != want["N"] or "%016x" % hp != want["P"]:
        sys.exit("table hashes differ from the probe's JSON")
    out = bytearray(b"BF16EX2\0")
    out += struct.pack("<IIIIQQ", 1, K, n[0], p[0], hn, hp)
    for t in (n, p):
        for i in range(1, T):
            d = t[i] - t[i - 1]
            if not 0 <= d <= 255:
                sys.exit("a step of %d at %d does not fit a byte" % (d, i))
            out.append(d)
    with gzip.GzipFile(sys.argv[3], "wb", 9, mtime=0) as f:
        f.write(bytes(out))


if __name__ == "__main__":
    main()
