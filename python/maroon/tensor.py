"""tinygrad.tensor's module path (`from tinygrad.tensor import Tensor`, as tinygrad's extra/ and
examples/ write it): Maroon's Tensor."""
from ._maroon import Tensor  # noqa: F401

__all__ = ["Tensor"]
