#!/usr/bin/env python3
# make-seeds.py -- writes the hand-made seed inputs of the fuzz corpora,
# tests/fuzz/corpus/<target>/seed-*.  The other files of each corpus were
# found by fuzzing and kept by libFuzzer's -merge=1 (doc/verification.md
# says how); tests/data/bad and tests/data/tensors serve as further seeds
# when fuzzing.
#
#   python3 tests/fuzz/make-seeds.py     (from the top of the tree)
#
# Standard library only.  Each seed is a small valid input or a near miss,
# chosen so that the fuzzer starts from every branch of the format: every
# dtype, scalars, empty tensors, metadata, big-endian and raw .npy types,
# every .npy version, and the number syntaxes of the command line.
import os
import struct

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(TOP, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# --- .safetensors ---------------------------------------------------------
SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
         "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4,
         "F32": 4, "I64": 8, "U64": 8, "F64": 8}


def st(tensors, meta=None, pad=True):
    """tensors: list of (name, dtype, shape); data bytes 0, 1, 2, ..."""
    parts, off = [], 0
    if meta is not None:
        parts.append('"__metadata__":{%s}' % ",".join(
            '"%s":"%s"' % kv for kv in meta))
    for name, dt, shape in tensors:
        n = SIZES[dt]
        for s in shape:
            n *= s
        parts.append('"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}'
                     % (name, dt, ",".join(map(str, shape)), off, off + n))
        off += n
    h = ("{" + ",".join(parts) + "}").encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + bytes(i % 251 for i in range(off))


write("safetensors", "empty-object", st([]))
write("safetensors", "bf16-2x3", st([("w", "BF16", [2, 3])]))
write("safetensors", "scalar-f64", st([("s", "F64", [])]))
write("safetensors", "zero-dim", st([("z", "F32", [0, 4])]))
write("safetensors", "meta-two", st([("a", "F16", [3]), ("b", "U16", [2, 2])],
                                    meta=[("format", "pt"), ("k", "v")]))
write("safetensors", "every-dtype",
      st([("t_" + dt.lower(), dt, [2]) for dt in sorted(SIZES)]))
write("safetensors", "unpadded", st([("x", "I8", [5])], pad=False))
write("safetensors", "escaped-name", st([("q\\u00e9\\n", "U8", [1])]))
write("safetensors", "null-meta",
      struct.pack("<Q", 21) + b'{"__metadata__":null}')
write("safetensors", "bf16-u16", st([("x", "BF16", [2]), ("y", "U16", [1])]))

# --- .npy -------------------------------------------------------------------


def npy(descr, shape, data, version=1, fortran="False", quote="'"):
    q = quote
    sh = "(" + "".join("%d, " % s for s in shape).rstrip(" ")
    if len(shape) > 1:
        sh = sh.rstrip(",")
    sh += ")"
    h = "{%sdescr%s: %s%s%s, %sfortran_order%s: %s, %sshape%s: %s, }" % (
        q, q, q, descr, q, q, q, fortran, q, q, sh)
    pre = 10 if version == 1 else 12
    h = h.encode()
    h += b" " * (-(pre + len(h) + 1) % 64) + b"\n"
    if version == 1:
        head = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h))
    else:
        head = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h))
    return head + h + data


write("npy", "f4-2x3", npy("<f4", [2, 3], bytes(range(24))))
write("npy", "be-f4", npy(">f4", [2], bytes(range(8))))
write("npy", "be-u2", npy(">u2", [3], bytes(range(6))))
write("npy", "u2-v2", npy("<u2", [2, 2], bytes(range(8)), version=2))
write("npy", "u1-v3", npy("|u1", [4], bytes(range(4)), version=3))
write("npy", "raw-v2", npy("|V2", [2], bytes(range(4))))
write("npy", "raw-v1", npy("|V1", [3], bytes(range(3))))
write("npy", "scalar-f8", npy("<f8", [], bytes(range(8))))
write("npy", "empty-i8", npy("<i8", [0, 3], b""))
write("npy", "bool-dq", npy("|b1", [2], b"\x00\x01", quote='"'))
LONG = b"{'descr': '<i2', 'fortran_order': False, 'shape': (2L,)}\n"
write("npy", "i2-long-suffix",
      b"\x93NUMPY\x01\x00" + struct.pack("<H", len(LONG)) + LONG
      + b"\x01\x00\x02\x00")
