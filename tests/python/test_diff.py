# test_diff.py -- bf16emu.diff on hand-made arrays whose differences are
# known: counts, distances in ulps, the histogram, the worst elements
# and their indices and values.
import math

import numpy as np
import pytest

import bf16emu


def test_equal_arrays():
    a = np.array([[0x3F80, 0x4000], [0xC040, 0x0000]], np.uint16)
    d = bf16emu.diff(a, a.copy())
    assert (d.elements, d.equal, d.differ, d.max_ulps) == (4, 4, 0, 0)
    assert d.equal_fraction == 1.0 and d.passed and d.worst == []
    assert d.histogram == [{"bucket": "0", "min": 0, "max": 0, "count": 4}]


def test_known_differences_bf16():
    gpu = np.array([[0x3F80, 0x3F80, 0x4000],
                    [0x8000, 0x3F80, 0x7FC0]], np.uint16)
    emu = np.array([[0x3F80, 0x3F81, 0x3FFF],
                    [0x0000, 0x3F90, 0x3F80]], np.uint16)
    d = bf16emu.diff(gpu, emu, "bf16")
    assert d.elements == 6
    assert d.equal == 1
    # -0 and +0 differ in bits but are 0 ulps apart
    assert d.differ == 5
    assert d.nan_vs_number == 1
    assert d.max_ulps == math.inf
    assert not d.passed
    assert [(w.index, w.distance) for w in d.worst] == [
        ((1, 2), math.inf), ((1, 1), 16), ((0, 1), 1), ((0, 2), 1),
        ((1, 0), 0)]
    w = d.worst[1]
    assert (w.gpu, w.emulated) == (0x3F80, 0x3F90)
    assert (w.gpu_value, w.emulated_value) == (1.0, 1.125)
    assert math.isnan(d.worst[0].gpu_value)
    assert d.worst[0].emulated_value == 1.0
    hist = {h["bucket"]: h["count"] for h in d.histogram}
    assert hist == {"0": 2, "1": 2, "16-31": 1, "inf": 1}


def test_sign_change_and_tolerance_f32():
    one = 0x3F800000
    gpu = np.array([one, one + 3, 0x00000001], np.uint32)
    emu = np.array([one + 2, one, 0x80000001], np.uint32)
    d = bf16emu.diff(gpu, emu, "f32", tol=2)
    assert d.max_ulps == 3 and d.differ == 3
    # 0x1 and -0x1 are two steps apart, across zero
    assert [w.distance for w in d.worst] == [3, 2, 2]
    assert d.within_tolerance == 2 and not d.passed
    assert bf16emu.diff(gpu, emu, "f32", tol=3).passed
    # float32 arrays are read as their bits for f32
    e = bf16emu.diff(gpu.view(np.float32), emu.view(np.float32), "f32")
    assert e.max_ulps == 3 and e.worst[0].index == (1,)


def test_worst_count_and_order():
    gpu = np.zeros(100, np.uint16)
    emu = np.arange(100, dtype=np.uint16)  # distance i at index i
    d = bf16emu.diff(gpu, emu, "f16", worst=5)
    assert [w.index for w in d.worst] == [(99,), (98,), (97,), (96,), (95,)]
    assert d.max_ulps == 99 and d.differ == 99
    assert sum(h["count"] for h in d.histogram) == 100
    assert d.histogram[-1] == {"bucket": "64-127", "min": 64, "max": 127,
                               "count": 36}
    assert bf16emu.diff(gpu, emu, "f16", worst=0).worst == []


def test_fp8():
    d = bf16emu.diff(np.array([0x38, 0x7F], np.uint8),
                     np.array([0x39, 0x7E], np.uint8), "e4m3")
    # 0x7F is E4M3's NaN
    assert d.nan_vs_number == 1 and d.worst[1].distance == 1


def test_diff_refusals():
    a = np.zeros(4, np.uint16)
    with pytest.raises(ValueError, match="the same shape"):
        bf16emu.diff(a, np.zeros(5, np.uint16))
    with pytest.raises(TypeError, match="uint32"):
        bf16emu.diff(a, a, "f32")
    with pytest.raises(ValueError, match="unknown format"):
        bf16emu.diff(a, a, "bf17")
    with pytest.raises(ValueError, match="worst"):
        bf16emu.diff(a, a, worst=65)


def test_matches_cli_diff_of_a_dump(cli):
    """diff of a GPU output against attention's gives the counts, the
    histogram and the worst elements bf16emu diff --json reports for the
    same stage (cuDNN's O of a mask dump against the memory-efficient
    description: they differ)."""
    import json
    import os
    from conftest import read_dump
    from test_mask import DATA, file_mask
    path = os.path.join(DATA, "mask_padding.safetensors")
    t, m = read_dump(path)
    mask, kind = file_mask(t, m)
    launch = (m["launch_shape"]["batch"], m["launch_shape"]["heads"])
    r = bf16emu.attention(t["q"], t["k"], t["v"], "efficient", mask=mask,
                          mask_dtype=kind, launch=launch)
    emu = bf16emu.convert(r.o, "bf16", "f32")
    d = bf16emu.diff(t["cudnn.o"], emu, "bf16")
    j = json.loads(cli("diff", "--dump", path, "--q", path + ":q", "--k",
                       path + ":k", "--v", path + ":v", "--o",
                       path + ":cudnn.o", "--policy", "efficient", "--stage",
                       "o", "--no-exact", "--json", check=False))
    s = j["stages"][0]
    assert d.differ > 0
    assert (d.elements, d.equal, d.differ, d.nan_vs_number, d.max_ulps) == \
        (s["elements"], s["equal"], s["differ"], s["nan_vs_number"],
         s["max_distance"])
    assert d.histogram == s["histogram"]
    assert [(w.index[2:], w.gpu, w.emulated, w.distance) for w in d.worst] \
        == [(tuple(w["index"][2:]), int(w["gpu"]["bits"], 16),
             int(w["emulator"]["bits"], 16), w["distance"])
            for w in s["worst"]]
