#!/usr/bin/env python3
"""fixgen.py -- the fixture input generator splitmix64-ih12 in Python.

usage: fixgen.py            (runs the self-check; exit 0 when it passes)

The same generator as analysis/fixgen.h, bit for bit, in integer
arithmetic only: element i of stream s (q 0, k 1, v 2, do 3) of a dump
with seed S is

    key = mix(S + G (s + 1)),  w_j = mix(key + G (3 i + j + 1)), j < 3,
    T   = (sum of the twelve 16-bit fields of w_0, w_1, w_2) - 393210,
    x   = mean + std T / 2^16, rounded to BF16 or FP16 (nearest, even),

with mix the splitmix64 finaliser and G = 0x9e3779b97f4a7c15 (mod 2^64).
mean and std are dyadic (every finite binary32 value is).  The hash of a
tensor of N elements with bits b_i is
mix(N + sum_i mix(i 2^16 + b_i + G) mod 2^64).

Pure Python ints; with numpy present, gen() and hash_bits() take a
vectorised path that the self-check compares with the plain one.
"""
import sys

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
NAME = "splitmix64-ih12"
STREAMS = {"q": 0, "k": 1, "v": 2, "do": 3}
FORMATS = {"bfloat16": (8, 7), "float16": (5, 10)}


def mix(z):
    """The splitmix64 finaliser of Z (mod 2^64)."""
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def dyadic(x):
    """X (a float or an int) as (m, e), x = m 2^e, |m| < 2^24."""
    n, d = float(x).as_integer_ratio()
    e = 0
    while d > 1:
        if d & 1:
            raise ValueError("%r is not dyadic" % x)
        d >>= 1
        e -= 1
    while n != 0 and n % 2 == 0:
        n //= 2
        e += 1
    if abs(n) >= 1 << 24:
        raise ValueError("%r needs more than 24 significant bits" % x)
    return (n, e if n != 0 else 0)


def irwin_hall(seed, stream, i):
    """T of element I of stream STREAM."""
    key = mix(seed + GOLDEN * (stream + 1))
    s = 0
    for j in range(3):
        w = mix(key + GOLDEN * (3 * i + j + 1))
        s += (w & 0xFFFF) + ((w >> 16) & 0xFFFF) + ((w >> 32) & 0xFFFF) \
            + (w >> 48)
    return s - 393210


def round_bits(num, exp, fmt):
    """The bits of the exact value NUM 2^EXP (NUM an int) rounded to FMT
    ("bfloat16" or "float16") to nearest, ties to even; 0 gives +0."""
    ebits, f = FORMATS[fmt]
    bias = (1 << (ebits - 1)) - 1
    emin = 1 - bias
    max_field = (1 << ebits) - 1
    if num == 0:
        return 0
    neg = num < 0
    mag = -num if neg else num
    top = exp + mag.bit_length() - 1
    lsb = max(top, emin) - f
    sh = lsb - exp
    if sh <= 0:
        q = mag << -sh
    else:
        q, rem = mag >> sh, mag & ((1 << sh) - 1)
        half = 1 << (sh - 1)
        if rem > half or (rem == half and q & 1):
            q += 1
    r = ((lsb + f - emin) << f) + q
    if r >> f >= max_field:
        r = max_field << f
    return r | (0x8000 if neg else 0)


def value_bits(mean, std, t, fmt):
    """mean + std T / 2^16 rounded to FMT; MEAN, STD as (m, e)."""
    (mm, me), (sm, se) = mean, std
    pe = se - 16
    e = min(pe, me)
    num = ((sm * t) << (pe - e)) + (mm << (me - e))
    return round_bits(num, e, fmt)


def gen_plain(seed, stream, mean, std, fmt, first, n):
    """The bits of elements FIRST .. FIRST + N - 1 (a list of ints)."""
    m, s = dyadic(mean), dyadic(std)
    return [value_bits(m, s, irwin_hall(seed, stream, first + i), fmt)
            for i in range(n)]


