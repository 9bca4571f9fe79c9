"""What tinygrad's own test_ops.py needs beyond the Tensor methods (tools/tinygrad/run_test_ops.sh
runs that file; docs/tinygrad-compat.md lists what still fails): the exception classes tinygrad
raises for the same mistakes, the dtype attributes its helpers read, and argument forms and edge
cases. Expected values come from numpy, PyTorch or Python's struct module, never from Maroon."""
import struct

import numpy as np
import pytest
import torch

import maroon
from maroon import Tensor, dtypes


@pytest.mark.parametrize("call, builtins", [
    (lambda: Tensor.zeros(3, 4).reshape(5), (RuntimeError, ValueError)),       # tinygrad: RuntimeError
    (lambda: Tensor.zeros(3, 4).permute(0, 2), (RuntimeError, ValueError)),
    (lambda: Tensor.zeros(2) + Tensor.zeros(3), (RuntimeError, ValueError)),
    (lambda: Tensor.zeros(2).sum(axis=4), (RuntimeError, IndexError)),
    (lambda: Tensor([1.0]) << 1, (RuntimeError, TypeError)),
    (lambda: Tensor.zeros(2).sum(dtype="floaty"), (AttributeError, TypeError)),  # tinygrad: getattr(dtypes, name)
    (lambda: Tensor.zeros(2).pad((1, 1), mode="typo"), (NotImplementedError,)),
    (lambda: Tensor.arange(2 ** 33, dtype=dtypes.int32), (OverflowError,)),
    (lambda: Tensor.arange(-1, 3, dtype=dtypes.uint8), (OverflowError,)),
    (lambda: Tensor.ones(4).scatter(0, Tensor([0]), Tensor.ones(4), reduce="add"), (TypeError,)),
    (lambda: Tensor.ones(4).scatter(0, Tensor([0]), 1.0, reduce="sum"), (TypeError,)),
    (lambda: Tensor(1.0).cummax(axis=1), (IndexError,)),
    (lambda: Tensor.kaiming_uniform((3, 3), 3), (ValueError,)),
    (lambda: Tensor.stack((Tensor([1]), Tensor([2])), Tensor([3])), (ValueError,)),
])
def test_exception_classes(call, builtins):
    with pytest.raises(builtins[0]) as e:
        call()
    for cls in builtins:
        assert isinstance(e.value, cls), (type(e.value).__mro__, cls)
    assert str(e.value).startswith("["), str(e.value)  # the [op] message is kept


def test_maroon_error_is_the_common_base():
    for cls in (maroon._maroon.ShapeError, maroon._maroon.DTypeError, maroon._maroon.IndexError,
                maroon._maroon.FormatError, maroon._maroon.DTypeNameError):
        assert issubclass(cls, maroon._maroon.Error) and issubclass(cls, RuntimeError)


def test_arange_in_range_still_works():
    np.testing.assert_array_equal(Tensor.arange(250, 256, dtype=dtypes.uint8).numpy(), np.arange(250, 256, dtype=np.uint8))
    np.testing.assert_array_equal(Tensor.arange(5, -1, -2, dtype=dtypes.int8).numpy(), np.arange(5, -1, -2, dtype=np.int8))


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                  "float16", "float32", "float64"])
def test_dtype_fmt_min_max(name):
    dt, npdt = getattr(dtypes, name), np.dtype(name)
    assert struct.calcsize(dt.fmt) == npdt.itemsize and np.dtype(dt.fmt) == npdt
    if npdt.kind in "iu":
        assert (dt.min, dt.max) == (np.iinfo(npdt).min, np.iinfo(npdt).max)
    elif npdt.kind == "f":
        assert (dt.min, dt.max) == (-float("inf"), float("inf"))
    else:
        assert (dt.min, dt.max) == (False, True)
    assert dtypes.bfloat16.fmt is None


