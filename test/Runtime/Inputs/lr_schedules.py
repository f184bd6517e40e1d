#!/usr/bin/python3
"""Reads back the learning rates of DeepSpeed's schedules from compiled steps.

For each case below, compiles lr-probe.mlir (loss = w, gradient 1) with plain
SGD and the case's scheduler section, runs it with zero-run, and takes each
step's rate as the fall of the loss to the next step. The expected rates come
from this file's own transcription of DeepSpeed's schedules (lr_schedules.py
of DeepSpeed 0.19), driven as DeepSpeed's engine drives them: the scheduler
starts at last_batch_iteration and steps once after every optimizer step.
Prints `CASE step=T i=I lr=...` for every step and `OK: CASE` or `FAIL: CASE`,
and exits 1 on any failure. Rates agree to f32 resolution: zero.sgd takes
the rate as an f32.

OneCycle also cycles Adam's beta1 (and sets beta2 to 0.99): the last case
trains the probe with Adam instead, whose step with gradient 1 depends on
every beta1 so far, and compares each step's update with Adam computed here
from the expected rates and betas.
"""

import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True


# --- DeepSpeed's schedules: get_lr() at last_batch_iteration i -------------

def warmup_gamma(p, i):
    steps = max(2, p.get("warmup_num_steps", 1000))
    if p.get("warmup_type", "log") == "log":
        return (1.0 / math.log(steps)) * math.log(i + 1)
    return i / steps


def warmup_lr(p, lr, i, decay):
    low = p.get("warmup_min_lr", 0.0)
    high = p.get("warmup_max_lr", 0.001 if decay else lr)
    if i < 0:
        return low
    steps = max(2, p.get("warmup_num_steps", 1000))
    if i < steps:
        gamma = warmup_gamma(p, i)
    elif not decay:
        gamma = 1.0
    else:
        total = p["total_num_steps"]
        gamma = max(0.0, float(total - i) / float(max(1.0, total - steps)))
    return low + (high - low) * gamma


def warmup_cosine_lr(p, lr, i):
    if i < 0:
        return 0.0
    steps = max(2, p.get("warmup_num_steps", 1000))
    low = p.get("warmup_min_ratio", 0.0)
    floor = p.get("cos_min_ratio", 0.0001)
    if i < steps:
        ratio = low + warmup_gamma(p, i) * (1.0 - low)
    else:
        progress = min(1.0, (i - steps + 1) / max(1, p["total_num_steps"] - steps))
        ratio = max(0.0, floor + (1.0 - floor) * (1 + math.cos(math.pi * progress)) / 2)
    return lr * ratio


def one_cycle_lr(p, lr, i):
    low, high = p["cycle_min_lr"], p["cycle_max_lr"]
    first = float(p.get("cycle_first_step_size", 2000))
    second = float(p.get("cycle_second_step_size", first))
    total = first + second
    if i >= total:
        size, rate = p.get("decay_step_size", 0), p.get("decay_lr_rate", 0.0)
        if size == 0 or rate == 0:
            return low
        return low / (1 + rate * ((i - total + 1) / size))
    batch = i + 1
    cycle = math.floor(1 + batch / total)
    x = 1.0 + batch / total - cycle
    ratio = first / total
    if x <= ratio:
        scale, stairs = x / ratio, p.get("cycle_first_stair_count", 0)
    else:
        scale = (x - 1) / (ratio - 1)
        stairs = p.get("cycle_second_stair_count",
                       p.get("cycle_first_stair_count", 0))
    if stairs > 0:
        offset = batch % total
        position = (offset * stairs / first if offset <= first
                    else (total - offset) * stairs / second)
        scale = math.floor(position) / stairs
    return low + (high - low) * scale


