# test_mma.py -- bf16emu.mma against bf16emu mma on the same .npy files,
# for every preset and an input format it takes.
import os

import numpy as np
import pytest

import bf16emu

# the input format each preset is tried with, in order of preference
TRY = ["bf16", "f16", "tf32", "e4m3", "f32"]


def inputs(fmt, m, k, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    # a few large and tiny values, so blocks align over a wide range
    a[0, : min(k, 3)] *= np.float32(2.0 ** 12)
    b[-1, :] *= np.float32(2.0 ** -14)
    c = rng.standard_normal((m, n)).astype(np.float32)
    return (bf16emu.round(a, fmt, "rne"), bf16emu.round(b, fmt, "rne"),
            c.view(np.uint32))


def preset_formats():
    out = []
    for model in bf16emu.mma_models():
        for fmt in TRY:
            a, b, c = inputs(fmt, 1, 2, 1, 0)
            try:
                bf16emu.mma(a, b, c, model, fmt)
            except ValueError:
                continue
            out.append((model, fmt))
            break
    return out


@pytest.mark.parametrize("model,fmt", preset_formats())
def test_mma_matches_cli(cli, tmp_path, model, fmt):
    for with_c in (True, False):
        a, b, c = inputs(fmt, 5, 40, 3, hash(model) & 0xFFFF)
        d = bf16emu.mma(a, b, c if with_c else None, model, fmt)
        assert d.dtype == np.uint32 and d.shape == (5, 3)
        fa, fb, fc, fd = (os.path.join(tmp_path, x + ".npy")
                          for x in "abcd")
        if a.dtype == np.uint32:  # F32 files hold TF32 / FP32 values
            np.save(fa, a.view(np.float32))
            np.save(fb, b.view(np.float32))
        else:
            np.save(fa, a)
            np.save(fb, b)
        np.save(fc, c.view(np.float32))
        args = ["mma", "--model", model, "--a", fa, "--b", fb, "--out", fd,
                "--force", "--dtype", fmt]
        if with_c:
            args += ["--c", fc]
        cli(*args)
        want = np.load(fd).view(np.uint32)
        assert np.array_equal(d, want), (model, fmt, with_c)


def test_mma_fp8_variant():
    a, b, c = inputs("e4m3", 2, 64, 2, 3)
    assert np.array_equal(bf16emu.mma(a, b, c, "sm90", "e4m3"),
                          bf16emu.mma(a, b, c, "sm90-fp8", "e4m3"))


def test_mma_flags():
    a = np.array([[0x7F80]], np.uint16)
    b = np.array([[0x0000]], np.uint16)
    d, fl = bf16emu.mma(a, b, None, "fma-chain", "bf16", flags=True)
    assert fl & bf16emu.Flags.INVALID


def test_mma_batched_broadcasts_as_matmul(cli, tmp_path):
    # A [2, 3, M, K] against one B [K, N] and C [3, M, N]: each matrix of
    # the batch is the product of its own operands (the CLI's for two of
    # them, the 2-D call's for all), the flags of all together
    rng = np.random.default_rng(7)
    a = bf16emu.round(rng.standard_normal((2, 3, 5, 40)).astype(np.float32))
    b = bf16emu.round(rng.standard_normal((40, 4)).astype(np.float32))
    c = rng.standard_normal((3, 5, 4)).astype(np.float32).view(np.uint32)
    d, fl = bf16emu.mma(a, b, c, "sm90", flags=True)
    assert d.shape == (2, 3, 5, 4) and d.dtype == np.uint32
    for i in range(2):
        for j in range(3):
            assert np.array_equal(d[i, j], bf16emu.mma(a[i, j], b, c[j]))
    for i, j in ((0, 0), (1, 2)):
        fa, fb, fc, fd = (os.path.join(tmp_path, x + ".npy")
                          for x in "abcd")
        np.save(fa, a[i, j])
        np.save(fb, b)
        np.save(fc, c[j].view(np.float32))
        cli("mma", "--model", "sm90", "--a", fa, "--b", fb, "--c", fc,
            "--out", fd, "--force", "--dtype", "bf16")
        assert np.array_equal(d[i, j], np.load(fd).view(np.uint32))
    assert fl & bf16emu.Flags.INEXACT
    with pytest.raises(ValueError, match="do not broadcast"):
        bf16emu.mma(a, np.stack([b] * 4), None, "sm90")
