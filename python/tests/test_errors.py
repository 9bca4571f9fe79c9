"""Bad input raises the Python exception a Python user expects (ValueError for shapes and
arguments, TypeError for dtypes and argument types, IndexError for indices), with a message that
names the op and the shapes; and no input crashes the interpreter."""
import os
import subprocess
import sys

import numpy as np
import pytest

from maroon import Tensor, dtypes, nn
from maroon.nn import state

x = Tensor.zeros(2, 3)
ERRORS = [
    ("reshape", lambda: Tensor([1, 2, 3]).reshape(2, 2), ValueError, r"\[reshape\] cannot reshape \(3,\) to \(2,2\)"),
    ("matmul", lambda: Tensor([[1.0, 2.0]]) @ Tensor([[1.0, 2.0]]), ValueError, r"\[dot\] .*\(1,2\) and \(1,2\)"),
    ("conv2d", lambda: Tensor.zeros(1, 3, 5, 5).conv2d(Tensor.zeros(2, 4, 3, 3)), ValueError, r"\[conv2d\] .*\(1,3,5,5\)"),
    ("linear_layer", lambda: nn.Linear(3, 2)(Tensor.zeros(4, 5)), ValueError, r"\(4,5\)"),
    ("broadcast", lambda: x + Tensor.zeros(4), ValueError, r"\[add\] shapes \(2,3\) and \(4,\)"),
    ("cat", lambda: x.cat(Tensor.zeros(3, 2)), ValueError, r"\[cat\] shapes \(2,3\) and \(3,2\)"),
    ("expand", lambda: x.expand(4, 3), ValueError, r"\[expand\]"),
    ("permute", lambda: x.permute(0, 0), ValueError, r"\[permute\]"),
    ("negative_shape", lambda: Tensor.zeros(-1), ValueError, r"\[full\] negative dimension"),
    ("pad_odd", lambda: x.pad((1,)), ValueError, r"\[pad\]"),
    ("item", lambda: x.item(), ValueError, r"\[item\] .*\(2,3\)"),
    ("backward_nonscalar", lambda: Tensor([1.0, 2.0]).backward(), ValueError, r"\[gradient\]"),
    ("arange_step0", lambda: Tensor.arange(0, 10, 0), ValueError, r"\[arange\]"),
    ("ragged_list", lambda: Tensor([[1], [2, 3]]), ValueError, r"inhomogeneous"),
    ("huge_int", lambda: Tensor(2 ** 70), ValueError, r"does not fit in 64 bits"),
    ("max_pool_1d", lambda: Tensor.zeros(3).max_pool2d(), ValueError, r"\[max_pool2d\] input \(3,\)"),
    ("topk", lambda: x.topk(5), ValueError, r"\[topk\]"),
    ("div_mode", lambda: x.div(1, rounding_mode="ceil"), ValueError, r"\[div\]"),
    ("reduction", lambda: x.mse(x, reduction="avg"), ValueError, r"\[reduction\]"),
    ("safe_load_garbage", lambda: state.safe_load_bytes(b"garbage!"), ValueError, r"\[safe_load\]"),
    ("bitcast", lambda: x.bitcast(dtypes.int16), TypeError, r"\[bitcast\] .*float32.*int16"),
    ("where_cond", lambda: x.where(1.0, 2.0), TypeError, r"\[where\] the condition must be bool"),
    ("sqrt_int", lambda: Tensor([1, 2]).sqrt(), TypeError, r"\[sqrt\] .*int32"),
    ("shift_float", lambda: Tensor([1.0]) << 1, TypeError, r"\[shl\]"),
    ("one_hot_float", lambda: x.one_hot(3), TypeError, r"\[one_hot\]"),
    ("dtype_name", lambda: x.cast("floaty"), TypeError, r"unknown dtype 'floaty'"),
    ("setitem_dtype", lambda: x.__setitem__(0, Tensor([1, 2, 3])), TypeError, r"\[setitem\] dtype mismatch"),
    ("operand", lambda: x + "a", TypeError, r"unsupported operand"),
    ("method_operand", lambda: x.add("a"), TypeError, r"\[add\] expected a bool, int or float"),
    ("shape_arg", lambda: x.reshape("a"), TypeError, r"\[reshape\] expected an int"),
    ("object", lambda: Tensor(object()), TypeError, r"\[Tensor\]"),
    ("len_0d", lambda: len(Tensor(1.0)), TypeError, r"0-d"),
    ("bool", lambda: bool(Tensor([1])), TypeError, r"__bool__"),
    ("delitem", lambda: x.__delitem__(0), TypeError, r"deleting"),
    ("kwarg", lambda: Tensor.zeros(2, colour="red"), TypeError, r"unexpected keyword argument 'colour'"),
    ("getitem_range", lambda: x[5], IndexError, r"\[getitem\] index 5 is out of bounds for size 2"),
    ("getitem_too_many", lambda: x[0, 0, 0], IndexError, r"\[getitem\] too many indices"),
    ("getitem_float_tensor", lambda: x[Tensor([0.5])], IndexError, r"\[getitem\] index dtype float32"),
    ("getitem_type", lambda: x["a"], IndexError, r"\[getitem\] unsupported index type str"),
    ("sum_axis", lambda: x.sum(axis=5), IndexError, r"\[sum\] dim 5 is out of range"),
    ("transpose_axis", lambda: x.transpose(0, 5), IndexError, r"\[transpose\]"),
    # 0-d tensors and degenerate sizes, which once reached past the end of a shape
    ("sort_0d", lambda: Tensor(1.0).sort(), IndexError, r"\[sort\] .*0-d"),
    ("topk_0d", lambda: Tensor(1.0).topk(1), IndexError, r"\[topk\] .*0-d"),
    ("split_0d", lambda: Tensor(1.0).split(1), IndexError, r"\[split\] .*0-d"),
    ("chunk_0d", lambda: Tensor(1.0).chunk(2), IndexError, r"\[chunk\] .*0-d"),
    ("cat_0d", lambda: Tensor(1.0).cat(Tensor(2.0)), IndexError, r"\[cat\] .*0-d"),
    ("transpose_0d", lambda: Tensor(1.0).transpose(0, 0), IndexError, r"\[transpose\] .*0-d"),
    ("size_0d", lambda: Tensor(1.0).size(0), IndexError, r"\[size\] .*0-d"),
    ("gather_0d", lambda: Tensor(1.0).gather(0, Tensor(0)), IndexError, r"\[gather\] .*0-d"),
    ("sce_0d", lambda: Tensor(1.0).sparse_categorical_crossentropy(Tensor(0)), ValueError, r"0-d"),
    ("tril_1d", lambda: Tensor([1.0, 2.0]).tril(), ValueError, r"\[tril\] needs at least 2 dimensions, got \(2,\)"),
    ("svd_one_row", lambda: Tensor([[1.0, 2.0, 3.0]]).svd()[1], ValueError, r"\[svd\] .*\(1,3\)"),
    ("newton_schulz_no_params", lambda: Tensor.ones(2, 2).newton_schulz(1, ()), ValueError, r"\[newton_schulz\]"),
    ("shrink_to_rank", lambda: x.shrink_to(1), ValueError, r"\[shrink_to\] shape \(1,\) for a tensor of shape \(2,3\)"),
    ("pool_kernel_0", lambda: Tensor.ones(1, 1, 4, 4).avg_pool2d((0, 1)), ValueError, r"\[pool\] kernel, stride and dilation must be positive, got kernel \(0,1\)"),
    ("conv_groups_0", lambda: Tensor.ones(1, 1, 4, 4).conv2d(Tensor.ones(1, 1, 1, 1), groups=0), ValueError, r"\[conv2d\] groups"),
]


