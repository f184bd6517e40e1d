#!/usr/bin/python3
"""Activation checkpointing: the memory it saves and the time it adds.

For a small GPT (12 layers, hidden 256, 8 heads, seq 256, batch 4, vocab
1024: 9.8 M parameters), compiled for one rank at stage 0 with and without
--zero-checkpoint-activations, prints per variant:

  - the planned activation peak and arena (the report's
    per_rank_bytes.activations_peak and peak);
  - zero-run's step time on the host backend: the median of the steps after
    --warmup of each of --repeat runs (the variants alternate, so that a
    change of load hits both), and the ratio to the step without
    checkpointing;
  - whether the variants' losses are the same bits.

Usage: benchmarks/checkpoint_activations.py [--bin DIR] [--steps 10]
                                            [--warmup 2] [--repeat 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ["gpt", "--num-layers", "12", "--hidden-size", "256",
         "--num-attention-heads", "8", "--seq-length", "256",
         "--batch-size", "4", "--vocab-size", "1024"]
VARIANTS = [("keep", []), ("checkpoint", ["--zero-checkpoint-activations"]),
            ("checkpoint+cpu",
             ["--zero-checkpoint-activations=cpu-checkpointing=true"])]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="zero-ckpt-")
    ir = os.path.join(work, "gpt.mlir")
    subprocess.run([os.path.join(args.bin, "zero-model")] + MODEL +
                   ["-o", ir], check=True)
    reports, times, losses = {}, {}, {}
    for name, flags in VARIANTS:
        report = os.path.join(work, name + ".report.json")
        subprocess.run([os.path.join(args.bin, "zero-opt"), ir,
                        "--zero-stage=0", "--zero-report=" + report,
                        "--zero-emit-schedule=" +
                        os.path.join(work, name + ".json"), "-o", os.devnull]
                       + flags, check=True)
        with open(report) as f:
            reports[name] = json.load(f)["per_rank_bytes"]
        times[name] = []
    print("uptime:", subprocess.run(["uptime"], capture_output=True,
                                    text=True).stdout.strip())
    for _ in range(args.repeat):
        for name, _ in VARIANTS:
            metrics = os.path.join(work, name + ".metrics.jsonl")
            subprocess.run([os.path.join(args.bin, "zero-run"),
                            os.path.join(work, name + ".json"),
                            "--steps", str(args.steps), "--print-every",
                            str(args.steps), "--metrics", metrics],
                           check=True, stdout=subprocess.DEVNULL)
            records = [json.loads(line) for line in open(metrics)]
            times[name] += [r["step_time_s"] for r in records
                            if r["step"] > args.warmup]
            losses[name] = [r["loss"] for r in records]
    print("uptime:", subprocess.run(["uptime"], capture_output=True,
                                    text=True).stdout.strip())
    base = statistics.median(times["keep"])
    print("| variant | activations_peak (bytes) | peak (bytes) | host (bytes) "
          "| median step (ms) | min-max (ms) | vs keep |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, _ in VARIANTS:
        median = statistics.median(times[name])
        print("| %s | %s | %s | %s | %.1f | %.1f-%.1f | %.2f |" % (
            name, format(reports[name]["activations_peak"], ","),
            format(reports[name]["peak"], ","),
            format(reports[name]["host"], ","), median * 1e3,
            min(times[name]) * 1e3, max(times[name]) * 1e3, median / base))
    print("losses bit for bit:", all(losses[name] == losses["keep"]
                                      for name, _ in VARIANTS))


if __name__ == "__main__":
    main()
