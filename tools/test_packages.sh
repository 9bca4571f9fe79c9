#!/usr/bin/env bash
# Maroon as other projects get it, tried from outside the source tree (called by tools/test.sh
# after the build; about 3 minutes on 2 cores, most of it compiling the wheel; with ccache warm,
# under a minute):
#   1. the CMake package: `cmake --install build` into a scratch prefix, then a C++ consumer
#      built with find_package(maroon) against maroon::maroon and maroon::maroon_static, and a C
#      consumer of the Lagoon ABI built with pkg-config; each checks results and the version;
#   2. add_subdirectory: a parent project configures (no build) without Maroon's tests, tools or
#      benchmarks, and none of Maroon's include paths or flags reach the parent's code;
#   3. the Python package: the sdist (python3 -m build), a wheel built from it alone, installed
#      offline into a fresh venv; from another directory, its version, that it loads no shared
#      library beyond libc/libm/libgcc/libstdc++, and the same bits as the in-tree build on
#      every SIMD target.
# usage: tools/test_packages.sh [--no-wheel] [BUILD_DIR]   (default ./build, as tools/build.sh makes it)
#   --no-wheel  skips step 3's wheel (its compile from the sdist is ~500 CPU s, 200 s of CI's 25
#               minutes, which no longer fit): the sdist is still built and its contents checked.
#               tools/test.sh (CI) passes it; run this script without it for the whole check.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=1
[ "${1:-}" = --no-wheel ] && { wheel=0; shift; }
src=$PWD
build=$(cd "${1:-build}" && pwd)
version=$(cat VERSION)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step() { echo "test_packages: $*"; }

step "cmake --install into $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
prefix=$tmp/prefix
libdir=$prefix/lib
[ -d "$libdir/pkgconfig" ] || libdir=$(dirname "$(find "$prefix" -name maroon.pc | head -1)")/..
for f in include/maroon/maroon.h include/maroon/lagoon.h include/maroon/version.h; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
# Only include/ is public: nothing from src/ is installed.
if find "$prefix/include" -name "*.h" | xargs grep -l '#include "\(core\|api\|cpu\|ref\|float\|data\|io\)/' ; then
  echo "FAIL: an installed header includes a private one"; exit 1
fi

step "C++ consumer with find_package(maroon)"
cp -r tests/package "$tmp/consumer"
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$tmp/consumer/build" >/dev/null
if grep -q -- "-I$src/src\|-ffp-contract\|-Werror=switch" "$tmp/consumer/build/compile_commands.json"; then
  echo "FAIL: Maroon's private include path or flags reach the consumer"; exit 1
fi
"$tmp/consumer/build/consumer_maroon" "$version"
"$tmp/consumer/build/consumer_maroon_static" "$version"
[ -x "$tmp/consumer/build/dist_consumer" ] || { echo "FAIL: the package has no maroon::dist_mpi"; exit 1; }
"$tmp/consumer/build/dist_consumer"
linked=$(ldd "$tmp/consumer/build/consumer_maroon")
grep -q "$prefix.*libmaroon.so" <<<"$linked" ||
  { echo "FAIL: consumer_maroon does not load the installed libmaroon.so"; exit 1; }

step "C consumer of the Lagoon ABI with pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion maroon-lagoon)" = "$version" ] || { echo "FAIL: maroon-lagoon.pc version"; exit 1; }
cp tests/package/lagoon_consumer.c tests/lagoon/c_abi_check.c "$tmp/"
# shellcheck disable=SC2046 # pkg-config's output is a list of words
cc -std=c99 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags maroon-lagoon) "$tmp/lagoon_consumer.c" \
  "$tmp/c_abi_check.c" $(pkg-config --libs maroon-lagoon) -o "$tmp/lagoon_consumer"
LD_LIBRARY_PATH="$libdir" "$tmp/lagoon_consumer"
# The shared library exports the C ABI and nothing else.
others=$(nm -D --defined-only "$libdir/libmaroon_lagoon.so" | awk '{print $3}' | grep -cv '^maroon_lagoon_' || true)
[ "$others" -eq 0 ] || { echo "FAIL: libmaroon_lagoon.so exports $others symbols beyond maroon_lagoon_*"; exit 1; }

step "add_subdirectory: only the libraries, and nothing of Maroon's reaches the parent"
mkdir -p "$tmp/parent"
cp tests/package/consumer.cpp "$tmp/parent/"
cat > "$tmp/parent/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(parent CXX)
add_subdirectory("$src" maroon)
add_executable(consumer consumer.cpp)
target_link_libraries(consumer PRIVATE maroon::maroon)
EOF
cmake -S "$tmp/parent" -B "$tmp/parent/build" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
targets=$(ninja -C "$tmp/parent/build" -t targets all)
for t in maroon_tests maroon-battery maroon-bench-conv maroon-optable maroon-cli; do
  if grep -q "^$t" <<<"$targets"; then echo "FAIL: add_subdirectory builds $t"; exit 1; fi
