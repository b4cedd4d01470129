#!/usr/bin/env python3
# make-bad-corpus.py -- writes tests/data/bad/: malformed .safetensors, .npy
# and tensor-core vector files, and the table EXPECTED that
# tests/analysis/test_tensor_io.c checks them against.
#
#   python3 tests/data/make-bad-corpus.py     (from the top of the tree)
#
# Standard library only.  Each case is: file name, the status the reader
# must return (tensor_status_name), a substring of its message, and the
# bytes.  The test also checks that the message begins with the file's
# path, and that every file in the folder is listed.
import os
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")
cases = []


def case(name, status, substring, data):
    assert "\n" not in substring and "\t" not in substring
    cases.append((name, status, substring, data))


def st(header, data=b"", hlen=None):
    """A safetensors file: 8-byte LE length, header text, data."""
    h = header.encode("utf-8") if isinstance(header, str) else header
    n = len(h) if hlen is None else hlen
    return struct.pack("<Q", n) + h + data


def ent(dtype, shape, begin, end):
    return ('{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}'
            % (dtype, shape, begin, end))


W = '"w":'
ok_w = W + ent("F32", "[2]", 0, 8)
d8 = bytes(range(8))


def st_w(name, status, substring, dtype, shape, begin=0, end=8, data=d8):
    """A .safetensors case whose header holds the one tensor "w"."""
    case(name, status, substring,
         st("{" + W + ent(dtype, shape, begin, end) + "}", data))


# --- .safetensors: the file and the header length
case("st_empty.safetensors", "format",
     "header length: truncated: the file is 0 bytes", b"")
case("st_short.safetensors", "format",
     "header length: truncated: the file is 5 bytes", b"\x10\0\0\0\0")
case("st_hlen_past_eof.safetensors", "format",
     "header length: 1000 bytes, past the end of the file (12 bytes follow",
     st("{}" + " " * 10, hlen=1000))
case("st_hlen_huge.safetensors", "format",
     "header length: 9223372036854775808 bytes, past the end of the file",
     st("{}", hlen=1 << 63))
case("st_hlen_zero.safetensors", "format",
     "header: empty (expected a JSON object)", st("", data=d8))
# --- the header text
case("st_not_json.safetensors", "format", "header: not valid JSON",
     st('{"w": '))
case("st_trailing_garbage.safetensors", "format", "header: not valid JSON",
     st("{} x"))
st_w("st_big_integer.safetensors", "format", "header: not valid JSON", "F32",
     "[99999999999999999999]")
case("st_duplicate_key.safetensors", "format", "header: not valid JSON",
     st("{" + ok_w + "," + ok_w + "}", d8))
case("st_nul_in_name.safetensors", "format", "header: not valid JSON",
     st('{"a\\u0000b":' + ent("F32", "[2]", 0, 8) + "}", d8))
case("st_not_object.safetensors", "format",
     "header: expected a JSON object, got an array", st("[1,2]"))
# --- one entry
case("st_entry_not_object.safetensors", "format",
     'tensor "w": expected an object with dtype, shape and data_offsets, '
     'got 3', st("{" + W + "3}"))
case("st_missing_dtype.safetensors", "format",
     'tensor "w": missing field "dtype"',
     st('{"w":{"shape":[2],"data_offsets":[0,8]}}', d8))
case("st_missing_shape.safetensors", "format",
     'tensor "w": missing field "shape"',
     st('{"w":{"dtype":"F32","data_offsets":[0,8]}}', d8))
case("st_missing_offsets.safetensors", "format",
     'tensor "w": missing field "data_offsets"',
     st('{"w":{"dtype":"F32","shape":[2]}}', d8))
case("st_extra_field.safetensors", "format",
     'tensor "w": unexpected field "offsets"',
     st('{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],'
        '"offsets":[0,8]}}', d8))
