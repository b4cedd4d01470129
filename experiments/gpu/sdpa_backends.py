#!/usr/bin/env python3
"""sdpa_backends.py -- PyTorch's four SDPA backends on the same inputs.

usage: sdpa_backends.py [--inputs-gen] OUTDIR [NAME ...]

For each case of CASES: one set of Q, K, V, dO (dump_sdpa.gen_inputs,
the launch shape of the case), then the flash, cuDNN, memory-efficient
and math backends, each pinned, forward (with LSE where the backend
returns it: flash and cuDNN through their aten ops, efficient through
aten._scaled_dot_product_efficient_attention with compute_log_sumexp)
and, where the case asks, the backward (SDPA(...).backward(dO), with
deterministic algorithms off for cuDNN, on for the others).  An FP64
reference is computed on the GPU from the same (exactly converted)
inputs: S = Q K^T / sqrt(d), the causal mask top-left aligned, softmax
and P V in FP64.

Writes OUTDIR/NAME.safetensors with q, k, v (and do) of batch 0, head 0
and, per backend B, "B.o", "B.lse" (FP32, natural log), "B.dq", "B.dk",
"B.dv"; OUTDIR/NAME.json the manifest (launch shape, per backend the
CUDA kernels with grids, the LSE's source), and OUTDIR/compare.json: per
case, over the whole launch (all heads), the share of O elements that
are bit-equal between each pair of backends and, per backend, the
signed bias of O against the FP64 reference (see bias_stats).

With NAMEs, only those cases run.  With --inputs-gen, the cases take
Q, K, V, dO from fixgen.py (dump_sdpa.fixgen_inputs, the case's seed,
the whole launch; sink and repeated-max through the u transform, V's
std 13/32 for 0.4) instead of dump_sdpa.gen_inputs; the
file leaves them out and the manifest's "inputs_gen" describes them
(each hash that of the bits the GPU computed on, read back), as
dump_sdpa.py --inputs-gen does.
"""
import datetime
import json
import os
import sys

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402

BACKENDS = ["flash", "cudnn", "efficient", "math"]
NEG = (-1.5, 0.4)

# name: (batch, heads, nq, nk, d, dtype, causal, gen, repeat, v, seed, bwd)
CASES = [
    ("d64_normal", (1, 8, 64, 256, 64, "bf16", False, "normal", 0, None, 201, False)),
    ("d64_sink", (1, 8, 64, 256, 64, "bf16", False, "sink", 1, NEG, 202, False)),
    ("d64_repmax4", (1, 8, 64, 256, 64, "bf16", False, "repeated-max", 4, NEG, 203, False)),
    ("d64_normal_fp16", (1, 8, 64, 256, 64, "fp16", False, "normal", 0, None, 204, False)),
    ("d64_sink_fp16", (1, 8, 64, 256, 64, "fp16", False, "sink", 1, NEG, 205, False)),
    ("d64_causal_normal", (1, 8, 128, 128, 64, "bf16", True, "normal", 0, None, 206, False)),
    ("d64_causal_sink", (1, 8, 128, 128, 64, "bf16", True, "sink", 1, NEG, 207, False)),
    ("d64_causal_repmax8", (1, 8, 128, 128, 64, "bf16", True, "repeated-max", 8, NEG, 208, False)),
    ("d64_bwd_normal", (1, 8, 64, 64, 64, "bf16", False, "normal", 0, None, 209, True)),
    ("d64_bwd_sink_causal", (1, 8, 64, 64, 64, "bf16", True, "sink", 1, NEG, 210, True)),
    ("d128_normal", (1, 8, 64, 256, 128, "bf16", False, "normal", 0, None, 211, False)),
    ("d128_sink", (1, 8, 64, 256, 128, "bf16", False, "sink", 1, NEG, 212, False)),
    ("d128_repmax4", (1, 8, 64, 256, 128, "bf16", False, "repeated-max", 4, NEG, 213, False)),
    ("d128_normal_fp16", (1, 8, 64, 256, 128, "fp16", False, "normal", 0, None, 214, False)),
    ("d128_causal_normal", (1, 8, 128, 128, 128, "bf16", True, "normal", 0, None, 215, False)),
    ("d128_causal_sink", (1, 8, 128, 128, 128, "bf16", True, "sink", 1, NEG, 216, False)),
    ("d128_causal_repmax4_fp16", (1, 8, 128, 128, 128, "fp16", True, "repeated-max", 4, NEG, 217, False)),
    ("d128_bwd_normal", (1, 8, 64, 64, 128, "bf16", False, "normal", 0, None, 218, True)),
    ("decode_d64_nk512", (2, 8, 1, 512, 64, "bf16", False, "normal", 0, None, 219, False)),
    ("decode_d64_nk512_sink", (2, 8, 1, 512, 64, "bf16", False, "sink", 1, NEG, 220, False)),
    ("decode_d128_nk256", (2, 8, 1, 256, 128, "bf16", False, "normal", 0, None, 221, False)),
    ("decode_d64_nk512_fp16", (2, 8, 1, 512, 64, "fp16", False, "normal", 0, None, 222, False)),
    ("d64_nq100_nk200", (1, 8, 100, 200, 64, "bf16", False, "normal", 0, None, 223, False)),
    ("d128_nq64_nk129_repmax2", (1, 8, 64, 129, 128, "bf16", False, "repeated-max", 2, NEG, 224, False)),
]


