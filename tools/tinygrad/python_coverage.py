#!/usr/bin/env python3
"""Counts how many of tinygrad's public Tensor methods (and Python operators) `maroon.Tensor`
has, by looking them up on the installed package (hasattr), and prints the share and the misses.

Usage (from the Maroon repo root, tinygrad checkout as the argument):
  .venv/bin/python tools/tinygrad/python_coverage.py /work/tinygrad
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tinygrad_api import not_applicable, tensor_methods  # noqa: E402

import maroon  # noqa: E402


def main(tg):
    methods = tensor_methods(tg)
    public = sorted(n for n in methods if not n.startswith("_"))
    counted = [n for n in public if n not in not_applicable]
    have = [n for n in counted if hasattr(maroon.Tensor, n)]
    dunders = sorted(n for n in methods if n.startswith("__") and n.endswith("__"))
    dhave = [n for n in dunders if n in vars(maroon.Tensor)]
    na_have = [n for n in public if n in not_applicable and hasattr(maroon.Tensor, n)]
    print(f"public methods: {len(have)} of {len(counted)} ({100 * len(have) / len(counted):.1f}%), not counting "
          f"{len(public) - len(counted)} device/JIT/backend ones (of those, maroon.Tensor still has {len(na_have)}: "
          f"{', '.join(na_have)})")
    print(f"operators and protocols (dunders tinygrad defines): {len(dhave)} of {len(dunders)} "
          f"({100 * len(dhave) / len(dunders):.1f}%)")
    missing = [n for n in counted if n not in have] + [n for n in dunders if n not in dhave]
    print("missing:", ", ".join(missing) if missing else "none")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/tinygrad")