case("st_dtype_not_string.safetensors", "format",
     'tensor "w" dtype: expected a string such as "BF16", got 3',
     st('{"w":{"dtype":3,"shape":[2],"data_offsets":[0,8]}}', d8))
st_w("st_unknown_dtype.safetensors", "format",
     'tensor "w" dtype: unknown dtype "Q8"', "Q8", "[2]")
st_w("st_dtype_lowercase.safetensors", "format",
     'tensor "w" dtype: unknown dtype "bf16"', "bf16", "[4]")
st_w("st_shape_not_array.safetensors", "format",
     'tensor "w" shape: expected an array of non-negative integers, got 2',
     "F32", "2")
st_w("st_shape_negative.safetensors", "format",
     'tensor "w" shape[1]: expected a non-negative integer, got -2', "F32",
     "[1,-2]")
st_w("st_shape_real.safetensors", "format",
     'tensor "w" shape[0]: expected a non-negative integer, got the real '
     'number 2.5', "F32", "[2.5]")
st_w("st_shape_string.safetensors", "format",
     'tensor "w" shape[0]: expected a non-negative integer, got a string',
     "F32", '["2"]')
st_w("st_shape_9dims.safetensors", "unsupported",
     'tensor "w" shape: 9 dimensions, at most 8 are supported', "F32",
     "[1,1,1,1,1,1,1,1,2]")
st_w("st_shape_overflow.safetensors", "limit",
     'tensor "w" shape: [4294967296, 4294967296, 4294967296] of F32 needs '
     'more than 2^40 bytes', "F32", "[4294967296,4294967296,4294967296]")
st_w("st_shape_huge.safetensors", "limit",
     'tensor "w" shape: [1099511627776] of F32 needs more than 2^40 bytes',
     "F32", "[1099511627776]", 0, 4398046511104)
st_w("st_zero_dim_huge.safetensors", "limit",
     'tensor "w" shape: [0, 9223372036854775807] of U8 needs more than '
     '2^40 bytes', "U8", "[0,9223372036854775807]", 0, 0, data=b"")
# --- data_offsets
case("st_offsets_not_pair.safetensors", "format",
     'tensor "w" data_offsets: expected [begin, end], got an array',
     st('{"w":{"dtype":"F32","shape":[2],"data_offsets":[8]}}', d8))
st_w("st_offsets_negative.safetensors", "format",
     'tensor "w" data_offsets: begin: expected a non-negative integer, '
     'got -8', "F32", "[2]", -8, 0)
st_w("st_offsets_reversed.safetensors", "format",
     'tensor "w" data_offsets: begin 8 is after end 0', "F32", "[0]", 8, 0)
st_w("st_offsets_past_end.safetensors", "format",
     'tensor "w" data_offsets: end 400 is past the end of the data '
     '(8 bytes)', "F32", "[100]", 0, 400)
st_w("st_big_u8_no_data.safetensors", "format",
     'tensor "w" data_offsets: end 549755813888 is past the end of the '
     'data (0 bytes)', "U8", "[549755813888]", 0, 549755813888, data=b"")
case("st_truncated.safetensors", "format",
     'tensor "w" data_offsets: end 8 is past the end of the data (5 bytes)',
     st("{" + ok_w + "}", d8[:5]))
st_w("st_size_mismatch.safetensors", "format",
     'tensor "w" data_offsets: [0, 6] holds 6 bytes, but F32 [2] needs 8',
     "F32", "[2]", 0, 6, data=d8[:6])
case("st_overlap.safetensors", "format",
     'tensor "b" data_offsets: [4, 12] overlaps tensor "a" [0, 8]',
     st('{"a":' + ent("F32", "[2]", 0, 8) + ',"b":'
        + ent("F32", "[2]", 4, 12) + "}", bytes(12)))
case("st_gap.safetensors", "format",
     'tensor "b" data_offsets: begins at 8, but the previous ends at 4: '
     'bytes 4..8 belong to no tensor',
     st('{"a":' + ent("F32", "[1]", 0, 4) + ',"b":'
        + ent("F32", "[1]", 8, 12) + "}", bytes(12)))
