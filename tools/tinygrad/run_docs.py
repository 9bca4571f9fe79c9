"""tinygrad's own tutorials run on Maroon with only the import changed: the Python blocks of
docs/quickstart.md and docs/mnist.md from a tinygrad checkout (never copied here), each document's
blocks run in order in one namespace, as a reader pastes them; a .py file given to --docs
(examples/beautiful_mnist.py) runs whole, as __main__.

    .venv/bin/python tools/tinygrad/run_docs.py TINYGRAD_DIR [--steps N] [--data DIR]

What is changed, and nothing else: `tinygrad` becomes `maroon` in import lines (the one import a
user changes); `!pip` lines are dropped; quickstart's `from extra.datasets import fetch_mnist`
(tinygrad's repository helper, which downloads) reads the same arrays from Maroon's data
directory instead (the data path); with --steps N, loops over range(K) for K >= 100 run
min(K, N) times (the tutorials train for 1000 and 7000 steps). Prints one line per block and
exits 1 if any block failed. docs/tinygrad-compat.md keeps the latest result.
"""
import argparse
import contextlib
import io
import os
import re
import sys
import time
import traceback

IMPORT = re.compile(r"^(\s*)(from|import)\s+tinygrad\b")
LONG_LOOP = re.compile(r"\brange\((\d{3,})\)")


def blocks(path):
    """The ```python blocks of a markdown file, in order, as (first line number, code); a .py file
    (tinygrad's examples/) is one block, run as __main__."""
    if path.endswith(".py"):
        return [(1, open(path, encoding="utf-8").read())]
    out, cur, start = [], None, 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if cur is None and line.strip() == "```python":
            cur, start = [], n + 1
        elif cur is not None and line.strip() == "```":
            out.append((start, "".join(cur)))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def adapt(code, steps):
    lines = []
    for line in code.splitlines():
        if line.lstrip().startswith("!"):
            continue
        if line.strip() == "from extra.datasets import fetch_mnist":
            line = "from maroon_docs_data import fetch_mnist  # the data path: Maroon's data directory"
        line = IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)} maroon", line)
        if steps:
            line = LONG_LOOP.sub(lambda m: f"range(min({m.group(1)}, {steps}))", line)
        lines.append(line)
    return "\n".join(lines) + "\n"


def install_data_module(data):
    """tinygrad's extra.datasets.fetch_mnist (flattened float32 images, int8 labels) over
    maroon.nn.datasets.mnist, which reads the IDX files instead of downloading them."""
    import types

    import numpy as np

    import maroon.nn.datasets as ds

    def fetch_mnist(tensors=False):
        xtr, ytr, xte, yte = ds.mnist(path=data)
        if tensors:
            return xtr.float(), ytr.cast("int8"), xte.float(), yte.cast("int8")
        flat = lambda x: x.numpy().reshape(-1, 28 * 28).astype(np.float32)  # noqa: E731
        return flat(xtr), ytr.numpy().astype(np.int8), flat(xte), yte.numpy().astype(np.int8)

    mod = types.ModuleType("maroon_docs_data")
    mod.fetch_mnist = fetch_mnist
    sys.modules["maroon_docs_data"] = mod


def run_doc(path, steps):
    ns = {"__name__": "__main__"}
    failed = 0
    for line, code in blocks(path):
        src = adapt(code, steps)
        out = io.StringIO()
        t0 = time.time()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(src, f"{os.path.basename(path)}:{line}", "exec"), ns)
            status = "ok"
        except Exception as e:  # report and go on: a reader would see the error and continue
            failed += 1
            tb = traceback.extract_tb(e.__traceback__)[-1]
            status = f"FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} ({tb.filename}:{tb.lineno})"
        first = next((s.strip() for s in src.splitlines() if s.strip() and not s.strip().startswith("#")), "")
        printed = out.getvalue().strip().splitlines()
        print(f"{os.path.basename(path)}:{line}: {status} [{time.time() - t0:.1f} s] {first[:60]}"
              + (f"  -> {printed[-1][:80]}" if printed else ""))
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tinygrad_dir")
    ap.add_argument("--steps", type=int, default=0, help="cap loops of 100 or more iterations (0: as written)")
    ap.add_argument("--data", default=None, help="the MNIST IDX directory (default: maroon.nn.datasets')")
    ap.add_argument("--docs", nargs="*", default=["docs/quickstart.md", "docs/mnist.md"])
    args = ap.parse_args()
    install_data_module(args.data)
    failed = 0
    for d in args.docs:
        path = os.path.join(args.tinygrad_dir, d)
        if not os.path.isfile(path):
            print(f"run_docs: no {d} in {args.tinygrad_dir}", file=sys.stderr)
            return 2
        failed += run_doc(path, args.steps)
    print(f"run_docs: {failed} block(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
