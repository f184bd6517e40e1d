#!/usr/bin/python3
"""Gradient accumulation: the micro-step loop against the unrolled step.

For a GPT-2 training step (4 layers, hidden 128, 4 heads, seq 64, batch 8 per
micro-step: the demo's model), compiled for 2 ranks at stage 2 (and stage 3
with every parameter partitioned) with G micro-steps per optimizer step, as a
loop (the default) and unrolled (--zero-unroll-micro-steps), prints per G:

  - zero-opt's CPU time (user + sys of the child), best of --repeat runs;
  - the bytes of the compiled IR and of the schedule;
  - the planned peak bytes per rank (the report's per_rank_bytes.peak);
  - for G <= --run-max, zero-run's time per optimizer step on 2 MPI ranks
    (host backend, the mean of --steps steps after the first) and whether
    the two forms' losses are the same bits.

Unrolled compiles stop at --unroll-max (the unrolled form grows with G).

Usage: benchmarks/accumulation.py [--bin DIR] [--micro-steps 1,4,16,64,256,1000]
                                  [--unroll-max 256] [--run-max 16]
                                  [--repeat 3] [--steps 4]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ["gpt", "--num-layers", "4", "--hidden-size", "128",
         "--num-attention-heads", "4", "--seq-length", "64",
         "--batch-size", "8", "--vocab-size", "76"]


def cpu_time(cmd):
    """Runs cmd; returns the child's user + sys seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime -
                                                 before.ru_stime)


def compile_step(args, work, model, stage_flags, g, unroll):
    name = "%s-g%d-%s" % (stage_flags[0].split("=")[1], g,
                          "unrolled" if unroll else "loop")
    ir = os.path.join(work, name + ".mlir")
    schedule = os.path.join(work, name + ".json")
    report = os.path.join(work, name + ".report.json")
    cmd = [os.path.join(args.bin, "zero-opt"), model, "--zero-world-size=2",
           "--zero-set=gradient_accumulation_steps=%d" % g,
           "--zero-report=" + report, "--zero-emit-schedule=" + schedule,
           "-o", ir] + stage_flags
    if unroll:
        cmd.append("--zero-unroll-micro-steps")
    seconds = min(cpu_time(cmd) for _ in range(args.repeat))
    with open(report) as f:
        peak = json.load(f)["per_rank_bytes"]["peak"]
    return {"schedule": schedule, "cpu": seconds,
            "ir_bytes": os.path.getsize(ir),
            "schedule_bytes": os.path.getsize(schedule), "peak": peak}


def run_step(args, work, schedule):
    metrics = schedule + ".metrics.jsonl"
    subprocess.run(["mpirun", "--oversubscribe", "--allow-run-as-root", "-np",
                    "2", os.path.join(args.bin, "zero-run"), schedule,
                    "--steps", str(args.steps + 1), "--metrics", metrics],
                   check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(metrics) if line.strip()]
    rank0 = [r for r in records if r["rank"] == 0]
    times = [r["step_time_s"] for r in rank0[1:]]
    return sum(times) / len(times), [r["loss"] for r in rank0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(
        os.environ.get("ZERO_BUILD_DIR", os.path.join(REPO, "build")), "bin"))
    parser.add_argument("--micro-steps", default="1,4,16,64,256,1000")
    parser.add_argument("--unroll-max", type=int, default=256)
    parser.add_argument("--run-max", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zero-accumulation-")
    model = os.path.join(work, "gpt.mlir")
    subprocess.run([os.path.join(args.bin, "zero-model")] + MODEL +
                   ["-o", model], check=True)
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print("| stage | G | loop CPU (s) | unrolled CPU (s) | loop IR / schedule "
          "(KB) | unrolled IR / schedule (KB) | loop / unrolled planned peak "
          "(KB) | loop / unrolled step (ms) | same losses |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for stage_flags in (["--zero-stage=2"],
                        ["--zero-stage=3", "--zero-set=zero_optimization."
                         "stage3_param_persistence_threshold=0"]):
        for g in [int(x) for x in args.micro_steps.split(",")]:
            loop = compile_step(args, work, model, stage_flags, g, False)
            unrolled = (compile_step(args, work, model, stage_flags, g, True)
                        if g <= args.unroll_max else None)
            kb = lambda r: "%d / %d" % (r["ir_bytes"] // 1024,
                                        r["schedule_bytes"] // 1024)
            step, same = "", ""
            if g <= args.run_max and unrolled:
                t_loop, l_loop = run_step(args, work, loop["schedule"])
                t_unrolled, l_unrolled = run_step(args, work,
                                                  unrolled["schedule"])
                step = "%.1f / %.1f" % (t_loop * 1e3, t_unrolled * 1e3)
                same = "yes" if l_loop == l_unrolled else "NO"
            print("| %s | %d | %.2f | %s | %s | %s | %s | %s | %s |" % (
                stage_flags[0].split("=")[1], g, loop["cpu"],
                "%.2f" % unrolled["cpu"] if unrolled else "-", kb(loop),
                kb(unrolled) if unrolled else "-",
                "%d / %s" % (loop["peak"] // 1024,
                             unrolled["peak"] // 1024 if unrolled else "-"),
                step, same))
            sys.stdout.flush()
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
