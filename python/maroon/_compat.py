"""tinygrad names that live on Python objects rather than in the engine: the struct format of
each dtype (`DType.fmt`, which tinygrad's helpers such as `_to_np_dtype` read)."""
from ._maroon import DType

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
