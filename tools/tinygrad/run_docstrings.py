"""tinygrad's docstring examples on Maroon with only the import changed, compared with tinygrad.

tinygrad's documentation (mkdocs with markdown-exec) runs the ```python exec="true" ...``` blocks
in the docstrings its pages name (`::: tinygrad.Tensor.sum`, `::: tinygrad.nn.BatchNorm`, ...):
the Tensor class and its mixins (tinygrad/tensor.py, tinygrad/mixin/*.py) and tinygrad.nn. This
script extracts those blocks from a checkout (never copied here) with `ast`, in mkdocs' build
order (pages as mkdocs walks docs/, directives in page order), runs blocks that share a
`session=` in one namespace, captures what they print, and compares it with what the same blocks
print on tinygrad itself.

    .venv/bin/python tools/tinygrad/run_docstrings.py TINYGRAD_DIR [-k PATTERN] [-v] [--cache FILE]
    /usr/bin/python3 tools/tinygrad/run_docstrings.py TINYGRAD_DIR --peer   # tinygrad only: the cache

Without --peer the blocks run on Maroon, with `tinygrad` changed to `maroon` in import lines and
nothing else. tinygrad's outputs come from a cache file (default /tmp/maroon_tg_docstrings_
<digest of the blocks>.json); when it is missing the script first runs itself with --peer
(DEV=CPU, the checkout on PYTHONPATH, Debian's python3) to write it. Each documented member counts
as `same` (every block prints what tinygrad prints), `different` or `exception` (a block raised
on Maroon and not on tinygrad); a name that is not the same prints the reason docs/tinygrad-compat.md
gives (EXPLAINED), and the exit status is 1 if any has none. -k runs the members whose name contains PATTERN (plus the
blocks that only import, which every session needs); outputs that depend on earlier blocks
(random numbers drawn without a seed) can then differ. docs/tinygrad-compat.md keeps the count.
"""
import argparse
import ast
import contextlib
import difflib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_docs import rewrite_imports  # noqa: E402 (the one change, shared with the tutorials runner)

OPEN = re.compile(r'^```python\s+(.*\bexec="true".*)$')
OPTION = re.compile(r'(\w+)="([^"]*)"')
DIRECTIVE = re.compile(r"^:::\s+(tinygrad(?:\.\w+)+)\s*$")


# --- extraction (static: tinygrad is never imported here) ---

def mkdocs_pages(docs):
    """The markdown pages in the order mkdocs builds them (it replicates os.walk: a directory's
    files before its subdirectories, index.md first, then by name), so markdown-exec sessions see
    the blocks in the order a docs build runs them."""
    paths = []
    for root, _, files in os.walk(docs):
        paths += [os.path.relpath(os.path.join(root, f), docs) for f in files if f.endswith(".md")]

    def key(p):
        parts = p.split(os.sep)
        return tuple(chr(2) + s if i < len(parts) - 1 else chr(s != "index.md") + s for i, s in enumerate(parts))
    return sorted(paths, key=key)


def directives(page_text):
    """The dotted name of each `::: tinygrad.X` line of a page, in order."""
    return [m.group(1) for m in map(DIRECTIVE.match, (s.strip() for s in page_text.splitlines())) if m]


