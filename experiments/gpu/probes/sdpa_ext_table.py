#!/usr/bin/env python3
"""sdpa_ext_table.py -- the emulator's fa2 against the H200 SDPA dumps, one
Markdown table per family.

usage: sdpa_ext_table.py BF16EMU [DUMP.safetensors...]

For each dump (default: tests/data/gpu/sdpa_h200_*.safetensors with a
backward, and every tests/data/gpu/sdpa_ext/*.safetensors) runs

    BF16EMU attn --policy fa2 --q F:q --k F:k --v F:v [--do F:do --backward
        [--dq-buffers G]] [--causal] --splits N --no-exact --out TMP

(the built-in fa2 description and its defaults: ex2-sm90, lg2-sm90, the
split count N and the dQ buffer count G from the manifest: G is the
launch's, and a dump keeps one head of it) and counts the elements of o,
lse, dq, dk and dv equal bit for bit to the dump's.  The backward runs
from the emulator's own O and LSE: the chain.  Families: non-split (one
KV split, Nq > 1), split-KV (Nq > 1), decode (Nq = 1), FP16, causal with
Nq != Nk, and dQ buffers (the backward runs of experiments/gpu/
sdpa_sweep.py's "bwd_" cases: more KV blocks than dQ buffers, or the
non-deterministic backward, whose dQ no run reproduces).  Standard
library only.

A dump that keeps only some rows of an output (manifest: outputs_kept,
analysis/dump_outputs.h; experiments/gpu/trim_dump.py --rows) is
compared on those rows alone: its cell is "E/N kept of W, hash equal"
(or "hash differs"), where N of the W elements are stored and the hash
of the emulator's whole tensor is checked against the GPU's.  The totals
count the stored elements only; a differing hash is counted below them.
"""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile

TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..",
                                   ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import fixgen  # noqa: E402


