#!/usr/bin/env bash
# Portability (issue 21, docs/reliability.md): configures and builds EVERY target -- the libraries,
# tests, benchmarks, examples, tools, the maroon command, the Python extension and, with clang,
# the libFuzzer harnesses -- with each supported compiler, in its own directory:
#
#   bash tools/portability.sh                      # clang14, clang19, i686, gcc12, in that order
#   bash tools/portability.sh --only clang14,i686  # some of them
#
#   clang14, clang19, gcc12: x86-64, CMake's Release, Python extension and (clang) MAROON_FUZZ=ON
#   i686: 32-bit x86 with the determinism matrix's cross toolchain
#         (tools/determinism/toolchains/i686.cmake: Debian's g++-i686-linux-gnu and the :i386
#         libraries), every target its :i386 libraries allow (see i686_args below)
#
# Builds go to build-port/<name> (ccache as the launcher when it is installed). Warnings are
# handled as in the normal build (-Wall -Wextra, only -Werror=switch): they are counted, not
# fatal; each build's log is build-port/<name>/build.log. Each build starts clean (ccache
# replays an unchanged file's compile, warnings included), so the log has every warning, not
# only those of what changed since the last run; --incremental keeps what is built.
# "Every target" is every executable and library CMake defines, EXCLUDE_FROM_ALL ones included
# (read from CMake's file API), not only `all`. Nothing runs: tools/test.sh and the determinism
# matrix run what is built. The summary gives, per compiler, the targets built (of all), the
# errors, the warnings (distinct ones: a header's warning is printed once per file including it)
# and each distinct warning. Exits non-zero naming each compiler and target that failed to
# configure or build.
# Not in CI (tools/test.sh): four full builds are about an hour of CPU on two cores, without ccache.
# MAROON_PORT_JOBS (default 2) sets the build's parallelism.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${MAROON_PORT_JOBS:-2}
clean=1
all=(clang14 clang19 i686 gcc12)
only=("${all[@]}")
while [ $# -gt 0 ]; do
  case $1 in
    --only) IFS=, read -ra only <<<"$2"; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --incremental) clean=0; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "portability: unknown argument $1 (--only NAME[,NAME], --jobs N, --incremental)" >&2; exit 2 ;;
  esac
done
for n in "${only[@]}"; do
  [[ " ${all[*]} " == *" $n "* ]] || { echo "portability: unknown build $n (one of: ${all[*]})" >&2; exit 2; }
done
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
start=$(date +%s)
say() { echo "portability: [$(( $(date +%s) - start )) s, load $(cut -d' ' -f1 /proc/loadavg)] $*"; }

native_args() {  # CC CXX FUZZ: an x86-64 build of everything, as tools/build.sh configures it
  echo -DCMAKE_C_COMPILER="$1" -DCMAKE_CXX_COMPILER="$2" -DCMAKE_BUILD_TYPE=Release \
    -DMAROON_BUILD_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3 -DMAROON_PYTHON=/usr/bin/python3 \
    -DMAROON_FUZZ="$3"
}

# i686: the matrix's toolchain file and Debian's :i386 Highway, GoogleTest, MPFR and GMP
# (matrix.py installs the first; the others are what the tests need). Left out, each because its
# 32-bit package is not installed here (it is looked for, so a machine that has it builds it):
# ONNX import (libonnx-dev:i386 and libprotobuf-dev:i386), MPI (libopenmpi-dev:i386, not
# installable beside the amd64 one on Debian 12). Never built for i686: the Python extension (a
# 32-bit module loads only into a 32-bit interpreter, and the build's Python is the x86-64 one).
i686_args() {
  local a="-DCMAKE_TOOLCHAIN_FILE=$root/tools/determinism/toolchains/i686.cmake"
  a+=" -Dhwy_DIR=/usr/lib/i386-linux-gnu/cmake/hwy -DCMAKE_BUILD_TYPE=Release -DMAROON_BUILD_PYTHON=OFF"
  a+=" -DMAROON_PYTHON=/usr/bin/python3"
  # GoogleTest's test discovery at ctest time, not after each link: the build runs no 32-bit
  # program (a kernel without IA-32 emulation refuses them); ctest runs them under qemu-i386
  # where it is installed.
  a+=" -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST"
  command -v qemu-i386 >/dev/null && a+=" -DCMAKE_CROSSCOMPILING_EMULATOR=qemu-i386;-L;/usr/i686-linux-gnu"
  ls /usr/lib/i386-linux-gnu/libonnx_proto.* >/dev/null 2>&1 || a+=" -DMAROON_ONNX=OFF"
  ls /usr/lib/i386-linux-gnu/libmpi.so >/dev/null 2>&1 || a+=" -DMAROON_MPI=OFF"
  echo "$a"
}