class Source:
    """The classes and functions of the given tinygrad modules, by module, with Python's own MRO
    for the classes (computed on stand-in classes built from the base names)."""

    def __init__(self, root, modules):
        self.defs, self.classes = {}, {}
        for mod in modules:
            path = os.path.join(root, *mod.split(".")) + ".py"
            if not os.path.isfile(path):
                path = os.path.join(root, *mod.split("."), "__init__.py")
            if not os.path.isfile(path):
                continue
            tree = ast.parse(open(path, encoding="utf-8").read())
            for node in tree.body:
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                    self.defs[f"{mod}.{node.name}"] = node
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, node)
        self.stand_ins = {}

    def mro(self, name):
        """Class names in method resolution order (bases outside the scanned modules are left out)."""
        def make(n):
            if n not in self.stand_ins:
                node = self.classes[n]
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", None) for b in node.bases]
                self.stand_ins[n] = type(n, tuple(make(b) for b in bases if b in self.classes), {})
            return self.stand_ins[n]
        return [c.__name__ for c in make(name).__mro__[:-1]]

    def member(self, cls, attr):
        """The def of cls.attr as Python would find it (the first class of the MRO that has it)."""
        for c in self.mro(cls):
            for node in self.classes[c].body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
                    return node
        return None

    def resolve(self, dotted):
        """The def a `::: tinygrad.a.b` directive documents: a module-level def, or a member of one
        of the scanned classes (tinygrad.Tensor.sum is found in Tensor's MRO)."""
        parts = dotted.split(".")
        if dotted in self.defs:
            return self.defs[dotted]
        if len(parts) == 1:
            return self.classes.get(parts[0])
        return self.member(parts[-2], parts[-1]) if parts[-2] in self.classes else None


def docstring_blocks(doc):
    """The exec="true" python blocks of a docstring, as (session or None, code)."""
    out, cur, opts = [], None, None
    for line in (doc or "").splitlines():
        s = line.strip()
        m = OPEN.match(s)
        if cur is None and m:
            cur, opts = [], dict(OPTION.findall(m.group(1)))
        elif cur is not None and s == "```":
            out.append((opts.get("session"), textwrap.dedent("\n".join(cur)) + "\n"))  # fences in lists are indented
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


MODULES = ["tensor", "mixin.creation", "mixin.dtype", "mixin.elementwise", "mixin.movement", "mixin.op", "mixin.rand",
           "mixin.reduce", "nn", "nn.state", "nn.optim"]


def extract(tinygrad_dir, pages_filter=None):
    """Every docstring block the docs build runs, in order: a list of dicts with the page, the
    documented name, the block's index within that docstring, its session and its code; then the
    blocks of documented modules' docstrings that no page names (mkdocs never runs them; kept so
    none is missed), page "(no page)"."""
    src = Source(os.path.join(tinygrad_dir, "tinygrad"), MODULES)
    docs = os.path.join(tinygrad_dir, "docs")
    blocks, seen = [], set()
    for page in mkdocs_pages(docs):
        if pages_filter and not re.search(pages_filter, page):
            continue
        for dotted in directives(open(os.path.join(docs, page), encoding="utf-8").read()):
            node = src.resolve(dotted[len("tinygrad."):])
            if node is None:
                continue
            seen.add(id(node))
            for i, (session, code) in enumerate(docstring_blocks(ast.get_docstring(node))):
                blocks.append(dict(page=page, name=dotted[len("tinygrad."):], index=i, session=session, code=code))
    tensor_mro = src.mro("Tensor")
    for qual, node in src.defs.items():
        owner = "Tensor" if isinstance(node, ast.ClassDef) and node.name in tensor_mro else qual
        nodes = [(qual, node)] + ([(f"{owner}.{n.name}", n) for n in node.body if isinstance(n, ast.FunctionDef)]
                                  if isinstance(node, ast.ClassDef) else [])
        for name, n in nodes:
            if id(n) in seen:
                continue
            for i, (session, code) in enumerate(docstring_blocks(ast.get_docstring(n))):
                blocks.append(dict(page="(no page)", name=name, index=i, session=session, code=code))
    return blocks


def digest(blocks):
    return hashlib.sha256(json.dumps(blocks, sort_keys=True).encode()).hexdigest()[:16]


# --- running ---

def is_setup(code):
    """A block that only imports and sets print options (the class docstrings' session setup)."""
    return all(s.startswith(("import ", "from ", "np.set_printoptions")) or not s or s.startswith("#")
               for s in (line.strip() for line in code.splitlines()))


