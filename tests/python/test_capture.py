# test_capture.py -- bf16emu.capture is experiments/gpu/capture.py, whole
# and unchanged; `import bf16emu` does not need torch.
import os
import subprocess
import sys

import pytest

import bf16emu

HERE = os.path.dirname(os.path.abspath(__file__))


def test_package_imports_without_torch():
    code = ("import sys, bf16emu; "
            "assert 'torch' not in sys.modules; "
            "assert 'bf16emu.capture' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_capture_is_the_source_file():
    built = os.path.join(os.path.dirname(bf16emu.__file__), "capture.py")
    src = os.path.join(HERE, "..", "..", "experiments", "gpu", "capture.py")
    assert os.path.exists(built)
    if not os.path.exists(src):
        pytest.skip("experiments/gpu/capture.py not beside the tests")
    with open(built, "rb") as a, open(src, "rb") as b:
        assert a.read() == b.read()


def test_capture_imports_with_torch():
    # a torch older than 2.0 is refused from its metadata (importing it
    # takes seconds)
    import importlib.metadata
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    try:
        major = importlib.metadata.version("torch").split(".")[0]
    except importlib.metadata.PackageNotFoundError:
        major = ""
    if major.isdigit() and int(major) < 2:
        pytest.skip("torch %s: the recorder needs PyTorch 2.0 or later"
                    % importlib.metadata.version("torch"))
    torch = pytest.importorskip("torch")
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        pytest.skip("torch %s has no scaled_dot_product_attention (the "
                    "recorder needs PyTorch 2.0 or later)"
                    % torch.__version__)
    from bf16emu.capture import Capture
    assert callable(Capture) and hasattr(Capture, "recording")
