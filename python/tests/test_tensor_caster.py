"""The binding's Tensor caster (python/src/tensor_caster.h) keeps pybind11's class record instead
of looking it up per crossing: tensors in, tensors out, subclasses and wrong types still behave
as pybind11's generic caster made them, and the small op gives numpy's float32 left fold."""
import numpy as np
import pytest

import maroon as m


def left_fold_f32(x):
    acc = np.float32(0)
    for v in x:
        acc = np.float32(acc + v)
    return float(acc)


def test_small_op_bits_match_a_float32_left_fold():
    rng = np.random.default_rng(3)
    x, y = rng.random(16, np.float32), rng.random(16, np.float32)
    a, b = m.Tensor(x), m.Tensor(y)
    want = left_fold_f32((x + y) * x)
    for _ in range(3):  # the same graph built again: same bits every call
        got = ((a + b) * a).sum().item()
        assert np.float32(got).tobytes() == np.float32(want).tobytes()


def test_results_are_new_tensors_and_lists_of_them_cross():
    a = m.Tensor([1.0, 2.0, 3.0])
    r = a + a
    assert type(r) is m.Tensor and r is not a
    parts = a.split(1)
    assert all(type(p) is m.Tensor for p in parts)
    assert m.Tensor.cat(*parts).tolist() == [1.0, 2.0, 3.0]


def test_a_subclass_crosses_as_self_and_operand():
    class Sub(m.Tensor):
        pass

    s = Sub([1.0, 2.0])
    assert isinstance(s, m.Tensor)
    assert (s + m.Tensor([3.0, 4.0])).tolist() == [4.0, 6.0]
    assert (m.Tensor([3.0, 4.0]) * s).tolist() == [3.0, 8.0]
    assert s.sum().item() == 3.0


def test_other_types_are_refused_as_before():
    a = m.Tensor([1.0])
    with pytest.raises(TypeError):
        a + object()
    with pytest.raises(TypeError):
        m.Tensor.matmul(object(), a)
