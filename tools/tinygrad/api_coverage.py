#!/usr/bin/env python3
"""Counts how much of tinygrad's public Tensor API Maroon has, and writes docs/api.md.

tinygrad's names come from its source (no import needed): every public `def` (and property)
of class Tensor in tinygrad/tensor.py and of the mixin classes it inherits from, followed
through the `class X(Base)` lines of tinygrad/mixin/*.py. Maroon's names come from
include/maroon/tensor.h (class Tensor's members and the free functions), include/maroon/nn.h
and include/maroon/optim.h are not counted (they are not Tensor methods).

Usage (from the Maroon repo root):
  /usr/bin/python3 tools/tinygrad/api_coverage.py /work/tinygrad > docs/api.md
  /usr/bin/python3 tools/tinygrad/api_coverage.py tests/data/tinygrad/tensor_api.txt > docs/api.md
  /usr/bin/python3 tools/tinygrad/api_coverage.py --dump /work/tinygrad > tests/data/tinygrad/tensor_api.txt
The second form reads tinygrad's names from the list the third form writes (committed, so ctest
can check docs/api.md without a tinygrad checkout).
"""
import os, re, subprocess, sys

from tinygrad_api import not_applicable, tensor_methods

dump = "--dump" in sys.argv
args = [a for a in sys.argv[1:] if a != "--dump"]
tg = args[0] if args else "/work/tinygrad"
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))


def git_commit(path):
  try:
    return subprocess.check_output(["git", "-C", path, "rev-parse", "HEAD"], text=True, stderr=subprocess.DEVNULL).strip()
  except (subprocess.CalledProcessError, FileNotFoundError):
    return "unknown"


if os.path.isfile(tg):  # the committed list: "# tinygrad commit SHA", then "name<TAB>file" lines
  lines = open(tg).read().splitlines()
  commit = lines[0].split()[-1]
  tg_methods = dict(l.split("\t") for l in lines[1:] if l and not l.startswith("#"))
else:
  commit = git_commit(tg)
  tg_methods = tensor_methods(tg)
if dump:
  print(f"# tinygrad commit {commit}")
  print("# tinygrad's Tensor methods (mixins included) and their files, written by tools/tinygrad/api_coverage.py --dump")
  for n in sorted(tg_methods): print(f"{n}\t{tg_methods[n]}")
  sys.exit(0)
public = sorted(n for n in tg_methods if not n.startswith("_"))
dunders = sorted(n for n in tg_methods if n.startswith("__") and n.endswith("__"))

# ---- Maroon: identifiers declared in include/maroon/tensor.h ----
header = open(os.path.join(root, "include", "maroon", "tensor.h")).read()
maroon_names = set(re.findall(r"(?<![.\w>])([a-z_][a-z0-9_]*)\s*\(", header)) | set(re.findall(r"\b(T)\(\)", header))
operators = set(re.findall(r"operator\s*([^\s(\w]+)\s*\(", header)) | set(re.findall(r"MAROON_OPERATOR\(([^)\s]+)\)", header))

# C++ spellings of names that are keywords or would clash.
aliases = {"float": "float_", "int": "int_", "bool": "bool_", "long": "long_", "short": "short_", "double": "double_",
           "const": "const_", "expand": "expand_to", "numpy": "to_vector", "data": "bytes"}
dunder_ops = {"__add__": "+", "__radd__": "+", "__sub__": "-", "__rsub__": "-", "__mul__": "*", "__rmul__": "*",
              "__truediv__": "/", "__rtruediv__": "/", "__mod__": "%", "__rmod__": "%", "__and__": "&", "__rand__": "&",
              "__or__": "|", "__ror__": "|", "__xor__": "^", "__rxor__": "^", "__lt__": "<", "__gt__": ">",
              "__le__": "<=", "__ge__": ">=", "__eq__": "==", "__ne__": "!=", "__neg__": "-", "__invert__": "~",
              "__lshift__": "<<", "__rshift__": ">>", "__getitem__": "[]"}