def read_st(path):
    """The tensors of a safetensors file as lists of FP32 bit patterns
    (BF16 widened; F16 kept as its 16 bits, tagged)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for key, v in head.items():
        if key == "__metadata__":
            continue
        s, e = v["data_offsets"]
        b = data[s:e]
        if v["dtype"] == "F32":
            out[key] = ("f32", struct.unpack("<%dI" % (len(b) // 4), b))
        elif v["dtype"] == "BF16":
            out[key] = ("f32", tuple(x << 16 for x in
                                     struct.unpack("<%dH" % (len(b) // 2),
                                                   b)))
        elif v["dtype"] == "F16":
            out[key] = ("f16", struct.unpack("<%dH" % (len(b) // 2), b))
        out[key + ".shape"] = v["shape"]
        out[key + ".dtype"] = v["dtype"]
    return out


def f32_to_f16_bits(x):
    """FP32 bits of a value on the FP16 grid -> its FP16 bits (exact)."""
    return struct.unpack("<H", struct.pack("<e", struct.unpack(
        "<f", struct.pack("<I", x))[0]))[0]


def kept_index(kept, stored_shape):
    """The whole tensor's flat index of each stored element of a tensor
    kept in part (rows [a, b) of axis 2)."""
    rows = [r for a, b in kept["rows"] for r in range(a, b)]
    inner = 1
    for x in kept["shape"][3:]:
        inner *= x
    n = kept["shape"][2]
    bh = stored_shape[0] * stored_shape[1]
    return [(h * n + r) * inner + c for h in range(bh) for r in rows
            for c in range(inner)]


def whole_hash(vals, kind):
    """The hash (analysis/dump_outputs.h) of the emulator's tensor VALS (FP32
    bits) in the dump's dtype KIND: BF16 and F16 patterns, or F32 as its
    low and high 16-bit halves."""
    if kind == "f16":
        w = list(vals)
    elif kind == "bf16":
        w = [x >> 16 if x & 0xFFFF == 0 else None for x in vals]
        if None in w:
            return None
    else:
        w = [h for x in vals for h in (x & 0xFFFF, x >> 16)]
    return fixgen.hash_final(fixgen.hash_plain(w), len(w))


def equal(emu, gpu, key, man):
    """(bit-equal, stored, whole elements or None, hash equal or None)."""
    if key not in emu or key not in gpu:
        return None
    kind, g = gpu[key]
    e = emu[key][1]
    if kind == "f16":
        e = tuple(f32_to_f16_bits(x) for x in e)
    kept = (man.get("outputs_kept") or {}).get(key)
    if kept is None:
        return sum(1 for a, b in zip(e, g) if a == b), len(g), None, None
    idx = kept_index(kept, gpu[key + ".shape"])
    eq = sum(1 for i, b in zip(idx, g) if e[i] == b)
    dt = gpu[key + ".dtype"]
    h = whole_hash(e, {"F16": "f16", "BF16": "bf16"}.get(dt, "f32"))
    return eq, len(g), len(e), h == int(kept["hash"], 16)


def frac(r):
    if r is None:
        return "—"
    if r[2] is None:
        return "%d/%d" % r[:2]
    return "%d/%d kept of %d, hash %s" % (r[0], r[1], r[2],
                                          "equal" if r[3] else "differs")


def inputs(man):
    g = man.get("gen", "normal")
    txt = {"repeated-max": "repmax %d" % man.get("repeat", 0)}.get(g, g)
    if man.get("v_mean", 0.0) != 0.0 or man.get("v_std", 1.0) != 1.0:
        txt += ", V~N(%g, %g)" % (man.get("v_mean", 0.0),
                                  man.get("v_std", 1.0))
    return txt


def family(man, nq, nk):
    # the bwd_ cases ask for more backward runs than dump_sdpa.py's two
    if (man.get("backward_repro") or {}).get("runs", 2) != 2:
        return "dQ buffers"
    if man.get("dtype") == "float16":
        return "FP16"
    if nq == 1:
        return "decode"
    if man.get("causal") and nq != nk:
        return "causal Nq ≠ Nk"
    if man.get("splits", 1) > 1:
        return "split-KV"
    return "non-split"


def run(bf16emu, path):
    man_path = path[:-len(".safetensors")] + ".json"
    man = json.load(open(man_path)) if os.path.exists(man_path) else {}
    gpu = read_st(path)
    # the inputs stored, or described by the manifest (inputs_gen: bf16emu
    # regenerates them; O has Q's shape, and dK K's)
    gen = (man.get("inputs_gen") or {}).get("tensors", {})
    nq, d = gpu["o.shape"][-2], gpu["o.shape"][-1]
    nk = gpu["k.shape"][-2] if "k.shape" in gpu else \
        (man.get("shape") or {}).get("nk", gen.get("k", {}).get(
            "shape", [0, 0, 0])[2])
    splits = man.get("splits", 1)
    bwd = "dq" in gpu and ("do" in gpu or "do" in gen)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "emu.safetensors")
        cmd = [bf16emu, "attn", "--policy", "fa2", "--q", path + ":q",
               "--k", path + ":k", "--v", path + ":v", "--splits",
               str(splits), "--no-exact", "--out", out]
        if man.get("causal"):
            cmd.append("--causal")
        if bwd:
            cmd += ["--do", path + ":do", "--backward"]
            if man.get("dq_buffers"):
                cmd += ["--dq-buffers", str(man["dq_buffers"])]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit("%s: %s" % (" ".join(cmd), p.stderr.strip()))
        emu = read_st(out)
    ls = man.get("launch_shape")
    shape = ("%d·%d·%d·%d·%d" % (ls["batch"], ls["heads"], ls["nq"],
                                 ls["nk"], ls["d"]) if ls else
             "%d·%d·%d·%d·%d" % (gpu["o.shape"][0], gpu["o.shape"][1], nq,
                                 nk, d))
    row = {
        "case": os.path.basename(path)[:-len(".safetensors")],
        "shape": shape,
        "causal": "yes" if man.get("causal") else "—",
        "inputs": inputs(man),
        "splits": splits,
        "family": family(man, nq, nk),
        "dqbuf": "%s / %d%s" % (
            man.get("dq_buffers"), (nk + (127 if d <= 128 else 63))
            // (128 if d <= 128 else 64),
            "" if man.get("deterministic", True) else " (non-det.)"),
    }
    for key in ("o", "lse", "dq", "dk", "dv"):
        row[key] = equal(emu, gpu, key, man) if key in ("o", "lse") or bwd \
            else None
    return row


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    bf16emu = argv[1]
    files = argv[2:]
    if not files:
        files = sorted(f for f in glob.glob(os.path.join(
            TOP, "tests/data/gpu/sdpa_h200_*.safetensors"))
            if "_rows" not in f)
        files += sorted(glob.glob(os.path.join(
            TOP, "tests/data/gpu/sdpa_ext/*.safetensors")))
    rows = [run(bf16emu, f) for f in files]
    tot = {}
    for fam in ("non-split", "split-KV", "decode", "FP16",
                "causal Nq ≠ Nk", "dQ buffers"):
        sel = [r for r in rows if r["family"] == fam]
        if not sel:
            continue
        bufs = fam == "dQ buffers"
        print("\n#### %s (%d dumps)\n" % (fam, len(sel)))
        print("| case | B·H·Nq·Nk·d (launch) | causal | inputs | splits | %sO "
              "| LSE | dQ | dK | dV |" % (
                  "dQ buffers / KV blocks | " if bufs else ""))
        print("|---|---|---|---|---|---|---|---|---|---|" +
              ("---|" if bufs else ""))
        for r in sel:
            print("| `%s` | %s | %s | %s | %d | %s%s | %s | %s | %s | %s |" % (
                r["case"], r["shape"], r["causal"], r["inputs"], r["splits"],
                r["dqbuf"] + " | " if bufs else "",
                frac(r["o"]), frac(r["lse"]), frac(r["dq"]), frac(r["dk"]),
                frac(r["dv"])))
            for key in ("o", "lse", "dq", "dk", "dv"):
                if r[key] is not None:
                    a, b, c = tot.get(key, (0, 0, 0))
                    tot[key] = (a + r[key][0], b + r[key][1],
                                c + (r[key][3] is False))
    print("\nAll %d dumps (stored elements; of tensors kept in part only "
          "the kept rows, and their whole-tensor hashes): %s" % (
              len(rows), ", ".join(
                  "%s %d/%d%s" % (k, tot[k][0], tot[k][1],
                                  ", %d hashes differ" % tot[k][2]
                                  if tot[k][2] else "")
                  for k in ("o", "lse", "dq", "dk", "dv") if k in tot)))


if __name__ == "__main__":
    main(sys.argv)