st_w("st_gap_start.safetensors", "format",
     'tensor "w" data_offsets: begins at 4, but the data begins at 0', "F32",
     "[1]", 4, 8)
st_w("st_trailing_data.safetensors", "format",
     "data: bytes 4..8 belong to no tensor (the tensors must cover the "
     "data exactly)", "F32", "[1]", 0, 4)
case("st_no_tensors_data.safetensors", "format",
     "data: bytes 0..8 belong to no tensor", st("{}", d8))
# --- __metadata__
case("st_meta_not_object.safetensors", "format",
     "__metadata__: expected an object of strings, got an array",
     st('{"__metadata__":["a"],' + ok_w + "}", d8))
case("st_meta_not_string.safetensors", "format",
     '__metadata__ "k": expected a string, got 1',
     st('{"__metadata__":{"k":1},' + ok_w + "}", d8))


def npy(header, data=b"", major=1, minor=0, hlen=None, magic=b"\x93NUMPY"):
    """A .npy file with the header text as given (no padding added)."""
    h = header.encode("latin-1") if isinstance(header, str) else header
    n = len(h) if hlen is None else hlen
    if major == 1:
        pre = magic + bytes([major, minor]) + struct.pack("<H", n)
    else:
        pre = magic + bytes([major, minor]) + struct.pack("<I", n)
    return pre + h + data


def hdr(descr="'<f4'", fortran="False", shape="(2,)"):
    return ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }\n"
            % (descr, fortran, shape))


f8 = bytes(8)


def npyh(name, status, substring, data=f8, **fields):
    """A .npy case whose header is hdr(**fields)."""
    case(name, status, substring, npy(hdr(**fields), data))


# --- .npy: magic, version, header length
case("npy_empty.npy", "format",
     "magic: truncated: the file is 0 bytes, too short for a .npy header",
     b"")
case("npy_bad_magic.npy", "format", 'magic: expected "\\x93NUMPY"',
     npy(hdr(), f8, magic=b"\x93NUMPZ"))
case("npy_version4.npy", "unsupported",
     "version: 4.0 is not supported (expected 1.0, 2.0 or 3.0)",
     npy(hdr(), f8, major=4))
case("npy_version1_1.npy", "unsupported", "version: 1.1 is not supported",
     npy(hdr(), f8, minor=1))
case("npy_hlen_past_eof.npy", "format",
     "header length: 4096 bytes, past the end of the file",
     npy(hdr(), f8, hlen=4096))
case("npy_v2_hlen_past_eof.npy", "format",
     "header length: 305419896 bytes, past the end of the file",
     npy(hdr(), f8, major=2, hlen=0x12345678))
case("npy_v2_short.npy", "format",
     "header length: truncated: the file is 11 bytes",
     b"\x93NUMPY\x02\x00\x10\x00\x00")
# --- the dict literal
case("npy_not_dict.npy", "format",
     "header: expected '{' at byte 0, found \"[1, 2]\"", npy("[1, 2]\n"))
case("npy_unterminated.npy", "format",
     "header: expected ',' or '}' at byte 15, found the end of the header",
     npy("{'descr': '<f4'"))
case("npy_trailing_text.npy", "format",
     "header: expected nothing after the closing '}'",
     npy(hdr().rstrip("\n") + " x\n", f8))
case("npy_nul_in_header.npy", "format", "header: a NUL byte at byte 3",
     npy("{'d\0escr': '<f4'}\n", f8))
case("npy_unquoted_key.npy", "format", "header: expected a quoted key",
     npy("{descr: '<f4'}\n", f8))
case("npy_missing_shape.npy", "format", "header: missing key 'shape'",
     npy("{'descr': '<f4', 'fortran_order': False, }\n", f8))
