#!/usr/bin/env python3
"""cudnn_lean_probe.py -- probes of cuDNN's decode lean reduction.

usage: cudnn_lean_probe.py OUTDIR

1. Decode dumps with many heads (dump_sdpa.py, cuDNN pinned, no
   backward), their manifests packed in OUTDIR/lean_manifests.tar.
2. Q = 0 sweep: B = 1, H = 4, Nq = 1, d = 64, Nk = 513 .. 4096, K and V
   normal (seed 5); every score is 0, so each split's m is 0 and its l the
   count of its keys: the LSE shows the reduction's exp and log alone.
   OUTDIR/zeroq_lse.txt: "nk lse-bits(head 0..3)", then "grid nk [grid]"
   of the decode engine for a sample of Nk.  (Its one run so far, with the
   profiler on some 300 launches, did not finish inside the call's 150 s
   limit: part 1's dumps are tests/data/gpu/cudnn/lean_*, heads 0 to 3.)
"""
import json
import os
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402
import torch  # noqa: E402

CASES = [
    ("lean_d64_nk600", "--heads 32 --nk 600 --d 64 --seed 21"),
    ("lean_d64_nk1000", "--heads 32 --nk 1000 --d 64 --seed 22"),
    ("lean_d64_nk1024", "--heads 32 --nk 1024 --d 64 --seed 23"),
    ("lean_d128_nk700", "--heads 16 --nk 700 --d 128 --seed 24"),
    ("lean_d64_nk513", "--heads 32 --nk 513 --d 64 --seed 25"),
    ("lean_d64_nk1536", "--heads 16 --nk 1536 --d 64 --seed 26"),
]


def main():
    out = sys.argv[1]
    tmp = tempfile.mkdtemp()
    for name, args in CASES:
        t = time.time()
        dump_sdpa.main(["--out", os.path.join(tmp, name + ".safetensors"),
                        "--backend", "cudnn", "--no-backward", "--batch",
                        "1", "--nq", "1"] + args.split())
        os.replace(os.path.join(tmp, name + ".safetensors"),
                   os.path.join(out, name + ".safetensors"))
        print(name, "%.1f s" % (time.time() - t), flush=True)
    with tarfile.open(os.path.join(out, "lean_manifests.tar"), "w") as tf:
        for f in sorted(os.listdir(tmp)):
            if f.endswith(".json"):
                tf.add(os.path.join(tmp, f), arcname=f)
    t = time.time()
    gen = torch.Generator().manual_seed(5)
    kk = torch.randn(1, 4, 4096, 64, generator=gen).to(torch.bfloat16).cuda()
    vv = torch.randn(1, 4, 4096, 64, generator=gen).to(torch.bfloat16).cuda()
    q = torch.zeros(1, 4, 1, 64, dtype=torch.bfloat16, device="cuda")
    op = torch.ops.aten._scaled_dot_product_cudnn_attention
    rows = []
    grids = []
    for nk in range(513, 4097):
        k = kk[:, :, :nk].contiguous()
        v = vv[:, :, :nk].contiguous()
        r = op(q, k, v, None, True, 0.0, False, False)
        lse = r[1].float().reshape(-1).cpu()
        bits = lse.view(torch.int32).tolist()
        rows.append("%d %s" % (nk, " ".join("%08x" % (b & 0xffffffff)
                                            for b in bits)))
        if nk < 1200 and nk % 8 in (0, 1) or nk % 64 in (0, 1, 40):
            la = []
            dump_sdpa.kernels_seen(
                lambda: op(q, k, v, None, True, 0.0, False, False), la)
            g = [x["grid"] for x in la if "fprop" in (x["name"] or "")]
            grids.append("%d %s" % (nk, json.dumps(g)))
    with open(os.path.join(out, "zeroq_lse.txt"), "w") as f:
        f.write("\n".join(rows) + "\n")
        f.write("".join("grid %s\n" % g for g in grids))
    print("zeroq %.1f s" % (time.time() - t), flush=True)


if __name__ == "__main__":
    main()
