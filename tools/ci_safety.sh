#!/usr/bin/env bash
# Sanitizer builds and fuzzing (docs/reliability.md).
#
#   bash tools/ci_safety.sh          # CI's stage (tools/test.sh): sized to the 25-minute CI budget
#   bash tools/ci_safety.sh --full   # every suite under the sanitizers: for developers, not CI
#
# 1. build-asan: clang-19 at -O1 with ASan + UBSan (-fno-sanitize-recover=all: the first finding
#    fails) and libFuzzer's coverage; for CI Highway's baseline SIMD target only (compiling every
#    target would double the stage), with --full (in build-asan-full) every target. CI runs the
#    safety and IO suites (checked sizes, deep graphs, interrupts, threads, atomic files, bounded
#    reads), the `maroon` command on good and bad input, and each fuzzer for MAROON_FUZZ_SECONDS
#    (default 30) from its seed corpus, MAROON_FUZZ_PARALLEL (default 2) at a time. --full adds
#    the core, API (nn included), CPU, Lagoon and MNIST suites (the slowest comparisons with
#    PyTorch and MPFR left to the ordinary build: see SKIP). It also builds the determinism
#    battery: `matrix.py --ci` (tools/test.sh's next stage) runs it as its clang configuration,
#    so the same build proves a sanitized build gives the same digests.
# 2. build-tsan: clang-14 at -O1 with TSan, Highway's baseline target only: the thread pool
#    (maroon_pool_tests: tests/cpu/threads_test.cpp) and the multi-threaded API tests
#    (maroon_safety_tests, Threads.*). clang-14 (MAROON_TSAN_CC/CXX), not 19: CI then compiles
#    the library with clang-14 too, the oldest compiler Maroon supports.
#
# Longer fuzzing: bash tools/fuzz.sh [SECONDS_PER_FUZZER]. MAROON_SAFETY_JOBS (default: the CPU
# count) sets the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
full=0
[ "${1:-}" = "--full" ] && full=1
jobs=${MAROON_SAFETY_JOBS:-$(nproc)}
fuzz_seconds=${MAROON_FUZZ_SECONDS:-30}
fuzz_parallel=${MAROON_FUZZ_PARALLEL:-2}
CC=${MAROON_SAFETY_CC:-clang-19}
CXX=${MAROON_SAFETY_CXX:-clang++-19}
launcher=()
command -v ccache >/dev/null && [ -z "${MAROON_SAFETY_NO_CCACHE:-}" ] &&
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

stage() { echo "ci_safety: [$(( $(date +%s) - start )) s] $* (load $(cut -d' ' -f1 /proc/loadavg))"; }

configure() {  # DIR FLAGS EXTRA-CMAKE-ARGS...
  local dir=$1 flags=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    "${launcher[@]}" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="${flags/ -fsanitize=fuzzer-no-link/}" -DMAROON_BUILD_PYTHON=OFF \
    -DMAROON_BUILD_BENCH=OFF -DMAROON_PYTHON=/usr/bin/python3 "$@" >/dev/null
}

