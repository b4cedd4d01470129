# test_scan_shard.sh -- bf16emu scan --shard I/N and --merge: the merged
# shards give the unsharded output byte for byte (JSON, text and CSV), for
# any thread count and any order of the shard files; a missing, repeated
# or foreign shard is refused; a kernel named or given as a file travels
# in the shards whole.  Then bad captures, written here by hand
# (safetensors built with struct and json): a missing tensor, shapes that
# differ between the shards of one call, a manifest of another model (exit
# 2, one line naming the field, nothing written), and an infinite element
# (counted, the head left out).

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq
need_python3

cap=$srcdir/tests/data/gpu/capture_gpt6_r128.safetensors
d=$tmp/d
mkdir "$d" || exit 99
opts="--reference binary64 --no-progress"

# The unsharded reference outputs.
# shellcheck disable=SC2086
run scan $opts --json --threads 2 "$cap"
expect_rc 0
cp "$tmp/out" "$d/full.json"
# shellcheck disable=SC2086
run scan $opts --threads 1 --csv "$d/full.csv" "$cap"
expect_rc 0
cp "$tmp/out" "$d/full.txt"

# Two shards, each with 1 and 2 threads: the same shard output.
for i in 0 1; do
    for t in 1 2; do
        # shellcheck disable=SC2086
        run scan $opts --threads $t --shard $i/2 "$cap"
        expect_rc 0
        cp "$tmp/out" "$d/s$i.t$t"
    done
    cmp -s "$d/s$i.t1" "$d/s$i.t2" && pass || fail "shard $i: threads differ"
done
# The shards split the 12 (call, head) items of the capture.
expect_jsons calls 6 shard 1/2
"$JSONQ" "$d/s0.t1" items.5.call >/dev/null 2>&1 \
    && ! "$JSONQ" "$d/s0.t1" items.6.call >/dev/null 2>&1 && pass \
    || fail "shard 0 does not hold 6 items"

run scan --merge --json "$d/s0.t1" "$d/s1.t2"
expect_rc 0
cmp -s "$tmp/out" "$d/full.json" && pass || fail "merged --json differs"
run scan --merge --csv "$d/m.csv" "$d/s1.t1" "$d/s0.t2"
expect_rc 0
cmp -s "$tmp/out" "$d/full.txt" && pass || fail "merged text differs"
cmp -s "$d/m.csv" "$d/full.csv" && pass || fail "merged CSV differs"

# --plot from the merge: the heat map's and the per-head bias data
# (PREFIX-bias.dat: one row per head, O's and delta's mean with 95%
# intervals) are the unsharded run's.
# shellcheck disable=SC2086
run scan $opts --plot "$d/full" "$cap"
expect_rc 0
run scan --merge --plot "$d/m" "$d/s0.t1" "$d/s1.t1"
expect_rc 0
cmp -s "$d/m.dat" "$d/full.dat" && pass || fail "merged heat data differs"
cmp -s "$d/m-bias.dat" "$d/full-bias.dat" && pass \
    || fail "merged bias data differs"
[ "$(grep -vc '^#' "$d/full-bias.dat")" -eq 12 ] && pass \
    || fail "bias.dat: not 12 heads"
# an existing PREFIX-bias file stops --plot without --force
rm -f "$d/m.dat" "$d/m.png" "$d/m.svg"
run scan --merge --plot "$d/m" "$d/s0.t1" "$d/s1.t1"
expect_rc 2
expect_err_has "m-bias.dat exists (give --force)"

# Three shards, given in another order.
for i in 0 1 2; do
    # shellcheck disable=SC2086
    run scan $opts --shard $i/3 "$cap"
    expect_rc 0
    cp "$tmp/out" "$d/t$i"
done
run scan --merge --json "$d/t2" "$d/t0" "$d/t1"
expect_rc 0
cmp -s "$tmp/out" "$d/full.json" && pass || fail "3 shards: --json differs"

