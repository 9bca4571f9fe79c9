#!/usr/bin/env bash
# The determinism battery's ONNX class (onnx_battery.cpp) prints, in every configuration below,
# exactly the lines of tests/data/onnx_battery_digest.txt: the class line, each model's output
# bytes and its inference digest. A missing, extra or different line fails. With a battery
# argument and a line pattern, the same for another part of the battery (GATHER's lines of the
# small op battery: tests/data/gather_battery_digest.txt).
#   check_onnx_digests.sh MAROON_BATTERY EXPECTED_FILE [BATTERY_ARGS LINE_REGEX]
set -euo pipefail
exe=$1 expected=$2 args=${3:---onnx} lines=${4:-'^onnx[.:]'}
want=$(grep -v '^#' "$expected" | grep -v '^$' | sort)
[ -n "$want" ] || { echo "FAIL: $expected holds no digest lines"; exit 1; }
best=$("$exe" --list-simd | tail -1)
fail=0
for config in "cpu scalar 1 default" "cpu $best 3 default" "cpu $best 2 round-up" "ref scalar 1 ftz-daz"; do
  read -r backend simd threads fp <<<"$config"
  # shellcheck disable=SC2086 (args holds several words)
  out=$(MAROON_BACKEND=$backend MAROON_SIMD=$simd MAROON_THREADS=$threads "$exe" $args --fpstate="$fp")
  got=$(grep -E "$lines" <<<"$out" | sort)
  if [ "$got" == "$want" ]; then
    echo "ok: $config: $(wc -l <<<"$got") lines"
  else
    echo "FAIL: $config (backend simd threads fpstate): the battery's $lines lines differ from $expected:"
    diff <(echo "$want") <(echo "$got") || true
    fail=1
  fi
done
exit $fail
