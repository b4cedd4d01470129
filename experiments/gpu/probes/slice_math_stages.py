#!/usr/bin/env python3
"""slice_math_stages.py -- the FP32 stages of the math SDPA backend for a
few cases, from the output of sdpa_math_ops.py, as a small fixture.

usage: slice_math_stages.py MATH_OPS_DIR OUT.safetensors CASE...

For each CASE (a backend dump's name): CASE.s, the first bmm's output
(Q' K'^T, FP32, before the mask), CASE.p, the _safe_softmax output, and
CASE.o32, the second bmm's output (P V before the cast), batch 0 head 0.
Standard library only (the safetensors layout is written by hand)."""
import json
import os
import struct
import sys


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    return head, data


def main():
    src, out, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
    ops = json.load(open(os.path.join(src, "math_ops.json")))
    shards = [read_st(os.path.join(src, "math_ops_%d.safetensors" % i))
              for i in (0, 1)]

    def get(key):
        for head, data in shards:
            if key in head:
                a, b = head[key]["data_offsets"]
                return head[key]["shape"], data[a:b]
        raise KeyError(key)

    tensors = []
    for case in cases:
        keys = [o["key"] for o in ops[case]["ops"] if "key" in o]
        bmm = [k for k in keys if k.endswith(".bmm.default")]
        sm = [k for k in keys if "softmax" in k][0]
        for suffix, key in (("s", bmm[0]), ("p", sm), ("o32", bmm[1])):
            shape, raw = get(key)
            tensors.append(("%s.%s" % (case, suffix), shape, raw))
    header, off = {}, 0
    for name, shape, raw in tensors:
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [off, off + len(raw)]}
        off += len(raw)
    header["__metadata__"] = {
        "producer": "experiments/gpu/probes/sdpa_math_ops.py, sliced by "
                    "experiments/gpu/probes/slice_math_stages.py",
        "gpu": "NVIDIA H200", "torch": "2.11.0+cu130",
        "cases": ",".join(cases)}
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for _, _, raw in tensors:
            f.write(raw)


if __name__ == "__main__":
    main()
