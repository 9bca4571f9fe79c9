"""Reading the vectors without Maroon: safetensors files, tensor references, dtypes, and the
tensor-list digest of docs/spec-model.md (the inference digest's serialisation)."""
import hashlib
import json
import struct

import numpy as np

# Maroon's dtype names (docs/spec.md section 2): (safetensors name, item size, kind).
DTYPES = {
    "bool": ("BOOL", 1, "b"), "int8": ("I8", 1, "i"), "uint8": ("U8", 1, "u"), "int16": ("I16", 2, "i"),
    "uint16": ("U16", 2, "u"), "int32": ("I32", 4, "i"), "uint32": ("U32", 4, "u"), "int64": ("I64", 8, "i"),
    "uint64": ("U64", 8, "u"), "float16": ("F16", 2, "f"), "bfloat16": ("BF16", 2, "f"), "float32": ("F32", 4, "f"),
    "float64": ("F64", 8, "f"),
}
BY_SAFE = {v[0]: k for k, v in DTYPES.items()}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class T:
    """A tensor as stored: dtype name, shape, raw little-endian bytes."""

    def __init__(self, dtype, shape, data):
        self.dtype, self.shape, self.data = dtype, tuple(shape), bytes(data)

    @property
    def itemsize(self): return DTYPES[self.dtype][1]

    def bits(self):
        """The elements' bits as a numpy array of unsigned integers of the item size."""
        return np.frombuffer(self.data, dtype=np.dtype(UINT[self.itemsize]).newbyteorder("<")).reshape(self.shape)

    def ints(self):
        """The elements' bits as a flat list of Python ints."""
        return [int(x) for x in self.bits().reshape(-1)]

    def numpy(self):
        """float16/32/64 and the integers as numpy arrays (bfloat16 has no numpy dtype)."""
        np_name = {"bool": "bool", "float16": "<f2", "float32": "<f4", "float64": "<f8"}.get(
            self.dtype, "<" + DTYPES[self.dtype][2] + str(self.itemsize))
        return np.frombuffer(self.data, dtype=np.dtype(np_name)).reshape(self.shape)


def load_safetensors(path):
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    body = blob[8 + n:]
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out[name] = T(BY_SAFE[v["dtype"]], v["shape"], body[b:e])
    return out


def u64(x): return struct.pack("<Q", x)


def serialise(tag, tensors):
    """docs/spec-model.md: tag, u64 count, then per tensor u64 len(dtype), dtype, u64 rank, the
    u64 dims, u64 byte count, the bytes."""
    out = [tag, u64(len(tensors))]
    for t in tensors:
        name = t.dtype.encode()
        out += [u64(len(name)), name, u64(len(t.shape))] + [u64(d) for d in t.shape] + [u64(len(t.data)), t.data]
    return b"".join(out)


def tensors_digest(tag, tensors): return hashlib.sha256(serialise(tag, tensors)).hexdigest()


def raw_digest(data): return hashlib.sha256(data).hexdigest()


def from_bits(dtype, shape, bits):
    size = DTYPES[dtype][1]
    return T(dtype, shape, np.asarray(bits, dtype=np.uint64).astype(UINT[size]).astype(np.dtype(UINT[size]).newbyteorder("<")).tobytes())
