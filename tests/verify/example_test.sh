#!/usr/bin/env bash
# examples/mnist_mlp.cpp end to end: the MLP trained for 6 steps by a user's own C++ loop with every
# step committed, its record written outside the working directory while the data is named
# relative to it (the record must still find it), then verified by replaying every step.
# usage: example_test.sh EXAMPLE_BINARY SOURCE_DIR
set -uo pipefail
example=$1
cd "$2" || exit 1
[ -f data/mnist/train-images-idx3-ubyte ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$example" 6 "$tmp/mlp.run.json" data/mnist); rc=$?
echo "$out"
if [ $rc -eq 0 ] && echo "$out" | grep -q "^verified: 4 files, 6 steps replayed"; then
  echo "example_test: passed"
else
  echo "FAIL: mnist_mlp example: rc $rc"
  exit 1
fi
