"""maroon.verify from a Python training loop: every step committed, exact resume from any
checkpoint, the record's Merkle root and checkpoints checked with hashlib alone, verify, a
perturbed run bisected to its step and tensor, maroon.trace, and examples/beautiful_mnist.py."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import maroon
from maroon import Context, Tensor, nn, verify
from maroon.nn.optim import Adam
from maroon.nn.state import get_parameters

STEPS, EVERY, BAD = 6, 2, 4
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class Model:
    def __init__(self):
        self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 4)

    def __call__(self, x):
        return self.l2(self.l1(x).relu())


class Loop:
    """tinygrad's beautiful_mnist loop in miniature: batches drawn with Tensor.randint, so the
    random stream is part of the state."""

    def __init__(self, flip_at=None):
        Tensor.manual_seed(3)
        self.model = Model()
        self.opt = Adam(get_parameters(self.model), lr=0.01)
        rng = np.random.default_rng(0)
        self.x = Tensor(rng.standard_normal((64, 16)).astype(np.float32))
        self.y = Tensor(rng.integers(0, 4, 64).astype(np.int32))
        self.flip_at = flip_at

    def step(self, k):
        with Context(TRAINING=1):
            self.opt.zero_grad()
            samples = Tensor.randint(8, high=64)
            loss = self.model(self.x[samples]).sparse_categorical_crossentropy(self.y[samples]).backward()
            self.opt.step()
        if k == self.flip_at:
            verify.flip_bit(self.model.l2.weight, 5, 30)
        return loss

    def run(self, record, **kw):
        r = verify.Run(record, self.model, self.opt, steps=STEPS, checkpoint_every=EVERY,
                       job={"name": "pytest-loop", "config": {"batch": 8}}, **kw)
        return r.train(self.step)

    def program(self):
        return verify.program(self.model, self.opt, self.step)


def mth(leaves):
    """RFC 9162's Merkle tree hash, from its definition."""
    if len(leaves) == 1:
        return hashlib.sha256(b"\0" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\1" + mth(leaves[:k]) + mth(leaves[k:])).digest()


@pytest.fixture()
def honest(tmp_path):
    return Loop().run(tmp_path / "a.run.json"), tmp_path


def test_record_root_and_checkpoints_check_with_hashlib_alone(honest):
    rec, d = honest
    assert len(rec["states"]) == STEPS + 1
    assert mth([bytes.fromhex(s) for s in rec["states"]]).hex() == rec["merkle_root"]
    on_disk = json.load(open(d / "a.run.json"))
    assert on_disk["format"] == "maroon-run/3" and on_disk["merkle_root"] == rec["merkle_root"]
    assert [c[0] for c in rec["checkpoints"]] == [0, 2, 4, 6]
    for step, path in rec["checkpoints"]:
        data = open(d / path, "rb").read()
        assert hashlib.sha256(data).hexdigest() == rec["states"][step]
        header = json.loads(data[8:8 + int.from_bytes(data[:8], "little")])
        assert list(header) == sorted(header) and "__metadata__" not in header
        assert {"model.l1.weight", "optim.m.l2.bias", "rng.counter", "run.step"} <= set(header)


@pytest.mark.parametrize("at", [0, 2, 4])
def test_resume_from_any_checkpoint_is_exact(honest, at):
    rec, d = honest
    again = Loop().run(d / f"from{at}.run.json", resume=str(d / f"a.ckpt/step-{at:09d}.safetensors"),
                       resume_record=d / "a.run.json")
    assert again["states"] == rec["states"]
    assert again["merkle_root"] == rec["merkle_root"]


def test_verify_replays_the_python_loop_and_catches_a_flipped_bit(honest):
    rec, d = honest
    report = verify.verify_run(d / "a.run.json", Loop().program())
    assert report["verified"] and report["steps_replayed"] == STEPS, report
    ck = d / "a.ckpt/step-000000002.safetensors"
    data = bytearray(open(ck, "rb").read())
    data[-40] ^= 1
    open(ck, "wb").write(bytes(data))
    report = verify.verify_run(d / "a.run.json", replay=False)
    assert not report["verified"]
    assert str(ck) in report["differences"][0] and "(step 2)" in report["differences"][0]


def test_bisect_localises_a_flipped_parameter_bit(honest):
    rec, d = honest
    Loop(flip_at=BAD).run(d / "b.run.json")
    r = verify.bisect(d / "a.run.json", d / "b.run.json", Loop().program(), Loop(flip_at=BAD).program())
    assert r["step"] == BAD
    assert r["state_tensor"] == "model.l2.weight"
    assert r["referee_says"] == "a"
    assert r["step_replays"] <= (BAD - 1) % EVERY + 2
    assert any(line.startswith(f"verdict: b is wrong at step {BAD}") for line in r["lines"])


def test_trace_names_every_node_and_hashes_computed_outputs():
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = (x * 2 + 1).sum(1)
    t = maroon.trace(lambda: y.realize())
    ops = [n["op"] for n in t.nodes]
    assert "BUFFER" in ops and "MUL" in ops and "REDUCE" in ops
    reduce_node = [n for n in t.nodes if n["op"] == "REDUCE"][-1]
    assert reduce_node["sha256"] == hashlib.sha256(y.numpy().tobytes()).hexdigest()
    assert all(s < i for i, n in enumerate(t.nodes) for s in n["src"])
    assert json.loads(t.json())["format"] == "maroon-trace/1"


def test_bad_files_raise_value_errors_naming_them(tmp_path):
    p = tmp_path / "x.run.json"
    p.write_text("{\"format\": \"maroon-run/3\"")
    with pytest.raises(ValueError, match="x.run.json"):
        verify.read_record(p)
    c = tmp_path / "c.safetensors"
    c.write_bytes(b"\x10\0\0\0\0\0\0\0{}")
    with pytest.raises(ValueError, match="c.safetensors"):
        verify.read_checkpoint(c)


def test_beautiful_mnist_example_commits_every_step_and_verifies(tmp_path):
    """tinygrad's example on maroon.verify.Run, 2 steps of batch 8 on real MNIST, then replayed.
    The record names its data by file name, at its absolute path, so it verifies from any
    directory and its job digest does not depend on where the data is kept."""
    assert os.path.exists(os.path.join(ROOT, "data", "mnist", "train-images-idx3-ubyte")), \
        "no MNIST: run bash tools/fetch_mnist.sh"
    env = dict(os.environ, STEPS="2", BS="8", EVERY="1", EVAL="0", VERIFY="1", OUT=str(tmp_path / "bm.run.json"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "beautiful_mnist.py")], env=env,
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified (2 steps replayed" in r.stdout, r.stdout
    data = json.load(open(tmp_path / "bm.run.json"))["job"]["data"]
    assert [d["name"] for d in data] == ["train-images-idx3-ubyte", "train-labels-idx1-ubyte"]
    assert all(os.path.isabs(d["path"]) and os.path.exists(d["path"]) for d in data)
    report = verify.verify_run(tmp_path / "bm.run.json", replay=False)
    assert report["verified"] and report["files_checked"] == 6, report