# Python operators C++ has no spelling for: the method that does the same.
no_cxx_op = {"__matmul__": "matmul", "__rmatmul__": "matmul", "__pow__": "pow", "__rpow__": "pow",
             "__floordiv__": "div(x, \"floor\")", "__rfloordiv__": "div(x, \"floor\")", "__rlshift__": "lshift",
             "__rrshift__": "rshift"}

# Which Maroon names the API test suite calls (a call like `.name(` or `::name(`).
tests_src = ""
tdir = os.path.join(root, "tests", "api")
for f in sorted(os.listdir(tdir)):
  if f.endswith((".cpp", ".h")): tests_src += open(os.path.join(tdir, f)).read()
def tested(cxx):
  if cxx.startswith("operator"): return True
  return re.search(r"[.:]" + re.escape(cxx) + r"(<[^>]*>)?\(", tests_src) is not None

def has(name):
  a = aliases.get(name, name)
  if a.startswith("operator"): return a[len("operator"):] in operators
  return a in maroon_names

rows, have, counted = [], 0, 0
for n in public:
  if n in not_applicable:
    rows.append((n, tg_methods[n], None))
    continue
  counted += 1
  ok = has(n)
  have += ok
  rows.append((n, tg_methods[n], aliases.get(n, n) if ok else ""))
ntested = sum(1 for n, f, m in rows if m and tested(m))
drow, dhave = [], 0
for n in dunders:
  if n in no_cxx_op:
    drow.append((n, "no C++ operator; method `" + no_cxx_op[n] + "`"))
    continue
  if n not in dunder_ops: continue
  op = dunder_ops[n]
  ok = op in operators
  dhave += ok
  drow.append((n, "`operator" + op + "`" if ok else "missing"))
ncounted = sum(1 for n in dunders if n in dunder_ops)

NOTES = """## Example

```cpp
#include "maroon/maroon.h"
using namespace maroon;

Tensor::manual_seed(0);                      // tinygrad's Threefry stream
nn::Linear l1(784, 128), l2(128, 10);
optim::Adam opt(nn::get_parameters({&l1, &l2}), 1e-3);
TrainingScope training;                      // tinygrad's Context(TRAINING=1)
Tensor loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y);
opt.zero_grad();
loss.backward();                             // fills .grad() of every float tensor in the graph
opt.step();
Tensor g2 = loss.gradient({l1.weight})[0];   // gradients are graphs: differentiate them again
```

## Where Maroon's Tensor API differs from tinygrad's

- **C++ spellings.** `axis=None|int|tuple` is `maroon::Axis` (`{}`, `1`, `{0, 2}`); `x[1, ::2, None, ...]` is
  `x[{Index(1), Index(slice(nullopt, nullopt, 2)), Index::none(), Index::ellipsis()}]`; padding is a list of
  `(before, after)` pairs; `reduction=` is `maroon::Reduction`; `float()/int()/bool()/long()/...` carry a
  trailing underscore; tinygrad's `Tensor.expand` is `expand_to` (`expand` is the same-rank primitive);
  methods that return tuples return `std::pair`; `cummax` returns the values and `cummax_indices` the indices.
- **No FMA contraction.** Every op rounds once, as written. tinygrad's CPU backend compiles `c*rand + low`
  (uniform, the uniform initialisers, nn layer init) with FMA contraction, so those differ from tinygrad by
  the product's rounding; rand, randint and randperm match it bit for bit (tests/data/tinygrad).
- **Division** is `a * reciprocal(b)`, tinygrad's Tensor-level recipe; tinygrad's CPU backend later rewrites
  it to a true division.
- **pow** with a constant exponent stays the POW primitive (correctly rounded); tinygrad's code generator
  rewrites it into multiplies (`x**3` becomes `x*x*x`), so gelu's cube, for one, can differ in the last bit.
- **randn** uses Maroon's sin/log, not tinygrad's SLEEF-derived polynomials: equal to about 1e-6.
- **stack/cat** of equal sizes select each slot with WHERE (there is no STACK primitive); the result keeps
  every bit, as tinygrad's STACK does. Unequal sizes pad and add, as tinygrad does.
- **DETACH and CONTIGUOUS_BACKWARD** are identity nodes tagged for the gradient pass, not primitives;
  `contiguous()` returns the tensor (every realized node owns its buffer).
- **Threefry** words are computed on the host (exact 32-bit integer arithmetic), then the float is built
  from primitives (shift, or, bitcast, -1) as tinygrad builds it.
- **Float-only primitives.** `sqrt`, `sin`, `log2`, `exp2`, `reciprocal` and `trunc` are Maroon's primitives
  and throw DTypeError on integers; tinygrad computes them in float32. The compositions on top (`log`,
  `exp`, `cos`, `tan`, `rsqrt`, `sigmoid`, ...) convert integers first, as tinygrad's result does.
- **bitcast** is the BITCAST primitive and needs equal item sizes (tinygrad rescales the last axis).
- **keccak/hash** reinterpret bytes as uint64 lanes on the host (tinygrad's size-changing bitcast); the
  rounds are Tensor ops as in tinygrad.
- **Not ported:** `rearrange`'s ellipsis. Tensor indices (one or several in one `[]`) are one GATHER
  (`docs/spec.md` §15), where tinygrad builds a one-hot sum: the same values, and the same bits but
  for a selected −0 or NaN payload, which GATHER copies.
"""

