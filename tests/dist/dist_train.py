"""The Python twin of maroon-dist-train (tests/dist/dist_train.cpp): the same models (written
here with maroon.nn as tinygrad's examples write them), the same synthetic data and schedule, and
the same output lines, so its lines must equal the C++ program's, alone or under mpirun.

    python3 tests/dist/dist_train.py STEPS BATCH MODEL:SHARDS:THREADS...
    mpirun -np R python3 -m mpi4py tests/dist/dist_train.py STEPS BATCH MODEL:SHARDS:THREADS...
"""
import hashlib
import os
import struct
import sys

import numpy as np

import maroon
from maroon import Tensor, dtypes, nn
from maroon.dist import DataParallel, MPIComm, SelfComm
from maroon.nn.optim import Adam
from maroon.nn.state import safe_save_bytes

M64 = (1 << 64) - 1


def synthetic(n, seed=1):
    """tests/mnist/synthetic.h: SplitMix64 noise with a bright band whose row is the label."""
    s = seed
    images, labels = np.zeros((n, 784), np.uint8), np.zeros(n, np.uint8)

    def nxt():
        nonlocal s
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    rows = np.arange(784) // 28 // 3
    for i in range(n):
        label = nxt() % 10
        labels[i] = label
        noise = np.array([nxt() % 64 for _ in range(784)], np.uint8)
        images[i] = np.where(rows == label, 192 + noise, noise)
    return images, labels


class MLP:
    """maroon::models::MnistMLP: 784-512-512-10, tinygrad's Linear init after manual_seed."""

    def __init__(self, seed):
        Tensor.manual_seed(seed)
        self.l1, self.l2, self.l3 = nn.Linear(784, 512), nn.Linear(512, 512), nn.Linear(512, 10)

    def __call__(self, x):
        return self.l3(self.l2(self.l1(x.flatten(1)).relu()).relu())

    def state(self):
        return {f"{n}.{k}": v for n in ("l1", "l2", "l3") for k, v in getattr(self, n).state_dict().items()}

    batchnorms = ()


class CNN:
    """tinygrad's examples/beautiful_mnist.py Model (maroon::models::MnistCNN)."""

    def __init__(self, seed):
        Tensor.manual_seed(seed)
        self.layers = {0: nn.Conv2d(1, 32, 5), 2: nn.Conv2d(32, 32, 5), 4: nn.BatchNorm(32),
                       6: nn.Conv2d(32, 64, 3), 8: nn.Conv2d(64, 64, 3), 10: nn.BatchNorm(64),
                       13: nn.Linear(576, 10)}
        self.batchnorms = (self.layers[4], self.layers[10])

    def __call__(self, x):
        L = self.layers
        h = L[4](L[2](L[0](x).relu()).relu()).max_pool2d()
        h = L[10](L[8](L[6](h).relu()).relu()).max_pool2d()
        return L[13](h.flatten(1))

    def state(self):
        return {f"layers.{i}.{k}": v for i, m in self.layers.items() for k, v in m.state_dict().items()}

    def parameters(self):
        return [p for m in self.layers.values() for p in m.parameters()]


def train(kind, shards, steps, batch, data, comm):
    images, labels = data
    model = MLP(7) if kind == "mlp" else CNN(7)
    params = model.parameters() if kind == "cnn" else [p for m in (model.l1, model.l2, model.l3) for p in m.parameters()]
    dp = DataParallel(Adam(params, lr=1e-3), shards, comm, model.batchnorms)
    losses, correct, n = [], 0, len(labels)
    for s in range(steps):
        at = (s * batch) % (n - batch + 1)

        def shard(begin, end):
            x = Tensor(images[at + begin:at + end].reshape(-1, 1, 28, 28)).cast(dtypes.float32).div(255)
            y = Tensor(labels[at + begin:at + end]).cast(dtypes.int32)
            logits = model(x)
            return logits.sparse_categorical_crossentropy(y, reduction="sum"), (logits.argmax(1) == y).sum()

        out = dp.step(batch, shard)
        losses.append(out.loss.item())
        correct += out.count
    weights = hashlib.sha256(safe_save_bytes(model.state())).hexdigest()
    trace = hashlib.sha256(b"".join(struct.pack("<f", x) for x in losses)).hexdigest()
    return weights, trace, correct


def main():
    steps, batch = int(sys.argv[1]), int(sys.argv[2])
    comm = MPIComm() if "OMPI_COMM_WORLD_SIZE" in os.environ else SelfComm()
    data = synthetic(steps * batch + 8)
    for config in sys.argv[3:]:
        kind, shards, threads = config.split(":")
        maroon.set_num_threads(int(threads))
        weights, trace, correct = train(kind, int(shards), steps, batch, data, comm)
        if comm.rank() == 0:
            print(f"{kind} shards {shards} threads {threads} ranks {comm.size()}: weights {weights} "
                  f"losses {trace} correct {correct}", flush=True)


if __name__ == "__main__":
    main()
