# conftest.py -- shared helpers of the bf16emu Python tests: the built
# tool ($BF16EMU) and readers of what it writes.
import json
import os
import struct
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="session")
def cli():
    """A function that runs the built tool with ARGS and returns stdout."""
    tool = os.environ.get("BF16EMU")
    if not tool or not os.access(tool, os.X_OK):
        pytest.skip("$BF16EMU (the built bf16emu tool) is not set")
    env = None
    # In a build tree the tool is libtool's wrapper script; the program
    # itself (.libs/bf16emu with the tree's libbf16emu) starts several
    # times faster, which matters over the suite's thousand runs.
    here = os.path.dirname(tool)
    real = os.path.join(here, ".libs", os.path.basename(tool))
    libdir = os.path.join(here, "..", ".libs")
    with open(tool, "rb") as f:
        script = f.read(2) == b"#!"
    if script and os.access(real, os.X_OK) and os.path.isdir(libdir):
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (libdir, env.get("LD_LIBRARY_PATH")) if p)
        tool = real

    def run(*args, check=True):
        p = subprocess.run([tool] + [str(a) for a in args], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if check and p.returncode != 0:
            raise AssertionError("bf16emu %s: exit %d: %s"
                                 % (" ".join(map(str, args)), p.returncode,
                                    p.stderr))
        return p.stdout
    return run


@pytest.fixture(scope="session")
def trace(cli):
    """trace(...) -> (result bits, flags string) of one bf16emu trace."""
    def run(*args):
        d = json.loads(cli("trace", "--json", *args))
        return int(d["summary"]["result"]["bits"], 16), d["summary"]["flags"]
    return run


def flags_str(flags):
    """The library's flag string (sf_flags_str): v i o u x."""
    f = int(flags)
    return "".join(c if f & bit else "." for c, bit in
                   (("v", 16), ("i", 8), ("o", 4), ("u", 2), ("x", 1)))


def attn_input_args(tmp_path, tensors, fmt):
    """The options of bf16emu attn that read TENSORS (q, k, v[, do]) from
    .npy files written to TMP_PATH (BF16 bits with --dtype bf16, FP16 as
    float16); with dO, --backward."""
    args = []
    for name, x in zip(("q", "k", "v", "do"), tensors):
        p = os.path.join(tmp_path, name + ".npy")
        np.save(p, x.view(np.float16) if fmt == "f16" else x)
        args += ["--" + name, p]
    if fmt == "bf16":
        args += ["--dtype", "bf16"]
    if len(tensors) == 4:
        args.append("--backward")
    return args


def read_safetensors(path):
    """{name: numpy array} of a .safetensors file (raw little-endian
    dtypes as stored; F32 read as uint32 bit patterns)."""
    kinds = {"F32": "<u4", "BF16": "<u2", "F16": "<u2", "U16": "<u2",
             "I64": "<i8", "U8": "u1", "BOOL": "u1", "F64": "<u8",
             "I32": "<i4"}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=kinds[t["dtype"]]) \
            .reshape(t["shape"])
    return out


def read_manifest(path):
    """The manifest (the JSON of the "manifest" metadata entry) of a
    .safetensors dump."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return json.loads(header["__metadata__"]["manifest"])


def gpu_dump(data, name, missing, ext=""):
    """The path of the dump NAME (+ EXT) in the folder DATA; NAME "(none)",
    the placeholder of an empty parametrization, skips the test with the
    reason MISSING."""
    if name == "(none)":
        pytest.skip(missing)
    return os.path.join(data, name + ext)


def read_dump(path):
    """(tensors, manifest) of the dump at PATH."""
    return read_safetensors(path), read_manifest(path)
