#!/usr/bin/env bash
# Maroon as other projects get it, tried from outside the source tree (called by tools/test.sh
# after the build; about a minute on 2 cores):
#   1. the CMake package: `cmake --install build` into a scratch prefix, then a C++ consumer
#      built with find_package(maroon) against maroon::maroon and maroon::maroon_static, and a C
#      consumer of the Lagoon ABI built with pkg-config; each checks results and the version;
#   2. add_subdirectory: a parent project configures (no build) without Maroon's tests, tools or
#      benchmarks, and none of Maroon's include paths or flags reach the parent's code.
# usage: tools/test_packages.sh [BUILD_DIR]   (default ./build, as tools/build.sh makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
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
ldd "$tmp/consumer/build/consumer_maroon" | grep -q "$prefix.*libmaroon.so" ||
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
  if echo "$targets" | grep -q "^$t"; then echo "FAIL: add_subdirectory builds $t"; exit 1; fi
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
step "all checks passed"
