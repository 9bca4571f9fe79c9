"""Drawing rows by an integer tensor (docs/spec.md §15, GATHER) on Maroon, against numpy's fancy
indexing on the same arrays and, for scale, Maroon's former one-hot formulation (tinygrad's
recipe: a mask over every row, a sum) on a smaller table. Each case alternates the sides and
prints the median of its repeats and the ratios.

    .venv/bin/python bench/indexing/gather_bench.py [--reps 7] [--onehot-rows 3000]

Cases: X_train[samples] for a 60000 x 784 float32 table with 64 and 128 samples (tinygrad's
docs/mnist.md batch draw); nn.Embedding(65, 64) on 16 x 32 tokens (the character GPT's) and
nn.Embedding(50257, 768) on 16 x 128 tokens (GPT-2's wte).
"""
import argparse
import statistics
import time

import numpy as np

import maroon
from maroon import Tensor, nn


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def onehot_take(x, idx):
    """Maroon before GATHER (tinygrad's recipe for x[idx] along axis 0)."""
    mask = idx.reshape(-1, 1, 1) == Tensor.arange(x.shape[0]).reshape(1, -1, 1)
    return mask.where(x.reshape(1, *x.shape), 0).sum(1, dtype=x.dtype)


def case(name, sides, reps):
    times = {k: [] for k in sides}
    for _ in range(reps):  # alternate: the machine is shared
        for k, fn in sides.items():
            times[k].append(timed(fn, 1))
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["numpy"]
    print(f"{name}:")
    for k, v in med.items():
        print(f"  {k:28s} {v * 1e3:10.3f} ms   {v / base:8.2f} x numpy")
    return med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--onehot-rows", type=int, default=3000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60000, 784), dtype=np.float32)
    Xt = Tensor(X).realize()
    print(f"maroon threads={maroon.num_threads()} simd={maroon.simd_target()}")
    for n in (64, 128):
        s = rng.integers(0, 60000, n).astype(np.int32)
        st = Tensor(s).realize()
        got = Xt[st].numpy()
        assert np.array_equal(got.view(np.uint32), X[s].view(np.uint32))
        small, ss = Xt[:a.onehot_rows].realize(), Tensor(s % a.onehot_rows).realize()
        case(f"X_train[samples], 60000x784 float32, {n} samples", {
            "numpy": lambda: X[s],
            "maroon Xt[st] (GATHER)": lambda: Xt[st].realize(),
            f"maroon one-hot, {a.onehot_rows} rows": lambda: onehot_take(small, ss).realize(),
        }, a.reps)
    for V, E, B, T in ((65, 64, 16, 32), (50257, 768, 16, 128)):
        embedding(rng, V, E, B, T, a.reps)


def embedding(rng, V, E, B, T, reps):
    """nn.Embedding forward, and (small vocabularies only) the one-hot formulation it replaced."""
    W = (rng.standard_normal((V, E), dtype=np.float32) * 0.02).astype(np.float32)
    emb = nn.Embedding(V, E)
    emb.weight = Tensor(W).realize()
    tok = rng.integers(0, V, (B, T)).astype(np.int32)
    tt = Tensor(tok).realize()
    assert np.array_equal(emb(tt).numpy().view(np.uint32), W[tok].view(np.uint32))
    sides = {"numpy": lambda: W[tok], "maroon emb(tok) (GATHER)": lambda: emb(tt).realize()}
    if V <= 1000:
        sides["maroon one-hot"] = lambda: (Tensor.arange(V) == tt.unsqueeze(-1)).unsqueeze(-1).where(
            emb.weight, 0).sum(-2, dtype=emb.weight.dtype).realize()
    case(f"Embedding({V}, {E}) forward, {B}x{T} tokens", sides, reps)


if __name__ == "__main__":
    main()
