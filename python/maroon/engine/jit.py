"""tinygrad.engine.jit: TinyJit (maroon.jit)."""
from ..jit import TinyJit  # noqa: F401

__all__ = ["TinyJit"]
