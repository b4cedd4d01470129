#!/bin/sh
# test_outputs_kept.sh -- dumps that keep some rows of their outputs
# (manifest: outputs_kept, analysis/dump_outputs.h) and bf16emu diff on
# them
#
# experiments/gpu/trim_dump.py --rows cuts a copy of the flash dump
# sdpa_ext/d32_normal (kept whole in the tree): the kept bytes are the
# original file's rows (checked here byte for byte, not by the script),
# diff shows the kept elements and the hash of the whole tensor, both
# equal.  A one-element change of the GPU's dK planted before the cut is
# caught in a kept row (the element and the hash) and in a dropped row
# (the hash alone); a second cut of the same key, malformed outputs_kept
# entries and a hash that is not the GPU's are refused or reported (exit
# 2 naming the field and nothing on stdout, or exit 1).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
TRIM=$srcdir/experiments/gpu/trim_dump.py
D=$srcdir/tests/data/gpu/sdpa_ext/d32_normal.safetensors
F=$srcdir/tests/data/gpu/sdpa_ext/causal_d256_nq128_nk64.safetensors
need_python3
if [ ! -r "$D" ] || [ ! -r "$F" ] || [ ! -x "$JSONQ" ]; then
    echo "SKIP: $D, $F or $JSONQ missing"
    exit 77
fi

# jq_is PATH VALUE: the JSON report's PATH is VALUE.
jq_is()
{
    v=$("$JSONQ" "$tmp/out" "$1" 2>/dev/null)
    if [ "$v" = "$2" ]; then pass; else fail "$1 is '$v', expected $2"; fi
}

