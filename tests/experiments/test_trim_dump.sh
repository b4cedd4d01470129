#!/bin/sh
# test_trim_dump.sh -- experiments/gpu/trim_dump.py keeps some (batch,
# head) pairs of a GPU dump, and bf16emu diff names the launch's heads
#
# The four-head H200 dump sdpa_h200_d64 is cut to heads 3 and 1, then to
# the second of those: every tensor holds the bytes of the kept heads
# (checked against the original file, not against the script), the
# manifest gets shape, heads_from and launch_shape, the GPU's O still
# agrees bit for bit with fa2, a wrong policy (fp32) reports its differing
# elements under the launch's head index, and bad pairs, bad files and
# bad heads_from / batch_from manifests are refused (exit 2, a message
# naming the field, nothing written).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

: "${JSONQ:=./tests/experiments/jsonq}"
TRIM=$srcdir/experiments/gpu/trim_dump.py
D=$srcdir/tests/data/gpu/sdpa_h200_d64.safetensors
need_python3
if [ ! -r "$D" ] || [ ! -x "$JSONQ" ]; then
    echo "SKIP: $D or $JSONQ missing"
    exit 77
fi
# trim ARGS...: run trim_dump.py; status in $rc, stderr in $tmp/err.
trim()
{
    ctx="trim_dump.py $*"
    python3 "$TRIM" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

cp "$D" "$tmp/d.safetensors"
trim "$tmp/d.safetensors" "$tmp/h31.safetensors" 3,0:1
expect_rc 0
trim "$tmp/h31.safetensors" "$tmp/h1.safetensors" 1
expect_rc 0

# The bytes of each kept head, and the manifest, read independently of
# the script.
if python3 - "$D" "$tmp/h31.safetensors" "$tmp/h1.safetensors" \
    >"$tmp/py" 2>&1 <<'EOF'
import json, struct, sys


def load(p):
    raw = open(p, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    h = json.loads(raw[8:8 + n])
    m = json.loads(h.pop("__metadata__")["manifest"])
    return {k: (v["shape"], raw[8 + n + v["data_offsets"][0]:
                                8 + n + v["data_offsets"][1]])
            for k, v in h.items()}, m


full, m0 = load(sys.argv[1])
for path, heads in ((sys.argv[2], [3, 1]), (sys.argv[3], [1])):
    part, m = load(path)
    assert sorted(part) == sorted(full), (path, sorted(part))
    for k, (shape, blob) in full.items():
        per = len(blob) // shape[1]
        want = b"".join(blob[h * per:(h + 1) * per] for h in heads)
        assert part[k][1] == want, (path, k)
        assert part[k][0] == [1, len(heads)] + shape[2:], (path, k)
    assert m["heads_from"] == heads, m["heads_from"]
    assert "batch_from" not in m, m
    assert m["shape"]["heads"] == len(heads), m["shape"]
    assert m["launch_shape"] == m0["shape"], m["launch_shape"]
    assert m["backend"] == m0["backend"]
EOF
then
    pass
else
    fail "trimmed files: $(cat "$tmp/py")"
fi

# The kept heads agree with the GPU as the whole launch did; the report
# names the launch's heads.
run diff --policy fa2 --dump "$tmp/h31.safetensors" --stage o,dq --no-exact
expect_rc 0
expect_line "  the file keeps 2 of the launch's 4 heads: 3 1"
expect_line "result: 2 stages compared, all bit-equal"
run diff --policy fp32 --dump "$tmp/h1.safetensors" --stage o \
    --no-exact --json
expect_rc 1
[ "$(jq stages.0.worst.0.index.1)" = 1 ] && [ "$(jq launch_heads)" = 4 ] \
    && [ "$(jq heads_kept.0)" = 1 ] && pass \
    || fail "worst index $(jq stages.0.worst.0.index), launch_heads" \
        "$(jq launch_heads), heads_kept $(jq heads_kept)"

# Bad pairs and files: exit 2, one line naming the problem, no file.
while IFS='|' read -r pairs msg; do
    trim "$tmp/d.safetensors" "$tmp/bad.safetensors" "$pairs"
    expect_rc 2
    grep -qF -- "$msg" "$tmp/err" && pass \
        || fail "stderr '$(cat "$tmp/err")', expected '$msg'"
    [ ! -e "$tmp/bad.safetensors" ] && pass || fail "bad.safetensors written"
done <<'END'
4|PAIRS: 0:4 is outside the file's 1 batch x 4 heads
1:3|PAIRS: 1:3 is outside the file's 1 batch x 4 heads
x|PAIRS 'x': 'x' (expected H or B:H, non-negative integers)
2,2|PAIRS '2,2': a pair given twice
END
printf 'short' >"$tmp/short.safetensors"
trim "$tmp/short.safetensors" "$tmp/bad.safetensors" 0
expect_rc 2
grep -q "short.safetensors: not a safetensors file" "$tmp/err" && pass \
    || fail "stderr '$(cat "$tmp/err")'"
[ ! -e "$tmp/bad.safetensors" ] && pass || fail "bad.safetensors written"

# diff refuses heads_from and batch_from that do not fit the tensors or
# the launch.
python3 - "$tmp/h1.safetensors" "$tmp" <<'EOF'
import json, struct, sys

raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
data = raw[8 + n:]
for name, change in (("two", {"heads_from": [1, 2]}),
                     ("high", {"heads_from": [4]}),
                     ("both", {"heads_kept": [1]}),
                     ("batch", {"batch_from": 1}),
                     ("btext", {"batch_from": "0"})):
    m = json.loads(h["__metadata__"]["manifest"])
    m.update(change)
    h2 = dict(h)
    h2["__metadata__"] = {"manifest": json.dumps(m)}
    b = json.dumps(h2).encode()
    b += b" " * (-len(b) % 8)
    with open("%s/%s.safetensors" % (sys.argv[2], name), "wb") as f:
        f.write(struct.pack("<Q", len(b)) + b + data)
EOF
while IFS='|' read -r name msg; do
    run diff --policy fa2 --dump "$tmp/$name.safetensors" --stage o --no-exact
    expect_rc 2
    expect_no_stdout
    expect_err_has "$name.safetensors: manifest: $msg"
done <<'END'
two|heads_from: 2 heads (expected 1, one for each head the tensors hold)
high|heads_from: head 4 (expected below the launch's 4 heads)
both|heads_kept: expected one of heads_kept and heads_from, not both
batch|batch_from: 1 (expected below the launch's batch 1)
btext|batch_from: expected a non-negative integer or a list of them
END

finish
