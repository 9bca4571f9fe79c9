#!/usr/bin/env bash
# `mpirun -np R maroon train mnist --shards S` end to end on real MNIST: the digests of one
# process (and its state commitments: the same Merkle root), one record and one weights file
# (rank 0's), `verify` replaying it in one process and `bisect` against the one-process run,
# `--shards 1` as the plain step; and the failures: too few shards, a rank killed mid-run and a
# rank stopped mid-run end the job with a clear error, never a hang and never a weights file.
#   bash tests/dist/cli_test.sh MPIRUN MAROON SOURCE_DIR
set -uo pipefail
mpirun=$1 maroon=$2 src=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MAROON_THREADS=1
source "$(dirname "${BASH_SOURCE[0]}")/../cli_lib.sh"  # tmp, fail, json, finish
field() { awk -v k="$1" 'index($0, k) == 1 { print $NF }' "$2"; }
[ -f "$src/data/mnist/train-images-idx3-ubyte" ] || { echo "FAIL: no MNIST: run bash tools/fetch_mnist.sh"; exit 1; }
train=(train mnist --steps 4 --batch 32 --no-eval --checkpoint-every 2)

"$maroon" "${train[@]}" --shards 4 --out "$tmp/one.safetensors" >"$tmp/one.out" 2>"$tmp/one.err" || fail "one process"
timeout 300 "$mpirun" --oversubscribe -np 3 "$maroon" "${train[@]}" --shards 4 --out "$tmp/three.safetensors" \
  >"$tmp/three.out" 2>"$tmp/three.err" || fail "3 ranks: $(cat "$tmp/three.err")"
cat "$tmp/three.err" "$tmp/three.out"
for k in "weights sha256" "loss trace sha256"; do
  a=$(field "$k" "$tmp/one.out") b=$(field "$k" "$tmp/three.out")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "$k: one process $a, 3 ranks $b"
done
a=$(field "merkle root" "$tmp/one.out") b=$(field "merkle root" "$tmp/three.out")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "merkle root: one process $a, 3 ranks $b"
grep -q "4 shards on 3 rank(s)" "$tmp/three.err" || fail "the log does not name 3 ranks"
[ "$(grep -c '^weights sha256' "$tmp/three.out")" = 1 ] || fail "more than one rank reported"
grep -q '"shards": "4"' "$tmp/three.run.json" && grep -q '"ranks": "3"' "$tmp/three.run.json" ||
  fail "the record lacks job.config.shards or claims.ranks"
"$maroon" verify "$tmp/three.run.json" >"$tmp/verify.out" || fail "verify of the 3-rank run: $(cat "$tmp/verify.out")"
grep -q "^verified: .* 4 steps replayed" "$tmp/verify.out" || fail "verify did not say verified: $(cat "$tmp/verify.out")"
"$maroon" bisect "$tmp/one.run.json" "$tmp/three.run.json" >"$tmp/bisect.out" 2>&1 ||
  fail "bisect of one process against 3 ranks: $(cat "$tmp/bisect.out")"
# The same job perturbed at step 3 in one process, bisected against the 3-rank run: bisect, its
# referee and trace replay the 4-shard step in one process.
"$maroon" "${train[@]}" --shards 4 --perturb 3:l2.weight:5:0 --out "$tmp/p.safetensors" >/dev/null 2>&1 ||
  fail "the perturbed run"
"$maroon" bisect "$tmp/three.run.json" "$tmp/p.run.json" >"$tmp/pb.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "first differ after step 3" "$tmp/pb.out" && grep -q "verdict: b is wrong at step 3" "$tmp/pb.out" ||
  fail "bisect of a perturbed sharded run: rc $rc: $(cat "$tmp/pb.out")"
"$maroon" trace "$tmp/three.run.json" --step 2 --out "$tmp/t2.json" >/dev/null 2>"$tmp/t2.err" && [ -s "$tmp/t2.json" ] ||
  fail "trace of a sharded step: $(cat "$tmp/t2.err")"

# train --fused over 2 ranks: the fused products (the job's "products") on every rank, the one
# process's weights, and verify and bisect replay them.
"$maroon" "${train[@]}" --shards 2 --fused --out "$tmp/f1.safetensors" >"$tmp/f1.out" 2>/dev/null || fail "fused, one process"
timeout 300 "$mpirun" --oversubscribe -np 2 "$maroon" "${train[@]}" --shards 2 --fused --out "$tmp/f2.safetensors" \
  >"$tmp/f2.out" 2>"$tmp/f2.err" || fail "fused, 2 ranks: $(cat "$tmp/f2.err")"
