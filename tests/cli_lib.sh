# Shared by the CLI test scripts (sourced, not run): a scratch directory removed on exit, a
# failure counter with `fail`, and `finish NAME`, which prints the summary and exits non-zero on any
# failure. Every check runs to the end so that one run shows every failure, not only the first.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# json FILE KEY: the top-level KEY of a JSON file (Debian's Python: tools never use the pyenv one).
json() { /usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
finish() {
  [ $failures -eq 0 ] && echo "$1: all checks passed" || echo "$1: $failures failure(s)"
  exit $((failures > 0))
}
