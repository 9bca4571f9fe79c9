"""tinygrad names that live on Python objects rather than in the engine: the struct format of
each dtype (`DType.fmt`, which tinygrad's helpers such as `_to_np_dtype` read), its min and max,
and `Tensor.is_param` (which tensors tinygrad's optimizers train)."""
from ._maroon import DType, Tensor

_FMT = {DType.bool: "?", DType.int8: "b", DType.uint8: "B", DType.int16: "h", DType.uint16: "H", DType.int32: "i",
        DType.uint32: "I", DType.int64: "q", DType.uint64: "Q", DType.float16: "e", DType.float32: "f",
        DType.float64: "d"}


def _fmt(self):
    """The dtype's `struct` format character (None for bfloat16, which has none), as tinygrad's."""
    return _FMT.get(self)


DType.fmt = property(_fmt)


def _min(self):
    """The smallest value of the dtype: -inf for floats, False for bool (tinygrad's `dtype.min`)."""
    if self.is_int():
        return 0 if self.is_unsigned() else -2 ** (self.bitsize - 1)
    return -float("inf") if self.is_float() else False


def _max(self):
    """The largest value of the dtype: inf for floats, True for bool (tinygrad's `dtype.max`)."""
    if self.is_int():
        return 2 ** self.bitsize - 1 + _min(self)
    return float("inf") if self.is_float() else True


DType.min = property(_min)
DType.max = property(_max)


# tinygrad's Tensor.is_param: whether an optimizer trains the tensor (nn.optim.Optimizer keeps the
# others as buffers). True unless is_param_(False) was called. The engine's Tensor object has no
# Python attributes, so the tensors marked False are kept here by their state (hash(t), shared by
# every handle of the same tensor); holding them keeps each key's tensor alive, so no key is
# reused while it is in the table (the cost: a marked tensor is never freed).
_NOT_PARAMS = {}


def _is_param(self):
    """Whether an optimizer given this tensor trains it (tinygrad's Tensor.is_param)."""
    return hash(self) not in _NOT_PARAMS


def _set_is_param(self, value):
    if value:
        _NOT_PARAMS.pop(hash(self), None)
    else:
        _NOT_PARAMS[hash(self)] = self


def _is_param_(self, is_param=True):
    """Marks whether optimizers train this tensor (False: a buffer) and returns it, as tinygrad's."""
    _set_is_param(self, is_param)
    return self


Tensor.is_param = property(_is_param, _set_is_param)
Tensor.is_param_ = _is_param_
