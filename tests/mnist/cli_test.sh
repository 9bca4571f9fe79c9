#!/usr/bin/env bash
# The `maroon` command end to end on real MNIST: train 30 steps on 1 thread, compare the printed
# digest with tests/mnist/digests.txt and sha256sum, verify on 2 threads ("verified"), verify
# tampered records (the first differing step), eval, and bad input (an error, never a crash).
# tests/verify/cli_test.sh covers verify, bisect, trace and resume further.
# usage: cli_test.sh MAROON_BINARY SOURCE_DIR
set -uo pipefail
maroon=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/../cli_lib.sh"  # tmp, fail, json, finish
stored() { awk -v k="$1" '$1 == k { print $2 }' "$src/tests/mnist/digests.txt"; }
field() { awk -v k="$1" 'index($0, k) == 1 { print $NF }'; }

[ -f "$src/data/mnist/train-images-idx3-ubyte" ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }

out=$(MAROON_THREADS=1 "$maroon" train mnist --model mlp --epochs 1 --batch 128 --seed 0 --steps 30 \
      --checkpoint-every 10 --out "$tmp/a.safetensors" --no-eval 2>"$tmp/train.err")
rc=$?
cat "$tmp/train.err"
echo "$out"
[ $rc -eq 0 ] || fail "train exited $rc"
# Results on stdout, progress and logs on stderr.
grep -q "^maroon train: mnist" "$tmp/train.err" || fail "train's log line is not on stderr"
grep -q "step 30/30" "$tmp/train.err" || fail "train's progress is not on stderr"
echo "$out" | grep -q "^epoch\|^maroon train" && fail "progress or logs on stdout"
weights=$(echo "$out" | field "weights sha256")
trace=$(echo "$out" | field "loss trace sha256")
echo "cli_mnist_mlp_30_steps $weights"
echo "cli_mnist_mlp_30_steps_loss_trace $trace"
[ "$weights" = "$(stored cli_mnist_mlp_30_steps)" ] || fail "weights digest $weights, stored $(stored cli_mnist_mlp_30_steps)"
[ "$trace" = "$(stored cli_mnist_mlp_30_steps_loss_trace)" ] || fail "loss trace digest $trace, stored $(stored cli_mnist_mlp_30_steps_loss_trace)"
[ "$(sha256sum "$tmp/a.safetensors" | cut -d' ' -f1)" = "$weights" ] || fail "sha256sum of the weights file differs from the digest"
[ "$("$maroon" digest "$tmp/a.safetensors" | cut -d' ' -f1)" = "$weights" ] || fail "maroon digest differs from train's digest"

out=$(MAROON_THREADS=2 "$maroon" verify "$tmp/a.run.json")
rc=$?
echo "$out"
[ $rc -eq 0 ] && echo "$out" | grep -q "^verified: 9 files, 30 steps replayed" || fail "verify on 2 threads: rc $rc"
[ "$(echo "$out" | field "weights sha256")" = "$weights" ] || fail "verify printed another weights digest"

# The record (maroon-run/3, docs/verify.md): a state commitment per step and checkpoints at 0, 10,
# 20 and 30 whose SHA-256 is the commitment of their step.
/usr/bin/python3 -c '
import hashlib, json, os, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "maroon-run/3" and r["job"]["config"]["lr"] == "0.001", r["job"]
assert len(r["states"]) == 31 and len(r["losses_f32_bits"]) == 30
assert [c["step"] for c in r["checkpoints"]] == [0, 10, 20, 30], r["checkpoints"]
for c in r["checkpoints"]:
    data = open(os.path.join(os.path.dirname(sys.argv[1]), c["path"]), "rb").read()
    assert hashlib.sha256(data).hexdigest() == r["states"][c["step"]], c' "$tmp/a.run.json" ||
  fail "the run record and its checkpoints"

# A record whose 12th loss was changed: its seal no longer matches and the replay names step 12.
tamper() {  # tamper OUT PYTHON-STATEMENT (on the record r)
  /usr/bin/python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
$2
json.dump(r, open(sys.argv[2], 'w'), indent=2)" "$tmp/a.run.json" "$1" || fail "could not tamper: $2"
}
tamper "$tmp/loss.run.json" 'r["losses_f32_bits"][11] = "3f800000"'
out=$("$maroon" verify "$tmp/loss.run.json")
rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -q "^differs: .*loss.run.json: losses_f32_bits\[11\] (step 12): recorded 0x3f800000" &&
  echo "$out" | grep -q "^differs: .*loss.run.json: seal" || fail "tampered loss: rc $rc"
