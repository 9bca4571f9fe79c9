#!/usr/bin/env bash
# Maroon against ONNX Runtime (onnxruntime-node 1.20.1, CPU) on four models exported from
# Debian's PyTorch 1.13 (bench/onnx/export_models.py: a small CNN, a ResNet-style network, a
# transformer encoder, a MobileNetV2-style network of depthwise convs): median ms per batch on 1
# and 2 threads, the two runtimes run alternately, ROUNDS times over; then per model and thread
# count the throughput ratio Maroon / ONNX Runtime (ORT's ms over Maroon's: 1.0 is parity, the
# issue's goal is 0.8), by wall time and by process
# CPU time (on a machine shared with other work the CPU time is the fairer figure: a long run is
# preempted more often than a short one; it is each runtime's mean over the runs, its workers'
# spinning included, read once they have blocked), whether Maroon's outputs are
# the same bits on 1 and 2 threads, and the largest relative difference from ONNX Runtime's.
# Each round also runs Maroon with fused products (`fused`: MatMul, Gemm and Conv as REDUCE_MULACC,
# docs/spec.md §14, the other defined bits, which ONNX Runtime's FMA kernels approximate): its
# ratio and its own 1 = 2 threads check are the table's last columns.
# Maroon runs in C++ (build/bench/onnx/maroon-bench-onnx), ONNX Runtime in Node.js
# (tools/onnx/ort_run.js); both time only the run, after one warm-up. Needs tools/build.sh;
# MAROON_ONNX_BENCH names another maroon-bench-onnx (a baseline build, or a copy kept apart from
# a build in progress).
# usage: bash bench/onnx/compare.sh [BATCH] [REPS] [ROUNDS] [MODEL...]
set -euo pipefail
cd "$(dirname "$0")/../.."
batch=${1:-32} reps=${2:-10} rounds=${3:-2}
shift $(($# < 3 ? $# : 3))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(cnn resnet transformer mobilenet)
out=build/onnx-bench
ort=${MAROON_ORT_DIR:-build/ort}
bench=${MAROON_ONNX_BENCH:-build/bench/onnx/maroon-bench-onnx}
[ -x "$bench" ] || { echo "compare.sh: $bench is missing (bash tools/build.sh)" >&2; exit 1; }
bash tools/onnx/install_ort.sh
/usr/bin/python3 bench/onnx/export_models.py "$out" "$batch" "${models[@]}" 2>/dev/null
ms() { sed 's/.*"ms": *\([0-9.]*\).*"cpu_ms": *\([0-9.]*\).*/\1 \2/'; }
: >"$out/times.txt"
for round in $(seq "$rounds"); do
  for m in "${models[@]}"; do
    for t in 1 2; do
      a=$("$bench" "$out/$m.onnx" "$out/$m.npy" "$t" "$reps" "$out/${m}_maroon_$t.bin" | ms)
      f=$("$bench" "$out/$m.onnx" "$out/$m.npy" "$t" "$reps" "$out/${m}_fused_$t.bin" fused | ms)
      b=$(NODE_PATH="$ort/node_modules" node tools/onnx/ort_run.js "$out/$m.onnx" "$out/$m.npy" "$t" "$reps" \
          "$out/${m}_ort_$t.bin" | ms)
      echo "$m $t $a $b $f" >>"$out/times.txt"
      echo "round $round, $m, $t thread(s): maroon $a ms (wall, cpu), fused $f, onnxruntime $b ms"
    done
  done
done
echo "$(date -u "+%Y-%m-%d %H:%M UTC"), batch $batch, $reps runs per measurement, $rounds rounds, $(nproc) cores, load average $(cut -d" " -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$out" "${models[@]}" <<'PY'
import sys
import numpy as np
out, models = sys.argv[1], sys.argv[2:]
rows = [line.split() for line in open(f"{out}/times.txt")]
rd = lambda p: np.fromfile(f"{out}/{p}.bin", dtype=np.float32)
print("| model | threads | Maroon ms | ONNX Runtime ms | throughput ratio | Maroon CPU ms | ONNX Runtime CPU ms "
      "| CPU-time ratio | Maroon bits 1 = 2 threads | max rel. diff | fused ms | fused ratio | fused bits 1 = 2 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for m in models:
    same = rd(f"{m}_maroon_1").tobytes() == rd(f"{m}_maroon_2").tobytes()
    fsame = rd(f"{m}_fused_1").tobytes() == rd(f"{m}_fused_2").tobytes()
    a, b = rd(f"{m}_maroon_1"), rd(f"{m}_ort_1")
    rel = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30))
    for t in ("1", "2"):
        med = lambda i: float(np.median([float(r[i]) for r in rows if r[0] == m and r[1] == t]))
        ma, mc, ob, oc, fa = med(2), med(3), med(4), med(5), med(6)
        print(f"| {m} | {t} | {ma:.2f} | {ob:.2f} | {ob / ma:.3f} | {mc:.2f} | {oc:.2f} | {oc / mc:.3f} "
              f"| {'yes' if same else 'NO'} | {rel:.2g} | {fa:.2f} | {ob / fa:.3f} | {'yes' if fsame else 'NO'} |")
PY
# The host's bound for product-bound models: Maroon's products round each multiply and each add
# (no FMA, docs/spec.md), ONNX Runtime's fuse them; where both issue to the same ports the
# ratio below (about 0.5 on Intel cores, about 1 on AMD Zen 4) caps the throughput ratio of a
# model made of products.
peak=build/bench/cpu/maroon-bench-peak
[ -x "$peak" ] && echo "this host ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')): one thread's multiply+add against FMA peak: $("$peak")"
true
