#!/usr/bin/python3
"""Imports a model with zero-import-torch, trains it with zero-run, and
trains the same module in PyTorch.

The model is a factory of models.py. The dataset is --samples samples drawn
by torch from a fixed seed, written as one .npy array per batch key and fed
with zero-run --data KEY=FILE; PyTorch reads the same samples in the
runtime's order (a seeded shuffle per epoch, DataSource.h getArrayRow, here
through zero_random.py), --ranks micro-batches per step. Both start from the
module's own initial weights (zero-import-torch --weights) and take --steps
AdamW steps with lr 1e-3 rounded to f32, as zero.adam (and DeepSpeed's
fused Adam kernel) takes it. Prints both loss curves; exits 1 if a loss
differs by more than the tolerance (|a - b| <= atol + rtol |b|), or if the
weights zero-run exports, loaded back into the module by
zero_opt.torch.load_weights, give a loss other than PyTorch's final
weights give.
"""

import argparse
import os
import json
import re
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Runtime", "Inputs"))
import models  # noqa: E402
import zero_random  # noqa: E402
from launch import mpirun, run  # noqa: E402

LR = float(np.float32(1e-3))
WEIGHT_DECAY = 0.01


def array_row(seed, samples, sample):
    """getArrayRow(seed, shuffle=true, samples, sample) of DataSource.h."""
    epoch, position = divmod(sample, samples)
    rows = list(range(samples))
    key = zero_random.row_key(seed, "shuffle", epoch)
    draws = zero_random.bits(key, np.arange(samples, dtype=np.uint64))
    for i in range(samples - 1, 0, -1):
        j = int(draws[i] % np.uint64(i + 1))
        rows[i], rows[j] = rows[j], rows[i]
    return rows[position]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--python-dir", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--stage", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, required=True)
    parser.add_argument("--ir", help="train this step IR (the same model "
                        "captured elsewhere: another PyTorch version) "
                        "instead of the one imported here")
    args = parser.parse_args()
    sys.path.insert(0, args.python_dir)
    from zero_opt.torch import load_weights

    os.makedirs(args.work, exist_ok=True)
    tool = lambda name: os.path.join(args.bin, name)  # noqa: E731
    step_ir = os.path.join(args.work, "model.mlir")
    init = os.path.join(args.work, "init.safetensors")
    run([tool("zero-import-torch"), f"{HERE}/models.py:{args.model}",
         "-o", step_ir, "--weights", init, "--dtype", args.dtype])
    if args.ir:
        step_ir = args.ir

    # The dataset: `samples` samples like the example batch's, integer data
    # below the bound the importer wrote.
    with open(step_ir) as f:
        bounds = {m.group(1): int(m.group(2)) for m in re.finditer(
            r'zero.data = "([^"]+)", zero.data_bound = (\d+)', f.read())}
    model, loss_fn, example = getattr(models, args.model)()
    generator = torch.Generator().manual_seed(args.seed)
    dataset = {}
    for key, value in example.items():
        shape = (args.samples,) + tuple(value.shape[1:])
        if value.is_floating_point():
            dataset[key] = torch.randn(shape, generator=generator)
        else:
            dataset[key] = torch.randint(0, bounds[key], shape,
                                         generator=generator)
    data_flags = []
    for key, value in dataset.items():
        path = os.path.join(args.work, key + ".npy")
        np.save(path, value.numpy())
        data_flags.append(f"--data={key}={path}")

    schedule = os.path.join(args.work, "step.json")
    run([tool("zero-opt"), step_ir, f"--zero-stage={args.stage}",
         f"--zero-world-size={args.ranks}",
         "--zero-set=optimizer.type=AdamW",
         f"--zero-set=optimizer.params.weight_decay={WEIGHT_DECAY}",
         f"--zero-emit-schedule={schedule}", "-o", os.devnull])
    exported = os.path.join(args.work, "final.safetensors")
    metrics = os.path.join(args.work, "metrics.jsonl")
    run(mpirun(args.ranks) + [
        tool("zero-run"), schedule, "--steps", str(args.steps),
        "--seed", str(args.seed), "--init-from", init, "--export", exported,
        "--metrics", metrics, *data_flags])
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    # mean_loss: the job's loss, the mean of the ranks' micro-batch losses.
    zero_losses = [r["mean_loss"] for r in records if r["rank"] == 0]

    # PyTorch: the same module and samples, the whole job's batch per step.
    float_dtype = torch.float64 if args.dtype == "f64" else torch.float32
    model = model.to(float_dtype)
    batch_rows = next(iter(example.values())).shape[0] * args.ranks
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR,
                                  weight_decay=WEIGHT_DECAY, eps=1e-8)
    def batch_at(step):
        rows = [array_row(args.seed, args.samples, step * batch_rows + i)
                for i in range(batch_rows)]
        return {k: (v[rows].to(float_dtype) if v.is_floating_point()
                    else v[rows]) for k, v in dataset.items()}
    torch_losses = []
    for step in range(args.steps):
        loss = loss_fn(model, batch_at(step))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_losses.append(loss.item())

    ok = len(zero_losses) == len(torch_losses)
    for t, (a, b) in enumerate(zip(zero_losses, torch_losses), 1):
        good = abs(a - b) <= args.atol + args.rtol * abs(b)
        ok &= good
        print(f"step={t} zero-run={a!r} torch={b!r}"
              f"{'' if good else '  MISMATCH'}")
    print(("OK" if ok else "FAIL") + ": losses")

    # The exported weights, loaded into a fresh module, give the loss of
    # PyTorch's final weights (on the batch after the last step; zero-run
    # exports fp32).
    check = batch_at(args.steps)
    with torch.no_grad():
        expected = loss_fn(model.to(torch.float32),
                           {k: v.float() if v.is_floating_point() else v
                            for k, v in check.items()}).item()
        fresh, _, _ = getattr(models, args.model)()
        load_weights(fresh, exported)
        actual = loss_fn(fresh, {k: v.float() if v.is_floating_point() else v
                                 for k, v in check.items()}).item()
    good = abs(actual - expected) <= args.atol + args.rtol * abs(expected)
    ok &= good
    print(f"{'OK' if good else 'FAIL'}: exported weights: loss {actual!r}, "
          f"torch {expected!r}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
