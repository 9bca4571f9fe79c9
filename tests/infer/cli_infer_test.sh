#!/usr/bin/env bash
# `maroon infer` end to end on real MNIST: a 10-step MLP and a 2-step CNN, their inference
# digests on test images compared with tests/infer/digests.txt; the same digest from every input
# form and thread count, and on the reference backend (MLP); the CLI's JSON equal to the C ABI's
# (examples/infer.c) byte for byte; bad input gives exit status 2 and a message.
# usage: cli_infer_test.sh MAROON_BINARY MAROON_INFER_C_BINARY SOURCE_DIR
set -uo pipefail
maroon=$1
infer_c=$2
src=$3
source "$(dirname "${BASH_SOURCE[0]}")/../cli_lib.sh"  # tmp, fail, json, finish
stored() { awk -v k="$1" '$1 == k { print $2 }' "$src/tests/infer/digests.txt"; }
digest_of() { "$maroon" -q infer "$@" | awk '/^inference digest/ { print $3 }'; }
t10k="$src/data/mnist/t10k-images-idx3-ubyte"
[ -f "$t10k" ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }

"$maroon" -q train mnist --model mlp --steps 10 --seed 0 --out "$tmp/mlp.safetensors" --no-eval >/dev/null ||
  fail "train mlp"
"$maroon" -q train mnist --model cnn --steps 2 --batch 16 --seed 0 --out "$tmp/cnn.safetensors" --no-eval >/dev/null ||
  fail "train cnn"
# The first 100 test images as raw pixels (the IDX header is 16 bytes) and as a .npy.
tail -c +17 "$t10k" | head -c 78400 > "$tmp/x.raw"
/usr/bin/python3 -c 'import numpy as np, sys
np.save(sys.argv[2], np.fromfile(sys.argv[1], np.uint8).reshape(100, 28, 28))' "$tmp/x.raw" "$tmp/x.npy" ||
  fail "could not write x.npy"

for kind in mlp cnn; do
  want=$(stored "infer_${kind}_t10k_100")
  d=$(MAROON_THREADS=1 digest_of "$tmp/$kind.safetensors" -i "$t10k" --count 100)
  echo "infer_${kind}_t10k_100 $d"
  [ "$d" = "$want" ] || fail "$kind: digest $d, stored $want"
  for form in "-i $tmp/x.raw" "-i $tmp/x.npy" "-i $tmp/x.raw --format raw --threads 2"; do
    # shellcheck disable=SC2086
    [ "$(digest_of "$tmp/$kind.safetensors" $form)" = "$want" ] || fail "$kind: $form gives another digest"
  done
  # The reference executor against the CPU backend (the MLP on 3 images: the CNN is slow there).
  [ $kind = cnn ] || [ "$(MAROON_BACKEND=ref digest_of "$tmp/$kind.safetensors" -i "$t10k" --start 7 --count 3)" = \
    "$(digest_of "$tmp/$kind.safetensors" -i "$t10k" --start 7 --count 3)" ] ||
    fail "$kind: the reference backend gives another digest"
  cli=$("$maroon" --json infer "$tmp/$kind.safetensors" -i "$tmp/x.raw")
  c=$("$infer_c" "$tmp/$kind.safetensors" "$tmp/x.raw" --json)
  [ -n "$cli" ] && [ "$cli" = "$c" ] || fail "$kind: the CLI's and the C ABI's JSON differ"
  echo "$cli" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["digest"] == sys.argv[1] and len(j["classes"]) == 100 and j["outputs"] == [{"dtype": "float32", "shape": [100, 10]}], j
assert j["input"]["count"] == 100 and j["model"]["kind"] == sys.argv[2], j' "$want" "$kind" || fail "$kind: --json fields"
done

# Bad input: exit status 2 and a message naming the problem, never a signal.
expect_error() {
  local pattern=$1
  shift
  err=$("$maroon" infer "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$err" | grep -q -- "$pattern" || fail "infer $*: rc $rc, '$err'"
}
expect_error "cannot tell the format" "$tmp/mlp.safetensors" -i "$tmp/x.png"
expect_error "out of range" "$tmp/mlp.safetensors" -i "$tmp/x.raw" --start 99 --count 2
head -c 1000 "$tmp/x.raw" > "$tmp/cut.raw"
expect_error "N\*784" "$tmp/mlp.safetensors" -i "$tmp/cut.raw"
expect_error "needs an integer of at least 1" "$tmp/mlp.safetensors" -i "$tmp/x.raw" --count 0
head -c 100 "$tmp/mlp.safetensors" > "$tmp/cut.safetensors"
expect_error "cut.safetensors" "$tmp/cut.safetensors" -i "$tmp/x.raw"
expect_error "missing.npy" "$tmp/mlp.safetensors" -i "$tmp/missing.npy"

finish "cli_infer_test"
