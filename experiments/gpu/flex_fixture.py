#!/usr/bin/env python3
"""flex_fixture.py -- a dump of flex_dump.py made ready for bf16emu diff.

usage: flex_fixture.py IN.safetensors OUT.safetensors [--keep-backward]

flex_dump.py names the call's mask by its mask_mod and parameters
(manifest "mask_mod", "params"); diff needs the mask's values.  OUT holds
IN's tensors (without do, flex.dq, flex.dk, flex.dv unless
--keep-backward) and, for a mask_mod other than causal, "attn_mask": the
mask_mod evaluated at every (query, key) of the launch, BOOL [1, 1, Nq,
Nk] (True where the key takes part; window: causal and q - kv < window;
prefix: kv < prefix or causal; decwin: a decode step's window, key kv
visible to row q when q + Nk - Nq - window < kv <= q + Nk - Nq; document: the same document and causal).
The ALiBi score_mod (flex_dump.py's: score + slope_h (kv - q) under the
causal mask, slopes powers of two) becomes an additive attn_mask [1, H,
Nq, Nk] of its values (-inf above the diagonal), which is exact: the
manifest's score_mod moves to "score_mod_as_mask".  Soft-capping
(cap tanh(score / cap)) becomes the manifest's "softcap": the cap.  The manifest gets
"shape" (the launch's), "causal" (mask_mod causal) and "attn_mask".  Then trim_dump.py keeps the heads wanted.  Pure Python 3
(standard library).
"""
import json
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]


def write(path, tensors, meta):
    hdr = {"__metadata__": meta}
    off, blobs = 0, []
    for k, (dt, shape, raw) in tensors.items():
        hdr[k] = {"dtype": dt, "shape": shape,
                  "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    hj = json.dumps(hdr, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))


def visible(man):
    """The mask_mod of MAN as a function of (q, kv)."""
    p, kind = man["params"], man["mask_mod"]
    if kind == "window":
        return lambda q, kv: q >= kv and q - kv < p["window"]
    if kind == "prefix":
        return lambda q, kv: kv < p["prefix"] or q >= kv
    if kind == "decwin":
        off = man["launch_shape"]["nk"] - man["launch_shape"]["nq"]
        return lambda q, kv: kv <= q + off and q + off - kv < p["window"]
    if kind == "document":
        ids = [i for i, n in enumerate(p["docs"]) for _ in range(n)]
        return lambda q, kv: ids[q] == ids[kv] and q >= kv
    raise SystemExit("flex_fixture.py: mask_mod %r: no rule" % kind)


def f16_exact(x):
    """Whether the finite float X is an FP16 value."""
    try:
        return struct.unpack("<e", struct.pack("<e", x))[0] == x
    except OverflowError:
        return False


def alibi(man, out, ls):
    """flex_dump.py's ALiBi score_mod (score + slope_h (kv - q), causal)
    as an additive attn_mask [1, H, Nq, Nk]: slope_h (kv - q) where kv <=
    q, -inf above (FP16 when every value is one, else FP32).  The slopes
    are powers of two, so the GPU's product is exact and its sum with the
    scaled score is the one rounding the additive mask gets."""
    sl = out.pop("alibi_slopes")
    slopes = struct.unpack("<%df" % (len(sl[2]) // 4), sl[2])
    vals = [[slopes[h] * (kv - q) if kv <= q else float("-inf")
             for q in range(ls["nq"]) for kv in range(ls["nk"])]
            for h in range(ls["heads"])]
    flat = [x for row in vals for x in row]
    half = all(x == float("-inf") or f16_exact(x) for x in flat)
    fmt = "<%d%s" % (len(flat), "e" if half else "f")
    out["attn_mask"] = ("F16" if half else "F32",
                        [1, ls["heads"], ls["nq"], ls["nk"]],
                        struct.pack(fmt, *flat))
    man["attn_mask"] = "attn_mask"
    man["score_mod_as_mask"] = man.pop("score_mod")
    man["mask_mod"] = None
    man["causal"] = False


def main():
    args = [a for a in sys.argv[1:] if a != "--keep-backward"]
    if len(args) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    keep_bwd = "--keep-backward" in sys.argv
    hdr, data = read(args[0])
    man = json.loads(hdr["__metadata__"]["manifest"])
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        if not keep_bwd and k in ("do", "flex.dq", "flex.dk", "flex.dv"):
            continue
        s, e = v["data_offsets"]
        out[k] = (v["dtype"], v["shape"], data[s:e])
    ls = man["launch_shape"]
    man["shape"] = {k: ls[k] for k in ("batch", "heads", "nq", "nk", "d")}
    man["causal"] = man.get("mask_mod") == "causal"
    if man.get("score_mod") == "softcap":
        # tanh soft-capping: the manifest's "softcap" (diff reads it)
        man["softcap"] = man["params"]["cap"]
        man["score_mod_as_softcap"] = man.pop("score_mod")
    if man.get("score_mod") == "alibi":
        alibi(man, out, ls)
    elif man.get("mask_mod") not in (None, "causal"):
        f = visible(man)
        rows = bytes(1 if f(q, kv) else 0 for q in range(ls["nq"])
                     for kv in range(ls["nk"]))
        out["attn_mask"] = ("BOOL", [1, 1, ls["nq"], ls["nk"]], rows)
        man["attn_mask"] = "attn_mask"
    man["tensors"] = {k: v for k, v in man.get("tensors", {}).items()
                      if k in out}
    man["fixture"] = ("flex_fixture.py: shape, causal and attn_mask added"
                      + ("" if keep_bwd else "; the backward left out"))
    write(args[1], out, {"manifest": json.dumps(man)})
    with open(args[1][:-len(".safetensors")] + ".json", "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
