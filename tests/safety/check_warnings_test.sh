#!/usr/bin/env bash
# tools/check_warnings.sh on three logs: none (it passed only when some warning was there: its
# system-header count failed under pipefail when grep found nothing), one in a system header
# (passes) and one in the project's files (fails, naming it).
set -u
tool=${1:?usage: check_warnings_test.sh TOOLS_CHECK_WARNINGS}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "check_warnings_test: $*"; exit 1; }
echo "[1/1] Linking CXX executable maroon" >"$d/none.log"
bash "$tool" "$d/none.log" >"$d/out" 2>&1 || fail "a log without warnings failed: $(cat "$d/out")"
grep -q "0 distinct warnings" "$d/out" || fail "no count printed for a clean log"
echo "/usr/include/c++/12/x.h:1:2: warning: restrict" >"$d/sys.log"
bash "$tool" "$d/sys.log" >"$d/out" 2>&1 || fail "a system header's warning failed the check"
grep -q "1 in system headers" "$d/out" || fail "the system header's warning was not counted"
echo "/somewhere/src/core/a.cpp:3:4: warning: unused variable" >"$d/ours.log"
if bash "$tool" "$d/ours.log" >"$d/out" 2>&1; then fail "a warning in the project's files passed"; fi
grep -q "a.cpp:3:4: warning: unused variable" "$d/out" || fail "the project's warning was not named"
echo "check_warnings_test: ok"
