# test_attention_backward.py -- bf16emu.attention with backward=True, FP16
# inputs and kernel="sdpa" against bf16emu attn (--backward, F16 .npy
# inputs, --policy sdpa) on the same inputs.
import json
import os

import numpy as np
import pytest

import bf16emu
from conftest import attn_input_args, read_safetensors


def inputs(b, h, hkv, nq, nk, d, seed, fmt="bf16"):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, nq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, nk, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, nk, d)).astype(np.float32)
    do = rng.standard_normal((b, h, nq, d)).astype(np.float32)
    k[:, :, 1] = k[:, :, 0]
    return tuple(bf16emu.round(x, fmt) for x in (q, k, v, do))


def run_cli(cli, tmp_path, tensors, fmt, policy, extra=()):
    """bf16emu attn on TENSORS (q, k, v[, do]) saved as .npy (BF16 bits
    with --dtype bf16, FP16 as float16); returns (tensors, json)."""
    args = attn_input_args(tmp_path, tensors, fmt)
    out = os.path.join(tmp_path, "out.safetensors")
    j = cli("attn", *args, "--layout", "bhnd", "--policy", policy, "--out",
            out, "--force", "--json", "--no-exact", *extra)
    return read_safetensors(out), json.loads(j)


def same(a, b):
    return np.array_equal(a, b.reshape(a.shape))


def check_backward(cli, tmp_path, t, kernel, fmt="bf16", extra=(), **kw):
    q, k, v, do = t
    r = bf16emu.attention(q, k, v, kernel, backward=True, do=do, fmt=fmt,
                          **kw)
    assert len(r) == 5
    o, lse, dq, dk, dv = r
    assert r.delta.shape == q.shape[:3] and dq.shape == q.shape
    assert dk.shape == k.shape and dv.shape == v.shape
    for x in (o, lse, r.delta, dq, dk, dv):
        assert x.dtype == np.uint32
    w, _ = run_cli(cli, tmp_path, t, fmt, kernel, extra)
    for name, x in (("o", o), ("lse", lse), ("delta", r.delta), ("dq", dq),
                    ("dk", dk), ("dv", dv)):
        assert same(x, w[name]), (kernel, name)
    return r


# the descriptions whose backward runs on these small shapes (flex
# needs 128 query rows: tests/python/test_flex.py checks it)
BACKWARD_KERNELS = [n for n in bf16emu.kernels()
                    if bf16emu.describe(n)["bwd"] != "flex"]


@pytest.mark.parametrize("kernel", BACKWARD_KERNELS)
def test_backward_matches_cli(cli, tmp_path, kernel):
    check_backward(cli, tmp_path, inputs(1, 2, 2, 24, 40, 64, 11), kernel)


def test_backward_causal_matches_cli(cli, tmp_path):
    check_backward(cli, tmp_path, inputs(2, 1, 1, 24, 40, 64, 12), "fa2",
                   extra=["--causal", "--scale", "0.1"], causal=True,
                   scale=0.1)


@pytest.mark.parametrize("kernel", ["fa2", "math"])
def test_backward_grouped_heads_match_cli(cli, tmp_path, kernel):
    # dK and dV summed over each group of 2 query heads by the rule of
    # the description (fa2: in the input format; math: in FP32)
    r = check_backward(cli, tmp_path, inputs(1, 4, 2, 16, 32, 64, 13),
                       kernel)
    assert r.dk.shape == (1, 2, 32, 64)


def test_backward_grouped_heads_without_rule(cli, tmp_path):
    q, k, v, do = inputs(1, 2, 1, 8, 8, 64, 14)
    for kern in bf16emu.kernels():
        try:
            bf16emu.attention(q, k, v, kern, backward=True, do=do)
        except ValueError as e:
            assert "no rule for the sum of dK and dV" in str(e)
            break
    else:
        pytest.skip("every description has a rule for grouped dK, dV")


@pytest.mark.parametrize("kernel", ["fa2", "cudnn", "math", "efficient"])
def test_f16_matches_cli(cli, tmp_path, kernel):
    t = inputs(1, 2, 2, 16, 24, 64, 16, "f16")
    r = check_backward(cli, tmp_path, t, kernel, fmt="f16")
    # O lies on FP16 (the conversion is exact); the forward alone gives
    # the same O and LSE; NumPy float16 arrays are taken as FP16
    assert np.array_equal(bf16emu.convert(bf16emu.convert(r.o, "f16", "f32"),
                                          "f32", "f16"), r.o)
    o, lse = bf16emu.attention(*(x.view(np.float16) for x in t[:3]), kernel)
    assert np.array_equal(o, r.o) and np.array_equal(lse, r.lse)


