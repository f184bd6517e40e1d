#!/usr/bin/env bash
# The GPU run, in one call of about 7 minutes at most, on a machine with one
# NVIDIA GPU, the CUDA toolkit, NCCL, cmake, ninja and Python 3 with PyTorch,
# but no Debian packages, no LLVM/MLIR and no network (benchmarks/gpu/README.md):
#
#   1. builds runtime/ alone (Release, tests on) into build-gpu/, with the
#      nlohmann-json and googletest sources that compile_schedules.sh copied
#      into .deps/ (ignored by git: carry it) where the machine has none;
#   2. runs the GPU unit tests (ctest -R 'Gpu|Cuda|Nccl'), then the device
#      communicators' tests again on 4 ranks sharing the GPU (mpirun -np 4
#      zero-runtime-gpu-tests: staged MPI; groups, all-to-all, block
#      gathers across ranks; NCCL's cases skip, one GPU per rank);
#   3. runs every whole-step check of benchmarks/gpu/schedules/manifest.json
#      with zero-run --device cuda and compares its losses and weights with
#      the host backend's (analyze.py checks): world size 1, then world size 2
#      as `mpirun -np 2 zero-run ... --gpus-per-node 1` (two ranks on the one
#      GPU, the staged-MPI device communicator; also every rank's bytes per
#      step), reported as "skipped: no MPI on this machine" where there is no
#      mpirun or the runtime was built without MPI; then world size 4 the
#      same way (MiCS, hpZ, hierarchical gathers and ZeRO++'s qwZ + qgZ on
#      a [2, 2] grid: the groups' device communicators and the quantizer's
#      kernels);
#   4. benchmarks GPT-2 124M bf16 at ZeRO stages 0 and 3 with zero-run (and
#      stage 0 with ZERO_CUDA_FUSION=off: softmax and layer norm unfused), and
#      the same model in PyTorch (eager and torch.compile, fused AdamW);
#      measures the comm/compute overlap and the fused Adam bandwidth (as a
#      fraction of a device-to-device copy) from zero-run's traces;
#   5. captures test/Import's models with zero_opt.torch under the machine's
#      PyTorch into $OUT/import-torch (benchmarks/torch_versions.py; checked
#      on the build machine with its `check`);
#   6. writes under $OUT (default build-gpu/out): summary.md, results.json,
#      run_all.log, gtest.log, gtest-4ranks.log and the two 124M traces, and
#      prints the summary.
#
# Prepare on the build machine first: benchmarks/gpu/compile_schedules.sh.
# Every step is announced ("== step"); a failure names the step. Steps after
# the build run even when an earlier check failed (so one call reports
# everything), and the script then exits 1 listing the failed steps. Optional
# parts (the separate traced runs, torch.compile, naive-attention PyTorch) are
# skipped, and reported as skipped, when the time budget is spent.
#
# Environment: OUT, ZERO_GPU_BUDGET_S (default 360: the seconds after which
# optional parts are skipped), ZERO_GPU_BENCH_STEPS (12), ZERO_GPU_JOBS
# (build parallelism, default: the cores).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$root/build-gpu
deps_build=$root/build-gpu-deps
work=$build/gpu-run
budget=${ZERO_GPU_BUDGET_S:-360}
bench_steps=${ZERO_GPU_BENCH_STEPS:-12}
bench_warmup=3
jobs=${ZERO_GPU_JOBS:-$(nproc)}
python=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
started=$(date +%s)

exec > >(tee "$out/run_all.log") 2>&1
tee_pid=$!

step="start"
failed=()
declare -A status=()
order=()
elapsed() { echo $(($(date +%s) - started)); }
begin() {
  step="$1"
  echo
  echo "== [$(elapsed) s] $1"
}
record() {
  [ -n "${status[$1]+x}" ] || order+=("$1")
  status["$1"]="$2"
}
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ "${#failed[@]}" -eq 0 ]; then
    echo "run_all.sh: FAILED in step: $step (exit $rc)" >&2
  fi
  # Let tee write the end of the log before the call returns.
  exec 1>&- 2>&-
  wait "$tee_pid" 2>/dev/null || true
}
trap on_exit EXIT
# Runs a step that may fail without stopping the others.
soft() {
  local name=$1
  shift
  begin "$name"
  if "$@"; then
    record "$name" "ok"
  else
    local rc=$?
    echo "run_all.sh: step failed: $name (exit $rc)" >&2
    record "$name" "FAILED (exit $rc)"
    failed+=("$name")
  fi
}
within_budget() {
  [ "$(elapsed)" -lt "$budget" ]
}
write_steps() {
  {
    echo "{"
    local first=1 name
    for name in "${order[@]}"; do
      [ $first -eq 1 ] || echo ","
      first=0
      printf '  "%s": "%s"' "$name" "${status[$name]}"
    done
    echo
    echo "}"
  } >"$work/steps.json"
}

