#!/usr/bin/env bash
# Installs every dependency of zero-opt on Debian 12 (as root). Idempotent:
# packages already present are not fetched again.
set -euo pipefail

packages=(
  cmake ninja-build g++
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  nlohmann-json3-dev zlib1g-dev libisal-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev
  liburing-dev
  libgtest-dev
  python3-torch python3-numpy
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup.sh: missing packages: ${missing[*]}; run as root to install" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup.sh: all dependencies present"
