"""Maroon: tinygrad's Tensor API with every result bit-identical on every machine.

The work is done by the C++ engine (the `_maroon` extension); this file only names tinygrad's
`dtypes`.
"""
from . import _maroon
from ._maroon import (DType, available_simd_targets, num_threads, set_backend, set_num_threads,  # noqa: F401
                      set_simd_target, simd_target)


class dtypes:  # noqa: N801 (tinygrad's name)
    """tinygrad's `dtypes` namespace: dtypes.float32, dtypes.int8, ..."""


for _name, _value in DType.__members__.items():
    setattr(dtypes, _name, _value)
dtypes.float = dtypes.float32
dtypes.half = dtypes.float16
dtypes.double = dtypes.float64
dtypes.int = dtypes.int32
dtypes.default_float = dtypes.float32
dtypes.default_int = dtypes.int32


Tensor = _maroon.Tensor


__all__ = ["Tensor", "dtypes", "DType"]
