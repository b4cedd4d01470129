# test_torch.py -- torch tensors as bf16emu takes them (skipped where
# PyTorch is not installed): BF16 and FP16 tensors are read as their bit
# patterns, the same bits as the NumPy arrays of those patterns give.
import numpy as np
import pytest

import bf16emu

torch = pytest.importorskip("torch")


def test_bf16_and_f16_tensors_are_their_bits():
    g = torch.Generator().manual_seed(3)
    for dt, fmt in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
        q, k, v = (torch.randn(1, 2, 32, 64, generator=g).to(dt)
                   for _ in range(3))
        bits = [t.view(torch.int16).numpy().view(np.uint16)
                for t in (q, k, v)]
        a = bf16emu.attention(q, k, v, "fa2")
        b = bf16emu.attention(*bits, "fa2", fmt=fmt)
        assert np.array_equal(a.o, b.o) and np.array_equal(a.lse, b.lse)


def test_a_tensor_of_another_format_is_refused():
    q = torch.zeros(1, 1, 8, 64, dtype=torch.float16)
    with pytest.raises(TypeError, match="torch.float16"):
        bf16emu.attention(q, q, q, "fa2", fmt="bf16")


def test_torch_bool_mask():
    q = torch.zeros(1, 1, 8, 64, dtype=torch.bfloat16)
    m = torch.ones(8, 8, dtype=torch.bool).tril()
    a = bf16emu.attention(q, q, q, "math", mask=m)
    b = bf16emu.attention(q, q, q, "math", mask=m.numpy())
    assert np.array_equal(a.o, b.o)
