#!/usr/bin/env bash
# The data-parallel step's bits do not depend on the number of processes: the MLP and the CNN,
# 4 and 12 shards (uneven: a batch of 26), on 1, 2, 3 and 4 MPI ranks (oversubscribed past the
# cores) with 1 and 2 threads per rank, give the weights and loss-trace digests of one process
# running every shard.
#   bash tests/dist/mpi_test.sh MPIRUN MAROON_DIST_TRAIN [full]
# CI (ctest dist_mpi_ranks) runs a rotation: each rank count runs two of the eight configurations,
# both models, both shard counts and both thread counts among them, and every configuration runs
# on one rank count.
# `full` runs all eight on every rank count (the README names it; 2.5 times the CPU).
set -euo pipefail
mpirun=$1 bin=$2 mode=${3:-ci}
steps=3 batch=26
configs=(mlp:4:1 mlp:4:2 mlp:12:1 mlp:12:2 cnn:4:1 cnn:4:2 cnn:12:1 cnn:12:2)
# The configurations (indices into configs) each rank count runs.
declare -A rotation=([1]="0 7" [2]="3 4" [3]="1 6" [4]="2 5")
case $mode in
  ci) ;;
  full) for r in 1 2 3 4; do rotation[$r]="0 1 2 3 4 5 6 7"; done ;;
  *) echo "mpi_test.sh: the third argument is 'full' or nothing, got '$mode'"; exit 2 ;;
esac
# Containers run tests as root; Open MPI refuses that unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One process, no MPI: the reference. A line without its thread count is what every run must print.
"$bin" $steps $batch "${configs[@]}" | sed 's/ threads [0-9]* ranks 1//' >"$tmp/want"
[ "$(wc -l <"$tmp/want")" -eq ${#configs[@]} ] || { echo "FAIL: the single-process run printed:"; cat "$tmp/want"; exit 1; }
echo "one process:"; sort -u "$tmp/want"

fail=0
for ranks in 1 2 3 4; do
  start=$(date +%s%N) mine=()
  : >"$tmp/want_r"
  for i in ${rotation[$ranks]}; do mine+=("${configs[$i]}"); sed -n "$((i + 1))p" "$tmp/want" >>"$tmp/want_r"; done
  if ! timeout 300 "$mpirun" --oversubscribe -np $ranks "$bin" $steps $batch "${mine[@]}" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: $ranks rank(s) did not finish:"; cat "$tmp/out" "$tmp/err"; fail=1; continue
  fi
  # Each line says how many ranks ran it: mpirun must really have started them.
  if [ "$(grep -c " ranks $ranks:" "$tmp/out")" -ne ${#mine[@]} ]; then
    echo "FAIL: not every line ran on $ranks ranks:"; cat "$tmp/out"; fail=1; continue
  fi
  sed 's/ threads [0-9]* ranks [0-9]*//' "$tmp/out" >"$tmp/got"
  if diff -u "$tmp/want_r" "$tmp/got"; then
    echo "$ranks rank(s): the same digests for ${mine[*]} ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
  else
    echo "FAIL: $ranks rank(s) differ from one process"; fail=1
  fi
done
# Every configuration learned something different: the comparison above is not vacuous.
[ "$(cut -d' ' -f1-6 "$tmp/want" | sort -u | wc -l)" -eq 4 ] || { echo "FAIL: configurations share digests"; fail=1; }
exit $fail
