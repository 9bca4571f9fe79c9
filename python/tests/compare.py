"""Running a case (cases.py) and measuring how far two results are apart, in ULPs."""
import numpy as np


def ulp_error(got, want):
    """The largest distance between got and want in units in the last place of want's dtype,
    where the unit is taken at max(|want|, 2**-12 * max|want|): results that cancel to near zero
    are judged on the scale of the tensor, not of their own tiny magnitude. NaN must meet NaN
    and an infinity the same infinity. Integers and bools must be equal (0 or inf)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"shape {got.shape} != {want.shape}")
    if want.dtype.kind not in "f":
        return 0.0 if np.array_equal(got.astype(want.dtype), want) else float("inf")
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return float("inf")
    inf = np.isinf(w) | np.isinf(g)
    if not np.array_equal(g[inf], w[inf]):
        return float("inf")
    ok = ~(np.isnan(w) | inf)
    if not ok.any():
        return 0.0
    mag = np.abs(w[ok])
    scale = np.maximum(mag, mag.max() * 2.0 ** -12).astype(want.dtype)
    scale = np.maximum(scale, np.finfo(want.dtype).tiny)
    return float(np.max(np.abs(g[ok] - w[ok]) / np.spacing(scale).astype(np.float64)))


def loss_weights(case, shape):
    """Fixed weights w for the loss sum(out * w) whose gradients are compared: a plain sum would
    have identically zero gradients for softmax or layernorm. Multiples of 1/64 in [0.5, 1.5],
    exact in every float dtype, so casting them to the output's dtype changes nothing."""
    rng = np.random.default_rng(len(case.name) + 7)
    return np.asarray(rng.integers(32, 97, shape) / 64, dtype=np.float32).reshape(shape)


def run_maroon(case, arrays):
    """The case's output and the gradients of sum(output * w) for its float inputs (numpy)."""
    from maroon import Tensor
    xs = [Tensor(a) for a in arrays]
    out = case.fn(Tensor, *xs)
    grads = []
    if case.grad and out.dtype.is_float():
        floats = [x for x in xs if x.dtype.is_float()]
        if floats:
            loss = (out * Tensor(loss_weights(case, out.shape)).cast(out.dtype)).sum()
            grads = [g.numpy() for g in loss.gradient(*floats)]
    return out.numpy(), grads


def run_torch(case, arrays):
    import torch
    xs = [torch.tensor(a, requires_grad=case.grad and a.dtype.kind == "f") for a in arrays]
    out = case.torch(torch, *xs)
    grads = []
    if case.grad and out.dtype.is_floating_point:
        floats = [x for x in xs if x.dtype.is_floating_point]
        if floats:
            w = torch.tensor(loss_weights(case, tuple(out.shape))).to(out.dtype)
            gs = torch.autograd.grad((out * w).sum(), floats, allow_unused=True)
            grads = [np.zeros(x.shape, np.float32) if g is None else g.numpy() for x, g in zip(floats, gs)]
    return out.detach().numpy(), grads
