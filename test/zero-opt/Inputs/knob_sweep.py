#!/usr/bin/python3
"""Sets every knob zero-opt maps to a pipeline option to extreme values.

For each knob of `zero-opt --zero-print-knobs` that reaches a pass, and each
value below, compiles a small MLP with `--zero-set=KNOB=VALUE` (plus what the
knob needs to apply: its optimizer or schedule type, fp16). Each run must
either compile, or fail with its first error in the config (the `<override>`
buffer that holds KNOB=VALUE): never at the model file or `<defaults>`
(a value the config accepted and a pass refused), never by a crash or a
timeout. Prints the offending runs and `OK: K knobs, N runs` or exits 1.
"""

import argparse
import subprocess
import sys

VALUES = ["-1", "0", "1", "0.5", "1e30", "1e-300",
          "9223372036854775807", "-9223372036854775808"]
SGD_ONLY = ("momentum", "dampening", "nesterov")
ONE_CYCLE_ONLY = ("decay_lr_rate", "decay_step_size", "decay_mom_rate")
COSINE_ONLY = ("warmup_min_ratio", "cos_min_ratio", "total_num_steps")


def context(knob):
    """The --zero-set flags that make `knob` apply."""
    name = knob.split(".")[-1]
    if knob.startswith("optimizer.params."):
        return ["--zero-set=optimizer.type=" +
                ("SGD" if name in SGD_ONLY else "Adam")]
    if knob.startswith("fp16."):
        return ["--zero-set=fp16.enabled=true"]
    if knob.startswith("scheduler.params."):
        if name.startswith("cycle") or name in ONE_CYCLE_ONLY:
            return ["--zero-set=scheduler.type=OneCycle",
                    "--zero-set=scheduler.params.cycle_min_lr=0.1",
                    "--zero-set=scheduler.params.cycle_max_lr=1"]
        if name.startswith("lr_range"):
            return ["--zero-set=scheduler.type=LRRangeTest"]
        kind = "WarmupCosineLR" if name in COSINE_ONLY else "WarmupDecayLR"
        return ["--zero-set=scheduler.type=" + kind,
                "--zero-set=scheduler.params.total_num_steps=10"]
    return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zero-opt", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    listing = subprocess.run([args.zero_opt, "--zero-print-knobs"],
                             capture_output=True, text=True, check=True).stdout
    routes = dict(line.split(": ", 1) for line in listing.splitlines())
    knobs = [k for k, route in routes.items()
             if "(zero-" in route and "refused" not in route]
    runs, bad = 0, []
    for knob in knobs:
        for value in VALUES:
            command = [args.zero_opt, args.model, "--zero-world-size=2",
                       "-o", "/dev/null"] + context(knob) + [
                           "--zero-set=%s=%s" % (knob, value)]
            runs += 1
            try:
                run = subprocess.run(command, capture_output=True, text=True,
                                     timeout=30)
            except subprocess.TimeoutExpired:
                bad.append("%s=%s: timed out" % (knob, value))
                continue
            if run.returncode < 0 or run.returncode >= 128:
                bad.append("%s=%s: crashed (%d)" % (knob, value,
                                                     run.returncode))
                continue
            errors = [l for l in run.stderr.splitlines() if ": error: " in l]
            if run.returncode != 0 and (
                    not errors or not errors[0].startswith("<override>")):
                bad.append("%s=%s: %s" % (knob, value,
                                          (errors or ["no error"])[0][:300]))
    for line in bad:
        print("FAIL:", line)
    if bad:
        sys.exit(1)
    print("OK: %d knobs, %d runs" % (len(knobs), runs))


if __name__ == "__main__":
    main()
