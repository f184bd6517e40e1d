#!/usr/bin/python3
"""Proves that resuming from a checkpoint is exact.

For each configuration STAGE:RANKS:PRECISION[:OFFLOAD] (precision f32, bf16
or fp16, fp16 with a dynamic loss scale; offload cpu: the optimizer states in
host memory, nvme: the optimizer states and, at stage 3, the parameters in
the nvme arena), the MLP is compiled for RANKS ranks at ZeRO
stage STAGE and trained three times under `mpirun -np RANKS zero-run`:
  - straight: 2N steps, saved at the end with --save-sync (the rank files
    written before the run goes on);
  - first: 2N steps saved every N steps in the background (the default: the
    snapshot of step N is written while step N+1 runs);
  - resumed: N steps from first's checkpoint of step N, saved at the end.
The first and the resumed run must give every step's loss of the straight
run on every rank bit for bit, and their checkpoints of step 2N (every rank's
parameters, master weights, optimizer states, step count and loss scaler)
must be the straight run's byte for byte. With fp16 the loss scale must have
moved before step N and again after it (steps were skipped), so that its
state matters. The metrics must give each save's bytes written (the rank
file's size) and the resumed run's bytes read.

Prints one line per configuration; exits 1 at the first mismatch, naming it.

Usage:
  checkpoint_resume.py --bin DIR --work DIR --steps 3 0:1:f32 2:3:fp16 ...
"""

import argparse
import json
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch  # noqa: E402
from launch import mpirun  # noqa: E402

PRECISION_FLAGS = {
    "f32": [],
    "bf16": ["--zero-set=bf16.enabled=true"],
    # The first steps overflow at 2^24 and are skipped; a window of 2 grows
    # the scale again, so the scaler moves on both sides of the save.
    "fp16": ["--zero-set=fp16.enabled=true",
             "--zero-set=fp16.initial_scale_power=24",
             "--zero-set=fp16.loss_scale_window=2",
             "--zero-set=fp16.hysteresis=1"],
}


def offload_flags(args, offload, stage):
    return launch.offload_flags(args.work, offload, stage)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def compile_step(args, name, stage, ranks, precision, offload):
    ir = os.path.join(args.work, "mlp.mlir")
    if not os.path.exists(ir):
        launch.run([os.path.join(args.bin, "zero-model"), "mlp", "--layers",
                    "2", "--hidden", "8", "--batch-size", "2", "--dtype",
                    "f32", "-o", ir])
    schedule = os.path.join(args.work, name + ".json")
    launch.run([os.path.join(args.bin, "zero-opt"), ir,
                "--zero-stage=%d" % stage, "--zero-world-size=%d" % ranks] +
               PRECISION_FLAGS[precision] +
               offload_flags(args, offload, stage) +
               ["--zero-emit-schedule=" + schedule, "-o", os.devnull])
    return schedule


def train(args, schedule, ranks, steps, metrics, save, flags=()):
    """The losses by (step, rank), and the save and load events."""
    cmd = mpirun(ranks) + [os.path.join(args.bin, "zero-run"), schedule,
                           "--steps", str(steps), "--seed", "7",
                           "--metrics", metrics, "--save", save] + list(flags)
    launch.run(cmd)
    with open(metrics) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    losses = {(r["step"], r["rank"]): (r["loss"], r["mean_loss"])
              for r in lines if "event" not in r}
    return losses, [r for r in lines if "event" in r]


def check_events(name, events, kind, expected):
    """`expected`: (step, rank) -> the bytes each event must give."""
    field = "bytes_written" if kind == "save" else "bytes_read"
    got = {(e["step"], e["rank"]): e[field]
           for e in events if e["event"] == kind}
    if got != expected:
        fail("%s: %s metrics %r, the files give %r" %
             (name, kind, got, expected))


def read_tensor(path, name):
    """The values of an F32 tensor of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    entry = header[name]
    begin, end = entry["data_offsets"]
    raw = data[8 + length + begin:8 + length + end]
    return struct.unpack("<%df" % (len(raw) // 4), raw)


def check(args, config):
    stage, ranks, precision, offload = (config.split(":") + [""])[:4]
    stage, ranks = int(stage), int(ranks)
    name = "s%d-r%d-%s%s" % (stage, ranks, precision,
                             "-" + offload if offload else "")
    schedule = compile_step(args, name, stage, ranks, precision, offload)
    base = os.path.join(args.work, name)
    n = args.steps
    straight, _ = train(args, schedule, ranks, 2 * n,
                        base + ".straight.jsonl", base + ".straight",
                        ["--save-sync"])
    first, saves = train(args, schedule, ranks, 2 * n, base + ".first.jsonl",
                         base + ".ckpt", ["--save-every", str(n)])
    at_save = os.path.join(base + ".ckpt", "step-%d" % n)
    resumed, loads = train(args, schedule, ranks, n,
                           base + ".resumed.jsonl", base + ".resumed",
                           ["--resume", at_save])
    if sorted(first) != sorted(straight):
        fail("%s: the runs' steps differ: %s, straight %s" %
             (name, sorted(first), sorted(straight)))
    for key in sorted(straight):
        for run, losses in (("saving", first), ("resumed", resumed)):
            if key in losses and losses[key] != straight[key]:
                fail("%s: step %d rank %d: loss %r %s, %r straight" %
                     (name, key[0], key[1], losses[key], run, straight[key]))
    if sorted(resumed) != [k for k in sorted(straight) if k[0] > n]:
        fail("%s: the resumed run's steps are %s" % (name, sorted(resumed)))
    last = "step-%d" % (2 * n)
    sizes = {}
    for rank in range(ranks):
        file = "rank-%d.safetensors" % rank
        with open(os.path.join(base + ".straight", last, file), "rb") as f:
            expected = f.read()
        for run in (".ckpt", ".resumed"):
            with open(os.path.join(base + run, last, file), "rb") as f:
                got = f.read()
            if got != expected:
                fail("%s: %s/%s/%s differs from the straight run's" %
                     (name, base + run, last, file))
        sizes[rank] = os.path.getsize(os.path.join(at_save, file))
    check_events(name, saves, "save",
                 {(s, r): b for s in (n, 2 * n) for r, b in sizes.items()})
    check_events(name, loads, "load", {(n, r): b for r, b in sizes.items()})
    if precision == "fp16":
        scale = os.path.join(base + ".ckpt", "step-%d", "rank-0.safetensors")
        at_save = read_tensor(scale % n, "loss_scale")[0]
        at_end = read_tensor(scale % (2 * n), "loss_scale")[0]
        if at_save == 2.0 ** 24 or at_end == at_save:
            fail("%s: the loss scale did not move on both sides of the save "
                 "(2^24, %r, %r)" % (name, at_save, at_end))
    print("OK: stage %d, %d rank%s, %s%s: %d + %d steps resumed bit for bit" %
          (stage, ranks, "" if ranks == 1 else "s", precision,
           ", offload " + offload if offload else "", n, n))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=3,
                        help="N: the steps before and after the save")
    parser.add_argument("configs", nargs="+",
                        help="STAGE:RANKS:PRECISION[:OFFLOAD]")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for config in args.configs:
        check(args, config)


if __name__ == "__main__":
    main()
