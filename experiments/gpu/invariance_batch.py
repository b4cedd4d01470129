#!/usr/bin/env python3
"""invariance_batch.py -- one sequence as entry 0 of batches of several
sizes: which batch sizes change entry 0's attention output, per backend.

usage: invariance_batch.py OUTDIR [NAME ...]
       invariance_batch.py --trim ROWS SRC.safetensors DST.safetensors
                           [--bwd-backends flash,...]

For each case of CASES: entry 0's Q, K, V come from the fixture
generator (fixgen.py, seed SEED; K and V with the case's key/value
heads), so a dump stores none of them; the other entries of a batch are
torch.randn on a CPU generator seeded with the batch size, in the case's
dtype.  For each backend of BACKENDS (flash, cudnn, efficient, math
pinned with torch.nn.attention.sdpa_kernel, and "default": PyTorch's own
choice) and each batch size of BATCHES, scaled_dot_product_attention
runs once under the profiler (the kernels and their grids:
"launches") and once more without it ("repeat": whether entry 0's O is
bit-equal to the first run's).  A case with decode steps also runs,
per backend and batch size, each query row i alone as one decode step
(q row i over the keys 0 .. i, is_causal off) and assembles entry 0's O
from the steps: "decode_classes", numbered together with the prefill's
classes (a decode O equal to a prefill class has its number).  Entry
0's O is grouped into classes of
bit-equal outputs in batch order: "classes" gives each batch size's
class, and the file stores each class's O once, as "BACKEND.cN.o"
([1, H, Nq, d] in the case's dtype).  A backend that refuses the call
is recorded with PyTorch's message ("refused") and nothing stored.

Files: OUTDIR/NAME.safetensors (the manifest as metadata "manifest") and
OUTDIR/NAME.json.  The manifest's "invariance" object holds batches,
and per backend classes, launches, repeat and refused; shape is the
kept batch entry ([1, H, Nq, d], heads of the launch), launch_shape the
launch at batch 1 (its batch is each of "batches").

--trim keeps the first ROWS query rows of each stored class output
(the classes themselves were found on the whole O) and records
"rows_kept" in the manifest: a small fixture of a large case;
--bwd-backends keeps the backward's class outputs (dQ, dK, dV, whole)
of the backends named only ("bwd_kept" in the manifest).  It needs
only the standard library.
"""
import contextlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PRODUCER = "experiments/gpu/invariance_batch.py"
SEED = 3201
BATCHES = [1, 2, 3, 4, 8, 16, 32, 64]
BACKENDS = ["flash", "cudnn", "default", "efficient", "math"]


def case(h, hkv, nq, nk, d, dt="bf16", causal=False, decode=False,
         bwd=False):
    return {"heads": h, "kv_heads": hkv, "nq": nq, "nk": nk, "d": d,
            "dtype": dt, "causal": causal, "decode": decode, "bwd": bwd}


CASES = {
    "dec_d64_nk4096_h16": case(16, 16, 1, 4096, 64),
    "dec_d64_nk4096_h16_fp16": case(16, 16, 1, 4096, 64, "fp16"),
    "dec_d128_nk16384_h8": case(8, 8, 1, 16384, 128),
    "dec_gqa_d128_nk4096_h32_kv8": case(32, 8, 1, 4096, 128),
    "dec_d64_nk8192_h32_fp16": case(32, 32, 1, 8192, 64, "fp16"),
    "pre_d64_n1024_h2_causal": case(2, 2, 1024, 1024, 64, causal=True),
    "pre_d64_n1024_h2_causal_fp16": case(2, 2, 1024, 1024, 64, "fp16",
                                         causal=True),
    "pre_d128_n2048_h4": case(4, 4, 2048, 2048, 128),
    "steps_d64_n512_h2_causal": case(2, 2, 512, 512, 64, causal=True,
                                     decode=True),
    "bwd_d64_n512_h4_causal": case(4, 4, 512, 512, 64, causal=True,
                                   bwd=True),
}


