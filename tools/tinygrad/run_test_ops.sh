#!/usr/bin/env bash
# tinygrad's own test_ops.py against Maroon, only the import changed: the tests run from a
# tinygrad checkout (never copied into this repository) with `Tensor` and `dtypes` taken from
# maroon (maroon_shim.py, a pytest plugin, swaps the two names in the tinygrad package before the
# test module imports them). Prints the pass/fail counts and the failing tests.
#
#   bash tools/tinygrad/run_test_ops.sh TINYGRAD_DIR [--peer] [-k EXPR]...
#
# --peer runs the same tests on tinygrad itself (DEV=CPU), the baseline. Needs ./.venv with
# maroon installed (bash tools/build.sh); Debian's python3 (the venv's), its numpy and torch.
# Remaining failures, with reasons: docs/tinygrad-compat.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] && [ -d "$1" ] || { echo "usage: $0 TINYGRAD_DIR [--peer] [pytest args]" >&2; exit 2; }
tg=$(cd "$1" && pwd); shift
shim=1
if [ "${1:-}" = "--peer" ]; then shim=0; shift; fi
test_file=
for f in test/backend/test_ops.py test/test_ops.py; do [ -f "$tg/$f" ] && { test_file=$f; break; }; done
[ -n "$test_file" ] || { echo "no test_ops.py under $tg/test" >&2; exit 2; }
py="$root/.venv/bin/python"
[ -x "$py" ] || py=/usr/bin/python3
commit=$(git -C "$tg" rev-parse HEAD 2>/dev/null || echo "${TINYGRAD_COMMIT:-unknown}")
xml=$(mktemp /tmp/maroon-test-ops.XXXXXX.xml)
trap 'rm -f "$xml"' EXIT
echo "tinygrad $commit, $test_file, Tensor from $([ $shim = 1 ] && echo maroon || echo tinygrad)"
(cd "$tg" && MAROON_SHIM=$shim DEV=CPU PYTHONPATH="$tg:$root/tools/tinygrad" "$py" -m pytest -q --noconftest \
   -p no:cacheprovider -p maroon_shim --junitxml="$xml" "$test_file" "$@" >/dev/null 2>&1) || true
"$py" - "$xml" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
res = {"passed": [], "failed": [], "skipped": []}
for c in cases:
  name = c.get("name")
  kids = {k.tag for k in c}
  res["failed" if kids & {"failure", "error"} else "skipped" if "skipped" in kids else "passed"].append(name)
for n in sorted(res["failed"]): print("FAILED", n)
print(f"passed {len(res['passed'])} failed {len(res['failed'])} skipped {len(res['skipped'])}")
PY
