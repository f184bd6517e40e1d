#!/usr/bin/env bash
# Makes, on the build machine, everything run_all.sh needs on the GPU machine,
# which has no LLVM/MLIR (so no zero-model or zero-opt), no Debian packages
# and no network:
#
#   schedules/checks/NAME.json        small steps (world size 1, 2 for the
#                                     NAME-n2 ones, 4 for NAME-n4) compiled
#                                     by zero-opt,
#                                     with NAME.host.jsonl and
#                                     NAME.host.safetensors: the host
#                                     backend's metrics (every rank's) and
#                                     final weights (zero-run here; --nproc 2
#                                     for world size 2), the reference the
#                                     CUDA backend is compared with
#   schedules/gpt2-124m-bf16-sS.json  GPT-2 124M, bf16 mixed precision with
#                                     f32 compute, ZeRO stage S (0 and 3),
#                                     world size 1, with zero-opt's report
#                                     (.report.json) and the cost model's
#                                     H100 prediction (.explain.json);
#                                     gpt2-124m-bf16c-s0 stage 0 computing
#                                     in bf16 (GEMM operands, activations);
#                                     gpt2-124m-bf16-s0-unfused.explain.json
#                                     stage 0 with ZERO_CUDA_FUSION=off
#   schedules/manifest.json           the list run_all.sh reads: each check's
#                                     files, world size, steps, seed and
#                                     tolerances (schedules/ is ignored by
#                                     git: a device run carries it)
#   .deps/json/include, .deps/googletest (at the repository's root, ignored
#                                     by git: carry it) nlohmann-json's headers
#                                     and googletest's sources from this
#                                     machine's Debian packages, where the
#                                     runtime's CMake looks when no package is
#                                     installed (kept if already there)
#
# Usage: benchmarks/gpu/compile_schedules.sh   (tools from $ZERO_BIN, else
# build/bin of the repository: build it first with scripts/build.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${ZERO_BIN:-$root/build/bin}
out=$here/schedules
deps=$root/.deps
work=$(mktemp -d /tmp/zero-gpu-schedules.XXXXXX)
step="start"
on_exit() {
  local rc=$?
  rm -rf "$work"
  if [ "$rc" -ne 0 ]; then
    echo "compile_schedules.sh: FAILED in step: $step (exit $rc)" >&2
  fi
}
trap on_exit EXIT
begin() {
  step="$1"
  echo "== $1"
}

begin "tools"
for tool in zero-model zero-opt zero-run; do
  if [ ! -x "$bin/$tool" ]; then
    echo "compile_schedules.sh: $bin/$tool is missing: build the repository" \
      "(scripts/build.sh) or set ZERO_BIN" >&2
    exit 1
  fi
done
# The host backend makes the references; zero-run's --device flag is newer
# than some builds.
host_device=()
if "$bin/zero-run" --help 2>&1 | grep -q -- '--device'; then
  host_device=(--device cpu)
fi
rm -rf "$out"
mkdir -p "$out/checks"
: >"$work/checks.tsv"

# One whole-step check: NAME DTYPE MODEL("gpt"|"mlp") STEPS TOLERANCE-KIND
# WORLD-SIZE ZERO-OPT-FLAGS... (world size 2: the host reference runs 2 ranks,
# zero-run --nproc 2, i.e. mpirun on this machine; micro-batch as on 1 rank)
small_gpt=(gpt --num-layers 2 --hidden-size 64 --num-attention-heads 4
  --seq-length 32 --batch-size 4 --vocab-size 128)
