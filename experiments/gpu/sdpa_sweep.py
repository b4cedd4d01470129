#!/usr/bin/env python3
"""sdpa_sweep.py -- the PyTorch SDPA (flash backend) cases of the cross-check.

usage: sdpa_sweep.py OUTDIR [NAME ...]

Runs dump_sdpa.py's forward (--no-backward) once per case below, in one
process, writing OUTDIR/NAME.safetensors and OUTDIR/NAME.json.  Every case
keeps the FA2 kernel on one KV split on an H200 (132 SMs):
B*H*ceil(NQ/64) >= 212, or a single KV block.  Names ending in "_bias"
are the cases whose O bias is measured against the exact reference
(repeated maxima or a sink, V with a negative mean).  With NAMEs, only
those cases run.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_sdpa  # noqa: E402

V_NEG = ["--v-mean", "-1.5", "--v-std", "0.4"]

# name, options (heads, N, d, generator, mask, seed)
CASES = [
    ("d64_n1024_normal_s1", ["--heads", "14", "--nq", "1024", "--seed", "1"]),
    ("d64_n1024_normal_causal_s2",
     ["--heads", "14", "--nq", "1024", "--causal", "--seed", "2"]),
    ("d64_n1024_repmax8_s3",
     ["--heads", "14", "--nq", "1024", "--gen", "repeated-max",
      "--repeat", "8", "--seed", "3"] + V_NEG),
    ("d64_n1024_sink_causal_s4",
     ["--heads", "14", "--nq", "1024", "--gen", "sink", "--causal",
      "--seed", "4"] + V_NEG),
    ("d64_n512_normal_s5", ["--heads", "27", "--nq", "512", "--seed", "5"]),
    ("d64_n512_normal_causal_s6",
     ["--heads", "27", "--nq", "512", "--causal", "--seed", "6"]),
    ("d64_n512_repmax4_s7_bias",
     ["--heads", "27", "--nq", "512", "--gen", "repeated-max",
      "--repeat", "4", "--seed", "7"] + V_NEG),
    ("d64_n512_sink_s8_bias",
     ["--heads", "27", "--nq", "512", "--gen", "sink", "--seed", "8"]
     + V_NEG),
    ("d64_n2048_normal_s9", ["--heads", "7", "--nq", "2048", "--seed", "9"]),
    ("d64_n4096_normal_causal_s10",
     ["--heads", "4", "--nq", "4096", "--causal", "--seed", "10"]),
    ("d64_n128_normal_s11", ["--heads", "4", "--nq", "128", "--seed", "11"]),
    ("d64_n256_normal_causal_s12",
     ["--heads", "53", "--nq", "256", "--causal", "--seed", "12"]),
    ("d128_n1024_normal_s13",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--seed", "13"]),
    ("d128_n1024_normal_causal_s14",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--causal",
      "--seed", "14"]),
    ("d128_n1024_repmax8_s15",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--gen",
      "repeated-max", "--repeat", "8", "--seed", "15"] + V_NEG),
    ("d128_n1024_sink_causal_s16",
     ["--d", "128", "--heads", "14", "--nq", "1024", "--gen", "sink",
      "--causal", "--seed", "16"] + V_NEG),
    ("d128_n512_normal_s17",
     ["--d", "128", "--heads", "27", "--nq", "512", "--seed", "17"]),
    ("d128_n512_sink_s18_bias",
     ["--d", "128", "--heads", "27", "--nq", "512", "--gen", "sink",
      "--seed", "18"] + V_NEG),
    ("d128_n512_repmax4_causal_s19",
     ["--d", "128", "--heads", "27", "--nq", "512", "--gen",
      "repeated-max", "--repeat", "4", "--causal", "--seed", "19"] + V_NEG),
    ("d128_n2048_normal_causal_s20",
     ["--d", "128", "--heads", "7", "--nq", "2048", "--causal",
      "--seed", "20"]),
    ("d128_nq128_nk64_normal_s21",
     ["--d", "128", "--heads", "4", "--nq", "128", "--nk", "64",
      "--seed", "21"]),
    ("d128_n256_normal_s22",
     ["--d", "128", "--heads", "53", "--nq", "256", "--seed", "22"]),
]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    for name, opts in CASES:
        if only and name not in only:
            continue
        argv = ["--out", os.path.join(out, name + ".safetensors"),
                "--no-backward"] + opts
        print(name, flush=True)
        dump_sdpa.main(argv)


if __name__ == "__main__":
    main()