# Refused: a shard missing, given twice, of another split or another scan;
# options that the shards fix; --shard with --csv; a bad I/N.
run scan --merge --json "$d/s0.t1"
expect_rc 2
expect_err_has "shard 1/2 is missing"
expect_no_stdout
run scan --merge --json "$d/s0.t1" "$d/s0.t2"
expect_rc 2
expect_err_has "given twice"
run scan --merge --json "$d/s0.t1" "$d/t1"
expect_rc 2
expect_err_has "a shard of another scan"
# shellcheck disable=SC2086
run scan $opts --fix eps --shard 1/2 "$cap"
expect_rc 0
cp "$tmp/out" "$d/eps1"
run scan --merge --json "$d/s0.t1" "$d/eps1"
expect_rc 2
expect_err_has "a shard of another scan"
run scan --merge --policy fa2 "$d/s0.t1" "$d/s1.t1"
expect_rc 2
expect_err_has "--merge: --policy comes from the shards"
run scan --merge "$d/full.json"
expect_rc 2
expect_err_has "not a 'scan --shard' output"

# A kernel by name or by file: the shards record its description whole,
# merge to the unsharded run's bytes and not with shards of another
# kernel; a shard whose description is damaged is refused naming the
# field, one whose policy is not its description's name too.
# shellcheck disable=SC2086
run scan $opts --json --policy cudnn "$cap"
expect_rc 0
cp "$tmp/out" "$d/cudnn.json"
run attn --policy cudnn --describe
cp "$tmp/out" "$d/cudnn.kernel"
# shellcheck disable=SC2086
run scan $opts --policy cudnn --shard 0/2 "$cap"
expect_rc 0
cp "$tmp/out" "$d/c0"
# shellcheck disable=SC2086
run scan $opts --kernel "$d/cudnn.kernel" --shard 1/2 "$cap"
expect_rc 0
cp "$tmp/out" "$d/c1"
expect_jsons policy cudnn kernel.name cudnn exp ex2-sm90
run scan --merge --json "$d/c0" "$d/c1"
expect_rc 0
expect_same_as "$d/cudnn.json"
run scan --merge --json "$d/s0.t1" "$d/c1"
expect_rc 2
expect_err_has "a shard of another scan"
run scan --merge --kernel "$d/cudnn.kernel" "$d/c0" "$d/c1"
expect_rc 2
expect_err_has "--merge: --kernel comes from the shards"
for f in c0 c1; do
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["kernel"]["score"] = "f99"
json.dump(d, open(sys.argv[2], "w"))
d["kernel"]["score"] = "f32"
d["policy"] = "fa2"
json.dump(d, open(sys.argv[3], "w"))' "$d/$f" "$d/$f.bad" "$d/$f.name" \
        || fail "python3"
done
run scan --merge --json "$d/c0.bad" "$d/c1.bad"
expect_rc 2
expect_err_has "the kernel of '$d/c0.bad': field 'score'"
expect_no_stdout
run scan --merge --json "$d/c0.name" "$d/c1.name"
expect_rc 2
expect_err_has "policy: 'fa2', not its kernel's name 'cudnn'"
run scan --shard 1/2 --csv "$d/x.csv" "$cap"
expect_rc 2
expect_err_has "--shard: the output is the shard's JSON"
[ ! -e "$d/x.csv" ] && pass || fail "x.csv written"
for bad in 2/2 1 a/2 1/0 -1/2; do
    run scan --shard "$bad" "$cap"
    expect_rc 2
    expect_err_has "--shard $bad: expected I/N"
done

# Progress: one line per call on a non-terminal, none with --no-progress.
run scan --reference binary64 --progress --json "$cap"
expect_rc 0
[ "$(grep -c '^bf16emu scan: [1-6]/6 calls' "$tmp/err")" -eq 6 ] && pass \
    || fail "progress: $(cat "$tmp/err")"
# shellcheck disable=SC2086
run scan $opts --json "$cap"
[ ! -s "$tmp/err" ] && pass || fail "--no-progress wrote $(cat "$tmp/err")"

