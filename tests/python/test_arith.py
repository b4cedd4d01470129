# test_arith.py -- bf16emu.add, sub, mul, div, fma and sqrt against
# bf16emu trace --op on the same operands, in every format and mode.
import zlib

import numpy as np
import pytest

import bf16emu
from conftest import flags_str

FORMATS = ["bf16", "f16", "f32", "tf32", "e4m3", "e5m2"]
MODES = ["rne", "rtz", "rdn", "rup", "rna", "rod"]
OPS = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1}


def operands(fmt, n, seed):
    """N random patterns of FMT: half anywhere, half of moderate
    magnitude (where results are normal and the vector paths run)."""
    rng = np.random.default_rng(seed)
    dt = bf16emu.dtype_of(fmt)
    if dt == np.uint32:
        bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    else:
        bits = rng.integers(0, np.iinfo(dt).max + 1, n).astype(dt)
    x = rng.uniform(0.25, 4.0, n) * rng.choice([-1.0, 1.0], n)
    near = bf16emu.round(x.astype(np.float32), fmt)
    bits[: n // 2] = near[: n // 2]
    if fmt == "tf32":
        bits &= np.uint32(0xFFFFE000)
    return bits


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_matches_cli(trace, fmt, op):
    n = 4
    # a seed of the case itself (Python's hash() of a str changes from
    # run to run)
    ins = [operands(fmt, n, zlib.crc32(("%s/%s/%d" % (fmt, op, i)).encode()))
           for i in range(OPS[op])]
    if op == "sqrt":
        ins[0] &= ~np.array(1 << (8 * ins[0].itemsize - 1), ins[0].dtype)
    width = 2 * ins[0].itemsize
    for mode in MODES:
        got, flags = getattr(bf16emu, op)(*ins, fmt=fmt, mode=mode,
                                          flags=True)
        assert got.dtype == ins[0].dtype and got.shape == ins[0].shape
        all_flags = ""
        seen = 0
        for i in range(n):
            args = ["%s:0x%0*X" % (fmt, width, int(a[i])) for a in ins]
            want, wflags = trace("--op", op, "--fmt", fmt, "--mode", mode,
                                 *args)
            assert int(got[i]) == want, (op, fmt, mode, args)
            seen |= int(bf16emu.Flags(sum(
                b for c, b in zip("vioux", (16, 8, 4, 2, 1))
                if c in wflags)))
        assert int(flags) == seen, (op, fmt, mode, flags_str(flags))


def test_large_arrays_match_elementwise():
    """The array operations (vector paths) give the bits of one-element
    calls (the scalar path) over many operands."""
    for fmt in ["bf16", "f16", "f32"]:
        a = operands(fmt, 4096, 1)
        b = operands(fmt, 4096, 2)
        c = operands(fmt, 4096, 3)
        for mode in ["rne", "rtz", "rup"]:
            for op, ins in (("add", (a, b)), ("mul", (a, b)),
                            ("fma", (a, b, c))):
                whole = getattr(bf16emu, op)(*ins, fmt=fmt, mode=mode)
                idx = np.arange(0, 4096, 97)
                for i in idx:
                    one = getattr(bf16emu, op)(*(x[i:i + 1] for x in ins),
                                               fmt=fmt, mode=mode)
                    assert one[0] == whole[i]


def test_sr_seed_matches_cli(trace):
    a = bf16emu.round(np.float32([1.0]))
    b = bf16emu.round(np.float32([2.0 ** -9 + 2.0 ** -12]))
    for seed in range(6):
        got = bf16emu.add(a, b, mode="sr", seed=seed)
        want, _ = trace("--op", "add", "--fmt", "bf16", "--mode", "sr",
                        "--seed", seed, "bf16:0x%04X" % a[0],
                        "bf16:0x%04X" % b[0])
        assert int(got[0]) == want


def test_ftz_daz_match_cli(trace):
    a = np.array([0x0001, 0x0080], dtype=np.uint16)
    b = np.array([0x0001, 0x8001], dtype=np.uint16)
    got = bf16emu.add(a, b, ftz=True, daz=True)
    for i in range(2):
        want, _ = trace("--op", "add", "--fmt", "bf16", "--ftz", "--daz",
                        "bf16:0x%04X" % a[i], "bf16:0x%04X" % b[i])
        assert int(got[i]) == want


def test_exact_values():
    one = bf16emu.round(np.float32([1.0]))
    three = bf16emu.round(np.float32([3.0]))
    q, fl = bf16emu.div(one, three, flags=True)
    assert q[0] == 0x3EAB and fl == bf16emu.Flags.INEXACT
    z, fl = bf16emu.div(one, np.zeros(1, np.uint16), flags=True)
    assert z[0] == 0x7F80 and fl == bf16emu.Flags.DIVZERO
    r, fl = bf16emu.sqrt(np.array([0xBF80], np.uint16), flags=True)
    assert fl == bf16emu.Flags.INVALID
