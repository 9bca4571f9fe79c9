"""Tensor.sum and Tensor.item are CPython method descriptors (python/src/fast_methods.h): sum()
without arguments skips pybind11's dispatcher and every other call goes to pybind11's function, so
results, defaults, keywords, errors, docstrings and signatures are what they were."""
import inspect
import types

import numpy as np
import pytest

import maroon as m
from maroon import Tensor
from maroon import _maroon as ext


def test_they_are_method_descriptors():
    # The fast path itself: were they pybind11 functions again, these calls would pay its dispatch.
    assert isinstance(Tensor.__dict__["sum"], types.MethodDescriptorType)
    assert isinstance(Tensor.__dict__["item"], types.MethodDescriptorType)


def test_sum_without_arguments_is_sum_over_every_axis():
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64, np.int32, np.int8, np.bool_):
        x = Tensor(rng.random((3, 5)) * 10 > 3 if dtype == np.bool_ else (rng.random((3, 5)) * 10).astype(dtype))
        assert x.sum().numpy().tobytes() == x.sum(axis=None, keepdim=False, dtype=None).numpy().tobytes()
        assert x.sum().dtype == x.sum(None).dtype and x.sum().shape == ()


def test_sum_with_arguments_goes_through_pybind11():
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert x.sum(0).tolist() == [12.0, 15.0, 18.0, 21.0]
    assert x.sum(axis=1, keepdim=True).shape == (3, 1)
    assert x.sum((0, 1)).item() == 66.0
    assert x.sum(None, False, m.dtypes.float64).dtype == m.dtypes.float64
    assert x.sum(keepdim=True).shape == (1, 1)


def test_errors_are_the_same_classes_and_messages():
    x = Tensor([1.0, 2.0])
    with pytest.raises(ext.ShapeError, match=r"\[item\] must have one element"):
        x.item()
    with pytest.raises(IndexError, match=r"\[sum\] dim 5"):
        x.sum(axis=5)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        x.sum(foo=1)
    with pytest.raises(TypeError):
        x.item(1)
    with pytest.raises(TypeError):
        Tensor.sum(3)


def test_item_reads_each_dtype():
    assert Tensor([2.5]).item() == 2.5 and isinstance(Tensor([2.5]).item(), float)
    assert Tensor([-3], dtype=m.dtypes.int8).item() == -3
    assert Tensor([True]).item() is True
    assert Tensor(np.array([7], np.int64)).sum().item() == 7


def test_docs_and_signatures_are_kept():
    assert Tensor.sum.__doc__.startswith("The sum over")
    assert str(inspect.signature(Tensor([1.0]).sum)) == "(axis=None, keepdim=False, dtype=None)"
    assert list(inspect.signature(Tensor.sum).parameters)[0] == "self"
    assert list(inspect.signature(Tensor([1.0]).item).parameters) == []