# trim ARGS...: run trim_dump.py; status in $rc, stderr in $tmp/err.
trim()
{
    ctx="trim_dump.py $*"
    python3 "$TRIM" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# py SCRIPT ARGS...: a Python check; it prints "ok" or what differs.
py()
{
    ctx="python3 check $2"
    python3 -c "$@" >"$tmp/py" 2>&1
    if [ "$(cat "$tmp/py")" = ok ]; then pass; else fail "$(cat "$tmp/py")"; fi
}

ST='
import json, struct, sys
def read(p):
    raw = open(p, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    h = json.loads(raw[8:8 + n])
    meta = h.pop("__metadata__", {})
    t = {k: (v["dtype"], v["shape"],
             raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
         for k, v in h.items()}
    return t, meta, raw, n, h
'

trim --self-check
expect_rc 0

# --- the cut: the kept rows byte for byte, the manifest ----------------
# (the gradients of the backward dump d32_normal; O and LSE, F32, of the
# forward-only dump causal_d256_nq128_nk64)
cp "$D" "$tmp/d.safetensors"
trim --rows "$tmp/d.safetensors" dq,dk,dv
expect_rc 0
expect_line "$tmp/d.safetensors: dq 35 of 128 rows, dk 35 of 128 rows, dv 35 of 128 rows, 25856 bytes"
cp "$F" "$tmp/f.safetensors"
trim --rows "$tmp/f.safetensors" o,lse
expect_rc 0
CHECK='
a, _, _, _, _ = read(sys.argv[1])
b, meta, _, _, _ = read(sys.argv[2])
ok = json.loads(meta["manifest"])["outputs_kept"]
# rows 0..15, 31, 63, 95, 112..127 of 128, written out by hand
rows = list(range(16)) + [31, 63, 95] + list(range(112, 128))
bad = []
for k in sys.argv[3].split(","):
    dt, sh, blob = a[k]
    inner = len(blob) // sh[2]
    want = b"".join(blob[r * inner:(r + 1) * inner] for r in rows)
    if b[k][2] != want or b[k][1] != sh[:2] + [len(rows)] + sh[3:]:
        bad.append(k + ": kept bytes or shape")
    if ok[k]["shape"] != sh or ok[k]["rows"] != [[0, 16], [31, 32],
                                                [63, 64], [95, 96],
                                                [112, 128]]:
        bad.append(k + ": manifest " + json.dumps(ok[k]))
for k in a:
    if k not in ok and a[k] != b[k]:
        bad.append(k + ": changed")
print("; ".join(bad) or "ok")
'
py "$ST$CHECK" "$D" "$tmp/d.safetensors" dq,dk,dv
py "$ST$CHECK" "$F" "$tmp/f.safetensors" o,lse

run diff --dump "$tmp/d.safetensors" --stage o,lse,dq,dk,dv --no-exact
expect_rc 0
expect_line "stage dk (bf16 [1, 1, 128, 32], dump BF16, 35 of its 128 rows kept):"
expect_line "  dk: 1120/1120 of the kept elements equal; whole tensor (4096): hash equal"
expect_line "  dq: bit-equal"
expect_line "  o: bit-equal"
run diff --dump "$tmp/f.safetensors" --no-exact
expect_rc 0
expect_line "stage o (bf16 [1, 1, 128, 256], dump BF16, 35 of its 128 rows kept):"
expect_line "  o: 8960/8960 of the kept elements equal; whole tensor (32768): hash equal"
expect_line "  lse: 35/35 of the kept elements equal; whole tensor (128): hash equal"
# o and lse are the backward's inputs: kept whole where there are gradients
cp "$D" "$tmp/g.safetensors"
trim --rows "$tmp/g.safetensors" dk,o
expect_rc 2
expect_err_has "o: the backward's input (the file holds dq/dk/dv); a dump with gradients keeps o and lse whole"
if cmp -s "$D" "$tmp/g.safetensors"; then pass; else fail "the file changed"; fi
run diff --dump "$tmp/d.safetensors" --stage dk --no-exact --json
expect_rc 0
jq_is stages.0.kept.rows 35
jq_is stages.0.kept.elements 1120
jq_is stages.0.kept.whole_elements 4096
jq_is stages.0.kept.hash_equal true

# a second cut of dk is refused, the file untouched
cp "$tmp/d.safetensors" "$tmp/keep.safetensors"
trim --rows "$tmp/d.safetensors" dk
expect_rc 2
expect_err_has "dk: already kept in part (manifest: outputs_kept.dk)"
if cmp -s "$tmp/d.safetensors" "$tmp/keep.safetensors"; then pass; else
    fail "the file changed"; fi
trim --rows "$tmp/d.safetensors" nosuch
expect_rc 2
expect_err_has "no tensor nosuch"

# --- planted changes in the GPU's dK, before the cut --------------------
# plant ROW: dK[0, 0, ROW, 5] += one ulp, in a copy of the whole dump
plant()
{
    python3 -c "$ST"'
t, meta, raw, n, h = read(sys.argv[1])
row = int(sys.argv[3])
off = 8 + n + h["dk"]["data_offsets"][0] + 2 * (row * 32 + 5)
b = bytearray(raw)
v = b[off] | b[off + 1] << 8
v += 1
b[off], b[off + 1] = v & 0xFF, v >> 8
open(sys.argv[2], "wb").write(bytes(b))
' "$D" "$tmp/p.safetensors" "$1"
    python3 "$TRIM" --rows "$tmp/p.safetensors" dq,dk,dv >/dev/null
}

plant 3 # a kept row
run diff --dump "$tmp/p.safetensors" --stage dk --no-exact
expect_rc 1
expect_line "  dk: 1119/1120 of the kept elements equal; whole tensor (4096): hash differs"
expect_line "    [0, 0, 3, 5]: gpu 0x3E38 0.1796875, emulator 0x3E37 0.17871094, distance 1"
plant 20 # a dropped row
run diff --dump "$tmp/p.safetensors" --stage dk --no-exact
expect_rc 1
expect_line "  dk: 1120/1120 of the kept elements equal; whole tensor (4096): hash differs"
expect_line "  dk: the kept elements are bit-equal; the whole tensor is not"
run diff --dump "$tmp/p.safetensors" --stage dk --no-exact --json
expect_rc 1
jq_is stages.0.kept.hash_equal false
jq_is stages.0.pass false
# with a tolerance the hash cannot decide: the kept elements do
run diff --dump "$tmp/p.safetensors" --stage dk --no-exact --tolerance 1
expect_rc 0
expect_line "  dk: 1120/1120 of the kept elements equal; whole tensor (4096): hash differs"

# --- malformed outputs_kept: exit 2, the field named, nothing written ---
# edit EXPR: a copy of the cut dump with its manifest changed by EXPR (m:
# the manifest, k: m["outputs_kept"]["dk"]).
edit()
{
    python3 -c "$ST"'
t, meta, raw, n, h = read(sys.argv[1])
m = json.loads(meta["manifest"])
k = m["outputs_kept"]["dk"]
exec(sys.argv[3])
meta["manifest"] = json.dumps(m)
h["__metadata__"] = meta
hd = json.dumps(h).encode()
hd += b" " * (-len(hd) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(hd)) + hd + raw[8 + n:])
' "$tmp/d.safetensors" "$tmp/e.safetensors" "$1"
}

# bad_kept EXPR MESSAGE: diff on the edited dump exits 2 with MESSAGE.
bad_kept()
{
    edit "$1"
    run diff --dump "$tmp/e.safetensors" --stage dk --no-exact
    ctx="outputs_kept: $1"
    expect_rc 2
    expect_err_has "$2"
    expect_no_stdout
}

F="$tmp/e.safetensors: manifest: outputs_kept"
bad_kept 'm["outputs_kept"] = [1]' \
    "$F: expected an object of tensor names"
bad_kept 'm["outputs_kept"]["dk"] = 3' \
    "$F.dk: expected an object with shape, rows and hash"
bad_kept 'k["extra"] = 1' \
    "$F.dk: unknown field \"extra\" (expected shape, rows, hash)"
bad_kept 'k["shape"] = [1, 2, 128, 32]' \
    "$F.dk.rows: 35 rows kept, but the file stores dk [1, 1, 35, 32]"
bad_kept 'k["shape"] = [1, 1, 0, 32]' \
    "$F.dk.shape: dimension 2: expected an integer >= 1"
bad_kept 'del k["shape"]' \
    "$F.dk.shape: expected [B, H, N, d] or [B, H, N]"
bad_kept 'k["rows"] = []' \
    "$F.dk.rows: expected a list of 1 to 4096 ranges [a, b]"
bad_kept 'k["rows"][0] = [0, 129]' \
    "$F.dk.rows: entry 0: expected [a, b] with 0 <= a < b <= N (128)"
bad_kept 'k["rows"][0] = [5, 5]' \
    "$F.dk.rows: entry 0: expected [a, b] with 0 <= a < b <= N (128)"
bad_kept 'k["rows"][1] = [16, 17]' \
    "$F.dk.rows: entry 1: [16, 17] starts at or before the end of the one before (16; expected increasing ranges with gaps)"
bad_kept 'k["rows"][1] = [30, 32]' \
    "$F.dk.rows: 36 rows kept, but the file stores dk [1, 1, 35, 32]"
bad_kept 'k["hash"] = "0x12"' \
    "$F.dk.hash: expected \"0x\" and 16 hex digits"
bad_kept 'm["outputs_kept"]["nosuch"] = dict(k)' \
    "$F.nosuch: the file stores no tensor nosuch"
bad_kept 'm["outputs_kept"]["dk"]["hash"] = "0x" + "0" * 16; m["outputs_kept"]["dq"] = {"shape": [1, 1, 128, 32], "rows": [[0, 16]], "hash": "0x" + "0" * 16}; del m["outputs_kept"]["dk"]' \
    "$F.dq.rows: 16 rows kept, but the file stores dq [1, 1, 35, 32]"

# a recorded hash that is not the GPU's: reported, exit 1
edit 'k["hash"] = "0x0123456789abcdef"'
run diff --dump "$tmp/e.safetensors" --stage dk --no-exact
expect_rc 1
expect_line "  dk: 1120/1120 of the kept elements equal; whole tensor (4096): hash differs"

finish
