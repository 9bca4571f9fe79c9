#!/usr/bin/env bash
# One command for Maroon against its peers on the same work: MNIST MLP training at 1 and 2
# threads and the CNN at 2 (against bench/mnist/mnist_torch.py, PyTorch 1.13 with
# OMP_WAIT_POLICY=PASSIVE), and from Python: small-op latency, .numpy() and Tensor(ndarray)
# bandwidth against np.copy, matmul at N=1024 and 64 (against PyTorch and numpy/OpenBLAS). Runs
# alternate, each in its own process; prints a Markdown table of medians, ratios and peak RSS.
#
# usage: bash bench/peers.sh [--reps N] [--steps K] [--cnn-steps K] [--only a,b] [--busy]
#                           [--maroon BIN] [--python PY]   (another build to time, e.g. a baseline)
#   (after `bash tools/build.sh`: needs build/maroon and .venv with the Python package)
#   --busy   run everything beside a competing busy process (`stress-ng --cpu 1`), as on a
#            shared cloud machine
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/maroon ] && [ -x .venv/bin/python ] || { echo "peers.sh: run bash tools/build.sh first" >&2; exit 2; }
args=()
busy=0
for a in "$@"; do
  if [ "$a" = --busy ]; then busy=1; else args+=("$a"); fi
done
tmp=$(mktemp -d)
stress=
cleanup() {
  [ -n "$stress" ] && kill "$stress" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$busy" = 1 ]; then
  stress-ng --cpu 1 --quiet >/dev/null 2>&1 &
  stress=$!
  echo "(beside stress-ng --cpu 1)"
fi
date -u +"%Y-%m-%d %H:%M UTC"
TMPDIR=$tmp /usr/bin/python3 bench/peers/peers.py ${args[@]+"${args[@]}"}
# The products' bound on this host (bench/cpu/peak_bench.cpp): Maroon's unfused products against
# an FMA library's (PyTorch, OpenBLAS) can reach at most about this ratio of their speed.
peak=build/bench/cpu/maroon-bench-peak
[ -x "$peak" ] && echo "this host ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')): one thread's multiply+add against FMA peak: $("$peak")"
true
