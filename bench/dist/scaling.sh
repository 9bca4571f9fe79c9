#!/usr/bin/env bash
# Time per data-parallel step of `maroon train` for R = 1, 2 and 4 MPI ranks (S = 4 shards; more
# ranks than cores are oversubscribed), next to the plain single-process step, alternating the
# configurations and repeating them so that load from other work hits them alike. For each run:
#   wall  milliseconds per step (training steps only, rank 0's clock: what a user waits)
#   cpu   CPU milliseconds per step summed over every process (the work, which load from other
#         jobs changes much less): (CPU of a STEPS-step run - CPU of a 1-step run) / (STEPS - 1)
# and each configuration's medians, with ratios to the plain step on 1 thread. Checks that every
# configuration with shards printed the same weights digest.
#   bash bench/dist/scaling.sh [MODEL] [STEPS] [BATCH] [REPEATS]   (defaults: mlp 60 64 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
model=${1:-mlp} steps=${2:-60} batch=${3:-64} repeats=${4:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# name | launcher | threads per rank | shards
configs=("plain, 1 process x 1 thread||1|1" "plain, 1 process x 2 threads||2|1"
         "S=4, 1 process x 1 thread||1|4" "S=4, 1 process x 2 threads||2|4"
         "S=4, 2 ranks x 1 thread|mpirun -np 2|1|4" "S=4, 4 ranks x 1 thread (oversubscribed)|mpirun --oversubscribe -np 4|1|4")
run() {  # launcher threads shards steps -> "wall_ms_per_step cpu_seconds digest"
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$tmp/time" $1 build/maroon --json -q train mnist --model "$model" --steps "$4" \
    --batch "$batch" --no-eval --threads "$2" --shards "$3" --out "$tmp/w.safetensors" >"$tmp/out.json"
  /usr/bin/python3 -c "
import json, sys
j = json.load(open(sys.argv[1])); u, s = map(float, open(sys.argv[2]).read().split()[-2:])
print(f'{1000 * j[\"train_seconds\"] / j[\"steps\"]:.1f} {u + s:.3f} {j[\"weights_sha256\"]}')" "$tmp/out.json" "$tmp/time"
}
echo "$model, batch $batch, $steps steps, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$repeats"); do
  for i in "${!configs[@]}"; do
    IFS='|' read -r name launcher threads shards <<<"${configs[$i]}"
    read -r wall cpu digest <<<"$(run "$launcher" "$threads" "$shards" "$steps")"
    read -r _ cpu1 _ <<<"$(run "$launcher" "$threads" "$shards" 1)"
    cpu_ms=$(awk -v a="$cpu" -v b="$cpu1" -v k="$steps" 'BEGIN { printf "%.1f", 1000 * (a - b) / (k - 1) }')
    echo "$i $wall $cpu_ms $digest" >>"$tmp/all"
    printf '  run %d  %-42s wall %8s ms/step  cpu %8s ms/step\n' "$rep" "$name" "$wall" "$cpu_ms"
  done
done
echo "medians (ratio to the plain step on 1 thread), load average now $(cut -d' ' -f1-3 /proc/loadavg):"
median() { awk -v i="$1" -v c="$2" '$1 == i { print $c }' "$tmp/all" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for i in "${!configs[@]}"; do
  wall=$(median "$i" 2) cpu=$(median "$i" 3)
  [ "$i" -gt 0 ] || { base_wall=$wall base_cpu=$cpu; }
  printf '  %-42s wall %8s ms (%5.2f)  cpu %8s ms (%5.2f)\n' "${configs[$i]%%|*}" "$wall" \
    "$(awk -v a="$wall" -v b="$base_wall" 'BEGIN { print a / b }')" "$cpu" "$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN { print a / b }')"
done
digests=$(awk '$1 >= 2 { print $4 }' "$tmp/all" | sort -u | wc -l)
[ "$digests" -eq 1 ] && echo "every S=4 run printed the same weights digest" || { echo "FAIL: $digests digests for S=4"; exit 1; }
