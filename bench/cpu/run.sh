#!/usr/bin/env bash
# Runs the CPU backend's benchmarks and prints docs/performance.md's tables (Markdown).
# usage: bash bench/cpu/run.sh [THREADS]   (after tools/build.sh; needs Debian's numpy/torch)
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=${1:-1}
sizes=32,64,96,128,256,512,1024,2048
b=${MAROON_BUILD_DIR:-build}/bench/cpu
echo "## Matmul, $threads thread(s)"
echo
echo "OpenBLAS as Debian ships it (it picks its kernel from the CPU):"
echo
MAROON_THREADS=$threads $b/maroon-bench-matmul --threads "$threads" --sizes $sizes
echo
echo "OpenBLAS forced to its best kernel on this CPU (OPENBLAS_CORETYPE=SkylakeX):"
echo
OPENBLAS_CORETYPE=SkylakeX $b/maroon-bench-matmul --threads "$threads" --sizes $sizes
echo
echo "numpy and PyTorch (GFLOP/s), same sizes and threads:"
echo
echo "| dtype | N | numpy | PyTorch |"
echo "|---|---|---|---|"
/usr/bin/python3 bench/cpu/peers.py "$threads" ${sizes//,/ } | while read -r d n g1 g2; do
  echo "| $d | $n | $g1 | $g2 |"
done
echo
echo "## Fused elementwise chain, $threads thread(s)"
echo
$b/maroon-bench-elementwise --threads "$threads"