small_mlp=(mlp --layers 3 --hidden 64 --batch-size 8)
lr=1e-3
seed=7
make_check() {
  local name=$1 dtype=$2 model=$3 steps=$4 tolerance=$5 world=$6
  shift 6
  begin "check $name: zero-model $model --dtype $dtype; zero-opt --zero-world-size=$world $*"
  local -a args
  if [ "$model" = gpt ]; then args=("${small_gpt[@]}"); else args=("${small_mlp[@]}"); fi
  "$bin/zero-model" "${args[@]}" --dtype "$dtype" -o "$work/$name.mlir"
  # From the work folder: locations name NAME.mlir, not a temporary path.
  (cd "$work" && "$bin/zero-opt" "$name.mlir" --zero-world-size="$world" \
    --zero-set=optimizer.type=AdamW --zero-set=optimizer.params.lr=$lr \
    "$@" --zero-emit-schedule="$out/checks/$name.json" -o /dev/null)
  local -a run=("${host_device[@]}")
  [ "$world" -eq 1 ] || run=(--nproc "$world" "${run[@]}")
  local state=""
  if [[ " ${dump_state_checks[*]} " == *" $name "* ]]; then
    state="checks/$name.host.state.safetensors"
    run+=(--dump-state "$out/$state")
  fi
  begin "check $name: host reference (zero-run ${run[*]} --steps $steps --seed $seed)"
  "$bin/zero-run" "${run[@]}" "$out/checks/$name.json" \
    --steps "$steps" --seed "$seed" \
    --metrics "$out/checks/$name.host.jsonl" \
    --export "$out/checks/$name.host.safetensors" >"$work/$name.log"
  tail -1 "$work/$name.log"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$dtype" "$steps" \
    "$seed" "$tolerance" "$lr" "$world" "$state" >>"$work/checks.tsv"
}

gather3=(--zero-stage=3
  --zero-set=zero_optimization.stage3_param_persistence_threshold=0
  --zero-set=zero_optimization.stage3_prefetch_bucket_size=20000
  --zero-set=zero_optimization.reduce_bucket_size=20000
  --zero-set=zero_optimization.allgather_bucket_size=20000)
buckets=(--zero-set=zero_optimization.reduce_bucket_size=20000
  --zero-set=zero_optimization.allgather_bucket_size=20000)
# These also keep their gradients and dump the whole state after the last
# step (zero-run --dump-state, StateAccess.h): the CUDA run's gradients and
# Adam moments are compared with the host's too, on the device, with the
# optimizer offloaded, and on 2 ranks.
dump_state_checks=(gpt-f32-s3 gpt-bf16-s2-off gpt-f32-s3-n2)
make_check gpt-f32-s0 f32 gpt 5 f32 1 --zero-stage=0
make_check gpt-f32-s1 f32 gpt 5 f32 1 --zero-stage=1
make_check gpt-f32-s2 f32 gpt 5 f32 1 --zero-stage=2
make_check gpt-f32-s3 f32 gpt 5 f32 1 "${gather3[@]}"
make_check gpt-f64-s3 f64 gpt 5 f64 1 "${gather3[@]}"
make_check gpt-bf16-s0 f32 gpt 4 bf16 1 --zero-stage=0 --zero-set=bf16.enabled=true
make_check gpt-bf16-s3 f32 gpt 4 bf16 1 "${gather3[@]}" --zero-set=bf16.enabled=true
make_check mlp-f32-s3 f32 mlp 5 f32 1 "${gather3[@]}"
# Optimizer offload: the step's instructions in the host arena run on the
# CPU with the host backend's kernels (docs/Runtime.md, "CUDA backend").
offload=(--zero-stage=2
  --zero-set='zero_optimization.offload_optimizer.device="cpu"')
make_check gpt-f32-s2-off f32 gpt 5 f32 1 "${offload[@]}"
make_check gpt-bf16-s2-off f32 gpt 4 bf16 1 "${offload[@]}" \
  --zero-set=bf16.enabled=true
# fp16 with its dynamic loss scale: the overflow check (zero.any_nonfinite)
# and Adam's unscale and skip operands, on the device and offloaded (where
# the CPU runs them). 2^20 with hysteresis 1 overflows on this model's first
# two steps (skipped; the scale halves) and steps on the next three.
fp16=(--zero-set=fp16.enabled=true --zero-set=fp16.initial_scale_power=20
  --zero-set=fp16.hysteresis=1)
