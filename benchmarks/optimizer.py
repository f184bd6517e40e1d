#!/usr/bin/python3
"""Throughput of the runtime's host Adam step against memory bandwidth and
torch.optim.AdamW.

For each size (default 2^22 and 2^24 f32 elements) and thread count (default
1 and 2), runs build's zero-bench-optimizer (runtime/bench/OptimizerBench.cpp:
the zero.adam host kernel, AdamW mode, in place; the same step with the bf16
copy of the updated parameter written in the same pass, zero.adam+bf16; and a
STREAM-like copy and triad on the same arrays and threads), then times
torch.optim.AdamW with foreach=False and foreach=True on tensors of the same
size with torch.set_num_threads(T) and the same hyperparameters (lr 1e-3,
betas (0.9, 0.999), eps 1e-8, weight decay 0.01). Each timing is the median
of --repeat steps after two warm-up steps; the whole measurement runs --runs
times, and the table shows the median over the runs, a second table the
range (smallest to largest) of the ratios.

Effective bandwidth counts 28 bytes per element for Adam (reads param, grad,
m, v; writes param, m, v, all f32), 30 with the bf16 copy, 8 for copy and 12
for triad (STREAM's convention: no write-allocate traffic, which triad has
and Adam, writing only what it read, does not).

Usage: benchmarks/optimizer.py [--bin DIR] [--elements 4194304,16777216]
                               [--threads 1,2] [--repeat 20] [--runs 3]
                               [--isa scalar|avx2|avx512]
DIR (with zero-bench-optimizer) defaults to $ZERO_BUILD_DIR/bin, else
build/bin of the repository. --isa picks the kernels' form (default: the
best this CPU runs).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = "zero-bench-optimizer"


def find_tool(explicit):
    candidates = [explicit] if explicit else []
    if os.environ.get("ZERO_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["ZERO_BUILD_DIR"], "bin"))
    candidates.append(os.path.join(REPO, "build", "bin"))
    for c in candidates:
        path = os.path.join(c, TOOL)
        if os.access(path, os.X_OK):
            return path
    sys.exit("optimizer.py: no %s found (tried %s); build it or pass --bin" %
             (TOOL, ", ".join(candidates)))


def run_native(tool, n, threads, repeat, isa):
    """{kernel: measurement} from zero-bench-optimizer."""
    result = subprocess.run(
        [tool, "--elements", str(n), "--threads", str(threads),
         "--repeat", str(repeat)] + (["--isa", isa] if isa else []),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit("optimizer.py: %s failed (exit %d): %s" %
                 (TOOL, result.returncode, result.stderr.strip()))
    return {m["kernel"]: m for m in map(json.loads,
                                        result.stdout.splitlines())}


def run_torch(n, threads, repeat, foreach):
    """Median seconds of one AdamW step on n f32 elements."""
    import torch
    torch.set_num_threads(threads)
    i = torch.arange(n, dtype=torch.float32)
    param = torch.nn.Parameter(0.01 * (i.remainder(1000) - 500))
    param.grad = 0.001 * (i.remainder(777) - 388)
    del i
    opt = torch.optim.AdamW([param], lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01, foreach=foreach)
    seconds = []
    for r in range(repeat + 2):
        start = time.perf_counter()
        opt.step()
        stop = time.perf_counter()
        if r >= 2:
            seconds.append(stop - start)
    return statistics.median(seconds)


def load():
    return subprocess.run(["uptime"], stdout=subprocess.PIPE,
                          text=True).stdout.strip()


def label(n):
    return "2^%d" % (n.bit_length() - 1) if n & (n - 1) == 0 else str(n)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--elements", default="%d,%d" % (1 << 22, 1 << 24))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--isa", choices=["scalar", "avx2", "avx512"])
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.elements.split(",")]
        thread_counts = [int(t) for t in args.threads.split(",")]
    except ValueError:
        sys.exit("optimizer.py: --elements and --threads take comma-separated "
                 "integers")
    if min([args.repeat, args.runs] + sizes + thread_counts) < 1:
        sys.exit("optimizer.py: sizes, thread counts, --repeat and --runs "
                 "must be positive")
    tool = find_tool(args.bin)
    import torch
    print("torch %s; %d steps per timing (median), %d runs (median, range)" %
          (torch.__version__, args.repeat, args.runs))

    # (n, threads) -> column -> one value per run.
    results = {}
    isas = set()
    for run in range(args.runs):
        print("run %d, load before: %s" % (run + 1, load()))
        for n in sizes:
            for threads in thread_counts:
                native = run_native(tool, n, threads, args.repeat, args.isa)
                loop = run_torch(n, threads, args.repeat, foreach=False)
                foreach = run_torch(n, threads, args.repeat, foreach=True)
                adam = native["zero.adam"]
                fused = native["zero.adam+bf16"]
                triad = native["triad"]["gb_per_s"]
                isas.add(adam["isa"])
                row = {
                    "copy": native["copy"]["gb_per_s"],
                    "triad": triad,
                    "adam": adam["elements_per_s"] / 1e6,
                    "adam_gb": adam["gb_per_s"],
                    "adam_triad": adam["gb_per_s"] / triad,
                    "fused": fused["elements_per_s"] / 1e6,
                    "fused_gb": fused["gb_per_s"],
                    "fused_triad": fused["gb_per_s"] / triad,
                    "separate": native["zero.adam;bf16"]["elements_per_s"] /
                    1e6,
                    "loop": n / loop / 1e6,
                    "foreach": n / foreach / 1e6,
                    "vs_loop": adam["elements_per_s"] * loop / n,
                    "vs_foreach": adam["elements_per_s"] * foreach / n,
                }
                for key, value in row.items():
                    results.setdefault((n, threads), {}).setdefault(
                        key, []).append(value)
    print("load after:  %s" % load())
    print("kernel form: %s" % ", ".join(sorted(isas)))

    print()
    print("| elements | threads | copy (GB/s) | triad (GB/s) "
          "| zero.adam (Melem/s) | zero.adam (GB/s) | adam / triad "
          "| zero.adam+bf16 (Melem/s) | +bf16 (GB/s) | +bf16 / triad "
          "| adam, then bf16 pass (Melem/s) "
          "| AdamW foreach=False (Melem/s) | AdamW foreach=True (Melem/s) "
          "| zero / foreach=False | zero / foreach=True |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
          "|---:|---:|")
    columns = [("copy", "%.1f"), ("triad", "%.1f"), ("adam", "%.0f"),
               ("adam_gb", "%.1f"), ("adam_triad", "%.2f"), ("fused", "%.0f"),
               ("fused_gb", "%.1f"), ("fused_triad", "%.2f"),
               ("separate", "%.0f"), ("loop", "%.0f"), ("foreach", "%.0f"),
               ("vs_loop", "%.1f"), ("vs_foreach", "%.1f")]
    for (n, threads), row in results.items():
        print("| %s | %d | %s |" % (label(n), threads, " | ".join(
            fmt % statistics.median(row[key]) for key, fmt in columns)))

    if args.runs > 1:
        print()
        print("Ranges over the runs:")
        print()
        print("| elements | threads | triad (GB/s) | adam / triad "
              "| +bf16 / triad | zero / foreach=False | zero / foreach=True |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for (n, threads), row in results.items():
            print("| %s | %d | %s |" % (label(n), threads, " | ".join(
                (fmt + "-" + fmt) % (min(row[key]), max(row[key]))
                for key, fmt in [("triad", "%.1f"), ("adam_triad", "%.2f"),
                                 ("fused_triad", "%.2f"), ("vs_loop", "%.1f"),
                                 ("vs_foreach", "%.1f")])))


if __name__ == "__main__":
    main()
