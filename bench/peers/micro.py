"""One piece of Python-side work on one library, timed in its own process so that its peak RSS is
its own. Prints one line: `SECONDS_PER_UNIT UNIT` (the best of several repeats).

usage: python bench/peers/micro.py LIB WORK THREADS
  LIB   maroon | torch | numpy
  WORK  smallop   ((a+b)*a).sum() on 16 float32 values, read back as a Python float; s per call
        smallopcpu the same timed in this thread's CPU time (time.thread_time), best of 7 x 3000:
                  on a shared, loaded machine wall time swings 1.5x between neighbouring runs,
                  CPU time a few percent (it still counts what sharing a core costs the caches)
        tonumpy   a realized contiguous 64 MiB float32 tensor to a numpy array; s per copy
        fromnumpy a 64 MiB float32 numpy array into a realized tensor; s per copy
        memcpy    np.copyto of 64 MiB into an array written before (memcpy: the bandwidth the two
                  above are compared with); s per copy
        matmul    float32 N=1024 product from Python, read back as numpy; s per product
        matmul64  the same at N=64 (matmulN: at N, e.g. matmul32, matmul128)
        matmulNjit  maroon only: the same through TinyJit (the graph built and planned once, then
                  replayed): what the graph and planning cost is the difference from matmulN
        matmulNcpu the same as matmulN timed in this thread's CPU time (time.thread_time), best of
                  7 x 1000 (300 past N=256): on a loaded machine, as smallopcpu
"""
import os
import sys
import time

lib, work, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ["OMP_NUM_THREADS"] = str(threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
os.environ["MAROON_THREADS"] = str(threads)

import numpy as np  # noqa: E402

MB64 = 16 * 1024 * 1024  # float32 elements in 64 MiB


def best(f, reps, inner=1, clock=time.perf_counter):
    f()  # warm-up: first-touch page faults and lazy initialisation are not the steady state
    t = float("inf")
    for _ in range(reps):
        t0 = clock()
        for _ in range(inner):
            f()
        t = min(t, (clock() - t0) / inner)
    return t


def main():
    rng = np.random.default_rng(0)
    if lib == "maroon":
        import maroon as m
        new, out = m.Tensor, (lambda t: t.numpy())
        realize = (lambda t: t.realize())
    elif lib == "torch":
        import torch
        torch.set_num_threads(threads)
        new, out = torch.from_numpy, (lambda t: t.numpy())
        realize = (lambda t: t)
    else:
        new, out, realize = np.asarray, np.asarray, (lambda t: t)

    if work in ("smallop", "smallopcpu"):
        a, b = new(rng.random(16, np.float32)), new(rng.random(16, np.float32))
        if lib == "numpy":
            f = lambda: float(((a + b) * a).sum())  # noqa: E731
        else:
            f = lambda: ((a + b) * a).sum().item()  # noqa: E731
        if work == "smallop":
            print(best(f, 5, 2000), "s/call")
        else:
            print(best(f, 7, 3000, time.thread_time), "s/call")
    elif work == "tonumpy":
        x = realize(new(rng.random(MB64, np.float32)))
        if lib == "torch":
            f = lambda: x.numpy().copy()  # noqa: E731  (torch's .numpy() shares memory: copy once, as Maroon must)
        else:
            f = lambda: np.array(out(x), copy=lib == "numpy")  # noqa: E731
        print(best(f, 5), "s/copy")
    elif work == "fromnumpy":
        x = rng.random(MB64, np.float32)
        if lib == "torch":
            f = lambda: torch.from_numpy(x).clone()  # noqa: E731  (copies, as Maroon must; from_numpy alone shares)
        elif lib == "numpy":
            f = lambda: np.array(x)  # noqa: E731
        else:
            f = lambda: realize(new(x))  # noqa: E731
        print(best(f, 5), "s/copy")
    elif work == "memcpy":
        x, y = rng.random(MB64, np.float32), np.zeros(MB64, np.float32)
        print(best(lambda: np.copyto(y, x), 5), "s/copy")
    elif work.startswith("matmul"):
        jit, cpu = work.endswith("jit"), work.endswith("cpu")
        n = int(work[6:-3 if jit or cpu else None] or 1024)
        a, b = (new(rng.uniform(-1, 1, (n, n)).astype(np.float32)) for _ in range(2))
        if lib == "numpy":
            f = lambda: a @ b  # noqa: E731
        elif jit:
            if lib != "maroon":
                sys.exit("matmulNjit is maroon's only")
            prod = m.TinyJit(lambda x, y: x @ y)
            f = lambda: prod(a, b).numpy()  # noqa: E731
        else:
            f = lambda: (a @ b).numpy()  # noqa: E731
        if cpu:
            print(best(f, 7, 300 if n > 256 else 1000, time.thread_time), "s/product")
        else:
            print(best(f, 5, 1 if n > 256 else 200), "s/product")
    else:
        sys.exit(f"unknown work {work!r}")


if __name__ == "__main__":
    main()