def dtypes():
    import torch
    return {"bf16": torch.bfloat16, "fp16": torch.float16}


def pin(be):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if be == "default":
        return contextlib.nullcontext()
    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION,
                        "cudnn": SDPBackend.CUDNN_ATTENTION,
                        "efficient": SDPBackend.EFFICIENT_ATTENTION,
                        "math": SDPBackend.MATH}[be])


def entry0(c):
    """Entry 0's Q, K, V (CPU) and their inputs_gen entries."""
    import dump_sdpa
    dt = dtypes()[c["dtype"]]
    made, entries = {}, {}
    for name, h, n in (("q", c["heads"], c["nq"]),
                       ("k", c["kv_heads"], c["nk"]),
                       ("v", c["kv_heads"], c["nk"]),
                       ("do", c["heads"], c["nq"])):
        made[name], entries[name] = dump_sdpa.fixgen_tensor(
            SEED, name, (1, h, n, c["d"]), dt)
    return made, entries


def batch_of(c, made, b):
    """The batch of B entries with entry 0 MADE's, on the device."""
    import torch
    dt = dtypes()[c["dtype"]]
    g = torch.Generator().manual_seed(1000 + b)
    out = []
    for name, h, n in (("q", c["heads"], c["nq"]),
                       ("k", c["kv_heads"], c["nk"]),
                       ("v", c["kv_heads"], c["nk"])):
        t = torch.randn((b, h, n, c["d"]), generator=g).to(dt)
        t[0] = made[name][0]
        out.append(t.cuda())
    return out


def call(be, c, q, k, v):
    import torch
    import torch.nn.functional as F
    kw = {"is_causal": c["causal"]}
    if c["kv_heads"] != c["heads"]:
        kw["enable_gqa"] = True
    with pin(be):
        o = F.scaled_dot_product_attention(q, k, v, **kw)
    torch.cuda.synchronize()
    return o


def short(name):
    return name.split("(", 1)[0] if name else name


def class_of(o, reps, tensors, be):
    """The class of output O among REPS (one output per class, in order
    of first appearance); a new class's O goes into REPS and into
    TENSORS as "BE.cN.o"."""
    import torch
    for i, r in enumerate(reps):
        if torch.equal(r.view(torch.int16), o.view(torch.int16)):
            return i
    reps.append(o)
    tensors["%s.c%d.o" % (be, len(reps) - 1)] = o.cpu()
    return len(reps) - 1


def decode_steps(be, c, made, reps, tensors):
    """Entry 0's O computed row by row as decode steps, per batch size:
    its classes among REPS.  RuntimeError when the backend refuses a
    step (cuDNN takes no step over a single key)."""
    import torch
    out = []
    for b in BATCHES:
        q, k, v = batch_of(c, made, b)
        dc = dict(c, causal=False)
        rows = [call(be, dc, q[:, :, i:i + 1], k[:, :, :i + 1],
                     v[:, :, :i + 1])[:1] for i in range(c["nq"])]
        o = torch.cat(rows, dim=2).contiguous()
        out.append(class_of(o, reps, tensors, be))
    return out


