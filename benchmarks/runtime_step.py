#!/usr/bin/python3
"""Host step time of the runtime per ZeRO stage, on one GPT and two ranks.

Generates a GPT with zero-model (by default 4 layers, hidden 128, 4 heads,
seq 64, batch 8, vocab 76), compiles it for 2 ranks at stages 0, 1, 2 and 3
(stage 3 with stage3_param_persistence_threshold=0, so that every parameter
is gathered: "3-gather"; "3" keeps zero-opt's default threshold), and runs

  zero-run SCHEDULE --nproc 2 --steps N --metrics M --trace T

on synthetic data, --repeat times. Per stage it reports, over the steps after
the --warmup first of each run:

  - the median step time (the slower rank's step_time_s of each step) and
    its ratio to stage 0;
  - the bytes a rank sends per step (bytes_sent of the metrics);
  - from the Chrome trace (a pid per rank, a tid per stream, named by
    thread_name metadata): the comm stream's busy time (its collectives,
    category "collective"; its waits on events are not communication) and
    the fraction of it that overlaps the compute stream's busy time (its
    instructions but the waits, category "sync"): the communication hidden
    behind compute. The compute stream's waits are the exposed part.

With --bucket-elements K the reduce, all-gather and prefetch buckets are K
elements (zero-opt's default, 5e8 / 5e7, puts this whole model in one bucket,
which leaves nothing to overlap), run as extra rows "S/K".

Usage: benchmarks/runtime_step.py [--bin DIR] [--steps 20] [--warmup 3]
                                  [--repeat 3] [--stages 0,1,2,3,3-gather]
                                  [--bucket-elements K] [--keep DIR]
                                  [--model "ARGS of zero-model gpt"]
DIR defaults to the directory of zero-run on PATH, else $ZERO_BUILD_DIR/bin,
else build/bin of the repository.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from intervals import intersection, total, union  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ("--num-layers 4 --hidden-size 128 --num-attention-heads 4 "
         "--seq-length 64 --batch-size 8 --vocab-size 76")
GATHER_ALL = "--zero-set=zero_optimization.stage3_param_persistence_threshold=0"
TOOLS = ("zero-model", "zero-opt", "zero-run")


def find_bin(explicit):
    candidates = [explicit] if explicit else []
    on_path = shutil.which("zero-run")
    if on_path:
        candidates.append(os.path.dirname(on_path))
    if os.environ.get("ZERO_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["ZERO_BUILD_DIR"], "bin"))
    candidates.append(os.path.join(REPO, "build", "bin"))
    for c in candidates:
        if all(os.access(os.path.join(c, t), os.X_OK) for t in TOOLS):
            return c
    sys.exit("runtime_step.py: no %s found (tried %s); build them or pass "
             "--bin" % ("/".join(TOOLS), ", ".join(candidates)))


def run(cmd, **kwargs):
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit("runtime_step.py: %s failed (exit %d):\n%s%s" %
                 (" ".join(map(shlex.quote, cmd)), result.returncode,
                  result.stdout, result.stderr))
    return result.stdout


def compile_flags(stage, buckets):
    """zero-opt's flags for a stage name ("0".."3", "3-gather")."""
    flags = ["--zero-stage=" + stage.split("-")[0], "--zero-world-size=2"]
    if stage.endswith("-gather"):
        flags.append(GATHER_ALL)
    if buckets:
        for key in ("reduce_bucket_size", "allgather_bucket_size",
                    "prefetch_bucket_size"):
            flags.append("--zero-set=zero_optimization.%s=%d" % (key, buckets))
    return flags


