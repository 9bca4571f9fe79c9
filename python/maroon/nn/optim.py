"""tinygrad's optimizers with its exact update formulas (maroon::optim)."""
from .._maroon.nn import optim as _optim

SGD = _optim.SGD
Adam = _optim.Adam
