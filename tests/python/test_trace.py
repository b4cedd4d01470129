# test_trace.py -- bf16emu.trace against bf16emu trace --json on the same
# operands: every rounding's bits, exact value, error and flags.
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import bf16emu
from conftest import flags_str


def cli_trace(cli, texts, *opts):
    return json.loads(cli("trace", "--json", *opts, "--", *texts))


def text_of(x):
    """A float64 as the tool reads it exactly (a hex-float, inf, nan)."""
    return "nan" if math.isnan(x) else float(x).hex()


def frac(s):
    return None if s is None else Fraction(s)


def compare_rounding(r, j):
    assert r.result == int(j["result"]["bits"], 16)
    assert r.format == j["format"] and r.mode == j["mode"]
    assert r.direction == j["direction"]
    assert flags_str(r.flags) == j["flags"]
    assert r.inexact == j["inexact"]
    for key in ("tiny", "subnormal", "ftz", "daz", "overflow"):
        assert getattr(r, key) == j[key], key
    if j["rounded"]:
        assert r.exact == Fraction(j["exact"])
        for key in ("ulp_exp", "lsb", "guard", "round", "sticky", "tie"):
            assert getattr(r, key) == j[key], key
    if j.get("error") is not None and r.exact is not None:
        assert r.error == Fraction(j["error"])
        assert r.error_ulps == Fraction(j["error_ulps"])
    if "sr" in j:
        assert r.sr_random == int(j["sr"]["draw"], 16)


def check(cli, values, opts=(), texts=None, **kw):
    t = bf16emu.trace(values, **kw)
    if texts is None:
        texts = [text_of(x) for x in np.asarray(values, dtype=np.float64)]
    j = cli_trace(cli, texts, *opts)
    adds = [s for s in j["steps"] if s["kind"] == "add"]
    assert len(t.roundings) == len(adds) + 1
    for r, s in zip(t.roundings, adds):
        assert r.kind == "add" and r.step == s["step"]
        assert r.a == int(s["a"]["bits"], 16)
        assert r.b == int(s["b"]["bits"], 16)
        compare_rounding(r, s["rounding"])
    final = t.roundings[-1]
    assert final.kind == "final" and final.step is None
    assert final.a == int(j["final"]["value"]["bits"], 16)
    compare_rounding(final, j["final"]["rounding"])
    sm = j["summary"]
    assert t.result == int(sm["result"]["bits"], 16)
    assert flags_str(t.flags) == sm["flags"]
    assert sm["roundings"] == len(t.roundings)
    if "exact_sum" in sm:
        assert t.exact_sum == Fraction(sm["exact_sum"])
        assert t.error == Fraction(sm["error"])
        assert t.error_ulps == Fraction(sm["error_ulps"])
    if "sr_draws" in sm:
        assert t.sr_draws == int(sm["sr_draws"])
    return t


def test_paper_example(cli):
    # the README's Eq. 4 trace: -2.40625 + -0x1.c5cp-11 + -2.296875
    t = check(cli, [-2.40625, float.fromhex("-0x1.c5cp-11"), -2.296875])
    assert t.result == 0xC097
    assert t.roundings[-1].exact == Fraction("-4.703990459442138671875")
    assert t.roundings[-1].error_ulps == Fraction("-0.4723052978515625")
    assert isinstance(t.error, Fraction)


@pytest.mark.parametrize("mode", bf16emu.MODES)
def test_modes_match_cli(cli, mode):
    x = np.random.default_rng(3).standard_normal(24) * 3
    x[5] = -x[4]                       # an exact cancellation
    check(cli, x, ["--acc-mode", mode, "--mode", mode, "--seed", "7"],
          acc_mode=mode, mode=mode, seed=7)


@pytest.mark.parametrize("acc,out", [("bf16", "bf16"), ("f16", "e4m3"),
                                     ("f32", "f16"), ("f32", "f64"),
                                     ("tf32", "e5m2")])
def test_formats_match_cli(cli, acc, out):
    x = [i * 1e-3 for i in range(1, 40)]
    check(cli, x, ["--acc", acc, "--out", out], acc=acc, out=out)


@pytest.mark.parametrize("env", ["x86", "nvidia", "arm-bfdot"])
def test_tiny_values_env(cli, env):
    x = [2.0 ** -130, 3 * 2.0 ** -140, -2.0 ** -128, 2.0 ** -149]
    check(cli, x, ["--env", env], env=env)
    check(cli, x, ["--ftz", "--daz"], ftz=True, daz=True)


def test_specials_and_wide_sums(cli):
    check(cli, [3.0e38, 3.0e38, -1.0])                 # overflow
    check(cli, [1.0, float("inf"), float("-inf"), 2.0])
    check(cli, [1.0, float("nan"), 2.0])
    # an exponent difference wider than the event's 128-bit window
    check(cli, [1.0e30, 1.0e-30, -1.0e30])


def test_bit_pattern_operands(cli):
    b = bf16emu.round(np.array([1.5, -0.1, 3.3, 1e-3], np.float32), "bf16")
    check(cli, b, texts=["bf16:0x%04X" % int(v) for v in b], fmt="bf16")
    one = bf16emu.trace(b, acc="bf16", fmt="bf16")
    assert len(one.roundings) == 4


def test_trace_errors():
    with pytest.raises(ValueError, match="at least one"):
        bf16emu.trace([])
    with pytest.raises(ValueError, match="unknown format"):
        bf16emu.trace([1.0], acc="f8")
    with pytest.raises(ValueError, match="unknown rounding mode"):
        bf16emu.trace([1.0], mode="nearest")
    with pytest.raises(TypeError, match="expected dtype uint16"):
        bf16emu.trace(np.zeros(3, np.uint8), fmt="bf16")


def test_trace_refcounts_and_memory():
    import sys
    import tracemalloc
    b = bf16emu.round(np.array([1.5, -0.1, 3.3, 1e-3], np.float32), "f32")
    bad = np.zeros(3, np.uint8)
    before = [sys.getrefcount(o) for o in (b, bad)]
    for _ in range(200):
        bf16emu._ext.trace(b, "f32", "sr", "bf16", "rne")
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(5000):              # 10,000 calls
        bf16emu._ext.trace(b, "f32", "sr", "bf16", "rne")
        try:
            bf16emu._ext.trace(bad)
        except TypeError:
            pass
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert [sys.getrefcount(o) for o in (b, bad)] == before
    assert grown < 100000, grown
