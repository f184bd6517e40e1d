#!/usr/bin/python3
"""Trains a compiled ZeRO step with zero-run and the same model in PyTorch.

Both start from the same weights (zero-run's built-in initialization,
exported with --steps 0) and read the same data (a token file for GPT, the
synthetic rows for the MLP), then take --steps AdamW steps (AMSGrad with --amsgrad: the config's
optimizer.params.amsgrad, torch.optim.AdamW(amsgrad=True)): zero-run on
--ranks MPI ranks with the rank step compiled at --stage, PyTorch
(torch_reference.py) in one process with the whole batch. Prints both loss
curves and the largest differences, and exits 1 if a loss or a final weight
differs by more than the tolerance (|a - b| <= atol + rtol |a|).
"""

import argparse
import json
import os
import re
import sys

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import safetensors_io  # noqa: E402
import launch  # noqa: E402
from launch import mpirun  # noqa: E402

GPT = {"--num-layers": 2, "--hidden-size": 32, "--num-attention-heads": 4,
       "--seq-length": 16, "--vocab-size": 64}
MLP = {"--layers": 3, "--hidden": 16}
BATCH = {"gpt": 2, "mlp": 4}






def warmup_keys(spec):
    """--zero-set flags for WarmupLR from "MIN,MAX,STEPS,TYPE"."""
    if not spec:
        return []
    low, high, steps, kind = spec.split(",")
    return ["--zero-set=scheduler.type=WarmupLR",
            "--zero-set=scheduler.params.warmup_min_lr=" + low,
            "--zero-set=scheduler.params.warmup_max_lr=" + high,
            "--zero-set=scheduler.params.warmup_num_steps=" + steps,
            "--zero-set=scheduler.params.warmup_type=" + kind]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", choices=["gpt", "mlp"], required=True)
    parser.add_argument("--dtype", choices=["f32", "f64", "bf16"],
                        default="f64",
                        help="bf16: DeepSpeed's bf16.enabled (a model of f32 "
                        "IR compiled with bf16 storage and compute)")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--stage", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--warmup", metavar="MIN,MAX,STEPS,TYPE",
                        help="train with DeepSpeed's WarmupLR (scheduler "
                        "keys for zero-opt, LambdaLR in PyTorch)")
    parser.add_argument("--amsgrad", action="store_true",
                        help="AdamW with AMSGrad on both sides")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, required=True)
    parser.add_argument("--weight-rtol", type=float,
                        help="rtol of the final weights (default --rtol): "
                        "both sides export fp32, so f64 runs compare at fp32 "
                        "resolution")
    parser.add_argument("--weight-atol", type=float,
                        help="absolute tolerance of the final weights "
                             "(default: --atol)")
    parser.add_argument("--update-rtol", type=float,
                        help="check the final weights as one update (final "
                        "minus initial, all weights): |zero - torch| / "
                        "|torch| at most this, instead of weight by weight")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    work = lambda name: os.path.join(args.work, name)

    shape = GPT if args.model == "gpt" else MLP
    flags = [str(x) for kv in shape.items() for x in kv]
    batch = BATCH[args.model]
    launch.run([os.path.join(args.bin, "zero-model"), args.model] + flags +
        ["--batch-size", str(batch),
         "--dtype", "f32" if args.dtype == "bf16" else args.dtype,
         "-o", work("step.mlir")])
    launch.run([os.path.join(args.bin, "zero-opt"), work("step.mlir"),
         "--zero-stage=%d" % args.stage, "--zero-world-size=%d" % args.ranks,
         "--zero-set=optimizer.type=AdamW",
         "--zero-set=optimizer.params.lr=%r" % args.lr,
         "--zero-set=optimizer.params.weight_decay=%r" % args.weight_decay,
         "--zero-set=optimizer.params.amsgrad=%s" % str(args.amsgrad).lower(),
         "--zero-emit-schedule=" + work("step.json"), "-o", os.devnull] +
        (["--zero-set=bf16.enabled=true"] if args.dtype == "bf16" else []) +
        warmup_keys(args.warmup))

    data = []
    if args.model == "gpt":
        tokens = np.random.default_rng(3).integers(
            0, shape["--vocab-size"], 4096).astype("<u2")
        tokens.tofile(work("tokens.bin"))
        data = ["--data", work("tokens.bin")]

    zero_run = mpirun(args.ranks) + [os.path.join(args.bin, "zero-run"),
                                       work("step.json"), "--seed", "11"]
    launch.run(zero_run + ["--steps", "0", "--export", work("init.safetensors")])
    launch.run(zero_run + data + ["--steps", str(args.steps),
                           "--init-from", work("init.safetensors"),
                           "--metrics", work("metrics.jsonl"),
                           "--export", work("zero.safetensors")])
    records = [json.loads(l) for l in open(work("metrics.jsonl"))]
    zero_losses = [
        np.mean([r["loss"] for r in records if r["step"] == t])
        for t in range(1, args.steps + 1)]

    reference = [sys.executable, os.path.join(HERE, "torch_reference.py"),
                 "--model", args.model] + flags + [
        "--batch-size", str(batch * args.ranks), "--dtype", args.dtype,
        "--init", work("init.safetensors"), "--steps", str(args.steps),
        # zero.adam takes the learning rate as an f32 scalar.
        "--lr", repr(float(np.float32(args.lr))), "--weight-decay", repr(args.weight_decay),
        "--export", work("torch.safetensors")] + data + (
            ["--amsgrad"] if args.amsgrad else [])
    if args.warmup:
        reference += ["--warmup", args.warmup]
    if args.model == "mlp":
        reference += ["--seed", "11"]
    out = launch.run(reference)
    torch_losses = [float(v) for v in re.findall(r"^step=\d+ loss=(\S+)",
                                                 out, re.M)]
    if len(torch_losses) != args.steps:
        sys.exit("torch_compare.py: the reference printed %d losses:\n%s" %
                 (len(torch_losses), out))

    def error(a, b, rtol=args.rtol, atol=args.atol):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        return float(np.max(np.abs(a - b) / (atol + rtol * np.abs(a)),
                            initial=0))

    failed = False
    for t, (z, r) in enumerate(zip(zero_losses, torch_losses), 1):
        print("step=%d zero-run=%.12g torch=%.12g" % (t, z, r))
    loss_err = error(torch_losses, zero_losses)
    print("%s: losses, largest error %.3g of the tolerance" %
          ("OK" if loss_err <= 1 else "FAIL", loss_err))
    failed |= loss_err > 1
    mine, _ = safetensors_io.read(work("zero.safetensors"))
    theirs, _ = safetensors_io.read(work("torch.safetensors"))
    if sorted(mine) != sorted(theirs):
        sys.exit("torch_compare.py: the exported tensors differ: %s vs %s" %
                 (sorted(mine), sorted(theirs)))
    if args.update_rtol is not None:
        # Each weight's own rounding noise dominates where its gradient is
        # nearly zero, so the check is on the whole update: the difference
        # of the two runs' moves against the size of PyTorch's.
        init, _ = safetensors_io.read(work("init.safetensors"))
        move = lambda w: np.concatenate(
            [(w[k].astype(np.float64) - init[k]).ravel() for k in sorted(init)])
        ratio = float(np.linalg.norm(move(mine) - move(theirs)) /
                      np.linalg.norm(move(theirs)))
        ok = ratio <= args.update_rtol
        print("%s: the update of %d weights differs by %.3g of its size "
              "(tolerance %g)" % ("OK" if ok else "FAIL", len(mine), ratio,
                                  args.update_rtol))
        sys.exit(0 if ok and not failed else 1)
    rtol = args.weight_rtol or args.rtol
    atol = args.atol if args.weight_atol is None else args.weight_atol
    worst = max(theirs, key=lambda k: error(theirs[k], mine[k], rtol, atol))
    weight_err = error(theirs[worst], mine[worst], rtol, atol)
    print("%s: %d final weights, largest error %.3g of the tolerance (%s)" %
          ("OK" if weight_err <= 1 else "FAIL", len(mine), weight_err, worst))
    failed |= weight_err > 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