def one_cycle_beta1(p, i):
    low, high = p.get("cycle_min_mom", 0.8), p.get("cycle_max_mom", 0.9)
    if i < 0:  # DeepSpeed sets the betas to the minimum when it starts.
        return low
    first = float(p.get("cycle_first_step_size", 2000))
    total = first + float(p.get("cycle_second_step_size", first))
    if i >= total:
        size, rate = p.get("decay_step_size", 0), p.get("decay_mom_rate", 0.0)
        if size == 0 or rate == 0:
            return high
        return high * (1 + rate * ((i - total + 1) / size))
    # The momentum moves against the rate: the same scale factor.
    zero = dict(p, cycle_min_lr=0.0, cycle_max_lr=1.0, decay_lr_rate=0.0)
    return high - (high - low) * one_cycle_lr(zero, 0.0, i)


def range_test_lr(p, lr, i):
    intervals = (i + 1) / p.get("lr_range_test_step_size", 2000)
    if p.get("lr_range_test_staircase", False):
        intervals = math.floor(intervals)
    return p.get("lr_range_test_min_lr", 0.001) * (
        1 + p.get("lr_range_test_step_rate", 1.0) * intervals)


def get_lr(kind, p, lr, i):
    return {"WarmupLR": lambda: warmup_lr(p, lr, i, decay=False),
            "WarmupDecayLR": lambda: warmup_lr(p, lr, i, decay=True),
            "WarmupCosineLR": lambda: warmup_cosine_lr(p, lr, i),
            "OneCycle": lambda: one_cycle_lr(p, lr, i),
            "LRRangeTest": lambda: range_test_lr(p, lr, i)}[kind]()


# --- The cases: every schedule, both warm-up shapes, the boundaries --------

LR = 0.02
CASES = [
    ("warmup-log", "WarmupLR", 9,
     {"warmup_min_lr": 0.001, "warmup_max_lr": 0.01, "warmup_num_steps": 5}),
    # warmup_max_lr defaults to optimizer.params.lr; 1 warm-up step is 2.
    ("warmup-linear", "WarmupLR", 5,
     {"warmup_num_steps": 1, "warmup_type": "linear"}),
    ("decay-linear", "WarmupDecayLR", 14,
     {"warmup_min_lr": 0.001, "warmup_max_lr": 0.01, "warmup_num_steps": 4,
      "total_num_steps": 10, "warmup_type": "linear"}),
    ("decay-resumed", "WarmupDecayLR", 6,
     {"warmup_num_steps": 4, "total_num_steps": 10, "last_batch_iteration": 6}),
    ("cosine-linear", "WarmupCosineLR", 16,
     {"warmup_num_steps": 4, "total_num_steps": 12, "warmup_min_ratio": 0.1,
      "cos_min_ratio": 0.05, "warmup_type": "linear"}),
    ("cosine-log", "WarmupCosineLR", 8,
     {"warmup_num_steps": 3, "total_num_steps": 6}),
    ("one-cycle-decay", "OneCycle", 16,
     {"cycle_min_lr": 0.001, "cycle_max_lr": 0.01, "cycle_first_step_size": 4,
      "cycle_second_step_size": 6, "decay_step_size": 2, "decay_lr_rate": 0.5}),
    ("one-cycle-stairs", "OneCycle", 13,
     {"cycle_min_lr": 0.002, "cycle_max_lr": 0.008, "cycle_first_step_size": 6,
      "cycle_second_step_size": 4, "cycle_first_stair_count": 3,
      "cycle_second_stair_count": 2}),
    ("range-test", "LRRangeTest", 6,
     {"lr_range_test_min_lr": 0.001, "lr_range_test_step_size": 3,
      "lr_range_test_step_rate": 0.5}),
    ("range-test-staircase", "LRRangeTest", 8,
     {"lr_range_test_min_lr": 0.001, "lr_range_test_step_size": 3,
      "lr_range_test_step_rate": 0.5, "lr_range_test_staircase": True}),
]


