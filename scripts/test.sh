#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite: lit (through
# its check- target), the gtest unit tests (through ctest) and the embedding
# examples built against an install of the build (scripts/test-embedding.sh;
# ZERO_SKIP_EMBEDDING=1 leaves it out). Fails if any test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
# The CUDA backend always compiles here (its GPU tests skip without a GPU),
# also in a build tree that the demo configured without it.
ZERO_CUDA=${ZERO_CUDA:-ON} "$root/scripts/build.sh"

status=0
echo "== lit: $build/test"
cmake --build "$build" --target check-zero-opt || status=1
echo "== gtest (ctest)"
ctest --test-dir "$build" --output-on-failure -j2 || status=1
if [[ -z ${ZERO_SKIP_EMBEDDING:-} ]]; then
  echo "== embedding (scripts/test-embedding.sh)"
  ZERO_BUILD_DIR=$build "$root/scripts/test-embedding.sh" || status=1
fi
exit $status
