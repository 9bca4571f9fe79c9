"""Matmul throughput of numpy and PyTorch (Debian's, same machine, same thread count), printed
as rows that bench/cpu/run.sh puts beside Maroon's. Neither is deterministic across machines;
they are here as the speed users compare against.

usage: /usr/bin/python3 bench/cpu/peers.py THREADS SIZE [SIZE ...]
"""
import os
import sys
import time

threads = int(sys.argv[1])
sizes = [int(s) for s in sys.argv[2:]]
os.environ.setdefault("OMP_NUM_THREADS", str(threads))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))

import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402

    torch.set_num_threads(threads)
except ImportError:  # torch is optional for the benchmark
    torch = None


def best(f, reps):
    t = 1e30
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


for dtype in ("float32", "float64"):
    for n in sizes:
        rng = np.random.default_rng(n)
        a = rng.uniform(-1, 1, (n, n)).astype(dtype)
        b = rng.uniform(-1, 1, (n, n)).astype(dtype)
        reps = 20 if n <= 256 else 5 if n <= 1024 else 2
        flops = 2.0 * n**3
        g_np = flops / best(lambda: a @ b, reps) / 1e9
        g_t = float("nan")
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            g_t = flops / best(lambda: ta @ tb, reps) / 1e9
        print(f"{dtype} {n} {g_np:.1f} {g_t:.1f}")
