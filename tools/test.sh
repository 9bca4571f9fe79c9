#!/usr/bin/env bash
# The whole test suite: builds Maroon and runs every test (ctest), printing a summary with each
# stage's time and the machine's load (CI's budget is 25 minutes on 2 cores; docs/reliability.md
# says what each stage costs).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
summary=()
# CPU seconds (user + system) used so far by finished child processes: with the wall time it
# tells a stage's cost on a loaded machine (on CI's 2 idle cores a stage takes about
# max(CPU/2, its serial part)).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
cpu_now() {  # sets $cpu_s (`times` in this shell: in $(...) it would see only the subshell)
  times >"$cpu_file"
  cpu_s=$(tail -1 "$cpu_file" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
}
# stage NAME COMMAND...: runs COMMAND, timing it; the summary is printed even when a stage fails.
stage() {
  local name=$1 t0 c0 rc=0
  shift
  t0=$(date +%s)
  cpu_now
  c0=$cpu_s
  echo "test.sh: [$((t0 - start)) s] $name (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$@" || rc=$?
  cpu_now
  summary+=("$(printf '%-12s %5d s wall %6d s CPU  load %s' "$name" $(($(date +%s) - t0)) $((cpu_s - c0)) \
    "$(cut -d' ' -f1 /proc/loadavg)")")
  [ $rc -eq 0 ] || { report; echo "test.sh: $name failed (exit $rc)"; exit $rc; }
}
report() { printf 'test.sh:   %s\n' "${summary[@]}"; }

stage build bash tools/build.sh
stage warnings bash tools/check_warnings.sh build/build.log
stage ctest ctest --test-dir build --output-on-failure -j "$(nproc)"
# ASan+UBSan (the safety, IO and CLI suites), each libFuzzer harness for MAROON_FUZZ_SECONDS
# (the issue's 30 s: about 125 s of CI, paid for by the libraries' unity build) two at a time,
# TSan on the thread pool and the multi-threaded API tests (docs/reliability.md, "Sanitizers").
# MAROON_TEST_SAFETY=0 skips it, and the determinism stage then skips its clang row, which runs
# this stage's ASan build.
matrix_only=()
if [ "${MAROON_TEST_SAFETY:-1}" != 0 ]; then
  stage safety env MAROON_FUZZ_SECONDS="${MAROON_FUZZ_SECONDS:-30}" bash tools/ci_safety.sh
else
  matrix_only=(--only 'gcc12-Release|aarch64')
fi
# The determinism matrix's fast subset: ./build (gcc) and the safety stage's build-asan (clang,
# sanitized), two SIMD targets, several thread counts and caller FP states, and the op battery
# on AArch64 under qemu (docs/determinism.md).
stage determinism /usr/bin/python3 tools/determinism/matrix.py --ci "${matrix_only[@]}"
stage pytest .venv/bin/python -m pytest -q python/tests
# Maroon as other projects get it: the installed CMake package, pkg-config, add_subdirectory, the
# sdist (its wheel, ~200 s to compile, is left to `bash tools/test_packages.sh`: CI took 1733 s with it).
stage packages bash tools/test_packages.sh --no-wheel
report
echo "test.sh: all tests passed in $(($(date +%s) - start)) s"