def test_reductions_of_a_0d_tensor_still_work():
    t = Tensor(3.0)
    assert t.std(axis=-1, correction=0).item() == 0.0 and t.sum(axis=0).item() == 3.0
    assert t.argmax(0).item() == 0 and t.layernorm().item() == 0.0


@pytest.mark.parametrize("fn,exc,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_raises_the_python_exception(fn, exc, match):
    with pytest.raises(exc, match=match):
        r = fn()
        r.numpy()


def test_maroon_exception_classes_are_the_builtin_ones():
    import maroon._maroon as m
    assert issubclass(m.ShapeError, ValueError) and issubclass(m.FormatError, ValueError)
    assert issubclass(m.DTypeError, TypeError) and issubclass(m.IndexError, IndexError)


FUZZ = r"""
import itertools, random, numpy as np
from maroon import Tensor, dtypes
random.seed(0)
pool = [None, -1, 0, 1, 2, 3, -3, 1.5, float("nan"), float("inf"), True, "x", "sum", (), (1,), (1, -1), [0, 1], (2, 2),
        [[0, 1]], np.int64(2), np.float32(0.5), dtypes.int8, dtypes.float16, Tensor([1.0, -2.0]), Tensor([[1, 2]]),
        Tensor(True), Tensor.zeros(0), Tensor.ones(2, 1, 3), slice(None), Ellipsis, object()]
bases = [Tensor([[1.5, -2.0, 0.0]]), Tensor([3, -4], dtype=dtypes.int8), Tensor(True), Tensor.zeros(0, 2),
         Tensor.ones(1, 2, 3, 3), Tensor([[0, 1], [1, 0]], dtype=dtypes.uint8)]
names = sorted(n for n in dir(Tensor) if not n.startswith("_") or n in
               ("__getitem__", "__setitem__", "__add__", "__matmul__", "__pow__", "__mod__", "__lshift__"))
skip = {"manual_seed", "training", "realize", "hash", "keccak"}
calls = 0
for name in names:
    if name in skip: continue
    for base in bases:
        for nargs in range(4):
            for _ in range(6 if nargs else 1):
                args = [random.choice(pool) for _ in range(nargs)]
                try:
                    attr = getattr(base, name)
                    r = attr(*args) if callable(attr) else attr
                    for t in (r if isinstance(r, (tuple, list)) else [r]):
                        if isinstance(t, Tensor) and t.numel() < 10**6: t.numpy()
                except Exception:
                    pass
                calls += 1
print("calls", calls)
"""


def test_no_input_crashes_the_interpreter():
    """Every Tensor method with a few thousand odd argument lists, in a child process: it must
    exit normally (an abort or a segfault would show as a signal)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", FUZZ], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout.split()[-1]) > 3000


def test_settings_are_read_and_set_by_name_with_cpp_errors():
    import maroon
    names = [s["name"] for s in maroon.settings()]
    assert "MAROON_THREADS" in names and "MAROON_MAX_FILE_BYTES" in names
    before = maroon.get_setting("MAROON_THREADS")
    maroon.set_setting("MAROON_THREADS", "2")
    assert maroon.num_threads() == 2 and maroon.get_setting("MAROON_THREADS") == "2"
    maroon.set_setting("MAROON_THREADS", before)
    with pytest.raises(ValueError, match=r"\[settings\] unknown setting 'MAROON_NOPE'"):
        maroon.set_setting("MAROON_NOPE", "1")
    with pytest.raises(ValueError, match=r"\[settings\] MAROON_THREADS='0'"):
        maroon.set_setting("MAROON_THREADS", "0")
    with pytest.raises(ValueError, match=r"\[set_num_threads\]"):
        maroon.set_num_threads(0)