make_check gpt-fp16-s2 f32 gpt 5 fp16 1 --zero-stage=2 "${fp16[@]}"
make_check gpt-fp16-s2-off f32 gpt 5 fp16 1 "${offload[@]}" "${fp16[@]}"
# World size 2 (run_all.sh: mpirun -np 2 on the one GPU, the staged-MPI device
# communicator; skipped where the GPU machine has no MPI): stage 1 with small
# buckets (several reduce-scatters and all-gathers per step), stage 3 with
# every parameter gathered, in f32 and bf16.
make_check gpt-f32-s1-n2 f32 gpt 5 f32 2 --zero-stage=1 "${buckets[@]}"
make_check gpt-f32-s3-n2 f32 gpt 5 f32 2 "${gather3[@]}"
make_check gpt-bf16-s3-n2 f32 gpt 4 bf16 2 "${gather3[@]}" --zero-set=bf16.enabled=true
# World size 4 on a [2, 2] grid (2 ranks per node; run_all.sh: mpirun -np 4
# on the one GPU, staged MPI): the groups' device communicators (split),
# MiCS (collectives over grid_axes), hpZ (the secondary partition), MiCS's
# hierarchical gather (in-place block gathers hop by hop), and ZeRO++ (qwZ's
# int8 gathers with hpZ, qgZ's int4 all-to-all hops over each axis).
nodes=(--zero-ranks-per-node=2)
make_check gpt-f32-mics-n4 f32 gpt 5 f32 4 "${gather3[@]}" "${nodes[@]}" \
  --zero-set=zero_optimization.mics_shard_size=2
# hpZ keeps a copy only of a parameter gathered again after other traffic:
# reuse distance 0 makes the backward gather every parameter again.
make_check gpt-f32-hpz-n4 f32 gpt 5 f32 4 "${gather3[@]}" "${nodes[@]}" \
  --zero-set=zero_optimization.stage3_max_reuse_distance=0 \
  --zero-set=zero_optimization.zero_hpz_partition_size=2
make_check gpt-f32-mics-hier-n4 f32 gpt 5 f32 4 "${gather3[@]}" "${nodes[@]}" \
  --zero-set=zero_optimization.mics_shard_size=4 \
  --zero-set=zero_optimization.mics_hierarchical_params_gather=true
make_check gpt-f32-zeropp-n4 f32 gpt 5 quantized 4 "${gather3[@]}" \
  "${nodes[@]}" --zero-set=zero_optimization.stage3_max_reuse_distance=0 \
  --zero-set=zero_optimization.zero_quantized_weights=true \
  --zero-set=zero_optimization.zero_hpz_partition_size=2 \
  --zero-set=zero_optimization.zero_quantized_gradients=true

# GPT-2 124M as in the GPT-2 paper and nanoGPT: 12 layers, hidden 768, 12
# heads, 1024 positions, GPT-2's 50257 tokens; micro-batch 8; bf16 with fp32
# master weights and AdamW (lr 6e-4, weight decay 0.1); the buckets and
# thresholds are DeepSpeed's defaults.
gpt124=(gpt --num-layers 12 --hidden-size 768 --num-attention-heads 12
  --seq-length 1024 --batch-size 8 --vocab-size 50257)
begin "GPT-2 124M: zero-model"
"$bin/zero-model" "${gpt124[@]}" --print-num-params
"$bin/zero-model" "${gpt124[@]}" --dtype f32 -o "$work/gpt2-124m.mlir"
# bf16 storage with the step's f32 arithmetic (--zero-compute-type=f32,
# gpt2-124m-bf16-sS: the calibration's schedule), and stage 0 as DeepSpeed's
# bf16 computes (the default: bf16 GEMM operands and activations,
# gpt2-124m-bf16c-s0). Each with the cost model's prediction for an H100
# (NAME.explain.json; only where zero-run has the CUDA backend).
for variant in s0 s3 c-s0; do
  stage=${variant: -1}
  name=gpt2-124m-bf16-s$stage
  compute=(--zero-compute-type=f32)
  if [ "$variant" = c-s0 ]; then
    name=gpt2-124m-bf16c-s0
    compute=()
  fi
  begin "GPT-2 124M: zero-opt --zero-stage=$stage --zero-world-size=1 (bf16${compute[*]:+, ${compute[*]}})"
  (cd "$work" && "$bin/zero-opt" gpt2-124m.mlir --zero-stage=$stage \
    --zero-world-size=1 --zero-set=bf16.enabled=true "${compute[@]}" \
    --zero-set=optimizer.type=AdamW --zero-set=optimizer.params.lr=6e-4 \
    --zero-set=optimizer.params.weight_decay=0.1 \
    --zero-report="$out/$name.report.json" \
    --zero-emit-schedule="$out/$name.json" -o /dev/null)
  "$bin/zero-run" "$out/$name.json" --explain h100 \
    --explain-json "$out/$name.explain.json" > /dev/null ||
    echo "compile_schedules.sh: no cost model prediction for $name" >&2
