"""Rewrites a .safetensors file the way tinygrad's nn.state.safe_save does (json.dumps with
separators (',', ':'), ensure_ascii, space padding to 8 bytes, tensors in order) from the file's
own header and data, and prints "same" when the bytes are identical. numpy reads each tensor
to check its size. usage: safetensors_check.py FILE"""
import json
import struct
import sys

import numpy as np

raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
np_types = {"BOOL": np.bool_, "I8": np.int8, "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "I32": np.int32,
            "U32": np.uint32, "I64": np.int64, "U64": np.uint64, "F16": np.float16, "BF16": np.uint16,
            "F32": np.float32, "F64": np.float64}
headers, offset, blobs = {}, 0, []
if "__metadata__" in header:
    headers["__metadata__"] = header["__metadata__"]
for k, v in header.items():
    if k == "__metadata__":
        continue
    b, e = v["data_offsets"]
    arr = np.frombuffer(data[b:e], dtype=np_types[v["dtype"]]).reshape(v["shape"])
    nbytes = arr.nbytes
    headers[k] = {"dtype": v["dtype"], "shape": list(arr.shape), "data_offsets": [offset, offset + nbytes]}
    offset += nbytes
    blobs.append(arr.tobytes())
j = json.dumps(headers, separators=(",", ":"))
j += "\x20" * ((len(j) + 7) // 8 * 8 - len(j))
again = struct.pack("<Q", len(j)) + j.encode("utf-8") + b"".join(blobs)
print("same" if again == raw else "different")
