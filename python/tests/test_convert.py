"""Data in and out of numpy: numpy(), tolist(), item(), __array__, data() and DLPack give exactly
the bytes of the element-by-element definition for every dtype and every kind of view (the same
views built in numpy are the oracle), and the arrays are copies that own their memory: they
outlive the tensor and never see its later writes, nor it theirs."""
import gc
import struct

import numpy as np
import pytest

from maroon import Tensor

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]


def random_bits(dtype, shape, seed=0):
    """Every bit pattern (NaNs, infinities, -0 and subnormals included); bools are 0 or 1."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    raw = rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def dense(a):
    """A C-ordered copy that stays 0-d (np.ascontiguousarray makes a 0-d array 1-d)."""
    return np.array(a, order="C")


# Each view of a (4, 6, 5) tensor and the same view in numpy.
VIEWS = {
    "whole": (lambda x: x, lambda a: a),
    "transposed": (lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    "T": (lambda x: x.reshape(24, 5).T, lambda a: a.reshape(24, 5).T),
    "sliced": (lambda x: x[1:3, 2:6], lambda a: a[1:3, 2:6]),
    "stepped": (lambda x: x[:, ::2, 1:], lambda a: a[:, ::2, 1:]),
    "flipped": (lambda x: x.flip(1), lambda a: a[:, ::-1]),
    "expanded": (lambda x: x[:, 0:1].expand(4, 3, 5), lambda a: np.broadcast_to(a[:, 0:1], (4, 3, 5))),
    "padded": (lambda x: x.pad(((1, 0), (0, 2), (3, 1))), lambda a: np.pad(a, ((1, 0), (0, 2), (3, 1)))),
    "zero-size": (lambda x: x[:, 2:2], lambda a: a[:, 2:2]),
    "scalar": (lambda x: x[1, 2, 3], lambda a: np.asarray(a[1, 2, 3])),
    "permute-reshape": (lambda x: x.permute(1, 0, 2).reshape(24, 5), lambda a: a.transpose(1, 0, 2).reshape(24, 5)),
    "offset": (lambda x: x.reshape(120)[30:60].reshape(5, 6), lambda a: a.reshape(120)[30:60].reshape(5, 6)),
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_bytes_every_dtype_and_view(dtype, view):
    mine, theirs = VIEWS[view]
    a = random_bits(dtype, (4, 6, 5))
    want = dense(theirs(a))
    got = mine(Tensor(a)).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert got.flags.c_contiguous and got.flags.writeable
    assert np.asarray(mine(Tensor(a))).tobytes() == want.tobytes()  # __array__
    assert bytes(mine(Tensor(a)).data()) == want.tobytes()


@pytest.mark.parametrize("view", VIEWS)
def test_bfloat16_bits_and_widening(view):
    mine, theirs = VIEWS[view]
    bits = random_bits("uint16", (4, 6, 5), seed=1)
    t = mine(Tensor(bits).bitcast("bfloat16"))
    assert t.bitcast("uint16").numpy().tobytes() == dense(theirs(bits)).tobytes()
    # numpy() widens bfloat16 to float32 (exact); finite values so that no NaN is canonicalized
    finite = (np.random.default_rng(2).standard_normal((4, 6, 5)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    high = dense(theirs(finite)).astype(np.uint32) << np.uint32(16)
    widened = high.reshape(-1).view(np.float32).reshape(high.shape)
    got = mine(Tensor(finite).bitcast("bfloat16")).numpy()
    assert got.dtype == np.float32 and got.tobytes() == widened.tobytes()


@pytest.mark.parametrize("view", ["whole", "transposed", "stepped", "expanded", "padded", "scalar", "zero-size"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tolist_every_dtype_and_view(dtype, view):
    mine, theirs = VIEWS[view]
    a = np.random.default_rng(3).standard_normal((4, 6, 5)) * 100
    a = (a > 0) if dtype == "bool" else a.astype(dtype)
    assert mine(Tensor(a)).tolist() == theirs(a).tolist()


def bits_of(v):
    return struct.pack("<d", v) if isinstance(v, float) else v


@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
def test_item_every_dtype_matches_numpy(dtype):
    src = "uint16" if dtype == "bfloat16" else dtype
    a = random_bits(src, (64,), seed=4)
    specials = {"float16": [0x8000, 0x7C00, 0x7E01, 0x0001], "float32": [0x80000000, 0x7F800000, 0x7FC00001, 0x1],
                "float64": [1 << 63, 0x7FF0000000000000, 0x7FF8000000000001, 1], "bfloat16": [0x8000, 0x7F80, 0x0001]}
    for i, s in enumerate(specials.get(dtype, [])):
        a.view(f"uint{a.dtype.itemsize * 8}")[i] = s
    t = Tensor(a)
    if dtype == "bfloat16":
        t = t.bitcast("bfloat16")
    for i in range(len(a)):
        want = t[i].numpy().item()  # numpy's own item() of the exported array
        got = t[i].item()
        assert type(got) is type(want) and bits_of(got) == bits_of(want), (i, got, want)
    assert (t[3:4].reshape(1, 1).item() == t[3].item()) or np.isnan(t[3].item())


def test_item_needs_one_element():
    with pytest.raises(Exception, match="item"):
        Tensor([1.0, 2.0]).item()


@pytest.mark.parametrize("n", [12, 1 << 19])  # numpy's memory, and the engine's cached memory (>= 1 MiB)
def test_numpy_arrays_are_owned_copies(n):
    t = Tensor(np.arange(n, dtype=np.float32).reshape(-1, 4)) * 2
    a = t.numpy()
    b = t.numpy()
    assert a.ctypes.data != b.ctypes.data  # never the same memory, nor the tensor's
    a[0, 0] = 99.0  # writing the array does not reach the tensor
    assert t.numpy()[0, 0] == 0.0 and b[0, 0] == 0.0
    before = b.copy()
    t.assign(t + 1)  # nor a later write to the tensor the array
    t.realize()
    assert np.array_equal(b, before)
    u = Tensor(np.full(n, 7, np.int32)) + 1
    c = u.numpy()
    del u, t, a
    gc.collect()
    for _ in range(10):  # buffers freed and recycled by later work must not show through
        (Tensor(np.zeros(n, np.int32)) - 5).numpy()
        (Tensor(np.zeros(n, np.float32)) - 5).realize()
    assert (c == 8).all() and np.array_equal(b, before)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3), (1, 2, 1, 3, 1, 2, 1, 2), (1, 2, 1, 1, 2, 1, 1, 2, 2)])
def test_numpy_shapes_up_to_and_past_eight_axes(shape):
    # Small arrays are made with numpy's C API and the dims on the stack (up to 8 axes), more
    # axes through pybind11: both C-contiguous, writeable arrays owning their memory.
    for dtype in ("float32", "int64", "bool"):
        x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)
        a = (Tensor(x) + Tensor(np.zeros(shape, dtype))).numpy()
        assert a.shape == shape and a.dtype == np.dtype(dtype)
        assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata
        assert a.strides == x.strides and a.tobytes() == x.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_numpy_every_dtype_and_layout(dtype):
    a = random_bits(dtype, (6, 8), seed=5)
    layouts = [a, a.T, a[:, ::3], a[::-1], np.asfortranarray(a), a[2:2], a[1, 2], a.reshape(48)[5:29]]
    for arr in layouts:
        arr = np.asarray(arr)
        t = Tensor(arr)
        assert t.shape == arr.shape and t.numpy().tobytes() == dense(arr).tobytes()
    # a copy in: writing the array afterwards leaves the tensor as it was
    src = a.copy()
    t = Tensor(src)
    src[...] = src[::-1]
    assert t.numpy().tobytes() == a.tobytes()


def test_large_round_trip_and_dlpack():
    a = np.random.default_rng(6).random(1 << 20, np.float32)
    t = Tensor(a).realize()
    assert t.numpy().tobytes() == a.tobytes()
    assert np.from_dlpack(t[::2]).tobytes() == a[::2].tobytes()
    assert Tensor(a.reshape(1024, 1024)).T.numpy().tobytes() == dense(a.reshape(1024, 1024).T).tobytes()
