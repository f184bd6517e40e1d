#!/usr/bin/env bash
# Installs the dependencies of zero-opt on Debian 12 (as root). Idempotent:
# packages already present are not fetched again.
#
#   scripts/setup.sh demo   what scripts/demo.sh needs: the build of the
#                           tools and python3 to tokenize the demo's text
#   scripts/setup.sh        all of it: the above and PyTorch (the tests'
#                           reference, and what zero-import-torch imports)
set -euo pipefail

# Everything the build's configure step looks at is here, tests' libraries
# included (GoogleTest, lit): a build tree configured without one of them
# would not see it installed later. pkg-config finds OpenBLAS and liburing:
# without it the runtime builds, but with plain-loop matmuls (30 times
# slower) and no NVMe swap store.
build_packages=(
  cmake ninja-build g++ pkg-config
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  nlohmann-json3-dev zlib1g-dev libisal-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev
  liburing-dev
  libgtest-dev
  python3
)
# PyTorch: the tests' independent numerical reference, and the framework
# zero-import-torch captures models from (docs/ImportTorch.md).
test_packages=(python3-torch python3-numpy)

case ${1:-all} in
  demo) packages=("${build_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "setup.sh: unknown set '$1'; expected 'demo' or 'all'" >&2
    exit 2
    ;;
esac

# One dpkg-query for the whole list: a call per package costs seconds each
# on a cold disk cache.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" \
  2>/dev/null | awk '/ install ok installed$/ { print $1 }' || true)
missing=()
for pkg in "${packages[@]}"; do
  grep -qxF "$pkg" <<<"$installed" || missing+=("$pkg")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup.sh: missing packages: ${missing[*]}; run as root to install" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -q --no-install-recommends "${missing[@]}" |
    grep --line-buffered -E '^(Need to get|After this operation|Setting up)' || true
  # The pipe hides apt-get's own status: ask dpkg what is there now.
  for pkg in "${missing[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
        grep -q "install ok installed"; then
      echo "setup.sh: $pkg could not be installed" >&2
      exit 1
    fi
  done
fi
echo "setup.sh: all dependencies present (${1:-all})"
