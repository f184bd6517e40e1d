#!/usr/bin/python3
"""Runs compiled ZeRO steps on N ranks and compares them with one process.

For one model (zero-model mlp|gpt) and one dtype, the reference is the same
model compiled for one rank at stage 0 with the whole batch (N * G * B rows,
G the variants' micro-steps),
trained for --steps steps from the built-in initialization on synthetic data.
Every variant (a stage and --zero-set knobs) is compiled for N ranks with
micro-batch B, run under `mpirun --oversubscribe -np N zero-run`, and must
give:
  - the reference's loss at every step and its final weights (--export),
    within --rtol/--atol, or bit for bit with --bitwise-with VARIANT (two
    variants whose reductions add the same numbers in the same order);
  - per step and rank, exactly the bytes sent and received that the
    compiler's report predicts (communication_bytes_per_step.sent/received);
  - per rank, a peak of allocated memory no larger than the compiler's plan
    (per_rank_bytes.peak).
Prints one line per variant and exits 1 on the first mismatch, naming it.

Usage:
  equivalence.py --bin DIR --work DIR --model gpt --ranks 2 --dtype f64 \
      --variant 'stage0=--zero-stage=0' --variant 'stage3=--zero-stage=3 ...'
"""

import argparse
import json
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402
import launch  # noqa: E402
from launch import mpirun  # noqa: E402

# The swap counters of zero-run's metrics (bytes_<key>) and the report's
# communication_bytes_per_step keys they must equal.
SWAP_KEYS = ("host_to_device", "device_to_host", "nvme_read", "nvme_write")

MODELS = {
    "mlp": (["mlp", "--layers", "3", "--hidden", "16"], "--batch-size", 4),
    "gpt": (["gpt", "--num-layers", "2", "--hidden-size", "32",
             "--num-attention-heads", "4", "--seq-length", "16",
             "--vocab-size", "64"], "--batch-size", 2),
}






def compile_step(args, name, batch, ranks, flags):
    model, batch_flag, _ = MODELS[args.model]
    ir = os.path.join(args.work, "%s.mlir" % name)
    launch.run([os.path.join(args.bin, "zero-model")] + model +
        shlex.split(args.model_flags) +
        [batch_flag, str(batch), "--dtype", args.dtype, "-o", ir])
    if args.strip_segments:
        with open(ir) as f:
            text = re.sub(r" *\{zero\.segment = [0-9]+ : i64\}", "", f.read())
        with open(ir, "w") as f:
            f.write(text)
    schedule = os.path.join(args.work, "%s.json" % name)
    report = os.path.join(args.work, "%s.report.json" % name)
    launch.run([os.path.join(args.bin, "zero-opt"), ir,
         "--zero-world-size=%d" % ranks] + flags +
        ["--zero-report=" + report, "--zero-emit-schedule=" + schedule,
         "-o", os.devnull])
    with open(report) as f:
        return schedule, json.load(f)


def train(args, name, schedule, ranks):
    weights = os.path.join(args.work, "%s.safetensors" % name)
    metrics = os.path.join(args.work, "%s.metrics.jsonl" % name)
    # The reference runs alone; every variant under mpirun, even on 1 rank.
    launcher = [] if name == "reference" else mpirun(ranks)
    for env in args.env:
        launcher += ["-x", env.partition("=")[0]] if launcher else []
    launch.run(launcher + [os.path.join(args.bin, "zero-run"), schedule,
                    "--steps", str(args.steps), "--seed", "7",
                    "--export", weights, "--metrics", metrics])
    records = [json.loads(line) for line in open(metrics) if line.strip()]
    losses = []
    for step in range(1, args.steps + 1):
        per_rank = [r for r in records if r["step"] == step]
        if len(per_rank) != ranks:
            sys.exit("equivalence.py: %s: step %d has metrics of %d ranks, "
                     "expected %d" % (name, step, len(per_rank), ranks))
        # Every rank sees as many rows: the global loss is their mean.
        losses.append(sum(r["loss"] for r in per_rank) / ranks)
    tensors, _ = safetensors_io.read(weights)
    return losses, tensors, records


