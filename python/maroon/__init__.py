"""Maroon: tinygrad's Tensor API with every result bit-identical on every machine.

All computing is done by the C++ engine (the `_maroon` extension). This file only names
tinygrad's `dtypes` namespace and the few module-level helpers a tinygrad program imports
(`Device`, `TinyJit`, `Context`, `getenv`), so switching a program means changing its import.
"""
from . import _maroon
from ._maroon import __version__  # noqa: F401 (the VERSION file, compiled into the extension)
from . import _docs

_docs.apply(_maroon)  # the compiled API's docstrings and signatures (maroon/_docs), once
from ._maroon import (DType, Tensor, available_simd_targets, backend, fused, num_threads, set_backend, set_fused,  # noqa: F401
                      set_num_threads, set_simd_target, simd_target, settings, get_setting, set_setting)
from ._maroon import InferenceResult, Model, infer, inference_digest, load_model  # noqa: F401
from . import _compat  # noqa: F401,E402 (tinygrad attributes added to the compiled classes)
from . import helpers  # noqa: E402
from .helpers import Context, GlobalCounters, getenv  # noqa: F401,E402


class dtypes:  # noqa: N801 (tinygrad's name)
    """tinygrad's `dtypes` namespace: dtypes.float32, dtypes.int8, dtypes.is_float(...), ..."""
    bool, int8, uint8, int16, uint16 = DType.bool, DType.int8, DType.uint8, DType.int16, DType.uint16
    int32, uint32, int64, uint64 = DType.int32, DType.uint32, DType.int64, DType.uint64
    float16, bfloat16, float32, float64 = DType.float16, DType.bfloat16, DType.float32, DType.float64
    char, uchar, short, ushort = int8, uint8, int16, uint16
    int, uint, long, ulong = int32, uint32, int64, uint64
    half, float, double = float16, float32, float64
    default_float, default_int = float32, int32
    floats = (float16, bfloat16, float32, float64)
    uints = (uint8, uint16, uint32, uint64)
    sints = (int8, int16, int32, int64)
    ints = uints + sints
    all = (bool,) + ints + floats

    @staticmethod
    def is_float(x):
        """Whether dtype ``x`` is a float dtype."""
        return x.is_float()

    @staticmethod
    def is_int(x):
        """Whether dtype ``x`` is an integer dtype (signed or unsigned)."""
        return x.is_int()

    @staticmethod
    def is_unsigned(x):
        """Whether dtype ``x`` is an unsigned integer dtype."""
        return x.is_unsigned()

    @staticmethod
    def is_bool(x):
        """Whether dtype ``x`` is bool."""
        return x == DType.bool

    @staticmethod
    def from_py(x):
        """The dtype tinygrad gives a Python value (nested lists: the widest element's)."""
        if isinstance(x, (list, tuple)):
            return max((dtypes.from_py(e) for e in x), key=dtypes.all.index, default=dtypes.default_float)
        if isinstance(x, __builtins__["bool"] if isinstance(__builtins__, dict) else __builtins__.bool):
            return dtypes.bool
        if isinstance(x, __builtins__["int"] if isinstance(__builtins__, dict) else __builtins__.int):
            return dtypes.default_int
        return dtypes.default_float

    @staticmethod
    def finfo(x):
        """(exponent bits, mantissa bits) of a float dtype."""
        return {DType.float16: (5, 10), DType.bfloat16: (8, 7), DType.float32: (8, 23), DType.float64: (11, 52)}[x]


class Device:
    """One device: the CPU. Every backend gives the same bits, so there is nothing to choose."""
    DEFAULT = "CPU"


from .jit import TinyJit  # noqa: E402 (tinygrad's @TinyJit: capture on the 2nd call, replay after)



def function(fxn=None, **kwargs):
    """tinygrad's ``@function`` (``precompile=``, ``grad_fxn=``, ...): there it makes the call one
    node of the graph, to compile and cache it once; values and gradients are the function's. Maroon
    builds the same graph either way, so the function is returned as it is (not a TinyJit, whose
    replays would cut the gradient off)."""
    return fxn if fxn is not None else (lambda f: f)

from . import nn  # noqa: E402
from . import verify  # noqa: E402
from .verify import trace  # noqa: E402,F401 (maroon.trace(fn): a per-node trace of fn)
from . import onnx  # noqa: E402,F401 (maroon.onnx.load)

__all__ = ["Tensor", "dtypes", "DType", "nn", "verify", "trace", "Device", "Context", "TinyJit", "getenv", "GlobalCounters",
           "infer", "inference_digest", "load_model"]