case("npy_missing_descr.npy", "format", "header: missing key 'descr'",
     npy("{'fortran_order': False, 'shape': (2,), }\n", f8))
case("npy_missing_fortran.npy", "format",
     "header: missing key 'fortran_order'",
     npy("{'descr': '<f4', 'shape': (2,), }\n", f8))
case("npy_extra_key.npy", "format",
     "header: unexpected key \"order\" (expected 'descr', 'fortran_order' "
     "and 'shape' only)",
     npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
         "'order': 'C', }\n", f8))
case("npy_duplicate_key.npy", "format", "header: duplicate key 'descr'",
     npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
         "'shape': (2,), }\n", f8))
npyh("npy_descr_not_string.npy", "format",
     "header 'descr': expected a string such as '<f4'", descr="4")
npyh("npy_descr_escape.npy", "format",
     "header 'descr': expected a string without escapes", descr="'<f\\x34'")
npyh("npy_bad_descr.npy", "format",
     "header 'descr': unsupported or invalid dtype \"<c8\"", data=bytes(16),
     descr="'<c8'")
npyh("npy_descr_pipe_f4.npy", "format",
     "header 'descr': unsupported or invalid dtype \"|f4\"", descr="'|f4'")
npyh("npy_descr_garbage.npy", "format",
     "header 'descr': unsupported or invalid dtype \"float32\"",
     descr="'float32'")
npyh("npy_structured.npy", "unsupported",
     "header 'descr': structured (record) arrays are not supported",
     descr="[('a', '<f4')]")
npyh("npy_fortran.npy", "unsupported",
     "header 'fortran_order': non-contiguous (Fortran-order) arrays are not "
     "supported", data=bytes(24), fortran="True", shape="(2, 3)")
npyh("npy_fortran_not_bool.npy", "format",
     "header 'fortran_order': expected True or False at byte 34", fortran="0")
npyh("npy_shape_list.npy", "format",
     "header 'shape': expected a tuple such as (2, 3)", shape="[2]")
npyh("npy_shape_paren_int.npy", "format",
     "header 'shape': expected ',' (a one-element tuple is (n,))", shape="(2)")
npyh("npy_shape_no_comma.npy", "format", "header 'shape': expected ',' or ')'",
     shape="(2 1)")
npyh("npy_shape_negative.npy", "format",
     "header 'shape': expected a non-negative integer at byte 51, found a "
     "negative number", shape="(-2,)")
npyh("npy_shape_9dims.npy", "unsupported",
     "header 'shape': more than 8 dimensions are not supported",
     shape="(1, 1, 1, 1, 1, 1, 1, 1, 2)")
npyh("npy_shape_overflow.npy", "limit",
     "header 'shape': (4294967296, 4294967296, 4294967296) of '<f4' needs "
     "more than 2^40 bytes", shape="(4294967296, 4294967296, 4294967296)")
npyh("npy_dim_too_big.npy", "limit",
     "header 'shape': the dimension at byte 51 does not fit in 64 bits",
     shape="(99999999999999999999999,)")
# --- the data
npyh("npy_truncated_data.npy", "format",
     "data: truncated: shape (2, 3) of '<f4' needs 24 bytes, the file has 20",
     data=bytes(20), shape="(2, 3)")
npyh("npy_size_mismatch.npy", "format",
     "data: 12 bytes, but shape (2,) of '<f4' needs 8 (shape and data size "
     "do not match)", data=bytes(12))
npyh("npy_scalar_no_data.npy", "format",
     "data: truncated: shape () of '<f8' needs 8 bytes, the file has 0",
     data=b"", descr="'<f8'", shape="()")

# --- tensor-core vector text
row = " ".join(["3f800000"] * 16)
case("a_empty_bf16.txt", "format", "no vectors (expected at least one line)",
     b"")
case("a_blank_only_bf16.txt", "format", "no vectors", b"\n  \n\n")
case("a_short_bf16.txt", "format", "line 2: 15 words, expected 16",
     (row + "\n" + " ".join(["3f800000"] * 15) + "\n").encode())
