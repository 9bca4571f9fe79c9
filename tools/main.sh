#!/usr/bin/env bash
# The main job: builds Maroon, then trains the MNIST MLP (784-512-512-10, Adam, 4 epochs, batch
# 64, seed 0; the setup fetched the data) and prints its test accuracy and the SHA-256 of its
# weights, the same on every machine and thread count. Extra arguments go to `maroon train`
# (e.g. --model cnn); `tools/main.sh demo` runs the bit-level demonstration instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh >/dev/null
if [ "${1:-}" = demo ]; then
  exec ./build/maroon-demo
fi
exec ./build/maroon train mnist --model mlp --epochs 4 --batch 64 --seed 0 "$@"