def compare(a, b, rtol, atol):
    """The largest error of b against a, scaled: <= 1 passes."""
    import numpy as np
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    diff, bound = np.abs(a - b), atol + rtol * np.abs(a)
    # With no tolerance only equal values pass.
    scaled = np.where(diff == 0, 0.0,
                      np.divide(diff, bound, out=np.full_like(diff, np.inf),
                                where=bound > 0))
    return float(np.max(scaled, initial=0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--model-flags", default="",
                        help="more zero-model flags, for the reference and "
                             "every variant (--freeze=...)")
    parser.add_argument("--dtype", choices=["f32", "f64"], default="f64")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--accumulation", type=int, default=1,
                        help="micro-steps per step of the variants (their "
                        "flags set gradient_accumulation_steps): the "
                        "reference takes all their rows at once")
    parser.add_argument("--rtol", type=float, default=1e-9)
    parser.add_argument("--atol", type=float, default=1e-12)
    parser.add_argument("--weight-rtol", type=float,
                        help="rtol of the final weights (default --rtol); "
                        "zero-run exports fp32, so f64 runs compare there")
    parser.add_argument("--weight-atol", type=float,
                        help="absolute tolerance of the final weights "
                             "(default: --atol)")
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME=FLAGS: zero-opt flags of one variant")
    parser.add_argument("--common", default="",
                        help="zero-opt flags of the reference and of every "
                        "variant (mixed precision, the optimizer)")
    parser.add_argument("--bitwise-with", action="append", default=[],
                        help="A=B: variants A and B must agree bit for bit")
    parser.add_argument("--strip-segments", action="store_true",
                        help="remove zero-model's zero.segment marks, as "
                        "from a step written elsewhere")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE: an environment variable of every "
                        "zero-run (the reference's too), e.g. "
                        "ZERO_HOST_MATMUL=ordered")
    args = parser.parse_args()
    for env in args.env:
        key, _, value = env.partition("=")
        os.environ[key] = value
    os.makedirs(args.work, exist_ok=True)
    _, _, batch = MODELS[args.model]

    common = shlex.split(args.common)
    ref_batch = batch * args.ranks * args.accumulation
    ref_schedule, _ = compile_step(args, "reference", ref_batch, 1,
                                   ["--zero-stage=0"] + common)
    ref_losses, ref_weights, _ = train(args, "reference", ref_schedule, 1)
    print("reference: 1 rank, batch %d, losses %s" %
          (ref_batch, " ".join("%.10g" % l for l in ref_losses)))

    results = {}
    failed = False
    for spec in args.variant:
        name, _, flags = spec.partition("=")
        schedule, report = compile_step(args, name, batch, args.ranks,
                                        shlex.split(flags) + common)
        losses, weights, records = train(args, name, schedule, args.ranks)
        results[name] = (losses, weights)

        problems = []
        loss_err = compare(ref_losses, losses, args.rtol, args.atol)
        if loss_err > 1:
            problems.append("losses %s differ from the reference" % losses)
        weight_err = 0.0
        for key, ref in ref_weights.items():
            if key not in weights:
                problems.append("exported weights lack %s" % key)
                continue
            weight_err = max(weight_err,
                             compare(ref, weights[key],
                                     args.weight_rtol or args.rtol,
                                     args.atol if args.weight_atol is None
                                     else args.weight_atol))
        if weight_err > 1:
            problems.append("final weights differ from the reference")
        comm = report["communication_bytes_per_step"]
        plan_peak = report["per_rank_bytes"]["peak"]
        for r in records:
            if (r["bytes_sent"], r["bytes_received"]) != (comm["sent"],
                                                          comm["received"]):
                problems.append(
                    "rank %d step %d moved %d/%d bytes (sent/received), the "
                    "report says %d/%d" % (r["rank"], r["step"],
                                          r["bytes_sent"],
                                          r["bytes_received"], comm["sent"],
                                          comm["received"]))
                break
            if r["peak_bytes"] > plan_peak:
                problems.append("rank %d peak %d bytes > plan %d" %
                                (r["rank"], r["peak_bytes"], plan_peak))
                break
            swaps = [k for k in SWAP_KEYS if r["bytes_" + k] != comm[k]]
            if swaps:
                problems.append("rank %d step %d swapped %s, the report "
                                "says %s" % (r["rank"], r["step"],
                                             [r["bytes_" + k] for k in swaps],
                                             [comm[k] for k in swaps]))
                break
            over = [s for s, peak in r["peak_bytes_by_space"].items()
                    if peak > report["per_rank_bytes"][s]]
            if over:
                problems.append("rank %d held more %s memory than the plan" %
                                (r["rank"], "/".join(over)))
                break
        status = "OK" if not problems else "FAIL"
        print("%s: %s ranks=%d loss_err=%.3g weight_err=%.3g sent=%d "
              "received=%d peak<=plan(%d) %s" %
              (status, name, args.ranks, loss_err, weight_err, comm["sent"],
               comm["received"], plan_peak, "; ".join(problems)))
        failed |= bool(problems)

    for pair in args.bitwise_with:
        a, _, b = pair.partition("=")
        la, wa = results[a]
        lb, wb = results[b]
        same = la == lb and all(
            wa[k].tobytes() == wb[k].tobytes() for k in wa)
        print("%s: %s and %s bit for bit" % ("OK" if same else "FAIL", a, b))
        failed |= not same
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
