#!/usr/bin/env python3
"""jax_cudnn.py -- JAX's cuDNN attention against PyTorch's cuDNN backend
on the same inputs.

usage: jax_cudnn.py OUTDIR

For each case of CASES: Q, K, V from torch.randn on a seeded CPU
generator (in that order, rounded to BF16 by PyTorch's CPU conversion;
K and V with their own Hkv heads), then

  - PyTorch: scaled_dot_product_attention on the GPU with the cuDNN
    backend pinned (torch.nn.attention.sdpa_kernel), O ("torch.o") and
    the LSE of aten._scaled_dot_product_cudnn_attention called with the
    same arguments ("torch.lse"; stored when its O equals SDPA's);
  - JAX: jax.nn.dot_product_attention(..., implementation="cudnn") on
    the same bits (passed as 16-bit integers and bit-cast to
    jnp.bfloat16 on the device, [B, T, N, H] as JAX takes them), O
    ("jax.o", back in [B, H, N, d]);

and records whether the two O tensors are bit-equal and how many
elements differ.  Windowed cases give JAX local_window_size and PyTorch
the same window as a boolean mask (what a PyTorch model passes): those
two calls need not run the same cuDNN graph, and the comparison says
whether they did.

Writes OUTDIR/NAME.safetensors (q, k, v, torch.o, torch.lse, jax.o;
a windowed case also attn_mask, PyTorch's boolean mask)
with the manifest as metadata "manifest" (GPU, versions, launch_shape
with kv_heads, causal and its alignment, scale, window, the comparison)
and OUTDIR/NAME.json, and OUTDIR/summary.json.  JAX's version and
backend are recorded; a case JAX or PyTorch refuses records the error.
"""
import datetime
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

import jax
import jax.numpy as jnp

# name: (B, Hq, Hkv, N, d, causal, scale or None, window or None)
CASES = {
    "jax_d64_plain": (1, 8, 8, 256, 64, False, None, None),
    "jax_d64_causal_scale": (1, 8, 8, 256, 64, True, 0.1, None),
    "jax_d128_gqa4_causal": (1, 8, 2, 256, 128, True, None, None),
    "jax_d64_window32": (1, 4, 4, 256, 64, True, None, 32),
    "jax_d64_window128_n1024": (1, 2, 2, 1024, 64, True, None, 128),
    "jax_d128_gqa4_window64": (1, 8, 2, 512, 128, True, None, 64),
}


def inputs(b, hq, hkv, n, d, seed):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, hq, n, d, generator=g).to(torch.bfloat16)
    k = torch.randn(b, hkv, n, d, generator=g).to(torch.bfloat16)
    v = torch.randn(b, hkv, n, d, generator=g).to(torch.bfloat16)
    return q, k, v


def window_mask(n, w, dev):
    i = torch.arange(n, device=dev)[:, None]
    j = torch.arange(n, device=dev)[None, :]
    return (j <= i) & (j > i - w)


def torch_side(q, k, v, causal, scale, window):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = torch.device("cuda")
    qd, kd, vd = q.to(dev), k.to(dev), v.to(dev)
    gqa = kd.shape[1] != qd.shape[1]
    mask = None
    if window is not None:
        mask = window_mask(qd.shape[2], window, dev)
        causal = False
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        o = F.scaled_dot_product_attention(qd, kd, vd, attn_mask=mask,
                                           is_causal=causal, scale=scale,
                                           enable_gqa=gqa)
    lse = None
    if mask is None and not gqa:
        try:
            r = torch.ops.aten._scaled_dot_product_cudnn_attention(
                qd, kd, vd, None, True, 0.0, causal, False, scale=scale)
            if torch.equal(r[0].view(torch.int16), o.view(torch.int16)):
                lse = r[1].float().reshape(o.shape[:3]).cpu()
        except Exception as e:  # recorded, not fatal
            lse = "error: %s" % str(e).split("\n")[0][:200]
    torch.cuda.synchronize()
    return o.cpu(), lse


def to_jax(t):
    """A BF16 torch tensor [B, H, N, d] as a JAX bfloat16 [B, N, H, d]."""
    bits = t.transpose(1, 2).contiguous().view(torch.int16).numpy()
    return jax.lax.bitcast_convert_type(jnp.asarray(bits), jnp.bfloat16)


