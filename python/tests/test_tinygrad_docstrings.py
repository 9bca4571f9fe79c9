"""What tinygrad's docstring examples and examples/transformer.py need beyond the Tensor methods
(tools/tinygrad/run_docstrings.py and run_docs.py run them from a checkout; docs/tinygrad-compat.md
keeps the counts): tinygrad's dtype spelling, shape keywords, Tensor.is_param and the optimizers'
buffers, the nn layers tinygrad defines in Python, tinygrad's module paths, and the two runners'
extraction and import rewrite on a small stand-in checkout. Expected values come from numpy,
PyTorch, Python's math module or the definitions, never from a tinygrad run."""
import importlib
import math
import os
import sys

import numpy as np
import pytest
import torch

import maroon
from maroon import Tensor, dtypes, nn

TOOLS = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "tinygrad")


def bits(t):
    return t.numpy().tobytes()


# ---- dtypes print as tinygrad's ----

def test_dtype_repr_is_the_last_alias_dtypes_gives_it():
    """tinygrad prints a dtype by the last name its `dtypes` namespace declares for it (the C names
    after the sized ones: int8 then char, so `dtypes.char`); every name it prints evaluates back."""
    last = {}
    for name, value in vars(dtypes).items():
        if isinstance(value, maroon.DType) and not name.startswith("default"):
            last[value] = name
    for d in dtypes.all:
        assert repr(d) == str(d) == f"dtypes.{last[d]}"
        assert getattr(dtypes, repr(d)[len("dtypes."):]) == d
    assert repr(Tensor([1, 2]).dtype) == "dtypes.int" and repr(Tensor([1.5]).dtype) == "dtypes.float"


# ---- shapes as tinygrad's keywords ----

@pytest.mark.parametrize("method, key, arg", [
    ("reshape", "shape", (3, 2)), ("view", "shape", (6,)), ("expand", "shape", (4, 2, 3)),
    ("permute", "order", (1, 0)), ("flip", "axis", (0,)), ("repeat", "repeats", (2, 1)), ("shrink_to", "shape", (1, 2)),
])
def test_shape_keyword_is_the_positional_sequence(method, key, arg):
    x = Tensor.arange(6).reshape(2, 3)
    assert bits(getattr(x, method)(**{key: arg})) == bits(getattr(x, method)(arg)) == bits(getattr(x, method)(*arg))
    with pytest.raises(TypeError):
        getattr(x, method)(arg, **{key: arg})
    with pytest.raises(TypeError):
        getattr(x, method)(nonsense=arg)


# ---- Tensor.is_param and the optimizers ----

def test_is_param_defaults_true_and_is_shared_by_every_handle():
    a = Tensor.ones(3)
    assert a.is_param is True
    assert a.is_param_(False) is a and a.is_param is False
    same = a.assign(Tensor.zeros(3))  # another handle of the same tensor
    assert same.is_param is False and Tensor.ones(3).is_param is True
    a.is_param = True
    assert a.is_param is True


def test_optimizer_trains_params_and_keeps_the_others_as_buffers():
    Tensor.manual_seed(3)
    w0 = np.random.default_rng(0).standard_normal(4).astype(np.float32)
    with maroon.Context(TRAINING=1):
        def step(params):
            opt = nn.optim.Adam(params, lr=0.1)
            (params[0] * params[0]).sum().backward()
            opt.step()
            return opt
        w, frozen = Tensor(w0), Tensor(w0).is_param_(False)
        opt = step([w, frozen, w])  # tinygrad dedups the list and leaves non-params alone
        alone = Tensor(w0)
        step([alone])
        assert [hash(p) for p in opt.params] == [hash(w)] and [hash(b) for b in opt.buffers] == [hash(frozen)]
        assert bits(w) == bits(alone) and bits(frozen) == w0.tobytes()
        assert {hash(t) for t in opt.schedule_step()} >= {hash(w), hash(frozen)}
    assert isinstance(opt, nn.optim.Adam) and isinstance(opt, nn.optim.Optimizer)


