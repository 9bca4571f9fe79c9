#!/usr/bin/env bash
# Configures and builds Maroon in ./build (Release). Used by main.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$MAROON_PYTHON" -DMAROON_PYTHON="$MAROON_PYTHON" >/dev/null
cmake --build build -j "$(nproc)"
