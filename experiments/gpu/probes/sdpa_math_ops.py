#!/usr/bin/env python3
"""sdpa_math_ops.py -- the math SDPA backend's aten ops, one by one, on the
inputs of the backend dumps.

usage: sdpa_math_ops.py DUMPDIR OUTDIR

For each DUMPDIR/NAME.json of experiments/gpu/sdpa_backends.py, the
launch's Q, K, V are drawn again (dump_sdpa.gen_inputs with the
manifest's seed and generator) and SDPA runs with the math backend pinned
under a dispatch mode that records every aten op: its name, its
non-tensor arguments and its output, of which batch 0, head 0 is kept
(FP32 outputs as FP32; others as stored).  The last op's output is
checked against the dump's math.o.  Writes OUTDIR/math_ops_N.safetensors
(keys NAME/IDX.OP) and OUTDIR/math_ops.json (the op list per case and
the check)."""
import glob
import json
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import dump_sdpa  # noqa: E402


class Rec(TorchDispatchMode):
    def __init__(self, shape):
        super().__init__()
        self.ops = []
        self.shape = shape

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        o = out[0] if isinstance(out, (tuple, list)) else out
        info = {"op": str(func),
                "args": [repr(a) if not isinstance(a, torch.Tensor)
                         else "T%s%s" % (str(a.dtype)[6:], list(a.shape))
                         for a in args]}
        if isinstance(o, torch.Tensor):
            info["out"] = "T%s%s" % (str(o.dtype)[6:], list(o.shape))
            t = o
            while t.dim() > 2:
                t = t[0]
            if t.dim() == 2:
                info["keep"] = t.detach().contiguous().clone()
        self.ops.append(info)
        return out


def main():
    src, out = sys.argv[1], sys.argv[2]
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.backends.cuda.matmul.allow_tf32 = False
    # as experiments/gpu/sdpa_backends.py ran the math backend
    torch.use_deterministic_algorithms(True)
    shards = [{}, {}]
    summary = {}
    for jp in sorted(glob.glob(os.path.join(src, "*.json"))):
        man = json.load(open(jp))
        if "launch_shape" not in man or "math" not in man.get("backends", {}):
            continue
        name = os.path.basename(jp)[:-5]
        ls = man["launch_shape"]
        dt = {"bfloat16": torch.bfloat16, "float16": torch.float16}[man["dtype"]]
        gen = man["gen"]
        q, k, v, _ = dump_sdpa.gen_inputs(
            ls["batch"], ls["heads"], ls["nq"], ls["nk"], ls["d"], dt,
            man["seed"], gen, man.get("repeat", 4) or 4,
            man.get("v_mean", 0.0), man.get("v_std", 1.0))
        ref = load_file(os.path.join(src, name + ".safetensors"))
        same_in = all(bool((x[:1, :1] == ref[n]).all())
                      for n, x in (("q", q), ("k", k), ("v", v)))
        q, k, v = q.cuda(), k.cuda(), v.cuda()
        rec = Rec(None)
        with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), rec:
            o = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=man["causal"])
        torch.cuda.synchronize()
        eq = int((o[:1, :1].cpu() == ref["math.o"]).sum())
        ops = []
        sh = shards[0 if ls["d"] <= 64 else 1]
        for i, info in enumerate(rec.ops):
            t = info.pop("keep", None)
            if t is not None:
                key = "%s/%02d.%s" % (name, i, info["op"].replace("aten.", ""))
                sh[key] = t.cpu()
                info["key"] = key
            ops.append(info)
        summary[name] = {"inputs_equal_dump": same_in,
                         "o_equal_dump": eq, "o_numel": ref["math.o"].numel(),
                         "ops": ops}
        print(name, "inputs", same_in, "O equal", eq, "/", ref["math.o"].numel(),
              flush=True)
    for i, sh in enumerate(shards):
        save_file(sh, os.path.join(out, "math_ops_%d.safetensors" % i))
    json.dump(summary, open(os.path.join(out, "math_ops.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