a=$(field "weights sha256" "$tmp/f1.out") b=$(field "weights sha256" "$tmp/f2.out")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "fused weights: one process $a, 2 ranks $b"
"$maroon" "${train[@]}" --shards 2 --out "$tmp/u1.safetensors" >"$tmp/u1.out" 2>/dev/null
[ "$(field "weights sha256" "$tmp/u1.out")" != "$a" ] || fail "--fused over shards gave the default products' weights"
grep -q '"products": "fused"' "$tmp/f2.run.json" || fail "the 2-rank fused record lacks job.config.products"
"$maroon" verify "$tmp/f2.run.json" >"$tmp/fv.out" && grep -q "^verified: .* 4 steps replayed" "$tmp/fv.out" ||
  fail "verify of the fused 2-rank run: $(cat "$tmp/fv.out")"
"$maroon" bisect "$tmp/f1.run.json" "$tmp/f2.run.json" >"$tmp/fb.out" 2>&1 ||
  fail "bisect of the fused runs: $(cat "$tmp/fb.out")"

# One shard is the plain step: the same digests as without --shards.
"$maroon" "${train[@]}" --out "$tmp/plain.safetensors" >"$tmp/plain.out" 2>/dev/null
"$maroon" "${train[@]}" --shards 1 --out "$tmp/s1.safetensors" >"$tmp/s1.out" 2>/dev/null
[ "$(field "weights sha256" "$tmp/plain.out")" = "$(field "weights sha256" "$tmp/s1.out")" ] || fail "--shards 1 differs"
[ "$(field "weights sha256" "$tmp/plain.out")" != "$(field "weights sha256" "$tmp/one.out")" ] || fail "4 shards = 1 shard"
grep -q '"shards"' "$tmp/s1.run.json" && fail "a one-shard job names shards (its job digest changed)"

# More ranks than shards: an error before any work.
timeout 120 "$mpirun" --oversubscribe -np 3 "$maroon" "${train[@]}" --shards 2 --out "$tmp/few.safetensors" \
  >/dev/null 2>"$tmp/few.err" && fail "3 ranks ran 2 shards"
grep -q "cannot be spread over 3 ranks" "$tmp/few.err" || fail "no clear error for too few shards: $(cat "$tmp/few.err")"

# A long run whose rank 1 is sent `signal` once rank 0 has logged step 3; the job must end within
# a minute with `expect` on stderr and leave no weights file and no complete record (a partial
# one, with the checkpoints so far and no outputs, is what a resume starts from).
interrupted() {
  local signal=$1 expect=$2 out="$tmp/$1.safetensors"
  "$mpirun" --oversubscribe -np 2 "$maroon" train mnist --steps 100000 --batch 32 --shards 2 --no-eval \
    --log-every 1 --timeout 5 --out "$out" >/dev/null 2>"$tmp/$signal.err" &
  local job=$! rank1="" waited=0
  until grep -q "step 3/" "$tmp/$signal.err" 2>/dev/null || [ $waited -ge 3000 ]; do sleep 0.1; waited=$((waited + 1)); done
  for p in $(pgrep -P $job); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && rank1=$p
  done
  [ -n "$rank1" ] || { fail "$signal: no rank 1 under mpirun $job"; kill -KILL $job; wait $job; return; }
  kill -"$signal" "$rank1"
  local start=$SECONDS
  while kill -0 $job 2>/dev/null && [ $((SECONDS - start)) -lt 60 ]; do sleep 0.2; done
  if kill -0 $job 2>/dev/null; then
    fail "$signal: the job still runs 60 s after rank 1 got SIG$signal"
    kill -KILL $job "$rank1" 2>/dev/null
  fi
  wait $job && fail "$signal: the job exited 0"
  kill -KILL "$rank1" 2>/dev/null  # a stopped rank the launcher left behind
  echo "SIG$signal to rank 1: the job ended after $((SECONDS - start)) s: $(grep -v '^epoch\|^maroon train' "$tmp/$signal.err" | tr -s '\n -' ' ' | cut -c1-300)"
  grep -q "$expect" "$tmp/$signal.err" || fail "$signal: no '$expect' in: $(cat "$tmp/$signal.err")"
  [ ! -e "$out" ] || fail "$signal: a weights file was written"
  local rec="${out%.safetensors}.run.json"
  [ ! -e "$rec" ] || grep -q '"outputs": \[\]' "$rec" || fail "$signal: a complete record was written"
}
interrupted KILL "exited on signal 9"
interrupted STOP "waited 5 s for the other ranks"

finish "dist cli"
