#!/usr/bin/env python3
"""sdpa_dispatch_grid.py -- which SDPA backend PyTorch picks, case by case.

usage: sdpa_dispatch_grid.py OUT.json

For every case of grid(): random inputs of the case's shape, dtype and
layout on the GPU, the case's torch.backends.cuda.enable_*_sdp flags and
deterministic-algorithms setting, then
  - torch._fused_sdp_choice (the backend SDPA's dispatcher returns),
  - torch.backends.cuda.can_use_{flash,efficient,cudnn}_attention with
    debug on, and the warnings each gives (the constraint that failed),
  - F.scaled_dot_product_attention run under the profiler: the CUDA
    kernels that ran, the backend they belong to, or the error raised.
Writes one JSON object: the versions and a list of cases.
"""
import json
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(
    __import__("os").path.abspath(__file__)), ".."))
import dump_sdpa  # noqa: E402

BASE = dict(batch=1, heads=8, kv_heads=8, nq=128, nk=128, d=64,
            dtype="bf16", causal=False, mask=None, dropout=0.0, gqa=False,
            requires_grad=False, off=[], deterministic=False,
            layout="bhnd", rank=4)


def grid():
    cases = []

    def add(**kw):
        c = dict(BASE)
        c.update(kw)
        cases.append(c)
    add()
    for d in (8, 16, 24, 32, 40, 48, 56, 60, 72, 80, 96, 100, 104, 112,
              120, 128, 136, 144, 160, 192, 200, 224, 248, 256, 264, 3,
              257, 512):
        add(d=d)
    for d in (64, 128, 160, 192, 256, 264):
        add(d=d, requires_grad=True)
    add(d=100, requires_grad=True)
    add(dtype="fp16")
    add(dtype="fp16", d=128, causal=True)
    add(dtype="fp32")
    add(dtype="fp32", d=60)
    add(dtype="fp32", d=62)
    add(causal=True)
    add(causal=True, requires_grad=True)
    add(causal=True, nq=64, nk=128)
    add(causal=True, nq=128, nk=64)
    add(nq=1, nk=128)
    add(nq=1, nk=4096)
    add(nq=1, nk=128, d=128)
    add(nq=1, nk=128, requires_grad=True)
    add(nq=1, nk=128, causal=True)
    add(nq=1, nk=1)
    add(nq=128, nk=1)
    add(nq=2, nk=128)
    add(nq=100, nk=200)
    add(nq=4096, nk=4096, heads=16)
    add(mask="bool2d")
    add(mask="float4d")
    add(mask="float_row")
    add(mask="float4d_grad")
    add(mask="bool2d", nq=1)
    add(mask="float4d", d=100)
    add(mask="float4d", requires_grad=True)
    add(dropout=0.1)
    add(dropout=0.125)
    add(dropout=0.5)
    add(dropout=0.125, nq=1)
    add(dropout=0.1, requires_grad=True)
    add(gqa=True, kv_heads=2)
    add(gqa=False, kv_heads=2)
    add(gqa=True, kv_heads=8)
    add(gqa=True, kv_heads=2, d=128, requires_grad=True)
    add(gqa=True, kv_heads=2, nq=1, nk=1024)
    for off in (["cudnn"], ["flash"], ["efficient"], ["math"],
                ["cudnn", "flash"], ["cudnn", "flash", "efficient"],
                ["cudnn", "flash", "efficient", "math"]):
        add(off=off)
    add(off=["cudnn"], d=100)
    add(off=["cudnn", "flash"], d=100)
    add(off=["cudnn"], mask="float4d")
    add(off=["cudnn", "flash"], dtype="fp32")
    add(deterministic=True)
    add(deterministic=True, requires_grad=True)
    add(deterministic=True, d=264)
    add(layout="bnhd")
    add(layout="bnhd", requires_grad=True)
    add(rank=3)
    add(batch=65536, heads=1, kv_heads=1, nq=16, nk=16)
    add(batch=4, heads=32, kv_heads=32, nq=512, nk=512, d=128)
    # cuDNN's decode engines: where the key count switches them
    for nk in (200, 257, 300, 384, 448, 511, 513, 600, 768, 900, 1000,
               1023, 2048):
        add(nq=1, nk=nk)
    for nk in (384, 512, 768, 1024):
        add(nq=1, nk=nk, d=128)
    add(nq=1, nk=512, heads=1, kv_heads=1)
    add(nq=1, nk=512, batch=8, heads=32, kv_heads=32)
    add(nq=1, nk=2048, heads=64, kv_heads=64)
    add(nq=1, nk=768, heads=1, kv_heads=1)
    add(nq=1, nk=300, batch=16, heads=32, kv_heads=32)
    add(nq=1, nk=8192, d=128, heads=32, kv_heads=8, gqa=True)
    return cases


