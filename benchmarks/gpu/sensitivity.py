#!/usr/bin/env python3
"""How far a predicted step rests on the cost model's assumed figures.

Prices schedules with `zero-run --explain GPU --explain-set FIGURE=VALUE`
(docs/Runtime.md, "Cost model"), on the build machine, no GPU needed:

  1. the step as DeviceModels.def has it, then under each scenario of
     SCENARIOS (an assumed figure replaced by a pessimistic one), then
     under all of them at once;
  2. for each figure of BREAK_EVEN, the value at which the step reaches
     --target ms with every other figure as DeviceModels.def has it (found
     by bisection; "never" where even the range's worst end stays below,
     "already" where even its best end does not).

Prints a Markdown table per schedule (docs/PERFORMANCE.md, "Predicted: how
far the prediction rests on assumed figures"):

  benchmarks/gpu/sensitivity.py --zero-run build/bin/zero-run \\
      --target 80 bf16.json fp16.json
"""

import argparse

from analyze import explain_plan

# Each scenario: (what it assumes, the figures it sets). The figures that
# no GPU run has measured yet (DeviceModels.def) set to what would make the
# step slower: the vector paths no faster than the measured scalar kernels,
# tensor cores at half their published dense rate (attention's batched
# products at half of that again), and a launch twice as dear.
SCENARIOS = [
    ("vector paths at the measured scalar rates",
     {"vector_eff": 0.62, "optimizer_vector_eff": 0.142}),
    ("tensor cores at half the published dense peak",
     {"gemm_bf16_tflops": 495, "gemm_f16_tflops": 495,
      "batched_scale": 0.5}),
    ("launches twice as dear", {"launch_us": 5}),
]

# Each figure searched for its break-even value: (figure, the range's
# best end, its worst end).
BREAK_EVEN = [
    ("gemm_bf16_tflops", 690, 1),
    ("gemm_f16_tflops", 690, 1),
    ("batched_scale", 1, 0.01),
    ("vector_eff", 1, 0.01),
    ("generated_eff", 1, 0.01),
    ("launch_us", 0.1, 1000),
]


def step_ms(zero_run, schedule, device, settings):
    return explain_plan(zero_run, schedule, device, settings)["total_ms"]


def break_even(zero_run, schedule, device, figure, best, worst, target):
    """The figure's value between `best` and `worst` at which the step
    takes `target` ms: "never" where `worst` stays below it, "already"
    where `best` does not."""
    if step_ms(zero_run, schedule, device, {figure: worst}) < target:
        return "never"
    if step_ms(zero_run, schedule, device, {figure: best}) >= target:
        return "already"
    # The step is monotone in each figure: bisect on a log scale.
    lo, hi = best, worst
    for _ in range(24):
        mid = (lo * hi) ** 0.5
        if step_ms(zero_run, schedule, device, {figure: mid}) < target:
            lo = mid
        else:
            hi = mid
        if abs(hi - lo) <= 0.005 * abs(hi):
            break
    return hi


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("schedules", nargs="+")
    parser.add_argument("--zero-run", default="zero-run")
    parser.add_argument("--device", default="h100")
    parser.add_argument("--target", type=float, default=80.0,
                        help="the step's target, ms (80: part 1's)")
    args = parser.parse_args()
    for schedule in args.schedules:
        model = explain_plan(args.zero_run, schedule, args.device)
        base = model["total_ms"]
        print(f"\n{schedule} on {args.device} (target {args.target:g} ms)\n")
        print("| figures | step ms | against the target |")
        print("|---|---:|---:|")
        print(f"| as DeviceModels.def has them | {base:.2f} "
              f"| {base / args.target:.2f} |")
        every = {}
        for what, settings in SCENARIOS:
            every.update(settings)
            ms = step_ms(args.zero_run, schedule, args.device, settings)
            shown = ", ".join(f"`{k}={v:g}`" for k, v in settings.items())
            print(f"| {what}: {shown} | {ms:.2f} | {ms / args.target:.2f} |")
        ms = step_ms(args.zero_run, schedule, args.device, every)
        print(f"| all of these at once | {ms:.2f} | {ms / args.target:.2f} |")
        print(f"\n| figure | as DeviceModels.def has it | the step reaches "
              f"{args.target:g} ms at |")
        print("|---|---:|---:|")
        for figure, best, worst in BREAK_EVEN:
            value = break_even(args.zero_run, schedule, args.device, figure,
                               best, worst, args.target)
            shown = value if isinstance(value, str) else f"{value:.3g}"
            print(f"| `{figure}` | {model['figures'][figure]:g} "
                  f"| {shown} |")


if __name__ == "__main__":
    main()
