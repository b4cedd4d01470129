#!/bin/sh
# test_inputs_gen.sh -- dumps whose manifest describes the inputs
# (inputs_gen, analysis/dump_inputs.h) instead of storing them
#
# bf16emu diff regenerates q, k, v of an H200 split-KV dump and matches
# the GPU's O and LSE bit for bit; a copy that stores the inputs as
# experiments/gpu/fixgen.py (pure Python) makes them gives the same
# report; the generated tensors are cut to the file's heads (heads_from:
# another launch head passes the hash check but not the comparison); and
# a malformed or mismatched inputs_gen is refused (exit 2, a message
# naming the file and the field, nothing on stdout).  The same for the u
# transform of an H200 sink dump and the mirror transform of an H200
# mirrored-blocks dump (with its backward).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
ext=$srcdir/tests/data/gpu/sdpa_ext
D=$ext/split_d64_s2.safetensors
H=$ext/causal_d64_nq128_nk256.safetensors # head 0 of 53
need_python3
if [ ! -r "$D" ] || [ ! -r "$H" ] || [ ! -x "$JSONQ" ]; then
    echo "SKIP: fixtures or $JSONQ missing"
    exit 77
fi

# edit SRC DST PYTHON: DST is SRC with its manifest m changed by PYTHON
# (statements on m, a dict); with "store" in the environment, q, k, v
# are stored as fixgen.py makes them and inputs_gen is dropped.
edit()
{
    python3 - "$1" "$2" "$3" "$srcdir/experiments/gpu" <<'PY'
import json, os, struct, sys
src, dst, code, gdir = sys.argv[1:5]
sys.path.insert(0, gdir)
import fixgen
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
data = raw[8 + n:]
meta = hdr.pop("__metadata__")
m = json.loads(meta["manifest"])
blobs = {k: (v["dtype"], v["shape"],
             data[v["data_offsets"][0]:v["data_offsets"][1]])
         for k, v in hdr.items()}
if os.environ.get("store"):
    g = m.pop("inputs_gen")
    for name, t in g["tensors"].items():
        b, h, rows, d = t["shape"]
        per = rows * d
        bits = fixgen.gen_plain(g["seed"], t["stream"], t["mean"], t["std"],
                                t["dtype"], m["heads_from"][0] * per, per)
        if "mirror" in t:  # each head on its own
            bits = fixgen.mirror_bits(bits, name, t["dtype"], 1, rows, d,
                                      **t["mirror"])
        blobs[name] = ({"bfloat16": "BF16", "float16": "F16"}[t["dtype"]],
                       [1, 1, rows, d], struct.pack("<%dH" % per, *bits))
exec(code)
meta["manifest"] = json.dumps(m)
out, off = {"__metadata__": meta}, 0
for k, (dt, shape, b) in blobs.items():
    out[k] = {"dtype": dt, "shape": shape,
              "data_offsets": [off, off + len(b)]}
    off += len(b)
h = json.dumps(out).encode()
with open(dst, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    for k in blobs:
        f.write(blobs[k][2])
PY
}

# The dump itself: no q, k or v stored, O and LSE bit-equal.
run diff --dump "$D" --stage o,lse --no-exact --json
expect_rc 0
expect_stage split_d64_s2 0 o 4096 4096
expect_stage split_d64_s2 1 lse 64 64
cp "$tmp/out" "$tmp/gen.json"
run ls "$D"
expect_rc 0
if grep -q '^ *q ' "$tmp/out"; then fail "q stored"; else pass; fi

# The inputs stored as fixgen.py makes them: the same report.
store=1 edit "$D" "$tmp/stored.safetensors" "pass"
run diff --dump "$tmp/stored.safetensors" --stage o,lse --no-exact --json
expect_rc 0
expect_stage stored 0 o 4096 4096
expect_stage stored 1 lse 64 64

# Head 0 of a 53-head causal launch with its backward; another head of
# the launch passes the hash but its O is another head's.
run diff --dump "$H" --stage o,lse,dq,dk,dv --no-exact --json
expect_rc 0
expect_stage h0 0 o 8192 8192
expect_stage h0 2 dq 2240 2240
expect_kept h0 2 dq 8192
edit "$H" "$tmp/h1.safetensors" 'm["heads_from"] = [1]'
run diff --dump "$tmp/h1.safetensors" --stage o --no-exact --json
expect_rc 1

# bad FIELD PYTHON: the edited dump is refused, naming FIELD.
bad()
{
    edit "$D" "$tmp/bad.safetensors" "$2"
    run diff --dump "$tmp/bad.safetensors" --stage o --no-exact --json
    expect_rc 2
    expect_err_has "$tmp/bad.safetensors: manifest: inputs_gen$1"
    expect_no_stdout
}
g='m["inputs_gen"]'
bad .tensors.k.hash "h = $g[\"tensors\"][\"k\"][\"hash\"]
$g[\"tensors\"][\"k\"][\"hash\"] = h[:-1] + ('0' if h[-1] != '0' else '1')"
bad .generator "$g[\"generator\"] = \"splitmix64\""
bad .seed "$g[\"seed\"] = -1"
bad .tensors.v.std "$g[\"tensors\"][\"v\"][\"std\"] = 0.1"
bad .tensors.q.mean "$g[\"tensors\"][\"q\"][\"mean\"] = \"0\""
bad .tensors.q.shape "$g[\"tensors\"][\"q\"][\"shape\"] = [1, 64, 64]"
bad .tensors.q.dtype "$g[\"tensors\"][\"q\"][\"dtype\"] = \"float32\""
bad .tensors.k.stream "$g[\"tensors\"][\"k\"][\"stream\"] = \"1\""
bad .tensors "$g[\"tensors\"] = []"
bad "" "$g = 7"
# a described input of the wrong seed: every hash differs
bad .tensors.q.hash "$g[\"seed\"] += 1"

# The u transform (sink and repeated maxima, analysis/fixgen.h): an H200
# sink dump whose Q (mean 4 u) and K (row 128 = u) the GPU computed on
# as fixgen.py made them; cuDNN's O from the regenerated inputs.
S=$srcdir/tests/data/gpu/backends/d64_sink.safetensors
run diff --dump "$S" --o "$S:cudnn.o" --policy cudnn --splits 1 --stage o \
    --no-exact --json
expect_rc 0
expect_stage d64_sink 0 o 4096 4096
badu()
{
    edit "$S" "$tmp/bad.safetensors" "$2"
    run diff --dump "$tmp/bad.safetensors" --o "$tmp/bad.safetensors:cudnn.o" \
        --policy cudnn --splits 1 --stage o --no-exact --json
    expect_rc 2
    expect_err_has "$tmp/bad.safetensors: manifest: inputs_gen$1"
    expect_no_stdout
}
t='m["inputs_gen"]["tensors"]'
badu .tensors.q.hash "$t[\"q\"][\"u\"][\"std\"] = 0.25"
badu .tensors.k.hash "$t[\"k\"][\"u\"][\"rows\"] = [127]"
badu .tensors.q.hash "del $t[\"q\"][\"u\"]"
badu .tensors.q.u.scale "$t[\"q\"][\"u\"][\"scale\"] = 4097.0"
badu .tensors.q.u: "$t[\"q\"][\"u\"][\"rows\"] = [0]"
badu .tensors.k.u: "del $t[\"k\"][\"u\"][\"rows\"]"
badu .tensors.k.u.rows "$t[\"k\"][\"u\"][\"rows\"] = [256]"
badu .tensors.k.u.stream "$t[\"k\"][\"u\"][\"stream\"] = -1"
badu .tensors.q.mean "$t[\"q\"][\"mean\"] = 1.0"

# The mirror transform (mirrored KV blocks, analysis/fixgen.h): head 0 of
# an H200 mirror dump, its O, LSE and gradients bit-equal on the
# regenerated Q, K, V; the same report with the inputs stored as
# fixgen.py's mirror_bits makes them; a malformed mirror refused.
M=$ext/bwd_det_d64_h66_nk384_mirror.safetensors
run diff --dump "$M" --stage o,lse,dq,dk,dv --no-exact --json
expect_rc 0
expect_stage mirror 0 o 8192 8192
expect_stage mirror 2 dq 8192 8192
expect_stage mirror 3 dk 24576 24576
store=1 edit "$M" "$tmp/mstored.safetensors" "pass"
run diff --dump "$tmp/mstored.safetensors" --stage o,lse,dq,dk,dv \
    --no-exact --json
expect_rc 0
expect_stage mstored 0 o 8192 8192
expect_stage mstored 2 dq 8192 8192
expect_stage mstored 3 dk 24576 24576
# badm FIELD PYTHON [STAGE]: the edited dump is refused, naming FIELD
badm()
{
    edit "$M" "$tmp/bad.safetensors" "$2"
    run diff --dump "$tmp/bad.safetensors" --stage "${3:-o}" --no-exact --json
    expect_rc 2
    expect_err_has "$tmp/bad.safetensors: manifest: inputs_gen$1"
    expect_no_stdout
}
badm .tensors.k.hash "$t[\"k\"][\"mirror\"][\"big\"] = 128.0"
badm .tensors.k.hash "$t[\"k\"][\"mirror\"][\"stride\"] = 1"
badm .tensors.v.hash "del $t[\"v\"][\"mirror\"]"
badm .tensors.q.hash "$t[\"q\"][\"mirror\"][\"half\"] = 33"
badm ".tensors.k.mirror.block: expected an integer from 1 to N = 384" \
    "$t[\"k\"][\"mirror\"][\"block\"] = 0"
badm ".tensors.v.mirror.stride: expected" \
    "$t[\"v\"][\"mirror\"][\"stride\"] = \"2\""
badm ".tensors.k.mirror.small: expected a number with at most 12" \
    "$t[\"k\"][\"mirror\"][\"small\"] = 4097.0"
badm ".tensors.k.mirror.half: expected an integer from 0 to d = 64" \
    "$t[\"k\"][\"mirror\"][\"half\"] = 65"
badm ".tensors.k.mirror.stride: missing" \
    "del $t[\"k\"][\"mirror\"][\"stride\"]"
badm ".tensors.q.mirror.block: unknown field for q" \
    "$t[\"q\"][\"mirror\"][\"block\"] = 128"
badm ".tensors.q.mirror: expected an object" "$t[\"q\"][\"mirror\"] = []"
badm ".tensors.k.mirror: expected either u or mirror" \
    "$t[\"k\"][\"u\"] = {\"stream\": 4, \"std\": 0.5, \"rows\": [0]}"
badm ".tensors.do.mirror: only q, k and v take it" \
    "$t[\"do\"][\"mirror\"] = {\"half\": 32}" dq

finish
