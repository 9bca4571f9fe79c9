"""Runs an ONNX model with maroon.onnx on a .npy input, the same protocol as ort_run.js: one
warm-up, REPS timed runs (load excluded; each run builds the graph and realizes the outputs),
THREADS CPU threads or the 'ref' backend; writes the first output's bytes to OUT and prints
{"ms": median, "digest": the inference digest}. usage: maroon_run.py MODEL X.npy THREADS|ref REPS OUT"""
import json
import sys
import time

import numpy as np

import maroon
import maroon.onnx

model_path, x_path, threads, reps, out = sys.argv[1:6]
if threads == "ref":
    maroon.set_backend("ref")
else:
    maroon.set_num_threads(int(threads))
model = maroon.onnx.load(model_path)
x = np.load(x_path)
y = [t.numpy() for t in model.run([x])]
times = []
for _ in range(int(reps)):
    t0 = time.perf_counter()
    ys = model.run([x])
    y = [t.numpy() for t in ys]
    times.append((time.perf_counter() - t0) * 1e3)
times.sort()
open(out, "wb").write(y[0].astype(np.float32).tobytes())
print(json.dumps({"ms": times[len(times) // 2], "digest": maroon.inference_digest(ys)}))
