#!/usr/bin/python3
"""How far 16-bit training lands from fp32 training, per DeepSpeed config.

One model (zero-model mlp|gpt, f32) is compiled from DeepSpeed JSON configs
that differ only in the keys given per config (the rest: --stage,
--accumulation micro-steps, --optimizer at --lr), trained --steps steps on
--ranks ranks under `mpirun --oversubscribe zero-run` from the same
initialization and data, and compared with the run of the plain fp32 config:
  - weight distance: ||w - w_fp32|| / ||w_fp32|| over all exported weights
    (the fp32 master weights under mixed precision);
  - loss distance: |loss - loss_fp32| at the last step (the global loss, the
    mean of the ranks').
Every rank must send, per step, the bytes the compiler's report predicts
(communication_bytes_per_step.sent). Prints one line per config. Each --closer A=B checks that A's weight
distance is at least --min-ratio times smaller than B's; the script exits 1
if one is not.

Usage:
  precision_distance.py --bin DIR --work DIR --model gpt --ranks 2 \\
      --config 'bf16={"bf16": {"enabled": true}}' \\
      --config 'wide={"bf16": {"enabled": true},
                      "communication_data_type": "fp32"}' --closer wide=bf16
"""

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch  # noqa: E402
import safetensors_io  # noqa: E402

import numpy as np  # noqa: E402

MODELS = {
    # Every tensor a multiple of 32 elements (see precision-distance.test).
    "mlp": ["mlp", "--layers", "3", "--hidden", "32", "--batch-size", "4"],
    "gpt": ["gpt", "--num-layers", "2", "--hidden-size", "32",
            "--num-attention-heads", "4", "--seq-length", "16",
            "--vocab-size", "64", "--batch-size", "2"],
}


def train(args, ir, name, keys):
    """Compiles and runs one config; returns (losses, flat weights, bytes
    sent per step and rank, as the report says and every rank measured)."""
    config = {"zero_optimization": {"stage": args.stage},
              "gradient_accumulation_steps": args.accumulation,
              "optimizer": {"type": args.optimizer,
                            "params": {"lr": args.lr}}}
    config.update(keys)
    path = os.path.join(args.work, name + ".ds.json")
    with open(path, "w") as f:
        json.dump(config, f)
    schedule = os.path.join(args.work, name + ".json")
    report = os.path.join(args.work, name + ".report.json")
    launch.run([os.path.join(args.bin, "zero-opt"), ir,
                "--zero-config=" + path, "--zero-world-size=%d" % args.ranks,
                "--zero-emit-schedule=" + schedule, "--zero-report=" + report,
                "-o", os.devnull] + args.zero_opt_flag)
    with open(report) as f:
        sent = json.load(f)["communication_bytes_per_step"]["sent"]
    weights = os.path.join(args.work, name + ".safetensors")
    metrics = os.path.join(args.work, name + ".metrics.jsonl")
    launch.run(launch.mpirun(args.ranks) +
               [os.path.join(args.bin, "zero-run"), schedule,
                "--steps", str(args.steps), "--seed", str(args.seed),
                "--export", weights, "--metrics", metrics])
    records = [json.loads(line) for line in open(metrics) if line.strip()]
    for r in records:
        if r["bytes_sent"] != sent:
            sys.exit("precision_distance.py: %s: rank %d sent %d bytes in "
                     "step %d, the report says %d" % (name, r["rank"],
                                                      r["bytes_sent"],
                                                      r["step"], sent))
    losses = []
    for step in range(1, args.steps + 1):
        per_rank = [r["loss"] for r in records if r["step"] == step]
        if len(per_rank) != args.ranks:
            sys.exit("precision_distance.py: %s: step %d has metrics of %d "
                     "ranks, expected %d" % (name, step, len(per_rank),
                                             args.ranks))
        losses.append(sum(per_rank) / args.ranks)
    tensors, _ = safetensors_io.read(weights)
    flat = np.concatenate([tensors[k].astype(np.float64).ravel()
                           for k in sorted(tensors)])
    return losses, flat, sent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--stage", type=int, default=2)
    parser.add_argument("--accumulation", type=int, default=1)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--optimizer", default="AdamW")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--config", action="append", default=[],
                        help="NAME=JSON: the keys of one config")
    parser.add_argument("--zero-opt-flag", action="append", default=[],
                        help="one more flag for every zero-opt run")
    parser.add_argument("--closer", action="append", default=[],
                        help="A=B: A's weights must be closer to fp32's")
    parser.add_argument("--min-ratio", type=float, default=1.0,
                        help="how many times closer --closer asks for")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    ir = os.path.join(args.work, "step.mlir")
    launch.run([os.path.join(args.bin, "zero-model")] + MODELS[args.model] +
               ["-o", ir])
    ref_losses, ref_weights, sent = train(args, ir, "fp32", {})
    print("fp32: sent %d, losses %s" %
          (sent, " ".join("%.6f" % l for l in ref_losses)))
    distances = {}
    for spec in args.config:
        name, _, keys = spec.partition("=")
        losses, weights, sent = train(args, ir, name, json.loads(keys))
        weight_distance = float(np.linalg.norm(weights - ref_weights) /
                                np.linalg.norm(ref_weights))
        loss_distance = abs(losses[-1] - ref_losses[-1])
        distances[name] = weight_distance
        print("%s: sent %d, weight distance %.3e, final loss distance %.3e" %
              (name, sent, weight_distance, loss_distance))

    failed = False
    for pair in args.closer:
        a, _, b = pair.partition("=")
        ratio = distances[b] / distances[a] if distances[a] > 0 else np.inf
        ok = ratio >= args.min_ratio
        print("%s: %s weights %.2fx closer to fp32 than %s's (at least %gx "
              "asked)" % ("OK" if ok else "FAIL", a, ratio, b,
                          args.min_ratio))
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
