"""tinygrad's optimizers with its exact update formulas (maroon::optim)."""
from .._maroon.nn import optim as _optim

Optimizer = _optim.Optimizer
SGD = _optim.SGD
LARS = _optim.LARS
LAMB = _optim.LAMB
Adam = _optim.Adam
AdamW = _optim.AdamW
