"""Runs Maroon and its peers (PyTorch 1.13 at 1 and 2 threads with OMP_WAIT_POLICY=PASSIVE,
numpy/OpenBLAS) on the same work, alternating, each run in its own process, and prints a
Markdown table of times, ratios and peak RSS. Called by bench/peers.sh (see there for usage).

Each cell is the median over --reps rounds; a round runs every (work, library) pair once, in
turn, so a neighbour's load on this shared machine falls on both sides alike. Peak RSS is the
process's ru_maxrss (largest over the rounds), so it includes the interpreter and the data set.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PY = "/usr/bin/python3"  # Debian's, with numpy and torch 1.13


def run(argv, env_extra):
    """Runs argv; returns its stdout (exits naming the command if it fails)."""
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", **env_extra)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT, text=True)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"peers: {' '.join(argv)} failed ({p.returncode}):\n{err[-2000:]}")
    return out


def timed(argv, env_extra):
    """Runs argv under /usr/bin/time, which appends the child's own peak RSS to its stdout;
    returns (stdout, peak RSS MiB)."""
    marker = "@@peak_rss_kb="
    out = run(["/usr/bin/time", "-f", marker + "%M", "-o", "/dev/stdout", "--append"] + argv, env_extra)
    body, _, tail = out.rpartition(marker)
    return body, int(tail.strip()) / 1024


def maroon_train(model, threads, steps, batch, fused=False):
    def go():
        out, rss = timed([ARGS.maroon, "train", "mnist", "--model", model,
                          "--batch", str(batch), "--threads", str(threads), "--steps", str(steps), "--no-eval",
                          "--quiet", "--json", "--out", os.path.join(TMP, "peers.safetensors")]
                         + (["--fused"] if fused else []), {})
        return json.loads(out)["train_seconds"], rss
    return go


def torch_train(model, threads, steps, batch):
    def go():
        out, rss = timed([PY, "bench/mnist/mnist_torch.py", "--model", model, "--batch", str(batch),
                          "--threads", str(threads), "--steps", str(steps)], {})
        # "torch mlp threads 2 epoch 1: 100 steps 4.31 s (...)"
        words = out.split()
        return float(words[words.index("steps") + 1]), rss
    return go


def micro(lib, work, threads):
    def go():
        py = ARGS.python if lib == "maroon" else PY
        out, rss = timed([py, "bench/peers/micro.py", lib, work, str(threads)], {})
        return float(out.split()[0]), rss
    return go


def works(a):
    s, cs = a.steps, a.cnn_steps
    mlp = f"MLP 784-512-512-10 train, batch 128, {s or 468} steps"
    cnn = f"CNN (beautiful_mnist) train, batch 512, {cs} steps"
    rows = []
    for t in (1, 2):
        rows.append((f"{mlp}, {t} thread{'s' if t > 1 else ''}", "s",
                     {"maroon": maroon_train("mlp", t, s, 128), "torch": torch_train("mlp", t, s, 128)}))
    # The same with `maroon train --fused` (REDUCE_MULACC products: other defined bits, at FMA speed).
    for t in (1, 2):
        rows.append((f"{mlp}, {t} thread{'s' if t > 1 else ''}, Maroon `--fused`", "s",
                     {"maroon": maroon_train("mlp", t, s, 128, fused=True), "torch": torch_train("mlp", t, s, 128)}))
    if cs:
        rows.append((f"{cnn}, 2 threads", "s",
                     {"maroon": maroon_train("cnn", 2, cs, 512), "torch": torch_train("cnn", 2, cs, 512)}))
        rows.append((f"{cnn}, 2 threads, Maroon `--fused`", "s",
                     {"maroon": maroon_train("cnn", 2, cs, 512, fused=True), "torch": torch_train("cnn", 2, cs, 512)}))
    for w, label, unit in (("smallop", "`((a+b)*a).sum()` on 16 floats from Python, per call", "us"),
                           ("tonumpy", "`.numpy()` of a realized 64 MiB float32 tensor", "ms"),
                           ("fromnumpy", "`Tensor(ndarray)` of 64 MiB float32, realized", "ms"),
                           ("memcpy", "`np.copyto` of 64 MiB, memcpy (memory speed, for the two rows above)", "ms"),
                           ("matmul", "float32 1024² matmul from Python, `(a @ b).numpy()`, 1 thread", "ms"),
                           ("matmul64", "float32 64² matmul from Python, `(a @ b).numpy()`, 1 thread", "us")):
        libs = {"maroon": micro("maroon", w, 1), "torch": micro("torch", w, 1), "numpy": micro("numpy", w, 1)}
        if w == "memcpy":
            libs = {"numpy": libs["numpy"]}
        rows.append((label, unit, libs))
    # The same 64² product replayed by TinyJit (no graph built, no kernel planned); the peers
    # have no such path and run their plain product.
    rows.append(("float32 64² matmul from Python through `TinyJit` (Maroon only; the peers as above), 1 thread", "us",
                 {"maroon": micro("maroon", "matmul64jit", 1), "torch": micro("torch", "matmul64", 1),
                  "numpy": micro("numpy", "matmul64", 1)}))
    if a.only:
        rows = [r for r in rows if any(k in r[0] for k in a.only.split(","))]
    return rows


SCALE = {"s": 1, "ms": 1e3, "us": 1e6}
GB64 = 64 * 2**20 / 1e9  # the copies' size in GB


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--steps", type=int, default=100, help="MLP steps (0: a whole epoch, 468)")
    p.add_argument("--cnn-steps", type=int, default=3, help="CNN steps (0: skip the CNN)")
    p.add_argument("--only", default="", help="comma-separated substrings of the rows to run")
    p.add_argument("--maroon", default=os.path.join(ROOT, "build", "maroon"), help="the maroon command to time")
    p.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"),
                   help="a Python that imports the maroon package to time")
    global ARGS
    a = ARGS = p.parse_args()
    rows = works(a)
    times = {(r[0], lib): [] for r in rows for lib in r[2]}
    rss = dict.fromkeys(times, 0.0)
    t_start = time.time()
    for rep in range(a.reps):
        for label, _, libs in rows:
            order = list(libs.items())
            if rep % 2:
                order.reverse()  # alternate who goes first
            for lib, go in order:
                t, m = go()
                times[(label, lib)].append(t)
                rss[(label, lib)] = max(rss[(label, lib)], m)
    load = os.getloadavg()
    print(f"{a.reps} rounds, {time.time() - t_start:.0f} s, load average at the end {load[0]:.1f} "
          f"(`nproc` = {os.cpu_count()})\n")
    print("| work | Maroon | PyTorch | numpy | Maroon / PyTorch | Maroon / numpy "
          "| peak RSS MiB Maroon | PyTorch | numpy |")
    print("|---|---|---|---|---|---|---|---|---|")
    med = {k: statistics.median(v) for k, v in times.items()}
    for label, unit, libs in rows:
        def cell(lib, f):
            return f(lib) if lib in libs else ""
        t = lambda lib: f"{med[(label, lib)] * SCALE[unit]:.3g} {unit}"  # noqa: E731
        r = lambda lib: f"{med[(label, 'maroon')] / med[(label, lib)]:.2f}" if "maroon" in libs else ""  # noqa: E731
        mm = lambda lib: f"{rss[(label, lib)]:.0f}"  # noqa: E731
        print(f"| {label} | {cell('maroon', t)} | {cell('torch', t)} | {cell('numpy', t)} | {cell('torch', r)} "
              f"| {cell('numpy', r)} | {cell('maroon', mm)} | {cell('torch', mm)} | {cell('numpy', mm)} |")
    memcpy = [r for r in rows if r[0].startswith("`np.copyto`")]
    if memcpy:
        base = med[(memcpy[0][0], "numpy")]
        for label, _, _ in rows:
            if label.startswith(("`.numpy()`", "`Tensor(ndarray)`")):
                print(f"\n{label.split(' ')[0]}: Maroon at {base / med[(label, 'maroon')]:.2f} of memcpy's bandwidth "
                      f"({GB64 / med[(label, 'maroon')]:.2f} GB/s against {GB64 / base:.2f})", end="")
        print()


TMP = os.environ.get("TMPDIR", "/tmp")
ARGS = None
if __name__ == "__main__":
    main()
