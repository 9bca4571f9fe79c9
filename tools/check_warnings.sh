#!/usr/bin/env bash
# Fails when a build log has a compiler warning located in the project's own files (a fresh
# build, as CI's, compiles every file, so its log has every warning). Warnings located in system
# headers (/usr/...: libstdc++ 12's -Wrestrict false positive, GCC bug 105329) are not the
# project's and are listed apart. Why a gate: GCC's -Wsubobject-linkage appeared once plan.cpp
# joined a unity batch and nothing failed; a warning the build only prints is soon one of many.
# usage: tools/check_warnings.sh BUILD_LOG
set -euo pipefail
log=${1:?usage: tools/check_warnings.sh BUILD_LOG}
[ -f "$log" ] || { echo "check_warnings: no build log $log"; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
# file:line:col: warning: ..., the path absolute (CMake passes absolute sources) or relative.
all=$(grep -oE '[^ ]+:[0-9]+:[0-9]+: warning: .*' "$log" | sort -u || true)
ours=$(printf '%s\n' "$all" | grep -vE '^/usr/' | grep -v '^$' || true)
theirs=$(printf '%s\n' "$all" | grep -cE '^/usr/' || true)
echo "check_warnings: $(printf '%s\n' "$ours" | grep -c . || true) distinct warnings in the project's files," \
  "$theirs in system headers (not the project's), in $log"
if [ -n "$ours" ]; then
  printf '%s\n' "$ours" | sed "s|^$root/||"
  exit 1
fi
