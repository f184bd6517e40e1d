#!/usr/bin/python3
"""Compile-time benchmark of zero-opt on GPT-2 training steps.

For GPT-2 with 12, 48 and 192 layers (hidden 1600, 16 heads, seq 1024,
batch 1, vocab 50257: GPT-2 XL's width), generates the value-and-grad step
once with zero-model, then times, best of --repeat runs (default 5):

  (a) parse + print:   zero-opt model.mlir -o /dev/null
  (b) stage-3 pipeline: zero-opt --zero-stage=3 --zero-world-size=8 model.mlir -o /dev/null

and prints a table with both times, the ratio (b)/(a) and the time per layer,
for wall-clock time and for CPU time (user + sys of the child, from wait4:
steadier than wall time on a shared machine). Then checks linear growth: the
marginal cost per layer between consecutive sizes, (t(L2) - t(L1)) / (L2 - L1),
should stay roughly constant; a quadratic pass makes it grow with L. With
--pass-timing (the default) it also runs (b) once more with --mlir-timing per
size and prints each pass's wall time per layer, to point at the pass that
does not scale.

Usage: benchmarks/compile_time.py [--bin DIR] [--layers 12,48,192]
                                  [--repeat 5] [--no-pass-timing] [--keep DIR]
DIR defaults to the directory of zero-opt on PATH, else $ZERO_BUILD_DIR/bin,
else build/bin of the repository.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = ["--hidden-size", "1600", "--num-attention-heads", "16",
         "--seq-length", "1024", "--batch-size", "1", "--vocab-size", "50257"]
PIPELINE = ["--zero-stage=3", "--zero-world-size=8"]


def find_bin(explicit):
    candidates = []
    if explicit:
        candidates.append(explicit)
    on_path = shutil.which("zero-opt")
    if on_path:
        candidates.append(os.path.dirname(on_path))
    if os.environ.get("ZERO_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["ZERO_BUILD_DIR"], "bin"))
    candidates.append(os.path.join(REPO, "build", "bin"))
    for c in candidates:
        if os.access(os.path.join(c, "zero-opt"), os.X_OK) and \
           os.access(os.path.join(c, "zero-model"), os.X_OK):
            return c
    sys.exit("compile_time.py: no zero-opt/zero-model found (tried %s); "
             "build them or pass --bin" % ", ".join(candidates))


def run_once(cmd):
    """Runs cmd; returns (wall s, cpu s, max RSS MiB). Fails loudly."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    # wait4 gives this child's own resource usage.
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("compile_time.py: %s failed (%d):\n%s"
                 % (" ".join(cmd), proc.returncode, err))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def measure(cmd, repeat):
    runs = [run_once(cmd) for _ in range(repeat)]
    return {
        "wall": min(r[0] for r in runs),
        "wall_median": statistics.median(r[0] for r in runs),
        "cpu": min(r[1] for r in runs),
        "rss": max(r[2] for r in runs),
    }


TIMING_LINE = re.compile(r"^\s*([0-9.]+)\s+\(\s*[0-9.]+%\)\s+(.+?)\s*$")


