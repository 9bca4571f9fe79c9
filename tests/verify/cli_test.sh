#!/usr/bin/env bash
# `maroon` train/verify/bisect/trace end to end on real MNIST (small runs): exact resume from a
# checkpoint, a flipped bit in a checkpoint and in the weights caught by verify, an accuracy claim
# re-measured, a run perturbed at step 6 bisected to that step and tensor, a trace, bad input.
# usage: cli_test.sh MAROON_BINARY SOURCE_DIR
set -uo pipefail
maroon=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/../cli_lib.sh"  # tmp, fail, json, finish
field() { awk -v k="$1" 'index($0, k) == 1 { print $NF }'; }
flip() {  # flip FILE OFFSET-FROM-END: one bit
  /usr/bin/python3 -c '
import sys
p, k = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[len(b) - k] ^= 0x10; open(p, "wb").write(b)' "$1" "$2"
}
[ -f "$src/data/mnist/train-images-idx3-ubyte" ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }
train() { "$maroon" -q train mnist --batch 32 --steps 12 --checkpoint-every 4 --no-eval "$@"; }

out=$(train --out "$tmp/a.safetensors"); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "train: rc $rc"
root=$(echo "$out" | field "merkle root")
weights=$(echo "$out" | field "weights sha256")
ls "$tmp/a.ckpt" | tr '\n' ' '; echo

# Exact resume: from the checkpoints of steps 4 and 8 of a's record, the same weights and root.
for k in 4 8; do
  cp "$tmp/a.run.json" "$tmp/r$k.run.json"
  out=$(train --out "$tmp/r$k.safetensors" --resume-from "$tmp/a.ckpt/step-00000000$k.safetensors"); rc=$?
  [ $rc -eq 0 ] && [ "$(echo "$out" | field "merkle root")" = "$root" ] &&
    [ "$(echo "$out" | field "weights sha256")" = "$weights" ] || fail "resume from step $k: rc $rc\n$out"
done
err=$(train --out "$tmp/x.safetensors" --resume 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "x.run.json" || fail "--resume without a record: rc $rc: $err"

# verify: every file and every step; then a flipped bit in a checkpoint and in the weights.
out=$("$maroon" verify "$tmp/a.run.json"); rc=$?
echo "$out"
[ $rc -eq 0 ] && echo "$out" | grep -q "^verified: 9 files, 12 steps replayed" || fail "verify: rc $rc"
mkdir "$tmp/copy" && cp "$tmp/a.safetensors" "$tmp/copy/"  # someone's copy of the weights
flip "$tmp/a.ckpt/step-000000008.safetensors" 1000
flip "$tmp/copy/a.safetensors" 77
out=$("$maroon" verify "$tmp/a.run.json" "$tmp/copy/a.safetensors" --no-replay); rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -q "^differs: $tmp/a.ckpt/step-000000008.safetensors: sha256 = states\[8\] (step 8): recorded [0-9a-f]\{64\}, found [0-9a-f]\{64\}" &&
  echo "$out" | grep -q "^differs: $tmp/copy/a.safetensors: sha256 (outputs weights): recorded $weights, found" ||
  fail "flipped bits: rc $rc"
err=$(train --out "$tmp/r8.safetensors" --resume-from "$tmp/a.ckpt/step-000000008.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "step-000000008.safetensors' (step 8) has sha256 .*, the record commits to" ||
  fail "resume from a corrupted checkpoint: rc $rc"

# An accuracy claim, re-measured; an edited one is caught (and breaks the seal).
out=$("$maroon" -q train mnist --batch 32 --steps 4 --out "$tmp/e.safetensors"); rc=$?
acc=$(echo "$out" | sed -n 's/^test accuracy *\([0-9.]*\)%/\1/p')
out=$("$maroon" verify "$tmp/e.run.json" --accuracy --no-replay); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "and the test accuracy" || fail "verify --accuracy: rc $rc: $out"
sed -i "s/\"test_accuracy\": \"$acc\"/\"test_accuracy\": \"99.99\"/" "$tmp/e.run.json"
out=$("$maroon" verify "$tmp/e.run.json" --accuracy --no-replay); rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -q "claims.test_accuracy (re-measured): recorded 99.99, found $acc" ||
  fail "edited accuracy: rc $rc"

# A run with one parameter bit flipped after step 6: bisect names step 6, the tensor and the node
# that computed it, and the referee sides with a, in (6 - 1 - 4) + 2 = 3 step replays.
out=$(train --out "$tmp/b.safetensors" --perturb 6:l2.weight:123:30); rc=$?
[ $rc -eq 0 ] || fail "perturbed train: rc $rc"
cp "$tmp/r4.ckpt/step-000000008.safetensors" "$tmp/a.ckpt/"  # undo the flipped bit above
out=$("$maroon" bisect "$tmp/a.run.json" "$tmp/b.run.json"); rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -q "^phase 1: the committed states first differ after step 6" &&
  echo "$out" | grep -q "^verdict: b is wrong at step 6, state tensor model.l2.weight (computed by node #[0-9]* ADD float32 (512,512)" &&
  echo "$out" | grep -q "1 checkpoint load(s), 3 step replay(s)" || fail "bisect: rc $rc"
out=$("$maroon" verify "$tmp/b.run.json" --no-replay); rc=$?
[ $rc -eq 0 ] || fail "the perturbed run's files are consistent with its record: rc $rc"
out=$("$maroon" verify "$tmp/b.run.json"); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "states\[6\] (replayed) (step 6)" || fail "verify of the perturbed run: rc $rc"
out=$("$maroon" bisect "$tmp/a.run.json" "$tmp/r4.run.json"); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "commit to the same state after each of their 12 common steps" ||
  fail "bisect of identical runs: rc $rc"

# A trace of one step on its own.
out=$("$maroon" trace "$tmp/a.run.json" --step 6 --out "$tmp/t6.json"); rc=$?
echo "$out"
[ $rc -eq 0 ] && /usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
assert t["format"] == "maroon-trace/1" and t["step"] == 6 and len(t["nodes"]) > 100, t["step"]
assert any(n["label"] == "model.l1.weight" for n in t["nodes"])
assert all(s < i for i, n in enumerate(t["nodes"]) for s in n["src"])' "$tmp/t6.json" || fail "trace: rc $rc"

# Bad input: exit status 2 and a message naming the file.
head -c 300 "$tmp/a.run.json" > "$tmp/cut.run.json"
err=$("$maroon" bisect "$tmp/a.run.json" "$tmp/cut.run.json" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "cut.run.json" || fail "bisect of a truncated record: rc $rc"
err=$("$maroon" trace "$tmp/a.run.json" --step 99 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "step 99 is not a step" || fail "trace of a step past the end: rc $rc"
out=$("$maroon" -q train mnist --batch 64 --steps 3 --no-eval --out "$tmp/o.safetensors"); rc=$?
err=$("$maroon" bisect "$tmp/a.run.json" "$tmp/o.run.json" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "not runs of the same job: job.config.batch is \"32\" and \"64\"" ||
  fail "bisect of two jobs: rc $rc: $err"

finish "cli_test"
