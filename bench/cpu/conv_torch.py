"""conv2d forward on the MNIST CNN's layer shapes in PyTorch (Debian's), ms per call.
usage: /usr/bin/python3 bench/cpu/conv_torch.py THREADS"""
import os
import sys
import time

# OpenBLAS keeps a thread pool of its own that torch.set_num_threads does not limit
# (bench/mnist/mnist_torch.py): set before torch loads it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", sys.argv[1])

import torch  # noqa: E402

torch.set_num_threads(int(sys.argv[1]))
batch = 64
for name, cin, cout, hw, k in [("conv 1->32 5x5 on 28x28", 1, 32, 28, 5), ("conv 32->32 5x5 on 24x24", 32, 32, 24, 5),
                               ("conv 32->64 3x3 on 10x10", 32, 64, 10, 3), ("conv 64->64 3x3 on 8x8", 64, 64, 8, 3)]:
    x, w = torch.rand(batch, cin, hw, hw), torch.rand(cout, cin, k, k)
    best = 1e30
    for _ in range(5):
        t0 = time.perf_counter()
        torch.nn.functional.conv2d(x, w)
        best = min(best, time.perf_counter() - t0)
    print(f"| {name} | {best * 1e3:.2f} |")
