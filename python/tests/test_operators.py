"""Python's binary operators on Tensor are CPython method descriptors that skip pybind11's
dispatcher (python/src/elementwise.cpp): the same results as the named methods, NotImplemented
for operands they do not take, errors translated to Maroon's exception classes, subclasses
accepted, and the signature pybind11 wrote kept as __doc__ (the stubs read it)."""
import operator

import numpy as np
import pytest

import maroon as m
from maroon import _maroon as ext
from maroon import Tensor

OPS = [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
       ("pow", operator.pow), ("lt", operator.lt), ("gt", operator.gt), ("le", operator.le), ("ge", operator.ge),
       ("eq", operator.eq), ("ne", operator.ne)]


def bits(t):
    return t.numpy().tobytes()


@pytest.mark.parametrize("name,op", OPS)
def test_operators_give_the_named_methods_bits(name, op):
    rng = np.random.default_rng(1)
    a, b = Tensor(rng.random((3, 4), np.float32) + 0.5), Tensor(rng.random((3, 4), np.float32) + 0.5)
    method = getattr(a, "div" if name == "truediv" else name)
    assert bits(op(a, b)) == bits(method(b))
    assert bits(op(a, 2)) == bits(method(2))
    assert bits(op(a, [1.0, 2.0, 3.0, 4.0])) == bits(method(Tensor([1.0, 2.0, 3.0, 4.0])))


def test_reflected_operators_put_the_scalar_first():
    a = Tensor([1.0, 2.0, 4.0])
    assert (2 - a).tolist() == [1.0, 0.0, -2.0]
    assert (8 / a).tolist() == [8.0, 4.0, 2.0]
    assert bits(2 ** a) == bits(a.pow(2, reverse=True))
    assert bits(3 * a) == bits(a.mul(3, reverse=True))
    i = Tensor([1, 2, 3], dtype=m.dtypes.int8)
    assert (6 & i).tolist() == [0, 2, 2] and (1 << i).tolist() == [2, 4, 8]


def test_other_operand_types_are_refused_as_python_refuses_them():
    a = Tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError):
        object() * a
    assert a.__add__("x") is NotImplemented and a.__rsub__(object()) is NotImplemented


def test_errors_reach_python_as_maroons_classes():
    with pytest.raises(ext.ShapeError, match="broadcast"):
        Tensor([1.0, 2.0]) + Tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):  # ShapeError is a ValueError
        Tensor([[1.0, 2.0]]) * Tensor([1.0, 2.0, 3.0])
    with pytest.raises(ext.DTypeError):
        Tensor([1.0]) & Tensor([1.0])
    x = Tensor([1.0])
    x += 1  # the in-place operators are unchanged
    assert x.tolist() == [2.0]


def test_subclasses_and_unbound_calls():
    class T(Tensor):
        pass
    t = T([1.0, 2.0])
    assert type(t + 1) is Tensor and (t + t).tolist() == [2.0, 4.0] and (1 - t).tolist() == [0.0, -1.0]
    assert Tensor.__add__(Tensor([1.0]), 2).tolist() == [3.0]
    with pytest.raises(TypeError):
        Tensor.__add__(1, Tensor([1.0]))
    with pytest.raises(TypeError):
        Tensor([1.0]).__add__()
    for name in ("__add__", "__rmul__", "__lt__", "__rmatmul__"):
        assert getattr(Tensor, name).__doc__.startswith(name + "(self: maroon._maroon.Tensor, arg0: object) -> object")
