# test_scan_x.sh -- bf16emu scan with X, the query projection's input (key
# x): the error of dW_Q that delta's error carries, sum_i u_i x_i^T (the
# paper's Eq. 2), its spectrum and its cosine across steps.  The expected
# values are properties of the matrix, not numbers from the code: with X
# the identity, dW_Q's columns are the u_i, so its top energy share is the
# eq23 rank1 (a power iteration on sum u u^T, another code path); with
# rows of X on one line, dW_Q has rank 1; two steps with the same tensors
# have cosine 1 and their sum twice the norm, with X negated cosine -1 and
# a zero sum; a batch entry repeated doubles every singular value.  A
# capture without x reports it absent; x.rotary leaves X unused; bad x
# shapes and a bad manifest entry are refused (exit 2, one line, nothing
# written); --shard and --merge give the unsharded bytes.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

need_jsonq
need_python3
d=$tmp/d
mkdir "$d" || exit 99
opts="--reference binary64 --no-progress"

# Hand-written captures: layer 0, H = 2 heads, N = 16 rows, d = 8,
# causal, with dO; values k/8 with k in -8..8.  MODE picks X.
mk() {
    PYTHONPATH="${srcdir:-.}/tests/experiments" python3 - "$d" "$1" \
        <<'PY' || exit 99
import json, struct, sys
from st_write import bf16, write
d, mode = sys.argv[1], sys.argv[2]

def raw(vals):
    return b''.join(struct.pack('<H', bf16(v)) for v in vals)

def vals(n, seed):
    return [((i * 7 + seed * 13 + (i * i) % 5) % 17 - 8) / 8.0
            for i in range(n)]

B = 2 if mode == 'batch' else 1
H, N, D = 2, 16, 8
n = H * N * D
att = {}
for name, seed in (('q', 1), ('k', 2), ('v', 3), ('o', 4), ('do', 5)):
    v1 = vals(n, seed)
    att[name] = ([B, H, N, D], raw(v1 * B))
C, X = 12, None
if mode in ('ident', 'ident2'):
    C = N
    X = [1.0 if a == i else 0.0 for i in range(N) for a in range(C)]
elif mode == 'line':
    x0 = vals(C, 9)
    X = [((i % 5) - 2) / 2.0 * x0[a] for i in range(N) for a in range(C)]
elif mode != 'none':
    X = vals(N * C, 7)
calls = [{'layer': 0, 'step': 0, 'prefix': 'L0.s0.', 'name': 'h.0.attn',
          'causal': True, 'scale': None, 'layout': 'bhnd',
          'dtype': 'bfloat16', 'backend': 'flash'}]
t = {'L0.s0.' + k: v for k, v in att.items()}
if X is not None:
    t['L0.s0.x'] = ([B, N, C], raw(X * B))
    calls[0]['x'] = {'module': 'h.0.attn.c_attn', 'features': C,
                     'rotary': mode == 'rotary'}
if mode in ('steps', 'neg'):
    calls.append(dict(calls[0], step=1, prefix='L0.s1.'))
    for k, v in att.items():
        t['L0.s1.' + k] = v
    sgn = -1.0 if mode == 'neg' else 1.0
    t['L0.s1.x'] = ([B, N, C], raw([sgn * x for x in X]))
if mode == 'ident2':
    # a second layer without x: absent there
    calls.append(dict(calls[0], layer=1, prefix='L1.s0.'))
    del calls[1]['x']
    for k, v in att.items():
        t['L1.s0.' + k] = v
if mode == 'badn':
    t['L0.s0.x'] = ([1, N - 1, C], raw(X[:(N - 1) * C]))
elif mode == 'badb':
    t['L0.s0.x'] = ([2, N, C], raw(X * 2))
elif mode == 'bad4':
    t['L0.s0.x'] = ([1, 1, N, C], raw(X))
elif mode == 'badman':
    calls[0]['x'] = 'yes'
elif mode == 'badrot':
    calls[0]['x'] = {'rotary': 1}
elif mode == 'badc':
    calls[0]['x']['features'] = 16
write(d + '/' + mode + '.safetensors', t,
      {'format': 'bf16emu-capture', 'calls': calls})
PY
}
for m in none ident ident2 line steps neg batch one rotary badn badb bad4 \
    badman badrot badc; do
    mk $m