case("a_long_bf16.txt", "format",
     "line 1 word 17: more than 16 words on the line",
     (row + " 3f800000\n").encode())
case("b_bad_hex_bf16.txt", "format",
     'line 1 word 3: expected 8 hex digits, found "3f8g0000"',
     (row.replace("3f800000 3f800000 3f800000", "3f800000 3f800000 3f8g0000",
                  1) + "\n").encode())
case("b_short_word_bf16.txt", "format",
     'line 1 word 1: expected 8 hex digits, found "3f80000"',
     ("3f80000" + row[8:] + "\n").encode())
case("a_low_bits_bf16.txt", "format",
     "line 2 word 16: 3f800001 is not a BF16 value (the low 16 bits must be "
     "zero)", (row + "\n" + row[:-8] + "3f800001\n").encode())
case("a_blank_line_bf16.txt", "format",
     "line 2: empty line before the last vector",
     (row + "\n\n" + row + "\n").encode())
case("c_bad_bit_fp32.txt", "format",
     'line 1: expected 32 binary digits, found "0011110110100010111001001111'
     '0012"', b"00111101101000101110010011110012\n")
case("c_short_fp32.txt", "format",
     'line 2: expected 32 binary digits, found "0011110110100010111001001111'
     '001"',
     b"00111101101000101110010011110011\n0011110110100010111001001111001\n")
case("d_two_words_fp32.txt", "format", "line 1: expected 32 binary digits",
     b"00111101101000101110010011110011 00111101101000101110010011110011\n")
case("d_nul_fp32.txt", "format", "a NUL byte at byte 32 (not a text file)",
     b"00111101101000101110010011110011\0\n")
# --- files of another type: said so, not read as a broken file of the
# expected type
npyh("st_is_npy.safetensors", "format",
     "not a .safetensors file (it looks like a .npy file;")
case("st_is_zip.safetensors", "format",
     "not a .safetensors file (it looks like a zip archive",
     b"PK\x03\x04" + bytes(60))
case("st_is_text.safetensors", "format",
     "not a .safetensors file (it looks like a text file;",
     b"q,k,v\n0.5,1.5,2.5\n")
case("st_is_json.safetensors", "format",
     "not a .safetensors file (it looks like a JSON text;",
     b'{"gpu": "NVIDIA H200", "causal": false}\n')
case("st_hlen_absurd.safetensors", "format",
     "not a .safetensors file (its first 8 bytes, read as the header "
     "length, give 1125899906842624 bytes, but the file has 16",
     struct.pack("<Q", 1 << 50) + bytes(range(1, 9)))
case("npy_is_safetensors.npy", "format",
     'magic: expected "\\x93NUMPY" (not a .npy file; it looks like a '
     '.safetensors file)',
     st("{" + W + ent("F32", "[2]", 0, 8) + "}", data=d8))
npyh("d_is_npy_fp32.txt", "format",
     "a NUL byte at byte 7 (not a text file; it looks like a .npy file)")

def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    names = set()
    lines = [
        "# EXPECTED -- the malformed files of this folder: file name, the",
        "# status the reader must return, and a substring of its message",
        "# (which must also begin with the file's path).  Readers by name:",
        "# *.safetensors safetensors_read_all, *.npy npy_read, a_* and b_*",
        "# tcvec_read_ab, c_* and d_* tcvec_read_cd.  Written together with",
        "# the files by tests/data/make-bad-corpus.py; checked by",
        "# tests/analysis/test_tensor_io.c.  Fields are separated by tabs.",
    ]
    for name, status, sub, data in cases:
        assert name not in names, name
        names.add(name)
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        lines.append("%s\t%s\t%s" % (name, status, sub))
    with open(os.path.join(OUT, "EXPECTED"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d files in %s" % (len(cases), OUT), file=sys.stderr)


main()
