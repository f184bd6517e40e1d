#!/usr/bin/env bash
# The code that reads what other people's files say, built with
# AddressSanitizer and UndefinedBehaviorSanitizer into build-sanitize/ and
# run on hostile and broken files there; any sanitizer report fails the run.
# CI runs it after scripts/test.sh (.ci/run): about 6 minutes on 2 cores
# from a clean tree.
#
# What runs sanitized: zero-run and zero-ckpt, built from runtime/ alone
# (the CUDA backend off: the sanitizers do not see into the GPU), on the lit
# tests that give them hostile, truncated, inconsistent or unwritable
# schedules, checkpoints, safetensors and token data, and that kill their
# ranks; the compiler tools that make those tests' schedules are the plain
# build's.
#
# What the plain run (scripts/test.sh) keeps to itself, to keep CI within
# its 30 minutes on 2 cores:
#   - the compiler: a sanitized build of it (MLIR's headers in every file)
#     took longer alone than CI leaves. Its passes read IR that MLIR's own
#     parser and verifiers have checked; its readers of other people's
#     files (DeepSpeed JSON, nesting) are fed hostile input by the fuzzer
#     (config-flood, deep-json, nesting), unsanitized;
#   - the runtime's gtests: their sanitized build (the test files are the
#     largest of the runtime) took 4 more minutes; the readers they test
#     are the ones the lit tests below feed;
#   - the lit tests that train or compile at length (the fuzzer among
#     them): their runtime paths are those of the tests below.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_SANITIZE_BUILD_DIR:-$root/build-sanitize}
plain=${ZERO_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# -O0: the files compile faster than at -O1, and the tests below run small
# steps, where the slower code costs little.
sanitized=(
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O0 -DNDEBUG"
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags"
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags"
)

# MPI and Python keep allocations to their exit: leaks are not errors here.
# Manual poisoning is off: LLVM's allocators' inline code in ours poisons
# slabs that LLVM's uninstrumented libraries then write. LLVM's signal
# handlers give each thread that reports an error an alternate signal stack
# of their own (malloc'd); ASan, at the exit of a thread, unmaps whatever
# stack is installed as if it were its own, and aborts when that fails: so
# ASan installs none (use_sigaltstack=0) and LLVM's stays LLVM's.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0:allow_user_poisoning=0:use_sigaltstack=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

status=0
echo "== zero-run and zero-ckpt, sanitized: $build/runtime"
if [[ ! -f $build/runtime/build.ninja ]]; then
  cmake -G Ninja -S "$root/runtime" -B "$build/runtime" "${sanitized[@]}" \
    -DZERO_RUNTIME_ENABLE_CUDA=OFF -DZERO_RUNTIME_BUILD_TESTS=OFF
fi
cmake --build "$build/runtime" --target zero-run zero-ckpt

# The lit tests run the tools of one directory: the compiler's of the plain
# build, the sanitized runtime's.
echo "== lit: the runtime's hostile-input tests, sanitized zero-run and zero-ckpt"
"$root/scripts/build.sh" --target zero-opt zero-model zero-translate
tools=$build/bin
mkdir -p "$tools"
for tool in zero-opt zero-model zero-translate; do
  ln -sf "$plain/bin/$tool" "$tools/$tool"
done
for tool in zero-run zero-ckpt; do
  ln -sf "$build/runtime/bin/$tool" "$tools/$tool"
done
hostile='Runtime/(errors|hostile-readers|checkpoint-hostile|checkpoint-faults|checkpoint-save-faults|schedule-proofs|swap-proofs|nonfinite|checkpoint-resume-1|explain-without-cuda)[.]test'
/usr/lib/llvm-22/bin/lit -sv --param zero_tools_dir="$tools" \
  --filter="$hostile" "$plain/test" || status=1
exit $status