done

# check FILE EXPR...: each Python expression over the JSON j holds.
check() {
    python3 - "$@" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
h0, h1 = j['heads'][0], j['heads'][-1]
for e in sys.argv[2:]:
    if not eval(e):
        print('    does not hold: %s' % e)
        sys.exit(1)
PY
}
close="lambda a, b, t=1e-9: abs(a - b) <= t * max(abs(a), abs(b), 1e-300)"

# No x: absent, reported, not an error.
# shellcheck disable=SC2086
run scan $opts --json "$d/none.safetensors"
expect_rc 0
expect_jsons x.calls_used 0 x.calls_absent 1 heads.0.dwq null \
    heads.1.dwq null
# shellcheck disable=SC2086
run scan $opts "$d/none.safetensors"
expect_rc 0
expect_out_has "dW_Q: X (key x, the query projection's input) used in 0 of 1 calls; absent in 1"

# X = I: energy1 of dW_Q = eq23's rank1, per head.
# shellcheck disable=SC2086
run scan $opts --json "$d/ident.safetensors"
expect_rc 0
expect_jsons x.calls_used 1 heads.0.dwq.rows 8 heads.0.dwq.cols 16 \
    dwq_layers.0.heads 2
check "$tmp/out" \
    "($close)(h0['dwq']['steps'][0]['energy1'], h0['eq23']['rank1'])" \
    "($close)(h1['dwq']['steps'][0]['energy1'], h1['eq23']['rank1'])" \
    "h0['eq23']['rank1'] < 0.999" \
    "len(h0['dwq']['steps'][0]['sigma']) == 8" \
    "max(h0['dwq']['steps'][0]['sigma'][0], h1['dwq']['steps'][0]['sigma'][0]) <= j['dwq_layers'][0]['sigma1'] * (1 + 1e-12)" \
    "j['dwq_layers'][0]['sigma1'] <= math.hypot(h0['dwq']['steps'][0]['sigma'][0], h1['dwq']['steps'][0]['sigma'][0]) * (1 + 1e-12)" \
    && pass || fail "X = I: energy1 is not eq23's rank1"
# one layer with x, one without: layer 1 absent
# shellcheck disable=SC2086
run scan $opts --json "$d/ident2.safetensors"
expect_rc 0
expect_jsons x.calls_used 1 x.calls_absent 1 heads.2.layer 1 \
    heads.2.dwq null
check "$tmp/out" "j['heads'][2]['eq23']['rows'] == 16" \
    "len(j['dwq_layers']) == 1" \
    && pass || fail "layer 1 without x: eq23 not measured"

# Rows of X on one line: rank 1.
# shellcheck disable=SC2086
run scan $opts --json "$d/line.safetensors"
expect_rc 0
check "$tmp/out" \
    "all(s['sigma'][1] <= 1e-12 * s['sigma'][0] for h in j['heads'] for s in h['dwq']['steps'])" \
    "all(abs(h['dwq']['steps'][0]['stable_rank'] - 1) < 1e-12 for h in j['heads'])" \
    "h0['dwq']['steps'][0]['sigma'][0] > 0" \
    "abs(j['dwq_layers'][0]['energy1'] - 1) < 1e-12" \
    "($close)(j['dwq_layers'][0]['sigma1'], math.hypot(h0['dwq']['steps'][0]['fro'], h1['dwq']['steps'][0]['fro']), 1e-12)" \
    && pass || fail "X of rank 1: dW_Q not of rank 1"

# Two equal steps: cosine 1, growth sqrt 2; X negated: cosine -1, sum 0.
# shellcheck disable=SC2086
run scan $opts --json "$d/steps.safetensors"
expect_rc 0
cp "$tmp/out" "$d/steps.out"
check "$tmp/out" \
    "($close)(h0['dwq']['steps'][1]['cos_prev'], 1.0, 1e-12)" \
    "($close)(h0['dwq']['growth'], math.sqrt(2), 1e-12)" \
    "($close)(h0['dwq']['cos_adjacent_mean'], 1.0, 1e-12)" \
    "($close)(h0['dwq']['cum']['sigma'][0], 2 * h0['dwq']['steps'][0]['sigma'][0], 1e-12)" \
    "j['dwq_layers'][1]['step'] == 1" "($close)(j['dwq_layers'][0]['sigma1'], j['dwq_layers'][1]['sigma1'], 1e-12)" \
    && pass || fail "two equal steps"
