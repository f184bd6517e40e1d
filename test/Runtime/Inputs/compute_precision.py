"""Trains the demo's GPT (scripts/demo.sh: 4 layers, hidden 128, character
tokens of the GPL) with ZeRO-3 on 2 ranks, once in f32, once in bf16 as
DeepSpeed means it (`bf16.enabled` with `--zero-compute-type=auto`: 16-bit
parameters, gradients, GEMM operands and activations, f32 accumulation), once
in fp16 likewise (`fp16.enabled`: the loss scale seeds the backward pass,
which computes in f16; a static scale of 1024, see compute-precision.test),
and once in f32 with tf32 GEMM operands
(`--zero-compute-type=tf32`), and compares the final losses (the mean of each
run's last 10 steps) with f32's.

Usage: compute_precision.py --bin DIR --src ROOT --work DIR --steps N
                            --tolerance REL
"""
import argparse
import json
import os
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--bin", required=True)
parser.add_argument("--src", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--tolerance", type=float, required=True)
args = parser.parse_args()
os.makedirs(args.work, exist_ok=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


vocab = run([sys.executable, os.path.join(args.src, "scripts/prepare_text.py"),
             os.path.join(args.src, "data/gpl-3.0.txt"), "--out-dir",
             args.work], capture_output=True).stdout.strip()
model = os.path.join(args.work, "gpt.mlir")
run([os.path.join(args.bin, "zero-model"), "gpt", "--num-layers", "4",
     "--hidden-size", "128", "--num-attention-heads", "4", "--seq-length",
     "64", "--batch-size", "8", "--vocab-size", vocab, "-o", model])
warmup = args.steps // 10
common = [
    "--zero-stage=3", "--zero-world-size=2",
    "--zero-set=zero_optimization.stage3_param_persistence_threshold=0",
    "--zero-set=optimizer.type=AdamW", "--zero-set=optimizer.params.lr=1e-3",
    "--zero-set=scheduler.type=WarmupCosineLR",
    "--zero-set=scheduler.params.warmup_num_steps=%d" % warmup,
    "--zero-set=scheduler.params.warmup_type=linear",
    "--zero-set=scheduler.params.total_num_steps=%d" % args.steps,
    "--zero-set=scheduler.params.cos_min_ratio=0.1",
]
variants = {
    "f32": [],
    "bf16": ["--zero-set=bf16.enabled=true", "--zero-compute-type=auto"],
    "fp16": ["--zero-set=fp16.enabled=true", "--zero-set=fp16.loss_scale=1024",
             "--zero-compute-type=auto"],
    "tf32": ["--zero-compute-type=tf32"],
}
final = {}
for name, flags in variants.items():
    schedule = os.path.join(args.work, name + ".json")
    report = os.path.join(args.work, name + ".report.json")
    run([os.path.join(args.bin, "zero-opt"), model] + common + flags +
        ["--zero-report=" + report, "--zero-emit-schedule=" + schedule,
         "-o", os.devnull])
    metrics = os.path.join(args.work, name + ".metrics.jsonl")
    run([os.path.join(args.bin, "zero-run"), schedule, "--nproc", "2",
         "--steps", str(args.steps), "--data",
         os.path.join(args.work, "gpl-3.0.bin"), "--print-every",
         str(args.steps), "--metrics", metrics], stdout=subprocess.DEVNULL)
    loss = {}
    for line in open(metrics):
        record = json.loads(line)
        loss.setdefault(record["step"], []).append(record["loss"])
    tail = sorted(loss)[-10:]
    final[name] = sum(sum(loss[s]) / len(loss[s]) for s in tail) / len(tail)
    flops = json.load(open(report))["compute"]["gemm_flops"]
    print("%s: final loss %.4f, GEMM FLOPs %s" % (
        name, final[name],
        ", ".join("%s %d" % (k, v) for k, v in flops.items() if v)))
ok = True
for name in ("bf16", "fp16", "tf32"):
    difference = abs(final[name] / final["f32"] - 1)
    ok &= difference <= args.tolerance
    print("%s against f32: %.2f%% %s" % (
        name, 100 * difference,
        "ok" if difference <= args.tolerance else "OFF"))
sys.exit(0 if ok else 1)
