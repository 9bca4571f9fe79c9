"""The Python API documents itself: every public function, method and property of the compiled
API has a docstring (from maroon/_docs), every callable a signature inspect can read, and every
docstring's example runs as a doctest printing what the docstring says."""
import doctest
import inspect

import numpy as np
import pytest

import maroon
from maroon import Tensor, _docs, dtypes, nn
from maroon import _maroon as ext

NAMES = [q for table in _docs.TABLES for q in table]


def resolve(qualname):
    obj = ext
    for part in qualname.split("."):
        obj = inspect.getattr_static(obj, part) if isinstance(obj, type) else getattr(obj, part)
    return obj.__func__ if isinstance(obj, staticmethod) else obj


def public_api():
    """Every public name a user reaches: the module's functions and classes, Tensor's methods and
    properties, the nn layers' and optimizers' classes and methods, and maroon.dist's."""
    names = [n for n in dir(ext) if not n.startswith("_") and n not in ("nn", "Error", "ShapeError", "DTypeError", "DTypeNameError",
                                                                         "FormatError", "IndexError", "MemoryError")]
    names += ["Tensor." + n for n in vars(Tensor) if not n.startswith("_")]
    names += ["dist." + n for n in dir(ext.dist) if not n.startswith("_") and not isinstance(getattr(ext.dist, n), type)]
    for owner, prefix in ((ext.nn, "nn."), (ext.nn.optim, "nn.optim."), (ext.dist, "dist.")):
        for n in dir(owner):
            cls = getattr(owner, n)
            if n.startswith("_") or not isinstance(cls, type):
                continue
            names.append(prefix + n)
            names += [f"{prefix}{n}.{m}" for m, v in vars(cls).items()
                      if (not m.startswith("_") or m == "__call__") and not isinstance(v, property)]
    names += ["nn.state." + n for n in dir(ext.nn.state) if not n.startswith("_")]
    return names


def test_every_public_name_has_a_docstring():
    missing = [n for n in public_api() if not (resolve(n).__doc__ or "").strip()]
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def test_the_python_parts_have_docstrings_too():
    import maroon.dist
    import maroon.nn.optim
    import maroon.nn.state
    import maroon.verify
    missing = []
    for mod in (maroon, maroon.nn, maroon.nn.optim, maroon.nn.state, maroon.verify, maroon.dist):
        for n in dir(mod):
            o = getattr(mod, n)
            if not n.startswith("_") and not inspect.ismodule(o) and not (getattr(o, "__doc__", "") or "").strip():
                missing.append(f"{mod.__name__}.{n}")
    missing += [f"maroon.verify.Run.{n}" for n, o in vars(maroon.verify.Run).items()
                if not n.startswith("_") and not (getattr(o, "__doc__", "") or "").strip()]
    missing += [f"dtypes.{n}" for n, o in vars(dtypes).items()
                if isinstance(o, staticmethod) and not (o.__func__.__doc__ or "").strip()]
    assert not missing, missing


def test_every_docstring_has_its_example_outputs():
    unfilled = [n for n in NAMES if "<OUT>" in (resolve(n).__doc__ or "")]
    assert not unfilled, f"run tools/python/doc_outputs.py: {unfilled}"


def test_signatures_are_inspectable():
    bad = []
    for n in public_api():
        obj = resolve(n)
        # A base class with no constructor of its own (nn.Module, nn.optim.Optimizer) has none.
        if isinstance(obj, type) and n + ".__init__" not in _docs.SIGNATURES:
            continue
        if callable(obj) and not isinstance(obj, property):
            try:
                inspect.signature(obj)
            except (ValueError, TypeError) as e:
                bad.append(f"{n}: {e}")
    assert not bad, bad
    sig = inspect.signature(Tensor.conv2d)
    assert list(sig.parameters)[:3] == ["self", "weight", "bias"] and sig.parameters["groups"].default == 1


def test_help_reads_like_tinygrad():
    doc = Tensor.conv2d.__doc__
    assert "convolution" in doc and "Args:" in doc and ">>>" in doc


@pytest.mark.parametrize("name", [n for n in NAMES if ">>>" in next(t for t in _docs.TABLES if n in t)[n]])
def test_doc_example(name):
    globs = {"maroon": maroon, "Tensor": Tensor, "dtypes": dtypes, "nn": nn, "np": np}
    test = doctest.DocTestParser().get_doctest(resolve(name).__doc__, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) print something else"


def test_stubs_are_current_and_parse():
    import ast
    import os
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    r = subprocess.run([sys.executable, os.path.join(root, "tools", "python", "gen_stubs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(root, "python", "maroon", "_maroon.pyi"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    tensor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    assert {"conv2d", "matmul", "shape", "__dlpack__"} <= {f.name for f in tensor.body if isinstance(f, ast.FunctionDef)}
