"""The character GPT's training step (examples/char_gpt.py, GPT-2 variant, the example's default
size: batch 16 x 32 characters, dim 64, 4 heads, 2 layers) on Maroon against PyTorch 1.13
running the same model, both on the same number of threads. Maroon runs twice: the step as
the example writes it (the graph built, planned and run every step) and under TinyJit (captured
on the 2nd call, replayed after: no graph building or planning; same bits). Runs alternate, each
side in its own process; prints each run's median ms per step (wall clock, and the process' CPU
time, which a machine shared with other work disturbs less), the medians of those and the ratios.

    /usr/bin/python3 bench/transformer/char_gpt_bench.py [--threads 2] [--reps 3] [--steps 10]
        [--maroon-python .venv/bin/python]

A side alone (what the driver runs): --side maroon|maroon-jit|torch prints one JSON line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CFG = {"block_size": 32, "dim": 64, "n_heads": 4, "n_layers": 2}
BATCH, WARMUP = 16, 2


def corpus_ids():
    data = open("/usr/share/common-licenses/GPL-3", "rb").read()
    vocab = sorted(set(data))
    index = {b: i for i, b in enumerate(vocab)}
    return len(vocab), [index[b] for b in data]


def batches(ids, n, T):
    """Fixed windows (the data does not change the work): starts spread over the text."""
    out = []
    for s in range(n):
        starts = [(s * 7919 + b * 104729) % (len(ids) - T - 1) for b in range(BATCH)]
        out.append(([ids[p:p + T] for p in starts], [ids[p + 1:p + T + 1] for p in starts]))
    return out


def time_maroon(steps, jit):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import char_gpt
    from maroon import Context, Tensor, TinyJit, dtypes
    from maroon.nn.optim import Adam
    from maroon.nn.state import get_parameters
    V, ids = corpus_ids()
    Tensor.manual_seed(0)
    model = char_gpt.GPT(V, **CFG)
    opt = Adam(get_parameters(model), lr=3e-3)

    def step(x, y):
        opt.zero_grad()
        loss = model(x).reshape(-1, V).sparse_categorical_crossentropy(y.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    step = TinyJit(step) if jit else step
    times = []
    with Context(TRAINING=1):
        for xs, ys in batches(ids, WARMUP + steps, CFG["block_size"]):
            t0, c0 = time.perf_counter(), time.process_time()
            step(Tensor(xs, dtype=dtypes.int32), Tensor(ys, dtype=dtypes.int32)).item()
            times.append((time.perf_counter() - t0, time.process_time() - c0))
    return times[WARMUP:]


def time_torch(steps, threads):
    # OpenBLAS keeps a thread pool of its own that torch.set_num_threads does not limit
    # (bench/mnist/mnist_torch.py): set before torch loads it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
    import torch
    import torch.nn.functional as F
    from torch import nn
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    C, H, T = CFG["dim"], CFG["n_heads"], CFG["block_size"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.m_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
            self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).tril())

        def attn(self, x):  # torch 1.13 has no F.scaled_dot_product_attention: written out
            B, t, _ = x.shape
            q, k, v = [z.reshape(B, t, H, C // H).transpose(1, 2) for z in self.c_attn(x).reshape(B, t, 3, H, C // H).unbind(2)]
            s = (q @ k.transpose(-2, -1)) / (C // H) ** 0.5
            s = s.masked_fill(~self.mask[:t, :t], float("-inf"))
            return self.c_proj((s.softmax(-1) @ v).transpose(1, 2).reshape(B, t, C))

        def forward(self, x):
            h = x + self.attn(self.ln_1(x))
            return h + self.m_proj(F.gelu(self.c_fc(self.ln_2(h)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self, V):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
            self.h = nn.ModuleList([Block() for _ in range(CFG["n_layers"])])
            self.ln_f, self.lm_head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for b in self.h:
                x = b(x)
            return self.lm_head(self.ln_f(x))

    V, ids = corpus_ids()
    model = GPT(V)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    times = []
    for xs, ys in batches(ids, WARMUP + steps, T):
        t0, c0 = time.perf_counter(), time.process_time()
        x, y = torch.tensor(xs), torch.tensor(ys)
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        loss.backward()
        opt.step()
        loss.item()
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    return times[WARMUP:]


def side(args):
    times = time_torch(args.steps, args.threads) if args.side == "torch" else time_maroon(args.steps, args.side == "maroon-jit")
    print(json.dumps({"side": args.side, "ms": 1e3 * statistics.median(t for t, _ in times),
                      "cpu_ms": 1e3 * statistics.median(c for _, c in times)}))


def driver(args):
    env = dict(os.environ, MAROON_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads),
               OMP_WAIT_POLICY="PASSIVE")
    sides = ("maroon", "maroon-jit", "torch")
    pys = {"maroon": args.maroon_python, "maroon-jit": args.maroon_python, "torch": "/usr/bin/python3"}
    got = {s: [] for s in sides}
    cpu = {s: [] for s in sides}
    for rep in range(args.reps):
        for s in (sides if rep % 2 == 0 else sides[::-1]):
            r = subprocess.run([pys[s], __file__, "--side", s, "--steps", str(args.steps), "--threads", str(args.threads)],
                               env=env, capture_output=True, text=True, check=True)
            res = json.loads(r.stdout.strip().splitlines()[-1])
            got[s].append(res["ms"])
            cpu[s].append(res["cpu_ms"])
            print(f"rep {rep}  {s:10s} {res['ms']:8.2f} ms/step wall  {res['cpu_ms']:8.2f} ms/step CPU", flush=True)
    t, tc = statistics.median(got["torch"]), statistics.median(cpu["torch"])
    for s, name in (("maroon", "Maroon"), ("maroon-jit", "Maroon+TinyJit")):
        m, mc = statistics.median(got[s]), statistics.median(cpu[s])
        print(f"char GPT training step, batch {BATCH}x{CFG['block_size']}, dim {CFG['dim']}, {CFG['n_layers']} layers, "
              f"{args.threads} threads: wall {name} {m:.2f} ms, PyTorch 1.13 {t:.2f} ms, {name}/PyTorch = {m / t:.2f}x; "
              f"CPU time {name} {mc:.2f} ms, PyTorch {tc:.2f} ms, {name}/PyTorch = {mc / tc:.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", choices=["maroon", "maroon-jit", "torch"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--maroon-python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    a = ap.parse_args()
    side(a) if a.side else driver(a)
