#!/usr/bin/env python3
"""Reference values for Maroon's nn initialisation and optimizer tests, produced by running tinygrad.

Rerun (from the Maroon repo root, with a tinygrad checkout at /work/tinygrad):
  PYTHONPATH=/work/tinygrad DEV=CPU /usr/bin/python3 tools/tinygrad/gen_nn_optim.py \
      > tests/data/tinygrad/nn_optim_vectors.txt

Each line: `<case> <values as float.hex...>`. The optimizer problem is L = sum(c * (p - t)^2) over a
(3, 4) parameter, 4 steps, with p, t and c given by the formulas below (repeated in
tests/api/tinygrad_nn_test.cpp).
"""
import os, subprocess
from tinygrad import Tensor, nn, dtypes
from tinygrad.helpers import Context
from tinygrad.nn import optim

def commit():
  try: return subprocess.check_output(["git", "-C", os.environ.get("PYTHONPATH", "."), "rev-parse", "HEAD"], text=True).strip()
  except Exception: return "unknown"

def emit(name, t):
  print(name, " ".join(float(v).hex() for v in t.flatten().tolist()))

print(f"# tinygrad {commit()} nn init and optimizer reference values (tools/tinygrad/gen_nn_optim.py)")

Tensor.manual_seed(5)
lin = nn.Linear(3, 4)
conv = nn.Conv2d(2, 3, 3)
emb = nn.Embedding(5, 3)
emit("linear.weight", lin.weight); emit("linear.bias", lin.bias)
emit("conv.weight", conv.weight); emit("conv.bias", conv.bias)
emit("embedding.weight", emb.weight)

P0 = [(i - 5.5) / 4 for i in range(12)]
T = [((i * 7) % 12 - 6) / 5 for i in range(12)]
C = [0.5 + (i % 3) / 2 for i in range(12)]
cases = {
  "sgd": lambda p: optim.SGD([p], lr=0.05),
  "sgd_momentum_wd": lambda p: optim.SGD([p], lr=0.05, momentum=0.9, weight_decay=0.01),
  "sgd_nesterov": lambda p: optim.SGD([p], lr=0.05, momentum=0.8, nesterov=True),
  "lars": lambda p: optim.LARS([p], lr=0.05),
  "adam": lambda p: optim.Adam([p], lr=0.01),
  "adamw": lambda p: optim.AdamW([p], lr=0.01, weight_decay=0.1),
  "lamb": lambda p: optim.LAMB([p], lr=0.01, weight_decay=0.01),
}
for name, make in cases.items():
  p = Tensor(P0, dtype=dtypes.float32).reshape(3, 4)
  t = Tensor(T, dtype=dtypes.float32).reshape(3, 4)
  c = Tensor(C, dtype=dtypes.float32).reshape(3, 4)
  opt = make(p)
  with Context(TRAINING=1):
    for _ in range(4):
      opt.zero_grad()
      (c * (p - t).square()).sum().backward()
      opt.step()
  emit("optim." + name, p)