def run_blocks(blocks, maroon):
    """Run each block as markdown-exec does (exec in its session's namespace, a fresh one without
    a session) and return its printed output and the exception it raised, if any."""
    sessions, results = {}, []
    for b in blocks:
        code = b["code"]
        if maroon:
            code = rewrite_imports(code)
        ns = sessions.setdefault(b["session"], {"__name__": "__main__"}) if b["session"] else {"__name__": "__main__"}
        out, exc = io.StringIO(), None
        t0 = time.time()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"<{b['name']}#{b['index']}>", "exec"), ns)
        except Exception as e:  # a docs build shows the error and goes on
            tb = traceback.extract_tb(e.__traceback__)[-1]
            exc = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} ({os.path.basename(tb.filename)}:{tb.lineno})"
        results.append(dict(out=out.getvalue(), exc=exc, seconds=round(time.time() - t0, 3)))
        if len(results) % 50 == 0:
            print(f"run_docstrings: {len(results)} of {len(blocks)} blocks", file=sys.stderr)
    return results


def run_peer(args, blocks, cache):
    """tinygrad's outputs for the blocks, written to the cache file (this script under Debian's
    python3, DEV=CPU, the checkout first on PYTHONPATH)."""
    env = dict(os.environ, DEV="CPU", PYTHONPATH=os.path.abspath(args.tinygrad_dir))
    cmd = [args.peer_python, os.path.abspath(__file__), args.tinygrad_dir, "--peer", "--cache", cache]
    print(f"run_docstrings: running the {len(blocks)} blocks on tinygrad (DEV=CPU) into {cache}", file=sys.stderr)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)


# The differences docs/tinygrad-compat.md explains (Maroon's bits by docs/spec.md, or what cannot
# exist on one device), by documented name; any other difference makes the exit status 1.
ROUNDED_ONCE = "transcendentals correctly rounded, each op rounded once (tinygrad: approximations, FMA)"
RANDN = "Box-Muller inputs: " + ROUNDED_ONCE
EXPLAINED = {
    **dict.fromkeys(["Tensor.sin", "Tensor.cos", "Tensor.tan"], "sin correctly rounded: sin(float32(pi)) is -8.742278e-08, not -0"),
    **dict.fromkeys(["Tensor.var", "Tensor.var_mean"], RANDN + "; squares summed without FMA"),
    **dict.fromkeys(["Tensor.layernorm", "Tensor.batchnorm"], RANDN + "; " + "sums are left folds"),
    **dict.fromkeys(["Tensor.binary_crossentropy_logits", "Tensor.sparse_categorical_crossentropy", "Tensor.cross_entropy",
                     "Tensor.nll_loss"], "exp2/log2: " + ROUNDED_ONCE),
    **dict.fromkeys(["nn.Conv1d", "nn.Conv2d", "nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.Linear"],
                    "draws fixed in call order (tinygrad's depend on realize order) and uniform without FMA"),
    **dict.fromkeys(["nn.GroupNorm", "nn.InstanceNorm", "nn.LayerNorm", "nn.LayerNorm2d"],
                    "sums are left folds in index order (tinygrad: its kernel's order), each op rounded once"),
    "Tensor.shard": "one device: no shard, no UOp graph to print",
}


