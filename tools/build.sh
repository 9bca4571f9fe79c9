#!/usr/bin/env bash
# Configures and builds Maroon in ./build (Release). Used by main.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMAROON_BUILD_PYTHON=ON \
  -DPython_EXECUTABLE="$MAROON_PYTHON" -DMAROON_PYTHON="$MAROON_PYTHON" >/dev/null
# The log keeps this build's warnings for tools/check_warnings.sh (test.sh fails on any in the
# project's files; a fresh build compiles every file, so there its log has every warning).
cmake --build build -j "$(nproc)" 2>&1 | tee build/build.log

# The Python package, in .venv from Debian's python3, installed offline (MAROON_BUILD_DIR makes
# setup.py reuse ./build, so this only links the extension).
[ -x .venv/bin/python ] || "$MAROON_PYTHON" -m venv --system-site-packages .venv
MAROON_BUILD_DIR=build .venv/bin/python -m pip install -q --no-build-isolation --no-index .