def analyze_trace(path, warmup):
    """(comm busy us, hidden us, compute-stream wait us, steps) summed over
    ranks and the steps after the warm-up."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    streams = {}  # (pid, tid) -> stream name
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            streams[(e["pid"], e["tid"])] = e["args"]["name"]
    busy = {}  # (pid, stream, step) -> intervals
    waits = 0.0
    steps = set()
    for e in events:
        if e.get("ph") != "X":
            continue
        stream = streams.get((e["pid"], e["tid"]))
        step = e.get("args", {}).get("step")
        if stream not in ("comm", "compute") or step is None or \
           step <= warmup:
            continue
        steps.add(step)
        if e["cat"] == "sync":
            if stream == "compute" and e["name"].startswith("wait"):
                waits += e["dur"]
            continue
        busy.setdefault((e["pid"], stream, step), []).append(
            (e["ts"], e["ts"] + e["dur"]))
    comm = hidden = 0.0
    for (pid, stream, step), intervals in busy.items():
        if stream != "comm":
            continue
        c = union(intervals)
        comm += total(c)
        hidden += intersection(c, union(busy.get((pid, "compute", step), [])))
    return comm, hidden, waits, len(steps)


def measure(bin_dir, schedule, stage, args, work):
    """Per-step times (s), bytes sent per step, and the trace's totals."""
    times, sent = [], set()
    comm = hidden = waits = 0.0
    steps = 0
    for r in range(args.repeat):
        metrics = os.path.join(work, "metrics-%s-%d.jsonl" % (stage, r))
        trace = os.path.join(work, "trace-%s-%d.json" % (stage, r))
        run([os.path.join(bin_dir, "zero-run"), schedule, "--nproc", "2",
             "--steps", str(args.steps), "--metrics", metrics,
             "--trace", trace])
        by_step = {}
        with open(metrics) as f:
            for line in f:
                m = json.loads(line)
                if m["step"] > args.warmup:
                    by_step.setdefault(m["step"], []).append(m["step_time_s"])
                    sent.add(m["bytes_sent"])
        times += [max(t) for t in by_step.values()]
        c, h, w, n = analyze_trace(trace, args.warmup)
        comm, hidden, waits, steps = comm + c, hidden + h, waits + w, steps + n
    # Trace totals are over 2 ranks: per rank and step.
    per = 2.0 * max(steps, 1)
    return {"times": times, "sent": sorted(sent), "comm_us": comm / per,
            "hidden_us": hidden / per, "wait_us": waits / per,
            "hidden": hidden / comm if comm else float("nan")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stages", default="0,1,2,3,3-gather")
    parser.add_argument("--bucket-elements", type=int, default=0)
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--keep")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        sys.exit("runtime_step.py: --steps must exceed --warmup")
    stages = args.stages.split(",")
    for s in stages:
        if s not in ("0", "1", "2", "3", "3-gather"):
            sys.exit("runtime_step.py: --stages: unknown stage '%s' (expected "
                     "0, 1, 2, 3 or 3-gather)" % s)
    bin_dir = find_bin(args.bin)
    work = args.keep or tempfile.mkdtemp(prefix="zero-runtime-step-")
    os.makedirs(work, exist_ok=True)

    model = os.path.join(work, "gpt.mlir")
    with open(model, "w") as f:
        f.write(run([os.path.join(bin_dir, "zero-model"), "gpt"] +
                    shlex.split(args.model)))
    print("model: zero-model gpt %s; %d steps x %d runs, first %d of each "
          "discarded" % (args.model, args.steps, args.repeat, args.warmup))
    print("load before: %s" % run(["uptime"]).strip())

    configs = [(s, 0) for s in stages]
    if args.bucket_elements:
        configs += [(s, args.bucket_elements) for s in stages]
    results = {}
    for stage, buckets in configs:
        name = stage + ("/%d" % buckets if buckets else "")
        schedule = os.path.join(work, "step-%s.json" % name.replace("/", "-"))
        run([os.path.join(bin_dir, "zero-opt")] +
            compile_flags(stage, buckets) +
            ["--zero-emit-schedule=" + schedule, model, "-o", os.devnull])
        with open(schedule) as f:
            collectives = sum(1 for i in json.load(f)["instructions"]["comm"]
                              if i["op"] not in ("wait", "record"))
        results[name] = measure(bin_dir, schedule, name.replace("/", "-"),
                                args, work)
        results[name]["collectives"] = collectives
    print("load after:  %s" % run(["uptime"]).strip())

    print()
    print("| stage | collectives | median step (ms) | min-max (ms) | vs stage 0 "
          "| sent/step (bytes) | comm busy (ms/step) | hidden behind compute "
          "| compute waits (ms/step) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        base_name = "0" + name[len(name.split("/")[0]):]
        base = results.get(base_name)
        median = statistics.median(r["times"])
        ratio = ("%.2f" % (median / statistics.median(base["times"]))
                 if base else "-")
        print("| %s | %d | %.1f | %.1f-%.1f | %s | %s | %.1f | %.0f%% | %.1f |"
              % (name, r["collectives"], median * 1e3, min(r["times"]) * 1e3,
                 max(r["times"]) * 1e3, ratio,
                 "/".join("{:,}".format(s) for s in r["sent"]),
                 r["comm_us"] / 1e3, 100 * r["hidden"], r["wait_us"] / 1e3))
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
