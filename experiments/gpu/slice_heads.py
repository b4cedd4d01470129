#!/usr/bin/env python3
"""slice_heads.py -- keep some heads of an attention dump.

usage: slice_heads.py IN.safetensors OUT.safetensors H[,H...] [IN OUT H...]...

Heads are independent in attention, so the heads H (of dimension 1,
batch 1) of every [B, H, ...] tensor of a dump (dump_sdpa.py, fa_dump)
form a dump of their own: the GPU computed each of them exactly as it
would alone (for the flash kernel, on the split the whole problem chose).
OUT keeps the manifest, with shape.heads set to the number kept and
"heads_from" listing the original head indices; OUT's name with .json
gets the manifest too.  Needs torch and safetensors.
"""
import json
import sys

import torch
from safetensors import safe_open
from safetensors.torch import save_file


def slice_one(src, dst, heads, batch=None, drop=()):
    """Writes DST from SRC's heads HEADS (a list of indices); with BATCH,
    of that batch entry alone (any batch size), else of batch 1 only.
    Tensors named in DROP are left out."""
    out = {}
    with safe_open(src, framework="pt") as f:
        meta = f.metadata() or {}
        for name in f.keys():
            if name in drop:
                continue
            t = f.get_tensor(name)
            if batch is not None and t.dim() >= 2:
                t = t[batch:batch + 1]
            if t.dim() >= 2 and t.shape[0] == 1:
                t = t[:, heads]
            out[name] = t.contiguous()
    man = json.loads(meta.get("manifest", "{}"))
    if "shape" in man:
        man["shape"]["heads"] = len(heads)
        if batch is not None:
            man["shape"]["batch"] = 1
            man["batch_from"] = batch
    man["heads_from"] = heads
    man["sliced_from"] = src.rsplit("/", 1)[-1]
    if "tensors" in man:
        man["tensors"] = {n: [str(t.dtype).replace("torch.", ""),
                              list(t.shape)] for n, t in out.items()}
    save_file(out, dst, metadata={"manifest": json.dumps(man)})
    with open(dst[:-len(".safetensors")] + ".json", "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3 != 0 or not all(
            a.endswith(".safetensors") for a in args[1::3]):
        sys.exit(__doc__)
    for i in range(0, len(args), 3):
        slice_one(args[i], args[i + 1],
                  [int(h) for h in args[i + 2].split(",")])


if __name__ == "__main__":
    main()