def expected_rates(kind, params, steps):
    """The engine's loop: the rate set when the scheduler starts serves the
    first step; the scheduler steps after every optimizer step."""
    i = params.get("last_batch_iteration", -1)
    rates = []
    for _ in range(steps):
        rates.append(get_lr(kind, params, LR, i))
        i += 1
    return rates


def measured_rates(args, name, kind, params, steps, optimizer="SGD"):
    work = lambda f: os.path.join(args.work, name + "." + f)
    config = {"optimizer": {"type": optimizer, "params": {"lr": LR}},
              "scheduler": {"type": kind, "params": params}}
    with open(work("json"), "w") as f:
        json.dump(config, f)
    subprocess.run([os.path.join(args.bin, "zero-opt"), args.probe,
                    "--zero-config=" + work("json"),
                    "--zero-emit-schedule=" + work("schedule.json"),
                    "-o", os.devnull], check=True)
    subprocess.run([os.path.join(args.bin, "zero-run"), work("schedule.json"),
                    "--steps", str(steps + 1), "--print-every", "1000",
                    "--metrics", work("metrics.jsonl")],
                   check=True, stdout=subprocess.DEVNULL)
    losses = [json.loads(line)["loss"] for line in open(work("metrics.jsonl"))]
    return [a - b for a, b in zip(losses, losses[1:])]


ADAM_CASE = ("one-cycle-adam", 10,
             {"cycle_min_lr": 0.001, "cycle_max_lr": 0.004,
              "cycle_first_step_size": 3, "cycle_second_step_size": 3,
              "cycle_min_mom": 0.85, "cycle_max_mom": 0.95,
              "decay_step_size": 2, "decay_mom_rate": 0.01})


def expected_adam_updates(params, steps):
    """Adam (bias correction, no weight decay) on gradient 1 from zero
    moments, with the f32 rate and beta1 zero.adam receives and beta2 0.99."""
    m = v = 0.0
    updates = []
    for t in range(1, steps + 1):
        i = params.get("last_batch_iteration", -1) + t - 1
        lr = float(np.float32(one_cycle_lr(params, LR, i)))
        b1 = float(np.float32(one_cycle_beta1(params, i)))
        b2 = 0.99
        m = b1 * m + (1 - b1)
        v = b2 * v + (1 - b2)
        denom = math.sqrt(v) / math.sqrt(1 - b2 ** t) + 1e-8
        updates.append((lr / (1 - b1 ** t)) * m / denom)
    return updates


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--probe", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failed = False
    for name, kind, steps, params in CASES:
        expected = expected_rates(kind, params, steps)
        measured = measured_rates(args, name, kind, params, steps)
        i = params.get("last_batch_iteration", -1)
        ok = len(measured) == steps
        for t, (want, got) in enumerate(zip(expected, measured), 1):
            print("%s step=%d i=%d lr=%.6g" % (name, t, i + t - 1, got))
            # f32 rounding of the rate, plus the f64 rounding of the losses.
            want32 = float(np.float32(want))
            ok &= abs(got - want32) <= 2 ** -23 * abs(want32) + 1e-15
            if abs(got - want32) > 2 ** -23 * abs(want32) + 1e-15:
                print("  expected %.9g" % want32)
        print("%s: %s" % ("OK" if ok else "FAIL", name))
        failed |= not ok

    name, steps, params = ADAM_CASE
    expected = expected_adam_updates(params, steps)
    measured = measured_rates(args, name, "OneCycle", params, steps, "AdamW")
    ok = len(measured) == steps
    for t, (want, got) in enumerate(zip(expected, measured), 1):
        i = t - 2
        print("%s step=%d i=%d beta1=%.6g update=%.9g" %
              (name, t, i, np.float32(one_cycle_beta1(params, i)), got))
        if abs(got - want) > 1e-9 * abs(want):
            print("  expected %.12g" % want)
            ok = False
    print("%s: %s" % ("OK" if ok else "FAIL", name))
    failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