def test_stack_and_cat_take_a_sequence():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3))
    for dim in (0, 1, -1):
        np.testing.assert_array_equal(Tensor.stack([Tensor(a), Tensor(b), Tensor(c)], dim=dim).numpy(), np.stack([a, b, c], dim))
        np.testing.assert_array_equal(Tensor.cat((Tensor(a), Tensor(b)), dim=dim).numpy(), np.concatenate([a, b], dim))
    np.testing.assert_array_equal(Tensor(a).stack(Tensor(b)).numpy(), np.stack([a, b]))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "int64"])
def test_integer_power(dtype):
    x = np.array([-3, -2, 0, 1, 2, 7, 11, 13]).astype(dtype)
    for e in (0, 1, 2, 3, 7, 29):
        with np.errstate(over="ignore"):
            want = np.power(x, e, dtype=dtype)  # wraps modulo 2^bits, as repeated multiplication
        got = (Tensor(x) ** e).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(RuntimeError):
        Tensor(x) ** -2


@pytest.mark.parametrize("shape, dim, step", [((3, 3, 3), 1, 8), ((4, 5), 1, 1), ((4, 0), 1, 2), ((6,), 0, 4)])
def test_unfold_size_zero(shape, dim, step):
    x = np.ones(shape, np.float32)
    want = torch.tensor(x).unfold(dim, 0, step)
    t = Tensor(x, requires_grad=True)
    out = t.unfold(dim, 0, step)
    assert out.shape == tuple(want.shape)
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.zeros(shape, np.float32))


def test_nonzero_fill_keeps_the_index_dtype():
    out = Tensor([1, 0]).nonzero(size=3, fill_value=-1.5)
    assert out.dtype == dtypes.int32
    np.testing.assert_array_equal(out.numpy(), [[0], [-1], [-1]])


POOLS = [  # (input shape, kernel, stride, padding, dilation)
    ((1, 2, 5, 5), (2, 2), (2, 2), 0, 1), ((2, 1, 7, 6), (3, 3), (2, 2), 1, 1), ((1, 1, 6, 9), (2, 3), (3, 2), (1, 0), 1),
    ((1, 1, 8, 8), (3, 3), (3, 3), 1, 2), ((1, 1, 4, 4), (3, 3), (2, 2), 1, 1)]


@pytest.mark.parametrize("shape, k, s, p, d", POOLS)
def test_max_pool2d_ceil_mode(shape, k, s, p, d):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.max_pool2d(tx, k, s, p, d, ceil_mode=True)
    want.sum().backward()
    t = Tensor(x, requires_grad=True)
    out = t.max_pool2d(k, s, d, p, ceil_mode=True)
    np.testing.assert_array_equal(out.numpy(), want.detach().numpy())  # a selection: exact
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), tx.grad.numpy())
    _, idx = t.max_pool2d(k, s, d, p, ceil_mode=True, return_indices=True)
    _, tidx = torch.nn.functional.max_pool2d(tx, k, s, p, d, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())


@pytest.mark.parametrize("shape, k, s, p, d", [c for c in POOLS if c[4] == 1])  # PyTorch's avg_pool2d has no dilation
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_ceil_mode(shape, k, s, p, d, count_include_pad):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    want = torch.nn.functional.avg_pool2d(torch.tensor(x), k, s, p, ceil_mode=True, count_include_pad=count_include_pad)
    out = Tensor(x).avg_pool2d(k, s, d, p, ceil_mode=True, count_include_pad=count_include_pad)
    assert out.shape == tuple(want.shape)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    floor = torch.nn.functional.avg_pool2d(torch.tensor(x), k, s, p, count_include_pad=count_include_pad)
    np.testing.assert_allclose(Tensor(x).avg_pool2d(k, s, d, p, count_include_pad=count_include_pad).numpy(), floor.numpy(),
                               rtol=1e-6, atol=1e-6)


