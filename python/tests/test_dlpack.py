"""__dlpack__ next to __array__: numpy and PyTorch take a Maroon tensor's realized bytes (as numpy()
exposes them, no further copy), with the
same bits, and the buffer outlives the tensor as long as the consumer holds it."""
import numpy as np
import pytest
import torch

from maroon import Tensor


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int32", "int64"])
def test_numpy_from_dlpack_same_bits_no_copy(dtype):
    t = Tensor(np.arange(-6, 6).reshape(3, 4).astype(dtype))
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (3, 4)
    assert a.tobytes() == t.numpy().tobytes()


def test_torch_from_dlpack_and_lifetime():
    t = Tensor([[1.5, -2.0], [0.25, 8.0]]) * 3
    x = torch.from_dlpack(t)
    del t  # the capsule keeps the realized buffer alive
    assert x.dtype == torch.float32 and x.tolist() == [[4.5, -6.0], [0.75, 24.0]]
    bf = torch.from_dlpack(Tensor([1.0, 2.0]).cast("bfloat16"))
    assert bf.dtype == torch.bfloat16 and bf.tolist() == [1.0, 2.0]


def test_device_and_errors():
    t = Tensor([1.0])
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    with pytest.raises(TypeError, match="bool"):
        t.eq(1.0).__dlpack__()
    with pytest.raises(BufferError):
        t.__dlpack__(stream=1)
