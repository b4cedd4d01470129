# test_attention.py -- bf16emu.attention against bf16emu attn --policy on
# the same .npy inputs, for every built-in kernel description.
import os

import numpy as np
import pytest

import bf16emu
from conftest import read_safetensors


def qkv(b, h, hkv, nq, nk, d, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h, nq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, nk, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, nk, d)).astype(np.float32)
    # a repeated row maximum, the case the project studies
    k[:, :, 1] = k[:, :, 0]
    return tuple(bf16emu.round(x) for x in (q, k, v))


def run_cli(cli, tmp_path, q, k, v, kernel, extra=()):
    paths = [os.path.join(tmp_path, n + ".npy") for n in "qkv"]
    for p, x in zip(paths, (q, k, v)):
        np.save(p, x)
    out = os.path.join(tmp_path, "out.safetensors")
    cli("attn", "--q", paths[0], "--k", paths[1], "--v", paths[2],
        "--dtype", "bf16", "--layout", "bhnd", "--policy", kernel,
        "--out", out,
        "--force",
        *extra)
    t = read_safetensors(out)
    return t["o"], t["lse"]


def check(cli, tmp_path, q, k, v, kernel, extra=(), **kw):
    o, lse = bf16emu.attention(q, k, v, kernel, **kw)
    assert o.dtype == np.uint32 and lse.dtype == np.uint32
    assert o.shape == q.shape and lse.shape == q.shape[:3]
    wo, wl = run_cli(cli, tmp_path, q, k, v, kernel, extra)
    assert np.array_equal(o, wo.reshape(o.shape)), kernel
    assert np.array_equal(lse, wl.reshape(lse.shape)), kernel


@pytest.mark.parametrize("kernel", bf16emu.kernels())
def test_kernel_matches_cli(cli, tmp_path, kernel):
    # at least the rows the description serves (flex: 128)
    nq = max(40, bf16emu.describe(kernel).get("min_nq", 0))
    q, k, v = qkv(1, 2, 2, nq, 72, 64, 1)
    check(cli, tmp_path, q, k, v, kernel)


def test_flex_below_128_rows_is_flex_decoding(cli, tmp_path):
    """flex: fewer than 128 query rows run flex_decoding (the description
    flex-decode), the same bits as naming it, and as the CLI."""
    q, k, v = qkv(1, 1, 1, 64, 128, 64, 5)
    ao, al = bf16emu.attention(q, k, v, "flex")
    bo, bl = bf16emu.attention(q, k, v, "flex-decode")
    assert np.array_equal(ao, bo) and np.array_equal(al, bl)
    check(cli, tmp_path, q, k, v, "flex")


def test_flex_decode_refuses_unknown_merges():
    """flex_decoding with 16 programs (16 heads) and rows whose keys span
    several of them: inductor's persistent reductions are autotuned on the
    GPU, refused with the C library's reason."""
    q, k, v = qkv(1, 16, 16, 1, 1024, 64, 6)
    mask = np.ones((1, 1, 1, 1024), dtype=bool)
    mask[..., :100] = False
    with pytest.raises(ValueError, match="persistent reductions"):
        bf16emu.attention(q, k, v, "flex", mask=mask)


@pytest.mark.parametrize("kernel", ["fa2", "math", "efficient"])
def test_causal_scale_match_cli(cli, tmp_path, kernel):
    q, k, v = qkv(2, 1, 1, 24, 40, 64, 2)
    check(cli, tmp_path, q, k, v, kernel, ["--causal", "--scale", "0.1"],
          causal=True, scale=0.1)
    check(cli, tmp_path, q, k, v, kernel,
          ["--causal", "--causal-align", "top-left"], causal=True,
          causal_align="top-left")


def test_grouped_heads_match_cli(cli, tmp_path):
    q, k, v = qkv(1, 4, 2, 16, 16, 64, 3)
    check(cli, tmp_path, q, k, v, "fa2")


def test_splits_match_cli(cli, tmp_path):
    q, k, v = qkv(1, 1, 1, 8, 512, 64, 4)
    check(cli, tmp_path, q, k, v, "fa2", ["--splits", "2"], splits=2)


def test_threads_same_bits():
    q, k, v = qkv(2, 3, 3, 16, 32, 64, 5)
    one = bf16emu.attention(q, k, v, "fa2", threads=1)
    many = bf16emu.attention(q, k, v, "fa2", threads=4)
    assert all(np.array_equal(x, y) for x, y in zip(one, many))


def test_flash_is_fa2():
    q, k, v = qkv(1, 1, 1, 8, 8, 64, 6)
    a = bf16emu.attention(q, k, v, "flash")
    b = bf16emu.attention(q, k, v, "fa2")
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