def reference(q, k, v, causal):
    """O and LSE in FP64 on the GPU (scale 1/sqrt(d), causal top-left)."""
    qd, kd, vd = q.double(), k.double(), v.double()
    s = qd @ kd.transpose(-1, -2) / (q.shape[-1] ** 0.5)
    if causal:
        nq, nk = s.shape[-2], s.shape[-1]
        keep = torch.ones(nq, nk, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.softmax(s, dim=-1) @ vd, lse


def bf16_ulp(x, dt):
    """The spacing of DT's numbers at |X| (FP64 tensor; normal range)."""
    mant = 7 if dt == torch.bfloat16 else 10
    e = torch.floor(torch.log2(x.abs().clamp_min(2.0 ** -126)))
    return torch.pow(2.0, e - mant)


def bias_stats(o, ref, dt):
    """Signed error of O (BF16/FP16) against the FP64 reference REF:
    mean of (O - REF) computed in FP64 over every element, the same in
    units of the output format's ulp at REF, the share equal to REF
    rounded to the output format (FP64 -> FP32 -> format, RNE), and the
    mean error of that rounded reference itself (the rounding's own
    bias, for comparison)."""
    od = o.double()
    err = od - ref
    ulp = bf16_ulp(ref, dt)
    rn = ref.float().to(dt).double()
    return {"n": err.numel(),
            "mean_err": float(err.mean()),
            "mean_err_ulps": float((err / ulp).mean()),
            "mean_abs_err_ulps": float((err / ulp).abs().mean()),
            "max_abs_err_ulps": float((err / ulp).abs().max()),
            "pos": int((err > 0).sum()), "neg": int((err < 0).sum()),
            "share_equal_rn_ref": float((od == rn).double().mean()),
            "rn_ref_mean_err_ulps": float(((rn - ref) / ulp).mean())}


def run_backend(be, q, k, v, do, causal, bwd):
    """One backend on device tensors: (o, lse or None, grads or None,
    forward launches, forward kernels, backward kernels)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    pin = {"flash": SDPBackend.FLASH_ATTENTION,
           "cudnn": SDPBackend.CUDNN_ATTENTION,
           "efficient": SDPBackend.EFFICIENT_ATTENTION,
           "math": SDPBackend.MATH}[be]
    torch.use_deterministic_algorithms(be != "cudnn")
    nq = q.shape[2]
    qg, kg, vg = (t.detach().clone().requires_grad_(bwd) for t in (q, k, v))

    def forward():
        with torch.no_grad():
            if be == "flash":
                r = torch.ops.aten._scaled_dot_product_flash_attention(
                    qg, kg, vg, 0.0, causal, False)
                return r[0], r[1]
            if be == "cudnn":
                r = torch.ops.aten._scaled_dot_product_cudnn_attention(
                    qg, kg, vg, None, True, 0.0, causal, False)
                return r[0], r[1]
            if be == "efficient":
                r = torch.ops.aten._scaled_dot_product_efficient_attention(
                    qg, kg, vg, None, True, 0.0, causal)
                return r[0], r[1][:, :, :nq]
            with sdpa_kernel(pin):
                return torch.nn.functional.scaled_dot_product_attention(
                    qg, kg, vg, is_causal=causal), None

    launches = []
    kernels = dump_sdpa.kernels_seen(forward, launches)
    o, lse = forward()
    if lse is not None:  # cuDNN's may carry a trailing dimension of 1
        lse = lse.reshape(q.shape[0], q.shape[1], nq)
    grads, bkern = None, []
    if bwd:
        def backward():
            for t in (qg, kg, vg):
                t.grad = None
            with sdpa_kernel(pin):
                o2 = torch.nn.functional.scaled_dot_product_attention(
                    qg, kg, vg, is_causal=causal)
            o2.backward(do)
        bkern = dump_sdpa.kernels_seen(backward)
        backward()
        grads = (qg.grad.detach(), kg.grad.detach(), vg.grad.detach())
    torch.cuda.synchronize()
    return o.detach(), lse, grads, launches, kernels, bkern


def run_case(name, spec, out, inputs_gen=False):
    b, h, nq, nk, d, dts, causal, gen, rep, vv, seed, bwd = spec
    dt = torch.bfloat16 if dts == "bf16" else torch.float16
    vm, vs = vv if vv else (0.0, 1.0)
    entries = None
    if inputs_gen:
        if gen != "normal":  # 0.4 is not dyadic
            vs = dump_sdpa.SINK_V_STD
        q, k, v, do, entries = dump_sdpa.fixgen_inputs(
            b, h, nq, nk, d, dt, seed, vm, vs, gen, max(rep, 1))
    else:
        q, k, v, do = dump_sdpa.gen_inputs(b, h, nq, nk, d, dt, seed, gen,
                                           max(rep, 1), vm, vs)
    dev = torch.device("cuda")
    qc, kc, vc, doc = (t.to(dev) for t in (q, k, v, do))
    ref, lse_ref = reference(qc, kc, vc, causal)
    res, man_be, tensors = {}, {}, {}
    for be in BACKENDS:
        try:
            res[be] = run_backend(be, qc, kc, vc, doc, causal, bwd)
        except Exception as e:  # a backend the build or shape lacks
            man_be[be] = {"error": str(e).split("\n")[0][:300]}
            print("  %s failed: %s" % (be, man_be[be]["error"]), flush=True)
    cmp = {"pairs": {}, "bias": {}, "lse": {}}
    names = [be for be in BACKENDS if be in res]
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            eq = (res[x][0].view(torch.int16) == res[y][0].view(torch.int16))
            cmp["pairs"][x + "-" + y] = float(eq.double().mean())
            if bwd and res[x][2] is not None and res[y][2] is not None:
                for gi, gn in enumerate(("dq", "dk", "dv")):
                    e2 = (res[x][2][gi].view(torch.int16)
                          == res[y][2][gi].view(torch.int16))
                    cmp["pairs"][x + "-" + y + "." + gn] = float(
                        e2.double().mean())
        cmp["bias"][x] = bias_stats(res[x][0], ref, dt)
        if res[x][1] is not None:
            dl = res[x][1].double() - lse_ref
            cmp["lse"][x] = {"mean_err": float(dl.mean()),
                             "max_abs_err": float(dl.abs().max())}
    igen = None
    if entries is not None:
        on_gpu = {"q": qc, "k": kc, "v": vc}
        if bwd:
            on_gpu["do"] = doc
        igen = dump_sdpa.inputs_gen_of(seed, entries, on_gpu,
                                       {"q": q, "k": k, "v": v, "do": do})
        tensors = {}
    else:
        tensors = {"q": q[:1, :1], "k": k[:1, :1], "v": v[:1, :1]}
        if bwd:
            tensors["do"] = do[:1, :1]
    for be in names:
        o, lse, grads, launches, kern, bkern = res[be]
        tensors[be + ".o"] = o[:1, :1].cpu()
        if lse is not None:
            tensors[be + ".lse"] = lse[:1, :1].float().cpu()
        if grads is not None:
            for gn, g in zip(("dq", "dk", "dv"), grads):
                tensors[be + "." + gn] = g[:1, :1].cpu()
        man_be[be] = {
            "forward_kernels": kern, "forward_launches": launches,
            "backward_kernels": bkern,
            "backend_seen": dump_sdpa.backend_of_kernels(kern),
            "lse": {"flash": "aten._scaled_dot_product_flash_attention",
                    "cudnn": "aten._scaled_dot_product_cudnn_attention "
                    "(compute_log_sumexp)",
                    "efficient": "aten._scaled_dot_product_efficient_"
                    "attention (compute_log_sumexp; padded rows cut)",
                    "math": None}[be],
            "deterministic": be != "cudnn",
            "causal_alignment": None if not causal else (
                "bottom-right (flash op)" if be == "flash" else "top-left")}
    tensors = {n: t.contiguous() for n, t in tensors.items()}
    man = {
        "producer": "experiments/gpu/sdpa_backends.py",
        "gpu": torch.cuda.get_device_name(0),
        "cc": "%d.%d" % torch.cuda.get_device_capability(0),
        "cuda": torch.version.cuda, "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "dtype": {"bf16": "bfloat16", "fp16": "float16"}[dts],
        "launch_shape": {"batch": b, "heads": h, "nq": nq, "nk": nk, "d": d},
        "shape": {"batch": 1, "heads": 1, "nq": nq, "nk": nk, "d": d},
        "batch_from": 0, "heads_from": [0],
        "causal": causal, "scale": "1/sqrt(d) (PyTorch default)",
        "gen": gen, "repeat": rep, "v_mean": vm, "v_std": vs, "seed": seed,
        "inputs": "dump_sdpa.gen_inputs (torch.randn on a CPU generator)"
        if igen is None else
        "experiments/gpu/fixgen.py (inputs_gen; not stored)",
        "backward_op": "scaled_dot_product_attention(...).backward(do), "
        "backend pinned" if bwd else None,
        "backends": man_be,
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tensors": {n: [str(t.dtype).replace("torch.", ""), list(t.shape)]
                    for n, t in tensors.items()},
    }
    if igen is not None:
        man["inputs_gen"] = igen
    path = os.path.join(out, name + ".safetensors")
    save_file(tensors, path, metadata={"manifest": json.dumps(man)})
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")
    print("  %d bytes; equal %s" % (os.path.getsize(path), json.dumps(
        {p: round(x, 4) for p, x in cmp["pairs"].items() if "." not in p})),
        flush=True)
    return cmp


def main():
    inputs_gen, out, only = dump_sdpa.case_args(sys.argv[1:], __doc__)
    os.makedirs(out, exist_ok=True)
    allcmp = {}
    for name, spec in CASES:
        if only and name not in only:
            continue
        print(name, flush=True)
        try:
            allcmp[name] = run_case(name, spec, out, inputs_gen)
        except Exception as e:
            print("  case failed: %s" % e, flush=True)
    with open(os.path.join(out, "compare.json"), "w") as f:
        json.dump(allcmp, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
