"""ONNX import: ``maroon.onnx.load(path)`` returns an ``OnnxModel`` whose ``run`` takes numpy arrays
or Tensors (a list in the model's input order, or a dict by input name) and returns Tensors with
Maroon's bits, the same on every machine (``docs/onnx.md``). ``maroon.inference_digest(outputs)``
is the digest ``maroon onnx run`` prints."""
from ._maroon import OnnxModel, onnx_load as load  # noqa: F401

__all__ = ["load", "OnnxModel"]