def test_random_functions_take_int_bounds():
    Tensor.manual_seed(3)
    a = Tensor.uniform(2, 3, low=0, high=10).numpy()
    Tensor.manual_seed(3)
    b = Tensor.uniform(2, 3, low=0.0, high=10.0).numpy()
    np.testing.assert_array_equal(a, b)  # an int bound means the same float bound
    assert a.shape == (2, 3) and ((a >= 0) & (a < 10)).all()
    Tensor.manual_seed(3)
    n1 = Tensor.normal(4, mean=1, std=2).numpy()
    Tensor.manual_seed(3)
    np.testing.assert_array_equal(n1, Tensor.normal(4, mean=1.0, std=2.0).numpy())
    with pytest.raises(TypeError):
        Tensor.uniform(2, low="a")


def test_helpers(capsys, monkeypatch):
    from maroon.helpers import Timing, colored, getenv, trange
    monkeypatch.setenv("MAROON_TEST_HELPERS_X", "7")
    assert getenv("MAROON_TEST_HELPERS_X") == 7 and getenv("MAROON_TEST_HELPERS_Y", "z") == "z"
    assert colored("x", "red") == "\x1b[31mx\x1b[0m" and colored("x", "RED") == "\x1b[91mx\x1b[0m" and colored("x", None) == "x"
    with Timing("step "):
        pass
    assert capsys.readouterr().out.startswith("step ") and list(trange(3, disable=True)) == [0, 1, 2]


def _adam_run(use_schedule):
    w = Tensor([1.0, -2.0, 3.0])
    opt = maroon.nn.optim.Adam([w], lr=0.1)
    with maroon.Context(TRAINING=1):
        for _ in range(3):
            opt.zero_grad()
            loss = (w * w).sum().backward()
            if use_schedule:
                Tensor.realize(*opt.schedule_step(), loss)
            else:
                opt.step()
    return w.numpy().tobytes(), opt


def test_schedule_step_is_step_and_returns_what_it_changed():
    stepped, _ = _adam_run(False)
    scheduled, opt = _adam_run(True)
    assert scheduled == stepped
    with maroon.Context(TRAINING=1):
        (opt.params[0] * 2).sum().backward()
        changed = opt.schedule_step()
    assert len(changed) == 2 + 2 + 1  # b1^t, b2^t, m, v and the parameter
    assert changed[-1].numpy().tobytes() == opt.params[0].numpy().tobytes()
    assert changed[2].numpy().tobytes() == opt.m[0].numpy().tobytes()


def test_optimizer_group_steps_each_optimizer():
    a, b = Tensor([1.0]), Tensor([2.0])
    group = maroon.nn.optim.OptimizerGroup(maroon.nn.optim.SGD([a], lr=0.5), maroon.nn.optim.SGD([b], lr=0.25))
    with maroon.Context(TRAINING=1):
        group.zero_grad()
        (a * b).sum().backward()  # d/da = 2, d/db = 1
        assert len(group.schedule_step()) == 2
    assert (a.item(), b.item()) == (1.0 - 0.5 * 2.0, 2.0 - 0.25 * 1.0)
    assert group[1].params[0].item() == b.item()


def test_nn_datasets_mnist_reads_the_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    imgs = {s: rng.integers(0, 256, (n, 28, 28), dtype=np.uint8) for s, n in (("train", 5), ("t10k", 3))}
    labels = {s: rng.integers(0, 10, (len(v),), dtype=np.uint8) for s, v in imgs.items()}
    for s in imgs:
        n = len(imgs[s])
        (tmp_path / f"{s}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 0x803, n, 28, 28) + imgs[s].tobytes())
        (tmp_path / f"{s}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 0x801, n) + labels[s].tobytes())
    X_train, Y_train, X_test, Y_test = maroon.nn.datasets.mnist(path=tmp_path)
    assert X_train.shape == (5, 1, 28, 28) and X_train.dtype == dtypes.uint8 and Y_test.shape == (3,)
    assert X_train.numpy().tobytes() == imgs["train"].tobytes() and Y_test.numpy().tobytes() == labels["t10k"].tobytes()
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(struct.pack(">II", 0x801, 3) + b"\x01\x02")
    with pytest.raises(ValueError, match="t10k-labels"):
        maroon.nn.datasets.mnist(path=tmp_path)
