"""Docstrings of the extension module's functions, DType and the Tensor class itself
(maroon/_docs/__init__.py attaches them)."""
from .tensor_shape import _doc

_SPEED = "Speed only: every choice gives the same bits (tests/cpu proves it)."

DOCS = {
    "set_backend": _doc("Chooses the executor: 'cpu' (SIMD, fusion, threads; the default) or 'ref' (the "
                        "scalar reference executor, the oracle).", ["name: 'cpu' or 'ref'."], _SPEED,
                        "maroon.set_backend('ref'); maroon.backend()", "maroon.set_backend('cpu')"),
    "backend": _doc("The executor in use: 'cpu' or 'ref'.", [], _SPEED, "maroon.backend()"),
    "set_num_threads": _doc("The CPU backend's worker threads (default: MAROON_THREADS, else all cores).",
                            ["n: at least 1."], _SPEED, "n = maroon.num_threads()",
                            "maroon.set_num_threads(1); maroon.num_threads()", "maroon.set_num_threads(n)"),
    "num_threads": _doc("The CPU backend's worker threads.", [], _SPEED, "maroon.num_threads() >= 1"),
    "available_simd_targets": _doc("The SIMD targets this CPU and build can run, e.g. ['scalar', 'sse4', "
                                   "'avx2', 'avx512'].", [], _SPEED, "'scalar' in maroon.available_simd_targets()"),
    "simd_target": _doc("The SIMD target in use (default: MAROON_SIMD, else the best available).", [], _SPEED,
                        "maroon.simd_target() in maroon.available_simd_targets()"),
    "set_simd_target": _doc("Forces a SIMD target (one of ``available_simd_targets()``).", ["name: the target."],
                            _SPEED, "maroon.set_simd_target('scalar'); maroon.simd_target()",
                            "maroon.set_simd_target(maroon.available_simd_targets()[-1])"),
    "set_fused": _doc("Whether matmul, dot, linear and conv2d called without ``fused=`` use the fused matmul "
                      "(REDUCE_MULACC: exact fused multiply-adds in increasing k) on this thread, as do ONNX models' "
                      "MatMul, Gemm and Conv (``maroon.onnx``). Off by default; the engine never chooses it.", ["on: True or False."],
                      "Each choice has its own exact bits, the same on every machine.",
                      "maroon.set_fused(True); maroon.fused()", "maroon.set_fused(False)"),
    "fused": _doc("Whether this thread's matmuls are fused by default (``set_fused``).", [], "", "maroon.fused()"),
    "settings": _doc("Every MAROON_* setting (``include/maroon/settings.def``, the README's table): a list of "
                     "dicts with its name, default, allowed values, doc and current value.", [],
                     "Settings choose speed, paths and limits; none changes a result's bits.",
                     "'MAROON_THREADS' in [s['name'] for s in maroon.settings()]"),
    "get_setting": _doc("The current value of one MAROON_* setting, as text.", ["name: e.g. 'MAROON_THREADS'."],
                        "An unknown name raises an error that lists the known ones.", "maroon.get_setting('MAROON_SIMD') != None"),
    "set_setting": _doc("Sets one MAROON_* setting for this process, checked as its environment variable is.",
                        ["name: the setting.", "value: its new value, as text."],
                        "A bad value raises an error naming the setting and the values it takes.",
                        "n = maroon.get_setting('MAROON_THREADS')"),
    "counters": _doc("The engine's counters, as ``maroon.GlobalCounters`` reads them (tinygrad's): a dict of "
                     "kernel_count (kernels executed; a fused chain is one, views none), global_ops (elements "
                     "computed per op, a matmul 2*M*K*N), global_mem (bytes: each kernel's output and the inputs "
                     "it reads), time_sum_s (seconds inside kernels, timed once the counters have been read or "
                     "reset in the process, or at MAROON_DEBUG >= 2) and mem_used (bytes of live buffers).", [],
                     "Estimates for profiling; counting never changes a bit.",
                     "maroon._maroon.counters()['kernel_count'] >= 0"),
    "reset_counters": _doc("Zeroes the counters but mem_used (``GlobalCounters.reset()``).", [], "",
                           "maroon._maroon.reset_counters()"),
    "least_upper_dtype": _doc("The dtype two dtypes promote to (tinygrad's lattice).", ["arg0, arg1: dtypes."],
                              "", "maroon._maroon.least_upper_dtype(dtypes.int8, dtypes.float16)"),
    "sum_acc_dtype": _doc("The dtype ``sum`` accumulates a dtype in (tinygrad's rule).", ["arg0: a dtype."], "",
                          "maroon._maroon.sum_acc_dtype(dtypes.int8)"),
    "load_model": _doc("A Maroon weights file (.safetensors of the MNIST MLP or CNN) loaded for ``infer``.",
                       ["path: the file."], "The model's ``sha256`` is the file's, as the inference record "
                       "names it.", ),
    "infer": _doc("Runs a model on images and returns their digest, classes, outputs and the JSON document "
                  "``maroon infer --json`` prints (``docs/spec-model.md`` defines the input conversion and the "
                  "digest).", ["model: a path or a ``maroon.Model``.", "input: a file (idx, npy or raw, by name "
                  "or ``format=``), raw uint8 pixel bytes, or a numpy array (uint8 pixels or float32).",
                  "format: 'idx', 'npy' or 'raw' when the name does not say.", "start, count: which images."],
                  "The digest is the same from the CLI, Python, C++ and C, on every machine."),
    "inference_digest": _doc("The inference digest of a list of output tensors (``docs/spec-model.md``).",
                             ["outputs: the tensors."], "SHA-256 over their dtype, shape and bytes, as the spec "
                             "defines: the same everywhere.", "len(maroon.inference_digest([Tensor([1.0, 2.0])]))"),
    "Model": "A loaded model for ``maroon.infer``: ``kind`` ('mlp' or 'cnn') and ``sha256`` (its file's).",
    "Model.kind": "'mlp' or 'cnn'.",
    "Model.sha256": "The SHA-256 of the weights file the model was loaded from.",
    "InferenceResult": ("What ``maroon.infer`` returns: ``digest`` (hex), ``classes`` (one per image), "
                        "``outputs`` (the logits) and ``json`` (the document ``maroon infer --json`` prints)."),
    "onnx_load": _doc("Loads an ONNX model (``maroon.onnx.load``): parsed by ONNX's protobuf classes, every node "
                      "mapped onto the Tensor API (``docs/onnx.md``), everything checkable checked at load.",
                      ["path: the .onnx file; external data is read beside it and may not leave its folder."],
                      "Raises an error naming the file, or the node and its operator, for a malformed model or an "
                      "unsupported operator; and where this build has no ONNX import."),
    "OnnxModel": ("A loaded ONNX model (``maroon.onnx.load``): ``run`` it on numpy arrays or Tensors; ``inputs``, "
                  "``outputs`` and ``opset`` describe it."),
    "OnnxModel.run": _doc("Runs the model and returns its outputs as Tensors (lazy until read), with Maroon's bits.",
                          ["inputs: a list in the model's input order, a dict by input name, or one array; each a "
                           "numpy array or a maroon.Tensor of the declared dtype."],
                          "Inputs are checked against the declared dtype, rank and fixed dimensions; symbolic "
                          "dimensions bind per run. ``maroon.inference_digest(outputs)`` is the digest "
                          "``maroon onnx run`` prints."),
    "OnnxModel.__call__": "The same as ``run``.",
    "OnnxModel.inputs": "The inputs to supply: (name, dtype name, shape) with None or the symbol for a dynamic size.",
    "OnnxModel.outputs": "The outputs: (name, dtype name, shape), in the order ``run`` returns them.",
    "OnnxModel.opset": "The default ONNX domain's opset the model imports.",
    "JitCapture": ("One captured step, the mechanism under ``maroon.TinyJit`` (``include/maroon/jit.h``): "
                   "``capture(inputs, body)`` runs ``body`` recording every schedule, the CPU plan for it and every "
                   "assign; ``replay(inputs)`` runs them again on new input tensors of the same shapes and dtypes, "
                   "with the same bits as running ``body``; ``captured``, ``schedules`` and ``kernels`` describe it."),
    "JitCapture.capture": "Realizes ``inputs``, runs ``body()`` (a list of output Tensors) recording it, realizes and returns the outputs.",
    "JitCapture.replay": ("Runs the captured step on new input tensors and returns its outputs as new Tensors "
                          "(maroon.Error naming what differs when it cannot); what an earlier call returned or left "
                          "keeps its bytes."),
    "JitCapture.captured": "Whether a step was captured.",
    "JitCapture.schedules": "How many schedules (realizations) a replay runs.",
    "JitCapture.kernels": "How many nodes a replay materializes.",
    "DType": _doc("A Maroon dtype; the names are in ``maroon.dtypes`` (``dtypes.float32``, ...).", [], "",
                  "dtypes.float16.itemsize", "dtypes.int8.is_int()"),
    "Tensor": """
A tensor: a node of a lazy graph, with tinygrad's API. Building ops computes nothing; reading the
data (``numpy``, ``tolist``, ``item``) or ``realize`` runs the graph. Every result has the same
bits on every machine, compiler, SIMD width and thread count: each op's bits are defined in
``docs/spec.md`` and every kernel is compared with the reference executor bit for bit.

Args:
    data: a Python scalar or (nested) list, a numpy array (one copy of its bytes), or a Tensor.
    dtype: a DType or a name such as 'int32' (default: tinygrad's, float32 for floats and int32
        for ints); device and requires_grad are accepted (one CPU device; every float tensor in
        a graph gets a gradient).

>>> t = Tensor([[1.0, 2.0], [3.0, 4.0]])
>>> (t @ t).tolist()
<OUT>
>>> t.dtype, t.shape
<OUT>
""",
    "Tensor.shape": "The shape, a tuple of ints.\n\n>>> Tensor.ones(2, 3).shape\n<OUT>\n",
    "Tensor.dtype": "The dtype.\n\n>>> Tensor([1, 2]).dtype\n<OUT>\n",
    "Tensor.ndim": "The number of axes.\n\n>>> Tensor.ones(2, 3).ndim\n<OUT>\n",
    "Tensor.T": "The tensor with its last two axes swapped (a view).\n\n>>> Tensor([[1, 2]]).T.tolist()\n<OUT>\n",
    "Tensor.device": "Always 'CPU' (accepted for tinygrad compatibility).\n\n>>> Tensor([1]).device\n<OUT>\n",
    "Tensor.grad": ("The gradient ``backward`` computed, or None.\n\n>>> x = Tensor([2.0])\n"
                    ">>> (x * x).sum().backward().shape\n<OUT>\n>>> x.grad.tolist()\n<OUT>\n"),
    "Tensor.requires_grad": ("Accepted for tinygrad compatibility: every float tensor in a graph gets a "
                             "gradient.\n\n>>> Tensor([1.0]).requires_grad\n<OUT>\n"),
    "Tensor.training": ("Whether training-only behaviour (dropout) is on; ``maroon.Context(TRAINING=1)`` "
                        "sets it.\n\n>>> Tensor.training\n<OUT>\n"),
    "Tensor.max_shape": ("The shape with each dimension at its largest value (tinygrad's, for symbolic shapes; "
                         "Maroon's shapes are concrete, so it is ``shape``).\n\n>>> Tensor.ones(2, 3).max_shape\n<OUT>\n"),
}
