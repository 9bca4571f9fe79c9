"""tinygrad's nn layers over Maroon's C++ ones (maroon::nn)."""
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

from . import datasets, optim, state  # noqa: E402,F401