done
# run_all.sh also runs stage 0 with ZERO_CUDA_FUSION=off, which the model
# plans as the device does (ComputePlan.h).
ZERO_CUDA_FUSION=off "$bin/zero-run" "$out/gpt2-124m-bf16-s0.json" \
  --explain h100 --explain-json "$out/gpt2-124m-bf16-s0-unfused.explain.json" \
  > /dev/null ||
  echo "compile_schedules.sh: no cost model prediction for the unfused run" >&2

begin "manifest"
/usr/bin/env python3 - "$work/checks.tsv" "$out/manifest.json" "${gpt124[*]}" \
  "${small_gpt[*]}" "$lr" "$seed" <<'PY'
import json, sys
tsv, path, model, small_gpt, lr, seed = sys.argv[1:7]
# How far the CUDA backend may be from the host backend after the steps.
# f64: both round every op to f64, in other orders and with other libm
# (exp, tanh): losses to 1e-11 relative; weights are exported in fp32: 2 ulps.
# f32: other summation orders in every matmul and reduction (cuBLAS against
# OpenBLAS, the host computing each op in double and rounding): losses to
# 1e-4 relative, weights to 1e-4 relative or 1e-5 absolute (1% of one AdamW
# step at lr 1e-3: a weight whose gradient is mostly rounding noise moves by
# up to lr either way), as test/Runtime/torch-adamw.test allows OpenBLAS
# against torch.
# bf16 (fp32 master weights): 16-bit activations and gradients rounded after
# other sums: losses to 1e-2 relative; a weight may move up to 2 lr per step
# the other way where its gradient is noise, so at most 2 * steps * lr apart,
# and at most 1% of the weights more than lr apart.
# World size 2 and 4: the same, for every rank's loss and the mean loss; and
# every rank's bytes sent and received per step exactly the host run's
# (analyze.py).
# quantized (ZeRO++, f32): the quantizer's bytes are the host's bit for bit
# (QuantizeGpuTest), but what it quantizes comes from f32 compute in other
# summation orders, and a value that lands the other side of a rounding tie
# moves by a whole scale (absmax / 127 for qwZ, absmax / 7 for qgZ): losses
# to 1e-3 relative, and the weights as bf16's (a gradient that is mostly
# quantization noise may move a weight up to 2 lr per step the other way).
TOLERANCES = {
    "f64": {"loss_rtol": 1e-11, "loss_atol": 0.0, "weight_rtol": 2.5e-7,
            "weight_atol": 1e-12},
    "f32": {"loss_rtol": 1e-4, "loss_atol": 0.0, "weight_rtol": 1e-4,
            "weight_atol": 1e-5},
    "bf16": {"loss_rtol": 1e-2, "loss_atol": 0.0, "noise_steps": True},
    # f16 rounds finer than bf16; a different overflow decision would move
    # every later loss far beyond this.
    "fp16": {"loss_rtol": 1e-2, "loss_atol": 0.0, "noise_steps": True},
    "quantized": {"loss_rtol": 1e-3, "loss_atol": 0.0, "noise_steps": True},
}
checks = []
for line in open(tsv):
    name, dtype, steps, seed, kind, lr, world, state = \
        line.rstrip("\n").split("\t")
    tol = dict(TOLERANCES[kind])
    if tol.pop("noise_steps", False):
        tol["weight_max_abs"] = 2 * int(steps) * float(lr)
        tol["weight_outlier_abs"] = float(lr)
        tol["weight_outlier_fraction"] = 0.01
    checks.append({
        "name": name, "dtype": dtype, "precision": kind,
        "world_size": int(world), "schedule": "checks/%s.json" % name,
        "steps": int(steps), "seed": int(seed),
        "reference_metrics": "checks/%s.host.jsonl" % name,
        "reference_export": "checks/%s.host.safetensors" % name,
        "tolerance": tol})
    if state:
        # Gradients and Adam moments: the whole tensor's error against its
        # norm, ||cuda - host|| <= rtol ||host|| (their elements near zero
        # are rounding noise after other summation orders).
        checks[-1]["reference_state"] = state
        checks[-1]["state_rtol"] = {"f32": 1e-3, "bf16": 5e-2}[kind]