def backward_classes(be, c, made, tensors):
    """Entry 0's dQ, dK, dV per batch size (its dO from the fixture
    generator, the other entries' random), twice each: the classes of
    the three together, each class's tensors stored as "BE.bN.dq" (dk,
    dv), whether each repeated, and whether deterministic algorithms were
    on (for flash, efficient and math; cuDNN has no deterministic
    backward, and PyTorch's default runs cuDNN here)."""
    import torch
    det = be not in ("cudnn", "default")
    reps, out, rep = [], [], []
    for b in BATCHES:
        q, k, v = batch_of(c, made, b)
        g = torch.Generator().manual_seed(2000 + b)
        do = torch.randn(tuple(q.shape), generator=g).to(q.dtype)
        do[0] = made["do"][0]
        do = do.cuda()
        torch.use_deterministic_algorithms(det)
        runs = []
        try:
            for _ in range(2):
                leaves = [t.detach().clone().requires_grad_(True)
                          for t in (q, k, v)]
                call(be, c, *leaves).backward(do)
                torch.cuda.synchronize()
                runs.append([t.grad[:1].contiguous() for t in leaves])
        finally:
            torch.use_deterministic_algorithms(False)
        flat = [torch.cat([t.view(torch.int16).reshape(-1) for t in r])
                for r in runs]
        rep.append(bool(torch.equal(flat[0], flat[1])))
        cls = next((i for i, r in enumerate(reps)
                    if torch.equal(r, flat[0])), None)
        if cls is None:
            cls = len(reps)
            reps.append(flat[0])
            for nm, t in zip(("dq", "dk", "dv"), runs[0]):
                tensors["%s.b%d.%s" % (be, cls, nm)] = t.cpu()
        out.append(cls)
    return out, rep, det


def run_case(name, c, outdir, ver):
    import torch
    import dump_sdpa
    from safetensors.torch import save_file
    made, entries = entry0(c)
    man = dict(ver)
    man.update({
        "dtype": {"bf16": "bfloat16", "fp16": "float16"}[c["dtype"]],
        "shape": {"batch": 1, "heads": c["heads"],
                  "kv_heads": c["kv_heads"], "nq": c["nq"], "nk": c["nk"],
                  "d": c["d"]},
        "launch_shape": {"batch": 1, "heads": c["heads"],
                         "kv_heads": c["kv_heads"], "nq": c["nq"],
                         "nk": c["nk"], "d": c["d"],
                         "enable_gqa": c["kv_heads"] != c["heads"]},
        "batch_from": 0,
        "causal": c["causal"],
        "causal_alignment": "top-left (SDPA's is_causal)"
        if c["causal"] else None,
        "scale": "1/sqrt(d) (PyTorch default)",
        "call": "scaled_dot_product_attention(q, k, v%s%s)" % (
            ", is_causal=True" if c["causal"] else "",
            ", enable_gqa=True" if c["kv_heads"] != c["heads"] else ""),
        "other_entries": "torch.randn on a CPU generator seeded with "
                         "1000 + batch size, then converted to the dtype",
    })
    tensors = {}
    inv = {"batches": BATCHES, "backends": {}}
    on_gpu = None
    for be in BACKENDS:
        rec = {"classes": [], "launches": [], "kernels": [], "repeat": []}
        reps = []
        for b in BATCHES:
            q, k, v = batch_of(c, made, b)
            if on_gpu is None:
                on_gpu = {"q": q[:1], "k": k[:1], "v": v[:1],
                          "do": made["do"]}
            launches = []
            box = []
            try:
                names = dump_sdpa.kernels_seen(
                    lambda: box.append(call(be, c, q, k, v)), launches)
            except RuntimeError as e:
                rec = {"refused": " ".join(str(e).split())[:600]}
                break
            o = box[0][:1].contiguous()
            o2 = call(be, c, q, k, v)[:1].contiguous()
            rec["repeat"].append(bool(torch.equal(
                o.view(torch.int16), o2.view(torch.int16))))
            rec["kernels"].append(sorted({short(n) for n in names}))
            rec["launches"].append([{"name": short(x["name"]),
                                     "grid": x["grid"], "block": x["block"]}
                                    for x in launches])
            rec["classes"].append(class_of(o, reps, tensors, be))
            del q, k, v
            torch.cuda.empty_cache()
        if c.get("bwd") and "refused" not in rec:
            try:
                rec["bwd_classes"], rec["bwd_repeat"], \
                    rec["bwd_deterministic"] = backward_classes(
                        be, c, made, tensors)
            except RuntimeError as e:
                rec["bwd_refused"] = " ".join(str(e).split())[:600]
        if c.get("decode") and "refused" not in rec:
            try:
                dcls = decode_steps(be, c, made, reps, tensors)
                rec["decode_classes"] = dcls
            except RuntimeError as e:
                rec["decode_refused"] = " ".join(str(e).split())[:600]
        inv["backends"][be] = rec
        print(name, be, rec.get("classes", rec.get("refused")),
              rec.get("decode_classes", ""), rec.get("bwd_classes", ""),
              rec.get("bwd_repeat", rec.get("bwd_refused", "")), flush=True)
    man["inputs_gen"] = dump_sdpa.inputs_gen_of(SEED, entries, on_gpu, made)
    man["invariance"] = inv
    man["tensors"] = {n: [str(t.dtype).replace("torch.", ""),
                          list(t.shape)] for n, t in tensors.items()}
    text = json.dumps(man, allow_nan=False)
    path = os.path.join(outdir, name)
    save_file(tensors, path + ".safetensors", metadata={"manifest": text})
    with open(path + ".json", "w") as f:
        json.dump(man, f, indent=1, allow_nan=False)
        f.write("\n")


