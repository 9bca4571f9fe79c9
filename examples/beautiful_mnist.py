"""tinygrad's examples/beautiful_mnist.py on Maroon, with every step's state committed: the same
model, optimizer and loop (batches drawn with Tensor.randint), run by maroon.verify.Run, which
writes checkpoints and a run record (runs/beautiful_mnist.run.json) whose Merkle root is the same
on every machine. Then it verifies the record by replaying every step.

    .venv/bin/python examples/beautiful_mnist.py            # STEPS=70 BS=512, as tinygrad's
    STEPS=5 BS=32 VERIFY=1 .venv/bin/python examples/beautiful_mnist.py
Environment: STEPS, BS, EVERY (checkpoint interval), OUT (the record), DATA (the IDX directory),
RESUME=1 (continue an interrupted run from its newest checkpoint), VERIFY=1 (replay it after),
EVAL=0 (skip the test-set accuracy), JIT=0 (run the step function every step instead of TinyJit's
replay: the same bits, slower).
"""
import os
import sys

import numpy as np

from maroon import Context, Tensor, TinyJit, getenv, nn, verify
from maroon.nn.optim import Adam
from maroon.nn.state import get_parameters, get_state_dict, safe_save

DATA = os.environ.get("DATA", os.path.join(os.path.dirname(__file__), "..", "data", "mnist"))


def idx(name, offset):
    with open(os.path.join(DATA, name), "rb") as f:
        return np.frombuffer(f.read(), np.uint8)[offset:]


def mnist():
    """tinygrad.nn.datasets.mnist's arrays: images (N,1,28,28) uint8 and labels, from the IDX files."""
    xs = [idx(f"{s}-images-idx3-ubyte", 16).reshape(-1, 1, 28, 28) for s in ("train", "t10k")]
    ys = [idx(f"{s}-labels-idx1-ubyte", 8).astype(np.int32) for s in ("train", "t10k")]
    return xs[0], ys[0], xs[1], ys[1]


class Model:
    def __init__(self):
        self.layers = [
            nn.Conv2d(1, 32, 5), Tensor.relu,
            nn.Conv2d(32, 32, 5), Tensor.relu,
            nn.BatchNorm(32), Tensor.max_pool2d,
            nn.Conv2d(32, 64, 3), Tensor.relu,
            nn.Conv2d(64, 64, 3), Tensor.relu,
            nn.BatchNorm(64), Tensor.max_pool2d,
            lambda x: x.flatten(1), nn.Linear(576, 10)]

    def __call__(self, x):
        return x.sequential(self.layers)


def make_step(model, opt, X_train, Y_train, bs):
    """tinygrad's train_step. The batch is drawn with Tensor.randint, as there (so the random stream
    is part of the committed state), and gathered with numpy: X_train[samples] on a Tensor is a
    one-hot matmul over all 60000 images, which tinygrad fuses and Maroon's CPU backend would
    materialize. The model and optimizer part runs through TinyJit (JIT=0: without), which replays
    it from the 3rd step with the same bits; the draw stays outside it (a replay would repeat it).
    k, the step's number, is unused (a perturbed program would use it)."""
    def step(x, y):
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = model(x).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss
    step = TinyJit(step) if getenv("JIT", 1) else step

    def train_step(k):
        samples = Tensor.randint(bs, high=X_train.shape[0]).numpy()
        return step(Tensor(X_train[samples]).float() / 255, Tensor(Y_train[samples]))
    return train_step


def main():
    steps, bs, every = getenv("STEPS", 70), getenv("BS", 512), getenv("EVERY", 10)
    record = os.environ.get("OUT", "runs/beautiful_mnist.run.json")
    X_train, Y_train, X_test, Y_test = mnist()
    Tensor.manual_seed(0)
    model = Model()
    opt = Adam(get_parameters(model))
    train_step = make_step(model, opt, X_train, Y_train, bs)
    files = [{"path": os.path.join(DATA, f)} for f in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")]
    job = {"name": "beautiful_mnist", "config": {"STEPS": steps, "BS": bs, "lr": 0.001}, "data": files,
           "arch_sha256": verify.architecture_digest(model, Tensor.zeros(bs, 1, 28, 28))}
    run = verify.Run(record, model, opt, steps=steps, checkpoint_every=every, job=job,
                     resume="latest" if getenv("RESUME", 0) else "")
    run.begin()
    while run.step < run.total_steps:
        loss = train_step(run.step + 1)
        run.commit(loss)
        print(f"step {run.step:4d}  loss {loss.item():6.3f}", flush=True)
    claims = {}
    if getenv("EVAL", 1):
        acc = ((model(Tensor(X_test).float() / 255).argmax(axis=1) == Tensor(Y_test)).mean() * 100).item()
        claims["test_accuracy"] = f"{acc:.2f}"
        print(f"test accuracy {acc:.2f}%")
    weights = record.replace(".run.json", ".safetensors")
    safe_save(get_state_dict(model), weights)
    rec = run.finish({"weights": weights}, claims)
    print(f"run record    {record}\nmerkle root   {rec['merkle_root']}")
    if not getenv("VERIFY", 0):
        return 0
    # A verifier's replay: the same program built afresh from the seed, every step compared.
    Tensor.manual_seed(0)
    fresh = Model()
    fopt = Adam(get_parameters(fresh))
    report = verify.verify_run(record, verify.program(fresh, fopt, make_step(fresh, fopt, X_train, Y_train, bs)))
    print("verified" if report["verified"] else "\n".join(report["differences"]),
          f"({report['steps_replayed']} steps replayed, {report['files_checked']} files checked)")
    return 0 if report["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
