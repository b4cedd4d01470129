# test_kernel_dict.py -- bf16emu.describe(name) against bf16emu attn
# --policy NAME --describe, and descriptions given as dicts to attention:
# the same bits as the named kernel, a changed description the same bits
# as attn --kernel FILE.json of it, and the parser's refusals.
import json
import os

import numpy as np
import pytest

import bf16emu
from conftest import read_safetensors


def qkv(b, h, hkv, nq, nk, d, seed):
    rng = np.random.default_rng(seed)
    shapes = ((b, h, nq, d), (b, hkv, nk, d), (b, hkv, nk, d), (b, h, nq, d))
    t = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    t[1][:, :, 1] = t[1][:, :, 0]
    return tuple(bf16emu.round(x) for x in t)


@pytest.mark.parametrize("name", bf16emu.kernels())
def test_describe_is_the_cli_description(cli, name):
    want = json.loads(cli("attn", "--policy", name, "--describe"))
    got = bf16emu.describe(name)
    assert got == want
    # the same keys in the same order
    assert list(got) == list(want)


def test_describe_flash_and_unknown():
    assert bf16emu.describe("flash") == bf16emu.describe("fa2")
    with pytest.raises(ValueError, match="unknown kernel"):
        bf16emu.describe("fa3")


@pytest.mark.parametrize(
    "name", [n for n in bf16emu.kernels()
             if bf16emu.describe(n)["bwd"] != "flex"])
def test_dict_gives_the_named_bits(name):
    q, k, v, do = qkv(1, 2, 2, 40, 72, 64, 21)
    a = bf16emu.attention(q, k, v, name, backward=True, do=do)
    b = bf16emu.attention(q, k, v, bf16emu.describe(name), backward=True,
                          do=do)
    for x, y in zip(a, b):
        assert np.array_equal(x, y), name
    assert np.array_equal(a.delta, b.delta)


def test_dict_with_causal_and_grouped_heads():
    q, k, v, _ = qkv(1, 4, 2, 24, 40, 64, 22)
    a = bf16emu.attention(q, k, v, "cudnn", causal=True)
    b = bf16emu.attention(q, k, v, bf16emu.describe("cudnn"), causal=True)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_changed_dict_matches_cli_kernel_file(cli, tmp_path):
    """A user's description (fa2 with P~ kept in FP32 and the KV blocks in
    forward order) gives the bits attn --kernel gives for the same JSON,
    and not fa2's."""
    q, k, v, _ = qkv(1, 1, 1, 32, 256, 64, 23)
    kd = bf16emu.describe("fa2")
    kd["name"] = "fa2-mine"
    kd["p"] = "f32"
    kd["kv_order"] = "forward"
    path = os.path.join(tmp_path, "mine.json")
    with open(path, "w") as f:
        json.dump(kd, f)
    paths = [os.path.join(tmp_path, n + ".npy") for n in "qkv"]
    for p, x in zip(paths, (q, k, v)):
        np.save(p, x)
    out = os.path.join(tmp_path, "out.safetensors")
    cli("attn", "--q", paths[0], "--k", paths[1], "--v", paths[2],
        "--dtype", "bf16", "--layout", "bhnd", "--kernel", path, "--out",
        out, "--force", "--no-exact")
    want = read_safetensors(out)
    r = bf16emu.attention(q, k, v, kd)
    assert np.array_equal(r.o, want["o"].reshape(r.o.shape))
    assert np.array_equal(r.lse, want["lse"].reshape(r.lse.shape))
    assert not np.array_equal(r.o, bf16emu.attention(q, k, v, "fa2").o)


def test_dict_refusals():
    q = np.zeros((1, 1, 4, 64), np.uint16)
    kd = bf16emu.describe("fa2")
    with pytest.raises(ValueError, match="field 'bogus': unknown field"):
        bf16emu.attention(q, q, q, dict(kd, bogus=1))
    missing = dict(kd)
    del missing["acc"]
    with pytest.raises(ValueError, match="field 'acc': missing"):
        bf16emu.attention(q, q, q, missing)
    with pytest.raises(ValueError, match="field 'p': expected one of"):
        bf16emu.attention(q, q, q, dict(kd, p="f8"))
    with pytest.raises(ValueError, match=r"field 'tiles\[0\].br'"):
        tiles = [dict(kd["tiles"][0], br=-1)]
        bf16emu.attention(q, q, q, dict(kd, tiles=tiles))
    with pytest.raises(TypeError, match="name or a description"):
        bf16emu.attention(q, q, q, 3)
