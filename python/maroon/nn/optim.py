"""tinygrad's optimizers with its exact update formulas (maroon::optim)."""
from .._maroon.nn import optim as _optim

Optimizer = _optim.Optimizer
SGD = _optim.SGD
LARS = _optim.LARS
LAMB = _optim.LAMB
Adam = _optim.Adam
AdamW = _optim.AdamW


def _buffers(opt):
    """The optimizer's state tensors (momentum buffers; Adam's moments and b1^t, b2^t)."""
    if isinstance(opt, LAMB):
        return [opt.b1_t, opt.b2_t, *opt.m, *opt.v]
    return list(getattr(opt, "b", []))


def _schedule_step(self):
    """tinygrad's Optimizer.schedule_step: applies one update (as step()) and returns the tensors
    it changed (state buffers, then the parameters), so `Tensor.realize(*opt.schedule_step(),
    loss)` works as in tinygrad. Maroon's optimizer assigns each update as it is made, so they are
    realized already; realizing them again costs nothing and changes no bit."""
    self.step()
    return _buffers(self) + list(self.params)


Optimizer.schedule_step = _schedule_step


class OptimizerGroup:
    """tinygrad's OptimizerGroup: several optimizers stepped as one (e.g. different learning rates
    for different parameters)."""

    def __init__(self, *optimizers):
        self.optimizers = list(optimizers)
        self.params = [p for o in self.optimizers for p in o.params]

    def __getitem__(self, i):
        """The i-th optimizer."""
        return self.optimizers[i]

    def zero_grad(self):
        """Clears every optimizer's gradients."""
        for o in self.optimizers:
            o.zero_grad()

    def step(self):
        """Steps every optimizer, in order."""
        for o in self.optimizers:
            o.step()

    def schedule_step(self):
        """Every optimizer's schedule_step(), concatenated."""
        return [t for o in self.optimizers for t in o.schedule_step()]