def summarize(blocks, mine, peer, verbose):
    """Per documented name: same / different / exception; prints one line per name that is not the
    same (with the diff under -v) and the counts by page group. Returns the counts."""
    by_name = {}
    for b, m, p in zip(blocks, mine, peer):
        if is_setup(b["code"]) and not m["exc"] and not p["exc"]:
            continue
        by_name.setdefault((b["page"], b["name"]), []).append((b, m, p))
    counts = {}
    for (page, name), rows in by_name.items():
        group = "Tensor" if name.startswith("Tensor") else "nn"
        if any(m["exc"] and not p["exc"] for _, m, p in rows):
            status = "exception"
        elif all(m["out"] == p["out"] and bool(m["exc"]) == bool(p["exc"]) for _, m, p in rows):
            status = "same"
        else:
            status = "different"
        counts.setdefault(group, {"same": 0, "different": 0, "exception": 0, "clock": 0})[status] += 1
        clock = any(p.get("clock_out", p["out"]) != p["out"] for _, _, p in rows)
        counts[group]["clock"] += clock and status == "same"
        if status != "same":
            first = next(m["exc"] for _, m, p in rows if m["exc"]) if status == "exception" else ""
            why = f"explained: {EXPLAINED[name]}" if name in EXPLAINED else "NOT EXPLAINED"
            counts[group]["unexplained"] = counts[group].get("unexplained", 0) + (name not in EXPLAINED)
            print(f"{status:9} {name} ({page}) {first}" + (" [tinygrad: clock-seeded]" if clock else "") + f" -- {why}")
            if verbose:
                for b, m, p in rows:
                    if m["out"] != p["out"] or m["exc"]:
                        print("    " + "\n    ".join(b["code"].rstrip().splitlines()))
                        diff = difflib.unified_diff(p["out"].splitlines(), m["out"].splitlines(), "tinygrad", "maroon", lineterm="", n=1)
                        print("      " + "\n      ".join(diff))
    for group, c in counts.items():
        total = c["same"] + c["different"] + c["exception"]
        print(f"run_docstrings: {group}: {total} documented names with examples: {c['same']} same, "
              f"{c['different']} different, {c['exception']} exception ({c['clock']} of the same draw random "
              f"numbers before any manual_seed: the same as tinygrad seeded 0, Maroon's start; a docs build "
              f"seeds tinygrad from the clock)")
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tinygrad_dir")
    ap.add_argument("--peer", action="store_true", help="run on tinygrad itself and write the cache")
    ap.add_argument("-k", dest="pattern", default=None, help="only names containing PATTERN")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each differing block and the diff")
    ap.add_argument("--cache", default=None, help="tinygrad's outputs (default: /tmp/maroon_tg_docstrings_<digest>.json)")
    ap.add_argument("--pages", default=None, help="only docs pages matching this regex (default: all that name tinygrad defs)")
    ap.add_argument("--peer-python", default="/usr/bin/python3", help="the python that runs tinygrad")
    args = ap.parse_args()

    if args.peer:  # tinygrad from the checkout, on its CPU device, as run_peer runs it
        sys.path.insert(0, os.path.abspath(args.tinygrad_dir))
        os.environ.setdefault("DEV", "CPU")
    blocks = extract(args.tinygrad_dir, args.pages)
    cache = args.cache or os.path.join("/tmp", f"maroon_tg_docstrings_{digest(blocks)}.json")
    if args.peer:
        clock = run_blocks(blocks, maroon=False)
        # Again from a fresh start, seeded 0 as Maroon starts: blocks that draw random numbers
        # before any manual_seed print what this seed gives, not what the clock gave.
        from tinygrad import Tensor
        Tensor.manual_seed(0)
        results = run_blocks(blocks, maroon=False)
        for r, c in zip(results, clock):
            r["clock_out"] = c["out"]
        json.dump(dict(digest=digest(blocks), blocks=blocks, results=results), open(cache, "w"), indent=1)
        failed = [b["name"] for b, r in zip(blocks, results) if r["exc"]]
        print(f"run_docstrings --peer: {len(blocks)} blocks, {len(failed)} raised on tinygrad: {failed}")
        return 0
    if not os.path.isfile(cache) or json.load(open(cache)).get("digest") != digest(blocks):
        run_peer(args, blocks, cache)
    peer = json.load(open(cache))["results"]
    keep = [i for i, b in enumerate(blocks) if not args.pattern or args.pattern in b["name"] or is_setup(b["code"])]
    blocks, peer = [blocks[i] for i in keep], [peer[i] for i in keep]
    t0 = time.time()
    mine = run_blocks(blocks, maroon=True)
    counts = summarize(blocks, mine, peer, args.verbose)
    print(f"run_docstrings: {len(blocks)} blocks on Maroon in {time.time() - t0:.1f} s")
    return 1 if any(c.get("unexplained") for c in counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
