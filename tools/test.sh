#!/usr/bin/env bash
# The whole test suite: builds Maroon and runs every test (ctest), printing a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash tools/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The determinism matrix's fast subset: g++ and clang, two SIMD targets, several thread counts
# and caller FP states, and the op battery on AArch64 under qemu (docs/determinism.md).
/usr/bin/python3 tools/determinism/matrix.py --ci
.venv/bin/python -m pytest -q python/tests
# Maroon as other projects get it: the installed CMake package, pkg-config, add_subdirectory.
bash tools/test_packages.sh
echo "test.sh: all tests passed in $(( $(date +%s) - start )) s"