# ---- the nn layers tinygrad writes in Python ----

def test_conv1d_draws_as_tinygrad_and_convolves_as_torch():
    Tensor.manual_seed(7)
    conv = nn.Conv1d(2, 3, 3, padding=1)
    Tensor.manual_seed(7)
    scale = 1 / math.sqrt(2 * 3)  # weight then bias, uniform(+-1/sqrt(in * k))
    w, b = Tensor.uniform(3, 2, 3, low=-scale, high=scale), Tensor.uniform(3, low=-scale, high=scale)
    assert bits(conv.weight) == bits(w) and bits(conv.bias) == bits(b)
    x = np.random.default_rng(1).standard_normal((2, 2, 5)).astype(np.float32)
    want = torch.nn.functional.conv1d(torch.tensor(x), torch.tensor(w.numpy()), torch.tensor(b.numpy()), padding=1)
    np.testing.assert_allclose(conv(Tensor(x)).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ndim", [1, 2])
def test_conv_transpose_draws_the_conv_first_and_matches_torch(ndim):
    Tensor.manual_seed(5)
    layer = nn.ConvTranspose1d(2, 4, 3, stride=2) if ndim == 1 else nn.ConvTranspose2d(2, 4, 3, stride=2)
    k = (3,) * ndim
    Tensor.manual_seed(5)
    scale = 1 / math.sqrt(2 * 3 ** ndim)
    Tensor.uniform(4, 2, *k, low=-scale, high=scale)  # the convolution's weight, drawn and replaced
    b = Tensor.uniform(4, low=-scale, high=scale)
    w = Tensor.uniform(2, 4, *k, low=-scale, high=scale)
    assert bits(layer.weight) == bits(w) and bits(layer.bias) == bits(b)
    x = np.random.default_rng(2).standard_normal((1, 2) + (4,) * ndim).astype(np.float32)
    f = torch.nn.functional.conv_transpose1d if ndim == 1 else torch.nn.functional.conv_transpose2d
    want = f(torch.tensor(x), torch.tensor(w.numpy()), torch.tensor(b.numpy()), stride=2)
    np.testing.assert_allclose(layer(Tensor(x)).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_instance_norm_and_layer_norm_2d_match_torch():
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32) * 2 + 1
    got = nn.InstanceNorm(3)(Tensor(x)).numpy()
    np.testing.assert_allclose(got, torch.nn.functional.instance_norm(torch.tensor(x), eps=1e-5).numpy(), atol=1e-5)
    got = nn.LayerNorm2d(3)(Tensor(x)).numpy()
    want = torch.nn.functional.layer_norm(torch.tensor(x).permute(0, 2, 3, 1), (3,), eps=1e-5).permute(0, 3, 1, 2)
    np.testing.assert_allclose(got, want.numpy(), atol=1e-5)
    assert set(nn.state.get_state_dict(nn.InstanceNorm(3))) == {"weight", "bias"}
    assert nn.InstanceNorm(3, affine=False)(Tensor(x)).shape == x.shape


# ---- tinygrad's module paths ----

def test_tinygrad_module_paths():
    from maroon.engine.jit import TinyJit
    from maroon.helpers import Context
    from maroon.tensor import Tensor as T
    assert TinyJit is maroon.TinyJit and Context is maroon.Context and T is Tensor
    with Context(TRAINING=1):
        assert Tensor.training
    assert not Tensor.training


# ---- why two docstring examples print other digits than tinygrad: Maroon rounds each op once ----

def f32(x):
    return np.float32(x)


def test_randn_is_box_muller_with_correctly_rounded_ops():
    """tinygrad's randn, cos(2*pi*u0) * sqrt(-2*log(1-u1)) with cos(x) = sin(pi/2 - x) and log(x)
    = log2(x) * ln2, each op rounded once to float32 (Python's math gives the exact values)."""
    Tensor.manual_seed(42)
    u = Tensor.rand(2, 6).numpy()
    Tensor.manual_seed(42)
    got = Tensor.randn(6).numpy()
    for a, b, g in zip(u[0], u[1], got):
        c = f32(math.sin(f32(f32(math.pi / 2) - f32(a * f32(2 * math.pi)))))
        lg = f32(f32(math.log2(f32(f32(1) - b))) * f32(math.log(2)))
        assert f32(c * f32(math.sqrt(f32(lg * f32(-2))))) == g


def test_log_softmax_is_the_composition_with_correctly_rounded_exp2_and_log2():
    x = [[-1.0, 2.0, -3.0], [1.0, -2.0, 3.0]]
    got = Tensor(x).log_softmax().numpy()
    for row, g in zip(x, got):
        m = [f32(v - max(row)) for v in row]
        s = f32(0)
        for v in m:  # the sum is a left fold
            s = f32(s + f32(2.0 ** float(f32(v * f32(1 / math.log(2))))))
        ls = f32(f32(math.log2(s)) * f32(math.log(2)))
        assert [f32(v - ls) for v in m] == list(g)


# ---- the runners, on a stand-in checkout ----

def tools_module(name):
    sys.path.insert(0, TOOLS)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(TOOLS)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


FENCE = "```"


def test_run_docstrings_extracts_blocks_in_mkdocs_order(tmp_path):
    """Pages in mkdocs' order (a directory's files before its subdirectories, index.md first),
    directives in page order, a method found through the class's bases, indented fences dedented;
    blocks of a docstring no page names come last."""
    root = str(tmp_path)
    block = lambda code, session="s": f'{FENCE}python exec="true" source="above" session="{session}"\n{code}\n{FENCE}\n'  # noqa: E731
    write(root, "tinygrad/mixin/op.py", f'class OpMixin:\n  def add(self):\n    """\n    {block("print(1)")}    """\n'
          f'  def unlisted(self):\n    """\n    {block("print(9)")}    """\n')
    write(root, "tinygrad/tensor.py", 'from tinygrad.mixin.op import OpMixin\nclass Tensor(OpMixin):\n  """\n'
          f'  {block("import numpy as np")}  """\n  def mul(self):\n    """\n    - item:\n\n      ' + block("print(2)").replace("\n", "\n      ") + '\n    """\n')
    write(root, "docs/tensor/ops.md", "::: tinygrad.Tensor.mul\n::: tinygrad.Tensor.add\n")
    write(root, "docs/tensor/index.md", "::: tinygrad.Tensor\n    options:\n        members: false\n")
    write(root, "docs/a.md", "no directives\n")
    rd = tools_module("run_docstrings")
    blocks = rd.extract(root)
    assert [(b["page"], b["name"], b["code"]) for b in blocks] == [
        ("tensor/index.md", "Tensor", "import numpy as np\n"), ("tensor/ops.md", "Tensor.mul", "print(2)\n"),
        ("tensor/ops.md", "Tensor.add", "print(1)\n"), ("(no page)", "Tensor.unlisted", "print(9)\n")]
    results = rd.run_blocks(blocks, maroon=True)
    assert [r["out"] for r in results] == ["", "2\n", "1\n", "9\n"] and not any(r["exc"] for r in results)


def test_run_docs_rewrites_imports_of_checkout_modules(tmp_path):
    """A module of the checkout imported by a program loads with `tinygrad` -> `maroon` in its
    import lines and nothing else, and leaves no bytecode behind."""
    root = str(tmp_path)
    write(root, "extra/models/m.py", "from tinygrad import Tensor\nimport tinygrad.nn as tnn\nNAME = 'tinygrad'\n")
    rd = tools_module("run_docs")
    finder = rd.CheckoutModules(root)
    sys.meta_path.insert(0, finder)
    try:
        mod = importlib.import_module("extra.models.m")
        assert mod.Tensor is Tensor and mod.tnn is nn and mod.NAME == "tinygrad"
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "extra" or n.startswith("extra.")]:
            del sys.modules[name]
    assert not any("__pycache__" in dirs for _, dirs, _ in os.walk(root))
