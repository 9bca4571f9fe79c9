"""tinygrad's own tutorials run on Maroon with only the import changed: the Python blocks of
docs/quickstart.md and docs/mnist.md from a tinygrad checkout (never copied here), each document's
blocks run in order in one namespace, as a reader pastes them; a .py file given to --docs
(examples/beautiful_mnist.py, examples/transformer.py) runs whole, as __main__.

    .venv/bin/python tools/tinygrad/run_docs.py TINYGRAD_DIR [--steps N] [--data DIR] [--seed N] [--docs FILE...]

What is changed, and nothing else: `tinygrad` becomes `maroon` in import lines (the one import a
user changes); `!pip` lines are dropped; quickstart's `from extra.datasets import fetch_mnist`
(tinygrad's repository helper, which downloads) reads the same arrays from Maroon's data
directory instead (the data path); with --steps N, loops over range(K) for K >= 100 run
min(K, N) times (the tutorials train for 1000 and 7000 steps). Modules a program imports from the
checkout itself (examples/transformer.py's `extra.training`, `extra.models.transformer`) load
from the checkout with the same import rewrite and nothing else (--steps does not apply to them).
--seed N seeds Python's `random` and numpy's global generator before each document (tinygrad's
examples draw their data and batches from them unseeded, so without it no two runs agree, on
tinygrad or on Maroon). Prints one line per block and exits 1 if any block failed.
docs/tinygrad-compat.md keeps the latest result.
"""
import argparse
import contextlib
import importlib.abc
import importlib.machinery
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
        line = rewrite_imports(line).rstrip("\n")
        if steps:
            line = LONG_LOOP.sub(lambda m: f"range(min({m.group(1)}, {steps}))", line)
        lines.append(line)
    return "\n".join(lines) + "\n"


def rewrite_imports(code):
    """`tinygrad` becomes `maroon` in import lines; nothing else changes."""
    return "\n".join(IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)} maroon", line) for line in code.splitlines()) + "\n"


class _RewritingLoader(importlib.machinery.SourceFileLoader):
    """Loads a checkout module from its source with the import rewrite. Never from or into
    __pycache__: a .pyc there holds tinygrad's imports (or would hold Maroon's for tinygrad)."""

    def get_code(self, fullname):
        return compile(rewrite_imports(self.get_source(fullname)), self.path, "exec", dont_inherit=True)


class CheckoutModules(importlib.abc.MetaPathFinder):
    """Finds the modules of a tinygrad checkout other than tinygrad itself (`extra`, ...) that a
    program imports, and loads them through _RewritingLoader."""

    def __init__(self, root):
        self.root = os.path.abspath(root)

    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == "tinygrad":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path if path else [self.root])
        if spec is None:
            return None
        inside = [p for p in (spec.submodule_search_locations or []) if p.startswith(self.root + os.sep)]
        if spec.origin is None and inside:  # a directory without __init__.py (extra/): no code
            return spec
        if not (spec.origin or "").startswith(self.root + os.sep) or not spec.origin.endswith(".py"):
            return None
        spec.loader = _RewritingLoader(name, spec.origin)
        return spec


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


class _Tee(io.StringIO):
    """Keeps what is printed and passes it on."""

    def __init__(self, to):
        super().__init__()
        self.to = to

    def write(self, s):
        self.to.write(s)
        return super().write(s)


def run_doc(path, steps, seed=None):
    ns = {"__name__": "__main__", "__file__": path}
    if seed is not None:
        import random

        import numpy as np
        random.seed(seed)
        np.random.seed(seed)
    failed = 0
    for line, code in blocks(path):
        src = adapt(code, steps)
        out = _Tee(sys.stdout) if path.endswith(".py") else io.StringIO()  # a program's prints as they come
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
    ap.add_argument("--seed", type=int, default=None, help="seed Python's random and numpy before each document")
    args = ap.parse_args()
    install_data_module(args.data)
    sys.meta_path.insert(0, CheckoutModules(args.tinygrad_dir))
    failed = 0
    for d in args.docs:
        path = os.path.join(args.tinygrad_dir, d)
        if not os.path.isfile(path):
            print(f"run_docs: no {d} in {args.tinygrad_dir}", file=sys.stderr)
            return 2
        failed += run_doc(path, args.steps, args.seed)
    print(f"run_docs: {failed} block(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
