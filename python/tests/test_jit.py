"""maroon.TinyJit: a Python training loop through @TinyJit gives the same bytes as without it, and
what a replay could not reproduce is refused."""
import warnings

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


def make_step(l1, l2, opt, jit):
    """The two-layer MLP's training step, through TinyJit when `jit`."""
    def step(x, y):
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss
    return TinyJit(step) if jit else step


def train(jit, data):
    Tensor.manual_seed(5)
    l1, l2 = nn.Linear(12, 24), nn.Linear(24, 5)
    opt = Adam(get_parameters([l1, l2]), lr=0.01)
    step = make_step(l1, l2, opt, jit)
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

    # A step whose first call draws random numbers runs on every call (new numbers each time, the
    # bits of calling it); one that starts drawing only when captured is refused.
    @TinyJit
    def noisy(x):
        return x + Tensor.rand(2)
    Tensor.manual_seed(3)
    jitted = [noisy(a).numpy().tobytes() for _ in range(4)]
    Tensor.manual_seed(3)
    plain = [(a + Tensor.rand(2)).numpy().tobytes() for _ in range(4)]
    assert jitted == plain and len(set(jitted)) == 4 and noisy.captured is None
    draws = []

    @TinyJit
    def late(x):
        return x + Tensor.rand(2) if draws else x * 2
    late(a)
    draws.append(1)
    with pytest.raises(maroon._maroon.Error, match="cannot capture random numbers"):
        late(a)


def test_a_replay_changes_nothing_an_earlier_call_left():
    """Outputs of earlier calls (in the returned structure), their inputs and earlier weights held
    through a detached view keep their bytes; a parameter's .grad follows every call."""
    Tensor.manual_seed(5)
    l1 = nn.Linear(12, 5)
    opt = Adam(get_parameters([l1]), lr=0.01)

    @TinyJit
    def step(x, y):
        with Context(TRAINING=1):
            opt.zero_grad()
            out = l1(x)
            loss = out.sparse_categorical_crossentropy(y).backward()
            opt.step()
        return {"loss": loss, "pair": (out.sum(), 7)}
    held, grads = [], []
    for x, y in batches(5, 8):
        xt = Tensor(x)
        ret = step(xt, Tensor(y))
        assert ret["pair"][1] == 7
        for t in (ret["loss"], ret["pair"][0], xt, l1.weight.detach(), opt.m[0].detach()):
            held.append((t, t.numpy().tobytes()))
        grads.append(l1.weight.grad.numpy().tobytes())
    assert step.cnt == 5
    for i, (t, b) in enumerate(held):
        assert t.numpy().tobytes() == b, f"held tensor {i} changed"

    Tensor.manual_seed(5)
    p1 = nn.Linear(12, 5)
    popt = Adam(get_parameters([p1]), lr=0.01)
    for k, (x, y) in enumerate(batches(5, 8)):
        with Context(TRAINING=1):
            popt.zero_grad()
            p1(Tensor(x)).sparse_categorical_crossentropy(Tensor(y)).backward()
            popt.step()
        assert p1.weight.grad.numpy().tobytes() == grads[k], f".grad after call {k}"


def test_jitted_loop_under_verify_run_verifies(tmp_path):
    """A Python loop through TinyJit committed by verify.Run (background hashing, checkpoints):
    the same commitments as without the JIT, and the record verifies by replay."""
    data = batches(6, 8)

    def job():
        Tensor.manual_seed(5)
        l1, l2 = nn.Linear(12, 24), nn.Linear(24, 5)
        return l1, l2, Adam(get_parameters([l1, l2]), lr=0.01)

    def runner(l1, l2, opt, jit):
        step = make_step(l1, l2, opt, jit)
        return lambda k: step(Tensor(data[k - 1][0]), Tensor(data[k - 1][1]))

    class Model:
        def __init__(self, l1, l2):
            self.l1, self.l2 = l1, l2

    commitments = []
    for jit in (False, True):
        l1, l2, opt = job()
        run = maroon.verify.Run(tmp_path / f"{jit}.run.json", Model(l1, l2), opt, steps=6, checkpoint_every=2,
                                job={"name": "jit-test"})
        run.train(runner(l1, l2, opt, jit))
        commitments.append(run.commitments())
    assert commitments[0] == commitments[1]
    for jit in (False, True):
        l1, l2, opt = job()
        prog = maroon.verify.program(Model(l1, l2), opt, runner(l1, l2, opt, jit))
        rep = maroon.verify.verify_run(tmp_path / "True.run.json", prog)
        assert rep["verified"], rep


