"""Docstrings of maroon.nn's compiled layers, optimizers and state functions
(maroon/_docs/__init__.py attaches them)."""
from .tensor_shape import _doc

_INIT = "Initialised as tinygrad's layer is, from the random stream (``Tensor.manual_seed``)."
_ADAM_BITS = "The update is a fixed sequence of rounded ops (``docs/spec.md``): the same bits everywhere."

DOCS = {
    "nn.Module": "The base of the compiled layers: ``parameters()`` and ``state_dict()`` as tinygrad's.",
    "nn.Linear": _doc("A fully connected layer: ``x @ weight.T + bias``.", ["in_features, out_features: the "
                      "sizes.", "bias: whether there is a bias."], _INIT, "layer = nn.Linear(3, 2)",
                      "layer(Tensor.ones(4, 3)).shape"),
    "nn.Conv2d": _doc("A 2-d convolution layer (``Tensor.conv2d``).", ["in_channels, out_channels, kernel_size, "
                      "stride, padding, dilation, groups, bias: as torch's."], _INIT,
                      "nn.Conv2d(1, 4, 3)(Tensor.ones(1, 1, 8, 8)).shape"),
    "nn.BatchNorm": _doc("Batch normalisation with running statistics (tinygrad's BatchNorm).",
                         ["sz: channels.", "eps, affine, track_running_stats, momentum: as torch's."],
                         "Statistics are reductions in index order: the same bits everywhere.",
                         "nn.BatchNorm(2)(Tensor.ones(4, 2)).shape"),
    "nn.BatchNorm2d": _doc("BatchNorm for (N, C, H, W) inputs.", ["sz: channels."], "As BatchNorm.",
                           "nn.BatchNorm2d(3)(Tensor.ones(2, 3, 4, 4)).shape"),
    "nn.LayerNorm": _doc("Layer normalisation over the trailing ``normalized_shape``.", ["normalized_shape: "
                         "the trailing sizes.", "eps, elementwise_affine: as torch's."], "",
                         "nn.LayerNorm(4)(Tensor.ones(2, 4)).shape"),
    "nn.GroupNorm": _doc("Group normalisation.", ["num_groups, num_channels, eps, affine: as torch's."], "",
                         "nn.GroupNorm(2, 4)(Tensor.ones(1, 4, 3)).shape"),
    "nn.Embedding": _doc("A lookup table of ``vocab_size`` vectors of ``embed_size``.", ["vocab_size, embed_size: "
                         "the sizes."], _INIT, "nn.Embedding(10, 3)(Tensor([[1, 2]])).shape"),
    "nn.RMSNorm": _doc("Root-mean-square normalisation over the last axis: ``x * rsqrt(mean(x*x, -1) + eps)``, "
                       "then ``* weight`` (tinygrad's nn.RMSNorm; float16 and bfloat16 normalise in float32).",
                       ["dim: the last axis' size.", "eps, elementwise_affine: as tinygrad's."],
                       "A fixed sequence of rounded ops (``docs/spec-model.md`` §5a): the same bits everywhere.",
                       "nn.RMSNorm(2)(Tensor([[3.0, 4.0]])).tolist()"),
    "nn.precompute_freqs_cis": _doc("The rotary-embedding table ``(end, dim)``: ``cos(t*f)`` then ``sin(t*f)`` with "
                                    "``f = 1 / theta**(arange(0, dim, 2) / dim)`` (tinygrad's llm.model).",
                                    ["dim: the head size (even).", "end: positions.", "theta: the base."],
                                    "Built from POW, SIN and rounded ops (``docs/spec-model.md`` §5a).",
                                    "nn.precompute_freqs_cis(4, 3).shape"),
    "nn.apply_rope": _doc("Rotary position embedding of ``x (..., T, d)``: the halves ``x1, x2`` of the last axis "
                          "become ``[x1*cos - x2*sin, x2*cos + x1*sin]`` with rows ``0..T-1`` of the table.",
                          ["x: queries or keys, (..., T, d).", "freqs_cis: ``precompute_freqs_cis(d, >= T)``."],
                          "Four MULs and two ADDs per pair, in that order (``docs/spec-model.md`` §5a).",
                          "nn.apply_rope(Tensor.ones(1, 2, 4), nn.precompute_freqs_cis(4, 2)).shape"),
    "nn.optim.Optimizer": "The base of the optimizers: ``params``, ``lr``, ``zero_grad()`` and ``step()``.",
    "nn.optim.SGD": _doc("Stochastic gradient descent with optional momentum and weight decay.",
                         ["params: the tensors.", "lr, momentum, weight_decay, nesterov, classic: as tinygrad's."],
                         _ADAM_BITS, "Tensor.training = True  # optimizers step only in training", "w = Tensor([1.0])",
                         "opt = nn.optim.SGD([w], lr=0.5)", "(w * w).sum().backward().shape", "opt.step(); w.tolist()",
                         "Tensor.training = False"),
    "nn.optim.Adam": _doc("Adam.", ["params: the tensors.", "lr, b1, b2, eps: Adam's constants."], _ADAM_BITS,
                          "Tensor.training = True", "w = Tensor([1.0])", "opt = nn.optim.Adam([w], lr=0.1)",
                          "(w * w).sum().backward().shape", "opt.step(); w.tolist()", "Tensor.training = False"),
    "nn.optim.AdamW": _doc("Adam with decoupled weight decay.", ["params: the tensors.", "lr, b1, b2, eps, "
                           "weight_decay: the constants."], _ADAM_BITS, "nn.optim.AdamW([Tensor([1.0])]).lr.shape"),
    "nn.optim.LAMB": _doc("LAMB (Adam with a per-tensor trust ratio).", ["params: the tensors.", "lr, b1, b2, "
                          "eps, weight_decay, adam: the constants."], _ADAM_BITS,
                          "nn.optim.LAMB([Tensor([1.0])]).lr.shape"),
    "nn.optim.LARS": _doc("LARS (SGD with a layer-wise trust ratio).", ["params: the tensors.", "lr, momentum, "
                          "weight_decay, nesterov, classic, tcoef: the constants."], _ADAM_BITS,
                          "nn.optim.LARS([Tensor([1.0])]).lr.shape"),
    "nn.state.safe_save": _doc("Writes tensors to a safetensors file, byte for byte as tinygrad's safe_save "
                               "(atomically: a temporary file, then a rename).", ["tensors: name -> Tensor.",
                               "fn: the path.", "metadata: a str -> str dict, or None.",
                               "checksum: also store the SHA-256 of the data in the metadata "
                               "(``maroon.data_sha256``), which safe_load then verifies."], "",
                               "import tempfile, os; fn = os.path.join(tempfile.mkdtemp(), 'w.safetensors')",
                               "nn.state.safe_save({'w': Tensor([1.0, 2.0])}, fn)",
                               "nn.state.safe_load(fn)['w'].tolist()"),
    "nn.state.safe_load": _doc("Reads a safetensors file; a malformed one, or one whose data does not "
                               "match its ``maroon.data_sha256`` checksum, raises ValueError naming what is wrong.", ["fn: the path."], "", "nn.state.safe_load_bytes("
                               "nn.state.safe_save_bytes({'x': Tensor([3])}))['x'].tolist()"),
    "nn.state.safe_save_bytes": _doc("The safetensors bytes of ``tensors``.", ["tensors: name -> Tensor.",
                                     "metadata: a dict or None.",
                                     "checksum: add the data's SHA-256 to the metadata, as safe_save."], "",
                                     "len(nn.state.safe_save_bytes({'x': Tensor([1.0])}))"),
    "nn.state.safe_load_bytes": _doc("Tensors from safetensors bytes.", ["data: bytes."], "",
                                     "nn.state.safe_load_bytes(nn.state.safe_save_bytes({'x': Tensor([7])}))['x'].item()"),
    "nn.state.safe_load_metadata": _doc("A safetensors file's metadata.", ["fn: the path."], "",
                                        "import tempfile, os; fn = os.path.join(tempfile.mkdtemp(), 'm.safetensors')",
                                        "nn.state.safe_save({'x': Tensor([1])}, fn, {'k': 'v'})",
                                        "nn.state.safe_load_metadata(fn)"),
    "nn.state.load_state_dict": _doc("Assigns ``state_dict``'s tensors to ``into``'s (shapes must match).",
                                     ["into, state_dict: name -> Tensor.", "strict: every name must match."], "",
                                     "w = Tensor([0.0])", "_ = nn.state.load_state_dict({'w': w}, {'w': Tensor([5.0])})",
                                     "w.tolist()"),
}

for _layer in ("Linear", "Conv2d", "BatchNorm", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "RMSNorm"):
    DOCS[f"nn.{_layer}.__call__"] = f"The layer applied to ``x`` (see ``help(nn.{_layer})``)."
for _cls in ("Module", "Linear", "Conv2d", "BatchNorm", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding",
             "RMSNorm"):
    DOCS[f"nn.{_cls}.parameters"] = "The layer's trainable tensors, in tinygrad's order."
    DOCS[f"nn.{_cls}.state_dict"] = "The layer's tensors by tinygrad's names (``weight``, ``bias``, ...)."
for _opt in ("Optimizer", "SGD", "Adam", "AdamW", "LAMB", "LARS"):
    DOCS[f"nn.optim.{_opt}.step"] = "Applies one update to every parameter from its ``grad``, then realizes them."
    DOCS[f"nn.optim.{_opt}.zero_grad"] = "Clears every parameter's ``grad``."