def bits_dyadic(b, fmt):
    """The value of the finite FMT bits B as (m, e); ValueError for an
    infinity or a NaN."""
    ebits, f = FORMATS[fmt]
    bias = (1 << (ebits - 1)) - 1
    max_field = (1 << ebits) - 1
    field = (b >> f) & max_field
    if field == max_field:
        raise ValueError("0x%04x is not finite" % b)
    m = b & ((1 << f) - 1)
    if field:
        m += 1 << f
    e = (field if field else 1) - bias - f
    return (-m if b & 0x8000 else m, e)


def gen_u_scaled(seed, stream, std, fmt, u, scale, bh, n, d):
    """The u transform with a scale (analysis/fixgen.h): element
    (p, i, c) of a [BH, N, D] tensor is SCALE u[p, c] + STD T / 2^16
    rounded once, T of stream STREAM at the element's index; U the BH D
    bits of u (FMT).  SCALE has at most 12 significant bits.  A list of
    ints."""
    sm, se = dyadic(scale)
    if abs(sm) >= 1 << 12:
        raise ValueError("scale %r needs more than 12 bits" % scale)
    s = dyadic(std)
    means = []
    for x in u:
        m, e = bits_dyadic(int(x), fmt)
        means.append((m * sm, e + se) if m else (0, 0))
    np = _np()
    total = bh * n * d
    ts = (_t_np(np, seed, stream, 0, total).tolist() if np is not None
          else [irwin_hall(seed, stream, i) for i in range(total)])
    out = []
    idx = 0
    for p in range(bh):
        row = means[p * d:(p + 1) * d]
        for i in range(n):
            for c in range(d):
                out.append(value_bits(row[c], s, ts[idx], fmt))
                idx += 1
    return out


def mirror_kinds(n, block, stride):
    """The kind of each block of N rows in blocks of BLOCK: 0 unpaired, 1
    a source, 2 a target (dump_sdpa.py's pairing loop: ascending j, pair
    j with j + STRIDE unless j is already a target or the lengths
    differ)."""
    nblk = (n + block - 1) // block
    kind = [0] * nblk
    for j in range(nblk - stride):
        lo, hi = j * block, min(n, (j + 1) * block)
        m = (j + stride) * block
        if kind[j] or hi - lo != min(n, m + block) - m:
            continue
        kind[j], kind[j + stride] = 1, 2
    return kind


def scale_bits(b, x, fmt):
    """The FMT bits B times the dyadic X = (m, e), rounded once; a zero
    product keeps its sign."""
    m, e = bits_dyadic(b, fmt)
    xm, xe = x
    if m == 0 or xm == 0:
        return 0x8000 if (b & 0x8000 != 0) != (xm < 0) else 0
    return round_bits(m * xm, e + xe, fmt)