SDPA_CASES = [
    # (B, H, Hkv, Nq, Nk, d, fmt, causal, backward, backends):
    # cuDNN's prefill (forward and backward), cuDNN's decode engine with
    # its key splits on grouped heads, the flash backend (its split rule,
    # bottom-right causal), memory-efficient (top-left causal) and math
    (1, 2, 2, 64, 64, 64, "bf16", True, True, None),
    (2, 4, 2, 1, 1024, 64, "bf16", False, False, None),
    (1, 2, 2, 32, 96, 64, "f16", True, False, "flash,efficient,math"),
    (1, 2, 2, 32, 96, 64, "bf16", True, True, "efficient,math"),
    (1, 2, 2, 48, 48, 64, "bf16", False, False, "math"),
]


@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_matches_cli(cli, tmp_path, case):
    b, h, hkv, nq, nk, d, fmt, causal, backward, backends = case
    t = inputs(b, h, hkv, nq, nk, d, 17, fmt)
    extra = ["--causal"] if causal else []
    if backends:
        extra += ["--sdpa-backends", backends]
    r = bf16emu.attention(*t[:3], "sdpa", fmt=fmt, causal=causal,
                          backward=backward, do=t[3] if backward else None,
                          sdpa_backends=backends)
    w, j = run_cli(cli, tmp_path, t if backward else t[:3], fmt, "sdpa",
                   extra)
    names = ["o", "lse"] + (["dq", "dk", "dv"] if backward else [])
    for name, x in zip(names, r):
        assert same(x, w[name]), (case, name)
    assert r.sdpa["backend"] == j["sdpa"]["backend"]
    assert r.sdpa["variant"] == j["sdpa"]["variant"]
    assert r.sdpa["reason"] == j["sdpa"]["reason"]
    assert r.sdpa["kernel"] in bf16emu.kernels()
    assert r.sdpa["splits"] == find(j, "tiles")["splits"]


def find(j, key):
    """The first value of KEY in the JSON object J, depth first."""
    if isinstance(j, dict):
        if key in j:
            return j[key]
        j = list(j.values())
    if isinstance(j, list):
        for x in j:
            r = find(x, key)
            if r is not None:
                return r
    return None


def test_sdpa_refusals():
    q, k, v, do = inputs(1, 1, 1, 8, 8, 64, 18)
    with pytest.raises(ValueError, match="runs no backend"):
        bf16emu.attention(q, k, v, "sdpa", sdpa_backends=[])
    with pytest.raises(ValueError, match="unknown backend"):
        bf16emu.attention(q, k, v, "sdpa", sdpa_backends=["fast"])
    assert bf16emu.attention(q, k, v, "fa2").sdpa is None
    q, k, v, do = inputs(1, 1, 1, 8, 24, 64, 18)
    with pytest.raises(ValueError, match="causal_align"):
        bf16emu.attention(q, k, v, "sdpa", causal=True)


def test_backward_argument_errors():
    q, k, v, do = inputs(1, 1, 1, 8, 8, 64, 19)
    with pytest.raises(ValueError, match="needs do"):
        bf16emu.attention(q, k, v, backward=True)
    with pytest.raises(ValueError, match="backward=True"):
        bf16emu.attention(q, k, v, do=do)
    with pytest.raises(ValueError, match="same shape"):
        bf16emu.attention(q, k, v, backward=True, do=do[:, :, :4])
    with pytest.raises(TypeError, match="do"):
        bf16emu.attention(q, k, v, backward=True, do=do.astype(np.int16))
    with pytest.raises(ValueError, match="bf16 or f16"):
        bf16emu.attention(q, k, v, fmt="e4m3")


def test_backward_refcounts_do_not_leak():
    import sys
    q, k, v, do = inputs(1, 2, 1, 2, 3, 8, 20)
    objs = (q, k, v, do)
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(5000):              # 10,000 calls
        bf16emu.attention(q, k, v, "math", backward=True, do=do, threads=1)
        try:
            bf16emu.attention(q, k, v, "efficient", backward=True, do=do,
                              threads=1)
        except ValueError:
            pass
    assert [sys.getrefcount(o) for o in objs] == before


def test_backward_threads_same_bits():
    q, k, v, do = inputs(2, 4, 2, 16, 24, 64, 21)
    one = bf16emu.attention(q, k, v, "fa2", backward=True, do=do, threads=1)
    many = bf16emu.attention(q, k, v, "fa2", backward=True, do=do,
                             threads=4)
    assert all(np.array_equal(x, y) for x, y in zip(one, many))
    assert np.array_equal(one.delta, many.delta)