# ---------------------------------------------------------------------------
begin "environment"
if [ ! -f "$here/schedules/manifest.json" ]; then
  echo "run_all.sh: $here/schedules/manifest.json is missing: run" \
    "benchmarks/gpu/compile_schedules.sh on the build machine first, and" \
    "carry benchmarks/gpu/schedules (ignored by git)" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv,noheader
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
cuda_home=${CUDA_HOME:-/usr/local/cuda}
export PATH=$cuda_home/bin:$PATH
nvcc --version | tail -1
cmake --version | head -1
echo "ninja $(ninja --version)"
$python -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
command -v mpirun >/dev/null && echo "mpirun: $(command -v mpirun)" ||
  echo "mpirun: none (the 2-rank checks will be skipped)"
rm -rf "$work"
mkdir -p "$work" "$deps_build"

begin "NCCL"
# The toolkit's NCCL, else the one PyTorch ships (pip nvidia-nccl-*), through
# a prefix with the libnccl.so that find_library wants.
nccl_root=""
if [ -f "$cuda_home/include/nccl.h" ] &&
  ls "$cuda_home"/lib*/libnccl.so >/dev/null 2>&1; then
  nccl_root=$cuda_home
else
  pip_nccl=$($python -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' \
    2>/dev/null || true)
  if [ -n "$pip_nccl" ] && [ -f "$pip_nccl/include/nccl.h" ]; then
    nccl_root=$deps_build/nccl
    rm -rf "$nccl_root"
    mkdir -p "$nccl_root/include" "$nccl_root/lib"
    for f in "$pip_nccl"/include/*; do ln -s "$f" "$nccl_root/include/"; done
    lib=$(ls "$pip_nccl"/lib/libnccl.so* | head -1)
    ln -s "$lib" "$nccl_root/lib/libnccl.so"
    ln -s "$lib" "$nccl_root/lib/libnccl.so.2"
    export LD_LIBRARY_PATH=$nccl_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi
if [ -z "$nccl_root" ]; then
  echo "run_all.sh: no NCCL: neither $cuda_home/include/nccl.h nor PyTorch's" \
    "nvidia.nccl package" >&2
  exit 1
fi
grep -h '^#define NCCL_\(MAJOR\|MINOR\|PATCH\) ' "$nccl_root/include/nccl.h"
echo "NCCL prefix: $nccl_root"

begin "dependencies (googletest, nlohmann-json)"
# runtime/CMakeLists.txt and runtime/test/CMakeLists.txt take the packages,
# else the sources in .deps/ (compile_schedules.sh copies them; carry .deps).
if [ -f /usr/include/nlohmann/json.hpp ]; then
  echo "nlohmann-json: the system's"
elif [ -f "$root/.deps/json/include/nlohmann/json.hpp" ]; then
  echo "nlohmann-json: .deps/json/include"
else
  echo "run_all.sh: no nlohmann/json.hpp here nor in .deps/json/include: run" \
    "compile_schedules.sh on the build machine and carry .deps" >&2
  exit 1
fi
if [ -d /usr/include/gtest ]; then
  echo "googletest: the system's"
elif [ -f "$root/.deps/googletest/CMakeLists.txt" ]; then
  echo "googletest: built with the tests from .deps/googletest"
else
  echo "run_all.sh: no googletest here nor in .deps/googletest: run" \
    "compile_schedules.sh on the build machine and carry .deps" >&2
  exit 1
fi

begin "configure runtime/ (build-gpu, Release, tests on)"
cmake -G Ninja -S "$root/runtime" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DZERO_RUNTIME_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DZERO_NCCL_ROOT="$nccl_root" 2>&1 | tee "$work/configure.log"
if ! grep -q "zero-runtime: CUDA backend" "$work/configure.log"; then
  echo "run_all.sh: CMake did not enable the CUDA backend (see above)" >&2
  exit 1
fi
if grep -q "zero-runtime: no MPI" "$work/configure.log"; then
  echo "MPI: none found by CMake: zero-run runs one rank (the 2-rank checks" \
    "will be skipped)"
else
  echo "MPI: found by CMake (2-rank checks under mpirun)"
fi

begin "build (ninja -j $jobs)"
ninja -C "$build" -j "$jobs"
zero_run=$build/bin/zero-run
[ -x "$zero_run" ] || { echo "run_all.sh: no $zero_run" >&2; exit 1; }
record "build" "ok"

# ---------------------------------------------------------------------------
gpu_tests() {
  # -V: every test's gtest output, to see skips that ctest counts as passes.
  ctest --test-dir "$build" -R 'Gpu|Cuda|Nccl' -V --no-tests=error -j 4 \
    --timeout 180 \
    >"$out/gtest.log" 2>&1
  local rc=$?
  # One line per test, then what failed.
  grep -E 'Test +#[0-9]+:|tests passed|tests failed' "$out/gtest.log" || true
  grep -E -A12 '^[0-9]+: .*(Failure|Skipped)$' "$out/gtest.log" | head -200 || true
  # ctest marks gtest's skips ***Skipped. A test that skipped because it saw
  # no GPU, on a GPU machine, is a failure; other skips are warnings.
  local skipped total blind
  skipped=$(grep -c '\*\*\*Skipped' "$out/gtest.log" || true)
  total=$(sed -n 's/.* tests \(passed\|failed\) out of \([0-9]*\).*/\2/p' "$out/gtest.log" |
    tail -1)
  $python -c 'import json, sys; print(json.dumps({"tests": int(sys.argv[1] or 0), "skipped": int(sys.argv[2]), "exit": int(sys.argv[3])}))' \
    "${total:-0}" "$skipped" "$rc" >"$work/gtest.json" || true
  if [ "$skipped" -gt 0 ]; then
    echo "run_all.sh: WARNING: $skipped of ${total:-?} GPU tests were skipped" \
      "(their reasons are in gtest.log)" >&2
    blind=$(grep -c -i -E '^[0-9]+: .*(no (usable )?CUDA device|no GPU|CUDA driver)' \
      "$out/gtest.log" || true)
    if [ "$blind" -gt 0 ]; then
      echo "run_all.sh: GPU tests saw no GPU on a GPU machine ($blind lines" \
        "say so in gtest.log)" >&2
      return 1
    fi
  fi
  return "$rc"
}
soft "GPU unit tests (ctest -R 'Gpu|Cuda|Nccl')" gpu_tests

