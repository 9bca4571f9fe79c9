#!/usr/bin/env python3
"""Runs every case of python/tests/cases.py with tinygrad itself and stores its results, which
python/tests/test_vs_tinygrad.py compares Maroon's Python package with.

Rerun (from the Maroon repo root, with a tinygrad checkout at /work/tinygrad):
  PYTHONPATH=/work/tinygrad DEV=CPU /usr/bin/python3 tools/tinygrad/gen_python_ref.py \
      tests/data/tinygrad/python_ref.npz

Stored per case: `<name>/in<k>` (the inputs), `<name>/out` and `<name>/grad<k>` (gradients of
sum(out * w) for the float inputs, w from compare.loss_weights). Cases tinygrad rejects are listed
in `skipped` with the reason. The tinygrad commit is stored as `commit` (TINYGRAD_COMMIT overrides).
"""
import os
import subprocess
import sys

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "python", "tests"))
from cases import CASES  # noqa: E402
from compare import loss_weights  # noqa: E402
from tinygrad import Tensor, dtypes  # noqa: E402


def run(case, arrays):
    xs = [Tensor(a) for a in arrays]
    out = case.fn(Tensor, *xs)
    grads = []
    if case.grad and dtypes.is_float(out.dtype):
        floats = [x for x in xs if dtypes.is_float(x.dtype)]
        if floats:
            loss = (out * Tensor(loss_weights(case, out.shape)).cast(out.dtype)).sum()
            grads = [g.numpy() for g in loss.gradient(*floats)]
    return out.numpy(), grads


def main(path):
    store, skipped = {}, []
    for case in CASES:
        if not case.tinygrad:
            continue
        arrays = case.arrays()
        try:
            out, grads = run(case, arrays)
        except Exception as e:  # recorded, and the test checks that only these are missing
            skipped.append(f"{case.name}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
            print("skipped", skipped[-1], file=sys.stderr)
            continue
        for k, a in enumerate(arrays):
            store[f"{case.name}/in{k}"] = a
        store[f"{case.name}/out"] = out
        for k, g in enumerate(grads):
            store[f"{case.name}/grad{k}"] = g
        print("ok", case.name, file=sys.stderr)
    commit = os.environ.get("TINYGRAD_COMMIT")  # for a tinygrad unpacked with `git archive`
    try:
        commit = commit or subprocess.check_output(["git", "-C", os.environ.get("PYTHONPATH", "."), "rev-parse", "HEAD"],
                                         text=True).strip()
    except Exception:
        commit = "unknown"
    np.savez_compressed(path, skipped=np.array(skipped, dtype=str), commit=np.array(commit), **store)


if __name__ == "__main__":
    main(sys.argv[1])