def test_a_host_read_of_an_input_value_in_the_capture_warns():
    """A branch on a value read from the inputs would be replayed as the captured call's: the
    capture warns, naming the read; reads of values that do not depend on the inputs do not."""
    from maroon.jit import JitHostReadWarning
    w = Tensor([2.0, -1.0])

    @TinyJit
    def branchy(x):
        return x * 2 if (x.sum().item() > 0) else x * 3

    @TinyJit
    def plain(x):
        assert w.sum().item() == 1.0  # a constant's value: the same on every call
        return x * w

    for f, warns in ((branchy, True), (plain, False)):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for v in (1.0, 2.0, 3.0):
                f(Tensor([v, v]))
        hits = [s for s in seen if issubclass(s.category, JitHostReadWarning)]
        assert len(hits) == (1 if warns else 0), [str(s.message) for s in seen]
        if warns:
            assert "(1,) float32" in str(hits[0].message) or "() float32" in str(hits[0].message)


def test_one_buffer_as_two_inputs_is_refused_when_capturing():
    """tinygrad's "duplicate inputs to JIT": a capture would hold one leaf for both inputs, and a
    replay given two tensors would read the first's values for both."""
    a, b = Tensor([1.0, 2.0]), Tensor([10.0, 20.0])
    sub = TinyJit(lambda x, y: x - y)
    sub(a, a)
    with pytest.raises(maroon._maroon.Error, match="share one buffer"):
        sub(a, a)
    sub(a, b)
    sub(a, b)
    assert sub(b, a).tolist() == [9.0, 18.0] and sub(b, b).tolist() == [0.0, 0.0]


def test_a_replay_of_tensors_only_skips_the_argument_walk(monkeypatch):
    """A replay given only positional tensors, as the capturing call was, goes straight to the
    capture (no walk over the arguments: the walk was most of a small replay's time) with the
    bits and the refusals of the general path; anything else takes the general path."""
    @TinyJit
    def f(x, y):
        return (x * y + x).contiguous(), [x.sum()]
    a, b = Tensor([1.0, 2.0, 3.0]), Tensor([4.0, 5.0, 6.0])
    f(a, b)
    f(a, b)
    walks = []
    real = maroon.jit._tensors
    monkeypatch.setattr(maroon.jit, "_tensors", lambda obj: walks.append(1) or real(obj))
    c, d = Tensor([0.5, -1.0, 2.0]), Tensor([3.0, 0.25, -4.0])
    out, [total] = f(c, d)
    assert not walks
    assert out.numpy().tobytes() == (c * d + c).numpy().tobytes()
    assert total.numpy().tobytes() == c.sum().numpy().tobytes()
    assert f.cnt == 3
    # By keyword: the general path, the same replay.
    out2, _ = f(c, y=d)
    assert walks and out2.numpy().tobytes() == out.numpy().tobytes()
    with pytest.raises(maroon._maroon.Error, match="non-tensor arguments"):
        f(c, 2.0)
    with pytest.raises(maroon._maroon.Error, match=r"input 0 is \(2,\) float32, the captured call.s was \(3,\)"):
        f(Tensor([1.0, 2.0]), Tensor([3.0, 4.0]))

    @TinyJit
    def g(x, k):  # captured with a non-tensor argument: never the shortcut
        return (x * k).contiguous()
    g(a, 2)
    g(a, 2)
    walks.clear()
    assert g(c, 2).tolist() == [1.0, -2.0, 4.0] and walks


def test_a_padded_conv2d_replays_with_the_bits_of_calling_it():
    """conv2d with padding reads a copy of its padded input, made on every call (the CPU
    backend's matmul, cpu/matmul_plan.cpp): replays on new inputs give the bits of calling it."""
    rng = np.random.default_rng(9)
    w = Tensor(rng.standard_normal((8, 4, 3, 3), dtype=np.float32))

    def f(x):
        return x.conv2d(w, padding=1).relu().contiguous()
    jf = TinyJit(f)
    for _ in range(4):
        x = Tensor(rng.standard_normal((2, 4, 10, 10), dtype=np.float32))
        assert jf(x).numpy().tobytes() == f(x).numpy().tobytes()
    assert jf.captured is not None and jf.cnt == 4
