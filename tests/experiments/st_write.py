"""st_write.py -- small safetensors files for the scan tests (standard
library only): BF16 bit patterns and a writer with a sidecar manifest."""
import json
import struct


def bf16(x):
    """The BF16 bits of X (truncated: the tests use exact BF16 values)."""
    return struct.unpack('<I', struct.pack('<f', x))[0] >> 16


def write(path, tensors, manifest):
    """PATH (.safetensors) from TENSORS {name: (shape, raw BF16 bytes)},
    and MANIFEST as PATH's .json sidecar."""
    hdr, off, data = {}, 0, b''
    for name, (shape, raw) in tensors.items():
        hdr[name] = {'dtype': 'BF16', 'shape': shape,
                     'data_offsets': [off, off + len(raw)]}
        off += len(raw)
        data += raw
    h = json.dumps(hdr).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + data)
    with open(path[:-len('.safetensors')] + '.json', 'w') as f:
        json.dump(manifest, f)
