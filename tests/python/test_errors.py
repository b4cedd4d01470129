# test_errors.py -- bad inputs raise clear exceptions carrying the
# library's message; reference counts do not grow over many calls; long
# calls release the GIL.
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import bf16emu

B16 = np.zeros(4, np.uint16)


def test_wrong_dtype():
    with pytest.raises(TypeError, match="expected dtype uint16"):
        bf16emu.add(np.zeros(4, np.uint32), B16)
    with pytest.raises(TypeError, match="expected dtype float32"):
        bf16emu.round(np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        bf16emu.add([1, 2], B16)
    with pytest.raises(TypeError, match="uint8"):
        bf16emu.to_float(B16, "e4m3")


def test_wrong_shape():
    with pytest.raises(ValueError, match="same shape"):
        bf16emu.add(B16, np.zeros(5, np.uint16))
    with pytest.raises(ValueError, match=r"\[M, K\] and \[K, N\]"):
        bf16emu.mma(np.zeros((2, 3), np.uint16), np.zeros((4, 2), np.uint16))
    with pytest.raises(ValueError, match=r"c: expected the shape \[M, N\]"):
        bf16emu.mma(np.zeros((2, 3), np.uint16), np.zeros((3, 2), np.uint16),
                    np.zeros((3, 3), np.uint32))
    with pytest.raises(ValueError, match="4 dimensions"):
        bf16emu.attention(B16, B16, B16)
    q = np.zeros((1, 3, 4, 64), np.uint16)
    kv = np.zeros((1, 2, 4, 64), np.uint16)
    with pytest.raises(ValueError, match="multiple of Hkv"):
        bf16emu.attention(q, kv, kv)


def test_non_contiguous():
    a = np.zeros(8, np.uint16)[::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        bf16emu.add(a, a)
    m = np.zeros((4, 4), np.float32).T
    with pytest.raises(ValueError, match="ascontiguousarray"):
        bf16emu.round(m)
    swapped = np.zeros(4, ">u2")
    with pytest.raises(ValueError, match="native byte order"):
        bf16emu.add(swapped, swapped)


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown format"):
        bf16emu.round(np.zeros(1, np.float32), "bf17")
    with pytest.raises(ValueError, match="unknown rounding mode"):
        bf16emu.round(np.zeros(1, np.float32), "bf16", "nearest")
    with pytest.raises(ValueError, match="unknown environment"):
        bf16emu.round(np.zeros(1, np.float32), env="gpu")
    with pytest.raises(ValueError, match="unknown preset"):
        bf16emu.mma(np.zeros((1, 1), np.uint16), np.zeros((1, 1), np.uint16),
                    model="sm99")
    with pytest.raises(ValueError, match="does not take e5m2 inputs"):
        bf16emu.mma(np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.uint8),
                    model="amx", fmt="e5m2")
    q = np.zeros((1, 1, 4, 64), np.uint16)
    with pytest.raises(ValueError, match="unknown kernel"):
        bf16emu.attention(q, q, q, "fa3")
    with pytest.raises(ValueError, match="causal_align"):
        bf16emu.attention(q, q, q, causal=True, causal_align="middle")


def test_library_messages():
    q = np.zeros((1, 1, 4, 64), np.uint16)
    # the library's refusal, word for word after the prefix
    with pytest.raises(ValueError,
                       match="refused: splits: more splits than KV blocks"):
        bf16emu.attention(q, q, q, "fa2", splits=4)
    with pytest.raises(ValueError, match="finite positive"):
        bf16emu.attention(q, q, q, scale=-1.0)
    with pytest.raises(ValueError, match="1 to 128"):
        bf16emu.attention(q, q, q, splits=0)


def test_missing_table_message(tmp_path):
    """A table that cannot be read is an OSError naming the file (in a
    fresh interpreter: a loaded table is kept)."""
    bad = os.path.join(tmp_path, "none.bin.gz")
    code = ("import numpy as np, bf16emu\n"
            "q = np.zeros((1, 1, 4, 64), np.uint16)\n"
            "try:\n"
            "    bf16emu.attention(q, q, q, 'fa2')\n"
            "except OSError as e:\n"
            "    print('OSError', e)\n")
    env = dict(os.environ, BF16EMU_EX2_TABLE=bad)
    p = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.stdout.startswith("OSError"), p.stdout
    assert bad in p.stdout and "ex2-sm90" in p.stdout


def test_refcounts_do_not_leak():
    a = bf16emu.round(np.linspace(-3, 3, 64, dtype=np.float32))
    b = bf16emu.round(np.linspace(1, 2, 64, dtype=np.float32))
    c = np.zeros((2, 2), np.uint32)
    m = np.zeros((2, 8), np.uint16)
    n = np.zeros((8, 2), np.uint16)
    bad = np.zeros(3, np.uint32)
    objs = (a, b, c, m, n, bad)
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(10000):
        bf16emu.add(a, b)
        bf16emu.fma(a, b, a, flags=True)
        bf16emu.round(b.view(np.float16).astype(np.float32), flags=True)
        bf16emu.mma(m, n, c)
        try:
            bf16emu.add(a, bad)
        except TypeError:
            pass
    after = [sys.getrefcount(o) for o in objs]
    assert before == after


def test_memory_does_not_grow():
    import tracemalloc
    a = bf16emu.round(np.linspace(-3, 3, 4096, dtype=np.float32))
    for _ in range(100):
        bf16emu.mul(a, a)
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(2000):
        bf16emu.mul(a, a)
        bf16emu.to_float(a)
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert grown < 100000, grown


def test_long_call_releases_gil():
    """Another thread runs Python code while a long mma computes."""
    rng = np.random.default_rng(0)
    a = bf16emu.round(rng.standard_normal((96, 2048)).astype(np.float32))
    b = bf16emu.round(rng.standard_normal((2048, 96)).astype(np.float32))
    t0 = time.perf_counter()
    bf16emu.mma(a, b, None, "exact")
    alone = time.perf_counter() - t0
    if alone < 0.05:
        pytest.skip("the mma took %.3f s: too short to observe" % alone)
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.01)
        start = ticks[0]
        bf16emu.mma(a, b, None, "exact")
        during = ticks[0] - start
    finally:
        done.set()
        t.join()
    # with the GIL held the counter would advance only at the call's ends
    assert during > 1000, during


def test_mask_kernel_dict_and_diff_refcounts():
    """attention with a mask and a description dict, and diff, leave the
    reference counts of their arguments as they were, on success and on
    refusal."""
    q = bf16emu.round(np.linspace(-1, 1, 64, dtype=np.float32)) \
        .reshape(1, 1, 4, 16)
    mask = np.tril(np.ones((4, 4), bool))
    bad_mask = np.ones((3, 4), bool)
    kd = bf16emu.describe("math")
    a = bf16emu.round(np.linspace(-3, 3, 64, dtype=np.float32))
    b = bf16emu.round(np.linspace(1, 2, 64, dtype=np.float32))
    objs = (q, mask, bad_mask, a, b)
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(300):
        bf16emu.attention(q, q, q, "math", mask=mask)
        bf16emu.attention(q, q, q, kd, mask=mask)
        bf16emu.diff(a, b)
        try:
            bf16emu.attention(q, q, q, "math", mask=bad_mask)
        except ValueError:
            pass
    after = [sys.getrefcount(o) for o in objs]
    assert before == after
