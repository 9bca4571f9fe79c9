"""tinygrad's nn.state: walking objects for their tensors, loading state dicts, safetensors.

The walk over Python objects is tinygrad's get_state_dict (it needs Python's attributes); the
checks, assignment and the file format are the C++ engine's (maroon::nn).
"""
import os
from collections import OrderedDict

from .. import Tensor
from .._maroon.nn import Module as _Module
from .._maroon.nn import state as _state
from .torch_load import torch_load  # noqa: F401 (tinygrad's nn.state.torch_load)

safe_save_bytes = _state.safe_save_bytes
safe_load_bytes = _state.safe_load_bytes


def get_state_dict(obj, prefix="", tensor_type=Tensor):
    """Every Tensor reachable from `obj` (attributes, lists, tuples, dicts, Maroon layers) by its
    dotted name, as tinygrad names them ("l1.weight", "layers.0.bias")."""
    if isinstance(obj, tensor_type):
        return {prefix.strip("."): obj}
    if isinstance(obj, _Module):  # a C++ layer: its own names
        return {f"{prefix}{k}": v for k, v in obj.state_dict().items()}
    if hasattr(obj, "_asdict"):
        return get_state_dict(obj._asdict(), prefix, tensor_type)
    if isinstance(obj, OrderedDict):
        return get_state_dict(dict(obj), prefix, tensor_type)
    if hasattr(obj, "__dict__"):
        return get_state_dict(obj.__dict__, prefix, tensor_type)
    state_dict = {}
    if isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            state_dict.update(get_state_dict(x, f"{prefix}{i}.", tensor_type))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            state_dict.update(get_state_dict(v, f"{prefix}{k}.", tensor_type))
    return state_dict


def get_parameters(obj):
    """The tensors an optimizer trains: every state tensor, except the running statistics of
    Maroon's BatchNorm layers (their parameters() leaves them out)."""
    if isinstance(obj, _Module):
        return list(obj.parameters())
    if isinstance(obj, (list, tuple)):
        return [p for o in obj for p in get_parameters(o)]
    if isinstance(obj, dict):
        return [p for o in obj.values() for p in get_parameters(o)]
    if isinstance(obj, Tensor):
        return [obj]
    if hasattr(obj, "__dict__"):
        return get_parameters(obj.__dict__)
    return []


def load_state_dict(model, state_dict, strict=True, verbose=True, consume=False, realize=True):
    """Assigns each tensor of `state_dict` into the model's tensor of the same name (shapes and
    dtypes must match; strict: every model key must be present). Returns the loaded tensors."""
    loaded = _state.load_state_dict(get_state_dict(model), state_dict, strict)
    if consume:
        for k in list(get_state_dict(model)):
            state_dict.pop(k, None)
    return loaded


def safe_save(tensors, fn, metadata=None, *, checksum=False):
    """Writes a .safetensors file (tinygrad's and Hugging Face's format), atomically: the old
    file stays whole until the new one is complete. checksum=True stores the SHA-256 of the data
    in the metadata ("maroon.data_sha256"), which safe_load then verifies."""
    _state.safe_save(tensors, os.fspath(fn), metadata, checksum=checksum)


def safe_load_metadata(fn):
    """The "__metadata__" of a .safetensors file (str or path-like) as a dict."""
    return _state.safe_load_metadata(os.fspath(fn))


def safe_load(fn):
    """Reads a .safetensors file into {name: Tensor}; a malformed file raises ValueError."""
    if isinstance(fn, Tensor):
        return _state.safe_load_bytes(fn.numpy().tobytes())
    return _state.safe_load(os.fspath(fn))