print("# Maroon's Tensor API against tinygrad's\n")
print("Generated by `tools/tinygrad/api_coverage.py` (do not edit by hand). Rerun from the repo root:\n")
print("```\n/usr/bin/python3 tools/tinygrad/api_coverage.py tests/data/tinygrad/tensor_api.txt > docs/api.md\n```\n")
print("(`tests/data/tinygrad/tensor_api.txt` is tinygrad's list of names, written from a tinygrad checkout by")
print("`api_coverage.py --dump /work/tinygrad`; ctest checks that this page is what the command prints.)\n")
print(f"tinygrad commit `{commit}`. tinygrad's names: the public methods and properties of `Tensor`")
print("and its mixins (parsed from `tinygrad/tensor.py` and `tinygrad/mixin/*.py`). Maroon's names: identifiers")
print("declared in `include/maroon/tensor.h` (methods of `maroon::Tensor` and free functions), with the")
print("C++ spellings in the alias column where tinygrad's name is a C++ keyword.\n")
print(f"**Coverage: {have} of {counted} public methods ({100*have/counted:.0f}%), not counting "
      f"{len(public) - counted} that are device, JIT or backend machinery; "
      f"{dhave} of {ncounted} Python operators that C++ can spell.**\n")
print("nn layers and optimizers are in `include/maroon/nn.h` (Linear, Conv2d, BatchNorm, LayerNorm, GroupNorm,")
print("Embedding, state dicts) and `include/maroon/optim.h` (SGD, LARS, Adam, AdamW, LAMB); not counted here.\n")
print(f"{ntested} of the {have} present methods are called by the API test suite (tests/api), most of them")
print("against PyTorch; the `tested` column is computed by searching those sources for a call.\n")
print(NOTES)
print("| tinygrad method | defined in | Maroon | tested |")
print("|---|---|---|---|")
for n, f, m in rows:
  cell = f"n/a ({not_applicable[n]})" if m is None else ("`" + m + "`" if m else "**missing**")
  t = "yes" if m and tested(m) else ""
  print(f"| `{n}` | {f} | {cell} | {t} |")
print("\n| Python operator | Maroon |")
print("|---|---|")
for n, m in drow:
  print(f"| `{n}` | {m} |")
