#!/usr/bin/python3
"""Checks zero-run --dump-state, which writes every parameter's fp32 value,
gradient and optimizer states through the runtime's full state accessors,
against what else says the same.

For each configuration STAGE:PRECISION[:OFFLOAD] (precision f32, bf16 or
fp16 with its dynamic loss scale;
offload cpu or nvme: the optimizer states in host memory or the nvme arena
(at stage 3 the parameters too), updated in sub-groups of 20 elements, so that the shards of the 7x7 weights
take two optimizer instructions each; tiles: the weights of an 8-wide MLP
cut into 2 x 2 tiles by zero-tile-linear, each a parameter of the schedule,
which the accessors name by the tile's name) the MLP is compiled for 2 ranks
and run N steps with --save and --dump-state, and
  - the dump's fp32 parameters (`<name>`) must be `zero-ckpt consolidate
    --dtype f32` of that checkpoint, bit for bit (tiles put together at the
    places the manifest gives them);
  - its optimizer states (`exp_avg/<name>`, `exp_avg_sq/<name>`) must be the
    checkpoint's rank files' tensors of those names, shards joined in rank
    order and the padding dropped, bit for bit;
  - its gradients (`grad/<name>`) must be those of the same model at stage 0
    on 2 ranks (the all-reduce sums what the reduce-scatter sums, in the
    same order), bit for bit, and those of one process with the whole
    global batch within a tolerance: f32 |a - b| <= 1e-6 + 1e-4 |a| (the
    ranks' partial sums add up in another order), bf16 1e-3 + 2e-2 |a| and
    fp16 1e-4 + 4e-3 |a| (the gradients are rounded to 16 bits before they
    are averaged; fp16's are unscaled after). fp16's must also be the f32
    step's gradients within 1e-3 + 5e-2 |a|: the loss scale is divided out
    of what the optimizer consumes.
Every dump must hold a gradient and both moments for every parameter.

Prints one line per configuration; exits 1 at the first mismatch, naming it.

Usage: state_access.py --bin DIR --work DIR --steps 2 1:f32 3:bf16:nvme
"""

import argparse
import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch  # noqa: E402
import safetensors_io  # noqa: E402
from launch import mpirun  # noqa: E402

RANKS = 2
BATCH = 3
PRECISION_FLAGS = {"f32": [], "bf16": ["--zero-set=bf16.enabled=true"],
                   "fp16": ["--zero-set=fp16.enabled=true"]}
