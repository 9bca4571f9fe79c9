"""The 5-step MNIST run of the vectors (docs/spec-model.md, "The MNIST run"): the data shuffle
(SplitMix64, Fisher-Yates) and each batch, the input conversion, the MLP's initial parameters
from the random stream, and the first step's forward pass (left-fold matmuls, ReLU) down to the
logits. The loss and everything after it need exp and log, which are not checked here."""
import hashlib
import math
import os

import numpy as np

import random_stream

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(state):
    state = (state + GOLDEN) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def epoch_order(seed, epoch, n):
    order = list(range(n))
    state = (seed * GOLDEN + epoch) & M64
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = M64 - M64 % bound
        while True:
            state, x = splitmix64(state)
            if x < limit:
                break
        j = x % bound
        order[i], order[j] = order[j], order[i]
    return order


def digest(a): return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def read_idx(path):
    b = open(path, "rb").read()
    rank = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * rank).reshape(dims)


def linear(x, w, b):
    """x.linear(w.T, b): per output a left fold over k from +0 of x[i,k] * w[j,k], then + b."""
    acc = np.zeros((x.shape[0], w.shape[0]), np.float32)
    wt = np.ascontiguousarray(w.T)
    for k in range(x.shape[1]):
        acc = acc + x[:, k, None] * wt[None, k, :]
    return acc + b


def relu(x): return np.where(np.float32(0) < x, x, np.float32(0))


class Run:
    def __init__(self, data_dir):
        self.data_dir, self.order, self.params, self.images = data_dir, None, None, None

    def data(self):
        if self.images is None and self.data_dir and os.path.exists(os.path.join(self.data_dir, "train-images-idx3-ubyte")):
            self.images = read_idx(os.path.join(self.data_dir, "train-images-idx3-ubyte"))
            self.labels = read_idx(os.path.join(self.data_dir, "train-labels-idx1-ubyte"))
        return self.images is not None

    def init(self, a):
        s = random_stream.Stream(a["seed"])
        self.params = {}
        for name, fan_in, out in (("l1", 784, 512), ("l2", 512, 512), ("l3", 512, 10)):
            b = 1 / math.sqrt(fan_in)
            self.params[name + ".weight"] = s.uniform([out, fan_in], -b, b)
            self.params[name + ".bias"] = s.uniform([out], -b, b)
        bad = [k for k, v in self.params.items() if digest(v) != a["digests"][k]]
        return True if not bad else f"initial parameters differ: {bad}"

    def check(self, e, ins, outs, _random):
        a = e["args"]
        if e["id"] == "mnist/mlp/init":
            return self.init(a)
        step, batch = a["step"], a["batch"]
        if self.order is None:
            self.order = epoch_order(a["seed"], 0, a["samples"])
        idx = self.order[(step - 1) * batch:step * batch]
        if outs[0].numpy().tolist() != idx:
            return "sample indices differ from the shuffle"
        if not self.data():
            return True  # only the shuffle can be checked without the data
        d = a["digests"]
        if digest(self.labels[idx].astype(np.int32)) != d["labels"] or digest(self.images[idx]) != d["pixels"]:
            return "batch pixels or labels differ"
        x = self.images[idx].astype(np.float32) * (np.float32(1) / np.float32(255))   # the spec's conversion
        if digest(x.reshape(batch, 1, 28, 28)) != d["x"]:
            return "input conversion differs"
        if step != 1 or self.params is None:
            return True
        p = self.params
        h1 = linear(x.reshape(batch, 784), p["l1.weight"], p["l1.bias"])
        a1 = relu(h1)
        h2 = linear(a1, p["l2.weight"], p["l2.bias"])
        a2 = relu(h2)
        logits = linear(a2, p["l3.weight"], p["l3.bias"])
        bad = [k for k, v in (("h1", h1), ("a1", a1), ("h2", h2), ("a2", a2), ("logits", logits)) if digest(v) != d[k]]
        if bad or outs[1].numpy().tobytes() != logits.tobytes():
            return f"step 1 forward differs: {bad}"
        return True
