#!/usr/bin/env bash
# The API reference, generated: C++ from the public headers' comments (Doxygen), Python from
# the installed package's docstrings (Sphinx autodoc), into build/docs/ (index.html links both).
# Needs ./build and .venv (bash tools/build.sh). `--check` (CI, via tools/test_packages.sh):
# fail on any warning from either generator.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${MAROON_DOCS_OUT:-$PWD/build/docs}
check=${1:-}
mkdir -p "$out"
MAROON_DOCS_OUT=$out MAROON_VERSION_HEADER_DIR=build/include/maroon doxygen docs/reference/Doxyfile
if [ "$check" = --check ] && [ -s "$out/cpp-warnings.txt" ]; then
  echo "docs: Doxygen warnings:"; cat "$out/cpp-warnings.txt"; exit 1
fi
strict=()
[ "$check" = --check ] && strict=(-W --keep-going)
.venv/bin/python -m sphinx -q "${strict[@]}" -b html -d "$out/.doctrees" docs/reference/python "$out/python"
cat > "$out/index.html" <<HTML
<!doctype html><title>Maroon API reference</title>
<h1>Maroon $(cat VERSION): API reference</h1>
<ul><li><a href="cpp/index.html">C++</a> (include/maroon)</li>
<li><a href="python/index.html">Python</a> (the maroon package)</li></ul>
HTML
echo "docs: $out/index.html"
