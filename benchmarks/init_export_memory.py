#!/usr/bin/python3
"""Peak resident memory per rank of zero-run --init-from and --export.

For each --layers L, `zero-model gpt` writes a GPT-2 of hidden 1280, 20
heads, vocabulary 50257, sequence 64, micro-batch 1 (GPT-2 large's sizes at
36 layers), compiled at stage 3 for 2 ranks with reduce_bucket_size 5e7 (so
that both ranks fit a 24 GiB machine). Then, each as

  mpirun -np 2 /usr/bin/time -f %M zero-run SCHEDULE --steps 0 ...

it runs: no flag (the plan's own peak), --export FILE (the weights file for
the next run), --init-from FILE, and --init-from FILE --steps 1. With
--before DIR (the bin/ of another build's zero-run) the same runs are
repeated with that runtime, and the two exports are compared byte for byte.
Prints one line per run with each rank's peak in MiB, and the plan's arena
(--zero-report). docs/PERFORMANCE.md, "GPTs of 2 and 3 GB", holds a
measurement.

Usage: benchmarks/init_export_memory.py --work DIR [--bin DIR]
                                        [--layers 24 36] [--before DIR]
"""

import argparse
import filecmp
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), ".."))


def peaks(zero_run, schedule, flags, work):
    """Each rank's peak resident set in MiB, in rank order (each rank's
    /usr/bin/time writes its own file: their lines on one stream may
    interleave)."""
    prefix = os.path.join(work, "peak")
    command = ["mpirun", "--oversubscribe", "-np", "2", "sh", "-c",
               'exec /usr/bin/time -f %M -o "$0.$OMPI_COMM_WORLD_RANK" "$@"',
               prefix, zero_run, schedule] + flags
    if os.geteuid() == 0:
        command.insert(1, "--allow-run-as-root")
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{run.stdout}\n{run.stderr}")
    mib = []
    for rank in range(2):
        with open(f"{prefix}.{rank}") as f:
            mib.append(round(int(f.read().split()[-1]) / 1024))
    return mib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--layers", type=int, nargs="+", default=[24, 36])
    parser.add_argument("--before", help="bin/ of the runtime to compare")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    runtimes = [("", tool("zero-run"))]
    if args.before:
        runtimes.append((" (before)", os.path.join(args.before, "zero-run")))
    for layers in args.layers:
        step = os.path.join(args.work, f"g{layers}.mlir")
        schedule = os.path.join(args.work, f"s{layers}.json")
        report = os.path.join(args.work, f"r{layers}.json")
        subprocess.run([tool("zero-model"), "gpt", "--num-layers",
                        str(layers), "--hidden-size", "1280",
                        "--num-attention-heads", "20", "--seq-length", "64",
                        "--batch-size", "1", "--vocab-size", "50257",
                        "-o", step], check=True)
        subprocess.run([tool("zero-opt"), step, "--zero-stage=3",
                        "--zero-world-size=2", "--zero-set",
                        "zero_optimization.reduce_bucket_size=5e7",
                        f"--zero-report={report}",
                        f"--zero-emit-schedule={schedule}", "-o", os.devnull],
                       check=True)
        with open(report) as f:
            r = json.load(f)
        print(f"{layers} layers: {r['num_parameters']:,} parameters, arena "
              f"{r['per_rank_bytes']['peak'] / 2**20:,.0f} MiB per rank")
        weights = os.path.join(args.work, f"e{layers}.safetensors")
        for suffix, zero_run in runtimes:
            export = weights if not suffix else weights + ".before"
            runs = [("--steps 0", []), ("--export", ["--export", export]),
                    ("--init-from", ["--init-from", weights]),
                    ("--init-from, --steps 1", ["--init-from", weights])]
            for label, flags in runs:
                steps = "1" if label.endswith("--steps 1") else "0"
                mib = peaks(zero_run, schedule, ["--steps", steps] + flags,
                            args.work)
                print(f"  {label}{suffix}: " +
                      " / ".join(f"{m:,}" for m in mib) + " MiB")
            if suffix:
                same = filecmp.cmp(weights, export, shallow=False)
                print(f"  exports {'identical' if same else 'DIFFER'}")
                os.remove(export)
    return 0


if __name__ == "__main__":
    sys.exit(main())
