#!/usr/bin/python3
"""Step time and memory of offload on the host backend, one GPT, two ranks.

Generates the demo GPT with zero-model (4 layers, hidden 128, 4 heads, seq
64, batch 8, vocab 76), compiles it at stage 3 for 2 ranks (every parameter
partitioned, 100k-element buckets, as scripts/demo.sh does) in each offload
configuration, with overlap_comm off and on:

  none      no offload
  opt-cpu   offload_optimizer cpu
  cpu       offload_param cpu + offload_optimizer cpu
  nvme      offload_param nvme (files under --nvme-dir) + offload_optimizer cpu
  opt-nvme  offload_optimizer nvme (files under --nvme-dir), one sub-group
  opt-nvme-pipe  offload_optimizer nvme in sub-groups of 100k elements,
            buffer_count 8, pipeline_read and pipeline_write

and runs `zero-run SCHEDULE --nproc 2 --steps N --metrics M` --repeat times.
Per configuration: the median step time (the slower rank's step_time_s of
each step after the --warmup first) and its ratio to "none" with the same
overlap_comm, the plan's device and host arenas, and the bytes a rank swaps
per step (from the metrics, which equal the report's).

Usage: benchmarks/offload.py [--bin DIR] [--steps 30] [--warmup 5]
                             [--repeat 3] [--nvme-dir DIR] [--keep DIR]
                             [--only none,opt-nvme,...] [--overlap false,true]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runtime_step import find_bin  # noqa: E402

MODEL = ("--num-layers 4 --hidden-size 128 --num-attention-heads 4 "
         "--seq-length 64 --batch-size 8 --vocab-size 76").split()
STAGE3 = ["--zero-stage=3", "--zero-world-size=2",
          "--zero-set=zero_optimization.stage3_param_persistence_threshold=0",
          "--zero-set=zero_optimization.stage3_prefetch_bucket_size=100000",
          "--zero-set=zero_optimization.reduce_bucket_size=200000"]
OPT_CPU = '--zero-set=zero_optimization.offload_optimizer.device="cpu"'
OPT_NVME = ['--zero-set=zero_optimization.offload_optimizer.device="nvme"']
NVME_PATH = '--zero-set=zero_optimization.offload_optimizer.nvme_path="%s"'


def configurations(nvme_dir):
    return [
        ("none", []),
        ("opt-cpu", [OPT_CPU]),
        ("cpu", [OPT_CPU,
                 '--zero-set=zero_optimization.offload_param.device="cpu"']),
        ("nvme", [OPT_CPU,
                  '--zero-set=zero_optimization.offload_param.device="nvme"',
                  '--zero-set=zero_optimization.offload_param.nvme_path="%s"'
                  % nvme_dir,
                  # DeepSpeed's default (1e9) keeps this model's shards in
                  # host memory.
                  "--zero-set=zero_optimization.offload_param.max_in_cpu=0"]),
        ("opt-nvme", OPT_NVME + [NVME_PATH % nvme_dir]),
        ("opt-nvme-pipe", OPT_NVME + [NVME_PATH % nvme_dir] + [
            "--zero-set=zero_optimization.sub_group_size=100000",
            "--zero-set=zero_optimization.offload_optimizer.buffer_count=8",
            "--zero-set=zero_optimization.offload_optimizer.pipeline_read=true",
            "--zero-set=zero_optimization.offload_optimizer.pipeline_write=true",
        ]),
    ]


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nvme-dir")
    parser.add_argument("--keep")
    parser.add_argument("--only", help="comma-separated configurations "
                        "(none always runs: the ratios need it)")
    parser.add_argument("--overlap", default="false,true")
    args = parser.parse_args()
    bin_dir = find_bin(args.bin)
    work = args.keep or tempfile.mkdtemp(prefix="zero-offload-")
    os.makedirs(work, exist_ok=True)
    nvme_dir = args.nvme_dir or os.path.join(work, "nvme")
    os.makedirs(nvme_dir, exist_ok=True)
    model = os.path.join(work, "gpt.mlir")
    run([os.path.join(bin_dir, "zero-model"), "gpt"] + MODEL + ["-o", model])

    rows = []
    baseline = {}
    only = set(args.only.split(",")) | {"none"} if args.only else None
    for overlap in args.overlap.split(","):
        for name, flags in configurations(nvme_dir):
            if only is not None and name not in only:
                continue
            tag = "%s-overlap-%s" % (name, overlap)
            schedule = os.path.join(work, tag + ".json")
            report = os.path.join(work, tag + ".report.json")
            run([os.path.join(bin_dir, "zero-opt"), model] + STAGE3 + flags +
                ["--zero-set=zero_optimization.overlap_comm=" + overlap,
                 "--zero-emit-schedule=" + schedule,
                 "--zero-report=" + report, "-o", os.devnull])
            times, record = [], None
            for r in range(args.repeat):
                metrics = os.path.join(work, "%s.%d.jsonl" % (tag, r))
                run([os.path.join(bin_dir, "zero-run"), schedule, "--nproc",
                     "2", "--steps", str(args.steps), "--metrics", metrics])
                by_step = {}
                for line in open(metrics):
                    m = json.loads(line)
                    by_step.setdefault(m["step"], []).append(m)
                    record = m
                for step, ranks in sorted(by_step.items()):
                    if step > args.warmup:
                        times.append(max(x["step_time_s"] for x in ranks))
            median = statistics.median(times)
            if name == "none":
                baseline[overlap] = median
            plan = json.load(open(report))["per_rank_bytes"]
            rows.append((name, overlap, median, median / baseline[overlap],
                         plan["device"], plan["host"], plan["nvme"],
                         record["bytes_device_to_host"],
                         record["bytes_host_to_device"],
                         record["bytes_nvme_read"],
                         record["bytes_nvme_write"]))

    print("| offload | overlap_comm | step (ms) | / none | device arena | "
          "host arena | nvme arena | D2H B/step | H2D B/step | "
          "NVMe read | NVMe write |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| %s | %s | %.3f | %.2f | %d | %d | %d | %d | %d | %d | %d |"
              % ((row[0], row[1], row[2] * 1e3, row[3]) + row[4:]))


if __name__ == "__main__":
    main()
