"""Verifiable runs from Python: commit a training loop's full state after every step, write
checkpoints and a run record, resume exactly, verify a record and bisect two runs to the step and
the node where they part (docs/verify.md). The work is the C++ library's (maroon._maroon.verify);
this module finds a Python model's tensors and names them as tinygrad's get_state_dict does.

    run = Run("runs/bm.run.json", model, opt, steps=70, job={"name": "beautiful_mnist"})
    record = run.train(train_step)          # train_step(k) -> loss; commits after each step
    verify_run("runs/bm.run.json", program(model, opt, train_step))
"""
import os
import sys

from ._maroon import verify as _v
from .nn.state import get_state_dict

EpochSampler = _v.EpochSampler
Trace = _v.Trace
trace = _v.trace


def read_trace(path):
    """A trace file (maroon-trace/1) read back (ValueError naming the file when it is malformed)."""
    return _v.read_trace(os.fspath(path))


def read_record(path):
    """The run record as a dict (ValueError naming the file when it is malformed)."""
    return _v.read_record(os.fspath(path))


def read_checkpoint(path):
    """(state dict, its commitment) of a checkpoint (ValueError naming the file when it is bad)."""
    return _v.read_checkpoint(os.fspath(path))

state_commitment = _v.state_commitment
merkle_root = _v.merkle_root
tensor_digest = _v.tensor_digest
flip_bit = _v.flip_bit


def architecture_digest(model, example_input):
    """The graph digest of model(example_input), its state naming the leaves: the same model code
    gives the same digest, whatever the weights' values."""
    return _v.graph_digest([model(example_input)], get_state_dict(model))


def program(model, optimizer, step, sampler=None, extra=None):
    """What a party runs: `step(k)` performs step k (1-based) on `model` and `optimizer` and returns
    its loss (a float, a Tensor or None)."""
    return _v.Program(get_state_dict(model), optimizer, sampler, True, extra, step)


class Run:
    """Commits every step of a loop: begin(), then step and commit(loss) until step ==
    total_steps, then finish(). train(step) does all of it."""

    def __init__(self, record, model, optimizer=None, steps=1, checkpoint_every=0, job=None, sampler=None,
                 extra=None, resume="", resume_record="", background=True):
        job = dict(job or {})
        job.setdefault("name", type(model).__name__)
        self.model, self.optimizer, self.sampler = model, optimizer, sampler
        self._run = _v.Run(job, get_state_dict(model), optimizer, sampler, True, extra, os.fspath(record), steps,
                           checkpoint_every, " ".join(sys.argv), resume, os.fspath(resume_record) if resume_record else "",
                           background)

    @property
    def step(self):
        """The steps done so far."""
        return self._run.step

    @property
    def total_steps(self):
        """The run's total steps."""
        return self._run.total_steps

    def begin(self):
        """Commits the initial state (or, resuming, restores and checks the checkpoint)."""
        self._run.begin()

    def commit(self, loss=None):
        """Commits the state after the step just taken, with its loss (float, Tensor or None)."""
        self._run.commit(loss)

    def finish(self, outputs=None, claims=None):
        """Writes the record; outputs: {name: path} of files the run wrote (hashed into it)."""
        return self._run.finish({k: os.fspath(v) for k, v in (outputs or {}).items()},
                                {k: str(v) for k, v in (claims or {}).items()})

    def commitments(self):
        """Every state commitment so far, as hex."""
        return self._run.commitments()

    def train(self, step, outputs=None, claims=None):
        """begin(); step(k) then commit its loss for every remaining k; finish()."""
        self.begin()
        while self.step < self.total_steps:
            self.commit(step(self.step + 1))
        return self.finish(outputs, claims)


def verify_run(record, prog=None, replay=True, data_dir="", files=()):
    """Checks the record, every file it names and (with a program) every step, replayed. Returns
    {"verified": bool, "differences": [...], ...}."""
    return _v.verify_run(os.fspath(record), prog, replay, data_dir, [os.fspath(f) for f in files])


def bisect(record_a, record_b, program_a, program_b):
    """The first step whose committed states differ, the first node (or state tensor) of that step
    that differs, and which side the reference executor supports. Returns a dict."""
    return _v.bisect(os.fspath(record_a), os.fspath(record_b), program_a, program_b)


def trace_step(record, prog, step):
    """Step `step` of a recorded run, every node traced (the state before it from checkpoints)."""
    return _v.trace_step(os.fspath(record), prog, step)


__all__ = ["Run", "EpochSampler", "Trace", "trace", "trace_step", "program", "verify_run", "bisect",
           "architecture_digest", "read_record", "read_trace", "read_checkpoint", "state_commitment", "merkle_root",
           "tensor_digest", "flip_bit"]