gpu_tests_4_ranks() {
  if ! command -v mpirun >/dev/null ||
    grep -q "zero-runtime: no MPI" "$work/configure.log"; then
    echo "skipped: no MPI on this machine"
    return 0
  fi
  local -a launcher=(mpirun --oversubscribe -np 4)
  [ "$(id -u)" -ne 0 ] || launcher+=(--allow-run-as-root)
  local rc=0
  timeout 240 "${launcher[@]}" "$build/bin/zero-runtime-gpu-tests" \
    --gtest_filter='Kinds/DeviceCommunicatorGpuTest.*' \
    >"$out/gtest-4ranks.log" 2>&1 || rc=$?
  # Every rank's verdicts, counted; NCCL's skip (4 ranks, one GPU).
  grep -E '^\[ +(OK|FAILED|SKIPPED) +\]' "$out/gtest-4ranks.log" |
    sed 's/ (.*//' | sort | uniq -c || true
  grep -E -B2 -A10 'Failure' "$out/gtest-4ranks.log" | head -100 || true
  return "$rc"
}
soft "device communicators on 4 ranks sharing the GPU (mpirun, staged MPI)" \
  gpu_tests_4_ranks

soft "whole-step checks: CUDA against the host backend" \
  $python "$here/analyze.py" checks --bin "$build/bin" --world-size 1 \
  --manifest "$here/schedules/manifest.json" --work "$work/checks" \
  --json "$work/checks.json"
# 10 AdamW steps of the small GPT on the GPU against the same model in
# PyTorch on the GPU (test/Runtime/Inputs/torch_reference.py --device cuda).
soft "10 AdamW steps: CUDA against PyTorch on the GPU" \
  $python "$here/analyze.py" torch --bin "$build/bin" \
  --manifest "$here/schedules/manifest.json" --work "$work/torch" \
  --json "$work/torch.json"
# N ranks on the one GPU: mpirun -np N ... --gpus-per-node 1 (staged MPI).
# Small steps (seconds); a hung run is killed after the timeout and the other
# N-rank checks are then not run, so the budget is spent at most once.
rank_checks() {
  local ranks=$1 title=$2 timeout=$3
  soft "$title" \
    $python "$here/analyze.py" checks --bin "$build/bin" --world-size "$ranks" \
    --timeout "$timeout" --manifest "$here/schedules/manifest.json" \
    --work "$work/checks-n$ranks" --json "$work/checks-n$ranks.json"
  # Skipped (no mpirun, or a runtime built without MPI): say so in the steps.
  local skip
  skip=$($python -c 'import json, sys; d = json.load(open(sys.argv[1])); s = [c["skipped"] for c in d["checks"] if c.get("skipped")]; print(s[0] if s else "")' \
    "$work/checks-n$ranks.json" 2>/dev/null || true)
  if [ -n "$skip" ] && [ "${status[$title]}" = "ok" ]; then
    record "$title" "$skip"
  fi
}
rank_checks 2 "whole-step checks, 2 ranks on one GPU (mpirun, staged MPI)" 90
# A [2, 2] grid: groups, hierarchical gathers and the quantized collectives
# on the device.
rank_checks 4 "whole-step checks, 4 ranks on one GPU (MiCS, hpZ, ZeRO++)" 120

