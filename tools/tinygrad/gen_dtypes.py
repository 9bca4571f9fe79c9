#!/usr/bin/env python3
"""The dtype each Tensor method returns for each input dtype, read from tinygrad itself.

Rerun (from the Maroon repo root, with a tinygrad checkout at /work/tinygrad):
  PYTHONPATH=/work/tinygrad DEV=CPU /usr/bin/python3 tools/tinygrad/gen_dtypes.py \
      > tests/data/tinygrad/dtype_rules.txt

Each line: `<op> <input dtype> <output dtype>` or `<op> <input dtype> error`. Only dtypes are
computed (nothing is realized). The ops are the lambdas below, mirrored in
tests/api/dtype_rules_test.cpp.
"""
import os, subprocess
from tinygrad import Tensor, dtypes

def commit():
  try: return subprocess.check_output(["git", "-C", os.environ.get("PYTHONPATH", "."), "rev-parse", "HEAD"], text=True).strip()
  except Exception: return "unknown"

OPS = {
  "sum": lambda x: x.sum(), "prod": lambda x: x.prod(), "max": lambda x: x.max(), "min": lambda x: x.min(),
  "mean": lambda x: x.mean(), "var": lambda x: x.var(), "any": lambda x: x.any(), "argmax": lambda x: x.argmax(),
  "cumsum": lambda x: x.cumsum(), "exp": lambda x: x.exp(), "log": lambda x: x.log(), "sqrt": lambda x: x.sqrt(),
  "sin": lambda x: x.sin(), "cos": lambda x: x.cos(), "sigmoid": lambda x: x.sigmoid(), "relu": lambda x: x.relu(),
  "neg": lambda x: x.neg(), "abs": lambda x: x.abs(), "div_int": lambda x: x / 2, "mul_float": lambda x: x * 2.5,
  "add_int": lambda x: x + 3, "softmax": lambda x: x.softmax(), "square": lambda x: x.square(),
  "matmul": lambda x: x.reshape(2, 2) @ x.reshape(2, 2), "eq": lambda x: x == x, "where": lambda x: (x > 0).where(x, 0),
  "maximum_int": lambda x: x.maximum(1), "minimum": lambda x: x.minimum(x), "sign": lambda x: x.sign(),
  "trunc_cast": lambda x: x.cast(dtypes.float32).trunc(), "one_hot": lambda x: x.one_hot(3),
}
DTS = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "bfloat16", "float32", "float64"]

NAMES = {getattr(dtypes, n): n for n in DTS + ["uint16", "uint64"]}
NAMES[dtypes.weakint], NAMES[dtypes.weakfloat] = "weakint", "weakfloat"  # realize as int32 / float32

print(f"# tinygrad {commit()} output dtypes (tools/tinygrad/gen_dtypes.py)")
for name, f in OPS.items():
  for dt in DTS:
    x = Tensor([1, 0, 1, 1], dtype=getattr(dtypes, dt))
    try: out = NAMES[f(x).dtype]
    except Exception: out = "error"
    print(name, dt, out)