# ---- 1. ASan + UBSan, and the fuzzers
asan_flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
asan=build-asan
if [ $full = 1 ]; then asan=build-asan-full; else asan_flags+=" -DHWY_COMPILE_ONLY_STATIC=1"; fi
configure $asan "$asan_flags -fsanitize=fuzzer-no-link" -DMAROON_FUZZ=ON
fuzzers=()
for f in fuzz/*_fuzz.cpp; do n=$(basename "$f" _fuzz.cpp); fuzzers+=("maroon-fuzz-$n"); done
suites=(maroon_safety_tests maroon_io_tests)
[ $full = 1 ] && suites+=(maroon_tests maroon_api_tests maroon_cpu_tests maroon_lagoon_tests maroon_mnist_tests)
stage "building $asan"
cmake --build $asan -j "$jobs" --target "${suites[@]}" maroon-cli maroon-battery "${fuzzers[@]}" 2>&1 | tee $asan/build.log
# clang's warnings in the project's files fail CI as gcc's do (tools/check_warnings.sh).
bash tools/check_warnings.sh $asan/build.log

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Left to the ordinary build (minutes each under ASan, and none runs code the others do not):
# the PyTorch and MPFR comparison sweeps and the full training digests. The CPU backend's sweep
# runs the weakest and the best SIMD target (MAROON_TEST_SIMD_TARGETS=ends).
SKIP='TorchCompare.*:Optim.MatchesTorch*:NN.*Torch*:TinygradNN.*:FloatVsMpfr.*:MnistModels.*Training*:MnistModels.CpuBackend*:Keccak.HashMatchesTinygradsScheme'
stage "running tests under ASan+UBSan"
# Each suite as two gtest shards at once (CI's two cores; the slow tests, deep graphs and
# interrupts, run on one thread each).
run_shard() {  # SUITE EXE INDEX: one shard; its output kept in build-asan, shown if it fails
  local log=$asan/$1.shard$3.log
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$3 MAROON_TEST_SIMD_TARGETS=ends "$2" --gtest_brief=1 \
    --gtest_filter="-$SKIP" >"$log" 2>&1 || { cat "$log"; return 1; }
}
for t in "${suites[@]}"; do
  exe=$(find $asan/tests -name "$t" -type f -perm -u+x | head -1)
  run_shard "$t" "$exe" 0 & p0=$!
  run_shard "$t" "$exe" 1 & p1=$!
  ok=1
  wait $p0 || ok=0
  wait $p1 || ok=0
  [ $ok = 1 ] || { echo "ci_safety: $t failed under ASan+UBSan"; exit 1; }
  stage "  $t passed"
done
# The `maroon` command: a short run, its record and weights read back, and bad input (exit
# status 2, never a sanitizer report). tests/mnist/cli_test.sh covers the rest in the ordinary
# build; its 30-step training and replays cost minutes under ASan.
stage "the maroon command under ASan+UBSan"
cli_smoke() {
  local m=$asan/maroon t
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  "$m" -q train mnist --steps 4 --batch 32 --checkpoint-every 2 --out "$t/a.safetensors" --no-eval >/dev/null
  "$m" verify "$t/a.run.json" | grep -q "^verified: .* 4 steps replayed, every state commitment the same"
  "$m" digest "$t/a.safetensors" >/dev/null
  head -c 100 "$t/a.safetensors" >"$t/cut.safetensors"
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["epochs"]=2**62; json.dump(r,open(sys.argv[2],"w"))' \
    "$t/a.run.json" "$t/big.run.json"
  local bad
  for bad in "digest /dev/zero" "digest $t/cut.safetensors" "verify $t/big.run.json" "eval $t" "trian"; do
    set +e
    "$m" $bad >/dev/null 2>"$t/err"
    local rc=$?
    set -e
    [ $rc -eq 2 ] || { cat "$t/err"; echo "ci_safety: maroon $bad: exit status $rc, expected 2"; return 1; }
  done
}
cli_smoke

# Two fuzzers at a time (CI's two cores), each from a scratch copy of its seed corpus.
fuzz_one() {  # FORMAT: runs its fuzzer; prints one line; the log and any crash in fuzz-findings
  local n=$1 work log
  work=$(mktemp -d)
  cp fuzz/corpus/"$n"/* "$work"/
  log=$asan/fuzz-findings/$n.log
  if $asan/fuzz/maroon-fuzz-"$n" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix=$asan/fuzz-findings/"$n"- -print_final_stats=1 "$work" >"$log" 2>&1; then
    echo "  $n: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') executions in" \
      "$fuzz_seconds s, $(ls "$work" | wc -l) inputs in its corpus, no crash"
    rm -rf "$work"
  else
    tail -30 "$log"
    echo "ci_safety: maroon-fuzz-$n found a crash; the input is in $asan/fuzz-findings (add it to fuzz/corpus/$n once fixed)"
    rm -rf "$work"
    return 1
  fi
}
export -f fuzz_one
export asan fuzz_seconds
stage "fuzzing each parser for $fuzz_seconds s, $fuzz_parallel at a time"
rm -rf $asan/fuzz-findings
mkdir -p $asan/fuzz-findings
printf '%s\n' "${fuzzers[@]#maroon-fuzz-}" | xargs -P "$fuzz_parallel" -I{} bash -c 'fuzz_one {}' ||
  { echo "ci_safety: a fuzzer found a crash"; exit 1; }

# ---- 2. TSan: the thread pool (tests/cpu/threads_test.cpp) and the multi-threaded API tests
# (Threads.*: exceptions and interrupts in workers, concurrent realize and settings). Only these
# two test binaries and the engine library they need are built; ONNX, the command and the
# tools are off.
tsan_flags="-O1 -g1 -fsanitize=thread -DHWY_COMPILE_ONLY_STATIC=1"
CC=${MAROON_TSAN_CC:-clang-14} CXX=${MAROON_TSAN_CXX:-clang++-14} configure build-tsan "$tsan_flags" -DMAROON_FUZZ=OFF -DMAROON_ONNX=OFF -DMAROON_BUILD_CLI=OFF -DMAROON_BUILD_TOOLS=OFF
stage "building build-tsan"
cmake --build build-tsan -j "$jobs" --target maroon_safety_tests maroon_pool_tests
stage "running the thread tests under TSan"
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
build-tsan/tests/safety/maroon_pool_tests --gtest_brief=1
build-tsan/tests/safety/maroon_safety_tests --gtest_brief=1 --gtest_filter='Threads.*'

stage "all passed"
