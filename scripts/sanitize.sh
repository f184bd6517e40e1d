#!/usr/bin/env bash
# Builds the tools, the runtime and the tests with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-sanitize/ (the CUDA backend off: the
# sanitizers do not see into the GPU) and runs the lit and gtest suites
# there. Any sanitizer report fails the run. CI runs it after scripts/test.sh
# (.ci/run); it takes about 12 minutes on 2 cores from a clean tree.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_SANITIZE_BUILD_DIR:-$root/build-sanitize}

"$root/scripts/setup.sh"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if [[ ! -f $build/build.ninja ]]; then
  # -O1: the sanitizers' usual level; Release's -O3 would only slow the build.
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    -DZERO_RUNTIME_ENABLE_CUDA=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi

# MPI and Python keep allocations to their exit: leaks are not errors here.
# MLIR's and LLVM's libraries are not instrumented, but their allocators'
# inline code in ours poisons slabs that the libraries then write: manual
# poisoning would report those as use-after-poison, so it is off.
# LLVM's signal handlers give each thread that reports an error an
# alternate signal stack of their own (malloc'd); ASan, at the exit of a
# thread (the zero tools run on one with a larger stack), unmaps whatever
# stack is installed as if it were its own, and aborts when that fails: so
# ASan installs none (use_sigaltstack=0) and LLVM's stays LLVM's.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0:allow_user_poisoning=0:use_sigaltstack=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The compile-only runs of DeepSpeed's tutorial models and of GPT-2 1.5B
# on 64 ranks (billions of parameters) and the knob sweep repeat, at length,
# compiler paths that the smaller tests run sanitized too; so do the two
# longest runtime tests (a minute each sanitized: 64 micro-steps, every
# checkpointing variant), whose loops and recomputed segments
# fuse-broadcasts, tile-linear, mics and the offload tests run sanitized.
# test/Build checks the build system (a small CMake project of its own), in
# which no code of ours runs to sanitize. The plain run keeps them all. This keeps CI within its 30 minutes on 2
# cores.
export LIT_OPTS="${LIT_OPTS:-} --filter-out=Build/|zero-opt/(tutorials/|config-knob-sweep|gpt2-1.5b-nodes)|Runtime/(accumulation-loop|checkpoint-activations)[.]test"
# The configured directory is built and tested as scripts/test.sh does, but
# for the embedding examples: an out-of-tree consumer builds without the
# sanitizers' flags and cannot link a sanitized install; the plain run
# checks the install.
ZERO_BUILD_DIR=$build ZERO_CUDA=OFF ZERO_SKIP_EMBEDDING=1 \
  exec "$root/scripts/test.sh"