def pass_timing(cmd):
    """Runs cmd with --mlir-timing; returns [(name, wall s)] in report order."""
    out = subprocess.run(cmd + ["--mlir-timing"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, check=True).stderr.decode()
    rows = []
    for line in out.splitlines():
        m = TIMING_LINE.match(line)
        if m:
            rows.append((m.group(2), float(m.group(1))))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="directory holding zero-opt and zero-model")
    ap.add_argument("--layers", default="12,48,192")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-pass-timing", dest="pass_timing",
                    action="store_false")
    ap.add_argument("--keep", help="write the generated IR here (kept)")
    args = ap.parse_args()

    bindir = find_bin(args.bin)
    zopt = os.path.join(bindir, "zero-opt")
    zmodel = os.path.join(bindir, "zero-model")
    layers = [int(x) for x in args.layers.split(",")]
    workdir = args.keep or tempfile.mkdtemp(prefix="zero-compile-time-")
    os.makedirs(workdir, exist_ok=True)

    print("zero-opt: %s" % zopt)
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    print("model: GPT-2, %s; pipeline: %s; best of %d runs"
          % (" ".join(MODEL), " ".join(PIPELINE), args.repeat))
    results = []
    try:
        for n in layers:
            path = os.path.join(workdir, "gpt2-%d.mlir" % n)
            gen = [zmodel, "gpt", "--num-layers", str(n)] + MODEL
            params = subprocess.run(gen + ["--print-num-params"], check=True,
                                    capture_output=True, text=True).stdout
            params = int(params.split()[-1])
            gen_wall, _, _ = run_once(gen + ["-o", path])
            with open(path) as f:
                lines = sum(1 for _ in f)
            a = measure([zopt, path, "-o", "/dev/null"], args.repeat)
            b = measure([zopt] + PIPELINE + [path, "-o", "/dev/null"],
                        args.repeat)
            passes = (pass_timing([zopt] + PIPELINE + [path, "-o", "/dev/null"])
                      if args.pass_timing else [])
            results.append(dict(layers=n, params=params, lines=lines,
                                gen=gen_wall, a=a, b=b, passes=passes))
            print("  %d layers done" % n, file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    print("| layers | parameters | IR lines | generate (s) | (a) parse+print wall (s) "
          "| (b) stage-3 pipeline wall (s) | (b)/(a) | (b) ms/layer "
          "| (a) CPU (s) | (b) CPU (s) | (b)/(a) CPU | (b) CPU ms/layer "
          "| (b) max RSS (MiB) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        a, b, n = r["a"], r["b"], r["layers"]
        print("| %d | %d | %d | %.2f | %.2f | %.2f | %.1f | %.0f | %.2f | %.2f "
              "| %.1f | %.0f | %.0f |"
              % (n, r["params"], r["lines"], r["gen"], a["wall"], b["wall"],
                 b["wall"] / a["wall"], 1000 * b["wall"] / n, a["cpu"],
                 b["cpu"], b["cpu"] / a["cpu"], 1000 * b["cpu"] / n, b["rss"]))

    print()
    print("Linearity: marginal cost per added layer, (t(L2) - t(L1)) / (L2 - L1)")
    print("| from | to | (a) wall ms/layer | (b) wall ms/layer "
          "| (a) CPU ms/layer | (b) CPU ms/layer |")
    print("|---:|---:|---:|---:|---:|---:|")
    slopes = []
    for r1, r2 in zip(results, results[1:]):
        d = r2["layers"] - r1["layers"]
        s = [1000 * (r2[k][m] - r1[k][m]) / d
             for m in ("wall", "cpu") for k in ("a", "b")]
        slopes.append(s)
        print("| %d | %d | %.0f | %.0f | %.0f | %.0f |"
              % (r1["layers"], r2["layers"], s[0], s[1], s[2], s[3]))
    if len(slopes) >= 2:
        growth = slopes[-1][3] / slopes[0][3] if slopes[0][3] > 0 else float("inf")
        verdict = "linear" if growth < 1.5 else "NOT linear"
        print("\n(b) CPU marginal cost, last interval / first interval: %.2f -> %s"
              % (growth, verdict))
    # Whole-pipeline growth between the two largest sizes, against the
    # growth of the depth (4x from 48 to 192 layers).
    if len(results) >= 2:
        r1, r2 = results[-2], results[-1]
        print("(b) time at %d layers / time at %d layers: wall %.2f, CPU %.2f "
              "(depth ratio %.2f)"
              % (r2["layers"], r1["layers"], r2["b"]["wall"] / r1["b"]["wall"],
                 r2["b"]["cpu"] / r1["b"]["cpu"], r2["layers"] / r1["layers"]))
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())

    if any(r["passes"] for r in results):
        names = []
        for r in results:
            for name, _ in r["passes"]:
                if name not in names:
                    names.append(name)
        print()
        print("Pipeline (b) by pass, --mlir-timing wall time, ms per layer "
              "(constant across columns = linear)")
        print("| pass | " + " | ".join("%d layers" % r["layers"] for r in results)
              + " |")
        print("|---|" + "---:|" * len(results))
        for name in names:
            cells = []
            for r in results:
                t = dict(r["passes"]).get(name)
                cells.append("-" if t is None else "%.1f" % (1000 * t / r["layers"]))
            print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
