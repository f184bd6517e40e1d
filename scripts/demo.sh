#!/usr/bin/env bash
# The main job: install what is missing, build, generate a small GPT-2
# training step with zero-model, compile it with ZeRO-3 for 2 ranks, and train
# it with zero-run on 2 MPI ranks on a text shipped in data/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}
out=${ZERO_DEMO_DIR:-$build/demo}

steps=${ZERO_DEMO_STEPS:-300}
if ! [[ $steps =~ ^[1-9][0-9]*$ ]] || ((steps < 20)); then
  echo "demo.sh: ZERO_DEMO_STEPS=$steps: expected a whole number of steps, at least 20" >&2
  exit 2
fi
# The learning rate warms up over the first tenth of the steps.
warmup=$((steps / 10))

# Only what the demo runs: zero-model, zero-opt and zero-run, with what they
# link. The demo trains on the host backend: a new build tree leaves the CUDA
# backend out (scripts/test.sh adds it, and builds the rest, the tests among
# it); one that has it keeps it.
"$root/scripts/setup.sh" demo
echo "== building zero-model, zero-opt and zero-run into $build"
if [[ ! -f $build/build.ninja ]]; then
  export ZERO_CUDA=${ZERO_CUDA:-OFF}
fi
"$root/scripts/build.sh" --target zero-model zero-opt zero-run
mkdir -p "$out"
bin=$build/bin

# The text to learn: the GNU GPL v3, shipped in data/, as character tokens.
vocab=$(/usr/bin/python3 "$root/scripts/prepare_text.py" "$root/data/gpl-3.0.txt" \
  --out-dir "$out" 2>/dev/null)

# A small GPT-2: 4 layers, hidden 128, 4 heads, 64 positions, one token per
# character; 8 rows of 64 characters per rank and step.
gpt=(gpt --num-layers 4 --hidden-size 128 --num-attention-heads 4
     --seq-length 64 --batch-size 8 --vocab-size "$vocab")

echo "== zero-model ${gpt[*]}"
"$bin/zero-model" "${gpt[@]}" --print-num-params
"$bin/zero-model" "${gpt[@]}" -o "$out/gpt.mlir"

echo "== zero-opt --zero-stage=3 --zero-world-size=2 --zero-emit-schedule"
# ZeRO-3 with small buckets and no persistence, so that even this small model
# gathers each layer's parameters before use and frees them after, and
# reduce-scatters gradients during the backward pass. AdamW at a peak lr of
# 1e-3 with DeepSpeed's WarmupCosineLR: a linear warm-up over the first tenth
# of the steps, then a cosine decay to a tenth of the peak at the last step.
"$bin/zero-opt" "$out/gpt.mlir" --zero-stage=3 --zero-world-size=2 \
  --zero-set=zero_optimization.stage3_param_persistence_threshold=0 \
  --zero-set=zero_optimization.stage3_prefetch_bucket_size=100000 \
  --zero-set=zero_optimization.reduce_bucket_size=200000 \
  --zero-set=optimizer.type=AdamW --zero-set=optimizer.params.lr=1e-3 \
  --zero-set=scheduler.type=WarmupCosineLR \
  --zero-set=scheduler.params.warmup_num_steps="$warmup" \
  --zero-set=scheduler.params.warmup_type=linear \
  --zero-set=scheduler.params.total_num_steps="$steps" \
  --zero-set=scheduler.params.cos_min_ratio=0.1 \
  --zero-report="$out/gpt.zero3.report.json" \
  --zero-emit-schedule="$out/gpt.zero3.json" -o "$out/gpt.zero3.mlir"
/usr/bin/python3 - "$out/gpt.zero3.report.json" "$out/gpt.zero3.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
b, c = r["per_rank_bytes"], r["communication_bytes_per_step"]
ops = [i["op"] for i in s["instructions"]["comm"] if i["op"] not in ("wait", "record")]
print(f"  {r['num_parameters']:,d} parameters; per rank: model states "
      f"{b['model_states']:,d} B, planned peak {b['peak']:,d} B")
print(f"  schedule: {len(s['instructions']['compute'])} compute instructions, "
      + ", ".join(f"{ops.count(o)} {o}" for o in sorted(set(ops)))
      + f"; {c['sent']:,d} bytes sent per rank and step")
PY

echo "== zero-run --nproc 2 --steps $steps (ZeRO-3 on 2 MPI ranks, host backend)"
"$bin/zero-run" "$out/gpt.zero3.json" --nproc 2 --steps "$steps" \
  --data "$out/gpl-3.0.bin" --print-every 25 \
  --metrics "$out/metrics.jsonl" --export "$out/gpt.trained.safetensors"
/usr/bin/python3 - "$out/metrics.jsonl" "$steps" <<'PY'
import json, sys
m = [json.loads(l) for l in open(sys.argv[1])]
loss = {}
for r in m:
    loss.setdefault(r["step"], []).append(r["loss"])
steps = sorted(loss)
first, last = steps[0], steps[-1]
avg = lambda s: sum(loss[s]) / len(loss[s])
tail = steps[-10:]
end = sum(avg(s) for s in tail) / len(tail)
print(f"loss: {avg(first):.3f} at step {first} -> "
      f"{end:.3f} (mean of the last {len(tail)} steps)")
if not end < avg(first):
    sys.exit(f"demo.sh: the loss did not fall in {last} steps ({sys.argv[1]})")
PY
echo "trained weights: $out/gpt.trained.safetensors"
