#!/usr/bin/env python3
"""sdpa_math_more.py -- the math SDPA backend's backward and its decode
(Nq = 1) products, for the emulator's `math` description.

usage: sdpa_math_more.py [--inputs-gen] OUTDIR [NAME ...]

Writes, all from one process on one GPU:

- OUTDIR/dumps/NAME.safetensors and NAME.json, in the format of
  sdpa_backends.py with the math backend alone:
  * math_bwd_*: q, k, v, do, math.o, math.dq, math.dk, math.dv of batch
    0, head 0, the backward being SDPA(...).backward(do) with the math
    backend pinned and deterministic algorithms on; the manifest lists the
    forward's and the backward's kernels (profiled apart) and, where the
    profiler links them, the kernels of each aten op.
  * decode_order_{s,pv}_*: Nq = 1 launches whose inputs are crafted so
    that the order of the gemv kernels' sums shows in O: "s" takes
    Q = 1 and rows of K holding +2^24 and -2^24 among normal values
    (scale 1/4, so that sqrt(scale) = 1/2 is exact and the products are
    exact), "pv" takes Q = 0 (every P = 1/Nk exactly) and columns of V
    holding +2^30 and -2^30 among normal values.
- OUTDIR/stages.safetensors: every aten op's FP32 output (batch 0,
  head 0) of the backward launches and of the decode_order launches,
  keyed NAME/IDX.OP (the op list in report.json).
- OUTDIR/decode_grid.safetensors: for a grid of decode shapes (d, Nk) with
  normal inputs, q, k, v (head 0) and the FP32 S, P and P V.
- OUTDIR/report.json: op lists, kernels per shape, timings.

With NAMEs (of math_bwd_* cases), only those backward dumps are made
(their stages included; no decode_order dumps, no decode grid).  With
--inputs-gen, the math_bwd_* cases take Q, K, V, dO from fixgen.py
(dump_sdpa.fixgen_inputs, the case's seed, the whole launch; the sink
case through the u transform, V's std 13/32 for 0.4) instead of dump_sdpa.gen_inputs; the dump leaves them out and
its manifest's "inputs_gen" describes them (each hash that of the bits
the GPU computed on, read back).
"""
import datetime
import json
import os
import sys
import time

import torch
from safetensors.torch import save_file
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
for p in (os.path.join(HERE, ".."),
          os.path.join(os.getcwd(), "experiments", "gpu")):
    if p not in sys.path:
        sys.path.insert(0, p)
import dump_sdpa  # noqa: E402

T0 = time.time()


def log(*a):
    print("[%6.1f]" % (time.time() - T0), *a, flush=True)


class Rec(TorchDispatchMode):
    """Every aten op: its name, argument shapes and strides, and its
    output's batch-0, head-0 matrix (when at most LIMIT elements)."""

    VIEWS = {"view", "_unsafe_view", "expand", "transpose", "t", "permute",
             "as_strided", "reshape", "alias", "detach", "unsqueeze",
             "squeeze", "select", "slice", "_reshape_alias", "clone",
             "contiguous", "empty_like", "zeros_like", "ones_like"}

    def __init__(self, limit=1 << 20, rows_only=False):
        super().__init__()
        self.ops = []
        self.limit = limit
        self.rows_only = rows_only

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        o = out[0] if isinstance(out, (tuple, list)) else out
        info = {"op": str(func),
                "args": [repr(a) if not isinstance(a, torch.Tensor)
                         else "T%s%s%s" % (str(a.dtype)[6:], list(a.shape),
                                           list(a.stride()))
                         for a in args]}
        if isinstance(o, torch.Tensor):
            info["out"] = "T%s%s%s" % (str(o.dtype)[6:], list(o.shape),
                                       list(o.stride()))
            t = o
            while t.dim() > 2:
                t = t[0]
            base = str(func).split(".")[1] if "." in str(func) else str(func)
            if (t.dim() == 2 and t.numel() <= self.limit
                    and t.dtype == torch.float32 and base not in self.VIEWS
                    and (not self.rows_only or t.shape[0] == 1)):
                info["keep"] = t.detach().contiguous().clone()
        self.ops.append(info)
        return out