def jax_side(q, k, v, causal, scale, window):
    kw = {"is_causal": causal, "implementation": "cudnn"}
    if scale is not None:
        kw["scale"] = scale
    if window is not None:
        kw["local_window_size"] = (window - 1, 0)
    o = jax.nn.dot_product_attention(to_jax(q), to_jax(k), to_jax(v), **kw)
    bits = np.asarray(jax.lax.bitcast_convert_type(o, jnp.int16))
    return torch.from_numpy(bits.copy()).view(torch.bfloat16).transpose(
        1, 2).contiguous()


def versions():
    p = torch.cuda.get_device_properties(0)
    return {"gpu": p.name, "cc": "%d.%d" % (p.major, p.minor),
            "sms": p.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "jax": jax.__version__,
            "jax_backend": jax.default_backend(),
            "jax_devices": [str(x) for x in jax.devices()]}


def run_case(name, spec, outdir, ver, seed):
    b, hq, hkv, n, d, causal, scale, window = spec
    q, k, v = inputs(b, hq, hkv, n, d, seed)
    man = dict(ver)
    man.update({
        "producer": "experiments/gpu/jax_cudnn.py",
        "dtype": "bfloat16",
        "launch_shape": {"batch": b, "heads": hq, "kv_heads": hkv,
                         "nq": n, "nk": n, "d": d},
        "shape": {"batch": b, "heads": hq, "nq": n, "nk": n, "d": d},
        "causal": causal and window is None,
        "causal_alignment": "top-left" if causal else None,
        "scale": scale if scale is not None
        else "1/sqrt(d) (PyTorch default)",
        "seed": seed,
        "date": datetime.date.today().isoformat(),
    })
    if window is not None:
        man["window"] = {"size": window, "jax": "local_window_size=(%d, 0)"
                         % (window - 1),
                         "torch": "boolean attn_mask, key j for query i "
                                  "when i - %d < j <= i" % window}
    tensors = {"q": q, "k": k, "v": v}
    if window is not None:
        # the mask PyTorch was given, so bf16emu diff applies it as cuDNN
        # does (JAX's own window must give the same bits)
        tensors["attn_mask"] = window_mask(n, window, "cpu")[None, None]
        man["attn_mask"] = {"kind": "window", "window": window,
                            "rule": "key j takes part for query i when "
                                    "i - window < j <= i",
                            "dtype": "bool", "shape": [1, 1, n, n],
                            "stored": "attn_mask (the whole call's mask)",
                            "stored_as": "BOOL"}
    to = tl = jo = None
    try:
        to, tl = torch_side(q, k, v, causal, scale, window)
        tensors["torch.o"] = to
        if isinstance(tl, torch.Tensor):
            tensors["torch.lse"] = tl
        elif tl is not None:
            man["torch_lse_error"] = tl
    except Exception as e:
        man["torch_error"] = str(e).split("\n")[0][:300]
    try:
        jo = jax_side(q, k, v, causal, scale, window)
        tensors["jax.o"] = jo
    except Exception as e:
        man["jax_error"] = str(e).split("\n")[0][:300]
    if to is not None and jo is not None:
        diff = int((to.view(torch.int16) != jo.view(torch.int16)).sum())
        man["jax_vs_torch"] = {"o_bit_equal": diff == 0,
                               "o_elements_differ": diff,
                               "o_elements": to.numel()}
    path = os.path.join(outdir, name + ".safetensors")
    save_file({key: t.contiguous() for key, t in tensors.items()}, path,
              metadata={"manifest": json.dumps(man)})
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(man, f, indent=1)
    return {key: man.get(key) for key in ("jax_vs_torch", "torch_error",
                                          "jax_error", "torch_lse_error")}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    ver = versions()
    summary = {"versions": ver, "cases": {}}
    for i, (name, spec) in enumerate(CASES.items()):
        summary["cases"][name] = run_case(name, spec, outdir, ver, 1000 + i)
        print(name, json.dumps(summary["cases"][name]), flush=True)
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
