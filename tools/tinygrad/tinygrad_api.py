"""tinygrad's public Tensor API, read from its source (no import needed): every public `def` (and
property) of class Tensor in tinygrad/tensor.py and of the mixin classes it inherits from,
followed through the `class X(Base)` lines of tinygrad/mixin/*.py. Shared by api_coverage.py
(the C++ API) and python_coverage.py (the Python package)."""
import ast
import os


def tensor_methods(tg):
  """{name: defining file} for every method of tinygrad's Tensor, mixins included."""
  classes = {}
  files = [os.path.join(tg, "tinygrad", "tensor.py")] + sorted(
    os.path.join(tg, "tinygrad", "mixin", f) for f in os.listdir(os.path.join(tg, "tinygrad", "mixin")) if f.endswith(".py"))
  for path in files:
    tree = ast.parse(open(path).read())
    for node in tree.body:
      if isinstance(node, ast.ClassDef):
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        names = {}
        for item in node.body:
          if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[item.name] = os.path.relpath(path, tg)
        classes.setdefault(node.name, (bases, names))

  def collect(cls, seen):
    if cls in seen or cls not in classes: return {}
    seen.add(cls)
    bases, names = classes[cls]
    out = {}
    for b in bases: out.update(collect(b, seen))
    out.update(names)
    return out
  return collect("Tensor", set())


# tinygrad methods about devices, its JIT/function machinery or a GPU backend: nothing to map to
# in a single-device reference engine. Listed, not counted.
not_applicable = {
  "device": "devices", "to": "devices", "to_": "devices", "shard": "multi-device", "shard_": "multi-device",
  "shard_like": "multi-device", "from_blob": "raw device memory", "from_url": "network I/O",
  "decode_hevc_frame": "video decoder", "image_conv2d": "IMAGE backend", "image_dot": "IMAGE backend",
  "call": "function/JIT machinery", "callify": "function/JIT machinery", "custom_kernel": "function/JIT machinery",
  "linear_with_vars": "function/JIT machinery", "schedule_linear": "function/JIT machinery",
  "as_param": "function/JIT machinery", "is_param_": "optimizer marking (Maroon's optimizers take a list)",
  "replace": "UOp replacement", "invalids": "Invalid sentinel values", "alu": "raw UOp access (Maroon: the builders of maroon/primitives.h, namespace maroon::prim)",
  "ufix": "Python scalar wrapping (Maroon: weak C++ scalars)"}