def mirror_bits(bits, role, fmt, bh, n, d, block=1, stride=1, half=0,
                big=1.0, small=1.0):
    """The mirror transform of analysis/fixgen.h on BITS (a [BH, N, D]
    tensor of FMT bits, a list of ints; a new list): ROLE "q" zeroes the
    columns from HALF on; "v" copies each source block into its target;
    "k" copies with the columns from HALF on negated, then multiplies
    those columns by BIG in paired blocks and SMALL in the others (at most
    12 significant bits each)."""
    out = [int(x) for x in bits]
    if half > d or (role != "q" and (block < 1 or stride < 1)):
        raise ValueError("mirror: block, stride or half out of range")
    if role == "q":
        for r in range(bh * n):
            for c in range(half, d):
                out[r * d + c] = 0
        return out
    xb, xs = dyadic(big), dyadic(small)
    if role == "k" and max(abs(xb[0]), abs(xs[0])) >= 1 << 12:
        raise ValueError("mirror: big or small needs more than 12 bits")
    kind = mirror_kinds(n, block, stride)
    for p in range(bh):
        base = p * n * d
        for i in range(n):
            if kind[i // block] != 2:
                continue
            src = base + (i - stride * block) * d
            for c in range(d):
                x = out[src + c]
                out[base + i * d + c] = (x ^ 0x8000 if role == "k"
                                         and c >= half else x)
        if role != "k":
            continue
        for i in range(n):
            x = xb if kind[i // block] else xs
            for c in range(half, d):
                out[base + i * d + c] = scale_bits(out[base + i * d + c], x,
                                                   fmt)
    return out


def hash_plain(bits, first=0, acc=0):
    """The running hash sum of BITS (elements FIRST ...) added to ACC."""
    for i, b in enumerate(bits):
        acc = (acc + mix(((first + i) << 16) + b + GOLDEN)) & M64
    return acc


def hash_final(acc, n):
    return mix(n + acc)


def _np():
    try:
        import numpy
        return numpy
    except ImportError:
        return None


def _mix_np(np, z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _t_np(np, seed, stream, first, n):
    """T of N elements as an int64 numpy array."""
    key = np.uint64(mix(seed + GOLDEN * (stream + 1)))
    i = np.arange(first, first + n, dtype=np.uint64)
    s = np.zeros(n, dtype=np.int64)
    with np.errstate(over="ignore"):
        for j in range(3):
            w = _mix_np(np, key + np.uint64(GOLDEN)
                        * (np.uint64(3) * i + np.uint64(j + 1)))
            for f in range(4):
                s += ((w >> np.uint64(16 * f))
                      & np.uint64(0xFFFF)).astype(np.int64)
    return s - 393210


def gen(seed, stream, mean, std, fmt, first, n):
    """As gen_plain; a numpy uint16 array when numpy is present.  The
    values go through a table of the at most 786421 possible T."""
    np = _np()
    if np is None:
        return gen_plain(seed, stream, mean, std, fmt, first, n)
    t = _t_np(np, seed, stream, first, n)
    lo, hi = int(t.min()), int(t.max())
    m, s = dyadic(mean), dyadic(std)
    table = np.array([value_bits(m, s, x, fmt) for x in range(lo, hi + 1)],
                     dtype=np.uint16)
    return table[t - lo]


def hash_bits(bits, first=0):
    """The hash of BITS (a list or a numpy array of 16-bit patterns), as
    the elements FIRST ... of a tensor of len(BITS) elements."""
    np = _np()
    n = len(bits)
    if np is None:
        return hash_final(hash_plain(list(bits), first), n)
    b = np.asarray(bits).astype(np.uint64)
    i = np.arange(first, first + n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = _mix_np(np, (i << np.uint64(16)) + b + np.uint64(GOLDEN))
        acc = int(h.sum(dtype=np.uint64))
    return hash_final(acc & M64, n)


# Known vectors (tests/analysis/test_fixgen.c has the same): (seed,
# stream, index, T), also computed from the definition through
# int.to_bytes; (mean, std, T, format, bits), each also the nearest of an
# enumeration of every finite value of the format in exact rationals;
# (seed, mean, std, format, N, hash of elements 0 .. N - 1 of stream 1).
VEC_T = [
    (0, 0, 0, 119065),
    (1, 1, 5, -28365),
    (171, 2, 123456789, -21055),
    (2 ** 53 - 1, 3, 2 ** 40, 51263),
]
VEC_ROUND = [
    (0.0, 1.0, 0, "bfloat16", 0x0000),
    (0.0, 1.0, 65536, "bfloat16", 0x3F80),
    (0.0, 1.0, -65536, "float16", 0xBC00),
    (0.0, 1.0, 65536 + 256, "bfloat16", 0x3F80),   # tie, to even: down
    (0.0, 1.0, 65536 + 768, "bfloat16", 0x3F82),   # tie, to even: up
    (0.0, 1.0, 65536 + 257, "bfloat16", 0x3F81),   # above the tie
    (0.0, 1.0, 393210, "float16", 0x4600),         # 5.99991 -> 6
    (-1.5, 0.4000000059604645, 1000, "bfloat16", 0xBFBF),
    (-1.5, 0.4000000059604645, 393210, "float16", 0x3B33),
    (0.0, 2.0 ** -30, 1, "float16", 0x0000),        # 2^-46: to +0
    (0.0, 2.0 ** -30, -1, "float16", 0x8000),       # -2^-46: to -0
    (0.0, 2.0 ** -8, 3, "float16", 0x0003),         # 3 2^-24: subnormal
    (0.0, 2.0 ** 20, 393210, "float16", 0x7C00),    # overflow
    (0.0, 2.0 ** 20, -393210, "bfloat16", 0xCAC0),
    (1.00390625, 2.0 ** -40, 0, "bfloat16", 0x3F80),   # tie: even
    (1.00390625, 2.0 ** -40, 1, "bfloat16", 0x3F81),   # tie + 2^-56
    (1.00390625, 2.0 ** -40, -1, "bfloat16", 0x3F80),  # tie - 2^-56
    (1.01171875, 2.0 ** -40, 0, "bfloat16", 0x3F82),   # tie: even
    (1.01171875, 2.0 ** -40, -1, "bfloat16", 0x3F81),  # tie - 2^-56
    (1024.0, 2.0 ** -60, -1, "float16", 0x6400),
]
VEC_HASH = [
    (7, 0.0, 1.0, "bfloat16", 1000, 0xBEC51ABE48DDA4CB),
    (171, -1.5, 0.4000000059604645, "float16", 4096, 0x08983C196A14FA41),
]


# BF16 / FP16 bits as (m, e), m odd or 0 (as test_fixgen.c's); None: not
# finite
VEC_BITS = [(0x3F80, "bfloat16", (1, 0)), (0xBFC0, "bfloat16", (-3, -1)),
            (0x0001, "bfloat16", (1, -133)), (0x0080, "bfloat16", (1, -126)),
            (0x8000, "bfloat16", (0, 0)), (0x7F80, "bfloat16", None),
            (0x3C00, "float16", (1, 0)), (0x0001, "float16", (1, -24)),
            (0x3555, "float16", (1365, -12)), (0x7E00, "float16", None)]


# (role, fmt, BH, N, d, block, stride, half, big, small), input, output
MIRROR_CASES = [
    (("k", "bfloat16", 1, 5, 4, 1, 2, 2, 4.0, 0.5),
     [0x3F80, 0x4000, 0x3F80, 0xC040, 0x0000, 0x8000, 0x0000, 0x3FC0,
      0x1234, 0x1234, 0x1234, 0x1234, 0x5555, 0x5555, 0x5555, 0x5555,
      0x3F80, 0x3F80, 0x4080, 0x0001],
     [0x3F80, 0x4000, 0x4080, 0xC140, 0x0000, 0x8000, 0x0000, 0x40C0,
      0x3F80, 0x4000, 0xC080, 0x4140, 0x0000, 0x8000, 0x8000, 0xC0C0,
      0x3F80, 0x3F80, 0x4000, 0x0000]),
    (("k", "float16", 1, 7, 2, 2, 1, 1, 3.0, 2.0 ** -12),
     [0x1234, 0x3C01, 0x8000, 0x0001, 0x5555, 0x5555, 0x5555, 0x5555,
      0x4321, 0x7BFF, 0x0001, 0x0800, 0x7C00, 0x8C00],
     [0x1234, 0x4202, 0x8000, 0x0003, 0x1234, 0xC202, 0x8000, 0x8003,
      0x4321, 0x4BFF, 0x0001, 0x0000, 0x7C00, 0x8001]),
    (("q", "bfloat16", 2, 1, 3, 2, 1, 1),
     [0x3F80, 0x7FC0, 0x8000, 0x4000, 0xBF80, 0x0001],
     [0x3F80, 0x0000, 0x0000, 0x4000, 0x0000, 0x0000]),
    (("v", "bfloat16", 1, 5, 2, 2, 1),
     [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1, 2, 3, 4, 1, 2, 3, 4, 9, 10]),
]


def self_check():
    """Checks the known vectors and, with numpy, the vectorised paths;
    returns the number of failures (each printed)."""
    bad = 0
    for seed, stream, i, t in VEC_T:
        got = irwin_hall(seed, stream, i)
        if got != t:
            print("T seed %d stream %d index %d: 0x%x expected, got %d"
                  % (seed, stream, i, t, got))
            bad += 1
    for mean, std, t, fmt, want in VEC_ROUND:
        got = value_bits(dyadic(mean), dyadic(std), t, fmt)
        if got != want:
            print("round %r + %r x %d / 2^16 (%s): 0x%04x expected, got "
                  "0x%04x" % (mean, std, t, fmt, want, got))
            bad += 1
    for seed, mean, std, fmt, n, want in VEC_HASH:
        bits = gen_plain(seed, 1, mean, std, fmt, 0, n)
        got = hash_final(hash_plain(bits), n)
        if got != want:
            print("hash seed %d n %d: 0x%016x expected, got 0x%016x"
                  % (seed, n, want, got))
            bad += 1
    for b, fmt, want in VEC_BITS:
        try:
            got = bits_dyadic(b, fmt)
        except ValueError:
            got = None
        if got is not None and got[0] == 0:
            got = (0, 0)
        while got is not None and got[0] != 0 and got[0] % 2 == 0:
            got = (got[0] // 2, got[1] + 1)
        if got != want:
            print("bits 0x%04x (%s): %r expected, got %r"
                  % (b, fmt, want, got))
            bad += 1
    # the u transform with std 0: 4 u exactly, a normal BF16 u's bits
    # plus 0x100 (the exponent field plus 2), as test_fixgen.c checks
    u = gen_plain(5, 4, 0.0, 0.5, "bfloat16", 0, 24)
    q = gen_u_scaled(5, 0, 0.0, "bfloat16", u, 4.0, 3, 5, 8)
    want = [u[p * 8 + c] + 0x100 if u[p * 8 + c] & 0x7F80 else u[p * 8 + c]
            for p in range(3) for i in range(5) for c in range(8)]
    if q != want:
        print("u transform with std 0: not 4 u")
        bad += 1
    # the mirror transform on hand-made tensors (test_fixgen.c's
    # test_mirror, worked out by hand from the definition)
    for args, bits, want in MIRROR_CASES:
        got = mirror_bits(bits, *args)
        if got != want:
            print("mirror %r: %s expected, got %s"
                  % (args, " ".join("%04x" % x for x in want),
                     " ".join("%04x" % x for x in got)))
            bad += 1
    for args in (("k", "bfloat16", 1, 1, 2, 1, 1, 1, 4097.0, 1.0),
                 ("q", "bfloat16", 1, 1, 2, 1, 1, 3)):
        try:
            mirror_bits([0x3F80, 0x3F80], *args)
            print("mirror %r: not refused" % (args,))
            bad += 1
        except ValueError:
            pass
    np = _np()
    if np is not None:
        for fmt, mean, std in (("bfloat16", 0.0, 1.0),
                               ("float16", -1.5, 0.4000000059604645)):
            a = gen_plain(3, 2, mean, std, fmt, 1000, 4096)
            b = [int(x) for x in gen(3, 2, mean, std, fmt, 1000, 4096)]
            if a != b:
                print("numpy path differs (%s)" % fmt)
                bad += 1
            if hash_bits(b, 1000) != hash_final(hash_plain(a, 1000), 4096):
                print("numpy hash differs (%s)" % fmt)
                bad += 1
    return bad


if __name__ == "__main__":
    n = self_check()
    print("fixgen self-check: %s" % ("ok" if n == 0 else "%d failed" % n))
    sys.exit(1 if n else 0)
