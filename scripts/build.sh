#!/usr/bin/env bash
# Configures and builds zero-opt into build/ with ninja; arguments go to
# `cmake --build` (`--target zero-opt`, ...).
#
# ZERO_CUDA=ON|OFF builds the runtime's CUDA backend or not
# (ZERO_RUNTIME_ENABLE_CUDA), reconfiguring a build tree that has the other;
# unset, a new tree gets ON and a configured one keeps what it has.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}
cuda=${ZERO_CUDA:-}
if [[ -n $cuda && $cuda != ON && $cuda != OFF ]]; then
  echo "build.sh: ZERO_CUDA=$cuda: expected ON or OFF" >&2
  exit 2
fi

configured_cuda=
if [[ -f $build/CMakeCache.txt ]]; then
  configured_cuda=$(sed -n 's/^ZERO_RUNTIME_ENABLE_CUDA:BOOL=//p' \
    "$build/CMakeCache.txt")
fi
if [[ ! -f $build/build.ninja || (-n $cuda && $cuda != "$configured_cuda") ]]
then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    ${cuda:+-DZERO_RUNTIME_ENABLE_CUDA=$cuda}
fi
cmake --build "$build" "$@"
