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


def one_hot_multi(x, dims, idx):
    """tinygrad's formulation of several index tensors (what Maroon ran before): an AND of one-hot
    masks over the indices' broadcast shape, WHERE over x, summed over the indexed axes, the
    result's indexed axes in front unless they are consecutive (numpy's rule)."""
    big = np.broadcast_shapes(*[i.shape for i in idx])
    nb, first = len(big), dims[0]
    mask = None
    for d, i in zip(dims, idx):
        i = i.lt(0).where(i + x.shape[d], i)
        i = i.reshape(*([1] * (nb - i.ndim)), *i.shape).expand(*big)
        i = i.reshape(*([1] * first), *big, *([1] * (x.ndim - first)))
        ar_shape = [1] * (first + nb) + [x.shape[k] if k == d else 1 for k in range(first, x.ndim)]
        m = i == Tensor.arange(x.shape[d]).reshape(*ar_shape)
        mask = m if mask is None else mask & m
    xr = x.reshape(*x.shape[:first], *([1] * nb), *x.shape[first:])
    out = mask.where(xr, 0).sum(tuple(d + nb for d in dims), dtype=x.dtype)
    consecutive = all(b == a + 1 for a, b in zip(dims, dims[1:]))
    if first != 0 and not consecutive:
        out = out.permute(*range(first, first + nb), *range(first), *range(first + nb, out.ndim))
    return out


@pytest.mark.parametrize("dims", [(0, 1), (1, 2), (0, 2), (0, 1, 2)])
def test_several_index_tensors_are_one_gather_with_the_one_hot_bits_but_minus_zero_and_nan(dims):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x[1, 2, 3], x[2, 3, 4] = -0.0, np.frombuffer(np.uint32(0x7fc00123).tobytes(), np.float32)[0]
    # broadcast index shapes, negatives, and positions out of range on one axis only
    raw = [rng.integers(-x.shape[d] - 2, x.shape[d] + 2, size=(3, 1) if k == 0 else (1, 4)) for k, d in enumerate(dims)]
    idx = [Tensor(r.astype(np.int32)) for r in raw]
    key = [slice(None)] * 3
    for d, t in zip(dims, idx):
        key[d] = t
    got = Tensor(x)[tuple(key)].numpy()
    want = one_hot_multi(Tensor(x), dims, idx).numpy()
    assert got.shape == want.shape
    # numpy's fancy indexing bit for bit, where a position with any index outside its axis reads
    # an appended zero slice (zero bits, spec §15)
    inside = np.ones(np.broadcast_shapes(*[r.shape for r in raw]), bool)
    for d, r in zip(dims, raw):
        inside &= (r >= -x.shape[d]) & (r < x.shape[d])
    xz = np.pad(x, [(0, 1) if d in dims else (0, 0) for d in range(3)])
    nkey = [slice(None)] * 3
    for d, r in zip(dims, raw):
        nkey[d] = np.where(inside, np.where(r < 0, r + x.shape[d], r), x.shape[d])
    assert got.tobytes() == xz[tuple(nkey)].tobytes()
    g, w = got.view(np.uint32), want.view(np.uint32)
    # the one-hot sum turns -0 into +0 and canonicalises NaN payloads (spec §15); all else is equal
    neg0, nan = g == 0x80000000, np.isnan(got)
    assert (g[~neg0 & ~nan] == w[~neg0 & ~nan]).all()
    assert (w[neg0] == 0).all() and (w[nan] == 0x7fc00000).all() and (g[nan] == 0x7fc00123).all()


def test_several_index_tensors_gradient_is_the_one_hot_formulations():
    rng = np.random.default_rng(6)
    x = Tensor(rng.standard_normal((5, 6, 3)).astype(np.float32), requires_grad=True)
    i = Tensor(np.array([[1, 1, 4], [0, -1, 1]], dtype=np.int32))
    j = Tensor(np.array([[2], [5]], dtype=np.int64))
    w = Tensor(rng.standard_normal((2, 3, 3)).astype(np.float32) * 1000)
    (x[i, j] * w).sum().backward()
    got = x.grad.numpy()
    x.grad = None
    (one_hot_multi(x, (0, 1), [i, j]) * w).sum().backward()
    assert got.tobytes() == x.grad.numpy().tobytes()


def test_several_index_tensors_refuse_float_indices_and_unbroadcastable_shapes():
    x = Tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError):  # the binding's check, as tinygrad's (an IndexError)
        x[Tensor([0, 1]), Tensor([0.0, 1.0])]
    with pytest.raises(IndexError):
        x[Tensor([0, 1]), Tensor([0, 1, 2])]
