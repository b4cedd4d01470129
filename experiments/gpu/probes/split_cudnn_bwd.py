#!/usr/bin/env python3
"""split_cudnn_bwd.py -- the dumps of cudnn_bwd_probe.py, one file a case.

usage: split_cudnn_bwd.py IN.safetensors IN.json OUTDIR [CASE:HEADS ...]

IN holds tensors named CASE.NAME ([B, H, ...], batch 1); each case
becomes OUTDIR/bwd_CASE.safetensors with the tensors NAME (the heads
HEADS kept, a comma list such as 0 or 0,1; default every head) and a
manifest (the case's entry of IN.json with "backend": "cudnn", "shape"
of the slice, "launch_shape", "heads_from", and its "inputs_gen" where
the inputs are generated and not stored), also written to the same
name with .json.  Pure Python: reads and writes the safetensors layout
itself (an 8-byte little-endian header length, a JSON header, the data).
"""
import json
import os
import struct
import sys

SIZES = {"BF16": 2, "F16": 2, "F32": 4, "I64": 8}
DTYPES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    meta = hdr.pop("__metadata__", {})
    out = {}
    for name, t in hdr.items():
        a, b = t["data_offsets"]
        out[name] = (t["dtype"], t["shape"], data[a:b])
    return out, meta


def write(path, tensors, meta):
    hdr, off, blobs = {}, 0, []
    for name, (dt, shape, blob) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": shape,
                     "data_offsets": [off, off + len(blob)]}
        off += len(blob)
        blobs.append(blob)
    hdr["__metadata__"] = meta
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def heads_of(dt, shape, blob, heads):
    """Heads HEADS of a [1, H, ...] tensor."""
    per = SIZES[dt]
    for s in shape[2:]:
        per *= s
    return (dt, [1, len(heads)] + shape[2:],
            b"".join(blob[h * per:(h + 1) * per] for h in heads))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tensors, _ = read(sys.argv[1])
    with open(sys.argv[2]) as f:
        man = json.load(f)
    outdir = sys.argv[3]
    keep = {}
    for a in sys.argv[4:]:
        c, h = a.split(":")
        keep[c] = [int(x) for x in h.split(",")]
    cases = sorted({n.split(".")[0] for n in tensors})
    for case in cases:
        if keep and case not in keep:
            continue
        names = {n.split(".", 1)[1]: n for n in tensors
                 if n.split(".")[0] == case}
        # without q (inputs_gen describes the inputs), O has its shape
        dt, shape, _ = tensors[names["q" if "q" in names else "o"]]
        nheads = shape[1]
        heads = keep.get(case, list(range(nheads)))
        out = {n: heads_of(*tensors[full], heads) for n, full in
               names.items()}
        m = dict(man["cases"].get(case, {}))
        for x in ("gpu", "torch", "cuda", "cudnn"):
            m[x] = man.get(x)
        m["producer"] = man["producer"]
        m["backend"] = "cudnn"
        m["dtype"] = DTYPES[dt]
        if "shape" in m:
            b, h, nq, d, nk = m.pop("shape")
        else:
            b, h, nq, d = shape
            nk = tensors[names["k"]][1][2]
            m["causal"] = case.endswith("causal")
        m["launch_shape"] = {"batch": b, "heads": h, "nq": nq, "nk": nk,
                             "d": d}
        m["shape"] = {"batch": 1, "heads": len(heads), "nq": nq, "nk": nk,
                      "d": d}
        m["heads_from"] = heads
        m["scale"] = "1/sqrt(d) (PyTorch default)"
        m["tensors"] = {n: [DTYPES.get(t[0], t[0]), t[1]]
                        for n, t in out.items()}
        path = os.path.join(outdir, "bwd_" + case + ".safetensors")
        write(path, out, {"manifest": json.dumps(m)})
        with open(path[:-len(".safetensors")] + ".json", "w") as f:
            json.dump(m, f, indent=1)
            f.write("\n")
        print(path, len(heads), "heads")


if __name__ == "__main__":
    main()
