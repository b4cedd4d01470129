"""gqa_oracle.py -- inputs and an independent check for the backward of
grouped-query heads (standard library only).

usage: gqa_oracle.py split SRC G OUTDIR
       gqa_oracle.py check EXPANDED GROUPED G

split: from the bf16emu attn file SRC (q, k, v, do of H heads, BF16),
writes OUTDIR/q.npy and do.npy (all H heads), k.npy and v.npy (H / G KV
heads: KV head j is SRC's head j G), and kx.npy, vx.npy (those KV heads
repeated G times each, the expanded call of repeat_interleave), all as
'<u2' BF16 bit patterns [1, heads, N, d].

check: EXPANDED is attn's output for the expanded call (dk, dv per query
head), GROUPED for the grouped call (dk, dv per KV head).  Each KV head's
dK and dV must be the group's per-head values added in FP32 in head order
from +0 and rounded once to BF16 (ties to even): the rule "in-sum".  The
FP32 additions are done here in binary64 and rounded to binary32 by
struct (exact: two BF16-valued FP32 numbers within 2^29 of each other sum
exactly in binary64, checked).  Prints the count of elements compared
and exits 1 with the first differing element's bits when one differs.
"""
import json
import struct
import sys


def read(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        hdr = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, t in hdr.items():
            if name == '__metadata__':
                continue
            a, b = t['data_offsets']
            f.seek(base + a)
            out[name] = (t['dtype'], t['shape'], f.read(b - a))
    return out


def write_npy(path, shape, raw):
    d = "{'descr': '<u2', 'fortran_order': False, 'shape': (%s), }" % (
        ', '.join(str(s) for s in shape) + (',' if len(shape) == 1 else ''))
    pad = 64 - (10 + len(d) + 1) % 64
    h = (d + ' ' * pad + '\n').encode()
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + raw)


def split(src, g, outdir):
    t = read(src)
    b, h, nk, d = t['k'][1]
    per = nk * d * 2
    for name in ('q', 'do'):
        write_npy('%s/%s.npy' % (outdir, name), t[name][1], t[name][2])
    for name in ('k', 'v'):
        raw = t[name][2]
        kept = b''.join(raw[j * g * per:(j * g + 1) * per]
                        for j in range(h // g))
        write_npy('%s/%s.npy' % (outdir, name), [b, h // g, nk, d], kept)
        expd = b''.join(raw[j * g * per:(j * g + 1) * per] * g
                        for j in range(h // g))
        write_npy('%s/%sx.npy' % (outdir, name), [b, h, nk, d], expd)


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def to_bf16(u):
    """FP32 bits U rounded to BF16 (RNE), widened back to FP32 bits."""
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return u | 0x00400000
    r = u + 0x7FFF + ((u >> 16) & 1)
    return r & 0xFFFF0000


def check(expanded, grouped, g):
    e, gr = read(expanded), read(grouped)
    n_cmp = 0
    for name in ('dk', 'dv'):
        ev = struct.unpack('<%dI' % (len(e[name][2]) // 4), e[name][2])
        gv = struct.unpack('<%dI' % (len(gr[name][2]) // 4), gr[name][2])
        b, hkv, nk, d = gr[name][1]
        n = nk * d
        for kh in range(b * hkv):
            for j in range(n):
                acc = 0.0
                for h in range(g):
                    x = struct.unpack('<f', struct.pack(
                        '<I', ev[(kh * g + h) * n + j]))[0]
                    s = acc + x
                    if s - acc != x:  # not exact in binary64
                        print('inexact binary64 sum at', name, kh, j)
                        return 1
                    acc = f32(s)
                want = to_bf16(bits(acc))
                got = gv[kh * n + j]
                if got != want:
                    print('%s[%d, %d]: grouped 0x%08X, expected 0x%08X' %
                          (name, kh, j, got, want))
                    return 1
                n_cmp += 1
    print('%d elements equal' % n_cmp)
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'split':
        split(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    sys.exit(check(sys.argv[2], sys.argv[3], int(sys.argv[4])))
