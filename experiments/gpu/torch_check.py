#!/usr/bin/env python3
"""torch_check.py -- the Python package on real PyTorch tensors: SDPA's
output and gradients on the GPU against bf16emu.attention on the same
torch tensors, with no file in between.

usage: torch_check.py [OUT.json]

For each case of CASES (BF16 and FP16, causal and not, d 64 and 128,
grouped heads) and each backend (FLASH, cuDNN, memory-efficient, math,
pinned with torch.nn.attention.sdpa_kernel), with deterministic
algorithms off and then on: Q, K, V, dO from torch.randn on a seeded CPU
generator, moved to the GPU; scaled_dot_product_attention forward and
backward twice ("gpu_repeat_*": elements of O, dQ, dK, dV that differ
between the two identical calls); then bf16emu.attention(q, k, v,
KERNEL, causal=..., backward=True, do=dO) on the CUDA tensors themselves
(the package reads their bits) and the elements of each output that
differ from the GPU's ("*_diff" of "*_n").  A backend that refuses the
call records PyTorch's message.  Prints the results as JSON (and writes
them to OUT.json when given).  Needs torch with CUDA and the built
package on PYTHONPATH; the exp/log tables come from $BF16EMU_EX2_TABLE
and the others, as the package reads them.
"""
import json
import os
import sys

# deterministic algorithms need a fixed cuBLAS workspace (the math backend)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import bf16emu  # noqa: E402

CASES = [
    # name, dtype, B, H, Hkv, Nq, Nk, d, causal
    ("bf16_causal_d64", torch.bfloat16, 1, 4, 4, 256, 256, 64, True),
    ("bf16_d128_b2", torch.bfloat16, 2, 2, 2, 128, 384, 128, False),
    ("fp16_causal_d64", torch.float16, 1, 2, 2, 256, 256, 64, True),
    ("bf16_gqa4_causal", torch.bfloat16, 1, 8, 2, 128, 128, 64, True),
]
BACKENDS = [(SDPBackend.FLASH_ATTENTION, "fa2"),
            (SDPBackend.CUDNN_ATTENTION, "cudnn"),
            (SDPBackend.EFFICIENT_ATTENTION, "efficient"),
            (SDPBackend.MATH, "math")]
STAGES = ("o", "dq", "dk", "dv")


def f32_bits(t):
    """A 16-bit float tensor's values as FP32 bit patterns (exact)."""
    return (t.detach().float().cpu().contiguous().view(torch.int32)
            .numpy().view(np.uint32).reshape(-1))


def sdpa(q, k, v, do, causal, backend):
    """O, dQ, dK, dV of one pinned SDPA call."""
    for t in (q, k, v):
        t.grad = None
    with sdpa_kernel([backend]):
        o = F.scaled_dot_product_attention(
            q, k, v, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1])
        o.backward(do)
    return [o.detach().clone(), q.grad.clone(), k.grad.clone(),
            v.grad.clone()]


def run(case, backend, kernel):
    name, dt, b, h, hkv, nq, nk, d, causal = case
    g = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(b, n_h, n, d, generator=g).to(dt).cuda()
               .requires_grad_(True)
               for n_h, n in ((h, nq), (hkv, nk), (hkv, nk)))
    do = torch.randn(b, h, nq, d, generator=g).to(dt).cuda()
    r = {"case": name, "backend": kernel,
         "deterministic": torch.are_deterministic_algorithms_enabled()}
    try:
        first = sdpa(q, k, v, do, causal, backend)
        again = sdpa(q, k, v, do, causal, backend)
    except RuntimeError as e:
        r["refused"] = str(e).splitlines()[0][:200]
        return r
    for s, x, y in zip(STAGES, first, again):
        r["gpu_repeat_" + s] = int((f32_bits(x) != f32_bits(y)).sum())
    e = bf16emu.attention(q.detach(), k.detach(), v.detach(), kernel,
                          causal=causal,
                          causal_align="top-left" if causal else None,
                          splits="auto", backward=True, do=do)
    for s, x, y in zip(STAGES, first, (e[0], e[2], e[3], e[4])):
        got = np.asarray(y).reshape(-1)
        r[s + "_n"] = int(got.size)
        r[s + "_diff"] = int((f32_bits(x) != got).sum())
    return r


def main():
    out = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
           "results": []}
    for det in (False, True):
        torch.use_deterministic_algorithms(det)
        for case in CASES:
            for backend, kernel in BACKENDS:
                out["results"].append(run(case, backend, kernel))
    text = json.dumps(out, indent=1)
    print(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
