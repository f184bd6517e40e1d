#!/usr/bin/env bash
# Embeds zero-opt from its install alone (docs/Embedding.md): installs the
# build into a temporary prefix, checks it, builds the out-of-tree examples of
# examples/embed/ against the prefix and runs them. Fails if
#   - an installed CMake file or binary points into the source or build tree,
#   - an installed header does not compile with only the prefix and MLIR
#     (one that includes a header that is not installed), or a C program does
#     not link the C API's imported target,
#   - the C++ example (zero-embed) writes another schedule than the installed
#     zero-opt does with the same pipeline options, byte for byte,
#   - the C example (zero-embed-run, on 2 MPI ranks) prints other losses than
#     the installed zero-run computes for that schedule and seed, to the bit,
#   - upstream mlir-opt with the installed ZeroPlugin compiles the step into
#     other IR than the installed zero-opt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/zero-embed.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
mpirun=(mpirun --oversubscribe)
if [[ $(id -u) -eq 0 ]]; then
  mpirun+=(--allow-run-as-root)
fi
fail() {
  echo "test-embedding.sh: $*" >&2
  exit 1
}
# Configures and builds the project in $1 into $2 against the prefix alone.
build_against_prefix() {
  cmake -G Ninja -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" > "$2.log" || { cat "$2.log"; exit 1; }
  cmake --build "$2" > "$2.build.log" || { cat "$2.build.log"; exit 1; }
}

echo "== cmake --install ${build#"$root"/} --prefix \$prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
echo "bin: $(cd "$prefix/bin" && echo *)"
echo "lib: $(cd "$prefix/lib" && echo *.a *.so* cmake/*)"

echo "== the prefix does not point into the source or build tree"
if grep -rlF -e "$root" -e "$build" "$prefix/lib/cmake"; then
  fail "installed CMake files name the source or build tree"
fi
for file in "$prefix"/bin/* "$prefix"/lib/*.so; do
  if readelf -d "$file" | grep -E 'R(UN)?PATH' | grep -qF -e "$root" -e "$build"; then
    fail "$file: its run path names the source or build tree"
  fi
done

echo "== every installed header compiles against the prefix and MLIR alone"
mkdir -p "$work/headers-src"
(cd "$prefix/include" && find zero zero-c -name '*.h' ! -path 'zero/runtime/*' |
  sort | sed 's/.*/#include "&"/') > "$work/headers-src/compiler.cpp"
(cd "$prefix/include" && find zero/runtime -name '*.h' |
  sort | sed 's/.*/#include "&"/') > "$work/headers-src/runtime.cpp"
echo '#include "zero/runtime/zero_runtime.h"' > "$work/headers-src/capi.c"
cat > "$work/headers-src/zero-c.c" <<'C'
#include "zero-c/Zero.h"
int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  zeroRegisterDialects(registry);
  mlirDialectRegistryDestroy(registry);
  zeroRegisterPasses();
  return 0;
}
C
cat > "$work/headers-src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(zero-installed-headers LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ZeroOpt 0.1 CONFIG REQUIRED)
find_package(ZeroRuntime 0.1 CONFIG REQUIRED)
add_library(compiler-headers OBJECT compiler.cpp)
target_link_libraries(compiler-headers PRIVATE ${ZERO_OPT_LIBRARIES})
add_library(runtime-headers OBJECT runtime.cpp capi.c)
target_link_libraries(runtime-headers PRIVATE ZeroRuntime::zero_runtime)
add_executable(zero-c zero-c.c)
target_link_libraries(zero-c PRIVATE MLIRZeroCAPI)
CMAKE
build_against_prefix "$work/headers-src" "$work/headers"
"$work/headers/zero-c" || fail "a C program of the C API failed"
echo "$(wc -l < "$work/headers-src/compiler.cpp") compiler headers," \
  "$(wc -l < "$work/headers-src/runtime.cpp") runtime headers"

echo "== build examples/embed/compiler and examples/embed/runtime-c against \$prefix"
build_against_prefix "$root/examples/embed/compiler" "$work/compiler"
build_against_prefix "$root/examples/embed/runtime-c" "$work/runtime-c"

