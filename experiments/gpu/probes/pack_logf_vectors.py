#!/usr/bin/env python3
"""pack_logf_vectors.py -- test vectors of the H200's accurate logf from
cuda_logf_probe's list.

usage: pack_logf_vectors.py LOGF_DIFF.bin OUT.safetensors

LOGF_DIFF.bin lists every FP32 x in [1, 1024) whose logf(x) on the
device is not RN(log x) (its FP64 log rounded), x's bits with bit 31
set when logf(x) is one ulp above.  Written: "x" and "logf" (I32 bit
patterns): every 128th listed x, and 16384 x spread over [1, 1024) that
are not listed (logf(x) = RN(log x), computed here with 40 decimal
digits; an x whose log lies within 2^-40 ulp of a midpoint is left out).
Standard library only."""
import json
import struct
import sys
from decimal import Decimal, getcontext

getcontext().prec = 40


def f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def rn_log(x):
    """RN_f32(log(x)) for FP32 bits x in [1, 1024), or None near a tie."""
    if x == 0x3F800000:
        return 0
    lv = Decimal(f32(x)).ln()
    b = struct.unpack("<I", struct.pack("<f", float(lv)))[0]
    for c in (b - 1, b, b + 1):
        lo, hi = Decimal(f32(c - 1)), Decimal(f32(c + 1))
        v = Decimal(f32(c))
        if (lo + v) / 2 < lv < (v + hi) / 2:
            ulp = hi - v
            if min(lv - (lo + v) / 2, (v + hi) / 2 - lv) < ulp * Decimal(2) ** -40:
                return None
            return c
    return None


def main():
    raw = open(sys.argv[1], "rb").read()
    listed = sorted(struct.unpack("<%dI" % (len(raw) // 4), raw),
                    key=lambda w: w & 0x7FFFFFFF)
    keys = {w & 0x7FFFFFFF for w in listed}
    xs, ys = [], []
    for w in listed[::128]:
        x = w & 0x7FFFFFFF
        c = rn_log(x)
        if c is None:
            continue
        xs.append(x)
        ys.append(c + 1 if w & 0x80000000 else c - 1)
    lo, hi = 0x3F800000, 0x44800000
    step = (hi - lo) // 16384
    for i in range(16384):
        x = lo + i * step + (i * 7919) % step
        if x in keys:
            continue
        c = rn_log(x)
        if c is None:
            continue
        xs.append(x)
        ys.append(c)
    n = len(xs)
    header = {"x": {"dtype": "I32", "shape": [n], "data_offsets": [0, 4 * n]},
              "logf": {"dtype": "I32", "shape": [n],
                       "data_offsets": [4 * n, 8 * n]},
              "__metadata__": {
                  "producer": "experiments/gpu/probes/cuda_logf_probe.cu, "
                              "packed by "
                              "experiments/gpu/probes/pack_logf_vectors.py",
                  "gpu": "NVIDIA H200", "cuda": "13.0",
                  "function": "logf (nvcc -O3 -arch=sm_90)"}}
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(sys.argv[2], "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb)
        f.write(struct.pack("<%di" % n, *[v - (1 << 32) if v >= 1 << 31 else v for v in xs]))
        f.write(struct.pack("<%di" % n, *[v - (1 << 32) if v >= 1 << 31 else v for v in ys]))
    print(n, "vectors")


if __name__ == "__main__":
    main()