def versions():
    import torch
    p = torch.cuda.get_device_properties(0)
    return {"producer": PRODUCER, "gpu": torch.cuda.get_device_name(0),
            "cc": "%d.%d" % torch.cuda.get_device_capability(0),
            "cuda": torch.version.cuda, "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(),
            "sms": p.multi_processor_count}


def read_st(path):
    """The header (a dict) and the data bytes of a safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        return head, f.read()


def trim(rows, src, dst, bwd_backends=None):
    """SRC with each class output cut to its first ROWS rows, into DST;
    with BWD_BACKENDS (a list) the backward's class outputs (dQ, dK, dV:
    not cut, each row needs every key) of those backends only, listed as
    "bwd_kept"."""
    head, data = read_st(src)
    meta = head.pop("__metadata__", {})
    man = json.loads(meta["manifest"])
    out, blobs, off = {}, [], 0
    for name in sorted(head, key=lambda k: head[k]["data_offsets"][0]):
        t = head[name]
        part = name.split(".")
        if bwd_backends is not None and len(part) == 3 \
                and part[1].startswith("b") and part[0] not in bwd_backends:
            del man["tensors"][name]
            continue
        a, b = t["data_offsets"]
        raw = data[a:b]
        shape = list(t["shape"])
        if name.endswith(".o") and shape[2] > rows:
            es = (b - a) // (shape[0] * shape[1] * shape[2] * shape[3])
            per = shape[2] * shape[3] * es
            raw = b"".join(raw[h * per:h * per + rows * shape[3] * es]
                           for h in range(shape[0] * shape[1]))
            shape[2] = rows
        out[name] = {"dtype": t["dtype"], "shape": shape,
                     "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
        man["tensors"][name] = [man["tensors"][name][0], shape]
    man["rows_kept"] = rows
    if bwd_backends is not None:
        man["bwd_kept"] = sorted(bwd_backends)
    out["__metadata__"] = {"manifest": json.dumps(man, allow_nan=False)}
    text = json.dumps(out, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(dst + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(dst + ".tmp", dst)
    with open(dst[:-len(".safetensors")] + ".json", "w") as f:
        json.dump(man, f, indent=1, allow_nan=False)
        f.write("\n")


def main():
    if len(sys.argv) in (5, 7) and sys.argv[1] == "--trim":
        bwd = None
        if len(sys.argv) == 7:
            if sys.argv[5] != "--bwd-backends":
                sys.exit(__doc__)
            bwd = sys.argv[6].split(",")
        trim(int(sys.argv[2]), sys.argv[3], sys.argv[4], bwd)
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    want = set(sys.argv[2:])
    os.makedirs(outdir, exist_ok=True)
    ver = versions()
    for name, c in CASES.items():
        if want and name not in want:
            continue
        run_case(name, c, outdir, ver)


if __name__ == "__main__":
    main()
