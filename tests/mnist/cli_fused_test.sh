#!/usr/bin/env bash
# `maroon train --fused` (issue 18): the products as REDUCE_MULACC (docs/spec.md §14). The same
# weights on 1 and 2 threads, on the SSE4 target (the software FMA steps), on the reference
# executor, and for the CNN; other weights than the default products'; the run record says so ("products":
# "fused" in job.config), so verify replays the fused steps, a resume must ask for them too, and a
# record with another value is refused by name.
# usage: cli_fused_test.sh MAROON_BINARY SOURCE_DIR
set -uo pipefail
maroon=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/../cli_lib.sh"  # tmp, fail, json, finish

[ -f "$src/data/mnist/train-images-idx3-ubyte" ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }
train() {  # train NAME [ENV...] -- [OPTIONS...]: 20 steps of the MLP at batch 128, JSON into NAME.json
  local name=$1
  shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env ${envs[@]+"${envs[@]}"} "$maroon" train mnist --model mlp --batch 128 --steps 20 --checkpoint-every 10 \
    --no-eval --json --out "$tmp/$name.safetensors" --data "$src/data/mnist" "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    fail "train $name: $(cat "$tmp/$name.err")"
}

train f1 MAROON_THREADS=1 -- --fused
train f2 MAROON_THREADS=2 -- --fused
train d1 MAROON_THREADS=1 --
fused=$(json "$tmp/f1.json" weights_sha256)
echo "fused weights $fused, default $(json "$tmp/d1.json" weights_sha256)"
[ "$(json "$tmp/f1.json" products)" = fused ] || fail "train --fused's JSON does not say products: fused"
[ "$(json "$tmp/d1.json" products)" = unfused ] || fail "train's JSON does not say products: unfused"
[ "$(json "$tmp/f2.json" weights_sha256)" = "$fused" ] || fail "fused weights differ between 1 and 2 threads"
[ "$(json "$tmp/f2.json" merkle_root)" = "$(json "$tmp/f1.json" merkle_root)" ] || fail "fused merkle roots differ"
[ "$(json "$tmp/d1.json" weights_sha256)" != "$fused" ] || fail "--fused gave the default products' weights"
/usr/bin/python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["job"]["config"].get("products") == "fused"
assert "products" not in json.load(open(sys.argv[2]))["job"]["config"]' "$tmp/f1.run.json" "$tmp/d1.run.json" ||
  fail "job.config.products: fused only in the fused record"

# The reference executor and SSE4 (no FMA instruction: gemm_fused.h's software steps) compute the
# same fused steps (fewer, smaller: both are slow, SSE4 ~2.7 s a step at batch 128).
for b in "MAROON_BACKEND=ref" "MAROON_SIMD=sse4" "MAROON_BACKEND=cpu"; do
  env $b "$maroon" train mnist --model mlp --batch 16 --steps 3 --fused --no-eval --json \
    --out "$tmp/small.safetensors" --data "$src/data/mnist" 2>"$tmp/small.err" | grep weights_sha256 || fail "train, $b"
done >"$tmp/small.txt"
[ "$(sort -u "$tmp/small.txt" | wc -l)" = 1 ] && [ "$(wc -l <"$tmp/small.txt")" = 3 ] ||
  fail "fused training on the reference executor, SSE4 and AVX-512 differ: $(cat "$tmp/small.txt")"

# The CNN (fused convolutions and their gradients: the input gradient folded by the fused tiles,
# src/cpu/matmul_fold.cpp): the same weights on 1 and 2 threads and on AVX2, 2 steps at batch 64.
# (Not on SSE4: without an FMA instruction the fused products take gemm_fused.h's software steps,
# a minute for these two steps; tests/cpu/conv_grad_test.cpp checks every target's bits.)
for e in "MAROON_THREADS=1" "MAROON_THREADS=2" "MAROON_THREADS=2 MAROON_SIMD=avx2"; do
  env $e "$maroon" train mnist --model cnn --batch 64 --steps 2 --fused --no-eval --json \
    --out "$tmp/cnn.safetensors" --data "$src/data/mnist" 2>/dev/null | grep weights_sha256
done >"$tmp/cnn.txt" || fail "fused CNN training"
[ "$(sort -u "$tmp/cnn.txt" | wc -l)" = 1 ] && [ "$(wc -l <"$tmp/cnn.txt")" = 3 ] ||
  fail "fused CNN weights differ between threads or targets: $(cat "$tmp/cnn.txt")"

# verify replays the fused steps (on 2 threads): every state commitment the same.
out=$(MAROON_THREADS=2 "$maroon" verify "$tmp/f1.run.json" --data "$src/data/mnist" 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "^verified: .* 20 steps replayed" || fail "verify of the fused run: rc $rc: $out"

# A resume must run the job the record names: without --fused it is refused, with it the rest of
# the run gives the uninterrupted run's weights.
cp "$tmp/f1.run.json" "$tmp/keep.run.json"
err=$("$maroon" train mnist --model mlp --batch 128 --steps 20 --no-eval --out "$tmp/f1.safetensors" \
      --resume-from "$tmp/f1.ckpt/step-000000010.safetensors" --data "$src/data/mnist" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q 'cannot resume.*job.config.products is "fused" there, (none) here' ||
  fail "resume of a fused run without --fused: rc $rc: $err"
train f1 MAROON_THREADS=2 -- --fused --resume-from "$tmp/f1.ckpt/step-000000010.safetensors"
[ "$(json "$tmp/f1.json" weights_sha256)" = "$fused" ] || fail "the resumed fused run's weights differ"

# A record whose products are neither absent nor "fused" is refused, naming the field.
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
r["job"]["config"]["products"] = "fast"
json.dump(r, open(sys.argv[2], "w"))' "$tmp/keep.run.json" "$tmp/bad.run.json"
err=$("$maroon" verify "$tmp/bad.run.json" --data "$src/data/mnist" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q 'job.config.products "fast" is not "fused"' || fail "bad products: rc $rc: $err"

finish "cli_fused_test"
