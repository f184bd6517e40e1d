#!/usr/bin/python3
"""Host step time and planned peak of an imported GPT-2 against zero-model's.

nanoGPT's GPT-2 of test/Import/Inputs/models.py is imported with
zero-import-torch (test/Import/Inputs/gpt_sizes.py) and `zero-model gpt`
writes the same sizes; both are compiled for one rank at --stage (AdamW)
and run with

  taskset -c 0 zero-run SCHEDULE --steps N --metrics M

--repeat times each, alternating, on one core (the machine's second core is
left to the rest, so that the two do not trade noise). Per model it reports
the median step_time_s over the steps after the --warmup first of each run,
and the plan's peak (--zero-report); then the ratios imported / zero-model.

Usage: benchmarks/import_gpt.py [--bin DIR] [--sizes "L H A S B V" ...]
                                [--steps 40] [--warmup 5] [--repeat 3]
DIR defaults to build/bin of the repository.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = ["2 128 4 64 4 256", "2 256 4 128 4 512"]


def run(cmd, env=None):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    parser.add_argument("--sizes", nargs="+", default=SIZES)
    parser.add_argument("--stage", type=int, default=0)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    factory = os.path.join(REPO, "test", "Import", "Inputs",
                           "gpt_sizes.py") + ":gpt"
    print("| L H A S B V | parameters | step ms zero-model | step ms imported "
          "| ratio | peak zero-model | peak imported | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for sizes in args.sizes:
        layers, hidden, heads, seq, batch, vocab = sizes.split()
        with tempfile.TemporaryDirectory() as work:
            steps = {}
            env = dict(os.environ, ZERO_GPT_SIZES=sizes)
            run([tool("zero-import-torch"), factory, "-o",
                 f"{work}/imported.mlir"], env)
            run([tool("zero-model"), "gpt", "--num-layers", layers,
                 "--hidden-size", hidden, "--num-attention-heads", heads,
                 "--seq-length", seq, "--batch-size", batch, "--vocab-size",
                 vocab, "-o", f"{work}/native.mlir"])
            reports = {}
            for m in ("native", "imported"):
                run([tool("zero-opt"), f"{work}/{m}.mlir",
                     f"--zero-stage={args.stage}", "--zero-world-size=1",
                     "--zero-set=optimizer.type=AdamW",
                     f"--zero-report={work}/{m}.json",
                     f"--zero-emit-schedule={work}/{m}.sched.json", "-o",
                     os.devnull])
                with open(f"{work}/{m}.json") as f:
                    reports[m] = json.load(f)
                steps[m] = []
            for r in range(args.repeat):
                for m in ("native", "imported"):
                    metrics = f"{work}/{m}.{r}.jsonl"
                    run(["taskset", "-c", "0", tool("zero-run"),
                         f"{work}/{m}.sched.json", "--steps",
                         str(args.steps), "--metrics", metrics])
                    with open(metrics) as f:
                        times = [json.loads(line)["step_time_s"] for line in f]
                    steps[m] += times[args.warmup:]
            ms = {m: 1e3 * statistics.median(t) for m, t in steps.items()}
            peak = {m: r["per_rank_bytes"]["peak"] for m, r in reports.items()}
            print(f"| {sizes} | {reports['native']['num_parameters']:,} "
                  f"| {ms['native']:.1f} | {ms['imported']:.1f} "
                  f"| {ms['imported'] / ms['native']:.3f} "
                  f"| {peak['native']:,} | {peak['imported']:,} "
                  f"| {peak['imported'] / peak['native']:.3f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
