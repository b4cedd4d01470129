# test_values.py -- bf16emu.round, to_float and convert against
# bf16emu trace --op convert on the same inputs.
import numpy as np
import pytest

import bf16emu
from conftest import flags_str

FORMATS = ["bf16", "f16", "tf32", "e4m3", "e5m2"]
MODES = ["rne", "rtz", "rdn", "rup", "rna", "rod"]

# special and boundary FP32 values, then random ones over the whole range
SPECIAL32 = np.array([0x00000000, 0x80000000, 0x3F800000, 0x3F808000,
                      0x3F818000, 0xC01A0E2E, 0x7F800000, 0xFF800000,
                      0x7FC00000, 0x7F800001, 0x00000001, 0x807FFFFF,
                      0x477FE000, 0x47800000, 0x43E00000, 0x43F00000,
                      0x3B800000, 0x387FC000, 0x7F7FFFFF, 0x33800000],
                     dtype=np.uint32)


def f32_inputs(n, seed):
    rng = np.random.default_rng(seed)
    r = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    # values near 1 and near the small formats' ranges
    near = (rng.integers(0x3A000000, 0x48000000, n, dtype=np.uint64)
            .astype(np.uint32) | (rng.integers(0, 2, n).astype(np.uint32)
                                  << np.uint32(31)))
    return np.concatenate([SPECIAL32, r, near]).astype(np.uint32)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
def test_round_f32_matches_cli(trace, fmt, mode):
    bits = f32_inputs(6, hash((fmt, mode)) & 0xFFFF)
    got, flags = bf16emu.round(bits.view(np.float32), fmt, mode, flags=True)
    assert got.dtype == bf16emu.dtype_of(fmt) and got.shape == bits.shape
    all_flags = 0
    for i, b in enumerate(bits):
        want, wflags = trace("--op", "convert", "--out", fmt, "--mode", mode,
                             "f32:0x%08X" % b)
        assert int(got[i]) == want, (fmt, mode, hex(b))
        one, f1 = bf16emu.round(bits[i:i + 1].view(np.float32), fmt, mode,
                                flags=True)
        assert int(one[0]) == want and flags_str(f1) == wflags, hex(b)
        all_flags |= int(f1)
    assert int(flags) == all_flags


@pytest.mark.parametrize("fmt", ["bf16", "f16", "e4m3"])
def test_round_f64_matches_cli(trace, fmt):
    x = np.array([np.pi, -1e-300, 1 / 3, 2.0 ** -130, 65519.99, 448.5,
                  np.inf, -0.0, 1.0 + 2.0 ** -8 + 2.0 ** -40])
    for mode in MODES:
        got = bf16emu.round(x, fmt, mode)
        for i, v in enumerate(x):
            b = int(np.array([v]).view(np.uint64)[0])
            want, _ = trace("--op", "convert", "--out", fmt, "--mode", mode,
                            "f64:0x%016X" % b)
            assert int(got[i]) == want, (fmt, mode, v)


def test_round_lists_and_shapes():
    x = [[1.0, 2.5], [3.0, -0.0]]
    got = bf16emu.round(x)
    assert got.shape == (2, 2) and got.dtype == np.uint16
    assert got.tolist() == [[0x3F80, 0x4020], [0x4040, 0x8000]]
    assert bf16emu.round(np.float32(1.0)).shape == ()


def test_round_sr_seed_matches_cli(trace):
    x = np.array([1.0 + 2.0 ** -9], dtype=np.float32)
    for seed in range(8):
        got = bf16emu.round(x, "bf16", "sr", seed=seed)
        want, _ = trace("--op", "convert", "--out", "bf16", "--mode", "sr",
                        "--seed", seed, "f32:0x%08X" % x.view(np.uint32)[0])
        assert int(got[0]) == want


@pytest.mark.parametrize("env", ["x86", "nvidia", "avx512bf16", "arm-bfdot"])
def test_round_env_matches_cli(trace, env):
    bits = np.array([0x00012345, 0x807FFFFF, 0x7FC12345, 0x3F808000],
                    dtype=np.uint32)
    got = bf16emu.round(bits.view(np.float32), "bf16", env=env)
    for i, b in enumerate(bits):
        want, _ = trace("--op", "convert", "--out", "bf16", "--env", env,
                        "f32:0x%08X" % b)
        assert int(got[i]) == want, (env, hex(b))


def test_to_float_every_bf16():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = bf16emu.to_float(bits, "bf16")
    assert x.dtype == np.float32
    u = x.view(np.uint32)
    nan = (bits & 0x7F80) == 0x7F80
    nan &= (bits & 0x7F) != 0
    # every non-NaN pattern is its FP32 widening; NaNs come back quiet
    assert np.array_equal(u[~nan], bits[~nan].astype(np.uint32) << 16)
    assert np.all(np.isnan(x[nan]))
    assert np.array_equal(bf16emu.round(x[~nan], "bf16"), bits[~nan])


def random_bits(rng, fmt, n):
    """N random bit patterns of FMT (tf32: its 19 bits in an FP32 word)."""
    if fmt == "tf32":
        return (rng.integers(0, 2**32, n, dtype=np.uint64)
                .astype(np.uint32) & np.uint32(0xFFFFE000))
    dt = bf16emu.dtype_of(fmt)
    return rng.integers(0, np.iinfo(dt).max + 1, n).astype(dt)


@pytest.mark.parametrize("fmt", ["f16", "e4m3", "e5m2", "tf32"])
def test_to_float_matches_cli(trace, fmt):
    dt = bf16emu.dtype_of(fmt)
    bits = random_bits(np.random.default_rng(7), fmt, 12)
    got = bf16emu.to_float(bits, fmt).view(np.uint32)
    width = 2 * dt.itemsize
    for i, b in enumerate(bits):
        want, _ = trace("--op", "convert", "--out", "f32",
                        "%s:0x%0*X" % (fmt, width, int(b)))
        assert int(got[i]) == want, (fmt, hex(int(b)))


@pytest.mark.parametrize("src,dst", [("bf16", "e4m3"), ("f16", "bf16"),
                                     ("e5m2", "f16"), ("tf32", "bf16")])
def test_convert_matches_cli(trace, src, dst):
    dt = bf16emu.dtype_of(src)
    bits = random_bits(np.random.default_rng(11), src, 10)
    for mode in ["rne", "rtz", "rup"]:
        got, fl = bf16emu.convert(bits, dst, src, mode, flags=True)
        assert got.dtype == bf16emu.dtype_of(dst)
        for i, b in enumerate(bits):
            want, _ = trace("--op", "convert", "--out", dst, "--mode", mode,
                            "%s:0x%0*X" % (src, 2 * dt.itemsize, int(b)))
            assert int(got[i]) == want


def test_saturate():
    big = np.array([1e6, -1e6], dtype=np.float32)
    assert bf16emu.round(big, "e4m3").tolist() == [0x7F, 0xFF]
    assert bf16emu.round(big, "e4m3", saturate=True).tolist() == [0x7E, 0xFE]


def test_ml_dtypes_bfloat16_if_installed():
    ml = pytest.importorskip("ml_dtypes")
    x = np.array([1.5, -2.0], dtype=ml.bfloat16)
    assert bf16emu.to_float(x, "bf16").tolist() == [1.5, -2.0]
