"""tinygrad's nn layers over Maroon's C++ ones (maroon::nn), and the few tinygrad defines in
Python over Tensor methods (1-D and transposed convolutions, InstanceNorm, LayerNorm2d)."""
import math

from .. import Tensor
from .._maroon import nn as _nn

Linear = _nn.Linear
Conv2d = _nn.Conv2d
BatchNorm = _nn.BatchNorm
BatchNorm2d = _nn.BatchNorm2d
LayerNorm = _nn.LayerNorm
GroupNorm = _nn.GroupNorm
Embedding = _nn.Embedding
RMSNorm = _nn.RMSNorm
# Rotary position embeddings (tinygrad keeps these two in tinygrad.llm.model).
precompute_freqs_cis = _nn.precompute_freqs_cis
apply_rope = _nn.apply_rope


class ConvNd:
    """tinygrad's Conv2d for a kernel of any number of dimensions (Conv1d's is ``(k,)``): weight
    ``(out, in/groups, *kernel)`` and bias ``(out,)`` drawn from ``uniform(+-1/sqrt(in*prod(kernel)))``
    in that order, as tinygrad draws them, and ``x.conv2d(...)``. nn.Conv2d is the engine's 2-D one."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        self.kernel_size = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
        if isinstance(padding, str):
            raise ValueError(f"padding {padding!r}: only integer padding is supported")
        self.stride, self.dilation, self.groups, self.padding = stride, dilation, groups, padding
        scale = 1 / math.sqrt(in_channels * math.prod(self.kernel_size))
        self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-scale, high=scale)
        self.bias = Tensor.uniform(out_channels, low=-scale, high=scale) if bias else None

    def __call__(self, x):
        """The convolution of x (batch, channels, *spatial)."""
        return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)


def Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):  # noqa: N802
    """A 1-D convolution over (batch, channels, length), as tinygrad's Conv1d (a Conv2d with a
    kernel of one dimension)."""
    return ConvNd(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)


class ConvTranspose2d(ConvNd):
    """tinygrad's ConvTranspose2d: draws the convolution's weight and bias first (as its
    ``super().__init__``), then the transposed weight ``(in, out/groups, *kernel)``; calls
    ``x.conv_transpose2d(...)``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
                 bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
        scale = 1 / math.sqrt(in_channels * math.prod(self.kernel_size))
        self.weight = Tensor.uniform(in_channels, out_channels // groups, *self.kernel_size, low=-scale, high=scale)
        self.output_padding = output_padding

    def __call__(self, x):
        """The transposed convolution of x (batch, channels, *spatial)."""
        return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding,
                                  self.output_padding)


def ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,  # noqa: N802
                    groups=1, bias=True):
    """A 1-D transposed convolution, as tinygrad's ConvTranspose1d."""
    return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation, groups, bias)


class InstanceNorm:
    """tinygrad's InstanceNorm: each (sample, channel) normalized over its spatial elements
    (``layernorm`` of the reshaped input), then the per-channel weight (ones) and bias (zeros)."""

    def __init__(self, num_features, eps=1e-5, affine=True):
        self.num_features, self.eps = num_features, eps
        self.weight = Tensor.ones(num_features) if affine else None
        self.bias = Tensor.zeros(num_features) if affine else None

    def __call__(self, x):
        """x normalized per sample and channel."""
        x = x.reshape(x.shape[0], self.num_features, -1).layernorm(eps=self.eps).reshape(x.shape)
        if self.weight is None or self.bias is None:
            return x
        return x * self.weight.reshape(1, -1, *[1] * (x.ndim - 2)) + self.bias.reshape(1, -1, *[1] * (x.ndim - 2))


class LayerNorm2d(LayerNorm):
    """tinygrad's LayerNorm2d: LayerNorm over the channels of (batch, channels, h, w)."""

    def __call__(self, x):
        """x normalized over its channel axis."""
        return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


from . import datasets, optim, state  # noqa: E402,F401