# ---------------------------------------------------------------------------
# (Functions run by soft run without errexit: each failure returns.)
bench_zero_run() {
  local name=$1 schedule=$2
  timeout 300 "$zero_run" --device cuda "$here/schedules/$schedule" \
    --steps "$bench_steps" --seed 1 --metrics "$work/$name.jsonl" \
    --print-every 1 2>&1 | tee "$work/$name.log" || return
}
bench_unfused() { ZERO_CUDA_FUSION=off bench_zero_run "$@"; }
trace_zero_run() {
  local name=$1 schedule=$2
  timeout 300 "$zero_run" --device cuda "$here/schedules/$schedule" \
    --steps 3 --seed 1 --trace "$work/$name.trace.json" 2>&1 |
    tee "$work/$name.trace.log" || return
  cp "$work/$name.trace.json" "$out/$name.trace.json"
}
summary() {
  write_steps
  $python "$here/analyze.py" summary \
    --manifest "$here/schedules/manifest.json" --work "$work" \
    --warmup "$bench_warmup" --trace-warmup 1 --out-md "$out/summary.md" \
    --out-json "$out/results.json" "$@"
}
remaining() { echo $((budget + 45 - $(elapsed))); }
for stage in 0 3; do
  name=gpt2-124m-bf16-s$stage
  soft "GPT-2 124M bf16 stage $stage: zero-run ($bench_steps steps)" \
    bench_zero_run "$name" "$name.json"
done
soft "GPT-2 124M bf16 stage 0, bf16 GEMMs: zero-run ($bench_steps steps)" \
  bench_zero_run gpt2-124m-bf16c-s0 gpt2-124m-bf16c-s0.json
soft "PyTorch eager GPT-2 124M bf16 (fused AdamW)" \
  $python "$here/torch_gpt2.py" --mode eager --steps 20 --warmup 5 \
  --out "$work/torch-eager.json"
soft "D2D copy bandwidth (torch, cudaMemcpyAsync)" \
  $python "$here/analyze.py" copybw --out "$work/copybw.json"
# zero_opt.torch's capture under this machine's PyTorch (2.x: nanoGPT takes
# scaled_dot_product_attention): test/Import's models as step IR, for
# benchmarks/torch_versions.py check on the build machine (seconds).
soft "zero_opt.torch: capture test/Import's models under this PyTorch" \
  timeout 120 $python "$root/benchmarks/torch_versions.py" capture \
  --out "$out/import-torch"
# A first summary, in case the optional parts below run out of time.
$python - "$work/environment.json" "$gpu" "$nccl_root" <<'PY'
import json, sys
json.dump({"gpu": sys.argv[2], "nccl": sys.argv[3]}, open(sys.argv[1], "w"))
PY
summary --quiet || true
# By what each tells, first: the step of part 1's targets (bf16 GEMMs),
# whose trace recalibrates its prediction; the measured run's schedule; stage
# 3; then the baselines; the unfused run last.
for name in gpt2-124m-bf16c-s0 gpt2-124m-bf16-s0 gpt2-124m-bf16-s3; do
  if within_budget; then
    soft "GPT-2 124M: traced zero-run of $name (3 steps)" \
      trace_zero_run "$name" "$name.json"
  else
    record "traced run $name" "skipped (time budget)"
  fi
done
if within_budget; then
  soft "PyTorch torch.compile GPT-2 124M bf16 (fused AdamW)" \
    timeout "$(remaining)" \
    $python "$here/torch_gpt2.py" --mode compile --steps 20 --warmup 5 \
    --out "$work/torch-compile.json"
else
  record "PyTorch torch.compile" "skipped (time budget)"
fi
if within_budget; then
  soft "PyTorch eager, naive attention (zero-model's math)" \
    timeout "$(remaining)" \
    $python "$here/torch_gpt2.py" --mode eager --attention naive --steps 15 \
    --warmup 5 --out "$work/torch-eager-naive.json"
else
  record "PyTorch eager, naive attention" "skipped (time budget)"
fi
# The row programs' share of the step: stage 0 again with every instruction
# run alone.
if within_budget; then
  soft "GPT-2 124M bf16 stage 0, ZERO_CUDA_FUSION=off ($bench_steps steps)" \
    bench_unfused gpt2-124m-bf16-s0-unfused gpt2-124m-bf16-s0.json
else
  record "stage 0 unfused" "skipped (time budget)"
fi

# ---------------------------------------------------------------------------
begin "summary"
summary
echo "run_all.sh: $(elapsed) s; results in $out"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "run_all.sh: FAILED steps:" >&2
  for name in "${failed[@]}"; do echo "  - $name" >&2; done
  exit 1
fi
echo "run_all.sh: all steps passed"
