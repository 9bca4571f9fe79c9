#!/usr/bin/env bash
# The README's headline digests are what the code produces: runs the main job's training
# (tools/main.sh: MLP, 4 epochs, batch 64, seed 0; evaluation skipped, it changes no digest) and
# compares its two digest lines with the README's.
# usage: readme_digests_test.sh MAROON_BINARY SOURCE_DIR
set -uo pipefail
maroon=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -f "$src/data/mnist/train-images-idx3-ubyte" ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }
readme() { awk -v k="$1" 'index($0, k) == 1 { print $NF; exit }' "$src/README.md"; }
want_w=$(readme "weights sha256")
want_t=$(readme "loss trace sha256")
[ -n "$want_w" ] && [ -n "$want_t" ] || { echo "FAIL: no headline digests in README.md"; exit 1; }
out=$("$maroon" train mnist --model mlp --epochs 4 --batch 64 --seed 0 --no-eval --out "$tmp/m.safetensors" 2>/dev/null)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: train exited $rc"; exit 1; }
got_w=$(echo "$out" | awk 'index($0, "weights sha256") == 1 { print $NF }')
got_t=$(echo "$out" | awk 'index($0, "loss trace sha256") == 1 { print $NF }')
failures=0
[ "$got_w" = "$want_w" ] || { echo "FAIL: weights sha256 $got_w, README says $want_w"; failures=1; }
[ "$got_t" = "$want_t" ] || { echo "FAIL: loss trace sha256 $got_t, README says $want_t"; failures=1; }
[ $failures -eq 0 ] && echo "README headline digests reproduced"
exit $failures