write("npy", "fortran", npy("<f4", [1], bytes(4), fortran="True"))

# --- tensor-core vector text ----------------------------------------------
w = " ".join(["3f800000"] * 16)
write("tcvec", "ab-one", (w + "\n").encode())
write("tcvec", "ab-crlf-blank-end",
      (w + "\r\n" + w.upper() + " \r\n\n \n").encode())
write("tcvec", "cd-two", b"00111111100000000000000000000000\n"
      b"  01000000000000000000000000000000\t\n")
write("tcvec", "cd-no-newline", b"1" * 32)
write("tcvec", "ab-low-bits", (" ".join(["3f800001"] * 16) + "\n").encode())

# --- command-line numbers and options ---------------------------------------
# byte 0: format (mod 7: bf16 f16 f32 tf32 e4m3 e5m2 f64) and mode (div 7,
# mod 7: rne rtz rdn rup rna rod sr); byte 1: message buffer size and the
# finite switch; then NUL-separated strings.


def cli(fmt, mode, why, *args):
    return bytes([fmt + 7 * mode, why]) + b"\0".join(a.encode() for a in args)


write("cli", "decimal", cli(0, 0, 255, "-2.40625", "1e-40", "3.4e38"))
write("cli", "hex-float", cli(2, 0, 40, "-0x1.34p+1", "0x1p-149", "0x1.8"))
write("cli", "prefixed", cli(3, 2, 10, "bf16:0xC013", "tf32:0x3F802000",
                             "f64:0x7FF8000000000001", "e4m3:0x7F"))
write("cli", "specials", cli(6, 0, 3, "inf", "-Infinity", "nan", "snan",
                             "nan(0x12)", "-0"))
write("cli", "f64-ties", cli(6, 0, 255, "9007199254740993",
                             "2.2250738585072011e-308", "4.9e-324"))
write("cli", "sizes", cli(1, 3, 128, "512M", "8GiB", "1T", "17", "4KB",
                          "18446744073709551615", "0x10"))
write("cli", "options", cli(5, 4, 1, "--out", "x.safetensors", "--force",
                            "-h", "--n=3", "--", "-2.5", "--bogus=1"))
write("cli", "names", cli(4, 5, 200, "bf16", "fp32", "f64", "rne", "sr",
                          "x86", "always", "ieee"))
write("cli", "json-text", cli(0, 6, 77, 'a"b\\c\n\t\x01\u00e9\x7f', "\u00ff"))
write("cli", "overflow", cli(4, 3, 255, "1e999", "-1e999", "500", "448"))
# f64 values of opposite signs far apart: their distance does not fit int64_t
write("cli", "f64-distance", cli(6, 0, 255, "-inf", "inf",
                                 "-1.7976931348623157e308", "4.9e-324",
                                 "-0"))

# --- sweep grid files ---------------------------------------------------------
# the whole input is a grid file; the first byte also picks the key of an
# option (mod the number of keys) and the rest is its value
write("grid", "default-like",
      b"policy = paper-eq4\nfix = none,beta\nrepeat = 1,2,4\n"
      b"v-mean = -2:2:0.5\n# comment\ntrials = 8\nheads = 1\nseed = 42\n"
      b"stages = 1\n")
write("grid", "names",
      b"qk = sink\nsink = 0:8:2\nablate = none,fp32-pv+fp32-o,untiled\n"
      b"mma = default,sm90,exact\nexp = cr,ex2-sm90\n")
write("grid", "shapes",
      b"v-dist = student-t\nv-nu = 3,5\nv-std = 0.1:0.4:0.1\n"
      b"v-shift = 0.25\nn = 16,64\nd = 16\nbr = 0,16\nbc = 0,32\n"
      b"causal = 0,1\n")
write("grid", "crlf", b"v-mean = 1e-3\r\n\tpolicy\t=\tfa2  # x\r\n\n")
write("grid", "bad-key", b"nope = 1\n")
write("grid", "bad-range", b"v-mean = 1:0:0.5\n")
# 840 values: a line of the canonical text longer than 8 KiB
write("grid", "long-line", b"v-std = 0.1:84:0.1\n")