TOLERANCE = {"f32": (1e-6, 1e-4), "bf16": (1e-3, 2e-2), "fp16": (1e-4, 4e-3)}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read(path):
    """{name: array} of a safetensors file, each in its own dtype (BF16 as
    the fp32 it is exactly)."""
    header, _, data = safetensors_io.read_raw(path)
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = data[begin:end]
        if entry["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            array = bits.view(np.float32)
        else:
            array = np.frombuffer(raw, dtype={"F32": np.float32,
                                              "F16": np.float16,
                                              "I64": np.int64,
                                              "I32": np.int32}[entry["dtype"]])
        tensors[name] = array.reshape(entry["shape"])
    return tensors


def offload_flags(args, offload, stage):
    if offload == "tiles":
        return ["--zero-tile-linear-in-splits=2",
                "--zero-tile-linear-out-splits=2"]
    return launch.offload_flags(args.work, offload, stage,
                                ["--zero-set=zero_optimization.sub_group_size=20"])


def compile_step(args, name, stage, ranks, batch, precision, offload=None):
    # Odd sizes pad the shards of 2 ranks; tiles need even ones.
    hidden = 8 if offload == "tiles" else 7
    ir = os.path.join(args.work, "mlp-%d-%d.mlir" % (hidden, batch))
    if not os.path.exists(ir):
        launch.run([os.path.join(args.bin, "zero-model"), "mlp", "--layers",
                    "2", "--hidden", str(hidden), "--batch-size", str(batch),
                    "--dtype", "f32", "-o", ir])
    schedule = os.path.join(args.work, name + ".json")
    launch.run([os.path.join(args.bin, "zero-opt"), ir,
                "--zero-stage=%d" % stage, "--zero-world-size=%d" % ranks] +
               PRECISION_FLAGS[precision] + offload_flags(args, offload, stage) +
               ["--zero-emit-schedule=" + schedule, "-o", os.devnull])
    return schedule


def run(args, name, schedule, ranks, save=None):
    dump = os.path.join(args.work, name + ".dump.safetensors")
    cmd = [os.path.join(args.bin, "zero-run"), schedule, "--steps",
           str(args.steps), "--seed", "5", "--dump-state", dump]
    if save:
        cmd += ["--save", save]
    launch.run((mpirun(ranks) if ranks > 1 else []) + cmd)
    return read(dump)


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and \
        a.tobytes() == b.tobytes()


def check(args, config):
    stage, precision, offload = (config.split(":") + [None])[:3]
    stage = int(stage)
    name = "s%d-%s" % (stage, precision) + ("-" + offload if offload else "")
    schedule = compile_step(args, name, stage, RANKS, BATCH, precision,
                            offload)
    if offload in ("cpu", "nvme"):
        with open(schedule) as f:
            records = json.load(f)["gradients"]
        if len(records) <= len({r["param"] for r in records}):
            fail("%s: no parameter is updated in sub-groups" % name)
    checkpoint = os.path.join(args.work, name + ".ck")
    dump = run(args, name, schedule, RANKS, save=checkpoint)
    params = sorted(n for n in dump if "/" not in n)
    if not params:
        fail("%s: the dump holds no parameter" % name)
    for param in params:
        for prefix in ("grad", "exp_avg", "exp_avg_sq"):
            if prefix + "/" + param not in dump:
                fail("%s: the dump has no %s/%s" % (name, prefix, param))

    # The fp32 parameters: zero-ckpt consolidate of the checkpoint.
    consolidated = os.path.join(args.work, name + ".f32.safetensors")
    launch.run([os.path.join(args.bin, "zero-ckpt"), "consolidate",
                checkpoint, "-o", consolidated, "--dtype", "f32"])
    whole = read(consolidated)
    step = os.path.join(checkpoint, "step-%d" % args.steps)
    with open(os.path.join(step, "manifest.json")) as f:
        manifest = json.load(f)
    weights = {}
    for entry in manifest["tensors"]:
        if entry["kind"] != "param":
            continue
        tile = entry.get("tile")
        if not tile:
            weights[entry["param"]] = dump[entry["param"]]
            continue
        weight = weights.setdefault(
            tile["param"], np.zeros(tile["shape"], dtype=np.float32))
        rows, cols = entry["layout"]["shape"]
        row, col = tile["offset"]
        weight[row:row + rows, col:col + cols] = dump[entry["param"]]
    if sorted(whole) != sorted(weights):
        fail("%s: the dump's weights %s, the checkpoint's %s" %
             (name, sorted(weights), sorted(whole)))
    for weight in weights:
        if not same_bits(whole[weight], weights[weight]):
            fail("%s: %s differs from zero-ckpt consolidate's" %
                 (name, weight))

    # The optimizer states: the rank files' shards, joined.
    ranks = [read(os.path.join(step, "rank-%d.safetensors" % r))
             for r in range(RANKS)]
    states = 0
    for entry in manifest["tensors"]:
        if entry["kind"] != "state" or entry["state"] == "master" or \
                "param" not in entry:
            continue
        parts = [r[entry["name"]].reshape(-1) for r in ranks]
        if entry["sharded"]:
            joined = np.concatenate(parts)[:entry["layout"]["numel"]]
            if offload != "tiles" and \
                    joined.size == sum(p.size for p in parts):
                fail("%s: %s has no padding to drop: the test's sizes must "
                     "be odd" % (name, entry["name"]))
        else:
            joined = parts[0]
        expected = joined.reshape(entry["layout"]["shape"])
        if not same_bits(expected, dump[entry["name"]]):
            fail("%s: %s differs from the checkpoint's shards" %
                 (name, entry["name"]))
        states += 1

    # The gradients: stage 0 on the same ranks, and one process.
    tiles = offload if offload == "tiles" else None
    stage0 = run(args, name + "-stage0",
                 compile_step(args, name + "-stage0", 0, RANKS, BATCH,
                              precision, tiles), RANKS)
    single = run(args, name + "-single",
                 compile_step(args, name + "-single", 0, 1, BATCH * RANKS,
                              precision, tiles), 1)
    atol, rtol = TOLERANCE[precision]
    worst = 0.0
    for param in params:
        grad = "grad/" + param
        if not same_bits(stage0[grad], dump[grad]):
            fail("%s: %s differs from stage 0's on %d ranks" %
                 (name, grad, RANKS))
        a = single[grad].astype(np.float64)
        b = dump[grad].astype(np.float64)
        if not np.any(a):
            fail("%s: %s of one process is zero" % (name, grad))
        scaled = np.max(np.abs(a - b) / (atol + rtol * np.abs(a)))
        if scaled > 1:
            fail("%s: %s differs from one process's beyond the tolerance "
                 "(%.3g of it)" % (name, grad, scaled))
        worst = max(worst, scaled)
    if precision == "fp16":
        # The dump's gradients are what the optimizer steps with: the loss
        # scale (2^16 at the start) divided out, in f32. Against the same
        # process in f32 they differ by fp16's rounding of the compute,
        # never by the scale.
        f32 = run(args, name + "-single-f32",
                  compile_step(args, name + "-single-f32", 0, 1,
                               BATCH * RANKS, "f32", tiles), 1)
        for param in params:
            grad = "grad/" + param
            a = f32[grad].astype(np.float64)
            b = dump[grad].astype(np.float64)
            if np.max(np.abs(a - b) / (1e-3 + 5e-2 * np.abs(a))) > 1:
                fail("%s: %s is not the f32 gradient to fp16's rounding: "
                     "is the loss scale divided out?" % (name, grad))
    print("%s: %d parameters as consolidated, %d states as saved, gradients "
          "as stage 0's and within %.2f of the tolerance of one process's" %
          (name, len(params), states, worst))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("configs", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for config in args.configs:
        check(args, config)


main()
