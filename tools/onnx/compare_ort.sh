#!/usr/bin/env bash
# Maroon against ONNX Runtime (onnxruntime-node, CPU) on a small CNN exported from Debian's
# PyTorch 1.13: speed on 1 and 2 threads (median ms per batch, runs alternated between the two
# runtimes), the largest relative difference between their outputs, and whether each runtime's
# bits are the same across its own settings (Maroon: 1 and 2 threads, the reference executor;
# ONNX Runtime: 1 and 2 intra-op threads). Needs the build (tools/build.sh: build/ and .venv).
# usage: bash tools/onnx/compare_ort.sh [BATCH] [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
batch=${1:-32} reps=${2:-20}
out=build/onnx-compare
ort=${MAROON_ORT_DIR:-build/ort}
bash tools/onnx/install_ort.sh
/usr/bin/python3 tools/onnx/export_cnn.py "$out" "$batch" 2>/dev/null
model=$out/cnn.onnx x=$out/x.npy
ms() { sed 's/.*"ms": *\([0-9.]*\).*/\1/'; }
declare -A mt ot
for round in 1 2; do
  for t in 1 2; do
    m=$(.venv/bin/python tools/onnx/maroon_run.py "$model" "$x" "$t" "$reps" "$out/maroon_$t.bin")
    o=$(NODE_PATH="$ort/node_modules" node tools/onnx/ort_run.js "$model" "$x" "$t" "$reps" "$out/ort_$t.bin")
    mt[$t]="${mt[$t]:-} $(ms <<<"$m")" ot[$t]="${ot[$t]:-} $(ms <<<"$o")"
    echo "round $round, $t thread(s): maroon $(ms <<<"$m") ms, onnxruntime $(ms <<<"$o") ms"
  done
done
.venv/bin/python tools/onnx/maroon_run.py "$model" "$x" ref 1 "$out/maroon_ref.bin" >/dev/null
/usr/bin/python3 - "$out" "${mt[1]}" "${mt[2]}" "${ot[1]}" "${ot[2]}" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
med = lambda s: float(np.median([float(v) for v in s.split()]))
m1, m2, o1, o2 = (med(s) for s in sys.argv[2:6])
rd = lambda p: np.fromfile(f"{out}/{p}.bin", dtype=np.float32)
mar, ort = rd("maroon_1"), rd("ort_1")
rel = np.max(np.abs(mar - ort) / np.maximum(np.abs(ort), 1e-30))
same = lambda a, b: rd(a).tobytes() == rd(b).tobytes()
print(f"throughput ratio maroon/onnxruntime: 1 thread {o1 / m1:.4f} ({m1:.2f} vs {o1:.2f} ms), "
      f"2 threads {o2 / m2:.4f} ({m2:.2f} vs {o2:.2f} ms)")
print(f"max relative difference of the outputs: {rel:.3g}")
print(f"maroon bits equal across 1 thread, 2 threads, reference executor: {same('maroon_1', 'maroon_2') and same('maroon_1', 'maroon_ref')}")
print(f"onnxruntime bits equal across 1 and 2 threads: {same('ort_1', 'ort_2')}")
PY