out=$("$maroon" --json verify "$tmp/loss.run.json")
rc=$?
echo "$out" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["verified"] is False and j["differences"][-1]["step"] == 12, j' && [ $rc -eq 1 ] ||
  fail "verify --json of the tampered loss: rc $rc"
# Records from before state commitments (maroon-run/1 and /2) are refused with a reason.
tamper "$tmp/v2.run.json" 'r["format"] = "maroon-run/2"'
err=$("$maroon" verify "$tmp/v2.run.json" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "commit to no states" || fail "verify of a maroon-run/2 record: rc $rc"

# A record whose state after step 20 was changed: the Merkle root no longer matches and the
# replay names step 20.
tamper "$tmp/w.run.json" 'r["states"][20] = "0" * 64'
out=$("$maroon" verify "$tmp/w.run.json")
rc=$?
echo "$out"
[ $rc -eq 1 ] && echo "$out" | grep -q "merkle_root" && echo "$out" | grep -q "states\[20\] (replayed) (step 20)" ||
  fail "tampered state: rc $rc"

out=$("$maroon" eval "$tmp/a.safetensors")
rc=$?
echo "$out"
[ $rc -eq 0 ] && echo "$out" | grep -q "test accuracy [0-9.]*%" || fail "eval: rc $rc"
# --json: one JSON document on stdout with numbers as numbers, the same figures as the text.
correct=$(echo "$out" | sed -n 's|.*: \([0-9]*\)/10000 correct.*|\1|p')
"$maroon" eval "$tmp/a.safetensors" --json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["correct"] == int(sys.argv[1]) and j["total"] == 10000, j
assert j["test_accuracy"] == round(j["correct"] / 100, 2) and j["model"] == "mlp", j' "$correct" || fail "eval --json"
"$maroon" --json digest "$tmp/a.safetensors" "$tmp/a.safetensors" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
assert [d["weights_sha256"] for d in j] == [sys.argv[1]] * 2, j' "$weights" || fail "digest --json"

# Conventions: per-command help on stdout with exit status 0, and one version everywhere.
out=$("$maroon" train --help); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q -- "--epochs" && echo "$out" | grep -q "Usage: maroon train" || fail "train --help: rc $rc"
out=$("$maroon" help verify); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "Usage: maroon verify" || fail "help verify: rc $rc"
out=$("$maroon" --version); rc=$?
[ $rc -eq 0 ] && [ "$(echo "$out" | head -1)" = "maroon $(cat "$src/VERSION")" ] || fail "--version: rc $rc, '$out'"

# Bad input: exit status 2 and a message, never a signal.
head -c 100 "$tmp/a.safetensors" > "$tmp/cut.safetensors"
err=$("$maroon" digest "$tmp/cut.safetensors" 2>&1)
rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "runs past the end" || fail "truncated weights: rc $rc"
err=$("$maroon" train mnist --epochs 0 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q -- "--epochs: needs an integer of at least 1, got '0'" || fail "--epochs 0: rc $rc"
err=$("$maroon" train mnist --bogus 1 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "unknown option --bogus" || fail "unknown option: rc $rc"
err=$("$maroon" train mnist --epoch 2 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "unknown option --epoch (did you mean --epochs?)" || fail "--epoch: rc $rc"
err=$("$maroon" trian 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "unknown command 'trian' (did you mean train?)" || fail "trian: rc $rc"
"$maroon" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "maroon without a command: rc $rc"
err=$("$maroon" verify "$tmp/cut.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] || fail "verify of a missing record: rc $rc"
err=$("$maroon" train mnist --steps 2 --data "$tmp" --out "$tmp/x.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "fetch_mnist" || fail "missing data: rc $rc"

# Inputs are bounded (issue 21): a device, a FIFO or a directory is refused at once, never read
# until memory runs out or waited on for ever.
err=$(timeout 20 "$maroon" digest /dev/zero 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "not a regular file" || fail "digest /dev/zero: rc $rc"
mkfifo "$tmp/fifo.safetensors"
err=$(timeout 20 "$maroon" eval "$tmp/fifo.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "not a regular file" || fail "eval of a FIFO: rc $rc"
err=$(timeout 20 "$maroon" digest "$tmp" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$err" | grep -q "is a directory" || fail "digest of a directory: rc $rc"
# A record's numbers are bounded and its fields known: refused before any work.
tamper "$tmp/steps.run.json" 'r["steps"] = 2**62'
err=$("$maroon" verify "$tmp/steps.run.json" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q 'steps is not a non-negative integer below 2^62' || fail "huge steps: rc $rc"
# A step count that does not fit in 64 bits is an error, not a wrapped count (UBSan found it).
err=$("$maroon" train mnist --epochs 4611686018427387904 --out "$tmp/huge.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "more steps than fit in 64 bits" || fail "huge epochs: rc $rc"
tamper "$tmp/extra.run.json" 'r["trusted"] = True'
err=$("$maroon" verify "$tmp/extra.run.json" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q 'unknown field "trusted"' || fail "unknown record field: rc $rc"
# The run record is the weights' checksum: a flipped bit in a tensor is refused by eval, and
# weights with NaN evaluate with a warning on stderr.
cp "$tmp/a.safetensors" "$tmp/flip.safetensors"
/usr/bin/python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-5] ^= 1; open(sys.argv[1], "wb").write(b)' "$tmp/flip.safetensors"
cp "$tmp/a.run.json" "$tmp/flip.run.json"
err=$("$maroon" eval "$tmp/flip.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "does not match the run record beside it" || fail "eval of a flipped bit: rc $rc"
/usr/bin/python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-4:] = b"\x00\x00\xc0\x7f"; open(sys.argv[2], "wb").write(b)' \
  "$tmp/a.safetensors" "$tmp/nan.safetensors"
out=$("$maroon" eval "$tmp/nan.safetensors" 2>"$tmp/nan.err"); rc=$?
cat "$tmp/nan.err"
[ $rc -eq 0 ] && grep -q "tensor 'l3.bias' has 1 NaN or infinite values of 10" "$tmp/nan.err" || fail "eval of NaN weights: rc $rc"
# An unwritable output location is reported before training, and a good file is never replaced
# by a partial one (the weights are written to a temporary file, then renamed).
start=$(date +%s)
err=$(timeout 60 "$maroon" train mnist --epochs 3 --out "$tmp/a.safetensors/w.safetensors" 2>&1); rc=$?
echo "$err"
[ $rc -eq 2 ] && echo "$err" | grep -q "Not a directory" && [ $(( $(date +%s) - start )) -lt 20 ] || fail "output under a file: rc $rc"
mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
if [ ! -w "$tmp/ro" ]; then  # root can write anywhere: skipped there
  err=$(timeout 60 "$maroon" train mnist --epochs 3 --out "$tmp/ro/w.safetensors" 2>&1); rc=$?
  echo "$err"
  [ $rc -eq 2 ] && echo "$err" | grep -q "cannot write" || fail "read-only output: rc $rc"
fi
cp "$tmp/a.safetensors" "$tmp/keep.safetensors"
(ulimit -f 1; "$maroon" train mnist --steps 2 --out "$tmp/keep.safetensors" --no-eval >/dev/null 2>&1); rc=$?
[ $rc -ne 0 ] && cmp -s "$tmp/a.safetensors" "$tmp/keep.safetensors" || fail "a write cut short replaced the good file: rc $rc"
ls "$tmp" | grep -q "keep.safetensors.tmp" && fail "a temporary file was left behind"

# Fashion-MNIST trains through the same path.
if [ -f "$src/data/fashion-mnist/train-images-idx3-ubyte" ]; then
  out=$("$maroon" train mnist --dataset fashion --steps 3 --out "$tmp/f.safetensors" --no-eval 2>&1); rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "^maroon train: fashion" || fail "fashion: rc $rc"
else
  fail "no Fashion-MNIST: run bash tools/fetch_mnist.sh"
fi

finish "cli_test"
