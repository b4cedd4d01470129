#!/usr/bin/env python3
"""pack_rcp_table.py -- rcp_probe.cu's output as the rcp-sm90 table.

usage: pack_rcp_table.py RCP_DELTA.bin OUT.bin.gz

RCP_DELTA.bin: 2^23 signed bytes, rcp.approx.f32(x) - rcp.rn.f32(x) in
FP32 ulps for x = 1 + i 2^-23 (rcp_probe.cu).  OUT: gzip of the magic
"BF16RCP1" followed by those 2^23 bytes (analysis/rcp_table.h reads it).
"""
import gzip
import sys


def main():
    data = open(sys.argv[1], "rb").read()
    if len(data) != 1 << 23:
        sys.exit("pack_rcp_table.py: %s: expected 8388608 bytes, got %d"
                 % (sys.argv[1], len(data)))
    bad = [b for b in set(data) if b not in (0, 1, 255)]
    if bad:
        sys.exit("pack_rcp_table.py: %s: a difference outside -1 .. 1"
                 % sys.argv[1])
    with gzip.GzipFile(sys.argv[2], "wb", compresslevel=9, mtime=0) as f:
        f.write(b"BF16RCP1" + data)


if __name__ == "__main__":
    main()
