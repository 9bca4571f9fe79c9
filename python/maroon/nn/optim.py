"""tinygrad's optimizers with its exact update formulas (maroon::optim)."""
from .._maroon.nn import optim as _optim

Optimizer = _optim.Optimizer


def _trains_params(engine_cls):
    """engine_cls taking tinygrad's parameter list: the tensors whose is_param is False
    (Tensor.is_param_(False)) are not trained but kept in .buffers, and duplicates count once,
    as in tinygrad's Optimizer."""

    class Trains(engine_cls):
        __doc__ = engine_cls.__doc__

        def __init__(self, params, *args, **kwargs):
            unique = list({hash(p): p for p in params}.values())
            trained = [p for p in unique if p.is_param]
            super().__init__(trained, *args, **kwargs)
            self.buffers = [p for p in unique if not p.is_param]

    Trains.__name__ = Trains.__qualname__ = engine_cls.__name__
    return Trains


SGD = _trains_params(_optim.SGD)
LARS = _trains_params(_optim.LARS)
LAMB = _trains_params(_optim.LAMB)
Adam = _trains_params(_optim.Adam)
AdamW = _trains_params(_optim.AdamW)


def _buffers(opt):
    """The optimizer's state tensors (momentum buffers; Adam's moments and b1^t, b2^t)."""
    if isinstance(opt, _optim.LAMB):
        return [opt.b1_t, opt.b2_t, *opt.m, *opt.v]
    return list(getattr(opt, "b", []))


def _schedule_step(self):
    """tinygrad's Optimizer.schedule_step: applies one update (as step()) and returns the tensors
    it changed (state buffers, then the parameters), so `Tensor.realize(*opt.schedule_step(),
    loss)` works as in tinygrad. Maroon's optimizer assigns each update as it is made, so they are
    realized already; realizing them again costs nothing and changes no bit."""
    self.step()
    return _buffers(self) + list(self.params) + list(getattr(self, "buffers", []))


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