def profiled(fn):
    """(kernel names, {aten op: [kernel names]}) of FN."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events()
                    if e.device_type == torch.autograd.DeviceType.CUDA})
    per_op = []
    try:
        for e in prof.events():
            ks = getattr(e, "kernels", None)
            if e.device_type == torch.autograd.DeviceType.CPU and ks:
                per_op.append([e.name, [k.name for k in ks]])
            if e.device_type == torch.autograd.DeviceType.CUDA:
                par, chain = getattr(e, "cpu_parent", None), []
                while par is not None and len(chain) < 6:
                    chain.append(par.name)
                    par = getattr(par, "cpu_parent", None)
                if chain:
                    per_op.append([" < ".join(chain), [e.name]])
    except Exception as ex:  # the profiler's linking is best effort
        per_op.append(["error", [str(ex)[:200]]])
    return names, per_op


def keep_ops(rec, name, store):
    ops = []
    for i, info in enumerate(rec.ops):
        t = info.pop("keep", None)
        if t is not None and t.dtype == torch.float32:
            key = "%s/%02d.%s" % (name, i, info["op"].replace("aten.", ""))
            store[key] = t.cpu()
            info["key"] = key
        ops.append(info)
    return ops


def manifest(name, dt, b, h, nq, nk, d, causal, scale, gen, seed, fk, fl,
             bk, per_op, bwd, tensors, extra=None):
    man = {
        "producer": "experiments/gpu/probes/sdpa_math_more.py",
        "gpu": torch.cuda.get_device_name(0),
        "cc": "%d.%d" % torch.cuda.get_device_capability(0),
        "cuda": torch.version.cuda, "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "dtype": {torch.bfloat16: "bfloat16", torch.float16: "float16"}[dt],
        "launch_shape": {"batch": b, "heads": h, "nq": nq, "nk": nk, "d": d},
        "shape": {"batch": 1, "heads": 1, "nq": nq, "nk": nk, "d": d},
        "batch_from": 0, "heads_from": [0],
        "causal": causal,
        "scale": scale if scale is not None else "1/sqrt(d) (PyTorch default)",
        "gen": gen, "seed": seed,
        "backward_op": "scaled_dot_product_attention(...).backward(do), "
        "math backend pinned" if bwd else None,
        "backends": {"math": {
            "forward_kernels": fk, "forward_launches": fl,
            "backward_kernels": bk, "kernels_per_op": per_op,
            "backend_seen": dump_sdpa.backend_of_kernels(fk),
            "lse": None, "deterministic": True,
            "causal_alignment": "top-left" if causal else None}},
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tensors": {n: [str(t.dtype).replace("torch.", ""), list(t.shape)]
                    for n, t in tensors.items()},
    }
    if extra:
        man.update(extra)
    return man


def save_dump(out, name, tensors, man):
    tensors = {n: t.contiguous() for n, t in tensors.items()}
    save_file(tensors, os.path.join(out, name + ".safetensors"),
              metadata={"manifest": json.dumps(man)})
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")


def sdpa(q, k, v, causal, scale):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.MATH):
        return torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=scale)


# name, batch, heads, nq, nk, d, dtype, causal, generator, seed, keep stages
BWD = [
    ("math_bwd_d64_n128", 1, 4, 128, 128, 64, "bf16", False, "normal", 301, True),
    ("math_bwd_d64_n128_causal", 1, 4, 128, 128, 64, "bf16", True, "normal", 302, True),
    ("math_bwd_d128_n128", 1, 4, 128, 128, 128, "bf16", False, "normal", 303, True),
    ("math_bwd_d128_n128_causal", 1, 4, 128, 128, 128, "bf16", True, "normal", 304, True),
    ("math_bwd_d64_nq100_nk200", 1, 4, 100, 200, 64, "bf16", False, "normal", 305, True),
    ("math_bwd_d64_nq48_nk12", 1, 4, 48, 12, 64, "bf16", False, "normal", 306, True),
    ("math_bwd_d64_n128_fp16", 1, 4, 128, 128, 64, "fp16", False, "normal", 307, True),
    ("math_bwd_d64_n128_sink_causal", 1, 4, 128, 128, 64, "bf16", True, "sink", 308, True),
    ("math_bwd_d64_n512", 1, 2, 512, 512, 64, "bf16", False, "normal", 309, False),
    ("math_bwd_d128_nq256_nk1024", 1, 2, 256, 1024, 128, "bf16", False, "normal", 310, False),
]


def run_bwd(spec, dumps, stages, report, inputs_gen=False):
    name, b, h, nq, nk, d, dts, causal, gen, seed, keep = spec
    dt = torch.bfloat16 if dts == "bf16" else torch.float16
    entries = None
    if inputs_gen:
        q, k, v, do, entries = dump_sdpa.fixgen_inputs(
            b, h, nq, nk, d, dt, seed, -1.5 if gen != "normal" else 0.0,
            dump_sdpa.SINK_V_STD if gen != "normal" else 1.0, gen, 1)
    else:
        q, k, v, do = dump_sdpa.gen_inputs(b, h, nq, nk, d, dt, seed, gen,
                                           1,
                                           -1.5 if gen != "normal" else 0.0,
                                           0.4 if gen != "normal" else 1.0)
    dev = torch.device("cuda")
    qg, kg, vg = (t.to(dev).requires_grad_(True) for t in (q, k, v))
    doc = do.to(dev)

    def fwd():
        with torch.no_grad():
            return sdpa(qg, kg, vg, causal, None)

    fk, _ = profiled(fwd)
    fl = []
    dump_sdpa.kernels_seen(fwd, fl)
    o = sdpa(qg, kg, vg, causal, None)

    def bwd():
        o.backward(doc, retain_graph=True)

    bk, per_op = profiled(bwd)
    for t in (qg, kg, vg):
        t.grad = None
    rec = Rec(limit=(1 << 20) if keep else 0)
    with rec:
        o2 = sdpa(qg, kg, vg, causal, None)
        o2.backward(doc)
    torch.cuda.synchronize()
    same_o = bool((o2.view(torch.int16) == o.view(torch.int16)).all())
    ops = keep_ops(rec, name, stages)
    tensors = {"q": q[:1, :1], "k": k[:1, :1], "v": v[:1, :1],
               "do": do[:1, :1], "math.o": o2[:1, :1].detach().cpu(),
               "math.dq": qg.grad[:1, :1].cpu(),
               "math.dk": kg.grad[:1, :1].cpu(),
               "math.dv": vg.grad[:1, :1].cpu()}
    extra = {"inputs": "dump_sdpa.gen_inputs (torch.randn on a CPU "
             "generator)", "repeat": 1,
             "v_mean": -1.5 if gen != "normal" else 0.0,
             "v_std": 0.4 if gen != "normal" else 1.0}
    if entries is not None:
        extra["inputs"] = "experiments/gpu/fixgen.py (inputs_gen; not stored)"
        extra["v_std"] = entries["v"]["std"]
        extra["inputs_gen"] = dump_sdpa.inputs_gen_of(
            seed, entries, {"q": qg, "k": kg, "v": vg, "do": doc},
            {"q": q, "k": k, "v": v, "do": do})
        for x in ("q", "k", "v", "do"):
            del tensors[x]
    man = manifest(name, dt, b, h, nq, nk, d, causal, None, gen, seed, fk, fl,
                   bk, per_op, True, tensors, extra)
    save_dump(dumps, name, tensors, man)
    report["bwd"][name] = {"ops": ops, "o_repeat_equal": same_o,
                           "forward_kernels": fk, "backward_kernels": bk,
                           "kernels_per_op": per_op}
    log(name, "done; gemm kernels:",
        sorted({x for x in bk if "gemm" in x or "gemv" in x}))


def crafted(kind, d, nk, seed, dt):
    """Q, K, V (B 2, H 8) for decode_order_KIND."""
    g = torch.Generator().manual_seed(seed)
    b, h = 2, 8
    small = torch.randn(b, h, nk, d, generator=g)
    if kind == "s":
        q = torch.ones(b, h, 1, d)
        k = small.clone()
        big = float(2 ** 24)
        for j in range(nk):
            perm = torch.randperm(d, generator=g)
            k[:, :, j, perm[0]] = big
            k[:, :, j, perm[1]] = -big
        v = torch.randn(b, h, nk, d, generator=g)
    else:
        q = torch.zeros(b, h, 1, d)
        k = torch.randn(b, h, nk, d, generator=g)
        v = small.clone()
        big = float(2 ** 30)
        for c in range(d):
            perm = torch.randperm(nk, generator=g)
            v[:, :, perm[0], c] = big
            v[:, :, perm[1], c] = -big
    return q.to(dt), k.to(dt), v.to(dt)


ORDER = [("s", 64, 512, 401), ("pv", 64, 512, 402),
         ("s", 128, 256, 403), ("pv", 128, 256, 404)]


def run_order(spec, dumps, stages, report):
    kind, d, nk, seed = spec
    name = "decode_order_%s_d%d_nk%d" % (kind, d, nk)
    dt = torch.bfloat16
    q, k, v = crafted(kind, d, nk, seed, dt)
    dev = torch.device("cuda")
    qc, kc, vc = (t.to(dev) for t in (q, k, v))

    def fwd():
        with torch.no_grad():
            return sdpa(qc, kc, vc, False, 0.25)

    fk, per_op = profiled(fwd)
    fl = []
    dump_sdpa.kernels_seen(fwd, fl)
    rec = Rec(rows_only=True)
    with rec, torch.no_grad():
        o = sdpa(qc, kc, vc, False, 0.25)
    torch.cuda.synchronize()
    ops = keep_ops(rec, name, stages)
    tensors = {"q": q[:1, :1], "k": k[:1, :1], "v": v[:1, :1],
               "math.o": o[:1, :1].cpu()}
    man = manifest(name, dt, 2, 8, 1, nk, d, False, 0.25, "crafted-" + kind,
                   seed, fk, fl, [], per_op, False, tensors,
                   {"inputs": "sdpa_math_more.crafted (torch.randn on a CPU "
                    "generator; see the module docstring)"})
    save_dump(dumps, name, tensors, man)
    report["order"][name] = {"ops": ops, "forward_kernels": fk,
                             "kernels_per_op": per_op}
    log(name, "done;", [x[:90] for x in fk if "gemv" in x or "gemm" in x])


def run_grid(grid, report):
    """Decode shapes: the gemv kernels, and (GRID_KEEP) inputs and FP32
    stages."""
    dev = torch.device("cuda")
    out = {}
    for d in (64, 128, 32, 256, 96):
        for nk in (16, 64, 128, 200, 256, 512, 1024, 2048, 8192):
            if time.time() - T0 > 100:
                log("grid: out of time at", d, nk)
                report["grid_cut"] = [d, nk]
                report["grid"] = out
                return
            for bh in ((2, 8), (1, 1), (4, 32)):
                keep = bh == (2, 8) and nk in (64, 128, 256, 512, 1024, 2048)
                if bh != (2, 8) and nk != 512:
                    continue
                name = "d%d_nk%d_b%dh%d" % (d, nk, bh[0], bh[1])
                q, k, v, _ = dump_sdpa.gen_inputs(bh[0], bh[1], 1, nk, d,
                                                  torch.bfloat16,
                                                  1000 + d + nk, "normal")
                qc, kc, vc = (t.to(dev) for t in (q, k, v))

                def fwd():
                    with torch.no_grad():
                        return sdpa(qc, kc, vc, False, None)

                fk, _ = profiled(fwd)
                gem = [x for x in fk if "gemv" in x or "gemm" in x
                       or "Gemv" in x or "dot" in x.lower()]
                out[name] = gem
                if keep:
                    rec = Rec(rows_only=True)
                    with rec, torch.no_grad():
                        o = sdpa(qc, kc, vc, False, None)
                    torch.cuda.synchronize()
                    grid[name + "/q"] = q[0, 0].contiguous()
                    grid[name + "/k"] = k[0, 0].contiguous()
                    grid[name + "/v"] = v[0, 0].contiguous()
                    grid[name + "/o"] = o[0, 0].cpu().contiguous()
                    ops = keep_ops(rec, name, grid)
                    out[name + ":ops"] = [(x["op"], x.get("key")) for x in ops]
        log("grid d", d, "done")
    report["grid"] = out


def main():
    inputs_gen, out, only = dump_sdpa.case_args(sys.argv[1:], __doc__)
    dumps = os.path.join(out, "dumps")
    os.makedirs(dumps, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.use_deterministic_algorithms(True)
    report = {"bwd": {}, "order": {}, "torch": torch.__version__,
              "cuda": torch.version.cuda,
              "gpu": torch.cuda.get_device_name(0)}
    stages, grid = {}, {}
    for spec in BWD:
        if only and spec[0] not in only:
            continue
        try:
            run_bwd(spec, dumps, stages, report, inputs_gen)
        except Exception as e:
            log(spec[0], "failed:", repr(e)[:300])
            report["bwd"][spec[0]] = {"error": repr(e)[:300]}
    for spec in ORDER if not only else []:
        try:
            run_order(spec, dumps, stages, report)
        except Exception as e:
            log(spec, "failed:", repr(e)[:300])
    save_file(stages, os.path.join(out, "stages.safetensors"))
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    if only:
        log("all done")
        return
    try:
        run_grid(grid, report)
    except Exception as e:
        log("grid failed:", repr(e)[:300])
    save_file(grid, os.path.join(out, "decode_grid.safetensors"))
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    log("all done")


if __name__ == "__main__":
    main()
