#!/usr/bin/env python3
"""regen_dump.py -- dump a committed fixture again with generated inputs.

usage: regen_dump.py OUTDIR MANIFEST.json [MANIFEST.json ...]

For each manifest of a dump_sdpa.py fixture (--gen normal, sink,
repeated-max or mirror; a trimmed one names its launch's heads in
heads_from / batch_from), runs dump_sdpa.py again on the same launch
(backend, launch shape, dtype, mask, the generator and its repeat count
or mirror blocks, V's mean and std (0.4 of sink and repeated-max becomes
dump_sdpa.SINK_V_STD, 13/32), backward or not, deterministic or not,
the backward's repeat counts) with --inputs-gen SEED (SEED: the
manifest's seed), in one
process, then keeps the same (batch, head) pairs with trim_dump.py.
Writes OUTDIR/NAME.safetensors and OUTDIR/NAME.json (NAME: the
manifest's), without the inputs: the manifest's inputs_gen describes
them.  A manifest this cannot redo is reported and skipped.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402
import trim_dump  # noqa: E402


def argv_of(m):
    """dump_sdpa.py's options for the launch of manifest M."""
    if m.get("producer") != "experiments/gpu/dump_sdpa.py":
        raise ValueError("not a dump_sdpa.py manifest")
    gen = m.get("gen", "normal")
    if gen not in ("normal", "sink", "repeated-max", "mirror"):
        raise ValueError("gen %r" % gen)
    ls = m.get("launch_shape") or m["shape"]
    if "rows_from" in m:
        raise ValueError("some query rows of a launch (rows_from)")
    # the oldest manifests name no dtype (BF16) and no backward_op (their
    # tensors show whether the backward ran)
    dt = {"bfloat16": "bf16", "float16": "fp16"}[m.get("dtype", "bfloat16")]
    v_std = float(m.get("v_std", 1.0))
    if gen in ("sink", "repeated-max") and v_std == 0.4:
        v_std = dump_sdpa.SINK_V_STD  # 0.4 is not dyadic
    a = ["--backend", m["backend"], "--batch", str(ls["batch"]),
         "--heads", str(ls["heads"]), "--nq", str(ls["nq"]),
         "--nk", str(ls["nk"]), "--d", str(ls["d"]), "--dtype", dt,
         "--seed", str(m["seed"]), "--inputs-gen", str(m["seed"]),
         "--v-mean", repr(float(m.get("v_mean", 0.0))),
         "--v-std", repr(v_std), "--gen", gen]
    if gen == "repeated-max":
        a += ["--repeat", str(m["repeat"])]
    if gen == "mirror":
        mi = m["mirror"]
        a += ["--mirror-block", str(mi["block"]),
              "--mirror-stride", str(mi["stride"]),
              "--mirror-big", repr(float(mi["big"])),
              "--mirror-small", repr(float(mi["small"]))]
    if m.get("causal"):
        a.append("--causal")
    if "backward_op" not in m and "dq" in m.get("tensors", {}):
        pass
    elif m.get("backward_op") is None:
        a.append("--no-backward")
    else:
        br = m.get("backward_repro") or {}
        if "runs" in br:
            a += ["--backward-runs", str(br["runs"])]
        nd = m.get("nondeterministic")
        if isinstance(nd, dict) and "runs" in nd:
            a += ["--nondet-runs", str(nd["runs"])]
    if m["backend"] in ("flash", "efficient", "math") \
            and not m.get("deterministic", True):
        a.append("--nondeterministic")
    return a


def pairs_of(m):
    """The (batch, head) pairs the fixture keeps, or None for all."""
    hf = m.get("heads_from", m.get("heads_kept"))
    if hf is None:
        return None
    bf = m.get("batch_from", 0)
    if bf is None:
        bf = 0
    return [(bf[i] if isinstance(bf, list) else bf, h)
            for i, h in enumerate(hf)]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    bad = 0
    for path in sys.argv[2:]:
        name = os.path.basename(path)[:-len(".json")]
        with open(path) as f:
            m = json.load(f)
        try:
            argv = argv_of(m)
        except (ValueError, KeyError) as e:
            print("%s: skipped: %s" % (name, e), flush=True)
            continue
        t = time.time()
        full = os.path.join(out, name + ".full.safetensors")
        dst = os.path.join(out, name + ".safetensors")
        try:
            dump_sdpa.main(["--out", full] + argv)
            pairs = pairs_of(m)
            if pairs is None:
                os.replace(full, dst)
                os.replace(full[:-len(".safetensors")] + ".json",
                           dst[:-len(".safetensors")] + ".json")
            else:
                trim_dump.trim(full, dst, pairs)
                os.unlink(full)
                os.unlink(full[:-len(".safetensors")] + ".json")
        except (Exception, SystemExit) as e:  # report, go on
            print("%s: failed: %s" % (name, e), flush=True)
            bad += 1
            continue
        print("%s: %d bytes, %.1f s" % (name, os.path.getsize(dst),
                                         time.time() - t), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
