#!/usr/bin/python3
"""Throughput of the runtime's host Adam step against memory bandwidth and
torch.optim.AdamW.

For each size (default 2^22 and 2^24 f32 elements) and thread count (default
1 and 2), runs build's zero-bench-optimizer (runtime/bench/OptimizerBench.cpp:
the zero.adam host kernel, AdamW mode, in place, and a STREAM-like copy and
triad on the same arrays and threads), then times torch.optim.AdamW with
foreach=False and foreach=True on tensors of the same size with
torch.set_num_threads(T) and the same hyperparameters (lr 1e-3, betas
(0.9, 0.999), eps 1e-8, weight decay 0.01). Each timing is the median of
--repeat runs after two warm-up runs.

Effective bandwidth counts 28 bytes per element for Adam (reads param, grad,
m, v; writes param, m, v, all f32), 8 for copy and 12 for triad (STREAM's
convention: no write-allocate traffic). Prints a markdown table with the
ratios Adam/triad bandwidth and zero.adam/torch throughput.

Usage: benchmarks/optimizer.py [--bin DIR] [--elements 4194304,16777216]
                               [--threads 1,2] [--repeat 20]
DIR (with zero-bench-optimizer) defaults to $ZERO_BUILD_DIR/bin, else
build/bin of the repository.
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


def run_native(tool, n, threads, repeat):
    """{kernel: measurement} from zero-bench-optimizer."""
    result = subprocess.run(
        [tool, "--elements", str(n), "--threads", str(threads),
         "--repeat", str(repeat)],
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--elements", default="%d,%d" % (1 << 22, 1 << 24))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.elements.split(",")]
        thread_counts = [int(t) for t in args.threads.split(",")]
    except ValueError:
        sys.exit("optimizer.py: --elements and --threads take comma-separated "
                 "integers")
    if args.repeat < 1 or min(sizes + thread_counts) < 1:
        sys.exit("optimizer.py: sizes, thread counts and --repeat must be "
                 "positive")
    tool = find_tool(args.bin)
    import torch
    print("torch %s; %d runs per timing (median)" %
          (torch.__version__, args.repeat))
    print("load before: %s" % subprocess.run(
        ["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip())

    rows = []
    for n in sizes:
        for threads in thread_counts:
            native = run_native(tool, n, threads, args.repeat)
            loop = run_torch(n, threads, args.repeat, foreach=False)
            foreach = run_torch(n, threads, args.repeat, foreach=True)
            rows.append((n, threads, native, loop, foreach))
    print("load after:  %s" % subprocess.run(
        ["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip())

    print()
    print("| elements | threads | copy (GB/s) | triad (GB/s) "
          "| zero.adam (Melem/s) | zero.adam (GB/s) | adam / triad "
          "| AdamW foreach=False (Melem/s) | AdamW foreach=True (Melem/s) "
          "| zero / foreach=False | zero / foreach=True |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, threads, native, loop, foreach in rows:
        adam = native["zero.adam"]
        triad = native["triad"]["gb_per_s"]
        zero_rate = adam["elements_per_s"]
        label = ("2^%d" % (n.bit_length() - 1) if n & (n - 1) == 0
                 else str(n))
        print("| %s | %d | %.1f | %.1f | %.0f | %.2f | %.2f | %.0f | %.0f "
              "| %.2f | %.2f |" % (
                  label, threads, native["copy"]["gb_per_s"], triad,
                  zero_rate / 1e6, adam["gb_per_s"], adam["gb_per_s"] / triad,
                  n / loop / 1e6, n / foreach / 1e6,
                  zero_rate * loop / n, zero_rate * foreach / n))


if __name__ == "__main__":
    main()
