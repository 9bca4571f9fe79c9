"""The same MLP training step as mlp_step_bench.cpp, in PyTorch (Debian's), ms per step.
usage: /usr/bin/python3 bench/cpu/mlp_step_torch.py THREADS"""
import os
import sys
import time

threads = int(sys.argv[1])
# OpenBLAS (Debian's PyTorch's matmuls) keeps a thread pool of its own that
# torch.set_num_threads does not limit: set before torch loads it (bench/mnist/mnist_torch.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))

import torch  # noqa: E402

torch.set_num_threads(threads)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                            torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.rand(128, 784)
y = torch.randint(0, 10, (128,))
total, warmup, steps = 0.0, 2, 10
for s in range(warmup + steps):
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    dt = time.perf_counter() - t0
    if s >= warmup:
        total += dt
print(f"torch {threads} {1e3 * total / steps:.2f}")
