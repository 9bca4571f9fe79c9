#!/usr/bin/env bash
# The whole test suite: builds Maroon and runs every test (ctest), printing a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash tools/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
.venv/bin/python -m pytest -q python/tests
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