# Hand-written captures: one call (layer 0, step 0), B = 1, H = 2, N = 16,
# d = 8, BF16 values k/8 with k in -8..8; MODE picks the defect.
mk() {
    PYTHONPATH="${srcdir:-.}/tests/experiments" python3 - "$d" "$1" \
        <<'PY' || exit 99
import json, struct, sys
from st_write import bf16, write
d, mode = sys.argv[1], sys.argv[2]

def tensor(shape, seed, special=None):
    n = 1
    for s in shape:
        n *= s
    vals = [bf16(((i * 7 + seed * 13) % 17 - 8) / 8.0) for i in range(n)]
    if special is not None:
        vals[special] = 0x7f80  # +Inf
    return shape, b''.join(struct.pack('<H', v) for v in vals)

shape = [1, 2, 16, 8]
t = {'L0.s0.q': tensor(shape, 1), 'L0.s0.k': tensor(shape, 2),
     'L0.s0.v': tensor(shape, 3, 200 if mode == 'inf' else None),
     'L0.s0.o': tensor(shape, 4)}
call = {'layer': 0, 'step': 0, 'prefix': 'L0.s0.', 'name': 'h.0.attn',
        'causal': True, 'scale': None, 'layout': 'bhnd',
        'dtype': 'bfloat16', 'backend': 'flash',
        'launch_shape': {'batch': 1, 'heads': 2, 'nq': 16, 'nk': 16, 'd': 8}}
model = {'layers': 1, 'heads': 2, 'head_dim': 8}
if mode == 'missing':
    del t['L0.s0.v']
elif mode == 'headdim':
    model['head_dim'] = 16
    del call['launch_shape']
elif mode == 'launchd':
    call['launch_shape']['d'] = 4
elif mode == 'layers':
    call['layer'] = 3
    call['prefix'] = 'L3.s0.'
    t = {k.replace('L0.', 'L3.'): v for k, v in t.items()}
elif mode == 'heads':
    model['heads'] = 4
    call['launch_shape']['heads'] = 4
elif mode == 'kept':
    call['heads_kept'] = [1, 2]
man = {'format': 'bf16emu-capture', 'model': model, 'calls': [call]}
if mode == 'shards':
    a = {k: v for k, v in t.items() if k.endswith(('.q', '.o'))}
    b = {'L0.s0.k': tensor([1, 2, 16, 4], 2),
         'L0.s0.v': tensor([1, 2, 16, 4], 3)}
    write(d + '/sh_a.safetensors', a, man)
    write(d + '/sh_b.safetensors', b, man)
else:
    write(d + '/' + mode + '.safetensors', t, man)
PY
}
for m in ok missing shards headdim launchd layers heads kept inf; do
    mk $m
done
# shellcheck disable=SC2086
run scan $opts --json "$d/ok.safetensors"
expect_rc 0
expect_jsons heads.0.rows 16 heads.1.rows 16 heads.0.heads_nonfinite 0

# Each bad one: exit 2, one line naming the file or field, no --csv.
bad() {
    # $1 the capture(s), $2 the expected message
    # shellcheck disable=SC2086
    run scan $opts --csv "$d/bad.csv" $1
    expect_rc 2
    expect_err_has "$2"
    expect_no_stdout
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && pass || fail "$1: $(cat "$tmp/err")"
    [ ! -e "$d/bad.csv" ] && pass || fail "$1: bad.csv written"
}
bad "$d/missing.safetensors" "tensor 'L0.s0.v' (layer 0 step 0) is in none"
bad "$d/sh_a.safetensors $d/sh_b.safetensors" \
    "L0.s0.k [1, 2, 16, 4] does not fit"
bad "$d/headdim.safetensors" \
    "L0.s0.q: d = 8, but manifest calls[0] says model.head_dim 16"
bad "$d/launchd.safetensors" "says launch_shape.d 4"
bad "$d/layers.safetensors" \
    "manifest calls[0]: layer 3, but model.layers is 1"
bad "$d/heads.safetensors" "2 heads, but manifest calls[0] says"
bad "$d/kept.safetensors" "heads_kept[1] = 2, but the model has 2 heads"

# An existing --csv is not overwritten by a failing scan, --force or not.
echo keep >"$d/keep.csv"
# shellcheck disable=SC2086
run scan $opts --force --csv "$d/keep.csv" "$d/layers.safetensors"
expect_rc 2
[ "$(cat "$d/keep.csv")" = keep ] && pass || fail "keep.csv overwritten"

# +Inf in V of head 1 (element 200 of [1, 2, 16, 8]): counted, that head
# left out, head 0 measured.
# shellcheck disable=SC2086
run scan $opts --json "$d/inf.safetensors"
expect_rc 0
expect_jsons heads.1.heads_nonfinite 1 heads.1.nonfinite_elements 1 \
    heads.1.rows 0 heads.0.heads_nonfinite 0 heads.0.rows 16

finish
