#!/usr/bin/env python3
"""Reference vectors for Maroon's RNG tests, produced by running tinygrad itself.

Rerun (from the Maroon repo root, with a tinygrad checkout at /work/tinygrad):
  PYTHONPATH=/work/tinygrad DEV=CPU /usr/bin/python3 tools/tinygrad/gen_rand.py \
      > tests/data/tinygrad/rand_vectors.txt

Each line: `<case> <dtype> <shape> <element bits in hex...>`. Cases are consecutive calls after
Tensor.manual_seed(seed), so they also check the counter scheme. The tinygrad commit is
written in the header.
"""
import subprocess, sys, os
import numpy as np
from tinygrad import Tensor, dtypes

def commit():
  try:
    return subprocess.check_output(["git", "-C", os.environ.get("PYTHONPATH", "."), "rev-parse", "HEAD"], text=True).strip()
  except Exception:
    return "unknown"

emitted = set()
def emit(name, t):
  a = t.numpy()
  if name in emitted: return  # the replay repeats the cases that do not differ
  emitted.add(name)
  bits_of = {"float32": np.uint32, "float16": np.uint16, "float64": np.uint64, "int32": np.uint32,
             "int64": np.uint64, "uint8": np.uint8, "int8": np.uint8, "int16": np.uint16, "uint64": np.uint64,
             "uint32": np.uint32}
  dt = (a.dtype.name, bits_of[a.dtype.name])
  bits = np.ascontiguousarray(a).view(dt[1]).reshape(-1)
  shape = "x".join(str(s) for s in a.shape) or "scalar"
  print(name, dt[0], shape, " ".join(format(int(b), "x") for b in bits))

print(f"# tinygrad {commit()} Tensor RNG reference vectors (tools/tinygrad/gen_rand.py)")

def run(seed, fused):
  # fused=False replays the same counter positions with plain rand, which is what uniform and
  # the initialisers scale: tinygrad's CPU backend fuses their `c*rand + low` into one FMA.
  Tensor.manual_seed(seed)
  p = f"s{seed}."
  emit(p + "rand5", Tensor.rand(5))
  emit(p + "rand3x4", Tensor.rand(3, 4))
  emit(p + "rand7_f16", Tensor.rand(7, dtype=dtypes.float16))
  emit(p + "rand3_f64", Tensor.rand(3, dtype=dtypes.float64))
  emit(p + "randint2x5", Tensor.randint(2, 5, low=-3, high=17))
  if fused: emit(p + "uniform6", Tensor.uniform(6, low=-2.5, high=4.0))
  else: emit(p + "uniform6.rand", Tensor.rand(6))
  emit(p + "randn2x3", Tensor.randn(2, 3))
  if fused:
    emit(p + "kaiming4x3", Tensor.kaiming_uniform(4, 3))
    emit(p + "glorot3x5", Tensor.glorot_uniform(3, 5))
  else:
    emit(p + "kaiming4x3.rand", Tensor.rand(4, 3))
    emit(p + "glorot3x5.rand", Tensor.rand(3, 5))
  emit(p + "rand1000", Tensor.rand(1000))
  emit(p + "rand9", Tensor.rand(9))
  emit(p + "randperm8", Tensor.randperm(8))
  emit(p + "multinomial", Tensor([1.0, 2.0, 3.0, 4.0]).multinomial(6, replacement=True))

emit("threefry", Tensor([1, 2, 3, 2**40 + 5, 2**64 - 1], dtype=dtypes.uint64).threefry(
  Tensor([0x1234567890abcdef], dtype=dtypes.uint64)))

for seed in (0, 1337, 42):
  run(seed, True)
  run(seed, False)
