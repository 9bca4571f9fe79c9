"""The Python package: numpy in and out, weak scalars, errors, and bits that match the C++ engine."""
import numpy as np
import pytest

from maroon import Tensor, dtypes


def test_numpy_round_trip_keeps_bits():
    a = np.array([[1.5, -0.0], [np.inf, 3.25]], dtype=np.float32)
    t = Tensor(a)
    assert t.shape == (2, 2) and t.dtype == dtypes.float32
    assert t.numpy().tobytes() == a.tobytes()


def test_lists_and_python_scalars_follow_tinygrad():
    assert Tensor([1, 2, 3]).dtype == dtypes.int32
    assert Tensor([1.0, 2.0]).dtype == dtypes.float32
    x = Tensor(np.array([1, 2], dtype=np.int8))
    assert (x * 300).dtype == dtypes.int8  # weak scalar: 300 wraps to 44 first
    assert (x * 300).tolist() == [44, 88]
    assert (x + 1.5).dtype == dtypes.float32


def test_arithmetic_matches_numpy_float32_bits():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    got = (Tensor(a) * Tensor(b) + Tensor(a)).numpy()
    want = (a * b + a).astype(np.float32)  # numpy rounds each op once too (no FMA)
    assert got.tobytes() == want.tobytes()


def test_matmul_sums_in_increasing_k():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (8, 33)).astype(np.float32)
    b = rng.uniform(-1, 1, (33, 5)).astype(np.float32)
    want = np.zeros((8, 5), dtype=np.float32)
    for k in range(33):  # the contract's fold: products rounded, then added in k order
        want = (want + (a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)).astype(np.float32)
    assert (Tensor(a) @ Tensor(b)).numpy().tobytes() == want.tobytes()


def test_backward_fills_grad():
    x = Tensor([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    assert x.grad.numpy().tolist() == [2.0, 4.0, 6.0]


def test_errors_are_python_exceptions():
    with pytest.raises(ValueError, match=r"\[reshape\]"):
        Tensor([1.0, 2.0, 3.0]).reshape(2, 2)
    with pytest.raises(TypeError):
        Tensor([1.0]).cast(dtypes.float32).bitcast(dtypes.int16)


def test_unary_methods_match_torch_closely():
    torch = pytest.importorskip("torch")
    x = np.linspace(-3, 3, 101).astype(np.float32)
    for name in ["exp", "sigmoid", "tanh", "relu", "abs", "square", "sin", "cos"]:
        got = getattr(Tensor(x), name)().numpy()
        want = getattr(torch, name)(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_rand_stream_is_tinygrads():
    # tinygrad's Threefry stream: the same seed gives the same bits in C++ and Python.
    Tensor.manual_seed(1337)
    a = Tensor.rand(4, 3).numpy()
    Tensor.manual_seed(1337)
    b = Tensor.rand(4, 3).numpy()
    assert a.tobytes() == b.tobytes() and a.shape == (4, 3)
    assert ((a >= 0) & (a < 1)).all()


def test_a_tiny_training_step_is_deterministic():
    def run():
        Tensor.manual_seed(0)
        w = Tensor.rand(4, 3)
        x = Tensor.rand(8, 4)
        y = Tensor(np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=np.int32))
        loss = x.linear(w).sparse_categorical_crossentropy(y)
        loss.backward()
        return loss.numpy().tobytes() + w.grad.numpy().tobytes()
    assert run() == run()


def train_mlp(steps, n_in=8, hidden=16, batch=32):
    """A two-layer MLP trained with Adam on fixed random data: the per-step losses and a SHA-256 of
    the losses and the first layer's final weights."""
    import hashlib

    from maroon import nn
    from maroon.nn.optim import Adam
    from maroon.nn.state import get_parameters

    Tensor.manual_seed(0)
    l1, l2 = nn.Linear(n_in, hidden), nn.Linear(hidden, 3)
    opt = Adam(get_parameters([l1, l2]), lr=1e-2)
    x = Tensor.rand(batch, n_in)
    y = Tensor((np.arange(batch) % 3).astype(np.int32))
    Tensor.training = True
    losses, h = [], hashlib.sha256()
    try:
        for _ in range(steps):
            opt.zero_grad()
            loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
            loss.backward()
            opt.step()
            losses.append(loss.numpy().item())
            h.update(loss.numpy().tobytes())
    finally:
        Tensor.training = False
    h.update(l1.weight.numpy().tobytes())
    return losses, h.hexdigest()


def test_mlp_training_with_adam_is_deterministic_and_learns():
    a, b = train_mlp(20), train_mlp(20)
    assert a == b  # same bits, run to run
    assert a[0][-1] < a[0][0]


def test_training_digest_is_the_same_on_every_backend_target_and_thread_count():
    import maroon

    def digest():
        return train_mlp(3, n_in=16, hidden=8, batch=24)[1]

    first_target, first_threads = maroon.simd_target(), maroon.num_threads()
    digests = {}
    try:
        maroon.set_backend("ref")  # the soft-float reference executor
        digests["ref"] = digest()
        maroon.set_backend("cpu")
        for target in maroon.available_simd_targets():
            for threads in (1, 2, 3):
                maroon.set_simd_target(target)
                maroon.set_num_threads(threads)
                digests[f"{target}/{threads}"] = digest()
    finally:
        maroon.set_backend("cpu")
        maroon.set_simd_target(first_target)
        maroon.set_num_threads(first_threads)
    assert len(set(digests.values())) == 1, digests
