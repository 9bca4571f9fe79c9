#!/usr/bin/env bash
# Installs onnxruntime-node (ONNX Runtime's CPU build for Node.js, from npm) into build/ort, the
# peer of tools/onnx/compare_ort.sh. Pinned; nothing to do when it is there. The GPU download is
# skipped (ONNXRUNTIME_NODE_INSTALL=skip). About 190 MB, 15 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=1.20.1
dir=${MAROON_ORT_DIR:-build/ort}
[ -f "$dir/node_modules/onnxruntime-node/package.json" ] &&
  grep -q "\"version\": \"$version\"" "$dir/node_modules/onnxruntime-node/package.json" && exit 0
command -v npm >/dev/null || { echo "install_ort: npm is needed" >&2; exit 1; }
mkdir -p "$dir"
echo "install_ort: installing onnxruntime-node@$version into $dir"
(cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
  npm install --no-audit --no-fund --silent --no-save "onnxruntime-node@$version" >/dev/null)