# shellcheck disable=SC2086
run scan $opts --json "$d/neg.safetensors"
expect_rc 0
check "$tmp/out" \
    "($close)(h1['dwq']['steps'][1]['cos_prev'], -1.0, 1e-12)" \
    "h1['dwq']['growth'] < 1e-12" "h1['dwq']['cum']['fro'] == 0" \
    && pass || fail "X negated at step 1"

# A batch entry repeated: dW_Q (summed over the batch) doubles.
# shellcheck disable=SC2086
run scan $opts --json "$d/one.safetensors"
expect_rc 0
cp "$tmp/out" "$d/one.out"
# shellcheck disable=SC2086
run scan $opts --json "$d/batch.safetensors"
expect_rc 0
python3 - "$d/one.out" "$tmp/out" <<'PY' && pass || fail "batch of 2"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for ha, hb in zip(a['heads'], b['heads']):
    sa, sb = ha['dwq']['steps'][0]['sigma'], hb['dwq']['steps'][0]['sigma']
    assert all(abs(y - 2 * x) <= 1e-12 * sa[0] for x, y in zip(sa, sb)), \
        (sa, sb)
PY

# x.rotary: X unused (q is rotated after the projection), said so.
# shellcheck disable=SC2086
run scan $opts --json "$d/rotary.safetensors"
expect_rc 0
expect_jsons x.calls_used 0 x.calls_rotary 1 heads.0.dwq null
# shellcheck disable=SC2086
run scan $opts "$d/rotary.safetensors"
expect_out_has "unused in 1 (x.rotary: q is rotated after the projection)"

# Bad x: exit 2, one line naming the key, nothing written.
bad() {
    # shellcheck disable=SC2086
    run scan $opts --csv "$d/bad.csv" "$d/$1.safetensors"
    expect_rc 2
    expect_err_has "$2"
    expect_no_stdout
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && pass || fail "$1: $(cat "$tmp/err")"
    [ ! -e "$d/bad.csv" ] && pass || fail "$1: bad.csv written"
}
bad badn "L0.s0.x: shape [1, 15, 12] does not fit"
bad badb "L0.s0.x: shape [2, 16, 12] does not fit"
bad bad4 "L0.s0.x: shape [1, 1, 16, 12] does not fit"
bad badman "manifest calls[0]: 'x' must be an object or null"
bad badrot "manifest calls[0]: x.rotary must be true or false"
bad badc "L0.s0.x: C = 12, but manifest calls[0] says x.features 16"

# The H200 capture with X (an untrained nanoGPT-style model, layers 0 and
# 5, heads 0 and 1, 128 positions): X used, the GPU's O reproduced in
# every element, dW_Q [64, 512] per head.
fx=$srcdir/tests/data/gpu/capture_gpt6u_x_r128.safetensors
# shellcheck disable=SC2086
run scan $opts --json "$fx"
expect_rc 0
expect_jsons x.calls_used 2 heads.0.o_match 8192 heads.3.o_match 8192 \
    heads.0.dwq.rows 64 heads.0.dwq.cols 512 heads.3.layer 5 \
    dwq_layers.1.heads 2
check "$tmp/out" \
    "all(0 < h['dwq']['steps'][0]['energy1'] <= 1 for h in j['heads'])" \
    && pass || fail "fixture: energy1 out of (0, 1]"
# shellcheck disable=SC2086
run scan $opts "$fx"
expect_out_has "Eq. 2: the error of dW_Q that delta's error carries"
grep -q "^dW_Q: X" "$tmp/out" && fail "X reported missing" || pass

# --shard and --merge, and the thread count: the same bytes.
for i in 0 1 2; do
    # shellcheck disable=SC2086
    run scan $opts --threads 2 --shard $i/3 "$d/steps.safetensors"
    expect_rc 0
    cp "$tmp/out" "$d/p$i"
done
run scan --merge --json "$d/p2" "$d/p0" "$d/p1"
expect_rc 0
expect_same_as "$d/steps.out"
# shellcheck disable=SC2086
run scan $opts --threads 1 --json "$d/steps.safetensors"
expect_same_as "$d/steps.out"

finish