done
if /usr/bin/python3 - "$tmp/parent/build/compile_commands.json" <<'EOF'
import json, sys
cmd = next(c["command"] for c in json.load(open(sys.argv[1])) if c["file"].endswith("parent/consumer.cpp"))
bad = [w for w in cmd.split() if w.endswith("/src") or w.startswith(("-ffp-contract", "-Werror"))]
sys.exit(0 if bad else 1)
EOF
then
  echo "FAIL: Maroon's private include path or flags reach the parent project"; exit 1
fi
step "Python: the sdist, a wheel built from it, a fresh venv"
/usr/bin/python3 -m build --sdist --no-isolation --outdir "$tmp/dist" . >/dev/null
sdist="$tmp/dist/maroon-$version.tar.gz"
[ -f "$sdist" ] || { echo "FAIL: no $sdist"; exit 1; }
listing=$(tar tzf "$sdist")  # not piped into grep -q: with pipefail, tar's SIGPIPE would hide a match
if grep -q "^maroon-$version/\(tests\|bench\|data\|tools\)/" <<<"$listing"; then
  echo "FAIL: the sdist carries tests, benchmarks, tools or data"; exit 1
fi
if [ $wheel = 1 ]; then
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
# (Checks read captured output: `cmd | grep -q` under pipefail fails when grep stops early.)
# ccache, when there is one, keyed on paths relative to the scratch directory (the same each run).
launcher=""
command -v ccache >/dev/null && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
(cd "$tmp" && TMPDIR="$tmp" CCACHE_BASEDIR="$tmp" MAROON_CMAKE_ARGS="$launcher" MAROON_BUILD_JOBS="$(nproc)" \
  "$tmp/venv/bin/python" -m pip wheel -q --no-deps --no-build-isolation --no-index -w "$tmp/wheels" "$sdist")
"$tmp/venv/bin/python" -m pip install -q --no-index "$tmp"/wheels/maroon-"$version"-*.whl
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
so=$("$tmp/venv/bin/python" -c "import maroon._maroon as m; print(m.__file__)")
case "$so" in "$tmp/venv/"*) ;; *) echo "FAIL: maroon imported from $so, not the venv"; exit 1 ;; esac
libs=$(ldd "$so" | awk '{print $1}' | grep -v "^linux-vdso\|^/lib64/ld-linux\|^libc\.so\|^libm\.so\|^libgcc_s\.so\|^libstdc++\.so" || true)
[ -z "$libs" ] || { echo "FAIL: the wheel's extension needs $libs"; exit 1; }
# The same program under the in-tree build (system libhwy) and the wheel (bundled runtime): the
# same version, the same SIMD targets detected, and the same bits on each of them.
probe='
import hashlib, sys
import numpy as np
import maroon
from maroon import Tensor
out = [maroon.__version__, " ".join(maroon.available_simd_targets())]
for t in maroon.available_simd_targets():
    maroon.set_simd_target(t)
    x = Tensor(np.arange(-300, 300, dtype=np.float32).reshape(20, 30) / 7)
    y = ((x.matmul(x.T) / 1000).exp().log_softmax() + x.sin().sum()).numpy()
    out.append(t + " " + hashlib.sha256(y.tobytes()).hexdigest())
print("\n".join(out))'
want=$("$src/.venv/bin/python" -c "$probe")
got=$("$tmp/venv/bin/python" -c "$probe")
echo "$got"
[ "$(echo "$got" | head -1)" = "$version" ] || { echo "FAIL: maroon.__version__ is not $version"; exit 1; }
[ "$got" = "$want" ] || { echo "FAIL: the wheel differs from the in-tree build:"; echo "$want"; exit 1; }
# The installed package documents itself: stubs and marker shipped, every docstring example and
# signature checked (python/tests/test_docs.py), DLPack export; run against the wheel.
site=$("$tmp/venv/bin/python" -c "import maroon, os; print(os.path.dirname(maroon.__file__))")
[ -f "$site/py.typed" ] && [ -f "$site/_maroon.pyi" ] || { echo "FAIL: the wheel lacks py.typed or _maroon.pyi"; exit 1; }
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/python/tests/test_docs.py" "$src/python/tests/test_dlpack.py"
else
  step "the wheel skipped (--no-wheel): bash tools/test_packages.sh builds it"
fi

step "the API reference (Doxygen, Sphinx), warnings as errors"
cd "$src"
MAROON_DOCS_OUT="$tmp/docs" bash tools/docs.sh --check
step "all checks passed"
