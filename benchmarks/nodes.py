#!/usr/bin/python3
"""Bytes across nodes and step time of topology-aware schedules, 4 ranks.

Generates a small GPT with zero-model (by default 4 layers, hidden 256, 4
heads, seq 64, batch 4, vocab 256, f32) and compiles it with zero-opt for 4
ranks in 2 nodes of 2 (--zero-world-size=4 --zero-ranks-per-node=2, stage 3,
every parameter gathered: stage3_param_persistence_threshold=0) in each
configuration of CONFIGS (name -> extra zero-opt flags). Each runs as

  zero-run SCHEDULE --nproc 4 --steps W+N --metrics M --trace T
           [--inter-node-ns-per-byte X]

once without and once with a simulated slow link between the nodes: after
each collective a rank waits X ns per byte it sent across the node boundary,
on its comm stream (docs/Runtime.md, "A simulated slow link between
nodes"). X is --ns-per-byte, or by default --slowdown (10) times the ns per
byte the first configuration's collectives took on this host without the
delay (its comm stream's busy time in the trace over the bytes a rank
sends), so that the link between nodes is that much slower than the
transfers within the host.

Per configuration, over the N steps after the W warm-up steps of each of
--repeat runs:
  - the bytes a node sends across the node boundary per step (the sum over
    its ranks of bytes_sent_inter_node of the metrics); the script fails
    unless every step and node, sent and received, equals the compiler's
    report (communication_bytes_per_step.inter_node_per_node);
  - the median step time (the slowest rank's step_time_s of each step)
    without and with the delay, and the ratios to the first configuration;
  - the delay injected per step (inter_node_delay_ns, the most of a rank).

Usage: benchmarks/nodes.py [--bin DIR] [--run-bin DIR] [--steps 10]
                           [--warmup 1] [--repeat 1]
                           [--ns-per-byte X | --slowdown 10]
                           [--only ZeRO-3,MiCS] [--keep DIR]
                           [--model "ARGS of zero-model gpt"]
--bin holds zero-model and zero-opt, --run-bin zero-run (default: --bin).
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
from runtime_step import analyze_trace  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ("--num-layers 4 --hidden-size 256 --num-attention-heads 4 "
         "--seq-length 64 --batch-size 4 --vocab-size 256 --dtype f32")
RANKS, RANKS_PER_NODE = 4, 2
COMMON = ["--zero-stage=3", "--zero-world-size=%d" % RANKS,
          "--zero-ranks-per-node=%d" % RANKS_PER_NODE,
          "--zero-set=zero_optimization.stage3_param_persistence_threshold=0"]
# name -> zero-opt flags beyond COMMON; the first is the baseline of the
# ratios.
REUSE0 = "--zero-set=zero_optimization.stage3_max_reuse_distance=0"
HPZ = "--zero-set=zero_optimization.zero_hpz_partition_size=%d" % RANKS_PER_NODE
QWZ = "--zero-set=zero_optimization.zero_quantized_weights=true"
QGZ = "--zero-set=zero_optimization.zero_quantized_gradients=true"
CONFIGS = [
    ("ZeRO-3", []),
    ("MiCS", ["--zero-set=zero_optimization.mics_shard_size=%d" %
              RANKS_PER_NODE]),
    # MiCS's group of the whole world (2 nodes), gathered across the nodes
    # first: the only hierarchical gather 4 ranks in 2 nodes allow.
    ("MiCS hierarchical (world)",
     ["--zero-set=zero_optimization.mics_shard_size=%d" % RANKS,
      "--zero-set=zero_optimization.mics_hierarchical_params_gather=true"]),
    ("qwZ", [QWZ]),
    ("qgZ", [QGZ]),
    ("qwZ + qgZ", [QWZ, QGZ]),
    # Every use gathered on its own, so that the backward gathers again:
    # what hpZ keeps within the node.
    ("ZeRO-3, reuse 0", [REUSE0]),
    ("hpZ, reuse 0", [REUSE0, HPZ]),
    ("qwZ + hpZ, reuse 0", [REUSE0, HPZ, QWZ]),
    ("ZeRO++ (qwZ + hpZ + qgZ), reuse 0", [REUSE0, HPZ, QWZ, QGZ]),
]


def fail(message):
    sys.exit("nodes.py: " + message)


def find_tool(directories, tool):
    for d in directories:
        if d and os.access(os.path.join(d, tool), os.X_OK):
            return os.path.join(d, tool)
    on_path = shutil.which(tool)
    if on_path:
        return on_path
    fail("no %s found in %s or on PATH; pass --bin/--run-bin" %
         (tool, ", ".join(d for d in directories if d) or "-"))


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        fail("%s failed (exit %d):\n%s%s" %
             (" ".join(map(shlex.quote, cmd)), result.returncode,
              result.stdout, result.stderr))
    return result.stdout


def read_metrics(path, warmup):
    """{step: {rank: metrics}} of the steps after the warm-up."""
    steps = {}
    with open(path) as f:
        for line in f:
            m = json.loads(line)
            if "step" in m and m["step"] > warmup:
                steps.setdefault(m["step"], {})[m["rank"]] = m
    return steps


def inter_node_per_node(name, runs, report):
    """The bytes one node sends across per step; fails unless every step of
    every run and node, sent and received, equals the report."""
    expected = report["communication_bytes_per_step"].get(
        "inter_node_per_node")
    if expected is None:
        fail("%s: the report has no inter_node_per_node" % name)
    for step, ranks in [i for steps in runs for i in sorted(steps.items())]:
        if sorted(ranks) != list(range(RANKS)):
            fail("%s: step %d has metrics of ranks %s" %
                 (name, step, sorted(ranks)))
        for node in range(RANKS // RANKS_PER_NODE):
            members = [ranks[r] for r in range(RANKS)
                       if r // RANKS_PER_NODE == node]
            for key in ("sent", "received"):
                measured = sum(m["bytes_%s_inter_node" % key]
                               for m in members)
                if measured != expected[key]:
                    fail("%s: step %d, node %d %s %d bytes across nodes, "
                         "but the compiler's report says %d "
                         "(inter_node_per_node.%s)" %
                         (name, step, node, key, measured, expected[key],
                          key))
    return expected["sent"]


def measure(zero_run, schedule, tag, args, work, ns_per_byte):
    """Over --repeat runs: per-step times (slowest rank), injected delay per
    step (most of a rank), every run's metrics by step, and the trace's comm
    busy us per rank and step."""
    times, delays, runs = [], [], []
    comm_us = counted = 0
    for r in range(args.repeat):
        metrics = os.path.join(work, "metrics-%s-%d.jsonl" % (tag, r))
        trace = os.path.join(work, "trace-%s-%d.json" % (tag, r))
        cmd = [zero_run, schedule, "--nproc", str(RANKS), "--steps",
               str(args.warmup + args.steps), "--metrics", metrics,
               "--trace", trace]
        if ns_per_byte:
            cmd += ["--inter-node-ns-per-byte", repr(ns_per_byte)]
        run(cmd)
        steps = read_metrics(metrics, args.warmup)
        if len(steps) != args.steps:
            fail("%s: %d steps measured, not %d" %
                 (tag, len(steps), args.steps))
        runs.append(steps)
        times += [max(m["step_time_s"] for m in s.values())
                  for s in steps.values()]
        delays += [max(m.get("inter_node_delay_ns", 0) for m in s.values())
                   for s in steps.values()]
        c, _, _, n = analyze_trace(trace, args.warmup)
        comm_us, counted = comm_us + c, counted + n
    return {"times": times, "delay_ns": statistics.median(delays),
            "runs": runs, "comm_us": comm_us / (RANKS * max(counted, 1))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="zero-model and zero-opt")
    parser.add_argument("--run-bin", help="zero-run (default: --bin)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--ns-per-byte", type=float)
    parser.add_argument("--slowdown", type=float, default=10)
    parser.add_argument("--only", help="configurations, comma-separated")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--keep")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.repeat < 1:
        fail("--steps and --repeat must be at least 1, --warmup at least 0")
    if args.ns_per_byte is not None and args.ns_per_byte <= 0:
        fail("--ns-per-byte must be positive")
    configs = CONFIGS
    if args.only:
        names = args.only.split(",")
        known = [n for n, _ in CONFIGS]
        for n in names:
            if n not in known:
                fail("--only: unknown configuration '%s' (known: %s)" %
                     (n, ", ".join(known)))
        configs = [c for c in CONFIGS if c[0] in names]
    dirs = [args.bin, os.path.join(REPO, "build", "bin")]
    zero_model = find_tool(dirs, "zero-model")
    zero_opt = find_tool(dirs, "zero-opt")
    zero_run = find_tool([args.run_bin] + dirs, "zero-run")
    work = args.keep or tempfile.mkdtemp(prefix="zero-nodes-")
    os.makedirs(work, exist_ok=True)

    model = os.path.join(work, "gpt.mlir")
    run([zero_model, "gpt"] + shlex.split(args.model) + ["-o", model])
    print("model: zero-model gpt %s" % args.model)
    print("zero-opt %s; %d runs of %d steps after %d warm-up" %
          (" ".join(COMMON), args.repeat, args.steps, args.warmup))
    print("zero-run: %s" % zero_run)
    print("load before: %s" % run(["uptime"]).strip())

    results = {}
    for name, flags in configs:
        tag = name.replace("/", "-")
        schedule = os.path.join(work, "step-%s.json" % tag)
        report_path = os.path.join(work, "report-%s.json" % tag)
        run([zero_opt] + COMMON + flags +
            ["--zero-emit-schedule=" + schedule,
             "--zero-report=" + report_path, model, "-o", os.devnull])
        with open(report_path) as f:
            report = json.load(f)
        r = measure(zero_run, schedule, tag, args, work, 0)
        r["bytes"] = inter_node_per_node(name, r["runs"], report)
        r["sent_per_rank"] = statistics.median(
            m["bytes_sent"] for steps in r["runs"] for s in steps.values()
            for m in s.values())
        results[name] = {"off": r, "schedule": schedule, "report": report}

    # The intra-host rate: the baseline's comm busy time per byte sent.
    base = configs[0][0]
    off = results[base]["off"]
    host_ns_per_byte = off["comm_us"] * 1e3 / max(off["sent_per_rank"], 1)
    x = args.ns_per_byte
    if x is None:
        x = float("%.2g" % (args.slowdown * host_ns_per_byte))
    print("intra-host collectives of %s: %.3f ns per byte sent (%.2f GB/s "
          "per rank); inter-node delay X = %g ns/byte (%.3f GB/s per rank)" %
          (base, host_ns_per_byte, 1 / host_ns_per_byte, x, 1 / x))
    for name, _ in configs:
        tag = name.replace("/", "-") + "-delay"
        on = measure(zero_run, results[name]["schedule"], tag, args, work, x)
        inter_node_per_node(name + " (delay)", on["runs"],
                            results[name]["report"])
        results[name]["on"] = on
    print("load after:  %s" % run(["uptime"]).strip())

    def median(r, key):
        return statistics.median(r[key]["times"])

    b = results[base]
    print()
    print("| configuration | inter-node bytes/step/node | vs %s | comm busy "
          "(ms/step/rank) | median step, no delay (ms) | vs %s | median "
          "step, X=%g ns/B (ms) | vs %s | injected delay (ms/step, max "
          "rank) |" % (base, base, x, base))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, _ in configs:
        r = results[name]
        print("| %s | {:,} | %.2f | %.1f | %.0f | %.2f | %.0f | %.2f | %.0f |"
              .format(r["off"]["bytes"]) %
              (name, r["off"]["bytes"] / b["off"]["bytes"],
               r["off"]["comm_us"] / 1e3, median(r, "off") * 1e3,
               median(r, "off") / median(b, "off"), median(r, "on") * 1e3,
               median(r, "on") / median(b, "on"),
               r["on"]["delay_ns"] / 1e6))
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
