#!/usr/bin/env bash
# The main job: builds Maroon and runs the demonstration (a few results and their exact bits).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh >/dev/null
./build/maroon-demo