# Every executable and library target of a configured directory, one a line: its name, then the
# files it makes (relative to the directory), tab-separated (CMake's file API: the query file is
# written before configuring).
targets_of() {
  /usr/bin/python3 - "$1" <<'EOF'
import glob, json, os, sys
reply = os.path.join(sys.argv[1], ".cmake", "api", "v1", "reply")
index = json.load(open(sorted(glob.glob(os.path.join(reply, "index-*.json")))[-1]))
model = json.load(open(os.path.join(reply, index["reply"]["codemodel-v2"]["jsonFile"])))
kinds = {"EXECUTABLE", "STATIC_LIBRARY", "SHARED_LIBRARY", "MODULE_LIBRARY", "OBJECT_LIBRARY"}
for t in model["configurations"][0]["targets"]:
    j = json.load(open(os.path.join(reply, t["jsonFile"])))
    if j["type"] in kinds:
        print("\t".join([t["name"]] + [a["path"] for a in j.get("artifacts", [])]))
EOF
}

# How many of the targets (rows of targets_of) DIR's last build made: every file a target makes
# is there (after the clean, made by this build) and none of its compiles or its link is among
# the build's FAILED steps. (`ninja -n` cannot tell: the CONFIGURE_DEPENDS glob check is always due.)
count_built() {
  local dir=$1 row a ok built=0
  shift
  grep -E '^FAILED: ' "$dir/build.log" >"$dir/failed-steps.txt"
  for row in "$@"; do
    IFS=$'\t' read -ra f <<<"$row"
    ok=1
    for a in "${f[@]:1}"; do
      [ -e "$dir/$a" ] && ! grep -qF -e "$a" -e "CMakeFiles/${f[0]}.dir/" "$dir/failed-steps.txt" || ok=0
    done
    built=$((built + ok))
  done
  echo "$built"
}

failed=()
summary=()
for name in "${only[@]}"; do
  dir=build-port/$name
  case $name in
    gcc12) args=$(native_args gcc-12 g++-12 OFF); need=g++-12 ;;
    clang14) args=$(native_args clang-14 clang++-14 ON); need=clang++-14 ;;
    clang19) args=$(native_args clang-19 clang++-19 ON); need=clang++-19 ;;
    i686) args=$(i686_args); need=i686-linux-gnu-g++ ;;
  esac
  if ! command -v "$need" >/dev/null; then
    failed+=("$name: $need is not installed (bash tools/setup.sh; i686: matrix.py --only i686 --build-only installs it)")
    say "$name: $need not installed"
    continue
  fi
  t0=$(date +%s)
  mkdir -p "$dir/.cmake/api/v1/query"
  touch "$dir/.cmake/api/v1/query/codemodel-v2"
  say "$name: configuring $dir"
  # shellcheck disable=SC2086  # args is a list of -D words without spaces
  if ! cmake -S . -B "$dir" -G Ninja "${launcher[@]}" $args >"$dir/configure.log" 2>&1; then
    tail -20 "$dir/configure.log"
    failed+=("$name: configure failed (see $dir/configure.log)")
    continue
  fi
  mapfile -t rows < <(targets_of "$dir")
  targets=("${rows[@]%%$'\t'*}")
  [ $clean -eq 1 ] && cmake --build "$dir" --target clean >/dev/null 2>&1
  say "$name: building ${#targets[@]} targets (-j $jobs)"
  # -k 0: keep going, so one run names every target that fails.
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}" -- -k 0 >"$dir/build.log" 2>&1
  rc=$?
  built=$(count_built "$dir" "${rows[@]}")
  errors=$(grep -c ': error: ' "$dir/build.log")
  # Distinct warnings: file:line:col and the message, the checkout's path or ../../ prefix off.
  grep -oE '[^ ]+:[0-9]+:[0-9]+: warning: .*' "$dir/build.log" | sed -E "s|^$root/||; s|^(\.\./)+||" | sort -u >"$dir/warnings.txt"
  warnings=$(wc -l <"$dir/warnings.txt")
  secs=$(( $(date +%s) - t0 ))
  line="$name: $built of ${#targets[@]} targets built, $errors errors, $warnings warnings, $secs s"
  if [ $rc -ne 0 ]; then
    grep -E '^FAILED: |: error: ' "$dir/build.log" | head -40
    bad=$(grep -oE '^FAILED: .*CMakeFiles/[^/]+\.dir/' "$dir/build.log" | sed -E 's|.*CMakeFiles/([^/]+)\.dir/|\1|' | sort -u | tr '\n' ' ')
    failed+=("$name: build failed in targets: ${bad:-?} (see $dir/build.log)")
    line+=" (FAILED)"
  elif [ "$built" -ne ${#targets[@]} ]; then
    failed+=("$name: the build ended without error but $(( ${#targets[@]} - built )) targets are not built")
    line+=" (INCOMPLETE)"
  fi
  summary+=("$line")
  say "$line"
  while read -r w; do summary+=("  $name warning: $w"); done <"$dir/warnings.txt"
done

echo
printf 'portability: %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'portability: FAILED %s\n' "${failed[@]}"
  exit 1
fi
say "every build passed"
