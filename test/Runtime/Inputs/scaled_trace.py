"""Writes a trace in which every launch of a cost-model plan (or only those
whose time the figure BOUND bounds) took SCALE times its predicted time
beyond its fixed cost (the plan's fixed_ms), as a GPU might have measured
it: one compute event per launch and step, at its first instruction's point
(zero-run --trace's form; steps 1 and 2).

  scaled_trace.py EXPLAIN_JSON SCALE OUT_TRACE [BOUND]
"""

import json
import sys


def main(explain_path, scale, out_path, bound=None):
    explain = json.load(open(explain_path))
    events = [{"ph": "M", "name": "thread_name", "pid": 0, "tid": 0,
               "args": {"name": "compute"}}]
    for step in (1, 2):
        for launch in explain["plan"]:
            if launch["category"] in ("collective", "swap"):
                continue
            # Per step: the fixed cost of its `times` launches, the rest
            # scaled.
            fixed = launch["fixed_ms"] * 1e3
            factor = scale if bound in (None, launch["bound"]) else 1
            dur = fixed + factor * (launch["ms"] * 1e3 - fixed)
            events.append({"ph": "X", "cat": "compute", "name": launch["op"],
                           "pid": 0, "tid": 0, "ts": 0, "dur": dur,
                           "args": {"step": step,
                                    "point": launch["points"][0]}})
    with open(out_path, "w") as f:
        json.dump({"traceEvents": events}, f)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3], *sys.argv[4:5])
