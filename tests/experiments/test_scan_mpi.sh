# test_scan_mpi.sh -- bf16emu scan under mpirun: 3 ranks on this machine
# (loopback only, oversubscribed) print the same JSON, text and CSV as one
# process and as --shard 0/3 .. 2/3 merged, on the committed H200 capture
# (under fa2, and under cudnn given as a file) and on a capture with X
# (dW_Q's error travels between the ranks too); bad input is reported
# once, by rank 0, with exit 2 and nothing written; --shard and --merge
# are refused under mpirun.  Skipped when bf16emu is built without MPI or
# mpirun is missing.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_mpirun
need_python3

d=$tmp/d
mkdir "$d" || exit 99
cap=$srcdir/tests/data/gpu/capture_gpt6_r128.safetensors
opts="--reference binary64 --no-progress --threads 1"

# A capture with X: 2 steps x 2 heads, N = 16, d = 8, X [1, 16, 12].
python3 - "$d/xcap.safetensors" <<'PY' || exit 99
import json, struct, sys
path = sys.argv[1]

def raw(seed, n):
    return b''.join(struct.pack('<H', struct.unpack(
        '<I', struct.pack('<f', ((i * 7 + seed * 13 + (i * i) % 5) % 17 - 8)
                          / 8.0))[0] >> 16) for i in range(n))

hdr, data, calls = {}, b'', []
for step in (0, 1):
    p = 'L0.s%d.' % step
    for name, shape, seed in (('q', [1, 2, 16, 8], 1 + step),
                              ('k', [1, 2, 16, 8], 2), ('v', [1, 2, 16, 8], 3),
                              ('o', [1, 2, 16, 8], 4), ('do', [1, 2, 16, 8], 5),
                              ('x', [1, 16, 12], 7 + step)):
        r = raw(seed, shape[0] * shape[1] * shape[2] * (shape[3] if len(shape) > 3 else 1))
        hdr[p + name] = {'dtype': 'BF16', 'shape': shape,
                         'data_offsets': [len(data), len(data) + len(r)]}
        data += r
    calls.append({'layer': 0, 'step': step, 'prefix': p, 'causal': True,
                  'scale': None, 'layout': 'bhnd', 'dtype': 'bfloat16',
                  'backend': 'flash', 'x': {'rotary': False}})
hdr['__metadata__'] = {'manifest': json.dumps(
    {'format': 'bf16emu-capture', 'calls': calls})}
h = json.dumps(hdr).encode()
h += b' ' * (-len(h) % 8)
with open(path, 'wb') as f:
    f.write(struct.pack('<Q', len(h)) + h + data)
PY

# The H200 capture: the JSON of 3 ranks is one process's.
# shellcheck disable=SC2086
run scan $opts --json "$cap"
expect_rc 0
cp "$tmp/out" "$d/gpt6.json"
# shellcheck disable=SC2086
mpi 3 scan $opts --json "$cap"
expect_rc 0
expect_same_as "$d/gpt6.json"
expect_no_stderr
# The same under a description named or given as a file (the ranks
# compare the description they ran, as --merge does).
# shellcheck disable=SC2086
run scan $opts --json --policy cudnn "$cap"
expect_rc 0
cp "$tmp/out" "$d/gpt6.cudnn.json"
expect_jsons policy cudnn
run attn --policy cudnn --describe
cp "$tmp/out" "$d/cudnn.kernel"
# shellcheck disable=SC2086
mpi 3 scan $opts --json --kernel "$d/cudnn.kernel" "$cap"
expect_rc 0
expect_same_as "$d/gpt6.cudnn.json"
expect_no_stderr

# The capture with X: JSON, text and CSV, against one process and the
# shards merged.
for c in "$d/xcap.safetensors"; do
    b=$(basename "$c" .safetensors)
    # shellcheck disable=SC2086
    run scan $opts --json "$c"
    expect_rc 0
    cp "$tmp/out" "$d/$b.json"
    # shellcheck disable=SC2086
    run scan $opts --csv "$d/$b.csv" "$c"
    expect_rc 0
    cp "$tmp/out" "$d/$b.txt"
    # shellcheck disable=SC2086
    mpi 3 scan $opts --json "$c"
    expect_rc 0
    expect_same_as "$d/$b.json"
    expect_no_stderr
    # shellcheck disable=SC2086
    mpi 3 scan $opts --threads 2 --csv "$d/$b.mpi.csv" "$c"
    expect_rc 0
    expect_same_as "$d/$b.txt"
    cmp -s "$d/$b.csv" "$d/$b.mpi.csv" && pass || fail "$b: CSV differs"
    # the same as --shard I/3 merged
    for i in 0 1 2; do
        # shellcheck disable=SC2086
        run scan $opts --shard $i/3 "$c"
        cp "$tmp/out" "$d/$b.s$i"
    done
    run scan --merge --json "$d/$b.s0" "$d/$b.s1" "$d/$b.s2"
    expect_same_as "$d/$b.json"
done
python3 - "$d/xcap.json" <<'PY' && pass || fail "xcap: no dW_Q error"
import json, sys
j = json.load(open(sys.argv[1]))
assert j['x']['calls_used'] == 2
assert all(len(h['dwq']['steps']) == 2 for h in j['heads'])
PY

# More ranks than items (4 items, 6 ranks): the idle ranks send none.
# shellcheck disable=SC2086
mpi 6 scan $opts --json "$d/xcap.safetensors"
expect_rc 0
expect_same_as "$d/xcap.json"

# Bad input: one message (rank 0's), exit 2, no CSV.
printf 'not a capture' >"$d/bad.safetensors"
# shellcheck disable=SC2086
mpi 3 scan $opts --csv "$d/bad.csv" "$d/bad.safetensors"
expect_rc 2
expect_no_stdout
[ "$(grep -c '^bf16emu scan:' "$tmp/err")" -eq 1 ] && pass \
    || fail "not one message: $(cat "$tmp/err")"
[ ! -e "$d/bad.csv" ] && pass || fail "bad.csv written"
mpi 2 scan $opts --shard 0/2 "$cap"
expect_rc 2
expect_err_has "under mpirun the ranks share the calls and heads: --shard and --merge are not available"
mpi 2 scan --merge "$d/xcap.s0"
expect_rc 2
expect_err_has "--shard and --merge are not available"

finish