def build(c):
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16,
          "fp32": torch.float32}[c["dtype"]]
    dev = "cuda"

    def t(h, n):
        if c["layout"] == "bnhd":
            x = torch.randn(c["batch"], n, h, c["d"], device=dev, dtype=dt)
            x = x.transpose(1, 2)
        else:
            x = torch.randn(c["batch"], h, n, c["d"], device=dev, dtype=dt)
        if c["rank"] == 3:
            x = x.reshape(c["batch"] * h, n, c["d"])
        return x.requires_grad_(c["requires_grad"])
    q = t(c["heads"], c["nq"])
    k = t(c["kv_heads"], c["nk"])
    v = t(c["kv_heads"], c["nk"])
    m = None
    if c["mask"] == "bool2d":
        m = torch.rand(c["nq"], c["nk"], device=dev) > 0.2
        m[:, 0] = True
    elif c["mask"] in ("float4d", "float4d_grad"):
        m = torch.randn(c["batch"], c["heads"], c["nq"], c["nk"],
                        device=dev, dtype=dt)
        m.requires_grad_(c["mask"] == "float4d_grad")
    elif c["mask"] == "float_row":
        m = torch.randn(1, 1, 1, c["nk"], device=dev, dtype=dt)
    return q, k, v, m


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    from torch.backends import cuda as bc
    setters = {"cudnn": bc.enable_cudnn_sdp, "flash": bc.enable_flash_sdp,
               "efficient": bc.enable_mem_efficient_sdp,
               "math": bc.enable_math_sdp}
    rows = []
    for i, c in enumerate(grid()):
        row = dict(c)
        row["index"] = i
        try:
            q, k, v, m = build(c)
        except Exception as e:
            row["error_build"] = str(e).split("\n")[0][:300]
            rows.append(row)
            continue
        for name in c["off"]:
            setters[name](False)
        torch.use_deterministic_algorithms(c["deterministic"])
        try:
            try:
                row["fused_sdp_choice"] = dump_sdpa.CHOICE_NAMES.get(int(
                    torch._fused_sdp_choice(q, k, v, m, c["dropout"],
                                            c["causal"], scale=None,
                                            enable_gqa=c["gqa"])),
                    "unknown")
            except Exception as e:
                row["fused_sdp_choice"] = "raised: " + str(e).split("\n")[0][:200]
            can = {}
            if c["rank"] == 4:
                try:
                    p = bc.SDPAParams(q, k, v, m, c["dropout"], c["causal"],
                                      c["gqa"])
                    for be, fn in (("flash", bc.can_use_flash_attention),
                                   ("efficient", bc.can_use_efficient_attention),
                                   ("cudnn", bc.can_use_cudnn_attention)):
                        with warnings.catch_warnings(record=True) as w:
                            warnings.simplefilter("always")
                            ok = bool(fn(p, True))
                        can[be] = {"ok": ok, "why": [str(x.message)[:300]
                                                     for x in w]}
                except Exception as e:
                    can["error"] = str(e).split("\n")[0][:300]
            row["can_use"] = can

            def call():
                return F.scaled_dot_product_attention(
                    q, k, v, attn_mask=m, dropout_p=c["dropout"],
                    is_causal=c["causal"], enable_gqa=c["gqa"])
            try:
                launches = []
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    kern = dump_sdpa.kernels_seen(call, launches)
                row["kernels"] = kern
                row["launches"] = [ln for ln in launches
                                   if "elementwise" not in (ln["name"] or "")]
                row["backend_seen"] = dump_sdpa.backend_of_kernels(kern)
                row["run_warnings"] = [str(x.message)[:300] for x in w][:8]
            except Exception as e:
                row["run_error"] = str(e).split("\n")[0][:300]
        finally:
            for name in c["off"]:
                setters[name](True)
            torch.use_deterministic_algorithms(False)
        print(i, {k2: c[k2] for k2 in c if c[k2] != BASE.get(k2)},
              row.get("fused_sdp_choice"), row.get("backend_seen"),
              row.get("run_error", ""), flush=True)
        rows.append(row)
    out = {"producer": "experiments/gpu/probes/sdpa_dispatch_grid.py",
           "gpu": torch.cuda.get_device_name(0),
           "cc": "%d.%d" % torch.cuda.get_device_capability(0),
           "cuda": torch.version.cuda, "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(),
           "cases": rows}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
