"""Integer-tensor indexing, gather and nn.Embedding through GATHER (docs/spec.md §15): numpy's
fancy indexing bit for bit (a −0 or a NaN payload included), tinygrad's index rules, and gradients
with the one-hot formulation's bits."""
import numpy as np
import pytest

from maroon import Tensor, dtypes, nn


def table(rows=50, cols=7, seed=0):
    x = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    x[3, 2], x[4, 1] = -0.0, np.frombuffer(np.uint32(0x7fc00123).tobytes(), np.float32)[0]
    return x


@pytest.mark.parametrize("idt", [np.int32, np.int64, np.uint8, np.int16])
def test_rows_are_numpys_fancy_indexing_bit_for_bit(idt):
    x = table()
    s = np.array([3, 4, 49, 0, 3, 17], dtype=idt)
    assert Tensor(x)[Tensor(s)].numpy().tobytes() == x[s].tobytes()
    assert Tensor(x)[:, Tensor(s % 7)].numpy().tobytes() == x[:, s % 7].tobytes()
    if np.issubdtype(idt, np.signedinteger):  # negatives count from the end, as numpy's
        n = np.array([-1, -50, 2], dtype=idt)
        assert Tensor(x)[Tensor(n)].numpy().tobytes() == x[n].tobytes()


def test_gather_and_embedding_copy_and_zero_outside_the_range():
    x = table()
    i = np.array([[2, 0], [5, -1], [1, 1]], dtype=np.int32)
    got = Tensor(x[:3]).gather(1, Tensor(i)).numpy()
    want = np.where((i >= 0) & (i < 7), np.take_along_axis(x[:3], np.clip(i, 0, 6), 1), 0)
    assert got.tobytes() == want.astype(np.float32).tobytes()
    emb = nn.Embedding(50, 7)
    emb.weight = Tensor(x)
    tok = np.array([[3, 4], [60, -1]], dtype=np.int32)
    out = emb(Tensor(tok)).numpy()
    assert out[0].tobytes() == x[[3, 4]].tobytes()
    assert not out[1].any() and out.dtype == np.float32 and out.shape == (2, 2, 7)


def test_gradient_is_the_one_hot_formulations():
    x = Tensor(table(seed=1), requires_grad=True)
    s = Tensor(np.array([3, 3, 7, 3, 0, 7], dtype=np.int32))
    w = Tensor(np.random.default_rng(2).standard_normal((6, 7)).astype(np.float32) * 1000)
    (x[s] * w).sum().backward()
    got = x.grad.numpy()
    x.grad = None
    mask = Tensor.arange(50).reshape(1, 50, 1) == s.reshape(6, 1, 1)
    (mask.where(x.reshape(1, 50, 7), 0).sum(1, dtype=dtypes.float32) * w).sum().backward()
    assert got.tobytes() == x.grad.numpy().tobytes()
