# test_flex.py -- FlexAttention through bf16emu.attention against the
# GPU (tests/data/gpu/flex: torch.compile(flex_attention) on an H100 with
# PyTorch 2.11 and Triton 3.6, flex_fixture.py's files).  Each dump that
# keeps dO: O, LSE, dQ, dK and dV of the "flex" description, bit for bit,
# with the call's mask (the mask_mod's values as attn_mask), soft-cap and
# the delta kernel's XBLOCK from the manifest (the launch's rows over the
# kernel's grid) and its kernel_options' tiles; grouped heads (MQA, FP16)
# with K and V of one head.
import glob
import os

import numpy as np
import pytest

import bf16emu
from conftest import gpu_dump, read_dump, read_safetensors

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "data", "gpu", "flex")


def dumps():
    found = []
    for path in sorted(glob.glob(os.path.join(DATA, "flex_*.safetensors"))):
        if "do" in read_safetensors(path):
            found.append(os.path.basename(path))
    return found


# dumps the model refuses, and the reason's words
REFUSED = {"flex_dec_win_h16.safetensors": "persistent reductions"}


def delta_xblock(m):
    """The delta kernel's rows per program: the launch's rows over the
    grid the capture recorded."""
    ls = m["launch_shape"]
    for k in m["kernels"]["backward"]:
        if "per_fused_flex_attention_backward" in (k["name"] or ""):
            return ls["batch"] * ls["heads"] * ls["nq"] // k["grid"][0]
    return None


def mask_of(t):
    """attn_mask as attention takes it: boolean, or additive FP16 bits."""
    if "attn_mask" not in t:
        return None, None
    m = t["attn_mask"]
    return (m.astype(bool), None) if m.dtype == np.uint8 else (m, "f16")


@pytest.mark.parametrize("name", dumps() or ["(none)"])
def test_flex_matches_gpu(name):
    path = gpu_dump(DATA, name,
                    "no flex dump with dO under tests/data/gpu/flex")
    t, m = read_dump(path)
    fmt = "f16" if m["dtype"] in ("fp16", "float16") else "bf16"
    mask, mask_dtype = mask_of(t)
    kernel = "flex"
    opts = m.get("kernel_options") or {}
    if opts:
        # the call's pinned tiles: the description with them
        kernel = bf16emu.describe("flex")
        for row in kernel["tiles"]:
            row["br"] = opts.get("BLOCK_M", row["br"])
            row["bc"] = opts.get("BLOCK_N", row["bc"])
    ls = m["launch_shape"]
    if name in REFUSED:
        # flex_decoding rows over several programs merged by reductions
        # inductor autotunes: refused with the C library's reason
        with pytest.raises(ValueError, match=REFUSED[name]):
            bf16emu.attention(t["q"], t["k"], t["v"], kernel, fmt=fmt,
                              scale=m["scale"], mask=mask,
                              mask_dtype=mask_dtype,
                              launch=(ls["batch"], ls["heads"]))
        return
    r = bf16emu.attention(t["q"], t["k"], t["v"], kernel, fmt=fmt,
                          causal=bool(m.get("causal")), scale=m["scale"],
                          mask=mask, mask_dtype=mask_dtype,
                          softcap=m.get("softcap"), backward=True,
                          do=t["do"], delta_xblock=delta_xblock(m),
                          launch=(ls["batch"], ls["heads"]))
    for out in ("o", "dq", "dk", "dv"):
        got = bf16emu.convert(getattr(r, out), fmt, "f32")
        want = t["flex." + out]
        assert np.array_equal(got, want.reshape(got.shape)), (name, out)
    assert np.array_equal(r.lse, t["flex.lse"].reshape(r.lse.shape)), name


def test_flex_grouped_heads_one_accumulator():
    # MQA: dK and dV of the KV head are one accumulator through the four
    # query heads, not a sum of four heads' results
    path = os.path.join(DATA, "flex_mqa_fp16.safetensors")
    if not os.path.exists(path):
        pytest.skip("flex_mqa_fp16 missing")
    t = read_safetensors(path)
    r = bf16emu.attention(t["q"], t["k"], t["v"], "flex", fmt="f16",
                          causal=True, backward=True, do=t["do"])
    k = bf16emu.describe("flex")
    k["gqa_dkv"] = "in-sum"
    s = bf16emu.attention(t["q"], t["k"], t["v"], k, fmt="f16", causal=True,
                          backward=True, do=t["do"])
    assert r.dk.shape == (1, 1, 512, 64)
    assert np.array_equal(r.dq, s.dq)
    assert not np.array_equal(r.dk, s.dk)


def test_flex_backward_refusals():
    q = np.zeros((1, 1, 128, 64), np.uint16)
    with pytest.raises(ValueError, match="delta_xblock"):
        bf16emu.attention(q, q, q, "flex", backward=True, do=q,
                          delta_xblock=3)
    with pytest.raises(ValueError, match="softcap"):
        bf16emu.attention(q, q, q, "flex", softcap=-1.0)
