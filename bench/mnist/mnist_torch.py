"""The same MNIST training as `maroon train` in PyTorch (Debian's), for time per epoch and
accuracy on the same machine and thread count: same model and init distribution, pixels / 255,
Adam (lr 1e-3, eps 1e-8), the same batch, a shuffled epoch without the last partial batch.
usage: /usr/bin/python3 bench/mnist/mnist_torch.py [--model mlp|cnn] [--epochs N] [--batch B]
       [--threads T] [--steps K] [--lr-decay F] [--data DIR]"""
import argparse
import os
import sys
import time


def threads_asked(argv):
    """--threads T from the command line, before argparse runs (default 1)."""
    for i, w in enumerate(argv):
        if w == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if w.startswith("--threads="):
            return w.split("=", 1)[1]
    return "1"


# Debian's PyTorch runs its matmuls in OpenBLAS (pthreads build), whose own thread pool
# torch.set_num_threads does not limit: at --threads 1 the MLP's sgemm ran on two threads, half
# of its samples on OpenBLAS's second thread (perf, 2026-12-04). Set before torch loads it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", threads_asked(sys.argv[1:]))

import numpy as np  # noqa: E402
import torch  # noqa: E402


def idx(path):
    raw = open(path, "rb").read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * rank).reshape(dims)


def mlp():
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))


def cnn():  # tinygrad's beautiful_mnist
    n = torch.nn
    return n.Sequential(n.Conv2d(1, 32, 5), n.ReLU(), n.Conv2d(32, 32, 5), n.ReLU(), n.BatchNorm2d(32), n.MaxPool2d(2),
                        n.Conv2d(32, 64, 3), n.ReLU(), n.Conv2d(64, 64, 3), n.ReLU(), n.BatchNorm2d(64), n.MaxPool2d(2),
                        n.Flatten(), n.Linear(576, 10))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "mnist")
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--data", default=root)
    p.add_argument("--shift", type=int, default=0, help="experiment: random shifts of up to this many pixels")
    p.add_argument("--lr-decay", type=float, default=1.0, help="the learning rate is multiplied by this after each epoch")
    a = p.parse_args()
    batch = a.batch or (512 if a.model == "cnn" else 128)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    xtr = torch.from_numpy(idx(f"{a.data}/train-images-idx3-ubyte").copy()).float().div(255).unsqueeze(1)
    ytr = torch.from_numpy(idx(f"{a.data}/train-labels-idx1-ubyte").astype(np.int64))
    xte = torch.from_numpy(idx(f"{a.data}/t10k-images-idx3-ubyte").copy()).float().div(255).unsqueeze(1)
    yte = torch.from_numpy(idx(f"{a.data}/t10k-labels-idx1-ubyte").astype(np.int64))
    model = mlp() if a.model == "mlp" else cnn()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)
    per_epoch = len(xtr) // batch
    for epoch in range(a.epochs):
        model.train()
        for g in opt.param_groups:
            g["lr"] = 1e-3 * a.lr_decay ** epoch
        order = torch.randperm(len(xtr))
        steps = per_epoch if not a.steps else min(per_epoch, a.steps)
        t0 = time.perf_counter()
        for s in range(steps):
            i = order[s * batch:(s + 1) * batch]
            xb = xtr[i]
            if a.shift:
                pad = torch.nn.functional.pad(xb, (a.shift,) * 4)
                d = torch.randint(0, 2 * a.shift + 1, (len(i), 2))
                xb = torch.stack([pad[k, :, d[k, 0]:d[k, 0] + 28, d[k, 1]:d[k, 1] + 28] for k in range(len(i))])
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), ytr[i])
            loss.backward()
            opt.step()
        dt = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            correct = sum(int((model(xte[j:j + 1000]).argmax(1) == yte[j:j + 1000]).sum()) for j in range(0, 10000, 1000))
        print(f"torch {a.model} threads {a.threads} epoch {epoch + 1}: {steps} steps {dt:.2f} s "
              f"({dt / steps * 1e3:.1f} ms/step, {dt / steps * per_epoch:.1f} s/epoch), test acc {correct / 100:.2f}%",
              flush=True)


if __name__ == "__main__":
    main()