cd "$work"
echo "== zero-model mlp --layers 3 --hidden 16 --batch-size 4 -o mlp.mlir"
"$prefix/bin/zero-model" mlp --layers 3 --hidden 16 --batch-size 4 -o mlp.mlir
echo "== zero-embed mlp.mlir --stage=3 --world-size=2 --zero-options=\"param-persistence-threshold=0 optimizer=adamw\" -o mlp.json"
compiler/zero-embed mlp.mlir --stage=3 --world-size=2 \
  --zero-options="param-persistence-threshold=0 optimizer=adamw" -o mlp.json
echo "== zero-opt mlp.mlir --zero-pipeline=\"stage=3 world-size=2 param-persistence-threshold=0 optimizer=adamw\" --zero-emit-schedule=reference.json"
"$prefix/bin/zero-opt" mlp.mlir \
  --zero-pipeline="stage=3 world-size=2 param-persistence-threshold=0 optimizer=adamw" \
  --zero-emit-schedule=reference.json -o /dev/null
cmp mlp.json reference.json || fail "zero-embed and zero-opt wrote other schedules"
echo "the same schedule ($(wc -c < mlp.json) bytes)"
config=$root/examples/deepspeed/ds_zero_stage_2.json
echo "== zero-embed mlp.mlir --world-size=2 --deepspeed-config=$config -o mlp-ds.json"
compiler/zero-embed mlp.mlir --world-size=2 --deepspeed-config="$config" \
  -o mlp-ds.json
echo "== zero-opt mlp.mlir --zero-world-size=2 --zero-config=$config --zero-emit-schedule=reference-ds.json"
"$prefix/bin/zero-opt" mlp.mlir --zero-world-size=2 --zero-config="$config" \
  --zero-emit-schedule=reference-ds.json -o /dev/null
cmp mlp-ds.json reference-ds.json ||
  fail "zero-embed --deepspeed-config and zero-opt --zero-config wrote other schedules"
echo "the same schedule ($(wc -c < mlp-ds.json) bytes)"

echo "== mpirun -np 2 zero-embed-run mlp.json --steps 3 --seed 7 --mpi"
"${mpirun[@]}" -np 2 runtime-c/zero-embed-run mlp.json --steps 3 --seed 7 \
  --mpi | tee embedded.txt
echo "== zero-run mlp.json --nproc 2 --steps 3 --seed 7 --metrics metrics.jsonl"
"$prefix/bin/zero-run" mlp.json --nproc 2 --steps 3 --seed 7 \
  --metrics metrics.jsonl > /dev/null
python3 - metrics.jsonl > reference.txt <<'PY'
import json, sys
for line in open(sys.argv[1]):
    record = json.loads(line)
    if record.get("rank") == 0 and "mean_loss" in record:
        print("step=%d loss=%.17g" % (record["step"], record["mean_loss"]))
PY
diff reference.txt embedded.txt ||
  fail "zero-embed-run and zero-run computed other losses"
echo "the losses of zero-run, to the bit"

mlir_opt=${ZERO_MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}
echo "== mlir-opt mlp.mlir --load-dialect-plugin=\$prefix/lib/ZeroPlugin.so --load-pass-plugin=\$prefix/lib/ZeroPlugin.so --pass-pipeline='builtin.module(zero-pipeline{stage=3 world-size=2})'"
"$mlir_opt" mlp.mlir --load-dialect-plugin="$prefix/lib/ZeroPlugin.so" \
  --load-pass-plugin="$prefix/lib/ZeroPlugin.so" \
  --pass-pipeline='builtin.module(zero-pipeline{stage=3 world-size=2})' \
  -o plugin.mlir
"$prefix/bin/zero-opt" mlp.mlir --zero-pipeline='stage=3 world-size=2' \
  -o reference.mlir
cmp plugin.mlir reference.mlir ||
  fail "mlir-opt with ZeroPlugin and zero-opt wrote other IR"
echo "the IR of zero-opt --zero-pipeline='stage=3 world-size=2' ($(wc -l < plugin.mlir) lines)"
