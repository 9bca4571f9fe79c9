#!/usr/bin/env bash
# Longer fuzzing for developers (tools/ci_safety.sh runs each fuzzer 30 s):
#   bash tools/fuzz.sh [SECONDS_PER_FUZZER] [FORMAT...]
# Builds the libFuzzer harnesses of fuzz/ with ASan+UBSan in build-asan (as CI does), then runs
# each for SECONDS_PER_FUZZER (default 600) on all cores, growing a working corpus in
# build-asan/fuzz-corpus/<format> from the seeds in fuzz/corpus/<format>. A crash stops that
# fuzzer and leaves the input in build-asan/fuzz-findings; once fixed, copy it into
# fuzz/corpus/<format>/ (named crash-<what>) so that every build replays it (ctest fuzz_replay_*).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
formats=("$@")
if [ ${#formats[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cpp; do formats+=("$(basename "$f" _fuzz.cpp)"); done
fi
# The same flags as tools/ci_safety.sh gives build-asan (Highway's baseline target only), so the two
# share that build.
flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -DHWY_COMPILE_ONLY_STATIC=1"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_C_FLAGS="$flags -fsanitize=fuzzer-no-link" -DCMAKE_CXX_FLAGS="$flags -fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DMAROON_FUZZ=ON -DMAROON_BUILD_PYTHON=OFF -DMAROON_BUILD_BENCH=OFF \
  -DMAROON_PYTHON=/usr/bin/python3 >/dev/null
targets=()
for n in "${formats[@]}"; do targets+=("maroon-fuzz-$n"); done
cmake --build build-asan -j "$(nproc)" --target "${targets[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p build-asan/fuzz-findings
status=0
for n in "${formats[@]}"; do
  corpus=build-asan/fuzz-corpus/$n
  mkdir -p "$corpus"
  echo "fuzz: $n for $seconds s on $(nproc) workers"
  if build-asan/fuzz/maroon-fuzz-"$n" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -fork="$(nproc)" -ignore_crashes=0 -print_final_stats=1 \
      -artifact_prefix=build-asan/fuzz-findings/"$n"- "$corpus" fuzz/corpus/"$n" 2>&1 | tail -5; then
    echo "fuzz: $n: no crash ($(ls "$corpus" | wc -l) inputs in its corpus)"
  else
    echo "fuzz: $n: FOUND A CRASH, see build-asan/fuzz-findings"
    status=1
  fi
done
exit $status
