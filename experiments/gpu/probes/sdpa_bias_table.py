#!/usr/bin/env python3
"""sdpa_bias_table.py -- the signed bias of O, per SDPA backend, as the H200
measured it and as the emulator predicts it, against the exact reference.

usage: sdpa_bias_table.py BF16EMU [DUMP.json...]

For each BF16 dump of tests/data/gpu/backends (default: every NAME.json
there whose manifest has a launch shape; FP16 dumps are skipped, the exact
reference takes BF16 inputs) and each backend the dump holds, runs

    BF16EMU diff --dump NAME.safetensors --policy P --o NAME.safetensors:B.o
        --stage o --exact --json [--splits auto]

with P = fa2 (B = flash, split count from PyTorch's heuristic), cudnn,
efficient and math, and reads the stage's "exact" object: GPU - exact
and emulator - exact in ulps of BF16 at the exact value (MPFR, 256 bits),
each a count, mean and standard error.  The cells of all dumps are pooled
per backend (Chan's merge of the moments), and a Markdown table is
printed: per backend the pooled GPU mean with its 95% interval (elements taken
as independent), the emulator's, the counts of elements below and above
the exact value, and the O elements bit-equal between GPU and emulator;
then the means per dump.  Standard library only.

A dump that keeps only some rows of B.o (manifest: outputs_kept,
analysis/dump_outputs.h) gives the GPU's errors, and the bit-equal
count, on those rows alone (diff reads no more); its row in the per-dump
table says "kept rows" and whether the hash of the emulator's whole O is
the GPU's.
"""
import glob
import json
import math
import os
import subprocess
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..",
                                   ".."))
POLICY = {"flash": "fa2", "cudnn": "cudnn", "efficient": "efficient",
          "math": "math"}
ORDER = ["flash", "cudnn", "efficient", "math"]
Z95 = 1.959963984540054


def cell(b):
    """(n, mean, m2) of a diff "exact" side."""
    n = b["n"]
    m2 = (b["se"] ** 2) * n * (n - 1) if n > 1 else 0.0
    return n, b["mean"], m2


def merge(a, b):
    na, ma, qa = a
    nb, mb, qb = b
    n = na + nb
    if n == 0:
        return (0, 0.0, 0.0)
    d = mb - ma
    return (n, ma + d * nb / n, qa + qb + d * d * na * nb / n)


def summary(c):
    n, m, q = c
    se = math.sqrt(q / (n - 1) / n) if n > 1 else float("nan")
    return m, se


def fmt(c):
    m, se = summary(c)
    return "%+.4f [%+.4f, %+.4f]" % (m, m - Z95 * se, m + Z95 * se)


def run(emu, path, be, shape):
    st = path[:-5] + ".safetensors"
    cmd = [emu, "diff", "--dump", st, "--policy", POLICY[be],
           "--o", st + ":" + be + ".o", "--stage", "o", "--exact", "--json"]
    if be == "flash":
        cmd += ["--splits", "auto"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    j = json.loads(p.stdout)
    o = [s for s in j["stages"] if s["stage"] == "o"][0]
    ex = o["exact"]
    kept = o.get("kept")
    note = "" if not kept else " (kept rows of %d; hash %s)" % (
        kept["whole_elements"], "equal" if kept["hash_equal"] else "differs")
    return (cell(ex["gpu"]), cell(ex["emulator"]), o["equal"], o["elements"],
            (ex["gpu"]["neg"], ex["gpu"]["pos"], ex["emulator"]["neg"],
             ex["emulator"]["pos"]), note)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    emu = sys.argv[1]
    paths = sys.argv[2:] or sorted(
        glob.glob(os.path.join(TOP, "tests/data/gpu/backends/*.json")))
    pooled = {be: [(0, 0.0, 0.0), (0, 0.0, 0.0), 0, 0, [0, 0, 0, 0]]
              for be in ORDER}
    rows = []
    for path in paths:
        man = json.load(open(path))
        if "launch_shape" not in man or man.get("dtype") != "bfloat16":
            continue
        name = os.path.basename(path)[:-5]
        for be in ORDER:
            if be not in man.get("backends", {}):
                continue
            g, e, eq, n, signs, note = run(emu, path, be, man["shape"])
            p = pooled[be]
            p[0], p[1] = merge(p[0], g), merge(p[1], e)
            p[2] += eq
            p[3] += n
            p[4] = [a + b for a, b in zip(p[4], signs)]
            rows.append((name, be, g, e, eq, n, note))
            print("%s %s: gpu %s emulator %s, bit-equal %d/%d%s" % (
                name, be, fmt(g), fmt(e), eq, n, note), file=sys.stderr,
                flush=True)
    print("| backend (policy) | elements | GPU - exact, mean [95%] (ulps) "
          "| emulator - exact, mean [95%] (ulps) | GPU below / above exact "
          "| emulator below / above | O bit-equal |")
    print("|---|---:|---|---|---:|---:|---:|")
    for be in ORDER:
        g, e, eq, n, sg = pooled[be]
        if n == 0:
            continue
        print("| %s (`%s`) | %d | %s | %s | %d / %d | %d / %d | %d/%d |" % (
            be, POLICY[be], g[0], fmt(g), fmt(e), sg[0], sg[1], sg[2], sg[3],
            eq, n))
    print()
    print("| dump | backend | GPU - exact (ulps) | emulator - exact (ulps) "
          "| O bit-equal |")
    print("|---|---|---|---|---:|")
    for name, be, g, e, eq, n, note in rows:
        print("| %s | %s | %s | %s | %d/%d%s |" % (name, be, fmt(g), fmt(e),
                                                 eq, n, note))


if __name__ == "__main__":
    main()
