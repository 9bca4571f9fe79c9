"""ONNX import: ``maroon.onnx.load(path)`` returns an ``OnnxModel`` whose ``run`` takes numpy arrays
or Tensors (a list in the model's input order, or a dict by input name) and returns Tensors with
Maroon's bits, the same on every machine (``docs/onnx.md``). ``maroon.inference_digest(outputs)``
is the digest ``maroon onnx run`` prints.

Repeated runs with the same input shapes and dtypes are replayed (as ``TinyJit`` replays a step):
the first builds the graph, the second is captured, later ones run the captured kernels on the new
inputs, with the same bits and without rebuilding or planning. Models that decide anything from
their inputs' values on the host (a shape given as an input, an index check, ``If``) never replay.
``model.replay = False`` turns it off (a replayed output has no gradient path back into the
inputs); ``model.run_stats()`` counts plain runs, captures, replays and refusals."""
from ._maroon import OnnxModel, onnx_load as load  # noqa: F401

__all__ = ["load", "OnnxModel"]
