"""Docstrings of maroon._maroon.verify, the compiled half of maroon.verify (verifiable runs:
docs/verify.md). maroon/verify.py wraps most of these for a Python model; the wrappers say the
same in their own docstrings."""
from .tensor_shape import _doc

_SAME = "Integer arithmetic and SHA-256 over bytes the spec defines: the same on every machine."
_STRICT = "A malformed file raises ValueError naming the file and what is wrong."
_STATE = ["model: a dict name -> Tensor (``nn.state.get_state_dict``) or an object with a ``state_dict``.",
          "optimizer: the optimizer whose moments, products and lr are part of the state, or None.",
          "sampler: the ``EpochSampler`` the data order comes from, or None.",
          "random: whether the Threefry stream (``Tensor.manual_seed``) is part of the state.",
          "extra: a dict name -> Tensor of anything else a step reads, or None."]

DOCS = {
    "verify.trace": _doc("Runs ``fn()`` with every realized node traced: a ``Trace`` of each node's op, dtype, "
                         "shape, rounding mode, sources and the SHA-256 of its output, in schedule order.",
                         ["fn: a function of no arguments."],
                         "Tracing realizes every node on its own and changes no bits: a trace is the same on "
                         "every backend, SIMD target and thread count.",
                         "t = maroon.trace(lambda: (Tensor([1.0, 2.0]) * 2).realize())",
                         "[n['op'] for n in t.nodes]"),
    "verify.read_trace": _doc("A trace file (``maroon-trace/1``, ``Trace.save``, ``maroon trace``) read back.",
                              ["path: the file."], _STRICT),
    "verify.Trace": ("A per-node trace (docs/verify.md §6): ``nodes`` (dicts: op, dtype, shape, round, arg, src, "
                     "label, sha256), ``step`` and ``state_out`` for a run's step; ``json()``, ``save(path)``."),
    "verify.Trace.json": _doc("The trace as its ``maroon-trace/1`` JSON text.", [], _SAME),
    "verify.Trace.save": _doc("Writes the trace to ``path`` atomically (a temporary file, then a rename).",
                              ["path: the file."], ""),
    "verify.Trace.step": "The run's step this trace is of (0 for ``trace(fn)``).",
    "verify.Trace.nodes": "Every node, in schedule order: dicts with op, dtype, shape, round, arg, src, label, sha256.",
    "verify.Trace.state_out": "For a run's step: each state tensor after it, its SHA-256 and the node that computed it.",
    "verify.Run": ("Commits a training loop's full state after every step, writes checkpoints and the run record, "
                   "and resumes exactly: ``begin()``, then a step and ``commit(loss)`` until ``step == "
                   "total_steps``, then ``finish()``. ``maroon.verify.Run`` wraps it for a Python model."),
    "verify.Run.begin": _doc("Starts the run: commits the initial state (or, resuming, restores the checkpoint "
                             "and checks it against the record).", [], _SAME),
    "verify.Run.commit": _doc("Commits the state after the step just taken, with its loss; writes a checkpoint "
                              "at the interval.", ["loss: a float, a 1-element Tensor or None."], _SAME),
    "verify.Run.finish": _doc("Writes the complete record (every commitment, the Merkle root, the outputs' "
                              "digests, the claims, the seal) and returns it as a dict.",
                              ["outputs: name -> path of files the run wrote (hashed into the record).",
                               "claims: name -> text the run claims (``test_accuracy``)."], _SAME),
    "verify.Run.commitments": _doc("Every state commitment so far, as hex (waits for the background hasher).",
                                   [], _SAME),
    "verify.Run.step": "The steps done so far.",
    "verify.Run.total_steps": "The run's total steps.",
    "verify.Program": ("What a party runs, for ``verify_run``, ``bisect`` and ``trace_step``: the objects its "
                       "steps change and ``step(k) -> loss``."),
    "verify.verify_run": _doc("Checks a run record, every file it names or is given and, with a program, every "
                              "step replayed. Returns ``{'verified', 'differences', 'files_checked', "
                              "'steps_replayed'}``.",
                              ["record: the ``.run.json``.", "program: a ``Program``, or None for no replay.",
                               "replay: whether to replay the steps.", "data_dir: where this machine keeps the "
                               "job's data files.", "files: more files to check against the record."], _STRICT),
    "verify.bisect": _doc("Finds the first step whose committed states differ (by the Merkle trees), replays "
                          "it on the agreed state with each side's program, names the first node or state tensor "
                          "that differs and says which side the reference executor supports. Returns a dict.",
                          ["record_a, record_b: two records of the same job.",
                           "program_a, program_b: each side's ``Program``."], _STRICT),
    "verify.trace_step": _doc("Step ``step`` of a recorded run, every node traced, the state before it loaded "
                              "from the nearest checkpoint and replayed.",
                              ["record: the ``.run.json``.", "program: a ``Program``.", "step: 1-based."], _STRICT),
    "verify.EpochSampler": ("The data order of docs/verify.md §1.1: ``next()`` is the next batch's sample "
                            "indices, each epoch a shuffle of the samples from the seed."),
    "verify.EpochSampler.next": _doc("The next batch's sample indices.", [], _SAME,
                                     "maroon.verify.EpochSampler(10, 4, 0).next()"),
    "verify.EpochSampler.position": "How many batches have been drawn.",
    "verify.EpochSampler.epoch": "The epoch the next batch is from.",
    "verify.EpochSampler.batches_per_epoch": "``samples // batch``: the last partial batch is dropped.",
    "verify.capture": _doc("The run state of these objects, as a dict name -> Tensor (docs/verify.md §1).",
                           _STATE + ["step: the steps done.", "job: the job digest, hex."], _SAME),
    "verify.state_commitment": _doc("The state commitment: the SHA-256 of the state's canonical safetensors "
                                    "serialisation, hex.", ["state: a dict name -> Tensor."], _SAME),
    "verify.read_checkpoint": _doc("A checkpoint read strictly: (state dict, its commitment).", ["path: the file."],
                                   _STRICT),
    "verify.read_record": _doc("A run record (``maroon-run/3``) read strictly, as a dict.", ["path: the file."],
                               _STRICT),
    "verify.merkle_root": _doc("The RFC 9162 Merkle tree hash over a list of commitments (hex).",
                               ["commitments: 64-hex-digit strings."], _SAME,
                               "maroon.verify.merkle_root([])"),
    "verify.graph_digest": _doc("The architecture digest of the graph that computes ``outputs``, computing "
                                "nothing: ops, dtypes, shapes, rounding modes, arguments and the leaves' names.",
                                ["outputs: tensors.", "leaves: a dict name -> Tensor naming the leaves, or None."],
                                _SAME),
    "verify.tensor_digest": _doc("The SHA-256 of a tensor's elements (row-major, little-endian), hex.",
                                 ["tensor: the tensor."], _SAME,
                                 "maroon.verify.tensor_digest(Tensor([1.0]))[:16]"),
    "verify.flip_bit": _doc("Flips one bit of one element of a realized tensor in place: a fault injected for "
                            "tests and demonstrations.", ["tensor: the tensor.", "element: the flat index.",
                                                          "bit: 0 is the lowest."], ""),
}