benchmarks = [{
    "name": name, "stage": s, "label": label,
    "schedule": name + ".json", "world_size": 1,
    "report": name + ".report.json", "explain": name + ".explain.json",
    "model": "zero-model " + model, "precision": "bf16 (fp32 master weights)",
    "tokens_per_step": 8 * 1024} for name, s, label in (
        ("gpt2-124m-bf16-s0", 0, "zero-run stage 0"),
        ("gpt2-124m-bf16-s3", 3, "zero-run stage 3"),
        ("gpt2-124m-bf16c-s0", 0, "zero-run stage 0, bf16 GEMMs"))]
# 10 AdamW steps of the small GPT's f32 stage-3 schedule against the same
# model in PyTorch on the GPU (test/Runtime/Inputs/torch_reference.py
# --device cuda: the same initial weights from the seed, the same data
# rule), with the f32 tolerances of test/Runtime/torch-adamw.test.
flags = small_gpt.split()[1:]  # zero-model's flags, torch_reference's too
torch_check = {
    "name": "gpt-f32-s3-torch", "schedule": "checks/gpt-f32-s3.json",
    "steps": 10, "seed": int(seed), "lr": float(lr), "world_size": 1,
    "precision": "f32",
    "torch_args": ["--model", "gpt"] + flags,
    # The f32 tolerances, but over 10 steps a few weights whose gradient is
    # mostly rounding noise (the attention's key bias, whose exact gradient
    # is zero) drift further: at most 0.1% of the weights may fall outside,
    # by no more than 1e-4 (a tenth of one step at lr 1e-3). On this
    # machine's host backend against PyTorch on the CPU: 9 of 110,336
    # outside, the largest 3.0e-5 apart.
    "tolerance": dict(TOLERANCES["f32"], weight_outlier_fraction=0.001,
                      weight_max_abs=1e-4)}
json.dump({"checks": checks, "benchmarks": benchmarks,
           "torch": torch_check}, open(path, "w"), indent=1)
print("%d checks (%d on 2 ranks, %d on 4), %d benchmarks" % (
    len(checks), sum(c["world_size"] == 2 for c in checks),
    sum(c["world_size"] == 4 for c in checks), len(benchmarks)))
PY

begin "deps: nlohmann-json headers and googletest sources in .deps/"
# Where runtime/CMakeLists.txt and runtime/test/CMakeLists.txt look when no
# package is installed (../.deps/json/include, ../.deps/googletest); .deps/ is
# ignored by git, so a device run carries it (carry: [".deps"]).
if [ ! -f "$deps/json/include/nlohmann/json.hpp" ]; then
  mkdir -p "$deps/json/include"
  cp -r /usr/include/nlohmann "$deps/json/include/"
fi
if [ ! -f "$deps/googletest/CMakeLists.txt" ]; then
  if [ ! -f /usr/src/googletest/CMakeLists.txt ]; then
    echo "compile_schedules.sh: /usr/src/googletest is missing (Debian package" \
      "googletest, with libgtest-dev)" >&2
    exit 1
  fi
  mkdir -p "$deps"
  cp -r /usr/src/googletest "$deps/googletest"
fi

begin "sizes"
du -sh "$out" "$deps"
du -ch "$out"/*.json "$out"/checks/* "$deps" | tail -1
echo "compile_schedules.sh: done; run benchmarks/gpu/run_all.sh on the GPU machine"
