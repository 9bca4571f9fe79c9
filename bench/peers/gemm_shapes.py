"""The MNIST MLP's matmuls (784-512-512-10, batch 128: forward x @ w.T, backward g @ w and
g.T @ h) and square products N = 32..128, float32, one thread: Maroon, PyTorch and numpy on the
same operands in one process, the three taken in turn round by round. Prints one line a shape:
the median over rounds of each library's best time and GFLOP/s (2*M*N*K flops: a multiply and an
add per term), and Maroon's time over PyTorch's and numpy's.

usage: python bench/peers/gemm_shapes.py [--rounds 5] [--only mlp|square] [--libs maroon,torch,numpy]
Run it with the interpreter whose `maroon` is the build to measure (a venv per build).
Maroon's figure includes building the product's graph from Python (~5 us a call): at N <= 128
that is a large part of it, as it is of what a Python caller sees.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MAROON_THREADS", "1")

import numpy as np  # noqa: E402

# (name, M, K, N, A stored transposed, B stored transposed): C = A @ B with A M x K, B K x N.
MLP = [
    ("fwd1 x@w1.T", 128, 784, 512, False, True),
    ("fwd2 h1@w2.T", 128, 512, 512, False, True),
    ("fwd3 h2@w3.T", 128, 512, 10, False, True),
    ("bwd g3@w3", 128, 10, 512, False, False),
    ("bwd g3.T@h2", 10, 128, 512, True, False),
    ("bwd g2@w2", 128, 512, 512, False, False),
    ("bwd g2.T@h1", 512, 128, 512, True, False),
    ("bwd g1.T@x", 512, 128, 784, True, False),
]
SQUARE = [(f"square {n}", n, n, n, False, False) for n in (32, 48, 64, 96, 128)]


def operands(rng, M, K, N, ta, tb):
    a = rng.uniform(-1, 1, (K, M) if ta else (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (N, K) if tb else (K, N)).astype(np.float32)
    return a, b


def best(f, reps, inner):
    f()
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        t = min(t, (time.perf_counter() - t0) / inner)
    return t


def runners(libs, a, b, ta, tb):
    out = {}
    if "maroon" in libs:
        import maroon as m
        ma, mb = m.Tensor(a).realize(), m.Tensor(b).realize()
        A, B = (ma.T if ta else ma), (mb.T if tb else mb)
        out["maroon"] = lambda A=A, B=B: (A @ B).realize()
    if "torch" in libs:
        import torch
        torch.set_num_threads(1)
        ta_, tb_ = torch.from_numpy(a), torch.from_numpy(b)
        A, B = (ta_.T if ta else ta_), (tb_.T if tb else tb_)
        out["torch"] = lambda A=A, B=B: A @ B
    if "numpy" in libs:
        A, B = (a.T if ta else a), (b.T if tb else b)
        out["numpy"] = lambda A=A, B=B: A @ B
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--only", choices=["mlp", "square"])
    p.add_argument("--libs", default="maroon,torch,numpy")
    args = p.parse_args()
    libs = args.libs.split(",")
    shapes = (MLP if args.only != "square" else []) + (SQUARE if args.only != "mlp" else [])
    rng = np.random.default_rng(0)
    print(f"{'shape':16} {'M':>4} {'K':>4} {'N':>4} " + " ".join(f"{lib + ' us':>10} {'GF/s':>6}" for lib in libs)
          + "".join(f" {'m/' + lib[:5]:>8}" for lib in libs[1:] if libs[0] == "maroon"))
    for name, M, K, N, ta, tb in shapes:
        a, b = operands(rng, M, K, N, ta, tb)
        run = runners(libs, a, b, ta, tb)
        flops = 2.0 * M * N * K
        inner = max(1, int(2e-3 / (flops / 50e9 + 5e-6)))  # about 2 ms a repeat
        times = {lib: [] for lib in libs}
        for _ in range(args.rounds):
            for lib in libs:
                times[lib].append(best(run[lib], 5, inner))
        med = {lib: statistics.median(times[lib]) for lib in libs}
        line = f"{name:16} {M:4} {K:4} {N:4} " + " ".join(f"{med[lib] * 1e6:10.1f} {flops / med[lib] / 1e9:6.1f}" for lib in libs)
        if libs[0] == "maroon":
            line += "".join(f" {med['maroon'] / med[lib]:8.2f}" for lib in libs[1:])
        print(line, flush=True)


if __name__ == "__main__":
    main()
