#!/usr/bin/python3
"""The demo model trained with all of ZeRO++ against ZeRO-3, 4 ranks.

The README's demo (scripts/demo.sh: a GPT-2 of 4 layers, hidden 128, 4
heads, 64 positions, character tokens of data/gpl-3.0.txt, AdamW at a peak
lr of 1e-3 with a warm-up and a cosine decay) is compiled for 4 ranks in 2
nodes of 2 (--zero-world-size=4 --zero-ranks-per-node=2, 4 rows per rank:
the demo's global batch of 16) at stage 3 with every parameter partitioned
and gathered for each use (stage3_max_reuse_distance=0, so that hpZ's copies
serve the backward), twice:

  ZeRO-3   unquantized;
  ZeRO++   zero_quantized_weights (qwZ), zero_hpz_partition_size=2 (hpZ)
           and zero_quantized_gradients (qgZ).

Both train for --steps (300) steps on the same tokens with zero-run --nproc
4. The final loss of each is the mean of the last 10 steps' losses (the
mean over the ranks of each step); the script prints both, their relative
difference and the bytes a node sends across the node boundary per step,
and exits non-zero if the difference exceeds --tolerance (0.02) or a
step's bytes differ from the compiler's report.

Usage: benchmarks/zeropp_demo.py [--bin build/bin] [--steps 300]
                                 [--tolerance 0.02] [--seed 0] [--keep DIR]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RANKS, RANKS_PER_NODE = 4, 2
COMMON = [
    "--zero-stage=3", "--zero-world-size=%d" % RANKS,
    "--zero-ranks-per-node=%d" % RANKS_PER_NODE,
    "--zero-set=zero_optimization.stage3_param_persistence_threshold=0",
    "--zero-set=zero_optimization.stage3_max_reuse_distance=0",
    "--zero-set=zero_optimization.stage3_prefetch_bucket_size=100000",
    "--zero-set=zero_optimization.reduce_bucket_size=200000",
    "--zero-set=optimizer.type=AdamW", "--zero-set=optimizer.params.lr=1e-3",
    "--zero-set=scheduler.type=WarmupCosineLR",
    "--zero-set=scheduler.params.warmup_num_steps=30",
    "--zero-set=scheduler.params.warmup_type=linear",
    "--zero-set=scheduler.params.cos_min_ratio=0.1",
]
CONFIGS = [
    ("ZeRO-3", []),
    ("ZeRO++", ["--zero-set=zero_optimization.zero_quantized_weights=true",
                "--zero-set=zero_optimization.zero_hpz_partition_size=%d" %
                RANKS_PER_NODE,
                "--zero-set=zero_optimization.zero_quantized_gradients=true"]),
]


def fail(message):
    sys.exit("zeropp_demo.py: " + message)


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail("%s failed (exit %d):\n%s%s" % (" ".join(cmd), result.returncode,
                                            result.stdout, result.stderr))
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0,
                        help="zero-run's seed of the initialization")
    parser.add_argument("--keep", help="keep the work files in this folder")
    args = parser.parse_args()
    if args.steps < 10:
        fail("--steps must be at least 10 (the final loss is a mean of 10)")
    work = args.keep or tempfile.mkdtemp(prefix="zeropp-demo-")
    os.makedirs(work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)

    vocab = run(["/usr/bin/python3",
                 os.path.join(REPO, "scripts", "prepare_text.py"),
                 os.path.join(REPO, "data", "gpl-3.0.txt"),
                 "--out-dir", work]).strip()
    model = os.path.join(work, "gpt.mlir")
    run([tool("zero-model"), "gpt", "--num-layers", "4", "--hidden-size",
         "128", "--num-attention-heads", "4", "--seq-length", "64",
         "--batch-size", "4", "--vocab-size", vocab, "-o", model])

    finals = {}
    for name, flags in CONFIGS:
        tag = name.replace("+", "p").replace("-", "").lower()
        schedule = os.path.join(work, tag + ".json")
        report = os.path.join(work, tag + ".report.json")
        metrics = os.path.join(work, tag + ".metrics.jsonl")
        run([tool("zero-opt"), model] + COMMON + flags + [
            "--zero-set=scheduler.params.total_num_steps=%d" % args.steps,
            "--zero-report=" + report, "--zero-emit-schedule=" + schedule,
            "-o", os.devnull])
        run([tool("zero-run"), schedule, "--nproc", str(RANKS), "--steps",
             str(args.steps), "--data", os.path.join(work, "gpl-3.0.bin"),
             "--seed", str(args.seed), "--metrics", metrics])
        expected = json.load(open(report))["communication_bytes_per_step"][
            "inter_node_per_node"]["sent"]
        loss, across = {}, {}
        for line in open(metrics):
            record = json.loads(line)
            if "step" not in record:
                continue
            loss.setdefault(record["step"], []).append(record["loss"])
            node = record["rank"] // RANKS_PER_NODE
            key = (record["step"], node)
            across[key] = across.get(key, 0) + record["bytes_sent_inter_node"]
        bad = sorted(k for k, v in across.items() if v != expected)
        if bad:
            fail("%s: step %d, node %d sent %d bytes across nodes, the "
                 "report %d" % (name, bad[0][0], bad[0][1], across[bad[0]],
                                expected))
        steps = sorted(loss)
        tail = steps[-10:]
        finals[name] = statistics.mean(statistics.mean(loss[s]) for s in tail)
        print("%-7s first loss %.4f, final loss %.4f (mean of steps %d-%d), "
              "%d bytes per step and node across nodes" %
              (name, statistics.mean(loss[steps[0]]), finals[name], tail[0],
               tail[-1], expected))
    base, zpp = finals["ZeRO-3"], finals["ZeRO++"]
    difference = (zpp - base) / base
    print("ZeRO++ final loss vs ZeRO-3: %+.2f%% (bound %.0f%%)" %
          (100 * difference, 100 * args.tolerance))
    if not args.keep:
        shutil.rmtree(work)
    if abs(difference) > args.tolerance:
        fail("the final losses differ by more than the bound")


if __name__ == "__main__":
    main()
