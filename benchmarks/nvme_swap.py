#!/usr/bin/python3
"""Throughput of the runtime's NVMe swap store against plain O_DIRECT I/O.

For each total size and tensor size (default 64 MiB and 256 MiB in 1, 4 and
16 MiB tensors), runs zero-bench-swap (runtime/bench/SwapBench.cpp), which
writes and reads the bytes as tensors through an NvmeSwapSpace (io_uring,
bounce buffers, every tensor submitted then drain()) and through a plain
loop of one pwrite/pread per tensor on an O_DIRECT file of the same
directory, alternating the two --repeat times after a warm-up pass. Prints
the machine's load, `df -T` of the directory, and a markdown table of the
median GB/s of each and the median over rounds of the ratio store / plain
in the same round (target: at least 0.8): the two run back to back, so the
paired ratio is steadier than the ratio of the medians on a shared disk.

Usage: benchmarks/nvme_swap.py [--bin DIR] [--dir SWAPDIR] [--repeat 9]
           [--sizes 64:1,64:4,64:16,256:1,256:16] [-- extra zero-bench-swap
           flags, e.g. --buffer-count 4 --buffer-size 8388608]
DIR (with zero-bench-swap) defaults to $ZERO_BUILD_DIR/bin, else build/bin of
the repository; SWAPDIR to a fresh directory under $TMPDIR (or /tmp),
removed afterwards: the file system measured is that directory's.
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
TOOL = "zero-bench-swap"
MIB = 1 << 20


def find_tool(explicit):
    candidates = [explicit] if explicit else []
    if os.environ.get("ZERO_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["ZERO_BUILD_DIR"], "bin"))
    candidates.append(os.path.join(REPO, "build", "bin"))
    for c in candidates:
        path = os.path.join(c, TOOL)
        if os.access(path, os.X_OK):
            return path
    sys.exit("nvme_swap.py: no %s found (tried %s); build it or pass --bin" %
             (TOOL, ", ".join(candidates)))


def run(tool, directory, total, tensor, repeat, extra):
    result = subprocess.run(
        [tool, "--dir", directory, "--total", str(total), "--tensor",
         str(tensor), "--repeat", str(repeat)] + extra,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit("nvme_swap.py: %s failed (exit %d): %s" %
                 (TOOL, result.returncode, result.stderr.strip()))
    if result.stderr.strip():
        print("note: " + result.stderr.strip())
    return [json.loads(line) for line in result.stdout.splitlines()]


def shell(command):
    return subprocess.run(command, shell=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin")
    parser.add_argument("--dir")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--sizes", default="64:1,64:4,64:16,256:1,256:16",
                        help="TOTAL_MIB:TENSOR_MIB,...")
    parser.add_argument("extra", nargs="*",
                        help="flags passed on to zero-bench-swap")
    args = parser.parse_args()
    tool = find_tool(args.bin)
    directory = args.dir or tempfile.mkdtemp(
        prefix="zero-swap-bench-", dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        print("$ uptime: " + shell("uptime"))
        print("$ df -T %s\n%s" % (directory, shell("df -T " + directory)))
        rows = []
        for size in args.sizes.split(","):
            total, tensor = (int(x) * MIB for x in size.split(":"))
            measurements = run(tool, directory, total, tensor, args.repeat,
                               args.extra)
            row = {"total": total, "tensor": tensor}
            for m in measurements:
                row.setdefault((m["method"], m["op"]), []).append(m["gbps"])
                row.setdefault(("direct", m["method"]), m["direct"])
            rows.append(row)
        print("$ uptime: " + shell("uptime"))
    finally:
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)

    print()
    print("| total | tensor | plain write (GB/s) | store write (GB/s) | "
          "write ratio | plain read (GB/s) | store read (GB/s) | read ratio "
          "| min-max store write / read | O_DIRECT (plain, store) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for row in rows:
        med = {k: statistics.median(v) for k, v in row.items()
               if isinstance(v, list)}
        paired = {op: statistics.median(
            s / p for s, p in zip(row[("store", op)], row[("plain", op)]))
            for op in ("write", "read")}
        print("| %d MiB | %d MiB | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | "
              "%.2f-%.2f / %.2f-%.2f | %s, %s |" % (
                  row["total"] // MIB, row["tensor"] // MIB,
                  med[("plain", "write")], med[("store", "write")],
                  paired["write"],
                  med[("plain", "read")], med[("store", "read")],
                  paired["read"],
                  min(row[("store", "write")]), max(row[("store", "write")]),
                  min(row[("store", "read")]), max(row[("store", "read")]),
                  "yes" if row[("direct", "plain")] else "no",
                  "yes" if row[("direct", "store")] else "no"))


if __name__ == "__main__":
    main()
