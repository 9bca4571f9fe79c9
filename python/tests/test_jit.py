"""maroon.TinyJit: a Python training loop through @TinyJit gives the same bytes as without it, and
what a replay could not reproduce is refused."""
import numpy as np
import pytest

import maroon
from maroon import Context, Tensor, TinyJit, nn
from maroon.nn.optim import Adam
from maroon.nn.state import get_parameters


def batches(n, b):
    """Fixed, distinct batches from numpy's seeded generator (no Maroon RNG inside the step)."""
    rng = np.random.default_rng(3)
    return [(rng.standard_normal((b, 12), dtype=np.float32), rng.integers(0, 5, b).astype(np.int32)) for _ in range(n)]


def train(jit, data):
    Tensor.manual_seed(5)
    l1, l2 = nn.Linear(12, 24), nn.Linear(24, 5)
    opt = Adam(get_parameters([l1, l2]), lr=0.01)

    def step(x, y):
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss
    step = TinyJit(step) if jit else step
    losses = [step(Tensor(x), Tensor(y)).numpy().tobytes() for x, y in data]
    state = [t.numpy().tobytes() for t in get_parameters([l1, l2]) + opt.m + opt.v]
    return losses, state, step


def test_python_loop_with_tinyjit_gives_the_same_bytes():
    data = batches(6, 16)
    plain_losses, plain_state, _ = train(False, data)
    jit_losses, jit_state, step = train(True, data)
    assert jit_losses == plain_losses
    assert jit_state == plain_state
    assert step.cnt == 6 and step.captured.kernels > 10


def test_tinyjit_refuses_what_it_cannot_replay():
    data = batches(3, 8)
    _, _, step = train(True, data)
    x, y = batches(1, 4)[0]
    with pytest.raises(maroon._maroon.Error, match=r"input 0 is \(4,12\) float32, the captured call's was \(8,12\)"):
        step(Tensor(x), Tensor(y))

    @TinyJit
    def scaled(x, k):
        return (x * k).contiguous()
    a = Tensor([1.0, 2.0])
    scaled(a, 2)
    scaled(a, 2)
    assert scaled(Tensor([3.0, 4.0]), 2).tolist() == [6.0, 8.0]
    with pytest.raises(maroon._maroon.Error, match="non-tensor arguments"):
        scaled(a, 3)

    @TinyJit
    def noisy(x):
        return x + Tensor.rand(2)
    noisy(a)
    with pytest.raises(maroon._maroon.Error, match="cannot capture random numbers"):
        noisy(a)
